// The ns-3 side of benches/vs_ns3_fct.py (issue 37): open-loop TCP flows on the dumbbell of
// benches/ns3/dumbbell.cc, one BulkSend connection (MaxBytes = the flow's size) per line of
// an arrival file that linklab's run reads too, so both simulators run the identical
// arrival sequence.  Linked against the libraries of the `ns3` PyPI wheel (3.44).  Prints
// one JSON line: what ns-3 ran (read back from the objects) and every flow's completion time.
//
//   S_i --access-- L ==rate/delay (FifoQueueDisc, --qlimit p + 1p device queue)== R --access-- D_i
//
// --arrivals FILE   one flow per line: START SIZE PAIR (seconds, bytes, 0-based pair index
//                   i: from S_i to D_i); lines starting with '#' are skipped
// --pairs N         sender/receiver pairs (every PAIR < N)
// --pcap PREFIX     capture both ends of the bottleneck (for tracing one flow)
// --traceflow I     print flow I's cwnd, ssthresh and bytes in flight on stderr
//
// A flow's application starts at START (its SYN leaves then) and sends SIZE bytes; its flow
// completion time is the time at which its receiver's PacketSink has received (in order) the
// last of them, minus START: the definition linklab's `fct` table uses.  Each flow has its
// own PacketSink (port 10000 + flow index) on its receiver, so that every received byte is
// counted for its flow.  Flows not complete at --simtime have fct -1.  Per flow also the data
// segments its sender retransmitted and its retransmission timeouts (entries into CA_LOSS);
// a lost SYN is neither (ns-3 resends it after ConnTimeout, 3 s, doubling).  The packets
// the forward bottleneck queue dropped, by kind (SYN, pure ACK, FIN without payload, data),
// and per flow the SYNs dropped (a flow's packets go to port 10000 + its index).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <list>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

struct Flow
{
    double start;
    uint64_t size;
    uint32_t pair;
    uint64_t rx = 0;
    double fct = -1.0;
    uint32_t retransmits = 0; // data segments retransmitted
    uint32_t timeouts = 0;    // entries into CA_LOSS (a retransmission timeout)
};

static std::vector<Flow> g_flows;
static int64_t g_traceFlow = -1; // --traceflow: this flow's cwnd, ssthresh, in-flight to stderr
static uint64_t g_retransmits = 0;
static uint64_t g_timeouts = 0;
static uint64_t g_dropSyn = 0, g_dropAck = 0, g_dropFin = 0, g_dropData = 0, g_dropOther = 0;
static std::vector<uint32_t> g_flowSynDrops;

// A packet the forward bottleneck queue disc dropped: counted by kind.
static void
OnQdiscDrop(Ptr<const QueueDiscItem> item)
{
    Ptr<Packet> p = item->GetPacket()->Copy();
    TcpHeader h;
    if (p->RemoveHeader(h) == 0)
    {
        ++g_dropOther;
        return;
    }
    const uint8_t f = h.GetFlags();
    const uint32_t port = h.GetDestinationPort();
    if (f & TcpHeader::SYN)
    {
        ++g_dropSyn;
        if (port >= 10000 && port - 10000 < g_flowSynDrops.size())
        {
            ++g_flowSynDrops[port - 10000];
        }
    }
    else if (p->GetSize() > 0)
    {
        ++g_dropData;
    }
    else if (f & TcpHeader::FIN)
    {
        ++g_dropFin;
    }
    else
    {
        ++g_dropAck;
    }
}

static void
OnRx(uint32_t i, Ptr<const Packet> p, const Address&)
{
    Flow& f = g_flows[i];
    f.rx += p->GetSize();
    if (f.fct < 0 && f.rx >= f.size)
    {
        f.fct = Simulator::Now().GetSeconds() - f.start;
    }
}

static void
OnCongState(uint32_t i, TcpSocketState::TcpCongState_t oldV, TcpSocketState::TcpCongState_t newV)
{
    if (newV == TcpSocketState::CA_LOSS && oldV != TcpSocketState::CA_LOSS)
    {
        ++g_timeouts;
        ++g_flows[i].timeouts;
    }
}

static void
OnRetransmission(uint32_t i, Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_retransmits;
    ++g_flows[i].retransmits;
}

static void
TraceVar(std::string what, uint32_t, uint32_t v)
{
    std::fprintf(stderr, "%.6f %s %u\n", Simulator::Now().GetSeconds(), what.c_str(), v);
}

// Connects the loss counters to the socket flow `app` just created (1 ns after its start).
static void
ConnectSender(uint32_t i, Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    if (s)
    {
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
        s->TraceConnectWithoutContext("Retransmission", MakeBoundCallback(&OnRetransmission, i));
        if (static_cast<int64_t>(i) == g_traceFlow)
        {
            s->TraceConnectWithoutContext("CongestionWindow",
                                          MakeBoundCallback(&TraceVar, std::string("cwnd")));
            s->TraceConnectWithoutContext("SlowStartThreshold",
                                          MakeBoundCallback(&TraceVar, std::string("ssthresh")));
            s->TraceConnectWithoutContext("BytesInFlight",
                                          MakeBoundCallback(&TraceVar, std::string("inflight")));
        }
    }
}

static uint64_t
UintAttr(Ptr<Object> o, const std::string& name)
{
    UintegerValue v;
    o->GetAttribute(name, v);
    return v.Get();
}

static bool
BoolAttr(Ptr<Object> o, const std::string& name)
{
    BooleanValue v;
    o->GetAttribute(name, v);
    return v.Get();
}

static double
TimeAttrMs(Ptr<Object> o, const std::string& name)
{
    TimeValue v;
    o->GetAttribute(name, v);
    return v.Get().GetSeconds() * 1e3;
}

static double
RateAttrMbps(Ptr<Object> o, const std::string& name)
{
    DataRateValue v;
    o->GetAttribute(name, v);
    return v.Get().GetBitRate() / 1e6;
}

int
main(int argc, char* argv[])
{
    std::string arrivals;
    uint32_t pairs = 4;
    double simtime = 100.0;
    uint32_t seed = 1;
    uint32_t segsize = 1448;
    std::string cc = "newreno";
    uint32_t qlimit = 37;
    double rateMbps = 10.0;
    double delayMs = 18.0;
    double accessMbps = 100.0;
    double accessDelayMs = 1.0;
    uint32_t bufsize = 1 << 20;
    std::string pcap;
    CommandLine cmd;
    cmd.AddValue("arrivals", "arrival file: START SIZE PAIR per line", arrivals);
    cmd.AddValue("pairs", "sender/receiver pairs", pairs);
    cmd.AddValue("simtime", "simulated seconds", simtime);
    cmd.AddValue("seed", "RngRun", seed);
    cmd.AddValue("segsize", "TCP SegmentSize", segsize);
    cmd.AddValue("cc", "newreno|cubic", cc);
    cmd.AddValue("qlimit", "bottleneck FifoQueueDisc limit in packets", qlimit);
    cmd.AddValue("rate", "bottleneck rate, Mbit/s", rateMbps);
    cmd.AddValue("delay", "bottleneck one-way delay, ms", delayMs);
    cmd.AddValue("accessrate", "access link rate, Mbit/s", accessMbps);
    cmd.AddValue("accessdelay", "access link one-way delay, ms", accessDelayMs);
    cmd.AddValue("bufsize", "TCP SndBufSize and RcvBufSize, bytes", bufsize);
    cmd.AddValue("traceflow", "print this flow's cwnd/ssthresh/in-flight on stderr", g_traceFlow);
    cmd.AddValue("pcap", "capture the bottleneck (both ends) to PREFIX-*.pcap", pcap);
    cmd.Parse(argc, argv);

    const std::map<std::string, std::string> ccs = {{"newreno", "ns3::TcpNewReno"},
                                                     {"cubic", "ns3::TcpCubic"}};
    if (!ccs.count(cc))
    {
        std::fprintf(stderr, "--cc: '%s' is not newreno or cubic\n", cc.c_str());
        return 2;
    }
    {
        std::ifstream in(arrivals);
        if (!in)
        {
            std::fprintf(stderr, "--arrivals: cannot read '%s'\n", arrivals.c_str());
            return 2;
        }
        std::string line;
        uint64_t n = 0;
        while (std::getline(in, line))
        {
            ++n;
            if (line.empty() || line[0] == '#')
            {
                continue;
            }
            std::istringstream ls(line);
            Flow f;
            if (!(ls >> f.start >> f.size >> f.pair) || f.pair >= pairs || f.size == 0)
            {
                std::fprintf(stderr, "--arrivals: %s:%llu: expected START SIZE PAIR (PAIR < %u)\n",
                             arrivals.c_str(), (unsigned long long)n, pairs);
                return 2;
            }
            g_flows.push_back(f);
        }
    }
    if (g_flows.size() > 55000)
    {
        std::fprintf(stderr, "--arrivals: at most 55000 flows (one sink port each)\n");
        return 2;
    }

    const DataRate rate(static_cast<uint64_t>(std::llround(rateMbps * 1e6)));
    const Time delay = NanoSeconds(std::llround(delayMs * 1e6));
    const DataRate accessRate(static_cast<uint64_t>(std::llround(accessMbps * 1e6)));
    const Time accessDelay = NanoSeconds(std::llround(accessDelayMs * 1e6));

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(ccs.at(cc))));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segsize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufsize));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufsize));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("Off"));
    Config::SetDefault("ns3::FifoQueueDisc::MaxSize",
                       QueueSizeValue(QueueSize(std::to_string(qlimit) + "p")));

    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(pairs);
    receivers.Create(pairs);
    routers.Create(2);
    InternetStackHelper stack;
    stack.Install(senders);
    stack.Install(receivers);
    stack.Install(routers);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(accessRate));
    access.SetChannelAttribute("Delay", TimeValue(accessDelay));
    PointToPointHelper bneck;
    bneck.SetDeviceAttribute("DataRate", DataRateValue(rate));
    bneck.SetChannelAttribute("Delay", TimeValue(delay));

    NetDeviceContainer bdev = bneck.Install(routers.Get(0), routers.Get(1));
    for (uint32_t i = 0; i < 2; ++i)
    {
        DynamicCast<PointToPointNetDevice>(bdev.Get(i))->GetQueue()->SetMaxSize(QueueSize("1p"));
    }
    if (!pcap.empty())
    {
        bneck.EnablePcap(pcap, bdev);
    }
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc");
    QueueDiscContainer qdiscs = tch.Install(bdev);
    qdiscs.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&OnQdiscDrop));

    Ptr<NetDevice> accessDev;
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    addr.Assign(bdev);
    std::vector<Ipv4InterfaceContainer> sinkIfaces;
    for (uint32_t i = 0; i < pairs; ++i)
    {
        NetDeviceContainer d = access.Install(senders.Get(i), routers.Get(0));
        accessDev = d.Get(0);
        addr.SetBase(Ipv4Address(("10.1." + std::to_string(i + 1) + ".0").c_str()), "255.255.255.0");
        addr.Assign(d);
        d = access.Install(routers.Get(1), receivers.Get(i));
        addr.SetBase(Ipv4Address(("10.2." + std::to_string(i + 1) + ".0").c_str()), "255.255.255.0");
        sinkIfaces.push_back(addr.Assign(d));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::vector<Ptr<BulkSendApplication>> apps;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < g_flows.size(); ++i)
    {
        const Flow& f = g_flows[i];
        const uint16_t port = static_cast<uint16_t>(10000 + i);
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(receivers.Get(f.pair));
        s.Start(Seconds(0.0));
        Ptr<PacketSink> sink = DynamicCast<PacketSink>(s.Get(0));
        sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
        sinks.push_back(sink);

        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(sinkIfaces[f.pair].GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.size));
        bulk.SetAttribute("SendSize", UintegerValue(segsize));
        ApplicationContainer app = bulk.Install(senders.Get(f.pair));
        const Time start = Seconds(f.start);
        app.Start(start);
        Ptr<BulkSendApplication> a = DynamicCast<BulkSendApplication>(app.Get(0));
        apps.push_back(a);
        Simulator::Schedule(start + NanoSeconds(1), &ConnectSender, i, a);
    }

    g_flowSynDrops.assign(g_flows.size(), 0);
    Simulator::Stop(Seconds(simtime));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();

    std::string settings;
    {
        char buf[2048];
        Ptr<QueueDisc> qd = qdiscs.Get(0);
        Ptr<Object> sock = apps.empty() ? nullptr : Ptr<Object>(apps[0]->GetSocket());
        Ptr<Object> probe = sock;
        for (auto& s : sinks)
        {
            std::list<Ptr<Socket>> acc = s->GetAcceptedSockets();
            if (!acc.empty())
            {
                probe = acc.front();
                break;
            }
        }
        if (!sock)
        {
            std::fprintf(stderr, "no flow started\n");
            return 2;
        }
        std::snprintf(
            buf, sizeof(buf),
            "{\"rate_mbps\": %.6f, \"delay_ms\": %.6f, \"access_rate_mbps\": %.6f, "
            "\"access_delay_ms\": %.6f, \"bottleneck_mtu\": %u, \"device_queue_p\": %u, "
            "\"qdisc\": \"%s\", \"qdisc_limit_p\": %u, \"segment_size\": %llu, "
            "\"initial_cwnd\": %llu, \"del_ack_count\": %llu, \"del_ack_timeout_ms\": %.3f, "
            "\"min_rto_ms\": %.3f, \"conn_timeout_ms\": %.3f, \"conn_count\": %llu, "
            "\"snd_buf\": %llu, \"rcv_buf\": %llu, \"sack\": %s, \"timestamps\": %s, "
            "\"no_delay\": %s, \"cc\": \"%s\", \"recovery\": \"%s\"}",
            RateAttrMbps(bdev.Get(0), "DataRate"), TimeAttrMs(bdev.Get(0)->GetChannel(), "Delay"),
            RateAttrMbps(accessDev, "DataRate"), TimeAttrMs(accessDev->GetChannel(), "Delay"),
            bdev.Get(0)->GetMtu(),
            DynamicCast<PointToPointNetDevice>(bdev.Get(0))->GetQueue()->GetMaxSize().GetValue(),
            qd->GetInstanceTypeId().GetName().c_str(), qd->GetMaxSize().GetValue(),
            (unsigned long long)UintAttr(sock, "SegmentSize"),
            (unsigned long long)UintAttr(sock, "InitialCwnd"),
            (unsigned long long)UintAttr(probe, "DelAckCount"), TimeAttrMs(probe, "DelAckTimeout"),
            TimeAttrMs(sock, "MinRto"), TimeAttrMs(sock, "ConnTimeout"),
            (unsigned long long)UintAttr(sock, "ConnCount"),
            (unsigned long long)UintAttr(sock, "SndBufSize"),
            (unsigned long long)UintAttr(probe, "RcvBufSize"),
            BoolAttr(sock, "Sack") ? "true" : "false",
            BoolAttr(sock, "Timestamp") ? "true" : "false",
            BoolAttr(sock, "TcpNoDelay") ? "true" : "false",
            [&] {
                PointerValue p;
                sock->GetAttribute("CongestionOps", p);
                return p.Get<Object>()->GetInstanceTypeId().GetName();
            }().c_str(),
            [&] {
                PointerValue p;
                sock->GetAttribute("RecoveryOps", p);
                return p.Get<Object>()->GetInstanceTypeId().GetName();
            }().c_str());
        settings = buf;
    }
    const QueueDisc::Stats& st = qdiscs.Get(0)->GetStats();
    std::string fcts = "[";
    std::string retx = "[";
    std::string tos = "[";
    for (size_t i = 0; i < g_flows.size(); ++i)
    {
        char b[64];
        std::snprintf(b, sizeof(b), "%s%.9f", i ? ", " : "", g_flows[i].fct);
        fcts += b;
        retx += (i ? ", " : "") + std::to_string(g_flows[i].retransmits);
        tos += (i ? ", " : "") + std::to_string(g_flows[i].timeouts);
    }
    std::string synd = "[";
    for (size_t i = 0; i < g_flowSynDrops.size(); ++i)
    {
        synd += (i ? ", " : "") + std::to_string(g_flowSynDrops[i]);
    }
    fcts += "]";
    retx += "]";
    tos += "]";
    synd += "]";
    char kinds[256];
    std::snprintf(kinds, sizeof(kinds),
                  "{\"syn\": %llu, \"pure_ack\": %llu, \"fin\": %llu, \"data\": %llu, "
                  "\"other\": %llu}",
                  (unsigned long long)g_dropSyn, (unsigned long long)g_dropAck,
                  (unsigned long long)g_dropFin, (unsigned long long)g_dropData,
                  (unsigned long long)g_dropOther);
    std::printf("{\"simulator\": \"ns-3.44 native C++ (wheel libs)\", \"flows\": %zu, "
                "\"pairs\": %u, \"simtime\": %g, \"seed\": %u, \"wall_s\": %.6f, "
                "\"events\": %llu, \"retransmits\": %llu, \"timeouts\": %llu, "
                "\"drops\": %u, \"bottleneck_packets\": %u, \"settings\": %s, \"fct\": %s, "
                "\"flow_retransmits\": %s, \"flow_timeouts\": %s, \"drop_kinds\": %s, "
                "\"flow_syn_drops\": %s}\n",
                g_flows.size(), pairs, simtime, seed, wall, (unsigned long long)events,
                (unsigned long long)g_retransmits, (unsigned long long)g_timeouts,
                st.nTotalDroppedPackets, st.nTotalEnqueuedPackets, settings.c_str(),
                fcts.c_str(), retx.c_str(), tos.c_str(), kinds, synd.c_str());
    Simulator::Destroy();
    return 0;
}

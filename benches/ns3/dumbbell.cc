// The ns-3 side of benches/vs_ns3.py: the ns-3 dumbbell the project was given (its native
// C++ twin, same scenario and defaults) extended with a congestion-control and a bottleneck
// queue choice for the issue-11 comparisons (CUBIC, BBR, Westwood+, DCTCP; CoDel, FQ-CoDel,
// PIE, drop-tail).  With the defaults (--cc=newreno --queue=red) it is the shared scenario
// unchanged.  Linked against the libraries of the `ns3` PyPI wheel (3.44).  Prints one JSON
// line.
//
//   S_i --100Mb/1ms-- L ==10Mb/20ms (queue disc, optional PER erasure L->R)== R --100Mb/1ms-- D_i
//
// --queue red       RedQueueDisc, limit --qlimit (500), MinTh 75, MaxTh 225, ECN per --ecn
// --queue droptail  FifoQueueDisc, limit --qlimit (110 p = 1 BDP: 10 Mbit/s x 44 ms / 500 B)
// --queue codel     CoDelQueueDisc (target 5 ms, interval 100 ms), limit --qlimit (1000 p)
// --queue fq_codel  FqCoDelQueueDisc (1024 flows, quantum = MTU, target/interval as CoDel)
// --queue pie       PieQueueDisc (target 15 ms, tupdate 15 ms, a 0.125, b 1.25, burst 150 ms)
// --queue dctcp     RedQueueDisc as a DCTCP marker, as ns-3's examples/tcp/dctcp-example.cc
//                   (after the DCTCP paper): QW 1 (instantaneous queue), MinTh = --dctcpk,
//                   MaxTh = 3 x --dctcpk, UseHardDrop false, ECN on
// --ecn 1|0         TCP ECN on/off, and the queue disc's UseEcn (all AQMs)
//
// For the grid of benches/vs_ns3.py --grid the path and the TCP buffers are parameters too
// (defaults: the scenario above): --rate / --delay the bottleneck (Mbit/s, one-way ms; RED's
// LinkBandwidth and LinkDelay follow them), --accessrate / --accessdelay the access links,
// --bufsize the TCP send and receive buffers (bytes), --minth / --maxth RED's thresholds
// (0: 75 / 225, or K / 3K for --queue dctcp), --meanpkt RED's and PIE's MeanPktSize (bytes).
// The JSON line carries a "settings" object read back from the built objects (devices,
// channels, queue disc, a sender's and a receiver's socket), so that the caller can check
// that ns-3 ran what it asked for, and the data retransmissions of every sender.
//
// Diagnostics (off by default; the default output is unchanged): --sndbuf=BYTES sets
// SndBufSize alone (0: --bufsize), an A/B switch; --bbrstate=1 with --trace and --cc=bbr adds
// a "bbr" line of TcpBbr's state after every ACK a sender processes (see TraceBbrRx).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <list>
#include <string>
#include <cstdio>
#include <map>

using namespace ns3;

static uint64_t g_erasures = 0;
static uint64_t g_rxIp = 0;
static double g_sojournSum = 0.0; // seconds, packets dequeued from the L->R queue disc
static uint64_t g_sojournCount = 0;
// Packets waiting for the L->R transmitter: in the queue disc plus in the device's own
// queue (the packet being sent has left both). Integrated over time for Little's law.
static uint32_t g_waitQdisc = 0;
static uint32_t g_waitDevice = 0;
static double g_waitArea = 0.0; // packet-seconds
static double g_waitSince = 0.0;
static uint64_t g_deviceDequeued = 0;

// Loss-recovery episodes of every sender (entries into CA_LOSS after a
// retransmission timeout, into CA_RECOVERY for fast recovery), counted from
// the TcpSocketBase "CongState" trace once the sockets exist.
static uint64_t g_lossEpisodes = 0;
static uint64_t g_recoveryEpisodes = 0;
// Data segments retransmitted by the senders (TcpSocketBase "Retransmission").
static uint64_t g_retransmits = 0;
// --trace=FILE: every sender's cwnd, ssthresh and pacing-rate changes, congestion states and data segments sent
// (sequence numbers), the L->R waiting packets and the packets its queue disc dropped.
static FILE* g_trace = nullptr;

static void
TraceCwnd(std::string ctx, uint32_t, uint32_t v)
{
    std::fprintf(g_trace, "%.9f cwnd %s %u\n", Simulator::Now().GetSeconds(), ctx.c_str(), v);
}

static void
TracePacing(std::string ctx, DataRate, DataRate v)
{
    std::fprintf(g_trace, "%.9f pacing %s %llu\n", Simulator::Now().GetSeconds(), ctx.c_str(),
                 (unsigned long long)v.GetBitRate());
}

static void
TraceSsth(std::string ctx, uint32_t, uint32_t v)
{
    std::fprintf(g_trace, "%.9f ssthresh %s %u\n", Simulator::Now().GetSeconds(), ctx.c_str(), v);
}

static void
TraceTx(std::string ctx, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        std::fprintf(g_trace, "%.9f tx %s %u\n", Simulator::Now().GetSeconds(), ctx.c_str(),
                     h.GetSequenceNumber().GetValue());
    }
}

namespace
{
// --bbrstate=1 (with --trace and --cc=bbr): after every ACK a sender processes, one line
// "T bbr NODE state filled round_start round_count full_bw_count full_bw max_bw rs_app_limited
// rs_rate rs_prior_delivered delivered cong_state" (rates bit/s) from TcpBbr's private
// members, read through the friend classes ns-3.44 declares for its own tests (TcpSocketBase's
// `TcpGeneralTest`, TcpBbr's `TcpBbrCheckGainValuesTest`); the rate sample is the last one
// the socket's TcpRateLinux traced ("TcpRateSampleUpdated"). A diagnostic: off by default.
static bool g_bbrState = false;
static std::map<const TcpSocketBase*, TcpRateOps::TcpRateSample> g_lastSample;
} // namespace

namespace ns3
{
class TcpGeneralTest
{
  public:
    static Ptr<TcpCongestionOps> Cc(const TcpSocketBase* s)
    {
        return s->m_congestionControl;
    }

    static Ptr<TcpRateOps> Rate(const TcpSocketBase* s)
    {
        return s->m_rateOps;
    }

    static int CongState(const TcpSocketBase* s)
    {
        return (int)s->m_tcb->m_congState.Get();
    }
};
} // namespace ns3

class TcpBbrCheckGainValuesTest
{
  public:
    static void Log(std::string id, const TcpSocketBase* s)
    {
        auto* bbr = dynamic_cast<TcpBbr*>(PeekPointer(TcpGeneralTest::Cc(s)));
        if (!bbr || !g_trace)
        {
            return;
        }
        const TcpRateOps::TcpRateSample& rs = g_lastSample[s];
        std::fprintf(g_trace,
                     "%.9f bbr %s %d %d %d %u %u %llu %llu %d %llu %u %llu %d\n",
                     Simulator::Now().GetSeconds(),
                     id.c_str(),
                     (int)bbr->m_state,
                     (int)bbr->m_isPipeFilled,
                     (int)bbr->m_roundStart,
                     bbr->m_roundCount,
                     bbr->m_fullBandwidthCount,
                     (unsigned long long)bbr->m_fullBandwidth.GetBitRate(),
                     (unsigned long long)bbr->m_maxBwFilter.GetBest().GetBitRate(),
                     (int)rs.m_isAppLimited,
                     (unsigned long long)rs.m_deliveryRate.GetBitRate(),
                     rs.m_priorDelivered,
                     (unsigned long long)bbr->m_delivered,
                     TcpGeneralTest::CongState(s));
    }
};

namespace
{
void
OnRateSample(const TcpSocketBase* s, const TcpRateOps::TcpRateSample& rs)
{
    g_lastSample[s] = rs;
}

void
TraceBbrRx(std::string id, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase> s)
{
    const TcpSocketBase* raw = PeekPointer(s);
    if (!g_lastSample.count(raw))
    {
        g_lastSample[raw] = TcpRateOps::TcpRateSample();
        TcpGeneralTest::Rate(raw)->TraceConnectWithoutContext(
            "TcpRateSampleUpdated", MakeBoundCallback(&OnRateSample, raw));
    }
    // After the ACK's processing (this trace fires before it).
    Simulator::ScheduleNow(&TcpBbrCheckGainValuesTest::Log, id, raw);
}

} // namespace

// --trace: a data packet the bottleneck queue disc dropped (its TCP sequence number).
static void
TraceQdiscDrop(Ptr<const QueueDiscItem> item)
{
    TcpHeader h;
    item->GetPacket()->PeekHeader(h);
    std::fprintf(g_trace, "%.9f drop - %u\n", Simulator::Now().GetSeconds(),
                 h.GetSequenceNumber().GetValue());
}

// --trace: a data packet the bottleneck queue disc CE-marked (its TCP sequence number).
static void
TraceQdiscMark(Ptr<const QueueDiscItem> item, const char*)
{
    TcpHeader h;
    item->GetPacket()->PeekHeader(h);
    std::fprintf(g_trace, "%.9f mark - %u\n", Simulator::Now().GetSeconds(),
                 h.GetSequenceNumber().GetValue());
}

// --trace: "state - OLD NEW" at every congestion-state change of a sender (0 Open,
// 1 Disorder, 2 CWR, 3 Recovery, 4 Loss).
static void
OnCongState(TcpSocketState::TcpCongState_t oldV, TcpSocketState::TcpCongState_t newV)
{
    if (g_trace)
    {
        std::fprintf(g_trace, "%.9f state - %d %d\n", Simulator::Now().GetSeconds(), (int)oldV,
                     (int)newV);
    }
    if (newV == TcpSocketState::CA_LOSS && oldV != TcpSocketState::CA_LOSS)
    {
        ++g_lossEpisodes;
    }
    if (newV == TcpSocketState::CA_RECOVERY && oldV != TcpSocketState::CA_RECOVERY)
    {
        ++g_recoveryEpisodes;
    }
}

static void
OnRetransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_retransmits;
}

// Connects the traces of one sender's socket, just after its application created it (the
// application starts at `start`; this runs 1 ns later, before any data was sent).
static void
ConnectSender(uint32_t node)
{
    std::string base =
        "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/*/";
    Config::ConnectWithoutContext(base + "CongState", MakeCallback(&OnCongState));
    Config::ConnectWithoutContext(base + "Retransmission", MakeCallback(&OnRetransmission));
    if (g_trace)
    {
        std::string id = std::to_string(node);
        Config::ConnectWithoutContext(base + "CongestionWindow", MakeBoundCallback(&TraceCwnd, id));
        Config::ConnectWithoutContext(base + "SlowStartThreshold",
                                      MakeBoundCallback(&TraceSsth, id));
        Config::ConnectWithoutContext(base + "PacingRate", MakeBoundCallback(&TracePacing, id));
        Config::ConnectWithoutContext(base + "Tx", MakeBoundCallback(&TraceTx, id));
        if (g_bbrState)
        {
            Config::ConnectWithoutContext(base + "Rx", MakeBoundCallback(&TraceBbrRx, id));
        }
    }
}

// Attribute read-back for the "settings" object.
static uint64_t
UintAttr(Ptr<Object> o, const std::string& name)
{
    UintegerValue v;
    o->GetAttribute(name, v);
    return v.Get();
}

static double
DoubleAttr(Ptr<Object> o, const std::string& name)
{
    DoubleValue v;
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

static void OnPhyRxDrop(Ptr<const Packet>) { ++g_erasures; }
static void OnIpRx(Ptr<const Packet>, Ptr<Ipv4>, uint32_t) { ++g_rxIp; }

static void
WaitChanged()
{
    double now = Simulator::Now().GetSeconds();
    g_waitArea += (g_waitQdisc + g_waitDevice) * (now - g_waitSince);
    g_waitSince = now;
}

static void
TraceWait()
{
    if (g_trace)
    {
        std::fprintf(g_trace, "%.9f wait - %u\n", Simulator::Now().GetSeconds(),
                     g_waitQdisc + g_waitDevice);
    }
}

static void
OnQdiscPackets(uint32_t, uint32_t n)
{
    WaitChanged();
    g_waitQdisc = n;
    TraceWait();
}

static void
OnDevicePackets(uint32_t, uint32_t n)
{
    WaitChanged();
    g_waitDevice = n;
    TraceWait();
}

static void
OnDeviceDequeue(Ptr<const Packet>)
{
    ++g_deviceDequeued;
}

static void
OnSojourn(Time t)
{
    g_sojournSum += t.GetSeconds();
    ++g_sojournCount;
}

int
main(int argc, char* argv[])
{
    uint32_t flows = 10;
    double per = 0.0;
    double simtime = 100.0;
    uint32_t seed = 1;
    uint32_t segsize = 448;
    std::string cc = "newreno";
    std::string queue = "red";
    uint32_t qlimit = 0;
    uint32_t dctcpk = 20;
    bool ecn = true;
    double rateMbps = 10.0;
    double delayMs = 20.0;
    double accessMbps = 100.0;
    double accessDelayMs = 1.0;
    uint32_t bufsize = 1 << 20;
    uint32_t sndbuf = 0;
    double minth = 0.0;
    double maxth = 0.0;
    uint32_t meanpkt = 500;
    std::string trace;
    CommandLine cmd;
    cmd.AddValue("flows", "number of flows", flows);
    cmd.AddValue("per", "packet erasure rate on bottleneck L->R", per);
    cmd.AddValue("simtime", "simulated seconds", simtime);
    cmd.AddValue("seed", "RngRun", seed);
    cmd.AddValue("segsize", "TCP SegmentSize", segsize);
    cmd.AddValue("cc", "newreno|cubic|bbr|westwood|dctcp", cc);
    cmd.AddValue("queue", "red|droptail|codel|fq_codel|pie|dctcp", queue);
    cmd.AddValue("qlimit", "bottleneck queue disc limit in packets (0 = the queue's default)",
                 qlimit);
    cmd.AddValue("dctcpk", "DCTCP marking threshold K in packets (--queue=dctcp)", dctcpk);
    cmd.AddValue("ecn", "ECN on TCP and the queue disc", ecn);
    cmd.AddValue("rate", "bottleneck rate, Mbit/s", rateMbps);
    cmd.AddValue("delay", "bottleneck one-way delay, ms", delayMs);
    cmd.AddValue("accessrate", "access link rate, Mbit/s", accessMbps);
    cmd.AddValue("accessdelay", "access link one-way delay, ms", accessDelayMs);
    cmd.AddValue("bufsize", "TCP SndBufSize and RcvBufSize, bytes", bufsize);
    cmd.AddValue("sndbuf", "TCP SndBufSize alone, bytes (0: --bufsize; an A/B switch)", sndbuf);
    cmd.AddValue("minth", "RED MinTh, packets (0: 75, or K for --queue=dctcp)", minth);
    cmd.AddValue("maxth", "RED MaxTh, packets (0: 225, or 3K for --queue=dctcp)", maxth);
    cmd.AddValue("meanpkt", "RED and PIE MeanPktSize, bytes", meanpkt);
    cmd.AddValue("trace", "write cwnd/ssthresh of every sender and the L->R wait here", trace);
    cmd.AddValue("bbrstate",
                 "with --trace and --cc=bbr: a line of TcpBbr's state after every ACK",
                 g_bbrState);
    cmd.Parse(argc, argv);

    const std::map<std::string, std::string> ccs = {{"newreno", "ns3::TcpNewReno"},
                                                     {"cubic", "ns3::TcpCubic"},
                                                     {"bbr", "ns3::TcpBbr"},
                                                     {"westwood", "ns3::TcpWestwoodPlus"},
                                                     {"dctcp", "ns3::TcpDctcp"}};
    const std::map<std::string, std::pair<std::string, uint32_t>> queues = {
        {"red", {"ns3::RedQueueDisc", 500}},
        {"droptail", {"ns3::FifoQueueDisc", 110}},
        {"codel", {"ns3::CoDelQueueDisc", 1000}},
        {"fq_codel", {"ns3::FqCoDelQueueDisc", 1000}},
        {"pie", {"ns3::PieQueueDisc", 1000}},
        {"dctcp", {"ns3::RedQueueDisc", 500}}};
    if (!ccs.count(cc) || !queues.count(queue))
    {
        std::fprintf(stderr, "unknown --cc '%s' or --queue '%s'\n", cc.c_str(), queue.c_str());
        return 2;
    }
    const std::string qdiscType = queues.at(queue).first;
    if (qlimit == 0)
    {
        qlimit = queues.at(queue).second;
    }
    const std::string limit = std::to_string(qlimit) + "p";
    if (!trace.empty())
    {
        g_trace = std::fopen(trace.c_str(), "w");
        if (!g_trace)
        {
            std::fprintf(stderr, "cannot write --trace file '%s'\n", trace.c_str());
            return 2;
        }
    }
    if (minth <= 0)
    {
        minth = queue == "dctcp" ? dctcpk : 75;
    }
    if (maxth <= 0)
    {
        maxth = queue == "dctcp" ? 3 * dctcpk : 225;
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
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndbuf ? sndbuf : bufsize));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufsize));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize(limit)));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(minth));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(maxth));
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(ecn));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(meanpkt));
    Config::SetDefault("ns3::RedQueueDisc::LinkBandwidth", DataRateValue(rate));
    Config::SetDefault("ns3::RedQueueDisc::LinkDelay", TimeValue(delay));
    if (queue == "dctcp")
    {
        Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
        Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    }
    Config::SetDefault("ns3::FifoQueueDisc::MaxSize", QueueSizeValue(QueueSize(limit)));
    Config::SetDefault("ns3::CoDelQueueDisc::MaxSize", QueueSizeValue(QueueSize(limit)));
    Config::SetDefault("ns3::CoDelQueueDisc::UseEcn", BooleanValue(ecn));
    Config::SetDefault("ns3::FqCoDelQueueDisc::MaxSize", QueueSizeValue(QueueSize(limit)));
    Config::SetDefault("ns3::FqCoDelQueueDisc::UseEcn", BooleanValue(ecn));
    Config::SetDefault("ns3::PieQueueDisc::MaxSize", QueueSizeValue(QueueSize(limit)));
    Config::SetDefault("ns3::PieQueueDisc::UseEcn", BooleanValue(ecn));
    Config::SetDefault("ns3::PieQueueDisc::MeanPktSize", UintegerValue(meanpkt));

    NodeContainer senders;
    NodeContainer receivers;
    NodeContainer routers;
    senders.Create(flows);
    receivers.Create(flows);
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
    TrafficControlHelper tch;
    tch.SetRootQueueDisc(qdiscType);
    QueueDiscContainer qdiscs = tch.Install(bdev);
    qdiscs.Get(0)->TraceConnectWithoutContext("SojournTime", MakeCallback(&OnSojourn));
    qdiscs.Get(0)->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQdiscPackets));
    if (g_trace)
    {
        qdiscs.Get(0)->TraceConnectWithoutContext("Drop", MakeCallback(&TraceQdiscDrop));
        qdiscs.Get(0)->TraceConnectWithoutContext("Mark", MakeCallback(&TraceQdiscMark));
    }
    {
        auto devQueue = DynamicCast<PointToPointNetDevice>(bdev.Get(0))->GetQueue();
        devQueue->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnDevicePackets));
        devQueue->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDeviceDequeue));
    }
    if (per > 0)
    {
        auto em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(per);
        bdev.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }
    bdev.Get(1)->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnPhyRxDrop));

    Ptr<NetDevice> accessDev;
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    addr.Assign(bdev);
    std::vector<Ipv4InterfaceContainer> sinkIfaces;
    for (uint32_t i = 0; i < flows; ++i)
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

    uint16_t port = 5000;
    auto startRv = CreateObject<UniformRandomVariable>();
    startRv->SetAttribute("Min", DoubleValue(0.0));
    startRv->SetAttribute("Max", DoubleValue(1.0));
    ApplicationContainer sinks;
    ApplicationContainer bulks;
    for (uint32_t i = 0; i < flows; ++i)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(sinkIfaces[i].GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer app = bulk.Install(senders.Get(i));
        const Time start = Seconds(startRv->GetValue());
        app.Start(start);
        app.Stop(Seconds(simtime));
        bulks.Add(app);
        Simulator::Schedule(start + NanoSeconds(1), &ConnectSender, senders.Get(i)->GetId());
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(receivers.Get(i));
        s.Start(Seconds(0.0));
        sinks.Add(s);
        receivers.Get(i)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Rx", MakeCallback(&OnIpRx));
    }

    Simulator::Stop(Seconds(simtime));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();

    uint64_t sinkBytes = 0;
    std::string perFlow = "[";
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        uint64_t b = DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
        sinkBytes += b;
        perFlow += (i ? ", " : "") + std::to_string(b);
    }
    perFlow += "]";
    const QueueDisc::Stats& st = qdiscs.Get(0)->GetStats();
    // What ns-3 ran, read back from the objects themselves.
    std::string settings;
    {
        char buf[2048];
        Ptr<QueueDisc> qd = qdiscs.Get(0);
        Ptr<Object> sock = DynamicCast<BulkSendApplication>(bulks.Get(0))->GetSocket();
        // The first receiver's connected socket (its delayed-ACK and receive-buffer settings).
        std::list<Ptr<Socket>> accepted = DynamicCast<PacketSink>(sinks.Get(0))->GetAcceptedSockets();
        Ptr<Object> probe = accepted.empty() ? Ptr<Object>(sock) : Ptr<Object>(accepted.front());
        std::snprintf(
            buf, sizeof(buf),
            "{\"rate_mbps\": %.6f, \"delay_ms\": %.6f, \"access_rate_mbps\": %.6f, "
            "\"access_delay_ms\": %.6f, \"bottleneck_mtu\": %u, \"device_queue_p\": %u, "
            "\"qdisc\": \"%s\", \"qdisc_limit_p\": %u, \"segment_size\": %llu, "
            "\"initial_cwnd\": %llu, \"del_ack_count\": %llu, \"del_ack_timeout_ms\": %.3f, "
            "\"min_rto_ms\": %.3f, \"snd_buf\": %llu, \"rcv_buf\": %llu, \"sack\": %s, "
            "\"timestamps\": %s, \"window_scaling\": %s, \"cc\": \"%s\", "
            "\"recovery\": \"%s\"",
            RateAttrMbps(bdev.Get(0), "DataRate"), TimeAttrMs(bdev.Get(0)->GetChannel(), "Delay"),
            RateAttrMbps(accessDev, "DataRate"), TimeAttrMs(accessDev->GetChannel(), "Delay"),
            bdev.Get(0)->GetMtu(),
            DynamicCast<PointToPointNetDevice>(bdev.Get(0))->GetQueue()->GetMaxSize().GetValue(),
            qd->GetInstanceTypeId().GetName().c_str(), qd->GetMaxSize().GetValue(),
            (unsigned long long)UintAttr(sock, "SegmentSize"),
            (unsigned long long)UintAttr(sock, "InitialCwnd"),
            (unsigned long long)UintAttr(probe, "DelAckCount"), TimeAttrMs(probe, "DelAckTimeout"),
            TimeAttrMs(sock, "MinRto"), (unsigned long long)UintAttr(sock, "SndBufSize"),
            (unsigned long long)UintAttr(probe, "RcvBufSize"),
            BoolAttr(sock, "Sack") ? "true" : "false",
            BoolAttr(sock, "Timestamp") ? "true" : "false",
            BoolAttr(sock, "WindowScaling") ? "true" : "false",
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
        if (queue == "red" || queue == "dctcp")
        {
            std::snprintf(buf, sizeof(buf),
                          ", \"red_min_th\": %.6f, \"red_max_th\": %.6f, \"red_qw\": %.6f, "
                          "\"red_mean_pkt_size\": %llu, \"red_link_mbps\": %.6f, "
                          "\"red_hard_drop\": %s, \"qdisc_ecn\": %s",
                          DoubleAttr(qd, "MinTh"), DoubleAttr(qd, "MaxTh"), DoubleAttr(qd, "QW"),
                          (unsigned long long)UintAttr(qd, "MeanPktSize"),
                          RateAttrMbps(qd, "LinkBandwidth"),
                          BoolAttr(qd, "UseHardDrop") ? "true" : "false",
                          BoolAttr(qd, "UseEcn") ? "true" : "false");
            settings += buf;
        }
        else if (queue == "pie")
        {
            std::snprintf(buf, sizeof(buf),
                          ", \"pie_mean_pkt_size\": %llu, \"pie_target_ms\": %.3f, "
                          "\"pie_tupdate_ms\": %.3f, \"qdisc_ecn\": %s",
                          (unsigned long long)UintAttr(qd, "MeanPktSize"),
                          TimeAttrMs(qd, "QueueDelayReference"), TimeAttrMs(qd, "Tupdate"),
                          BoolAttr(qd, "UseEcn") ? "true" : "false");
            settings += buf;
        }
        else if (queue == "codel")
        {
            StringValue target;
            qd->GetAttribute("Target", target);
            std::snprintf(buf, sizeof(buf),
                          ", \"codel_min_bytes\": %llu, \"codel_target\": \"%s\", "
                          "\"qdisc_ecn\": %s",
                          (unsigned long long)UintAttr(qd, "MinBytes"), target.Get().c_str(),
                          BoolAttr(qd, "UseEcn") ? "true" : "false");
            settings += buf;
        }
        else if (queue == "fq_codel")
        {
            std::snprintf(buf, sizeof(buf),
                          ", \"fq_quantum\": %u, \"fq_flows\": %llu, \"qdisc_ecn\": %s",
                          DynamicCast<FqCoDelQueueDisc>(qd)->GetQuantum(),
                          (unsigned long long)UintAttr(qd, "Flows"),
                          BoolAttr(qd, "UseEcn") ? "true" : "false");
            settings += buf;
        }
        settings += "}";
    }
    double qdelayMs = g_sojournCount ? g_sojournSum / g_sojournCount * 1e3 : 0.0;
    WaitChanged();
    // Little's law over queue disc + device queue: mean waiting packets / departures per s.
    double waitMs = g_deviceDequeued ? g_waitArea / g_deviceDequeued * 1e3 : 0.0;
    std::printf("{\"simulator\": \"ns-3.44 native C++ (wheel libs)\", \"flows\": %u, \"per\": %g, "
                "\"simtime\": %g, \"seed\": %u, \"segsize\": %u, \"cc\": \"%s\", "
                "\"queue\": \"%s\", \"qlimit\": %u, \"ecn\": %s, \"goodput_mbps\": %.6f, "
                "\"wall_s\": %.6f, \"sink_bytes\": %llu, \"rx_ip_packets\": %llu, "
                "\"events\": %llu, \"events_per_s\": %.1f, \"erasures\": %llu, "
                "\"queue_delay_ms\": %.6f, \"queue_dequeued\": %llu, \"wait_ms\": %.6f, "
                "\"loss_episodes\": %llu, \"recovery_episodes\": %llu, "
                "\"retransmits\": %llu, \"flow_bytes\": %s, \"settings\": %s, \"red\": "
                "{\"enqueued\": %u, \"unforced_mark\": %u, \"forced_mark\": %u, "
                "\"unforced_drop\": %u, \"forced_drop\": %u, \"total_dropped\": %u, "
                "\"total_marked\": %u}}\n",
                flows, per, simtime, seed, segsize, cc.c_str(), queue.c_str(), qlimit,
                ecn ? "true" : "false", sinkBytes * 8 / simtime / 1e6, wall,
                (unsigned long long)sinkBytes, (unsigned long long)g_rxIp,
                (unsigned long long)events, events / wall, (unsigned long long)g_erasures,
                qdelayMs, (unsigned long long)g_sojournCount, waitMs,
                (unsigned long long)g_lossEpisodes, (unsigned long long)g_recoveryEpisodes,
                (unsigned long long)g_retransmits, perFlow.c_str(), settings.c_str(),
                st.nTotalEnqueuedPackets,
                st.GetNMarkedPackets("Unforced mark"), st.GetNMarkedPackets("Forced mark"),
                st.GetNDroppedPackets("Unforced drop"), st.GetNDroppedPackets("Forced drop"),
                st.nTotalDroppedPackets, st.nTotalMarkedPackets);
    Simulator::Destroy();
    if (g_trace)
    {
        std::fclose(g_trace);
    }
    return 0;
}

// The ns-3 side of benches/vs_ns3.py: the dumbbell of ../../../shared/bench/ns3/ (native
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
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
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

static void
OnCongState(TcpSocketState::TcpCongState_t oldV, TcpSocketState::TcpCongState_t newV)
{
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
ConnectCongState()
{
    Config::ConnectWithoutContext("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                  MakeCallback(&OnCongState));
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
OnQdiscPackets(uint32_t, uint32_t n)
{
    WaitChanged();
    g_waitQdisc = n;
}

static void
OnDevicePackets(uint32_t, uint32_t n)
{
    WaitChanged();
    g_waitDevice = n;
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

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(ccs.at(cc))));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segsize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize(limit)));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(queue == "dctcp" ? dctcpk : 75));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(queue == "dctcp" ? 3 * dctcpk : 225));
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(ecn));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(500));
    Config::SetDefault("ns3::RedQueueDisc::LinkBandwidth", DataRateValue(DataRate("10Mbps")));
    Config::SetDefault("ns3::RedQueueDisc::LinkDelay", TimeValue(MilliSeconds(20)));
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
    Config::SetDefault("ns3::PieQueueDisc::MeanPktSize", UintegerValue(500));

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
    access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    PointToPointHelper bneck;
    bneck.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bneck.SetChannelAttribute("Delay", StringValue("20ms"));

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

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    addr.Assign(bdev);
    std::vector<Ipv4InterfaceContainer> sinkIfaces;
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer d = access.Install(senders.Get(i), routers.Get(0));
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
    for (uint32_t i = 0; i < flows; ++i)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(sinkIfaces[i].GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer app = bulk.Install(senders.Get(i));
        app.Start(Seconds(startRv->GetValue()));
        app.Stop(Seconds(simtime));
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(receivers.Get(i));
        s.Start(Seconds(0.0));
        sinks.Add(s);
        receivers.Get(i)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Rx", MakeCallback(&OnIpRx));
    }

    // Every application has started (start times are in [0, 1) s).
    Simulator::Schedule(Seconds(1.0), &ConnectCongState);
    Simulator::Stop(Seconds(simtime));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();

    uint64_t sinkBytes = 0;
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        sinkBytes += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
    }
    const QueueDisc::Stats& st = qdiscs.Get(0)->GetStats();
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
                "\"loss_episodes\": %llu, \"recovery_episodes\": %llu, \"red\": "
                "{\"enqueued\": %u, \"unforced_mark\": %u, \"forced_mark\": %u, "
                "\"unforced_drop\": %u, \"forced_drop\": %u, \"total_dropped\": %u, "
                "\"total_marked\": %u}}\n",
                flows, per, simtime, seed, segsize, cc.c_str(), queue.c_str(), qlimit,
                ecn ? "true" : "false", sinkBytes * 8 / simtime / 1e6, wall,
                (unsigned long long)sinkBytes, (unsigned long long)g_rxIp,
                (unsigned long long)events, events / wall, (unsigned long long)g_erasures,
                qdelayMs, (unsigned long long)g_sojournCount, waitMs,
                (unsigned long long)g_lossEpisodes, (unsigned long long)g_recoveryEpisodes,
                st.nTotalEnqueuedPackets,
                st.GetNMarkedPackets("Unforced mark"), st.GetNMarkedPackets("Forced mark"),
                st.GetNDroppedPackets("Unforced drop"), st.GetNDroppedPackets("Forced drop"),
                st.nTotalDroppedPackets, st.nTotalMarkedPackets);
    Simulator::Destroy();
    return 0;
}

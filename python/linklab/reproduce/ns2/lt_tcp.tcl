# The LT-TCP paper's TCP-SACK set-up (seed 002, Fig. 1) in ns-2.35 itself, for
# `linklab reproduce lt-tcp --experiments ns2` (python/linklab/reproduce/ns2_peer.py).
#
#   ns lt_tcp.tcl per=0.2 seed=1 duration=1000 [size=460] [sink=delack|segment]
#                 [interval=0.1] [tick=0.01] [precision_reduce=true] [rtxcur_init=3]
#                 [maxrto=60] [timestamps=false] [flows=10]
#
# 10 one-way Agent/TCP/Sack1 senders (ECN) with FTP from S_i to D_i over 100 Mbit/s
# 1 ms access links and a 10 Mbit/s 20 ms RED/ECN bottleneck (500 packets, thresh_ 75,
# maxthresh_ 225, mean_pktsize_ 500), flows started at uniform random times in [0, 1) s,
# packets erased with probability `per` on the bottleneck's data direction after its
# queue (an ErrorModel inserted with link-lossmodel), sinks Agent/TCPSink/Sack1/DelAck
# (`interval`) or Agent/TCPSink/Sack1. Every other value is ns-2.35's default except the
# window (window_ 10000: linklab's 1 MiB receive window never limits either). `size` is
# packetSize_, the payload: 460 bytes make the 500-byte packets of linklab's runs.
# `timestamps` true sets timestamps_ and ts_resetRTO_ (every RTT sample ends a back-off).
#
# Prints one line at the end: key=value pairs summed over the flows, and run_us, the
# wall time of `$ns run` in microseconds.

array set opt {size 460 sink delack interval 0.1 tick 0.01 precision_reduce true
               rtxcur_init 3.0 maxrto 60 timestamps false flows 10}
foreach arg $argv {
    set kv [split $arg =]
    if {[llength $kv] != 2} {
        puts stderr "bad argument '$arg'; expected key=value"
        exit 2
    }
    set opt([lindex $kv 0]) [lindex $kv 1]
}
foreach key {per seed duration} {
    if {![info exists opt($key)]} {
        puts stderr "missing argument $key=..."
        exit 2
    }
}

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $opt(seed)

Agent/TCP set ecn_ 1
Agent/TCP set packetSize_ $opt(size)
Agent/TCP set window_ 10000
Agent/TCP set tcpTick_ $opt(tick)
Agent/TCP set precisionReduce_ $opt(precision_reduce)
Agent/TCP set rtxcur_init_ $opt(rtxcur_init)
Agent/TCP set maxrto_ $opt(maxrto)
Agent/TCP set timestamps_ $opt(timestamps)
Agent/TCP set ts_resetRTO_ $opt(timestamps)
Agent/TCPSink/Sack1/DelAck set interval_ $opt(interval)
Queue/RED set thresh_ 75
Queue/RED set maxthresh_ 225
Queue/RED set setbit_ true
Queue/RED set mean_pktsize_ 500

set L [$ns node]
set R [$ns node]
$ns duplex-link $L $R 10Mb 20ms RED
$ns queue-limit $L $R 500
$ns queue-limit $R $L 500

set em [new ErrorModel]
$em unit pkt
$em set rate_ $opt(per)
$em ranvar [new RandomVariable/Uniform]
$em drop-target [new Agent/Null]
$ns link-lossmodel $em $L $R

set startrng [new RNG]
$startrng seed [expr {$opt(seed) + 1000}]
set start [new RandomVariable/Uniform]
$start set min_ 0
$start set max_ 1
$start use-rng $startrng

for {set i 0} {$i < $opt(flows)} {incr i} {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $L 100Mb 1ms DropTail
    $ns duplex-link $R $d 100Mb 1ms DropTail
    $ns queue-limit $s $L 1000
    $ns queue-limit $R $d 1000
    set tcp($i) [new Agent/TCP/Sack1]
    if {$opt(sink) == "delack"} {
        set sink [new Agent/TCPSink/Sack1/DelAck]
    } else {
        set sink [new Agent/TCPSink/Sack1]
    }
    $ns attach-agent $s $tcp($i)
    $ns attach-agent $d $sink
    $ns connect $tcp($i) $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($i)
    $ns at [$start value] "$ftp start"
}

proc finish {} {
    global tcp opt
    set delivered 0; set timeouts 0; set sent 0; set resent 0
    for {set i 0} {$i < $opt(flows)} {incr i} {
        # ack_ is the highest cumulative ACK; seqno 0 is the 40-byte SYN (syn_ true).
        set a [$tcp($i) set ack_]
        if {$a > 0} { incr delivered $a }
        incr timeouts [$tcp($i) set nrexmit_]
        incr sent [$tcp($i) set ndatapack_]
        incr resent [$tcp($i) set nrexmitpack_]
    }
    global t0
    set run_us [expr {[clock microseconds] - $t0}]
    puts "delivered=$delivered timeouts=$timeouts sent=$sent resent=$resent run_us=$run_us"
    exit 0
}
$ns at $opt(duration) "finish"
# run_us: the wall time of the event loop alone (benches/vs_ns2.py).
set t0 [clock microseconds]
$ns run

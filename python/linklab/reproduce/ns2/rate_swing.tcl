# Seed 003's set-up (Paliwal et al., Table 1 and Fig. 2) in ns-2.35 itself, for
# `linklab reproduce rate-swing` (experiment ns2: Table 3; experiments fig3, fig6 and
# fig11: their ns-2 columns; python/linklab/reproduce/ns2_peer.py).
#
#   ns rate_swing.tcl seed=1 duration=300 schedule=FILE trace=FILE [mobiles=100]
#                     [bts=10] [size=960] [window=32] [minrto=1] [tick=0.01]
#                     [uplink=163200] [limit=300] [minth=20] [maxth=60] [wq=0.002]
#                     [linterm=10] [bsc=BIT/S] [aqm=RED|DropTail] [variant=Reno|Newreno]
#                     [senders=0|1] [ave=FILE] [window_at=T]
#
# `mobiles` greedy FTP flows, Agent/TCP/`variant` (Reno) from S_k to an Agent/TCPSink (one ACK per
# segment) at MS_k, all started at 0 s:
#   S_k --100 Mbit/s-- R ==(the BSC's shared buffer, RED)== BSC --100 Mbit/s-- BTS_b
#   --(MS_k's downlink, its radio rate; uplink `uplink` bit/s)-- MS_k,
# every hop 37.5 ms (round-trip propagation 300 ms). R -> BSC is served at `bsc`
# bit/s (default mobiles x 38.4 kbit/s) by RED (limit `limit` packets, thresh_ `minth`,
# maxthresh_ `maxth`, q_weight_ `wq`, linterm_ `linterm`, gentle_ false, mean_pktsize_
# 1000; the rest ns-2.35's defaults) or, with aqm=DropTail, drop-tail of `limit`
# packets (Fig. 3's one mobile); every other buffer is unbounded (100 000 packets).
# Mobile k (0-based) hangs off BTS k * bts / mobiles.
#
# `schedule`: the radio rates, one line `time_s mobile bit/s` per change in time order
# (written by the Python side from linklab's own SCH generator, `_core.sch_schedules`);
# the first lines, at 0 s, set the starting rates. ns-2 applies a new bandwidth_ from
# the next packet the link sends (the packet in transmission keeps its rate).
# TCP: packetSize_ `size` (+ 40 bytes of headers: 1000-byte packets), window_ `window`
# packets, minrto_ `minrto` s, tcpTick_ `tick` s, every other value ns-2.35's default
# (windowInit_ 2, rtxcur_init_ 3 s, maxrto_ 60 s, syn_ true).
#
# `trace`: ns-2's own queue trace (trace-queue: `+`, `-`, `d` lines) of the shared
# buffer, link 0 -> 1 (R is node 0, BSC node 1), and of every downlink BTS -> MS; the
# Python side computes the dead periods from it with the same code as from linklab's.
# senders=1 traces the links S_k -> R too (the segments as sent: Fig. 3's recovery).
# `ave`: RED's average queue (`trace ave_`: lines `a time packets`) into that file.
# `window_at`: the flows' summed window min(cwnd_, window_) at that time, printed in
# thousandths of a packet (window_mp).
#
# Prints one line at the end: timeouts, delivered (segments cumulatively ACKed), sent
# and resent (data packets sent, of them retransmissions), summed over the flows, and run_us, the wall time of `$ns run` in microseconds.

array set opt {mobiles 100 bts 10 size 960 window 32 minrto 1 tick 0.01 uplink 163200
               limit 300 minth 20 maxth 60 wq 0.002 linterm 10 aqm RED variant Reno
               senders 0}
foreach arg $argv {
    set kv [split $arg =]
    if {[llength $kv] != 2} {
        puts stderr "bad argument '$arg'; expected key=value"
        exit 2
    }
    set opt([lindex $kv 0]) [lindex $kv 1]
}
foreach key {seed duration schedule trace} {
    if {![info exists opt($key)]} {
        puts stderr "missing argument $key=..."
        exit 2
    }
}
foreach key {mobiles bts} {
    if {![string is integer -strict $opt($key)] || $opt($key) < 1} {
        puts stderr "bad $key=$opt($key); expected a positive integer"
        exit 2
    }
}
if {![info exists opt(bsc)]} { set opt(bsc) [expr {$opt(mobiles) * 38400}] }
if {![string is double -strict $opt(bsc)] || $opt(bsc) <= 0} {
    puts stderr "bad bsc=$opt(bsc); expected a rate in bit/s > 0"
    exit 2
}
if {$opt(aqm) ni {RED DropTail}} {
    puts stderr "bad aqm=$opt(aqm); expected RED or DropTail"
    exit 2
}
if {$opt(variant) ni {Reno Newreno}} {
    puts stderr "bad variant=$opt(variant); expected Reno or Newreno"
    exit 2
}
if {$opt(mobiles) % $opt(bts) != 0} {
    puts stderr "mobiles=$opt(mobiles) is not a multiple of bts=$opt(bts)"
    exit 2
}
if {[catch {open $opt(schedule) r} sched]} {
    puts stderr "cannot read schedule=$opt(schedule): $sched"
    exit 2
}

set ns [new Simulator]
global defaultRNG
$defaultRNG seed $opt(seed)

Agent/TCP set packetSize_ $opt(size)
Agent/TCP set window_ $opt(window)
Agent/TCP set minrto_ $opt(minrto)
Agent/TCP set tcpTick_ $opt(tick)
Queue/RED set thresh_ $opt(minth)
Queue/RED set maxthresh_ $opt(maxth)
Queue/RED set q_weight_ $opt(wq)
Queue/RED set linterm_ $opt(linterm)
Queue/RED set gentle_ false
Queue/RED set mean_pktsize_ 1000
Queue/RED set queue_in_bytes_ false

set big 100000
set d 37.5ms
set R [$ns node]
set BSC [$ns node]
$ns simplex-link $R $BSC $opt(bsc) $d $opt(aqm)
$ns simplex-link $BSC $R $opt(bsc) $d DropTail
$ns queue-limit $R $BSC $opt(limit)
$ns queue-limit $BSC $R $big
set tf [open $opt(trace) w]
$ns trace-queue $R $BSC $tf

for {set b 0} {$b < $opt(bts)} {incr b} {
    set bts($b) [$ns node]
    $ns duplex-link $BSC $bts($b) 100Mb $d DropTail
    $ns queue-limit $BSC $bts($b) $big
    $ns queue-limit $bts($b) $BSC $big
}
set per [expr {$opt(mobiles) / $opt(bts)}]
for {set k 0} {$k < $opt(mobiles)} {incr k} {
    set s [$ns node]
    set ms [$ns node]
    set b $bts([expr {$k / $per}])
    $ns duplex-link $s $R 100Mb $d DropTail
    $ns queue-limit $s $R $big
    $ns queue-limit $R $s $big
    if {$opt(senders)} { $ns trace-queue $s $R $tf }
    $ns simplex-link $b $ms 9600 $d DropTail
    $ns simplex-link $ms $b $opt(uplink) $d DropTail
    $ns queue-limit $b $ms $big
    $ns queue-limit $ms $b $big
    $ns trace-queue $b $ms $tf
    set radio($k) [[$ns link $b $ms] link]
    set tcp($k) [new Agent/TCP/$opt(variant)]
    set sink [new Agent/TCPSink]
    $ns attach-agent $s $tcp($k)
    $ns attach-agent $ms $sink
    $ns connect $tcp($k) $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($k)
    $ns at 0.0 "$ftp start"
}
set red [[$ns link $R $BSC] queue]
if {[info exists opt(ave)]} {
    if {$opt(aqm) ne "RED"} {
        puts stderr "ave=$opt(ave) needs aqm=RED"
        exit 2
    }
    set af [open $opt(ave) w]
    $red trace ave_
    $red attach $af
}
set window_mp -1
proc windows {} {
    global tcp opt window_mp
    set w 0.0
    for {set k 0} {$k < $opt(mobiles)} {incr k} {
        set w [expr {$w + min([$tcp($k) set cwnd_], [$tcp($k) set window_])}]
    }
    set window_mp [expr {round($w * 1000)}]
}
if {[info exists opt(window_at)]} { $ns at $opt(window_at) "windows" }

# The schedule is read as the run goes: one pending event, whatever its length.
set next ""
proc bad_line {line} {
    global opt
    puts stderr "bad line '$line' in schedule=$opt(schedule); expected 'time_s mobile bit/s'"
    exit 2
}
proc read_next {} {
    global sched next opt
    while {[gets $sched line] >= 0} {
        if {[string trim $line] eq ""} { continue }
        if {[llength $line] != 3} { bad_line $line }
        lassign $line t k r
        if {![string is double -strict $t] || ![string is integer -strict $k]
            || ![string is double -strict $r] || $k < 0 || $k >= $opt(mobiles) || $r <= 0} {
            bad_line $line
        }
        set next [list $t $k $r]
        return
    }
    set next ""
}
proc apply_due {} {
    global ns next radio
    set now [$ns now]
    while {$next ne "" && [lindex $next 0] <= $now} {
        lassign $next t k r
        $radio($k) set bandwidth_ $r
        read_next
    }
    if {$next ne ""} {
        $ns at [lindex $next 0] "apply_due"
    }
}
read_next
apply_due

proc finish {} {
    global tcp opt red tf t0 af window_mp
    set delivered 0; set timeouts 0; set sent 0; set resent 0
    for {set k 0} {$k < $opt(mobiles)} {incr k} {
        set a [$tcp($k) set ack_]
        if {$a > 0} { incr delivered $a }
        incr timeouts [$tcp($k) set nrexmit_]
        incr sent [$tcp($k) set ndatapack_]
        incr resent [$tcp($k) set nrexmitpack_]
    }
    close $tf
    if {[info exists af]} { close $af }
    set run_us [expr {[clock microseconds] - $t0}]
    set w [expr {$window_mp >= 0 ? " window_mp=$window_mp" : ""}]
    puts "timeouts=$timeouts delivered=$delivered sent=$sent resent=$resent run_us=$run_us$w"
    exit 0
}
$ns at $opt(duration) "finish"
set t0 [clock microseconds]
$ns run

//! Hand-computed tests of the RLC AM bearer, driven without the engine.
//!
//! Unless stated otherwise: Table 1 parameters (`RlcConfig::seed000`), 384
//! kbit/s both ways = 12 PDUs per 10 ms TTI, 25 ms one-way delay, 1-byte LIs.
//! A 1500-byte SDU occupies 1500 + 1 (its LI) stream bytes = ⌈1501/40⌉ = 38 PDUs.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;

use super::*;
use crate::aqm::{DropTail, OccupancySample};
use crate::channel::{Bernoulli, Perfect};
use crate::rng::Rng;

const K384: u64 = 384_000;

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

fn pkt(uid: u64, size: u32) -> Packet {
    Packet {
        uid,
        payload: size - 40,
        header: 40,
        ..Packet::default()
    }
}

/// Units sent per slot, shared with the test.
type SlotLog = Arc<Mutex<Vec<(Time, usize)>>>;

/// A channel that corrupts chosen units — `(slot start in ms, index of the
/// unit in that slot)` — and logs how many units each slot carried.
#[derive(Debug)]
struct Script {
    kill: BTreeSet<(u64, usize)>,
    log: SlotLog,
}

impl Script {
    fn new(kill: &[(u64, usize)]) -> (Box<Script>, SlotLog) {
        let log = SlotLog::default();
        let s = Script {
            kill: kill.iter().copied().collect(),
            log: log.clone(),
        };
        (Box::new(s), log)
    }
}

impl Channel for Script {
    fn advance(&mut self, now: Time) {
        self.log.lock().unwrap().push((now, 0));
    }
    fn unit_error(&mut self) -> bool {
        let mut log = self.log.lock().unwrap();
        let last = log.last_mut().expect("advance before unit_error");
        let key = (last.0 .0 / 1_000_000, last.1);
        last.1 += 1;
        self.kill.contains(&key)
    }
    fn is_bad(&self) -> bool {
        false
    }
    fn mean_error_rate(&self) -> f64 {
        0.0
    }
}

/// Front-drops (or drops) once `n` SDUs are buffered.
#[derive(Debug)]
struct Threshold {
    n: u32,
    verdict: Verdict,
    name: &'static str,
}

impl Aqm for Threshold {
    fn name(&self) -> &'static str {
        self.name
    }
    fn on_arrival(&mut self, _: Time, q: &QueueView, _: &Packet, _: &mut Rng) -> Verdict {
        if q.packets >= self.n {
            self.verdict
        } else {
            Verdict::Accept
        }
    }
}

fn dir(rate: u64, ch: Box<dyn Channel>) -> RlcDirection {
    RlcDirection::new(rate, Box::new(DropTail), ch, Rng::stream(1, "aqm"))
}

fn bearer(cfg: RlcConfig, ab: Box<dyn Channel>, ba: Box<dyn Channel>) -> RlcBearer {
    RlcBearer::new(cfg, dir(K384, ab), dir(K384, ba)).unwrap()
}

/// What came out: (time, direction, uid, arrived?).
type Out = Vec<(Time, Dir, u64, bool)>;

/// Drive `b` by hand: enqueue `arrivals` (time-sorted) at their instants,
/// wake the bearer at each `poll_timeout`, drain deliveries; stop when idle
/// or past `until`. Returns deliveries and every wake-up instant.
fn drive(b: &mut RlcBearer, arrivals: &[(Time, Dir, Packet)], until: Time) -> (Out, Vec<Time>) {
    let mut out = Vec::new();
    let mut wakes = Vec::new();
    let mut next = 0;
    let mut last = Time::ZERO;
    loop {
        let t_arr = arrivals.get(next).map(|a| a.0);
        let t_wake = b.poll_timeout();
        let t = match (t_arr, t_wake) {
            (None, None) => break,
            (Some(a), Some(w)) => a.min(w),
            (a, w) => a.or(w).unwrap(),
        };
        if t > until {
            break;
        }
        assert!(t >= last, "time went backwards: {t} < {last}");
        last = t;
        if t_arr == Some(t) {
            let (_, d, p) = arrivals[next];
            next += 1;
            assert!(b.enqueue(t, d, p).is_none(), "unexpected drop of {}", p.uid);
            continue;
        }
        wakes.push(t);
        while let Some((d, x)) = b.poll_deliver(t) {
            match x {
                Delivery::Arrived(p) => out.push((t, d, p.uid, true)),
                Delivery::Lost(p, c) => {
                    assert_eq!(c, DropCause::LinkArq);
                    out.push((t, d, p.uid, false));
                }
            }
        }
    }
    (out, wakes)
}

fn slots(log: &SlotLog) -> Vec<(u64, usize)> {
    log.lock()
        .unwrap()
        .iter()
        .map(|&(t, n)| (t.0 / 1_000_000, n))
        .collect()
}

#[test]
fn config_checks() {
    let ok = RlcConfig::seed000();
    assert_eq!(ok.check(), Ok(()));
    assert_eq!(ok.pdus_per_tti(384_000), 12);
    assert_eq!(ok.pdus_per_tti(256_000), 8);
    assert_eq!(ok.pdus_per_tti(128_000), 4);
    assert_eq!(ok.pdus_per_tti(64_000), 2);
    assert_eq!(ok.pdus_per_tti(31_999), 0);
    let bad = |f: fn(&mut RlcConfig), needle: &str| {
        let mut c = RlcConfig::seed000();
        f(&mut c);
        let e = c.check().unwrap_err();
        assert!(e.contains(needle), "{e}");
    };
    bad(|c| c.tx_window = 4096, "tx_window");
    bad(|c| c.max_dat = Some(0), "max_dat");
    bad(|c| c.li_bytes = 3, "li_bytes");
    bad(|c| c.pdu_payload_bytes = 200, "li_bytes must be 2");
    bad(|c| c.poll_window = Some(1.5), "poll_window");
    bad(|c| c.tti = Time::ZERO, "tti");
    bad(|c| c.buffer_limit = Limit::Packets(0), "buffer_limit");
    let mk =
        |d: RlcDirection| RlcBearer::new(RlcConfig::seed000(), d, dir(K384, Box::new(Perfect)));
    let e = mk(dir(16_000, Box::new(Perfect))).unwrap_err();
    assert!(e.contains("ab: rate schedule entry 0"), "{e}");
    let e = mk(dir(K384, Box::new(Perfect))
        .then(ms(2000), K384, None)
        .then(ms(1000), K384, None))
    .unwrap_err();
    assert!(e.contains("entry 2") && e.contains("back in time"), "{e}");
}

/// One 1500-byte SDU on an error-free bearer: 38 PDUs at 12 per TTI go out
/// in the TTIs at 0, 10, 20 and 30 ms (12+12+12+2); the last arrives at
/// 30 + 25 = 55 ms, completing the SDU. It carries the poll (last PDU in the
/// buffer); the STATUS leaves in the uplink TTI at 60 ms and arrives at
/// 85 ms, when the SDU leaves the buffer. Then the bearer is idle: no wake-ups.
#[test]
fn hand_stepped_single_sdu() {
    let (ab, ab_log) = Script::new(&[]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(RlcConfig::seed000(), ab, ba);
    b.occupancy_mut(Dir::AB).enable_trace();
    let (out, wakes) = drive(&mut b, &[(ms(0), Dir::AB, pkt(7, 1500))], ms(10_000));
    assert_eq!(out, vec![(ms(55), Dir::AB, 7, true)]);
    // Wake-ups: the four TTIs, the arrivals of their PDUs (25, 35, 45, 55),
    // the uplink TTI of the STATUS (60) and its arrival (85).
    let w: Vec<u64> = wakes.iter().map(|t| t.0 / 1_000_000).collect();
    assert_eq!(w, vec![0, 10, 20, 25, 30, 35, 45, 55, 60, 85]);
    assert_eq!(b.poll_timeout(), None);
    assert_eq!(slots(&ab_log), vec![(0, 12), (10, 12), (20, 12), (30, 2)]);
    assert_eq!(slots(&ba_log), vec![(60, 1)]);
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        vec![(ms(0), 1, 1500), (ms(85), 0, 0)]
    );
    let c = b.counters(Dir::AB);
    assert_eq!((c.data_pdus_sent, c.polls, c.air_bytes), (38, 1, 38 * 42));
    assert_eq!((c.sdus_delivered, c.delivered_bytes), (1, 1500));
    assert_eq!(b.counters(Dir::BA).status_pdus_sent, 1);
    // The link's packets are IP packets: one SDU sent, 1500 bytes (the 38
    // PDUs and their air bytes are the RLC counters'); the STATUS PDU the
    // other way carries no IP packet.
    let s = b.stats(Dir::AB);
    assert_eq!((s.tx_packets, s.tx_bytes), (1, 1500));
    assert_eq!((s.rx_packets, s.rx_bytes), (1, 1500));
    assert_eq!(b.stats(Dir::BA).tx_bytes, 0);
    assert_eq!(b.counters(Dir::BA).air_bytes, 42);
    assert_eq!(b.in_transit(), 0);
    assert_eq!(b.occupancy(Dir::AB).stats().departures, 1);
}

/// Concatenation: a 50-byte SDU takes 51 stream bytes. Two queued together
/// share a PDU (102 bytes → 3 PDUs, both delivered at 25 ms); the second
/// arriving after the first TTI starts a new PDU (2 + 2 PDUs, 25 and 35 ms).
/// In the second case both last PDUs poll (0 and 10 ms). The STATUS for the
/// first poll leaves at 30 (LSN 2); the one for the second is held by the
/// prohibit timer until 90, so Timer_Poll (restarted at 10) fires at 70 and
/// SN 3 is resent with a poll: 5 AMD PDUs in all.
#[test]
fn concatenation_and_padding() {
    let mut b = bearer(RlcConfig::seed000(), Box::new(Perfect), Box::new(Perfect));
    let (out, _) = drive(
        &mut b,
        &[(ms(0), Dir::AB, pkt(1, 50)), (ms(0), Dir::AB, pkt(2, 50))],
        ms(10_000),
    );
    assert_eq!(
        out,
        vec![(ms(25), Dir::AB, 1, true), (ms(25), Dir::AB, 2, true)]
    );
    assert_eq!(b.counters(Dir::AB).data_pdus_sent, 3);

    let mut b = bearer(RlcConfig::seed000(), Box::new(Perfect), Box::new(Perfect));
    let (out, _) = drive(
        &mut b,
        &[(ms(0), Dir::AB, pkt(1, 50)), (ms(5), Dir::AB, pkt(2, 50))],
        ms(10_000),
    );
    assert_eq!(
        out,
        vec![(ms(25), Dir::AB, 1, true), (ms(35), Dir::AB, 2, true)]
    );
    let c = b.counters(Dir::AB);
    assert_eq!((c.data_pdus_sent, c.data_pdus_retransmitted), (5, 1));
    assert_eq!(c.poll_timer_expiries, 1);
}

/// Full buffer at 384 kbit/s: 40 SDUs of 1500 bytes = 40·1501 = 60 040
/// stream bytes = 1501 PDUs, sent 12 per TTI without a gap (the window of
/// 1024 never closes). SDU k ends in PDU ⌈1501(k+1)/40⌉ − 1, sent in TTI
/// ⌊that/12⌋, and is delivered 25 ms later; the last at 1250 + 25 ms.
///
/// Polling: the buffer never runs dry before the end, so the first poll is
/// the window poll on PDU 511 (VT(S)+1−VT(A) = 512 = 50 % of 1024), sent in
/// the TTI at 420 ms; its STATUS leaves in the uplink TTI at 450. From then
/// on Timer_Poll (60 ms) keeps expiring while STATUS PDUs are spaced by the
/// 60 ms prohibit timer: one every 60 ms, 450 … 1350 ms. The final poll (PDU
/// 1500, at 1250) arrives at 1275 but its STATUS may not leave before 1290
/// and arrives at 1315, after Timer_Poll fired at 1310: PDU 1500 is resent
/// once with a poll (answered at 1350). That is the standard's behaviour
/// with Timer_Poll = Timer_Status_Prohibit.
#[test]
fn full_buffer_runs_at_twelve_pdus_per_tti() {
    let (ab, ab_log) = Script::new(&[]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(RlcConfig::seed000(), ab, ba);
    let arrivals: Vec<_> = (0..40).map(|k| (ms(0), Dir::AB, pkt(k, 1500))).collect();
    let (out, _) = drive(&mut b, &arrivals, ms(100_000));
    assert_eq!(out.len(), 40);
    for (k, &(t, _, uid, ok)) in out.iter().enumerate() {
        let k = k as u64;
        let last_pdu = (1501 * (k + 1)).div_ceil(40) - 1;
        assert_eq!((uid, ok), (k, true));
        assert_eq!(t, ms(10 * (last_pdu / 12) + 25), "SDU {k}");
    }
    assert_eq!(out[39].0, ms(1275));
    let s = slots(&ab_log);
    assert_eq!(s.len(), 127);
    for (i, &(t, n)) in s[..126].iter().enumerate() {
        assert_eq!(t, 10 * i as u64);
        assert_eq!(n, if i < 125 { 12 } else { 1 });
    }
    assert_eq!(s[126], (1310, 1));
    let status: Vec<(u64, usize)> = (0..16).map(|k| (450 + 60 * k, 1)).collect();
    assert_eq!(slots(&ba_log), status);
    let c = b.counters(Dir::AB);
    assert_eq!((c.data_pdus_sent, c.data_pdus_retransmitted), (1502, 1));
    // Throughput while busy: 12 PDUs × 40 bytes per 10 ms = 384 kbit/s.
    assert_eq!(12 * 40 * 8 * 100, K384);
    assert_eq!(b.poll_timeout(), None);
}

/// SN 1 (second unit of the TTI at 0) is lost. SN 2 arriving at 25 ms shows
/// the gap: STATUS (LSN 12, missing {1}) in the uplink TTI at 30, at the
/// sender at 55; SN 1 is resent at 60 (polling: last retransmission) and
/// completes the SDU at 85. The next STATUS may not leave before 30 + 60 =
/// 90 ms (status prohibit); at 115 the SDU leaves the buffer.
#[test]
fn nack_and_retransmission() {
    let (ab, ab_log) = Script::new(&[(0, 1)]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(RlcConfig::seed000(), ab, ba);
    b.occupancy_mut(Dir::AB).enable_trace();
    let (out, _) = drive(&mut b, &[(ms(0), Dir::AB, pkt(1, 1500))], ms(10_000));
    assert_eq!(out, vec![(ms(85), Dir::AB, 1, true)]);
    assert_eq!(
        slots(&ab_log),
        vec![(0, 12), (10, 12), (20, 12), (30, 2), (60, 1)]
    );
    assert_eq!(slots(&ba_log), vec![(30, 1), (90, 1)]);
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        vec![(ms(0), 1, 1500), (ms(115), 0, 0)]
    );
    let c = b.counters(Dir::AB);
    assert_eq!(
        (c.data_pdus_retransmitted, c.pdus_lost_on_air, c.polls),
        (1, 1, 2)
    );
    assert_eq!(b.poll_timeout(), None);
}

/// Two losses, SN 1 and SN 13, detected at 25 and 35 ms. Without the
/// prohibit timer the second gap would be reported at 40 ms; with it the
/// STATUS PDUs leave at 30, 90 and 150 ms (exactly 60 ms apart). SN 13 is
/// NACKed at 115, resent at 120 and completes the SDU at 145.
#[test]
fn status_prohibit_spaces_status_pdus() {
    let (ab, ab_log) = Script::new(&[(0, 1), (10, 1)]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(RlcConfig::seed000(), ab, ba);
    let (out, _) = drive(&mut b, &[(ms(0), Dir::AB, pkt(1, 1500))], ms(10_000));
    assert_eq!(out, vec![(ms(145), Dir::AB, 1, true)]);
    assert_eq!(slots(&ba_log), vec![(30, 1), (90, 1), (150, 1)]);
    assert_eq!(
        slots(&ab_log),
        vec![(0, 12), (10, 12), (20, 12), (30, 2), (60, 1), (120, 1)]
    );
    assert_eq!(b.counters(Dir::BA).status_pdus_sent, 3);
    assert_eq!(b.buffered_sdus(Dir::AB), 0);

    // Without the prohibit timer the second gap is reported at once (40 ms).
    let mut cfg = RlcConfig::seed000();
    cfg.status_prohibit = None;
    let (ab, _) = Script::new(&[(0, 1), (10, 1)]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(cfg, ab, ba);
    drive(&mut b, &[(ms(0), Dir::AB, pkt(1, 1500))], ms(10_000));
    assert_eq!(slots(&ba_log)[..2], [(30, 1), (40, 1)]);
}

/// Stale NACK (the Timer_EPC guard). Status prohibit off; SN 1 is lost at
/// 0 ms. The gap (SN 2 at 25 ms) triggers a STATUS at 30 (missing {1}, at
/// the sender at 55); the last PDU's poll (SN 37, sent at 30, at 55)
/// triggers another at 60, built before the retransmission of SN 1 (sent at
/// 60) reaches the receiver at 85. It arrives at 85 < 60 + 2·25: the NACK is
/// stale and ignored, so SN 1 is sent exactly twice (0, 60). Without the
/// guard it is sent a third time at 90. The retransmission's poll (at 60) is
/// answered by the STATUS at 90 (the one at 60 does not answer it), which
/// acknowledges everything at 115.
#[test]
fn stale_nack_is_ignored() {
    let run = |epc: Epc| {
        let mut cfg = RlcConfig::seed000();
        cfg.status_prohibit = None;
        cfg.epc = epc;
        let (ab, ab_log) = Script::new(&[(0, 1)]);
        let (ba, ba_log) = Script::new(&[]);
        let mut b = bearer(cfg, ab, ba);
        b.occupancy_mut(Dir::AB).enable_trace();
        let (out, _) = drive(&mut b, &[(ms(0), Dir::AB, pkt(1, 1500))], ms(10_000));
        assert_eq!(b.poll_timeout(), None);
        (b, out, slots(&ab_log), slots(&ba_log))
    };
    let (mut b, out, ab, ba) = run(Epc::RoundTrip);
    assert_eq!(out, vec![(ms(85), Dir::AB, 1, true)]);
    assert_eq!(ab, vec![(0, 12), (10, 12), (20, 12), (30, 2), (60, 1)]);
    assert_eq!(ba, vec![(30, 1), (60, 1), (90, 1)]);
    let c = b.counters(Dir::AB);
    assert_eq!((c.data_pdus_sent, c.data_pdus_retransmitted), (39, 1));
    assert_eq!(c.poll_timer_expiries, 0);
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        vec![(ms(0), 1, 1500), (ms(115), 0, 0)]
    );
    // Without the guard the stale NACK resends SN 1 at 90.
    let (b, out, ab, _) = run(Epc::Off);
    assert_eq!(out, vec![(ms(85), Dir::AB, 1, true)]);
    assert_eq!(
        ab,
        vec![(0, 12), (10, 12), (20, 12), (30, 2), (60, 1), (90, 1)]
    );
    assert_eq!(b.counters(Dir::AB).data_pdus_retransmitted, 2);
    // A fixed guard of 2·25 + 10 = 60 ms (a receiver-side Timer_EPC value)
    // is too long for the sender-side rule: the fresh NACK arriving at 55
    // (STATUS built at 30, after SN 1's loss at 25) is ignored too; the
    // STATUS at 60 (arriving 85 ≥ 0 + 60) triggers the resend at 90,
    // delivery at 115. Still sent exactly twice.
    let (b, out, ab, _) = run(Epc::Timer(ms(60)));
    assert_eq!(out, vec![(ms(115), Dir::AB, 1, true)]);
    assert_eq!(ab, vec![(0, 12), (10, 12), (20, 12), (30, 2), (90, 1)]);
    assert_eq!(b.counters(Dir::AB).data_pdus_retransmitted, 1);
}

/// Deterministic fades: every unit sent in the last 10 TTIs of each 100
/// (`(t / 10 ms) mod 100 ≥ 90`) is lost, on both channels (10 % of TTIs).
#[derive(Debug)]
struct Fades {
    bad: bool,
}

impl Channel for Fades {
    fn advance(&mut self, now: Time) {
        self.bad = (now.0 / 10_000_000) % 100 >= 90;
    }
    fn unit_error(&mut self) -> bool {
        self.bad
    }
    fn is_bad(&self) -> bool {
        self.bad
    }
    fn mean_error_rate(&self) -> f64 {
        0.1
    }
}

/// Full buffer at 384 kbit/s through 100 ms fades every second, MaxDAT 10.
/// A fade wipes out 120 PDUs (and the STATUS PDUs of the uplink); after it
/// the NACKed PDUs take 10 TTIs to resend, longer than the 60 ms between
/// STATUS PDUs, so without the guard a STATUS re-NACKs PDUs whose
/// retransmission is still in flight, inflating their transmission counts.
///
/// With the guard a PDU is resent only on a NACK built after its latest
/// transmission reached the receiver (so that transmission was lost) or by a
/// poll-only retransmission (at most one per Timer_Poll expiry). Hence
/// data PDUs sent ≤ distinct PDUs + data PDUs lost + Timer_Poll expiries;
/// losses are the data PDUs sent in fades, ≤ 12 per fade TTI, and every
/// loss is followed by at least 90 clean TTIs, so no PDU is lost twice in a
/// row and none comes near 10 transmissions. Over 20 s: 20 fades · 120 =
/// 2400 losses at most, against ≥ 20 000 PDUs delivered: sent per delivered
/// PDU ≤ 1 + 2400/20 000 + expiries/20 000 < 1.15 (measured: 1.11; 1.19
/// without the guard, which here does not yet reach MaxDAT).
#[test]
fn bursty_fades_do_not_exhaust_max_dat() {
    let run = |epc: Epc| {
        let mut cfg = RlcConfig::seed000();
        cfg.epc = epc;
        cfg.buffer_limit = Limit::Packets(1000);
        let mut b = bearer(
            cfg,
            Box::new(Fades { bad: false }),
            Box::new(Fades { bad: false }),
        );
        // 800 SDUs of 1500 bytes at time 0: a full buffer for ~32 s.
        let arrivals: Vec<_> = (0..800).map(|k| (ms(0), Dir::AB, pkt(k, 1500))).collect();
        let (out, _) = drive(&mut b, &arrivals, ms(20_000));
        let lost = out.iter().filter(|o| !o.3).count();
        let delivered = out.iter().filter(|o| o.3).count() as u64;
        (b, delivered, lost)
    };
    let (b, delivered, lost) = run(Epc::RoundTrip);
    let c = b.counters(Dir::AB);
    assert_eq!((lost, c.sdus_discarded), (0, 0));
    assert_eq!(c.sdus_delivered, delivered);
    // 20 fades (at 0.9, 1.9, … 19.9 s) of 10 TTIs × 12 PDUs.
    assert!(c.pdus_lost_on_air <= 2400, "{c:?}");
    // Every retransmission answers a real loss or a Timer_Poll expiry.
    assert!(
        c.data_pdus_retransmitted <= c.pdus_lost_on_air + c.poll_timer_expiries,
        "{c:?}"
    );
    // PDUs acknowledged: VT(A).
    let distinct = b.h[0].tx.vt_a;
    assert!(
        delivered >= 500 && distinct >= 20_000,
        "{delivered} {distinct}"
    );
    let per_pdu = c.data_pdus_sent as f64 / distinct as f64;
    assert!(per_pdu < 1.15, "{per_pdu} transmissions per PDU");
    // Without the guard stale NACKs inflate the retransmissions (here 3648
    // retransmissions for 2400 losses and 141 expiries, 1.19 per PDU).
    let (b, _, _) = run(Epc::Off);
    let c = b.counters(Dir::AB);
    assert!(c.data_pdus_retransmitted > c.pdus_lost_on_air + c.poll_timer_expiries);
    assert!(c.data_pdus_sent as f64 / b.h[0].tx.vt_a as f64 > 1.15);
}

/// The poll timer recovers a lost poll and a lost STATUS.
#[test]
fn poll_timer_recovers_lost_poll_and_status() {
    // A 79-byte SDU fills exactly two PDUs (79 + 1 = 80 bytes); SN 1 carries
    // the poll. (a) The STATUS sent at 30 ms is lost. The poll timer (started
    // at 0) expires at 60: SN 1 is resent with the poll, arrives at 85, and
    // the STATUS leaves at 90 (prohibit since 30) and arrives at 115.
    let (ba, ba_log) = Script::new(&[(30, 0)]);
    let mut b = bearer(RlcConfig::seed000(), Box::new(Perfect), ba);
    b.occupancy_mut(Dir::AB).enable_trace();
    let (out, _) = drive(&mut b, &[(ms(0), Dir::AB, pkt(1, 79))], ms(10_000));
    assert_eq!(out, vec![(ms(25), Dir::AB, 1, true)]);
    assert_eq!(slots(&ba_log), vec![(30, 1), (90, 1)]);
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        vec![(ms(0), 1, 79), (ms(115), 0, 0)]
    );
    let c = b.counters(Dir::AB);
    assert_eq!(
        (c.polls, c.poll_timer_expiries, c.data_pdus_retransmitted),
        (2, 1, 1)
    );
    assert_eq!(b.counters(Dir::BA).pdus_lost_on_air, 1);

    // (b) The poll itself (SN 1) is lost: nothing reaches the sender until
    // the timer fires at 60; the resent SN 1 completes the SDU at 85.
    let (ab, _) = Script::new(&[(0, 1)]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(RlcConfig::seed000(), ab, ba);
    let (out, _) = drive(&mut b, &[(ms(0), Dir::AB, pkt(1, 79))], ms(10_000));
    assert_eq!(out, vec![(ms(85), Dir::AB, 1, true)]);
    assert_eq!(slots(&ba_log), vec![(90, 1)]);
    assert_eq!(b.poll_timeout(), None);
}

fn three_small_sdus() -> Vec<(Time, Dir, Packet)> {
    // 79-byte SDUs: SDU k is exactly PDUs 2k and 2k+1.
    (0..3).map(|k| (ms(0), Dir::AB, pkt(k, 79))).collect()
}

/// What [`three_small_sdus`] gives when SDU 0 is discarded and SDUs 1, 2 are
/// delivered behind it at `t`.
fn discard_first_of_three(t: Time) -> Out {
    vec![
        (t, Dir::AB, 0, false),
        (t, Dir::AB, 1, true),
        (t, Dir::AB, 2, true),
    ]
}

/// The buffer of [`three_small_sdus`]: SDUs 2 and 1 acknowledged at `acked`,
/// SDU 0 discarded at `discarded`.
fn three_sdus_trace(acked: Time, discarded: Time) -> Vec<OccupancySample> {
    vec![
        (ms(0), 1, 79),
        (ms(0), 2, 158),
        (ms(0), 3, 237),
        (acked, 2, 158),
        (acked, 1, 79),
        (discarded, 0, 0),
    ]
}

/// MaxDAT = 2, SN 1 (SDU 0) lost at 0 and again at 60 ms. The STATUS at 30
/// (arriving 55) NACKs it and acknowledges SDUs 1 and 2; the resend at 60
/// polls; the poll timer fires at 120, when SN 1 has been sent twice: SDU 0
/// is discarded (SN_MRW = 2), the MRW leaves at 130 and arrives at 155, where
/// the receiver reports SDU 0 lost and delivers SDUs 1 and 2, in order.
#[test]
fn max_dat_discards_and_moves_the_window() {
    let mut cfg = RlcConfig::seed000();
    cfg.max_dat = Some(2);
    let (ab, ab_log) = Script::new(&[(0, 1), (60, 0)]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(cfg, ab, ba);
    b.occupancy_mut(Dir::AB).enable_trace();
    let (out, _) = drive(&mut b, &three_small_sdus(), ms(10_000));
    assert_eq!(out, discard_first_of_three(ms(155)));
    assert_eq!(slots(&ab_log), vec![(0, 6), (60, 1), (120, 0), (130, 1)]);
    // STATUS at 30, MRW_ACK at 160.
    assert_eq!(slots(&ba_log), vec![(30, 1), (160, 1)]);
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        three_sdus_trace(ms(55), ms(120))
    );
    let c = b.counters(Dir::AB).clone();
    assert_eq!((c.sdus_discarded, c.sdus_lost, c.mrw_pdus_sent), (1, 1, 1));
    // P_LL and the ARQ summary: SDUs 1, 2 acknowledged at 55 ms, SDU 0
    // discarded at 120 ms; MaxDAT 2 all along.
    assert_eq!(c.sdus_acked, 2);
    assert_eq!(b.sdu_loss_estimate(Dir::AB), Some(1.0 / 3.0));
    let a = b.arq_stats(Dir::AB, ms(10_000)).unwrap();
    assert_eq!(a.residual_sdu_loss(), Some(1.0 / 3.0));
    assert_eq!(
        (a.max_dat, a.max_dat_mean, a.max_dat_changes),
        (Some(2), Some(2.0), 0)
    );
    assert_eq!(a.max_dat_unlimited_fraction, 0.0);
    assert_eq!(b.sdu_loss_estimate(Dir::BA), None);
    assert_eq!(b.occupancy(Dir::AB).stats().drops_link_arq, 1);
    assert_eq!(b.stats(Dir::AB).lost, 1);
    assert_eq!(b.in_transit(), 0);
    assert_eq!(b.poll_timeout(), None);
}

/// Ideal feedback (seed 001's model), 5 ms delay, MaxDAT = 2: SN 1 (SDU 0)
/// is lost at 0 and, resent in the very next TTI, again at 10 ms. The fates
/// of the TTI at 0 are known at 10 (SNs 0, 2..5 acknowledged: SDUs 1, 2 leave
/// the buffer), those of the TTI at 10 at 20, when SN 1 has been sent twice:
/// SDU 0 is discarded and the receiver, told at once, reports it lost and
/// delivers SDUs 1, 2 (arrived at 5 ms) behind it. No poll, STATUS or MRW PDU.
#[test]
fn ideal_feedback_retransmits_in_the_next_tti() {
    let mut cfg = RlcConfig::seed000();
    cfg.max_dat = Some(2);
    cfg.feedback = Feedback::Ideal;
    cfg.one_way_delay = ms(5);
    cfg.poll_timer = None;
    cfg.poll_window = None;
    cfg.poll_last_pdu = false;
    cfg.poll_last_retx = false;
    cfg.missing_pdu_detection = false;
    let (ab, ab_log) = Script::new(&[(0, 1), (10, 0)]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(cfg.clone(), ab, ba);
    b.occupancy_mut(Dir::AB).enable_trace();
    let (out, _) = drive(&mut b, &three_small_sdus(), ms(10_000));
    assert_eq!(out, discard_first_of_three(ms(20)));
    assert_eq!(slots(&ab_log), vec![(0, 6), (10, 1), (20, 0)]);
    assert!(slots(&ba_log).is_empty());
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        three_sdus_trace(ms(10), ms(20))
    );
    let c = b.counters(Dir::AB).clone();
    assert_eq!((c.data_pdus_sent, c.polls, c.mrw_pdus_sent), (7, 0, 0));
    assert_eq!((c.sdus_discarded, c.sdus_lost, c.sdus_acked), (1, 1, 2));
    assert_eq!(b.counters(Dir::BA).status_pdus_sent, 0);
    assert_eq!(b.in_transit(), 0);
    assert_eq!(b.poll_timeout(), None);

    // A 1500-byte SDU without loss: 38 PDUs at 0..30 ms, delivered at 35,
    // the last acknowledged at 40; nothing on the uplink.
    let (ab, _) = Script::new(&[]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(cfg.clone(), ab, ba);
    b.occupancy_mut(Dir::AB).enable_trace();
    let (out, _) = drive(&mut b, &[(ms(0), Dir::AB, pkt(7, 1500))], ms(10_000));
    assert_eq!(out, vec![(ms(35), Dir::AB, 7, true)]);
    assert!(slots(&ba_log).is_empty());
    assert_eq!(
        b.occupancy_mut(Dir::AB).take_trace(),
        vec![(ms(0), 1, 1500), (ms(40), 0, 0)]
    );

    // The PDU must have arrived when its fate is reported.
    cfg.one_way_delay = ms(11);
    let e = cfg.check().unwrap_err();
    assert!(e.contains("feedback = \"ideal\" does not allow"), "{e}");
}

/// `set_max_dat` at run time. With MaxDAT lowered to 1 the first NACK (at
/// 55 ms) discards SDU 0; the MRW goes out at 60 and arrives at 85. With
/// MaxDAT raised to unlimited, the timer-driven resend at 120 gets through
/// and everything is delivered at 145.
#[test]
fn set_max_dat_at_run_time() {
    let mut cfg = RlcConfig::seed000();
    cfg.max_dat = Some(2);
    let (ab, _) = Script::new(&[(0, 1)]);
    let mut b = bearer(cfg.clone(), ab, Box::new(Perfect));
    b.set_max_dat(Dir::AB, Some(1));
    assert_eq!(b.max_dat(Dir::AB), Some(1));
    let (out, _) = drive(&mut b, &three_small_sdus(), ms(10_000));
    assert_eq!(
        out,
        vec![
            (ms(85), Dir::AB, 0, false),
            (ms(85), Dir::AB, 1, true),
            (ms(85), Dir::AB, 2, true)
        ]
    );

    let (ab, _) = Script::new(&[(0, 1), (60, 0)]);
    let mut b = bearer(cfg, ab, Box::new(Perfect));
    b.set_max_dat(Dir::AB, None);
    let (out, _) = drive(&mut b, &three_small_sdus(), ms(10_000));
    let expect: Out = (0..3).map(|k| (ms(145), Dir::AB, k, true)).collect();
    assert_eq!(out, expect);
    assert_eq!(b.counters(Dir::AB).data_pdus_retransmitted, 2);
    let a = b.arq_stats(Dir::AB, ms(200)).unwrap();
    assert_eq!(
        (a.max_dat, a.max_dat_mean, a.max_dat_changes),
        (None, None, 1)
    );
    assert_eq!(a.max_dat_unlimited_fraction, 1.0);
}

/// Adaptive MaxDAT at the bearer: a 1000-byte SDU (n_pdu = ⌈1001/40⌉ = 26)
/// on the paper's channel (p_G 0.01, p_B 0.9, g = b = 0.9): F(1) = 0.614978,
/// λ₁ = 0.810112. P_TCP = 0.05, no SDU completed (P_LL = 0), α = 0.1:
/// target 0.005, F̂(23) = 0.005982 > 0.005 ≥ F̂(24) = 0.004846 → 24. The time
/// average follows: unlimited for 1 s, 24 for 1 s, 13 for 2 s.
#[test]
fn adaptive_max_dat_follows_the_model() {
    let mut cfg = RlcConfig::seed000();
    cfg.max_dat = None;
    cfg.adaptive_alpha = Some(0.1);
    let ge = || -> Box<dyn Channel> {
        Box::new(crate::channel::GilbertElliott::new(
            ms(10),
            0.01,
            0.9,
            0.9,
            0.9,
            Rng::stream(1, "ge"),
        ))
    };
    let mut b = bearer(cfg.clone(), ge(), Box::new(Perfect));
    // No SDU yet: n_pdu unknown, nothing changes.
    b.on_e2e_loss_rate(ms(500), Dir::AB, 0.05);
    assert_eq!(b.max_dat(Dir::AB), None);
    assert_eq!(b.enqueue(ms(500), Dir::AB, pkt(0, 1000)), None);
    assert_eq!(b.pdus_per_sdu(1000), 26);
    b.on_e2e_loss_rate(ms(1000), Dir::AB, 0.05);
    assert_eq!(b.max_dat(Dir::AB), Some(24));
    let a = b.arq_stats(Dir::AB, ms(1000)).unwrap();
    assert_eq!((a.p_tcp, a.max_dat_changes), (Some(0.05), 1));
    assert!((a.target.unwrap() - 0.005).abs() < 1e-15);
    // α·P_W = 0.1·0.5: F̂(12) = 0.060654 > 0.05 ≥ F̂(13) = 0.049136.
    b.on_e2e_loss_rate(ms(2000), Dir::AB, 0.5);
    let m = b.max_dat(Dir::AB).unwrap();
    assert_eq!(m, 13);
    let model = crate::analytic::arq::ArqModel::new(0.01, 0.9, 0.9, 0.9, 26).unwrap();
    assert_eq!(m, model.limit_for_target(0.05));
    assert!(model.residual_loss_approx(m) <= 0.05 && model.residual_loss_approx(m - 1) > 0.05);
    let a = b.arq_stats(Dir::AB, ms(4000)).unwrap();
    let want = (24.0 * 1.0 + f64::from(m) * 2.0) / 3.0;
    assert!((a.max_dat_mean.unwrap() - want).abs() < 1e-9, "{a:?}");
    assert!((a.max_dat_unlimited_fraction - 0.25).abs() < 1e-12);
    // The direction without a Gilbert–Elliott channel ignores the input.
    b.on_e2e_loss_rate(ms(4000), Dir::BA, 0.05);
    assert_eq!(b.max_dat(Dir::BA), None);
    assert_eq!(b.arq_stats(Dir::BA, ms(4000)).unwrap().p_tcp, None);
    // Without adaptive_alpha the input is ignored too.
    let mut b = bearer(RlcConfig::seed000(), ge(), Box::new(Perfect));
    b.enqueue(ms(0), Dir::AB, pkt(0, 1000));
    b.on_e2e_loss_rate(ms(10), Dir::AB, 0.05);
    assert_eq!(b.max_dat(Dir::AB), Some(10));
}

/// Without in-order delivery, SDUs 1 and 2 are handed up at 25 ms, before
/// SDU 0 whose lost PDU is resent at 60 and arrives at 85.
#[test]
fn out_of_order_delivery() {
    let mut cfg = RlcConfig::seed000();
    cfg.in_order_delivery = false;
    let (ab, _) = Script::new(&[(0, 1)]);
    let mut b = bearer(cfg, ab, Box::new(Perfect));
    let (out, _) = drive(&mut b, &three_small_sdus(), ms(10_000));
    assert_eq!(
        out,
        vec![
            (ms(25), Dir::AB, 1, true),
            (ms(25), Dir::AB, 2, true),
            (ms(85), Dir::AB, 0, true)
        ]
    );
}

/// Buffer limit in SDUs: the third arrival to a 2-SDU buffer overflows.
#[test]
fn buffer_limit_drops_the_arrival() {
    let mut cfg = RlcConfig::seed000();
    cfg.buffer_limit = Limit::Packets(2);
    let mut b = bearer(cfg, Box::new(Perfect), Box::new(Perfect));
    assert!(b.enqueue(ms(0), Dir::AB, pkt(0, 1500)).is_none());
    assert!(b.enqueue(ms(0), Dir::AB, pkt(1, 1500)).is_none());
    let (p, c) = b.enqueue(ms(0), Dir::AB, pkt(2, 1500)).unwrap();
    assert_eq!((p.uid, c), (2, DropCause::Overflow));
    assert_eq!(b.in_transit(), 2);
    // Transmission does not free room: SDUs stay until acknowledged (85 ms
    // for SDU 0, whose last PDU goes out at 30 ms with SDU 1's first).
    let (p, _) = b.enqueue(ms(80), Dir::AB, pkt(3, 1500)).unwrap();
    assert_eq!(p.uid, 3);
    let st = b.occupancy(Dir::AB).stats();
    assert_eq!((st.arrivals, st.drops_overflow), (4, 2));
    // Byte limit: 3000 bytes hold two 1500-byte SDUs, not a third of 40.
    let mut cfg = RlcConfig::seed000();
    cfg.buffer_limit = Limit::Bytes(3000);
    let mut b = bearer(cfg, Box::new(Perfect), Box::new(Perfect));
    assert!(b.enqueue(ms(0), Dir::AB, pkt(0, 1500)).is_none());
    assert!(b.enqueue(ms(0), Dir::AB, pkt(1, 1500)).is_none());
    assert!(b.enqueue(ms(0), Dir::AB, pkt(2, 40)).is_some());
}

/// `BufferCounts::Unsent`: an SDU stops counting once its last PDU has been
/// sent. Two 1500-byte SDUs (76 PDUs) are fully sent by the TTI at 60 ms;
/// SDU 0 is acknowledged at 85 ms, SDU 1 later. At 70 ms the default 2-SDU
/// buffer is still full (nothing acknowledged) and drops a third SDU; with
/// `Unsent` it is empty by count and accepts it, while both sent SDUs stay
/// in memory for retransmission. Before they are sent both modes agree.
#[test]
fn buffer_counts_unsent_frees_room_on_first_transmission() {
    let run = |counts: BufferCounts| {
        let mut cfg = RlcConfig::seed000();
        cfg.buffer_limit = Limit::Packets(2);
        cfg.buffer_counts = counts;
        let mut b = bearer(cfg, Box::new(Perfect), Box::new(Perfect));
        assert!(b.enqueue(ms(0), Dir::AB, pkt(0, 1500)).is_none());
        assert!(b.enqueue(ms(0), Dir::AB, pkt(1, 1500)).is_none());
        // Not yet sent: full in both modes.
        let (p, c) = b.enqueue(ms(0), Dir::AB, pkt(2, 1500)).unwrap();
        assert_eq!((p.uid, c), (2, DropCause::Overflow));
        let third = b.enqueue(ms(70), Dir::AB, pkt(3, 1500));
        (b, third)
    };
    let (b, third) = run(BufferCounts::Unacknowledged);
    assert_eq!(
        third.map(|(p, c)| (p.uid, c)),
        Some((3, DropCause::Overflow))
    );
    assert_eq!(b.buffered_sdus(Dir::AB), 2);

    let (mut b, third) = run(BufferCounts::Unsent);
    assert!(third.is_none());
    assert_eq!(b.buffered_sdus(Dir::AB), 1);
    assert_eq!(b.occupancy(Dir::AB).stats().departures, 2);
    // Everything is still delivered, in order.
    let (out, _) = drive(&mut b, &[], ms(1000));
    let got: Vec<u64> = out.iter().filter(|o| o.3).map(|o| o.2).collect();
    assert_eq!(got, vec![0, 1, 3]);
    assert_eq!(b.buffered_sdus(Dir::AB), 0);
    assert_eq!(b.occupancy(Dir::AB).stats().departures, 3);
}

/// A front-dropping AQM discards the first SDU none of whose PDUs has been
/// sent: SDU 0 is being transmitted (TTI at 0), so the arrival of SDU 2 at
/// 5 ms discards SDU 1. When every buffered SDU has started, the arrival
/// itself is discarded.
#[test]
fn drop_front_skips_sdus_in_transmission() {
    let aqm = Threshold {
        n: 2,
        verdict: Verdict::DropFront(DropCause::AqmEarly),
        name: "front",
    };
    let ab = RlcDirection::new(K384, Box::new(aqm), Box::new(Perfect), Rng::stream(1, "a"));
    let mut b = RlcBearer::new(RlcConfig::seed000(), ab, dir(K384, Box::new(Perfect))).unwrap();
    assert_eq!(b.queue_kind(Dir::AB), "front");
    assert!(b.enqueue(ms(0), Dir::AB, pkt(0, 1500)).is_none());
    assert_eq!(b.poll_timeout(), Some(ms(0)));
    assert!(b.poll_deliver(ms(0)).is_none()); // TTI 0: 12 PDUs of SDU 0
    assert!(b.enqueue(ms(5), Dir::AB, pkt(1, 100)).is_none());
    let (p, c) = b.enqueue(ms(5), Dir::AB, pkt(2, 100)).unwrap();
    assert_eq!((p.uid, c), (1, DropCause::AqmEarly));
    assert_eq!(b.buffered_sdus(Dir::AB), 2);
    let (out, _) = drive(&mut b, &[], ms(10_000));
    let uids: Vec<_> = out.iter().map(|o| (o.2, o.3)).collect();
    assert_eq!(uids, vec![(0, true), (2, true)]);
    assert_eq!(b.occupancy(Dir::AB).stats().drops_aqm_early, 1);
    assert_eq!(b.in_transit(), 0);

    // Only started SDUs are buffered: the arrival itself goes.
    let aqm = Threshold {
        n: 1,
        verdict: Verdict::DropFront(DropCause::AqmEarly),
        name: "front",
    };
    let ab = RlcDirection::new(K384, Box::new(aqm), Box::new(Perfect), Rng::stream(1, "a"));
    let mut b = RlcBearer::new(RlcConfig::seed000(), ab, dir(K384, Box::new(Perfect))).unwrap();
    assert!(b.enqueue(ms(0), Dir::AB, pkt(0, 1500)).is_none());
    assert!(b.poll_deliver(ms(0)).is_none());
    let (p, _) = b.enqueue(ms(5), Dir::AB, pkt(1, 100)).unwrap();
    assert_eq!(p.uid, 1);
    assert_eq!(b.in_transit(), 1);
}

/// A rate change ordered at 1 s (384 → 128 kbit/s) applies from the TTI at
/// 1 s; one ordered at 1.005 s from the TTI at 1.01 s. The scheduled AQM
/// replacement takes over at the same TTI.
#[test]
fn rate_change_and_aqm_replacement() {
    for (at, first_slow) in [(1000u64, 1000u64), (1005, 1010)] {
        let refuse = Threshold {
            n: 0,
            verdict: Verdict::Drop(DropCause::AqmEarly),
            name: "refuse",
        };
        let (ch, log) = Script::new(&[]);
        let ab = RlcDirection::new(K384, Box::new(DropTail), ch, Rng::stream(1, "a")).then(
            ms(at),
            128_000,
            Some(Box::new(refuse)),
        );
        let mut cfg = RlcConfig::seed000();
        cfg.buffer_limit = Limit::Packets(1000);
        let mut b = RlcBearer::new(cfg, ab, dir(K384, Box::new(Perfect))).unwrap();
        for k in 0..60 {
            assert!(b.enqueue(ms(0), Dir::AB, pkt(k, 1500)).is_none());
        }
        drive(&mut b, &[], ms(first_slow - 3));
        assert_eq!(b.rate_bps(Dir::AB), K384);
        assert_eq!(b.queue_kind(Dir::AB), "droptail");
        assert!(b
            .enqueue(ms(first_slow - 3), Dir::AB, pkt(100, 1500))
            .is_none());
        drive(&mut b, &[], ms(first_slow + 2));
        assert_eq!(b.rate_bps(Dir::AB), 128_000);
        assert_eq!(b.pdus_per_tti(Dir::AB), 4);
        assert_eq!(b.queue_kind(Dir::AB), "refuse");
        let (p, c) = b
            .enqueue(ms(first_slow + 2), Dir::AB, pkt(101, 1500))
            .unwrap();
        assert_eq!((p.uid, c), (101, DropCause::AqmEarly));
        let s = slots(&log);
        let n_at = |t: u64| s.iter().find(|x| x.0 == t).map(|x| x.1);
        assert_eq!(n_at(first_slow - 10), Some(12), "at {at}");
        assert_eq!(n_at(first_slow), Some(4), "at {at}");
    }
}

/// Both directions carry data and STATUS at once; each direction's STATUS
/// PDUs take a slot ahead of the data of the direction they ride.
#[test]
fn duplex_status_rides_ahead_of_reverse_data() {
    let (ab, ab_log) = Script::new(&[]);
    let (ba, ba_log) = Script::new(&[]);
    let mut b = bearer(RlcConfig::seed000(), ab, ba);
    let mut arrivals = Vec::new();
    for k in 0..10 {
        arrivals.push((ms(0), Dir::AB, pkt(k, 1500)));
        arrivals.push((ms(0), Dir::BA, pkt(100 + k, 1500)));
    }
    let (out, _) = drive(&mut b, &arrivals, ms(100_000));
    assert_eq!(out.len(), 20);
    // 10·1501 bytes = 376 PDUs per direction plus STATUS PDUs on each side.
    let ab_units: usize = slots(&ab_log).iter().map(|x| x.1).sum();
    let ba_units: usize = slots(&ba_log).iter().map(|x| x.1).sum();
    assert_eq!(ab_units as u64, 376 + b.counters(Dir::AB).status_pdus_sent);
    assert_eq!(ba_units as u64, 376 + b.counters(Dir::BA).status_pdus_sent);
    assert!(b.counters(Dir::AB).status_pdus_sent >= 1);
    assert_eq!(b.in_transit(), 0);
    assert_eq!(b.poll_timeout(), None);
}

fn lossy(p: f64, seed: u64, name: &str) -> Box<dyn Channel> {
    Box::new(Bernoulli::new(p, Rng::stream(seed, name)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Random losses of every PDU kind on both channels, random SDU sizes and
    /// arrival times, both directions loaded. Unlimited MaxDAT: every SDU is
    /// delivered exactly once, in order. Finite MaxDAT: every SDU is
    /// delivered once or reported lost once, never both; delivered SDUs are
    /// in order. At every step sent = delivered + lost + dropped + inside.
    #[test]
    fn random_losses_conserve_sdus(
        p_ab in prop_oneof![Just(0.0), 0.0..0.5f64],
        p_ba in prop_oneof![Just(0.0), 0.0..0.5f64],
        in_order in prop_oneof![3 => Just(true), 1 => Just(false)],
        window in prop_oneof![Just(1024u32), 4u32..80],
        prohibit in prop_oneof![Just(Some(60u64)), Just(None), (1u64..200).prop_map(Some)],
        max_dat in prop_oneof![Just(None), (1u32..5).prop_map(Some)],
        sdus in proptest::collection::vec((0u64..400, 40u32..1600, any::<bool>()), 1..60),
        rate in prop_oneof![Just(64_000u64), Just(128_000), Just(384_000)],
        limit in 3u32..50,
        seed in 0u64..1_000_000,
    ) {
        let mut cfg = RlcConfig::seed000();
        cfg.max_dat = max_dat;
        cfg.buffer_limit = Limit::Packets(limit);
        cfg.tx_window = window;
        cfg.in_order_delivery = in_order;
        cfg.status_prohibit = prohibit.map(ms);
        let ab = RlcDirection::new(rate, Box::new(DropTail), lossy(p_ab, seed, "ab"), Rng::stream(seed, "qa"));
        let ba = RlcDirection::new(rate, Box::new(DropTail), lossy(p_ba, seed, "ba"), Rng::stream(seed, "qb"));
        let mut b = RlcBearer::new(cfg, ab, ba).unwrap();
        let mut sdus = sdus;
        sdus.sort_by_key(|s| s.0);
        let arr: Vec<(Time, Dir, Packet)> = sdus
            .iter()
            .enumerate()
            .map(|(i, &(t, size, up))| {
                (ms(t), if up { Dir::BA } else { Dir::AB }, pkt(i as u64, size))
            })
            .collect();
        let n = arr.len();
        let mut fate = vec![0u8; n]; // 0 inside, 1 delivered, 2 lost, 3 dropped
        let mut last_uid: [Option<u64>; 2] = [None, None];
        let mut next = 0;
        let (mut sent, mut delivered, mut lost, mut dropped) = (0u64, 0u64, 0u64, 0u64);
        let horizon = Time::from_secs(3600);
        loop {
            let t_arr = arr.get(next).map(|a| a.0);
            let t_wake = b.poll_timeout();
            let t = match (t_arr, t_wake) {
                (None, None) => break,
                (Some(a), Some(w)) => a.min(w),
                (a, w) => a.or(w).unwrap(),
            };
            prop_assert!(t < horizon, "bearer never settles");
            if t_arr == Some(t) {
                let (_, d, p) = arr[next];
                next += 1;
                sent += 1;
                if let Some((q, c)) = b.enqueue(t, d, p) {
                    prop_assert!(matches!(c, DropCause::Overflow));
                    prop_assert_eq!(fate[q.uid as usize], 0, "dropped uid settled");
                    fate[q.uid as usize] = 3;
                    dropped += 1;
                }
            } else {
                while let Some((d, x)) = b.poll_deliver(t) {
                    match x {
                        Delivery::Arrived(p) => {
                            prop_assert_eq!(fate[p.uid as usize], 0, "uid {} settled twice", p.uid);
                            fate[p.uid as usize] = 1;
                            delivered += 1;
                            let prev = last_uid[d.index()].replace(p.uid);
                            prop_assert!(!in_order || prev.is_none_or(|u| u < p.uid), "out of order");
                        }
                        Delivery::Lost(p, c) => {
                            prop_assert_eq!(c, DropCause::LinkArq);
                            prop_assert!(max_dat.is_some());
                            prop_assert_eq!(fate[p.uid as usize], 0, "uid {} settled twice", p.uid);
                            fate[p.uid as usize] = 2;
                            lost += 1;
                        }
                    }
                }
            }
            prop_assert_eq!(sent, delivered + lost + dropped + b.in_transit() as u64);
        }
        prop_assert_eq!(next, n, "arrivals left");
        prop_assert_eq!(b.in_transit(), 0, "inside at end");
        prop_assert!(fate.iter().all(|&f| f != 0));
        if max_dat.is_none() {
            prop_assert_eq!(lost, 0, "lost with unlimited MaxDAT");
        }
        for d in Dir::BOTH {
            prop_assert_eq!(b.buffered_sdus(d), 0, "buffered at end {:?}", d);
            let st = b.occupancy(d).stats();
            prop_assert_eq!(st.drops_link_arq, b.stats(d).lost, "arq drops");
        }
        prop_assert_eq!(
            b.occupancy(Dir::AB).stats().drops_overflow + b.occupancy(Dir::BA).stats().drops_overflow,
            dropped
        );
    }
}

/// End to end through the engine: one greedy TCP flow from a server behind
/// a 1 Mbit/s, 100 ms wired link to a UE behind the bearer (seed 000's
/// topology, Table 1 parameters, 40-SDU buffer). Error-free, the bottleneck
/// is 12 PDUs × 40 bytes per TTI = 384 kbit/s of RLC payload, of which a
/// 1500-byte packet uses 1501 bytes (its LI) and TCP gets 1460 bytes:
/// goodput ≤ 384 000 · 1460/1501 = 373.5 kbit/s. With 10 % independent PDU
/// errors both ways, RLC recovers every loss (MaxDAT 10) at a lower rate.
/// Packets are conserved throughout.
#[test]
fn tcp_over_the_bearer_end_to_end() {
    use crate::net::{FlowSpec, NetworkBuilder};
    use crate::tcp::{App, TcpConfig};

    fn goodput(p: f64) -> f64 {
        let mut nb = NetworkBuilder::new();
        let (s, rnc, ue) = (nb.node("S"), nb.node("RNC"), nb.node("UE"));
        let wired = |seed: &str| {
            crate::link::WiredDirection::new(
                crate::link::WiredConfig {
                    schedule: Vec::new(),
                    rate_bps: 1_000_000,
                    delay: ms(100),
                    overhead_bytes: 0,
                    trace: None,
                    immediate: false,
                },
                crate::aqm::Queue::new(
                    Limit::Packets(1000),
                    Box::new(DropTail),
                    Rng::stream(1, seed),
                ),
                Box::new(Perfect),
            )
        };
        nb.link(
            s,
            rnc,
            Box::new(crate::link::WiredLink::new(wired("w1"), wired("w2"))),
        );
        let ab = dir(K384, lossy(p, 7, "dl"));
        let ba = dir(K384, lossy(p, 7, "ul"));
        let bearer = RlcBearer::new(RlcConfig::seed000(), ab, ba).unwrap();
        nb.link(rnc, ue, Box::new(bearer));
        nb.flow(FlowSpec {
            name: "f".into(),
            src: s,
            dst: ue,
            tcp: TcpConfig::default().into(),
            app: App::Bulk,
            start: Time::ZERO,
            stop: None,
        });
        let mut sim = nb.build().unwrap();
        for k in 1..=6 {
            sim.run(Time::from_secs(10 * k));
            sim.close_accounts().unwrap();
        }
        sim.summary().aggregate.totals.goodput_bps
    }

    let g0 = goodput(0.0);
    assert!(g0 > 300_000.0 && g0 <= 373_500.0, "error-free goodput {g0}");
    let g1 = goodput(0.1);
    assert!(g1 > 150_000.0 && g1 < g0, "10 % FER goodput {g1}");
    eprintln!("goodput: error-free {g0:.0} bit/s, 10 % FER {g1:.0} bit/s");
}

/// The bearer is a `Link` the engine can own.
#[test]
fn bearer_is_a_boxed_link() {
    let b = bearer(RlcConfig::seed000(), Box::new(Perfect), Box::new(Perfect));
    let l: Box<dyn Link> = Box::new(b);
    assert_eq!(l.rate_bps(Dir::BA), K384);
    assert_eq!(l.queue_kind(Dir::AB), "droptail");
}

/// A bearer whose AB buffer is FQ-CoDel under `cfg`, with CoDel's `target`
/// and `interval` (ms).
fn fq_bearer(cfg: RlcConfig, target: u64, interval: u64) -> RlcBearer {
    use crate::aqm::{AqmConfig, FqCodelConfig};
    let fq = FqCodelConfig {
        target: ms(target),
        interval: ms(interval),
        ..FqCodelConfig::default()
    };
    let mut ab = dir(K384, Box::new(Perfect));
    ab.aqm = fq.build(K384);
    ab.fq = fq.flow_queues();
    RlcBearer::new(cfg, ab, dir(K384, Box::new(Perfect))).unwrap()
}

fn flow_pkt(uid: u64, flow: u32, size: u32) -> Packet {
    Packet {
        flow: crate::packet::FlowId(flow),
        ..pkt(uid, size)
    }
}

/// Run `b` until idle after `arrivals`: every uid with `None` (delivered)
/// or its drop cause, in the order they came out (arrivals dropped at
/// enqueue included).
fn settle(b: &mut RlcBearer, arrivals: &[(Time, Packet)]) -> Vec<(u64, Option<DropCause>)> {
    let mut out = Vec::new();
    let mut next = 0;
    let mut last = Time::ZERO;
    loop {
        let t_arr = arrivals.get(next).map(|a| a.0);
        let t = match (t_arr, b.poll_timeout()) {
            (None, None) => break,
            (Some(a), Some(w)) => a.min(w),
            (a, w) => a.or(w).unwrap(),
        };
        assert!(t >= last && t < Time::from_secs(3600));
        last = t;
        if t_arr == Some(t) {
            let (_, p) = arrivals[next];
            next += 1;
            if let Some((q, c)) = b.enqueue(t, Dir::AB, p) {
                out.push((q.uid, Some(c)));
            }
            continue;
        }
        while let Some((d, x)) = b.poll_deliver(t) {
            assert_eq!(d, Dir::AB);
            match x {
                Delivery::Arrived(p) => out.push((p.uid, None)),
                Delivery::Lost(p, c) => out.push((p.uid, Some(c))),
            }
        }
    }
    assert_eq!(b.in_transit(), 0);
    assert_eq!(b.buffered_sdus(Dir::AB), 0);
    out
}

/// FQ-CoDel in the RLC buffer (CoDel out of the way: target 10 s): ten
/// 1500-byte SDUs of flow 0 arrive at 0, one of flow 1 at 5 ms. A FIFO
/// would segment flow 1's SDU last (after 10 × 38 PDUs, about 330 ms). With
/// the flow queues it is third: flow 0, still a new flow with 14 bytes of
/// its 1514-byte quantum left after SDU 0, sends SDU 1 (DRR lets a queue
/// with a positive deficit go on), then drops to the old list and flow 1's
/// SDU goes. SDU ids follow segmentation: delivery stays in order.
#[test]
fn fq_codel_in_the_buffer_serves_a_sparse_flow_first() {
    let mut b = fq_bearer(RlcConfig::seed000(), 10_000, 100_000);
    let mut arr: Vec<(Time, Packet)> = (0..10).map(|i| (ms(0), flow_pkt(i, 0, 1500))).collect();
    arr.push((ms(5), flow_pkt(10, 1, 1500)));
    let out = settle(&mut b, &arr);
    let order: Vec<u64> = out.iter().map(|o| o.0).collect();
    assert!(out.iter().all(|o| o.1.is_none()), "{out:?}");
    assert_eq!(order, [0, 1, 10, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(b.occupancy(Dir::AB).stats().arrivals, 11);
}

/// Over the buffer's limit FQ-CoDel drops from the head of the fattest
/// flow queue, half its bytes (RFC 8290 §4.1, Linux `fq_codel_drop`): with
/// a 6-SDU buffer, six SDUs of flow 0 then one of flow 1 drop flow 0's
/// three oldest (9000 bytes waiting, 4500 dropped). The arrival is kept;
/// everything else is delivered, in DRR order: flow 0 (first of the new
/// flows) sends two SDUs on its quantum, then flow 1, then flow 0 again.
#[test]
fn fq_codel_in_the_buffer_drops_from_the_fattest_flow() {
    let mut cfg = RlcConfig::seed000();
    cfg.buffer_limit = Limit::Packets(6);
    let mut b = fq_bearer(cfg, 10_000, 100_000);
    let mut arr: Vec<(Time, Packet)> = (0..6).map(|i| (ms(0), flow_pkt(i, 0, 1500))).collect();
    arr.push((ms(0), flow_pkt(6, 1, 1500)));
    let out = settle(&mut b, &arr);
    let dropped: Vec<u64> = out.iter().filter(|o| o.1.is_some()).map(|o| o.0).collect();
    assert_eq!(dropped, [0, 1, 2], "{out:?}");
    assert!(out
        .iter()
        .all(|o| o.1.is_none() || o.1 == Some(DropCause::Overflow)));
    let delivered: Vec<u64> = out.iter().filter(|o| o.1.is_none()).map(|o| o.0).collect();
    assert_eq!(delivered, [3, 4, 6, 5]);
    assert_eq!(b.occupancy(Dir::AB).stats().drops_overflow, 3);
}

/// CoDel in each flow queue (defaults: 5 ms, 100 ms): a standing backlog of
/// one flow (25 SDUs at 384 kbit/s wait far beyond the target for over 100
/// ms) loses SDUs at dequeue, reported lost as AQM drops; the rest is
/// delivered in order.
#[test]
fn fq_codel_in_the_buffer_codel_drops_a_standing_queue() {
    let mut b = fq_bearer(RlcConfig::seed000(), 5, 100);
    let arr: Vec<(Time, Packet)> = (0..25).map(|i| (ms(0), flow_pkt(i, 0, 1500))).collect();
    let out = settle(&mut b, &arr);
    let lost = out.iter().filter(|o| o.1.is_some()).count() as u64;
    assert!(lost > 0, "CoDel dropped nothing");
    assert!(out
        .iter()
        .all(|o| o.1.is_none() || o.1 == Some(DropCause::AqmEarly)));
    assert_eq!(out.len(), 25);
    assert_eq!(b.occupancy(Dir::AB).stats().drops_aqm_early, lost);
    let delivered: Vec<u64> = out.iter().filter(|o| o.1.is_none()).map(|o| o.0).collect();
    assert!(delivered.windows(2).all(|w| w[0] < w[1]), "{delivered:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// FQ-CoDel in the buffer under random flows, sizes, arrival times,
    /// limits and PDU losses: every SDU comes out exactly once (delivered,
    /// lost by ARQ, dropped by overflow or CoDel), and at every step sent =
    /// settled + inside; each flow's delivered SDUs keep their order.
    #[test]
    fn fq_codel_in_the_buffer_conserves_sdus(
        sdus in proptest::collection::vec((0u64..300, 40u32..1600, 0u32..4), 1..50),
        limit in 2u32..30,
        p in prop_oneof![Just(0.0), 0.0..0.3f64],
        max_dat in prop_oneof![Just(None), (1u32..4).prop_map(Some)],
        target in prop_oneof![Just(5u64), Just(10_000)],
        seed in 0u64..1_000_000,
    ) {
        use crate::aqm::{AqmConfig, FqCodelConfig};
        let mut cfg = RlcConfig::seed000();
        cfg.buffer_limit = Limit::Packets(limit);
        cfg.max_dat = max_dat;
        let fq = FqCodelConfig { target: ms(target), interval: ms(100 * target), ..FqCodelConfig::default() };
        let mut ab = RlcDirection::new(K384, fq.build(K384), lossy(p, seed, "ab"), Rng::stream(seed, "q"));
        ab.fq = fq.flow_queues();
        let mut b = RlcBearer::new(cfg, ab, dir(K384, lossy(p, seed, "ba"))).unwrap();
        let mut sdus = sdus;
        sdus.sort_by_key(|s| s.0);
        let arr: Vec<(Time, Packet)> = sdus
            .iter()
            .enumerate()
            .map(|(i, &(t, size, f))| (ms(t), flow_pkt(i as u64, f, size)))
            .collect();
        let mut fate = vec![false; arr.len()];
        let (mut sent, mut settled) = (0u64, 0u64);
        let mut last_of_flow: std::collections::HashMap<u32, u64> = Default::default();
        let mut next = 0;
        loop {
            let t_arr = arr.get(next).map(|a| a.0);
            let t = match (t_arr, b.poll_timeout()) {
                (None, None) => break,
                (Some(a), Some(w)) => a.min(w),
                (a, w) => a.or(w).unwrap(),
            };
            prop_assert!(t < Time::from_secs(3600), "never settles");
            let mut done = |uid: u64| -> Result<(), TestCaseError> {
                prop_assert!(!fate[uid as usize], "uid {} twice", uid);
                fate[uid as usize] = true;
                settled += 1;
                Ok(())
            };
            if t_arr == Some(t) {
                let (_, pk) = arr[next];
                next += 1;
                sent += 1;
                if let Some((q, c)) = b.enqueue(t, Dir::AB, pk) {
                    prop_assert_eq!(c, DropCause::Overflow);
                    done(q.uid)?;
                }
            } else {
                while let Some((_, x)) = b.poll_deliver(t) {
                    match x {
                        Delivery::Arrived(q) => {
                            done(q.uid)?;
                            let prev = last_of_flow.insert(q.flow.0, q.uid);
                            prop_assert!(prev.is_none_or(|u| u < q.uid), "flow order");
                        }
                        Delivery::Lost(q, _) => done(q.uid)?,
                    }
                }
            }
            prop_assert_eq!(sent, settled + b.in_transit() as u64);
        }
        prop_assert_eq!(next, arr.len());
        prop_assert!(fate.iter().all(|&f| f));
        prop_assert_eq!(b.buffered_sdus(Dir::AB), 0);
    }
}

/// Without `li`, a PDU above 126 bytes gets 15-bit (2-byte) length indicators,
/// as docs/models/rlc-am.md and TS 25.322 §9.2.2.8 say (found by
/// `python -m linklab.check`: `pdu_payload = 160` alone was refused, "li_bytes
/// must be 2"); `li = 1` on such a PDU is still an error.
#[test]
fn li_defaults_to_two_bytes_above_126_byte_pdus() {
    let read = |extra: &str| -> crate::link::RlcLinkConfig {
        toml::from_str(&format!(
            "a = \"RNC\"\nb = \"UE\"\nrate = \"384kbit\"\n{extra}"
        ))
        .unwrap()
    };
    assert_eq!(read("").protocol().unwrap().li_bytes, 1);
    assert_eq!(read("pdu_payload = 124").protocol().unwrap().li_bytes, 1);
    let big = read("pdu_payload = 160").protocol().unwrap();
    assert_eq!(big.li_bytes, 2);
    big.check().unwrap();
    assert_eq!(read("pdu_payload = 125").protocol().unwrap().li_bytes, 2);
    let e = read("pdu_payload = 160\nli = 1").protocol().unwrap_err();
    assert!(e.allowed.contains("li_bytes must be 2"), "{e}");
}

/// The scalar reader takes the scenario's own representation (`toml::Value`):
/// `poll_window = nan` reaches it as a number (it read null, "is not allowed",
/// through a JSON value); 1 and 0.5 are windows.
#[test]
fn scalar_keys_read_numbers_as_written() {
    let read = |extra: &str| {
        crate::config::deserialize::<crate::link::RlcLinkConfig, _>(toml::Value::Table(
            toml::from_str(&format!(
                "a = \"RNC\"\nb = \"UE\"\nrate = \"384kbit\"\n{extra}"
            ))
            .unwrap(),
        ))
    };
    let e = read("poll_window = nan").unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.value.as_str()),
        ("poll_window", "nan"),
        "{e}"
    );
    assert!(e.allowed.contains("out of range"), "{e}");
    assert!(read("poll_window = 1").is_ok());
    assert!(read("poll_window = 0.5").is_ok());
    assert!(read("max_dat = 4").is_ok());
    let e = read("max_dat = 4.5").unwrap_err();
    assert!(e.allowed.contains("not allowed"), "{e}");
}

#[test]
fn window_poll_threshold_is_the_float_rule() {
    // J ≥ w·tx_window in floating point, for every whole J, is J ≥ the
    // precomputed ceiling.
    for tx_window in [1u32, 2, 7, 128, 511, 1000, 2047] {
        for w in [1e-9, 0.1, 0.25, 1.0 / 3.0, 0.5, 0.7, 0.999, 1.0] {
            let at = poll_window_pdus(w, tx_window);
            for j in 0..=u64::from(tx_window) + 1 {
                assert_eq!(
                    j as f64 >= w * f64::from(tx_window),
                    j >= at,
                    "w {w} window {tx_window} J {j}"
                );
            }
        }
    }
}

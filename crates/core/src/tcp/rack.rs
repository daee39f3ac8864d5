//! RACK loss detection (RFC 8985 §6): a segment is lost when a segment sent
//! sufficiently later (by more than a reordering window) has been delivered.
//! Time, not sequence counting: a retransmission that is lost again is found
//! like any other segment, and the tail of a window is covered by the
//! reordering timer. The Tail Loss Probe (§7) lives in the sender.

use super::scoreboard::{Scoreboard, Segment};
use crate::time::Time;

/// `RACK_sent_after(t1, seq1, t2, seq2)`.
#[inline]
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// The RACK state of one connection.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Latest transmission time and end of the most recently sent segment
    /// that has been delivered (`RACK.xmit_ts`, `RACK.end_seq`).
    xmit_ts: Option<Time>,
    end_seq: u64,
    /// RTT of that delivery (`RACK.rtt`).
    rtt: Time,
    /// Minimum RTT seen (`RACK.min_RTT`).
    min_rtt: Option<Time>,
    /// Highest SACKed sequence (`RACK.fack`).
    fack: u64,
    /// Reordering observed (`RACK.reord`).
    reord: bool,
    /// When the reordering timer fires (`None`: not armed).
    pub deadline: Option<Time>,
}

impl Rack {
    /// Whether reordering was observed.
    pub fn reordering_seen(&self) -> bool {
        self.reord
    }

    /// The minimum RTT seen.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    /// An RTT sample of the connection's estimator (the handshake's, a
    /// timestamp echo's, a segment's): `RACK.min_RTT` is the connection's
    /// minimum RTT (RFC 8985 §6.2 step 2), as Linux's `tcp_min_rtt`, which
    /// every RTT sample feeds (`tcp_update_rtt_min`), the SYN's included.
    /// From deliveries alone it can stay above the path's: every original
    /// segment of a burst queues behind the one before it at the
    /// bottleneck, and a retransmission sent alone into an empty queue
    /// then looks faster than the minimum, is taken for the original's
    /// delivery and does not advance RACK.
    pub fn on_rtt_sample(&mut self, rtt: Time) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// `seg`, newly delivered (cumulatively ACKed or SACKed) by an ACK at
    /// `now` (§6.2 steps 1–3); `sacked`: by a SACK block.
    pub fn on_delivered(&mut self, seg: &Segment, sacked: bool, now: Time) {
        let rtt = now.saturating_sub(seg.last_sent);
        // Step 2: a retransmission ACKed sooner than the minimum RTT may be
        // the original's ACK: do not take it as the most recent delivery.
        if seg.tx_count > 1 && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        if seg.tx_count == 1 {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        // Step 3: detect reordering (a never-retransmitted segment delivered
        // below the highest SACKed sequence).
        if seg.tx_count == 1 && seg.end() < self.fack {
            self.reord = true;
        }
        if sacked {
            self.fack = self.fack.max(seg.end());
        }
        let newer = self
            .xmit_ts
            .is_none_or(|t| sent_after(seg.last_sent, seg.end(), t, self.end_seq));
        if newer {
            self.xmit_ts = Some(seg.last_sent);
            self.end_seq = seg.end();
            self.rtt = rtt;
        }
    }

    /// `RACK.reo_wnd` (§6.2 step 4, without DSACK adaptation: the multiplier
    /// stays 1): 0 before any reordering was seen while in recovery or with
    /// at least `dupthresh` segments SACKed; else min(min_RTT/4, SRTT).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked: usize,
        dupthresh: u32,
        srtt: Option<Time>,
    ) -> Time {
        if !self.reord && (in_recovery || sacked >= dupthresh as usize) {
            return Time::ZERO;
        }
        let q = self
            .min_rtt
            .map_or(Time::ZERO, |m| Time::from_nanos(m.as_nanos() / 4));
        srtt.map_or(q, |s| q.min(s))
    }

    /// §6.2 step 5: mark lost every undelivered segment sent before the
    /// latest delivered one by more than `RACK.rtt + reo_wnd`; arm the
    /// reordering timer for the earliest one not yet due. Returns whether
    /// any segment was newly marked lost.
    pub fn detect_loss(&mut self, sb: &mut Scoreboard, now: Time, reo_wnd: Time) -> bool {
        self.deadline = None;
        let Some(xmit_ts) = self.xmit_ts else {
            return false;
        };
        let (rack_end, rack_rtt) = (self.end_seq, self.rtt);
        let mut any = false;
        let mut earliest: Option<Time> = None;
        for idx in 0..sb.len() {
            let Some(s) = sb.get(idx) else { break };
            if s.sacked || s.lost {
                continue;
            }
            if !sent_after(xmit_ts, rack_end, s.last_sent, s.end()) {
                continue;
            }
            let due = s.last_sent + rack_rtt + reo_wnd;
            if due <= now {
                sb.mark_segment_lost(idx);
                any = true;
            } else {
                earliest = Some(earliest.map_or(due, |e| e.min(due)));
            }
        }
        self.deadline = earliest;
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Time = Time::from_millis;

    fn board(sends: &[(u64, u64)]) -> Scoreboard {
        // (seq index, send ms): 1000-byte segments.
        let mut sb = Scoreboard::new(1000);
        for &(i, t) in sends {
            let mut s = Segment::new(i * 1000, 1000, MS(t));
            s.tx_count = 1;
            sb.push(s);
        }
        sb
    }

    /// Segments 0..4 sent at 0, 1, 2, 3 ms, RTT 50 ms. Segment 3 is SACKed
    /// at 53 ms: 0, 1, 2 were sent before it; with no reordering seen and
    /// three segments not yet SACKed, the window is min_RTT/4 = 12.5 ms: 0 is
    /// lost at 0 + 50 + 12.5 ≤ 53? no — the timer is armed for 62.5 ms.
    #[test]
    fn loss_after_rtt_plus_reordering_window() {
        let mut sb = board(&[(0, 0), (1, 1), (2, 2), (3, 3)]);
        let mut r = Rack::default();
        sb.apply_sack_visit(&[(3000, 4000)], |s| r.on_delivered(s, true, MS(53)));
        let wnd = r.reo_wnd(false, sb.sacked_count(), 3, Some(MS(50)));
        assert_eq!(wnd, Time::from_micros(12_500));
        assert!(!r.detect_loss(&mut sb, MS(53), wnd));
        assert_eq!(r.deadline, Some(Time::from_micros(62_500)));
        // At the timer: 0 (due 62.5) is lost, 1 (63.5) and 2 (64.5) not yet.
        assert!(r.detect_loss(&mut sb, Time::from_micros(62_500), wnd));
        let lost: Vec<bool> = sb.iter().map(|s| s.lost).collect();
        assert_eq!(lost, vec![true, false, false, false]);
        assert_eq!(r.deadline, Some(Time::from_micros(63_500)));
    }

    /// In recovery without reordering seen, the window is zero: everything
    /// sent before the latest delivered segment by more than RACK.rtt is lost.
    #[test]
    fn zero_window_in_recovery() {
        let mut sb = board(&[(0, 0), (1, 1), (2, 2), (3, 3)]);
        let mut r = Rack::default();
        sb.apply_sack_visit(&[(3000, 4000)], |s| r.on_delivered(s, true, MS(53)));
        let wnd = r.reo_wnd(true, sb.sacked_count(), 3, Some(MS(50)));
        assert_eq!(wnd, Time::ZERO);
        // RACK.rtt = 50 ms: 0 (50), 1 (51), 2 (52) are all due by 53.
        assert!(r.detect_loss(&mut sb, MS(53), wnd));
        assert_eq!(sb.iter().filter(|s| s.lost).count(), 3);
    }

    /// A lost retransmission is found like any segment: segment 0,
    /// retransmitted at 100 ms, is lost again once segment 5, sent after it,
    /// is SACKed more than RACK.rtt later.
    #[test]
    fn lost_retransmission_is_detected() {
        let mut sb = board(&[(0, 0), (1, 1)]);
        let mut r = Rack::default();
        sb.apply_sack_visit(&[(1000, 2000)], |s| r.on_delivered(s, true, MS(51)));
        assert!(r.detect_loss(&mut sb, MS(70), Time::ZERO));
        // Retransmit 0 at 100 ms (no longer marked lost: in flight again).
        sb.update(0, |s| {
            s.tx_count = 2;
            s.last_sent = MS(100);
            s.lost = false;
        });
        let mut n = Segment::new(2000, 1000, MS(101));
        n.tx_count = 1;
        sb.push(n);
        sb.apply_sack_visit(&[(1000, 3000)], |s| r.on_delivered(s, true, MS(151)));
        assert!(r.detect_loss(&mut sb, MS(152), Time::ZERO));
        assert!(sb.get(0).unwrap().lost);
    }

    /// RACK.min_RTT is the connection's minimum RTT, not only the minimum
    /// over deliveries of original segments: those of a burst queue behind
    /// each other (here 315 ms), and a retransmission sent alone into an
    /// empty queue (308 ms) would be taken for the original's delivery and
    /// never advance RACK, which then cannot find the next lost
    /// retransmission (issue 33, `rack-loss-left-to-rto`). The handshake's
    /// sample (300 ms) sets it, as Linux's `tcp_min_rtt`.
    #[test]
    fn min_rtt_takes_every_rtt_sample() {
        let run = |handshake: Option<Time>| {
            let mut sb = board(&[(0, 0), (1, 0)]);
            let mut r = Rack::default();
            if let Some(h) = handshake {
                r.on_rtt_sample(h);
            }
            // Segment 1, sent at 0 behind segment 0, SACKed at 315 ms.
            sb.apply_sack_visit(&[(1000, 2000)], |s| r.on_delivered(s, true, MS(315)));
            // Segment 2 lost; segment 0 retransmitted at 400 ms, alone, and
            // its ACK back at 708 ms.
            let mut n = Segment::new(2000, 1000, MS(320));
            n.tx_count = 1;
            sb.push(n);
            sb.update(0, |s| {
                s.tx_count = 2;
                s.last_sent = MS(400);
            });
            sb.apply_sack_visit(&[(0, 2000)], |s| r.on_delivered(s, true, MS(708)));
            r.detect_loss(&mut sb, MS(708), Time::ZERO);
            (r.min_rtt(), sb.get(2).unwrap().lost)
        };
        assert_eq!(
            run(None),
            (Some(MS(315)), false),
            "the 308-ms delivery ignored"
        );
        assert_eq!(run(Some(MS(300))), (Some(MS(300)), true));
    }

    /// Reordering: a never-retransmitted segment delivered below the highest
    /// SACKed sequence; then the window opens to min_RTT/4 even in recovery.
    #[test]
    fn reordering_is_detected_and_widens_the_window() {
        let mut sb = board(&[(0, 0), (1, 1), (2, 2)]);
        let mut r = Rack::default();
        sb.apply_sack_visit(&[(2000, 3000)], |s| r.on_delivered(s, true, MS(42)));
        assert!(!r.reordering_seen());
        sb.apply_sack_visit(&[(1000, 3000)], |s| r.on_delivered(s, true, MS(43)));
        assert!(r.reordering_seen());
        assert_eq!(r.reo_wnd(true, 2, 3, Some(MS(40))), MS(10));
    }

    proptest::proptest! {
        /// RACK marks only undelivered segments, only those sent before the
        /// most recently sent delivered one, and exactly those whose
        /// `send + RACK.rtt + reo_wnd` has passed; the timer is the earliest
        /// deadline of the others.
        #[test]
        fn marks_exactly_the_due_segments(
            gaps in proptest::collection::vec(0u64..5, 2..40),
            sacks in proptest::collection::vec(proptest::bool::weighted(0.3), 2..40),
            rtt in 10u64..100,
            extra in 0u64..200,
            wnd in 0u64..30,
        ) {
            let n = gaps.len().min(sacks.len());
            let mut t = 0;
            let sends: Vec<(u64, u64)> = (0..n as u64).map(|i| { t += gaps[i as usize]; (i, t) }).collect();
            let mut sb = board(&sends);
            let mut r = Rack::default();
            let blocks: Vec<(u64, u64)> = (0..n).filter(|&i| sacks[i]).map(|i| (i as u64 * 1000, i as u64 * 1000 + 1000)).collect();
            let at = MS(t + rtt);
            sb.apply_sack_visit(&blocks, |s| r.on_delivered(s, true, at));
            let now = at + MS(extra);
            let wnd = MS(wnd);
            r.detect_loss(&mut sb, now, wnd);
            let newest = sb.iter().filter(|s| s.sacked).map(|s| (s.last_sent, s.end())).max();
            let mut earliest: Option<Time> = None;
            for s in sb.iter() {
                let before = newest.is_some_and(|(xt, xe)| sent_after(xt, xe, s.last_sent, s.end()));
                let rack_rtt = newest.map_or(Time::ZERO, |(xt, _)| at.saturating_sub(xt));
                let due = s.last_sent + rack_rtt + wnd;
                if s.sacked || !before {
                    proptest::prop_assert!(!s.lost);
                } else {
                    proptest::prop_assert_eq!(s.lost, due <= now);
                    if due > now {
                        earliest = Some(earliest.map_or(due, |e: Time| e.min(due)));
                    }
                }
            }
            proptest::prop_assert_eq!(r.deadline, earliest);
        }
    }
}

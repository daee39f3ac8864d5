//! TFRC loss-event rate (RFC 5348 §5), as used by seed 001 §III-B to
//! estimate the end-to-end TCP packet loss probability `P_TCP`.
//!
//! Packets are counted by number: at a receiver a TCP segment is
//! `seq / MSS` (fixed MSS); at a sender packets are numbered by transmission,
//! retransmissions included, so an interval is the number of segments sent
//! between two loss events. Lost packets are grouped into *loss events*: a lost packet whose
//! (interpolated) loss time is within one round trip of the first loss of the
//! current event belongs to that event (§5.2). A *loss interval* runs from the
//! first lost packet of one event to the first lost packet of the next (§5.3);
//! the *open* interval `I_0` runs from the first lost packet of the latest
//! event to the highest packet seen, inclusive. The average loss interval
//! (§5.4) weights the open interval and up to eight closed ones with
//! 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2:
//!
//! ```text
//! I_tot0 = Σ_{i=0}^{k−1} I_i·w_i      (I_0 the open interval)
//! I_tot1 = Σ_{i=1}^{k}   I_i·w_{i−1}  (closed intervals only)
//! W_tot  = Σ_{i=0}^{k−1} w_i
//! I_mean = max(I_tot0, I_tot1) / W_tot,   P = 1 / I_mean
//! ```
//!
//! with `k` the number of closed intervals (at most 8). Deviation from
//! RFC 5348 §6.3.1: the interval before the first loss event is the number of
//! packets seen before the first lost one (TFRC instead synthesises it from
//! the throughput equation, which has no meaning for a TCP flow).
//!
//! Two detectors feed the estimator: [`ReceiverLossDetector`] (at a TCP
//! receiver: a packet is lost once three packets with higher numbers have
//! arrived, RFC 5348 §5.1 with NDUPACK = 3) and, at a TCP sender, fast
//! retransmissions and retransmission timeouts
//! (`TcpSender::enable_loss_events`).

use std::collections::{BTreeMap, VecDeque};

use crate::time::Time;

/// Number of loss intervals averaged (RFC 5348 §5.4, n = 8).
pub const N_INTERVALS: usize = 8;

/// Weights `w_0 … w_7` of RFC 5348 §5.4 for n = 8.
pub const WEIGHTS: [f64; N_INTERVALS] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Packets with higher numbers that must arrive before a missing packet is
/// declared lost at the receiver (RFC 5348 §5.1, NDUPACK).
pub const NDUPACK: usize = 3;

/// The loss-event history and the average loss interval of one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LossEventEstimator {
    /// Closed loss intervals, most recent first (`I_1, I_2, …`), at most 8.
    closed: VecDeque<u64>,
    /// First lost packet of the latest loss event and its loss time.
    event: Option<(u64, Time)>,
    /// First packet seen (the origin of the first interval).
    first: Option<u64>,
    /// Highest packet number seen (sent, received or reported lost).
    highest: Option<u64>,
    /// Loss events so far.
    events: u64,
    /// Lost packets reported so far (events included).
    losses: u64,
}

impl LossEventEstimator {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Packet number `pkt` was seen (received at a receiver, sent for the
    /// first time at a sender): it extends the open interval.
    pub fn on_packet(&mut self, pkt: u64) {
        self.first.get_or_insert(pkt);
        self.highest = Some(self.highest.map_or(pkt, |h| h.max(pkt)));
    }

    /// Packet `pkt` was lost at time `at` (its interpolated arrival time at a
    /// receiver, the detection time at a sender); `rtt` is the flow's round
    /// trip time. Returns whether the loss starts a new loss event (it does
    /// unless it lies within `rtt` after the first loss of the latest event).
    pub fn on_loss(&mut self, at: Time, pkt: u64, rtt: Time) -> bool {
        self.losses += 1;
        self.on_packet(pkt);
        let interval = match self.event {
            Some((_, t0)) if at <= t0 + rtt => return false,
            // A retransmission of the event's first packet lost again has
            // the same number: the interval is at least one packet.
            Some((s0, _)) => pkt.saturating_sub(s0).max(1),
            // Packets before the first loss (see the module docs).
            None => pkt.saturating_sub(self.first.unwrap_or(pkt)).max(1),
        };
        self.closed.push_front(interval);
        self.closed.truncate(N_INTERVALS);
        self.event = Some((pkt, at));
        self.events += 1;
        true
    }

    /// The open interval `I_0` (packets from the first loss of the latest
    /// event to the highest packet seen, inclusive), once a loss occurred.
    pub fn open_interval(&self) -> Option<u64> {
        let (s0, _) = self.event?;
        Some(self.highest.unwrap_or(s0).saturating_sub(s0) + 1)
    }

    /// Closed intervals, most recent first (`I_1, I_2, …`).
    pub fn closed_intervals(&self) -> impl Iterator<Item = u64> + '_ {
        self.closed.iter().copied()
    }

    /// The average loss interval `I_mean` in packets (`None` before the
    /// first loss event).
    pub fn mean_interval(&self) -> Option<f64> {
        let i0 = self.open_interval()?;
        let k = self.closed.len();
        let (mut tot0, mut tot1, mut w_tot) = (0.0, 0.0, 0.0);
        for (i, &w) in WEIGHTS.iter().enumerate().take(k) {
            let older = if i == 0 { i0 } else { self.closed[i - 1] };
            tot0 += older as f64 * w;
            tot1 += self.closed[i] as f64 * w;
            w_tot += w;
        }
        Some(tot0.max(tot1) / w_tot)
    }

    /// The loss event rate `P = 1 / I_mean` (`None` before the first loss
    /// event). Always in (0, 1].
    pub fn loss_event_rate(&self) -> Option<f64> {
        self.mean_interval().map(|m| (1.0 / m).min(1.0))
    }

    /// Loss events so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Lost packets reported so far.
    pub fn losses(&self) -> u64 {
        self.losses
    }
}

/// Receiver-side loss detection (RFC 5348 §5.1–5.2; seed 001 §III-B, its
/// ref. \[17\]): a packet is lost once [`NDUPACK`] packets with higher numbers
/// have arrived. Its loss time is interpolated between the arrivals of the
/// nearest received packets below and above it, and the estimator groups it
/// into a loss event with the round trip time the caller supplies (in TFRC
/// the sender writes its RTT estimate into every data packet). A packet
/// arriving after it was declared lost is ignored (not un-lost).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReceiverLossDetector {
    est: LossEventEstimator,
    /// Every packet below this was received or declared lost.
    next: u64,
    /// Received packets at or above `next`, with arrival times.
    above: BTreeMap<u64, Time>,
    /// The highest received packet below `next` and its arrival time.
    before: Option<(u64, Time)>,
}

impl ReceiverLossDetector {
    /// A detector that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Packet `pkt` arrived at `now`; `rtt` is the flow's round-trip time.
    /// Returns whether a new loss event started.
    pub fn on_arrival(&mut self, now: Time, pkt: u64, rtt: Time) -> bool {
        if pkt < self.next || self.above.contains_key(&pkt) {
            return false; // duplicate, or late after being declared lost
        }
        if pkt == self.next {
            // In order: no need to hold it (the common case, without a map node).
            self.before = Some((pkt, now));
            self.next += 1;
        } else {
            self.above.insert(pkt, now);
        }
        self.est.on_packet(pkt);
        let mut new_event = false;
        loop {
            if let Some(t) = self.above.remove(&self.next) {
                self.before = Some((self.next, t));
                self.next += 1;
            } else if self.above.len() >= NDUPACK {
                let (&s_after, &t_after) = self.above.iter().next().expect("non-empty");
                let at = match self.before {
                    Some((s_before, t_before)) => {
                        let span = (s_after - s_before) as f64;
                        let frac = (self.next - s_before) as f64 / span;
                        let dt = t_after.saturating_sub(t_before).0 as f64;
                        Time(t_before.0 + (frac * dt).round() as u64)
                    }
                    None => t_after,
                };
                new_event |= self.est.on_loss(at, self.next, rtt);
                self.next += 1;
            } else {
                break;
            }
        }
        new_event
    }

    /// The estimator it feeds.
    pub fn estimator(&self) -> &LossEventEstimator {
        &self.est
    }

    /// The loss event rate (`None` before the first loss event).
    pub fn loss_event_rate(&self) -> Option<f64> {
        self.est.loss_event_rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Time = Time::from_millis(1);

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    /// An estimator with closed intervals `closed` (most recent first) and
    /// open interval `open`, built through the public API: the oldest
    /// interval is the pre-loss one (first packet 0), losses 1 s apart.
    fn with_intervals(closed: &[u64], open: u64) -> LossEventEstimator {
        let mut e = LossEventEstimator::new();
        e.on_packet(0);
        let mut at = 0;
        for (j, &i) in closed.iter().rev().enumerate() {
            at += i;
            assert!(e.on_loss(Time::from_secs(j as u64), at, MS));
        }
        e.on_packet(at + open - 1);
        e
    }

    #[test]
    fn no_rate_before_the_first_loss() {
        let mut e = LossEventEstimator::new();
        for p in 0..1000 {
            e.on_packet(p);
        }
        assert_eq!(e.loss_event_rate(), None);
        assert_eq!(e.mean_interval(), None);
    }

    #[test]
    fn first_loss_uses_packets_before_it() {
        let mut e = LossEventEstimator::new();
        for p in 0..100 {
            e.on_packet(p);
        }
        assert!(e.on_loss(ms(500), 100, ms(100)));
        // I_1 = 100 packets before the loss, I_0 = 1 (the lost packet):
        // k = 1, I_mean = max(1, 100)/1.
        assert_eq!(e.mean_interval(), Some(100.0));
        e.on_packet(349);
        // I_0 = 250 > I_1: the open-interval rule takes over.
        assert_eq!(e.open_interval(), Some(250));
        assert_eq!(e.mean_interval(), Some(250.0));
        assert_eq!(e.loss_event_rate(), Some(1.0 / 250.0));
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        let mut e = LossEventEstimator::new();
        e.on_packet(0);
        assert!(e.on_loss(ms(1000), 50, ms(200)));
        assert!(!e.on_loss(ms(1100), 52, ms(200)));
        assert!(!e.on_loss(ms(1200), 55, ms(200))); // exactly one RTT: same event
        assert!(e.on_loss(ms(1201), 58, ms(200)));
        assert_eq!(e.events(), 2);
        assert_eq!(e.losses(), 4);
        // Intervals: 50 (before the first loss), then 58 − 50 = 8.
        assert_eq!(e.closed_intervals().collect::<Vec<_>>(), vec![8, 50]);
    }

    #[test]
    fn two_closed_intervals_hand_computed() {
        // I_1 = 100, I_2 = 50, I_0 = 10: k = 2,
        // I_tot0 = 10 + 100 = 110, I_tot1 = 100 + 50 = 150, W_tot = 2 → 75.
        let e = with_intervals(&[100, 50], 10);
        assert_eq!(e.closed_intervals().collect::<Vec<_>>(), vec![100, 50]);
        assert_eq!(e.open_interval(), Some(10));
        assert_eq!(e.mean_interval(), Some(75.0));
    }

    #[test]
    fn eight_intervals_weighted_as_rfc5348() {
        // I_1..I_8 = 10, 20, …, 80 and I_0 = 5 (RFC 5348 §5.4, n = 8):
        // I_tot0 = 5 + 10 + 20 + 30 + 0.8·40 + 0.6·50 + 0.4·60 + 0.2·70 = 165
        // I_tot1 = 10 + 20 + 30 + 40 + 0.8·50 + 0.6·60 + 0.4·70 + 0.2·80 = 220
        // W_tot = 6 → I_mean = 220/6, P = 6/220.
        let closed: Vec<u64> = (1..=8).map(|i| 10 * i).collect();
        let e = with_intervals(&closed, 5);
        assert_eq!(e.closed_intervals().collect::<Vec<_>>(), closed);
        assert!((e.mean_interval().unwrap() - 220.0 / 6.0).abs() < 1e-12);
        assert!((e.loss_event_rate().unwrap() - 6.0 / 220.0).abs() < 1e-12);
        // A long open interval dominates: I_0 = 200 →
        // I_tot0 = 200 + 60 + 0.8·40 + … = 360 > 220.
        let e = with_intervals(&closed, 200);
        assert!((e.mean_interval().unwrap() - 360.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn only_the_eight_most_recent_intervals_count() {
        let mut closed: Vec<u64> = vec![7; 8];
        closed.push(100_000); // ninth, must be forgotten
        let e = with_intervals(&closed, 1);
        assert_eq!(e.closed_intervals().count(), 8);
        // I_tot1 = 7·6 = 42, I_tot0 = 1 + 7·3 + 7·(0.8+0.6+0.4+0.2) = 36 → 7.
        assert!((e.mean_interval().unwrap() - 7.0).abs() < 1e-12);
    }

    #[test]
    fn receiver_declares_a_loss_after_three_higher_packets() {
        let mut d = ReceiverLossDetector::new();
        let rtt = ms(100);
        for p in 0..10 {
            assert!(!d.on_arrival(ms(p), p, rtt));
        }
        // Packet 10 missing; 11 and 12 are not enough.
        assert!(!d.on_arrival(ms(11), 11, rtt));
        assert!(!d.on_arrival(ms(12), 12, rtt));
        assert_eq!(d.loss_event_rate(), None);
        assert!(d.on_arrival(ms(13), 13, rtt));
        // I_1 = 10 packets before the loss; I_0 = 13 − 10 + 1 = 4.
        assert_eq!(
            d.estimator().closed_intervals().collect::<Vec<_>>(),
            vec![10]
        );
        assert_eq!(d.estimator().open_interval(), Some(4));
        assert_eq!(d.loss_event_rate(), Some(0.1));
        // The late packet 10 is ignored.
        assert!(!d.on_arrival(ms(14), 10, rtt));
        assert_eq!(d.estimator().losses(), 1);
    }

    #[test]
    fn receiver_interpolates_loss_times() {
        // 0 at 0 ms, 1..3 lost, 4 at 40 ms, 5, 6 at 50, 60 ms; RTT 15 ms.
        // Loss times interpolate to 10, 20, 30 ms: packet 1 starts an event
        // (t0 = 10), 2 (20 ≤ 25) joins it, 3 (30 > 25) starts another.
        let mut d = ReceiverLossDetector::new();
        let rtt = ms(15);
        d.on_arrival(ms(0), 0, rtt);
        d.on_arrival(ms(40), 4, rtt);
        d.on_arrival(ms(50), 5, rtt);
        assert!(d.on_arrival(ms(60), 6, rtt));
        let e = d.estimator();
        assert_eq!(e.losses(), 3);
        assert_eq!(e.events(), 2);
        assert_eq!(e.closed_intervals().collect::<Vec<_>>(), vec![2, 1]);
    }

    proptest! {
        /// For any arrival pattern: the rate is a probability, undefined
        /// exactly while no packet is lost, every packet below the detection
        /// point is received or lost, and events ≤ losses.
        #[test]
        fn receiver_rate_is_a_probability(
            kept in proptest::collection::vec(any::<bool>(), 1..400),
            rtt_ms in 0u64..500,
        ) {
            let mut d = ReceiverLossDetector::new();
            let mut received = 0u64;
            for (i, &k) in kept.iter().enumerate() {
                if k {
                    d.on_arrival(Time::from_millis(10 * i as u64), i as u64, Time::from_millis(rtt_ms));
                    received += 1;
                }
            }
            let e = d.estimator();
            prop_assert!(e.events() <= e.losses());
            prop_assert_eq!(received + e.losses(), d.next + d.above.len() as u64);
            match d.loss_event_rate() {
                None => prop_assert_eq!(e.losses(), 0),
                Some(p) => {
                    prop_assert!(p > 0.0 && p <= 1.0);
                    prop_assert!(e.losses() > 0);
                    // I_mean is at least the smallest interval considered.
                    let m = e.mean_interval().unwrap();
                    prop_assert!(m >= 1.0);
                }
            }
        }

        /// Independent losses at rate q with a zero RTT (every loss its own
        /// event): the median of the estimates taken after each loss (once
        /// eight intervals exist) is close to q. A single estimate averages
        /// only eight geometric intervals and strays by 4x about once in a
        /// thousand runs, so the median is what is checked.
        #[test]
        fn estimate_tracks_a_bernoulli_loss_rate(seed in 0u64..1000, q in 0.01f64..0.2) {
            let mut rng = crate::rng::Rng::stream(seed, "test:tfrc");
            let mut e = LossEventEstimator::new();
            let mut estimates = Vec::new();
            let mut losses = 0;
            for p in 0..20_000u64 {
                if rng.bernoulli(q) {
                    e.on_loss(Time::from_millis(p), p, Time::ZERO);
                    losses += 1;
                    if losses > 9 {
                        estimates.push(e.loss_event_rate().unwrap());
                    }
                } else {
                    e.on_packet(p);
                }
            }
            prop_assert!(estimates.len() > 100);
            estimates.sort_by(f64::total_cmp);
            let median = estimates[estimates.len() / 2];
            prop_assert!(
                median > q / 1.5 && median < q * 1.5,
                "median estimate {} for {}",
                median,
                q
            );
        }
    }
}

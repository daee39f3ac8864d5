//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02,
//! Linux `tcp_rate.c`): every transmission records how much had been
//! delivered and when; every ACK turns the most recently sent packet it
//! delivers into a rate sample, delivered bytes over the longer of the send
//! and the ACK intervals. BBR's bandwidth model is built from these samples.
//!
//! [`RateSampleRule::Ns3`] reproduces ns-3.44's `TcpRateLinux`
//! (`src/internet/model/tcp-rate-ops.cc`), which keeps one sample across
//! ACKs instead of building a fresh one per ACK.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::time::Time;

/// `[tcp] rate_sample`: how the delivery-rate sample of an ACK is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateSampleRule {
    /// Linux `tcp_rate.c` and the draft: a fresh sample per ACK from the
    /// most recently sent packet the ACK delivers; an ACK that delivers
    /// nothing gives no sample.
    #[default]
    Linux,
    /// ns-3.44's `TcpRateLinux`: the sample is a member kept across ACKs
    /// (`SkbDelivered` updates it only from a packet whose `delivered`
    /// snapshot exceeds the sample's, freezing its ACK interval then;
    /// `GenerateSample` recomputes only the delivered count). An ACK whose
    /// packets were all sent before the sample's packet therefore reuses the
    /// old interval with a larger count and overestimates the rate. The
    /// sample is screened by ns-3's minimum RTT (the least smoothed RTT);
    /// a screened sample stays invalid until the next update; an
    /// app-limited sample below the last recorded rate keeps the previous
    /// rate (lines 84–98).
    Ns3,
}

/// `[tcp] rate_losses`: the bytes an ACK's rate sample counts as lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateLosses {
    /// Linux (`tcp_ack`: `rs.losses = tp->lost - prior lost`, a counter of
    /// every byte ever marked lost) and the draft: the bytes the ACK newly
    /// marks lost.
    #[default]
    Linux,
    /// ns-3.44's `TcpSocketBase::ReceivedAck` (tcp-socket-base.cc 1853 and
    /// 1944–1946 at tag ns-3.44): the absolute change of
    /// `TcpTxBuffer::GetLost` over the ACK — the bytes now marked lost and
    /// not SACKed (`m_lostOut`), which falls when a lost segment (or its
    /// retransmission) is SACKed or cumulatively acknowledged
    /// (`RemoveFromCounts`, `Update`). An ACK that delivers a lost
    /// segment's retransmission therefore reports that many bytes lost:
    /// `TcpBbr` ends its 5/4 phase on it (`IsNextCyclePhase`) and, in fast
    /// recovery, takes it out of the window (`ModulateCwndForRecovery`).
    Ns3,
}

/// What a packet remembers of the connection when it is sent (`P.delivered`,
/// `P.delivered_time`, `P.first_sent_time`, `P.is_app_limited`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxState {
    /// Bytes delivered before this transmission.
    pub delivered: u64,
    /// When `delivered` was last updated (`None`: already delivered).
    pub delivered_time: Option<Time>,
    /// Send time of the first packet of the flight this one was sent in.
    pub first_sent_time: Time,
    /// Sent while the application was not keeping the window full.
    pub app_limited: bool,
}

/// One rate sample (`struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Delivered bytes per second over the sample's interval (0 if invalid).
    pub delivery_rate: f64,
    /// Bytes delivered over the interval.
    pub delivered: u64,
    /// The interval: max(send interval, ACK interval).
    pub interval: Time,
    /// `P.delivered` of the packet the sample is taken from: a round trip
    /// ends when this reaches the delivered count at its start.
    pub prior_delivered: u64,
    /// The sample was taken while the application limited the sending.
    pub is_app_limited: bool,
    /// Bytes newly delivered (cumulatively ACKed or SACKed) by this ACK.
    pub acked_sacked: u64,
    /// Bytes newly marked lost by this ACK.
    pub losses: u64,
    /// The RTT sample of this ACK, if any.
    pub rtt: Option<Time>,
    /// Whether the sample is usable (an interval of at least the minimum RTT).
    pub valid: bool,
}

/// The connection's delivery state (`C.delivered`, …) and the sample being
/// built from the packets one ACK delivers.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    rule: RateSampleRule,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// `C.app_limited`: the delivered count at which the app-limited phase
    /// ends (0: not app-limited).
    app_limited: u64,
    // The sample of the ACK being processed.
    has: bool,
    prior_delivered: u64,
    prior_time: Time,
    send_elapsed: Time,
    sample_app_limited: bool,
    acked_sacked: u64,
    /// Send time of the packet the sample is taken from.
    newest_sent: Time,
    // ns-3's rule only: the ACK interval frozen at the sample's update
    // (`m_ackElapsed`), the last recorded rate (`m_rateDelivered`,
    // `m_rateInterval`) and the sample's rate (`m_deliveryRate`).
    ack_elapsed: Time,
    rate_delivered: u64,
    rate_interval: Time,
    rate: f64,
}

impl RateSampler {
    /// A sampler following `rule`.
    pub fn new(rule: RateSampleRule) -> RateSampler {
        RateSampler {
            rule,
            ..RateSampler::default()
        }
    }

    /// Bytes delivered so far (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// A packet is sent at `now` with `in_flight` bytes outstanding before it
    /// (`OnPacketSent`): its snapshot.
    pub fn on_send(&mut self, now: Time, in_flight: u64) -> TxState {
        if in_flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        TxState {
            delivered: self.delivered,
            delivered_time: Some(self.delivered_time),
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited != 0,
        }
    }

    /// The sender has less to send than the window allows (`C.app_limited`).
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// A packet of `len` bytes sent at `sent` with snapshot `tx` is delivered
    /// (cumulatively ACKed or SACKed) by the ACK arriving at `now`
    /// (`UpdateRateSample`); marks the snapshot used.
    pub fn on_delivered(&mut self, tx: &mut TxState, len: u64, sent: Time, now: Time) {
        let Some(delivered_time) = tx.delivered_time else {
            return; // SACKed earlier: counted then
        };
        self.delivered += len;
        self.delivered_time = now;
        self.acked_sacked += len;
        let update = match self.rule {
            // The most recently sent packet delivered gives the sample.
            RateSampleRule::Linux => {
                !self.has || tx.delivered > self.prior_delivered || sent > self.newest_sent
            }
            // ns-3 (`SkbDelivered`): a larger delivered snapshot only, the
            // ACK interval frozen now.
            RateSampleRule::Ns3 => {
                let up = self.prior_delivered == 0 || tx.delivered > self.prior_delivered;
                if up {
                    self.ack_elapsed = now.saturating_sub(delivered_time);
                }
                up
            }
        };
        if update {
            self.has = true;
            self.prior_delivered = tx.delivered;
            self.prior_time = delivered_time;
            self.sample_app_limited = tx.app_limited;
            self.send_elapsed = sent.saturating_sub(tx.first_sent_time);
            self.first_sent_time = sent;
            self.newest_sent = sent;
        }
        tx.delivered_time = None;
    }

    /// The sample of the ACK just processed (`GenerateRateSample`); `min_rtt`
    /// screens out intervals too short to trust. Resets for the next ACK
    /// (Linux's rule; ns-3's keeps the sample, see [`RateSampleRule::Ns3`]).
    pub fn take(&mut self, min_rtt: Option<Time>, losses: u64, rtt: Option<Time>) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            acked_sacked: std::mem::take(&mut self.acked_sacked),
            losses,
            rtt,
            ..RateSample::default()
        };
        if self.rule == RateSampleRule::Ns3 {
            self.take_ns3(&mut rs, min_rtt);
            return rs;
        }
        if !std::mem::take(&mut self.has) {
            return rs;
        }
        let ack_elapsed = self.delivered_time.saturating_sub(self.prior_time);
        rs.interval = self.send_elapsed.max(ack_elapsed);
        rs.delivered = self.delivered - self.prior_delivered;
        rs.prior_delivered = self.prior_delivered;
        rs.is_app_limited = self.sample_app_limited;
        rs.valid = rs.interval > Time::ZERO && min_rtt.is_none_or(|m| rs.interval >= m);
        if rs.valid {
            rs.delivery_rate = rs.delivered as f64 / rs.interval.as_secs_f64();
        }
        rs
    }

    /// ns-3.44's `TcpRateLinux::GenerateSample` (tcp-rate-ops.cc lines
    /// 40–101 at tag ns-3.44) on the sample kept since its last update:
    /// invalid (no delivered count, so BBR counts no round) before the first
    /// update or after a screened one (`m_priorTime` zero); the interval is
    /// the longer of the send and the frozen ACK intervals, the delivered
    /// count is everything delivered since the sample's packet was sent;
    /// an interval below `min_rtt` (`None`: no RTT yet, ns-3's
    /// `Time::Max`) invalidates the sample until the next update; the rate
    /// is recorded unless the sample is app-limited and below the last one
    /// recorded, which then stands.
    fn take_ns3(&mut self, rs: &mut RateSample, min_rtt: Option<Time>) {
        if !self.has {
            return;
        }
        let interval = self.send_elapsed.max(self.ack_elapsed);
        let delivered = self.delivered - self.prior_delivered;
        if min_rtt.is_none_or(|m| interval < m) || interval == Time::ZERO {
            self.has = false;
            return;
        }
        let (d, i) = (u128::from(delivered), u128::from(interval.as_nanos()));
        let (rd, ri) = (
            u128::from(self.rate_delivered),
            u128::from(self.rate_interval.as_nanos()),
        );
        if !self.sample_app_limited || d * ri >= rd * i {
            self.rate_delivered = delivered;
            self.rate_interval = interval;
            self.rate = delivered as f64 / interval.as_secs_f64();
        }
        rs.interval = interval;
        rs.delivered = delivered;
        rs.prior_delivered = self.prior_delivered;
        rs.is_app_limited = self.sample_app_limited;
        rs.valid = true;
        rs.delivery_rate = self.rate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Time = Time::from_millis;

    /// A steady flow: 10 packets of 1000 B sent 1 ms apart, each ACKed 100 ms
    /// after its send: the rate is 1000 B per ms, from both intervals.
    #[test]
    fn steady_flow_rate() {
        let mut r = RateSampler::default();
        let mut sent = Vec::new();
        for i in 0..10 {
            let inflight = if i == 0 { 0 } else { 1000 * i };
            sent.push((r.on_send(MS(i), inflight), MS(i)));
        }
        let mut last = RateSample::default();
        for (i, (tx, at)) in sent.iter_mut().enumerate() {
            r.on_delivered(tx, 1000, *at, MS(100 + i as u64));
            last = r.take(Some(MS(50)), 0, None);
            assert!(last.valid, "{last:?}");
            if i == 0 {
                // 1000 B over the 100 ms since the flight started.
                assert_eq!(last.interval, MS(100));
            }
        }
        // Packet 9 was sent before anything was delivered (its snapshot: 0
        // delivered at 0 ms, flight started at 0); 10 000 B delivered since;
        // send interval 9 ms, ACK interval 109 ms.
        assert_eq!(last.prior_delivered, 0);
        assert_eq!(last.delivered, 10_000);
        assert_eq!(last.interval, MS(109));
        assert!((last.delivery_rate - 10_000.0 / 0.109).abs() < 1e-6);
        assert_eq!(last.acked_sacked, 1000);
    }

    /// A packet SACKed earlier counts once; the sample comes from the most
    /// recently sent packet an ACK delivers.
    #[test]
    fn sacked_counts_once_and_newest_gives_the_sample() {
        let mut r = RateSampler::default();
        let mut a = r.on_send(MS(0), 0);
        let mut b = r.on_send(MS(10), 1000);
        r.on_delivered(&mut b, 1000, MS(10), MS(110));
        let s = r.take(None, 0, None);
        assert_eq!((s.acked_sacked, r.delivered()), (1000, 1000));
        r.on_delivered(&mut b, 1000, MS(10), MS(120)); // already delivered
        r.on_delivered(&mut a, 1000, MS(0), MS(120));
        let s = r.take(None, 0, None);
        assert_eq!((s.acked_sacked, r.delivered()), (1000, 2000));
        assert_eq!(s.prior_delivered, 0);
    }

    /// A flight of one packet A (sent at 0, ACKed at 100 ms), then B and C
    /// sent at 100 and 101 ms from the same snapshot (1000 B delivered at
    /// 100 ms); B is ACKed at 200 ms, C alone at 250 ms.
    fn two_acks_of_one_snapshot(rule: RateSampleRule, min_rtt: Time) -> [RateSample; 3] {
        let mut r = RateSampler::new(rule);
        let mut a = r.on_send(MS(0), 0);
        r.on_delivered(&mut a, 1000, MS(0), MS(100));
        let s0 = r.take(Some(min_rtt), 0, None);
        let mut b = r.on_send(MS(100), 0);
        let mut c = r.on_send(MS(101), 1000);
        r.on_delivered(&mut b, 1000, MS(100), MS(200));
        let s1 = r.take(Some(min_rtt), 0, None);
        r.on_delivered(&mut c, 1000, MS(101), MS(250));
        let s2 = r.take(Some(min_rtt), 0, None);
        [s0, s1, s2]
    }

    /// Linux builds C's ACK its own sample: 2000 B since C's snapshot over
    /// the 150 ms since it (13 333 B/s). ns-3's `TcpRateLinux` keeps B's
    /// sample (C's snapshot is not larger than B's): B's 100-ms interval
    /// with the 2000 B delivered since, 20 000 B/s on a path that delivered
    /// 10 000 B/s (`GenerateSample`, `SkbDelivered` at ns-3.44).
    #[test]
    fn ns3_reuses_the_kept_sample_with_a_larger_count() {
        for rule in [RateSampleRule::Linux, RateSampleRule::Ns3] {
            let [s0, s1, s2] = two_acks_of_one_snapshot(rule, MS(50));
            assert!(s0.valid && s1.valid && s2.valid, "{rule:?}");
            assert_eq!((s0.interval, s0.delivered), (MS(100), 1000));
            assert_eq!((s1.interval, s1.delivered), (MS(100), 1000));
            assert_eq!((s1.prior_delivered, s2.prior_delivered), (1000, 1000));
            assert!((s1.delivery_rate - 10_000.0).abs() < 1e-6);
            assert_eq!(s2.delivered, 2000);
            let (interval, rate) = match rule {
                RateSampleRule::Linux => (MS(150), 2000.0 / 0.150),
                RateSampleRule::Ns3 => (MS(100), 20_000.0),
            };
            assert_eq!(s2.interval, interval, "{rule:?}");
            assert!((s2.delivery_rate - rate).abs() < 1e-6, "{rule:?} {s2:?}");
        }
    }

    /// ns-3 screens by its minimum RTT too, and a screened sample stays
    /// invalid (`m_priorTime` zeroed) until a packet with a larger snapshot
    /// updates it; Linux's rule would take C's 150-ms interval.
    #[test]
    fn ns3_screened_sample_stays_invalid_until_updated() {
        let [_, s1, s2] = two_acks_of_one_snapshot(RateSampleRule::Ns3, MS(120));
        assert!(!s1.valid && s1.delivered == 0 && s1.acked_sacked == 1000);
        assert!(!s2.valid && s2.delivered == 0, "{s2:?}");
        let [_, s1, s2] = two_acks_of_one_snapshot(RateSampleRule::Linux, MS(120));
        assert!(!s1.valid && s2.valid && s2.interval == MS(150));
    }

    /// App-limited samples are flagged until the data sent in the
    /// app-limited phase is delivered.
    #[test]
    fn app_limited_phase() {
        let mut r = RateSampler::default();
        r.on_app_limited(0);
        let mut a = r.on_send(MS(0), 0);
        assert!(a.app_limited);
        r.on_delivered(&mut a, 1000, MS(0), MS(100));
        let s = r.take(None, 0, None);
        assert!(s.is_app_limited);
        let b = r.on_send(MS(100), 0);
        assert!(
            !b.app_limited,
            "delivered 1000 > the mark 1: the phase ended"
        );
    }
}

//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02,
//! Linux `tcp_rate.c`): every transmission records how much had been
//! delivered and when; every ACK turns the most recently sent packet it
//! delivers into a rate sample, delivered bytes over the longer of the send
//! and the ACK intervals. BBR's bandwidth model is built from these samples.

use crate::time::Time;

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
}

impl RateSampler {
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
        // The most recently sent packet delivered gives the sample.
        if !self.has || tx.delivered > self.prior_delivered || sent > self.newest_sent {
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
    /// screens out intervals too short to trust. Resets for the next ACK.
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

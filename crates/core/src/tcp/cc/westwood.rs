//! TCP Westwood+ (Mascolo et al.; Grieco & Mascolo 2004): Reno's window
//! growth, but after a loss the window is set from an end-to-end bandwidth
//! estimate, ssthresh = BWE · RTT_min, instead of being halved. Rules as in
//! Linux `net/ipv4/tcp_westwood.c`; see docs/models/westwood.md.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{reno_grow, CcModel, CongestionControl, Signal, Window};
use crate::config::{ConfigError, Result};
use crate::time::Time;

/// `cc = { kind = "westwood", … }`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WestwoodConfig {
    /// Shortest bandwidth-sample interval: a sample spans at least one RTT
    /// and at least this ("50ms", Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20), > 0.
    #[serde(default = "defaults::min_interval")]
    pub min_interval: Time,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig {
            min_interval: Time::from_millis(50),
        }
    }
}

/// The defaults of [`WestwoodConfig`] for keys not written.
mod defaults {
    use crate::time::Time;

    pub fn min_interval() -> Time {
        super::WestwoodConfig::default().min_interval
    }
}

impl CcModel for WestwoodConfig {
    fn validate(&self) -> Result<()> {
        if self.min_interval == Time::ZERO {
            return Err(ConfigError::new(
                "min_interval",
                "\"0s\"",
                "is zero; it must be positive",
            ));
        }
        Ok(())
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(WestwoodCc::new(*self))
    }
}

/// One step of Westwood+'s low-pass filter: 7/8 of the old value, 1/8 of
/// the new (Linux `westwood_do_filter`).
fn filter(old: f64, sample: f64) -> f64 {
    (7.0 * old + sample) / 8.0
}

/// Westwood+ state: the bandwidth estimate and the minimum RTT.
#[derive(Clone, Debug, PartialEq)]
pub struct WestwoodCc {
    /// Growth by the bytes acknowledged (`[tcp] abc`).
    abc: bool,
    cfg: WestwoodConfig,
    /// Bytes acknowledged in the current sample interval (Linux `bk`).
    bk: u64,
    /// Start of the current sample interval (`rtt_win_sx`); `None` before the first ACK.
    win_start: Option<Time>,
    /// The first filter stage (`bw_ns_est`) and the estimate BWE (`bw_est`), bytes/s.
    bw_ns_est: f64,
    bw_est: f64,
    /// Latest RTT sample (`rtt`) and the minimum (`rtt_min`).
    rtt: Option<Time>,
    rtt_min: Option<Time>,
    /// Take the next RTT sample as the minimum (after a timeout: `reset_rtt_min`).
    reset_rtt_min: bool,
    /// Duplicate-ACK credit (`accounted`), bytes, and the sender's MSS.
    accounted: u64,
    mss: u64,
}

impl WestwoodCc {
    /// Westwood+ with `cfg`, before any ACK.
    pub fn new(cfg: WestwoodConfig) -> WestwoodCc {
        WestwoodCc {
            abc: false,
            cfg,
            bk: 0,
            win_start: None,
            bw_ns_est: 0.0,
            bw_est: 0.0,
            rtt: None,
            rtt_min: None,
            reset_rtt_min: false,
            accounted: 0,
            mss: 0,
        }
    }

    /// The bandwidth estimate BWE, bytes per second (0 before the first sample).
    pub fn bandwidth(&self) -> f64 {
        self.bw_est
    }

    /// The smallest RTT seen since the last timeout.
    pub fn rtt_min(&self) -> Option<Time> {
        self.rtt_min
    }

    /// Bytes an ACK stands for (Linux `westwood_acked_count`): a duplicate
    /// ACK counts one MSS (a segment left the network) on credit, which a
    /// later cumulative ACK pays back.
    fn acked_count(&mut self, cumul: u64) -> u64 {
        let mss = self.mss.max(1);
        let mut cumul = cumul;
        if cumul == 0 {
            self.accounted += mss;
            cumul = mss;
        }
        if cumul > mss {
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = mss;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        cumul
    }

    /// Close the sample interval if it has lasted an RTT and `min_interval`
    /// (`westwood_update_window`): one bandwidth sample, bk / interval,
    /// through the two 7/8 filter stages (`westwood_filter`).
    fn update_window(&mut self, now: Time) {
        let Some(start) = self.win_start else {
            self.win_start = Some(now);
            return;
        };
        let delta = now.saturating_sub(start);
        let Some(rtt) = self.rtt else { return };
        if delta > rtt.max(self.cfg.min_interval) {
            let sample = self.bk as f64 / delta.as_secs_f64();
            if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
                self.bw_ns_est = sample;
                self.bw_est = sample;
            } else {
                self.bw_ns_est = filter(self.bw_ns_est, sample);
                self.bw_est = filter(self.bw_est, self.bw_ns_est);
            }
            self.bk = 0;
            self.win_start = Some(now);
        }
    }

    /// BWE · RTT_min in bytes, at least 2 MSS (`tcp_westwood_bw_rttmin`).
    fn bw_rtt_min(&self, mss: u64) -> u64 {
        let rtt = self.rtt_min.map_or(0.0, Time::as_secs_f64);
        ((self.bw_est * rtt) as u64).max(2 * mss)
    }
}

impl CongestionControl for WestwoodCc {
    fn set_abc(&mut self, on: bool) {
        self.abc = on;
    }

    fn name(&self) -> &'static str {
        "westwood"
    }

    fn on_ack_observed(&mut self, acked: u64, rtt: Option<Time>, now: Time) {
        self.update_window(now);
        self.bk += self.acked_count(acked);
        if let Some(r) = rtt {
            self.rtt = Some(r);
            self.rtt_min = Some(match self.rtt_min {
                Some(m) if !self.reset_rtt_min => m.min(r),
                _ => r,
            });
            self.reset_rtt_min = false;
        }
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: Option<Time>, now: Time) {
        self.mss = w.mss;
        let _ = (rtt, now);
        reno_grow(w, acked, self.abc);
    }

    fn on_congestion(&mut self, w: &mut Window, signal: Signal, _flight: u64, _now: Time) {
        self.mss = w.mss;
        w.ssthresh = self.bw_rtt_min(w.mss);
        match signal {
            // After 3 duplicate ACKs or an ECN echo: cwnd = min(cwnd, ssthresh)
            // (Mascolo et al.; Linux sets both at the end of recovery/CWR).
            Signal::FastRetransmit | Signal::Ecn => w.cwnd = w.cwnd.min(w.ssthresh),
            Signal::Timeout => {
                w.cwnd = w.mss;
                self.reset_rtt_min = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    /// Feed one ACK of `bytes` at `t` ms with a 100 ms RTT sample.
    fn ack(cc: &mut WestwoodCc, bytes: u64, t: u64) {
        cc.mss = MSS;
        cc.on_ack_observed(bytes, Some(ms(100)), ms(t));
    }

    /// One ACK every 10 ms with a 100 ms RTT: an interval closes at the
    /// first ACK more than 100 ms after it opened. 10 kB per ACK gives the
    /// first sample 110 kB / 0.11 s = 1 MB/s, taken as BWE; then 20 kB per
    /// ACK gives 2 MB/s, which passes the two 7/8 stages:
    /// ns = (7·1 + 2)/8 = 1.125 MB/s, BWE = (7·1 + 1.125)/8 = 1.015625 MB/s.
    #[test]
    fn two_stage_filter_by_hand() {
        let mut cc = WestwoodCc::new(WestwoodConfig::default());
        for i in 0..=10 {
            ack(&mut cc, 10_000, 10 * i);
        }
        assert_eq!(cc.bandwidth(), 0.0, "no interval closed yet");
        for i in 11..=21 {
            ack(&mut cc, 20_000, 10 * i);
        }
        assert!((cc.bandwidth() - 1e6).abs() < 1e-6, "{}", cc.bandwidth());
        ack(&mut cc, 20_000, 220);
        assert!((cc.bw_ns_est - 1.125e6).abs() < 1e-6, "{}", cc.bw_ns_est);
        assert!(
            (cc.bandwidth() - 1.015625e6).abs() < 1e-6,
            "{}",
            cc.bandwidth()
        );
    }

    /// Intervals shorter than 50 ms never close, however small the RTT.
    #[test]
    fn samples_span_at_least_min_interval() {
        let mut cc = WestwoodCc::new(WestwoodConfig::default());
        cc.mss = MSS;
        for i in 0..=5 {
            cc.on_ack_observed(1000, Some(ms(1)), ms(10 * i));
        }
        assert_eq!(cc.bandwidth(), 0.0, "50 ms not passed yet");
        cc.on_ack_observed(1000, Some(ms(1)), ms(60));
        assert!(cc.bandwidth() > 0.0);
    }

    /// Linux `westwood_acked_count`: dupACKs count an MSS each on credit;
    /// the cumulative ACK that follows pays it back.
    #[test]
    fn duplicate_acks_are_counted_on_credit() {
        let mut cc = WestwoodCc::new(WestwoodConfig::default());
        cc.mss = MSS;
        assert_eq!(cc.acked_count(0), MSS);
        assert_eq!(cc.acked_count(0), MSS);
        assert_eq!(cc.accounted, 2 * MSS);
        // A cumulative ACK of 5 segments: 2 already counted.
        assert_eq!(cc.acked_count(5 * MSS), 3 * MSS);
        assert_eq!(cc.accounted, 0);
        // A delayed ACK of 2 segments without credit counts both.
        assert_eq!(cc.acked_count(2 * MSS), 2 * MSS);
    }

    /// ssthresh = BWE · RTT_min after 3 dupACKs (cwnd = min(cwnd, ssthresh))
    /// and after a timeout (cwnd = 1 MSS); at least 2 MSS without an estimate.
    #[test]
    fn reductions_use_bwe_times_rtt_min() {
        let mut cc = WestwoodCc::new(WestwoodConfig::default());
        cc.bw_est = 500_000.0; // 500 kB/s
        cc.rtt_min = Some(ms(40)); // -> 20 kB
        let mut w = Window {
            cwnd: 50_000,
            ssthresh: u64::MAX / 2,
            mss: MSS,
        };
        cc.on_congestion(&mut w, Signal::FastRetransmit, 50_000, ms(1));
        assert_eq!((w.cwnd, w.ssthresh), (20_000, 20_000));
        let mut small = Window { cwnd: 8_000, ..w };
        cc.on_congestion(&mut small, Signal::FastRetransmit, 8_000, ms(1));
        assert_eq!((small.cwnd, small.ssthresh), (8_000, 20_000), "no increase");
        cc.on_congestion(&mut w, Signal::Timeout, 20_000, ms(2));
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 20_000));
        let mut fresh = WestwoodCc::new(WestwoodConfig::default());
        fresh.on_congestion(&mut w, Signal::Timeout, 20_000, ms(2));
        assert_eq!(w.ssthresh, 2 * MSS);
    }

    /// After a timeout the next RTT sample replaces the minimum (Linux
    /// `reset_rtt_min`): the path may have changed.
    #[test]
    fn timeout_resets_rtt_min() {
        let mut cc = WestwoodCc::new(WestwoodConfig::default());
        cc.mss = MSS;
        cc.on_ack_observed(MSS, Some(ms(30)), ms(1));
        cc.on_ack_observed(MSS, Some(ms(50)), ms(2));
        assert_eq!(cc.rtt_min(), Some(ms(30)));
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX / 2,
            mss: MSS,
        };
        cc.on_congestion(&mut w, Signal::Timeout, 10 * MSS, ms(3));
        cc.on_ack_observed(MSS, Some(ms(80)), ms(4));
        assert_eq!(cc.rtt_min(), Some(ms(80)));
    }

    proptest::proptest! {
        /// The estimate is a weighted mean of interval samples: finite, not
        /// negative, and never above all bytes counted so far delivered in
        /// the shortest interval a sample can span (`min_interval`).
        #[test]
        fn estimate_is_bounded(
            acks in proptest::collection::vec((0u64..20_000, 1u64..40, 1u64..300), 1..300),
        ) {
            let mut cc = WestwoodCc::new(WestwoodConfig::default());
            cc.mss = MSS;
            let mut t = Time::ZERO;
            let mut counted = 0u64;
            for (b, dt, rtt) in acks {
                t += ms(dt);
                cc.on_ack_observed(b, Some(ms(rtt)), t);
                counted += b.max(MSS);
                let bw = cc.bandwidth();
                proptest::prop_assert!(bw.is_finite() && bw >= 0.0);
                proptest::prop_assert!(bw <= counted as f64 / 0.05 + 1e-6);
            }
        }
    }
}

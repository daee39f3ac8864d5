//! TCP Westwood+ (Mascolo et al.; Grieco & Mascolo 2004): Reno's window
//! growth, but after a loss the window is set from an end-to-end bandwidth
//! estimate, ssthresh = BWE · RTT_min, instead of being halved. Rules as in
//! Linux `net/ipv4/tcp_westwood.c`, or with `filter = "ns3"` as ns-3.44's
//! `TcpWestwoodPlus`; see docs/models/westwood.md.

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
    /// The bandwidth estimator: "linux" (`tcp_westwood.c`: samples over at
    /// least max(RTT, `min_interval`), closed by an ACK, two 7/8 EWMA
    /// stages) or "ns3" (ns-3.44's `TcpWestwoodPlus`: samples over one
    /// smoothed RTT on a timer, Tustin's filter with α 0.9). Default
    /// "linux" ("ns3" with `[tcp] profile = "ns3"`).
    #[serde(default)]
    pub filter: Option<WestwoodFilter>,
}

impl Default for WestwoodConfig {
    fn default() -> Self {
        WestwoodConfig {
            min_interval: Time::from_millis(50),
            filter: None,
        }
    }
}

/// `cc = { kind = "westwood", filter = … }`: whose bandwidth estimator Westwood+ runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WestwoodFilter {
    /// Linux `net/ipv4/tcp_westwood.c`: a sample closes at the first ACK
    /// more than max(RTT, `min_interval`) after the interval opened;
    /// `bw_ns_est` and `bw_est` are two 7/8 EWMA stages; RTT_min is the
    /// smallest RTT sample, taken afresh after a timeout.
    #[default]
    Linux,
    /// ns-3.44's `TcpWestwoodPlus` (`src/internet/model/tcp-westwood-plus.cc`
    /// at tag ns-3.44): the first ACK after a sample opens the next one,
    /// which a timer closes one smoothed RTT later (`PktsAcked` schedules
    /// `EstimateBW` after `m_srtt`; no 50-ms floor); sample = bytes acked /
    /// that SRTT, filtered by Tustin's approximation, BWE = 0.9·BWE +
    /// 0.05·(sample + previous sample), from 0, in whole bit/s as ns-3's
    /// `DataRate`; ssthresh = BWE · `m_minRtt`, the smallest SRTT (never
    /// reset; the SRTT starts from the handshake's RTT sample, as ns-3's
    /// socket's does); and the window after a fast retransmit or an ECN reduction
    /// is ssthresh (ns-3's socket sets cwnd = ssthresh when recovery or CWR
    /// ends), where Linux's rule keeps min(cwnd, ssthresh).
    Ns3,
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
    /// The estimator of `filter = "ns3"` (`None`: Linux's).
    ns3: Option<Ns3Estimator>,
}

/// ns-3.44's `TcpWestwoodPlus` estimator ([`WestwoodFilter::Ns3`]).
#[derive(Clone, Debug, Default, PartialEq)]
struct Ns3Estimator {
    /// The smoothed RTT as ns-3's `RttMeanDeviation` keeps it (α = 1/8 by
    /// Jacobson's integer shift, in nanoseconds); `None` before a sample.
    srtt: Option<Time>,
    /// `m_minRtt`: the smallest SRTT.
    min_srtt: Option<Time>,
    /// The open sample: when its timer fires and the SRTT it was armed
    /// with (`m_IsCount` and `EstimateBW`'s argument).
    open: Option<(Time, Time)>,
    /// Bytes acknowledged in the open sample (`m_ackedSegments` · MSS).
    acked: u64,
    /// `m_currentBW` and `m_lastSampleBW`, bit/s (ns-3's integer `DataRate`).
    bw_bps: u64,
    last_sample_bps: u64,
}

impl Ns3Estimator {
    /// `RttMeanDeviation::Measurement`: the first sample is the SRTT, then
    /// SRTT += (sample − SRTT) >> 3 in integer nanoseconds.
    fn on_rtt(&mut self, r: Time) {
        let srtt = match self.srtt {
            None => r,
            Some(s) => {
                let (s, m) = (s.as_nanos() as i64, r.as_nanos() as i64);
                Time::from_nanos((((s << 3) + (m - s)) >> 3) as u64)
            }
        };
        self.srtt = Some(srtt);
        self.min_srtt = Some(self.min_srtt.map_or(srtt, |m| m.min(srtt)));
    }

    /// `EstimateBW` of the open sample if its timer has fired by `now`.
    fn close_due(&mut self, now: Time) {
        let Some((end, rtt)) = self.open else { return };
        if now < end {
            return;
        }
        self.open = None;
        // ns-3's DataRate holds whole bit/s: every product is truncated.
        let sample = (self.acked as f64 * 8.0 / rtt.as_secs_f64()) as u64;
        self.acked = 0;
        const ALPHA: f64 = 0.9;
        let old = (self.bw_bps as f64 * ALPHA) as u64;
        let half = ((sample + self.last_sample_bps) as f64 * 0.5) as u64;
        self.bw_bps = old + (half as f64 * (1.0 - ALPHA)) as u64;
        self.last_sample_bps = sample;
    }

    /// `PktsAcked` (after the ACK's RTT sample): count the bytes, and open
    /// a sample of one SRTT if none is open. Nothing before the first RTT
    /// sample (`rtt.IsZero()`).
    fn on_ack(&mut self, bytes: u64, now: Time) {
        self.close_due(now);
        let Some(srtt) = self.srtt.filter(|s| *s > Time::ZERO) else {
            return;
        };
        self.acked += bytes;
        if self.open.is_none() {
            self.open = Some((now + srtt, srtt));
        }
    }

    /// `GetSsThresh`: BWE · `m_minRtt` / 8 bytes, truncated, at least 2 MSS.
    fn ssthresh(&self, mss: u64) -> u64 {
        let rtt = self.min_srtt.map_or(0.0, Time::as_secs_f64);
        let bytes = (self.bw_bps as f64 * rtt / 8.0) as u32;
        u64::from(bytes).max(2 * mss)
    }
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
            ns3: (cfg.filter == Some(WestwoodFilter::Ns3)).then(Ns3Estimator::default),
        }
    }

    /// The bandwidth estimate BWE, bytes per second (0 before the first sample).
    pub fn bandwidth(&self) -> f64 {
        match &self.ns3 {
            Some(e) => e.bw_bps as f64 / 8.0,
            None => self.bw_est,
        }
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
        if self.ns3.is_some() {
            // A duplicate ACK counts a segment, as in Linux's credit (ns-3's
            // `PktsAcked(1)` at a duplicate ACK).
            let counted = self.acked_count(acked);
            if let Some(e) = &mut self.ns3 {
                // ns-3 updates the SRTT (`EstimateRtt`) before the
                // congestion control sees the ACK (`PktsAcked`).
                if let Some(r) = rtt {
                    e.on_rtt(r);
                }
                e.on_ack(counted, now);
            }
            return;
        }
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

    fn on_handshake_rtt(&mut self, rtt: Time) {
        // ns-3.44: `ProcessSynSent` calls `EstimateRtt` on the SYN-ACK, so
        // the socket's SRTT starts from the handshake's sample and
        // `m_minRtt` (the smallest SRTT, never reset) includes it — an RTT
        // without a full packet's serialization or a delayed-ACK wait,
        // which then sets ssthresh = BWE · m_minRtt for the whole run.
        if let Some(e) = &mut self.ns3 {
            e.on_rtt(rtt);
        }
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: Option<Time>, now: Time) {
        self.mss = w.mss;
        let _ = (rtt, now);
        reno_grow(w, acked, self.abc);
    }

    fn on_congestion(&mut self, w: &mut Window, signal: Signal, _flight: u64, now: Time) {
        self.mss = w.mss;
        if let Some(e) = &mut self.ns3 {
            // The sample whose timer fired before this signal counts.
            e.close_due(now);
            w.ssthresh = e.ssthresh(w.mss);
            w.cwnd = match signal {
                Signal::FastRetransmit | Signal::Ecn => w.ssthresh,
                Signal::Timeout => w.mss,
            };
            return;
        }
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

    fn ns3_cc() -> WestwoodCc {
        let mut cc = WestwoodCc::new(WestwoodConfig {
            filter: Some(WestwoodFilter::Ns3),
            ..WestwoodConfig::default()
        });
        cc.mss = MSS;
        cc
    }

    /// ns-3.44's estimator by hand: with a 100 ms RTT the first ACK (at 0)
    /// opens a sample that a timer closes at 100 ms (the SRTT then); 10
    /// ACKs of 10 kB in it give 8 Mbit/s, Tustin from 0: 0.05 · 8e6 =
    /// 400 kbit/s — 399 999 bit/s in ns-3's integer `DataRate` (1 − 0.9 is
    /// 0.09999999999999998). The ACK at 100 ms opens the next sample; 10 of
    /// 20 kB give 16 Mbit/s: ⌊0.9 · 399 999⌋ + ⌊0.1 · 12e6⌋ = 359 999 +
    /// 1 199 999 = 1 559 998 bit/s. Linux's filter on the same 10-kB ACKs
    /// takes its first sample whole (110 kB over 120 ms, 7.3 Mbit/s).
    #[test]
    fn ns3_tustin_filter_by_hand() {
        let mut cc = ns3_cc();
        for i in 0..10 {
            ack(&mut cc, 10_000, 10 * i);
        }
        assert_eq!(cc.bandwidth(), 0.0, "the timer has not fired");
        for i in 10..20 {
            ack(&mut cc, 20_000, 10 * i);
        }
        assert_eq!(cc.bandwidth(), 399_999.0 / 8.0);
        let mut w = Window {
            cwnd: 100 * MSS,
            ssthresh: u64::MAX / 2,
            mss: MSS,
        };
        // The congestion signal at 200 ms closes the second sample first;
        // ssthresh = BWE · min SRTT (100 ms) / 8, and cwnd = ssthresh.
        cc.on_congestion(&mut w, Signal::FastRetransmit, 100 * MSS, ms(200));
        assert_eq!(cc.bandwidth(), 1_559_998.0 / 8.0);
        assert_eq!(w.ssthresh, (1_559_998.0_f64 * 0.1 / 8.0) as u64);
        assert_eq!(w.cwnd, w.ssthresh);
        let mut linux = WestwoodCc::new(WestwoodConfig::default());
        for i in 0..=10 {
            ack(&mut linux, 10_000, 10 * i);
        }
        assert_eq!(linux.bandwidth(), 0.0);
        ack(&mut linux, 10_000, 120);
        assert!(
            (linux.bandwidth() - 110_000.0 / 0.12).abs() < 1e-6,
            "{}",
            linux.bandwidth()
        );
    }

    /// ns-3's samples span one SRTT with no 50-ms floor (Linux's
    /// `samples_span_at_least_min_interval` case: a 1 ms RTT), the SRTT is
    /// ns-3's (first sample, then 1/8 steps in integer nanoseconds), and
    /// the minimum RTT is the smallest SRTT, kept across a timeout.
    #[test]
    fn ns3_samples_span_one_srtt_and_keep_the_min_srtt() {
        let mut cc = ns3_cc();
        cc.on_ack_observed(1000, Some(ms(1)), ms(0));
        cc.on_ack_observed(1000, None, Time::from_micros(500));
        assert_eq!(cc.bandwidth(), 0.0);
        cc.on_ack_observed(1000, None, ms(1));
        // 2000 B in 1 ms = 16 Mbit/s; Tustin from 0 gives ⌊0.1 · 8e6⌋.
        assert_eq!(cc.bandwidth(), 799_999.0 / 8.0);
        let e = cc.ns3.as_ref().unwrap();
        assert_eq!((e.srtt, e.min_srtt), (Some(ms(1)), Some(ms(1))));
        cc.on_ack_observed(1000, Some(ms(9)), ms(2));
        // 1 ms + (9 − 1) ms / 8 = 2 ms.
        assert_eq!(cc.ns3.as_ref().unwrap().srtt, Some(ms(2)));
        let mut w = Window {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX / 2,
            mss: MSS,
        };
        cc.on_congestion(&mut w, Signal::Timeout, 10 * MSS, ms(3));
        assert_eq!(w.cwnd, MSS);
        cc.on_ack_observed(1000, Some(ms(80)), ms(4));
        assert_eq!(cc.ns3.as_ref().unwrap().min_srtt, Some(ms(1)), "not reset");
    }

    /// ns-3's SRTT and `m_minRtt` start from the handshake's RTT sample
    /// (`ProcessSynSent` → `EstimateRtt`): a 40 ms SYN exchange then data
    /// samples of 42 ms give SRTT 40 + 2/8 = 40.25 ms and m_minRtt 40 ms, so
    /// ssthresh = BWE · 40 ms; Linux's estimator is not fed it.
    #[test]
    fn ns3_min_rtt_starts_with_the_handshake_sample() {
        let mut cc = ns3_cc();
        cc.on_handshake_rtt(ms(40));
        cc.on_ack_observed(1000, Some(ms(42)), ms(100));
        let e = cc.ns3.as_ref().unwrap();
        assert_eq!(e.srtt, Some(Time::from_micros(40_250)));
        assert_eq!(e.min_srtt, Some(ms(40)));
        let mut linux = WestwoodCc::new(WestwoodConfig::default());
        linux.on_handshake_rtt(ms(40));
        assert_eq!(linux.rtt_min(), None);
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

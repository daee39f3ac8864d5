//! Pluggable congestion control.
//!
//! A [`CongestionControl`] owns the window arithmetic: how `cwnd` grows on
//! ACKs and how `cwnd`/`ssthresh` respond to a congestion [`Signal`]. Loss
//! *recovery* (Reno / NewReno window inflation, the SACK pipe, go-back-N after
//! an RTO) stays in the sender and works from whatever window the algorithm set,
//! so an algorithm may, for example, decline to reduce on
//! [`Signal::FastRetransmit`] (LT-TCP) without touching the recovery code.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod newreno;
pub mod westwood;

use std::fmt;

use crate::config::kind::tagged_enum;
use crate::config::Result;
use crate::time::Time;

use super::rate::RateSample;

pub use bbr::{BbrCc, BbrConfig};
pub use cubic::{CubicCc, CubicConfig};
pub use dctcp::{DctcpCc, DctcpConfig, DctcpEcho, DctcpLoss};
pub use newreno::{reno_grow, NewRenoCc, NewRenoConfig, RenoConfig};
pub use westwood::{WestwoodCc, WestwoodConfig};

/// The configuration of one congestion-control algorithm: checks its
/// parameters and builds the algorithm.
pub trait CcModel: fmt::Debug {
    /// Check the parameters; paths are relative to the `cc` table.
    fn validate(&self) -> Result<()>;
    /// The algorithm, for one flow (of a valid configuration).
    fn build(&self) -> Box<dyn CongestionControl>;
    /// Whether the algorithm needs ECN (`[tcp] ecn = true`) and the
    /// receiver's exact CE echo (DCTCP). Default false.
    fn needs_ecn(&self) -> bool {
        false
    }
}

tagged_enum! {
    /// `[tcp] cc`: the congestion control, `cc = "cubic"` or
    /// `cc = { kind = "cubic", beta = 0.7, … }`; default `"newreno"`.
    pub enum CcConfig: dyn CcModel, "congestion control", tag "kind", default "newreno" {
        /// RFC 5681 AIMD (Linux's "reno").
        NewReno(NewRenoConfig) = "newreno",
        /// The same as `newreno` (Linux's name).
        Reno(RenoConfig) = "reno",
        /// CUBIC, RFC 9438, with HyStart++ (RFC 9406) or the original HyStart.
        Cubic(CubicConfig) = "cubic",
        /// Westwood+: ssthresh = bandwidth estimate × minimum RTT after a loss.
        Westwood(WestwoodConfig) = "westwood",
        /// DCTCP, RFC 8257: window cut by α/2, α the fraction of CE-marked bytes.
        Dctcp(DctcpConfig) = "dctcp",
        /// BBR v1: a model of bottleneck bandwidth and round-trip propagation
        /// time; paced (draft-cardwell-iccrg-bbr-congestion-control-00).
        Bbr(BbrConfig) = "bbr",
    }
}

impl CcConfig {
    /// RFC 5681's AIMD (`"newreno"` or its Linux name `"reno"`).
    pub fn is_newreno(&self) -> bool {
        matches!(self, CcConfig::NewReno(_) | CcConfig::Reno(_))
    }
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::NewReno(NewRenoConfig::default())
    }
}

/// The sender's window, as seen by a congestion-control algorithm (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window.
    pub cwnd: u64,
    /// Slow-start threshold.
    pub ssthresh: u64,
    /// Sender maximum segment size (payload bytes).
    pub mss: u64,
}

/// What the sender knows when it hands an algorithm a rate sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckContext {
    /// The ACK's arrival time.
    pub now: Time,
    /// Bytes in flight after the ACK (sent, not ACKed, SACKed or retransmitted away).
    pub inflight: u64,
    /// Bytes in flight before the ACK.
    pub prior_inflight: u64,
    /// Bytes delivered so far (the rate sampler's `C.delivered`).
    pub delivered: u64,
    /// Loss recovery (fast recovery, or after a timeout until its recovery point).
    pub in_recovery: bool,
    /// The smoothed RTT, if measured.
    pub srtt: Option<Time>,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Loss detected by duplicate ACKs / SACK: entering fast recovery.
    FastRetransmit,
    /// An ECN-Echo (RFC 3168), at most once per window of data.
    Ecn,
    /// The retransmission timer expired.
    Timeout,
}

/// A congestion-control algorithm.
pub trait CongestionControl: fmt::Debug + Send {
    /// Short name, for logs.
    fn name(&self) -> &'static str;

    /// Every ACK the sender accepts (including duplicate ACKs and ACKs during
    /// loss recovery), before any other hook: `acked` is the number of bytes
    /// newly acknowledged cumulatively (0 for a duplicate ACK), `rtt` the RTT
    /// sample taken from it. For estimators (e.g. Westwood+); must not change
    /// the window. Default: nothing.
    fn on_ack_observed(&mut self, acked: u64, rtt: Option<Time>, now: Time) {
        let _ = (acked, rtt, now);
    }

    /// The RTT sample of the handshake (the SYN-ACK that completes it), for
    /// estimators that take the connection's RTT history from its start as
    /// ns-3's socket does (Westwood+ with `filter = "ns3"`: ns-3's SRTT and
    /// `m_minRtt` begin with this sample). Must not change the window.
    /// Default: nothing.
    fn on_handshake_rtt(&mut self, rtt: Time) {
        let _ = rtt;
    }

    /// Every ACK that advances the cumulative ACK, before
    /// [`CongestionControl::on_ack_observed`]: the new cumulative `ack` and
    /// one past the highest byte sent so far (`snd_max`), for algorithms
    /// that count round trips (HyStart++: a round ends when the data sent at
    /// its start is acknowledged). Must not change the window. Default: nothing.
    fn on_ack_numbers(&mut self, ack: u64, snd_max: u64) {
        let _ = (ack, snd_max);
    }

    /// Every ACK that advances the cumulative ACK, after
    /// [`CongestionControl::on_ack_numbers`]: the bytes it newly acknowledges
    /// and whether it carries ECN-Echo (with ECN on). For DCTCP's estimate of
    /// the marked fraction; must not change the window. Default: nothing.
    fn on_ecn_feedback(&mut self, acked: u64, ece: bool) {
        let _ = (acked, ece);
    }

    /// An ACK acknowledged `acked` new bytes outside loss recovery (and caused
    /// no ECN reduction): grow the window.
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: Option<Time>, now: Time);

    /// A congestion signal; `flight` is the data outstanding (bytes) when it
    /// was detected. The sender keeps `cwnd >= mss` afterwards.
    fn on_congestion(&mut self, w: &mut Window, signal: Signal, flight: u64, now: Time);

    /// Grow the window by the bytes each ACK newly acknowledges (RFC 3465,
    /// as Linux's `tcp_slow_start` / `tcp_cong_avoid_ai` count segments)
    /// instead of once per ACK (`[tcp] abc`). Called once, before any ACK.
    /// Default: ignored (an algorithm that already counts bytes, or sets the
    /// window itself).
    fn set_abc(&mut self, on: bool) {
        let _ = on;
    }

    /// Whether the algorithm takes delivery-rate samples
    /// ([`on_rate_sample`](Self::on_rate_sample)) and sets its own pacing
    /// rate. Such an algorithm sets the window itself on every ACK, loss
    /// recovery included, so the sender runs no PRR for it (ns-3's
    /// `HasCongControl`, Linux's `cong_control`). Default false.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// After the sender has processed an ACK (loss recovery included): the
    /// ACK's rate sample. The window the algorithm leaves stands. Default: nothing.
    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample, ctx: &AckContext) {
        let _ = (w, rs, ctx);
    }

    /// The pacing rate the algorithm asks for, bytes per second (`None`: the
    /// sender's own rule when `pacing` is on). Default `None`.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
}

/// Build the algorithm of `cfg` (a valid configuration).
pub fn build(cfg: &CcConfig) -> Box<dyn CongestionControl> {
    cfg.model().build()
}

//! Pluggable congestion control.
//!
//! A [`CongestionControl`] owns the window arithmetic: how `cwnd` grows on
//! ACKs and how `cwnd`/`ssthresh` respond to a congestion [`Signal`]. Loss
//! *recovery* (Reno / NewReno window inflation, the SACK pipe, go-back-N after
//! an RTO) stays in the sender and works from whatever window the algorithm set,
//! so an algorithm may, for example, decline to reduce on
//! [`Signal::FastRetransmit`] (LT-TCP) without touching the recovery code.

pub mod newreno;

use std::fmt;

use super::CcKind;
use crate::time::Time;

pub use newreno::NewRenoCc;

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

    /// An ACK acknowledged `acked` new bytes outside loss recovery (and caused
    /// no ECN reduction): grow the window.
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: Option<Time>, now: Time);

    /// A congestion signal; `flight` is the data outstanding (bytes) when it
    /// was detected. The sender keeps `cwnd >= mss` afterwards.
    fn on_congestion(&mut self, w: &mut Window, signal: Signal, flight: u64, now: Time);
}

/// Build the algorithm selected by `kind`.
pub fn build(kind: CcKind) -> Box<dyn CongestionControl> {
    match kind {
        CcKind::NewReno => Box::new(NewRenoCc),
    }
}

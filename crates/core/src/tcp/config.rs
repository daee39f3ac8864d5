//! The TCP settings of a scenario: `[tcp]` (every flow) and `flows[].tcp`
//! (those flows), each an overlay of the keys given on the settings below
//! it, and [`TcpConfig::validate`], which owns every rule a TCP
//! configuration must keep.

use schemars::JsonSchema;
use serde::Deserialize;

use super::lt::MSS_MAX;
use super::rate::{RateLosses, RateSampleRule};
use super::{
    Bin, CcConfig, CutFlight, EstimatorSide, IdleRestart, LtConfig, PrrVariant, ReactiveLimit,
    RtoEstimator, SackRules, TcpConfig, Variant, WindowCuts,
};
use crate::config::{check_range, Bytes, ConfigError, Result};
use crate::time::Time;

/// `[tcp] profile`: every default as the simulator or stack of that name
/// sets it (the table in docs/models/tcp.md gives each value and its source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// ns-2.35's `Agent/TCP` and `Agent/TCPSink` (`tcl/lib/ns-default.tcl`).
    Ns2,
    /// ns-3.44's `TcpSocket`/`TcpSocketBase` attribute defaults.
    Ns3,
    /// Linux 6.x with its default sysctls.
    Linux,
}

impl Profile {
    /// The TCP configuration this profile starts from.
    pub fn base(self) -> TcpConfig {
        let d = TcpConfig::default();
        let mut c = match self {
            Profile::Ns2 => TcpConfig {
                mss: 1000,                             // packetSize_ (useHeaders_: + 40 header bytes)
                initial_window: 2,                     // windowInit_
                rwnd: 20 * 1000,                       // window_ 20 packets
                timestamps: false,                     // timestamps_
                sack_blocks_max: 3,                    // TCPSink maxSackBlocks_
                delayed_ack: false,                    // TCPSink: an ACK per segment
                min_rto: Time::from_millis(200),       // minrto_
                max_rto: Time::from_secs(60),          // maxrto_
                initial_rto: Time::from_secs(3),       // rtxcur_init_
                rto_tick: Some(Time::from_millis(10)), // tcpTick_
                min_rto_after_backoff: false,          // rfc2988_ true
                limited_transmit: true,                // singledup_ 1
                ecn_cut_covers_loss: true,             // dupack_action after an ECN cut
                reno_rto_guard: true,                  // Reno dupack_action, bug_fix_ true
                sack_rules: SackRules::Ns2,            // Agent/TCP/Sack1
                window_cuts: WindowCuts::Ns2,          // TcpAgent::slowdown, precisionReduce_
                ..d
            },
            Profile::Ns3 => TcpConfig {
                variant: Variant::Sack, // TcpSocketBase::Sack
                mss: 536,               // TcpSocket::SegmentSize
                initial_window: 10,     // TcpSocket::InitialCwnd
                rwnd: 131_072,          // TcpSocket::RcvBufSize
                timestamps: true,       // TcpSocketBase::Timestamp
                sack_blocks_max: 3,
                delayed_ack: true,                       // DelAckCount 2
                delack_timeout: Time::from_millis(200),  // DelAckTimeout
                quick_ack_first: true,                   // ProcessSynRcvd: first data ACKed
                min_rto: Time::from_secs(1),             // MinRto
                initial_rto: Time::from_secs(1),         // RttEstimator::InitialEstimation
                syn_rto: Some(Time::from_secs(3)),       // TcpSocket::ConnTimeout
                clock_granularity: Time::from_millis(1), // ClockGranularity
                prr: true,                               // TcpPrrRecovery
                prr_variant: PrrVariant::Ns3,            // as ns-3.44's TcpPrrRecovery has it
                rto_keeps_sack: true,                    // ReTxTimeout keeps the scoreboard
                rto_resend_lost: true,                   // NextSeg rule 1 in CA_LOSS too
                sacked_rtx_in_pipe: true,                // TcpTxBuffer keeps m_retrans when SACKed
                partial_ack_resend: true, // ProcessAck's DoRetransmit on a partial ACK
                ts_rtt_ms: true,          // TcpOptionTS: RTT in whole ms from the echo
                cwr_per_echo: true,       // ECN_ECE_RCVD at every echo
                cut_flight: CutFlight::Pipe, // GetSsThresh(BytesInFlight())
                idle_restart: IdleRestart::Off, // CA_EVENT_CWND_RESTART never raised
                rate_sample: RateSampleRule::Ns3, // TcpRateLinux keeps its sample
                rate_losses: RateLosses::Ns3, // |GetLost() change| over the ACK
                ..d
            },
            Profile::Linux => TcpConfig {
                variant: Variant::Sack,
                cc: CcConfig::Cubic(Default::default()), // tcp_congestion_control
                mss: 1448,                               // 1500-byte MTU with timestamps
                initial_window: 10,                      // TCP_INIT_CWND
                rwnd: 6_291_456,                         // tcp_rmem[2]
                timestamps: true,                        // tcp_timestamps
                sack_blocks_max: 3,
                delayed_ack: true,
                delack_timeout: Time::from_millis(40), // TCP_DELACK_MIN
                min_rto: Time::from_millis(200),       // TCP_RTO_MIN
                max_rto: Time::from_secs(120),         // TCP_RTO_MAX
                rto_estimator: RtoEstimator::Linux,    // tcp_rtt_estimator, tcp_set_rto
                initial_rto: Time::from_secs(1),       // TCP_TIMEOUT_INIT
                prr: true,
                rto_keeps_sack: true,
                rack: true,                       // tcp_recovery
                idle_restart: IdleRestart::Linux, // tcp_slow_start_after_idle 1
                ..d
            },
        };
        // LT-TCP's largest segment follows the profile's mss (as it follows a
        // `mss` key), not linklab's default 1460.
        c.lt.mss_max = c.mss;
        c.profile = Some(self);
        c
    }
}

/// TCP keys (all optional; defaults in docs/models/tcp.md).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpOverlay {
    /// Start from the defaults of a simulator or stack: "ns2", "ns3" or
    /// "linux" (docs/models/tcp.md lists each value); the other keys given
    /// here then apply on top. In a flow's `tcp`, it starts that flow over
    /// from the profile (the `[tcp]` keys no longer apply). Default none.
    pub profile: Option<Profile>,
    /// Loss recovery: "reno", "newreno" or "sack". Default "newreno".
    pub variant: Option<Variant>,
    /// Congestion control: "newreno" (also "reno") or "cubic", or a table
    /// `{ kind = "cubic", beta = 0.7, … }` (docs/models/cubic.md). Default "newreno".
    pub cc: Option<CcConfig>,
    /// Payload bytes per full segment, 1 to 65495. Default 1460.
    #[schemars(range(min = 1, max = 65495))]
    pub mss: Option<u32>,
    /// Initial window in segments, 1 to 10. Default 1.
    #[schemars(range(min = 1, max = 10))]
    pub initial_window: Option<u32>,
    /// Receiver window: bytes or a size ("64KiB"), 1 B to 1 GiB. Default 65535.
    pub rwnd: Option<Bytes>,
    /// ECN (RFC 3168). Default false.
    pub ecn: Option<bool>,
    /// Timestamps option (RFC 7323): 12 header bytes, RTT from echoes. Default false.
    pub timestamps: Option<bool>,
    /// Delayed ACKs (every 2nd segment or the delayed-ACK timeout). Default false.
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout. Default "200ms".
    pub delack_timeout: Option<Time>,
    /// With delayed ACKs, acknowledge the first in-order data segment of the
    /// connection at once (ns-3.44's receiver); off, the every-second-segment
    /// rule from the first segment on (RFC 1122, RFC 5681). Default false
    /// (true with profile "ns3").
    pub quick_ack_first: Option<bool>,
    /// Count a retransmitted segment that was SACKed in the pipe until the
    /// cumulative ACK covers it or the next timeout (ns-3.44's
    /// `TcpTxBuffer::BytesInFlight`); off, RFC 6675's pipe, which counts no
    /// SACKed byte. Default false (true with profile "ns3").
    pub sacked_rtx_in_pipe: Option<bool>,
    /// In SACK recovery, a partial ACK whose new oldest segment was never
    /// retransmitted sends one segment outside the window (ns-3.44's
    /// `DoRetransmit` in `ProcessAck`); off, RFC 6675 §5 (B). Default false
    /// (true with profile "ns3").
    pub partial_ack_resend: Option<bool>,
    /// The socket's send buffer: bytes or a size ("1MiB"), 1 B to 1 GiB
    /// (ns-3's `SndBufSize`, Linux's `sk_sndbuf`). A sender that has sent
    /// all of it, with less than the window in flight, marks its rate samples
    /// application-limited. Default unbounded.
    pub send_buffer: Option<Bytes>,
    /// With timestamps, RTT samples from the echo on a 1 ms clock (whole
    /// ms, 1 µs for 0: ns-3.44's `TcpOptionTS`); off, the exact time since
    /// the echoed segment was sent. Default false (true with profile "ns3").
    pub ts_rtt_ms: Option<bool>,
    /// Minimum RTO, > 0 and at most max_rto. Default "1s" (RFC 6298).
    pub min_rto: Option<Time>,
    /// Maximum RTO. Default "60s".
    pub max_rto: Option<Time>,
    /// The RTO's formula and the timer's restarts: "rfc6298" (RTO =
    /// max(min_rto, SRTT + 4·RTTVAR)) or "linux" (RTO = SRTT + rttvar with
    /// rttvar ≥ min_rto, the per-RTT maximum of the mean deviation; the
    /// timer also restarts when the oldest segment is retransmitted; not
    /// with rto_tick). Default "rfc6298" ("linux" with profile "linux").
    pub rto_estimator: Option<RtoEstimator>,
    /// RTO before the first RTT sample, > 0. Default "1s".
    pub initial_rto: Option<Time>,
    /// The SYN's own retransmission timer, > 0, doubled at each expiry
    /// (ns-3's `ConnTimeout`). Default: none, the SYN is timed from
    /// `initial_rto` like data ("3s" with profile "ns3").
    pub syn_rto: Option<Time>,
    /// ns-2's coarse RTO clock (`tcpTick_`, e.g. "100ms"): RTT samples in
    /// whole ticks, one timed segment per RTT (without timestamps), RTO in
    /// whole ticks, back-off to 64 clearing srtt past 8 — as ns-2's
    /// `TcpAgent`. 1 ms to 1 s. Default none (RFC 6298 in nanoseconds).
    pub rto_tick: Option<Time>,
    /// With `rto_tick`: `min_rto` bounds the backed-off timeout, not the
    /// base RTO (ns-2's `rfc2988_ = false`, its default before 2006).
    /// Default false.
    pub min_rto_after_backoff: Option<bool>,
    /// Duplicate-ACK threshold for fast retransmit, 1 to 1000. Default 3.
    #[schemars(range(min = 1, max = 1000))]
    pub dupack_threshold: Option<u32>,
    /// SYN/SYN-ACK handshake before data. Default true.
    pub handshake: Option<bool>,
    /// Limited transmit (RFC 3042). Default true.
    pub limited_transmit: Option<bool>,
    /// Proportional Rate Reduction (RFC 6937) in SACK recovery and, as Linux
    /// and ns-3, in the window reduction at an ECN-Echo. Default false.
    pub prr: Option<bool>,
    /// Whose PRR: "rfc9937" (RFC 9937: the slow-start bound's segment only
    /// on an ACK that advances snd.una and marks no further loss, as
    /// Linux), "rfc6937" (the obsoleted experimental RFC: that segment on
    /// every ACK) or "ns3" (ns-3.44's `TcpPrrRecovery`: a segment added to
    /// DeliveredData per ACK with new SACK information, RecoverFS the pipe,
    /// its 32-bit arithmetic; docs/models/tcp.md). Default "rfc9937" ("ns3"
    /// with profile "ns3").
    pub prr_variant: Option<PrrVariant>,
    /// Appropriate Byte Counting (RFC 3465, as Linux): the window grows by
    /// the bytes each ACK newly acknowledges, not once per ACK. Default
    /// false (true with profile "linux", and with profile "ns3" for CUBIC and
    /// DCTCP, whose ns-3 classes count the segments acked).
    pub abc: Option<bool>,
    /// Sender pacing at the congestion control's rate (docs/models/bbr.md);
    /// BBR always paces. Default false.
    pub pacing: Option<bool>,
    /// Keep SACK information across a timeout (Linux, ns-3) instead of
    /// discarding it (RFC 2018, ns-2). Default false.
    pub rto_keeps_sack: Option<bool>,
    /// With `rto_keeps_sack`: after a timeout, until its recovery point,
    /// resend a segment sent since the timeout once IsLost marks it lost
    /// (ns-3.44's NextSeg in every state) instead of waiting for the recovery
    /// point or the next timeout (RFC 6675 §5.1). Default false (true with
    /// profile "ns3").
    pub rto_resend_lost: Option<bool>,
    /// A loss in the window of an ECN reduction is retransmitted without a
    /// second reduction (ns-2). Default false (true with profile "ns2").
    pub ecn_cut_covers_loss: Option<bool>,
    /// Reno: no fast retransmit after a timeout until an ACK covers more than
    /// was sent at the timeout (ns-2's Reno). Default false (true with
    /// profile "ns2").
    pub reno_rto_guard: Option<bool>,
    /// With ECN, ns-3.44's CWR rule: an ECN echo is answered with CWR,
    /// also one that arrives during a window reduction and reduces nothing,
    /// with one CWR in flight at a time (`m_ecnEchoSeq > m_ecnCWRSeq`), and
    /// a loss's reduction sends none; the receiver keeps echoing a CE not yet
    /// acknowledged through a CWR segment (`ECN_CE_RCVD`). Off, CWR follows every reduction
    /// and nothing else (RFC 3168 §6.1.2, Linux), so a mark that came in
    /// during a reduction brings another one after it. Default false (true
    /// with profile "ns3").
    pub cwr_per_echo: Option<bool>,
    /// What a loss's window cut halves: "flightsize" (RFC 5681, Linux) or
    /// "pipe" (ns-3.44's bytes in flight, the RFC 6675 pipe with the lost
    /// segments taken out). Default "flightsize" ("pipe" with profile
    /// "ns3").
    pub cut_flight: Option<CutFlight>,
    /// The window when the sender sends again after an idle period (nothing
    /// outstanding, nothing sent for longer than the RTO): "rfc5681" (cwnd =
    /// min(initial window, cwnd), RFC 5681 §4.1), "linux" (ssthresh raised to
    /// ¾ cwnd, cwnd halved per RTO idle beyond the first, not below that
    /// restart window: `tcp_slow_start_after_idle`) or "off" (ns-3.44).
    /// Never for BBR. Default "rfc5681" ("linux" with profile "linux", "off"
    /// with profile "ns3").
    pub idle_restart: Option<IdleRestart>,
    /// Delivery-rate samples (BBR): "linux" (a fresh sample per ACK, Linux
    /// `tcp_rate.c`) or "ns3" (ns-3.44's `TcpRateLinux`, which keeps the
    /// sample across ACKs and overestimates the rate when an ACK delivers
    /// only packets sent before the sample's). Default "linux" ("ns3" with
    /// profile "ns3").
    pub rate_sample: Option<RateSampleRule>,
    /// The bytes a rate sample counts as lost (BBR): "linux" (those the ACK
    /// newly marks lost) or "ns3" (ns-3.44's `ReceivedAck`: the absolute
    /// change of the bytes marked lost and not SACKed, so an ACK that
    /// delivers a lost segment's retransmission counts it too). Default
    /// "linux" ("ns3" with profile "ns3").
    pub rate_losses: Option<RateLosses>,
    /// SACK recovery rules: "rfc6675" or "ns2" (ns-2.35's Sack1; not with
    /// rack or prr). Default "rfc6675" ("ns2" with profile "ns2").
    pub sack_rules: Option<SackRules>,
    /// Window cuts at a congestion signal: "rfc5681" (the congestion
    /// control's own rule), "ns2" (ns-2.35's slowdown: cwnd halved without a
    /// floor of two segments, ssthresh halved at every timeout) or
    /// "ns2-integer" (ns-2 before 2006: whole-segment halves); the ns-2 rules
    /// need cc = "newreno" or "reno". Default "rfc5681" ("ns2" with profile
    /// "ns2"; a cc other than NewReno set in a table that does not set
    /// window_cuts cuts by its own rule).
    pub window_cuts: Option<WindowCuts>,
    /// RACK-TLP loss detection (RFC 8985; needs variant = "sack"). Default false.
    pub rack: Option<bool>,
    /// TCP-L (seed 004): accept segments whose bit errors are all in the
    /// payload instead of discarding them. Default false.
    pub tcp_l: Option<bool>,
    /// LT-TCP building blocks (seed 002); every switch defaults to off.
    pub lt: Option<LtOverlay>,
}

/// LT-TCP keys (Tickoo et al.): each building block is a switch; see
/// docs/models/lt-tcp.md.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LtOverlay {
    /// Congestion response to ECN marks only, not to loss (timeouts remain). Default false.
    pub ecn_only: Option<bool>,
    /// Adaptive MSS: at least g_min_segments per window within [mss_min, mss_max]. Default false.
    pub adaptive_mss: Option<bool>,
    /// Proactive FEC (PHASE 1): P = f(E) repair packets per window. Default false.
    pub proactive_fec: Option<bool>,
    /// Reactive FEC (PHASE 2): R = g(E) repair packets per duplicate ACK. Default false.
    pub reactive_fec: Option<bool>,
    /// Erasure estimate at the "sender" (from ACK/SACK, default) or the "receiver" (echoed in ACKs).
    pub estimator: Option<EstimatorSide>,
    /// G: minimum segments per window, 1 to 254. Default 10.
    #[schemars(range(min = 1, max = 254))]
    pub g_min_segments: Option<u32>,
    /// Smallest segment payload, bytes. Default 100.
    #[schemars(range(min = 1, max = 65495))]
    pub mss_min: Option<u32>,
    /// Largest segment payload, bytes (at most the TCP mss). Default the TCP mss.
    #[schemars(range(min = 1, max = 65495))]
    pub mss_max: Option<u32>,
    /// f(E): [[upto, packets], ...], increasing upper bounds ending at 1 (bin i covers [upto(i-1), upto(i))).
    pub proactive_bins: Option<Vec<Bin>>,
    /// g(E): [[upto, packets], ...] repair packets per duplicate ACK, same form.
    pub reactive_bins: Option<Vec<Bin>>,
    /// Longest FEC block n (data + all repairs) of the shortened RS code, 2 to 255. Default 255.
    #[schemars(range(min = 2, max = 255))]
    pub block_max: Option<u16>,
    /// E before the first window, 0 <= E < 1. Default 0.
    pub initial_estimate: Option<f64>,
    /// Reactive repairs of a block: "inventory" (g(E) per duplicate ACK while
    /// the code has repairs left, the paper's rule) or "deficit" (no more in
    /// all than the block's known holes / (1 - E)). Default "inventory".
    pub reactive_limit: Option<ReactiveLimit>,
    /// Reactive repairs wait for room in the window (true) or go out at the
    /// duplicate ACK on top of it, as in the paper (false). Default false.
    pub reactive_in_window: Option<bool>,
}

/// `*dst = v` where `v` is given.
fn set<T: Copy>(dst: &mut T, v: Option<T>) {
    if let Some(v) = v {
        *dst = v;
    }
}

impl TcpOverlay {
    /// `base` with the keys given here.
    pub fn apply(&self, base: &TcpConfig) -> TcpConfig {
        let mut c = self.profile.map_or_else(|| base.clone(), Profile::base);
        set(&mut c.variant, self.variant);
        if let Some(cc) = &self.cc {
            c.cc = cc.clone();
        }
        set(&mut c.mss, self.mss);
        set(&mut c.initial_window, self.initial_window);
        set(&mut c.rwnd, self.rwnd.map(Bytes::get));
        set(&mut c.ecn, self.ecn);
        if let Some(ts) = self.timestamps {
            c.timestamps = ts;
            c.sack_blocks_max = if ts { 3 } else { 4 };
        }
        set(&mut c.delayed_ack, self.delayed_ack);
        set(&mut c.delack_timeout, self.delack_timeout);
        set(&mut c.quick_ack_first, self.quick_ack_first);
        set(&mut c.sacked_rtx_in_pipe, self.sacked_rtx_in_pipe);
        set(&mut c.partial_ack_resend, self.partial_ack_resend);
        if let Some(b) = self.send_buffer {
            c.send_buffer = Some(b.get());
        }
        set(&mut c.ts_rtt_ms, self.ts_rtt_ms);
        set(&mut c.min_rto, self.min_rto);
        set(&mut c.max_rto, self.max_rto);
        set(&mut c.rto_estimator, self.rto_estimator);
        set(&mut c.initial_rto, self.initial_rto);
        if self.syn_rto.is_some() {
            c.syn_rto = self.syn_rto;
        }
        if let Some(t) = self.rto_tick {
            c.rto_tick = Some(t);
            if self.rto_estimator.is_none() {
                // ns-2's clock brings its own estimator (beside profile "linux" too).
                c.rto_estimator = RtoEstimator::Rfc6298;
            }
        }
        set(&mut c.min_rto_after_backoff, self.min_rto_after_backoff);
        set(&mut c.dupack_threshold, self.dupack_threshold);
        set(&mut c.handshake, self.handshake);
        set(&mut c.limited_transmit, self.limited_transmit);
        set(&mut c.prr, self.prr);
        set(&mut c.prr_variant, self.prr_variant);
        if self.abc.is_some() {
            c.abc = self.abc;
        }
        set(&mut c.pacing, self.pacing);
        set(&mut c.rto_keeps_sack, self.rto_keeps_sack);
        set(&mut c.rto_resend_lost, self.rto_resend_lost);
        set(&mut c.ecn_cut_covers_loss, self.ecn_cut_covers_loss);
        set(&mut c.cwr_per_echo, self.cwr_per_echo);
        set(&mut c.cut_flight, self.cut_flight);
        set(&mut c.idle_restart, self.idle_restart);
        set(&mut c.rate_sample, self.rate_sample);
        set(&mut c.rate_losses, self.rate_losses);
        set(&mut c.reno_rto_guard, self.reno_rto_guard);
        set(&mut c.sack_rules, self.sack_rules);
        if self.window_cuts.is_none() && self.cc.is_some() && !c.cc.is_newreno() {
            // A congestion control given here cuts by its own rule.
            c.window_cuts = WindowCuts::Rfc5681;
        }
        set(&mut c.window_cuts, self.window_cuts);
        set(&mut c.rack, self.rack);
        set(&mut c.tcp_l, self.tcp_l);
        // LT-TCP's largest segment follows the TCP mss unless given.
        set(&mut c.lt.mss_max, self.mss);
        if let Some(lt) = &self.lt {
            lt.apply(&mut c.lt);
        }
        c
    }
}

impl LtOverlay {
    /// Set the keys given here on `c`.
    pub fn apply(&self, c: &mut LtConfig) {
        set(&mut c.ecn_only, self.ecn_only);
        set(&mut c.adaptive_mss, self.adaptive_mss);
        set(&mut c.proactive_fec, self.proactive_fec);
        set(&mut c.reactive_fec, self.reactive_fec);
        set(&mut c.estimator, self.estimator);
        set(&mut c.g_min_segments, self.g_min_segments);
        set(&mut c.mss_min, self.mss_min);
        set(&mut c.mss_max, self.mss_max);
        set(&mut c.block_max, self.block_max);
        set(&mut c.initial_estimate, self.initial_estimate);
        set(&mut c.reactive_limit, self.reactive_limit);
        set(&mut c.reactive_in_window, self.reactive_in_window);
        if let Some(b) = &self.proactive_bins {
            c.proactive_bins = b.clone();
        }
        if let Some(b) = &self.reactive_bins {
            c.reactive_bins = b.clone();
        }
    }
}

impl TcpConfig {
    /// Check every rule of a TCP configuration; the error's path is relative
    /// to the `[tcp]` table.
    pub fn validate(&self) -> Result<()> {
        check_range("mss", self.mss, 1, MSS_MAX)?;
        check_range("initial_window", self.initial_window, 1, 10)?;
        check_range("rwnd", self.rwnd, 1, 1 << 30)?;
        if let Some(b) = self.send_buffer {
            check_range("send_buffer", b, 1, 1 << 30)?;
        }
        check_range("dupack_threshold", self.dupack_threshold, 1, 1000)?;
        if self.min_rto == Time::ZERO || self.min_rto > self.max_rto {
            return Err(ConfigError::new(
                "min_rto",
                format!("\"{}\"", self.min_rto),
                format!(
                    "is not allowed; need 0 < min_rto ≤ max_rto ({})",
                    self.max_rto
                ),
            ));
        }
        if self.initial_rto == Time::ZERO {
            return Err(ConfigError::new(
                "initial_rto",
                "\"0s\"",
                "is zero; it must be positive",
            ));
        }
        if self.syn_rto == Some(Time::ZERO) {
            return Err(ConfigError::new(
                "syn_rto",
                "\"0s\"",
                "is zero; it must be positive",
            ));
        }
        if self.min_rto_after_backoff && self.rto_tick.is_none() {
            return Err(ConfigError::new(
                "min_rto_after_backoff",
                "true",
                "is ns-2's rule and needs rto_tick (ns-2's clock); allowed: false, or set rto_tick",
            ));
        }
        if self.rto_estimator == RtoEstimator::Linux && self.rto_tick.is_some() {
            return Err(ConfigError::new(
                "rto_estimator",
                "\"linux\"",
                "does not go with rto_tick (ns-2's coarse clock has its own estimator); allowed: \"rfc6298\", or remove rto_tick",
            ));
        }
        if let Some(t) = self.rto_tick {
            if !(Time::from_millis(1)..=Time::from_secs(1)).contains(&t) {
                return Err(ConfigError::new(
                    "rto_tick",
                    format!("\"{t}\""),
                    "is not allowed; ns-2's clock tick is 1 ms to 1 s (its default 100 ms, \"10ms\" since ns-2.27)",
                ));
            }
        }
        if u64::from(self.mss) > self.rwnd {
            return Err(ConfigError::new(
                "rwnd",
                self.rwnd.to_string(),
                format!("bytes is smaller than one segment (mss {})", self.mss),
            ));
        }
        if let Some(b) = self.send_buffer.filter(|&b| b < u64::from(self.mss)) {
            // The sender sends whole segments only: a smaller buffer would
            // never let one out.
            return Err(ConfigError::new(
                "send_buffer",
                b.to_string(),
                format!("bytes is smaller than one segment (mss {})", self.mss),
            ));
        }
        if self.rack && self.variant != Variant::Sack {
            return Err(ConfigError::new(
                "rack",
                "true",
                "needs SACK: set variant = \"sack\" (RACK-TLP detects losses from SACK information)",
            ));
        }
        if self.variant == Variant::Sack && self.sack_rules == SackRules::Ns2 {
            for (key, on) in [("rack", self.rack), ("prr", self.prr)] {
                if on {
                    return Err(ConfigError::new(
                        key,
                        "true",
                        "does not go with sack_rules = \"ns2\" (ns-2's Sack1 counts its own pipe and has neither); allowed: false, or sack_rules = \"rfc6675\"",
                    ));
                }
            }
        }
        if self.window_cuts != WindowCuts::Rfc5681 && !self.cc.is_newreno() {
            return Err(ConfigError::new(
                "window_cuts",
                crate::config::quoted(match self.window_cuts {
                    WindowCuts::Ns2Integer => "ns2-integer",
                    _ => "ns2",
                }),
                format!(
                    "is the window arithmetic of ns-2's Reno-family agents and does not go with cc = {}; allowed: \"rfc5681\", or cc = \"newreno\" / \"reno\"",
                    crate::config::quoted(self.cc.kind())
                ),
            ));
        }
        self.cc.model().validate().map_err(|e| e.at("cc"))?;
        if self.cc.model().needs_ecn() && !self.ecn {
            return Err(ConfigError::new(
                "cc",
                crate::config::quoted(self.cc.kind()),
                "needs ECN: set ecn = true (and an ECN-marking queue on the path)",
            ));
        }
        self.validate_lt().map_err(|e| e.at("lt"))
    }

    /// The LT-TCP rules (paths relative to `[tcp.lt]`): ranges always, the
    /// relations between keys when a building block is on.
    fn validate_lt(&self) -> Result<()> {
        self.lt.validate_ranges()?;
        if !self.lt.any() {
            return Ok(());
        }
        self.lt.validate()?;
        if self.lt.mss_max > self.mss {
            return Err(ConfigError::new(
                "mss_max",
                self.lt.mss_max.to_string(),
                format!("is above the TCP mss ({}); need mss_max <= mss", self.mss),
            ));
        }
        if self.variant != Variant::Sack {
            return Err(ConfigError::at_key(
                "",
                "LT-TCP extends TCP-SACK; set variant = \"sack\"",
            ));
        }
        if self.lt.ecn_only && !self.ecn {
            return Err(ConfigError::at_key(
                "ecn_only",
                "needs ECN: set ecn = true (without it no congestion signal is left)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlay(toml: &str) -> TcpOverlay {
        toml::from_str(toml).unwrap()
    }

    /// LT-TCP beside a profile: its largest segment is the profile's mss
    /// (found by `python -m linklab.check`: `profile = "linux"` with `[tcp.lt]`
    /// was refused, "mss_max: 1460 is above the TCP mss (1448)").
    #[test]
    fn lt_beside_a_profile_follows_its_mss() {
        for (p, mss) in [("ns2", 1000), ("ns3", 536), ("linux", 1448)] {
            let text =
                format!("profile = \"{p}\"\nvariant = \"sack\"\nlt = {{ adaptive_mss = true }}");
            let c = overlay(&text).apply(&TcpConfig::default());
            assert_eq!((c.mss, c.lt.mss_max), (mss, mss), "{p}");
            c.validate().unwrap();
        }
        let c = overlay("profile = \"linux\"\nmss = 500").apply(&TcpConfig::default());
        assert_eq!(c.lt.mss_max, 500);
    }

    /// Each profile is a valid configuration with its documented values, and
    /// the keys written beside it apply on top.
    #[test]
    fn profiles_set_their_defaults_and_keys_apply_on_top() {
        for p in [Profile::Ns2, Profile::Ns3, Profile::Linux] {
            p.base().validate().unwrap();
        }
        let ns2 = overlay("profile = \"ns2\"").apply(&TcpConfig::default());
        assert_eq!((ns2.mss, ns2.initial_window, ns2.rwnd), (1000, 2, 20_000));
        assert_eq!(ns2.rto_tick, Some(Time::from_millis(10)));
        assert_eq!(
            (ns2.initial_rto, ns2.min_rto),
            (Time::from_secs(3), Time::from_millis(200))
        );
        assert!(!ns2.timestamps && !ns2.delayed_ack && !ns2.rto_keeps_sack);
        assert!(ns2.ecn_cut_covers_loss && !TcpConfig::default().ecn_cut_covers_loss);
        assert!(ns2.reno_rto_guard && !TcpConfig::default().reno_rto_guard);
        assert_eq!(ns2.sack_rules, SackRules::Ns2);
        assert_eq!(ns2.window_cuts, WindowCuts::Ns2);
        // A congestion control beside the profile cuts by its own rule; the
        // ns-2 arithmetic asked for with one that is not NewReno is an error.
        let cubic = overlay("profile = \"ns2\"\ncc = \"cubic\"").apply(&TcpConfig::default());
        assert_eq!(cubic.window_cuts, WindowCuts::Rfc5681);
        cubic.validate().unwrap();
        let reno = overlay("profile = \"ns2\"\ncc = \"reno\"").apply(&TcpConfig::default());
        assert_eq!(reno.window_cuts, WindowCuts::Ns2);
        let e = overlay("cc = \"cubic\"\nwindow_cuts = \"ns2-integer\"")
            .apply(&TcpConfig::default())
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("window_cuts") && e.contains("ns2-integer") && e.contains("rfc5681"),
            "{e}"
        );
        // ns-2's Sack1 counts its own pipe: neither PRR nor RACK on top.
        let mut c = overlay("profile = \"ns2\"\nvariant = \"sack\"\nprr = true")
            .apply(&TcpConfig::default());
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("prr") && e.contains("sack_rules"), "{e}");
        c.prr = false;
        c.validate().unwrap();
        c.variant = Variant::NewReno;
        c.prr = true;
        c.validate().unwrap();
        let ns3 = overlay("profile = \"ns3\"").apply(&TcpConfig::default());
        assert_eq!((ns3.mss, ns3.initial_window, ns3.rwnd), (536, 10, 131_072));
        assert!(ns3.timestamps && ns3.delayed_ack && ns3.prr && ns3.variant == Variant::Sack);
        assert!(ns3.cwr_per_echo && !TcpConfig::default().cwr_per_echo);
        assert!(ns3.quick_ack_first && !TcpConfig::default().quick_ack_first);
        assert!(ns3.sacked_rtx_in_pipe && !TcpConfig::default().sacked_rtx_in_pipe);
        assert!(ns3.partial_ack_resend && !TcpConfig::default().partial_ack_resend);
        assert!(ns3.ts_rtt_ms && !TcpConfig::default().ts_rtt_ms);
        assert_eq!(ns3.prr_variant, PrrVariant::Ns3);
        assert_eq!(ns3.cut_flight, CutFlight::Pipe);
        assert_eq!(TcpConfig::default().cut_flight, CutFlight::FlightSize);
        assert!(ns3.rto_resend_lost && !TcpConfig::default().rto_resend_lost);
        assert_eq!(TcpConfig::default().prr_variant, PrrVariant::Rfc9937);
        let linux = overlay("profile = \"linux\"").apply(&TcpConfig::default());
        assert_eq!(linux.prr_variant, PrrVariant::Rfc9937);
        let old = overlay("prr_variant = \"rfc6937\"").apply(&TcpConfig::default());
        assert_eq!(old.prr_variant, PrrVariant::Rfc6937);
        let filter = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Westwood(w) => w.filter,
            _ => None,
        };
        use crate::tcp::cc::westwood::WestwoodFilter;
        let ww = overlay("profile = \"ns3\"\ncc = \"westwood\"").apply(&TcpConfig::default());
        assert_eq!(filter(&ww), Some(WestwoodFilter::Ns3));
        let ww = overlay("cc = \"westwood\"\nprr_variant = \"ns3\"").apply(&TcpConfig::default());
        assert_eq!(filter(&ww), Some(WestwoodFilter::Linux));
        assert_eq!(ww.prr_variant, PrrVariant::Ns3);
        let ww = overlay("profile = \"ns3\"\ncc = { kind = \"westwood\", filter = \"linux\" }")
            .apply(&TcpConfig::default());
        assert_eq!(filter(&ww), Some(WestwoodFilter::Linux));
        let linux = overlay("profile = \"linux\"").apply(&TcpConfig::default());
        assert_eq!(linux.cc.kind(), "cubic");
        assert!(linux.rack && linux.prr && linux.delack_timeout == Time::from_millis(40));
        // Keys beside the profile win; the profile replaces what lay below.
        let below = TcpConfig {
            ecn: true,
            ..TcpConfig::default()
        };
        let c = overlay("profile = \"ns2\"\nmss = 460\nvariant = \"sack\"").apply(&below);
        assert_eq!(
            (c.mss, c.variant, c.initial_window),
            (460, Variant::Sack, 2)
        );
        assert!(!c.ecn, "the profile starts over from its own defaults");
        // Without a profile, the keys apply on what lay below.
        assert!(overlay("mss = 460").apply(&below).ecn);
    }

    /// `rto_estimator`: Linux's with profile "linux" only; ns-2's clock
    /// brings its own (beside the profile too) and refuses Linux's given
    /// explicitly.
    #[test]
    fn rto_estimator_follows_the_profile_and_the_clock() {
        let base = TcpConfig::default();
        assert_eq!(base.rto_estimator, RtoEstimator::Rfc6298);
        for (p, want) in [
            ("ns2", RtoEstimator::Rfc6298),
            ("ns3", RtoEstimator::Rfc6298),
            ("linux", RtoEstimator::Linux),
        ] {
            let c = overlay(&format!("profile = \"{p}\"")).apply(&base);
            assert_eq!(c.rto_estimator, want, "{p}");
        }
        let c = overlay("rto_estimator = \"linux\"").apply(&base);
        assert_eq!(c.rto_estimator, RtoEstimator::Linux);
        c.validate().unwrap();
        let c = overlay("profile = \"linux\"\nrto_tick = \"10ms\"").apply(&base);
        assert_eq!(c.rto_estimator, RtoEstimator::Rfc6298);
        c.validate().unwrap();
        let e = overlay("rto_estimator = \"linux\"\nrto_tick = \"10ms\"")
            .apply(&base)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rto_estimator") && e.contains("rto_tick") && e.contains("rfc6298"),
            "{e}"
        );
        let e = toml::from_str::<TcpOverlay>("rto_estimator = \"bsd\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rfc6298") && e.contains("linux"), "{e}");
    }

    /// Profile "linux": CUBIC's classic HyStart and byte counting; profile
    /// "ns3": ns-3's classic HyStart, byte counting for CUBIC only
    /// (`TcpCubic`'s slow start) not NewReno (`TcpNewReno::SlowStart`);
    /// neither without a profile. Keys given win; a flow's overlay without a
    /// profile keeps what the `[tcp]` table chose.
    #[test]
    fn hystart_and_abc_follow_the_profile() {
        use crate::tcp::cc::cubic::HyStartMode as H;
        let base = TcpConfig::default();
        let hy = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Cubic(k) => k.hystart,
            _ => None,
        };
        let c = overlay("cc = \"cubic\"").apply(&base);
        assert_eq!((hy(&c), c.abc()), (Some(H::HyStartPlusPlus), false));
        let c = overlay("profile = \"linux\"").apply(&base);
        assert_eq!((hy(&c), c.abc()), (Some(H::Classic), true));
        let c = overlay("profile = \"linux\"\ncc = \"reno\"").apply(&base);
        assert!(c.abc());
        let c = overlay("profile = \"ns3\"\ncc = \"cubic\"").apply(&base);
        assert_eq!((hy(&c), c.abc()), (Some(H::ClassicNs3), true));
        let c = overlay("profile = \"ns3\"").apply(&base);
        assert!(!c.abc(), "ns-3's TcpNewReno adds a segment per ACK");
        let c = overlay("profile = \"ns3\"\necn = true\ncc = \"dctcp\"").apply(&base);
        assert!(c.abc(), "ns-3's TcpDctcp is a TcpLinuxReno");
        let c =
            overlay("profile = \"linux\"\nabc = false\ncc = { kind = \"cubic\", hystart = true }")
                .apply(&base);
        assert_eq!((hy(&c), c.abc()), (Some(H::HyStartPlusPlus), false));
        let top = overlay("abc = true").apply(&base);
        assert!(overlay("cc = \"cubic\"").apply(&top).abc());
        // Linux's tcp_cubic growth rules, which ns-3.44's TcpCubic has too (the
        // constant Reno-friendly α; `cnt` clamped to 20 while `m_lastMaxCwnd`
        // is 0, tcp-cubic.cc 321-324).
        let rules = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Cubic(k) => (k.alpha_switch, k.unknown_max_growth),
            _ => (None, None),
        };
        let c = overlay("cc = \"cubic\"").apply(&base);
        assert_eq!(rules(&c), (Some(true), Some(false)));
        let c = overlay("profile = \"linux\"").apply(&base);
        assert_eq!(rules(&c), (Some(false), Some(true)));
        let c = overlay("profile = \"ns3\"\ncc = \"cubic\"").apply(&base);
        assert_eq!(rules(&c), (Some(false), Some(true)));
        // ns-3's W_max through a timeout: with profile "ns3" only.
        use crate::tcp::cc::cubic::TimeoutWmax;
        let tw = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Cubic(k) => k.timeout_wmax,
            _ => None,
        };
        assert_eq!(tw(&c), Some(TimeoutWmax::Ns3));
        let c = overlay("cc = \"cubic\"").apply(&base);
        assert_eq!(tw(&c), Some(TimeoutWmax::Rfc9438));
        let c = overlay("cc = { kind = \"cubic\", timeout_wmax = \"ns3\" }").apply(&base);
        assert_eq!(tw(&c), Some(TimeoutWmax::Ns3));
        // ns-3.44's ssthresh from whole segments of cwnd and its avoidance
        // growth: with profile "ns3" only, a key written wins.
        use crate::tcp::cc::cubic::{Avoidance, SsthreshFrom};
        let seg = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Cubic(k) => (k.ssthresh_from, k.avoidance),
            _ => (None, None),
        };
        let c = overlay("profile = \"ns3\"\ncc = \"cubic\"").apply(&base);
        assert_eq!(seg(&c), (Some(SsthreshFrom::Cwnd), Some(Avoidance::Ns3)));
        let c = overlay("cc = \"cubic\"").apply(&base);
        assert_eq!(
            seg(&c),
            (Some(SsthreshFrom::Flight), Some(Avoidance::Rfc9438))
        );
        let c = overlay("profile = \"linux\"\ncc = \"cubic\"").apply(&base);
        assert_eq!(
            seg(&c),
            (Some(SsthreshFrom::Flight), Some(Avoidance::Rfc9438))
        );
        let c = overlay(
            "profile = \"ns3\"\ncc = { kind = \"cubic\", ssthresh_from = \"flight\", avoidance = \"rfc9438\" }",
        )
        .apply(&base);
        assert_eq!(
            seg(&c),
            (Some(SsthreshFrom::Flight), Some(Avoidance::Rfc9438))
        );
    }

    /// `send_buffer`: a size or bytes, unbounded by default and under every
    /// profile; 0, less than one segment and more than 1 GiB are rejected
    /// with the key named.
    #[test]
    fn send_buffer_reads_sizes_and_rejects_zero() {
        let base = TcpConfig::default();
        assert_eq!(base.send_buffer, None);
        assert_eq!(overlay("profile = \"ns3\"").apply(&base).send_buffer, None);
        let c = overlay("send_buffer = \"1MiB\"").apply(&base);
        assert_eq!(c.send_buffer, Some(1 << 20));
        assert!(c.validate().is_ok());
        for bad in [
            "send_buffer = \"0B\"",
            "send_buffer = \"100B\"",
            "send_buffer = \"2GiB\"",
        ] {
            let e = overlay(bad)
                .apply(&base)
                .validate()
                .unwrap_err()
                .to_string();
            assert!(e.contains("send_buffer"), "{bad}: {e}");
        }
    }

    /// Profile "ns3" selects ns-3.44's loss count of a rate sample; none
    /// (and "linux") Linux's; the key given wins.
    #[test]
    fn rate_losses_follow_the_profile() {
        use crate::tcp::rate::RateLosses as L;
        let base = TcpConfig::default();
        assert_eq!(overlay("cc = \"bbr\"").apply(&base).rate_losses, L::Linux);
        let c = overlay("profile = \"linux\"").apply(&base);
        assert_eq!(c.rate_losses, L::Linux);
        let c = overlay("profile = \"ns3\"").apply(&base);
        assert_eq!(c.rate_losses, L::Ns3);
        let c = overlay("profile = \"ns3\"\nrate_losses = \"linux\"").apply(&base);
        assert_eq!(c.rate_losses, L::Linux);
        let c = overlay("rate_losses = \"ns3\"").apply(&base);
        assert_eq!(c.rate_losses, L::Ns3);
    }

    /// Profile "ns3" selects ns-3.44's rate samples, BBR's send quantum and
    /// DCTCP's loss response; without a profile (and with "linux") Linux's,
    /// the draft's and RFC 8257's; keys given win.
    #[test]
    fn rate_sample_and_dctcp_loss_follow_the_profile() {
        use crate::tcp::cc::DctcpLoss;
        use crate::tcp::rate::RateSampleRule as R;
        let base = TcpConfig::default();
        let loss = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Dctcp(d) => d.loss,
            _ => None,
        };
        let c = overlay("ecn = true\ncc = \"dctcp\"").apply(&base);
        assert_eq!(
            (c.rate_sample, loss(&c)),
            (R::Linux, Some(DctcpLoss::Halve))
        );
        let c = overlay("profile = \"linux\"\necn = true\ncc = \"dctcp\"").apply(&base);
        assert_eq!(
            (c.rate_sample, loss(&c)),
            (R::Linux, Some(DctcpLoss::Halve))
        );
        let c = overlay("profile = \"ns3\"\necn = true\ncc = \"dctcp\"").apply(&base);
        assert_eq!((c.rate_sample, loss(&c)), (R::Ns3, Some(DctcpLoss::Alpha)));
        let c = overlay(
            "profile = \"ns3\"\nrate_sample = \"linux\"\necn = true\n\
             cc = { kind = \"dctcp\", loss = \"halve\" }",
        )
        .apply(&base);
        assert_eq!(
            (c.rate_sample, loss(&c)),
            (R::Linux, Some(DctcpLoss::Halve))
        );
        let c = overlay("rate_sample = \"ns3\"\ncc = { kind = \"dctcp\", loss = \"alpha\" }")
            .apply(&base);
        assert_eq!((c.rate_sample, loss(&c)), (R::Ns3, Some(DctcpLoss::Alpha)));
        // DCTCP's receiver echo: RFC 8257's unless profile "ns3"; a key given wins.
        use crate::tcp::cc::DctcpEcho;
        let echo = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Dctcp(d) => d.echo,
            _ => None,
        };
        let c = overlay("ecn = true\ncc = \"dctcp\"").apply(&base);
        assert_eq!(echo(&c), Some(DctcpEcho::Rfc8257));
        let c = overlay("profile = \"ns3\"\necn = true\ncc = \"dctcp\"").apply(&base);
        assert_eq!(echo(&c), Some(DctcpEcho::Ns3));
        let c = overlay("profile = \"ns3\"\ncc = { kind = \"dctcp\", echo = \"rfc8257\" }")
            .apply(&base);
        assert_eq!(echo(&c), Some(DctcpEcho::Rfc8257));
        let q = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Bbr(b) => b.send_quantum,
            _ => None,
        };
        use crate::tcp::cc::bbr::SendQuantum;
        let c = overlay("cc = \"bbr\"").apply(&base);
        assert_eq!(q(&c), Some(SendQuantum::Draft));
        let c = overlay("profile = \"ns3\"\ncc = \"bbr\"").apply(&base);
        assert_eq!((c.rate_sample, q(&c)), (R::Ns3, Some(SendQuantum::Ns3)));
        let c = overlay("profile = \"ns3\"\ncc = { kind = \"bbr\", send_quantum = \"draft\" }")
            .apply(&base);
        assert_eq!(q(&c), Some(SendQuantum::Draft));
        use crate::tcp::cc::bbr::AckAggregation as A;
        let agg = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Bbr(b) => b.ack_aggregation,
            _ => None,
        };
        assert_eq!(agg(&overlay("cc = \"bbr\"").apply(&base)), Some(A::Off));
        let c = overlay("profile = \"ns3\"\ncc = \"bbr\"").apply(&base);
        assert_eq!(agg(&c), Some(A::Ns3));
        let c = overlay("profile = \"ns3\"\ncc = { kind = \"bbr\", ack_aggregation = \"linux\" }")
            .apply(&base);
        assert_eq!(agg(&c), Some(A::Linux));
        use crate::tcp::cc::bbr::LossWindow as L;
        let lw = |c: &TcpConfig| match c.resolved_cc() {
            CcConfig::Bbr(b) => b.loss_window,
            _ => None,
        };
        assert_eq!(lw(&overlay("cc = \"bbr\"").apply(&base)), Some(L::Linux));
        assert_eq!(
            lw(&overlay("profile = \"ns3\"\ncc = \"bbr\"").apply(&base)),
            Some(L::Ns3)
        );
        let c = overlay("profile = \"ns3\"\ncc = { kind = \"bbr\", loss_window = \"linux\" }")
            .apply(&base);
        assert_eq!(lw(&c), Some(L::Linux));
        let e = toml::from_str::<TcpOverlay>("cc = { kind = \"bbr\", loss_window = \"on\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("linux") && e.contains("ns3"), "{e}");
        let e = toml::from_str::<TcpOverlay>("cc = { kind = \"bbr\", ack_aggregation = \"on\" }")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("off") && e.contains("linux") && e.contains("ns3"),
            "{e}"
        );
        let e = toml::from_str::<TcpOverlay>("rate_sample = \"bsd\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("linux") && e.contains("ns3"), "{e}");
        let e = toml::from_str::<TcpOverlay>("rate_losses = \"abs\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("linux") && e.contains("ns3"), "{e}");
        let e = toml::from_str::<TcpOverlay>("cc = { kind = \"dctcp\", loss = \"drop\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("halve") && e.contains("alpha"), "{e}");
    }

    #[test]
    fn an_unknown_profile_names_the_allowed_ones() {
        let e = toml::from_str::<TcpOverlay>("profile = \"ns1\"").unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("ns2") && m.contains("ns3") && m.contains("linux"),
            "{m}"
        );
    }
}

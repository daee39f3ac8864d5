//! TCP models: sans-IO sender and receiver state machines.
//!
//! A [`TcpSender`] and a [`TcpReceiver`] form one one-way bulk flow. Like
//! quinn-proto's `Connection`, each takes `now` explicitly in every call,
//! reports the next instant it needs waking ([`TcpSender::poll_timeout`]) and
//! hands back packets from `poll_transmit`, which the driver drains until it
//! returns `None` after every other call.
//!
//! Sequence numbers are 64-bit byte numbers that never wrap. Data starts at
//! sequence number 0; in this model the SYN consumes no sequence number (real
//! TCP spends one on it), so the first data byte is 0 and an ACK of `n` means
//! bytes `[0, n)` were received.
//!
//! Files: [`rtt`] (RFC 6298 estimator), [`scoreboard`] (per-segment record and
//! SACK scoreboard, RFC 6675), [`cc`] (pluggable congestion control),
//! [`sender`] (windowing, loss recovery: Reno / NewReno / SACK, RTO, ECN) and
//! [`receiver`] (cumulative and selective ACKs, delayed ACK, ECN echo);
//! [`loss_events`] (TFRC loss-event rate, RFC 5348 §5, for cross-layer use).

pub mod cc;
pub mod config;
pub mod loss_events;
pub mod lt;
mod lt_sender;
mod ns3_ecn;
mod prr;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod trace;

#[cfg(test)]
mod tests;

use crate::packet::{IP_HEADER, TCP_HEADER, TCP_TS_OPTION};
use crate::time::Time;

pub use cc::{CcConfig, CongestionControl, Signal, Window};
pub use config::{LtOverlay, Profile, TcpOverlay};
pub use loss_events::{LossEventEstimator, ReceiverLossDetector};
pub use lt::{Bin, EstimatorSide, LtConfig, ReactiveLimit};
pub use receiver::{ReceiverStats, TcpReceiver};
pub use rtt::RttEstimator;
pub use scoreboard::{Scoreboard, Segment};
pub use sender::{RttSummary, SendLimits, SenderStats, TcpSender};
pub use trace::{RtoRow, RttRow};

/// Loss-recovery algorithm of the sender (and whether the receiver sends SACK blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// RFC 5681 §3.2 fast retransmit / fast recovery, no `recover` variable.
    Reno,
    /// RFC 6582 NewReno: stays in fast recovery across partial ACKs.
    #[default]
    NewReno,
    /// RFC 2018 SACK with RFC 6675 conservative loss recovery.
    Sack,
}

/// Whose Proportional Rate Reduction runs with `prr = true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PrrVariant {
    /// RFC 9937 (December 2025, obsoletes RFC 6937; §6): RecoverFS =
    /// snd.nxt − snd.una less the bytes SACKed before the episode's first
    /// ACK (that ACK's own delivery counted in); an ACK that delivers
    /// nothing leaves the window; above ssthresh the proportional part;
    /// below it the conservative reduction bound (PRR-CRB: max(prr_delivered
    /// − prr_out, DeliveredData)) plus one segment only on a safe ACK —
    /// one that advances snd.una and marks no further loss (PRR-SSRB, as
    /// Linux's `tcp_cwnd_reduction` since 2015); one segment while nothing
    /// was sent in the episode (the fast retransmit); cwnd = ssthresh when
    /// the recovery ends.
    #[default]
    Rfc9937,
    /// RFC 6937 (experimental, obsoleted by RFC 9937) with the slow-start
    /// reduction bound: DeliveredData per ACK, RecoverFS = snd.nxt −
    /// snd.una at entry, the window recomputed on every ACK of the
    /// reduction, the bound's extra segment on every ACK.
    Rfc6937,
    /// ns-3.44's `TcpPrrRecovery` (`src/internet/model/tcp-prr-recovery.cc`
    /// at tag ns-3.44, with its callers in `tcp-socket-base.cc`), which
    /// departs from RFC 6937 in six places: (1) a call on an ACK with new
    /// SACK information in fast recovery, and at the entry of a recovery or
    /// CWR, adds one segment to DeliveredData while `prr_delivered <
    /// RecoverFS` (ns-3 issue #1350); (2) the window is recomputed only on
    /// such an ACK and on an ACK that cumulatively acknowledges at least a
    /// segment (ns-3's `segsAcked`, with its carry of partial segments), and
    /// twice — DeliveredData counted twice — when an ACK is both (in CWR:
    /// the entering ACK); (3) RecoverFS is the pipe at entry (`BytesInFlight`,
    /// the lost head excluded), not snd.nxt − snd.una; (4) the slow-start
    /// reduction bound adds its segment only on an ACK that cumulatively
    /// acknowledges a retransmitted segment not SACKed before (`safeACK` =
    /// `m_isRetransDataAcked`), and `prr_delivered − prr_out` is an
    /// unsigned difference that becomes negative, not DeliveredData, once
    /// more was sent than delivered; (5) `prr_delivered · ssthresh` is a
    /// 32-bit product that wraps past 2³² (byte²); (6) at least a segment
    /// while nothing was sent yet in the reduction.
    Ns3,
}

/// Which rules SACK loss recovery follows (`variant = "sack"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SackRules {
    /// RFC 6675: IsLost (DupThresh segments SACKed above a hole), NextSeg,
    /// `pipe` from the scoreboard.
    #[default]
    Rfc6675,
    /// ns-2.35's `Agent/TCP/Sack1` (`tcp-sack1.cc`): fast retransmit at
    /// exactly the DupThresh-th duplicate ACK with new SACK information since
    /// the last cumulative advance; after a timeout, duplicate ACKs are
    /// ignored until new data is acknowledged and no fast retransmit comes
    /// before an ACK beyond the data outstanding at the timeout; in recovery
    /// `pipe` is counted (outstanding − DupThresh at entry, −1 per ACK, −1
    /// more per partial ACK, +1 per packet sent) and every hole below the
    /// highest SACK is resent once before new data; a partial ACK clears
    /// the timer back-off; go-back-N resends SACKed data too.
    Ns2,
}

/// What a loss's window cut halves (`cut_flight`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
pub enum CutFlight {
    /// FlightSize, the data outstanding (RFC 5681 §3.2 step 2, at most the
    /// window; during a recovery at most the window it started from), as
    /// RFC 6675 §5 (4.2) and Linux have it.
    #[default]
    #[serde(rename = "flightsize")]
    FlightSize,
    /// ns-3.44's `BytesInFlight()`, the RFC 6675 pipe: the data outstanding
    /// less what is SACKed and what the scoreboard marks lost (the head
    /// marked lost first), plus what was retransmitted; no cap at the
    /// window. Used at the entry to fast recovery (`EnterRecovery`,
    /// tcp-socket-base.cc 1714–1717 at tag ns-3.44) and at a timeout
    /// (`inFlightBeforeRto`, 3916 and 3963). After a burst loss the pipe
    /// is far below FlightSize: 9 of an initial window of 10 dropped gives
    /// ssthresh 2 segments where RFC 5681 gives 6.
    #[serde(rename = "pipe")]
    Pipe,
}

/// What the sender does with its window when it sends again after an idle
/// period (`idle_restart`): nothing outstanding and nothing sent for longer
/// than the retransmission timeout (back-off included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
pub enum IdleRestart {
    /// RFC 5681 §4.1: cwnd = RW = min(IW, cwnd), the restart window;
    /// ssthresh unchanged.
    #[default]
    #[serde(rename = "rfc5681")]
    Rfc5681,
    /// Linux's `tcp_cwnd_restart` (`tcp_slow_start_after_idle` = 1, its
    /// default; RFC 2861): ssthresh = max(ssthresh, ¾ cwnd), then cwnd
    /// halved once per RTO of the idle time beyond the first, never below
    /// RW = min(IW, cwnd). Not for a congestion control that sets its own
    /// window from rate samples (BBR: Linux skips `cong_control`).
    #[serde(rename = "linux")]
    Linux,
    /// No restart: the window stays what it was (ns-3.44, whose
    /// `CA_EVENT_CWND_RESTART` is never raised; `tcp_slow_start_after_idle`
    /// = 0).
    #[serde(rename = "off")]
    Off,
}

/// How the window is cut at a congestion signal (`window_cuts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
pub enum WindowCuts {
    /// The congestion control's own rule (RFC 5681 for NewReno: ssthresh =
    /// max(FlightSize / 2, 2·MSS), cwnd = ssthresh; at a timeout ssthresh is
    /// set on the first expiry of a segment only, cwnd = 1 MSS).
    #[default]
    #[serde(rename = "rfc5681")]
    Rfc5681,
    /// ns-2.35's `TcpAgent::slowdown` (`precisionReduce_` true): from the
    /// window w = min(cwnd, rwnd) in segments, ssthresh = max(⌊w/2⌋, 2) and
    /// cwnd = max(w/2, 1) at a fast retransmit or ECN-Echo (so a window of
    /// three falls to 1.5 segments, one in flight); at every timeout ssthresh
    /// = max(⌊w/2⌋, 2) again and cwnd = 1, except during the window of an ECN
    /// reduction, where ssthresh stays (`TcpAgent::timeout`).
    #[serde(rename = "ns2")]
    Ns2,
    /// As `Ns2` with ns-2's integer reductions (`precisionReduce_` false, its
    /// default until 2006-01-23): w/2 is ⌊⌊w⌋/2⌋ whole segments.
    #[serde(rename = "ns2-integer")]
    Ns2Integer,
}

/// How the retransmission timeout is computed and when the timer restarts
/// (`rto_estimator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RtoEstimator {
    /// RFC 6298: RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)); the timer
    /// restarts when new data is acknowledged (§5.3) and at a timeout.
    #[default]
    Rfc6298,
    /// Linux's (`tcp_rtt_estimator`, `tcp_set_rto`): RTO = SRTT + rttvar,
    /// where rttvar follows the largest mean deviation of each round trip
    /// and never falls below `min_rto` (`tcp_rto_min`), so RTO ≥ SRTT +
    /// min_rto; the timer also restarts when the oldest outstanding segment
    /// is retransmitted, unless RACK's reordering timer is pending
    /// (`tcp_xmit_retransmit_queue`). See [`rtt::RttEstimator::linux`].
    Linux,
}

/// Configuration shared by a flow's sender and receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Loss-recovery algorithm.
    pub variant: Variant,
    /// Congestion-control algorithm and its parameters.
    pub cc: CcConfig,
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Initial window in segments (1..=10).
    pub initial_window: u32,
    /// Receiver window limit in bytes (never below one MSS in effect).
    pub rwnd: u64,
    /// RFC 3168 ECN.
    pub ecn: bool,
    /// RFC 7323 timestamps: +12 header bytes on every segment, RTT from TSecr.
    pub timestamps: bool,
    /// Maximum SACK blocks per ACK; clamped to 3 with timestamps and 4 without
    /// (TCP option space).
    pub sack_blocks_max: u8,
    /// Delayed ACKs: ACK every second full segment or after `delack_timeout`.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout.
    pub delack_timeout: Time,
    /// With delayed ACKs, acknowledge the connection's first in-order data
    /// segment at once, not with the second: ns-3.44's receiver sets its
    /// delayed-ACK count to the maximum when the connection is established
    /// ("Always respond to first data packet to speed up the connection",
    /// `TcpSocketBase::ProcessSynRcvd`), and any ACK sent resets it. Off:
    /// RFC 1122/5681's every-second-segment rule from the first segment on.
    pub quick_ack_first: bool,
    /// A retransmitted segment that is SACKed stays in the pipe (the bytes in
    /// flight the window is checked against, and the flight an ns-3 cut is
    /// taken from) until the cumulative ACK covers it or the next timeout:
    /// ns-3.44's `TcpTxBuffer` never clears the retransmitted flag of a
    /// SACKed segment (`Update`, `BytesInFlight`). Off: RFC 6675's pipe,
    /// which counts no SACKed byte, as Linux's `tcp_packets_in_flight`.
    pub sacked_rtx_in_pipe: bool,
    /// SACK recovery: a partial ACK whose new oldest segment was never
    /// retransmitted sends one segment at once, outside the congestion
    /// window and the pacing timer — the lowest segment marked lost and never
    /// resent, else new data, else the oldest segment again (ns-3.44's
    /// `ProcessAck` calls `DoRetransmit` unless `IsRetransmittedDataAcked`;
    /// `DoRetransmit` asks `NextSeg` without rule 3). Off: RFC 6675 §5 (B),
    /// where a partial ACK only updates the scoreboard and the pipe, as in
    /// Linux.
    pub partial_ack_resend: bool,
    /// The socket's send buffer, bytes: the application's data held from
    /// `snd_una` on, sent or not (ns-3's `TcpSocket::SndBufSize`, Linux's
    /// `sk_sndbuf`). A sender that has sent all of it, with less than the
    /// window in flight, marks its rate samples application-limited once per
    /// opening of the buffer (the application's write that filled it: ns-3.44's
    /// `TcpRateLinux::CalculateAppLimited` from `TcpSocketBase::Send`, Linux's
    /// `tcp_rate_check_app_limited` from `tcp_sendmsg`). `None`: unbounded,
    /// the application's data is always there.
    pub send_buffer: Option<u64>,
    /// With `timestamps`, take the RTT of a timestamp echo on a 1 ms clock:
    /// whole milliseconds between the echoed TSval and now, each read as
    /// `floor(t / 1 ms)`, and 1 µs where the two are equal — ns-3.44's
    /// `TcpOptionTS` (`NowToTsValue`, `ElapsedTimeFromTsValue`) and
    /// `CalculateRttSample`; every sample the sender takes (SRTT, RTO, the
    /// congestion control's, the handshake's) is that one. Off: the exact
    /// time since the echoed segment was sent, as Linux measures RTT from its
    /// microsecond send stamps. Not used by `rto_estimator = "linux"` nor
    /// ns-2's `rto_tick` (their own samples).
    pub ts_rtt_ms: bool,
    /// Lower bound of the RTO.
    pub min_rto: Time,
    /// Upper bound of the RTO (also caps the exponential back-off).
    pub max_rto: Time,
    /// The RTO's formula and the timer's restarts (RFC 6298 or Linux's).
    /// Under Linux's, `min_rto` is the floor of the variation term, not of
    /// the RTO.
    pub rto_estimator: RtoEstimator,
    /// RTO before the first RTT sample.
    pub initial_rto: Time,
    /// The SYN's own retransmission timer, doubled at each expiry (ns-3's
    /// `TcpSocket::ConnTimeout`, 3 s); `None`: the SYN is timed by the RTO
    /// estimator like data, from `initial_rto` (RFC 6298 §2.1, Linux).
    pub syn_rto: Option<Time>,
    /// Clock granularity G of RFC 6298.
    pub clock_granularity: Time,
    /// ns-2's coarse RTO clock (`tcpTick_`): RTT samples in whole ticks, one
    /// timed segment per RTT, RTO in whole ticks, ns-2's back-off
    /// ([`rtt::Ns2Clock`]). `None`: RFC 6298 in nanoseconds.
    pub rto_tick: Option<Time>,
    /// With `rto_tick`: `min_rto` bounds the backed-off timeout instead of
    /// the base RTO (ns-2's `rfc2988_ = false`, its default before 2006).
    pub min_rto_after_backoff: bool,
    /// Duplicate ACKs that trigger fast retransmit (DupThresh).
    pub dupack_threshold: u32,
    /// SYN / SYN-ACK exchange before data.
    pub handshake: bool,
    /// Limited transmit (RFC 3042): on the first two duplicate ACKs, send one
    /// new segment each, beyond cwnd by at most 2 segments. Default true.
    pub limited_transmit: bool,
    /// Proportional Rate Reduction (RFC 6937, with the slow-start reduction
    /// bound) paces sending during SACK loss recovery instead of RFC 6675's
    /// `cwnd − pipe`; the default of Linux and ns-3. With it the ECN response
    /// is a reduction through PRR too (Linux's CWR state, `tcp_enter_cwr`
    /// and `tcp_cwnd_reduction`; ns-3's `EnterCwr`): ssthresh at the echo,
    /// the window brought down to the cut over the next round trip, no
    /// growth until it ends, and a loss found meanwhile continues it without
    /// a second cut (`tcp_enter_recovery`). Default false.
    pub prr: bool,
    /// Whose PRR runs with `prr`: RFC 9937's, RFC 6937's or ns-3.44's
    /// ([`PrrVariant`]).
    pub prr_variant: PrrVariant,
    /// Appropriate Byte Counting (RFC 3465, as Linux counts the segments an
    /// ACK delivers, `acked_sacked`): NewReno (and Westwood+, DCTCP) grow by
    /// the bytes each ACK newly delivers (cumulatively or by SACK; data
    /// SACKed before counts once), in slow start up to ssthresh and in
    /// avoidance by acked·MSS/cwnd; CUBIC's slow start outside HyStart++
    /// likewise (its avoidance always counts bytes, HyStart++ has its own
    /// limit). Off: once per ACK. `None`: by the profile ([`TcpConfig::abc`]).
    pub abc: Option<bool>,
    /// The profile the configuration started from (`[tcp] profile`), for
    /// the defaults that also depend on the congestion control.
    pub profile: Option<config::Profile>,
    /// Pace data at the rate the congestion control asks for (BBR always
    /// paces; for the others `2 × cwnd / srtt` in slow start, `1.2 × cwnd /
    /// srtt` after, as Linux's `tcp_update_pacing_rate`).
    pub pacing: bool,
    /// Keep SACK information across a retransmission timeout (Linux,
    /// ns-3: SACKed data is not resent; the rest is marked lost) instead of
    /// discarding it (RFC 2018 §8, ns-2: go-back-N resends everything).
    pub rto_keeps_sack: bool,
    /// With `rto_keeps_sack`, after a timeout and until its recovery point:
    /// resend a segment sent after the timeout that RFC 6675's IsLost marks
    /// lost, before new data, as ns-3.44's `NextSeg` does in every state; off,
    /// it waits for the recovery point or the next timeout (RFC 6675 §5.1).
    pub rto_resend_lost: bool,
    /// A loss found in the window of an ECN window reduction is
    /// retransmitted without a second reduction (ns-2's `dupack_action`:
    /// `ecn_` and `last_cwnd_action_ == CWND_ACTION_ECN`); off, it starts a
    /// recovery with its own reduction (RFC 3168 allows one per window either
    /// way, and most stacks cut again).
    pub ecn_cut_covers_loss: bool,
    /// Reno: after a retransmission timeout, no fast retransmit until an ACK
    /// covers more than what had been sent at the timeout (ns-2's Reno,
    /// `bug_fix_` true: `dupack_action` needs `highest_ack_ > recover_`, with
    /// `recover_ = maxseq_` set at the timeout); off, the third duplicate ACK
    /// always starts a fast retransmit (RFC 5681).
    pub reno_rto_guard: bool,
    /// ns-3.44's ECN state machine (`src/internet/model/tcp-socket-base.cc`
    /// at tag ns-3.44), in three rules. (1) An ECN echo on an ACK of new
    /// data enters CWR in every state but CWR (`ReceivedAck`, lines
    /// 1908–1924; `EnterCwr`, 1652–1676): inside a fast recovery
    /// (CA_RECOVERY → CA_CWR, leaving the recovery) and after a timeout
    /// (CA_LOSS → CA_CWR) too, with ssthresh cut again from the bytes in
    /// flight; the reduction ends when an ACK passes the highest byte sent
    /// at the echo (1895–1906). (2) No fast recovery starts in CWR
    /// (`DupAck`, 1737–1830, enters recovery from CA_DISORDER only): a loss
    /// found there is resent once the scoreboard marks it lost (`NextSeg`
    /// rule 1, any state; rule 3 only in CA_RECOVERY, line 3432), else it
    /// waits for the retransmission timer. (3) Every echo of new data is
    /// answered with CWR on the next new segment, also one that reduces
    /// nothing, and a loss's reduction sends none (`SendDataPacket`, lines
    /// 3233–3238, sets CWR in `ECN_ECE_RCVD` only). Off (RFC 3168, Linux):
    /// an echo reduces once per window outside loss recovery, a loss found
    /// in CWR starts fast recovery without a second cut
    /// (`tcp_enter_recovery`), and CWR follows every window reduction,
    /// whatever its cause, and nothing else (RFC 3168 §6.1.2;
    /// `tcp_ecn_queue_cwr` in `tcp_init_cwnd_reduction` and
    /// `tcp_enter_loss`).
    pub cwr_per_echo: bool,
    /// What a loss's window cut halves: FlightSize (RFC 5681, Linux) or
    /// ns-3.44's in-flight estimate, the RFC 6675 pipe ([`CutFlight`]). It
    /// applies to NewReno with SACK (ns-3's `TcpNewReno` halves the bytes in
    /// flight; its other congestion controls cut from cwnd or their own
    /// estimate), and the ns-2 window rules do not use it.
    pub cut_flight: CutFlight,
    /// The window after an idle period ([`IdleRestart`]): RFC 5681 §4.1's
    /// restart window, Linux's decay or none. BBR is never restarted (it
    /// sets its window from rate samples).
    pub idle_restart: IdleRestart,
    /// How an ACK's delivery-rate sample is built, for the congestion
    /// controls that take them (BBR): Linux's fresh sample per ACK, or
    /// ns-3.44's `TcpRateLinux`, which keeps it across ACKs
    /// ([`rate::RateSampleRule`]).
    pub rate_sample: rate::RateSampleRule,
    /// The bytes an ACK's rate sample counts as lost ([`rate::RateLosses`]):
    /// those it newly marks lost (Linux), or the absolute change of the bytes
    /// marked lost and not SACKed (ns-3.44), which an ACK delivering a lost
    /// segment's retransmission changes too.
    pub rate_losses: rate::RateLosses,
    /// The rules of SACK loss recovery (with `variant = "sack"`).
    pub sack_rules: SackRules,
    /// The window arithmetic at a congestion signal (NewReno only for the
    /// ns-2 rules).
    pub window_cuts: WindowCuts,
    /// RACK-TLP loss detection (RFC 8985) instead of RFC 6675's duplicate
    /// threshold (SACK only).
    pub rack: bool,
    /// TCP-L (seed 004): the receiver accepts a segment whose bit errors are
    /// all in the payload (header intact) instead of discarding it as a
    /// failed checksum would.
    pub tcp_l: bool,
    /// LT-TCP building blocks (all off by default).
    pub lt: LtConfig,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            variant: Variant::NewReno,
            cc: CcConfig::default(),
            mss: 1460,
            initial_window: 1,
            rwnd: 65535,
            ecn: false,
            timestamps: false,
            sack_blocks_max: 4,
            delayed_ack: false,
            delack_timeout: Time::from_millis(200),
            quick_ack_first: false,
            sacked_rtx_in_pipe: false,
            partial_ack_resend: false,
            send_buffer: None,
            ts_rtt_ms: false,
            min_rto: Time::from_secs(1),
            max_rto: Time::from_secs(60),
            rto_estimator: RtoEstimator::Rfc6298,
            initial_rto: Time::from_secs(1),
            syn_rto: None,
            clock_granularity: Time::from_millis(1),
            rto_tick: None,
            min_rto_after_backoff: false,
            dupack_threshold: 3,
            handshake: true,
            limited_transmit: true,
            prr: false,
            prr_variant: PrrVariant::Rfc9937,
            abc: None,
            profile: None,
            pacing: false,
            rto_keeps_sack: false,
            rto_resend_lost: false,
            ecn_cut_covers_loss: false,
            reno_rto_guard: false,
            cwr_per_echo: false,
            cut_flight: CutFlight::FlightSize,
            idle_restart: IdleRestart::Rfc5681,
            rate_sample: rate::RateSampleRule::Linux,
            rate_losses: rate::RateLosses::Linux,
            sack_rules: SackRules::Rfc6675,
            window_cuts: WindowCuts::Rfc5681,
            rack: false,
            tcp_l: false,
            lt: LtConfig::default(),
        }
    }
}

impl TcpConfig {
    /// Whether the window grows by the bytes acknowledged: `abc` if given,
    /// else true with profile "linux" (`tcp_slow_start`, `tcp_cong_avoid_ai`
    /// count segments), and with profile "ns3" for CUBIC and DCTCP (ns-3's
    /// `TcpCubic` adds the segments acked in slow start, `TcpDctcp` is a
    /// `TcpLinuxReno`; `TcpNewReno` and `TcpWestwoodPlus` add one segment
    /// per ACK).
    pub fn abc(&self) -> bool {
        self.abc.unwrap_or(match self.profile {
            Some(config::Profile::Linux) => true,
            Some(config::Profile::Ns3) => {
                matches!(self.cc, CcConfig::Cubic(_) | CcConfig::Dctcp(_))
            }
            _ => false,
        })
    }

    /// The congestion control with the defaults of the profile filled in:
    /// CUBIC's `hystart` is "classic" with profile "linux", "classic-ns3"
    /// with profile "ns3", else "hystart++"; CUBIC's `alpha_switch` is off
    /// with profiles "linux" and "ns3" (Linux's `tcp_cubic`, ns-3.44's
    /// `TcpCubic::Update`), its `unknown_max_growth` on with profiles "linux"
    /// and "ns3" (Linux's `tcp_cubic`, ns-3.44's `m_cntClamp`), its `timeout_wmax` "ns3" with profile "ns3", else
    /// "rfc9438", its `ssthresh_from` "cwnd" and `avoidance` "ns3" with
    /// profile "ns3", else "flight" and "rfc9438"; Westwood+'s `filter` is "ns3" with profile "ns3", else
    /// "linux"; BBR's `quantization_budget` is on with profile "linux" only,
    /// its `send_quantum` "ns3" with profile "ns3", else "draft", and its
    /// `ack_aggregation` "ns3" with profile "ns3", else "off", its
    /// `loss_window` "ns3" with profile "ns3", else "linux"; DCTCP's
    /// `loss` is "alpha" with profile "ns3", else "halve".
    pub fn resolved_cc(&self) -> CcConfig {
        let mut cc = self.cc.clone();
        if let CcConfig::Bbr(b) = &mut cc {
            b.quantization_budget = b
                .quantization_budget
                .or(Some(self.profile == Some(config::Profile::Linux)));
            b.send_quantum = b.send_quantum.or(Some(match self.profile {
                Some(config::Profile::Ns3) => cc::bbr::SendQuantum::Ns3,
                _ => cc::bbr::SendQuantum::Draft,
            }));
            b.ack_aggregation = b.ack_aggregation.or(Some(match self.profile {
                Some(config::Profile::Ns3) => cc::bbr::AckAggregation::Ns3,
                _ => cc::bbr::AckAggregation::Off,
            }));
            b.loss_window = b.loss_window.or(Some(match self.profile {
                Some(config::Profile::Ns3) => cc::bbr::LossWindow::Ns3,
                _ => cc::bbr::LossWindow::Linux,
            }));
        }
        if let CcConfig::Dctcp(d) = &mut cc {
            d.loss = d
                .loss
                .or(Some(if self.profile == Some(config::Profile::Ns3) {
                    cc::DctcpLoss::Alpha
                } else {
                    cc::DctcpLoss::Halve
                }));
            d.echo = d
                .echo
                .or(Some(if self.profile == Some(config::Profile::Ns3) {
                    cc::DctcpEcho::Ns3
                } else {
                    cc::DctcpEcho::Rfc8257
                }));
        }
        if let CcConfig::Westwood(w) = &mut cc {
            if w.filter.is_none() {
                w.filter = Some(match self.profile {
                    Some(config::Profile::Ns3) => cc::westwood::WestwoodFilter::Ns3,
                    _ => cc::westwood::WestwoodFilter::Linux,
                });
            }
        }
        if let CcConfig::Cubic(c) = &mut cc {
            if c.hystart.is_none() {
                c.hystart = Some(match self.profile {
                    Some(config::Profile::Linux) => cc::cubic::HyStartMode::Classic,
                    Some(config::Profile::Ns3) => cc::cubic::HyStartMode::ClassicNs3,
                    _ => cc::cubic::HyStartMode::HyStartPlusPlus,
                });
            }
            let linux = self.profile == Some(config::Profile::Linux);
            // ns-3.44's `TcpCubic::Update` keeps the Reno-friendly count's
            // `scale` (α = 3(1 − β)/(1 + β)) throughout, as Linux does.
            let ns3 = self.profile == Some(config::Profile::Ns3);
            c.alpha_switch = c.alpha_switch.or(Some(!linux && !ns3));
            // ns-3.44's `TcpCubic::Update` clamps `cnt` to `m_cntClamp` (20)
            // while `m_lastMaxCwnd` is 0, as Linux's `bictcp_update` does.
            c.unknown_max_growth = c.unknown_max_growth.or(Some(linux || ns3));
            c.timeout_wmax =
                c.timeout_wmax
                    .or(Some(if self.profile == Some(config::Profile::Ns3) {
                        cc::cubic::TimeoutWmax::Ns3
                    } else {
                        cc::cubic::TimeoutWmax::Rfc9438
                    }));
            // ns-3.44's `TcpCubic::GetSsThresh`: whole segments of cwnd.
            c.ssthresh_from = c.ssthresh_from.or(Some(if ns3 {
                cc::cubic::SsthreshFrom::Cwnd
            } else {
                cc::cubic::SsthreshFrom::Flight
            }));
            // ns-3.44's `TcpCubic::IncreaseWindow` and `Update`.
            c.avoidance = c.avoidance.or(Some(if ns3 {
                cc::cubic::Avoidance::Ns3
            } else {
                cc::cubic::Avoidance::Rfc9438
            }));
        }
        cc
    }

    /// IP + TCP header bytes of a data segment or pure ACK without SACK blocks.
    pub fn base_header(&self) -> u16 {
        IP_HEADER + TCP_HEADER + if self.timestamps { TCP_TS_OPTION } else { 0 }
    }

    /// Header bytes of a SYN or SYN-ACK: 40 bytes plus MSS option (4), the
    /// timestamp option (12, SACK-permitted rides in its padding) or, without
    /// timestamps, SACK-permitted padded to 4.
    pub fn syn_header(&self) -> u16 {
        let mut h = IP_HEADER + TCP_HEADER + 4;
        if self.timestamps {
            h += TCP_TS_OPTION;
        } else if self.variant == Variant::Sack {
            h += 4;
        }
        h
    }

    /// SACK blocks the receiver puts in an ACK (0 unless the variant is SACK).
    pub fn sack_blocks(&self) -> usize {
        if self.variant != Variant::Sack {
            return 0;
        }
        let cap = if self.timestamps { 3 } else { 4 };
        usize::from(self.sack_blocks_max).clamp(1, cap)
    }
}

/// What the sending application offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// Greedy source (FTP): always has data.
    Bulk,
    /// Finite transfer of this many bytes.
    Bytes(u64),
}

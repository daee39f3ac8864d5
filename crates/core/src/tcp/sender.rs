//! The TCP sender: windowing, RTO, ECN; loss recovery (Reno / NewReno /
//! SACK) through the hooks of its `recovery` module (`tcp/recovery/`).

use std::sync::Arc;

use super::cc::{self, AckContext, CongestionControl, Signal, Window};
use super::loss_events::LossEventEstimator;
use super::lt::EstimatorSide;
use super::lt_sender::LtSender;
use super::ns3_ecn::Ns3EceState;
use super::prr::Prr;
use super::rack::Rack;
use super::rate::{RateLosses, RateSampleRule, RateSampler};
use super::rtt::RttEstimator;
use super::scoreboard::{Scoreboard, Segment};
use super::trace::{CwndRow, MssRow, RtoRow, RttRow, SenderTrace};
use super::{App, IdleRestart, PrrVariant, RtoEstimator, TcpConfig, Variant, WindowCuts};
use crate::packet::{Ecn, FlowId, Kind, NodeId, Packet, Repair, SackBlocks, TcpFlags};
use crate::time::Time;

#[path = "recovery/mod.rs"]
mod recovery;
use recovery::Recovery;

/// What stopped the sender the last time it stopped sending: the three
/// states of RFC 4898's `SndLimTime*` (§4, `tcpEStatsPerfSndLimTimeRwin`,
/// `…Cwnd`, `…Snd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    /// The next segment would have ended beyond `snd_una + rwnd` while the
    /// congestion window (and pacing) allowed it ("Receiver Limited"; Linux's
    /// `is_rwnd_limited` in `tcp_write_xmit`, which tests the congestion
    /// window first too).
    Rwnd = 0,
    /// The congestion control held it back: the congestion window (or, in
    /// SACK recovery, `pipe` against it) left no room for the next segment,
    /// or pacing at the congestion control's rate made it wait ("Congestion
    /// Limited"; a retransmission timeout counts here).
    Cwnd = 1,
    /// Anything else ("Sender Limited": RFC 4898 puts every stop that is
    /// neither of the above here): the application had no more data while
    /// some was unacknowledged, or an LT-TCP block waited for its repairs.
    Sender = 2,
}

/// How long a flow's sending was limited by the receive window, the
/// congestion control and the sender itself (RFC 4898's `SndLimTimeRwin`,
/// `SndLimTimeCwnd`, `SndLimTimeSnd`; Linux's `tcpi_busy_time` and
/// `tcpi_rwnd_limited`): `flows[].send_limits` of the summary
/// (docs/metrics.md). The three times add up to `busy_s`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SendLimits {
    /// Time the flow had data to send, seconds: from the end of the
    /// handshake until every byte the application offered was acknowledged
    /// (a finite transfer's `completed_s`), else the end of the run.
    pub busy_s: f64,
    /// Of `busy_s`, the time the receive window stopped the sender while the
    /// congestion window would have let it send.
    pub rwnd_s: f64,
    /// Of `busy_s`, the time the congestion window or pacing stopped it.
    pub cwnd_s: f64,
    /// Of `busy_s`, the rest: the application had nothing more to send
    /// while data was unacknowledged (or another sender-side hold).
    pub sender_s: f64,
    /// The receive window the sender was held to, bytes.
    pub rwnd_bytes: u64,
    /// The smallest RTT sample the sender took, seconds (`null`: none).
    pub min_rtt_s: Option<f64>,
}

/// The sender's round-trip-time estimator at the end of a run: `flows[].rtt`
/// of the summary (docs/metrics.md).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RttSummary {
    /// RTT samples fed to the estimator (the SYN's included).
    pub samples: u64,
    /// The smoothed RTT the timer uses, seconds (`null`: no sample).
    pub srtt_s: Option<f64>,
    /// Its variation term, seconds (`null`: no sample).
    pub rttvar_s: Option<f64>,
    /// The retransmission timeout, back-off included, seconds.
    pub rto_s: f64,
}

/// Sender counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments transmitted, retransmissions included (SYNs excluded).
    pub segments_sent: u64,
    /// Payload bytes transmitted, retransmissions included.
    pub bytes_sent: u64,
    /// Idle restarts (`idle_restart`): sends of new data after more than an
    /// RTO without sending, nothing outstanding.
    pub idle_restarts: u64,
    /// Data segments retransmitted (fast, partial-ACK, SACK and go-back-N).
    pub retransmits: u64,
    /// Fast-recovery episodes entered.
    pub fast_retransmits: u64,
    /// Retransmission-timer expiries (SYN timeouts included).
    pub timeouts: u64,
    /// Expiries that start a back-off series: the first since the RTO was
    /// last un-backed-off (an RTT sample); back-to-back expiries count once.
    pub timeout_episodes: u64,
    /// Window reductions caused by ECN-Echo.
    pub ecn_reductions: u64,
    /// Tail Loss Probes sent (RACK-TLP).
    pub tlp_probes: u64,
    /// Congestion responses after a retransmitted probe's episode (RFC 8985 §7.4).
    pub tlp_responses: u64,
    /// Bytes cumulatively acknowledged (`snd_una`).
    pub acked_bytes: u64,
    /// When every byte the application will ever offer was acknowledged
    /// (finite transfers, or after [`TcpSender::stop`]).
    pub completed_at: Option<Time>,
    /// IP bytes of every data packet sent (payload + headers, repairs and
    /// retransmissions included; SYNs excluded).
    pub wire_bytes: u64,
    /// LT-TCP: FEC blocks (windows) opened.
    pub fec_blocks: u64,
    /// LT-TCP: proactive (PHASE 1) repair packets sent.
    pub repairs_proactive: u64,
    /// LT-TCP: reactive (PHASE 2) repair packets sent.
    pub repairs_reactive: u64,
    /// LT-TCP: payload bytes of proactive repair packets.
    pub repair_bytes_proactive: u64,
    /// LT-TCP: payload bytes of reactive repair packets.
    pub repair_bytes_reactive: u64,
    /// LT-TCP: loss-detected recoveries that left the window alone (ECN-only).
    pub loss_responses_skipped: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Closed,
    SynSent,
    Established,
}

/// Sending half of a one-way TCP flow. See the [module docs](super).
#[derive(Debug)]
pub struct TcpSender {
    /// The flow's configuration, shared with its receiver and with the
    /// flows that have the same one (it never changes).
    cfg: Arc<TcpConfig>,
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    cc: Box<dyn CongestionControl>,
    win: Window,
    phase: Phase,
    /// Total bytes the application offers (`None` = unbounded).
    app_end: Option<u64>,
    /// The application will offer more than `app_end` later (a rate-capped
    /// or on/off application): the transfer is not complete at `app_end`.
    app_open: bool,
    /// [`TcpConfig::send_buffer`]: the `snd_una` at which the sender last
    /// marked itself application-limited at the buffer's end (one mark per
    /// opening of the buffer: the application writes only into freed space).
    sndbuf_mark_una: Option<u64>,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    sb: Scoreboard,
    dupacks: u32,
    /// Bytes sent under limited transmit since snd_una last advanced.
    lt_bytes: u64,
    /// PRR's counters of the current recovery (or ECN reduction).
    prr: Prr,
    in_recovery: bool,
    /// The loss-recovery rule set and its state (`tcp/recovery/`).
    rec: Recovery,
    /// Reno with `reno_rto_guard`: `snd_max` at the last RTO (exclusive); no
    /// fast retransmit until `snd_una` passes it.
    rto_guard: Option<u64>,
    /// A retransmission that bypasses the window (fast / partial-ACK retransmit).
    rtx_pending: Option<u64>,
    /// [`TcpConfig::partial_ack_resend`]: a partial ACK asked for one
    /// segment outside the window and the pacing timer.
    partial_ack_tx: bool,
    /// The oldest segment was already retransmitted by the timer.
    rto_retransmitted: bool,
    rtt: RttEstimator,
    /// ns-2 clock (`rto_tick`) without timestamps: the one segment being
    /// timed, (its end, when it was sent); cleared by a timeout.
    timed: Option<(u64, Time)>,
    rto_deadline: Option<Time>,
    ecn_recover: Option<u64>,
    /// The latest window reduction was an ECN response (for
    /// [`TcpConfig::ecn_cut_covers_loss`]).
    last_cut_ecn: bool,
    cwr_pending: bool,
    /// [`TcpConfig::cwr_per_echo`]: ns-3.44's ECN sender state — an echo
    /// of new data not yet answered (`ECN_ECE_RCVD`), the highest ACK that
    /// carried one (`m_ecnEchoSeq`) and where the last CWR went out
    /// (`m_ecnCWRSeq`); `tcp/ns3_ecn.rs`.
    ns3_ece: Ns3EceState,
    /// With `prr`: an ECN reduction under way through PRR (Linux's
    /// `TCP_CA_CWR`, ns-3's `CA_CWR`), until `snd_una` passes `ecn_recover`.
    cwr: bool,
    /// `[tcp] abc` in effect ([`TcpConfig::abc`]).
    abc: bool,
    /// The window the ECN reduction ends at (the congestion control's cut).
    cwr_target: u64,
    syn_pending: bool,
    syn_sent_at: Time,
    syn_tx: u32,
    /// RFC 7323 §4.3 `TS.Recent`: the newest TSval (the ACK's
    /// [`Packet::sent_at`]) received, echoed as TSecr on every data segment.
    ts_recent: Time,
    header: u16,
    rwnd: u64,
    stats: SenderStats,
    /// The trace recorder (off unless [`Self::set_trace`]).
    trace: SenderTrace,
    /// Retransmission timeouts of data (not of the SYN), for the cwnd trace.
    data_timeouts: u64,
    /// RTT samples fed to the estimator.
    rtt_samples: u64,
    /// Sender-side loss events (seed 001 §III-B), when enabled.
    loss_events: Option<Box<LossEventEstimator>>,
    /// Every packet ECN-capable, SYN and retransmissions included: the
    /// congestion control needs ECN (DCTCP; Linux's `tcp_ca_needs_ecn`).
    ect_always: bool,
    /// Transmission order counter (segments and repairs).
    order: u64,
    /// LT-TCP's sender side (blocks, repairs, erasure estimate).
    lt: LtSender,
    /// Delivery-rate sampling, for algorithms that take rate samples (BBR).
    rate: Option<Box<RateSampler>>,
    /// Pacing on (`pacing = true`, or the algorithm paces).
    pacing: bool,
    /// Earliest time the next data packet may leave (pacing).
    next_send: Time,
    /// A send waits for `next_send`: wake then.
    pace_blocked: bool,
    /// RACK loss detection (RFC 8985), when `rack` is on.
    rack: Option<Box<Rack>>,
    /// Tail Loss Probe timer (PTO) and the probe to send when it fires.
    tlp_deadline: Option<Time>,
    tlp_pending: bool,
    /// The TLP episode in progress: `TLP.end_seq` and whether the probe was
    /// a retransmission.
    tlp_end: Option<(u64, bool)>,
    /// Why the transmission under way would stop (set as it runs).
    why: Limit,
    /// The state since the sender last stopped sending (`None`: not yet
    /// established, or complete), since when, and the nanoseconds spent in
    /// each [`Limit`] before that.
    limit: Option<Limit>,
    limit_since: Time,
    limit_ns: [u64; 3],
    /// The smallest RTT sample.
    min_rtt: Option<Time>,
    /// When the sender last sent a data packet (segment, retransmission or
    /// FEC repair): the start of an idle period (`idle_restart`).
    last_data_tx: Option<Time>,
    /// Linux's RTT samples (`rto_estimator = "linux"`): the first
    /// transmission of the earliest segment newly SACKed by the ACK being
    /// processed that was never retransmitted (`first_sackt`).
    sack_rtt_from: Option<Time>,
}

impl TcpSender {
    /// A sender for `flow` from `src` to `dst`, idle until [`start`](Self::start).
    pub fn new(
        cfg: impl Into<Arc<TcpConfig>>,
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        app: App,
    ) -> Self {
        let cfg: Arc<TcpConfig> = cfg.into();
        let mut cc = cc::build(&cfg.resolved_cc());
        let abc = cfg.abc();
        cc.set_abc(abc);
        // PRR paces a loss-triggered *reduction*; ECN-only makes none, and
        // a rate-sample algorithm (BBR) sets the window itself on every
        // ACK, recovery included (ns-3 runs PRR only without
        // `HasCongControl`; Linux's `cong_control` replaces it).
        let prr_on = cfg.prr && !(cfg.lt.ecn_only || cc.wants_rate_samples());
        let mss = u64::from(cfg.mss.max(1));
        let iw = u64::from(cfg.initial_window.max(1));
        let rate = cc
            .wants_rate_samples()
            .then(|| Box::new(RateSampler::new(cfg.rate_sample)));
        TcpSender {
            pacing: cfg.pacing || rate.is_some(),
            rate,
            next_send: Time::ZERO,
            pace_blocked: false,
            rack: cfg.rack.then(|| Box::new(Rack::default())),
            tlp_deadline: None,
            tlp_pending: false,
            tlp_end: None,
            why: Limit::Sender,
            limit: None,
            limit_since: Time::ZERO,
            limit_ns: [0; 3],
            min_rtt: None,
            sack_rtt_from: None,
            last_data_tx: None,
            cc,
            win: Window {
                cwnd: iw * mss,
                ssthresh: u64::MAX / 2,
                mss,
            },
            phase: Phase::Closed,
            app_end: match app {
                App::Bulk => None,
                App::Bytes(n) => Some(n),
            },
            app_open: false,
            sndbuf_mark_una: None,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            sb: ns3_pipe_scoreboard(&cfg),
            dupacks: 0,
            lt_bytes: 0,
            prr: Prr {
                on: prr_on,
                ..Prr::default()
            },
            in_recovery: false,
            rec: Recovery::new(&cfg),
            rto_guard: None,
            rtx_pending: None,
            partial_ack_tx: false,
            rto_retransmitted: false,
            rtt: match (cfg.rto_tick, cfg.rto_estimator) {
                (Some(tick), _) => RttEstimator::ns2(
                    cfg.initial_rto,
                    cfg.min_rto,
                    cfg.max_rto,
                    tick,
                    cfg.min_rto_after_backoff,
                ),
                (None, RtoEstimator::Linux) => {
                    RttEstimator::linux(cfg.initial_rto, cfg.min_rto, cfg.max_rto)
                }
                (None, RtoEstimator::Rfc6298) => RttEstimator::new(
                    cfg.initial_rto,
                    cfg.min_rto,
                    cfg.max_rto,
                    cfg.clock_granularity,
                ),
            },
            timed: None,
            rto_deadline: None,
            ecn_recover: None,
            last_cut_ecn: false,
            cwr_pending: false,
            ns3_ece: Ns3EceState::default(),
            cwr: false,
            abc,
            cwr_target: 0,
            syn_pending: false,
            syn_sent_at: Time::ZERO,
            syn_tx: 0,
            ts_recent: Time::ZERO,
            header: cfg.base_header(),
            rwnd: cfg.rwnd.max(mss),
            stats: SenderStats::default(),
            trace: SenderTrace::default(),
            data_timeouts: 0,
            rtt_samples: 0,
            loss_events: None,
            ect_always: cfg.ecn && cfg.cc.model().needs_ecn(),
            order: 0,
            lt: LtSender::new(&cfg.lt),
            cfg,
            flow,
            src,
            dst,
        }
    }

    /// The SYN's retransmission timer now: `syn_rto` doubled once per expiry
    /// so far (ns-3's `ConnTimeout`, backed off as `SendEmptyPacket` does),
    /// or the RTO estimator's (RFC 6298).
    fn syn_timer(&self) -> Time {
        match self.cfg.syn_rto {
            Some(t) => Time::from_nanos(
                t.as_nanos()
                    .saturating_mul(1u64 << self.rtt.backoff_count().min(20)),
            ),
            None => self.rtt.rto(),
        }
    }

    /// The application starts: send a SYN, or data at once without handshake.
    pub fn start(&mut self, now: Time) {
        if self.phase != Phase::Closed {
            return;
        }
        if self.cfg.handshake {
            self.phase = Phase::SynSent;
            self.syn_pending = true;
        } else {
            self.phase = Phase::Established;
            self.check_complete(now);
        }
        self.record_cwnd(now);
    }

    /// A paced application (rate cap, on/off) has offered `limit` bytes in
    /// all so far (never less than what was sent), `open` if it will offer
    /// more later; the caller polls for the data it may now send.
    pub fn offer(&mut self, now: Time, limit: u64, open: bool) {
        self.app_end = Some(limit.max(self.snd_max));
        self.app_open = open;
        self.check_complete(now);
    }

    /// The application offers no more new data; retransmissions continue.
    pub fn stop(&mut self, now: Time) {
        let end = self.app_end.unwrap_or(u64::MAX).min(self.snd_max);
        self.app_end = Some(end);
        self.app_open = false;
        self.lt.close_block(&self.cfg.lt);
        self.check_complete(now);
    }

    /// An ACK or SYN-ACK arrived.
    pub fn on_packet(&mut self, now: Time, pkt: &Packet) {
        // RFC 7323 §4.3: the receiver sends no data, so every segment it
        // sends is at or below Last.ACK.sent and TS.Recent is the newest
        // TSval seen. It only reaches the TSecr of data segments (and so the
        // capture); RTT samples come from the ACKs' echoes as before.
        if self.cfg.timestamps && pkt.sent_at > self.ts_recent {
            self.ts_recent = pkt.sent_at;
        }
        if pkt.flags.has(TcpFlags::SYN) {
            if self.phase == Phase::SynSent && pkt.flags.has(TcpFlags::ACK) {
                self.phase = Phase::Established;
                self.syn_pending = false;
                self.rto_deadline = None;
                let sent = if self.cfg.timestamps {
                    Some(pkt.ts_echo)
                } else {
                    (self.syn_tx == 1).then_some(self.syn_sent_at)
                };
                if let Some(at) = sent {
                    self.rtt_sample(at, now);
                    self.cc.on_handshake_rtt(self.echo_rtt(at, now));
                }
                self.check_complete(now);
            }
            return;
        }
        if self.phase != Phase::Established || !pkt.flags.has(TcpFlags::ACK) {
            return;
        }
        let ack = pkt.ack;
        if ack > self.snd_max {
            return; // acknowledges data never sent
        }
        let (una_before, sacked_before) = (self.snd_una, self.sb.sacked_bytes());
        // For ns-3's PRR (`prr_variant = "ns3"`): the state before the ACK,
        // whether it SACKs new data (ns-3's `isDupack`), and whether it
        // cumulatively acknowledges a retransmission not SACKed before
        // inside a fast recovery (`m_isRetransDataAcked`).
        let (recovery_before, cwr_before) = (self.in_recovery, self.cwr);
        let mut sacked_new = false;
        // ns-3's CA_CWR ended on this ACK (a new echo may start the next).
        let mut cwr_exited = false;
        let mut rtx_acked = false;
        // For RFC 9937's PRR: the loss marks before the ACK (SafeACK: "no
        // further loss indicated") and the bytes SACKed before that it
        // cumulatively acknowledges (RecoverFS at an episode's start).
        let lost_marks_before = self.sb.lost_total();
        let mut sacked_cum_acked = 0u64;
        let (inflight_before, lost_before) = if self.rate.is_some() {
            (self.bytes_in_flight(), self.rate_lost_count())
        } else {
            (0, 0)
        };
        let mut rtt_sample = None;
        self.sack_rtt_from = None;
        let (mut linux_sample, mut linux_echo) = (None, None);
        let sack = self.cfg.variant == Variant::Sack;
        let dt = self.cfg.dupack_threshold.max(1);
        let mss = self.win.mss;
        let ece = self.cfg.ecn && pkt.flags.has(TcpFlags::ECE);
        if self.cfg.cwr_per_echo && !ece {
            self.ns3_ece.on_no_echo();
        }
        let ecn_only = self.cfg.lt.ecn_only;
        if self.cfg.lt.estimator == EstimatorSide::Receiver {
            self.lt.on_echo(pkt.erasure_echo);
        }

        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            let (rate, rack) = (&mut self.rate, &mut self.rack);
            // Karn's rule over the whole ACK (RFC 6298 §3; Linux's
            // FLAG_RETRANS_DATA_ACKED): an ACK that covers a retransmission
            // gives no RTT sample, even from a newer segment sent once —
            // after a recovery, that segment waited behind the hole, and
            // its "RTT" is the recovery's length (issue 33, finding F6).
            let mut covers_retransmission = false;
            let mut first_ackt = None;
            let newest = self.sb.ack_visit(ack, |s| {
                covers_retransmission |= s.tx_count > 1;
                rtx_acked |= s.tx_count > 1 && !s.sacked;
                if s.sacked {
                    sacked_cum_acked += u64::from(s.len);
                }
                if s.tx_count == 1 && first_ackt.is_none() {
                    first_ackt = Some(s.first_sent);
                }
                if let Some(r) = rate.as_deref_mut() {
                    r.on_delivered(&mut s.tx, u64::from(s.len), s.last_sent, now);
                }
                if let Some(r) = rack.as_deref_mut() {
                    r.on_delivered(s, false, now);
                }
            });
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.stats.acked_bytes = ack;
            if self.cwr && self.ecn_recover.is_none_or(|r| ack > r) {
                // Linux's `tcp_end_cwnd_reduction` once something above
                // `high_seq` is acknowledged (ns-3: `ack > m_recover`,
                // tcp-socket-base.cc 1895–1906 at ns-3.44): the window is
                // the reduced one — unless the congestion control sets the
                // window itself (BBR): Linux returns first for a
                // `cong_control` algorithm, ns-3.44 sets cwnd = ssthresh
                // only `if (!m_congestionControl->HasCongControl())` (1902).
                self.cwr = false;
                if !self.cc.wants_rate_samples() {
                    self.win.cwnd = self.cwr_target;
                }
                cwr_exited = true;
            }
            if ece && self.cfg.cwr_per_echo {
                // ns-3.44 (`ReceivedAck`, tcp-socket-base.cc 1908–1924;
                // `SendDataPacket`, 3233–3238): any echo on an ACK of new
                // data is answered with CWR, whether it reduced or not, and
                // only an echo is (not a loss's reduction); and it enters
                // CA_CWR from every state but CA_CWR — fast recovery and
                // the timeout's CA_LOSS included (`EnterCwr`, 1652–1676).
                self.ns3_ece.on_echo(ack);
                if !self.cwr {
                    self.ns3_enter_cwr(now);
                }
            }
            self.dupacks = 0;
            self.rec.ns2_after_timeout = false;
            self.lt_bytes = 0;
            self.rto_retransmitted = false;
            self.lt.clear_reactive();
            // When the measured segment was sent.
            let sent = if self.cfg.timestamps {
                Some(pkt.ts_echo)
            } else if self.cfg.rto_tick.is_some() {
                // ns-2: one timed segment per RTT (Karn: never a retransmission).
                match self.timed {
                    Some((end, at)) if ack >= end => {
                        self.timed = None;
                        Some(at)
                    }
                    _ => None,
                }
            } else {
                newest
                    .filter(|s| s.tx_count == 1 && !covers_retransmission)
                    .map(|s| s.first_sent)
            };
            if self.linux_rtt() {
                // Linux's order (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`):
                // the earliest segment acknowledged, unless the ACK covers a
                // retransmission; then a SACKed one (below); then the echo.
                linux_sample = if covers_retransmission {
                    None
                } else {
                    first_ackt
                };
                linux_echo = self.cfg.timestamps.then_some(pkt.ts_echo);
            } else if let Some(at) = sent {
                self.rtt_sample(at, now);
            }
            let sample = sent.map(|at| self.echo_rtt(at, now));
            rtt_sample = sample;
            self.cc.on_ack_numbers(ack, self.snd_max);
            self.cc.on_ack_observed(acked, sample, now);
            self.cc.on_ecn_feedback(acked, ece);
            let mut newly_sacked = false;
            if sack {
                newly_sacked = self.apply_sack(pkt, now);
                sacked_new = newly_sacked;
                self.mark_losses(now);
            }
            if let Some((end, retrans)) = self.tlp_end {
                if ack >= end {
                    // RFC 8985 §7.4: the probe episode is over. Without DSACK
                    // a retransmitted probe means the original, the probe or
                    // an ACK was lost: one congestion response, unless fast
                    // recovery already made it.
                    self.tlp_end = None;
                    if retrans && !self.in_recovery {
                        let flight = self.snd_nxt - self.snd_una;
                        self.cut(Signal::FastRetransmit, flight, now);
                        self.win.cwnd = self.win.cwnd.max(self.win.mss);
                        self.cwr = false;
                        self.stats.tlp_responses += 1;
                    }
                }
            }
            if self.in_recovery {
                self.recovery_on_ack(ack, acked, mss, now);
            } else {
                // RFC 6675 §2 and §5: an ACK whose SACK blocks cover new data
                // is a duplicate ACK "regardless of its status as a cumulative
                // acknowledgment". DupAcks was reset to zero above for the
                // cumulative part; this ACK counts as the first duplicate (for
                // limited transmit and §5 steps 1–2), as in ns-3.
                let mut entered = false;
                // ns-2's Sack1: an ACK of new data is never a duplicate ACK.
                if newly_sacked && !self.rec.sack1() {
                    self.dupacks = 1;
                    self.lt.reactive_trigger(&self.cfg.lt);
                    if self.sack_loss_detected(dt) && self.may_recover(ack) && !self.ns3_cwr() {
                        self.enter_recovery(now);
                        entered = true;
                    }
                }
                if !entered {
                    // ns-3's echo was answered above (`ns3_enter_cwr`).
                    let ecn_reduced = ece && !self.cfg.cwr_per_echo && self.ecn_response(now);
                    // In an ECN reduction through PRR the window does not
                    // grow (Linux calls no `cong_avoid` in CWR; ns-3 no
                    // `IncreaseWindow`).
                    if !ecn_reduced && !self.cwr {
                        // Byte counting counts what the ACK newly delivers
                        // (Linux's `acked_sacked`): a cumulative ACK over data
                        // SACKed before counts only the rest.
                        let by = if self.abc {
                            (acked + self.sb.sacked_bytes()).saturating_sub(sacked_before)
                        } else {
                            acked
                        };
                        self.grow(by, sample, now);
                        self.win.cwnd = self.win.cwnd.max(mss);
                    }
                }
                self.restart_timer(now);
            }
        } else if ack == self.snd_una && self.snd_una < self.snd_max && pkt.payload == 0 {
            self.cc.on_ack_observed(0, None, now);
            sacked_new = self.recovery_on_dupack(now, pkt, ece, dt, mss);
        }
        if self.linux_rtt() {
            // A SACKed segment's RTT stands in when no cumulatively acked
            // one gives a sample (`sack_rtt_us`): in a recovery that keeps
            // the SRTT current while snd_una stays behind a hole.
            if let Some(at) = linux_sample.or(self.sack_rtt_from).or(linux_echo) {
                self.rtt_sample(at, now);
            }
        }
        if ecn_only && ece && self.in_recovery {
            // ECN-only: marks keep their meaning during loss recovery.
            self.ecn_response(now);
        }
        if self.lt.blocks_on() || ecn_only {
            let (una, max) = (self.snd_una, self.snd_max);
            self.lt
                .after_ack(&self.cfg.lt, &self.sb, una, max, &mut self.trace, now);
        }
        let sack_recovery = self.in_recovery && sack && !self.rec.sack1();
        if sack_recovery || self.rto_sack_recovery() {
            self.rec.pipe = self.sb.pipe(self.rec.high_rxt);
        }
        let ns3_prr = self.prr.on && self.cfg.prr_variant == PrrVariant::Ns3;
        let rfc9937 = self.prr.on && self.cfg.prr_variant == PrrVariant::Rfc9937;
        // RFC 9937 §6.2 SafeACK: snd.una advances and no further loss is
        // indicated — no segment newly marked lost, and not the ACK that
        // starts a loss recovery (Linux: FLAG_SND_UNA_ADVANCED and no
        // `newly_lost`).
        let safe_ack = rfc9937
            && self.snd_una > una_before
            && self.sb.lost_total() == lost_marks_before
            && (!self.in_recovery || recovery_before);
        if rfc9937 && !recovery_before && !cwr_before && (self.in_recovery || self.cwr) {
            // RFC 9937 §6.1, at the first ACK of an episode: RecoverFS =
            // snd.nxt − snd.una, less the bytes SACKed in the scoreboard
            // but not by this ACK, plus the bytes this ACK newly acknowledges
            // cumulatively — snd.una before the ACK, SACKed bytes before it
            // that the ACK leaves above snd.una.
            let sacked_before_left = sacked_before.saturating_sub(sacked_cum_acked);
            self.prr.recover_fs = (self.snd_max - una_before).saturating_sub(sacked_before_left);
        }
        // ns-3's `segsAcked` ≥ 1 (ProcessAck, tcp-socket-base.cc 2041–2052
        // at ns-3.44): the bytes delivered plus the carry of partial
        // segments reach a segment, on an ACK that advances snd.una.
        let ns3_segs_acked = ns3_prr && self.snd_una > una_before && {
            let d =
                (self.snd_una - una_before + self.sb.sacked_bytes()).saturating_sub(sacked_before);
            let mut segs = d / mss;
            self.prr.ns3_acked_carry += d % mss;
            if self.prr.ns3_acked_carry >= mss {
                segs += 1;
                self.prr.ns3_acked_carry -= mss;
            }
            segs >= 1
        };
        if sack_recovery && self.prr.on {
            // RFC 6937 DeliveredData: change in snd.una plus change in SACKed bytes.
            let delivered =
                (self.snd_una - una_before + self.sb.sacked_bytes()).saturating_sub(sacked_before);
            if ns3_prr {
                // ns-3.44: `EnterRecovery` (RecoverFS = the pipe with the
                // head marked lost) and `DupAck` call `DoRecovery(…, true)`,
                // a partial ACK `DoRecovery(…, false)` (tcp-socket-base.cc
                // 1782, 2093–2096), the same ACK possibly both.
                let entered = !recovery_before;
                if entered && !cwr_before {
                    self.prr.recover_fs = self.rec.pipe;
                }
                let safe =
                    rtx_acked && recovery_before && self.rec.recover.is_some_and(|r| ack < r);
                if entered || sacked_new {
                    self.prr_update_ns3(delivered, true, safe);
                }
                if ns3_segs_acked {
                    self.prr_update_ns3(delivered, false, safe);
                }
            } else if rfc9937 {
                self.prr_update_rfc9937(delivered, safe_ack);
            } else {
                self.prr_update(delivered);
            }
        }
        if self.cwr {
            // RFC 6937 applied to the ECN reduction, as Linux's
            // `tcp_cwnd_reduction` in CWR (and ns-3's recovery ops in
            // CA_CWR): the window against the data outstanding.
            let delivered =
                (self.snd_una - una_before + self.sb.sacked_bytes()).saturating_sub(sacked_before);
            if self.ns3_sack_cwr() {
                // ns-3's CA_CWR counts `BytesInFlight` (the pipe).
                self.rec.pipe = self.sb.pipe(self.rec.high_rxt);
            }
            if ns3_prr {
                // ns-3.44: `EnterCwr` → `EnterRecovery` → `DoRecovery(…,
                // true)` (RecoverFS the pipe), then `ProcessAck`'s CA_CWR
                // branch `DoRecovery(…, false)` on every ACK of a segment
                // or more (2150–2158), the entering ACK included — also
                // the ACK that ends one CWR (1896–1907: CA_OPEN, cwnd =
                // ssthresh) and, carrying a new echo, enters the next
                // (1912–1922): PRR's entry sets cwnd = pipe + sndcnt there
                // too, not the ended reduction's ssthresh (issue 33, g33i).
                if !self.ns3_sack_cwr() {
                    self.rec.pipe = self.cwnd_flight();
                }
                if !cwr_before || cwr_exited {
                    self.prr.recover_fs = self.rec.pipe;
                    self.prr_update_ns3(delivered, true, false);
                }
                if ns3_segs_acked {
                    self.prr_update_ns3(delivered, false, false);
                }
            } else if delivered > 0 && self.prr.on {
                if !self.ns3_sack_cwr() {
                    self.rec.pipe = self.cwnd_flight();
                }
                if rfc9937 {
                    self.prr_update_rfc9937(delivered, safe_ack);
                } else {
                    self.prr_update(delivered);
                }
            }
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        }
        if self.rate.is_some() {
            self.rate_sample(now, inflight_before, lost_before, rtt_sample);
        }
        if self.rack.is_some() {
            self.arm_tlp(now);
        }
        self.check_complete(now);
        self.record_cwnd(now);
    }

    /// The scoreboard (tests bound the work its searches do per ACK).
    #[cfg(test)]
    pub(crate) fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }

    /// Apply the SACK blocks of `pkt`, feeding the rate sampler the segments
    /// they newly deliver; whether anything was newly SACKed.
    fn apply_sack(&mut self, pkt: &Packet, now: Time) -> bool {
        let (rate, rack) = (&mut self.rate, &mut self.rack);
        let first_sackt = &mut self.sack_rtt_from;
        self.sb.apply_sack_visit(&pkt.sack.blocks(), |s| {
            if s.tx_count == 1 {
                *first_sackt = Some(first_sackt.map_or(s.first_sent, |t| t.min(s.first_sent)));
            }
            if let Some(r) = rate.as_deref_mut() {
                r.on_delivered(&mut s.tx, u64::from(s.len), s.last_sent, now);
            }
            if let Some(r) = rack.as_deref_mut() {
                r.on_delivered(s, true, now);
            }
        })
    }

    /// Mark losses: RACK (RFC 8985 §6.2) when on, else RFC 6675's IsLost.
    fn mark_losses(&mut self, now: Time) {
        let dt = self.cfg.dupack_threshold.max(1);
        match self.rack.as_deref_mut() {
            None => self.sb.mark_lost(dt),
            Some(r) => {
                let recovering =
                    self.in_recovery || self.rec.recover.is_some_and(|rp| self.snd_una < rp);
                let wnd = r.reo_wnd(recovering, self.sb.sacked_count(), dt, self.rtt.smoothed());
                r.detect_loss(&mut self.sb, now, wnd);
            }
        }
    }

    /// RFC 8985 §7.2: arm the probe timeout after new data is sent or an ACK
    /// is processed, when data is outstanding, no probe episode is under way
    /// and the sender is not in loss recovery: PTO = 2·SRTT (plus 200 ms of
    /// delayed ACK when one segment is in flight), no later than the RTO.
    fn arm_tlp(&mut self, now: Time) {
        self.tlp_deadline = None;
        if self.rack.is_none() || self.tlp_end.is_some() || self.in_recovery {
            return;
        }
        let (Some(srtt), Some(rto)) = (self.rtt.smoothed(), self.rto_deadline) else {
            return;
        };
        if self.snd_una >= self.snd_max || self.rec.recover.is_some_and(|rp| self.snd_una < rp) {
            return;
        }
        let mut pto = srtt + srtt;
        if self.snd_nxt - self.snd_una <= self.win.mss {
            pto += Time::from_millis(200);
        }
        self.tlp_deadline = Some((now + pto).min(rto));
    }

    /// Bytes in flight as Linux counts them for BBR (`tcp_packets_in_flight`:
    /// sent − SACKed − lost + retransmitted): with SACK information, RFC
    /// 6675's pipe; without, outstanding bytes less one segment per
    /// duplicate ACK (Linux's SACK emulation for Reno).
    fn bytes_in_flight(&self) -> u64 {
        if self.sb.sacked_count() > 0 {
            self.sb.pipe(self.rec.high_rxt.max(self.snd_una))
        } else {
            (self.snd_nxt - self.snd_una).saturating_sub(u64::from(self.dupacks) * self.win.mss)
        }
    }

    /// Whether a resent segment of `len` bytes ending at `end` fits the
    /// congestion window (when `check_cwnd`) and the receive window; if not,
    /// records which one limits the sender.
    fn window_allows(&mut self, len: u64, end: u64, check_cwnd: bool) -> bool {
        if check_cwnd && self.cwnd_flight() + len > self.win.cwnd {
            self.why = Limit::Cwnd;
            return false;
        }
        if end - self.snd_una > self.rwnd {
            self.why = Limit::Rwnd;
            return false;
        }
        true
    }

    /// What the congestion window is checked against outside SACK recovery:
    /// the bytes between `snd_una` and `snd_nxt` (FlightSize), or after a
    /// timeout that kept the scoreboard, RFC 6675's pipe — resent holes and
    /// new data, not the SACKed blocks the go-back-N skips nor the segments
    /// marked lost (ns-3 `BytesInFlight`: sent − SACKed − lost + retransmitted).
    fn cwnd_flight(&self) -> u64 {
        let flight = if self.rto_sack_recovery() {
            self.rec.pipe // recounted on every ACK, + each segment sent
        } else {
            self.snd_nxt - self.snd_una
        };
        flight + self.lt.fec_pipe()
    }

    /// The loss count an ACK's rate sample is the change of
    /// (`rate_losses`): bytes ever marked lost, or (ns-3.44) bytes marked
    /// lost and not SACKed now.
    fn rate_lost_count(&self) -> u64 {
        match self.cfg.rate_losses {
            RateLosses::Linux => self.sb.lost_total(),
            RateLosses::Ns3 => self.sb.lost_out(),
        }
    }

    /// Hand the congestion control this ACK's rate sample; its window stands.
    fn rate_sample(&mut self, now: Time, prior_inflight: u64, lost_before: u64, rtt: Option<Time>) {
        let inflight = self.bytes_in_flight();
        let Some(r) = self.rate.as_deref_mut() else {
            return;
        };
        let losses = match self.cfg.rate_losses {
            RateLosses::Linux => self.sb.lost_total().saturating_sub(lost_before),
            RateLosses::Ns3 => self.sb.lost_out().abs_diff(lost_before),
        };
        // Linux screens samples by its windowed minimum RTT, which linklab's
        // default sampler does not (draft-cheng leaves it optional); ns-3's
        // rule screens by its least smoothed RTT.
        let min_rtt = match self.cfg.rate_sample {
            RateSampleRule::Linux => None,
            RateSampleRule::Ns3 => self.rtt.min_smoothed(),
        };
        let rs = r.take(min_rtt, losses, rtt);
        let ctx = AckContext {
            now,
            inflight,
            prior_inflight,
            delivered: r.delivered(),
            in_recovery: self.in_recovery || self.rec.recover.is_some_and(|rp| self.snd_una < rp),
            srtt: self.rtt.smoothed(),
        };
        self.cc.on_rate_sample(&mut self.win, &rs, &ctx);
        self.win.cwnd = self.win.cwnd.max(self.win.mss);
    }

    /// The pacing rate in bytes/s: the algorithm's, else Linux's rule
    /// (`tcp_update_pacing_rate`): 2 × cwnd / srtt in slow start (cwnd below
    /// half ssthresh), 1.2 × after. `None`: not pacing yet (no RTT).
    fn pacing_rate(&self) -> Option<f64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r);
        }
        let srtt = self.rtt.smoothed()?.as_secs_f64();
        if srtt <= 0.0 {
            return None;
        }
        let gain = if self.win.cwnd < self.win.ssthresh / 2 {
            2.0
        } else {
            1.2
        };
        Some(gain * self.win.cwnd as f64 / srtt)
    }

    fn count_timeout(&mut self) {
        self.stats.timeouts += 1;
        if self.rtt.backoff_count() == 0 {
            self.stats.timeout_episodes += 1;
        }
    }

    /// The retransmission timer; tolerates early, late and spurious calls.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.phase == Phase::Established {
            if self
                .rack
                .as_ref()
                .and_then(|r| r.deadline)
                .is_some_and(|d| d <= now)
            {
                // RACK's reordering timer: look for losses again.
                self.mark_losses(now);
                let dt = self.cfg.dupack_threshold.max(1);
                if !self.in_recovery
                    && self.sack_loss_detected(dt)
                    && self.may_recover(self.snd_una)
                    && !self.ns3_cwr()
                {
                    self.enter_recovery(now);
                    self.record_cwnd(now);
                }
                if self.in_recovery || self.rto_sack_recovery() {
                    self.rec.pipe = self.sb.pipe(self.rec.high_rxt);
                }
            }
            if self.tlp_deadline.is_some_and(|d| d <= now) {
                // RFC 8985 §7.3: send a probe (new data if any, else the last segment).
                self.tlp_deadline = None;
                self.tlp_pending = true;
                self.stats.tlp_probes += 1;
                return;
            }
        }
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if now < deadline {
            return;
        }
        match self.phase {
            Phase::Closed => self.rto_deadline = None,
            Phase::SynSent => {
                let fired = (self.syn_timer(), self.rtt.backoff_count());
                self.count_timeout();
                self.rtt.backoff();
                self.syn_pending = true;
                self.rto_deadline = Some(now + self.syn_timer());
                self.record_rto(now, true, fired);
            }
            Phase::Established => {
                if self.snd_una >= self.snd_max {
                    self.rto_deadline = None;
                    return;
                }
                let fired = (self.rtt.rto(), self.rtt.backoff_count());
                self.count_timeout();
                self.data_timeouts += 1;
                self.note_loss(now);
                self.rtt.backoff();
                self.timed = None;
                // A timeout during fast recovery: FlightSize counts segments
                // sent on the strength of window inflation (one per dupack),
                // far more than the network holds. Base the reduction on the
                // window recovery started from, as ns-2 and Linux do.
                let mut flight = self.snd_nxt - self.snd_una;
                if self.in_recovery {
                    flight = flight.min(self.rec.recovery_cwnd);
                }
                if self.ns3_cut_flight() {
                    // ns-3's `inFlightBeforeRto`.
                    flight = self.ns3_pipe(false);
                }
                let ssthresh = self.win.ssthresh;
                self.cut(Signal::Timeout, flight, now);
                let keep = match self.cfg.window_cuts {
                    // RFC 5681 §3.1: ssthresh is set only on the first
                    // timeout of a given segment.
                    WindowCuts::Rfc5681 => self.rto_retransmitted,
                    // ns-2 halves it at every timeout, except in the window
                    // of an ECN reduction (`TcpAgent::timeout`).
                    _ => self.last_cut_ecn && self.ecn_recover.is_some_and(|r| self.snd_una < r),
                };
                if keep {
                    self.win.ssthresh = ssthresh;
                }
                self.win.cwnd = self.win.cwnd.max(self.win.mss);
                self.rto_retransmitted = true;
                self.in_recovery = false;
                self.cwr = false;
                self.dupacks = 0;
                self.rtx_pending = None;
                if self.cfg.variant != Variant::Reno {
                    self.rec.recover = Some(self.snd_max);
                } else if self.cfg.reno_rto_guard {
                    self.rto_guard = Some(self.snd_max);
                }
                self.ecn_recover = Some(self.snd_max);
                self.last_cut_ecn = false;
                // Go-back-N; forget SACK information (RFC 2018 §8), or keep it
                // and resend only what was not SACKed (Linux, ns-3).
                self.snd_nxt = self.snd_una;
                if self.cfg.variant == Variant::Sack && self.cfg.rto_keeps_sack {
                    self.sb.mark_unsacked_lost();
                } else if self.cfg.variant == Variant::Sack && self.rack.is_some() {
                    // RFC 2018 §8 with RACK: forget the SACKs, and take
                    // everything outstanding for lost (the go-back-N resends
                    // it; RACK then tells the retransmissions lost again).
                    self.sb.clear_marks();
                    self.sb.mark_unsacked_lost();
                } else {
                    self.sb.clear_marks();
                }
                self.rec.high_rxt = self.snd_una;
                self.rec.pipe = 0;
                if self.cfg.sacked_rtx_in_pipe {
                    // ns-3's `SetSentListLost` clears every retransmitted flag.
                    self.sb.count_sacked_retransmissions(Some(now));
                }
                self.rec.ns2_pipe = 0;
                self.rec.ns2_after_timeout = self.rec.sack1();
                self.lt.on_timeout();
                self.rto_deadline = Some(now + self.rtt.rto());
                self.record_rto(now, false, fired);
                // A row at every data timeout, even when the window was
                // already one segment and ssthresh kept (a backed-off
                // timeout): the trace's count shows each one.
                self.trace.force_cwnd_row();
            }
        }
        self.record_cwnd(now);
    }

    /// When the sender next needs [`handle_timeout`](Self::handle_timeout)
    /// (the retransmission timer, or the pacing time of a packet waiting).
    pub fn poll_timeout(&self) -> Option<Time> {
        let pace = self.pace_blocked.then_some(self.next_send);
        let rack = self.rack.as_ref().and_then(|r| r.deadline);
        // The earliest of those set (a plain fold: `flatten().min()` over the
        // four costs ~100 instructions on every flush of every sender).
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        earliest(
            earliest(self.rto_deadline, pace),
            earliest(rack, self.tlp_deadline),
        )
    }

    /// Next packet to send; call until `None` after every other call.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        match self.phase {
            Phase::Closed => None,
            Phase::SynSent => {
                if !self.syn_pending {
                    return None;
                }
                self.syn_pending = false;
                self.syn_tx += 1;
                if self.syn_tx == 1 {
                    self.syn_sent_at = now;
                }
                if self.rto_deadline.is_none() {
                    self.rto_deadline = Some(now + self.syn_timer());
                }
                let mut flags = TcpFlags(TcpFlags::SYN);
                if self.cfg.ecn {
                    flags.set(TcpFlags::ECE | TcpFlags::CWR); // ECN-setup SYN
                }
                Some(Packet {
                    flow: self.flow,
                    src: self.src,
                    dst: self.dst,
                    kind: Kind::Data,
                    header: self.cfg.syn_header(),
                    flags,
                    // RFC 3168 §6.1.1: a SYN is Not-ECT, but for a congestion
                    // control that needs ECN (Linux's `tcp_ecn_send_syn`).
                    ecn: if self.ect_always {
                        Ecn::Ect0
                    } else {
                        Ecn::NotEct
                    },
                    sent_at: now,
                    retransmit: self.syn_tx > 1,
                    ..Packet::default()
                })
            }
            Phase::Established => {
                self.why = Limit::Sender;
                self.transmit_data(now).or_else(|| {
                    self.stopped(now);
                    None
                })
            }
        }
    }

    /// The sender stopped sending at `now` for the reason in `self.why`:
    /// close the interval of the previous state and enter that one (none
    /// once the transfer is complete: the flow has nothing left to send).
    fn stopped(&mut self, now: Time) {
        if let Some(l) = self.limit {
            self.limit_ns[l as usize] += now.saturating_sub(self.limit_since).0;
        }
        self.limit_since = now;
        self.limit = if self.stats.completed_at.is_none() {
            Some(self.why)
        } else {
            None
        };
    }

    /// How long the sending was limited by what, up to `end` (the end of
    /// the run); see [`SendLimits`].
    pub fn send_limits(&self, end: Time) -> SendLimits {
        let mut ns = self.limit_ns;
        if let Some(l) = self.limit {
            ns[l as usize] += end.saturating_sub(self.limit_since).0;
        }
        let s = |n: u64| n as f64 * 1e-9;
        SendLimits {
            busy_s: s(ns.iter().sum()),
            rwnd_s: s(ns[Limit::Rwnd as usize]),
            cwnd_s: s(ns[Limit::Cwnd as usize]),
            sender_s: s(ns[Limit::Sender as usize]),
            rwnd_bytes: self.rwnd,
            min_rtt_s: self.min_rtt.map(Time::as_secs_f64),
        }
    }

    fn transmit_data(&mut self, now: Time) -> Option<Packet> {
        if std::mem::take(&mut self.partial_ack_tx) {
            if let Some(p) = self.ns3_partial_ack_send(now) {
                return Some(p);
            }
        }
        if self.pacing {
            self.pace_blocked = now < self.next_send;
            if self.pace_blocked {
                self.why = Limit::Cwnd;
                return None;
            }
        }
        if std::mem::take(&mut self.tlp_pending) && self.snd_una < self.snd_max {
            return Some(self.send_probe(now));
        }
        if let Some(seq) = self.rtx_pending.take() {
            if seq >= self.snd_una && self.fec_hold(seq, now).is_none() {
                if let Some(idx) = self.sb.index_of(seq) {
                    return Some(self.send_segment(idx, now));
                }
            }
        }
        let ns3_cwr = self.ns3_sack_cwr();
        let sack_recovery = self.in_recovery && self.cfg.variant == Variant::Sack || ns3_cwr;
        if self.lt.blocks_on() {
            if let Some(p) = self.send_repair(now, sack_recovery) {
                return Some(p);
            }
        }
        if !sack_recovery {
            if let Some(p) = self.resend_rack_lost(now) {
                return Some(p);
            }
            if let Some(p) = self.resend_lost_after_rto(now) {
                return Some(p);
            }
            if self.why == Limit::Cwnd {
                return None;
            }
            return self.send_in_order(now, true);
        }
        if self.recovery_pipe() + (self.lt.fec_pipe() + self.seg_size()) as i64
            > self.win.cwnd as i64
        {
            self.why = Limit::Cwnd;
            return None;
        }
        self.next_seg(now, ns3_cwr)
    }

    /// The Tail Loss Probe (RFC 8985 §7.3): a new segment if the
    /// application has data and the receiver window allows it, else the
    /// highest-sequence segment again; outside the congestion window.
    fn send_probe(&mut self, now: Time) -> Packet {
        let limit = self.app_end.unwrap_or(u64::MAX);
        let new_len = (limit.saturating_sub(self.snd_max)).min(self.win.mss);
        let idx = if new_len > 0
            && self.snd_nxt == self.snd_max
            && self.snd_max + new_len - self.snd_una <= self.rwnd
        {
            self.sb
                .push(Segment::new(self.snd_max, new_len as u32, now));
            self.snd_max += new_len;
            self.sb.len() - 1
        } else {
            self.sb.len() - 1
        };
        let retrans = self.sb.get(idx).is_some_and(|s| s.tx_count > 0);
        self.tlp_end = Some((self.snd_max, retrans));
        let p = self.send_segment(idx, now);
        // The RTO restarts after the probe.
        self.rto_deadline = Some(now + self.rtt.rto());
        p
    }

    /// LT-TCP "FEC first, SACK as the fallback": if byte `seq` lies in a
    /// block whose repairs still to send or still in flight (sent less than
    /// one smoothed RTT ago, nothing sent after them acknowledged) cover its
    /// known holes, hold its retransmission back; returns the block's end.
    fn fec_hold(&self, seq: u64, now: Time) -> Option<u64> {
        let guard = || self.rtt.srtt().unwrap_or_else(|| self.rtt.rto());
        self.lt.hold(seq, now, guard, &self.sb)
    }

    /// [`TcpConfig::send_buffer`]: the buffer's data is all sent (less than
    /// a segment of it left). Marks the
    /// rate samples application-limited once per opening of the buffer, if
    /// less than the window is in flight (ns-3.44's `CalculateAppLimited`,
    /// Linux's `tcp_rate_check_app_limited`).
    fn send_buffer_full(&mut self) {
        self.why = Limit::Sender;
        if self.rate.is_none() || self.sndbuf_mark_una == Some(self.snd_una) {
            return;
        }
        let inflight = self.bytes_in_flight();
        if inflight >= self.win.cwnd {
            return;
        }
        self.sndbuf_mark_una = Some(self.snd_una);
        if let Some(r) = self.rate.as_deref_mut() {
            r.on_app_limited(inflight);
        }
    }

    /// Go-back-N retransmission at `snd_nxt`, else new data, if the windows
    /// allow (`check_cwnd`: flight + segment ≤ cwnd; rwnd always).
    fn send_in_order(&mut self, now: Time, check_cwnd: bool) -> Option<Packet> {
        while self.snd_nxt < self.snd_max {
            let idx = self.sb.index_of(self.snd_nxt)?;
            let seg = self.sb.get(idx)?;
            // ns-2 (go-back-N from t_seqno_) resends SACKed data too.
            if seg.sacked && !self.rec.sack1() {
                self.snd_nxt = seg.end();
                continue;
            }
            if !self.window_allows(u64::from(seg.len), seg.end(), check_cwnd) {
                return None;
            }
            return Some(self.send_segment(idx, now));
        }
        let limit = self.app_end.unwrap_or(u64::MAX);
        if let Some(buf) = self.cfg.send_buffer {
            // Less than a full segment left in the buffer to send.
            if limit > self.snd_max && self.snd_max + u64::from(self.cfg.mss) > self.snd_una + buf {
                self.send_buffer_full();
                return None;
            }
        }
        if limit <= self.snd_max {
            // Nothing more to send: the application limits the flow.
            if self.rate.is_some() {
                let inflight = self.bytes_in_flight();
                if let Some(r) = self.rate.as_deref_mut() {
                    r.on_app_limited(inflight);
                }
            }
            return None;
        }
        if self.snd_una == self.snd_max {
            self.restart_after_idle(now);
        }
        let seg_size = if self.lt.blocks_on() {
            let (size, opened) = self.lt.open_block(
                &self.cfg.lt,
                self.cfg.mss,
                self.win.cwnd,
                self.snd_max,
                &mut self.sb,
                &mut self.trace,
                now,
            );
            if opened {
                self.stats.fec_blocks += 1;
            }
            size
        } else {
            self.win.mss
        };
        let len = (limit - self.snd_max).min(seg_size);
        let flight = self.cwnd_flight();
        if check_cwnd && flight + len > self.win.cwnd {
            if flight + len > self.win.cwnd + self.limited_transmit_allowance() {
                self.why = Limit::Cwnd;
                return None;
            }
            self.lt_bytes += len;
        }
        if self.snd_max + len - self.snd_una > self.rwnd {
            self.why = Limit::Rwnd;
            return None;
        }
        self.sb.push(Segment::new(self.snd_max, len as u32, now));
        let idx = self.sb.len() - 1;
        self.snd_max += len;
        if self.lt.blocks_on() {
            let last = Some(self.snd_max) == self.app_end;
            self.lt.segment_added(&self.cfg.lt, self.snd_max, last);
        }
        Some(self.send_segment(idx, now))
    }

    /// New data is about to leave with nothing outstanding: if nothing was
    /// sent for longer than the RTO (back-off included), bring the window
    /// down by the `idle_restart` rule (RFC 5681 §4.1: "a TCP SHOULD set cwnd
    /// to no more than RW before beginning transmission if the TCP has not
    /// sent data in an interval exceeding the retransmission timeout"; Linux's
    /// `tcp_slow_start_after_idle_check`, which also needs `packets_out` = 0).
    /// Not before the first data (the initial window is the restart window),
    /// nor for BBR, which sets its window from rate samples.
    fn restart_after_idle(&mut self, now: Time) {
        let Some(last) = self.last_data_tx else {
            return;
        };
        if self.cfg.idle_restart == IdleRestart::Off || self.cc.wants_rate_samples() {
            return;
        }
        let rto = self.rtt.rto();
        let idle = now.saturating_sub(last);
        if idle <= rto {
            return;
        }
        let cwnd = self.win.cwnd;
        let rw = (u64::from(self.cfg.initial_window.max(1)) * self.win.mss).min(cwnd);
        self.win.cwnd = match self.cfg.idle_restart {
            IdleRestart::Rfc5681 => rw,
            IdleRestart::Linux => {
                // `tcp_current_ssthresh` outside a reduction, then one
                // halving for each further RTO the idle time lasts
                // (`while ((delta -= rto) > 0 && cwnd > restart_cwnd)`).
                if !self.in_recovery && !self.cwr {
                    self.win.ssthresh = self.win.ssthresh.max(cwnd / 2 + cwnd / 4);
                }
                let (mut w, mut left) = (cwnd, idle);
                loop {
                    left = left.saturating_sub(rto);
                    if left == Time::ZERO || w <= rw {
                        break;
                    }
                    w /= 2;
                }
                w.max(rw)
            }
            IdleRestart::Off => cwnd,
        };
        self.stats.idle_restarts += 1;
        self.record_cwnd(now);
    }

    /// RFC 6937's PRR on one ACK that delivered `delivered` bytes
    /// ([`Prr::rfc6937`]).
    fn prr_update(&mut self, delivered: u64) {
        let (ssthresh, mss, pipe) = (self.win.ssthresh, self.win.mss, self.rec.pipe);
        self.win.cwnd = self.prr.rfc6937(delivered, ssthresh, mss, pipe);
    }

    /// RFC 9937's PRR on one ACK ([`Prr::rfc9937`]).
    fn prr_update_rfc9937(&mut self, delivered: u64, safe: bool) {
        let (ssthresh, mss, pipe) = (self.win.ssthresh, self.win.mss, self.rec.pipe);
        if let Some(cwnd) = self.prr.rfc9937(delivered, safe, ssthresh, mss, pipe) {
            self.win.cwnd = cwnd;
        }
    }

    /// ns-3.44's PRR for one `DoRecovery` call ([`Prr::ns3`]).
    fn prr_update_ns3(&mut self, delivered: u64, dup: bool, safe: bool) {
        let (ssthresh, mss, pipe) = (self.win.ssthresh, self.win.mss, self.rec.pipe);
        if let Some(cwnd) = self.prr.ns3(delivered, dup, safe, ssthresh, mss, pipe) {
            self.win.cwnd = cwnd;
        }
    }

    /// RFC 3042: after the first and second duplicate ACK (below the
    /// threshold, outside recovery), new data may exceed cwnd by that many segments.
    fn limited_transmit_allowance(&self) -> u64 {
        if self.cfg.limited_transmit
            && !self.in_recovery
            && !self.ns3_cwr()
            && self.dupacks < self.cfg.dupack_threshold
        {
            u64::from(self.dupacks.min(2)) * self.seg_size()
        } else {
            0
        }
    }

    /// Transmit segment `idx` (new if never sent, else a retransmission).
    fn send_segment(&mut self, idx: usize, now: Time) -> Packet {
        let inflight = if self.rate.is_some() {
            self.bytes_in_flight()
        } else {
            0
        };
        let pace = if self.pacing {
            self.pacing_rate()
        } else {
            None
        };
        self.order += 1;
        let (rate, order, rack) = (&mut self.rate, self.order, self.rack.is_some());
        let seg = self
            .sb
            .update(idx, |seg| {
                if let Some(r) = rate.as_deref_mut() {
                    seg.tx = r.on_send(now, inflight);
                }
                seg.tx_count += 1;
                seg.last_sent = now;
                if rack && seg.tx_count > 1 {
                    // RACK: a retransmitted segment is in flight again until
                    // RACK finds it lost again.
                    seg.lost = false;
                }
                seg.order = order;
                *seg
            })
            .expect("segment index within scoreboard");
        if let Some(rate) = pace.filter(|&r| r > 0.0) {
            let gap = Time::from_secs_f64(f64::from(seg.len) / rate);
            self.next_send = self.next_send.max(now) + gap;
        }
        let retransmit = seg.tx_count > 1;
        let newreno_partial =
            self.cfg.variant == Variant::NewReno && self.in_recovery && !self.rec.first_partial;
        if retransmit
            && idx == 0
            && self.cfg.rto_estimator == RtoEstimator::Linux
            && self.cfg.rto_tick.is_none()
            && !newreno_partial
        {
            // Linux's `tcp_xmit_retransmit_queue`: retransmitting the head
            // of the retransmission queue restarts the timer, so a fast
            // retransmission queued behind a full buffer is not timed from
            // the last new ACK. (Linux skips it while RACK's reordering
            // timer holds the connection's one timer slot, but re-arms the
            // RTO when that timer fires, from the head's latest
            // transmission, `tcp_rearm_rto` / `tcp_rto_delta_us`: the same
            // deadline, which linklab's separate timers keep at once.) Not
            // at NewReno's later partial ACKs: RFC 6582's "impatient" timer
            // restarts at the first one only (§4), else a recovery from a
            // slow-start overshoot repairs one segment per RTT for minutes.
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if !retransmit && self.timed.is_none() && self.cfg.rto_tick.is_some() {
            self.timed = Some((seg.end(), now));
        }
        let mut flags = TcpFlags(TcpFlags::ACK);
        let mut ecn = Ecn::NotEct;
        if !retransmit && self.cfg.ecn {
            ecn = Ecn::Ect0;
            if self.cfg.cwr_per_echo {
                if self.ns3_ece.cwr_flag(seg.seq) {
                    flags.set(TcpFlags::CWR);
                }
            } else if self.cwr_pending {
                self.cwr_pending = false;
                flags.set(TcpFlags::CWR);
            }
        } else if self.ect_always {
            // RFC 3168 §6.1.5 sends retransmissions Not-ECT; a congestion
            // control that needs ECN keeps them ECT (Linux's `tcp_ecn_send`
            // with `tcp_ca_needs_ecn`), else its step marker drops them.
            ecn = Ecn::Ect0;
        }
        if seg.seq == self.snd_nxt {
            self.snd_nxt = seg.end();
        }
        let sack_recovery = self.in_recovery && self.cfg.variant == Variant::Sack;
        if sack_recovery || self.rto_sack_recovery() || self.ns3_sack_cwr() {
            self.rec.pipe += u64::from(seg.len);
            if retransmit && self.rack.is_none() {
                self.rec.high_rxt = self.rec.high_rxt.max(seg.end());
            }
        }
        if sack_recovery {
            self.rec.ns2_pipe += i64::from(seg.len);
        }
        if sack_recovery || self.cwr {
            self.prr.out += u64::from(seg.len);
        }
        self.last_data_tx = Some(now);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += u64::from(seg.len);
        self.stats.wire_bytes += u64::from(seg.len) + u64::from(self.header);
        if retransmit {
            self.stats.retransmits += 1;
        }
        if let Some(e) = self.loss_events.as_mut() {
            e.on_packet(self.stats.segments_sent);
        }
        self.trace.sent(now, seg.seq, retransmit);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        Packet {
            uid: 0,
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            kind: Kind::Data,
            seq: seg.seq,
            ack: 0,
            payload: seg.len,
            header: self.header,
            flags,
            ecn,
            sack: SackBlocks::EMPTY,
            sent_at: now,
            ts_echo: if self.cfg.timestamps {
                self.ts_recent
            } else {
                Time::ZERO
            },
            retransmit,
            repair: None,
            erasure_echo: 0,
            hop: 0,
            corrupt: 0,
        }
    }

    fn enter_recovery(&mut self, now: Time) {
        self.stats.fast_retransmits += 1;
        // The cwnd trace has a row at every fast retransmit (its count rises).
        self.trace.force_cwnd_row();
        self.note_loss(now);
        if self.cfg.rto_tick.is_some() {
            // ns-2's fast retransmit (`reset_rtx_timer(1, 0)` in every
            // agent's `dupack_action`) restarts the timer and drops the
            // segment being timed (`rtt_active_ = 0`).
            self.restart_timer(now);
            self.timed = None;
        }
        // RFC 5681 §3.2 step 2: data sent by limited transmit does not count.
        // FlightSize is the data outstanding in the network; past a recovery
        // whose retransmissions were lost again (RACK resends them within the
        // episode, snd_una stays behind), snd_nxt − snd_una also spans
        // segments known lost and can be many windows: half of it raised
        // the window at every loss, and under PIE one flow settled at 50 %
        // loss (docs/models/tcp.md). No more than the window the sender had:
        // Linux cuts from cwnd, ns-3 from its in-flight estimate (sent −
        // SACKed − lost + retransmitted, never above cwnd).
        let flight = if self.ns3_cut_flight() {
            // ns-3's `EnterRecovery`: the head marked lost, then the pipe
            // (nothing retransmitted yet).
            self.ns3_pipe(true)
        } else {
            (self.snd_nxt - self.snd_una)
                .saturating_sub(self.lt_bytes)
                .min(self.win.cwnd)
        };
        self.lt_bytes = 0;
        if self.cfg.lt.ecn_only {
            // LT-TCP: loss is taken for an erasure; repair it, keep the window.
            self.stats.loss_responses_skipped += 1;
        } else if self.cwr {
            // Linux's `tcp_enter_recovery` inside a cwnd reduction: no
            // second cut; the reduction the ECN echo started goes on (its
            // ssthresh and PRR counts) as the recovery's.
            self.win.cwnd = self.cwr_target;
        } else if self.cfg.ecn_cut_covers_loss
            && self.last_cut_ecn
            && self.ecn_recover.is_some_and(|r| self.snd_una <= r)
        {
            // ns-2: the ECN reduction of this window stands for the loss.
        } else {
            self.cut(Signal::FastRetransmit, flight, now);
            self.ecn_recover = Some(self.snd_max);
        }
        self.last_cut_ecn = false;
        self.win.cwnd = self.win.cwnd.max(self.win.mss);
        self.rec.recovery_cwnd = self.win.cwnd;
        self.in_recovery = true;
        if !std::mem::take(&mut self.cwr) {
            self.prr.start(self.snd_max - self.snd_una);
        }
        self.rec.first_partial = true;
        self.rec.recover = Some(self.snd_max);
        self.rtx_pending = Some(self.snd_una);
        self.recovery_on_entry();
    }

    /// The window cut at a congestion signal: the congestion control's rule
    /// from `flight`, or ns-2's `slowdown` from the window
    /// ([`TcpConfig::window_cuts`]).
    fn cut(&mut self, signal: Signal, flight: u64, now: Time) {
        // RFC 3168 §6.1.2: after a window reduction "for any reason" (a
        // timeout, a fast retransmit or an ECN echo) the first new data
        // segment carries CWR, so the receiver stops echoing marks the
        // reduction has answered (Linux: `tcp_ecn_queue_cwr` in
        // `tcp_init_cwnd_reduction` and `tcp_enter_loss`). Without it a mark
        // from before a loss recovery kept the echo on, and the first ACK
        // past the recovery cut the window a second time. (ns-3.44 sends CWR
        // for echoes, not for reductions: `cwr_per_echo`, set where the echo
        // arrives.)
        if !self.cfg.cwr_per_echo {
            self.cwr_pending = true;
        }
        let m = self.win.mss;
        // ns-2's windowd(): min(cwnd_, wnd_).
        let w = self.win.cwnd.min(self.rwnd);
        let half = match self.cfg.window_cuts {
            WindowCuts::Rfc5681 => {
                self.cc.on_congestion(&mut self.win, signal, flight, now);
                return;
            }
            WindowCuts::Ns2 => w / 2,
            WindowCuts::Ns2Integer => w / m / 2 * m,
        };
        self.win.ssthresh = (half / m).max(2) * m;
        self.win.cwnd = match signal {
            Signal::Timeout => m,
            Signal::FastRetransmit | Signal::Ecn => half.max(m),
        };
    }

    /// ns-3.44's CA_CWR under [`TcpConfig::cwr_per_echo`]: no fast
    /// recovery starts from it (`DupAck`, tcp-socket-base.cc 1737–1830 at
    /// ns-3.44, enters recovery from CA_DISORDER only), so a loss found in
    /// it is repaired by what the scoreboard marks lost or waits for the
    /// retransmission timer.
    fn ns3_cwr(&self) -> bool {
        self.cfg.cwr_per_echo && self.cwr
    }

    /// ns-3.44's `EnterCwr` (tcp-socket-base.cc 1652–1676), called by
    /// `ReceivedAck` (1908–1924) at an echo on an ACK of new data in every
    /// state but CA_CWR: ssthresh from the congestion control at the bytes
    /// in flight (`BytesInFlight`), also inside a fast recovery (which it
    /// leaves: CA_RECOVERY → CA_CWR) or after a timeout (CA_LOSS → CA_CWR);
    /// the window left to the recovery ops (PRR; classic recovery sets it
    /// to ssthresh at once), the reduction's end at the highest byte sent
    /// (`m_recover`), and no growth until it ends (1895–1906: cwnd =
    /// ssthresh when an ACK passes it).
    fn ns3_enter_cwr(&mut self, now: Time) {
        let flight = self.bytes_in_flight() + self.lt.fec_pipe();
        let prior = self.win.cwnd;
        self.cut(Signal::Ecn, flight, now);
        self.win.cwnd = self.win.cwnd.max(self.win.mss);
        self.cwr_target = self.win.cwnd;
        if self.prr.on {
            self.win.cwnd = prior;
        }
        self.in_recovery = false;
        self.rtx_pending = None;
        self.cwr = true;
        self.prr.start(self.snd_max - self.snd_una);
        self.ecn_recover = Some(self.snd_max);
        self.last_cut_ecn = true;
        self.stats.ecn_reductions += 1;
    }

    /// React to ECN-Echo if allowed (not in recovery, once per window);
    /// returns whether the window was reduced.
    fn ecn_response(&mut self, now: Time) -> bool {
        let in_recovery = self.in_recovery && !self.cfg.lt.ecn_only;
        if in_recovery || self.ecn_recover.is_some_and(|r| self.snd_una <= r) {
            return false;
        }
        let mut flight = self.snd_nxt - self.snd_una + self.lt.fec_pipe();
        if self.in_recovery {
            flight = flight.min(self.rec.recovery_cwnd);
        }
        let prior = self.win.cwnd;
        self.cut(Signal::Ecn, flight, now);
        self.win.cwnd = self.win.cwnd.max(self.win.mss);
        if self.prr.on && !self.in_recovery {
            // Linux's `tcp_enter_cwr` (ns-3's `EnterCwr`): ssthresh now,
            // the window brought down to the cut by PRR over the next
            // round trip rather than at once.
            self.cwr = true;
            self.cwr_target = self.win.cwnd;
            self.win.cwnd = prior;
            self.prr.start(self.snd_max - self.snd_una);
        }
        if self.in_recovery {
            // ECN-only: the window recovery returns to is the reduced one.
            self.rec.recovery_cwnd = self.win.cwnd;
        }
        self.ecn_recover = Some(self.snd_max);
        self.last_cut_ecn = true;
        self.stats.ecn_reductions += 1;
        true
    }

    /// LT-TCP erasure estimate E in use (sender- or receiver-side).
    pub fn erasure_estimate(&self) -> f64 {
        self.lt.erasure_estimate(&self.cfg.lt)
    }

    /// A pending LT-TCP repair, if the window allows (the repair goes
    /// before new data; [`LtSender::next_repair`] chooses it).
    fn send_repair(&mut self, now: Time, sack_recovery: bool) -> Option<Packet> {
        let room = if sack_recovery {
            self.win.cwnd as i64 - self.recovery_pipe()
        } else {
            self.win.cwnd as i64 - (self.snd_nxt - self.snd_una) as i64
        };
        let plan = self
            .lt
            .next_repair(&self.cfg.lt, &self.sb, self.snd_una, room, now)?;
        let size = plan.size;
        if plan.proactive {
            self.stats.repairs_proactive += 1;
            self.stats.repair_bytes_proactive += size;
        } else {
            self.stats.repairs_reactive += 1;
            self.stats.repair_bytes_reactive += size;
        }
        self.stats.wire_bytes += size + u64::from(self.header);
        self.order += 1;
        self.last_data_tx = Some(now);
        self.lt.repair_sent(&plan, self.order);
        if sack_recovery && plan.in_window {
            self.prr.out += size;
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        Some(Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            kind: Kind::Data,
            seq: plan.start,
            payload: size as u32,
            header: self.header,
            flags: TcpFlags(TcpFlags::ACK),
            ecn: if self.cfg.ecn { Ecn::Ect0 } else { Ecn::NotEct },
            sent_at: now,
            ts_echo: if self.cfg.timestamps {
                self.ts_recent
            } else {
                Time::ZERO
            },
            repair: Some(Repair {
                block_len: plan.block_len,
                index: plan.index,
            }),
            ..Packet::default()
        })
    }

    /// Size of the segments now being sent.
    fn seg_size(&self) -> u64 {
        self.lt.seg_size(self.win.mss)
    }

    /// Window growth on an ACK of `acked` new bytes. With adaptive MSS the
    /// algorithm sees one ACK of full-sized segments per full-sized ACK's
    /// worth of bytes (MSS_max, or 2·MSS_max with delayed ACKs), so the window
    /// grows by the same bytes per round trip as with full-sized segments:
    /// granulation does not change aggressiveness. Repair packets occupy the
    /// window, so the repair bytes resolved since the last call, times the
    /// expected delivery ratio 1 − E, count as acknowledged too.
    fn grow(&mut self, acked: u64, sample: Option<Time>, now: Time) {
        let unit = self.win.mss * if self.cfg.delayed_ack { 2 } else { 1 };
        let (bytes, calls) = self.lt.growth_units(&self.cfg.lt, acked, unit);
        for _ in 0..calls {
            self.cc.on_ack(&mut self.win, bytes, sample, now);
        }
    }

    /// Linux's estimator takes Linux's RTT samples (SACKed segments too).
    fn linux_rtt(&self) -> bool {
        self.cfg.rto_estimator == RtoEstimator::Linux && self.cfg.rto_tick.is_none()
    }

    /// The RTT of a segment sent at `sent` and acknowledged at `now`: exact,
    /// or with `ts_rtt_ms` (and timestamps, outside Linux's and ns-2's
    /// estimators) on ns-3.44's 1 ms timestamp clock ([`ns3_ts_rtt`]).
    fn echo_rtt(&self, sent: Time, now: Time) -> Time {
        if self.cfg.ts_rtt_ms
            && self.cfg.timestamps
            && !self.linux_rtt()
            && self.cfg.rto_tick.is_none()
        {
            ns3_ts_rtt(sent, now)
        } else {
            now.saturating_sub(sent)
        }
    }

    /// Feed the RTT of a segment sent at `sent` to the estimator: a
    /// timestamp echo as a duration (ns-2's clock rounds it), otherwise as the
    /// interval between the two instants (ns-2's clock counts its ticks).
    fn rtt_sample(&mut self, sent: Time, now: Time) {
        let r = self.echo_rtt(sent, now);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_rtt_sample(r);
        }
        self.rtt.set_sequence(self.snd_una, self.snd_max);
        if self.cfg.timestamps {
            self.rtt.sample(r);
        } else {
            self.rtt.sample_between(sent, now);
        }
        self.rtt_samples += 1;
        let rtt = &self.rtt;
        self.trace.rtt(|| RttRow {
            at: now,
            sample: r,
            srtt: rtt.srtt().unwrap_or(r),
            rttvar: rtt.rttvar(),
            rto: rtt.rto(),
        });
    }

    /// An expiry of the timer that was `fired.0` long after `fired.1`
    /// doublings, for the `rto` trace (after the expiry's back-off and
    /// window cut).
    fn record_rto(&mut self, now: Time, syn: bool, fired: (Time, u32)) {
        let (rtt, una, win) = (&self.rtt, self.snd_una, &self.win);
        self.trace.rto(|| RtoRow {
            at: now,
            syn,
            rto: fired.0,
            backoff: fired.1,
            next_rto: rtt.rto(),
            seq: if syn { 0 } else { una },
            cwnd: win.cwnd,
            ssthresh: win.ssthresh,
        });
    }

    fn restart_timer(&mut self, now: Time) {
        self.rto_deadline = if self.snd_una < self.snd_max {
            Some(now + self.rtt.rto())
        } else {
            None
        };
    }

    fn check_complete(&mut self, now: Time) {
        if self.stats.completed_at.is_none()
            && !self.app_open
            && self.phase == Phase::Established
            && self.app_end.is_some_and(|e| self.snd_una >= e)
        {
            self.stats.completed_at = Some(now);
        }
    }

    fn record_cwnd(&mut self, now: Time) {
        let counts = (self.data_timeouts, self.stats.fast_retransmits);
        self.trace
            .cwnd(now, self.win.cwnd, self.win.ssthresh, counts);
    }

    /// Counters.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        self.win.cwnd
    }
    /// Slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        self.win.ssthresh
    }
    /// Smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Time> {
        self.rtt.srtt()
    }
    /// Current RTO, back-off included.
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }
    /// The LT-TCP switches in use.
    pub fn lt_config(&self) -> &super::LtConfig {
        &self.cfg.lt
    }
    /// Whether the sender is in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Oldest unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// One past the highest byte ever sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// The congestion-control algorithm.
    pub fn congestion_control(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// Turn tracing on or off. When on, `(time, cwnd, ssthresh)` is recorded on
    /// every change, `(time, seq, retransmit)` on every data transmission, an
    /// [`RttRow`] at every RTT sample and an [`RtoRow`] at every timer expiry.
    pub fn set_trace(&mut self, on: bool) {
        self.trace.set(on);
    }
    /// Take the recorded window trace: (time, cwnd, ssthresh, (data
    /// timeouts, fast retransmits) so far), a row per change and one at
    /// every data timeout and every fast retransmit.
    pub fn take_cwnd_trace(&mut self) -> Vec<CwndRow> {
        self.trace.take_cwnd()
    }
    /// Count loss events from fast retransmits and timeouts from now on
    /// (seed 001 §III-B, sender side; see [`super::loss_events`]).
    pub fn enable_loss_events(&mut self) {
        self.loss_events.get_or_insert_with(Default::default);
    }
    /// The sender-side loss-event history, when enabled.
    pub fn loss_events(&self) -> Option<&LossEventEstimator> {
        self.loss_events.as_deref()
    }
    /// A loss detected at `now` (fast retransmit or timeout). Packets are
    /// numbered by transmission (retransmissions included), so a loss
    /// interval is the number of segments sent between two loss events.
    fn note_loss(&mut self, now: Time) {
        let rtt = self.rtt.srtt().unwrap_or(Time::ZERO);
        if let Some(e) = self.loss_events.as_mut() {
            e.on_loss(now, self.stats.segments_sent + 1, rtt);
        }
    }
    /// Take the recorded LT-TCP erasure trace: `(time, new_l, E)` per window.
    pub fn take_erasure_trace(&mut self) -> Vec<(Time, f64, f64)> {
        self.trace.take_erasure()
    }
    /// Take the recorded LT-TCP block trace: `(time, mss, cwnd, k, P)` per block.
    pub fn take_mss_trace(&mut self) -> Vec<MssRow> {
        self.trace.take_mss()
    }
    /// Current segment size (the adaptive MSS, else the configured one).
    pub fn mss(&self) -> u64 {
        self.seg_size()
    }
    /// Take the recorded transmission trace.
    pub fn take_sent_trace(&mut self) -> Vec<(Time, u64, bool)> {
        self.trace.take_sent()
    }
    /// Take the recorded RTT samples (one row per sample, when tracing).
    pub fn take_rtt_trace(&mut self) -> Vec<RttRow> {
        self.trace.take_rtt()
    }
    /// Take the recorded retransmission-timer expiries (when tracing).
    pub fn take_rto_trace(&mut self) -> Vec<RtoRow> {
        self.trace.take_rto()
    }
    /// The RTT estimator's state now, for the summary.
    pub fn rtt_summary(&self) -> RttSummary {
        let srtt = self.rtt.srtt();
        RttSummary {
            samples: self.rtt_samples,
            srtt_s: srtt.map(Time::as_secs_f64),
            rttvar_s: srtt.map(|_| self.rtt.rttvar().as_secs_f64()),
            rto_s: self.rtt.rto().as_secs_f64(),
        }
    }
}

/// The sender's scoreboard; with [`TcpConfig::sacked_rtx_in_pipe`] its pipe
/// counts SACKed retransmissions as ns-3.44's does (from the start: no
/// timeout has cleared a flag yet).
fn ns3_pipe_scoreboard(cfg: &TcpConfig) -> Scoreboard {
    let mut sb = Scoreboard::new(cfg.mss.max(1));
    if cfg.sacked_rtx_in_pipe {
        sb.count_sacked_retransmissions(Some(Time::ZERO));
    }
    sb
}

/// ns-3.44's RTT from a timestamp echo: TSval is the send time in whole
/// milliseconds (`TcpOptionTS::NowToTsValue`, `GetMilliSeconds`, truncated),
/// the sample the whole milliseconds between it and now
/// (`ElapsedTimeFromTsValue`), and a sample of 0 is taken as 1 µs
/// (`CalculateRttSample`).
pub(crate) fn ns3_ts_rtt(sent: Time, now: Time) -> Time {
    let ms = |t: Time| t.as_nanos() / 1_000_000;
    match ms(now).saturating_sub(ms(sent)) {
        0 => Time::from_micros(1),
        d => Time::from_millis(d),
    }
}

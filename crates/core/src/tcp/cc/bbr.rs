//! BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00; Linux
//! `tcp_bbr.c` v1; ns-3 `TcpBbr`): a model of the path — the bottleneck
//! bandwidth (windowed maximum of delivery-rate samples over 10 round trips)
//! and the round-trip propagation time (windowed minimum of RTT samples over
//! 10 s) — drives a pacing rate (`pacing_gain · BtlBw`) and a window
//! (`cwnd_gain · BtlBw · RTprop` plus a quantum allowance). A state machine
//! sets the gains: Startup (2/ln 2) until the bandwidth stops growing by 25 %
//! for 3 rounds, Drain (its inverse) until the queue it built is gone,
//! ProbeBW cycling 5/4, 3/4, 1, 1, 1, 1, 1, 1, and ProbeRTT (4 packets for
//! 200 ms and a round) when the minimum RTT has not been refreshed for 10 s.
//! Loss does not reduce the model; in fast recovery the window follows packet
//! conservation for a round and is restored when recovery ends. See
//! docs/models/bbr.md.

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{AckContext, CcModel, CongestionControl, Signal, Window};
use crate::config::{ConfigError, Result};
use crate::tcp::rate::RateSample;
use crate::time::Time;

/// `cc = { kind = "bbr", … }`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BbrConfig {
    /// Startup pacing and window gain, > 1 (2/ln 2 = 2.885).
    #[serde(default = "defaults::high_gain")]
    pub high_gain: f64,
    /// Window gain in ProbeBW, ≥ 1 (2).
    #[serde(default = "defaults::cwnd_gain")]
    pub cwnd_gain: f64,
    /// Round trips the bottleneck-bandwidth maximum spans, 1 to 1000 (10).
    #[serde(default = "defaults::bw_rounds")]
    pub bw_rounds: u32,
    /// How long a minimum RTT stays valid before ProbeRTT ("10s").
    #[serde(default = "defaults::min_rtt_window")]
    pub min_rtt_window: Time,
    /// Time spent at the ProbeRTT window ("200ms").
    #[serde(default = "defaults::probe_rtt_duration")]
    pub probe_rtt_duration: Time,
    /// Smallest window, segments, 1 to 100 (4).
    #[serde(default = "defaults::min_cwnd_segments")]
    pub min_cwnd_segments: u32,
    /// Pacing rate margin below the model's rate, 0 to 0.5 (0.01, as Linux
    /// and ns-3).
    #[serde(default = "defaults::pacing_margin")]
    pub pacing_margin: f64,
    /// Linux's quantization budget in the flight targets (`bbr_inflight`):
    /// ProbeBW's phase ends, Drain's end and the window compare the data in
    /// flight with gain·BDP + 3 send quanta, rounded up to an even number of
    /// segments, + 2 segments in the 5/4 phase (the 5/4 phase also counts
    /// one quantum about to leave, `bbr_packets_in_net_at_edt`); off, the
    /// phases compare with the bare gain·BDP (the draft) and the window is
    /// gain·BDP + 3 quanta. Default false (true with profile "linux").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantization_budget: Option<bool>,
    /// The send quantum and the flight targets around it: "draft" (1 MSS
    /// below 1.2 Mbit/s, 2 below 24, else 1 ms of data up to 64 KiB, draft
    /// §4.2.2) or "ns3" (ns-3.44's `TcpBbr`: one segment always,
    /// `SetSendQuantum`; without the quantization budget the phases, Drain
    /// and the window compare with `InFlight` = gain·BDP + 3 segments, + 2
    /// in the 5/4 phase). Default "draft" ("ns3" with profile "ns3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_quantum: Option<SendQuantum>,
    /// The extra-acked (ACK aggregation) allowance in the window: "off"
    /// (the BBR v1 draft), "linux" (Linux's `bbr_update_ack_aggregation`:
    /// the most data ACKed beyond what the bandwidth estimate explains over
    /// an ACK epoch, the maximum of two 5-round windows, added to the
    /// window target once the pipe is full, at most 100 ms of the
    /// estimate and at most the window) or "ns3" (ns-3.44's
    /// `TcpBbr::UpdateAckAggregation`: the same, but the epoch's length is
    /// truncated to whole seconds, so nothing is expected within a second,
    /// and an epoch restarts when it would reach 4096 bytes,
    /// `AckEpochAckedResetThresh`). Default "off" ("ns3" with profile
    /// "ns3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_aggregation: Option<AckAggregation>,
    /// The window around losses: "linux" (Linux's
    /// `bbr_set_cwnd_to_recover_or_restore`, the draft: every ACK's newly
    /// lost bytes come out of the window, and the window from before is
    /// restored when fast recovery or a timeout's loss phase ends) or
    /// "ns3" (ns-3.44's `TcpBbr`: lost bytes come out of the window in
    /// fast recovery only, `ModulateCwndForRecovery` being called in
    /// `CA_RECOVERY` only, and leaving a timeout's `CA_LOSS` restores
    /// nothing, `RestoreCwnd` being called at `CA_EVENT_COMPLETE_CWR`,
    /// which only fast recovery's end raises). Default "linux" ("ns3" with
    /// profile "ns3").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_window: Option<LossWindow>,
}

/// `cc.loss_window` of BBR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LossWindow {
    /// Linux's `bbr_set_cwnd_to_recover_or_restore` (and the draft).
    #[default]
    Linux,
    /// ns-3.44's `TcpBbr::SetCwnd` / `CongestionStateSet` / `CwndEvent`
    /// (`src/internet/model/tcp-bbr.cc` at tag ns-3.44).
    Ns3,
}

/// `cc.ack_aggregation` of BBR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AckAggregation {
    /// No allowance (the BBR v1 draft).
    #[default]
    Off,
    /// Linux's `bbr_update_ack_aggregation` / `bbr_ack_aggregation_cwnd`.
    Linux,
    /// ns-3.44's `TcpBbr::UpdateAckAggregation` / `AckAggregationCwnd`
    /// (`src/internet/model/tcp-bbr.cc` at tag ns-3.44).
    Ns3,
}

/// ACK-epoch bookkeeping of the extra-acked estimate.
#[derive(Clone, Debug, Default)]
struct ExtraAcked {
    /// Maxima of the current and the previous window of rounds, bytes.
    max: [u64; 2],
    /// Index of the current window in `max`.
    idx: usize,
    /// Round starts seen in the current window.
    win_rounds: u32,
    /// Start of the ACK epoch.
    epoch_start: Time,
    /// Bytes ACKed in the epoch.
    epoch_acked: u64,
}

/// Round trips one extra-acked window spans (Linux and ns-3: 5).
const EXTRA_ACKED_ROUNDS: u32 = 5;

/// `cc.send_quantum` of BBR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SendQuantum {
    /// The draft's (§4.2.2) and Linux's pacing-rate-dependent quantum.
    #[default]
    Draft,
    /// ns-3.44's `TcpBbr` (`src/internet/model/tcp-bbr.cc`, `SetSendQuantum`
    /// and `InFlight` at tag ns-3.44).
    Ns3,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            high_gain: 2.0 / std::f64::consts::LN_2,
            cwnd_gain: 2.0,
            bw_rounds: 10,
            min_rtt_window: Time::from_secs(10),
            probe_rtt_duration: Time::from_millis(200),
            min_cwnd_segments: 4,
            pacing_margin: 0.01,
            quantization_budget: None,
            send_quantum: None,
            ack_aggregation: None,
            loss_window: None,
        }
    }
}

/// The defaults of [`BbrConfig`] for keys not written.
mod defaults {
    use super::BbrConfig;
    use crate::time::Time;

    pub fn high_gain() -> f64 {
        BbrConfig::default().high_gain
    }
    pub fn cwnd_gain() -> f64 {
        BbrConfig::default().cwnd_gain
    }
    pub fn bw_rounds() -> u32 {
        BbrConfig::default().bw_rounds
    }
    pub fn min_rtt_window() -> Time {
        BbrConfig::default().min_rtt_window
    }
    pub fn probe_rtt_duration() -> Time {
        BbrConfig::default().probe_rtt_duration
    }
    pub fn min_cwnd_segments() -> u32 {
        BbrConfig::default().min_cwnd_segments
    }
    pub fn pacing_margin() -> f64 {
        BbrConfig::default().pacing_margin
    }
}

impl CcModel for BbrConfig {
    fn validate(&self) -> Result<()> {
        let bad = |k: &str, v: String, why: &str| Err(ConfigError::new(k, v, why));
        if !(self.high_gain > 1.0 && self.high_gain <= 10.0) {
            return bad(
                "high_gain",
                self.high_gain.to_string(),
                "is out of range; allowed: above 1, at most 10",
            );
        }
        if !(1.0..=10.0).contains(&self.cwnd_gain) {
            return bad(
                "cwnd_gain",
                self.cwnd_gain.to_string(),
                "is out of range; allowed: 1 to 10",
            );
        }
        crate::config::check_range("bw_rounds", self.bw_rounds, 1, 1000)?;
        crate::config::check_range("min_cwnd_segments", self.min_cwnd_segments, 1, 100)?;
        if self.min_rtt_window == Time::ZERO {
            return bad(
                "min_rtt_window",
                "\"0s\"".into(),
                "is zero; it must be positive",
            );
        }
        if !(0.0..=0.5).contains(&self.pacing_margin) {
            return bad(
                "pacing_margin",
                self.pacing_margin.to_string(),
                "is out of range; allowed: 0 to 0.5",
            );
        }
        Ok(())
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(BbrCc::new(*self))
    }
}

/// The pacing-gain cycle of ProbeBW.
const GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

/// BBR's states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exponential search for the bandwidth.
    Startup,
    /// Drain the queue Startup built.
    Drain,
    /// Cruise at the bandwidth, probing with the gain cycle.
    ProbeBw,
    /// Refresh the minimum RTT at a tiny window.
    ProbeRtt,
}

/// A windowed maximum over round counts (exact: a monotone deque).
#[derive(Clone, Debug, Default)]
struct MaxFilter {
    samples: VecDeque<(u64, f64)>,
}

impl MaxFilter {
    fn update(&mut self, round: u64, value: f64, window: u64) {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((round, value));
        while self
            .samples
            .front()
            .is_some_and(|&(r, _)| r + window <= round)
        {
            self.samples.pop_front();
        }
    }

    fn best(&self) -> f64 {
        self.samples.front().map_or(0.0, |&(_, v)| v)
    }
}

/// BBR v1 state of one flow.
#[derive(Clone, Debug)]
pub struct BbrCc {
    cfg: BbrConfig,
    mode: Mode,
    btl_bw: MaxFilter,
    rt_prop: Option<Time>,
    rt_prop_stamp: Time,
    rt_prop_expired: bool,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: f64,
    full_bw_count: u32,
    filled_pipe: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: f64,
    cycle_index: usize,
    cycle_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    packet_conservation: bool,
    conservation_round: u64,
    in_recovery: bool,
    /// The recovery under way began with a timeout (ns-3's `CA_LOSS`), not
    /// a fast retransmit.
    after_timeout: bool,
    /// ns-3.44's ssthresh: `InFlight` at gain 1 when Drain began
    /// (`CheckDrain`), which `loss_window = "ns3"` puts the window at when
    /// fast recovery ends.
    drain_inflight: Option<u64>,
    /// Fast recovery began on this ACK: the window becomes what is in
    /// flight plus what it delivered, once the ACK's sample is in.
    recovery_entry: bool,
    /// Round-robin start of the ProbeBW cycle (Linux draws it at random; a
    /// fixed sequence keeps runs deterministic and still spreads flows).
    starts: u64,
    mss: u64,
    extra_acked: ExtraAcked,
}

impl BbrCc {
    /// BBR with `cfg`, in Startup.
    pub fn new(cfg: BbrConfig) -> BbrCc {
        BbrCc {
            mode: Mode::Startup,
            btl_bw: MaxFilter::default(),
            rt_prop: None,
            rt_prop_stamp: Time::ZERO,
            rt_prop_expired: false,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_count: 0,
            filled_pipe: false,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            pacing_rate: 0.0,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            packet_conservation: false,
            conservation_round: 0,
            recovery_entry: false,
            in_recovery: false,
            after_timeout: false,
            drain_inflight: None,
            starts: 0,
            mss: 0,
            extra_acked: ExtraAcked::default(),
            cfg,
        }
    }

    /// The state.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bottleneck bandwidth estimate, bytes/s.
    pub fn btl_bw(&self) -> f64 {
        self.btl_bw.best()
    }

    /// The round-trip propagation time estimate.
    pub fn rt_prop(&self) -> Option<Time> {
        self.rt_prop
    }

    /// Whether Startup found the pipe full.
    pub fn filled_pipe(&self) -> bool {
        self.filled_pipe
    }

    /// Round trips counted so far.
    pub fn rounds(&self) -> u64 {
        self.round_count
    }

    /// `gain · BtlBw · RTprop`, bytes (`None` before both are known).
    fn bdp(&self, gain: f64) -> Option<u64> {
        let bw = self.btl_bw.best();
        let rtt = self.rt_prop?;
        (bw > 0.0).then(|| (gain * bw * rtt.as_secs_f64()) as u64)
    }

    fn min_cwnd(&self) -> u64 {
        u64::from(self.cfg.min_cwnd_segments) * self.mss
    }

    /// Whether Linux's quantization budget is in the flight targets.
    fn budget(&self) -> bool {
        self.cfg.quantization_budget == Some(true)
    }

    /// The flight a phase compares with: gain·BDP, or with the budget
    /// Linux's `bbr_inflight` (`bbr_bdp` in whole segments, rounded up, +
    /// `bbr_quantization_budget`: 3 quanta, an even number of segments, + 2
    /// in ProbeBW's first phase, the 5/4 one).
    fn inflight_target(&self, gain: f64) -> Option<u64> {
        let bdp = self.bdp(gain)?;
        if !self.budget() {
            return Some(bdp + self.ns3_allowance());
        }
        let mss = self.mss.max(1);
        let mut segs = bdp.div_ceil(mss) + 3 * self.send_quantum().div_ceil(mss);
        segs += segs % 2;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            segs += 2;
        }
        Some(segs * mss)
    }

    /// Whether the send quantum and the flight targets are ns-3.44's.
    fn ns3_quantum(&self) -> bool {
        self.cfg.send_quantum == Some(SendQuantum::Ns3)
    }

    /// What ns-3.44's `InFlight` adds to gain·BDP without the budget: 3
    /// one-segment quanta, + 2 segments in ProbeBW's 5/4 phase (0 with the
    /// draft's rule, whose phases compare with the bare gain·BDP).
    fn ns3_allowance(&self) -> u64 {
        if !self.ns3_quantum() {
            return 0;
        }
        let extra = if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            2
        } else {
            0
        };
        (3 + extra) * self.mss
    }

    /// The send quantum (draft §4.2.2): 1 MSS below 1.2 Mbit/s, 2 below 24,
    /// else 1 ms of data up to 64 KiB; one segment with ns-3's rule.
    fn send_quantum(&self) -> u64 {
        if self.ns3_quantum() {
            return self.mss;
        }
        let rate = self.pacing_rate;
        if rate < 1.2e6 / 8.0 {
            self.mss
        } else if rate < 24e6 / 8.0 {
            2 * self.mss
        } else {
            ((rate * 1e-3) as u64).min(65_536)
        }
    }

    /// Updates the extra-acked estimate with an ACK's sample (Linux
    /// `bbr_update_ack_aggregation`; ns-3.44 `UpdateAckAggregation`),
    /// after the round and the bandwidth are updated.
    fn update_ack_aggregation(&mut self, rs: &RateSample, now: Time, cwnd: u64) {
        let rule = self.cfg.ack_aggregation.unwrap_or_default();
        if rule == AckAggregation::Off || rs.acked_sacked == 0 {
            return;
        }
        let e = &mut self.extra_acked;
        if self.round_start {
            e.win_rounds = (e.win_rounds + 1).min(31);
            if e.win_rounds >= EXTRA_ACKED_ROUNDS {
                e.win_rounds = 0;
                e.idx = 1 - e.idx;
                e.max[e.idx] = 0;
            }
        }
        let elapsed = now.saturating_sub(e.epoch_start).as_secs_f64();
        let (elapsed, reset_at) = match rule {
            // ns-3.44 keeps the epoch's length in an integer of seconds and
            // restarts at `AckEpochAckedResetThresh` = 4096 bytes.
            AckAggregation::Ns3 => (elapsed.trunc(), 4096),
            // Linux: microseconds, and 2^20 packets.
            _ => (elapsed, (1u64 << 20) * self.mss.max(1)),
        };
        let mut expected = (self.btl_bw.best() * elapsed) as u64;
        if e.epoch_acked <= expected || e.epoch_acked + rs.acked_sacked >= reset_at {
            e.epoch_acked = 0;
            e.epoch_start = now;
            expected = 0;
        }
        e.epoch_acked += rs.acked_sacked;
        let extra = (e.epoch_acked - expected).min(cwnd);
        if extra > e.max[e.idx] {
            e.max[e.idx] = extra;
        }
    }

    /// The extra-acked allowance the window target adds once the pipe is
    /// full: the larger window's maximum, at most 100 ms of the bandwidth
    /// estimate (Linux `bbr_ack_aggregation_cwnd`, ns-3.44
    /// `AckAggregationCwnd`, both with gain 1).
    fn ack_aggregation_cwnd(&self) -> u64 {
        if self.cfg.ack_aggregation.unwrap_or_default() == AckAggregation::Off || !self.filled_pipe
        {
            return 0;
        }
        let cap = (self.btl_bw.best() * 0.1) as u64;
        self.extra_acked.max[0]
            .max(self.extra_acked.max[1])
            .min(cap)
    }

    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.cfg.high_gain;
        self.cwnd_gain = self.cfg.high_gain;
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.cfg.cwnd_gain;
        // Start anywhere but the 3/4 phase (index 1): the next phase after
        // `cycle_index`, so indices 2..=7 and 0.
        self.starts += 1;
        let start = [2usize, 3, 4, 5, 6, 7, 0][(self.starts % 7) as usize];
        self.cycle_index = (start + GAIN_CYCLE.len() - 1) % GAIN_CYCLE.len();
        self.advance_cycle(now);
    }

    fn advance_cycle(&mut self, now: Time) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % GAIN_CYCLE.len();
        self.pacing_gain = GAIN_CYCLE[self.cycle_index];
    }

    fn update_round(&mut self, rs: &RateSample, delivered: u64) {
        self.round_start = false;
        if rs.delivered > 0 && rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = delivered;
            self.round_count += 1;
            self.round_start = true;
        }
    }

    fn update_btl_bw(&mut self, rs: &RateSample, delivered: u64) {
        self.update_round(rs, delivered);
        if rs.valid && (rs.delivery_rate >= self.btl_bw.best() || !rs.is_app_limited) {
            self.btl_bw.update(
                self.round_count,
                rs.delivery_rate,
                u64::from(self.cfg.bw_rounds),
            );
        }
    }

    fn is_next_cycle_phase(&self, rs: &RateSample, ctx: &AckContext) -> bool {
        let full_length = self
            .rt_prop
            .is_some_and(|r| ctx.now.saturating_sub(self.cycle_stamp) > r);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        if self.pacing_gain > 1.0 {
            // Linux counts the quantum about to leave (`bbr_packets_in_net_at_edt`).
            let edt = if self.budget() {
                self.send_quantum()
            } else {
                0
            };
            return full_length
                && (rs.losses > 0
                    || self
                        .inflight_target(self.pacing_gain)
                        .is_some_and(|b| ctx.prior_inflight + edt >= b));
        }
        full_length
            || self
                .inflight_target(1.0)
                .is_some_and(|b| ctx.prior_inflight <= b)
    }

    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.filled_pipe || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw = self.btl_bw.best();
        if bw >= self.full_bw * 1.25 {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= 3 {
            self.filled_pipe = true;
        }
    }

    fn check_drain(&mut self, ctx: &AckContext) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / self.cfg.high_gain;
            self.cwnd_gain = self.cfg.high_gain;
            self.drain_inflight = self.inflight_target(1.0);
        }
        if self.mode == Mode::Drain && self.inflight_target(1.0).is_some_and(|b| ctx.inflight <= b)
        {
            self.enter_probe_bw(ctx.now);
        }
    }

    fn update_rt_prop(&mut self, rs: &RateSample, now: Time) {
        self.rt_prop_expired = self
            .rt_prop
            .is_some_and(|_| now > self.rt_prop_stamp + self.cfg.min_rtt_window);
        if let Some(rtt) = rs.rtt {
            if self.rt_prop.is_none_or(|r| rtt <= r) || self.rt_prop_expired {
                self.rt_prop = Some(rtt);
                self.rt_prop_stamp = now;
            }
        }
    }

    /// Whether this ACK's newly lost bytes come out of the window
    /// (`loss_window`): always (Linux), or in fast recovery only (ns-3.44).
    fn losses_cut_window(&self) -> bool {
        match self.cfg.loss_window.unwrap_or_default() {
            LossWindow::Linux => true,
            LossWindow::Ns3 => self.in_recovery && !self.after_timeout,
        }
    }

    /// The window when the recovery under way ends (`loss_window`): Linux
    /// restores the window from before it. ns-3.44 leaves it after a
    /// timeout's loss phase (no `CA_EVENT_COMPLETE_CWR`), and after fast
    /// recovery sets it to ssthresh (`ProcessAck` after its `RestoreCwnd`),
    /// which `TcpBbr` set to `InFlight` at gain 1 when Drain began (before
    /// Drain, ssthresh is still 2³² − 1: the window from before is kept).
    fn window_after_recovery(&self, w: &mut Window) {
        match self.cfg.loss_window.unwrap_or_default() {
            LossWindow::Linux => w.cwnd = w.cwnd.max(self.prior_cwnd),
            LossWindow::Ns3 if self.after_timeout => {}
            LossWindow::Ns3 => match self.drain_inflight {
                Some(ssthresh) => w.cwnd = ssthresh,
                None => w.cwnd = w.cwnd.max(self.prior_cwnd),
            },
        }
    }

    fn save_cwnd(&self, cwnd: u64) -> u64 {
        if !self.in_recovery && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        }
    }

    fn check_probe_rtt(&mut self, w: &mut Window, ctx: &AckContext, delivered: u64) {
        if self.mode != Mode::ProbeRtt && self.rt_prop_expired {
            self.prior_cwnd = self.save_cwnd(w.cwnd);
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if ctx.inflight <= self.min_cwnd() => {
                self.probe_rtt_done = Some(ctx.now + self.cfg.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = delivered;
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && ctx.now > done {
                    self.rt_prop_stamp = ctx.now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    if self.filled_pipe {
                        self.enter_probe_bw(ctx.now);
                    } else {
                        self.enter_startup();
                    }
                }
            }
            None => {}
        }
    }

    fn set_pacing_rate(&mut self, w: &Window, ctx: &AckContext) {
        let bw = self.btl_bw.best();
        if bw <= 0.0 {
            // Before the first sample: the initial window over the RTT.
            let rtt = ctx
                .srtt
                .unwrap_or(Time::from_millis(1))
                .as_secs_f64()
                .max(1e-6);
            self.pacing_rate = self.cfg.high_gain * w.cwnd as f64 / rtt;
            return;
        }
        let rate = self.pacing_gain * bw * (1.0 - self.cfg.pacing_margin);
        if self.filled_pipe || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample, ctx: &AckContext) {
        let acked = rs.acked_sacked;
        let target = if self.budget() || self.ns3_quantum() {
            self.inflight_target(self.cwnd_gain)
        } else {
            self.bdp(self.cwnd_gain)
                .map(|b| b + 3 * self.send_quantum())
        }
        .map(|t| t + self.ack_aggregation_cwnd());
        // Recovery: losses come out of the window; packet conservation for
        // the first round of fast recovery.
        if rs.losses > 0 && self.losses_cut_window() {
            w.cwnd = w.cwnd.saturating_sub(rs.losses).max(self.mss);
        }
        if self.packet_conservation {
            if self.round_count >= self.conservation_round {
                self.packet_conservation = false;
            } else {
                w.cwnd = w.cwnd.max(ctx.inflight + acked);
            }
        }
        if !self.packet_conservation {
            match target {
                Some(t) if self.filled_pipe => w.cwnd = (w.cwnd + acked).min(t),
                Some(t) if w.cwnd < t => w.cwnd += acked,
                None => w.cwnd += acked,
                _ => {}
            }
        }
        w.cwnd = w.cwnd.max(self.min_cwnd());
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(self.min_cwnd());
        }
    }
}

impl CongestionControl for BbrCc {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn on_ack(&mut self, w: &mut Window, _acked: u64, _rtt: Option<Time>, _now: Time) {
        // The window is set per rate sample; nothing grows on the side.
        self.mss = w.mss;
    }

    fn on_congestion(&mut self, w: &mut Window, signal: Signal, _flight: u64, _now: Time) {
        self.mss = w.mss;
        match signal {
            Signal::FastRetransmit => {
                self.prior_cwnd = self.save_cwnd(w.cwnd);
                self.in_recovery = true;
                self.after_timeout = false;
                self.packet_conservation = true;
                self.conservation_round = self.round_count + 1;
                self.recovery_entry = true;
            }
            Signal::Timeout => {
                self.prior_cwnd = self.save_cwnd(w.cwnd);
                self.in_recovery = true;
                self.after_timeout = true;
                self.packet_conservation = false;
                w.cwnd = self.mss;
            }
            // BBR v1 does not respond to ECN.
            Signal::Ecn => {}
        }
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn on_rate_sample(&mut self, w: &mut Window, rs: &RateSample, ctx: &AckContext) {
        self.mss = w.mss;
        if self.in_recovery && !ctx.in_recovery {
            // Recovery over: back to the window from before it.
            self.in_recovery = false;
            self.packet_conservation = false;
            self.window_after_recovery(w);
        }
        if std::mem::take(&mut self.recovery_entry) {
            // Draft §4.2.3.5 (Linux `bbr_set_cwnd_to_recover_or_restore`,
            // ns-3 `CongestionStateSet(CA_RECOVERY)`): packets in flight plus
            // those this ACK delivered, at least a segment's worth.
            w.cwnd = ctx.inflight + rs.acked_sacked.max(self.mss);
        }
        let delivered = ctx.delivered;
        self.update_btl_bw(rs, delivered);
        self.update_ack_aggregation(rs, ctx.now, w.cwnd);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, ctx) {
            self.advance_cycle(ctx.now);
        }
        self.check_full_pipe(rs);
        self.check_drain(ctx);
        self.update_rt_prop(rs, ctx.now);
        self.check_probe_rtt(w, ctx, delivered);
        self.set_pacing_rate(w, ctx);
        if rs.acked_sacked > 0 || rs.losses > 0 {
            self.set_cwnd(w, rs, ctx);
        }
    }

    fn pacing_rate(&self) -> Option<f64> {
        (self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }
}

#[cfg(test)]
mod tests;

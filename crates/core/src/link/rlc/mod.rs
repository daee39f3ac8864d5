//! UMTS RLC acknowledged mode (AM) radio bearer (3GPP TS 25.322), both
//! directions in one sans-IO state machine.
//!
//! Each direction has an SDU buffer (guarded by an [`Aqm`] and a
//! [`Limit`]), a transmitter that segments SDUs into fixed-size AMD PDUs and
//! retransmits what the peer reports missing, and, at the far end, a
//! receiver that reassembles SDUs and delivers them (in order, by default).
//! STATUS PDUs of a direction's receiver ride the *reverse* direction's TTIs,
//! ahead of its data, and suffer that direction's channel errors.
//!
//! Time is slotted: the PDUs sent in the TTI that starts at `t` (a multiple
//! of [`RlcConfig::tti`]) arrive at `t + one_way_delay`. The bearer needs
//! waking only when it has work: a TTI in which something is to be sent, a
//! PDU arrival, or a TTI at or after a timer expiry. An idle bearer costs no
//! events. See `docs/models/rlc-am.md` for the model and its deviations from
//! the standard.
//!
//! Fates: every SDU accepted by [`Link::enqueue`] ends as exactly one of
//! [`Delivery::Arrived`] (at the arrival of the PDU completing it, in order),
//! [`Delivery::Lost`] with [`DropCause::LinkArq`] (the receiver discarded it
//! on an MRW after the sender gave up at MaxDAT), or a front drop returned by
//! a later `enqueue`. The receiver's view decides: an SDU the sender discards
//! but the receiver had already delivered is delivered, not lost.

pub mod config;
mod pdu;
mod rx;
mod tx;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use self::pdu::{AirPdu, StatusPdu};
use self::rx::Rx;
use self::tx::{Mrw, PduState, Tx, TxPdu};
use super::adaptive_arq::{AdaptiveArq, GeParams, SduLossWindow};
use super::{Account, ArqStats, Delivery, Dir, Link, LinkStats, Place};
use crate::aqm::{Aqm, DequeueVerdict, DropCause, FqCodel, Limit, Occupancy, QueueView, Verdict};
use crate::channel::Channel;
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::Time;

/// RLC AM parameters (both directions). Field docs cite TS 25.322 (v6.4.0).
#[derive(Clone, Debug, PartialEq)]
pub struct RlcConfig {
    /// AMD PDU payload (data field), bytes (§9.2.1.4). Table 1: 320 bits = 40.
    pub pdu_payload_bytes: u32,
    /// AMD PDU header, bytes: D/C, 12-bit SN, P, HE (§9.2.1.4): 2.
    pub header_bytes: u32,
    /// Length indicator size, bytes (§9.2.2.8): 1 (7-bit LI) for PDUs of at
    /// most 126 bytes, 2 (15-bit LI) above.
    pub li_bytes: u32,
    /// Transmission time interval; TTI boundaries are multiples of it.
    pub tti: Time,
    /// PDUs sent in the TTI starting at `t` arrive at `t + one_way_delay`
    /// (half the wireless round trip delay; Table 1: 50 ms → 25 ms).
    pub one_way_delay: Time,
    /// Transmission window, PDUs (Configured_Tx_Window_Size, §9.7.1); ≤ 2047.
    pub tx_window: u32,
    /// MaxDAT (§9.7.3.4): a PDU is sent at most this many times; when it is
    /// found unacknowledged after that, its SDUs are discarded and the
    /// receiver is told to move its window (MRW). `None`: unlimited.
    pub max_dat: Option<u32>,
    /// Timer_Poll (§9.5 a): started when a poll is sent, stopped by a STATUS
    /// covering every PDU up to the poll; expiry triggers a new poll.
    pub poll_timer: Option<Time>,
    /// Poll_Window (§9.7.1): poll when (VT(S)+1−VT(A))/tx_window ≥ this
    /// fraction (Table 1: 50 % = 0.5). `None`: off.
    pub poll_window: Option<f64>,
    /// "Last transmission PDU poll": poll on the last PDU of the buffer.
    pub poll_last_pdu: bool,
    /// "Last retransmission PDU poll": poll on the last retransmitted PDU.
    pub poll_last_retx: bool,
    /// Timer_Status_Prohibit (§9.5 d): minimum spacing of STATUS PDUs.
    pub status_prohibit: Option<Time>,
    /// Missing PDU indicator (§9.7.2): send a STATUS when a gap appears.
    pub missing_pdu_detection: bool,
    /// In-sequence delivery of SDUs ("In-Sequence Delivery Indication", set by RRC).
    pub in_order_delivery: bool,
    /// Timer_MRW (§9.5 h): retransmission interval of an unacknowledged MRW.
    pub mrw_timer: Time,
    /// SDU buffer limit (SDUs or IP bytes counted per [`Self::buffer_counts`]).
    pub buffer_limit: Limit,
    /// Which SDUs count toward `buffer_limit` and the AQM's occupancy.
    /// Default: every SDU not yet fully acknowledged (seed 000 §2).
    pub buffer_counts: BufferCounts,
    /// Stale-NACK guard, the model's Estimated PDU Counter / Timer_EPC
    /// (§9.4 VR(EP), §9.5 Timer_EPC, §9.7.3.5): a NACK for a PDU whose
    /// latest transmission was sent less than this long before the STATUS
    /// arrived is ignored (the STATUS was built before that transmission
    /// could reach the receiver), and such a STATUS does not stop Timer_Poll
    /// for a poll sent less than this long before. Default: one round trip.
    pub epc: Epc,
    /// Cross-layer adaptive MaxDAT (seed 001 §III, `max_dat = "adaptive"`):
    /// the weight α ∈ [0, 1] of the target residual loss `α·P_W`. A direction
    /// adapts when [`Link::on_e2e_loss_rate`] reports a TCP flow's loss rate
    /// for it and its channel is Gilbert–Elliott. `None`: off.
    pub adaptive_alpha: Option<f64>,
    /// SDUs in the moving window of the residual-loss estimate `P_LL`
    /// (seed 001 §III-B: 100).
    pub sdu_loss_window: u32,
    /// How the sender learns which PDUs arrived: STATUS PDUs (the
    /// standard, default) or the analytic models' ideal feedback.
    pub feedback: Feedback,
}

/// How an RLC sender learns the fate of its AMD PDUs ([`RlcConfig::feedback`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Feedback {
    /// STATUS PDUs on the reverse direction, triggered by polls, gaps and
    /// timers (TS 25.322 §9.7.2), subject to its delay and channel.
    #[default]
    Status,
    /// The assumptions of seed 001's Markov model (§III-A iii, iv): at the
    /// start of the next TTI the sender knows, without error and without
    /// any STATUS PDU, which PDUs of the previous TTI arrived, and sends the
    /// others again in that TTI. Needs `one_way_delay ≤ tti` (a PDU has
    /// arrived by then). An SDU discard (MaxDAT) reaches the receiver the
    /// same way, at once and without error. No STATUS, poll or MRW PDU is
    /// sent: the model has no such traffic.
    Ideal,
}

/// The stale-NACK guard ([`RlcConfig::epc`]), TS 25.322's Estimated PDU
/// Counter mechanism applied at the sender: the receiver's report on a PDU
/// is only acted upon once the PDU's latest transmission can have reached
/// the receiver and the report can have come back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Epc {
    /// No guard: every NACK triggers a retransmission (TS 25.322 without
    /// the EPC mechanism).
    Off,
    /// Guard = the round trip, 2·`one_way_delay` (follows `one_way_delay`).
    /// In this model a transmission sent in the TTI starting at `r` is at the
    /// receiver at `r + one_way_delay`, and a STATUS built at or after that
    /// instant arrives at or after `r + 2·one_way_delay`: the guard is exact.
    #[default]
    RoundTrip,
    /// A fixed guard (e.g. a Timer_EPC as an implementation would configure
    /// it, 2·one_way_delay + TTI).
    Timer(Time),
}

/// Which SDUs of the sender's buffer count toward
/// [`RlcConfig::buffer_limit`] and the occupancy the AQM sees
/// ([`RlcConfig::buffer_counts`]). TS 25.322 leaves this to the
/// implementation; it only changes the accounting, never what is kept for
/// retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BufferCounts {
    /// An SDU counts from its arrival until every PDU holding its bytes is
    /// acknowledged, or it is discarded (seed 000 §2).
    #[default]
    Unacknowledged,
    /// An SDU counts from its arrival until its last PDU is sent for the
    /// first time (or it is discarded or dropped earlier). It stays in memory
    /// for retransmission until acknowledged but no longer counts.
    Unsent,
}

impl RlcConfig {
    /// Table 1 of Alcaraz & Cerdán (seed 000): 320-bit payload, 10 ms TTI,
    /// window 1024, MaxDAT 10, poll timer 60 ms, poll window 50 %, last-PDU
    /// and last-retransmission polls, status prohibit 60 ms, missing PDU
    /// detection, in-order delivery, 50 ms wireless round trip; buffer 40 SDUs.
    pub fn seed000() -> RlcConfig {
        RlcConfig {
            pdu_payload_bytes: 40,
            header_bytes: 2,
            li_bytes: 1,
            tti: Time::from_millis(10),
            one_way_delay: Time::from_millis(25),
            tx_window: 1024,
            max_dat: Some(10),
            poll_timer: Some(Time::from_millis(60)),
            poll_window: Some(0.5),
            poll_last_pdu: true,
            poll_last_retx: true,
            status_prohibit: Some(Time::from_millis(60)),
            missing_pdu_detection: true,
            in_order_delivery: true,
            mrw_timer: Time::from_millis(60),
            buffer_limit: Limit::Packets(40),
            buffer_counts: BufferCounts::Unacknowledged,
            epc: Epc::RoundTrip,
            adaptive_alpha: None,
            sdu_loss_window: 100,
            feedback: Feedback::Status,
        }
    }

    /// The stale-NACK guard in effect ([`RlcConfig::epc`]); `None`: off.
    pub fn epc_guard(&self) -> Option<Time> {
        match self.epc {
            Epc::Off => None,
            Epc::RoundTrip => Some(self.one_way_delay + self.one_way_delay),
            Epc::Timer(t) => Some(t),
        }
    }

    /// Bytes of every PDU on the air (header + payload).
    pub fn pdu_bytes(&self) -> u32 {
        self.header_bytes + self.pdu_payload_bytes
    }

    /// PDUs per TTI at `rate_bps` of RLC payload: ⌊rate·TTI / (8·payload)⌋.
    pub fn pdus_per_tti(&self, rate_bps: u64) -> u64 {
        let bits = u128::from(rate_bps) * u128::from(self.tti.0);
        let per_pdu = 8 * u128::from(self.pdu_payload_bytes) * 1_000_000_000;
        (bits / per_pdu).min(u128::from(u32::MAX)) as u64
    }

    /// Check the parameters; the message names the offending field.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=2).contains(&self.li_bytes) {
            return Err(format!("li_bytes must be 1 or 2, got {}", self.li_bytes));
        }
        if self.pdu_payload_bytes <= self.li_bytes {
            return Err(format!(
                "pdu_payload_bytes must exceed li_bytes ({}), got {}",
                self.li_bytes, self.pdu_payload_bytes
            ));
        }
        if self.pdu_bytes() > 126 && self.li_bytes == 1 {
            return Err(format!(
                "a {}-byte PDU needs 15-bit length indicators: li_bytes must be 2",
                self.pdu_bytes()
            ));
        }
        if i64::from(self.pdu_bytes()) * 8 < pdu::MIN_CONTROL_BITS {
            return Err(format!(
                "PDUs of {} bytes cannot hold a STATUS PDU (needs {} bits)",
                self.pdu_bytes(),
                pdu::MIN_CONTROL_BITS
            ));
        }
        if self.tti == Time::ZERO {
            return Err("tti must be positive".into());
        }
        if !(1..=2047).contains(&self.tx_window) {
            return Err(format!(
                "tx_window must be in 1..=2047 (12-bit SN space), got {}",
                self.tx_window
            ));
        }
        if self.max_dat == Some(0) {
            return Err("max_dat must be at least 1 (or unlimited)".into());
        }
        if self.poll_timer == Some(Time::ZERO) {
            return Err("poll_timer must be positive (or off)".into());
        }
        if let Some(w) = self.poll_window {
            if !(w > 0.0 && w <= 1.0) {
                return Err(format!("poll_window must be in (0, 1], got {w}"));
            }
        }
        if let Some(a) = self.adaptive_alpha {
            if !(0.0..=1.0).contains(&a) {
                return Err(format!("adaptive alpha must be in [0, 1], got {a}"));
            }
        }
        if self.sdu_loss_window == 0 {
            return Err("sdu_loss_window must be at least 1".into());
        }
        if self.mrw_timer == Time::ZERO {
            return Err("mrw_timer must be positive".into());
        }
        if self.feedback == Feedback::Ideal && self.one_way_delay > self.tti {
            return Err(format!(
                "delay {} exceeds tti {}, which feedback = \"ideal\" does not allow (a PDU \
                 must have arrived when its fate is known at the next TTI); allowed: \
                 delay ≤ tti, or feedback = \"status\"",
                self.one_way_delay, self.tti
            ));
        }
        match self.buffer_limit {
            Limit::Packets(0) | Limit::Bytes(0) => Err("buffer_limit must be positive".into()),
            _ => Ok(()),
        }
    }
}

/// One entry of a direction's rate schedule: from the first TTI at or after
/// `at`, the bearer carries `rate_bps` of RLC payload; if `aqm` is given,
/// the direction's AQM is replaced by it then (an RRC reconfiguration).
#[derive(Debug)]
pub struct RateStep {
    /// When the change is ordered.
    pub at: Time,
    /// RLC payload rate, bit/s.
    pub rate_bps: u64,
    /// The AQM that takes over at this step, if any.
    pub aqm: Option<Box<dyn Aqm>>,
}

/// The run-time parts of one direction of a bearer.
#[derive(Debug)]
pub struct RlcDirection {
    /// Rate schedule: first entry at time 0, times non-decreasing.
    pub schedule: Vec<RateStep>,
    /// The AQM guarding the SDU buffer.
    pub aqm: Box<dyn Aqm>,
    /// The channel that corrupts PDUs sent in this direction.
    pub channel: Box<dyn Channel>,
    /// The AQM's random stream.
    pub rng: Rng,
    /// FQ-CoDel's flow queues holding the SDUs not yet segmented (then
    /// `aqm` only names the kind); `None`: one FIFO.
    pub fq: Option<FqCodel>,
}

impl RlcDirection {
    /// A direction at a constant `rate_bps`.
    pub fn new(rate_bps: u64, aqm: Box<dyn Aqm>, channel: Box<dyn Channel>, rng: Rng) -> Self {
        RlcDirection {
            schedule: vec![RateStep {
                at: Time::ZERO,
                rate_bps,
                aqm: None,
            }],
            aqm,
            channel,
            rng,
            fq: None,
        }
    }

    /// Append a rate change at `at` (with an optional AQM replacement).
    pub fn then(mut self, at: Time, rate_bps: u64, aqm: Option<Box<dyn Aqm>>) -> Self {
        self.schedule.push(RateStep { at, rate_bps, aqm });
        self
    }
}

/// Protocol counters of one direction. Air counters (`*_sent`, `polls`,
/// `pdus_lost_on_air`, `air_bytes`) count what is transmitted on this
/// direction's channel — including STATUS PDUs of the *opposite*
/// direction's receiver; SDU counters concern this direction's SDUs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RlcCounters {
    /// AMD PDUs transmitted (first transmissions and retransmissions).
    pub data_pdus_sent: u64,
    /// AMD PDU retransmissions.
    pub data_pdus_retransmitted: u64,
    /// STATUS PDUs transmitted (for the opposite direction's data).
    pub status_pdus_sent: u64,
    /// MRW (SDU discard signalling) PDUs transmitted.
    pub mrw_pdus_sent: u64,
    /// PDUs of any kind corrupted by the channel.
    pub pdus_lost_on_air: u64,
    /// AMD PDUs sent with the poll bit.
    pub polls: u64,
    /// Timer_Poll expiries.
    pub poll_timer_expiries: u64,
    /// Bytes on the air: every PDU, header and padding included.
    pub air_bytes: u64,
    /// SDUs delivered at the far end.
    pub sdus_delivered: u64,
    /// IP bytes of the SDUs delivered (useful payload).
    pub delivered_bytes: u64,
    /// SDUs the sender discarded after MaxDAT.
    pub sdus_discarded: u64,
    /// SDUs reported lost (discarded by the receiver on an MRW).
    pub sdus_lost: u64,
    /// SDUs whose every PDU was acknowledged (the sender's "received").
    pub sdus_acked: u64,
}

impl RlcCounters {
    /// Every counter with its field name.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("data_pdus_sent", self.data_pdus_sent),
            ("data_pdus_retransmitted", self.data_pdus_retransmitted),
            ("status_pdus_sent", self.status_pdus_sent),
            ("mrw_pdus_sent", self.mrw_pdus_sent),
            ("pdus_lost_on_air", self.pdus_lost_on_air),
            ("polls", self.polls),
            ("poll_timer_expiries", self.poll_timer_expiries),
            ("air_bytes", self.air_bytes),
            ("sdus_delivered", self.sdus_delivered),
            ("delivered_bytes", self.delivered_bytes),
            ("sdus_discarded", self.sdus_discarded),
            ("sdus_lost", self.sdus_lost),
            ("sdus_acked", self.sdus_acked),
        ]
    }

    /// Useful bytes delivered per byte sent on the air (0 if nothing was sent).
    pub fn efficiency(&self) -> f64 {
        if self.air_bytes == 0 {
            0.0
        } else {
            self.delivered_bytes as f64 / self.air_bytes as f64
        }
    }
}

/// Where an SDU stands at the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SenderFate {
    /// In the buffer (not fully acknowledged).
    Buffered,
    /// Every PDU acknowledged.
    Acked,
    /// Discarded after MaxDAT.
    Discarded,
    /// Discarded by a front-dropping AQM before any PDU was sent.
    FrontDropped,
}

/// Where an SDU stands at the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RxFate {
    Pending,
    Delivered,
    Lost,
    /// Never sent (front drop).
    Dropped,
}

#[derive(Clone, Debug)]
struct Sdu {
    pkt: Packet,
    /// Stream bytes: the SDU and its length indicator.
    extent: u32,
    first_sn: Option<u64>,
    last_sn: Option<u64>,
    /// PDUs with bytes of this SDU not yet acknowledged.
    unacked: u32,
    /// Counted in `buf_sdus`/`buf_bytes` (see [`BufferCounts`]).
    counted: bool,
    /// When it entered the buffer (dequeue-time AQMs measure its sojourn).
    arrived: Time,
    /// A dequeue-time AQM has let it through (asked once, at segmentation).
    passed: bool,
    sender: SenderFate,
    rx: RxFate,
}

impl Sdu {
    /// `pkt` entering the buffer's SDU stream at `t` (`li` bytes of length
    /// indicator), counted toward the buffer; `passed`: no dequeue-time AQM
    /// is still to decide on it.
    fn buffered(pkt: Packet, li: u32, t: Time, passed: bool) -> Sdu {
        Sdu {
            pkt,
            extent: pkt.size() + li,
            first_sn: None,
            last_sn: None,
            unacked: 0,
            counted: true,
            arrived: t,
            passed,
            sender: SenderFate::Buffered,
            rx: RxFate::Pending,
        }
    }
}

#[derive(Debug)]
struct Half {
    /// The SDUs from the first not yet settled at both ends; with flow
    /// queues (`fq`), only those whose segmentation has started.
    sdus: VecDeque<Sdu>,
    sdu_base: u64,
    /// SDUs (and their IP bytes) counted toward the limit and the AQM.
    buf_sdus: u32,
    buf_bytes: u64,
    tx: Tx,
    rx: Rx,
    occ: Occupancy,
    aqm: Box<dyn Aqm>,
    rng: Rng,
    channel: Box<dyn Channel>,
    steps: Vec<RateStep>,
    next_step: usize,
    rate_bps: u64,
    pdus_per_tti: u64,
    /// PDUs on this direction's channel that will arrive, in arrival order.
    air: VecDeque<(Time, AirPdu)>,
    /// No TTI of this direction before this instant (one per boundary).
    tti_floor: Time,
    last_tick: Option<Time>,
    stats: LinkStats,
    counters: RlcCounters,
    inside: usize,
    /// SDUs whose segmentation started: they left the buffer's queue (the
    /// packet account's `departed`).
    segmented: u64,
    /// `P_LL`: fates of the last SDUs at the sender.
    p_ll: SduLossWindow,
    /// The cross-layer controller of MaxDAT, if adaptive.
    adaptive: Option<AdaptiveArq>,
    /// Largest SDU accepted (IP bytes): sets `n_pdu` for the model.
    max_sdu: u32,
    /// Time accounting of MaxDAT.
    mt: MaxDatClock,
    /// FQ-CoDel: SDUs wait here, per flow, until segmentation takes them
    /// (counted in `buf_sdus`/`buf_bytes` and `inside` meanwhile).
    fq: Option<Box<FqCodel>>,
}

/// Time-average bookkeeping of a direction's MaxDAT.
#[derive(Clone, Copy, Debug, Default)]
struct MaxDatClock {
    since: Time,
    /// Σ MaxDAT · ns over finite periods.
    area: f64,
    finite_ns: u64,
    unlimited_ns: u64,
    changes: u64,
}

impl Half {
    fn sdu_end(&self) -> u64 {
        self.sdu_base + self.sdus.len() as u64
    }
    fn sdu(&self, id: u64) -> Option<&Sdu> {
        id.checked_sub(self.sdu_base)
            .and_then(|i| self.sdus.get(i as usize))
    }
    fn sdu_mut(&mut self, id: u64) -> Option<&mut Sdu> {
        id.checked_sub(self.sdu_base)
            .and_then(|i| self.sdus.get_mut(i as usize))
    }
    fn has_new_data(&self) -> bool {
        self.tx.seg_next < self.sdu_end() || self.fq.as_ref().is_some_and(|f| !f.is_empty())
    }
    /// Whether an SDU is ready for segmentation: one already in `sdus`, or one
    /// FQ-CoDel's scheduler hands over at `t` (its CoDel may first discard
    /// head SDUs: they go to `lost`).
    #[inline(always)]
    fn take_next(&mut self, t: Time, li: u32, lost: &mut Vec<(Packet, DropCause)>) -> bool {
        if self.tx.seg_next < self.sdu_end() {
            return true;
        }
        self.take_from_fq(t, li, lost)
    }
    /// [`Half::take_next`] when `sdus` holds no unsegmented SDU.
    fn take_from_fq(&mut self, t: Time, li: u32, lost: &mut Vec<(Packet, DropCause)>) -> bool {
        let Some(fq) = self.fq.as_mut() else {
            return false;
        };
        let start = lost.len();
        let pkt = fq.dequeue(t, lost);
        self.occ.stats_mut().ecn_marks += fq.take_marks();
        for (p, c) in &lost[start..] {
            self.buf_sdus -= 1;
            self.buf_bytes -= u64::from(p.size());
            self.inside -= 1;
            self.occ.stats_mut().count_drop(*c);
        }
        if lost.len() > start {
            self.occ.set(t, self.buf_sdus, self.buf_bytes);
        }
        let Some(pkt) = pkt else { return false };
        self.sdus.push_back(Sdu::buffered(pkt, li, t, true));
        true
    }
    fn view(&self, limit: Limit) -> QueueView {
        QueueView {
            packets: self.buf_sdus,
            bytes: self.buf_bytes,
            limit,
        }
    }
    /// Skip SDUs dropped from the front before segmentation reached them.
    fn normalize_seg(&mut self) {
        while self.tx.seg_off == 0
            && self
                .sdu(self.tx.seg_next)
                .is_some_and(|s| s.sender == SenderFate::FrontDropped)
        {
            self.tx.seg_next += 1;
        }
    }
    /// Forget SDUs settled at both ends.
    fn pop_settled(&mut self) {
        while self
            .sdus
            .front()
            .is_some_and(|s| s.sender != SenderFate::Buffered && s.rx != RxFate::Pending)
        {
            self.sdus.pop_front();
            self.sdu_base += 1;
        }
    }
    /// The SDU leaves the sender's buffer at `now` (acknowledged or discarded).
    fn leave_buffer(&mut self, now: Time, id: u64, fate: SenderFate, limit: Limit) {
        let Some(s) = self.sdu_mut(id) else { return };
        if s.sender != SenderFate::Buffered {
            return;
        }
        s.sender = fate;
        let counted = s.counted;
        match fate {
            SenderFate::Acked => {
                self.counters.sdus_acked += 1;
                self.p_ll.push(false);
            }
            SenderFate::Discarded => self.p_ll.push(true),
            _ => {}
        }
        if !counted {
            return;
        }
        if fate == SenderFate::Acked {
            self.occ.stats_mut().departures += 1;
        }
        self.uncount(now, id, limit);
    }
    /// SDU `id` stops counting toward the buffer occupancy at `now`.
    fn uncount(&mut self, now: Time, id: u64, limit: Limit) {
        let Some(s) = self.sdu_mut(id) else { return };
        if !s.counted {
            return;
        }
        s.counted = false;
        let size = u64::from(s.pkt.size());
        self.buf_sdus -= 1;
        self.buf_bytes -= size;
        self.occ.set(now, self.buf_sdus, self.buf_bytes);
        let view = self.view(limit);
        self.aqm.on_departure(now, &view);
    }
}

/// An RLC AM radio bearer: a duplex [`Link`] (direction `AB` is usually the
/// downlink, RNC → UE).
#[derive(Debug)]
pub struct RlcBearer {
    cfg: RlcConfig,
    h: [Half; 2],
    /// Simulated time up to which the model has advanced.
    now: Time,
    out: VecDeque<(Time, Dir, Delivery)>,
    /// The window-based poll's threshold in PDUs: J = VT(S) + 1 − VT(A)
    /// polls when J ≥ `poll_window`·`tx_window`, i.e. (J whole) when J ≥
    /// this ceiling.
    poll_window_at: Option<u64>,
}

impl RlcBearer {
    /// A bearer with parameters `cfg` and directions `ab`, `ba`. Errors name
    /// the parameter or schedule entry at fault.
    pub fn new(cfg: RlcConfig, ab: RlcDirection, ba: RlcDirection) -> Result<RlcBearer, String> {
        cfg.check()?;
        let mk = |d: RlcDirection, name: &str| -> Result<Half, String> {
            let adaptive = cfg.adaptive_alpha.and_then(|alpha| {
                let (p_good, p_bad, g, b) = d.channel.gilbert_elliott()?;
                Some(AdaptiveArq::new(
                    alpha,
                    GeParams {
                        p_good,
                        p_bad,
                        g,
                        b,
                    },
                ))
            });
            if d.schedule.is_empty() {
                return Err(format!("{name}: the rate schedule is empty"));
            }
            if d.schedule[0].at != Time::ZERO {
                return Err(format!("{name}: the rate schedule must start at time 0"));
            }
            for (i, s) in d.schedule.iter().enumerate() {
                if i > 0 && s.at < d.schedule[i - 1].at {
                    return Err(format!(
                        "{name}: rate schedule entry {i} at {} goes back in time",
                        s.at
                    ));
                }
                if cfg.pdus_per_tti(s.rate_bps) == 0 {
                    return Err(format!(
                        "{name}: rate schedule entry {i}: {} bit/s carries no {}-byte PDU per {} TTI",
                        s.rate_bps, cfg.pdu_payload_bytes, cfg.tti
                    ));
                }
            }
            let mut h = Half {
                sdus: VecDeque::new(),
                sdu_base: 0,
                buf_sdus: 0,
                buf_bytes: 0,
                tx: Tx {
                    max_dat: cfg.max_dat,
                    ..Tx::default()
                },
                rx: Rx::default(),
                occ: Occupancy::default(),
                aqm: d.aqm,
                fq: d.fq.map(Box::new),
                rng: d.rng,
                channel: d.channel,
                steps: d.schedule,
                next_step: 0,
                rate_bps: 0,
                pdus_per_tti: 0,
                air: VecDeque::new(),
                tti_floor: Time::ZERO,
                last_tick: None,
                stats: LinkStats::default(),
                counters: RlcCounters::default(),
                inside: 0,
                segmented: 0,
                p_ll: SduLossWindow::new(cfg.sdu_loss_window),
                adaptive,
                max_sdu: 0,
                mt: MaxDatClock::default(),
            };
            apply_steps(&cfg, &mut h, Time::ZERO);
            Ok(h)
        };
        Ok(RlcBearer {
            h: [mk(ab, "ab")?, mk(ba, "ba")?],
            poll_window_at: cfg.poll_window.map(|w| poll_window_pdus(w, cfg.tx_window)),
            cfg,
            now: Time::ZERO,
            out: VecDeque::new(),
        })
    }

    /// The parameters.
    pub fn config(&self) -> &RlcConfig {
        &self.cfg
    }

    /// Change MaxDAT of direction `dir` from now on (`None`: unlimited;
    /// `Some(0)` is taken as 1). PDUs already sent that many times are
    /// discarded when next NACKed or scheduled.
    pub fn set_max_dat(&mut self, dir: Dir, max_dat: Option<u32>) {
        self.set_max_dat_at(self.now, dir.index(), max_dat);
    }

    /// [`Self::set_max_dat`] at `now`, keeping the time average.
    fn set_max_dat_at(&mut self, now: Time, c: usize, max_dat: Option<u32>) {
        let h = &mut self.h[c];
        h.mt.advance(now, h.tx.max_dat);
        let m = max_dat.map(|m| m.max(1));
        if m != h.tx.max_dat {
            h.mt.changes += 1;
        }
        h.tx.max_dat = m;
    }

    /// `P_LL` of direction `dir`: the fraction of the last
    /// [`RlcConfig::sdu_loss_window`] SDUs that were discarded at MaxDAT
    /// (`None` before the first SDU completes).
    pub fn sdu_loss_estimate(&self, dir: Dir) -> Option<f64> {
        self.h[dir.index()].p_ll.estimate()
    }

    /// PDUs an SDU of `bytes` IP bytes occupies when segmented alone:
    /// ⌈(bytes + LI) / payload⌉ (`n_pdu` of the analytic model).
    pub fn pdus_per_sdu(&self, bytes: u32) -> u32 {
        (bytes + self.cfg.li_bytes).div_ceil(self.cfg.pdu_payload_bytes)
    }

    /// Current MaxDAT of direction `dir`.
    pub fn max_dat(&self, dir: Dir) -> Option<u32> {
        self.h[dir.index()].tx.max_dat
    }

    /// Protocol counters of direction `dir`.
    pub fn counters(&self, dir: Dir) -> &RlcCounters {
        &self.h[dir.index()].counters
    }

    /// PDUs per TTI of direction `dir` at its current rate.
    pub fn pdus_per_tti(&self, dir: Dir) -> u64 {
        self.h[dir.index()].pdus_per_tti
    }

    /// SDUs of direction `dir` not yet fully acknowledged (the buffer occupancy).
    pub fn buffered_sdus(&self, dir: Dir) -> u32 {
        self.h[dir.index()].buf_sdus
    }

    fn ceil_tti(&self, t: Time) -> Time {
        let q = self.cfg.tti.0;
        Time(t.0.div_ceil(q).saturating_mul(q))
    }

    /// The earliest instant direction `c` has something to send.
    fn ready(&self, c: usize) -> Option<Time> {
        let now = self.now;
        let mut r: Option<Time> = None;
        let mut at = |t: Time| {
            let t = t.max(now);
            r = Some(r.map_or(t, |x: Time| x.min(t)));
        };
        let peer_rx = &self.h[1 - c].rx;
        if peer_rx.mrw_ack_due.is_some() {
            at(now);
        }
        if peer_rx.status_due {
            at(peer_rx.prohibit_until);
        }
        let h = &self.h[c];
        let tx = &h.tx;
        if let Some(m) = &tx.mrw {
            at(m.resend_at.unwrap_or(now));
        }
        let window_open = tx.vt_s() < tx.vt_a + u64::from(self.cfg.tx_window);
        if !tx.retx.is_empty()
            || !tx.fates.is_empty()
            || tx.poll_pending
            || (window_open && h.has_new_data())
        {
            at(now);
        }
        if let Some(dl) = tx.poll_deadline {
            at(dl);
        }
        r
    }

    /// The next TTI of direction `c` in which it sends something.
    fn next_tti(&self, c: usize) -> Option<Time> {
        let r = self.ready(c)?;
        Some(self.ceil_tti(r).max(self.h[c].tti_floor))
    }

    /// Process every internal event up to `until` (inclusive or not), in
    /// time order: arrivals before TTIs at the same instant, `AB` first.
    fn advance(&mut self, until: Time, inclusive: bool) {
        loop {
            let mut best: Option<(Time, u8, usize)> = None;
            let mut consider = |e: (Time, u8, usize)| {
                best = Some(best.map_or(e, |b| b.min(e)));
            };
            for c in 0..2 {
                if let Some(&(t, _)) = self.h[c].air.front() {
                    consider((t, 0, c));
                }
            }
            for c in 0..2 {
                if let Some(t) = self.next_tti(c) {
                    consider((t, 1, c));
                }
            }
            let Some((t, kind, c)) = best else { break };
            if t > until || (!inclusive && t == until) {
                break;
            }
            self.now = self.now.max(t);
            if kind == 0 {
                // The TTI's PDUs arrive together: the next arrival of this
                // direction at the same instant is the next event (a TTI at
                // `t` sorts after arrivals, only a TTI puts PDUs on the air,
                // always after `t`), so it skips the search.
                loop {
                    let (_, pdu) = self.h[c].air.pop_front().expect("front exists");
                    self.on_air(c, t, pdu);
                    let next_same = self.h[c].air.front().is_some_and(|&(t2, _)| t2 == t);
                    let other_first =
                        c == 1 && self.h[0].air.front().is_some_and(|&(t0, _)| t0 <= t);
                    if !next_same || other_first {
                        break;
                    }
                }
            } else {
                self.run_tti(c, t);
            }
        }
        self.now = self.now.max(until);
    }

    /// AQM clock ticks (and scheduled reconfigurations) of direction `c` at
    /// every TTI boundary up to `t` not yet ticked. While the buffer is empty
    /// only the last boundary is ticked.
    fn tick_until(&mut self, c: usize, t: Time) {
        let q = self.cfg.tti.0;
        let last = Time(t.0 / q * q);
        let h = &mut self.h[c];
        let mut b = match h.last_tick {
            None => Time::ZERO,
            Some(l) => l + self.cfg.tti,
        };
        if b > last {
            return;
        }
        if h.buf_sdus == 0 {
            b = last;
        }
        while b <= last {
            apply_steps(&self.cfg, h, b);
            let view = h.view(self.cfg.buffer_limit);
            h.aqm.on_tick(b, &view);
            b += self.cfg.tti;
        }
        h.last_tick = Some(last);
    }

    /// Send `pdu` on direction `c` in the TTI starting at `t`; whether it
    /// arrives (the channel decides now).
    fn emit(&mut self, c: usize, t: Time, pdu: AirPdu) -> bool {
        let bytes = u64::from(self.cfg.pdu_bytes());
        let h = &mut self.h[c];
        h.counters.air_bytes += bytes;
        if h.channel.unit_error() {
            h.counters.pdus_lost_on_air += 1;
            false
        } else {
            h.air.push_back((t + self.cfg.one_way_delay, pdu));
            true
        }
    }

    /// Whether a window-based poll is due when sending with VT(S) = `vt_s`.
    fn window_poll(&self, c: usize) -> bool {
        let Some(at) = self.poll_window_at else {
            return false;
        };
        let tx = &self.h[c].tx;
        tx.vt_s() + 1 - tx.vt_a >= at
    }

    /// Transmit AMD PDU `sn` of direction `c` in the TTI starting at `t`.
    fn send_data(&mut self, c: usize, t: Time, sn: u64, poll: bool, retx: bool) {
        let h = &mut self.h[c];
        let p = h.tx.pdu_mut(sn).expect("PDU in window");
        p.tx_count += 1;
        p.last_tx = t;
        let (first_sdu, last_sdu, first_tx) = (p.first_sdu, p.last_sdu, p.tx_count == 1);
        h.counters.data_pdus_sent += 1;
        if retx {
            h.counters.data_pdus_retransmitted += 1;
        }
        if first_tx {
            // The link's packets are IP packets (SDUs): each counts once, when
            // its first PDU goes out (PDUs and air bytes: `RlcCounters`).
            for id in first_sdu..=last_sdu {
                if let Some(size) = h
                    .sdu(id)
                    .filter(|s| s.first_sn == Some(sn))
                    .map(|s| s.pkt.size())
                {
                    h.stats.tx_packets += 1;
                    h.stats.tx_bytes += u64::from(size);
                }
            }
        }
        if first_tx && self.cfg.buffer_counts == BufferCounts::Unsent {
            let limit = self.cfg.buffer_limit;
            for id in first_sdu..=last_sdu {
                if h.sdu(id).is_some_and(|s| {
                    s.counted && s.sender == SenderFate::Buffered && s.last_sn == Some(sn)
                }) {
                    h.occ.stats_mut().departures += 1;
                    h.uncount(t, id, limit);
                }
            }
        }
        if poll {
            h.counters.polls += 1;
            h.tx.poll_pending = false;
            h.tx.poll_deadline = self.cfg.poll_timer.map(|p| t + p);
            h.tx.poll_sn = h.tx.vt_s();
            h.tx.poll_at = t;
        }
        let arrived = self.emit(
            c,
            t,
            AirPdu::Data {
                sn,
                first_sdu,
                last_sdu,
                poll,
            },
        );
        if self.cfg.feedback == Feedback::Ideal {
            self.h[c].tx.fates.push((sn, arrived));
        }
    }

    /// A dequeue-time AQM (CoDel, PIE) decides on the SDUs whose
    /// segmentation is about to start in the TTI at `t`: each leaves the
    /// buffer's queue after waiting since its arrival; dropped SDUs are
    /// discarded before any PDU is built (reported lost at `t`), marked ones
    /// go on with CE set.
    #[inline(always)]
    fn dequeue_gate(&mut self, c: usize, t: Time) {
        // Nothing to decide in the middle of an SDU (the common case: a
        // 1 500-byte SDU spans 37 PDUs of seed 000's 40 bytes).
        if self.h[c].tx.seg_off == 0 {
            self.dequeue_gate_sdu(c, t);
        }
    }

    /// [`Self::dequeue_gate`] at an SDU boundary.
    fn dequeue_gate_sdu(&mut self, c: usize, t: Time) {
        let limit = self.cfg.buffer_limit;
        if !self.h[c].aqm.wants_sojourn() || self.h[c].fq.is_some() {
            return;
        }
        loop {
            let h = &mut self.h[c];
            if h.tx.seg_off != 0 {
                return;
            }
            let id = h.tx.seg_next;
            let view = h.view(limit);
            let Some(s) = h.sdu(id).filter(|s| !s.passed) else {
                return;
            };
            let (sojourn, pkt) = (t.saturating_sub(s.arrived), s.pkt);
            let cause = match h.aqm.on_dequeue(t, sojourn, &view, &pkt) {
                DequeueVerdict::Deliver => {
                    h.sdu_mut(id).expect("the SDU").passed = true;
                    return;
                }
                DequeueVerdict::Mark => {
                    let s = h.sdu_mut(id).expect("the SDU");
                    s.pkt.ecn = Ecn::Ce;
                    s.passed = true;
                    h.occ.stats_mut().ecn_marks += 1;
                    return;
                }
                DequeueVerdict::Drop(cause) => cause,
            };
            let s = h.sdu_mut(id).expect("the SDU");
            s.sender = SenderFate::FrontDropped;
            s.rx = RxFate::Dropped;
            if std::mem::replace(&mut s.counted, false) {
                h.buf_sdus -= 1;
                h.buf_bytes -= u64::from(pkt.size());
            }
            h.inside -= 1;
            h.occ.stats_mut().count_drop(cause);
            h.occ.set(t, h.buf_sdus, h.buf_bytes);
            h.normalize_seg();
            h.pop_settled();
            self.out
                .push_back((t, Dir::from_index(c), Delivery::Lost(pkt, cause)));
        }
    }

    /// Segment the next AMD PDU of direction `c` in the TTI at `t`
    /// (concatenating SDUs; a PDU is padded only when the buffer holds
    /// nothing more). Call only when [`Half::take_next`] found an SDU.
    /// Returns its SN.
    fn segment(&mut self, c: usize, t: Time) -> u64 {
        let payload = self.cfg.pdu_payload_bytes;
        let li = self.cfg.li_bytes;
        let mut lost = Vec::new();
        let h = &mut self.h[c];
        let sn = h.tx.vt_s();
        let mut space = payload;
        let mut first = None;
        let mut last = 0;
        while space > 0 && h.take_next(t, li, &mut lost) {
            let id = h.tx.seg_next;
            let off = h.tx.seg_off;
            let s = h.sdu_mut(id).expect("unsegmented SDU");
            let take = space.min(s.extent - off);
            if off == 0 {
                s.first_sn = Some(sn);
            }
            s.unacked += 1;
            let extent = s.extent;
            h.segmented += u64::from(off == 0);
            space -= take;
            first.get_or_insert(id);
            last = id;
            if off + take == extent {
                h.sdu_mut(id).expect("unsegmented SDU").last_sn = Some(sn);
                h.tx.seg_next += 1;
                h.tx.seg_off = 0;
                h.normalize_seg();
            } else {
                h.tx.seg_off = off + take;
            }
        }
        h.tx.pdus.push_back(TxPdu {
            first_sdu: first.expect("segment called with data"),
            last_sdu: last,
            tx_count: 0,
            last_tx: Time::ZERO,
            state: PduState::Outstanding,
        });
        if !lost.is_empty() {
            self.report_lost(c, t, lost);
        }
        sn
    }

    /// SDUs FQ-CoDel discarded at `t` in direction `c`: reported lost.
    fn report_lost(&mut self, c: usize, t: Time, lost: Vec<(Packet, DropCause)>) {
        if lost.is_empty() {
            return;
        }
        let dir = Dir::from_index(c);
        self.out.extend(
            lost.into_iter()
                .map(|(p, cause)| (t, dir, Delivery::Lost(p, cause))),
        );
    }

    /// One TTI of direction `c` starting at `t`: control PDUs, then
    /// retransmissions (oldest first), then new PDUs, then a poll-only
    /// retransmission if a poll is still pending.
    fn run_tti(&mut self, c: usize, t: Time) {
        self.tick_until(c, t);
        {
            let h = &mut self.h[c];
            h.tti_floor = t + self.cfg.tti;
            h.channel.advance(t);
            if h.tx.poll_deadline.is_some_and(|d| d <= t) {
                h.tx.poll_deadline = None;
                h.tx.poll_pending = true;
                h.counters.poll_timer_expiries += 1;
            }
        }
        if !self.h[c].tx.fates.is_empty() {
            self.ideal_feedback(c, t);
        }
        let mut slots = self.h[c].pdus_per_tti;
        // STATUS of the opposite direction's receiver.
        let status_ok = |rx: &Rx| rx.status_due && rx.prohibit_until <= t;
        if slots > 0 && (self.h[1 - c].rx.mrw_ack_due.is_some() || status_ok(&self.h[1 - c].rx)) {
            let st = self.build_status(1 - c, t);
            self.h[c].counters.status_pdus_sent += 1;
            self.emit(c, t, AirPdu::Status(Box::new(st)));
            slots -= 1;
        }
        // MRW of this direction's sender.
        if slots > 0 {
            if let Some(m) = self.h[c].tx.mrw {
                if m.resend_at.is_none_or(|r| r <= t) {
                    self.h[c].tx.mrw = Some(Mrw {
                        resend_at: Some(t + self.cfg.mrw_timer),
                        ..m
                    });
                    self.h[c].counters.mrw_pdus_sent += 1;
                    self.emit(
                        c,
                        t,
                        AirPdu::Mrw {
                            sn_mrw: m.sn,
                            last_sdu: m.last_sdu,
                        },
                    );
                    slots -= 1;
                }
            }
        }
        // Retransmissions.
        while slots > 0 {
            let Some(sn) = self.h[c].tx.retx.pop_first() else {
                break;
            };
            if !self.h[c].tx.outstanding(sn) {
                continue;
            }
            if self.h[c].tx.exhausted(sn) {
                self.discard(c, t, sn);
                continue;
            }
            let poll = self.h[c].tx.poll_pending
                || (self.cfg.poll_last_retx && self.h[c].tx.retx.is_empty())
                || self.window_poll(c);
            self.send_data(c, t, sn, poll, true);
            slots -= 1;
        }
        // New data (a dequeue-time AQM decides on each SDU as its
        // segmentation starts).
        self.dequeue_gate(c, t);
        if slots > 0 && !self.h[c].has_new_data() {
            self.h[c].aqm.on_empty(t);
        }
        while slots > 0 && self.h[c].has_new_data() {
            let tx = &self.h[c].tx;
            if tx.vt_s() >= tx.vt_a + u64::from(self.cfg.tx_window) {
                break;
            }
            let mut lost = Vec::new();
            let ready = self.h[c].take_next(t, self.cfg.li_bytes, &mut lost);
            if !lost.is_empty() {
                self.report_lost(c, t, lost);
            }
            if !ready {
                break;
            }
            let window = self.window_poll(c);
            let sn = self.segment(c, t);
            self.dequeue_gate(c, t);
            let poll = self.h[c].tx.poll_pending
                || (self.cfg.poll_last_pdu && !self.h[c].has_new_data())
                || window;
            self.send_data(c, t, sn, poll, false);
            slots -= 1;
        }
        // A poll with nothing else to carry it: resend the last outstanding PDU.
        while slots > 0 && self.h[c].tx.poll_pending {
            let Some(sn) = self.h[c].tx.last_outstanding() else {
                self.h[c].tx.poll_pending = false;
                break;
            };
            if self.h[c].tx.exhausted(sn) {
                self.discard(c, t, sn);
                continue;
            }
            self.h[c].tx.retx.remove(&sn);
            self.send_data(c, t, sn, true, true);
            slots -= 1;
        }
    }

    /// The STATUS PDU receiver `r` sends now (sent on the other direction).
    fn build_status(&mut self, r: usize, t: Time) -> StatusPdu {
        let pdu_bytes = self.cfg.pdu_bytes();
        let rx = &mut self.h[r].rx;
        let mrw_ack = rx.mrw_ack_due.take();
        let with_mrw = mrw_ack.is_some();
        let ack = if rx.status_due && rx.prohibit_until <= t {
            rx.status_due = false;
            if let Some(p) = self.cfg.status_prohibit {
                rx.prohibit_until = t + p;
            }
            Some(rx.ack_info(pdu::list_capacity(pdu_bytes, with_mrw)))
        } else {
            None
        };
        StatusPdu { ack, mrw_ack }
    }

    fn on_air(&mut self, c: usize, t: Time, pdu: AirPdu) {
        match pdu {
            AirPdu::Data {
                sn,
                first_sdu,
                last_sdu,
                poll,
            } => self.on_data(c, t, sn, first_sdu, last_sdu, poll),
            AirPdu::Mrw { sn_mrw, last_sdu } => self.on_mrw(c, t, sn_mrw, last_sdu),
            AirPdu::Status(st) => self.on_status(1 - c, t, *st),
        }
    }

    /// Receiver of direction `d`: AMD PDU `sn` arrives at `t`.
    fn on_data(&mut self, d: usize, t: Time, sn: u64, first: u64, last: u64, poll: bool) {
        let rx = &mut self.h[d].rx;
        if poll {
            rx.status_due = true;
        }
        let (new, gap) = rx.receive(sn);
        if gap && self.cfg.missing_pdu_detection {
            rx.status_due = true;
        }
        if !new {
            return;
        }
        if self.cfg.in_order_delivery {
            self.deliver_in_order(d, t);
        } else {
            for id in first..=last {
                let complete = {
                    let h = &self.h[d];
                    h.sdu(id).is_some_and(|s| {
                        s.rx == RxFate::Pending
                            && matches!((s.first_sn, s.last_sn), (Some(a), Some(b))
                                if (a..=b).all(|x| h.rx.has(x)))
                    })
                };
                if complete {
                    self.settle_rx(d, t, id, RxFate::Delivered);
                }
            }
        }
        self.h[d].pop_settled();
    }

    /// In-sequence delivery: hand up SDUs in order while the next one is
    /// complete (its last PDU is below VR(R)); settled SDUs are skipped.
    fn deliver_in_order(&mut self, d: usize, t: Time) {
        let mut id = self.h[d].rx.next_deliver.max(self.h[d].sdu_base);
        while let Some(s) = self.h[d].sdu(id) {
            if s.rx == RxFate::Pending {
                if s.last_sn.is_none_or(|l| l >= self.h[d].rx.vr_r) {
                    break;
                }
                self.settle_rx(d, t, id, RxFate::Delivered);
            }
            id += 1;
        }
        self.h[d].rx.next_deliver = id;
    }

    /// The receiver of direction `d` settles SDU `id`: delivered or lost.
    fn settle_rx(&mut self, d: usize, t: Time, id: u64, fate: RxFate) {
        let h = &mut self.h[d];
        let s = h.sdu_mut(id).expect("SDU known");
        debug_assert_eq!(s.rx, RxFate::Pending);
        s.rx = fate;
        let pkt = s.pkt;
        h.inside -= 1;
        let dir = Dir::from_index(d);
        if fate == RxFate::Delivered {
            h.stats.rx_packets += 1;
            h.stats.rx_bytes += u64::from(pkt.size());
            h.counters.sdus_delivered += 1;
            h.counters.delivered_bytes += u64::from(pkt.size());
            self.out.push_back((t, dir, Delivery::Arrived(pkt)));
        } else {
            h.stats.lost += 1;
            h.stats.lost_by.add(DropCause::LinkArq);
            h.counters.sdus_lost += 1;
            h.occ.stats_mut().count_drop(DropCause::LinkArq);
            self.out
                .push_back((t, dir, Delivery::Lost(pkt, DropCause::LinkArq)));
        }
    }

    /// Receiver of direction `d`: an MRW arrives. SDUs up to `last_sdu` not
    /// yet delivered are discarded (reported lost); the window moves to `sn_mrw`.
    fn on_mrw(&mut self, d: usize, t: Time, sn_mrw: u64, last_sdu: u64) {
        let rx = &mut self.h[d].rx;
        rx.mrw_ack_due = Some(match rx.mrw_ack_due {
            Some((s, l)) => (s.max(sn_mrw), l.max(last_sdu)),
            None => (sn_mrw, last_sdu),
        });
        let mut id = self.h[d].sdu_base;
        while id <= last_sdu {
            let Some(s) = self.h[d].sdu(id) else { break };
            if s.rx == RxFate::Pending {
                self.settle_rx(d, t, id, RxFate::Lost);
            }
            id += 1;
        }
        self.h[d].rx.move_window(sn_mrw);
        if self.cfg.in_order_delivery {
            self.deliver_in_order(d, t);
        }
        self.h[d].pop_settled();
    }

    /// Sender of direction `d`: a STATUS PDU from its peer arrives at `t`.
    /// With the stale-NACK guard ([`RlcConfig::epc`]) a NACK for a PDU sent
    /// less than the guard before `t` is ignored: the STATUS was built before
    /// that transmission could reach the receiver.
    fn on_status(&mut self, d: usize, t: Time, st: StatusPdu) {
        self.tick_until(d, t);
        let guard = self.cfg.epc_guard();
        // Whether a report arriving now can reflect a transmission at `sent`.
        let fresh = |sent: Time| guard.is_none_or(|g| sent + g <= t);
        let mut nacks: Vec<u64> = Vec::new();
        if let Some(ack) = &st.ack {
            let vt_a = self.h[d].tx.vt_a;
            let lsn = ack.lsn.min(self.h[d].tx.vt_s());
            let mut sn = vt_a;
            for &(start, len) in &ack.missing {
                for s in sn.max(vt_a)..start.min(lsn) {
                    self.ack_pdu(d, t, s);
                }
                for s in start.max(vt_a)..(start + len).min(lsn) {
                    let tx = &self.h[d].tx;
                    if tx.outstanding(s) && tx.pdu(s).is_some_and(|p| fresh(p.last_tx)) {
                        nacks.push(s);
                    }
                }
                sn = sn.max(start + len);
            }
            for s in sn.max(vt_a)..lsn {
                self.ack_pdu(d, t, s);
            }
            let tx = &mut self.h[d].tx;
            // A STATUS built before the poll reached the receiver does not
            // answer it (with the guard; the standard stops Timer_Poll on any
            // STATUS covering VT(S) of the poll).
            if tx.poll_deadline.is_some() && ack.lsn >= tx.poll_sn && fresh(tx.poll_at) {
                tx.poll_deadline = None;
            }
        }
        if let Some((sn, last)) = st.mrw_ack {
            let tx = &mut self.h[d].tx;
            if tx.mrw.is_some_and(|m| sn >= m.sn && last >= m.last_sdu) {
                tx.mrw = None;
            }
        }
        self.nack(d, t, nacks);
    }

    /// Sender of direction `d` at the TTI starting at `t`, with ideal
    /// feedback: the PDUs of the previous TTI that arrived are acknowledged,
    /// the others negatively.
    fn ideal_feedback(&mut self, d: usize, t: Time) {
        let mut fates = std::mem::take(&mut self.h[d].tx.fates);
        let mut nacks = Vec::new();
        for (sn, arrived) in fates.drain(..) {
            if arrived {
                self.ack_pdu(d, t, sn);
            } else {
                nacks.push(sn);
            }
        }
        self.h[d].tx.fates = fates; // empty, its capacity kept for the next TTI
        self.nack(d, t, nacks);
    }

    /// Sender of direction `d`: PDUs `nacks` were reported missing at `t`.
    /// Each still outstanding is retransmitted, or its SDUs discarded once
    /// it used up MaxDAT; then VT(A) slides past what is settled.
    fn nack(&mut self, d: usize, t: Time, nacks: Vec<u64>) {
        for sn in nacks {
            if !self.h[d].tx.outstanding(sn) {
                continue;
            }
            if self.h[d].tx.exhausted(sn) {
                self.discard(d, t, sn);
            } else {
                self.h[d].tx.retx.insert(sn);
            }
        }
        self.h[d].tx.slide();
        self.h[d].pop_settled();
    }

    /// Positive acknowledgement of PDU `sn` of direction `d`.
    fn ack_pdu(&mut self, d: usize, t: Time, sn: u64) {
        let limit = self.cfg.buffer_limit;
        let h = &mut self.h[d];
        let Some(p) = h.tx.pdu_mut(sn) else { return };
        if p.state != PduState::Outstanding {
            return;
        }
        p.state = PduState::Acked;
        let (a, b) = (p.first_sdu, p.last_sdu);
        if !h.tx.retx.is_empty() {
            h.tx.retx.remove(&sn);
        }
        for id in a..=b {
            // A front-dropped SDU may sit between two SDUs sharing this PDU.
            let Some(s) = h
                .sdu_mut(id)
                .filter(|s| s.sender != SenderFate::FrontDropped)
            else {
                continue;
            };
            s.unacked -= 1;
            if s.unacked == 0 && s.last_sn.is_some() && s.sender == SenderFate::Buffered {
                h.leave_buffer(t, id, SenderFate::Acked, limit);
            }
        }
    }

    /// SDU discard after MaxDAT (§9.7.3.4, §11.6): PDU `x` of direction `c`
    /// was sent MaxDAT times and is still unacknowledged. Every SDU with
    /// bytes in PDUs VT(A)..=x is discarded, PDUs below SN_MRW are never
    /// sent again, and an MRW is scheduled.
    fn discard(&mut self, c: usize, t: Time, x: u64) {
        let limit = self.cfg.buffer_limit;
        let h = &mut self.h[c];
        h.tx.slide();
        let a = h.tx.pdus.front().expect("x outstanding").first_sdu;
        let b = h.tx.pdu(x).expect("x in window").last_sdu;
        for id in a..=b {
            if h.sdu(id).is_some_and(|s| s.sender == SenderFate::Buffered) {
                h.leave_buffer(t, id, SenderFate::Discarded, limit);
                h.counters.sdus_discarded += 1;
            }
        }
        let last_sn = h.sdu(b).and_then(|s| s.last_sn);
        let sn_mrw = match last_sn {
            // `b` is being segmented: its remaining bytes are never sent.
            None => {
                debug_assert_eq!(h.tx.seg_next, b);
                h.tx.seg_next = b + 1;
                h.tx.seg_off = 0;
                h.normalize_seg();
                h.tx.vt_s()
            }
            // PDU y holds b's end; it is kept if later SDUs start in it.
            Some(y) => {
                if h.tx.pdu(y).is_some_and(|p| p.last_sdu > b) {
                    y
                } else {
                    y + 1
                }
            }
        };
        for sn in h.tx.vt_a..sn_mrw {
            if let Some(p) = h.tx.pdu_mut(sn) {
                if p.state == PduState::Outstanding {
                    p.state = PduState::Done;
                }
            }
            h.tx.retx.remove(&sn);
        }
        let (sn, last) = match h.tx.mrw {
            Some(m) => (m.sn.max(sn_mrw), m.last_sdu.max(b)),
            None => (sn_mrw, b),
        };
        h.tx.slide();
        h.pop_settled();
        if self.cfg.feedback == Feedback::Ideal {
            // The receiver learns of the discard as of any PDU's fate: now,
            // without error (no MRW PDU, no MRW_ACK).
            self.on_mrw(c, t, sn, last);
            self.h[c].rx.mrw_ack_due = None;
        } else {
            self.h[c].tx.mrw = Some(Mrw {
                sn,
                last_sdu: last,
                resend_at: None,
            });
        }
    }
}

/// The smallest whole J with J ≥ `w`·`tx_window` (the window-based poll's
/// test on J = VT(S) + 1 − VT(A), taken in floating point before).
fn poll_window_pdus(w: f64, tx_window: u32) -> u64 {
    (w * f64::from(tx_window)).ceil() as u64
}

/// Apply the schedule entries of `h` that take effect by TTI boundary `b`.
fn apply_steps(cfg: &RlcConfig, h: &mut Half, b: Time) {
    let q = cfg.tti.0;
    while let Some(s) = h.steps.get_mut(h.next_step) {
        let effective = Time(s.at.0.div_ceil(q).saturating_mul(q));
        if effective > b {
            break;
        }
        h.rate_bps = s.rate_bps;
        h.pdus_per_tti = cfg.pdus_per_tti(s.rate_bps);
        if let Some(a) = s.aqm.take() {
            h.aqm = a;
        }
        h.next_step += 1;
    }
}

impl Link for RlcBearer {
    fn enqueue(&mut self, now: Time, dir: Dir, mut pkt: Packet) -> Option<(Packet, DropCause)> {
        self.advance(now, false);
        let d = dir.index();
        self.tick_until(d, now);
        let limit = self.cfg.buffer_limit;
        let li = self.cfg.li_bytes;
        let h = &mut self.h[d];
        h.occ.stats_mut().arrivals += 1;
        if let Some(fq) = h.fq.as_mut() {
            // FQ-CoDel: into the arrival's flow queue; over the buffer's limit
            // the fattest flow queue loses packets from its head.
            fq.enqueue(now, pkt);
            h.max_sdu = h.max_sdu.max(pkt.size());
            h.buf_sdus += 1;
            h.buf_bytes += u64::from(pkt.size());
            h.inside += 1;
            let full = match limit {
                Limit::Packets(n) => h.buf_sdus > n,
                Limit::Bytes(b) => h.buf_bytes > b,
            };
            let mut out = Vec::new();
            if full {
                fq.drop_fattest(&mut out);
            }
            for (p, c) in &out {
                h.buf_sdus -= 1;
                h.buf_bytes -= u64::from(p.size());
                h.inside -= 1;
                h.occ.stats_mut().count_drop(*c);
            }
            h.occ.set(now, h.buf_sdus, h.buf_bytes);
            let mut out = out.into_iter();
            let first = out.next();
            self.out
                .extend(out.map(|(p, c)| (now, dir, Delivery::Lost(p, c))));
            return first;
        }
        let view = h.view(limit);
        let verdict = h.aqm.on_arrival(now, &view, &pkt, &mut h.rng);
        let full = match limit {
            Limit::Packets(n) => view.packets >= n,
            Limit::Bytes(b) => view.bytes + u64::from(pkt.size()) > b,
        };
        let refuse = match verdict {
            Verdict::Drop(c) => Some(c),
            Verdict::DropFront(_) => None,
            _ if full => Some(DropCause::Overflow),
            _ => None,
        };
        if let Some(c) = refuse {
            h.occ.stats_mut().count_drop(c);
            return Some((pkt, c));
        }
        if verdict == Verdict::Mark {
            pkt.ecn = Ecn::Ce;
            h.occ.stats_mut().ecn_marks += 1;
        }
        h.max_sdu = h.max_sdu.max(pkt.size());
        h.sdus.push_back(Sdu::buffered(pkt, li, now, false));
        h.buf_sdus += 1;
        h.buf_bytes += u64::from(pkt.size());
        h.inside += 1;
        let mut dropped = None;
        if let Verdict::DropFront(c) = verdict {
            // The first SDU none of whose PDUs has been sent (maybe the arrival).
            let mut id = h.tx.seg_next;
            if h.tx.seg_off > 0 {
                id += 1;
            }
            while h.sdu(id).is_some_and(|s| s.sender != SenderFate::Buffered) {
                id += 1;
            }
            let s = h.sdu_mut(id).expect("the arrival at least");
            s.sender = SenderFate::FrontDropped;
            s.rx = RxFate::Dropped;
            s.counted = false;
            let victim = s.pkt;
            h.buf_sdus -= 1;
            h.buf_bytes -= u64::from(victim.size());
            h.inside -= 1;
            h.occ.stats_mut().count_drop(c);
            h.normalize_seg();
            h.pop_settled();
            dropped = Some((victim, c));
        }
        h.occ.set(now, h.buf_sdus, h.buf_bytes);
        dropped
    }

    fn poll_timeout(&self) -> Option<Time> {
        let mut best = self.out.front().map(|&(t, _, _)| t.max(self.now));
        let mut at = |t: Time| best = Some(best.map_or(t, |b: Time| b.min(t)));
        for c in 0..2 {
            if let Some(&(t, _)) = self.h[c].air.front() {
                at(t);
            }
            if let Some(t) = self.next_tti(c) {
                at(t);
            }
        }
        best
    }

    fn poll_deliver(&mut self, now: Time) -> Option<(Dir, Delivery)> {
        self.advance(now, true);
        match self.out.front() {
            Some(&(t, _, _)) if t <= now => self.out.pop_front().map(|(_, d, x)| (d, x)),
            _ => None,
        }
    }

    fn occupancy(&self, dir: Dir) -> &Occupancy {
        &self.h[dir.index()].occ
    }

    fn occupancy_mut(&mut self, dir: Dir) -> &mut Occupancy {
        &mut self.h[dir.index()].occ
    }

    fn queue_kind(&self, dir: Dir) -> &'static str {
        self.h[dir.index()].aqm.name()
    }

    fn stats(&self, dir: Dir) -> &LinkStats {
        &self.h[dir.index()].stats
    }

    fn rate_bps(&self, dir: Dir) -> u64 {
        self.h[dir.index()].rate_bps
    }

    fn in_transit(&self) -> usize {
        // SDUs in the buffers and on the air, and those settled but not yet
        // handed over (`out`).
        self.h[0].inside + self.h[1].inside + self.out.len()
    }

    /// Counted when decided (`out` holds decided SDUs until their instant,
    /// which a run always reaches before it ends).
    fn account(&self, dir: Dir) -> Account {
        let h = &self.h[dir.index()];
        let st = h.occ.stats();
        Account {
            offered: st.arrivals,
            queue_dropped: st.queue_drops(),
            departed: h.segmented,
            copies: 0,
            delivered: h.stats.rx_packets,
            lost: h.stats.lost_by,
        }
    }

    fn for_each_held(&self, f: &mut dyn FnMut(Dir, Place, &Packet)) {
        for (c, h) in self.h.iter().enumerate() {
            let dir = Dir::from_index(c);
            if let Some(fq) = &h.fq {
                fq.for_each(&mut |p| f(dir, Place::Queue, p));
            }
            for s in h.sdus.iter().filter(|s| s.rx == RxFate::Pending) {
                // Not yet segmented: in the buffer's queue; segmented: the
                // ARQ holds it until the receiver settles it.
                let place = if s.first_sn.is_none() {
                    Place::Queue
                } else {
                    Place::Arq
                };
                f(dir, place, &s.pkt);
            }
        }
    }

    /// Adaptive MaxDAT (seed 001 §III): with [`RlcConfig::adaptive_alpha`]
    /// set and a Gilbert–Elliott channel on `dir`, MaxDAT of `dir` becomes
    /// the model's limit for the target `α·P_W`, with `n_pdu` from the
    /// largest SDU accepted so far ([`RlcBearer::pdus_per_sdu`]).
    fn on_e2e_loss_rate(&mut self, now: Time, dir: Dir, p_tcp: f64) {
        let c = dir.index();
        if self.h[c].max_sdu == 0 {
            return; // no SDU yet: n_pdu unknown, keep the limit
        }
        let n_pdu = self.pdus_per_sdu(self.h[c].max_sdu);
        let h = &mut self.h[c];
        let Some(a) = h.adaptive.as_mut() else {
            return;
        };
        // The model's parameters were validated with the channel; keep the
        // current limit should it still refuse them.
        if let Ok(m) = a.update(p_tcp, h.p_ll.estimate(), n_pdu) {
            self.set_max_dat_at(now, c, m);
        }
    }

    fn arq_stats(&self, dir: Dir, now: Time) -> Option<ArqStats> {
        let h = &self.h[dir.index()];
        let mut mt = MaxDatClock { ..h.mt };
        mt.advance(now, h.tx.max_dat);
        let total = mt.finite_ns + mt.unlimited_ns;
        Some(ArqStats {
            protocol: "rlc",
            counters: h.counters.named(),
            sdus_acked: h.counters.sdus_acked,
            sdus_discarded: h.counters.sdus_discarded,
            delivered_bytes: h.counters.delivered_bytes,
            air_bytes: h.counters.air_bytes,
            max_dat: h.tx.max_dat,
            max_dat_mean: (mt.finite_ns > 0).then(|| mt.area / mt.finite_ns as f64),
            max_dat_unlimited_fraction: if total > 0 {
                mt.unlimited_ns as f64 / total as f64
            } else {
                f64::from(u8::from(h.tx.max_dat.is_none()))
            },
            max_dat_changes: mt.changes,
            p_ll: h.p_ll.estimate(),
            p_tcp: h.adaptive.as_ref().and_then(|a| a.p_tcp()),
            target: h.adaptive.as_ref().and_then(|a| a.target()),
        })
    }
}

impl MaxDatClock {
    /// Account the time up to `now` spent at `current`.
    fn advance(&mut self, now: Time, current: Option<u32>) {
        let dt = now.saturating_sub(self.since).0;
        match current {
            Some(m) => {
                self.area += f64::from(m) * dt as f64;
                self.finite_ns += dt;
            }
            None => self.unlimited_ns += dt,
        }
        self.since = self.since.max(now);
    }
}

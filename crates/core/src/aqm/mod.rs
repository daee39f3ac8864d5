//! Packet queues and the active queue management (AQM) policies that guard them.
//!
//! A [`Queue`] is the FIFO buffer in front of a link transmitter. It enforces
//! its size [`Limit`] (packets or bytes), keeps the statistics every queue
//! reports, and consults an [`Aqm`] policy on each arrival and departure.
//! Policies are sans-IO like everything else: they are told `now` and the
//! queue's state, and answer with a [`Verdict`].

pub mod codel;
mod droptail;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod sbd;

pub use crate::config::Limit;
pub use codel::{Codel, CodelConfig};
pub use droptail::{DropTail, DropTailConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig};
pub use sbd::{Sbd, SbdConfig};

use std::collections::VecDeque;
use std::fmt::Debug;

use crate::config::kind::tagged_enum;
use crate::config::Result;
use crate::packet::{pool, Ecn, Packet};
use crate::rng::Rng;
use crate::time::Time;

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

tagged_enum! {
    /// A queue in front of a transmitter: `queue = { kind = "red", limit =
    /// "500p", minth = 75, … }`. Without `kind` it is drop-tail. Each kind
    /// takes only its own keys.
    pub enum QueueConfig: dyn AqmConfig, "queue", tag "kind", default "droptail" {
        /// Drop-tail FIFO.
        Droptail(DropTailConfig) = "droptail",
        /// Random Early Detection (Floyd & Jacobson 1993).
        Red(RedConfig) = "red",
        /// Slope Based Discard (seed 000 §3).
        Sbd(SbdConfig) = "sbd",
        /// CoDel, Controlled Delay (RFC 8289).
        Codel(CodelConfig) = "codel",
        /// PIE, Proportional Integral controller Enhanced (RFC 8033).
        Pie(PieConfig) = "pie",
        /// FQ-CoDel, flow queues with DRR and CoDel (RFC 8290).
        FqCodel(FqCodelConfig) = "fq_codel",
    }
}

/// What every queue kind's configuration provides (one implementation per
/// file of this module).
pub trait AqmConfig: Debug {
    /// The capacity as written (`None`: not given).
    fn limit(&self) -> Option<Limit>;
    /// The capacity when none is written.
    fn default_limit(&self) -> Limit {
        QueueConfig::DEFAULT_LIMIT
    }
    /// Check the parameters for a buffer of `limit`; paths are relative to
    /// the queue table (`minth`).
    fn validate_under(&self, limit: Limit) -> Result<()>;
    /// The policy for a link of `rate_bps` (of a valid configuration).
    fn build(&self, rate_bps: u64) -> Box<dyn Aqm>;
    /// Per-flow queues that replace the single FIFO (FQ-CoDel); `None`: a FIFO.
    fn flow_queues(&self) -> Option<FqCodel> {
        None
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::Droptail(DropTailConfig::default())
    }
}

impl QueueConfig {
    /// The capacity when none is written.
    pub const DEFAULT_LIMIT: Limit = Limit::Packets(100);

    /// The capacity: as written, else the kind's default (100 packets for
    /// most kinds).
    pub fn limit(&self) -> Limit {
        self.model()
            .limit()
            .unwrap_or_else(|| self.model().default_limit())
    }

    /// Check the parameters against the queue's own limit.
    pub fn validate(&self) -> Result<()> {
        self.model().validate_under(self.limit())
    }

    /// The policy guarding a buffer of `limit` in front of a link of
    /// `rate_bps` (a radio bearer's buffer has its own limit).
    pub fn aqm(&self, rate_bps: u64, limit: Limit) -> Result<Box<dyn Aqm>> {
        self.model().validate_under(limit)?;
        Ok(self.model().build(rate_bps))
    }

    /// The queue in front of a link of `rate_bps`, drawing from `rng`.
    pub fn build(&self, rate_bps: u64, rng: Rng) -> Result<Queue> {
        let mut q = Queue::new(self.limit(), self.aqm(rate_bps, self.limit())?, rng);
        q.fq = self.model().flow_queues().map(Box::new);
        q.fifo = q.fifo_now();
        Ok(q)
    }
}

/// `Err` at `key` unless `v` is a finite threshold ≥ 0, no larger than the
/// buffer's `limit` if given.
pub(crate) fn check_threshold(key: &str, v: f64, limit: Option<Limit>) -> Result<()> {
    if !v.is_finite() || v < 0.0 {
        return Err(crate::config::ConfigError::new(
            key,
            v.to_string(),
            "is not a threshold; allowed: a finite number ≥ 0",
        ));
    }
    let Some(limit) = limit else { return Ok(()) };
    let cap = limit.capacity();
    if v > cap {
        return Err(crate::config::ConfigError::new(
            key,
            v.to_string(),
            format!("is above the queue limit {limit}; allowed: 0 to {cap}"),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Run time
// ---------------------------------------------------------------------------

/// Why a packet was discarded. Every packet the core discards leaves its
/// model with one of these causes and is counted once, by the network, on
/// the link direction where it happened (`docs/metrics.md`, "The packet
/// account").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropCause {
    /// The queue was full.
    Overflow,
    /// The AQM discarded it early (probabilistic or deterministic decision below the limit).
    AqmEarly,
    /// The AQM discarded it because its average exceeded the forced-drop threshold.
    AqmForced,
    /// The link lost it (random loss / channel error).
    LinkLoss,
    /// The link's ARQ gave up on it (RLC `MaxDAT` reached; SDU discarded).
    LinkArq,
    /// A netem stage's `limit` was reached.
    NetemLimit,
    /// Corrupted on the link (netem `corrupt`): the receiver's checksum discards it.
    Corrupt,
}

impl DropCause {
    /// Every cause, in the order of [`DropCause::index`].
    pub const ALL: [DropCause; 7] = [
        DropCause::Overflow,
        DropCause::AqmEarly,
        DropCause::AqmForced,
        DropCause::LinkLoss,
        DropCause::LinkArq,
        DropCause::NetemLimit,
        DropCause::Corrupt,
    ];

    /// Stable lower-case name used in metrics and traces.
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Overflow => "overflow",
            DropCause::AqmEarly => "aqm_early",
            DropCause::AqmForced => "aqm_forced",
            DropCause::LinkLoss => "link_loss",
            DropCause::LinkArq => "link_arq",
            DropCause::NetemLimit => "netem_limit",
            DropCause::Corrupt => "corrupt",
        }
    }

    /// Position in [`DropCause::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the cause discards a packet in the buffer in front of the
    /// transmitter (the queue), rather than after it left the buffer (the link).
    pub fn at_queue(self) -> bool {
        matches!(
            self,
            DropCause::Overflow | DropCause::AqmEarly | DropCause::AqmForced
        )
    }
}

/// Packets counted by [`DropCause`] (serialised as an object of the
/// non-zero counts by cause name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Causes([u64; DropCause::ALL.len()]);

impl Causes {
    /// Count one packet of cause `c`.
    #[inline]
    pub fn add(&mut self, c: DropCause) {
        self.0[c.index()] += 1;
    }

    /// Count `n` packets of cause `c`.
    pub fn add_n(&mut self, c: DropCause, n: u64) {
        self.0[c.index()] += n;
    }

    /// Packets of cause `c`.
    pub fn get(&self, c: DropCause) -> u64 {
        self.0[c.index()]
    }

    /// Packets of every cause.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// The non-zero counts, in cause order.
    pub fn iter(&self) -> impl Iterator<Item = (DropCause, u64)> + '_ {
        DropCause::ALL
            .iter()
            .map(|&c| (c, self.get(c)))
            .filter(|&(_, n)| n > 0)
    }

    /// The counts of the causes `keep` selects.
    pub fn only(&self, keep: impl Fn(DropCause) -> bool) -> Causes {
        let mut out = Causes::default();
        for (c, n) in self.iter().filter(|&(c, _)| keep(c)) {
            out.add_n(c, n);
        }
        out
    }
}

impl std::ops::AddAssign for Causes {
    fn add_assign(&mut self, o: Causes) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

impl serde::Serialize for Causes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (c, n) in self.iter() {
            m.serialize_entry(c.name(), &n)?;
        }
        m.end()
    }
}

impl std::fmt::Display for Causes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (c, n) in self.iter() {
            write!(f, "{}{} {n}", if first { "" } else { ", " }, c.name())?;
            first = false;
        }
        if first {
            write!(f, "none")?;
        }
        Ok(())
    }
}

/// What an AQM decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accept (subject to the queue limit).
    Accept,
    /// Accept and set CE (the packet is ECN-capable).
    Mark,
    /// Discard, for this reason.
    Drop(DropCause),
    /// Accept the arrival and discard instead the oldest packet whose
    /// transmission has not started (Slope Based Discard; front drop). If
    /// there is none, the arrival itself is discarded.
    DropFront(DropCause),
}

/// What a dequeue-time AQM decides for the head packet leaving the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequeueVerdict {
    /// Send it.
    Deliver,
    /// Set CE and send it (the packet is ECN-capable).
    Mark,
    /// Discard it, for this reason; the queue offers the next packet.
    Drop(DropCause),
}

/// The queue state an AQM sees.
#[derive(Clone, Copy, Debug)]
pub struct QueueView {
    /// Packets waiting (not counting the arrival being decided).
    pub packets: u32,
    /// Bytes waiting.
    pub bytes: u64,
    /// The queue's limit.
    pub limit: Limit,
}

impl QueueView {
    /// Occupancy in the unit of the limit (packets or bytes).
    pub fn occupancy(&self) -> f64 {
        match self.limit {
            Limit::Packets(_) => f64::from(self.packets),
            Limit::Bytes(_) => self.bytes as f64,
        }
    }
}

/// An active queue management policy.
pub trait Aqm: Debug + Send {
    /// The policy's scenario name (`droptail`, `red`, …).
    fn name(&self) -> &'static str;
    /// Decide on a packet arriving at `now` to a queue in state `q`.
    fn on_arrival(&mut self, now: Time, q: &QueueView, pkt: &Packet, rng: &mut Rng) -> Verdict;
    /// A packet left the queue at `now`; `q` is the state after it left.
    fn on_departure(&mut self, _now: Time, _q: &QueueView) {}
    /// Clock tick for policies with timers (deterministic AQMs such as SBD).
    /// Slotted links (the RLC) tick once per TTI; a plain [`Queue`] ticks
    /// before each arrival, so timers there resolve at arrivals.
    fn on_tick(&mut self, _now: Time, _q: &QueueView) {}
    /// Whether the policy accepts every arrival and keeps no state (drop-tail):
    /// a [`Queue`] then makes none of the calls above, only its limit decides.
    fn is_passive(&self) -> bool {
        false
    }
    /// Whether the policy decides at dequeue from each packet's sojourn time
    /// (CoDel): the queue then stamps arrivals and asks [`Aqm::on_dequeue`].
    fn wants_sojourn(&self) -> bool {
        false
    }
    /// The head packet leaves at `now` after waiting `sojourn`; `q` is the
    /// state after it left. Only asked when [`Aqm::wants_sojourn`].
    fn on_dequeue(
        &mut self,
        _now: Time,
        _sojourn: Time,
        _q: &QueueView,
        _pkt: &Packet,
    ) -> DequeueVerdict {
        DequeueVerdict::Deliver
    }
    /// A dequeue found the queue empty (dequeue-time policies reset here).
    fn on_empty(&mut self, _now: Time) {}
}

/// Counters every queue reports. `repr(C)`, the fields a packet updates
/// first (inside an [`Occupancy`], next to its state).
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct QueueStats {
    /// Time integral of occupancy in packets (packet·ns).
    pub area_packets: u128,
    /// Time integral of occupancy in bytes (byte·ns).
    pub area_bytes: u128,
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets that left for transmission.
    pub departures: u64,
    /// Largest occupancy seen, packets.
    pub max_packets: u32,
    /// Packets marked CE.
    pub ecn_marks: u64,
    /// Packets dropped because the queue was full.
    pub drops_overflow: u64,
    /// Packets dropped early by the AQM.
    pub drops_aqm_early: u64,
    /// Packets dropped by the AQM's forced-drop rule.
    pub drops_aqm_forced: u64,
    /// Packets discarded by the link's ARQ after too many transmissions (RLC MaxDAT).
    pub drops_link_arq: u64,
}

impl QueueStats {
    /// The drops of the buffer itself by cause (overflow and the AQM's;
    /// not the link's ARQ discards an RLC buffer also counts).
    pub fn queue_drops(&self) -> Causes {
        let mut dropped = Causes::default();
        dropped.add_n(DropCause::Overflow, self.drops_overflow);
        dropped.add_n(DropCause::AqmEarly, self.drops_aqm_early);
        dropped.add_n(DropCause::AqmForced, self.drops_aqm_forced);
        dropped
    }

    /// Count a drop by cause (link losses are counted by links, not here).
    pub fn count_drop(&mut self, cause: DropCause) {
        match cause {
            DropCause::Overflow => self.drops_overflow += 1,
            DropCause::AqmEarly => self.drops_aqm_early += 1,
            DropCause::AqmForced => self.drops_aqm_forced += 1,
            DropCause::LinkArq => self.drops_link_arq += 1,
            DropCause::LinkLoss | DropCause::NetemLimit | DropCause::Corrupt => {}
        }
    }
}

/// One occupancy sample: time, packets, bytes.
pub type OccupancySample = (Time, u32, u64);

/// Occupancy bookkeeping shared by every buffer (a [`Queue`], an RLC SDU
/// buffer): counters, the time integral of occupancy, and an optional trace
/// of every change.
///
/// `repr(C)`, 128 bytes: the state and the counters a packet updates
/// first, the recordings (off unless asked for) behind one pointer.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct Occupancy {
    packets: u32,
    bytes: u64,
    last_change: Time,
    /// The trace and the busy watch, when either is on.
    rec: Option<Box<Recordings>>,
    stats: QueueStats,
}

/// What an [`Occupancy`] records when asked.
#[derive(Clone, Debug, Default)]
struct Recordings {
    /// Every change ([`Occupancy::enable_trace`]).
    trace: Option<Vec<OccupancySample>>,
    /// Instants the buffer became non-empty (true) or empty (false), when
    /// watched ([`Occupancy::watch_busy`]).
    busy: Option<Vec<(Time, bool)>>,
}

impl Recordings {
    /// The buffer went from `was` packets to `packets` (`bytes`) at `now`.
    fn set(&mut self, now: Time, was: u32, packets: u32, bytes: u64) {
        if let Some(b) = self.busy.as_mut() {
            if (was > 0) != (packets > 0) {
                b.push((now, packets > 0));
            }
        }
        if let Some(t) = self.trace.as_mut() {
            t.push((now, packets, bytes));
        }
    }
}

impl Occupancy {
    /// The buffer now holds `packets` packets and `bytes` bytes (since `now`).
    pub fn set(&mut self, now: Time, packets: u32, bytes: u64) {
        let dt = u128::from(now.saturating_sub(self.last_change).0);
        self.stats.area_packets += dt * u128::from(self.packets);
        self.stats.area_bytes += dt * u128::from(self.bytes);
        self.last_change = self.last_change.max(now);
        if let Some(r) = self.rec.as_deref_mut() {
            r.set(now, self.packets, packets, bytes);
        }
        self.packets = packets;
        self.bytes = bytes;
        self.stats.max_packets = self.stats.max_packets.max(packets);
    }

    /// A packet of `bytes` bytes entered the empty buffer at `now` and left
    /// it at once: exactly `set(now, 1, bytes)` then `set(now, 0, 0)` (both
    /// trace rows, both busy transitions), without the integrals' arithmetic,
    /// which adds nothing over an empty buffer and a zero-length stay.
    pub fn pass(&mut self, now: Time, bytes: u64) {
        debug_assert!(
            self.packets == 0 && self.bytes == 0,
            "pass needs an empty buffer"
        );
        self.last_change = self.last_change.max(now);
        if let Some(r) = self.rec.as_deref_mut() {
            r.set(now, 0, 1, bytes);
            r.set(now, 1, 0, 0);
        }
        self.stats.max_packets = self.stats.max_packets.max(1);
    }

    /// Packets held.
    pub fn packets(&self) -> u32 {
        self.packets
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Counters (occupancy integrals up to the last change or [`Occupancy::finish`]).
    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }

    /// Mutable counters (arrivals, drops, marks).
    pub fn stats_mut(&mut self) -> &mut QueueStats {
        &mut self.stats
    }

    /// Record from now on when the buffer becomes empty or non-empty.
    pub fn watch_busy(&mut self) {
        self.rec.get_or_insert_with(Default::default).busy = Some(Vec::new());
    }

    /// The empty/non-empty transitions recorded so far (empty unless watched).
    pub fn busy_changes(&self) -> &[(Time, bool)] {
        self.rec
            .as_ref()
            .and_then(|r| r.busy.as_deref())
            .unwrap_or_default()
    }

    /// Record every change from now on.
    pub fn enable_trace(&mut self) {
        self.rec.get_or_insert_with(Default::default).trace = Some(Vec::new());
    }

    /// The samples recorded so far (empty unless tracing).
    pub fn take_trace(&mut self) -> Vec<OccupancySample> {
        self.rec
            .as_mut()
            .and_then(|r| r.trace.as_mut())
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Close the occupancy integral at `now` (end of run).
    pub fn finish(&mut self, now: Time) {
        let dt = u128::from(now.saturating_sub(self.last_change).0);
        self.stats.area_packets += dt * u128::from(self.packets);
        self.stats.area_bytes += dt * u128::from(self.bytes);
        self.last_change = self.last_change.max(now);
    }
}

/// A FIFO queue with a size limit and an AQM policy.
///
/// `repr(C)`, the fields a packet reads first: the FIFO, the policy and
/// the flags in one cache line, the limit and the discards in the next,
/// then the [`Occupancy`]'s two (issue 38).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Queue {
    /// The waiting packets, boxed ([`pool`]: the queue's buffer holds pointers).
    pkts: VecDeque<Box<Packet>>,
    aqm: Box<dyn Aqm>,
    /// Per-flow queues instead of `pkts` (FQ-CoDel).
    fq: Option<Box<FqCodel>>,
    /// The policy is [`Aqm::is_passive`]: its calls are skipped (two or
    /// three dynamic calls per packet on every drop-tail queue).
    passive: bool,
    /// Neither per-flow queues nor arrival stamps: `pkts` alone holds the
    /// packets, which may pass an idle transmitter unstored, and nothing is
    /// discarded at dequeue (kept with `fq` and `stamps`).
    fifo: bool,
    limit: Limit,
    /// Packets a dequeue-time AQM discarded, not yet taken by the link
    /// (always empty when `fifo`).
    dropped: VecDeque<(Packet, DropCause)>,
    occ: Occupancy,
    /// Arrival time of each waiting packet, kept only for a dequeue-time AQM.
    stamps: Option<VecDeque<Time>>,
    rng: Rng,
}

impl Queue {
    /// A queue with `limit` and policy `aqm`, drawing randomness from `rng`.
    pub fn new(limit: Limit, aqm: Box<dyn Aqm>, rng: Rng) -> Queue {
        let mut q = Queue {
            pkts: VecDeque::new(),
            limit,
            stamps: aqm.wants_sojourn().then(VecDeque::new),
            passive: aqm.is_passive(),
            aqm,
            rng,
            occ: Occupancy::default(),
            dropped: VecDeque::new(),
            fq: None,
            fifo: false,
        };
        q.fifo = q.fifo_now();
        q
    }

    /// What [`Queue::fifo`] should read now.
    fn fifo_now(&self) -> bool {
        self.fq.is_none() && self.stamps.is_none()
    }

    /// The current state as an AQM sees it.
    pub fn view(&self) -> QueueView {
        QueueView {
            packets: self.len() as u32,
            bytes: self.occ.bytes(),
            limit: self.limit,
        }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.fq.as_ref().map_or(self.pkts.len(), |f| f.len())
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Visit every packet waiting (not those discarded at dequeue and not
    /// yet taken: they are already counted as dropped).
    pub fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        match &self.fq {
            Some(fq) => fq.for_each(f),
            None => self.pkts.iter().for_each(|p| f(p)),
        }
    }

    /// The queue's part of a link direction's packet account: arrivals,
    /// drops by cause (at arrival or at dequeue) and departures.
    pub fn account(&self) -> (u64, Causes, u64) {
        let st = self.stats();
        (st.arrivals, st.queue_drops(), st.departures)
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.occ.bytes()
    }

    /// The AQM policy's name.
    pub fn kind(&self) -> &'static str {
        self.aqm.name()
    }

    /// The limit.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Occupancy, counters and trace.
    pub fn occupancy(&self) -> &Occupancy {
        &self.occ
    }

    /// Mutable occupancy (tracing, end-of-run accounting).
    pub fn occupancy_mut(&mut self) -> &mut Occupancy {
        &mut self.occ
    }

    /// Statistics so far.
    pub fn stats(&self) -> &QueueStats {
        self.occ.stats()
    }

    fn changed(&mut self, now: Time, bytes: u64) {
        self.occ.set(now, self.len() as u32, bytes);
    }

    /// FQ-CoDel's arrival: into its flow queue; over the limit the fattest
    /// queue loses packets from its head (the first is returned, the rest
    /// wait in [`Queue::take_dropped`]).
    fn fq_enqueue(&mut self, now: Time, pkt: Packet) -> Option<(Packet, DropCause)> {
        let fq = self.fq.as_mut()?;
        fq.enqueue(now, pkt);
        let full = match self.limit {
            Limit::Packets(n) => fq.len() > n as usize,
            Limit::Bytes(b) => fq.bytes() > b,
        };
        let mut out = Vec::new();
        if full {
            fq.drop_fattest(&mut out);
        }
        let bytes = fq.bytes();
        for (_, c) in &out {
            self.occ.stats_mut().count_drop(*c);
        }
        self.changed(now, bytes);
        let mut out = out.into_iter();
        let first = out.next();
        self.dropped.extend(out);
        first
    }

    /// FQ-CoDel's departure: DRR over the flow queues, each through its CoDel.
    fn fq_dequeue(&mut self, now: Time) -> Option<Packet> {
        let fq = self.fq.as_mut()?;
        let mut drops = Vec::new();
        let pkt = fq.dequeue(now, &mut drops);
        let marks = fq.take_marks();
        let bytes = fq.bytes();
        for (_, c) in &drops {
            self.occ.stats_mut().count_drop(*c);
        }
        self.dropped.extend(drops);
        self.occ.stats_mut().ecn_marks += marks;
        self.changed(now, bytes);
        if pkt.is_some() {
            self.occ.stats_mut().departures += 1;
        }
        pkt
    }

    /// Offer `pkt` at `now`. Returns the packet discarded because of this
    /// arrival, if any: the arrival itself, or an older one for a front-dropping AQM.
    pub fn enqueue(&mut self, now: Time, pkt: Packet) -> Option<(Packet, DropCause)> {
        self.enqueue_boxed(now, pool::boxed(pkt))
            .map(|(p, c)| (pool::unboxed(p), c))
    }

    /// [`Queue::enqueue`] of a packet in its box: the queue keeps the box.
    pub fn enqueue_boxed(
        &mut self,
        now: Time,
        mut pkt: Box<Packet>,
    ) -> Option<(Box<Packet>, DropCause)> {
        if self.fq.is_some() {
            self.occ.stats_mut().arrivals += 1;
            return self
                .fq_enqueue(now, pool::unboxed(pkt))
                .map(|(p, c)| (pool::boxed(p), c));
        }
        let verdict = match self.admit(now, &mut pkt) {
            Ok(v) => v,
            Err(c) => return Some((pkt, c)),
        };
        let mut bytes = self.occ.bytes() + u64::from(pkt.size());
        self.pkts.push_back(pkt);
        if let Some(s) = self.stamps.as_mut() {
            s.push_back(now);
        }
        let mut dropped = None;
        if let Verdict::DropFront(c) = verdict {
            if let Some(front) = self.pkts.pop_front() {
                if let Some(s) = self.stamps.as_mut() {
                    s.pop_front();
                }
                bytes -= u64::from(front.size());
                self.occ.stats_mut().count_drop(c);
                dropped = Some((front, c));
            }
        }
        self.changed(now, bytes);
        dropped
    }

    /// The arrival of `pkt` at `now` as the AQM and the limit judge it: the
    /// verdict (the packet marked CE if so decided), or the cause it is
    /// refused for.
    fn admit(&mut self, now: Time, pkt: &mut Packet) -> Result<Verdict, DropCause> {
        self.occ.stats_mut().arrivals += 1;
        let view = self.view();
        let verdict = if self.passive {
            Verdict::Accept
        } else {
            self.aqm.on_tick(now, &view);
            self.aqm.on_arrival(now, &view, pkt, &mut self.rng)
        };
        let full = match self.limit {
            Limit::Packets(n) => view.packets >= n,
            Limit::Bytes(b) => view.bytes + u64::from(pkt.size()) > b,
        };
        let refuse = match verdict {
            Verdict::Drop(c) => Some(c),
            Verdict::DropFront(c) if self.pkts.is_empty() => Some(c),
            // The front packet goes instead, which makes room for the arrival.
            Verdict::DropFront(_) => None,
            _ if full => Some(DropCause::Overflow),
            _ => None,
        };
        if let Some(c) = refuse {
            self.occ.stats_mut().count_drop(c);
            return Err(c);
        }
        if verdict == Verdict::Mark {
            pkt.ecn = Ecn::Ce;
            self.occ.stats_mut().ecn_marks += 1;
        }
        Ok(verdict)
    }

    /// No per-flow queues and no dequeue-time policy: nothing is ever
    /// discarded at dequeue ([`Queue::dropped_waiting`] stays 0).
    pub fn is_fifo(&self) -> bool {
        self.fifo
    }

    /// Whether [`Queue::pass_through`] applies: nothing waits, and the AQM
    /// neither decides at dequeue nor keeps per-flow queues.
    pub fn can_pass_through(&self) -> bool {
        debug_assert_eq!(self.fifo, self.fifo_now());
        self.fifo && self.pkts.is_empty()
    }

    /// `pkt` arrives at `now` at an idle transmitter: exactly
    /// [`Queue::enqueue`] followed by [`Queue::dequeue`] at the same instant
    /// (counters, occupancy record, AQM calls), without storing the packet —
    /// with thousands of links, the queue's buffer would be one more cache
    /// miss per packet. Needs [`Queue::can_pass_through`].
    #[allow(clippy::result_large_err)]
    pub fn pass_through(&mut self, now: Time, pkt: Packet) -> Result<Packet, (Packet, DropCause)> {
        self.pass_through_boxed(now, pool::boxed(pkt))
            .map(pool::unboxed)
            .map_err(|(p, c)| (pool::unboxed(p), c))
    }

    /// [`Queue::pass_through`] of a packet in its box.
    pub fn pass_through_boxed(
        &mut self,
        now: Time,
        mut pkt: Box<Packet>,
    ) -> Result<Box<Packet>, (Box<Packet>, DropCause)> {
        debug_assert!(self.can_pass_through());
        // An empty queue refuses a front drop: the verdict is Accept or Mark.
        if let Err(c) = self.admit(now, &mut pkt) {
            return Err((pkt, c));
        }
        self.occ.pass(now, u64::from(pkt.size()));
        self.occ.stats_mut().departures += 1;
        if !self.passive {
            self.aqm.on_departure(now, &self.view());
        }
        Ok(pkt)
    }

    /// Take the head packet at `now`. A dequeue-time AQM may discard head
    /// packets first: they wait in [`Queue::take_dropped`].
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        self.dequeue_boxed(now).map(pool::unboxed)
    }

    /// [`Queue::dequeue`] in its box (the box it waited in).
    pub fn dequeue_boxed(&mut self, now: Time) -> Option<Box<Packet>> {
        if self.fq.is_some() {
            return self.fq_dequeue(now).map(pool::boxed);
        }
        loop {
            let Some(mut pkt) = self.pkts.pop_front() else {
                if self.stamps.is_some() {
                    self.aqm.on_empty(now);
                }
                return None;
            };
            let bytes = self.occ.bytes() - u64::from(pkt.size());
            self.changed(now, bytes);
            let view = self.view();
            if let Some(s) = self.stamps.as_mut() {
                let since = s.pop_front().unwrap_or(now);
                match self
                    .aqm
                    .on_dequeue(now, now.saturating_sub(since), &view, &pkt)
                {
                    DequeueVerdict::Drop(c) => {
                        self.occ.stats_mut().count_drop(c);
                        self.dropped.push_back((pool::unboxed(pkt), c));
                        continue;
                    }
                    DequeueVerdict::Mark => {
                        pkt.ecn = Ecn::Ce;
                        self.occ.stats_mut().ecn_marks += 1;
                    }
                    DequeueVerdict::Deliver => {}
                }
            }
            self.occ.stats_mut().departures += 1;
            if !self.passive {
                self.aqm.on_departure(now, &view);
            }
            return Some(pkt);
        }
    }

    /// The next packet a dequeue-time AQM discarded, for the link to report.
    pub fn take_dropped(&mut self) -> Option<(Packet, DropCause)> {
        self.dropped.pop_front()
    }

    /// Packets discarded at dequeue and not yet taken.
    pub fn dropped_waiting(&self) -> usize {
        debug_assert!(!self.fifo || self.dropped.is_empty());
        self.dropped.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet {
            payload: size - 40,
            header: 40,
            ..Packet::default()
        }
    }

    #[test]
    fn droptail_packet_limit() {
        let mut q = Queue::new(Limit::Packets(2), Box::new(DropTail), Rng::stream(1, "q"));
        // Drop-tail is passive: the queue skips its calls, its limit alone decides.
        assert!(
            q.passive
                && !Queue::new(
                    Limit::Packets(2),
                    Box::new(FrontDropper),
                    Rng::stream(1, "q")
                )
                .passive
        );
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_none());
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_none());
        let (_, c) = q.enqueue(Time::ZERO, pkt(100)).unwrap();
        assert_eq!(c, DropCause::Overflow);
        assert_eq!(q.stats().drops_overflow, 1);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn droptail_byte_limit() {
        let mut q = Queue::new(Limit::Bytes(250), Box::new(DropTail), Rng::stream(1, "q"));
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_none());
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_none());
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_some());
        assert!(q.enqueue(Time::ZERO, pkt(50)).is_none());
        assert_eq!(q.bytes(), 250);
    }

    /// Front-drops every arrival once two packets wait.
    #[derive(Debug)]
    struct FrontDropper;

    impl Aqm for FrontDropper {
        fn name(&self) -> &'static str {
            "front"
        }
        fn on_arrival(&mut self, _: Time, q: &QueueView, _: &Packet, _: &mut Rng) -> Verdict {
            if q.packets >= 2 {
                Verdict::DropFront(DropCause::AqmEarly)
            } else {
                Verdict::Accept
            }
        }
    }

    #[test]
    fn front_drop_discards_the_oldest_and_keeps_the_arrival() {
        let mut q = Queue::new(
            Limit::Packets(10),
            Box::new(FrontDropper),
            Rng::stream(1, "q"),
        );
        for uid in 0..2 {
            assert!(q.enqueue(Time::ZERO, Packet { uid, ..pkt(100) }).is_none());
        }
        let (dropped, cause) = q
            .enqueue(Time::ZERO, Packet { uid: 2, ..pkt(100) })
            .unwrap();
        assert_eq!((dropped.uid, cause), (0, DropCause::AqmEarly));
        assert_eq!(q.len(), 2);
        assert_eq!(q.bytes(), 200);
        assert_eq!(q.dequeue(Time::ZERO).map(|p| p.uid), Some(1));
        assert_eq!(q.stats().drops_aqm_early, 1);
    }

    #[test]
    fn front_drop_at_a_full_queue_makes_room() {
        let mut q = Queue::new(
            Limit::Packets(2),
            Box::new(FrontDropper),
            Rng::stream(1, "q"),
        );
        for uid in 0..2 {
            assert!(q.enqueue(Time::ZERO, Packet { uid, ..pkt(100) }).is_none());
        }
        let (dropped, _) = q
            .enqueue(Time::ZERO, Packet { uid: 2, ..pkt(100) })
            .unwrap();
        assert_eq!(dropped.uid, 0, "the front goes, not the arrival");
        assert_eq!(q.stats().drops_overflow, 0);
        assert_eq!(q.len(), 2);
    }

    /// The queue from a TOML table (as in a scenario's `queue = { … }`).
    fn queue_from(toml_text: &str) -> Queue {
        let cfg: QueueConfig = toml::from_str(toml_text).unwrap();
        // A slow link: RED forgets its average slowly over idle time.
        cfg.build(100_000, Rng::stream(7, "q")).unwrap()
    }

    proptest::proptest! {
        /// `pass_through` at an empty queue is `enqueue` then `dequeue` at the
        /// same instant: same packet out (or the same refusal), same counters,
        /// same occupancy record, same AQM state afterwards — whatever the
        /// AQM, with bursts in between that give RED an average to decide on.
        #[test]
        fn pass_through_is_enqueue_then_dequeue(
            which in 0usize..4,
            ops in proptest::collection::vec((1u64..50, 0usize..6, 40u32..1500), 1..60),
        ) {
            let text = [
                "limit = \"3000B\"",
                "kind = \"red\"\nlimit = \"12p\"\nminth = 1\nmaxth = 4\nmaxp = 0.5\nwq = 0.3\necn = true",
                "kind = \"red\"\nlimit = \"12p\"\nminth = 1\nmaxth = 3\nmaxp = 0.9\nwq = 0.5",
                "kind = \"sbd\"\nlimit = \"12p\"\nminth = 3\nmaxth = 8\nalpha = 1\ntr = \"5ms\"",
            ][which];
            let (mut fast, mut slow) = (queue_from(text), queue_from(text));
            fast.occupancy_mut().watch_busy();
            slow.occupancy_mut().watch_busy();
            let mut now = Time::ZERO;
            for (dt, burst, size) in ops {
                now += Time::from_millis(dt);
                let mut p = pkt(size);
                p.ecn = Ecn::Ect0;
                if burst > 0 {
                    // A burst: both queues alike, then emptied.
                    for _ in 0..burst {
                        fast.enqueue(now, p);
                        slow.enqueue(now, p);
                    }
                    while fast.dequeue(now).is_some() {}
                    while slow.dequeue(now).is_some() {}
                    continue;
                }
                proptest::prop_assert!(fast.can_pass_through());
                let a = fast.pass_through(now, p).map_err(|(q, c)| (q.uid, c));
                let b = match slow.enqueue(now, p) {
                    Some((q, c)) => Err((q.uid, c)),
                    None => Ok(slow.dequeue(now).unwrap()),
                };
                proptest::prop_assert_eq!(a.as_ref().map(|q| q.ecn), b.as_ref().map(|q| q.ecn));
                proptest::prop_assert_eq!(a.map(|_| ()), b.map(|_| ()));
                proptest::prop_assert_eq!(fast.stats(), slow.stats());
                proptest::prop_assert_eq!(fast.occupancy().busy_changes(), slow.occupancy().busy_changes());
                proptest::prop_assert!(slow.is_empty());
            }
        }
    }

    #[test]
    fn pass_through_needs_an_empty_fifo() {
        let mut q = queue_from("limit = \"10p\"");
        assert!(q.can_pass_through());
        q.enqueue(Time::ZERO, pkt(100));
        assert!(!q.can_pass_through(), "a packet waits");
        let codel = queue_from("kind = \"codel\"");
        assert!(!codel.can_pass_through(), "CoDel decides at dequeue");
    }

    #[test]
    fn occupancy_integral() {
        let mut q = Queue::new(Limit::Packets(10), Box::new(DropTail), Rng::stream(1, "q"));
        assert!(q.enqueue(Time::from_secs(0), pkt(100)).is_none());
        assert!(q.enqueue(Time::from_secs(1), pkt(100)).is_none());
        q.dequeue(Time::from_secs(3));
        q.occupancy_mut().finish(Time::from_secs(4));
        // 1 pkt for 1 s, 2 pkts for 2 s, 1 pkt for 1 s = 6 pkt·s.
        assert_eq!(q.stats().area_packets, 6 * 1_000_000_000);
    }
}

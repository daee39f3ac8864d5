//! Seed 004's WIPEMU radio link as a simulation model (`kind = "frame_arq"`):
//! a frame-level downlink with per-frame M-QAM (fixed, or adaptive from a
//! predicted fading channel), selective-repeat link ARQ with a retransmission
//! limit, and bit errors carried up in the packets that exhaust it; a plain
//! uplink for the ACKs.
//!
//! **Frames.** Frame k starts at k/`frame_rate` s (1500 frames/s: 0.667 ms)
//! and carries `symbols` data symbols (108) of one modulation, so
//! 108·log2 M bits. An IP packet taken from the gateway queue is cut into
//! frames as they are sent — each new frame carries what the modulation
//! chosen for it holds, the last one padded; no two packets share a frame.
//! A packet leaves when all its frames are done (received, or given up), so
//! packets may leave out of order (`in_order = true` holds them back).
//!
//! **Modulation.** Fixed (`"bpsk"`, `"4qam"`, …), or `"adaptive"` over
//! 4…256-QAM: per frame the modulation with the most expected delivered bits
//! given the *predicted* SNR and the local mean SNR, with switching levels
//! designed for `levels_nmse` (default: the channel's prediction NMSE; see
//! `analytic::mqam`). A frame is received with probability
//! (1 − P_s(M, γ))^108 at the *real* SNR γ, drawn with a uniform that depends
//! only on the frame index (common random numbers).
//!
//! **ARQ.** Selective repeat: a failed frame is sent again no earlier than
//! `arq.delay` after the end of its failed transmission, before any new
//! frame; new frames fill the slots in between (pipelining). No soft
//! combining. A retransmission is sent in the modulation chosen for its own
//! slot from the predicted channel (`arq.modulation = "rechoose"`, the
//! default: seed 004 adapts "per link layer frame" from the predicted
//! channel); when that modulation holds less than the frame carries, the
//! frame is split and the rest is due in the next slot, with the same tries
//! so far. `"keep"` instead keeps the frame whole in the most robust
//! modulation of the set that holds it (the first try's, for a full frame).
//! Fixed modulation: every try in the fixed one. After `arq.limit`
//! retransmissions the frame is given up: its symbol errors are drawn from
//! the real channel's symbol error rate (at least one), one bit per symbol
//! error, and carried up in the packet (`Packet::corrupt`), header hits
//! flagged. See `docs/models/frame-arq.md`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Account, ArqStats, Delivery, Dir, Link, LinkKind, LinkStats, Place, WiredConfig, WiredDirection,
};
use crate::analytic::mqam::{self, Modulation, Qam8};
use crate::aqm::{DropCause, DropTail, Occupancy, Queue, QueueConfig};
use crate::channel::fading::{FadingChannel, FadingConfig, FrameChannel};
use crate::channel::Perfect;
use crate::config::{ConfigError, Limit, Rate, Result};
use crate::packet::Packet;
use crate::rng::{Keyed, Rng};
use crate::time::Time;

/// The modulation of every frame, or adaptive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ModulationChoice {
    /// Per frame from the predicted channel over 4…256-QAM.
    #[default]
    #[serde(rename = "adaptive")]
    Adaptive,
    /// BPSK.
    #[serde(rename = "bpsk")]
    Bpsk,
    /// 4-QAM.
    #[serde(rename = "4qam")]
    Qam4,
    /// 8-QAM (see `qam8`).
    #[serde(rename = "8qam")]
    Qam8,
    /// 16-QAM.
    #[serde(rename = "16qam")]
    Qam16,
    /// 32-cross-QAM.
    #[serde(rename = "32qam")]
    Qam32,
    /// 64-QAM.
    #[serde(rename = "64qam")]
    Qam64,
    /// 128-cross-QAM.
    #[serde(rename = "128qam")]
    Qam128,
    /// 256-QAM.
    #[serde(rename = "256qam")]
    Qam256,
}

impl ModulationChoice {
    /// The fixed modulation, `None` when adaptive.
    pub fn fixed(self) -> Option<Modulation> {
        let i = match self {
            ModulationChoice::Adaptive => return None,
            m => m as usize - 1,
        };
        Some(Modulation::ALL[i])
    }
}

/// Which 8-QAM constellation (`qam8`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Qam8Choice {
    /// The cross-constellation approximation (default).
    #[default]
    Cross,
    /// The 4×2 rectangle.
    Rectangular,
}

/// Which modulation a retransmission is sent in (`arq.modulation`), with
/// adaptive modulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetxModulation {
    /// Chosen for the retransmission's own slot from the predicted channel,
    /// as for a new frame; a frame the chosen modulation cannot hold is split
    /// (default).
    #[default]
    Rechoose,
    /// The most robust modulation that holds the frame's payload (for a full
    /// frame: the modulation of its first try).
    Keep,
}

/// Link ARQ (`arq = { … }`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameArqConfig {
    /// Retransmissions allowed per frame (0 to 1000). Default 10.
    pub limit: Option<u32>,
    /// Earliest retransmission after the end of the failed frame. Default
    /// `"2ms"`.
    pub delay: Option<Time>,
    /// A retransmission's modulation with adaptive modulation: `"rechoose"`
    /// (default) or `"keep"`.
    pub modulation: Option<RetxModulation>,
}

/// The uplink (b → a) that carries the ACKs: a lossless wire.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UplinkConfig {
    /// Rate. Default `"20kbit"` (seed 004, Table 1).
    pub rate: Option<Rate>,
    /// Delay. Default `"2ms"`.
    pub delay: Option<Time>,
    /// Its queue. Default drop-tail, 1000 packets.
    pub queue: Option<QueueConfig>,
}

/// `kind = "frame_arq"`: seed 004's frame-level radio link from `a` (the base
/// station side) to `b` (the terminal), see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameArqLinkConfig {
    /// The base station side (gateway).
    pub a: String,
    /// The terminal.
    pub b: String,
    /// Frames per second (1 to 100 000). Default 1500.
    pub frame_rate: Option<u32>,
    /// Data symbols per frame (1 to 10 000). Default 108.
    pub symbols: Option<u32>,
    /// `"adaptive"` (default) or a fixed modulation: `"bpsk"`, `"4qam"`,
    /// `"8qam"`, `"16qam"`, `"32qam"`, `"64qam"`, `"128qam"`, `"256qam"`.
    pub modulation: Option<ModulationChoice>,
    /// 8-QAM constellation: `"cross"` (default) or `"rectangular"`.
    pub qam8: Option<Qam8Choice>,
    /// The prediction NMSE the adaptive switching levels are designed for
    /// (0 ≤ ν < 1). Default: the channel's `nmse`.
    pub levels_nmse: Option<f64>,
    /// The fading channel, its prediction and the mean SNR.
    pub channel: Option<FadingConfig>,
    /// Link ARQ.
    pub arq: Option<FrameArqConfig>,
    /// Deliver packets in order (hold later ones until earlier ones are
    /// done). Default false, as in WIPEMU.
    pub in_order: Option<bool>,
    /// Delay after the radio. Default `"0s"`.
    pub delay: Option<Time>,
    /// The gateway's IP queue in front of the radio. Default drop-tail, 50
    /// packets (seed 004, Table 1).
    pub queue: Option<QueueConfig>,
    /// The uplink carrying the ACKs.
    pub uplink: Option<UplinkConfig>,
}

impl FrameArqLinkConfig {
    fn frame_rate(&self) -> u32 {
        self.frame_rate.unwrap_or(1500)
    }

    fn symbols(&self) -> u32 {
        self.symbols.unwrap_or(108)
    }

    fn qam8(&self) -> Qam8 {
        match self.qam8.unwrap_or_default() {
            Qam8Choice::Cross => Qam8::Cross,
            Qam8Choice::Rectangular => Qam8::Rectangular,
        }
    }

    fn channel(&self) -> FadingConfig {
        self.channel.clone().unwrap_or_default()
    }

    fn levels_nmse(&self) -> f64 {
        self.levels_nmse.unwrap_or_else(|| self.channel().nmse())
    }

    fn limit(&self) -> u32 {
        self.arq.as_ref().and_then(|a| a.limit).unwrap_or(10)
    }

    fn retx_modulation(&self) -> RetxModulation {
        self.arq
            .as_ref()
            .and_then(|a| a.modulation)
            .unwrap_or_default()
    }

    fn arq_delay(&self) -> Time {
        self.arq
            .as_ref()
            .and_then(|a| a.delay)
            .unwrap_or(Time::from_millis(2))
    }

    fn check(&self) -> Result<()> {
        let fr = self.frame_rate();
        if !(1..=100_000).contains(&fr) {
            return Err(ConfigError::new(
                "frame_rate",
                fr.to_string(),
                "is out of range; allowed: 1 to 100000 frames per second",
            ));
        }
        let sy = self.symbols();
        if !(1..=10_000).contains(&sy) {
            return Err(ConfigError::new(
                "symbols",
                sy.to_string(),
                "is out of range; allowed: 1 to 10000",
            ));
        }
        if let Some(n) = self.levels_nmse {
            if !(0.0..1.0).contains(&n) {
                return Err(ConfigError::new(
                    "levels_nmse",
                    n.to_string(),
                    "is not an NMSE; allowed: 0 to 1 (1 excluded)",
                ));
            }
        }
        if self.limit() > 1000 {
            return Err(ConfigError::new(
                "arq.limit",
                self.limit().to_string(),
                "is too large; allowed: 0 to 1000 retransmissions",
            ));
        }
        self.channel().validate().map_err(|e| e.at("channel"))?;
        if let Some(q) = &self.queue {
            q.validate().map_err(|e| e.at("queue"))?;
        }
        if let Some(q) = self.uplink.as_ref().and_then(|u| u.queue.as_ref()) {
            q.validate().map_err(|e| e.at("uplink.queue"))?;
        }
        Ok(())
    }

    /// The link between nodes `a` and `b`.
    pub fn link(&self, a: &str, b: &str, seed: u64) -> Result<FrameArqLink> {
        self.check()?;
        let name = format!("{a}->{b}");
        let fr = self.frame_rate();
        let frame = Time::from_nanos(1_000_000_000 / u64::from(fr));
        // Nominal rate for queue defaults and reports: 4-QAM's.
        let nominal = u64::from(fr) * u64::from(self.symbols()) * 2;
        let queue = match &self.queue {
            Some(q) => q.build(nominal, Rng::stream(seed, &format!("{name}/queue"))),
            None => Ok(Queue::new(
                Limit::Packets(50),
                Box::new(DropTail),
                Rng::stream(seed, &format!("{name}/queue")),
            )),
        }
        .map_err(|e| e.at("queue"))?;
        let up = self.uplink.clone().unwrap_or_default();
        let up_rate = up.rate.map_or(20_000, Rate::bps);
        let up_queue = match &up.queue {
            Some(q) => q.build(up_rate, Rng::stream(seed, &format!("{b}->{a}/queue"))),
            None => Ok(Queue::new(
                Limit::Packets(1000),
                Box::new(DropTail),
                Rng::stream(seed, &format!("{b}->{a}/queue")),
            )),
        }
        .map_err(|e| e.at("uplink.queue"))?;
        let uplink = WiredDirection::new(
            WiredConfig {
                rate_bps: up_rate,
                schedule: Vec::new(),
                immediate: false,
                delay: up.delay.unwrap_or(Time::from_millis(2)),
                overhead_bytes: 0,
                trace: None,
            },
            up_queue,
            Box::new(Perfect),
        );
        let qam8 = self.qam8();
        let mode = match self.modulation.unwrap_or_default().fixed() {
            Some(m) => Mode::Fixed(m),
            None => Mode::Adaptive(levels_table(self.levels_nmse(), qam8)),
        };
        // Whole frames in the delay, exactly: ⌈delay · frame_rate⌉.
        let arq_slots =
            (u128::from(self.arq_delay().0) * u128::from(fr)).div_ceil(1_000_000_000) as u64;
        Ok(FrameArqLink {
            queue,
            uplink,
            channel: FadingChannel::new(&self.channel(), frame, seed, &name),
            draws: Keyed::new(seed, &format!("{name}/frames")),
            residual: Rng::stream(seed, &format!("{name}/residual")),
            mode,
            qam8,
            symbols: self.symbols(),
            frame_rate: u64::from(fr),
            limit: self.limit(),
            retx_modulation: self.retx_modulation(),
            arq_slots,
            in_order: self.in_order.unwrap_or(false),
            delay: self.delay.unwrap_or(Time::ZERO),
            next_slot: 0,
            frames: Slab::default(),
            next_frame: 0,
            rtx: BinaryHeap::new(),
            packets: Slab::default(),
            next_packet: 0,
            seg: None,
            out: VecDeque::new(),
            stats: LinkStats::default(),
            counters: Counters::default(),
            ahead_log: VecDeque::new(),
            ahead_ch: None,
            frame_pass: true,
            nominal,
        })
    }
}

impl LinkKind for FrameArqLinkConfig {
    fn ends(&self) -> (&str, &str) {
        (&self.a, &self.b)
    }

    fn validate(&self) -> Result<()> {
        self.check()
    }

    fn build(&self, a: &str, b: &str, seed: u64) -> Result<Box<dyn Link>> {
        Ok(Box::new(self.link(a, b, seed)?))
    }
}

/// Switching levels for every local mean SNR of a grid, by design NMSE.
#[derive(Debug)]
struct LevelTable {
    /// Local mean SNR (dB) of row 0, and the step between rows.
    lo_db: f64,
    step_db: f64,
    /// Per row: each modulation with the predicted SNR (dB) from which it is
    /// chosen; one row when the levels do not depend on the mean (NMSE 0).
    rows: Vec<Vec<(Modulation, f64)>>,
}

impl LevelTable {
    fn choose(&self, predicted: f64, local_mean: f64) -> Modulation {
        let row = if self.rows.len() == 1 {
            &self.rows[0]
        } else {
            let i = ((10.0 * local_mean.log10() - self.lo_db) / self.step_db).round();
            &self.rows[(i.max(0.0) as usize).min(self.rows.len() - 1)]
        };
        let db = 10.0 * predicted.max(1e-30).log10();
        row.iter()
            .rev()
            .find(|l| db >= l.1)
            .map_or(row[0].0, |l| l.0)
    }
}

/// The level table for design NMSE `nmse` (computed once per process).
fn levels_table(nmse: f64, qam8: Qam8) -> Arc<LevelTable> {
    type Cache = Mutex<HashMap<(u64, bool), Arc<LevelTable>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (nmse.to_bits(), qam8 == Qam8::Rectangular);
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(t) = cache.lock().map(|c| c.get(&key).cloned()).ok().flatten() {
        return t;
    }
    let set = Modulation::adaptive();
    let table = if nmse == 0.0 {
        LevelTable {
            lo_db: 0.0,
            step_db: 1.0,
            rows: vec![mqam::levels(set, 1.0, 0.0, qam8)],
        }
    } else {
        let (lo_db, step_db) = (-5.0, 1.0);
        let rows = (0..51)
            .map(|i| {
                mqam::levels(
                    set,
                    mqam::db_to_lin(lo_db + step_db * f64::from(i)),
                    nmse,
                    qam8,
                )
            })
            .collect();
        LevelTable {
            lo_db,
            step_db,
            rows,
        }
    };
    let table = Arc::new(table);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, table.clone());
    }
    table
}

/// How frames pick their modulation.
#[derive(Debug)]
enum Mode {
    Fixed(Modulation),
    Adaptive(Arc<LevelTable>),
}

/// Frames or packets in flight by id: ids are handed out in increasing order
/// and each is inserted once, so they sit in a ring from the oldest open id
/// (`base`) on; the map is read by id and in id order only (what the
/// `BTreeMap` it replaces gave, without its node walks).
#[derive(Debug)]
struct Slab<T> {
    base: u64,
    items: VecDeque<Option<T>>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            base: 0,
            items: VecDeque::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Insert `v` as `id`, which must be above every id inserted before.
    fn insert(&mut self, id: u64, v: T) {
        if self.items.is_empty() {
            self.base = id;
        }
        debug_assert!(id >= self.base + self.items.len() as u64, "ids increase");
        while self.base + (self.items.len() as u64) < id {
            self.items.push_back(None);
        }
        self.items.push_back(Some(v));
        self.len += 1;
    }

    fn index(&self, id: u64) -> Option<usize> {
        id.checked_sub(self.base)
            .map(|i| i as usize)
            .filter(|&i| i < self.items.len())
    }

    fn get(&self, id: &u64) -> Option<&T> {
        self.index(*id).and_then(|i| self.items[i].as_ref())
    }

    fn get_mut(&mut self, id: &u64) -> Option<&mut T> {
        self.index(*id).and_then(|i| self.items[i].as_mut())
    }

    fn remove(&mut self, id: &u64) -> Option<T> {
        let v = self.index(*id).and_then(|i| self.items[i].take())?;
        self.len -= 1;
        while self.items.front().is_some_and(Option::is_none) {
            self.items.pop_front();
            self.base += 1;
        }
        Some(v)
    }

    fn len(&self) -> usize {
        self.len
    }

    /// (id, item) in increasing id order.
    fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        let base = self.base;
        self.items
            .iter()
            .enumerate()
            .filter_map(move |(i, v)| v.as_ref().map(|v| (base + i as u64, v)))
    }

    fn values(&self) -> impl Iterator<Item = &T> {
        self.items.iter().flatten()
    }

    fn first_key_value(&self) -> Option<(u64, &T)> {
        self.iter().next()
    }
}

impl<T> std::ops::Index<&u64> for Slab<T> {
    type Output = T;

    fn index(&self, id: &u64) -> &T {
        self.get(id).expect("id in flight")
    }
}

/// A frame on its way: the part of a packet it carries.
#[derive(Clone, Copy, Debug)]
struct Frame {
    packet: u64,
    start_bit: u32,
    bits: u32,
    sent: u32,
}

/// A packet being sent: how many of its frames are still open.
#[derive(Clone, Copy, Debug)]
struct PacketState {
    pkt: Packet,
    open: u32,
    segmented: bool,
    done: Option<Time>,
    corrupt_bits: u32,
    header_hit: bool,
}

/// Frame counters of the downlink.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    /// Frames sent (first transmissions).
    pub frames: u64,
    /// Retransmissions.
    pub retransmissions: u64,
    /// Frames given up at the limit, their errors carried up.
    pub residual_frames: u64,
    /// Bits hit in the frames given up (payload and headers).
    pub residual_bits: u64,
    /// Packets delivered with bit errors.
    pub corrupted_packets: u64,
    /// Retransmissions whose modulation held less than the frame, so that
    /// the frame was split (`arq.modulation = "rechoose"`).
    pub split_frames: u64,
    /// Frames sent in each modulation (BPSK … 256-QAM), retransmissions included.
    pub by_modulation: [u64; 8],
}

/// Seed 004's frame link between two nodes (see the module documentation).
#[derive(Debug)]
pub struct FrameArqLink {
    queue: Queue,
    uplink: WiredDirection,
    channel: FadingChannel,
    draws: Keyed,
    residual: Rng,
    mode: Mode,
    qam8: Qam8,
    symbols: u32,
    frame_rate: u64,
    limit: u32,
    retx_modulation: RetxModulation,
    arq_slots: u64,
    in_order: bool,
    delay: Time,
    /// The next frame slot to process.
    next_slot: u64,
    frames: Slab<Frame>,
    next_frame: u64,
    /// Frames waiting to be retransmitted: (earliest slot, frame id).
    rtx: BinaryHeap<Reverse<(u64, u64)>>,
    packets: Slab<PacketState>,
    next_packet: u64,
    /// The packet being cut into frames and the bits already cut.
    seg: Option<(u64, u32)>,
    /// Packets that left the radio: (arrival at `b`, packet).
    out: VecDeque<(Time, Packet)>,
    stats: LinkStats,
    counters: Counters,
    /// The frame pass ([`FrameArqLink::pass`]): the counters before each
    /// slot sent ahead of its time, with the slot's start (for
    /// [`Link::arq_stats`] at an earlier instant).
    ahead_log: VecDeque<(Time, Counters)>,
    /// The channel of the slot the pass stopped at (the next slot to send,
    /// whatever happens before it), evaluated once.
    ahead_ch: Option<(u64, FrameChannel)>,
    /// The frame pass is on (tests turn it off to compare with one wake-up
    /// per frame).
    frame_pass: bool,
    nominal: u64,
}

impl FrameArqLink {
    /// Start of frame slot `k`.
    fn slot_time(&self, k: u64) -> Time {
        // The same integer quotient in 64 bits while k·10⁹ fits (k < 1.8·10¹⁰).
        match k.checked_mul(1_000_000_000) {
            Some(n) => Time(n / self.frame_rate),
            None => Time((u128::from(k) * 1_000_000_000 / u128::from(self.frame_rate)) as u64),
        }
    }

    /// The first slot starting at or after `t`.
    fn slot_at(&self, t: Time) -> u64 {
        (u128::from(t.0) * u128::from(self.frame_rate)).div_ceil(1_000_000_000) as u64
    }

    /// Frame counters so far (the slots sent ahead included).
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Frame counters of the slots that start by `now`.
    fn counters_at(&self, now: Time) -> &Counters {
        self.ahead_log
            .iter()
            .find(|(t, _)| *t > now)
            .map_or(&self.counters, |(_, c)| c)
    }

    /// The frame pass: send the slots after `now` whose frames nothing
    /// outside the link can change, and which finish no packet, now instead
    /// of one wake-up each (issue 38). Slot k is such a slot when it carries a
    /// retransmission due by k or the next piece of the packet being cut
    /// (neither waits for the queue, and an arriving packet never goes
    /// before them), and its frame, sent, leaves every packet's state
    /// (open, done, released) as it was. The pass stops at the first other
    /// slot, which is then the link's next wake-up as before: one that takes
    /// a packet from the queue, an idle one, or one whose frame finishes a
    /// packet (its channel kept for it). Each slot is sent exactly as at its
    /// own time (its channel and draws depend on k alone, the residual-error
    /// draws come in slot order), so only the counters run ahead; they are
    /// logged per slot, and [`Link::arq_stats`] reads them as of its instant.
    fn pass(&mut self, now: Time) {
        while self.ahead_log.front().is_some_and(|(t, _)| *t <= now) {
            self.ahead_log.pop_front();
        }
        loop {
            let k = self.next_slot;
            let rtx_due = matches!(self.rtx.peek(), Some(Reverse((due, _))) if *due <= k);
            if !rtx_due && self.seg.is_none() {
                return;
            }
            let t = self.slot_time(k);
            if t <= now || self.ahead_ch.is_some() {
                return;
            }
            let ch = self.channel.at(k);
            if self.finishes_packet(k, &ch) {
                self.ahead_ch = Some((k, ch));
                return;
            }
            self.ahead_log.push_back((t, self.counters.clone()));
            self.send(k, ch);
            self.next_slot = k + 1;
        }
    }

    /// Whether the frame slot `k` sends (a retransmission due or the next
    /// piece of the packet being cut), on channel `ch`, finishes its packet.
    fn finishes_packet(&self, k: u64, ch: &FrameChannel) -> bool {
        let (m, last, sent) = match self.rtx.peek() {
            Some(Reverse((due, id))) if *due <= k => {
                let f = &self.frames[id];
                let m = match (&self.mode, self.retx_modulation) {
                    (Mode::Adaptive(t), RetxModulation::Rechoose) => {
                        let m = t.choose(ch.predicted, ch.local_mean);
                        if f.bits > m.bits() * self.symbols {
                            // Split: the rest stays open.
                            return false;
                        }
                        m
                    }
                    _ => self.fitting(f.bits),
                };
                let p = &self.packets[&f.packet];
                (m, p.segmented && p.open == 1, f.sent + 1)
            }
            _ => {
                let Some((pid, off)) = self.seg else {
                    return false;
                };
                let m = match &self.mode {
                    Mode::Fixed(m) => *m,
                    Mode::Adaptive(t) => t.choose(ch.predicted, ch.local_mean),
                };
                let p = &self.packets[&pid];
                let total = p.pkt.size() * 8;
                let bits = (m.bits() * self.symbols).min(total - off);
                (m, off + bits >= total && p.open == 0, 1)
            }
        };
        last && (sent > self.limit || self.draws.uniform(k, 0) < m.frame_success(ch.snr, self.qam8))
    }

    fn has_new(&self) -> bool {
        self.seg.is_some() || !self.queue.is_empty()
    }

    /// The slot of the next frame to send, if any work is waiting.
    fn next_work(&self) -> Option<u64> {
        if self.has_new() {
            return Some(self.next_slot);
        }
        self.rtx
            .peek()
            .map(|Reverse((due, _))| (*due).max(self.next_slot))
    }

    /// Send every frame whose slot starts by `now`.
    fn run(&mut self, now: Time) {
        while let Some(k) = self.next_work() {
            if self.slot_time(k) > now {
                break;
            }
            self.next_slot = k;
            self.slot(k);
            self.next_slot = k + 1;
        }
    }

    /// The most robust modulation that holds `bits`.
    fn fitting(&self, bits: u32) -> Modulation {
        match &self.mode {
            Mode::Fixed(m) => *m,
            Mode::Adaptive(_) => Modulation::adaptive()
                .iter()
                .copied()
                .find(|m| m.bits() * self.symbols >= bits)
                .unwrap_or(Modulation::Qam256),
        }
    }

    /// Send one frame in slot `k`.
    fn slot(&mut self, k: u64) {
        let ch = match self.ahead_ch.take() {
            Some((j, ch)) => {
                debug_assert_eq!(j, k, "the pass stopped at the next slot");
                ch
            }
            None => self.channel.at(k),
        };
        self.send(k, ch);
    }

    /// Send one frame in slot `k` on channel `ch`.
    fn send(&mut self, k: u64, ch: FrameChannel) {
        let t = self.slot_time(k);
        let (id, m) = match self.rtx.peek() {
            Some(Reverse((due, id))) if *due <= k => {
                let id = *id;
                self.rtx.pop();
                let m = match (&self.mode, self.retx_modulation) {
                    (Mode::Adaptive(t), RetxModulation::Rechoose) => {
                        let m = t.choose(ch.predicted, ch.local_mean);
                        self.split(id, m.bits() * self.symbols, k + 1);
                        m
                    }
                    _ => self.fitting(self.frames[&id].bits),
                };
                self.counters.retransmissions += 1;
                (id, m)
            }
            _ => match self.new_frame(t, &ch) {
                Some(x) => x,
                None => return,
            },
        };
        self.counters.by_modulation[m as usize] += 1;
        let ok = self.draws.uniform(k, 0) < m.frame_success(ch.snr, self.qam8);
        let end = self.slot_time(k + 1);
        let f = self.frames.get_mut(&id).expect("frame in flight");
        f.sent += 1;
        if ok {
            self.frame_done(id, end, 0, false);
        } else if f.sent <= self.limit {
            self.rtx.push(Reverse((k + 1 + self.arq_slots, id)));
        } else {
            let (bits, header) = self.residual_errors(id, m, ch.snr);
            self.counters.residual_frames += 1;
            self.counters.residual_bits += u64::from(bits);
            self.frame_done(id, end, bits, header);
        }
    }

    /// Keep the first `cap` bits in frame `id`; the rest, if any, becomes a
    /// frame of its own with the same tries so far, due for retransmission
    /// in slot `due`.
    fn split(&mut self, id: u64, cap: u32, due: u64) {
        let f = self.frames.get_mut(&id).expect("frame in flight");
        if f.bits <= cap {
            return;
        }
        let rest = Frame {
            packet: f.packet,
            start_bit: f.start_bit + cap,
            bits: f.bits - cap,
            sent: f.sent,
        };
        f.bits = cap;
        self.counters.split_frames += 1;
        let id2 = self.next_frame;
        self.next_frame += 1;
        self.frames.insert(id2, rest);
        self.packets
            .get_mut(&rest.packet)
            .expect("packet in flight")
            .open += 1;
        self.rtx.push(Reverse((due, id2)));
    }

    /// Cut the next frame of new data in modulation chosen for `ch`.
    fn new_frame(&mut self, t: Time, ch: &FrameChannel) -> Option<(u64, Modulation)> {
        if self.seg.is_none() {
            let pkt = self.queue.dequeue(t)?;
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += u64::from(pkt.size());
            let id = self.next_packet;
            self.next_packet += 1;
            self.packets.insert(
                id,
                PacketState {
                    pkt,
                    open: 0,
                    segmented: false,
                    done: None,
                    corrupt_bits: 0,
                    header_hit: false,
                },
            );
            self.seg = Some((id, 0));
        }
        let (pid, off) = self.seg?;
        let m = match &self.mode {
            Mode::Fixed(m) => *m,
            Mode::Adaptive(t) => t.choose(ch.predicted, ch.local_mean),
        };
        let total = self.packets[&pid].pkt.size() * 8;
        let bits = (m.bits() * self.symbols).min(total - off);
        let id = self.next_frame;
        self.next_frame += 1;
        self.frames.insert(
            id,
            Frame {
                packet: pid,
                start_bit: off,
                bits,
                sent: 0,
            },
        );
        self.counters.frames += 1;
        let p = self.packets.get_mut(&pid).expect("packet being cut");
        p.open += 1;
        if off + bits >= total {
            p.segmented = true;
            self.seg = None;
        } else {
            self.seg = Some((pid, off + bits));
        }
        Some((id, m))
    }

    /// Symbol errors of a frame given up at SNR `snr` (at least one), one bit
    /// each: (bits of the packet hit, whether any is a header bit).
    fn residual_errors(&mut self, id: u64, m: Modulation, snr: f64) -> (u32, bool) {
        let f = self.frames[&id];
        let n = self.symbols as usize;
        let p = m.ser(snr, self.qam8).clamp(1e-300, 1.0);
        // K ~ Binomial(n, p) given K ≥ 1, by inversion in log space.
        let k = if p >= 1.0 {
            n
        } else {
            let (lp, lq) = (p.ln(), (-p).ln_1p());
            let mut logs = Vec::with_capacity(n);
            let mut lc = 0.0; // ln C(n, j)
            for j in 1..=n {
                lc += ((n - j + 1) as f64).ln() - (j as f64).ln();
                logs.push(lc + j as f64 * lp + (n - j) as f64 * lq);
            }
            let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
            let mut u = self.residual.uniform() * w.iter().sum::<f64>();
            let mut k = n;
            for (j, x) in w.iter().enumerate() {
                if u < *x {
                    k = j + 1;
                    break;
                }
                u -= x;
            }
            k
        };
        // K distinct symbols, one bit each.
        let mut pos: Vec<u32> = (0..n as u32).collect();
        let (b, header_bits) = (m.bits(), u32::from(self.packets[&f.packet].pkt.header) * 8);
        let (mut hit, mut header) = (0u32, false);
        for i in 0..k {
            let j = i + (self.residual.uniform() * (n - i) as f64) as usize;
            pos.swap(i, j.min(n - 1));
            let bit = pos[i] * b + (self.residual.uniform() * f64::from(b)) as u32;
            if bit < f.bits {
                hit += 1;
                header |= f.start_bit + bit < header_bits;
            }
        }
        (hit, header)
    }

    /// Frame `id` is done at `end` with `bits` errors: close it, and release
    /// its packet when that was the packet's last open frame.
    fn frame_done(&mut self, id: u64, end: Time, bits: u32, header: bool) {
        let f = self.frames.remove(&id).expect("frame in flight");
        let p = self.packets.get_mut(&f.packet).expect("packet in flight");
        p.open -= 1;
        p.corrupt_bits = p.corrupt_bits.saturating_add(bits);
        p.header_hit |= header;
        if p.segmented && p.open == 0 {
            p.done = Some(end);
            // Only a packet just done can be released now: every other done
            // one went when it was done, or waits (in order) for an earlier
            // one that is still open.
            self.release(end);
        }
    }

    /// Move finished packets to the far end.
    fn release(&mut self, now: Time) {
        loop {
            let next = if self.in_order {
                self.packets
                    .first_key_value()
                    .filter(|(_, p)| p.done.is_some())
                    .map(|(k, _)| k)
            } else {
                self.packets
                    .iter()
                    .find(|(_, p)| p.done.is_some())
                    .map(|(k, _)| k)
            };
            let Some(id) = next else { break };
            let p = self.packets.remove(&id).expect("finished packet");
            let mut pkt = p.pkt;
            if p.corrupt_bits > 0 {
                pkt.set_corrupt(p.corrupt_bits, p.header_hit);
                self.counters.corrupted_packets += 1;
            }
            self.out.push_back((now + self.delay, pkt));
        }
    }
}

impl Link for FrameArqLink {
    fn enqueue(&mut self, now: Time, dir: Dir, pkt: Packet) -> Option<(Packet, DropCause)> {
        match dir {
            Dir::AB => {
                // Frames due by now go first; then, with no new data waiting,
                // the slots up to now were idle (or retransmissions only) and
                // the new data's first frame is the first slot from now on.
                self.run(now);
                if !self.has_new() {
                    self.next_slot = self.next_slot.max(self.slot_at(now));
                }
                self.queue.enqueue(now, pkt)
            }
            Dir::BA => self.uplink.enqueue(now, pkt),
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        if self.queue.dropped_waiting() > 0 {
            // Packets the queue discarded (FQ-CoDel's overflow drops from the
            // fattest flow, a dequeue-time AQM's) are reported at once.
            return Some(Time::ZERO);
        }
        let radio = self.next_work().map(|k| self.slot_time(k));
        let out = self.out.front().map(|x| x.0);
        [radio, out, self.uplink.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    fn poll_deliver(&mut self, now: Time) -> Option<(Dir, Delivery)> {
        self.run(now);
        if let Some((p, c)) = self.queue.take_dropped() {
            return Some((Dir::AB, Delivery::Lost(p, c)));
        }
        if self.out.front().is_some_and(|x| x.0 <= now) {
            let (_, pkt) = self.out.pop_front().expect("checked");
            self.stats.rx_packets += 1;
            self.stats.rx_bytes += u64::from(pkt.size());
            return Some((Dir::AB, Delivery::Arrived(pkt)));
        }
        let up = self.uplink.poll_deliver(now).map(|d| (Dir::BA, d));
        if up.is_none() && self.frame_pass {
            self.pass(now);
        }
        up
    }

    fn occupancy(&self, dir: Dir) -> &Occupancy {
        match dir {
            Dir::AB => self.queue.occupancy(),
            Dir::BA => self.uplink.queue().occupancy(),
        }
    }

    fn occupancy_mut(&mut self, dir: Dir) -> &mut Occupancy {
        match dir {
            Dir::AB => self.queue.occupancy_mut(),
            Dir::BA => self.uplink.queue_mut().occupancy_mut(),
        }
    }

    fn queue_kind(&self, dir: Dir) -> &'static str {
        match dir {
            Dir::AB => self.queue.kind(),
            Dir::BA => self.uplink.queue().kind(),
        }
    }

    fn stats(&self, dir: Dir) -> &LinkStats {
        match dir {
            Dir::AB => &self.stats,
            Dir::BA => self.uplink.stats(),
        }
    }

    fn rate_bps(&self, dir: Dir) -> u64 {
        match dir {
            Dir::AB => self.nominal,
            Dir::BA => self.uplink.rate_bps(),
        }
    }

    fn in_transit(&self) -> usize {
        self.queue.len() + self.packets.len() + self.out.len() + self.uplink.in_transit()
    }

    fn account(&self, dir: Dir) -> Account {
        if dir == Dir::BA {
            return self.uplink.account();
        }
        let (offered, queue_dropped, departed) = self.queue.account();
        Account {
            offered,
            queue_dropped,
            departed,
            copies: 0,
            delivered: self.stats.rx_packets,
            lost: self.stats.lost_by,
        }
    }

    fn for_each_held(&self, f: &mut dyn FnMut(Dir, Place, &Packet)) {
        self.queue.for_each(&mut |p| f(Dir::AB, Place::Queue, p));
        for p in self.packets.values() {
            // Frames still out (or to be resent): the ARQ holds it; all
            // frames through but an earlier packet not: the far end holds it.
            let place = if p.done.is_some() {
                Place::Reassembly
            } else {
                Place::Arq
            };
            f(Dir::AB, place, &p.pkt);
        }
        for (_, p) in &self.out {
            f(Dir::AB, Place::Wire, p);
        }
        self.uplink
            .for_each_held(&mut |place, p| f(Dir::BA, place, p));
    }

    fn for_each_copies(&self, f: &mut dyn FnMut(Dir, crate::packet::FlowId, bool, u64)) {
        if let Some(n) = self.uplink.netem() {
            for (flow, ack, copies) in n.copies_by_flow() {
                f(Dir::BA, flow, ack, copies);
            }
        }
    }

    fn arq_stats(&self, dir: Dir, now: Time) -> Option<ArqStats> {
        if dir == Dir::BA {
            return None;
        }
        let c = self.counters_at(now);
        let mut counters = vec![
            ("frames", c.frames),
            ("retransmissions", c.retransmissions),
            ("residual_frames", c.residual_frames),
            ("residual_bits", c.residual_bits),
            ("corrupted_packets", c.corrupted_packets),
            ("split_frames", c.split_frames),
        ];
        for (m, n) in Modulation::ALL.iter().zip(c.by_modulation) {
            counters.push((m.name(), n));
        }
        Some(ArqStats {
            protocol: "frame_arq",
            counters,
            max_dat: Some(self.limit),
            ..ArqStats::default()
        })
    }
}

#[cfg(test)]
mod tests;

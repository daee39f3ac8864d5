//! netem-style impairments at the far end of a link direction, with the names
//! and semantics of Linux `sch_netem.c` and `tc-netem(8)`: delay with jitter
//! (uniform, normal, pareto, paretonormal; correlated), reordering (`reorder P
//! [corr] gap N`), duplication, corruption, random / 4-state Markov /
//! Gilbert–Elliott loss with optional ECN marking, netem's own `rate`, and its
//! `limit`. Units are the scenario's: probabilities are fractions (0.01, not
//! 1 %), times carry units.
//!
//! The stage takes each packet as it leaves the wire (after propagation and
//! the link's own channel) and decides, in `netem_enqueue`'s order:
//! duplicate? lost? (a duplicate is sent through the stage again, with
//! duplication off), corrupt?, over the limit?, then either reorders it (sent
//! at once) or gives it `time_to_send = now + tabledist(delay, jitter)` (with
//! `rate`: no earlier than the last held packet's time, plus its own
//! serialisation). Packets leave in `time_to_send` order (netem's `tfifo`:
//! jitter reorders) or, with `child = "pfifo"`, in arrival order (a packet
//! waits behind an earlier one with a later time). A corrupted packet arrives
//! and is discarded by the receiver's checksum: it is reported lost when it
//! arrives.
//!
//! Random numbers follow the kernel's arithmetic: probabilities scaled to
//! `u32` (`p · (2³² − 1)`), `get_crandom`'s correlation
//! (`(v·(2³² − ρ) + last·ρ) >> 32`), `tabledist`'s integer interpolation over
//! the distribution tables that iproute2's `normal.c`, `pareto.c` and
//! `paretonormal.c` generate (computed here with the same formulas).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Delivery, Place};
use crate::aqm::DropCause;
use crate::config::kind::tagged_enum;
use crate::config::{check_range, ConfigError, Probability, Rate, Result};
use crate::packet::{Ecn, FlowId, Kind, Packet};
use crate::rng::Rng;
use crate::time::Time;

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

/// The delay distribution (`distribution`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// Uniform in [delay − jitter, delay + jitter] (netem's default).
    #[default]
    Uniform,
    /// Normal, mean `delay`, standard deviation `jitter` (iproute2 `normal` table).
    Normal,
    /// Pareto, shape 3, scaled to `jitter` (iproute2 `pareto` table).
    Pareto,
    /// ¼ normal + ¾ pareto (iproute2 `paretonormal` table).
    Paretonormal,
}

/// Order in which delayed packets leave (`child`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Child {
    /// By time to send (netem's internal `tfifo`): jitter reorders packets.
    #[default]
    Tfifo,
    /// In arrival order (a `pfifo` child): a packet never overtakes an earlier one.
    Pfifo,
}

/// `netem.loss = { kind = "random", p = 0.01, correlation = 0.25 }`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RandomLossConfig {
    /// Loss probability of each packet (`loss random PERCENT`).
    pub p: Probability,
    /// Correlation with the previous draw (`CORRELATION`). Default 0.
    pub correlation: Option<Probability>,
}

/// `netem.loss = { kind = "state", p13 = 0.01, … }`: the 4-state Markov model
/// (`loss state p13 [p31 [p32 [p23 [p14]]]]`). States: 1 good reception, 2
/// good reception inside a burst, 3 burst loss, 4 isolated loss.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateLossConfig {
    /// 1 → 3: a burst of losses starts.
    pub p13: Probability,
    /// 3 → 1. Default 1 − p13.
    pub p31: Option<Probability>,
    /// 3 → 2. Default 0.
    pub p32: Option<Probability>,
    /// 2 → 3. Default 1.
    pub p23: Option<Probability>,
    /// 1 → 4: an isolated loss. Default 0.
    pub p14: Option<Probability>,
}

/// `netem.loss = { kind = "gemodel", p = 0.01, r = 0.3, … }`: Gilbert–Elliott
/// (`loss gemodel p [r [1-h [1-k]]]`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeLossConfig {
    /// Good → bad transition probability.
    pub p: Probability,
    /// Bad → good. Default 1 − p.
    pub r: Option<Probability>,
    /// Loss probability in the bad state (tc's `1-h`). Default 1.
    pub loss_bad: Option<Probability>,
    /// Loss probability in the good state (tc's `1-k`). Default 0.
    pub loss_good: Option<Probability>,
}

/// What every netem loss model's configuration provides.
pub trait NetemLossKind: std::fmt::Debug {
    /// Check it; paths relative to the `loss` table.
    fn validate(&self) -> Result<()>;
    /// The generator.
    fn model(&self) -> LossModel;
}

tagged_enum! {
    /// `netem.loss`: a loss model, as `tc-netem`'s `loss random | state | gemodel`.
    pub enum NetemLossConfig: dyn NetemLossKind, "netem loss model", tag "kind" {
        /// Independent (or correlated) random loss.
        Random(RandomLossConfig) = "random",
        /// The 4-state Markov model.
        State(StateLossConfig) = "state",
        /// The Gilbert–Elliott model.
        Gemodel(GeLossConfig) = "gemodel",
    }
}

impl NetemLossKind for RandomLossConfig {
    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn model(&self) -> LossModel {
        LossModel::Random {
            p: scale(self.p.get()),
            cor: Crandom::new(self.correlation.map_or(0.0, Probability::get)),
        }
    }
}

impl NetemLossKind for StateLossConfig {
    fn validate(&self) -> Result<()> {
        let m = self.resolved();
        if m.0 + m.4 > 1.0 {
            return Err(ConfigError::at_key(
                "p14",
                format!(
                    "p13 + p14 = {} leaves state 1 with probability above 1; allowed: p13 + p14 ≤ 1",
                    m.0 + m.4
                ),
            ));
        }
        if m.1 + m.2 > 1.0 {
            return Err(ConfigError::at_key(
                "p32",
                format!(
                    "p31 + p32 = {} leaves state 3 with probability above 1; allowed: p31 + p32 ≤ 1",
                    m.1 + m.2
                ),
            ));
        }
        Ok(())
    }

    fn model(&self) -> LossModel {
        let (p13, p31, p32, p23, p14) = self.resolved();
        LossModel::State {
            a1: scale(p13),
            a2: scale(p31),
            a3: scale(p32),
            a4: scale(p14),
            a5: scale(p23),
            state: 1,
        }
    }
}

impl StateLossConfig {
    /// (p13, p31, p32, p23, p14) with tc's defaults.
    fn resolved(&self) -> (f64, f64, f64, f64, f64) {
        let p13 = self.p13.get();
        let get = |p: Option<Probability>, d: f64| p.map_or(d, Probability::get);
        (
            p13,
            get(self.p31, 1.0 - p13),
            get(self.p32, 0.0),
            get(self.p23, 1.0),
            get(self.p14, 0.0),
        )
    }
}

impl NetemLossKind for GeLossConfig {
    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn model(&self) -> LossModel {
        let p = self.p.get();
        let get = |x: Option<Probability>, d: f64| x.map_or(d, Probability::get);
        LossModel::Gemodel {
            a1: scale(p),
            a2: scale(get(self.r, 1.0 - p)),
            // The kernel takes h, the probability of *no* loss in the bad state.
            a3: u32::MAX - scale(get(self.loss_bad, 1.0)),
            a4: scale(get(self.loss_good, 0.0)),
            bad: false,
        }
    }
}

/// `netem = { … }` on a link direction: impairments at its far end, as
/// `tc qdisc add … netem …` (docs/models/netem.md).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetemConfig {
    /// Added delay (`delay TIME`). Default `"0s"`.
    pub delay: Option<Time>,
    /// Delay variation (`JITTER`): half-width (uniform) or scale (tables). Default `"0s"`.
    pub jitter: Option<Time>,
    /// Correlation of successive delays (`CORRELATION`). Default 0.
    pub correlation: Option<Probability>,
    /// Delay distribution. Default `"uniform"`.
    pub distribution: Option<Distribution>,
    /// Loss model (`loss random | state | gemodel`).
    pub loss: Option<NetemLossConfig>,
    /// Mark ECN-capable packets CE instead of dropping them on a loss event (`ecn`).
    pub ecn: Option<bool>,
    /// Duplication probability (`duplicate PERCENT`). Default 0.
    pub duplicate: Option<Probability>,
    /// Its correlation. Default 0.
    pub duplicate_correlation: Option<Probability>,
    /// Corruption probability (`corrupt PERCENT`); a corrupted packet is
    /// discarded by the receiver's checksum. Default 0.
    pub corrupt: Option<Probability>,
    /// Its correlation. Default 0.
    pub corrupt_correlation: Option<Probability>,
    /// Reordering probability (`reorder PERCENT`): the packet is sent at once,
    /// ahead of delayed ones. Needs a `delay`. Default 0.
    pub reorder: Option<Probability>,
    /// Its correlation. Default 0.
    pub reorder_correlation: Option<Probability>,
    /// `gap N`: after a reordered packet, the next N − 1 are delayed normally
    /// before reordering is drawn again. Default 1 (every packet may be reordered).
    pub gap: Option<u32>,
    /// netem's own rate (`rate RATE`): packets leave serialised at this rate,
    /// never reordered by jitter. Default: none.
    pub rate: Option<Rate>,
    /// Most packets the stage holds (`limit`), 1 to 10 000 000. Default 1000.
    pub limit: Option<u32>,
    /// Leaving order: `"tfifo"` (by time to send: jitter reorders; netem's
    /// default) or `"pfifo"` (arrival order). Default `"tfifo"`.
    pub child: Option<Child>,
}

impl NetemConfig {
    /// Check the keys; paths relative to the `netem` table.
    pub fn validate(&self) -> Result<()> {
        if let Some(l) = &self.loss {
            l.model().validate().map_err(|e| e.at("loss"))?;
        }
        if let Some(l) = self.limit {
            check_range("limit", l, 1, 10_000_000)?;
        }
        let reorder = self.reorder.map_or(0.0, Probability::get);
        if reorder > 0.0 && self.delay.is_none_or(|d| d == Time::ZERO) {
            return Err(ConfigError::at_key(
                "reorder",
                "reordering is not possible without a delay (as tc-netem); give `delay`",
            ));
        }
        if let Some(g) = self.gap {
            if reorder == 0.0 {
                return Err(ConfigError::at_key(
                    "gap",
                    "applies to reordering only; give `reorder` too",
                ));
            }
            check_range("gap", g, 1, u32::MAX)?;
        }
        if self.delay.is_some_and(|d| d.as_nanos() > 1 << 42)
            || self.jitter.is_some_and(|d| d.as_nanos() > 1 << 42)
        {
            return Err(ConfigError::at_key(
                "delay",
                "is beyond an hour; allowed: delay and jitter up to 4398 s",
            ));
        }
        Ok(())
    }

    /// The stage, its random numbers from `rng`.
    pub fn build(&self, rng: Rng) -> Netem {
        let p = |x: Option<Probability>| x.map_or(0.0, Probability::get);
        let mut rng = rng;
        let mut cor = |c: Option<Probability>| {
            let mut s = Crandom::new(p(c));
            s.last = next_u32(&mut rng);
            s
        };
        let delay_cor = cor(self.correlation);
        let dup_cor = cor(self.duplicate_correlation);
        let corrupt_cor = cor(self.corrupt_correlation);
        let reorder_cor = cor(self.reorder_correlation);
        let mut loss = self.loss.as_ref().map(|l| l.model().model());
        if let Some(LossModel::Random { cor: c, .. }) = loss.as_mut() {
            c.last = next_u32(&mut rng);
        }
        let reorder = scale(p(self.reorder));
        Netem {
            latency: self.delay.unwrap_or(Time::ZERO).as_nanos() as i64,
            jitter: self.jitter.unwrap_or(Time::ZERO).as_nanos() as i64,
            dist: self.distribution.unwrap_or_default(),
            delay_cor,
            loss,
            ecn: self.ecn.unwrap_or(false),
            duplicate: scale(p(self.duplicate)),
            dup_cor,
            corrupt: scale(p(self.corrupt)),
            corrupt_cor,
            reorder,
            reorder_cor,
            gap: if reorder > 0 {
                self.gap.unwrap_or(1)
            } else {
                0
            },
            counter: 0,
            rate_bps: self.rate.map(Rate::bps),
            limit: self.limit.unwrap_or(1000) as usize,
            child: self.child.unwrap_or_default(),
            rng,
            seq: 0,
            heap: BinaryHeap::new(),
            fifo: VecDeque::new(),
            now_out: VecDeque::new(),
            last_send: None,
            last_out: Time::ZERO,
            stats: NetemStats::default(),
            copies_by_flow: BTreeMap::new(),
        }
    }
}

// ---------------------------------------------------------------------------
// Random numbers as the kernel draws them
// ---------------------------------------------------------------------------

/// A probability as the kernel holds it: `p · (2³² − 1)`, rounded.
fn scale(p: f64) -> u32 {
    (p.clamp(0.0, 1.0) * f64::from(u32::MAX)).round() as u32
}

fn next_u32(rng: &mut Rng) -> u32 {
    (rng.uniform() * 4_294_967_296.0) as u32
}

/// `struct crndstate`: a correlated random-number generator.
#[derive(Clone, Debug)]
pub struct Crandom {
    rho: u32,
    last: u32,
}

impl Crandom {
    fn new(correlation: f64) -> Crandom {
        Crandom {
            rho: scale(correlation),
            last: 0,
        }
    }

    /// `get_crandom`.
    fn next(&mut self, rng: &mut Rng) -> u32 {
        let value = next_u32(rng);
        if self.rho == 0 {
            return value;
        }
        self.last = correlate(value, self.last, self.rho);
        self.last
    }
}

/// One step of `get_crandom` with correlation `rho` (scaled, > 0): the new
/// value from a fresh uniform `value` and the previous result `last`.
fn correlate(value: u32, last: u32, rho: u32) -> u32 {
    let rho = u64::from(rho) + 1;
    ((u64::from(value) * ((1u64 << 32) - rho) + u64::from(last) * rho) >> 32) as u32
}

/// A loss generator (`loss_event`).
#[derive(Clone, Debug)]
pub enum LossModel {
    /// `CLG_RANDOM`.
    Random {
        /// Scaled loss probability.
        p: u32,
        /// Correlation state.
        cor: Crandom,
    },
    /// `CLG_4_STATES` (`loss_4state`): a1 = p13, a2 = p31, a3 = p32, a4 = p14, a5 = p23.
    State {
        /// p13.
        a1: u32,
        /// p31.
        a2: u32,
        /// p32.
        a3: u32,
        /// p14.
        a4: u32,
        /// p23.
        a5: u32,
        /// 1 good, 2 good in a burst, 3 burst loss, 4 isolated loss.
        state: u8,
    },
    /// `CLG_GILB_ELL` (`loss_gilb_ell`): a1 = p, a2 = r, a3 = h, a4 = 1 − k.
    Gemodel {
        /// p.
        a1: u32,
        /// r.
        a2: u32,
        /// h.
        a3: u32,
        /// 1 − k.
        a4: u32,
        /// In the bad state.
        bad: bool,
    },
}

impl LossModel {
    /// Whether the next packet is lost.
    fn event(&mut self, rng: &mut Rng) -> bool {
        match self {
            LossModel::Random { p, cor } => *p != 0 && *p >= cor.next(rng),
            LossModel::State {
                a1,
                a2,
                a3,
                a4,
                a5,
                state,
            } => {
                let rnd = next_u32(rng);
                // u32 sums as the kernel's (checked ≤ 1 at validation).
                let (a1, a2, a3, a4, a5) = (*a1, *a2, *a3, *a4, *a5);
                match *state {
                    1 => {
                        if rnd < a4 {
                            *state = 4;
                            return true;
                        } else if a4 < rnd && rnd < a1.saturating_add(a4) {
                            *state = 3;
                            return true;
                        } else if a1.saturating_add(a4) < rnd {
                            *state = 1;
                        }
                    }
                    2 => {
                        if rnd < a5 {
                            *state = 3;
                            return true;
                        }
                    }
                    3 => {
                        if rnd < a3 {
                            *state = 2;
                        } else if a3 < rnd && rnd < a2.saturating_add(a3) {
                            *state = 1;
                        } else if a2.saturating_add(a3) < rnd {
                            return true;
                        }
                    }
                    _ => *state = 1,
                }
                false
            }
            LossModel::Gemodel {
                a1,
                a2,
                a3,
                a4,
                bad,
            } => {
                if !*bad {
                    if next_u32(rng) < *a1 {
                        *bad = true;
                    }
                    next_u32(rng) < *a4
                } else {
                    if next_u32(rng) < *a2 {
                        *bad = false;
                    }
                    next_u32(rng) > *a3
                }
            }
        }
    }
}

/// `NETEM_DIST_SCALE`.
const DIST_SCALE: i64 = 8192;

/// Standard normal CDF.
fn phi(x: f64) -> f64 {
    0.5 + 0.5 * libm::erf(x / std::f64::consts::SQRT_2)
}

/// iproute2's inverse-CDF grid (`normal.c`, `paretonormal.c`): for x from −10
/// in steps of 0.00005, `table[rint(16384·Φ(x))] = x`.
fn normal_grid() -> Vec<f64> {
    let mut table = vec![0.0; 16385];
    let mut x = -10.0f64;
    while x < 10.05 {
        let i = (16384.0 * phi(x)).round_ties_even() as usize;
        table[i] = x;
        x += 0.00005;
    }
    table
}

/// `paretovalue(i)` of `paretonormal.c` (and the loop body of `pareto.c`).
fn pareto_value(i: i64) -> i64 {
    let d = (i as f64) / 65536.0;
    let v = (1.0 / d.powf(1.0 / 3.0) - 1.5) * (4.0 / 3.0) * DIST_SCALE as f64;
    v.min(32767.0).round_ties_even() as i64
}

/// The 4096-entry table of distribution `d` (`None`: uniform, no table).
fn table(d: Distribution) -> Option<&'static [i16]> {
    static TABLES: OnceLock<[Vec<i16>; 3]> = OnceLock::new();
    let t = TABLES.get_or_init(|| {
        let grid = normal_grid();
        let clip = |v: i64| v.clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16;
        let normal = (0..16384)
            .step_by(4)
            .map(|i| clip((grid[i] * DIST_SCALE as f64).round_ties_even() as i64))
            .collect();
        let pareto = (0..4096)
            .map(|j| clip(pareto_value(65536 - 16 * j)))
            .collect();
        let paretonormal = (0..16384)
            .step_by(4)
            .map(|i| {
                let norm = (grid[i] * DIST_SCALE as f64).round_ties_even() as i64;
                let par = pareto_value(65536 - 4 * i as i64);
                clip((norm + 3 * par) / 4)
            })
            .collect();
        [normal, pareto, paretonormal]
    });
    match d {
        Distribution::Uniform => None,
        Distribution::Normal => Some(&t[0]),
        Distribution::Pareto => Some(&t[1]),
        Distribution::Paretonormal => Some(&t[2]),
    }
}

/// `tabledist(mu, sigma, state, dist)`: a delay in ns (may be negative).
fn tabledist(mu: i64, sigma: i64, cor: &mut Crandom, rng: &mut Rng, d: Distribution) -> i64 {
    if sigma == 0 {
        return mu;
    }
    dist_value(cor.next(rng), mu, sigma, d)
}

/// `tabledist`'s value for the random number `rnd` (σ > 0).
fn dist_value(rnd: u32, mu: i64, sigma: i64, d: Distribution) -> i64 {
    match table(d) {
        None => (i64::from(rnd) % (2 * sigma)) + mu - sigma,
        Some(t) => {
            let t = i64::from(t[rnd as usize % t.len()]);
            let mut x = (sigma % DIST_SCALE) * t;
            if x >= 0 {
                x += DIST_SCALE / 2;
            } else {
                x -= DIST_SCALE / 2;
            }
            x / DIST_SCALE + (sigma / DIST_SCALE) * t + mu
        }
    }
}

// ---------------------------------------------------------------------------
// The stage
// ---------------------------------------------------------------------------

/// Counters of a netem stage (the summary's `links[].netem`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NetemStats {
    /// Packets that entered the stage (duplicates included).
    pub packets: u64,
    /// Packets dropped by the loss model.
    pub lost: u64,
    /// Packets marked CE instead of dropped (`ecn`).
    pub ecn_marked: u64,
    /// Duplicates made.
    pub duplicated: u64,
    /// Packets corrupted (discarded at the receiver).
    pub corrupted: u64,
    /// Packets sent at once by `reorder`.
    pub reordered: u64,
    /// Packets dropped at `limit`.
    pub overflow: u64,
}

/// A packet held by the stage.
#[derive(Debug)]
struct Held {
    at: Time,
    seq: u64,
    pkt: Packet,
    corrupted: bool,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    /// Reversed: the earliest (then the first queued) on top of the max-heap.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// The netem stage of one link direction (sans-IO: packets in with
/// [`Netem::admit`], out with [`Netem::next_time`] / [`Netem::pop`]).
#[derive(Debug)]
pub struct Netem {
    latency: i64,
    jitter: i64,
    dist: Distribution,
    delay_cor: Crandom,
    loss: Option<LossModel>,
    ecn: bool,
    duplicate: u32,
    dup_cor: Crandom,
    corrupt: u32,
    corrupt_cor: Crandom,
    reorder: u32,
    reorder_cor: Crandom,
    gap: u32,
    counter: u32,
    rate_bps: Option<u64>,
    limit: usize,
    child: Child,
    rng: Rng,
    seq: u64,
    heap: BinaryHeap<Held>,
    fifo: VecDeque<Held>,
    /// Outcomes due at the admission instant: drops and reordered packets.
    now_out: VecDeque<(Time, Delivery)>,
    /// The latest time to send of the packets held (for `rate`).
    last_send: Option<Time>,
    /// When the last packet left (`pfifo`: the next leaves no earlier).
    last_out: Time,
    stats: NetemStats,
    /// Copies made, by (flow, whether of an ACK): for the packet account.
    copies_by_flow: BTreeMap<(u32, bool), u64>,
}

impl Netem {
    /// Counters.
    pub fn stats(&self) -> &NetemStats {
        &self.stats
    }

    /// Packets held or waiting to be reported.
    pub fn held(&self) -> usize {
        self.heap.len() + self.fifo.len() + self.now_out.len()
    }

    /// The copies made so far, by flow and leg: (flow, of ACKs, copies).
    pub fn copies_by_flow(&self) -> impl Iterator<Item = (FlowId, bool, u64)> + '_ {
        self.copies_by_flow
            .iter()
            .map(|(&(f, ack), &n)| (FlowId(f), ack, n))
    }

    /// Visit the packets held: delayed in the stage ([`Place::Netem`]) or
    /// decided at admission and not yet reported ([`Place::Settled`]).
    pub fn for_each_held(&self, f: &mut dyn FnMut(Place, &Packet)) {
        for h in self.heap.iter().chain(&self.fifo) {
            f(Place::Netem, &h.pkt);
        }
        for (_, d) in &self.now_out {
            let (Delivery::Arrived(p) | Delivery::Lost(p, _)) = d;
            f(Place::Settled, p);
        }
    }

    /// Take `pkt`, which left the wire at `now` (`netem_enqueue`).
    pub fn admit(&mut self, now: Time, pkt: Packet) {
        self.enqueue(now, pkt, true);
    }

    fn enqueue(&mut self, now: Time, mut pkt: Packet, may_duplicate: bool) {
        self.stats.packets += 1;
        let mut count = 1;
        if may_duplicate
            && self.duplicate != 0
            && self.duplicate >= self.dup_cor.next(&mut self.rng)
        {
            count += 1;
        }
        if let Some(l) = self.loss.as_mut() {
            if l.event(&mut self.rng) {
                if self.ecn && pkt.ecn != Ecn::NotEct {
                    pkt.ecn = Ecn::Ce;
                    self.stats.ecn_marked += 1;
                } else {
                    count -= 1;
                }
            }
        }
        if count == 0 {
            self.stats.lost += 1;
            self.now_out
                .push_back((now, Delivery::Lost(pkt, DropCause::LinkLoss)));
            return;
        }
        if count > 1 {
            // The copy goes through the stage again, duplication off.
            self.stats.duplicated += 1;
            let e = self
                .copies_by_flow
                .entry((pkt.flow.0, pkt.kind == Kind::Ack))
                .or_default();
            *e += 1;
            self.enqueue(now, pkt, false);
        }
        let corrupted = self.corrupt != 0 && self.corrupt >= self.corrupt_cor.next(&mut self.rng);
        if corrupted {
            self.stats.corrupted += 1;
        }
        if self.heap.len() + self.fifo.len() >= self.limit {
            self.stats.overflow += 1;
            self.now_out
                .push_back((now, Delivery::Lost(pkt, DropCause::NetemLimit)));
            return;
        }
        if self.gap == 0
            || self.counter < self.gap - 1
            || self.reorder < self.reorder_cor.next(&mut self.rng)
        {
            let mut delay = tabledist(
                self.latency,
                self.jitter,
                &mut self.delay_cor,
                &mut self.rng,
                self.dist,
            );
            let mut base = now.as_nanos() as i64;
            if let Some(bps) = self.rate_bps {
                if let Some(last) = self.last_send {
                    let last = last.as_nanos() as i64;
                    delay = (delay - (last - base)).max(0);
                    base = last;
                }
                delay += Time::tx_time(u64::from(pkt.size()), bps).as_nanos() as i64;
            }
            let at = Time::from_nanos((base + delay).max(now.as_nanos() as i64) as u64);
            self.counter += 1;
            self.seq += 1;
            let held = Held {
                at,
                seq: self.seq,
                pkt,
                corrupted,
            };
            self.last_send = Some(self.last_send.map_or(at, |l| l.max(at)));
            match self.child {
                Child::Tfifo => self.heap.push(held),
                Child::Pfifo => self.fifo.push_back(held),
            }
        } else {
            // Reordering: sent at once, ahead of the delayed packets.
            self.counter = 0;
            self.stats.reordered += 1;
            let d = if corrupted {
                Delivery::Lost(pkt, DropCause::Corrupt)
            } else {
                Delivery::Arrived(pkt)
            };
            self.now_out.push_back((now, d));
        }
    }

    /// When the next packet leaves the stage (or a drop is reported).
    pub fn next_time(&self) -> Option<Time> {
        if let Some(&(t, _)) = self.now_out.front() {
            return Some(t);
        }
        match self.child {
            Child::Tfifo => self.heap.peek().map(|h| h.at),
            Child::Pfifo => self.fifo.front().map(|h| h.at.max(self.last_out)),
        }
    }

    /// The next packet out by `now`.
    pub fn pop(&mut self, now: Time) -> Option<Delivery> {
        if self.now_out.front().is_some_and(|&(t, _)| t <= now) {
            return self.now_out.pop_front().map(|(_, d)| d);
        }
        let held = match self.child {
            Child::Tfifo if self.heap.peek().is_some_and(|h| h.at <= now) => self.heap.pop(),
            Child::Pfifo if self.fifo.front().is_some_and(|h| h.at <= now) => {
                self.last_out = now;
                self.fifo.pop_front()
            }
            _ => None,
        }?;
        if self.heap.is_empty() && self.fifo.is_empty() {
            self.last_send = None;
        }
        Some(if held.corrupted {
            // The receiver's checksum discards it.
            Delivery::Lost(held.pkt, DropCause::Corrupt)
        } else {
            Delivery::Arrived(held.pkt)
        })
    }
}

#[cfg(test)]
mod tests;

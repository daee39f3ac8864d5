//! cdma2000 supplemental-channel (SCH) allocation (seed 003, Paliwal et al.):
//! generators that expand into per-mobile rate schedules, deterministically,
//! and the remedy of §5.3 that admits SCH grants only as fast as a maximum
//! aggregate rise rate allows.
//!
//! A mobile's radio rate is its fundamental channel (FCH, 9.6 kbit/s) plus,
//! while it holds a grant, one supplemental channel (153.6 kbit/s for a 16×
//! SCH). The generators are seed 003's: `step` (Fig. 3, Fig. 6: the chosen
//! mobiles switch at `at`), `sequential` (Fig. 8/9: mobile k at
//! t0 + (k−1)·T_r/N), `burst` (§4.5's finite-burst mode: SCH for T_B, off for
//! T_D, repeated; up-switches spread over `spread`·T_B, down-switches over
//! `spread`·T_D) and `scheduled` (§5.3: mobile k's bursts shifted by
//! (k−1)/N·(T_B + T_D), so the aggregate rate stays level). Each expands to
//! grant intervals per mobile; [`AllocationConfig::schedules`] turns those
//! into rate steps for the mobiles' link directions (applied with immediate
//! effect, as on a frame-based bearer). [`AckRegulationConfig`] is our design
//! of §5.1's ACK regulation at the BSC: the direction carrying the ACKs back
//! to the senders is slowed at each up-switch and recovers after the latest.
//! See `docs/models/sch-allocation.md`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::{ConfigError, Rate, Result};
use crate::time::Time;

/// The most rate steps all allocations of a scenario may expand to (each
/// costs 16 bytes): 20 million, e.g. 100 mobiles × 100 000 grants.
pub const MAX_STEPS: usize = 20_000_000;

/// How the grants are laid out in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Every chosen mobile gets the SCH at `at` and keeps it.
    Step,
    /// Mobile k (1..N) gets the SCH at `at` + (k−1)·`rise`/N and keeps it.
    Sequential,
    /// Finite-burst mode: SCH for `burst`, off for `gap`, repeated from `at`;
    /// mobile k's up-switch lags the first by (k−1)/N·`spread`·`burst`, its
    /// down-switch by (k−1)/N·`spread`·`gap`.
    Burst,
    /// §5.3's scheduled allocation: bursts of `burst` every `burst` + `gap`,
    /// mobile k's shifted by (k−1)/N·(`burst` + `gap`).
    Scheduled,
}

/// SCH admission by aggregate rise rate (our design of §5.3's remedy): a
/// grant is admitted when the SCH capacity granted in the last `window`,
/// itself included, stays within `max_rise`; a refused request is retried
/// every `retry` until its burst would have ended (the grant still ends when
/// the burst was due to end).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmissionConfig {
    /// New SCH capacity allowed per `window`, e.g. `"1.5Mbit"` (at least one
    /// SCH).
    pub max_rise: Rate,
    /// The sliding window. Default `"1s"`.
    pub window: Option<Time>,
    /// Retry interval of a refused request (> 0). Default `"100ms"`.
    pub retry: Option<Time>,
}

/// The steps over which the ACK direction's rate recovers after an
/// allocation ([`AckRegulationConfig::hold`]).
pub const RECOVERY_STEPS: u32 = 20;

/// ACK regulation at the BSC (our design of §5.1's remedy, which the paper
/// names without an algorithm): at every up-switch the link direction `link`,
/// which carries the mobiles' ACKs back toward the senders, drops to `rate`;
/// after the latest up-switch it recovers geometrically to the direction's own
/// rate over `hold`, in [`RECOVERY_STEPS`] steps, so the senders' ACK clock,
/// and with it their sending rate, rises smoothly instead of at once.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AckRegulationConfig {
    /// The ACK direction, `"A->B"` of a wired link with a fixed rate, e.g.
    /// `"BSC->R"`.
    pub link: String,
    /// Its rate at an up-switch (below its own rate), e.g. one 40-byte ACK
    /// per data packet the shared buffer serves: `"153.6kbit"` for 1000-byte
    /// packets at 3.84 Mbit/s.
    pub rate: Rate,
    /// Time over which the rate recovers after the latest up-switch (> 0).
    pub hold: Time,
}

impl AckRegulationConfig {
    /// The rate steps `(at, bit/s)` from `"0s"` of the ACK direction whose own
    /// rate is `base` bit/s, for up-switches at `starts` (any order).
    pub fn schedule(&self, starts: &[Time], base: u64) -> Vec<(Time, u64)> {
        let mut starts = starts.to_vec();
        starts.sort_unstable();
        starts.dedup();
        let low = self.rate.bps();
        let mut out: Vec<(Time, u64)> = vec![(Time::ZERO, base)];
        let mut push = |t: Time, r: u64| match out.last_mut() {
            Some(last) if last.0 == t => last.1 = r,
            Some(last) if last.1 == r => {}
            _ => out.push((t, r)),
        };
        for (i, &s) in starts.iter().enumerate() {
            let next = starts.get(i + 1).copied().unwrap_or(Time::MAX);
            push(s, low);
            for j in 1..=RECOVERY_STEPS {
                let at = s + Time(self.hold.0 / u64::from(RECOVERY_STEPS) * u64::from(j));
                if at >= next {
                    break;
                }
                let f = f64::from(j) / f64::from(RECOVERY_STEPS);
                let r = if j == RECOVERY_STEPS {
                    base
                } else {
                    (low as f64 * (base as f64 / low as f64).powf(f)).round() as u64
                };
                push(at, r);
            }
        }
        if out.len() > 1 && out[0].1 == out[1].1 {
            out.remove(1);
        }
        out
    }
}

/// One `[[allocations]]` entry: the SCH grants of a group of mobiles.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllocationConfig {
    /// The base station side of the mobiles' links: a node or a range such as
    /// `"BTS{1..10}"`, paired with `to` as a link's ends are (fan-out by
    /// groups); mobile k is the k-th pair, its downlink the direction
    /// from → to.
    pub from: String,
    /// The mobiles, e.g. `"MS{1..100}"`.
    pub to: String,
    /// `"step"`, `"sequential"`, `"burst"` or `"scheduled"`.
    pub pattern: Pattern,
    /// When the pattern starts (t0). Default `"0s"`.
    pub at: Option<Time>,
    /// Fundamental channel rate, held throughout. Default `"9.6kbit"`.
    pub fch: Option<Rate>,
    /// Supplemental channel rate, added while granted. Default `"153.6kbit"`.
    pub sch: Option<Rate>,
    /// Only the first `mobiles` mobiles take part (≥ 1). Default all.
    pub mobiles: Option<u32>,
    /// `sequential`: rise time T_r over which the mobiles switch (≥ 0).
    pub rise: Option<Time>,
    /// `burst`, `scheduled`: burst length T_B (> 0).
    pub burst: Option<Time>,
    /// `burst`, `scheduled`: time between bursts T_D (> 0).
    pub gap: Option<Time>,
    /// `burst`: fraction of T_B (T_D) over which the up (down) switches of the
    /// mobiles are spread, 0 to 1. Default 0.1.
    pub spread: Option<f64>,
    /// No grant starts at or after this time (`burst`, `scheduled`). Default:
    /// the end of the run.
    pub until: Option<Time>,
    /// Admit grants by aggregate rise rate (remedy, see [`AdmissionConfig`]).
    pub admission: Option<AdmissionConfig>,
    /// Regulate the returning ACKs at each up-switch (remedy, see
    /// [`AckRegulationConfig`]).
    pub ack_regulation: Option<AckRegulationConfig>,
}

/// What [`AllocationConfig::expand`] made: per mobile, its grant intervals
/// `[start, end)` in time order (`end` = [`Time::MAX`]: held to the end).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grants {
    /// Per mobile (pair order), its grants.
    pub per_mobile: Vec<Vec<(Time, Time)>>,
    /// Requests made (one per burst and mobile).
    pub requested: u64,
    /// Requests refused at least once by admission control.
    pub delayed: u64,
    /// Requests never admitted before their burst would have ended.
    pub refused: u64,
}

impl Grants {
    /// Every grant's start (the up-switches), in mobile order.
    pub fn starts(&self) -> Vec<Time> {
        self.per_mobile.iter().flatten().map(|g| g.0).collect()
    }
}

impl AllocationConfig {
    /// The FCH rate, bit/s.
    pub fn fch_bps(&self) -> u64 {
        self.fch.map_or(9_600, Rate::bps)
    }

    /// The SCH rate, bit/s.
    pub fn sch_bps(&self) -> u64 {
        self.sch.map_or(153_600, Rate::bps)
    }

    /// Check the keys against the pattern (paths relative to the entry).
    pub fn validate(&self) -> Result<()> {
        let given = |k: &str| match k {
            "rise" => self.rise.is_some(),
            "burst" => self.burst.is_some(),
            "gap" => self.gap.is_some(),
            "spread" => self.spread.is_some(),
            "until" => self.until.is_some(),
            _ => false,
        };
        let (name, needs, allows): (&str, &[&str], &[&str]) = match self.pattern {
            Pattern::Step => ("step", &[], &[]),
            Pattern::Sequential => ("sequential", &["rise"], &["rise"]),
            Pattern::Burst => (
                "burst",
                &["burst", "gap"],
                &["burst", "gap", "spread", "until"],
            ),
            Pattern::Scheduled => ("scheduled", &["burst", "gap"], &["burst", "gap", "until"]),
        };
        for k in ["rise", "burst", "gap", "spread", "until"] {
            if given(k) && !allows.contains(&k) {
                return Err(ConfigError::at_key(
                    k,
                    format!(
                        "does not apply to pattern \"{name}\"; it takes: {}",
                        if allows.is_empty() {
                            "at, fch, sch, mobiles, admission, ack_regulation".to_string()
                        } else {
                            allows.join(", ")
                        }
                    ),
                ));
            }
        }
        for k in needs {
            if !given(k) {
                return Err(ConfigError::at_key(
                    *k,
                    format!("missing; pattern \"{name}\" needs {}", needs.join(" and ")),
                ));
            }
        }
        for (k, v) in [("burst", self.burst), ("gap", self.gap)] {
            if v == Some(Time::ZERO) {
                return Err(ConfigError::new(k, "\"0s\"", "is zero; allowed: > 0"));
            }
        }
        if let Some(s) = self.spread {
            if !(0.0..=1.0).contains(&s) {
                return Err(ConfigError::new(
                    "spread",
                    s.to_string(),
                    "is not a fraction; allowed: 0 to 1",
                ));
            }
        }
        if self.mobiles == Some(0) {
            return Err(ConfigError::new(
                "mobiles",
                "0",
                "is empty; allowed: at least 1",
            ));
        }
        if let Some(r) = &self.ack_regulation {
            if r.hold == Time::ZERO {
                return Err(ConfigError::new(
                    "ack_regulation.hold",
                    "\"0s\"",
                    "is zero; allowed: > 0",
                ));
            }
            if !r.link.contains("->") {
                return Err(ConfigError::new(
                    "ack_regulation.link",
                    format!("\"{}\"", r.link),
                    "is not a link direction; allowed: \"A->B\" of a [[links]] entry's ends",
                ));
            }
        }
        if let Some(a) = &self.admission {
            if a.max_rise.bps() < self.sch_bps() {
                return Err(ConfigError::new(
                    "admission.max_rise",
                    format!("\"{}\"", a.max_rise),
                    format!(
                        "is below one SCH ({}); no grant could ever be admitted; allowed: ≥ the sch rate",
                        Rate::from_bps(self.sch_bps()).map_or(String::new(), |r| r.to_string())
                    ),
                ));
            }
            if a.retry == Some(Time::ZERO) {
                return Err(ConfigError::new(
                    "admission.retry",
                    "\"0s\"",
                    "is zero; allowed: > 0",
                ));
            }
            if a.window == Some(Time::ZERO) {
                return Err(ConfigError::new(
                    "admission.window",
                    "\"0s\"",
                    "is zero; allowed: > 0",
                ));
            }
        }
        Ok(())
    }

    /// The grants of `pairs` mobiles in a run ending at `end`, or an error
    /// when they would take more than `budget` rate steps.
    pub fn expand(&self, pairs: usize, end: Time, budget: usize) -> Result<Grants> {
        let n = self.mobiles.map_or(pairs, |m| m as usize);
        if n > pairs {
            return Err(ConfigError::new(
                "mobiles",
                n.to_string(),
                format!("is more than the {pairs} mobiles from → to names; allowed: 1 to {pairs}"),
            ));
        }
        let t0 = self.at.unwrap_or(Time::ZERO);
        let until = self.until.unwrap_or(end).min(end);
        let lag = |k: usize, span: Time| Time((u128::from(span.0) * k as u128 / n as u128) as u64);
        let mut req: Vec<Vec<(Time, Time)>> = vec![Vec::new(); pairs];
        let mut steps = 0usize;
        let mut push = |k: usize, s: Time, e: Time, req: &mut Vec<Vec<(Time, Time)>>| {
            steps += 2;
            if steps > budget {
                return Err(ConfigError::at_key(
                    "pattern",
                    format!(
                        "expands to more than {MAX_STEPS} rate steps over the run (sch::MAX_STEPS); allowed: fewer mobiles, longer bursts or a shorter run"
                    ),
                ));
            }
            req[k].push((s, e));
            Ok(())
        };
        match self.pattern {
            Pattern::Step | Pattern::Sequential => {
                let rise = self.rise.unwrap_or(Time::ZERO);
                for k in 0..n {
                    let s = t0 + lag(k, rise);
                    if s < end {
                        push(k, s, Time::MAX, &mut req)?;
                    }
                }
            }
            Pattern::Burst | Pattern::Scheduled => {
                let (tb, td) = (
                    self.burst.unwrap_or(Time::ZERO),
                    self.gap.unwrap_or(Time::ZERO),
                );
                let period = tb + td;
                let spread = self.spread.unwrap_or(0.1);
                let frac = |t: Time| Time((t.0 as f64 * spread).round() as u64);
                let mut c0 = t0;
                while c0 < until {
                    for k in 0..n {
                        let (s, e) = match self.pattern {
                            Pattern::Burst => (c0 + lag(k, frac(tb)), c0 + tb + lag(k, frac(td))),
                            _ => {
                                let s = c0 + lag(k, period);
                                (s, s + tb)
                            }
                        };
                        if s < until {
                            push(k, s, e, &mut req)?;
                        }
                    }
                    c0 += period;
                }
            }
        }
        let requested = req.iter().map(|r| r.len() as u64).sum();
        let mut g = match &self.admission {
            None => Grants {
                per_mobile: req,
                ..Grants::default()
            },
            Some(a) => admit(req, self.sch_bps(), a),
        };
        g.requested = requested;
        Ok(g)
    }

    /// Per mobile, the rate steps `(at, bit/s)` from `"0s"` of its grants.
    pub fn schedules(&self, grants: &Grants) -> Vec<Vec<(Time, u64)>> {
        let (lo, hi) = (self.fch_bps(), self.fch_bps() + self.sch_bps());
        grants
            .per_mobile
            .iter()
            .map(|g| {
                let mut out = vec![(Time::ZERO, lo)];
                for &(s, e) in g {
                    match out.last() {
                        // A grant right after the previous one: they merge.
                        Some(&(t, r)) if t == s && r == lo => {
                            if out.len() > 1 {
                                out.pop();
                            } else {
                                out[0].1 = hi;
                            }
                        }
                        _ => out.push((s, hi)),
                    }
                    if e != Time::MAX {
                        out.push((e, lo));
                    }
                }
                out
            })
            .collect()
    }
}

/// Admission control over the requested grants of every mobile (see
/// [`AdmissionConfig`]); deterministic: requests are served in time order,
/// ties by mobile.
fn admit(req: Vec<Vec<(Time, Time)>>, sch: u64, a: &AdmissionConfig) -> Grants {
    let window = a.window.unwrap_or(Time::from_secs(1));
    let retry = a.retry.unwrap_or(Time::from_millis(100));
    let cap = a.max_rise.bps();
    let mut heap: BinaryHeap<Reverse<(Time, usize, Time, bool)>> = BinaryHeap::new();
    for (k, r) in req.iter().enumerate() {
        for &(s, e) in r {
            heap.push(Reverse((s, k, e, false)));
        }
    }
    let mut out = Grants {
        per_mobile: vec![Vec::new(); req.len()],
        ..Grants::default()
    };
    let mut recent: VecDeque<Time> = VecDeque::new();
    while let Some(Reverse((t, k, e, retried))) = heap.pop() {
        while recent.front().is_some_and(|&g| g + window <= t) {
            recent.pop_front();
        }
        if (recent.len() as u64 + 1) * sch <= cap {
            recent.push_back(t);
            out.per_mobile[k].push((t, e));
            out.delayed += u64::from(retried);
        } else if t + retry < e {
            heap.push(Reverse((t + retry, k, e, true)));
        } else {
            out.delayed += u64::from(retried);
            out.refused += 1;
        }
    }
    for g in &mut out.per_mobile {
        g.sort();
    }
    out
}

#[cfg(test)]
mod tests;

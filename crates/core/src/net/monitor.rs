//! Seed 003's measurements of a shared buffer and the link buffers it feeds
//! (`[monitor]`): dead periods (the shared buffer and every link buffer
//! empty; and the looser definition, the shared buffer empty and at least a
//! fraction `loose` of the link buffers empty), and every packet the shared
//! buffer dropped, with its time and cause — from which the reproduction
//! takes loss volumes per rate switch, drops within a window and the two
//! stability conditions of §4.6 (the first overflow: the queue reached its
//! limit; the first `aqm_forced` drop: RED's average reached `maxth`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::aqm::DropCause;
use crate::config::{ConfigError, Result};
use crate::time::Time;

/// `[monitor]`: which buffers to watch (docs/metrics.md, "Dead periods").
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorConfig {
    /// The shared buffer: a link direction, e.g. `"R->BSC"`.
    pub shared: String,
    /// The base station side of the link buffers (a node or range, paired
    /// with `to` as a link's ends are), e.g. `"BTS{1..10}"`.
    pub from: String,
    /// The mobiles, e.g. `"MS{1..100}"`: the link buffers are the
    /// directions from → to.
    pub to: String,
    /// The looser dead-period definition: at least this fraction of the link
    /// buffers empty (with the shared buffer), in (0, 1]. Default 0.9.
    pub loose: Option<f64>,
    /// Measure dead periods from this time on. Default `"0s"`.
    pub start: Option<Time>,
    /// Dead periods (strict definition) at least this long are listed.
    /// Default `"500ms"`.
    pub min_period: Option<Time>,
}

impl MonitorConfig {
    /// Check the keys that need no topology, for a run of `duration`.
    pub fn validate(&self, duration: Time) -> Result<()> {
        if let Some(s) = self.start {
            if s >= duration {
                return Err(ConfigError::new(
                    "start",
                    format!("\"{s}\""),
                    format!("is not before the end of the run ({duration}); allowed: 0 ≤ start < duration"),
                ));
            }
        }
        if let Some(l) = self.loose {
            if !(l > 0.0 && l <= 1.0) {
                return Err(ConfigError::new(
                    "loose",
                    l.to_string(),
                    "is not a fraction; allowed: 0 < loose ≤ 1",
                ));
            }
        }
        Ok(())
    }
}

/// The watch set up on a built network: direction codes (2·link + dir).
#[derive(Clone, Debug)]
pub(crate) struct Monitor {
    pub shared: usize,
    pub links: Vec<usize>,
    pub loose: f64,
    pub start: Time,
    pub min_period: Time,
    /// Drops at the shared buffer: (time, cause, bytes).
    pub drops: Vec<(Time, DropCause, u32)>,
}

impl Monitor {
    pub fn new(shared: usize, links: Vec<usize>, cfg: &MonitorConfig) -> Monitor {
        Monitor {
            shared,
            links,
            loose: cfg.loose.unwrap_or(0.9),
            start: cfg.start.unwrap_or(Time::ZERO),
            min_period: cfg.min_period.unwrap_or(Time::from_millis(500)),
            drops: Vec::new(),
        }
    }
}

/// What `[monitor]` measured (`monitor` in the summary).
#[derive(Clone, Debug, Serialize)]
pub struct MonitorSummary {
    /// Start of the dead-period measurement, s.
    pub start_s: f64,
    /// Time measured (run end − start), s.
    pub measured_s: f64,
    /// Link buffers watched.
    pub links: usize,
    /// The looser definition's fraction of empty link buffers.
    pub loose: f64,
    /// Time with the shared buffer and every link buffer empty, s.
    pub dead_s: f64,
    /// `dead_s / measured_s`.
    pub dead_fraction: f64,
    /// Time with the shared buffer empty and at least `loose` of the link
    /// buffers empty, s.
    pub loose_dead_s: f64,
    /// `loose_dead_s / measured_s`.
    pub loose_dead_fraction: f64,
    /// Strict dead periods of at least `min_period`: `[start_s, end_s]`.
    pub dead_periods: Vec<[f64; 2]>,
    /// Every drop at the shared buffer over the whole run: time, s.
    pub drop_times_s: Vec<f64>,
    /// Its cause (`overflow`, `aqm_early`, `aqm_forced`).
    pub drop_causes: Vec<&'static str>,
    /// Its IP bytes.
    pub drop_bytes: Vec<u32>,
}

/// Integrate the dead periods of `m` over `[m.start, end]` from each
/// buffer's empty/non-empty transitions (`busy[0]` the shared buffer's, then
/// the link buffers'); every buffer starts empty at time 0.
pub(crate) fn summarize(m: &Monitor, busy: Vec<Vec<(Time, bool)>>, end: Time) -> MonitorSummary {
    let n = busy.len() - 1;
    let mut events: Vec<(Time, usize, bool)> = busy
        .into_iter()
        .enumerate()
        .flat_map(|(i, v)| v.into_iter().map(move |(t, b)| (t, i, b)))
        .collect();
    events.sort_by_key(|e| e.0);
    // At most this many link buffers busy for the looser definition.
    let empty_needed = (m.loose * n as f64 - 1e-9).ceil().max(0.0) as usize;
    let allowed_busy = n - empty_needed.min(n);
    let (mut shared, mut links) = (false, 0usize);
    let (mut dead, mut loose) = (Time::ZERO, Time::ZERO);
    let mut periods = Vec::new();
    let mut dead_since: Option<Time> = Some(Time::ZERO);
    let mut prev = Time::ZERO;
    let clip = |a: Time, b: Time| -> Time {
        let (a, b) = (a.max(m.start).min(end), b.max(m.start).min(end));
        b.saturating_sub(a)
    };
    let mut i = 0;
    while i <= events.len() {
        let t = events.get(i).map_or(end, |e| e.0).min(end);
        if !shared && links == 0 {
            dead += clip(prev, t);
        }
        if !shared && links <= allowed_busy {
            loose += clip(prev, t);
        }
        prev = t;
        if i == events.len() {
            break;
        }
        // Every change at this instant, then the state from it on.
        while let Some(&(u, k, b)) = events.get(i) {
            if u != t {
                break;
            }
            match (k, b) {
                (0, b) => shared = b,
                (_, true) => links += 1,
                (_, false) => links = links.saturating_sub(1),
            }
            i += 1;
        }
        let now_dead = !shared && links == 0;
        match (dead_since, now_dead) {
            (None, true) => dead_since = Some(t),
            (Some(s), false) => {
                push_period(&mut periods, s, t, m);
                dead_since = None;
            }
            _ => {}
        }
        if t >= end {
            break;
        }
    }
    if let Some(s) = dead_since {
        push_period(&mut periods, s, end, m);
    }
    let measured = end.saturating_sub(m.start);
    let frac = |x: Time| {
        if measured.0 == 0 {
            0.0
        } else {
            x.0 as f64 / measured.0 as f64
        }
    };
    MonitorSummary {
        start_s: m.start.as_secs_f64(),
        measured_s: measured.as_secs_f64(),
        links: n,
        loose: m.loose,
        dead_s: dead.as_secs_f64(),
        dead_fraction: frac(dead),
        loose_dead_s: loose.as_secs_f64(),
        loose_dead_fraction: frac(loose),
        dead_periods: periods,
        drop_times_s: m.drops.iter().map(|d| d.0.as_secs_f64()).collect(),
        drop_causes: m.drops.iter().map(|d| d.1.name()).collect(),
        drop_bytes: m.drops.iter().map(|d| d.2).collect(),
    }
}

fn push_period(out: &mut Vec<[f64; 2]>, s: Time, e: Time, m: &Monitor) {
    let s = s.max(m.start);
    if e > s && e - s >= m.min_period {
        out.push([s.as_secs_f64(), e.as_secs_f64()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mon(loose: f64) -> Monitor {
        Monitor {
            shared: 0,
            links: vec![1, 2, 3, 4],
            loose,
            start: Time::from_secs(1),
            min_period: Time::from_secs(1),
            drops: vec![(Time::from_secs(3), DropCause::AqmForced, 1000)],
        }
    }

    #[test]
    fn dead_periods_need_every_buffer_empty() {
        let s = Time::from_secs;
        // Shared busy 2..4; link 1 busy 0..6; link 2 busy 5..7; others idle.
        let busy = vec![
            vec![(s(2), true), (s(4), false)],
            vec![(s(0), true), (s(6), false)],
            vec![(s(5), true), (s(7), false)],
            vec![],
            vec![],
        ];
        let out = summarize(&mon(0.75), busy.clone(), s(10));
        // Strict: dead from 7 to 10 only (measured from 1).
        assert_eq!(out.dead_s, 3.0);
        assert_eq!(out.dead_periods, vec![[7.0, 10.0]]);
        assert!((out.dead_fraction - 3.0 / 9.0).abs() < 1e-12);
        // Loose (75 % empty = at most 1 busy): 1..2, 4..5, 6..10 → 6 s.
        assert_eq!(out.loose_dead_s, 6.0);
        assert_eq!(out.drop_causes, vec!["aqm_forced"]);
        // Loose = 1 is the strict definition.
        let strict = summarize(&mon(1.0), busy, s(10));
        assert_eq!(strict.loose_dead_s, strict.dead_s);
    }

    #[test]
    fn simultaneous_changes_count_once() {
        let s = Time::from_secs;
        // The shared buffer empties exactly when link 1 fills: never dead.
        let busy = vec![
            vec![(s(0), true), (s(5), false)],
            vec![(s(5), true)],
            vec![],
            vec![],
            vec![],
        ];
        let out = summarize(&mon(1.0), busy, s(10));
        assert_eq!(out.dead_s, 0.0);
        assert!(out.dead_periods.is_empty());
    }
}

//! Paced applications: a rate cap and on/off periods on what an application
//! offers its TCP sender (`rate_cap`, `on`, `off`, `on_off` of `[[flows]]` and
//! `[[workloads]]`; docs/models/workloads.md, "Application-limited and on/off").
//!
//! During an on period the application offers data at `rate_cap` (as fast as
//! TCP takes it without one); during an off period it offers nothing (data
//! already offered is still sent). The total is the flow's size (unbounded
//! for a bulk flow).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::{ConfigError, Rate, Result};
use crate::rng::Rng;
use crate::time::Time;

/// How on and off periods last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnOffLaw {
    /// Exponential with means `on` and `off` (the classic on/off source).
    #[default]
    Exponential,
    /// Exactly `on` and `off`.
    Fixed,
}

/// A paced application's shape, checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppShape {
    /// Offer rate during on periods, bit/s (`None`: greedy).
    pub rate_bps: Option<u64>,
    /// (on, off, law), if the application alternates.
    pub on_off: Option<(Time, Time, OnOffLaw)>,
}

impl AppShape {
    /// The shape of keys `rate_cap`, `on`, `off`, `on_off` (`None`: a plain
    /// application); errors at those keys.
    pub fn of(
        rate_cap: Option<Rate>,
        on: Option<Time>,
        off: Option<Time>,
        law: Option<OnOffLaw>,
    ) -> Result<Option<AppShape>> {
        if let Some(r) = rate_cap {
            if r.bps() == 0 {
                return Err(ConfigError::new(
                    "rate_cap",
                    "\"0bit\"",
                    "is zero; allowed: a rate above 0 (leave it out for no cap)",
                ));
            }
        }
        let on_off = match (on, off) {
            (None, None) => {
                if law.is_some() {
                    return Err(ConfigError::at_key(
                        "on_off",
                        "is only used with on and off; allowed: give on = \"1s\" and off = \"2s\" too",
                    ));
                }
                None
            }
            (Some(on), Some(off)) => {
                for (k, t) in [("on", on), ("off", off)] {
                    if t < Time::from_micros(1) {
                        return Err(ConfigError::new(
                            k,
                            format!("\"{t}\""),
                            "is shorter than 1us; allowed: a duration of at least 1us",
                        ));
                    }
                }
                Some((on, off, law.unwrap_or_default()))
            }
            (Some(_), None) => {
                return Err(ConfigError::at_key(
                    "off",
                    "missing; an on/off application needs both on and off",
                ))
            }
            (None, Some(_)) => {
                return Err(ConfigError::at_key(
                    "on",
                    "missing; an on/off application needs both on and off",
                ))
            }
        };
        Ok(
            (rate_cap.is_some() || on_off.is_some()).then_some(AppShape {
                rate_bps: rate_cap.map(|r| r.bps()),
                on_off,
            }),
        )
    }
}

/// A paced application while it runs.
#[derive(Debug)]
pub struct Pacer {
    shape: AppShape,
    /// Total bytes (`None`: unbounded).
    total: Option<u64>,
    /// Bytes offered so far (fractional: the rate accrues continuously).
    offered: f64,
    /// In an on period.
    on: bool,
    /// When `offered` was last brought up to date.
    at: Time,
    /// The end of the current on or off period.
    switch: Option<Time>,
    /// The segment size: a rate-capped application wakes once per segment.
    mss: u64,
    rng: Rng,
    /// The wake-up asked for last (an event at another time is stale).
    pub due: Option<Time>,
}

impl Pacer {
    /// A pacer starting (in an on period) at `now`, drawing its periods from `rng`.
    pub fn new(shape: AppShape, total: Option<u64>, mss: u64, rng: Rng, now: Time) -> Pacer {
        let mut p = Pacer {
            shape,
            total,
            offered: 0.0,
            on: true,
            at: now,
            switch: None,
            mss: mss.max(1),
            rng,
            due: None,
        };
        p.switch = p.period(now);
        p
    }

    /// The shape.
    pub fn shape(&self) -> AppShape {
        self.shape
    }

    /// The total, bytes (`None`: unbounded).
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    fn period(&mut self, now: Time) -> Option<Time> {
        let (on, off, law) = self.shape.on_off?;
        let mean = if self.on { on } else { off };
        let d = match law {
            OnOffLaw::Fixed => mean,
            OnOffLaw::Exponential => {
                let u = self.rng.uniform();
                Time::from_secs_f64(-(1.0 - u).ln() * mean.as_secs_f64()).max(Time(1))
            }
        };
        Some(now + d)
    }

    fn cap(&self) -> f64 {
        self.total.map_or(f64::INFINITY, |t| t as f64)
    }

    /// Bring the application up to `now`, its TCP having sent `sent` bytes:
    /// `(bytes offered in all, more to come, the next time to wake)`.
    pub fn advance(&mut self, now: Time, sent: u64) -> (u64, bool, Option<Time>) {
        loop {
            let until = self.switch.map_or(now, |s| s.min(now));
            if self.on {
                if let Some(r) = self.shape.rate_bps {
                    let dt = until.saturating_sub(self.at).as_secs_f64();
                    self.offered = (self.offered + dt * r as f64 / 8.0).min(self.cap());
                }
            }
            self.at = until;
            match self.switch {
                Some(s) if s <= now => {
                    if self.on && self.shape.rate_bps.is_none() {
                        // A greedy application switched off has offered what was sent.
                        self.offered = self.offered.max(sent as f64);
                    }
                    self.on = !self.on;
                    self.switch = self.period(s);
                }
                _ => break,
            }
        }
        let cap = self.cap();
        // Greedy while on: everything; while off: what was taken (the caller
        // never offers less than was sent).
        let limit = match (self.on, self.shape.rate_bps) {
            (true, None) => cap,
            (false, None) => self.offered,
            (_, Some(_)) => self.offered,
        };
        let done =
            self.offered >= cap || (self.on && self.shape.rate_bps.is_none() && cap.is_finite());
        let next = if done {
            None
        } else {
            let tick = match (self.on, self.shape.rate_bps) {
                (true, Some(r)) => {
                    let need = (self.mss as f64).min(cap - self.offered);
                    Some(now + Time::from_secs_f64((need * 8.0 / r as f64).max(1e-9)))
                }
                _ => None,
            };
            match (tick, self.switch) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        let limit = if limit.is_finite() {
            limit as u64
        } else {
            u64::MAX / 4
        };
        self.due = next;
        (limit, !done, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_cap_offers_one_segment_per_tick() {
        let shape = AppShape::of(Some(Rate::from_bps(8_000_000).unwrap()), None, None, None)
            .unwrap()
            .unwrap();
        let mut p = Pacer::new(shape, Some(10_000), 1000, Rng::stream(1, "x"), Time::ZERO);
        let (l, open, next) = p.advance(Time::ZERO, 0);
        assert_eq!((l, open), (0, true));
        assert_eq!(next, Some(Time::from_millis(1))); // 1000 B at 1 MB/s
        let (l, open, _) = p.advance(Time::from_millis(5), 0);
        assert_eq!((l, open), (5000, true));
        let (l, open, next) = p.advance(Time::from_millis(20), 0);
        assert_eq!((l, open, next), (10_000, false, None));
    }

    #[test]
    fn fixed_on_off_halves_the_rate() {
        let shape = AppShape::of(
            Some(Rate::from_bps(8_000_000).unwrap()),
            Some(Time::from_millis(10)),
            Some(Time::from_millis(10)),
            Some(OnOffLaw::Fixed),
        )
        .unwrap()
        .unwrap();
        let mut p = Pacer::new(shape, None, 1000, Rng::stream(1, "x"), Time::ZERO);
        let (l, _, _) = p.advance(Time::from_millis(100), 0);
        assert_eq!(l, 50_000); // 5 on periods of 10 ms at 1 MB/s
        let e = AppShape::of(None, Some(Time::from_millis(1)), None, None).unwrap_err();
        assert_eq!(e.path, "off");
    }
}

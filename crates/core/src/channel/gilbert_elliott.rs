//! Gilbert–Elliott channel: a two-state (GOOD/BAD) Markov chain that steps
//! once per slot, with independent unit errors given the slot's state.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_probability, pow_slots, Channel, ChannelModel, SlotClock};
use crate::config::{ConfigError, Probability, Result};
use crate::rng::Rng;
use crate::time::Time;

/// `kind = "gilbert_elliott"`: a two-state chain stepping once per slot, with
/// independent unit errors given the state.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottConfig {
    /// Unit error probability in the GOOD state.
    pub p_good: Probability,
    /// Unit error probability in the BAD state.
    pub p_bad: Probability,
    /// Probability of staying GOOD for one more slot.
    pub g: Probability,
    /// Probability of staying BAD for one more slot (not both `g` and `b` 1).
    pub b: Probability,
    /// Slot length, e.g. `"10ms"`: required on wired links; a radio link
    /// steps the chain once per TTI.
    #[serde(default)]
    pub slot: Option<Time>,
}

impl ChannelModel for GilbertElliottConfig {
    fn validate(&self) -> Result<()> {
        let (p_good, p_bad, g, b) = self.params();
        GilbertElliott::check(p_good, p_bad, g, b).map_err(|m| ConfigError::at_key("", m))
    }

    fn mean_error_rate(&self) -> f64 {
        let (p_good, p_bad, g, b) = self.params();
        mean_error_rate(p_good, p_bad, g, b)
    }

    fn slot(&self) -> Option<Time> {
        self.slot
    }

    fn slotted(&self) -> bool {
        true
    }

    fn build(&self, slot: Time, rng: Rng) -> Box<dyn Channel> {
        let (p_good, p_bad, g, b) = self.params();
        Box::new(GilbertElliott::new(slot, p_good, p_bad, g, b, rng))
    }
}

impl GilbertElliottConfig {
    /// `(p_good, p_bad, g, b)`.
    pub fn params(&self) -> (f64, f64, f64, f64) {
        (
            self.p_good.get(),
            self.p_bad.get(),
            self.g.get(),
            self.b.get(),
        )
    }
}

/// Stationary probability of the GOOD state, `(1−b)/(2−g−b)`.
fn stationary_good(g: f64, b: f64) -> f64 {
    (1.0 - b) / ((1.0 - g) + (1.0 - b))
}

/// Stationary probability of the BAD state, `(1−g)/(2−g−b)`.
fn stationary_bad(g: f64, b: f64) -> f64 {
    (1.0 - g) / ((1.0 - g) + (1.0 - b))
}

/// Long-run unit error probability `π_G·p_good + π_B·p_bad`.
fn mean_error_rate(p_good: f64, p_bad: f64, g: f64, b: f64) -> f64 {
    stationary_good(g, b) * p_good + stationary_bad(g, b) * p_bad
}

/// A Gilbert–Elliott channel.
///
/// `g` and `b` are the probabilities of *remaining* in GOOD and in BAD for one
/// more slot, so the mean sojourns are `1/(1−g)` and `1/(1−b)` slots and the
/// stationary distribution is `π_G = (1−b)/(2−g−b)`, `π_B = (1−g)/(2−g−b)`.
/// The initial state is drawn from the stationary distribution. Skipping `k`
/// slots costs one draw, using the `k`-step transition probabilities
/// `P(B→B in k) = π_B + π_G·λ^k`, `P(G→B in k) = π_B·(1 − λ^k)`, `λ = g+b−1`.
#[derive(Clone, Debug)]
pub struct GilbertElliott {
    p_good: f64,
    p_bad: f64,
    g: f64,
    b: f64,
    bad: bool,
    clock: SlotClock,
    rng: Rng,
}

impl GilbertElliott {
    /// A channel with slots of length `slot`, unit error probabilities
    /// `p_good`/`p_bad` and stay probabilities `g`/`b`.
    ///
    /// # Panics
    /// If the parameters are invalid (see [`GilbertElliott::check`]) or `slot`
    /// is zero.
    pub fn new(
        slot: Time,
        p_good: f64,
        p_bad: f64,
        g: f64,
        b: f64,
        mut rng: Rng,
    ) -> GilbertElliott {
        if let Err(e) = Self::check(p_good, p_bad, g, b) {
            panic!("invalid Gilbert-Elliott channel: {e}");
        }
        let clock = SlotClock::new(slot);
        let bad = rng.bernoulli(stationary_bad(g, b));
        GilbertElliott {
            p_good,
            p_bad,
            g,
            b,
            bad,
            clock,
            rng,
        }
    }

    /// Validates the parameters; the message names the parameter and its
    /// allowed range.
    pub fn check(p_good: f64, p_bad: f64, g: f64, b: f64) -> Result<(), String> {
        check_probability("p_good", p_good)?;
        check_probability("p_bad", p_bad)?;
        check_probability("g", g)?;
        check_probability("b", b)?;
        if g == 1.0 && b == 1.0 {
            return Err(
                "g = b = 1 has no stationary distribution (the chain never leaves its state)"
                    .to_string(),
            );
        }
        Ok(())
    }

    /// Stationary probability of the GOOD state, `(1−b)/(2−g−b)`.
    pub fn stationary_good(&self) -> f64 {
        stationary_good(self.g, self.b)
    }

    /// Stationary probability of the BAD state, `(1−g)/(2−g−b)`.
    pub fn stationary_bad(&self) -> f64 {
        stationary_bad(self.g, self.b)
    }

    /// Mean sojourn in GOOD, in slots: `1/(1−g)` (infinite if `g = 1`).
    pub fn mean_good_slots(&self) -> f64 {
        1.0 / (1.0 - self.g)
    }

    /// Mean sojourn in BAD, in slots: `1/(1−b)` (infinite if `b = 1`).
    pub fn mean_bad_slots(&self) -> f64 {
        1.0 / (1.0 - self.b)
    }

    /// Probability of being BAD `k` slots after the current one, given the
    /// current state.
    fn prob_bad_after(&self, k: u64) -> f64 {
        let lk = pow_slots(self.g + self.b - 1.0, k);
        let pi_b = self.stationary_bad();
        let p = if self.bad {
            pi_b + (1.0 - pi_b) * lk
        } else {
            pi_b * (1.0 - lk)
        };
        p.clamp(0.0, 1.0)
    }
}

impl Channel for GilbertElliott {
    fn advance(&mut self, now: Time) {
        let k = self.clock.advance(now);
        if k > 0 {
            let p = self.prob_bad_after(k);
            self.bad = self.rng.bernoulli(p);
        }
    }

    fn unit_error(&mut self) -> bool {
        let p = if self.bad { self.p_bad } else { self.p_good };
        self.rng.bernoulli(p)
    }

    fn is_bad(&self) -> bool {
        self.bad
    }

    fn mean_error_rate(&self) -> f64 {
        mean_error_rate(self.p_good, self.p_bad, self.g, self.b)
    }

    fn gilbert_elliott(&self) -> Option<(f64, f64, f64, f64)> {
        Some((self.p_good, self.p_bad, self.g, self.b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOT: Time = Time::from_millis(10);

    /// Start of slot `i`.
    fn slot(i: u64) -> Time {
        Time::from_nanos(SLOT.as_nanos() * i)
    }

    fn seed_paper(seed: u64) -> GilbertElliott {
        // Seed 001: p_G = 0.01, p_B = 0.9; mean BAD sojourn 10 slots, π_B = 0.2.
        GilbertElliott::new(SLOT, 0.01, 0.9, 0.975, 0.9, Rng::stream(seed, "ge"))
    }

    /// Runs of equal states in a sequence: (mean GOOD run, mean BAD run).
    fn mean_runs(states: &[bool]) -> (f64, f64) {
        let (mut runs, mut lens) = ([0u64; 2], [0u64; 2]);
        let mut prev = None;
        // Drop the first (censored) run and the last one.
        let start = states.iter().position(|&s| s != states[0]).unwrap();
        let end = states
            .iter()
            .rposition(|&s| s != states[states.len() - 1])
            .unwrap()
            + 1;
        for &s in &states[start..end] {
            lens[usize::from(s)] += 1;
            if prev != Some(s) {
                runs[usize::from(s)] += 1;
            }
            prev = Some(s);
        }
        (
            lens[0] as f64 / runs[0] as f64,
            lens[1] as f64 / runs[1] as f64,
        )
    }

    #[test]
    fn stationary_quantities() {
        let ch = seed_paper(1);
        assert!((ch.stationary_bad() - 0.2).abs() < 1e-12);
        assert!((ch.stationary_good() - 0.8).abs() < 1e-12);
        assert!((ch.mean_bad_slots() - 10.0).abs() < 1e-9);
        assert!((ch.mean_good_slots() - 40.0).abs() < 1e-9);
        assert!((ch.mean_error_rate() - (0.8 * 0.01 + 0.2 * 0.9)).abs() < 1e-12);
    }

    #[test]
    fn long_run_bad_fraction_and_unit_error_rate() {
        let mut ch = seed_paper(2);
        let n = 400_000u64;
        let (mut bad, mut units, mut errors) = (0u64, 0u64, 0u64);
        for i in 0..n {
            ch.advance(slot(i));
            bad += u64::from(ch.is_bad());
            for _ in 0..3 {
                units += 1;
                errors += u64::from(ch.unit_error());
            }
        }
        let frac = bad as f64 / n as f64;
        let rate = errors as f64 / units as f64;
        // 400k slots hold ~8000 BAD runs: the relative error is ~1.5 %.
        assert!((frac - 0.2).abs() < 0.2 * 0.06, "bad fraction {frac}");
        assert!(
            (rate - ch.mean_error_rate()).abs() < 0.188 * 0.06,
            "rate {rate}"
        );
    }

    #[test]
    fn mean_sojourns_match_g_and_b() {
        for &(g, b) in &[(0.975, 0.9), (0.5, 0.5), (0.9, 0.3)] {
            let mut ch = GilbertElliott::new(SLOT, 0.0, 1.0, g, b, Rng::stream(3, "ge"));
            let states: Vec<bool> = (0..300_000u64)
                .map(|i| {
                    ch.advance(slot(i));
                    ch.is_bad()
                })
                .collect();
            let (good, bad) = mean_runs(&states);
            let (eg, eb) = (1.0 / (1.0 - g), 1.0 / (1.0 - b));
            assert!(
                (good / eg - 1.0).abs() < 0.05,
                "g {g}: GOOD run {good} vs {eg}"
            );
            assert!(
                (bad / eb - 1.0).abs() < 0.05,
                "b {b}: BAD run {bad} vs {eb}"
            );
        }
    }

    #[test]
    fn skipping_slots_matches_stepping() {
        // Observe the chain every k slots, once stepping slot by slot and once
        // jumping; the observed fraction BAD and the BAD→BAD frequency at lag k
        // must agree with each other and with π_B + π_G·λ^k.
        let k = 4u64;
        let obs = 100_000u64;
        let run = |jump: bool, seed: u64| {
            let mut ch = seed_paper(seed);
            let mut seen = Vec::with_capacity(obs as usize);
            let mut t = 0u64;
            for j in 0..obs {
                if jump {
                    ch.advance(slot(j * k));
                } else {
                    while t < j * k {
                        t += 1;
                        ch.advance(slot(t));
                    }
                }
                seen.push(ch.is_bad());
            }
            let frac = seen.iter().filter(|&&b| b).count() as f64 / obs as f64;
            let pairs = seen.windows(2).filter(|w| w[0]).count() as f64;
            let bb = seen.windows(2).filter(|w| w[0] && w[1]).count() as f64;
            (frac, bb / pairs)
        };
        let ch = seed_paper(0);
        let lk = (0.975f64 + 0.9 - 1.0).powi(k as i32);
        let want_bb = ch.stationary_bad() + ch.stationary_good() * lk;
        let (f_step, bb_step) = run(false, 10);
        let (f_jump, bb_jump) = run(true, 11);
        for (f, bb) in [(f_step, bb_step), (f_jump, bb_jump)] {
            assert!((f - 0.2).abs() < 0.02, "bad fraction {f}");
            assert!(
                (bb - want_bb).abs() < 0.02,
                "P(B→B in {k}) {bb} vs {want_bb}"
            );
        }
    }

    #[test]
    fn huge_skips_are_cheap_and_stationary() {
        let mut ch = seed_paper(4);
        let n = 100_000u64;
        let mut bad = 0u64;
        for i in 0..n {
            ch.advance(Time::from_secs(10_000 * i));
            bad += u64::from(ch.is_bad());
        }
        let frac = bad as f64 / n as f64;
        assert!((frac - 0.2).abs() < 0.01, "bad fraction {frac}");
    }

    #[test]
    fn same_slot_does_not_step() {
        let mut ch = GilbertElliott::new(SLOT, 0.0, 1.0, 0.0, 0.0, Rng::stream(5, "ge"));
        // g = b = 0 alternates deterministically.
        let s0 = ch.is_bad();
        ch.advance(Time::from_millis(3));
        assert_eq!(ch.is_bad(), s0);
        ch.advance(Time::from_millis(10));
        assert_eq!(ch.is_bad(), !s0);
        ch.advance(Time::from_millis(49));
        // Three more slots: three more flips.
        assert_eq!(ch.is_bad(), s0);
    }

    #[test]
    fn deterministic_per_seed() {
        let run = |seed| {
            let mut ch = seed_paper(seed);
            (0..5000u64)
                .map(|i| {
                    ch.advance(slot(i));
                    (ch.is_bad(), ch.unit_error())
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn check_rejects_bad_parameters() {
        assert!(GilbertElliott::check(0.01, 0.9, 1.0, 1.0)
            .unwrap_err()
            .contains("g = b = 1 has no stationary distribution"));
        assert!(GilbertElliott::check(0.01, 0.9, -0.1, 0.5)
            .unwrap_err()
            .contains("g = -0.1"));
        assert!(GilbertElliott::check(0.01, 0.9, 0.5, 2.0)
            .unwrap_err()
            .contains("b = 2"));
        assert!(GilbertElliott::check(f64::NAN, 0.9, 0.5, 0.5).is_err());
        assert!(GilbertElliott::check(0.0, 1.0, 1.0, 0.0).is_ok());
        assert!(GilbertElliott::check(0.0, 1.0, 0.0, 0.0).is_ok());
    }
}

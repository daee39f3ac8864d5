//! Independent unit errors: every unit is lost with the same probability `p`,
//! independently of every other unit and of time.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_probability, Channel, ChannelModel};
use crate::config::{Probability, Result};
use crate::rng::Rng;
use crate::time::Time;

/// `kind = "bernoulli"`: each unit is lost with probability `p`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BernoulliConfig {
    /// Unit error probability.
    pub p: Probability,
    /// Slot length (the process has no state; accepted for uniformity).
    #[serde(default)]
    pub slot: Option<Time>,
}

impl ChannelModel for BernoulliConfig {
    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn mean_error_rate(&self) -> f64 {
        self.p.get()
    }

    fn slot(&self) -> Option<Time> {
        self.slot
    }

    fn slotted(&self) -> bool {
        false
    }

    fn build(&self, _slot: Time, rng: Rng) -> Box<dyn Channel> {
        Box::new(Bernoulli::new(self.p.get(), rng))
    }
}

/// A memoryless channel: each unit is in error with probability `p`.
///
/// There is no state, so [`Channel::advance`] does nothing and
/// [`Channel::is_bad`] is always false.
#[derive(Clone, Debug)]
pub struct Bernoulli {
    p: f64,
    rng: Rng,
}

impl Bernoulli {
    /// A channel losing each unit with probability `p`.
    ///
    /// # Panics
    /// If `p` is not a probability in [0, 1] (see [`Bernoulli::check`]).
    pub fn new(p: f64, rng: Rng) -> Bernoulli {
        if let Err(e) = Self::check(p) {
            panic!("invalid Bernoulli channel: {e}");
        }
        Bernoulli { p, rng }
    }

    /// Validates the parameter; the message names it and its allowed range.
    pub fn check(p: f64) -> Result<(), String> {
        check_probability("p", p)
    }

    /// The unit error probability.
    pub fn p(&self) -> f64 {
        self.p
    }
}

impl Channel for Bernoulli {
    fn advance(&mut self, _now: Time) {}

    fn unit_error(&mut self) -> bool {
        self.rng.bernoulli(self.p)
    }

    fn is_bad(&self) -> bool {
        false
    }

    fn mean_error_rate(&self) -> f64 {
        self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_run_rate_matches_p() {
        for &p in &[0.0, 0.01, 0.1, 0.5, 1.0] {
            let mut ch = Bernoulli::new(p, Rng::stream(3, "bern"));
            let n: u32 = 200_000;
            let mut errors = 0u32;
            for i in 0..n {
                ch.advance(Time::from_millis(10 * u64::from(i / 4)));
                errors += u32::from(ch.unit_error());
            }
            let rate = f64::from(errors) / f64::from(n);
            let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
            assert!((rate - p).abs() <= 5.0 * sd + 1e-12, "p {p}: rate {rate}");
            assert_eq!(ch.mean_error_rate(), p);
            assert!(!ch.is_bad());
        }
    }

    #[test]
    fn deterministic_per_seed() {
        let run = |seed| {
            let mut ch = Bernoulli::new(0.3, Rng::stream(seed, "bern"));
            (0..1000).map(|_| ch.unit_error()).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn check_rejects_non_probabilities() {
        for &p in &[-0.1, 1.1, f64::NAN, f64::INFINITY] {
            let e = Bernoulli::check(p).unwrap_err();
            assert!(e.contains("p = ") && e.contains("[0, 1]"), "{e}");
        }
        assert!(Bernoulli::check(0.0).is_ok() && Bernoulli::check(1.0).is_ok());
    }
}

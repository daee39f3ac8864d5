//! Channel models: which transmission units (PDUs, frames, packets) a radio
//! channel corrupts. Channels are separate from link models, so any link can
//! use any channel.
//!
//! A channel evolves in *slots* of fixed length (the radio frame / TTI). A
//! slotted link calls [`Channel::advance`] with the start of each slot in
//! which it transmits (slots it skips still evolve the channel), then asks
//! [`Channel::unit_error`] once per unit sent in that slot.
//!
//! Models: [`Perfect`], [`Bernoulli`] (independent unit errors),
//! [`GilbertElliott`] (two-state Markov chain per slot) and [`Rayleigh`]
//! (correlated Rayleigh fading against a fade margin). [`ChannelConfig`]
//! describes any of them, validates the parameters and builds the channel.
//! The mathematics is in `docs/models/channel.md`.

mod bernoulli;
mod gilbert_elliott;
mod rayleigh;

pub use bernoulli::Bernoulli;
pub use gilbert_elliott::GilbertElliott;
pub use rayleigh::{
    average_fade_duration_slots, bessel_j0, fer_from_margin_db, margin_db_from_fer,
    margin_from_fer, Rayleigh,
};

use std::fmt::Debug;

use crate::rng::Rng;
use crate::time::Time;

/// A channel error process.
pub trait Channel: Debug + Send {
    /// Move to the slot that starts at `now` (non-decreasing; slots skipped
    /// since the last call evolve the channel too).
    fn advance(&mut self, now: Time);
    /// Whether one unit transmitted in the current slot is received in error.
    /// May be called any number of times per slot.
    fn unit_error(&mut self) -> bool;
    /// Whether the channel is in its bad state in the current slot (for traces).
    fn is_bad(&self) -> bool;
    /// Long-run unit error probability.
    fn mean_error_rate(&self) -> f64;
    /// `(p_good, p_bad, g, b)` if this is a Gilbert–Elliott channel (the
    /// analytic ARQ model of seed 001 needs them); `None` otherwise.
    fn gilbert_elliott(&self) -> Option<(f64, f64, f64, f64)> {
        None
    }
}

/// A channel that never corrupts anything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Perfect;

impl Channel for Perfect {
    fn advance(&mut self, _now: Time) {}
    fn unit_error(&mut self) -> bool {
        false
    }
    fn is_bad(&self) -> bool {
        false
    }
    fn mean_error_rate(&self) -> f64 {
        0.0
    }
}

/// The parameters of a channel model: validated with [`ChannelConfig::check`],
/// turned into a channel with [`ChannelConfig::build`].
#[derive(Clone, Debug, PartialEq)]
pub enum ChannelConfig {
    /// No errors ([`Perfect`]).
    Perfect,
    /// Independent unit errors with probability `p` ([`Bernoulli`]).
    Bernoulli {
        /// Unit error probability, in [0, 1].
        p: f64,
    },
    /// Gilbert–Elliott two-state chain, one step per slot ([`GilbertElliott`]).
    GilbertElliott {
        /// Unit error probability in the GOOD state, in [0, 1].
        p_good: f64,
        /// Unit error probability in the BAD state, in [0, 1].
        p_bad: f64,
        /// Probability of remaining GOOD for one more slot, in [0, 1].
        g: f64,
        /// Probability of remaining BAD for one more slot, in [0, 1] (not both `g` and `b` 1).
        b: f64,
    },
    /// Correlated Rayleigh fading sampled per slot against a fade margin ([`Rayleigh`]).
    Rayleigh {
        /// Normalised Doppler frequency f_d·T (T = slot length), > 0.
        fd_t: f64,
        /// Target frame (slot) error ratio, in (0, 1); sets the fade margin.
        fer: f64,
        /// Unit error probability in a slot above the threshold (usually 0).
        p_good: f64,
        /// Unit error probability in a slot in a fade (usually 1).
        p_bad: f64,
    },
}

impl ChannelConfig {
    /// A Rayleigh configuration with the defaults `p_good = 0`, `p_bad = 1`
    /// (a slot in a fade loses every unit, other slots lose none).
    pub fn rayleigh(fd_t: f64, fer: f64) -> ChannelConfig {
        ChannelConfig::Rayleigh {
            fd_t,
            fer,
            p_good: 0.0,
            p_bad: 1.0,
        }
    }

    /// Checks the parameters; the error names the offending parameter and its
    /// allowed range.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            ChannelConfig::Perfect => Ok(()),
            ChannelConfig::Bernoulli { p } => Bernoulli::check(p),
            ChannelConfig::GilbertElliott {
                p_good,
                p_bad,
                g,
                b,
            } => GilbertElliott::check(p_good, p_bad, g, b),
            ChannelConfig::Rayleigh {
                fd_t,
                fer,
                p_good,
                p_bad,
            } => Rayleigh::check(fd_t, fer, p_good, p_bad),
        }
    }

    /// Builds the channel with slot length `slot` (the channel starts in slot
    /// 0, i.e. at time zero) drawing from `rng`.
    ///
    /// # Panics
    /// If [`ChannelConfig::check`] fails or `slot` is zero.
    pub fn build(&self, slot: Time, rng: Rng) -> Box<dyn Channel> {
        if let Err(e) = self.check() {
            panic!("invalid channel configuration: {e}");
        }
        match *self {
            ChannelConfig::Perfect => Box::new(Perfect),
            ChannelConfig::Bernoulli { p } => Box::new(Bernoulli::new(p, rng)),
            ChannelConfig::GilbertElliott {
                p_good,
                p_bad,
                g,
                b,
            } => Box::new(GilbertElliott::new(slot, p_good, p_bad, g, b, rng)),
            ChannelConfig::Rayleigh {
                fd_t,
                fer,
                p_good,
                p_bad,
            } => Box::new(Rayleigh::new(slot, fd_t, fer, p_good, p_bad, rng)),
        }
    }
}

/// `Err` naming `name` unless `v` is a probability in [0, 1] (NaN is rejected).
pub(crate) fn check_probability(name: &str, v: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(format!("{name} = {v} must be a probability in [0, 1]"))
    }
}

/// Slot bookkeeping shared by the slotted channels: which slot the channel is
/// in, and how many slots a move to `now` crosses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotClock {
    slot_ns: u64,
    index: u64,
}

impl SlotClock {
    /// A clock in slot 0 with slots of length `slot`.
    ///
    /// # Panics
    /// If `slot` is zero.
    pub(crate) fn new(slot: Time) -> SlotClock {
        assert!(slot > Time::ZERO, "channel slot length must be positive");
        SlotClock {
            slot_ns: slot.as_nanos(),
            index: 0,
        }
    }

    /// Moves to the slot containing `now` and returns how many slots were
    /// crossed (0 if `now` is still in the current slot or earlier).
    pub(crate) fn advance(&mut self, now: Time) -> u64 {
        let index = now.as_nanos() / self.slot_ns;
        debug_assert!(index >= self.index, "channel time went backwards");
        if index <= self.index {
            return 0;
        }
        let k = index - self.index;
        self.index = index;
        k
    }
}

/// `x^k` for a real `x` (possibly negative) and a slot count `k ≥ 0`.
pub(crate) fn pow_slots(x: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    let m = x.abs().powf(k as f64);
    if x < 0.0 && k % 2 == 1 {
        -m
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_valid() -> Vec<ChannelConfig> {
        vec![
            ChannelConfig::Perfect,
            ChannelConfig::Bernoulli { p: 0.1 },
            ChannelConfig::GilbertElliott {
                p_good: 0.01,
                p_bad: 0.9,
                g: 0.99,
                b: 0.9,
            },
            ChannelConfig::rayleigh(0.01, 0.1),
        ]
    }

    #[test]
    fn config_builds_each_model_with_its_mean_rate() {
        let expected = [0.0, 0.1, (0.1 * 0.01 + 0.01 * 0.9) / 0.11, 0.1];
        for (cfg, want) in all_valid().iter().zip(expected) {
            assert_eq!(cfg.check(), Ok(()));
            let ch = cfg.build(Time::from_millis(10), Rng::stream(1, "ch"));
            assert!((ch.mean_error_rate() - want).abs() < 1e-12, "{cfg:?}");
        }
    }

    #[test]
    fn config_check_rejects_bad_parameters() {
        let ge = |p_good, p_bad, g, b| ChannelConfig::GilbertElliott {
            p_good,
            p_bad,
            g,
            b,
        };
        let ray = |fd_t, fer, p_good, p_bad| ChannelConfig::Rayleigh {
            fd_t,
            fer,
            p_good,
            p_bad,
        };
        let cases: Vec<(ChannelConfig, &str)> = vec![
            (ChannelConfig::Bernoulli { p: -0.01 }, "p = -0.01"),
            (ChannelConfig::Bernoulli { p: f64::NAN }, "p = NaN"),
            (ge(1.5, 0.9, 0.9, 0.9), "p_good = 1.5"),
            (ge(0.0, -1.0, 0.9, 0.9), "p_bad = -1"),
            (ge(0.0, 1.0, 1.01, 0.9), "g = 1.01"),
            (ge(0.0, 1.0, 0.9, f64::NAN), "b = NaN"),
            (ge(0.0, 1.0, 1.0, 1.0), "no stationary distribution"),
            (ray(0.0, 0.1, 0.0, 1.0), "fd_t = 0"),
            (ray(-0.01, 0.1, 0.0, 1.0), "fd_t = -0.01"),
            (ray(f64::NAN, 0.1, 0.0, 1.0), "fd_t = NaN"),
            (ray(f64::INFINITY, 0.1, 0.0, 1.0), "fd_t = inf"),
            (ray(0.01, 0.0, 0.0, 1.0), "fer = 0"),
            (ray(0.01, 1.0, 0.0, 1.0), "fer = 1"),
            (ray(0.01, f64::NAN, 0.0, 1.0), "fer = NaN"),
            (ray(0.01, 0.1, 2.0, 1.0), "p_good = 2"),
            (ray(0.01, 0.1, 0.0, 1.5), "p_bad = 1.5"),
        ];
        for (cfg, needle) in cases {
            let e = cfg.check().unwrap_err();
            assert!(e.contains(needle), "{cfg:?}: {e}");
        }
    }

    #[test]
    #[should_panic(expected = "invalid channel configuration")]
    fn build_panics_on_invalid_config() {
        let _ =
            ChannelConfig::Bernoulli { p: 2.0 }.build(Time::from_millis(10), Rng::stream(1, "x"));
    }

    #[test]
    fn slot_clock_counts_crossed_slots() {
        let mut c = SlotClock::new(Time::from_millis(10));
        assert_eq!(c.advance(Time::ZERO), 0);
        assert_eq!(c.advance(Time::from_millis(9)), 0);
        assert_eq!(c.advance(Time::from_millis(10)), 1);
        assert_eq!(c.advance(Time::from_millis(55)), 4);
        assert_eq!(c.advance(Time::from_millis(59)), 0);
    }

    #[test]
    fn pow_slots_handles_signs() {
        assert_eq!(pow_slots(-0.5, 3), -0.125);
        assert_eq!(pow_slots(-0.5, 2), 0.25);
        assert_eq!(pow_slots(0.3, 0), 1.0);
        assert_eq!(pow_slots(-1.0, u64::MAX), -1.0);
        assert_eq!(pow_slots(0.9, u64::MAX), 0.0);
    }
}

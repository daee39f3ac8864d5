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
//! describes any of them (each kind's configuration sits in its model's
//! file), validates the parameters and builds the channel.
//! The mathematics is in `docs/models/channel.md`.

mod bernoulli;
pub mod fading;
mod gilbert_elliott;
mod rayleigh;
mod sos_bank;

pub use bernoulli::{Bernoulli, BernoulliConfig};
pub use gilbert_elliott::{GilbertElliott, GilbertElliottConfig};
pub use rayleigh::{
    average_fade_duration_slots, bessel_j0, fer_from_margin_db, margin_db_from_fer,
    margin_from_fer, Rayleigh, RayleighConfig,
};

use std::fmt::Debug;

use crate::config::kind::tagged_enum;
use crate::config::{ConfigError, Probability, Result};
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
    /// Whether the channel never corrupts anything and has no state
    /// ([`Perfect`]): a link may then skip [`Channel::advance`] and
    /// [`Channel::unit_error`] (issue 38: two calls through the vtable per
    /// packet on every loss-free link).
    fn is_perfect(&self) -> bool {
        false
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
    fn is_perfect(&self) -> bool {
        true
    }
}

tagged_enum! {
    /// A channel error process: `channel = { kind = "gilbert_elliott", … }`.
    /// Each kind takes only its own keys (and `slot`).
    pub enum ChannelConfig: dyn ChannelModel, "channel", tag "kind" {
        /// Independent unit errors ([`Bernoulli`]).
        Bernoulli(BernoulliConfig) = "bernoulli",
        /// Gilbert–Elliott two-state chain, one step per slot ([`GilbertElliott`]).
        GilbertElliott(GilbertElliottConfig) = "gilbert_elliott",
        /// Correlated Rayleigh fading sampled per slot ([`Rayleigh`]).
        Rayleigh(RayleighConfig) = "rayleigh",
    }
}

/// What every channel kind's configuration provides (one implementation per
/// file of this module).
pub trait ChannelModel: Debug {
    /// Check the parameters; paths are relative to the channel table.
    fn validate(&self) -> Result<()>;
    /// Long-run unit error probability, from the parameters alone.
    fn mean_error_rate(&self) -> f64;
    /// The slot length as written.
    fn slot(&self) -> Option<Time>;
    /// Whether the process evolves per slot (and so needs a slot length).
    fn slotted(&self) -> bool;
    /// The channel with slot length `slot` (> 0) drawing from `rng`, of a
    /// valid configuration.
    fn build(&self, slot: Time, rng: Rng) -> Box<dyn Channel>;
}

impl ChannelConfig {
    /// The slot length when neither the channel nor its link gives one.
    pub const DEFAULT_SLOT: Time = Time::from_millis(1);

    /// Independent unit errors with probability `p`.
    pub fn bernoulli(p: Probability) -> ChannelConfig {
        ChannelConfig::Bernoulli(BernoulliConfig { p, slot: None })
    }

    /// Check the parameters; paths are relative to the channel table.
    pub fn validate(&self) -> Result<()> {
        if self.model().slot() == Some(Time::ZERO) {
            return Err(ConfigError::new(
                "slot",
                "\"0s\"",
                "is zero; a slot must be positive",
            ));
        }
        self.model().validate()
    }

    /// Long-run unit error probability (analytic, from the parameters).
    pub fn mean_error_rate(&self) -> f64 {
        self.model().mean_error_rate()
    }

    /// The slot length: the channel's own, else `link_slot` (a radio link's
    /// TTI); a slotted process on a link without slots must give its own.
    pub fn slot(&self, link_slot: Option<Time>) -> Result<Time> {
        match (self.model().slot(), link_slot) {
            (Some(s), _) | (None, Some(s)) => Ok(s),
            (None, None) if !self.model().slotted() => Ok(Self::DEFAULT_SLOT),
            (None, None) => Err(ConfigError::at_key(
                "slot",
                format!(
                    "missing; a {} channel on a wired link needs its slot length, e.g. slot = \"10ms\"",
                    self.kind()
                ),
            )),
        }
    }

    /// The channel, its slot from [`ChannelConfig::slot`], drawing from `rng`.
    pub fn build(&self, link_slot: Option<Time>, rng: Rng) -> Result<Box<dyn Channel>> {
        self.validate()?;
        Ok(self.model().build(self.slot(link_slot)?, rng))
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
    use serde_json::json;

    fn config(v: serde_json::Value) -> Result<ChannelConfig> {
        crate::config::deserialize::<ChannelConfig, _>(v).and_then(|c| c.validate().map(|()| c))
    }

    #[test]
    fn config_builds_each_model_with_its_mean_rate() {
        let cases = [
            (json!({"kind": "bernoulli", "p": 0.1}), 0.1),
            (
                json!({"kind": "gilbert_elliott", "p_good": 0.01, "p_bad": 0.9, "g": 0.99, "b": 0.9}),
                (0.1 * 0.01 + 0.01 * 0.9) / 0.11,
            ),
            (json!({"kind": "rayleigh", "fd_t": 0.01, "fer": 0.1}), 0.1),
        ];
        for (v, want) in cases {
            let cfg = config(v).unwrap();
            let ch = cfg
                .build(Some(Time::from_millis(10)), Rng::stream(1, "ch"))
                .unwrap();
            // The analytic rate of the configuration is the channel's, exactly.
            assert_eq!(ch.mean_error_rate(), cfg.mean_error_rate(), "{cfg:?}");
            assert!((cfg.mean_error_rate() - want).abs() < 1e-12, "{cfg:?}");
        }
    }

    #[test]
    fn config_rejects_bad_parameters_with_their_key() {
        let ge = |p_good: f64, p_bad: f64, g: f64, b: f64| json!({"kind": "gilbert_elliott", "p_good": p_good, "p_bad": p_bad, "g": g, "b": b});
        let ray = |fd_t: f64, fer: f64| json!({"kind": "rayleigh", "fd_t": fd_t, "fer": fer});
        let cases = [
            (
                json!({"kind": "bernoulli", "p": -0.01}),
                "p: -0.01 is not a probability",
            ),
            (ge(1.5, 0.9, 0.9, 0.9), "p_good: 1.5 is not a probability"),
            (ge(0.0, -1.0, 0.9, 0.9), "p_bad: -1 is not a probability"),
            (ge(0.0, 1.0, 1.01, 0.9), "g: 1.01 is not a probability"),
            (ge(0.0, 1.0, 1.0, 1.0), "no stationary distribution"),
            (ray(0.0, 0.1), "fd_t = 0"),
            (ray(-0.01, 0.1), "fd_t = -0.01"),
            (ray(0.01, 0.0), "fer = 0"),
            (ray(0.01, 1.0), "fer = 1"),
            (
                json!({"kind": "rayleigh", "fd_t": 0.01, "fer": 0.1, "p_bad": 1.5}),
                "p_bad: 1.5",
            ),
            (
                json!({"kind": "bernoulli", "p": 0.1, "g": 0.5}),
                "g: unknown key `g`",
            ),
            (json!({"kind": "rayleigh", "fer": 0.1}), "fd_t: missing"),
            (
                json!({"kind": "fractal"}),
                "kind: \"fractal\" is not a channel kind",
            ),
            (json!({"p": 0.1}), "kind: missing"),
        ];
        for (v, needle) in cases {
            let e = config(v.clone()).unwrap_err().to_string();
            assert!(e.contains(needle), "{v}: {e}");
        }
        // A slotted process on a link without slots needs its own.
        let ge = config(ge(0.0, 1.0, 0.9, 0.9)).unwrap();
        assert_eq!(ge.slot(None).unwrap_err().path, "slot");
        assert_eq!(
            ge.slot(Some(Time::from_millis(10))),
            Ok(Time::from_millis(10))
        );
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

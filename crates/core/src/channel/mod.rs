//! Channel models: which transmission units (PDUs, frames, packets) a radio
//! channel corrupts. Channels are separate from link models, so any link can
//! use any channel.
//!
//! A channel evolves in *slots* of fixed length (the radio frame / TTI). A
//! slotted link calls [`Channel::advance`] with the start of each slot in
//! which it transmits (slots it skips still evolve the channel), then asks
//! [`Channel::unit_error`] once per unit sent in that slot.

use std::fmt::Debug;

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

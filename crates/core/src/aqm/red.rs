//! RED (being written).
use super::{Aqm, QueueView, Verdict};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Time;

/// RED parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {}

/// RED state.
#[derive(Clone, Debug)]
pub struct Red {}

impl Red {
    /// New.
    pub fn new(_c: RedConfig) -> Red {
        Red {}
    }
}

impl Aqm for Red {
    fn on_arrival(&mut self, _now: Time, _q: &QueueView, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        Verdict::Accept
    }
}

//! Drop-tail: accept everything; the queue limit does the dropping.

use super::{Aqm, QueueView, Verdict};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Time;

/// Drop-tail policy (no early action).
#[derive(Clone, Copy, Debug, Default)]
pub struct DropTail;

impl Aqm for DropTail {
    fn name(&self) -> &'static str {
        "droptail"
    }

    fn on_arrival(&mut self, _now: Time, _q: &QueueView, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        Verdict::Accept
    }
}

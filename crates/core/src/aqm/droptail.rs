//! Drop-tail: accept everything; the queue limit does the dropping.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Aqm, AqmConfig, Limit, QueueView, Verdict};
use crate::config::Result;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Time;

/// A drop-tail queue: only a capacity.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropTailConfig {
    /// Capacity: packets `"100p"` or bytes `"150kB"`. Default `"100p"`.
    pub limit: Option<Limit>,
}

impl DropTailConfig {
    /// A drop-tail queue of `limit`.
    pub fn new(limit: Limit) -> Self {
        DropTailConfig { limit: Some(limit) }
    }
}

impl AqmConfig for DropTailConfig {
    fn limit(&self) -> Option<Limit> {
        self.limit
    }

    fn validate_under(&self, _limit: Limit) -> Result<()> {
        Ok(())
    }

    fn build(&self, _rate_bps: u64) -> Box<dyn Aqm> {
        Box::new(DropTail)
    }
}

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

    fn is_passive(&self) -> bool {
        true
    }
}

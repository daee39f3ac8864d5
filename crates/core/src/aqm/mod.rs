//! Packet queues and the active queue management (AQM) policies that guard them.
//!
//! A [`Queue`] is the FIFO buffer in front of a link transmitter. It enforces
//! its size [`Limit`] (packets or bytes), keeps the statistics every queue
//! reports, and consults an [`Aqm`] policy on each arrival and departure.
//! Policies are sans-IO like everything else: they are told `now` and the
//! queue's state, and answer with a [`Verdict`].

mod droptail;
pub mod red;

pub use droptail::DropTail;
pub use red::{Red, RedConfig};

use std::collections::VecDeque;
use std::fmt::Debug;

use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::Time;

/// Queue capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets.
    Packets(u32),
    /// At most this many bytes (IP packet sizes).
    Bytes(u64),
}

/// Why a packet was discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// The queue was full.
    Overflow,
    /// The AQM discarded it early (probabilistic or deterministic decision below the limit).
    AqmEarly,
    /// The AQM discarded it because its average exceeded the forced-drop threshold.
    AqmForced,
    /// The link lost it (random loss / channel error).
    LinkLoss,
}

impl DropCause {
    /// Stable lower-case name used in metrics and traces.
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Overflow => "overflow",
            DropCause::AqmEarly => "aqm_early",
            DropCause::AqmForced => "aqm_forced",
            DropCause::LinkLoss => "link_loss",
        }
    }
}

/// What an AQM decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accept (subject to the queue limit).
    Accept,
    /// Accept and set CE (the packet is ECN-capable).
    Mark,
    /// Discard, for this reason.
    Drop(DropCause),
}

/// The queue state an AQM sees.
#[derive(Clone, Copy, Debug)]
pub struct QueueView {
    /// Packets waiting (not counting the arrival being decided).
    pub packets: u32,
    /// Bytes waiting.
    pub bytes: u64,
    /// The queue's limit.
    pub limit: Limit,
}

impl QueueView {
    /// Occupancy in the unit of the limit (packets or bytes).
    pub fn occupancy(&self) -> f64 {
        match self.limit {
            Limit::Packets(_) => f64::from(self.packets),
            Limit::Bytes(_) => self.bytes as f64,
        }
    }
}

/// An active queue management policy.
pub trait Aqm: Debug + Send {
    /// The policy's scenario name (`droptail`, `red`, …).
    fn name(&self) -> &'static str;
    /// Decide on a packet arriving at `now` to a queue in state `q`.
    fn on_arrival(&mut self, now: Time, q: &QueueView, pkt: &Packet, rng: &mut Rng) -> Verdict;
    /// A packet left the queue at `now`; `q` is the state after it left.
    fn on_departure(&mut self, _now: Time, _q: &QueueView) {}
}

/// Counters every queue reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets that left for transmission.
    pub departures: u64,
    /// Packets dropped because the queue was full.
    pub drops_overflow: u64,
    /// Packets dropped early by the AQM.
    pub drops_aqm_early: u64,
    /// Packets dropped by the AQM's forced-drop rule.
    pub drops_aqm_forced: u64,
    /// Packets marked CE.
    pub ecn_marks: u64,
    /// Largest occupancy seen, packets.
    pub max_packets: u32,
    /// Time integral of occupancy in packets (packet·ns).
    pub area_packets: u128,
    /// Time integral of occupancy in bytes (byte·ns).
    pub area_bytes: u128,
}

/// One occupancy sample: time, packets, bytes.
pub type OccupancySample = (Time, u32, u64);

/// A FIFO queue with a size limit and an AQM policy.
#[derive(Debug)]
pub struct Queue {
    pkts: VecDeque<Packet>,
    bytes: u64,
    limit: Limit,
    aqm: Box<dyn Aqm>,
    rng: Rng,
    last_change: Time,
    stats: QueueStats,
    trace: Option<Vec<OccupancySample>>,
}

impl Queue {
    /// A queue with `limit` and policy `aqm`, drawing randomness from `rng`.
    pub fn new(limit: Limit, aqm: Box<dyn Aqm>, rng: Rng) -> Queue {
        Queue {
            pkts: VecDeque::new(),
            bytes: 0,
            limit,
            aqm,
            rng,
            last_change: Time::ZERO,
            stats: QueueStats::default(),
            trace: None,
        }
    }

    /// Record every occupancy change from now on.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    /// The occupancy samples recorded so far (empty unless tracing).
    pub fn take_trace(&mut self) -> Vec<OccupancySample> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The current state as an AQM sees it.
    pub fn view(&self) -> QueueView {
        QueueView {
            packets: self.pkts.len() as u32,
            bytes: self.bytes,
            limit: self.limit,
        }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The AQM policy's name.
    pub fn kind(&self) -> &'static str {
        self.aqm.name()
    }

    /// The limit.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Statistics so far (occupancy integrals up to the last change; call
    /// [`Queue::finish`] first for a complete integral).
    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }

    fn account(&mut self, now: Time) {
        let dt = u128::from(now.saturating_sub(self.last_change).0);
        self.stats.area_packets += dt * self.pkts.len() as u128;
        self.stats.area_bytes += dt * u128::from(self.bytes);
        self.last_change = now;
    }

    fn record(&mut self, now: Time) {
        if let Some(t) = self.trace.as_mut() {
            t.push((now, self.pkts.len() as u32, self.bytes));
        }
    }

    /// Offer `pkt` at `now`. On refusal the packet comes back with the cause.
    // The refused packet is returned by value (it is `Copy`): no allocation on the drop path.
    #[allow(clippy::result_large_err)]
    pub fn enqueue(&mut self, now: Time, mut pkt: Packet) -> Result<(), (Packet, DropCause)> {
        self.stats.arrivals += 1;
        let view = self.view();
        let verdict = self.aqm.on_arrival(now, &view, &pkt, &mut self.rng);
        let cause = match verdict {
            Verdict::Drop(c) => Some(c),
            Verdict::Accept | Verdict::Mark => {
                let full = match self.limit {
                    Limit::Packets(n) => view.packets >= n,
                    Limit::Bytes(b) => view.bytes + u64::from(pkt.size()) > b,
                };
                full.then_some(DropCause::Overflow)
            }
        };
        if let Some(c) = cause {
            match c {
                DropCause::Overflow => self.stats.drops_overflow += 1,
                DropCause::AqmEarly => self.stats.drops_aqm_early += 1,
                DropCause::AqmForced => self.stats.drops_aqm_forced += 1,
                DropCause::LinkLoss => {}
            }
            return Err((pkt, c));
        }
        if verdict == Verdict::Mark {
            pkt.ecn = Ecn::Ce;
            self.stats.ecn_marks += 1;
        }
        self.account(now);
        self.bytes += u64::from(pkt.size());
        self.pkts.push_back(pkt);
        self.stats.max_packets = self.stats.max_packets.max(self.pkts.len() as u32);
        self.record(now);
        Ok(())
    }

    /// Take the head packet at `now`.
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        if self.pkts.is_empty() {
            return None;
        }
        self.account(now);
        let pkt = self.pkts.pop_front()?;
        self.bytes -= u64::from(pkt.size());
        self.stats.departures += 1;
        let view = self.view();
        self.aqm.on_departure(now, &view);
        self.record(now);
        Some(pkt)
    }

    /// Close the occupancy integral at `now` (end of run).
    pub fn finish(&mut self, now: Time) {
        self.account(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet {
            payload: size - 40,
            header: 40,
            ..Packet::default()
        }
    }

    #[test]
    fn droptail_packet_limit() {
        let mut q = Queue::new(Limit::Packets(2), Box::new(DropTail), Rng::stream(1, "q"));
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_ok());
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_ok());
        let (_, c) = q.enqueue(Time::ZERO, pkt(100)).unwrap_err();
        assert_eq!(c, DropCause::Overflow);
        assert_eq!(q.stats().drops_overflow, 1);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn droptail_byte_limit() {
        let mut q = Queue::new(Limit::Bytes(250), Box::new(DropTail), Rng::stream(1, "q"));
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_ok());
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_ok());
        assert!(q.enqueue(Time::ZERO, pkt(100)).is_err());
        assert!(q.enqueue(Time::ZERO, pkt(50)).is_ok());
        assert_eq!(q.bytes(), 250);
    }

    #[test]
    fn occupancy_integral() {
        let mut q = Queue::new(Limit::Packets(10), Box::new(DropTail), Rng::stream(1, "q"));
        q.enqueue(Time::from_secs(0), pkt(100)).unwrap();
        q.enqueue(Time::from_secs(1), pkt(100)).unwrap();
        q.dequeue(Time::from_secs(3));
        q.finish(Time::from_secs(4));
        // 1 pkt for 1 s, 2 pkts for 2 s, 1 pkt for 1 s = 6 pkt·s.
        assert_eq!(q.stats().area_packets, 6 * 1_000_000_000);
    }
}

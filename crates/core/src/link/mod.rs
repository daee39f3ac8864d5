//! Link models: one direction of a link, from the queue in front of the
//! transmitter to the far end of the wire (or radio).
//!
//! A link is a sans-IO state machine: packets are offered with
//! [`Link::enqueue`], the link says when it next needs waking with
//! [`Link::poll_timeout`], and packets that reach the far end (or are lost on
//! the way) are collected with [`Link::poll_deliver`]. The engine and, later,
//! the live emulator drive links through this trait only.

mod wired;

pub use wired::{WiredConfig, WiredLink};

use crate::aqm::{DropCause, Queue};
use crate::packet::Packet;
use crate::time::Time;

/// What comes out of the far end of a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Delivery {
    /// The packet arrived intact.
    Arrived(Packet),
    /// The packet was transmitted but lost on the way.
    Lost(Packet, DropCause),
}

/// Counters every link reports (the queue has its own).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    /// Packets whose transmission started.
    pub tx_packets: u64,
    /// IP bytes whose transmission started.
    pub tx_bytes: u64,
    /// Packets that arrived at the far end.
    pub rx_packets: u64,
    /// IP bytes that arrived at the far end.
    pub rx_bytes: u64,
    /// Packets lost in transit.
    pub lost: u64,
}

/// One direction of a link.
pub trait Link: std::fmt::Debug + Send {
    /// Offer `pkt` at `now`; a refused packet comes back with the cause
    /// (by value: no allocation on the drop path).
    #[allow(clippy::result_large_err)]
    fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<(), (Packet, DropCause)>;
    /// The next instant the link needs [`Link::poll_deliver`] to be called.
    fn poll_timeout(&self) -> Option<Time>;
    /// The next packet that has reached the far end by `now`, if any.
    fn poll_deliver(&mut self, now: Time) -> Option<Delivery>;
    /// The queue in front of the transmitter.
    fn queue(&self) -> &Queue;
    /// Mutable access to the queue (tracing, end-of-run accounting).
    fn queue_mut(&mut self) -> &mut Queue;
    /// Link counters.
    fn stats(&self) -> &LinkStats;
    /// Nominal rate in bit/s.
    fn rate_bps(&self) -> u64;
    /// Packets inside the link: queued or on the wire.
    fn in_transit(&self) -> usize;
}

//! A wired (point-to-point) link direction: FIFO queue, serialisation at a
//! fixed rate, constant propagation delay, and a channel deciding which
//! packets are lost in transit (independent random loss by default, or any
//! [`Channel`] model: Gilbert–Elliott, Rayleigh fading).
//!
//! Transmission ends need no events of their own: the transmitter is advanced
//! lazily. Whenever the link is touched at `now`, every queued packet whose
//! transmission would have started by `now` is started at its exact start
//! time (`busy_until` of its predecessor), so queue occupancy, AQM decisions
//! and arrival times are the same as with one event per transmission end. The
//! engine wakes the link only at arrivals at the far end: one event per packet.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::fec::{FecConfig, FecLink, FecState, FragmentErasure, LinkFecConfig};
use super::netem::{Netem, NetemConfig};
use super::trace::{TraceConfig, TraceFile, TraceServer};
use super::{
    check_schedule_times, pick, Account, Delivery, Dir, Files, Link, LinkKind, LinkStats, Place,
    Then, WakePass,
};
use crate::aqm::{DropCause, Occupancy, Queue, QueueConfig};
use crate::channel::{Channel, ChannelConfig, Perfect};
use crate::config::{check_range, join, Bytes, ConfigError, Probability, Rate, Result};
use crate::packet::{pool, FlowId, Packet};
use crate::rng::Rng;
use crate::time::Time;

/// Parameters of a wired link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct WiredConfig {
    /// Transmission rate, bit/s (> 0); with a schedule, the rate from time 0.
    pub rate_bps: u64,
    /// Later rate changes `(at, bit/s)`, in time order (empty: constant rate).
    /// A packet is sent at the rate in force when its transmission starts,
    /// unless `immediate`.
    pub schedule: Vec<(Time, u64)>,
    /// Rate changes take effect mid-packet: a transmission that spans a
    /// step sends its bits at each rate in force in turn (a frame-based
    /// radio bearer, seed 003's SCH grants), instead of keeping the rate it
    /// started at.
    pub immediate: bool,
    /// One-way propagation delay.
    pub delay: Time,
    /// Link-layer framing bytes added to every packet on the wire (PPP 2,
    /// Ethernet 38 with preamble and gap); they cost transmission time only.
    pub overhead_bytes: u32,
    /// Trace-driven rate instead of `rate_bps` and `schedule` (then
    /// `rate_bps` is the trace's mean rate, for reports and queue defaults).
    pub trace: Option<TraceConfig>,
}

/// One direction of a wired link (a sans-IO model of its own).
///
/// `repr(C)`, hot fields first (issue 38): a packet-hop reads the first
/// cache line (the wire's head, the transmitter, copies of the delay and
/// framing, the fast paths' flags), the second (the wire, the channel, the
/// transmit counters) and the queue's front, instead of fields the
/// compiler's own order scattered over a dozen lines of the 800-byte
/// struct; with ten flows the links and flows are more than the L1 data
/// cache holds, so each line a hop touches is a likely miss.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct WiredDirection {
    // Line 0: the transmitter, the wire's head and the fast paths' tests.
    /// The arrival time of the wire's first packet ([`Time::MAX`]: the wire
    /// is empty), kept by [`WiredDirection::wire_push`] and
    /// [`WiredDirection::wire_pop`]: the fast paths read it with one load
    /// instead of the ring buffer's index arithmetic (four to five times
    /// per packet-hop).
    wire_head: Time,
    /// When the transmitter finishes the packet it is sending (≤ now: idle).
    busy_until: Time,
    /// The rate in force (from `cfg.schedule` up to `next_step`).
    rate_bps: u64,
    /// The last serialisation time computed: (bytes on the wire, rate,
    /// [`Time::tx_time`] of the two). A direction carries packets of one or
    /// two sizes (full segments one way, ACKs the other), so this one-entry
    /// memo saves most transmissions the 128-bit division.
    tx_memo: (u64, u64, Time),
    /// `cfg.delay` (the configuration never changes), in this line.
    delay: Time,
    /// `cfg.overhead_bytes`, in this line.
    overhead_bytes: u32,
    /// No FEC, no netem, no trace: the fast paths' test, one load instead
    /// of three (kept by the constructors, [`WiredDirection::with_fec`] and
    /// [`WiredDirection::with_netem`]).
    plain: bool,
    /// The channel is [`Perfect`] ([`Channel::is_perfect`]): no draws.
    perfect: bool,
    /// The queue [`Queue::is_fifo`]: nothing waits to be reported as
    /// discarded at dequeue (a copy in this line; the queue never changes kind).
    fifo: bool,
    /// `plain`, no `immediate` rate changes and no rate step still to come:
    /// [`WiredDirection::transmit`]'s inline case (kept with `plain` and
    /// `next_step` by [`WiredDirection::steady_now`]).
    steady: bool,
    // Line 1: the wire, the channel, the transmit counters (`LinkStats` is
    // `repr(C)`: its receive counters start line 2).
    /// Packets on the wire: (arrival time at the far end, packet, lost).
    wire: VecDeque<(Time, Box<Packet>, bool)>,
    channel: Box<dyn Channel>,
    stats: LinkStats,
    /// The queue (`repr(C)`, its per-packet fields first).
    queue: Queue,
    // Cold: read off the fast paths.
    cfg: WiredConfig,
    /// The index of the next step of `cfg.schedule`.
    next_step: usize,
    /// Link-level FEC / hybrid FEC-ARQ, if configured (`docs/models/ll-fec.md`).
    fec: Option<Box<FecState>>,
    /// The trace-driven transmitter, if `cfg.trace` is set.
    server: Option<TraceServer>,
    /// A packet the trace (played once) ended under: it never leaves.
    stuck: Option<Box<Packet>>,
    /// netem-style impairments at the far end (`docs/models/netem.md`).
    netem: Option<Box<Netem>>,
}

impl WiredDirection {
    /// A link direction with `queue` in front of it; `channel` decides which
    /// packets are lost in transit (each packet is one unit, in the channel
    /// slot in which its transmission starts).
    pub fn new(cfg: WiredConfig, queue: Queue, channel: Box<dyn Channel>) -> WiredDirection {
        let mut d = WiredDirection {
            delay: cfg.delay,
            overhead_bytes: cfg.overhead_bytes,
            plain: cfg.trace.is_none(),
            perfect: channel.is_perfect(),
            fifo: queue.is_fifo(),
            rate_bps: cfg.rate_bps,
            next_step: 0,
            server: cfg.trace.clone().map(TraceServer::new),
            stuck: None,
            netem: None,
            cfg,
            queue,
            channel,
            busy_until: Time::ZERO,
            wire: VecDeque::new(),
            stats: LinkStats::default(),
            fec: None,
            tx_memo: (0, 0, Time::ZERO),
            wire_head: Time::MAX,
            steady: false,
        };
        d.steady = d.steady_now();
        d
    }

    /// What [`WiredDirection::steady`] should read now.
    fn steady_now(&self) -> bool {
        self.plain && !self.cfg.immediate && self.next_step >= self.cfg.schedule.len()
    }

    /// Put a packet on the wire, arriving at `at`.
    #[inline]
    fn wire_push(&mut self, at: Time, pkt: Box<Packet>, lost: bool) {
        if self.wire.is_empty() {
            self.wire_head = at;
        }
        self.wire.push_back((at, pkt, lost));
    }

    /// Take the wire's first packet.
    #[inline]
    fn wire_pop(&mut self) -> Option<(Time, Box<Packet>, bool)> {
        let x = self.wire.pop_front();
        self.wire_head = self.wire.front().map_or(Time::MAX, |w| w.0);
        x
    }

    /// The wire's first arrival, from [`WiredDirection::wire_head`].
    #[inline]
    fn wire_first(&self) -> Option<Time> {
        debug_assert_eq!(self.wire_head, self.wire.front().map_or(Time::MAX, |w| w.0));
        (self.wire_head != Time::MAX).then_some(self.wire_head)
    }

    /// [`Time::tx_time`]`(wire, rate)`, from the memo when the last
    /// transmission had the same size and rate.
    #[inline]
    fn tx_time(&mut self, wire: u64, rate: u64) -> Time {
        let (w, r, t) = self.tx_memo;
        if w == wire && r == rate {
            return t;
        }
        let t = Time::tx_time(wire, rate);
        self.tx_memo = (wire, rate, t);
        t
    }

    /// A link direction whose packets are protected by link-level FEC (and
    /// ARQ when `fec.persistence > 0`); `rng` draws fragment erasures when
    /// `fec.erasure` converts a packet erasure rate, else `channel` erases
    /// each fragment. Framing `overhead_bytes` are paid per fragment.
    ///
    /// # Panics
    /// If `fec` is invalid ([`FecConfig::check`]) or the direction plays a trace.
    pub fn with_fec(
        cfg: WiredConfig,
        queue: Queue,
        channel: Box<dyn Channel>,
        fec: FecConfig,
        rng: Rng,
    ) -> WiredDirection {
        assert!(cfg.trace.is_none(), "link FEC needs a constant-rate link");
        let mut d = WiredDirection::new(cfg, queue, channel);
        d.fec = Some(Box::new(FecState::new(fec, rng)));
        d.plain = false;
        d.steady = false;
        d.stats.fec = Some(Default::default());
        d
    }

    /// The same direction with netem impairments at its far end.
    ///
    /// # Panics
    /// With link FEC (the two are not combined).
    pub fn with_netem(mut self, netem: Netem) -> WiredDirection {
        assert!(self.fec.is_none(), "netem with link FEC is not supported");
        self.netem = Some(Box::new(netem));
        self.plain = false;
        self.steady = false;
        self.stats.netem = Some(Default::default());
        self
    }

    /// Start the transmission of `pkt` at `start`: attempt `retry` of a
    /// packet already sent (seq, attempt), or a first transmission.
    ///
    /// Inline for a plain direction (no FEC, netem or trace) with no rate
    /// step still to come and no `immediate` rate changes, once per
    /// packet-hop: what [`WiredDirection::transmit_slow`] does for it.
    #[inline]
    fn transmit(&mut self, start: Time, pkt: Box<Packet>, retry: Option<(u64, u32)>) {
        if !self.steady {
            return self.transmit_slow(start, pkt, retry);
        }
        debug_assert_eq!(self.steady, self.steady_now());
        debug_assert!(self.fec.is_none() && self.server.is_none() && retry.is_none());
        let size = u64::from(pkt.size());
        let wire = size + u64::from(self.overhead_bytes);
        let lost = !self.perfect && {
            self.channel.advance(start);
            self.channel.unit_error()
        };
        let end = start + self.tx_time(wire, self.rate_bps);
        self.busy_until = end;
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += size;
        self.wire_push(end + self.delay, pkt, lost);
    }

    /// [`WiredDirection::transmit`]'s general case.
    #[inline(never)]
    fn transmit_slow(&mut self, start: Time, pkt: Box<Packet>, retry: Option<(u64, u32)>) {
        while let Some(&(at, bps)) = self.cfg.schedule.get(self.next_step) {
            if at > start {
                break;
            }
            self.rate_bps = bps;
            self.next_step += 1;
        }
        self.steady = self.steady_now();
        let rate = self.rate_bps;
        let size = u64::from(pkt.size());
        let (end, lost) = match self.fec.as_deref_mut() {
            None => {
                let wire = size + u64::from(self.overhead_bytes);
                let lost = !self.perfect && {
                    self.channel.advance(start);
                    self.channel.unit_error()
                };
                let end = match self.server.as_mut() {
                    None if self.cfg.immediate => self.fluid_end(start, wire),
                    None => start + self.tx_time(wire, rate),
                    Some(s) => match s.send(wire) {
                        Some(end) => end,
                        None => {
                            // The trace ended: the transmitter stops for good.
                            self.busy_until = Time::MAX;
                            self.stats.tx_packets += 1;
                            self.stats.tx_bytes += size;
                            self.stuck = Some(pkt);
                            return;
                        }
                    },
                };
                (end, lost)
            }
            Some(f) => {
                let frag = u64::from(f.cfg.fragment_bytes(pkt.size()));
                let frag_time = Time::tx_time(frag + u64::from(self.overhead_bytes), rate);
                let attempt = retry.unwrap_or_else(|| (f.first_seq(), 0));
                let end = f.send_block(start, frag_time, &pkt, attempt, self.channel.as_mut());
                (end, false)
            }
        };
        self.busy_until = end;
        if retry.is_none() {
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += size;
        }
        self.wire_push(end + self.delay, pkt, lost);
        if let Some(f) = &self.fec {
            self.stats.fec = Some(f.stats.clone());
        }
    }

    /// When a transmission of `wire` bytes starting at `start` ends if every
    /// rate step takes effect at once (`immediate`): the bits are sent at
    /// the rate in force, then at each later step's rate in turn.
    fn fluid_end(&self, start: Time, wire: u64) -> Time {
        // Bits × 1e9 still to send (ns·bit/s units), exact in integers.
        let mut left = u128::from(wire) * 8 * 1_000_000_000;
        let (mut t, mut rate) = (start, u128::from(self.rate_bps));
        for &(at, bps) in &self.cfg.schedule[self.next_step..] {
            let span = u128::from(at.0 - t.0) * rate;
            if span >= left {
                break;
            }
            left -= span;
            (t, rate) = (at, u128::from(bps));
        }
        Time(t.0 + left.div_ceil(rate) as u64)
    }

    /// When the transmitter can start its next packet: when the one it is
    /// sending ends, or a trace's next opportunity ([`Time::MAX`]: never).
    fn next_start(&self) -> Time {
        match &self.server {
            None => self.busy_until,
            Some(s) => s.next_start().unwrap_or(Time::MAX).max(self.busy_until),
        }
    }

    /// Start every transmission that begins by `now`: link retransmissions
    /// first (once their feedback has arrived), then queued packets.
    ///
    /// Called on every touch (three to four times per packet-hop), mostly
    /// with nothing to start: the plain transmitter (no trace, no FEC) that is
    /// busy past `now` or has nothing queued returns here, inlined, without
    /// the call (the loop below would break at once).
    #[inline]
    fn advance(&mut self, now: Time) {
        if self.plain && (self.busy_until > now || self.queue.is_empty()) {
            return;
        }
        self.advance_slow(now);
    }

    /// [`WiredDirection::advance`]'s loop.
    #[inline(never)]
    fn advance_slow(&mut self, now: Time) {
        loop {
            let t0 = self.next_start();
            let ready = self.fec.as_ref().and_then(|f| f.retx_ready());
            let start = match ready {
                Some(r) if r <= t0 && t0 <= now => t0,
                _ if t0 <= now && !self.queue.is_empty() => {
                    if let Some(p) = self.queue.dequeue_boxed(t0) {
                        self.transmit(t0, p, None);
                    }
                    continue;
                }
                Some(r) if r.max(t0) <= now => r.max(t0),
                _ => break,
            };
            let Some((p, seq, a)) = self.fec.as_mut().and_then(|f| f.pop_retx()) else {
                break;
            };
            self.transmit(start, pool::boxed(p), Some((seq, a)));
        }
    }
}

impl WiredDirection {
    /// Offer `pkt` at `now`; returns the packet discarded because of it, if any.
    pub fn enqueue(&mut self, now: Time, pkt: Packet) -> Option<(Packet, DropCause)> {
        self.enqueue_boxed(now, pool::boxed(pkt))
            .map(|(p, c)| (pool::unboxed(p), c))
    }

    /// [`WiredDirection::enqueue`] of a packet in its box: the same box
    /// waits in the queue, crosses the wire and is handed over at the far end.
    pub fn enqueue_boxed(
        &mut self,
        now: Time,
        pkt: Box<Packet>,
    ) -> Option<(Box<Packet>, DropCause)> {
        self.advance(now);
        // `plain` implies no trace server, and is read from the first line.
        if (self.plain || self.server.is_none())
            && self.busy_until <= now
            && self.queue.can_pass_through()
        {
            // Idle transmitter, empty queue: the packet leaves at once.
            return match self.queue.pass_through_boxed(now, pkt) {
                Ok(p) => {
                    self.transmit(now, p, None);
                    None
                }
                Err(refused) => Some(refused),
            };
        }
        let dropped = self.queue.enqueue_boxed(now, pkt);
        if let Some(s) = self.server.as_mut() {
            // A trace-driven transmitter takes the packet at its next
            // opportunity (`advance`), strictly after `now` if it is idle.
            if self.busy_until <= now {
                s.wake(now);
            }
        } else if self.busy_until <= now {
            // Idle transmitter: the packet leaves at once (it was queued so the
            // AQM saw it arrive, and leaves with zero sojourn time).
            if let Some(p) = self.queue.dequeue_boxed(now) {
                self.transmit(now, p, None);
            }
        }
        dropped
    }

    /// The next arrival at the far end (or, with link ARQ, the moment an idle
    /// transmitter starts a retransmission).
    ///
    /// Asked after every offer: a plain direction (no FEC, netem or trace)
    /// with no packet discarded at dequeue answers here, inlined, from its
    /// wire's first arrival (what the general case below computes for it).
    #[inline]
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.plain && (self.fifo || self.queue.dropped_waiting() == 0) {
            return self.wire_first();
        }
        self.poll_timeout_slow()
    }

    /// [`WiredDirection::poll_timeout`]'s general case.
    #[inline(never)]
    fn poll_timeout_slow(&self) -> Option<Time> {
        if self.queue.dropped_waiting() > 0 {
            // Discarded at dequeue by the AQM: report them at once.
            return Some(Time::ZERO);
        }
        let wire = self.wire.front().map(|w| w.0).or_else(|| {
            // A trace-driven transmitter waiting for its next opportunity.
            (self.server.is_some() && !self.queue.is_empty() && self.next_start() < Time::MAX)
                .then(|| self.next_start())
        });
        let wire = match (wire, self.netem.as_ref().and_then(|n| n.next_time())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let retx = self
            .fec
            .as_ref()
            .and_then(|f| f.retx_ready())
            .map(|r| r.max(self.busy_until));
        match (wire, retx) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether [`WiredDirection::poll_deliver`] at `now` certainly returns
    /// `None` and changes nothing: a plain direction (no FEC, netem or trace)
    /// with no packet discarded at dequeue, nothing to start by `now` and no
    /// packet arriving by `now`. Checked inline before the call: of the three
    /// to four directions polled per packet-hop, most have nothing due.
    #[inline]
    fn nothing_due(&self, now: Time) -> bool {
        debug_assert_eq!(
            self.plain,
            self.fec.is_none() && self.netem.is_none() && self.server.is_none()
        );
        debug_assert_eq!(self.perfect, self.channel.is_perfect());
        debug_assert_eq!(self.fifo, self.queue.is_fifo());
        self.plain
            && self.wire_head > now
            && (self.busy_until > now || self.queue.is_empty())
            && (self.fifo || self.queue.dropped_waiting() == 0)
    }

    /// [`WiredDirection::poll_timeout`] when [`WiredDirection::nothing_due`]
    /// holds: a plain direction's next wake-up is its wire's first arrival.
    #[inline]
    fn idle_timeout(&self) -> Option<Time> {
        debug_assert!(self.fec.is_none() && self.netem.is_none() && self.server.is_none());
        self.wire_first()
    }

    /// The next packet that reached the far end by `now`.
    pub fn poll_deliver(&mut self, now: Time) -> Option<Delivery> {
        self.poll_deliver_boxed(now).map(Delivery::unboxed)
    }

    /// [`WiredDirection::poll_deliver`] in the box the packet crossed the
    /// wire in (without FEC or netem; with them, in a box from the pool).
    pub fn poll_deliver_boxed(&mut self, now: Time) -> Option<Delivery<Box<Packet>>> {
        if self.fec.is_none() {
            self.advance(now);
            if let Some((p, c)) = self.queue.take_dropped() {
                return Some(Delivery::Lost(pool::boxed(p), c));
            }
            if self.netem.is_some() {
                return self.poll_netem(now).map(Delivery::boxed);
            }
            if self.wire_head > now {
                return None;
            }
            return self.deliver_plain();
        }
        loop {
            if let Some((p, c)) = self.queue.take_dropped() {
                return Some(Delivery::Lost(pool::boxed(p), c));
            }
            if let Some(d) = self.fec.as_mut().and_then(|f| f.pop_out()) {
                let d = d.boxed();
                self.count(&d);
                return Some(d);
            }
            match self.wire.front().map(|w| w.0) {
                Some(t) if t <= now => {
                    // Transmissions that start before this arrival go first;
                    // its feedback can only affect later ones.
                    self.advance(t);
                    let Some((_, pkt, _)) = self.wire_pop() else {
                        continue;
                    };
                    if let Some(f) = self.fec.as_mut() {
                        f.on_arrival(t, pool::unboxed(pkt));
                    }
                }
                _ => {
                    self.advance(now);
                    if self.wire.front().is_none_or(|w| w.0 > now) {
                        return None;
                    }
                }
            }
        }
    }

    /// [`WiredDirection::poll_deliver_boxed`], inline for a plain direction
    /// (no FEC, netem or trace): the same steps without the call (a wake-up
    /// pass makes one to two per packet-hop).
    #[inline(always)]
    fn poll_deliver_fast(&mut self, now: Time) -> Option<Delivery<Box<Packet>>> {
        if !self.plain {
            return self.poll_deliver_boxed(now);
        }
        self.advance(now);
        if self.queue.dropped_waiting() != 0 {
            return self.take_dropped_boxed();
        }
        if self.wire_head > now {
            return None;
        }
        self.deliver_plain()
    }

    /// A plain direction's next arrival off the wire, due now, counted. No
    /// FEC and no netem here: nothing to copy but the counters.
    #[inline(always)]
    fn deliver_plain(&mut self) -> Option<Delivery<Box<Packet>>> {
        let (_, pkt, lost) = self.wire_pop()?;
        let d = if lost {
            Delivery::Lost(pkt, DropCause::LinkLoss)
        } else {
            Delivery::Arrived(pkt)
        };
        self.tally(&d);
        Some(d)
    }

    /// A packet the AQM discarded at dequeue, as a loss in a pooled box.
    #[cold]
    #[inline(never)]
    fn take_dropped_boxed(&mut self) -> Option<Delivery<Box<Packet>>> {
        let (p, c) = self.queue.take_dropped()?;
        Some(Delivery::Lost(pool::boxed(p), c))
    }

    /// The next packet out of the netem stage by `now`: packets leave the
    /// wire into the stage at their arrival times, and the stage's outputs
    /// are taken in time order with them (an output due at an arrival's
    /// instant first).
    fn poll_netem(&mut self, now: Time) -> Option<Delivery> {
        loop {
            let n = self.netem.as_deref_mut()?;
            let wire = self.wire.front().map(|w| w.0).filter(|&t| t <= now);
            let out = n.next_time().filter(|&t| t <= now);
            let d = match (wire, out) {
                (w, Some(o)) if w.is_none_or(|w| o <= w) => n.pop(o),
                (Some(_), _) => {
                    // `wire_pop`, by fields (`n` borrows the netem stage).
                    let (t, pkt, lost) = self.wire.pop_front()?;
                    self.wire_head = self.wire.front().map_or(Time::MAX, |w| w.0);
                    let pkt = pool::unboxed(pkt);
                    if lost {
                        Some(Delivery::Lost(pkt, DropCause::LinkLoss))
                    } else {
                        n.admit(t, pkt);
                        continue;
                    }
                }
                _ => return None,
            };
            if let Some(d) = d {
                self.count(&d);
                return Some(d);
            }
        }
    }

    /// Count a delivery in the link's counters (and copy the FEC counters).
    /// By reference: the delivery (a 120-byte packet) is not moved twice.
    fn count<P: std::borrow::Borrow<Packet>>(&mut self, d: &Delivery<P>) {
        self.tally(d);
        if let Some(f) = &self.fec {
            self.stats.fec = Some(f.stats.clone());
        }
        if let Some(n) = &self.netem {
            self.stats.netem = Some(n.stats().clone());
        }
    }

    /// The delivery in the packet and byte counters only.
    #[inline]
    fn tally<P: std::borrow::Borrow<Packet>>(&mut self, d: &Delivery<P>) {
        match d {
            Delivery::Lost(_, c) => {
                self.stats.lost += 1;
                self.stats.lost_by.add(*c);
            }
            Delivery::Arrived(p) => {
                self.stats.rx_packets += 1;
                self.stats.rx_bytes += u64::from(p.borrow().size());
            }
        }
    }

    /// The queue in front of the transmitter.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Mutable access to the queue.
    pub fn queue_mut(&mut self) -> &mut Queue {
        &mut self.queue
    }

    /// Counters.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Rate, bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.cfg.rate_bps
    }

    /// Packets queued, on the wire, or held by the FEC/ARQ layer.
    pub fn in_transit(&self) -> usize {
        self.queue.len() + self.queue.dropped_waiting() + self.wire.len()
            - self.fec.as_ref().map_or(0, |f| f.copies_on_wire())
            + usize::from(self.stuck.is_some())
            + self.netem.as_ref().map_or(0, |n| n.held())
            + self.fec.as_ref().map_or(0, |f| f.held())
    }

    /// The direction's packet account ([`Link::account`]).
    pub fn account(&self) -> Account {
        let (offered, queue_dropped, departed) = self.queue.account();
        Account {
            offered,
            queue_dropped,
            departed,
            copies: self.netem.as_ref().map_or(0, |n| n.stats().duplicated),
            delivered: self.stats.rx_packets,
            lost: self.stats.lost_by,
        }
    }

    /// Visit every packet the direction holds ([`Link::for_each_held`]).
    pub fn for_each_held(&self, f: &mut dyn FnMut(Place, &Packet)) {
        self.queue.for_each(&mut |p| f(Place::Queue, p));
        match &self.fec {
            None => self.wire.iter().for_each(|(_, p, _)| f(Place::Wire, p)),
            Some(fec) => {
                for ((_, p, _), copy) in self.wire.iter().zip(fec.wire_copies()) {
                    if !copy {
                        f(Place::Wire, p);
                    }
                }
                fec.for_each_held(f);
            }
        }
        if let Some(n) = &self.netem {
            n.for_each_held(f);
        }
        if let Some(p) = &self.stuck {
            f(Place::Stuck, p);
        }
    }

    /// The netem stage at the far end, if any.
    pub fn netem(&self) -> Option<&Netem> {
        self.netem.as_deref()
    }

    /// Counters of the FEC layer (None without FEC).
    pub fn fec_stats(&self) -> Option<&super::fec::FecStats> {
        self.fec.as_ref().map(|f| &f.stats)
    }
}

/// The earlier of two wake-ups (`None`: none).
#[inline]
fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A wired duplex link: two independent [`WiredDirection`]s.
#[derive(Debug)]
pub struct WiredLink {
    dirs: [WiredDirection; 2],
}

impl WiredLink {
    /// A duplex link from its a→b and b→a directions.
    pub fn new(ab: WiredDirection, ba: WiredDirection) -> WiredLink {
        WiredLink { dirs: [ab, ba] }
    }
}

impl Link for WiredLink {
    fn enqueue(&mut self, now: Time, dir: Dir, pkt: Packet) -> Option<(Packet, DropCause)> {
        self.dirs[dir.index()].enqueue(now, pkt)
    }

    fn enqueue_boxed(
        &mut self,
        now: Time,
        dir: Dir,
        pkt: Box<Packet>,
    ) -> Option<(Box<Packet>, DropCause)> {
        self.dirs[dir.index()].enqueue_boxed(now, pkt)
    }

    fn poll_timeout(&self) -> Option<Time> {
        earliest(self.dirs[0].poll_timeout(), self.dirs[1].poll_timeout())
    }

    /// The two directions are independent: an offer to `dir` changes only its wake-up.
    fn poll_timeout_after_enqueue(&self, dir: Dir) -> Option<Time> {
        self.dirs[dir.index()].poll_timeout()
    }

    fn poll_deliver(&mut self, now: Time) -> Option<(Dir, Delivery)> {
        self.poll_deliver_boxed(now).map(|(d, x)| (d, x.unboxed()))
    }

    fn poll_deliver_boxed(&mut self, now: Time) -> Option<(Dir, Delivery<Box<Packet>>)> {
        for d in Dir::BOTH {
            let dir = &mut self.dirs[d.index()];
            if dir.nothing_due(now) {
                continue;
            }
            if let Some(x) = dir.poll_deliver_fast(now) {
                return Some((d, x));
            }
        }
        None
    }

    /// The directions are independent: a direction's state after its own
    /// poll found nothing is what [`Link::poll_timeout`] would read, so its
    /// wake-up is taken then (inline for a plain direction with nothing due).
    ///
    /// With a delivery: [`Then::Idle`] when both directions are plain and
    /// have nothing more due by `now` ([`WiredDirection::nothing_due`]; for
    /// the delivering direction only its wire's next arrival needs a look,
    /// for a→b before a b→a delivery what this pass already read), with the
    /// wake-up the next pass would give (their wires' first arrivals); else
    /// [`Then::Poll`].
    fn poll_deliver_or_timeout(&mut self, now: Time) -> WakePass {
        let mut next = [None; 2];
        // Direction a→b had nothing due (its wake-up is `next[0]`).
        let mut idle_ab = false;
        for d in Dir::BOTH {
            let dir = &mut self.dirs[d.index()];
            next[d.index()] = if dir.nothing_due(now) {
                idle_ab = d == Dir::AB;
                dir.idle_timeout()
            } else if let Some(x) = dir.poll_deliver_fast(now) {
                // After its own pass a plain direction has started what it
                // could: only a packet its AQM discarded at dequeue (the
                // delivery may be the first of several) or its wire's next
                // arrival can still be due.
                let done = dir.plain
                    && (dir.fifo || dir.queue.dropped_waiting() == 0)
                    && dir.wire_head > now;
                debug_assert!(!done || dir.nothing_due(now));
                let then = match d {
                    _ if !done => Then::Poll,
                    Dir::AB if self.dirs[1].nothing_due(now) => Then::Idle(earliest(
                        self.dirs[0].idle_timeout(),
                        self.dirs[1].idle_timeout(),
                    )),
                    Dir::BA if idle_ab => {
                        Then::Idle(earliest(next[0], self.dirs[1].idle_timeout()))
                    }
                    _ => Then::Poll,
                };
                return Ok((d, x, then));
            } else {
                dir.poll_timeout()
            };
        }
        Err(earliest(next[0], next[1]))
    }

    fn occupancy(&self, dir: Dir) -> &Occupancy {
        self.dirs[dir.index()].queue().occupancy()
    }

    fn occupancy_mut(&mut self, dir: Dir) -> &mut Occupancy {
        self.dirs[dir.index()].queue_mut().occupancy_mut()
    }

    fn queue_kind(&self, dir: Dir) -> &'static str {
        self.dirs[dir.index()].queue().kind()
    }

    fn stats(&self, dir: Dir) -> &LinkStats {
        self.dirs[dir.index()].stats()
    }

    fn rate_bps(&self, dir: Dir) -> u64 {
        self.dirs[dir.index()].rate_bps()
    }

    fn in_transit(&self) -> usize {
        self.dirs[0].in_transit() + self.dirs[1].in_transit()
    }

    fn account(&self, dir: Dir) -> Account {
        self.dirs[dir.index()].account()
    }

    fn for_each_held(&self, f: &mut dyn FnMut(Dir, Place, &Packet)) {
        for d in Dir::BOTH {
            self.dirs[d.index()].for_each_held(&mut |place, p| f(d, place, p));
        }
    }

    fn for_each_copies(&self, f: &mut dyn FnMut(Dir, FlowId, bool, u64)) {
        for d in Dir::BOTH {
            if let Some(n) = self.dirs[d.index()].netem() {
                for (flow, ack, copies) in n.copies_by_flow() {
                    f(d, flow, ack, copies);
                }
            }
        }
    }

    fn duplicated(&self) -> u64 {
        self.dirs
            .iter()
            .filter_map(|d| d.stats().netem.as_ref())
            .map(|n| n.duplicated)
            .sum()
    }
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

/// Declare a struct with the keys that configure one direction of a wired
/// link, after its own fields.
macro_rules! with_direction_keys {
    ($(#[$meta:meta])* pub struct $name:ident { $($own:tt)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($own)*
            /// Rate, e.g. `"10Mbit"` (required, at the link's level or per
            /// direction, unless `rate_schedule` is given).
            pub rate: Option<Rate>,
            /// Rate changes instead of `rate`: `[{ at = "0s", rate = "10Mbit" },
            /// { at = "30s", rate = "2Mbit" }]`, in time order from `"0s"`; a
            /// packet is sent at the rate in force when its transmission starts.
            pub rate_schedule: Option<Vec<WiredRateStep>>,
            /// When a `rate_schedule` step takes effect: `"next_packet"`
            /// (default; a packet keeps the rate its transmission started at,
            /// like ns-3's `DataRate` attribute) or `"immediate"` (mid-packet,
            /// as on a frame-based radio bearer).
            pub rate_change: Option<RateChange>,
            /// Trace-driven rate instead of `rate`: a Mahimahi trace file (one
            /// integer millisecond timestamp per line, each a delivery
            /// opportunity), relative to the scenario file
            /// (docs/models/trace-link.md).
            pub trace: Option<TraceFile>,
            /// Bytes each opportunity of `trace` carries, 1 to 65535. Default
            /// `"1500B"`; `"1504B"` gives byte parity with Mahimahi's `mm-link`.
            pub opportunity: Option<Bytes>,
            /// Play `trace` once: no opportunity after its last line. Default
            /// false: the trace repeats with its last timestamp as period.
            pub once: Option<bool>,
            /// One-way propagation delay, e.g. `"20ms"`. Default `"0s"`.
            pub delay: Option<Time>,
            /// Independent random loss probability of each packet. Default 0.
            pub loss: Option<Probability>,
            /// Link-layer framing bytes per packet (time on the wire only), 0 to
            /// 65535, e.g. `"2B"` for PPP. Default 0.
            pub overhead: Option<Bytes>,
            /// Error process deciding which packets are lost in transit (instead of `loss`).
            pub channel: Option<ChannelConfig>,
            /// Queue in front of the transmitter. Default drop-tail, 100 packets.
            pub queue: Option<QueueConfig>,
            /// Link-level FEC or hybrid FEC/ARQ (docs/models/ll-fec.md).
            pub fec: Option<LinkFecConfig>,
            /// netem-style impairments at the far end: delay jitter,
            /// reordering, duplication, corruption, loss models
            /// (docs/models/netem.md).
            pub netem: Option<NetemConfig>,
        }
    };
}

/// When a wired direction's rate step takes effect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateChange {
    /// At the next transmission start.
    #[default]
    NextPacket,
    /// At once, also for the packet being sent.
    Immediate,
}

/// One step of a wired direction's `rate_schedule`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WiredRateStep {
    /// When the rate changes, e.g. `"30s"` (the first step is at `"0s"`).
    pub at: Time,
    /// The rate from then on.
    pub rate: Rate,
}

with_direction_keys! {
    /// A wired link (`kind = "wired"`, the default): both directions from the
    /// keys at the link's level, each overridden by its own `ab` / `ba` table.
    pub struct WiredLinkConfig {
        /// One end: a node name or a range such as `"S{1..10}"`.
        pub a: String,
        /// The other end.
        pub b: String,
        /// Overrides for the a→b direction.
        pub ab: Option<WiredDirectionConfig>,
        /// Overrides for the b→a direction.
        pub ba: Option<WiredDirectionConfig>,
    }
}

with_direction_keys! {
    /// Per-direction overrides of a wired link (`ab`, `ba`): each key given
    /// replaces the link's for this direction.
    pub struct WiredDirectionConfig {}
}

impl WiredLinkConfig {
    /// A link between `a` and `b` (names or ranges) with nothing set yet: give
    /// it at least a [`rate`](Self::rate).
    pub fn new(a: impl Into<String>, b: impl Into<String>) -> Self {
        WiredLinkConfig {
            a: a.into(),
            b: b.into(),
            ..WiredLinkConfig::default()
        }
    }

    /// The rate of both directions.
    pub fn rate(mut self, rate: Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// The propagation delay of both directions.
    pub fn delay(mut self, delay: Time) -> Self {
        self.delay = Some(delay);
        self
    }

    /// The random loss of both directions.
    pub fn loss(mut self, loss: Probability) -> Self {
        self.loss = Some(loss);
        self
    }

    /// The queue of both directions.
    pub fn queue(mut self, queue: impl Into<QueueConfig>) -> Self {
        self.queue = Some(queue.into());
        self
    }

    /// The channel of both directions.
    pub fn channel(mut self, channel: impl Into<ChannelConfig>) -> Self {
        self.channel = Some(channel.into());
        self
    }

    /// Overrides of the a→b direction.
    pub fn ab(mut self, d: WiredDirectionConfig) -> Self {
        self.ab = Some(d);
        self
    }

    /// Overrides of the b→a direction.
    pub fn ba(mut self, d: WiredDirectionConfig) -> Self {
        self.ba = Some(d);
        self
    }

    /// This link with generated rate schedules (seed 003's SCH allocations,
    /// `(at, bit/s)` steps from 0) on its a→b and/or b→a directions, applied
    /// with immediate effect unless the link or the direction states its own
    /// `rate_change`. Refused (path `ab` / `ba`) for a direction that
    /// gives its own rate, schedule or trace.
    pub fn with_schedules(
        &self,
        ab: Option<Vec<(Time, u64)>>,
        ba: Option<Vec<(Time, u64)>>,
    ) -> Result<WiredLinkConfig> {
        let mut w = self.clone();
        for (key, got, dir) in [("ab", ab, &mut w.ab), ("ba", ba, &mut w.ba)] {
            let Some(steps) = got else { continue };
            let d = dir.get_or_insert_with(WiredDirectionConfig::default);
            if d.rate.is_some() || d.rate_schedule.is_some() || d.trace.is_some() {
                return Err(ConfigError::at_key(
                    key,
                    "gives its own rate; allowed: a generated schedule or a direction's own rate",
                ));
            }
            // Immediate unless the link or the direction states its own
            // `rate_change` (`"next_packet"`: ns-2's links, which send the packet
            // in transmission at the rate its transmission started with).
            if steps.len() > 1 && d.rate_change.is_none() && self.rate_change.is_none() {
                d.rate_change = Some(RateChange::Immediate);
            }
            let steps = steps
                .into_iter()
                .map(|(at, bps)| {
                    Ok(WiredRateStep {
                        at,
                        rate: Rate::from_bps(bps)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            d.rate_schedule = Some(steps);
        }
        Ok(w)
    }

    /// The fixed rate, bit/s, of direction `key` (`"ab"` or `"ba"`): its own
    /// `rate` (taken out, so that a generated schedule may replace it) or the
    /// link's; an error when the direction follows a schedule or a trace.
    pub fn take_fixed_rate(&mut self, key: &'static str) -> Result<u64> {
        let link = self.rate;
        let (dir, top) = match key {
            "ab" => (
                &mut self.ab,
                (self.rate_schedule.is_some(), self.trace.is_some()),
            ),
            _ => (
                &mut self.ba,
                (self.rate_schedule.is_some(), self.trace.is_some()),
            ),
        };
        let d = dir.get_or_insert_with(WiredDirectionConfig::default);
        if d.rate_schedule.is_some() || d.trace.is_some() || (d.rate.is_none() && (top.0 || top.1))
        {
            return Err(ConfigError::at_key(
                key,
                "follows a rate_schedule or a trace; allowed: a direction with a fixed rate",
            ));
        }
        d.rate.take().or(link).map(Rate::bps).ok_or_else(|| {
            ConfigError::at_key(key, "has no rate; allowed: a direction with a fixed rate")
        })
    }

    /// The settings of direction `key` (`"ab"` or `"ba"`), resolved.
    fn plan(&self, key: &'static str) -> Result<Half<'_>> {
        static NONE: WiredDirectionConfig = WiredDirectionConfig {
            rate: None,
            rate_schedule: None,
            rate_change: None,
            trace: None,
            opportunity: None,
            once: None,
            delay: None,
            loss: None,
            overhead: None,
            channel: None,
            queue: None,
            fec: None,
            netem: None,
        };
        let own = match key {
            "ab" => self.ab.as_ref(),
            _ => self.ba.as_ref(),
        }
        .unwrap_or(&NONE);
        // `rate`, `rate_schedule` and `trace` are one setting: a direction
        // that gives any replaces the link's, and one level gives one of them.
        let mine = own.rate.is_some() || own.rate_schedule.is_some() || own.trace.is_some();
        let (rate, steps, trace, at) = if mine {
            (
                own.rate.as_ref(),
                own.rate_schedule.as_ref(),
                own.trace.as_ref(),
                key,
            )
        } else {
            (
                self.rate.as_ref(),
                self.rate_schedule.as_ref(),
                self.trace.as_ref(),
                "",
            )
        };
        let given = [rate.is_some(), steps.is_some(), trace.is_some()];
        if given.iter().filter(|&&g| g).count() > 1 {
            let k = if trace.is_some() {
                "trace"
            } else {
                "rate_schedule"
            };
            return Err(ConfigError::at_key(
                join(at, k),
                "is given with `rate` or `rate_schedule`; allowed: one of `rate`, `rate_schedule` and `trace` per direction",
            ));
        }
        let (opp, opp_path) = pick(&own.opportunity, &self.opportunity, key, "opportunity");
        let (once, once_path) = pick(&own.once, &self.once, key, "once");
        if trace.is_none() {
            for (given, path) in [(opp.is_some(), &opp_path), (once.is_some(), &once_path)] {
                if given {
                    return Err(ConfigError::at_key(
                        path,
                        "applies to a trace-driven direction only; give `trace = \"FILE\"`",
                    ));
                }
            }
        }
        let sp = join(at, "rate_schedule");
        let (rate, schedule, trace) = match (rate, steps, trace) {
            (Some(r), _, _) => (r.bps(), Vec::new(), None),
            (_, Some(steps), _) => {
                let paths: Vec<String> = (0..steps.len()).map(|i| format!("{sp}[{i}]")).collect();
                if steps.is_empty() {
                    return Err(ConfigError::at_key(
                        sp,
                        "is empty; give at least the rate at \"0s\"",
                    ));
                }
                check_schedule_times(steps.iter().zip(&paths).map(|(st, p)| (st.at, p.as_str())))?;
                let later = steps[1..].iter().map(|st| (st.at, st.rate.bps())).collect();
                (steps[0].rate.bps(), later, None)
            }
            (_, _, Some(t)) => {
                let tp = join(at, "trace");
                let Some(loaded) = &t.loaded else {
                    return Err(ConfigError::new(
                        tp,
                        crate::config::quoted(&t.path),
                        "was not read; run the scenario through api::start, which reads trace files",
                    ));
                };
                let opportunity = opp.map_or(1500, |b| b.get());
                check_range(&opp_path, opportunity, 1, 65_535)?;
                let tc = TraceConfig {
                    trace: Arc::clone(loaded),
                    opportunity: opportunity as u32,
                    once: once.copied().unwrap_or(false),
                };
                (tc.mean_rate_bps(), Vec::new(), Some(tc))
            }
            (None, None, None) => {
                return Err(ConfigError::at_key(
                    "rate",
                    "missing; every link direction needs a rate, e.g. rate = \"10Mbit\" (or a rate_schedule, or a trace)",
                ))
            }
        };
        let (change, change_path) = pick(&own.rate_change, &self.rate_change, key, "rate_change");
        if change.is_some() && schedule.is_empty() {
            return Err(ConfigError::at_key(
                change_path,
                "applies to a direction with a `rate_schedule` of two or more steps",
            ));
        }
        let immediate = change == Some(&RateChange::Immediate);
        let delay = pick(&own.delay, &self.delay, key, "delay")
            .0
            .copied()
            .unwrap_or(Time::ZERO);
        let (overhead, op) = pick(&own.overhead, &self.overhead, key, "overhead");
        let overhead = overhead.map_or(0, |b| b.get());
        check_range(&op, overhead, 0, 65_535)?;
        let loss = pick(&own.loss, &self.loss, key, "loss").0.map(|p| p.get());
        let (channel, cp) = pick(&own.channel, &self.channel, key, "channel");
        let channel = match (channel, loss) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::at_key(
                    cp,
                    "give either `loss` or `channel`, not both",
                ))
            }
            (Some(c), None) => {
                c.validate()
                    .and_then(|()| c.slot(None))
                    .map_err(|e| e.at(&cp))?;
                Some(Cow::Borrowed(c))
            }
            (None, Some(p)) if p > 0.0 => {
                Some(Cow::Owned(ChannelConfig::bernoulli(Probability::new(p)?)))
            }
            (None, _) => None,
        };
        let (queue, qp) = pick(&own.queue, &self.queue, key, "queue");
        if let Some(q) = queue {
            q.validate().map_err(|e| e.at(&qp))?;
        }
        let (netem, np) = pick(&own.netem, &self.netem, key, "netem");
        if let Some(n) = netem {
            n.validate().map_err(|e| e.at(&np))?;
        }
        let (fec, fp) = pick(&own.fec, &self.fec, key, "fec");
        let fec = match fec {
            Some(_) if netem.is_some() => return Err(ConfigError::at_key(
                fp,
                "is not combined with `netem` on one direction; allowed: one of `fec` and `netem`",
            )),
            Some(_) if trace.is_some() => {
                return Err(ConfigError::at_key(
                    fp,
                    "needs a constant-rate direction; link FEC is not available with `trace`",
                ))
            }
            Some(f) => {
                let link = FecLink {
                    loss,
                    channel: own.channel.as_ref().or(self.channel.as_ref()),
                    delay,
                };
                Some(f.resolve(&link).map_err(|e| e.at(&fp))?)
            }
            None => None,
        };
        Ok(Half {
            wired: WiredConfig {
                rate_bps: rate,
                schedule,
                trace,
                delay,
                overhead_bytes: overhead as u32,
                immediate,
            },
            queue,
            channel,
            fec,
            netem,
        })
    }
}

/// One direction's settings, resolved and checked.
struct Half<'a> {
    wired: WiredConfig,
    queue: Option<&'a QueueConfig>,
    channel: Option<Cow<'a, ChannelConfig>>,
    fec: Option<FecConfig>,
    netem: Option<&'a NetemConfig>,
}

impl Half<'_> {
    /// The direction named `name` (`a->b`), its streams drawn from `seed`.
    fn build(self, name: &str, seed: u64) -> Result<WiredDirection> {
        let queue = self.queue.cloned().unwrap_or_default().build(
            self.wired.rate_bps,
            Rng::stream(seed, &format!("queue:{name}")),
        )?;
        let rng = Rng::stream(seed, &format!("link:{name}"));
        let channel: Box<dyn Channel> = match (&self.fec, self.channel) {
            // The converted rate replaces the packet-level channel.
            (
                Some(FecConfig {
                    erasure: FragmentErasure::Packet { .. },
                    ..
                }),
                _,
            )
            | (_, None) => Box::new(Perfect),
            (_, Some(c)) => c.build(None, rng)?,
        };
        Ok(match self.fec {
            Some(fc) => WiredDirection::with_fec(
                self.wired,
                queue,
                channel,
                fc,
                Rng::stream(seed, &format!("fec:{name}")),
            ),
            None => {
                let d = WiredDirection::new(self.wired, queue, channel);
                match self.netem {
                    Some(n) => d.with_netem(n.build(Rng::stream(seed, &format!("netem:{name}")))),
                    None => d,
                }
            }
        })
    }
}

impl LinkKind for WiredLinkConfig {
    fn ends(&self) -> (&str, &str) {
        (&self.a, &self.b)
    }

    fn validate(&self) -> Result<()> {
        self.plan("ab")?;
        self.plan("ba").map(|_| ())
    }

    fn file_names(&self) -> Vec<&str> {
        [
            self.trace.as_ref(),
            self.ab.as_ref().and_then(|d| d.trace.as_ref()),
            self.ba.as_ref().and_then(|d| d.trace.as_ref()),
        ]
        .into_iter()
        .flatten()
        .map(|t| t.path.as_str())
        .collect()
    }

    fn load_files(&mut self, files: &mut Files) -> Result<()> {
        for (key, t) in [
            ("trace", self.trace.as_mut()),
            ("ab.trace", self.ab.as_mut().and_then(|d| d.trace.as_mut())),
            ("ba.trace", self.ba.as_mut().and_then(|d| d.trace.as_mut())),
        ] {
            if let Some(t) = t {
                t.load(files.base.as_deref(), &mut files.traces)
                    .map_err(|e| e.at(key))?;
            }
        }
        Ok(())
    }

    fn build(&self, a: &str, b: &str, seed: u64) -> Result<Box<dyn Link>> {
        let ab = self.plan("ab")?.build(&format!("{a}->{b}"), seed)?;
        let ba = self.plan("ba")?.build(&format!("{b}->{a}"), seed)?;
        Ok(Box::new(WiredLink::new(ab, ba)))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::aqm::{DropTail, Limit};
    use crate::channel::{Bernoulli, Perfect};
    use crate::rng::Rng;

    /// A loss-free drop-tail direction of `rate` bit/s, `delay_ms` and a
    /// `limit`-packet queue (also the network tests' plain link).
    pub(crate) fn link(rate: u64, delay_ms: u64, limit: u32) -> WiredDirection {
        let q = Queue::new(
            Limit::Packets(limit),
            Box::new(DropTail),
            Rng::stream(1, "q"),
        );
        WiredDirection::new(
            WiredConfig {
                schedule: Vec::new(),
                rate_bps: rate,
                delay: Time::from_millis(delay_ms),
                overhead_bytes: 0,
                trace: None,
                immediate: false,
            },
            q,
            Box::new(Perfect),
        )
    }

    /// The serialisation-time memo gives [`Time::tx_time`] whatever the
    /// sequence of sizes and rates: back-to-back packets of alternating and
    /// repeated sizes, across a rate step, end where the sum of their
    /// exact transmission times says.
    #[test]
    fn tx_time_memo_matches_the_division() {
        let mut l = link(3_000_001, 0, 100);
        l.cfg.schedule = vec![(Time::from_millis(20), 1_234_567)];
        l.steady = l.steady_now();
        let sizes = [1500u32, 1500, 52, 1500, 52, 52, 576, 1500, 1500, 52, 1500];
        for (i, &s) in sizes.iter().enumerate() {
            assert!(l.enqueue(Time::ZERO, pkt(i as u64, s)).is_none());
        }
        let mut t = Time::ZERO;
        for (i, &s) in sizes.iter().enumerate() {
            let rate = if t >= Time::from_millis(20) {
                1_234_567
            } else {
                3_000_001
            };
            t += Time::tx_time(u64::from(s), rate);
            assert!(l.poll_deliver(Time(t.0 - 1)).is_none(), "packet {i} early");
            match l.poll_deliver(t) {
                Some(Delivery::Arrived(p)) => assert_eq!(p.uid, i as u64),
                other => panic!("packet {i} not delivered at {t:?}: {other:?}"),
            }
        }
    }

    fn pkt(uid: u64, size: u32) -> Packet {
        Packet {
            uid,
            payload: size - 40,
            header: 40,
            ..Packet::default()
        }
    }

    /// Sans-IO: drive the link by hand-stepped time, no engine involved.
    /// One pass per wake-up (`poll_deliver_or_timeout`) hands over the same
    /// packets in the same order as `poll_deliver_boxed` until `None`, and
    /// then the same next wake-up as `poll_timeout`: two links, one driven
    /// each way, with a lossy direction and a full queue (drops at arrival);
    /// a delivery that says [`Then::Idle`] is the pass's last, and the
    /// wake-up it gives is the one the pass ends with.
    #[test]
    fn one_pass_per_wake_up_matches_the_polls() {
        let lossy = |seed| {
            let mut d = link(1_000_000, 3, 4);
            d.channel = Box::new(Bernoulli::new(0.2, Rng::stream(seed, "c")));
            d.perfect = false;
            d
        };
        let mut a = WiredLink::new(lossy(1), link(2_000_000, 1, 2));
        let mut b = WiredLink::new(lossy(1), link(2_000_000, 1, 2));
        let mut now = Time::ZERO;
        let (mut seen, mut uid, mut idle) = (Vec::new(), 0, 0);
        for step in 0..400u64 {
            // Offers every 0.7 ms, alternating directions, some in bursts.
            now = now.max(Time::from_micros(700 * step));
            for k in 0..=(step % 3) {
                let dir = Dir::from_index(((step + k) % 2) as usize);
                uid += 1;
                let x = a.enqueue_boxed(now, dir, Box::new(pkt(uid, 500)));
                let y = b.enqueue_boxed(now, dir, Box::new(pkt(uid, 500)));
                assert_eq!(x.map(|(p, c)| (p.uid, c)), y.map(|(p, c)| (p.uid, c)));
            }
            let Some(t) = a.poll_timeout() else { continue };
            if t > Time::from_micros(700 * (step + 1)) {
                continue;
            }
            now = t;
            // A delivery's `Then::Idle` promises the next pass's answer.
            let mut promised = None;
            let next = loop {
                match a.poll_deliver_or_timeout(now) {
                    Ok((d, x, then)) => {
                        assert_eq!(promised, None, "a delivery after Then::Idle");
                        let (e, y) = b.poll_deliver_boxed(now).expect("the same delivery");
                        assert_eq!((d, x.unboxed()), (e, y.unboxed()));
                        seen.push(d);
                        if let Then::Idle(n) = then {
                            promised = Some(n);
                            idle += 1;
                        }
                    }
                    Err(next) => break next,
                }
            };
            if let Some(n) = promised {
                assert_eq!(n, next, "Then::Idle at {now:?}");
            }
            assert!(b.poll_deliver_boxed(now).is_none());
            assert_eq!(next, b.poll_timeout(), "the wake-up at {now:?}");
            assert_eq!(next, a.poll_timeout());
        }
        assert!(seen.contains(&Dir::AB) && seen.contains(&Dir::BA));
        assert!(idle > 0, "no delivery said Then::Idle");
        assert!(
            a.stats(Dir::AB).lost > 0,
            "the lossy direction lost packets"
        );
    }

    #[test]
    fn hand_stepped_serialisation_and_delay() {
        // 1000-byte packets at 8 Mbit/s take 1 ms each; 10 ms propagation.
        let mut l = link(8_000_000, 10, 100);
        for i in 0..3 {
            assert!(l.enqueue(Time::ZERO, pkt(i, 1000)).is_none());
        }
        // Two are waiting behind the first one.
        assert_eq!(l.queue().len(), 2);
        let mut arrivals = Vec::new();
        let mut now = Time::ZERO;
        while let Some(t) = l.poll_timeout() {
            assert!(t >= now, "time never goes backwards");
            now = t;
            while let Some(d) = l.poll_deliver(now) {
                match d {
                    Delivery::Arrived(p) => arrivals.push((now, p.uid)),
                    Delivery::Lost(..) => panic!("no loss configured"),
                }
            }
        }
        assert_eq!(
            arrivals,
            vec![
                (Time::from_millis(11), 0),
                (Time::from_millis(12), 1),
                (Time::from_millis(13), 2)
            ]
        );
        assert_eq!(l.stats().tx_bytes, 3000);
    }

    /// A direction driven by trace `ms` (opportunities of `opp` bytes).
    fn traced(ms: &[u64], opp: u32, once: bool, limit: u32) -> WiredDirection {
        let mut l = link(1, 2, limit);
        let tc = TraceConfig {
            trace: Arc::new(super::super::trace::Trace::from_millis(ms).unwrap()),
            opportunity: opp,
            once,
        };
        l.server = Some(TraceServer::new(tc.clone()));
        l.plain = false;
        l.steady = false;
        l.cfg.trace = Some(tc);
        l
    }

    /// Drive `l` with `(ms, uid, bytes)` arrivals; the (arrival ms, uid) at the far end.
    fn drive(l: &mut WiredDirection, offers: &[(u64, u64, u32)]) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut offers = offers.iter().peekable();
        loop {
            let next_offer = offers.peek().map(|o| Time::from_millis(o.0));
            let now = match (l.poll_timeout(), next_offer) {
                (Some(a), Some(b)) if b <= a => b,
                (Some(a), _) => a,
                (None, Some(b)) => b,
                (None, None) => break,
            };
            while offers.peek().is_some_and(|o| Time::from_millis(o.0) <= now) {
                let &(_, uid, size) = offers.next().unwrap();
                l.enqueue(now, pkt(uid, size));
            }
            while let Some(d) = l.poll_deliver(now) {
                if let Delivery::Arrived(p) = d {
                    out.push((now.as_nanos() / 1_000_000, p.uid));
                }
            }
        }
        out
    }

    /// The trace-driven direction end to end (2 ms propagation): one packet
    /// per opportunity, a packet spanning opportunities, the rest of an
    /// opportunity used by a queued packet and lost by a later one, the
    /// queue seen by the AQM holding packets until their opportunity.
    #[test]
    fn trace_driven_direction() {
        let mut l = traced(&[10, 20, 30, 40, 50], 1500, false, 100);
        let got = drive(
            &mut l,
            &[
                (0, 1, 1500),
                (0, 2, 1500),
                (0, 3, 1000),
                (0, 4, 400),
                (31, 5, 100),
            ],
        );
        // 1 at 10, 2 at 20, 3 at 30 (500 B left), 4 in those 500 B at 30;
        // 5 arrives at 31 (the rest of 30 ms is lost): leaves at 40.
        assert_eq!(got, vec![(12, 1), (22, 2), (32, 3), (32, 4), (42, 5)]);
        // A 3000-byte packet spans two opportunities; wrap-around after 50 ms.
        let mut l = traced(&[10, 20, 30, 40, 50], 1500, false, 100);
        let got = drive(&mut l, &[(45, 1, 3000), (45, 2, 1500)]);
        assert_eq!(got, vec![(62, 1), (72, 2)]);
        // Packets wait in the queue (not in the transmitter) for their opportunity.
        let mut l = traced(&[10, 20], 1500, false, 100);
        l.enqueue(Time::from_millis(1), pkt(1, 1500));
        l.enqueue(Time::from_millis(2), pkt(2, 1500));
        assert_eq!(l.queue().len(), 2);
        assert_eq!(l.poll_timeout(), Some(Time::from_millis(10)));
        assert!(l.poll_deliver(Time::from_millis(10)).is_none());
        assert_eq!(l.queue().len(), 1);
        assert_eq!(l.poll_timeout(), Some(Time::from_millis(12)));
    }

    /// Played once, the direction stops after the trace: packets stay in
    /// the queue (and overflow it), nothing is delivered, nothing panics.
    #[test]
    fn trace_played_once_stops() {
        let mut l = traced(&[10, 20], 1500, true, 3);
        let offers: Vec<(u64, u64, u32)> = (0..8).map(|i| (i, i, 1500)).collect();
        let got = drive(&mut l, &offers);
        assert_eq!(got, vec![(12, 0), (22, 1)]);
        assert_eq!(l.queue().len(), 1);
        assert_eq!(l.poll_timeout(), None);
        assert_eq!(l.in_transit(), 1);
    }

    /// A rate schedule: 1000-byte packets take 1 ms at 8 Mbit/s, 4 ms at
    /// 2 Mbit/s from 2 ms on; the packet that starts at 2 ms is the first
    /// sent at the new rate (the one in transmission keeps its rate).
    #[test]
    fn rate_schedule_applies_at_transmission_start() {
        let mut l = link(8_000_000, 0, 100);
        l.cfg.schedule = vec![
            (Time::from_millis(2), 2_000_000),
            (Time::from_millis(30), 8_000_000),
        ];
        l.steady = l.steady_now();
        for i in 0..4 {
            l.enqueue(Time::ZERO, pkt(i, 1000));
        }
        let mut arrivals = Vec::new();
        while let Some(t) = l.poll_timeout() {
            while let Some(Delivery::Arrived(p)) = l.poll_deliver(t) {
                arrivals.push((t, p.uid));
            }
        }
        let ms = Time::from_millis;
        assert_eq!(
            arrivals,
            vec![(ms(1), 0), (ms(2), 1), (ms(6), 2), (ms(10), 3)]
        );
        // After 30 ms the rate is back at 8 Mbit/s.
        l.enqueue(ms(40), pkt(9, 1000));
        assert_eq!(l.poll_timeout(), Some(ms(41)));
    }

    #[test]
    fn immediate_rate_changes_apply_mid_packet() {
        let mut l = link(8_000_000, 0, 100);
        l.cfg.immediate = true;
        let us = Time::from_micros;
        l.cfg.schedule = vec![(us(1500), 2_000_000), (us(30_000), 8_000_000)];
        l.steady = l.steady_now();
        for i in 0..3 {
            l.enqueue(Time::ZERO, pkt(i, 1000));
        }
        let mut arrivals = Vec::new();
        while let Some(t) = l.poll_timeout() {
            while let Some(Delivery::Arrived(p)) = l.poll_deliver(t) {
                arrivals.push((t, p.uid));
            }
        }
        // 1 ms at 8 Mbit/s; then 4000 bits at 8 and 4000 at 2 Mbit/s; then 4 ms.
        assert_eq!(arrivals, vec![(us(1000), 0), (us(3500), 1), (us(7500), 2)]);
        // Across the step back up: 2000 bits at 2 Mbit/s, 6000 at 8 Mbit/s.
        l.enqueue(us(29_000), pkt(9, 1000));
        assert_eq!(l.poll_timeout(), Some(us(30_750)));
    }

    #[test]
    fn rate_schedule_keys_and_errors() {
        let base =
            |extra: &str| -> String { format!("a = \"A\"\nb = \"B\"\ndelay = \"1ms\"\n{extra}") };
        let cfg = |t: &str| -> Result<()> {
            let c: WiredLinkConfig =
                crate::config::deserialize(toml::Deserializer::parse(t).unwrap())?;
            c.validate()
        };
        let ok = base("rate_schedule = [{ at = \"0s\", rate = \"10Mbit\" }, { at = \"5s\", rate = \"1Mbit\" }]");
        assert!(cfg(&ok).is_ok());
        let both = base("rate = \"1Mbit\"\nrate_schedule = [{ at = \"0s\", rate = \"10Mbit\" }]");
        assert_eq!(cfg(&both).unwrap_err().path, "rate_schedule");
        let late = base("rate_schedule = [{ at = \"1s\", rate = \"10Mbit\" }]");
        assert_eq!(cfg(&late).unwrap_err().path, "rate_schedule[0].at");
        let back = base(
            "rate_schedule = [{ at = \"0s\", rate = \"10Mbit\" }, { at = \"5s\", rate = \"1Mbit\" }, { at = \"2s\", rate = \"2Mbit\" }]",
        );
        assert_eq!(cfg(&back).unwrap_err().path, "rate_schedule[2].at");
        let own =
            base("rate = \"1Mbit\"\nab = { rate_schedule = [{ at = \"0s\", rate = \"10Mbit\" }] }");
        assert!(
            cfg(&own).is_ok(),
            "a direction's schedule replaces the link's rate"
        );
        let own_both = base(
            "rate = \"1Mbit\"\nab = { rate = \"2Mbit\", rate_schedule = [{ at = \"0s\", rate = \"10Mbit\" }] }",
        );
        assert_eq!(cfg(&own_both).unwrap_err().path, "ab.rate_schedule");
        let empty = base("rate_schedule = []");
        assert_eq!(cfg(&empty).unwrap_err().path, "rate_schedule");
    }

    #[test]
    fn framing_overhead_costs_time() {
        // 998 IP bytes + 2 framing bytes at 8 Mbit/s = exactly 1 ms.
        let q = Queue::new(Limit::Packets(10), Box::new(DropTail), Rng::stream(1, "q"));
        let cfg = WiredConfig {
            schedule: Vec::new(),
            rate_bps: 8_000_000,
            delay: Time::ZERO,
            overhead_bytes: 2,
            trace: None,
            immediate: false,
        };
        let mut l = WiredDirection::new(cfg, q, Box::new(Perfect));
        assert!(l.enqueue(Time::ZERO, pkt(0, 998)).is_none());
        assert_eq!(l.poll_timeout(), Some(Time::from_millis(1)));
        assert_eq!(l.stats().tx_bytes, 998, "throughput counts IP bytes");
    }

    #[test]
    fn queue_drains_between_touches() {
        let mut l = link(8_000_000, 0, 100);
        for i in 0..5 {
            assert!(l.enqueue(Time::ZERO, pkt(i, 1000)).is_none());
        }
        assert_eq!(l.queue().len(), 4);
        // At 2.5 ms three transmissions have started (0, 1 ms, 2 ms).
        assert!(l.enqueue(Time::from_micros(2500), pkt(9, 1000)).is_none());
        assert_eq!(l.queue().len(), 3);
    }

    #[test]
    fn overflow_drops() {
        let mut l = link(8_000_000, 0, 2);
        assert!(l.enqueue(Time::ZERO, pkt(0, 1000)).is_none()); // transmitting
        assert!(l.enqueue(Time::ZERO, pkt(1, 1000)).is_none());
        assert!(l.enqueue(Time::ZERO, pkt(2, 1000)).is_none());
        let err = l.enqueue(Time::ZERO, pkt(3, 1000)).unwrap();
        assert_eq!(err.1, DropCause::Overflow);
    }

    #[test]
    fn random_loss_rate() {
        let q = Queue::new(
            Limit::Packets(100_000),
            Box::new(DropTail),
            Rng::stream(1, "q"),
        );
        let mut l = WiredDirection::new(
            WiredConfig {
                schedule: Vec::new(),
                rate_bps: 1_000_000_000,
                delay: Time::ZERO,
                overhead_bytes: 0,
                trace: None,
                immediate: false,
            },
            q,
            Box::new(Bernoulli::new(0.1, Rng::stream(3, "l"))),
        );
        let n = 20_000;
        let mut lost = 0;
        for i in 0..n {
            let now = Time::from_micros(i * 10);
            assert!(l.enqueue(now, pkt(i, 100)).is_none());
            while let Some(d) = l.poll_deliver(now + Time::from_micros(5)) {
                if matches!(d, Delivery::Lost(..)) {
                    lost += 1;
                }
            }
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.1).abs() < 0.01, "{rate}");
    }
}

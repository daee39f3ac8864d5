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

use schemars::JsonSchema;
use serde::Deserialize;

use super::fec::{Attempt, FecConfig, FecLink, FecState, FragmentErasure, LinkFecConfig};
use super::{check_schedule_times, pick, Delivery, Dir, Link, LinkKind, LinkStats};
use crate::aqm::{DropCause, Occupancy, Queue, QueueConfig};
use crate::channel::{Channel, ChannelConfig, Perfect};
use crate::config::{check_range, join, Bytes, ConfigError, Probability, Rate, Result};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Time;

/// Parameters of a wired link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct WiredConfig {
    /// Transmission rate, bit/s (> 0); with a schedule, the rate from time 0.
    pub rate_bps: u64,
    /// Later rate changes `(at, bit/s)`, in time order (empty: constant rate).
    /// A packet is sent at the rate in force when its transmission starts.
    pub schedule: Vec<(Time, u64)>,
    /// One-way propagation delay.
    pub delay: Time,
    /// Link-layer framing bytes added to every packet on the wire (PPP 2,
    /// Ethernet 38 with preamble and gap); they cost transmission time only.
    pub overhead_bytes: u32,
}

/// One direction of a wired link (a sans-IO model of its own).
#[derive(Debug)]
pub struct WiredDirection {
    cfg: WiredConfig,
    queue: Queue,
    channel: Box<dyn Channel>,
    /// When the transmitter finishes the packet it is sending (≤ now: idle).
    busy_until: Time,
    /// Packets on the wire: (arrival time at the far end, packet, lost, FEC attempt).
    wire: VecDeque<(Time, Packet, bool, Attempt)>,
    stats: LinkStats,
    /// Link-level FEC / hybrid FEC-ARQ, if configured (`docs/models/ll-fec.md`).
    fec: Option<Box<FecState>>,
    /// The rate in force and the index of the next step of `cfg.schedule`.
    rate_bps: u64,
    next_step: usize,
}

impl WiredDirection {
    /// A link direction with `queue` in front of it; `channel` decides which
    /// packets are lost in transit (each packet is one unit, in the channel
    /// slot in which its transmission starts).
    pub fn new(cfg: WiredConfig, queue: Queue, channel: Box<dyn Channel>) -> WiredDirection {
        WiredDirection {
            rate_bps: cfg.rate_bps,
            next_step: 0,
            cfg,
            queue,
            channel,
            busy_until: Time::ZERO,
            wire: VecDeque::new(),
            stats: LinkStats::default(),
            fec: None,
        }
    }

    /// A link direction whose packets are protected by link-level FEC (and
    /// ARQ when `fec.persistence > 0`); `rng` draws fragment erasures when
    /// `fec.erasure` converts a packet erasure rate, else `channel` erases
    /// each fragment. Framing `overhead_bytes` are paid per fragment.
    ///
    /// # Panics
    /// If `fec` is invalid ([`FecConfig::check`]).
    pub fn with_fec(
        cfg: WiredConfig,
        queue: Queue,
        channel: Box<dyn Channel>,
        fec: FecConfig,
        rng: Rng,
    ) -> WiredDirection {
        let mut d = WiredDirection::new(cfg, queue, channel);
        d.fec = Some(Box::new(FecState::new(fec, rng)));
        d.stats.fec = Some(Default::default());
        d
    }

    /// Start the transmission of `pkt` at `start`: attempt `retry` of a
    /// packet already sent (seq, attempt), or a first transmission.
    fn transmit(&mut self, start: Time, pkt: Packet, retry: Option<(u64, u32)>) {
        while let Some(&(at, bps)) = self.cfg.schedule.get(self.next_step) {
            if at > start {
                break;
            }
            self.rate_bps = bps;
            self.next_step += 1;
        }
        let rate = self.rate_bps;
        let size = u64::from(pkt.size());
        let (end, lost, att) = match self.fec.as_deref_mut() {
            None => {
                let wire = size + u64::from(self.cfg.overhead_bytes);
                self.channel.advance(start);
                let lost = self.channel.unit_error();
                let att = Attempt {
                    seq: 0,
                    attempt: 0,
                    erased: 0,
                };
                (start + Time::tx_time(wire, rate), lost, att)
            }
            Some(f) => {
                let frag = u64::from(f.cfg.fragment_bytes(pkt.size()));
                let frag_time = Time::tx_time(frag + u64::from(self.cfg.overhead_bytes), rate);
                let (seq, attempt) = retry.unwrap_or_else(|| (f.first_seq(), 0));
                let (end, erased) = f.send_block(start, frag_time, &pkt, self.channel.as_mut());
                let att = Attempt {
                    seq,
                    attempt,
                    erased,
                };
                (end, false, att)
            }
        };
        self.busy_until = end;
        if retry.is_none() {
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += size;
        }
        self.wire.push_back((end + self.cfg.delay, pkt, lost, att));
        if let Some(f) = &self.fec {
            self.stats.fec = Some(f.stats.clone());
        }
    }

    /// Start every transmission that begins by `now`: link retransmissions
    /// first (once their feedback has arrived), then queued packets.
    fn advance(&mut self, now: Time) {
        loop {
            let t0 = self.busy_until;
            let ready = self.fec.as_ref().and_then(|f| f.retx_ready());
            let start = match ready {
                Some(r) if r <= t0 && t0 <= now => t0,
                _ if t0 <= now && !self.queue.is_empty() => {
                    if let Some(p) = self.queue.dequeue(t0) {
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
            self.transmit(start, p, Some((seq, a)));
        }
    }
}

impl WiredDirection {
    /// Offer `pkt` at `now`; returns the packet discarded because of it, if any.
    pub fn enqueue(&mut self, now: Time, pkt: Packet) -> Option<(Packet, DropCause)> {
        self.advance(now);
        let dropped = self.queue.enqueue(now, pkt);
        if self.busy_until <= now {
            // Idle transmitter: the packet leaves at once (it was queued so the
            // AQM saw it arrive, and leaves with zero sojourn time).
            if let Some(p) = self.queue.dequeue(now) {
                self.transmit(now, p, None);
            }
        }
        dropped
    }

    /// The next arrival at the far end (or, with link ARQ, the moment an idle
    /// transmitter starts a retransmission).
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.queue.dropped_waiting() > 0 {
            // Discarded at dequeue by the AQM: report them at once.
            return Some(Time::ZERO);
        }
        let wire = self.wire.front().map(|w| w.0);
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

    /// The next packet that reached the far end by `now`.
    pub fn poll_deliver(&mut self, now: Time) -> Option<Delivery> {
        if self.fec.is_none() {
            self.advance(now);
            if let Some((p, c)) = self.queue.take_dropped() {
                return Some(Delivery::Lost(p, c));
            }
            let &(t, pkt, lost, _) = self.wire.front()?;
            if t > now {
                return None;
            }
            self.wire.pop_front();
            return Some(self.count(if lost {
                Delivery::Lost(pkt, DropCause::LinkLoss)
            } else {
                Delivery::Arrived(pkt)
            }));
        }
        loop {
            if let Some((p, c)) = self.queue.take_dropped() {
                return Some(Delivery::Lost(p, c));
            }
            if let Some(d) = self.fec.as_mut().and_then(|f| f.pop_out()) {
                return Some(self.count(d));
            }
            match self.wire.front() {
                Some(&(t, pkt, _, att)) if t <= now => {
                    // Transmissions that start before this arrival go first;
                    // its feedback can only affect later ones.
                    self.advance(t);
                    self.wire.pop_front();
                    if let Some(f) = self.fec.as_mut() {
                        f.on_arrival(t, pkt, att);
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

    /// Count a delivery in the link's counters (and copy the FEC counters).
    fn count(&mut self, d: Delivery) -> Delivery {
        match d {
            Delivery::Lost(..) => self.stats.lost += 1,
            Delivery::Arrived(p) => {
                self.stats.rx_packets += 1;
                self.stats.rx_bytes += u64::from(p.size());
            }
        }
        if let Some(f) = &self.fec {
            self.stats.fec = Some(f.stats.clone());
        }
        d
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
        self.queue.len()
            + self.queue.dropped_waiting()
            + self.wire.len()
            + self.fec.as_ref().map_or(0, |f| f.held())
    }

    /// Counters of the FEC layer (None without FEC).
    pub fn fec_stats(&self) -> Option<&super::fec::FecStats> {
        self.fec.as_ref().map(|f| &f.stats)
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

    fn poll_timeout(&self) -> Option<Time> {
        match (self.dirs[0].poll_timeout(), self.dirs[1].poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn poll_deliver(&mut self, now: Time) -> Option<(Dir, Delivery)> {
        for d in Dir::BOTH {
            if let Some(x) = self.dirs[d.index()].poll_deliver(now) {
                return Some((d, x));
            }
        }
        None
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
        }
    };
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

    /// The settings of direction `key` (`"ab"` or `"ba"`), resolved.
    fn plan(&self, key: &'static str) -> Result<Half<'_>> {
        static NONE: WiredDirectionConfig = WiredDirectionConfig {
            rate: None,
            rate_schedule: None,
            delay: None,
            loss: None,
            overhead: None,
            channel: None,
            queue: None,
            fec: None,
        };
        let own = match key {
            "ab" => self.ab.as_ref(),
            _ => self.ba.as_ref(),
        }
        .unwrap_or(&NONE);
        // `rate` and `rate_schedule` are one setting: a direction that gives
        // either replaces the link's, and one level may not give both.
        let (rate, steps, sp) = if own.rate.is_some() || own.rate_schedule.is_some() {
            (
                own.rate.as_ref(),
                own.rate_schedule.as_ref(),
                join(key, "rate_schedule"),
            )
        } else {
            (
                self.rate.as_ref(),
                self.rate_schedule.as_ref(),
                "rate_schedule".to_string(),
            )
        };
        let (rate, schedule) = match (rate, steps) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::at_key(
                    sp,
                    "give either `rate` or `rate_schedule`, not both",
                ))
            }
            (Some(r), None) => (*r, Vec::new()),
            (None, Some(steps)) => {
                let paths: Vec<String> = (0..steps.len()).map(|i| format!("{sp}[{i}]")).collect();
                if steps.is_empty() {
                    return Err(ConfigError::at_key(
                        sp,
                        "is empty; give at least the rate at \"0s\"",
                    ));
                }
                check_schedule_times(steps.iter().zip(&paths).map(|(st, p)| (st.at, p.as_str())))?;
                let later = steps[1..].iter().map(|st| (st.at, st.rate.bps())).collect();
                (steps[0].rate, later)
            }
            (None, None) => {
                return Err(ConfigError::at_key(
                    "rate",
                    "missing; every link direction needs a rate, e.g. rate = \"10Mbit\" (or a rate_schedule)",
                ))
            }
        };
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
        let (fec, fp) = pick(&own.fec, &self.fec, key, "fec");
        let fec = match fec {
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
                rate_bps: rate.bps(),
                schedule,
                delay,
                overhead_bytes: overhead as u32,
            },
            queue,
            channel,
            fec,
        })
    }
}

/// One direction's settings, resolved and checked.
struct Half<'a> {
    wired: WiredConfig,
    queue: Option<&'a QueueConfig>,
    channel: Option<Cow<'a, ChannelConfig>>,
    fec: Option<FecConfig>,
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
            None => WiredDirection::new(self.wired, queue, channel),
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

    fn build(&self, a: &str, b: &str, seed: u64) -> Result<Box<dyn Link>> {
        let ab = self.plan("ab")?.build(&format!("{a}->{b}"), seed)?;
        let ba = self.plan("ba")?.build(&format!("{b}->{a}"), seed)?;
        Ok(Box::new(WiredLink::new(ab, ba)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{DropTail, Limit};
    use crate::channel::{Bernoulli, Perfect};
    use crate::rng::Rng;

    fn link(rate: u64, delay_ms: u64, limit: u32) -> WiredDirection {
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
            },
            q,
            Box::new(Perfect),
        )
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

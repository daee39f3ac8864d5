//! Link-level FEC and hybrid FEC/ARQ on a wired link direction (the
//! comparison schemes of the LT-TCP paper, seed 002 §3.3, after Barakat &
//! Altman 2002 and Barakat & Al Fawal 2004).
//!
//! Every IP packet is split into `k` data fragments of `⌈size/k⌉` bytes plus
//! a per-fragment header, and `n − k` repair fragments of the same size are
//! added (a shortened Reed–Solomon block, [`crate::fec`]). The `n` fragments
//! are sent back to back, each one erased independently by the link's
//! channel (one channel unit per fragment, drawn in the slot in which the
//! fragment starts) or, with [`FragmentErasure::Packet`], with the fragment
//! rate converted from a packet erasure rate. The packet is decoded iff at
//! least `k` fragments arrive.
//!
//! Hybrid FEC/ARQ-SR (Barakat & Al Fawal): when a block does not decode, the
//! receiver asks for the whole packet again (a fresh block of `n` fragments;
//! fragments of failed attempts are discarded, as in their model), up to
//! `persistence` retransmissions. The request reaches the sender
//! `feedback_delay` after the last fragment of the failed attempt arrived;
//! retransmissions wait in a link-level buffer (not the IP queue, so they do
//! not count towards the AQM) and go before queued packets. Packets are
//! delivered to IP in their order of first transmission when `in_order` is
//! set (the default, as in their model), else as soon as they decode.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::{Delivery, Place};
use crate::aqm::DropCause;
use crate::channel::{Channel, ChannelConfig};
use crate::config::kind::tagged_enum;
use crate::config::units::schema;
use crate::config::{check_range, quoted, to_serde, Bytes, ConfigError, Result};
use crate::fec::{decodable, matched_repair, unit_erasure, RsCode, RS_MAX_N};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Time;

/// How fragments are erased.
#[derive(Clone, Debug, PartialEq)]
pub enum FragmentErasure {
    /// Each fragment is one unit of the link's channel (any channel model).
    Channel,
    /// Independent bit errors: the channel erases a packet of `packet_bytes`
    /// with probability `per`; a fragment of `s` bytes (its header included)
    /// is erased with `1 − (1 − per)^(s / packet_bytes)`
    /// ([`crate::fec::unit_erasure`]).
    Packet {
        /// Packet erasure rate, in [0, 1].
        per: f64,
        /// Size of the packet to which `per` refers, bytes (> 0).
        packet_bytes: u32,
    },
}

/// How the sender of a hybrid FEC/ARQ direction learns that an attempt did
/// not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArqFeedback {
    /// A NACK reaches the sender this long after the last fragment of the
    /// failed attempt arrived at the far end (one link round trip plus this
    /// delay per retry).
    Nack(Time),
    /// The sender knows at the end of the attempt's transmission, without
    /// delay, error or any frame on the reverse channel, and may resend at
    /// once: the assumption of analytic ARQ models (retransmission in the next
    /// slot, as seed 001's Markov model) and of link models that draw a
    /// packet's attempts back to back.
    Ideal,
}

/// Parameters of link-level FEC on one link direction.
#[derive(Clone, Debug, PartialEq)]
pub struct FecConfig {
    /// Fragments per packet (data + repair), `k ≤ n ≤ 255`. `n = k` means
    /// fragmentation without repair (a "matched" code at zero erasure rate).
    pub n: u32,
    /// Data fragments per packet, ≥ 1.
    pub k: u32,
    /// Header bytes added to every fragment.
    pub fragment_header: u32,
    /// Retransmissions of a packet whose block did not decode (0: pure FEC).
    pub persistence: u32,
    /// How the sender learns that an attempt did not decode.
    pub feedback: ArqFeedback,
    /// Deliver packets to IP in order of first transmission.
    pub in_order: bool,
    /// How fragments are erased.
    pub erasure: FragmentErasure,
}

impl FecConfig {
    /// Checks the invariants the scenario layer validates with key paths.
    pub fn check(&self) -> Result<(), String> {
        if self.k < 1 || self.k > self.n || self.n > crate::fec::RS_MAX_N {
            return Err(format!(
                "n = {}, k = {}: allowed 1 ≤ k ≤ n ≤ {}",
                self.n,
                self.k,
                crate::fec::RS_MAX_N
            ));
        }
        if let FragmentErasure::Packet { per, packet_bytes } = self.erasure {
            if !(0.0..=1.0).contains(&per) || packet_bytes == 0 {
                return Err(format!(
                    "per = {per} at {packet_bytes} bytes: allowed 0 ≤ per ≤ 1, size > 0"
                ));
            }
        }
        Ok(())
    }

    /// Bytes of one fragment of a packet of `size` IP bytes (header included).
    pub fn fragment_bytes(&self, size: u32) -> u32 {
        size.div_ceil(self.k) + self.fragment_header
    }
}

/// Counters of the FEC layer of one link direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FecStats {
    /// Fragments sent (all attempts, data and repair).
    pub fragments_sent: u64,
    /// Repair fragments sent.
    pub repair_fragments_sent: u64,
    /// Fragments erased by the channel.
    pub fragments_erased: u64,
    /// Link-level retransmissions of whole packets.
    pub retransmissions: u64,
    /// Packets decoded at their first attempt although fragments were erased.
    pub recovered_by_fec: u64,
    /// Packets decoded at a retransmission.
    pub recovered_by_arq: u64,
    /// Packets lost: no attempt decoded (after `persistence` retransmissions).
    pub lost_after_persistence: u64,
}

impl FecStats {
    /// Repair fragments over all fragments sent (0 before any).
    pub fn overhead(&self) -> f64 {
        if self.fragments_sent == 0 {
            0.0
        } else {
            self.repair_fragments_sent as f64 / self.fragments_sent as f64
        }
    }
}

/// One attempt of a packet on the wire.
#[derive(Clone, Copy, Debug)]
struct Attempt {
    /// Link sequence number (order of first transmission).
    pub seq: u64,
    /// 0 for the first transmission, i for the i-th retransmission.
    pub attempt: u32,
    /// Fragments of this attempt erased.
    pub erased: u32,
    /// Already handed back for retransmission ([`ArqFeedback::Ideal`]): its
    /// arrival only ends its time on the wire.
    pub resent: bool,
}

/// The FEC/ARQ state of a link direction.
#[derive(Debug)]
pub(super) struct FecState {
    pub cfg: FecConfig,
    pub stats: FecStats,
    rng: Rng,
    next_seq: u64,
    /// Attempts on the wire, in the order they were sent (the direction's
    /// wire is FIFO, so they arrive in this order).
    on_wire: VecDeque<Attempt>,
    /// Retransmissions waiting for the transmitter: (ready at, packet, seq, attempt).
    retx: VecDeque<(Time, Packet, u64, u32)>,
    /// In-order delivery: first-transmitted packets by seq, `Some` once resolved.
    pending: BTreeMap<u64, Option<Delivery>>,
    /// Resolved packets ready to hand to IP.
    out: VecDeque<Delivery>,
    /// Entries of `pending` that are resolved (waiting for an earlier one).
    waiting: usize,
    /// Attempts on the wire already resent ([`ArqFeedback::Ideal`]): the
    /// wire holds a copy of a packet that is also in `retx` or beyond.
    resent_on_wire: usize,
}

impl FecState {
    /// State for `cfg`; `rng` draws fragment erasures in
    /// [`FragmentErasure::Packet`] mode.
    pub fn new(cfg: FecConfig, rng: Rng) -> FecState {
        if let Err(e) = cfg.check() {
            panic!("invalid link FEC configuration: {e}");
        }
        FecState {
            cfg,
            stats: FecStats::default(),
            rng,
            next_seq: 0,
            on_wire: VecDeque::new(),
            retx: VecDeque::new(),
            pending: BTreeMap::new(),
            out: VecDeque::new(),
            waiting: 0,
            resent_on_wire: 0,
        }
    }

    /// When the oldest waiting retransmission may start.
    pub fn retx_ready(&self) -> Option<Time> {
        self.retx.front().map(|r| r.0)
    }

    /// Take the oldest waiting retransmission: (packet, seq, attempt).
    pub fn pop_retx(&mut self) -> Option<(Packet, u64, u32)> {
        self.retx.pop_front().map(|(_, p, s, a)| (p, s, a))
    }

    /// A new link sequence number for a packet's first transmission.
    pub fn first_seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        if self.cfg.in_order {
            self.pending.insert(s, None);
        }
        s
    }

    /// Send the `n` fragments of `pkt` (link sequence number `seq`, attempt
    /// `attempt`) from `start`, each of wire time `frag_time`, erasing them
    /// with `channel` or the converted rate. Returns the end of the
    /// transmission; the attempt waits for [`FecState::on_arrival`].
    pub fn send_block(
        &mut self,
        start: Time,
        frag_time: Time,
        pkt: &Packet,
        (seq, attempt): (u64, u32),
        channel: &mut dyn Channel,
    ) -> Time {
        let n = self.cfg.n;
        let q = match self.cfg.erasure {
            FragmentErasure::Channel => None,
            FragmentErasure::Packet { per, packet_bytes } => Some(unit_erasure(
                per,
                packet_bytes,
                self.cfg.fragment_bytes(pkt.size()),
            )),
        };
        let mut erased = 0;
        for i in 0..n {
            let lost = match q {
                Some(q) => self.rng.bernoulli(q),
                None => {
                    channel.advance(start + Time(frag_time.0 * u64::from(i)));
                    channel.unit_error()
                }
            };
            erased += u32::from(lost);
        }
        self.stats.fragments_sent += u64::from(n);
        self.stats.repair_fragments_sent += u64::from(n - self.cfg.k);
        self.stats.fragments_erased += u64::from(erased);
        let end = start + Time(frag_time.0 * u64::from(n));
        let resent = self.cfg.feedback == ArqFeedback::Ideal
            && !decodable(n - erased, self.cfg.k)
            && attempt < self.cfg.persistence;
        if resent {
            self.resent_on_wire += 1;
            self.stats.retransmissions += 1;
            self.retx.push_back((end, *pkt, seq, attempt + 1));
        }
        self.on_wire.push_back(Attempt {
            seq,
            attempt,
            erased,
            resent,
        });
        end
    }

    /// The last fragment of the oldest attempt on the wire, one of `pkt`,
    /// reached the far end at `t`: decode, or ask for a retransmission, or
    /// give the packet up.
    pub fn on_arrival(&mut self, t: Time, pkt: Packet) {
        let a = self
            .on_wire
            .pop_front()
            .expect("an arrival on a link FEC direction matches an attempt on the wire");
        let received = self.cfg.n - a.erased;
        if a.resent {
            // Its retransmission was queued when it was sent.
            self.resent_on_wire -= 1;
        } else if decodable(received, self.cfg.k) {
            if a.attempt > 0 {
                self.stats.recovered_by_arq += 1;
            } else if a.erased > 0 {
                self.stats.recovered_by_fec += 1;
            }
            self.resolve(a.seq, Delivery::Arrived(pkt));
        } else if let (ArqFeedback::Nack(delay), true) =
            (self.cfg.feedback, a.attempt < self.cfg.persistence)
        {
            self.stats.retransmissions += 1;
            self.retx.push_back((t + delay, pkt, a.seq, a.attempt + 1));
        } else {
            self.stats.lost_after_persistence += 1;
            self.resolve(a.seq, Delivery::Lost(pkt, DropCause::LinkLoss));
        }
    }

    fn resolve(&mut self, seq: u64, d: Delivery) {
        if !self.cfg.in_order {
            self.out.push_back(d);
            return;
        }
        if let Some(slot) = self.pending.get_mut(&seq) {
            *slot = Some(d);
            self.waiting += 1;
        }
        while let Some(mut e) = self.pending.first_entry() {
            match e.get_mut().take() {
                Some(d) => {
                    e.remove();
                    self.waiting -= 1;
                    self.out.push_back(d);
                }
                None => break,
            }
        }
    }

    /// The next packet ready for IP.
    pub fn pop_out(&mut self) -> Option<Delivery> {
        self.out.pop_front()
    }

    /// Packets held by the FEC layer: waiting for retransmission, resolved
    /// but waiting for an earlier one (in-order delivery), or ready for IP.
    pub fn held(&self) -> usize {
        self.retx.len() + self.waiting + self.out.len()
    }

    /// Visit the packets the FEC layer holds off the wire: waiting for a
    /// retransmission ([`Place::Arq`]), resolved but waiting for an earlier
    /// one or for IP ([`Place::Settled`]).
    pub fn for_each_held(&self, f: &mut dyn FnMut(Place, &Packet)) {
        for (_, p, _, _) in &self.retx {
            f(Place::Arq, p);
        }
        let settled = self.pending.values().flatten().chain(&self.out);
        for d in settled {
            let (Delivery::Arrived(p) | Delivery::Lost(p, _)) = d;
            f(Place::Settled, p);
        }
    }

    /// For each attempt on the wire, in order: whether it is a copy of a
    /// packet already resent (counted where that is).
    pub fn wire_copies(&self) -> impl Iterator<Item = bool> + '_ {
        self.on_wire.iter().map(|a| a.resent)
    }

    /// Attempts on the wire that are copies of a packet already resent
    /// ([`ArqFeedback::Ideal`]), so counted elsewhere too.
    pub fn copies_on_wire(&self) -> usize {
        self.resent_on_wire
    }
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

tagged_enum! {
    /// Link-level FEC of a wired link direction, `fec = { scheme = "ll-fec",
    /// n = 10, matched_per = "link" }` (docs/models/ll-fec.md). Give `n` and
    /// `k`, or `matched_per` with one of them.
    pub enum LinkFecConfig: dyn FecScheme, "FEC", tag "scheme" {
        /// Pure FEC: n fragments per packet, k of them data; no retransmission.
        LlFec(LlFecConfig) = "ll-fec",
        /// FEC plus ARQ of the whole packet (Barakat & Al Fawal): default
        /// n = 10, k = 9, persistence 3.
        Hybrid(HybridFecConfig) = "hybrid",
    }
}

/// Declare a scheme's configuration: the code keys every scheme has, then its own.
macro_rules! fec_scheme_config {
    ($(#[$meta:meta])* $name:ident { $($own:tt)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Fragments per packet, data + repair (2..=255).
            #[schemars(range(min = 2, max = 255))]
            pub n: Option<u32>,
            /// Data fragments per packet (1 ≤ k < n).
            #[schemars(range(min = 1, max = 254))]
            pub k: Option<u32>,
            /// Choose the redundancy to match this packet erasure rate (0 ≤ per < 1),
            /// or "link" for the direction's own `loss` / channel mean; give `k` (n
            /// is chosen) or `n` (k is chosen), not both.
            pub matched_per: Option<MatchedPer>,
            /// How `loss` applies to fragments: "packet" (default: `loss` is the
            /// erasure rate of a `per_size` packet, converted for independent bit
            /// errors) or "fragment" (each fragment erased with probability `loss`).
            pub loss_unit: Option<LossUnit>,
            /// Packet size to which `loss` refers when loss_unit = "packet" (1 B to
            /// 65535 B). Default 500 B.
            pub per_size: Option<Bytes>,
            /// Header bytes added to each fragment (0 to 65535). Default 0.
            pub fragment_header: Option<Bytes>,
            $($own)*
        }

        impl $name {
            /// The code keys.
            pub fn settings(&self) -> CodeSettings {
                CodeSettings {
                    n: self.n,
                    k: self.k,
                    matched_per: self.matched_per,
                    loss_unit: self.loss_unit,
                    per_size: self.per_size,
                    fragment_header: self.fragment_header,
                }
            }
        }
    };
}

fec_scheme_config! {
    /// `scheme = "ll-fec"`: pure link-level FEC (give `n` and `k`, or `matched_per`
    /// with one of them).
    LlFecConfig {}
}

fec_scheme_config! {
    /// `scheme = "hybrid"`: FEC plus ARQ of the whole packet (default n = 10, k = 9).
    HybridFecConfig {
        /// Retransmissions of a packet whose block did not decode (0..=255). Default 3.
        #[schemars(range(max = 255))]
        pub persistence: Option<u32>,
        /// How the sender learns that an attempt failed: "nack" (default: a
        /// NACK from the far end, `feedback_delay` after the attempt's last
        /// fragment arrived there) or "ideal" (at the end of the attempt's
        /// transmission, at once: the retransmission follows it directly).
        pub feedback: Option<FeedbackKind>,
        /// With feedback = "nack": from the last fragment of a failed attempt
        /// to the retransmission's earliest start. Default: the direction's
        /// propagation delay.
        pub feedback_delay: Option<Time>,
        /// Deliver packets to IP in order of first transmission. Default true.
        pub in_order: Option<bool>,
    }
}

/// `feedback` of a hybrid FEC/ARQ direction ([`ArqFeedback`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackKind {
    /// A NACK from the far end.
    #[default]
    Nack,
    /// Known at the end of the attempt's transmission.
    Ideal,
}

/// A packet erasure rate to match the code to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MatchedPer {
    /// This rate, 0 ≤ per < 1.
    Rate(f64),
    /// The direction's own `loss`, or its channel's mean unit error rate.
    Link,
}

/// How `loss` applies to fragments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LossUnit {
    /// `loss` is the erasure rate of a `per_size` packet.
    #[default]
    Packet,
    /// Each fragment is erased with probability `loss`.
    Fragment,
}

/// The code settings both schemes share.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CodeSettings {
    /// `n`.
    pub n: Option<u32>,
    /// `k`.
    pub k: Option<u32>,
    /// `matched_per`.
    pub matched_per: Option<MatchedPer>,
    /// `loss_unit`.
    pub loss_unit: Option<LossUnit>,
    /// `per_size`.
    pub per_size: Option<Bytes>,
    /// `fragment_header`.
    pub fragment_header: Option<Bytes>,
}

/// What a FEC scheme's configuration provides.
pub trait FecScheme: fmt::Debug {
    /// The code settings.
    fn code(&self) -> CodeSettings;
    /// `(n, k)` when neither is given and nothing is matched.
    fn default_code(&self) -> Option<(u32, u32)>;
    /// Retransmissions of an undecodable packet.
    fn persistence(&self) -> u32;
    /// How the sender learns of a failed attempt, on a direction of
    /// propagation delay `link_delay`; an error names the key at fault.
    fn feedback(&self, link_delay: Time) -> Result<ArqFeedback>;
    /// In-order delivery to IP.
    fn in_order(&self) -> bool;
}

impl FecScheme for LlFecConfig {
    fn code(&self) -> CodeSettings {
        self.settings()
    }
    fn default_code(&self) -> Option<(u32, u32)> {
        None
    }
    fn persistence(&self) -> u32 {
        0
    }
    fn feedback(&self, link_delay: Time) -> Result<ArqFeedback> {
        Ok(ArqFeedback::Nack(link_delay))
    }
    fn in_order(&self) -> bool {
        true
    }
}

impl FecScheme for HybridFecConfig {
    fn code(&self) -> CodeSettings {
        self.settings()
    }
    fn default_code(&self) -> Option<(u32, u32)> {
        Some((10, 9))
    }
    fn persistence(&self) -> u32 {
        self.persistence.unwrap_or(3)
    }
    fn feedback(&self, link_delay: Time) -> Result<ArqFeedback> {
        match (self.feedback.unwrap_or_default(), self.feedback_delay) {
            (FeedbackKind::Nack, d) => Ok(ArqFeedback::Nack(d.unwrap_or(link_delay))),
            (FeedbackKind::Ideal, None) => Ok(ArqFeedback::Ideal),
            (FeedbackKind::Ideal, Some(_)) => Err(ConfigError::at_key(
                "feedback_delay",
                "applies to feedback = \"nack\"; with feedback = \"ideal\" the sender knows at once",
            )),
        }
    }
    fn in_order(&self) -> bool {
        self.in_order.unwrap_or(true)
    }
}

/// The link direction a FEC scheme protects.
#[derive(Clone, Copy, Debug)]
pub struct FecLink<'a> {
    /// The direction's `loss` (a Bernoulli packet erasure rate), if it has no channel.
    pub loss: Option<f64>,
    /// The direction's channel, if any (each fragment is one of its units).
    pub channel: Option<&'a ChannelConfig>,
    /// The direction's propagation delay (the default feedback delay).
    pub delay: Time,
}

/// `bytes` if within `lo..=hi`, else an error at `key`.
fn bytes_in(key: &str, v: Option<Bytes>, default: u32, lo: u64, hi: u64) -> Result<u32> {
    let Some(b) = v else { return Ok(default) };
    check_range(key, b.get(), lo, hi).map(|()| b.get() as u32)
}

impl LinkFecConfig {
    /// Check the keys that need no link (the code's limits, ranges); paths
    /// relative to the `fec` table. [`LinkFecConfig::resolve`] checks the rest.
    pub fn validate(&self) -> Result<()> {
        let link = FecLink {
            loss: None,
            channel: None,
            delay: Time::ZERO,
        };
        self.resolve(&link).map(|_| ())
    }

    /// The FEC parameters for direction `link`; error paths are relative to
    /// the `fec` table.
    pub fn resolve(&self, link: &FecLink) -> Result<FecConfig> {
        let s = self.model();
        let c = s.code();
        let fragment_header = bytes_in("fragment_header", c.fragment_header, 0, 0, 65_535)?;
        let per_size = bytes_in("per_size", c.per_size, 500, 1, 65_535)?;
        if link.channel.is_some() && c.loss_unit.is_some() {
            return Err(ConfigError::at_key(
                "loss_unit",
                "applies to `loss`; with a `channel` every fragment is one channel unit",
            ));
        }
        let per_unit = c.loss_unit.unwrap_or_default() == LossUnit::Packet;
        let link_per = match link.channel {
            None => link.loss.unwrap_or(0.0),
            Some(_) => 0.0,
        };
        let (n, k) = match c.matched_per {
            None => fixed_code(&c, s.default_code())?,
            Some(m) => {
                let (per, channel) = match (m, link.channel) {
                    (MatchedPer::Rate(per), _) => (per, false),
                    (MatchedPer::Link, None) => (link_per, false),
                    (MatchedPer::Link, Some(ch)) => (ch.mean_error_rate(), true),
                };
                if per >= 1.0 {
                    let why = if channel {
                        "the link's channel loses every unit; nothing to match"
                    } else {
                        "the link's `loss` is 1; allowed: 0 ≤ per < 1"
                    };
                    return Err(ConfigError::at_key("matched_per", why));
                }
                // With a channel, its mean unit error rate is already per fragment.
                let q_of = |k: u32| match (channel, per_unit) {
                    (false, true) => {
                        unit_erasure(per, per_size, per_size.div_ceil(k) + fragment_header)
                    }
                    _ => per,
                };
                matched_code(&c, per, q_of)?
            }
        };
        let persistence = s.persistence();
        check_range("persistence", persistence, 0, 255)?;
        let erasure = if per_unit && link.channel.is_none() {
            FragmentErasure::Packet {
                per: link_per,
                packet_bytes: per_size,
            }
        } else {
            FragmentErasure::Channel
        };
        let cfg = FecConfig {
            n,
            k,
            fragment_header,
            persistence,
            feedback: s.feedback(link.delay)?,
            in_order: s.in_order(),
            erasure,
        };
        cfg.check().map_err(|m| ConfigError::at_key("", m))?;
        Ok(cfg)
    }
}

/// `(n, k)` given (or defaulted) without matching.
fn fixed_code(c: &CodeSettings, default: Option<(u32, u32)>) -> Result<(u32, u32)> {
    let need = |key: &str| {
        ConfigError::at_key(
            key,
            "missing; give n and k, or matched_per with one of them",
        )
    };
    let (n, k) = match (c.n, c.k, default) {
        (Some(n), Some(k), _) => (n, k),
        (None, None, Some(d)) => d,
        (None, _, _) => return Err(need("n")),
        (_, None, _) => return Err(need("k")),
    };
    let key = if (2..=RS_MAX_N).contains(&n) {
        "k"
    } else {
        "n"
    };
    let code = RsCode::new(i64::from(n), i64::from(k)).map_err(|m| ConfigError::at_key(key, m))?;
    Ok((code.n(), code.k()))
}

/// `(n, k)` matched to packet erasure rate `per` (fragment erasure `q_of(k)`).
fn matched_code(c: &CodeSettings, per: f64, q_of: impl Fn(u32) -> f64) -> Result<(u32, u32)> {
    let max = u64::from(RS_MAX_N);
    match (c.n, c.k) {
        (Some(_), Some(_)) => Err(ConfigError::at_key(
            "n",
            "with matched_per give k (n is chosen) or n (k is chosen), not both",
        )),
        (None, None) => Err(ConfigError::at_key(
            "k",
            "missing; matched_per needs k (n is chosen) or n (k is chosen)",
        )),
        (None, Some(k)) => {
            check_range("k", k, 1, RS_MAX_N - 1)?;
            let q = q_of(k);
            match matched_repair(k, q).map(|r| u64::from(k) + u64::from(r)) {
                Some(n) if n <= max => Ok((n as u32, k)),
                _ => Err(ConfigError::at_key(
                    "matched_per",
                    format!(
                        "per {per} (fragment erasure {q:.4}) needs more than {RS_MAX_N} fragments with k = {k}; lower k or the erasure rate"
                    ),
                )),
            }
        }
        (Some(n), None) => {
            check_range("n", n, 2, RS_MAX_N)?;
            (1..=n)
                .rev()
                .find(|&k| {
                    matched_repair(k, q_of(k))
                        .is_some_and(|r| u64::from(k) + u64::from(r) <= u64::from(n))
                })
                .map(|k| (n, k))
                .ok_or_else(|| {
                    ConfigError::at_key(
                        "matched_per",
                        format!("per {per} cannot be matched with n = {n} fragments; raise n or lower the erasure rate"),
                    )
                })
        }
    }
}

impl<'de> Deserialize<'de> for MatchedPer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const ALLOWED: &str = "a packet erasure rate 0 ≤ per < 1, or \"link\"";
        impl<'de> Visitor<'de> for V {
            type Value = MatchedPer;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(ALLOWED)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MatchedPer, E> {
                if (0.0..1.0).contains(&v) {
                    Ok(MatchedPer::Rate(v))
                } else {
                    Err(to_serde(ConfigError::new(
                        "",
                        v.to_string(),
                        format!("is outside the matching domain; allowed: {ALLOWED}"),
                    )))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MatchedPer, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MatchedPer, E> {
                self.visit_f64(v as f64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MatchedPer, E> {
                if v == "link" {
                    return Ok(MatchedPer::Link);
                }
                Err(to_serde(ConfigError::new(
                    "",
                    quoted(v),
                    format!("is not allowed; write {ALLOWED}"),
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for MatchedPer {
    fn schema_name() -> Cow<'static, str> {
        "MatchedPer".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schema(serde_json::json!({
            "anyOf": [
                { "type": "number", "minimum": 0, "exclusiveMaximum": 1 },
                { "const": "link" },
            ],
        }))
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;

    fn fec(v: serde_json::Value) -> Result<LinkFecConfig> {
        crate::config::deserialize::<LinkFecConfig, _>(v).and_then(|f| f.validate().map(|()| f))
    }

    #[test]
    fn schemes_take_their_own_keys_with_their_paths() {
        use serde_json::json;
        assert!(fec(json!({"scheme": "hybrid"})).is_ok());
        let cases = [
            (json!({"scheme": "ll-fec"}), "n"),
            (json!({"scheme": "ll-fec", "n": 10, "k": 10}), "k"),
            (json!({"scheme": "ll-fec", "n": 256, "k": 9}), "n"),
            (
                json!({"scheme": "ll-fec", "n": 10, "k": 9, "persistence": 3}),
                "persistence",
            ),
            (
                json!({"scheme": "hybrid", "persistence": -1}),
                "persistence",
            ),
            (
                json!({"scheme": "hybrid", "matched_per": 1.5, "k": 9}),
                "matched_per",
            ),
            (json!({"scheme": "hybrid", "per_size": 0}), "per_size"),
            (json!({"scheme": "raptor"}), "scheme"),
        ];
        for (v, path) in cases {
            let e = fec(v.clone()).unwrap_err();
            assert_eq!(e.path, path, "{v}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{DropTail, Limit, Queue};
    use crate::channel::Bernoulli;
    use crate::link::{WiredConfig, WiredDirection};
    use crate::rng::Rng;
    use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest, ProptestConfig};

    /// A channel that erases fragments by a script (then none), logging
    /// the instants it was advanced to.
    #[derive(Debug, Default)]
    struct Script {
        errors: VecDeque<bool>,
        advanced: std::sync::Arc<std::sync::Mutex<Vec<Time>>>,
    }

    impl Channel for Script {
        fn advance(&mut self, now: Time) {
            self.advanced.lock().unwrap().push(now);
        }
        fn unit_error(&mut self) -> bool {
            self.errors.pop_front().unwrap_or(false)
        }
        fn is_bad(&self) -> bool {
            false
        }
        fn mean_error_rate(&self) -> f64 {
            0.0
        }
    }

    fn cfg(n: u32, k: u32, persistence: u32, feedback_ms: u64, in_order: bool) -> FecConfig {
        FecConfig {
            n,
            k,
            fragment_header: 0,
            persistence,
            feedback: ArqFeedback::Nack(Time::from_millis(feedback_ms)),
            in_order,
            erasure: FragmentErasure::Channel,
        }
    }

    /// 8 Mbit/s (1 byte per µs), 10 ms delay, scripted erasures.
    fn link(fec: FecConfig, script: &[bool]) -> WiredDirection {
        link_logged(fec, script, Default::default())
    }

    fn link_logged(
        fec: FecConfig,
        script: &[bool],
        log: std::sync::Arc<std::sync::Mutex<Vec<Time>>>,
    ) -> WiredDirection {
        let q = Queue::new(Limit::Packets(100), Box::new(DropTail), Rng::stream(1, "q"));
        let ch = Script {
            errors: script.iter().copied().collect(),
            advanced: log,
        };
        WiredDirection::with_fec(
            WiredConfig {
                schedule: Vec::new(),
                rate_bps: 8_000_000,
                delay: Time::from_millis(10),
                overhead_bytes: 0,
                trace: None,
                immediate: false,
            },
            q,
            Box::new(ch),
            fec,
            Rng::stream(1, "fec"),
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

    /// Drain the link by hand-stepped time: (time, uid, arrived).
    fn drain(l: &mut WiredDirection) -> Vec<(Time, u64, bool)> {
        let mut out = Vec::new();
        let mut now = Time::ZERO;
        while let Some(t) = l.poll_timeout() {
            assert!(t >= now, "time never goes backwards");
            now = t;
            while let Some(d) = l.poll_deliver(now) {
                match d {
                    Delivery::Arrived(p) => out.push((now, p.uid, true)),
                    Delivery::Lost(p, c) => {
                        assert_eq!(c, DropCause::LinkLoss);
                        out.push((now, p.uid, false));
                    }
                }
            }
        }
        assert_eq!(l.in_transit(), 0);
        out
    }

    fn us(x: u64) -> Time {
        Time::from_micros(x)
    }

    #[test]
    fn fragment_accounting_and_any_k_delivery() {
        // n = 4, k = 3: a 1000-byte packet makes 4 fragments of 334 bytes
        // (334 µs each at 8 Mbit/s): 1336 µs on the wire instead of 1000.
        // Packet 0 loses one fragment (decoded by FEC), packet 1 loses two
        // (lost), packet 2 loses none.
        let script = [false, true, false, false, true, false, true, false];
        let mut l = link(cfg(4, 3, 0, 0, true), &script);
        for i in 0..3 {
            assert!(l.enqueue(Time::ZERO, pkt(i, 1000)).is_none());
        }
        let got = drain(&mut l);
        assert_eq!(
            got,
            vec![
                (us(11_336), 0, true),
                (us(12_672), 1, false),
                (us(14_008), 2, true)
            ]
        );
        let f = l.fec_stats().unwrap();
        assert_eq!(f.fragments_sent, 12);
        assert_eq!(f.repair_fragments_sent, 3);
        assert_eq!(f.fragments_erased, 3);
        assert_eq!(f.recovered_by_fec, 1);
        assert_eq!(f.lost_after_persistence, 1);
        assert_eq!(f.retransmissions, 0);
        assert!((f.overhead() - 0.25).abs() < 1e-12);
        let s = l.stats();
        assert_eq!((s.tx_packets, s.rx_packets, s.lost), (3, 2, 1));
        assert_eq!(s.tx_bytes, 3000, "IP bytes, once per packet");
        assert_eq!(s.fec.as_ref(), Some(f));
    }

    #[test]
    fn each_fragment_sees_the_channel_at_its_own_start() {
        let log = std::sync::Arc::default();
        let mut l = link_logged(cfg(4, 3, 0, 0, true), &[], std::sync::Arc::clone(&log));
        assert!(l.enqueue(us(100), pkt(0, 1000)).is_none());
        let got = drain(&mut l);
        assert_eq!(got, vec![(us(11_436), 0, true)]);
        // Fragments start 334 µs apart, each drawn in its own channel slot.
        assert_eq!(
            *log.lock().unwrap(),
            vec![us(100), us(434), us(768), us(1102)]
        );
    }

    #[test]
    fn hybrid_retries_then_gives_up_after_persistence() {
        // n = 4, k = 3, persistence 2, feedback 5 ms. Packet 0 fails twice
        // and decodes at its 2nd retransmission; packet 1 fails all three
        // attempts and is lost. Packet 0's attempts: sent 0 (arrives
        // 11.336 ms), resent at 16.336 (after packet 1's first attempt,
        // which ended at 2.672), arrives 27.672; resent at 32.672 → 44.008.
        let fail = [true, true, false, false];
        let ok = [false; 4];
        let script: Vec<bool> = [fail, fail, fail, fail, ok, fail].concat();
        // Order of attempts on the wire: p0 a0, p1 a0, p0 a1, p1 a1, p0 a2, p1 a2.
        let mut l = link(cfg(4, 3, 2, 5, true), &script);
        assert!(l.enqueue(Time::ZERO, pkt(0, 1000)).is_none());
        assert!(l.enqueue(Time::ZERO, pkt(1, 1000)).is_none());
        let got = drain(&mut l);
        // p1: a0 arrives 12.672, resent 17.672 → 29.008, resent 34.008 → 45.344: lost.
        assert_eq!(got, vec![(us(44_008), 0, true), (us(45_344), 1, false)]);
        let f = l.fec_stats().unwrap();
        assert_eq!(f.retransmissions, 4);
        assert_eq!(f.recovered_by_arq, 1);
        assert_eq!(f.lost_after_persistence, 1);
        assert_eq!(f.fragments_sent, 24);
        assert_eq!(
            l.stats().tx_packets,
            2,
            "retransmissions are not new packets"
        );
    }

    #[test]
    fn retransmissions_go_before_queued_packets() {
        // Packet 0 fails once; the retransmission (ready 11.336 + 0) takes the
        // transmitter before packets still queued behind it.
        let script = [true, true, false, false];
        let mut l = link(cfg(4, 3, 1, 0, false), &script);
        for i in 0..12 {
            assert!(l.enqueue(Time::ZERO, pkt(i, 1000)).is_none());
        }
        let got = drain(&mut l);
        // Nine packets have started by 11.336 ms (8 × 1.336 = 10.688; the
        // 9th ends at 12.024): the retransmission starts at 12.024.
        let p0 = got.iter().find(|g| g.1 == 0).unwrap();
        assert_eq!(p0.0, us(12_024 + 1_336 + 10_000));
        let p9 = got.iter().find(|g| g.1 == 9).unwrap();
        assert_eq!(p9.0, us(12_024 + 2 * 1_336 + 10_000));
    }

    #[test]
    fn in_order_holds_later_packets_until_the_retransmission() {
        let script = [true, true, false, false];
        for (in_order, p1_at) in [(true, 27_672), (false, 12_672)] {
            let mut l = link(cfg(4, 3, 3, 5, in_order), &script);
            assert!(l.enqueue(Time::ZERO, pkt(0, 1000)).is_none());
            assert!(l.enqueue(Time::ZERO, pkt(1, 1000)).is_none());
            let got = drain(&mut l);
            let order: Vec<u64> = got.iter().map(|g| g.1).collect();
            assert_eq!(order, if in_order { vec![0, 1] } else { vec![1, 0] });
            let p1 = got.iter().find(|g| g.1 == 1).unwrap();
            assert_eq!(p1.0, us(p1_at), "in_order {in_order}");
        }
    }

    #[test]
    fn ideal_feedback_resends_right_after_the_failed_attempt() {
        // n = 4, k = 3, 1.336 ms per block, 10 ms delay. Packet 0's first
        // attempt loses two fragments; with ideal feedback its retransmission
        // starts when that attempt ends (1.336 ms), before packet 1, and
        // arrives at 2.672 + 10 ms; packet 1 follows at 4.008 + 10 ms. With a
        // NACK after 5 ms the retransmission waits for 11.336 + 5 ms.
        let fail = [true, true, false, false];
        let ok = [false; 4];
        let script: Vec<bool> = [fail, ok, ok].concat();
        let mut c = cfg(4, 3, 1, 0, true);
        c.feedback = ArqFeedback::Ideal;
        let mut l = link(c, &script);
        assert!(l.enqueue(Time::ZERO, pkt(0, 1000)).is_none());
        assert!(l.enqueue(Time::ZERO, pkt(1, 1000)).is_none());
        let got = drain(&mut l);
        assert_eq!(got, vec![(us(12_672), 0, true), (us(14_008), 1, true)]);
        let f = l.fec_stats().unwrap();
        assert_eq!((f.retransmissions, f.recovered_by_arq), (1, 1));
        assert_eq!(f.fragments_sent, 12);
        // Persistence spent: both attempts fail, the packet is lost when the
        // last one arrives (2.672 + 10 ms), and nothing more is sent.
        let mut c = cfg(4, 3, 1, 0, true);
        c.feedback = ArqFeedback::Ideal;
        let mut l = link(c, &[fail, fail].concat());
        assert!(l.enqueue(Time::ZERO, pkt(0, 1000)).is_none());
        assert_eq!(drain(&mut l), vec![(us(12_672), 0, false)]);
        let f = l.fec_stats().unwrap();
        assert_eq!((f.retransmissions, f.lost_after_persistence), (1, 1));
        assert_eq!(f.fragments_sent, 8);
    }

    #[test]
    fn packet_rate_conversion_erases_fragments_at_the_converted_rate() {
        // per = 0.3 for 500-byte packets; 500-byte packets with k = 10 make
        // 50-byte fragments, each erased with 1 − 0.7^(1/10).
        let mut c = cfg(12, 10, 0, 0, true);
        c.erasure = FragmentErasure::Packet {
            per: 0.3,
            packet_bytes: 500,
        };
        let mut l = link(c, &[]);
        let n = 4000u64;
        for i in 0..n {
            let now = Time::from_millis(i);
            assert!(l.enqueue(now, pkt(i, 500)).is_none());
            while l.poll_deliver(now).is_some() {}
        }
        drain(&mut l);
        let f = l.fec_stats().unwrap();
        let q = 1.0 - 0.7f64.powf(0.1);
        let rate = f.fragments_erased as f64 / f.fragments_sent as f64;
        let sd = (q * (1.0 - q) / f.fragments_sent as f64).sqrt();
        assert!((rate - q).abs() < 5.0 * sd, "{rate} vs {q}");
        // Residual packet loss matches the binomial block failure.
        let want = crate::fec::block_failure(12, 10, q);
        let got = l.stats().lost as f64 / n as f64;
        let sd = (want * (1.0 - want) / n as f64).sqrt();
        assert!((got - want).abs() < 5.0 * sd, "{got} vs {want}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Every packet offered is delivered once or counted lost once, the
        /// link counts each packet inside it once (also while a failed copy
        /// travels beside its retransmission, with ideal feedback), the
        /// counters add up, in-order delivery keeps the order, and the link
        /// ends empty.
        #[test]
        fn conservation(
            k in 1u32..12,
            extra in 0u32..5,
            persistence in 0u32..4,
            q in 0.0f64..0.6,
            in_order in any::<bool>(),
            fb_ms in 0u64..30,
            ideal in any::<bool>(),
            gaps in proptest::collection::vec(0u64..3000, 1..120),
            seed in any::<u64>(),
        ) {
            let n = k + extra;
            let mut fec = cfg(n, k, persistence, fb_ms, in_order);
            if ideal {
                fec.feedback = ArqFeedback::Ideal;
            }
            let q_cfg = Queue::new(Limit::Packets(1000), Box::new(DropTail), Rng::stream(seed, "q"));
            let mut l = WiredDirection::with_fec(
                WiredConfig { schedule: Vec::new(), rate_bps: 8_000_000, delay: Time::from_millis(5), overhead_bytes: 3, trace: None, immediate: false },
                q_cfg,
                Box::new(Bernoulli::new(q, Rng::stream(seed, "ch"))),
                fec,
                Rng::stream(seed, "fec"),
            );
            let mut now = Time::ZERO;
            let mut seen = Vec::new();
            for (i, g) in gaps.iter().enumerate() {
                now += Time::from_micros(*g);
                while let Some(t) = l.poll_timeout().filter(|t| *t <= now) {
                    while let Some(d) = l.poll_deliver(t) { seen.push(d); }
                }
                // Each packet offered and not yet out is counted once inside.
                prop_assert_eq!(l.in_transit(), i - seen.len());
                prop_assert!(l.enqueue(now, pkt(i as u64, 100 + (i as u32 * 37) % 1400)).is_none());
            }
            while let Some(t) = l.poll_timeout() {
                now = now.max(t);
                while let Some(d) = l.poll_deliver(now) { seen.push(d); }
            }
            prop_assert_eq!(l.in_transit(), 0);
            let mut uids: Vec<u64> = seen.iter().map(|d| match d {
                Delivery::Arrived(p) | Delivery::Lost(p, _) => p.uid,
            }).collect();
            if in_order || persistence == 0 {
                prop_assert!(uids.windows(2).all(|w| w[0] < w[1]), "order {:?}", uids);
            }
            uids.sort_unstable();
            prop_assert_eq!(uids, (0..gaps.len() as u64).collect::<Vec<_>>());
            let s = l.stats();
            let f = s.fec.clone().unwrap();
            prop_assert_eq!(s.rx_packets + s.lost, gaps.len() as u64);
            prop_assert_eq!(f.lost_after_persistence, s.lost);
            prop_assert_eq!(f.fragments_sent, u64::from(n) * (gaps.len() as u64 + f.retransmissions));
            prop_assert!(f.retransmissions <= u64::from(persistence) * gaps.len() as u64);
            prop_assert!(f.recovered_by_fec + f.recovered_by_arq <= s.rx_packets);
        }
    }
}

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

use std::collections::{BTreeMap, VecDeque};

use super::Delivery;
use crate::aqm::DropCause;
use crate::channel::Channel;
use crate::fec::{decodable, unit_erasure};
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
    /// Time from the arrival of the last fragment of an undecodable attempt
    /// until the sender may start the retransmission (the NACK's way back).
    pub feedback_delay: Time,
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
pub(super) struct Attempt {
    /// Link sequence number (order of first transmission).
    pub seq: u64,
    /// 0 for the first transmission, i for the i-th retransmission.
    pub attempt: u32,
    /// Fragments of this attempt erased.
    pub erased: u32,
}

/// The FEC/ARQ state of a link direction.
#[derive(Debug)]
pub(super) struct FecState {
    pub cfg: FecConfig,
    pub stats: FecStats,
    rng: Rng,
    next_seq: u64,
    /// Retransmissions waiting for the transmitter: (ready at, packet, seq, attempt).
    retx: VecDeque<(Time, Packet, u64, u32)>,
    /// In-order delivery: first-transmitted packets by seq, `Some` once resolved.
    pending: BTreeMap<u64, Option<Delivery>>,
    /// Resolved packets ready to hand to IP.
    out: VecDeque<Delivery>,
    /// Entries of `pending` that are resolved (waiting for an earlier one).
    waiting: usize,
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
            retx: VecDeque::new(),
            pending: BTreeMap::new(),
            out: VecDeque::new(),
            waiting: 0,
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

    /// Send the `n` fragments of `pkt` from `start`, each of wire time
    /// `frag_time`, erasing them with `channel` or the converted rate.
    /// Returns the end of the transmission and the number of erased fragments.
    pub fn send_block(
        &mut self,
        start: Time,
        frag_time: Time,
        pkt: &Packet,
        channel: &mut dyn Channel,
    ) -> (Time, u32) {
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
        (start + Time(frag_time.0 * u64::from(n)), erased)
    }

    /// The last fragment of attempt `a` of `pkt` reached the far end at `t`:
    /// decode, or ask for a retransmission, or give the packet up.
    pub fn on_arrival(&mut self, t: Time, pkt: Packet, a: Attempt) {
        let received = self.cfg.n - a.erased;
        if decodable(received, self.cfg.k) {
            if a.attempt > 0 {
                self.stats.recovered_by_arq += 1;
            } else if a.erased > 0 {
                self.stats.recovered_by_fec += 1;
            }
            self.resolve(a.seq, Delivery::Arrived(pkt));
        } else if a.attempt < self.cfg.persistence {
            self.stats.retransmissions += 1;
            self.retx
                .push_back((t + self.cfg.feedback_delay, pkt, a.seq, a.attempt + 1));
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
}

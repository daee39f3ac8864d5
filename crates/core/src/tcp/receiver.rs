//! The TCP receiver: cumulative and selective ACKs, delayed ACK, ECN echo.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::lt::{ErasureEstimator, EstimatorSide};
use super::{TcpConfig, Variant};
use crate::fec;
use crate::packet::{Ecn, FlowId, Kind, NodeId, Packet, Repair, SackBlocks, TcpFlags};
use crate::time::Time;

/// Receiver counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Bytes delivered in order to the application.
    pub delivered_bytes: u64,
    /// Data segments received (duplicates included, SYNs excluded).
    pub segments_received: u64,
    /// Segments whose every byte had already been received.
    pub duplicate_segments: u64,
    /// Data segments that arrived marked CE.
    pub ce_received: u64,
    /// ACKs (SYN-ACKs included) emitted.
    pub acks_sent: u64,
    /// LT-TCP repair packets received (not counted in `segments_received`).
    pub repairs_received: u64,
    /// LT-TCP blocks whose missing segments were rebuilt from repair packets.
    pub blocks_rebuilt: u64,
    /// Bytes rebuilt from repair packets.
    pub bytes_rebuilt: u64,
    /// Segments with bit errors discarded (a failed checksum; TCP-L: a
    /// header hit).
    pub corrupt_discarded: u64,
    /// Segments with payload bit errors accepted (TCP-L).
    pub corrupt_accepted: u64,
    /// Bit errors in the payload of segments accepted with new data (TCP-L).
    pub corrupt_bits: u64,
}

/// An LT-TCP block with repair packets received and data still missing.
#[derive(Clone, Copy, Debug)]
struct RxBlock {
    end: u64,
    /// Segment size of the block (= repair payload).
    mss: u32,
    /// Distinct repair indices received.
    seen: [u64; 4],
    repairs: u16,
}

/// Receiver-side LT-TCP erasure estimate: first transmissions seen and
/// inferred erased (gaps in sequence, FIFO paths) in the current window.
#[derive(Clone, Copy, Debug, Default)]
struct RxEstimate {
    high: u64,
    received: u32,
    erased: u32,
    est: ErasureEstimator,
}

/// Receiving half of a one-way TCP flow. See the [module docs](super).
///
/// ACK policy: immediate ACK for out-of-order, duplicate or hole-filling
/// segments (RFC 5681 §4.2); otherwise one ACK per segment or, with delayed
/// ACKs, when two full segments' worth of bytes are unacknowledged or after
/// `delack_timeout`. SACK blocks (variant SACK) follow RFC 2018 §4: the block
/// holding the segment that triggered the ACK first, then the most recently
/// reported blocks that are not subsets of one already included.
#[derive(Debug)]
pub struct TcpReceiver {
    /// The flow's configuration, shared with its sender (it never changes).
    cfg: Arc<TcpConfig>,
    flow: FlowId,
    node: NodeId,
    peer: NodeId,
    rcv_nxt: u64,
    /// Out-of-order data: sorted, disjoint, non-adjacent `[start, end)`.
    ooo: Vec<(u64, u64)>,
    /// Blocks of the last ACK sent (most recent first).
    last_blocks: SackBlocks,
    sack_max: usize,
    ece_pending: bool,
    /// [`TcpConfig::cwr_per_echo`]: ns-3.44's receiver — the highest
    /// segment that arrived with CE (`m_ecnCESeq`), and whether one arrived
    /// since the last ACK went out (`ECN_CE_RCVD`).
    ns3_ce_seq: Option<u64>,
    ns3_ce_unacked: bool,
    ts_recent: Time,
    last_ack_sent: u64,
    unacked_bytes: u64,
    delack_deadline: Option<Time>,
    /// [`TcpConfig::quick_ack_first`]: no ACK sent since the handshake, so
    /// the next in-order segment is acknowledged at once.
    quick_ack: bool,
    out: VecDeque<Packet>,
    header: u16,
    stats: ReceiverStats,
    blocks: BTreeMap<u64, RxBlock>,
    rx_est: Option<RxEstimate>,
    /// The SYN-ACK and every ACK ECN-capable: the congestion control needs
    /// ECN (DCTCP; Linux sets ECT on every packet of such a socket).
    ect: Ecn,
    /// DCTCP's echo as ns-3.44 (`cc.echo = "ns3"`), see [`Self::ns3_echo`].
    ns3_echo: bool,
    /// ns-3's `m_priorRcvNxt`: `rcv_nxt` when the previous ECN-capable
    /// segment arrived (before it was added); `None` before the first.
    ns3_prior: Option<u64>,
    /// ns-3's `m_delayedAckReserved`: set when an in-order segment is held
    /// by delayed ACK and by the delayed-ACK timer, cleared only by an ACK
    /// the segment count (or a gap) sends.
    ns3_reserved: bool,
}

impl TcpReceiver {
    /// A receiver at `node` for `flow`, acknowledging to `peer`.
    pub fn new(cfg: impl Into<Arc<TcpConfig>>, flow: FlowId, node: NodeId, peer: NodeId) -> Self {
        let cfg: Arc<TcpConfig> = cfg.into();
        let rx_est =
            (cfg.lt.blocks() && cfg.lt.estimator == EstimatorSide::Receiver).then(|| RxEstimate {
                est: ErasureEstimator::starting_at(cfg.lt.initial_estimate),
                ..RxEstimate::default()
            });
        let ect = if cfg.ecn && cfg.cc.model().needs_ecn() {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        };
        let ns3_echo = matches!(
            cfg.resolved_cc(),
            super::cc::CcConfig::Dctcp(super::cc::DctcpConfig {
                echo: Some(super::cc::DctcpEcho::Ns3),
                ..
            })
        );
        TcpReceiver {
            sack_max: cfg.sack_blocks(),
            quick_ack: cfg.quick_ack_first,
            header: cfg.base_header(),
            cfg,
            flow,
            node,
            peer,
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_blocks: SackBlocks::EMPTY,
            ece_pending: false,
            ns3_ce_seq: None,
            ns3_ce_unacked: false,
            ns3_echo,
            ns3_prior: None,
            ns3_reserved: false,
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            unacked_bytes: 0,
            delack_deadline: None,
            out: VecDeque::new(),
            stats: ReceiverStats::default(),
            blocks: BTreeMap::new(),
            rx_est,
            ect,
        }
    }

    /// A data segment or SYN arrived.
    pub fn on_packet(&mut self, now: Time, pkt: &Packet) {
        if pkt.flags.has(TcpFlags::SYN) {
            let mut flags = TcpFlags(TcpFlags::SYN | TcpFlags::ACK);
            if self.cfg.ecn {
                flags.set(TcpFlags::ECE); // ECN-setup SYN-ACK
            }
            self.out.push_back(Packet {
                flow: self.flow,
                src: self.node,
                dst: self.peer,
                kind: Kind::Ack,
                header: self.cfg.syn_header(),
                flags,
                ecn: self.ect,
                sent_at: now,
                ts_echo: if self.cfg.timestamps {
                    pkt.sent_at
                } else {
                    Time::ZERO
                },
                ..Packet::default()
            });
            self.stats.acks_sent += 1;
            return;
        }
        if pkt.kind != Kind::Data || pkt.payload == 0 {
            return;
        }
        if pkt.corrupt != 0 {
            // A checksum would fail: discard, unless TCP-L and the header is
            // intact (seed 004).
            if !self.cfg.tcp_l || pkt.header_corrupt() {
                self.stats.corrupt_discarded += 1;
                return;
            }
            self.stats.corrupt_accepted += 1;
            if pkt.end_seq() > self.rcv_nxt {
                self.stats.corrupt_bits += u64::from(pkt.corrupt_bits());
            }
        }
        if pkt.repair.is_none() {
            self.stats.segments_received += 1;
        }
        if pkt.ecn == Ecn::Ce {
            self.stats.ce_received += 1;
        }
        if self.cfg.ecn && self.ns3_echo {
            self.ns3_echo(now, pkt);
        } else if self.cfg.ecn && self.cfg.cc.model().needs_ecn() {
            // DCTCP (RFC 8257 §3.2): ECE echoes the CE of the segments
            // acknowledged, no latch; when the CE state changes, ACK the
            // segments held by delayed ACK at once, with the old state.
            let ce = pkt.ecn == Ecn::Ce;
            if ce != self.ece_pending {
                if self.unacked_bytes > 0 {
                    self.send_ack(now, None);
                }
                self.ece_pending = ce;
            }
        } else if self.cfg.cwr_per_echo {
            // ns-3.44 (tcp-socket-base.cc: `ForwardUp` 1233–1240, then
            // `DoForwardUp` 1359–1371): a CE counts only on a segment above
            // the last one that had it, and CWR ends the echo unless a CE
            // arrived since the last ACK (`ECN_CE_RCVD`): with delayed ACKs
            // a CE followed by the CWR segment is still echoed.
            if pkt.ecn == Ecn::Ce && self.cfg.ecn && self.ns3_ce_seq.is_none_or(|s| pkt.seq > s) {
                self.ns3_ce_seq = Some(pkt.seq);
                self.ns3_ce_unacked = true;
                self.ece_pending = true;
            }
            if pkt.flags.has(TcpFlags::CWR) && !self.ns3_ce_unacked {
                self.ece_pending = false;
            }
        } else {
            // RFC 3168 §6.1.3: CWR first, then CE of the same segment.
            if pkt.flags.has(TcpFlags::CWR) {
                self.ece_pending = false;
            }
            if pkt.ecn == Ecn::Ce && self.cfg.ecn {
                self.ece_pending = true;
            }
        }
        // RFC 7323 §4.3: TS.Recent from segments at or below Last.ACK.sent.
        if pkt.seq <= self.last_ack_sent && pkt.sent_at >= self.ts_recent {
            self.ts_recent = pkt.sent_at;
        }
        if let Some(r) = pkt.repair {
            self.on_repair(now, pkt.seq, r, pkt.payload);
            return;
        }
        let (s, e) = (pkt.seq, pkt.end_seq());
        if !pkt.retransmit {
            self.estimate(s, e, pkt.payload);
        }
        if e <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            self.send_ack(now, None);
        } else if s > self.rcv_nxt {
            self.ns3_reserved = false;
            if self.insert_ooo(s, e) {
                self.stats.duplicate_segments += 1;
            }
            self.try_rebuild_at(s);
            self.send_ack(now, Some(s));
        } else {
            let had_hole = !self.ooo.is_empty();
            self.advance(e);
            self.unacked_bytes += e - s;
            let rebuilt = self.try_rebuild_at(self.rcv_nxt);
            // "Every second full-sized segment": with LT-TCP's adaptive MSS
            // the segment in hand is full-sized.
            let full = if self.cfg.lt.adaptive_mss {
                u64::from(pkt.payload)
            } else {
                u64::from(self.cfg.mss)
            };
            if had_hole
                || rebuilt
                || !self.cfg.delayed_ack
                || self.quick_ack
                || self.unacked_bytes >= 2 * full
            {
                self.ns3_reserved = false;
                self.send_ack(now, None);
            } else {
                self.ns3_reserved = true;
                if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + self.cfg.delack_timeout);
                }
            }
        }
    }

    /// In-order data up to `e` arrived: advance `rcv_nxt` over it and any
    /// out-of-order ranges it joins; forget finished FEC blocks.
    fn advance(&mut self, e: u64) {
        self.rcv_nxt = self.rcv_nxt.max(e);
        let merged = self.ooo.partition_point(|r| r.0 <= self.rcv_nxt);
        if merged > 0 {
            self.rcv_nxt = self.rcv_nxt.max(self.ooo[merged - 1].1);
            self.ooo.drain(..merged);
        }
        self.stats.delivered_bytes = self.rcv_nxt;
        while let Some(entry) = self.blocks.first_entry() {
            if entry.get().end > self.rcv_nxt {
                break;
            }
            entry.remove();
        }
    }

    /// Segments of the block `[start, end)` with segment size `mss` not yet held.
    fn missing_segments(&self, start: u64, end: u64, mss: u32) -> u64 {
        let mut held = self.rcv_nxt.clamp(start, end) - start;
        for &(a, b) in &self.ooo {
            let (a, b) = (a.max(start).max(self.rcv_nxt), b.min(end));
            if a < b {
                held += b - a;
            }
        }
        (end - start - held).div_ceil(u64::from(mss.max(1)))
    }

    /// An LT-TCP repair packet for the block starting at `start`. It is
    /// acknowledged only if it completes the block (so repairs never make
    /// duplicate ACKs).
    fn on_repair(&mut self, now: Time, start: u64, r: Repair, mss: u32) {
        self.stats.repairs_received += 1;
        let end = start + u64::from(r.block_len.get());
        if end <= self.rcv_nxt {
            return;
        }
        let b = self.blocks.entry(start).or_insert(RxBlock {
            end,
            mss,
            seen: [0; 4],
            repairs: 0,
        });
        let (word, bit) = (usize::from(r.index / 64), r.index % 64);
        if b.seen[word] & (1 << bit) == 0 {
            b.seen[word] |= 1 << bit;
            b.repairs += 1;
        }
        if self.try_rebuild(start) {
            self.send_ack(now, Some(start));
        }
    }

    /// Rebuild the block holding byte `seq`, if any and if decodable.
    fn try_rebuild_at(&mut self, seq: u64) -> bool {
        let Some((&start, b)) = self.blocks.range(..=seq).next_back() else {
            return false;
        };
        if seq >= b.end {
            return false;
        }
        self.try_rebuild(start)
    }

    /// Any k of n: the block is rebuilt when its distinct repairs cover its
    /// missing segments (received data + repairs ≥ k). Returns whether data was rebuilt.
    fn try_rebuild(&mut self, start: u64) -> bool {
        let Some(&b) = self.blocks.get(&start) else {
            return false;
        };
        let k = (b.end - start).div_ceil(u64::from(b.mss.max(1))) as u32;
        let missing = self.missing_segments(start, b.end, b.mss) as u32;
        if missing == 0 {
            self.blocks.remove(&start);
            return false;
        }
        if !fec::decodable(k - missing + u32::from(b.repairs), k) {
            return false;
        }
        self.blocks.remove(&start);
        self.stats.blocks_rebuilt += 1;
        self.stats.bytes_rebuilt += (b.end - start)
            - (self.rcv_nxt.clamp(start, b.end) - start)
            - self
                .ooo
                .iter()
                .map(|&(a, e)| e.min(b.end).saturating_sub(a.max(start).max(self.rcv_nxt)))
                .sum::<u64>();
        if start > self.rcv_nxt {
            self.insert_ooo(start, b.end);
        } else {
            self.advance(b.end);
        }
        true
    }

    /// Receiver-side erasure estimate (option): a first transmission `[s, e)`
    /// arrived; gaps above the highest byte seen are erased segments. A
    /// window is `g_min_segments` first transmissions.
    fn estimate(&mut self, s: u64, e: u64, len: u32) {
        let g = self.cfg.lt.g_min_segments.max(1);
        let Some(x) = self.rx_est.as_mut() else {
            return;
        };
        if s > x.high {
            x.erased += (s - x.high).div_ceil(u64::from(len.max(1))) as u32;
        }
        if e > x.high {
            x.received += 1;
            x.high = e;
        }
        let seen = x.received + x.erased;
        if seen >= g {
            x.est.update(f64::from(x.erased) / f64::from(seen));
            x.received = 0;
            x.erased = 0;
        }
    }

    /// Receiver-side erasure estimate E (0 unless that option is on).
    pub fn erasure_estimate(&self) -> f64 {
        self.rx_est.map_or(0.0, |x| x.est.value())
    }

    /// Insert `[s, e)` above `rcv_nxt`; returns whether it was already held.
    fn insert_ooo(&mut self, s: u64, e: u64) -> bool {
        // First range that ends at or after s (could merge / contain).
        let i = self.ooo.partition_point(|r| r.1 < s);
        if let Some(r) = self.ooo.get(i) {
            if r.0 <= s && e <= r.1 {
                return true;
            }
        }
        // Ranges i..j overlap or touch [s, e).
        let j = self.ooo.partition_point(|r| r.0 <= e);
        if i == j {
            self.ooo.insert(i, (s, e));
        } else {
            let ns = s.min(self.ooo[i].0);
            let ne = e.max(self.ooo[j - 1].1);
            self.ooo[i] = (ns, ne);
            self.ooo.drain(i + 1..j);
        }
        false
    }

    /// The out-of-order range containing byte `seq`.
    fn range_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|r| r.1 <= seq);
        self.ooo.get(i).copied().filter(|r| r.0 <= seq)
    }

    /// DCTCP's receiver as ns-3.44 (`TcpDctcp::CeState0to1`/`CeState1to0`,
    /// run for every ECN-capable segment before its data is taken): when the
    /// CE state changes while a delayed ACK is reserved, an ACK with the old
    /// state acknowledging `ns3_prior` — the `rcv_nxt` saved when the
    /// previous segment arrived, so that segment is not covered (a duplicate
    /// ACK when it was already acknowledged). It cancels the delayed ACK
    /// (ns-3's `SendEmptyPacket`) but leaves the reservation.
    fn ns3_echo(&mut self, now: Time, pkt: &Packet) {
        if pkt.ecn == Ecn::NotEct {
            return;
        }
        let ce = pkt.ecn == Ecn::Ce;
        if ce != self.ece_pending && self.ns3_reserved {
            if let Some(prior) = self.ns3_prior {
                self.emit_ack(now, None, prior);
            }
        }
        self.ns3_prior = Some(self.rcv_nxt);
        self.ece_pending = ce;
    }

    fn send_ack(&mut self, now: Time, trigger: Option<u64>) {
        self.emit_ack(now, trigger, self.rcv_nxt);
    }

    /// An ACK of `ack` (normally `rcv_nxt`), ECE as `ece_pending`.
    fn emit_ack(&mut self, now: Time, trigger: Option<u64>, ack: u64) {
        let mut blocks = SackBlocks::EMPTY;
        if self.cfg.variant == Variant::Sack && self.sack_max > 0 {
            if let Some(r) = trigger.and_then(|t| self.range_of(t)) {
                blocks.push(r.0, r.1);
            }
            for &(start, _) in self.last_blocks.blocks().iter() {
                if blocks.len() >= self.sack_max {
                    break;
                }
                if let Some(r) = self.range_of(start) {
                    if !blocks.blocks().contains(&r) {
                        blocks.push(r.0, r.1);
                    }
                }
            }
            // Ranges never reported (e.g. after ACK-triggering in-order data).
            if blocks.len() < self.sack_max {
                for &r in self.ooo.iter().rev() {
                    if blocks.len() >= self.sack_max {
                        break;
                    }
                    if !blocks.blocks().contains(&r) {
                        blocks.push(r.0, r.1);
                    }
                }
            }
            self.last_blocks = blocks;
        }
        let mut flags = TcpFlags(TcpFlags::ACK);
        if self.ece_pending {
            flags.set(TcpFlags::ECE);
            self.ns3_ce_unacked = false; // ns-3: ECN_CE_RCVD -> ECN_SENDING_ECE
        }
        self.out.push_back(Packet {
            uid: 0,
            flow: self.flow,
            src: self.node,
            dst: self.peer,
            kind: Kind::Ack,
            seq: 0,
            ack,
            payload: 0,
            header: self.header + blocks.option_bytes(),
            flags,
            ecn: self.ect,
            sack: blocks,
            sent_at: now,
            ts_echo: if self.cfg.timestamps {
                self.ts_recent
            } else {
                Time::ZERO
            },
            retransmit: false,
            repair: None,
            erasure_echo: (self.erasure_estimate() * f64::from(u16::MAX)).round() as u16,
            hop: 0,
            corrupt: 0,
        });
        self.stats.acks_sent += 1;
        self.last_ack_sent = self.last_ack_sent.max(ack);
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        self.quick_ack = false;
    }

    /// The delayed-ACK timer; tolerates early, late and spurious calls.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.delack_deadline.is_some_and(|d| now >= d) {
            self.send_ack(now, None);
            // ns-3's DelAckTimeout raises CA_EVENT_DELAYED_ACK.
            self.ns3_reserved = true;
        }
    }

    /// When the receiver next needs [`handle_timeout`](Self::handle_timeout).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// Next ACK / SYN-ACK to send; call until `None`.
    pub fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        self.out.pop_front()
    }

    /// Counters.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// Bytes delivered in order to the application.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// Out-of-order ranges held, sorted.
    pub fn out_of_order(&self) -> &[(u64, u64)] {
        &self.ooo
    }
}

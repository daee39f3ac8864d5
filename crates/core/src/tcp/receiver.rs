//! The TCP receiver: cumulative and selective ACKs, delayed ACK, ECN echo.

use std::collections::VecDeque;

use super::{TcpConfig, Variant};
use crate::packet::{Ecn, FlowId, Kind, NodeId, Packet, SackBlocks, TcpFlags};
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
    cfg: TcpConfig,
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
    ts_recent: Time,
    last_ack_sent: u64,
    unacked_bytes: u64,
    delack_deadline: Option<Time>,
    out: VecDeque<Packet>,
    header: u16,
    stats: ReceiverStats,
}

impl TcpReceiver {
    /// A receiver at `node` for `flow`, acknowledging to `peer`.
    pub fn new(cfg: TcpConfig, flow: FlowId, node: NodeId, peer: NodeId) -> Self {
        TcpReceiver {
            sack_max: cfg.sack_blocks(),
            header: cfg.base_header(),
            cfg,
            flow,
            node,
            peer,
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_blocks: SackBlocks::EMPTY,
            ece_pending: false,
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            unacked_bytes: 0,
            delack_deadline: None,
            out: VecDeque::new(),
            stats: ReceiverStats::default(),
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
        self.stats.segments_received += 1;
        // RFC 3168 §6.1.3: CWR first, then CE of the same segment.
        if pkt.flags.has(TcpFlags::CWR) {
            self.ece_pending = false;
        }
        if pkt.ecn == Ecn::Ce {
            self.stats.ce_received += 1;
            if self.cfg.ecn {
                self.ece_pending = true;
            }
        }
        // RFC 7323 §4.3: TS.Recent from segments at or below Last.ACK.sent.
        if pkt.seq <= self.last_ack_sent && pkt.sent_at >= self.ts_recent {
            self.ts_recent = pkt.sent_at;
        }
        let (s, e) = (pkt.seq, pkt.end_seq());
        if e <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            self.send_ack(now, None);
        } else if s > self.rcv_nxt {
            if self.insert_ooo(s, e) {
                self.stats.duplicate_segments += 1;
            }
            self.send_ack(now, Some(s));
        } else {
            let had_hole = !self.ooo.is_empty();
            self.rcv_nxt = e;
            let merged = self.ooo.partition_point(|r| r.0 <= self.rcv_nxt);
            if merged > 0 {
                self.rcv_nxt = self.rcv_nxt.max(self.ooo[merged - 1].1);
                self.ooo.drain(..merged);
            }
            self.stats.delivered_bytes = self.rcv_nxt;
            self.unacked_bytes += e - s;
            if had_hole
                || !self.cfg.delayed_ack
                || self.unacked_bytes >= 2 * u64::from(self.cfg.mss)
            {
                self.send_ack(now, None);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.cfg.delack_timeout);
            }
        }
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

    fn send_ack(&mut self, now: Time, trigger: Option<u64>) {
        let mut blocks = SackBlocks::EMPTY;
        if self.cfg.variant == Variant::Sack && self.sack_max > 0 {
            if let Some(r) = trigger.and_then(|t| self.range_of(t)) {
                blocks.push(r.0, r.1);
            }
            for &(start, _) in self.last_blocks.as_slice() {
                if blocks.len() >= self.sack_max {
                    break;
                }
                if let Some(r) = self.range_of(start) {
                    if !blocks.as_slice().contains(&r) {
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
                    if !blocks.as_slice().contains(&r) {
                        blocks.push(r.0, r.1);
                    }
                }
            }
            self.last_blocks = blocks;
        }
        let mut flags = TcpFlags(TcpFlags::ACK);
        if self.ece_pending {
            flags.set(TcpFlags::ECE);
        }
        self.out.push_back(Packet {
            uid: 0,
            flow: self.flow,
            src: self.node,
            dst: self.peer,
            kind: Kind::Ack,
            seq: 0,
            ack: self.rcv_nxt,
            payload: 0,
            header: self.header + blocks.option_bytes(),
            flags,
            ecn: Ecn::NotEct,
            sack: blocks,
            sent_at: now,
            ts_echo: if self.cfg.timestamps {
                self.ts_recent
            } else {
                Time::ZERO
            },
            retransmit: false,
        });
        self.stats.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_bytes = 0;
        self.delack_deadline = None;
    }

    /// The delayed-ACK timer; tolerates early, late and spurious calls.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.delack_deadline.is_some_and(|d| now >= d) {
            self.send_ack(now, None);
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

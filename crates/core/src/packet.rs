//! Packets: sizes and headers, no payload bytes.
//!
//! A [`Packet`] is a small `Copy` value carrying what the models need: the
//! addressing, the TCP header fields as numbers (64-bit byte sequence numbers
//! that never wrap inside the simulator), IP ECN bits, SACK blocks, and the
//! header overhead so that every link charges the real wire size.

use crate::time::Time;

/// Index of a node in the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct NodeId(pub u32);

/// Index of a flow (one TCP connection: a sender and its receiver).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FlowId(pub u32);

/// IPv4 header bytes (no options).
pub const IP_HEADER: u16 = 20;
/// TCP header bytes without options.
pub const TCP_HEADER: u16 = 20;
/// TCP timestamp option bytes, padded (RFC 7323: 10 bytes + 2 NOPs).
pub const TCP_TS_OPTION: u16 = 12;

/// ECN codepoint of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    /// Not ECN-capable transport.
    #[default]
    NotEct,
    /// ECN-capable transport, ECT(0).
    Ect0,
    /// Congestion experienced.
    Ce,
}

/// TCP header flags (only those the models use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// ACK: the `ack` field is valid.
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168).
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: u8 = 0x80;

    /// Whether every bit of `mask` is set.
    #[inline]
    pub fn has(self, mask: u8) -> bool {
        self.0 & mask == mask
    }
    /// Set the bits of `mask`.
    #[inline]
    pub fn set(&mut self, mask: u8) {
        self.0 |= mask;
    }
}

/// Maximum SACK blocks a packet carries (RFC 2018 allows 4, 3 with timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// SACK blocks of an ACK: half-open byte ranges `[start, end)` above the
/// cumulative ACK, most recently changed first (RFC 2018 §4).
///
/// Stored as on the wire, relative to each other: the first block's start in
/// full and every block as a signed 32-bit offset from it and a 32-bit length
/// (real TCP carries 32-bit sequence numbers, and all blocks lie within one
/// receive window). A block is never empty, so unused slots have length 0 and
/// the count needs no field of its own; this keeps [`Packet`] at 120 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlocks {
    base: u64,
    blocks: [(i32, u32); MAX_SACK_BLOCKS],
}

/// The blocks of a [`SackBlocks`], unpacked to full 64-bit ranges; derefs to
/// a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackList {
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
    len: usize,
}

impl std::ops::Deref for SackList {
    type Target = [(u64, u64)];
    fn deref(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len]
    }
}

impl SackBlocks {
    /// No blocks.
    pub const EMPTY: SackBlocks = SackBlocks {
        base: 0,
        blocks: [(0, 0); MAX_SACK_BLOCKS],
    };

    /// Append a non-empty block (`start < end`); ignored when full, and when
    /// the block is further than 2³¹ bytes from the first one or 2³² bytes
    /// long (no receive window is that large).
    pub fn push(&mut self, start: u64, end: u64) {
        debug_assert!(start < end, "empty SACK block [{start}, {end})");
        let len = self.len();
        if len >= MAX_SACK_BLOCKS || start >= end {
            return;
        }
        if len == 0 {
            self.base = start;
        }
        let off = i32::try_from(start as i128 - self.base as i128);
        let size = u32::try_from(end - start);
        if let (Ok(off), Ok(size)) = (off, size) {
            self.blocks[len] = (off, size);
        }
    }
    /// The blocks in order.
    pub fn blocks(&self) -> SackList {
        let mut out = SackList {
            blocks: [(0, 0); MAX_SACK_BLOCKS],
            len: 0,
        };
        for &(off, size) in self.blocks.iter().take_while(|b| b.1 > 0) {
            let start = self.base.wrapping_add_signed(i64::from(off));
            out.blocks[out.len] = (start, start + u64::from(size));
            out.len += 1;
        }
        out
    }
    /// Number of blocks.
    #[inline]
    pub fn len(&self) -> usize {
        self.blocks.iter().take_while(|b| b.1 > 0).count()
    }
    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of TCP option space these blocks take (RFC 2018: 2 + 8n, padded to 4).
    pub fn option_bytes(&self) -> u16 {
        let len = self.len() as u16;
        if len == 0 {
            0
        } else {
            (2 + 8 * len).div_ceil(4) * 4
        }
    }
}

/// What a packet is, for the models that care (all are TCP/IP on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kind {
    /// A TCP segment carrying data (or a SYN).
    #[default]
    Data,
    /// A pure TCP acknowledgement.
    Ack,
}

/// Tag of an LT-TCP FEC repair packet (a [`Kind::Data`] packet whose `seq` is
/// the first byte of the protected block and whose `payload` is the block's
/// segment size): Reed–Solomon parity of the data block `[seq, seq + block_len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repair {
    /// Data bytes of the block (never 0; the niche keeps `Option<Repair>` at 8 bytes).
    pub block_len: std::num::NonZeroU32,
    /// Repair index within the block (distinct repairs of a block have distinct indices).
    pub index: u8,
}

/// One packet. `Copy`, no heap data.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Packet {
    /// Unique id within a run (assigned by the engine when first sent).
    pub uid: u64,
    /// Flow this packet belongs to.
    pub flow: FlowId,
    /// Originating node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// Data segment or pure ACK.
    pub kind: Kind,
    /// Sequence number of the first payload byte (64-bit, never wraps).
    pub seq: u64,
    /// Cumulative acknowledgement (valid when `flags` has ACK).
    pub ack: u64,
    /// TCP payload bytes.
    pub payload: u32,
    /// IP + TCP header bytes, options included.
    pub header: u16,
    /// TCP flags.
    pub flags: TcpFlags,
    /// IP ECN field.
    pub ecn: Ecn,
    /// SACK blocks (ACKs only).
    pub sack: SackBlocks,
    /// When the sending TCP emitted this transmission (for one-way delay).
    pub sent_at: Time,
    /// Timestamp echo reply (RFC 7323 TSecr), valid when timestamps are on.
    pub ts_echo: Time,
    /// This transmission is a retransmission.
    pub retransmit: bool,
    /// LT-TCP: this data packet is an FEC repair packet, not a segment.
    pub repair: Option<Repair>,
    /// LT-TCP receiver-side erasure estimate echoed in ACKs, in 1/65535 (0 when unused).
    pub erasure_echo: u16,
    /// Link hops taken so far: the network's index into the packet's route
    /// (the endpoints send it as 0; models carry it unchanged).
    pub hop: u32,
    /// Bit errors a radio link let through (seed 004's frame link): the
    /// number of bits hit, with [`Packet::HEADER_HIT`] set when any of them is
    /// in the IP/TCP header; 0 for an intact packet.
    pub corrupt: u32,
}

impl Packet {
    /// Bit of [`Packet::corrupt`] flagging a header hit.
    pub const HEADER_HIT: u32 = 1 << 31;

    /// Record `bits` bit errors (saturating), `header` when any is a header bit.
    pub fn set_corrupt(&mut self, bits: u32, header: bool) {
        let n = (self.corrupt & !Self::HEADER_HIT)
            .saturating_add(bits)
            .min(Self::HEADER_HIT - 1);
        let h = (self.corrupt & Self::HEADER_HIT) | if header { Self::HEADER_HIT } else { 0 };
        self.corrupt = n | h;
    }

    /// Bits hit by errors (0: intact).
    #[inline]
    pub fn corrupt_bits(&self) -> u32 {
        self.corrupt & !Self::HEADER_HIT
    }

    /// Whether any error hit the IP/TCP header.
    #[inline]
    pub fn header_corrupt(&self) -> bool {
        self.corrupt & Self::HEADER_HIT != 0
    }

    /// Bytes on the wire at the IP layer: header plus payload.
    #[inline]
    pub fn size(&self) -> u32 {
        self.payload + u32::from(self.header)
    }
    /// One past the last payload byte.
    #[inline]
    pub fn end_seq(&self) -> u64 {
        self.seq + u64::from(self.payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_small() {
        assert!(
            std::mem::size_of::<Packet>() <= 120,
            "{}",
            std::mem::size_of::<Packet>()
        );
    }

    #[test]
    fn sack_option_size() {
        let mut s = SackBlocks::EMPTY;
        assert_eq!(s.option_bytes(), 0);
        s.push(1, 2);
        assert_eq!(s.option_bytes(), 12);
        s.push(3, 4);
        s.push(5, 6);
        assert_eq!(s.option_bytes(), 28);
    }
}

/// Boxes for packets that wait in a model (on a link's wire), recycled
/// through a per-thread pool instead of the allocator.
///
/// A packet stored by value costs its 120 bytes in the buffer of every link
/// it waits in; with thousands of links those buffers are cold, and writing a
/// packet into one is a cache miss (and, while the buffer grows, a page
/// fault). Boxed, a link stores a pointer, and the box is the one most
/// recently freed by any link of the thread — still in cache.
// The boxes themselves are what the pool keeps: `Vec<Box<Packet>>` on purpose.
#[allow(clippy::vec_box)]
pub mod pool {
    use std::cell::RefCell;

    use super::Packet;

    /// Boxes kept for reuse at most (1 MiB of packets per thread).
    const CAP: usize = 8192;

    thread_local! {
        static FREE: RefCell<Vec<Box<Packet>>> = const { RefCell::new(Vec::new()) };
    }

    /// `p` in a box, reusing a free one when there is one.
    #[inline]
    pub fn boxed(p: Packet) -> Box<Packet> {
        match FREE.with(|f| f.borrow_mut().pop()) {
            Some(mut b) => {
                *b = p;
                b
            }
            None => Box::new(p),
        }
    }

    /// The packet out of `b`; the box goes back to the pool.
    #[inline]
    pub fn unboxed(b: Box<Packet>) -> Packet {
        let p = *b;
        recycle(b);
        p
    }

    /// Put `b` back to the pool (its packet is no longer needed).
    #[inline]
    pub fn recycle(b: Box<Packet>) {
        FREE.with(|f| {
            let mut f = f.borrow_mut();
            if f.len() < CAP {
                f.push(b);
            }
        });
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_box_is_reused_and_the_packet_comes_back_intact() {
            let p = Packet {
                seq: 7,
                payload: 1000,
                ..Packet::default()
            };
            let b = boxed(p);
            let addr = &*b as *const Packet;
            assert_eq!(unboxed(b), p);
            let q = Packet { seq: 8, ..p };
            let b = boxed(q);
            assert_eq!(&*b as *const Packet, addr, "the freed box is reused");
            assert_eq!(*b, q);
            recycle(b);
            let b = boxed(p);
            assert_eq!(&*b as *const Packet, addr, "a recycled box is reused");
            assert_eq!(*b, p);
        }
    }
}

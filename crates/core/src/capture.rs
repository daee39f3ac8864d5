//! Packet capture: the bytes of a pcap file, built in memory (no I/O).
//!
//! The file is classic pcap with nanosecond timestamps (magic `0xa1b23c4d`,
//! version 2.4, little-endian, snaplen 65535) and link type 101
//! (`LINKTYPE_RAW`: each record starts with the IP header), which Wireshark and
//! tcpdump open directly.
//!
//! Packets carry no payload bytes, so every record holds the **headers only**:
//! `incl_len` is the synthetic IPv4 + TCP header, `orig_len` the real wire size
//! [`Packet::size`]. The synthetic headers are:
//!
//! * **IPv4** — version 4, IHL 5, DSCP 0, ECN bits from [`Packet::ecn`]
//!   (Not-ECT `00`, ECT(0) `10`, CE `11`), total length = wire size (capped at
//!   65535), identification = low 16 bits of [`Packet::uid`], DF set, TTL 64,
//!   protocol 6, correct header checksum. Node `n` has address
//!   `198.18.0.0 + n + 1` (the 198.18.0.0/15 benchmarking range, RFC 2544):
//!   node 0 is 198.18.0.1, node 255 is 198.18.1.0.
//! * **TCP** — ports: the data sender of flow `f` uses `10000 + f` (mod 2^16),
//!   the receiver 5001; data packets ([`Kind::Data`]) go sender → receiver, pure
//!   ACKs ([`Kind::Ack`]) the other way. Each side's initial sequence number is
//!   0 and the SYN takes it, so a payload byte numbered `s` by the simulator
//!   goes on the wire as `s + 1`, and acknowledgement `a` as `a + 1` (both mod
//!   2^32); SYN segments carry `seq` unchanged. Data offset = header − 20 bytes
//!   (at least 20, at most 60, rounded down to a multiple of 4). Flags are
//!   [`Packet::flags`] as is (their bit values are TCP's, ECE and CWR
//!   included). Window 65535, urgent pointer 0.
//! * **TCP options**, in the option space the header length leaves: timestamps
//!   (`NOP NOP TS`, 12 bytes; TSval = [`Packet::sent_at`], TSecr =
//!   [`Packet::ts_echo`], both in milliseconds mod 2^32) when there is room for
//!   them and all of [`Packet::sack`]'s blocks, then `NOP NOP SACK` with as
//!   many of the blocks as fit (edges shifted by 1 like `seq`), then EOL/zero
//!   padding to the exact header length. So a header of 52 bytes carries
//!   timestamps, 52 + 4 + 8n timestamps and n SACK blocks, 40 + 4 + 8n only
//!   the blocks.
//! * **TCP checksum** — correct for a segment whose payload is all zeros (the
//!   pseudo-header counts the real segment length); Wireshark cannot verify it
//!   anyway since the payload is not captured.

use crate::packet::{Ecn, Kind, Packet, IP_HEADER};
use crate::time::Time;

/// pcap magic number for nanosecond-resolution timestamps.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// `LINKTYPE_RAW`: records start with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Snapshot length written in the global header.
pub const SNAPLEN: u32 = 65_535;
/// TCP port of the data sender of flow 0 (flow `f` uses `BASE + f`).
pub const SENDER_PORT_BASE: u16 = 10_000;
/// TCP port of every receiver.
pub const RECEIVER_PORT: u16 = 5001;

/// Bytes of the pcap global header.
const GLOBAL_HEADER: usize = 24;

/// IPv4 address of node `n`: 198.18.0.0 + n + 1.
pub fn node_addr(n: u32) -> [u8; 4] {
    0xc612_0000u32.wrapping_add(n).wrapping_add(1).to_be_bytes()
}

/// Builds a pcap file in memory, one record per [`PcapWriter::record`].
#[derive(Clone, Debug)]
pub struct PcapWriter {
    buf: Vec<u8>,
    packets: u64,
}

impl Default for PcapWriter {
    fn default() -> Self {
        PcapWriter::new()
    }
}

fn ones_complement_sum(mut acc: u32, bytes: &[u8]) -> u32 {
    for c in bytes.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        acc += u32::from(w);
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum (RFC 1071) of `bytes`.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    fold(ones_complement_sum(0, bytes))
}

fn millis32(t: Time) -> u32 {
    (t.as_nanos() / 1_000_000) as u32
}

impl PcapWriter {
    /// An empty capture (just the global header).
    pub fn new() -> PcapWriter {
        let mut buf = Vec::with_capacity(4096);
        buf.extend_from_slice(&PCAP_MAGIC_NANOS.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&SNAPLEN.to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        debug_assert_eq!(buf.len(), GLOBAL_HEADER);
        PcapWriter { buf, packets: 0 }
    }

    /// Records written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// The file so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The finished file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// The bytes written since the last call (the first time: the global
    /// header and every record so far); the pieces joined are the file. Lets a
    /// front stream a long capture to disk in bounded memory.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Append `pkt`, seen at `t`.
    pub fn record(&mut self, t: Time, pkt: &Packet) {
        let tcp_len = usize::from(pkt.header.saturating_sub(IP_HEADER)).clamp(20, 60) & !3;
        let hdr_len = usize::from(IP_HEADER) + tcp_len;
        let wire = pkt.size().max(hdr_len as u32);
        let total_len = wire.min(65_535) as u16;

        // Record header.
        let ns = t.as_nanos();
        self.buf
            .extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        self.buf
            .extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&(hdr_len as u32).to_le_bytes());
        self.buf.extend_from_slice(&wire.to_le_bytes());

        let mut h = [0u8; 80];
        let (ip, tcp) = h[..hdr_len].split_at_mut(usize::from(IP_HEADER));

        // IPv4.
        let src = node_addr(pkt.src.0);
        let dst = node_addr(pkt.dst.0);
        ip[0] = 0x45;
        ip[1] = match pkt.ecn {
            Ecn::NotEct => 0b00,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        };
        ip[2..4].copy_from_slice(&total_len.to_be_bytes());
        ip[4..6].copy_from_slice(&(pkt.uid as u16).to_be_bytes());
        ip[6..8].copy_from_slice(&0x4000u16.to_be_bytes()); // DF
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let c = internet_checksum(ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());

        // TCP.
        let sender = SENDER_PORT_BASE.wrapping_add(pkt.flow.0 as u16);
        let (sport, dport) = match pkt.kind {
            Kind::Data => (sender, RECEIVER_PORT),
            Kind::Ack => (RECEIVER_PORT, sender),
        };
        let syn = pkt.flags.has(crate::packet::TcpFlags::SYN);
        let seq = if syn {
            pkt.seq as u32
        } else {
            (pkt.seq as u32).wrapping_add(1)
        };
        let ack = if pkt.flags.has(crate::packet::TcpFlags::ACK) {
            (pkt.ack as u32).wrapping_add(1)
        } else {
            0
        };
        tcp[0..2].copy_from_slice(&sport.to_be_bytes());
        tcp[2..4].copy_from_slice(&dport.to_be_bytes());
        tcp[4..8].copy_from_slice(&seq.to_be_bytes());
        tcp[8..12].copy_from_slice(&ack.to_be_bytes());
        tcp[12] = ((tcp_len / 4) as u8) << 4;
        tcp[13] = pkt.flags.0;
        tcp[14..16].copy_from_slice(&65_535u16.to_be_bytes());

        // Options.
        let room = tcp_len - 20;
        let sack = pkt.sack.blocks();
        let sack_bytes = |n: usize| if n == 0 { 0 } else { 4 + 8 * n };
        let with_ts = room >= 12 + sack_bytes(sack.len());
        let mut o = 20;
        if with_ts {
            tcp[o..o + 4].copy_from_slice(&[1, 1, 8, 10]);
            tcp[o + 4..o + 8].copy_from_slice(&millis32(pkt.sent_at).to_be_bytes());
            tcp[o + 8..o + 12].copy_from_slice(&millis32(pkt.ts_echo).to_be_bytes());
            o += 12;
        }
        let fit = sack.len().min((tcp_len - o).saturating_sub(4) / 8);
        if fit > 0 {
            tcp[o..o + 4].copy_from_slice(&[1, 1, 5, (2 + 8 * fit) as u8]);
            o += 4;
            for &(s, e) in &sack[..fit] {
                tcp[o..o + 4].copy_from_slice(&(s as u32).wrapping_add(1).to_be_bytes());
                tcp[o + 4..o + 8].copy_from_slice(&(e as u32).wrapping_add(1).to_be_bytes());
                o += 8;
            }
        }
        // The rest stays zero: EOL followed by padding.

        // Checksum over the pseudo-header, the header and an all-zero payload.
        let seg_len = u32::from(total_len) - u32::from(IP_HEADER);
        let mut acc = ones_complement_sum(0, &src);
        acc = ones_complement_sum(acc, &dst);
        acc += 6 + seg_len;
        acc = ones_complement_sum(acc, tcp);
        let c = fold(acc);
        tcp[16..18].copy_from_slice(&c.to_be_bytes());

        self.buf.extend_from_slice(&h[..hdr_len]);
        self.packets += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, NodeId, SackBlocks, TcpFlags, TCP_HEADER, TCP_TS_OPTION};

    fn u16be(b: &[u8], i: usize) -> u16 {
        u16::from_be_bytes([b[i], b[i + 1]])
    }
    fn u32be(b: &[u8], i: usize) -> u32 {
        u32::from_be_bytes(b[i..i + 4].try_into().unwrap())
    }
    fn u32le(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
    }

    #[derive(Debug)]
    struct Rec {
        sec: u32,
        nsec: u32,
        orig_len: u32,
        data: Vec<u8>,
    }

    /// A minimal pcap reader.
    fn parse(bytes: &[u8]) -> Vec<Rec> {
        assert_eq!(u32le(bytes, 0), 0xa1b2_3c4d);
        assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 2);
        assert_eq!(u16::from_le_bytes([bytes[6], bytes[7]]), 4);
        assert_eq!(u32le(bytes, 16), 65_535);
        assert_eq!(u32le(bytes, 20), 101);
        let mut out = Vec::new();
        let mut i = 24;
        while i < bytes.len() {
            let incl = u32le(bytes, i + 8) as usize;
            out.push(Rec {
                sec: u32le(bytes, i),
                nsec: u32le(bytes, i + 4),
                orig_len: u32le(bytes, i + 12),
                data: bytes[i + 16..i + 16 + incl].to_vec(),
            });
            i += 16 + incl;
        }
        assert_eq!(i, bytes.len());
        out
    }

    /// TCP options as (kind, body) pairs, stopping at EOL.
    fn options(tcp: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let hl = usize::from(tcp[12] >> 4) * 4;
        let mut out = Vec::new();
        let mut i = 20;
        while i < hl {
            match tcp[i] {
                0 => {
                    assert!(tcp[i..hl].iter().all(|&b| b == 0), "non-zero after EOL");
                    break;
                }
                1 => i += 1,
                k => {
                    let len = usize::from(tcp[i + 1]);
                    out.push((k, tcp[i + 2..i + len].to_vec()));
                    i += len;
                }
            }
        }
        assert!(i <= hl);
        out
    }

    fn data_pkt() -> Packet {
        Packet {
            uid: 0x1_2345,
            flow: FlowId(3),
            src: NodeId(0),
            dst: NodeId(2),
            kind: Kind::Data,
            seq: (1u64 << 32) + 1000,
            ack: 1,
            payload: 1448,
            header: IP_HEADER + TCP_HEADER + TCP_TS_OPTION,
            flags: TcpFlags(TcpFlags::ACK | TcpFlags::CWR),
            ecn: Ecn::Ect0,
            sent_at: Time::from_millis(1234),
            ts_echo: Time::from_millis(1200),
            ..Packet::default()
        }
    }

    fn ack_pkt() -> Packet {
        let mut sack = SackBlocks::EMPTY;
        sack.push(5000, 6448);
        sack.push(8000, 9448);
        sack.push(11000, 12448);
        Packet {
            uid: 7,
            flow: FlowId(3),
            src: NodeId(2),
            dst: NodeId(0),
            kind: Kind::Ack,
            seq: 0,
            ack: 3552,
            payload: 0,
            // Timestamps + 3 SACK blocks: 20 + 20 + 12 + 28 = 80.
            header: IP_HEADER + TCP_HEADER + TCP_TS_OPTION + 28,
            flags: TcpFlags(TcpFlags::ACK | TcpFlags::ECE),
            ecn: Ecn::NotEct,
            sack,
            sent_at: Time::from_millis(1300),
            ts_echo: Time::from_millis(1234),
            ..Packet::default()
        }
    }

    #[test]
    fn global_header_only() {
        let w = PcapWriter::new();
        assert_eq!(w.packets(), 0);
        let b = w.into_bytes();
        assert_eq!(b.len(), 24);
        assert_eq!(&b[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert!(parse(&b).is_empty());
    }

    #[test]
    fn drained_pieces_join_into_the_file() {
        let (mut whole, mut parts) = (PcapWriter::new(), PcapWriter::new());
        let mut joined = Vec::new();
        for i in 0..5u64 {
            let t = Time::from_millis(10 * i);
            for w in [&mut whole, &mut parts] {
                w.record(t, &data_pkt());
                w.record(t, &ack_pkt());
            }
            if i % 2 == 0 {
                joined.extend(parts.take_bytes());
            }
        }
        joined.extend(parts.take_bytes());
        assert!(parts.take_bytes().is_empty());
        assert_eq!(parts.packets(), 10);
        assert_eq!(parse(&joined).len(), 10);
        assert_eq!(joined, whole.into_bytes());
    }

    #[test]
    fn node_addresses() {
        assert_eq!(node_addr(0), [198, 18, 0, 1]);
        assert_eq!(node_addr(255), [198, 18, 1, 0]);
    }

    #[test]
    fn data_packet_fields() {
        let mut w = PcapWriter::new();
        let p = data_pkt();
        w.record(Time::from_nanos(3_000_000_123), &p);
        assert_eq!(w.packets(), 1);
        let recs = parse(&w.into_bytes());
        assert_eq!(recs.len(), 1);
        let r = &recs[0];
        assert_eq!((r.sec, r.nsec), (3, 123));
        assert_eq!(r.orig_len, 1500);
        assert_eq!(r.data.len(), 52);
        let ip = &r.data[..20];
        assert_eq!(ip[0], 0x45);
        assert_eq!(ip[1] & 3, 0b10);
        assert_eq!(u16be(ip, 2), 1500);
        assert_eq!(u16be(ip, 4), 0x2345);
        assert_eq!(u16be(ip, 6), 0x4000);
        assert_eq!((ip[8], ip[9]), (64, 6));
        assert_eq!(&ip[12..16], &[198, 18, 0, 1]);
        assert_eq!(&ip[16..20], &[198, 18, 0, 3]);
        assert_eq!(internet_checksum(ip), 0, "IP header checksum");
        let tcp = &r.data[20..];
        assert_eq!(u16be(tcp, 0), 10_003);
        assert_eq!(u16be(tcp, 2), 5001);
        assert_eq!(u32be(tcp, 4), 1001, "seq wraps mod 2^32, +1 for the SYN");
        assert_eq!(u32be(tcp, 8), 2);
        assert_eq!(usize::from(tcp[12] >> 4) * 4, 32);
        assert_eq!(tcp[13], 0x90);
        assert_eq!(u16be(tcp, 14), 65_535);
        assert_eq!(&tcp[20..22], &[1, 1]);
        let opts = options(tcp);
        assert_eq!(opts.len(), 1);
        assert_eq!(opts[0].0, 8);
        assert_eq!(u32be(&opts[0].1, 0), 1234);
        assert_eq!(u32be(&opts[0].1, 4), 1200);
    }

    /// TCP checksum of a segment with `header` and `payload` zero bytes.
    fn tcp_checksum_ok(ip: &[u8], tcp: &[u8]) -> bool {
        let seg_len = u32::from(u16be(ip, 2)) - 20;
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&ip[12..20]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&(seg_len as u16).to_be_bytes());
        pseudo.extend_from_slice(tcp);
        // Zero payload adds nothing to the sum.
        internet_checksum(&pseudo) == 0
    }

    #[test]
    fn checksums() {
        let mut w = PcapWriter::new();
        for (i, mut p) in [data_pkt(), ack_pkt()].into_iter().enumerate() {
            for ecn in [Ecn::NotEct, Ecn::Ect0, Ecn::Ce] {
                p.ecn = ecn;
                p.uid += 1;
                p.seq += 977 * i as u64;
                w.record(Time::from_millis(5), &p);
            }
        }
        let recs = parse(&w.into_bytes());
        assert_eq!(recs.len(), 6);
        for (r, bits) in recs.iter().zip([0, 2, 3, 0, 2, 3]) {
            let (ip, tcp) = r.data.split_at(20);
            assert_eq!(ip[1] & 3, bits);
            assert_eq!(internet_checksum(ip), 0);
            assert!(tcp_checksum_ok(ip, tcp));
        }
    }

    #[test]
    fn ack_with_sack_and_timestamps() {
        let mut w = PcapWriter::new();
        w.record(Time::from_millis(1300), &ack_pkt());
        let recs = parse(w.as_bytes());
        let r = &recs[0];
        assert_eq!(r.orig_len, 80);
        assert_eq!(r.data.len(), 80);
        let (ip, tcp) = r.data.split_at(20);
        assert_eq!(ip[1] & 3, 0);
        assert_eq!(&ip[12..16], &[198, 18, 0, 3]);
        assert_eq!(u16be(tcp, 0), 5001);
        assert_eq!(u16be(tcp, 2), 10_003);
        assert_eq!(u32be(tcp, 4), 1);
        assert_eq!(u32be(tcp, 8), 3553);
        assert_eq!(tcp[13], 0x50);
        assert_eq!(usize::from(tcp[12] >> 4) * 4, 60);
        let opts = options(tcp);
        assert_eq!(opts[0].0, 8);
        assert_eq!(u32be(&opts[0].1, 0), 1300);
        assert_eq!(u32be(&opts[0].1, 4), 1234);
        assert_eq!(opts.len(), 2);
        assert_eq!(opts[1].0, 5);
        let b = &opts[1].1;
        assert_eq!(b.len(), 24);
        let edges: Vec<u32> = (0..6).map(|i| u32be(b, 4 * i)).collect();
        assert_eq!(edges, [5001, 6449, 8001, 9449, 11001, 12449]);
    }

    #[test]
    fn four_sack_blocks_take_precedence_over_timestamps() {
        let mut p = ack_pkt();
        p.sack.push(14000, 15448);
        // 40 bytes of options: TS + 4 blocks (48) do not fit, 4 blocks (36) do.
        let mut w = PcapWriter::new();
        w.record(Time::ZERO, &p);
        let recs = parse(&w.into_bytes());
        let tcp = &recs[0].data[20..];
        let opts = options(tcp);
        assert_eq!(opts.len(), 1);
        assert_eq!((opts[0].0, opts[0].1.len()), (5, 32));
        assert_eq!(u32be(&opts[0].1, 24), 14001);
        // With only 28 bytes of options, 3 of the 4 blocks.
        p.header = 40 + 28;
        let mut w = PcapWriter::new();
        w.record(Time::ZERO, &p);
        let recs = parse(&w.into_bytes());
        let opts = options(&recs[0].data[20..]);
        assert_eq!((opts[0].0, opts[0].1.len()), (5, 24));
    }

    #[test]
    fn sack_without_timestamps_and_padding() {
        let mut p = ack_pkt();
        p.sack = SackBlocks::EMPTY;
        p.sack.push(5000, 6448);
        p.sack.push(8000, 9448);
        // Room for 2 blocks (20 bytes) + 4 spare: no timestamps, EOL padding.
        p.header = 40 + 24;
        let mut w = PcapWriter::new();
        w.record(Time::ZERO, &p);
        let recs = parse(&w.into_bytes());
        let tcp = &recs[0].data[20..];
        assert_eq!(tcp.len(), 44);
        let opts = options(tcp);
        assert_eq!(opts.len(), 1);
        assert_eq!((opts[0].0, opts[0].1.len()), (5, 16));
        assert_eq!(&tcp[40..44], &[0, 0, 0, 0]);
    }

    #[test]
    fn syn_and_odd_headers() {
        let syn = Packet {
            flags: TcpFlags(TcpFlags::SYN),
            header: 40,
            ..Packet::default()
        };
        let bare = Packet {
            header: 0,
            ..Packet::default()
        };
        let odd = Packet {
            header: 50,
            payload: 10,
            ..Packet::default()
        };
        let mut w = PcapWriter::new();
        w.record(Time::ZERO, &syn);
        w.record(Time::ZERO, &bare);
        w.record(Time::ZERO, &odd);
        let recs = parse(&w.into_bytes());
        let tcp = &recs[0].data[20..];
        assert_eq!(u32be(tcp, 4), 0);
        assert_eq!(u32be(tcp, 8), 0);
        assert_eq!(tcp[13], 0x02);
        // header 0: a minimal 40-byte header, orig_len at least that.
        assert_eq!(recs[1].data.len(), 40);
        assert_eq!(recs[1].orig_len, 40);
        assert_eq!(u16be(&recs[1].data, 2), 40);
        // header 50: TCP part rounded down to 28 bytes; wire size kept.
        assert_eq!(recs[2].data.len(), 48);
        assert_eq!(recs[2].orig_len, 60);
        assert_eq!(u16be(&recs[2].data, 2), 60);
        for r in &recs {
            assert!(tcp_checksum_ok(&r.data[..20], &r.data[20..]));
        }
    }
}

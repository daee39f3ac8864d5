//! Packet capture: the bytes of a pcap or pcapng file, built in memory (no I/O).
//!
//! **Formats.** Classic pcap with nanosecond timestamps (magic `0xa1b23c4d`,
//! version 2.4, little-endian, snaplen 65535), or pcapng (a section header,
//! one interface description per captured link direction, named after it, with
//! nanosecond timestamps, a name-resolution block mapping every node's address
//! to its name, then one enhanced packet block per packet). Classic pcap uses
//! link type 101 (`LINKTYPE_RAW`: each record starts with the IP header);
//! pcapng uses link type 1 (`LINKTYPE_ETHERNET`) on every interface, each record
//! starting with a 14-byte Ethernet header — destination and source MAC
//! `02:00` followed by the node's IPv4 address (locally administered), type
//! IPv4 — because libpcap 1.10 (tcpdump, tcptrace) refuses a pcapng file whose
//! interfaces have link type 101 after the first ("an interface has a type 101
//! different from the type of the first interface": it compares the second
//! interface's type against the DLT number it translated the first one's to).
//! Both open directly in Wireshark, tshark, tcpdump and tcptrace.
//!
//! Packets carry no payload bytes, so every record holds the **headers only**:
//! the captured length is the synthetic IPv4 + TCP header, the original length
//! the real wire size [`Packet::size`] (both 14 bytes more in pcapng, for the
//! Ethernet header; the IPv4 total length is the wire size in both). The
//! synthetic headers are:
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
//!   included). The window is the flow's receive window `rwnd` as its ends
//!   offer it ([`FlowWire`]): unscaled (at most 65535) on a SYN, shifted right
//!   by the window scale the SYNs negotiated on every other segment. Urgent
//!   pointer 0.
//! * **SYN options**, as Linux orders them: MSS (the flow's `mss`),
//!   SACK-permitted (with SACK), timestamps (when on), window scale — `MSS
//!   SACK_PERM TS NOP WS` (20 bytes), `MSS NOP NOP TS NOP WS` without SACK,
//!   `MSS NOP NOP SACK_PERM NOP WS` without timestamps, `MSS NOP WS` with
//!   neither. The simulated SYN does not count the window-scale option's 4
//!   bytes ([`crate::tcp::TcpConfig::syn_header`]); the captured SYN's lengths
//!   include them.
//! * **Other options**, in the option space the header length leaves:
//!   timestamps (`NOP NOP TS`, 12 bytes; TSval = [`Packet::sent_at`], TSecr =
//!   [`Packet::ts_echo`], both in milliseconds mod 2^32) when there is room for
//!   them and all of [`Packet::sack`]'s blocks, then `NOP NOP SACK` with as
//!   many of the blocks as fit (edges shifted by 1 like `seq`), then EOL/zero
//!   padding to the exact header length. So a header of 52 bytes carries
//!   timestamps, 52 + 4 + 8n timestamps and n SACK blocks, 40 + 4 + 8n only
//!   the blocks.
//! * **TCP checksum** — correct for a segment whose payload is all zeros (the
//!   pseudo-header counts the real segment length); Wireshark cannot verify it
//!   anyway since the payload is not captured.

use std::sync::Arc;

use crate::packet::{Ecn, Kind, Packet, TcpFlags, IP_HEADER};
use crate::tcp::{TcpConfig, Variant};
use crate::time::Time;

/// pcap magic number for nanosecond-resolution timestamps.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// `LINKTYPE_RAW`: records start with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// `LINKTYPE_ETHERNET`: records start with an Ethernet header. pcapng files
/// use it: libpcap (1.10) reads a pcapng file of several interfaces only when
/// their link type's number is the same as libpcap's own (DLT) number for it,
/// which `LINKTYPE_RAW` (DLT 12 or 14) is not.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Bytes of the synthetic Ethernet header of a pcapng record.
pub const ETHERNET_HEADER: usize = 14;
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

/// File format of a capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap, nanosecond timestamps.
    #[default]
    Pcap,
    /// pcapng with interface names and a name-resolution block.
    Pcapng,
}

/// What a flow's headers show that its packets do not carry: the options its
/// SYNs negotiate and the receive window its ends offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowWire {
    /// MSS option value (the flow's payload bytes per segment, at most 65535).
    pub mss: u16,
    /// SACK-permitted in the SYNs.
    pub sack: bool,
    /// Timestamps negotiated.
    pub timestamps: bool,
    /// Window scale shift both ends announce: the smallest that fits `rwnd`.
    pub wscale: u8,
    /// Receive window offered, bytes.
    pub rwnd: u64,
}

impl Default for FlowWire {
    /// A flow the capture knows nothing of: MSS 1460, no SACK, no
    /// timestamps, a 65535-byte window (scale 0).
    fn default() -> Self {
        FlowWire {
            mss: 1460,
            sack: false,
            timestamps: false,
            wscale: 0,
            rwnd: 65_535,
        }
    }
}

impl FlowWire {
    /// What a flow configured as `tcp` puts in its headers.
    pub fn of(tcp: &TcpConfig) -> FlowWire {
        let mut wscale = 0u8;
        while wscale < 14 && tcp.rwnd >> wscale > 65_535 {
            wscale += 1;
        }
        FlowWire {
            mss: tcp.mss.min(65_535) as u16,
            sack: tcp.variant == Variant::Sack,
            timestamps: tcp.timestamps,
            wscale,
            rwnd: tcp.rwnd,
        }
    }

    /// The window field of a segment other than a SYN.
    fn window(&self) -> u16 {
        (self.rwnd >> self.wscale).min(65_535) as u16
    }

    /// The window field of a SYN (never scaled).
    fn syn_window(&self) -> u16 {
        self.rwnd.min(65_535) as u16
    }

    /// The SYN's options, Linux's order, padded to a multiple of 4 bytes.
    fn syn_options(&self, tsval: u32, tsecr: u32) -> ([u8; 20], usize) {
        let mut o = [0u8; 20];
        let mut n = 0;
        let mut put = |b: &[u8]| {
            o[n..n + b.len()].copy_from_slice(b);
            n += b.len();
        };
        put(&[2, 4]);
        put(&self.mss.to_be_bytes());
        let mut ts = [8u8, 10, 0, 0, 0, 0, 0, 0, 0, 0];
        ts[2..6].copy_from_slice(&tsval.to_be_bytes());
        ts[6..10].copy_from_slice(&tsecr.to_be_bytes());
        match (self.sack, self.timestamps) {
            (true, true) => {
                put(&[4, 2]);
                put(&ts);
            }
            (false, true) => {
                put(&[1, 1]);
                put(&ts);
            }
            (true, false) => put(&[1, 1, 4, 2]),
            (false, false) => {}
        }
        put(&[1, 3, 3, self.wscale]);
        (o, n)
    }
}

/// A captured link direction as a pcapng interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// `if_name` (e.g. `A->B`).
    pub name: String,
    /// `if_description` (where on the link the packets were seen).
    pub description: String,
}

/// Builds a pcap or pcapng file in memory, one record per
/// [`PcapWriter::record`].
#[derive(Clone, Debug)]
pub struct PcapWriter {
    buf: Vec<u8>,
    packets: u64,
    format: Format,
    flows: Arc<[FlowWire]>,
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

/// One pcapng block: type, total length, `body` padded to 4, total length.
fn block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let padded = body.len().next_multiple_of(4);
    let total = (12 + padded) as u32;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(body);
    out.resize(out.len() + padded - body.len(), 0);
    out.extend_from_slice(&total.to_le_bytes());
}

/// A pcapng option (code, length, value padded to 4).
fn option(out: &mut Vec<u8>, code: u16, value: &[u8]) {
    out.extend_from_slice(&code.to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(value);
    out.resize(out.len().next_multiple_of(4), 0);
}

impl PcapWriter {
    /// An empty classic pcap capture (just the global header) of flows it
    /// knows nothing about ([`FlowWire::default`]).
    pub fn new() -> PcapWriter {
        PcapWriter::with_info(Format::Pcap, Arc::from([]), &[], &[])
    }

    /// An empty capture in `format` whose flow `f` puts `flows[f]` in its
    /// headers. A pcapng file starts with one interface description per
    /// entry of `interfaces` (the `iface` of [`PcapWriter::record_on`]) and
    /// a name-resolution block giving node `n` the name `nodes[n]`; a
    /// classic pcap file has neither.
    pub fn with_info(
        format: Format,
        flows: Arc<[FlowWire]>,
        interfaces: &[Interface],
        nodes: &[String],
    ) -> PcapWriter {
        let mut buf = Vec::with_capacity(4096);
        match format {
            Format::Pcap => {
                buf.extend_from_slice(&PCAP_MAGIC_NANOS.to_le_bytes());
                buf.extend_from_slice(&2u16.to_le_bytes());
                buf.extend_from_slice(&4u16.to_le_bytes());
                buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
                buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
                buf.extend_from_slice(&SNAPLEN.to_le_bytes());
                buf.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
                debug_assert_eq!(buf.len(), GLOBAL_HEADER);
            }
            Format::Pcapng => {
                let mut b = Vec::new();
                b.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes()); // byte-order magic
                b.extend_from_slice(&1u16.to_le_bytes());
                b.extend_from_slice(&0u16.to_le_bytes());
                b.extend_from_slice(&u64::MAX.to_le_bytes()); // section length unknown
                let app = concat!("linklab ", env!("CARGO_PKG_VERSION"));
                option(&mut b, 4, app.as_bytes()); // shb_userappl
                option(&mut b, 0, &[]);
                block(&mut buf, 0x0a0d_0d0a, &b);
                for i in interfaces {
                    let mut b = Vec::new();
                    b.extend_from_slice(&(LINKTYPE_ETHERNET as u16).to_le_bytes());
                    b.extend_from_slice(&0u16.to_le_bytes());
                    b.extend_from_slice(&SNAPLEN.to_le_bytes());
                    option(&mut b, 2, i.name.as_bytes()); // if_name
                    option(&mut b, 3, i.description.as_bytes()); // if_description
                    option(&mut b, 9, &[9]); // if_tsresol: nanoseconds
                    option(&mut b, 0, &[]);
                    block(&mut buf, 1, &b);
                }
                if !nodes.is_empty() {
                    let mut b = Vec::new();
                    for (n, name) in nodes.iter().enumerate() {
                        let mut v = node_addr(n as u32).to_vec();
                        v.extend_from_slice(name.as_bytes());
                        v.push(0);
                        option(&mut b, 1, &v); // nrb_record_ipv4
                    }
                    option(&mut b, 0, &[]); // nrb_record_end
                    block(&mut buf, 4, &b);
                }
            }
        }
        PcapWriter {
            buf,
            packets: 0,
            format,
            flows,
        }
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

    /// The bytes written since the last call (the first time: the file's
    /// header and every record so far); the pieces joined are the file. Lets
    /// a front stream a long capture to disk in bounded memory.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Append `pkt`, seen at `t` (on interface 0).
    pub fn record(&mut self, t: Time, pkt: &Packet) {
        self.record_on(0, t, pkt);
    }

    /// Append `pkt`, seen at `t` on interface `iface` (pcapng; classic pcap
    /// has no interfaces and ignores it).
    pub fn record_on(&mut self, iface: u32, t: Time, pkt: &Packet) {
        let mut h = [0u8; 80];
        let (hdr_len, wire) = self.headers(pkt, &mut h);
        let ns = t.as_nanos();
        match self.format {
            Format::Pcap => {
                self.buf
                    .extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
                self.buf
                    .extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
                self.buf.extend_from_slice(&(hdr_len as u32).to_le_bytes());
                self.buf.extend_from_slice(&wire.to_le_bytes());
                self.buf.extend_from_slice(&h[..hdr_len]);
            }
            Format::Pcapng => {
                const E: usize = ETHERNET_HEADER;
                let mut b = [0u8; 20 + E + 80];
                b[0..4].copy_from_slice(&iface.to_le_bytes());
                b[4..8].copy_from_slice(&((ns >> 32) as u32).to_le_bytes());
                b[8..12].copy_from_slice(&(ns as u32).to_le_bytes());
                b[12..16].copy_from_slice(&((E + hdr_len) as u32).to_le_bytes());
                b[16..20].copy_from_slice(&(wire + E as u32).to_le_bytes());
                // Ethernet: destination, source (02:00 + the IPv4 address), IPv4.
                let eth = &mut b[20..20 + E];
                eth[0..2].copy_from_slice(&[0x02, 0x00]);
                eth[2..6].copy_from_slice(&h[16..20]);
                eth[6..8].copy_from_slice(&[0x02, 0x00]);
                eth[8..12].copy_from_slice(&h[12..16]);
                eth[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
                b[20 + E..20 + E + hdr_len].copy_from_slice(&h[..hdr_len]);
                block(&mut self.buf, 6, &b[..20 + E + hdr_len]);
            }
        }
        self.packets += 1;
    }

    /// Write `pkt`'s IPv4 + TCP headers into `h`; returns (header bytes,
    /// wire size).
    fn headers(&self, pkt: &Packet, h: &mut [u8; 80]) -> (usize, u32) {
        if let Some(m) = crate::media::stream_of(pkt.flow) {
            return udp_headers(pkt, m, h);
        }
        let flow = self
            .flows
            .get(pkt.flow.0 as usize)
            .copied()
            .unwrap_or_default();
        let syn = pkt.flags.has(TcpFlags::SYN);
        // A SYN's options as negotiated (only a SYN pays for building them).
        let (syn_opts, syn_len) = if syn {
            flow.syn_options(millis32(pkt.sent_at), millis32(pkt.ts_echo))
        } else {
            ([0; 20], 0)
        };
        let tcp_len = if syn {
            20 + syn_len
        } else {
            usize::from(pkt.header.saturating_sub(IP_HEADER)).clamp(20, 60) & !3
        };
        let hdr_len = usize::from(IP_HEADER) + tcp_len;
        let wire = pkt.size().max(hdr_len as u32);
        let total_len = wire.min(65_535) as u16;
        let (ip, tcp) = h[..hdr_len].split_at_mut(usize::from(IP_HEADER));

        // IPv4.
        let (src, dst) = ipv4_header(ip, pkt, total_len, 6);

        // TCP.
        let sender = SENDER_PORT_BASE.wrapping_add(pkt.flow.0 as u16);
        let (sport, dport) = match pkt.kind {
            Kind::Data => (sender, RECEIVER_PORT),
            Kind::Ack => (RECEIVER_PORT, sender),
        };
        let seq = if syn {
            pkt.seq as u32
        } else {
            (pkt.seq as u32).wrapping_add(1)
        };
        let ack = if pkt.flags.has(TcpFlags::ACK) {
            (pkt.ack as u32).wrapping_add(1)
        } else {
            0
        };
        let window = if syn {
            flow.syn_window()
        } else {
            flow.window()
        };
        tcp[0..2].copy_from_slice(&sport.to_be_bytes());
        tcp[2..4].copy_from_slice(&dport.to_be_bytes());
        tcp[4..8].copy_from_slice(&seq.to_be_bytes());
        tcp[8..12].copy_from_slice(&ack.to_be_bytes());
        tcp[12] = ((tcp_len / 4) as u8) << 4;
        tcp[13] = pkt.flags.0;
        tcp[14..16].copy_from_slice(&window.to_be_bytes());

        // Options.
        if syn {
            tcp[20..20 + syn_len].copy_from_slice(&syn_opts[..syn_len]);
        } else {
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
        }

        // Checksum over the pseudo-header, the header and an all-zero payload.
        let seg_len = u32::from(total_len) - u32::from(IP_HEADER);
        let mut acc = ones_complement_sum(0, &src);
        acc = ones_complement_sum(acc, &dst);
        acc += 6 + seg_len;
        acc = ones_complement_sum(acc, tcp);
        let c = fold(acc);
        tcp[16..18].copy_from_slice(&c.to_be_bytes());
        (hdr_len, wire)
    }
}

/// Write the IPv4 header of `pkt` (protocol `proto`, `total_len` bytes)
/// into `ip`; returns the source and destination addresses.
fn ipv4_header(ip: &mut [u8], pkt: &Packet, total_len: u16, proto: u8) -> ([u8; 4], [u8; 4]) {
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
    ip[9] = proto;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let c = internet_checksum(&ip[..usize::from(IP_HEADER)]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    (src, dst)
}

/// A media packet of stream `m` (`[[media]]`) as IPv4 + UDP: source port
/// 16384 + m (RTP's customary range), destination port 5004 (RTP), the UDP
/// checksum 0 (none, allowed over IPv4); the payload is not captured.
fn udp_headers(pkt: &Packet, m: usize, h: &mut [u8; 80]) -> (usize, u32) {
    let hdr_len = usize::from(IP_HEADER) + usize::from(crate::media::UDP_HEADER);
    let wire = pkt.size().max(hdr_len as u32);
    let total_len = wire.min(65_535) as u16;
    let (ip, udp) = h[..hdr_len].split_at_mut(usize::from(IP_HEADER));
    ipv4_header(ip, pkt, total_len, 17);
    let sport = 16_384u16.wrapping_add(m as u16);
    udp[0..2].copy_from_slice(&sport.to_be_bytes());
    udp[2..4].copy_from_slice(&5004u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(total_len - IP_HEADER).to_be_bytes());
    udp[6..8].copy_from_slice(&0u16.to_be_bytes());
    (hdr_len, wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, NodeId, SackBlocks, TCP_HEADER, TCP_TS_OPTION};

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

    /// A media packet (`[[media]]` stream 2) is IPv4 + UDP: protocol 17, its
    /// ports, the UDP length, no checksum; 28 bytes captured of 200 on the wire.
    #[test]
    fn media_packets_are_udp() {
        let mut w = PcapWriter::new();
        let p = Packet {
            flow: crate::media::flow_id(2),
            src: NodeId(0),
            dst: NodeId(2),
            payload: 172,
            header: 28,
            uid: 7,
            ..Packet::default()
        };
        w.record(Time::from_millis(1), &p);
        let r = &parse(&w.into_bytes())[0];
        assert_eq!((r.orig_len, r.data.len()), (200, 28));
        let (ip, udp) = r.data.split_at(20);
        assert_eq!((ip[9], u16be(ip, 2)), (17, 200));
        assert_eq!(internet_checksum(ip), 0);
        assert_eq!(
            (u16be(udp, 0), u16be(udp, 2), u16be(udp, 4), u16be(udp, 6)),
            (16_386, 5004, 180, 0)
        );
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
        // A flow the writer does not know: MSS 1460 and window scale 0.
        assert_eq!(tcp.len(), 28);
        assert_eq!(options(tcp), [(2, vec![0x05, 0xb4]), (3, vec![0])]);
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

    fn wire(sack: bool, timestamps: bool, rwnd: u64) -> FlowWire {
        let tcp = TcpConfig {
            variant: if sack {
                Variant::Sack
            } else {
                Variant::NewReno
            },
            timestamps,
            rwnd,
            mss: 1448,
            ..TcpConfig::default()
        };
        FlowWire::of(&tcp)
    }

    #[test]
    fn window_scale_is_the_smallest_that_fits() {
        assert_eq!(wire(true, true, 65_535).wscale, 0);
        assert_eq!(wire(true, true, 65_536).wscale, 1);
        assert_eq!(wire(true, true, 1 << 20).wscale, 5);
        assert_eq!(wire(true, true, 1 << 30).wscale, 14);
        let w = wire(true, true, 1 << 20);
        assert_eq!((w.window(), w.syn_window()), (32_768, 65_535));
    }

    /// SYN options in Linux's order for each SACK / timestamps setting, and
    /// the window: unscaled on SYNs, scaled on everything else.
    #[test]
    fn syn_options_as_negotiated_and_the_real_window() {
        let cases: [(bool, bool, &[u8]); 4] = [
            (true, true, &[2, 4, 8, 1, 3]),
            (false, true, &[2, 1, 1, 8, 1, 3]),
            (true, false, &[2, 1, 1, 4, 1, 3]),
            (false, false, &[2, 1, 3]),
        ];
        for (sack, ts, kinds) in cases {
            let flows: Arc<[FlowWire]> = vec![wire(sack, ts, 1 << 20); 4].into();
            let mut w = PcapWriter::with_info(Format::Pcap, flows, &[], &[]);
            let syn = Packet {
                flow: FlowId(3),
                flags: TcpFlags(TcpFlags::SYN),
                // As the simulator sizes a SYN (without the window scale).
                header: 44 + if ts { 12 } else { 4 * u16::from(sack) },
                sent_at: Time::from_millis(7),
                ..Packet::default()
            };
            let synack = Packet {
                kind: Kind::Ack,
                flags: TcpFlags(TcpFlags::SYN | TcpFlags::ACK),
                ts_echo: Time::from_millis(7),
                ..syn
            };
            w.record(Time::ZERO, &syn);
            w.record(Time::ZERO, &synack);
            w.record(Time::ZERO, &data_pkt());
            let recs = parse(&w.into_bytes());
            for r in &recs[..2] {
                let tcp = &r.data[20..];
                let hl = usize::from(tcp[12] >> 4) * 4;
                // The option kinds, NOPs included, in order.
                let mut seen = Vec::new();
                let mut i = 20;
                while i < hl && tcp[i] != 0 {
                    seen.push(tcp[i]);
                    i += if tcp[i] == 1 {
                        1
                    } else {
                        usize::from(tcp[i + 1])
                    };
                }
                assert_eq!(seen, kinds, "sack {sack} ts {ts}");
                assert_eq!(i, hl, "options fill the header exactly");
                let opts = options(tcp);
                assert_eq!(opts[0], (2, 1448u16.to_be_bytes().to_vec()));
                assert_eq!(opts.last().unwrap(), &(3, vec![5]));
                assert_eq!(u16be(tcp, 14), 65_535, "a SYN's window is not scaled");
                assert_eq!(u16be(&r.data, 2) as usize, r.data.len());
                assert!(tcp_checksum_ok(&r.data[..20], tcp));
                if ts {
                    let (_, v) = opts.iter().find(|o| o.0 == 8).unwrap();
                    assert_eq!(u32be(v, 0), 7);
                }
            }
            assert_eq!(u16be(&recs[2].data[20..], 14), 32_768, "1 MiB >> 5");
        }
    }

    /// A minimal pcapng reader: (block type, body) pairs.
    fn blocks(bytes: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let (kind, len) = (u32le(bytes, i), u32le(bytes, i + 4) as usize);
            assert_eq!(len % 4, 0);
            assert_eq!(u32le(bytes, i + len - 4) as usize, len, "trailing length");
            out.push((kind, bytes[i + 8..i + len - 4].to_vec()));
            i += len;
        }
        assert_eq!(i, bytes.len());
        out
    }

    /// pcapng options of a block body from `at`: (code, value) pairs.
    fn ng_options(body: &[u8], mut at: usize) -> Vec<(u16, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            let code = u16::from_le_bytes([body[at], body[at + 1]]);
            let len = usize::from(u16::from_le_bytes([body[at + 2], body[at + 3]]));
            if code == 0 {
                return out;
            }
            out.push((code, body[at + 4..at + 4 + len].to_vec()));
            at += 4 + len.next_multiple_of(4);
        }
    }

    #[test]
    fn pcapng_names_interfaces_and_nodes() {
        let ifaces = [
            Interface {
                name: "A->B".into(),
                description: "in".into(),
            },
            Interface {
                name: "B->A".into(),
                description: "back".into(),
            },
        ];
        let nodes = ["A".to_string(), "B".into(), "host-3".into()];
        let mut w = PcapWriter::with_info(Format::Pcapng, Arc::from([]), &ifaces, &nodes);
        w.record_on(0, Time::from_nanos(5_000_000_123), &data_pkt());
        w.record_on(1, Time::from_nanos(u64::from(u32::MAX) + 7), &ack_pkt());
        assert_eq!(w.packets(), 2);
        let b = blocks(&w.into_bytes());
        let kinds: Vec<u32> = b.iter().map(|x| x.0).collect();
        assert_eq!(kinds, [0x0a0d_0d0a, 1, 1, 4, 6, 6]);
        let shb = &b[0].1;
        assert_eq!(u32le(shb, 0), 0x1a2b_3c4d);
        assert_eq!(&shb[4..8], &[1, 0, 0, 0]);
        assert!(ng_options(shb, 16)[0].1.starts_with(b"linklab "));
        for (blk, name) in b[1..3].iter().zip(["A->B", "B->A"]) {
            assert_eq!(u16::from_le_bytes([blk.1[0], blk.1[1]]), 1, "Ethernet");
            assert_eq!(u32le(&blk.1, 4), 65_535);
            let o = ng_options(&blk.1, 8);
            assert_eq!(o[0], (2, name.as_bytes().to_vec()));
            assert_eq!(o[2], (9, vec![9]), "nanosecond timestamps");
        }
        let nrb = ng_options(&b[3].1, 0);
        assert_eq!(nrb.len(), 3);
        assert_eq!(nrb[2], (1, b"\xc6\x12\x00\x03host-3\x00".to_vec()));
        let epb = &b[4].1;
        assert_eq!(u32le(epb, 0), 0);
        let ts = (u64::from(u32le(epb, 4)) << 32) | u64::from(u32le(epb, 8));
        assert_eq!(ts, 5_000_000_123);
        assert_eq!((u32le(epb, 12), u32le(epb, 16)), (14 + 52, 14 + 1500));
        // Ethernet: 02:00 + destination address, 02:00 + source address, IPv4.
        let (src, dst) = (data_pkt().src.0, data_pkt().dst.0);
        assert_eq!(&epb[20..22], &[2, 0]);
        assert_eq!(epb[22..26], node_addr(dst));
        assert_eq!(&epb[26..28], &[2, 0]);
        assert_eq!(epb[28..32], node_addr(src));
        assert_eq!(&epb[32..34], &[8, 0]);
        assert_eq!(epb[34], 0x45);
        let epb = &b[5].1;
        assert_eq!(u32le(epb, 0), 1, "second interface");
        let ts = (u64::from(u32le(epb, 4)) << 32) | u64::from(u32le(epb, 8));
        assert_eq!(ts, u64::from(u32::MAX) + 7);
    }
}

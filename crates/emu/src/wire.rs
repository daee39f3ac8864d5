//! Live packets as the models see them: an IPv4 packet's sizes, kind, ECN
//! field, addresses and ports parsed into a core [`Packet`] (the bytes stay
//! with the emulator), and the two ways a model's decision is written back
//! into the bytes: a CE mark and residual bit errors.

use std::net::Ipv4Addr;

use linklab_core::packet::{Ecn, Kind, Packet};

/// An IPv4 packet read from a TUN device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parsed {
    /// The model's view (uid as given; flow, src and dst left 0).
    pub pkt: Packet,
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// IP protocol number (6 TCP, 17 UDP).
    pub proto: u8,
    /// Source port (TCP and UDP; 0 otherwise).
    pub sport: u16,
    /// Destination port (TCP and UDP; 0 otherwise).
    pub dport: u16,
}

/// A connection, the same for both of its directions: the protocol and its
/// two (address, port) ends in order.
pub type FlowKey = (u8, (Ipv4Addr, u16), (Ipv4Addr, u16));

impl Parsed {
    /// The connection this packet belongs to.
    pub fn flow_key(&self) -> FlowKey {
        let (a, b) = ((self.src, self.sport), (self.dst, self.dport));
        (self.proto, a.min(b), a.max(b))
    }
}

/// Parse an IPv4 packet (`None`: not IPv4, or shorter than its header).
pub fn parse(b: &[u8], uid: u64) -> Option<Parsed> {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(b[0] & 0x0f) * 4;
    if ihl < 20 || b.len() < ihl {
        return None;
    }
    let total = usize::from(u16::from_be_bytes([b[2], b[3]])).min(b.len());
    let proto = b[9];
    let mut header = ihl;
    if proto == 6 && total >= ihl + 20 {
        header += usize::from(b[ihl + 12] >> 4) * 4;
    } else if proto == 17 && total >= ihl + 8 {
        header += 8;
    }
    let header = header.min(total);
    let payload = (total - header) as u32;
    let ports = |at: usize| u16::from_be_bytes([b[ihl + at], b[ihl + at + 1]]);
    let (sport, dport) = if matches!(proto, 6 | 17) && total >= ihl + 4 {
        (ports(0), ports(2))
    } else {
        (0, 0)
    };
    Some(Parsed {
        pkt: Packet {
            uid,
            kind: if proto == 6 && payload == 0 {
                Kind::Ack
            } else {
                Kind::Data
            },
            payload,
            header: header as u16,
            ecn: match b[1] & 3 {
                0 => Ecn::NotEct,
                3 => Ecn::Ce,
                _ => Ecn::Ect0,
            },
            ..Packet::default()
        },
        src: Ipv4Addr::new(b[12], b[13], b[14], b[15]),
        dst: Ipv4Addr::new(b[16], b[17], b[18], b[19]),
        proto,
        sport,
        dport,
    })
}

/// Mark an IPv4 header CE and fix its checksum (RFC 1624 incremental update).
pub fn mark_ce(b: &mut [u8]) {
    if b.len() < 20 || b[1] & 3 == 3 {
        return;
    }
    let old = u16::from_be_bytes([b[0], b[1]]);
    b[1] |= 3;
    let new = u16::from_be_bytes([b[0], b[1]]);
    let sum = !u16::from_be_bytes([b[10], b[11]]);
    let mut s = u32::from(sum) + u32::from(!old) + u32::from(new);
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    let c = !(s as u16);
    b[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Flip the bits a radio link let through (`Packet::corrupt`, seed 004's
/// frame link) in the stored bytes, so that the receiving kernel's checksum
/// fails as on the real system: one bit in the headers when the header was
/// hit, the rest in the payload (or the headers when there is none), at
/// positions drawn from the packet id (reproducible).
pub fn flip_bits(bytes: &mut [u8], p: &Packet) {
    let header = usize::from(p.header).min(bytes.len());
    let mut n = p.corrupt_bits() as usize;
    let mut x = p.uid ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: usize| {
        // SplitMix64 steps: cheap, deterministic positions.
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % m as u64) as usize
    };
    if p.header_corrupt() && header > 0 && n > 0 {
        let bit = next(header * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        n -= 1;
    }
    let (lo, span) = if bytes.len() > header {
        (header, bytes.len() - header)
    } else {
        (0, bytes.len())
    };
    for _ in 0..n.min(span * 8) {
        let bit = next(span * 8);
        bytes[lo + bit / 8] ^= 1 << (bit % 8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 + TCP header (20 + 32 bytes) and `payload` bytes, checksummed.
    fn packet(payload: usize, tos: u8) -> Vec<u8> {
        let total = 52 + payload;
        let mut b = vec![0u8; total];
        b[0] = 0x45;
        b[1] = tos;
        b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        b[8] = 64;
        b[9] = 6;
        b[12..16].copy_from_slice(&[198, 18, 0, 1]);
        b[16..20].copy_from_slice(&[198, 18, 1, 1]);
        b[20..22].copy_from_slice(&40000u16.to_be_bytes());
        b[22..24].copy_from_slice(&5001u16.to_be_bytes());
        b[20 + 12] = 8 << 4; // data offset: 32 bytes
        let c = checksum(&b[..20]);
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b
    }

    fn checksum(h: &[u8]) -> u16 {
        let mut s: u32 = h
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn parses_sizes_kind_and_ecn() {
        let q = parse(&packet(1448, 2), 7).unwrap();
        assert_eq!(
            (q.src, q.dst),
            (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1))
        );
        assert_eq!((q.proto, q.sport, q.dport), (6, 40000, 5001));
        let p = q.pkt;
        assert_eq!((p.uid, p.payload, p.header, p.size()), (7, 1448, 52, 1500));
        assert_eq!((p.kind, p.ecn), (Kind::Data, Ecn::Ect0));
        let ack = parse(&packet(0, 0), 8).unwrap().pkt;
        assert_eq!(
            (ack.kind, ack.ecn, ack.size()),
            (Kind::Ack, Ecn::NotEct, 52)
        );
        assert!(parse(&[0x60; 40], 9).is_none()); // IPv6 is not forwarded
                                                  // Both directions of a connection share a key.
        let mut rev = packet(0, 0);
        rev[12..20].copy_from_slice(&[198, 18, 1, 1, 198, 18, 0, 1]);
        rev[20..24].copy_from_slice(&[0x13, 0x89, 0x9c, 0x40]);
        assert_eq!(parse(&rev, 1).unwrap().flow_key(), q.flow_key());
        assert!(parse(&[0x45; 10], 9).is_none());
    }

    #[test]
    fn corrupt_packets_get_their_bits_flipped() {
        let clean = packet(100, 0);
        let mut b = clean.clone();
        let mut p = parse(&b, 42).unwrap().pkt;
        p.set_corrupt(3, false);
        flip_bits(&mut b, &p);
        let diff: u32 = b
            .iter()
            .zip(&clean)
            .map(|(x, y)| (x ^ y).count_ones())
            .sum();
        assert!((1..=3).contains(&diff), "{diff}"); // positions may coincide
        assert_eq!(
            &b[..52],
            &clean[..52],
            "payload errors leave the headers alone"
        );
        let mut h = clean.clone();
        p.corrupt = 0;
        p.set_corrupt(1, true);
        flip_bits(&mut h, &p);
        assert_ne!(&h[..52], &clean[..52]);
        assert_eq!(&h[52..], &clean[52..]);
        // Reproducible from the packet id.
        let mut again = clean.clone();
        flip_bits(&mut again, &p);
        assert_eq!(again, h);
    }

    #[test]
    fn ce_marks_keep_the_header_checksum_valid() {
        for tos in [1u8, 2, 0x11, 0xb8 | 2] {
            let mut b = packet(100, tos);
            mark_ce(&mut b);
            assert_eq!(b[1] & 3, 3);
            assert_eq!(b[1] & !3, tos & !3);
            assert_eq!(
                checksum(&b[..20]),
                0,
                "tos {tos:#x}: checksum no longer verifies"
            );
        }
    }
}

//! The real-time loop: packets read from the TUN devices of two namespaces
//! are offered to an unchanged link model (side `a` sends on the link's a→b
//! direction, side `b` on b→a) at the wall-clock time since the start, and
//! the packets the model delivers are written to the other side's TUN device
//! when their model time comes. One thread; epoll over the TUN descriptors and
//! a `timerfd` (CLOCK_MONOTONIC, absolute), then a short spin to the deadline
//! (timerfd wakes within tens of microseconds, not at the nanosecond).

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use linklab_core::link::{Delivery, Dir, Link};
use linklab_core::packet::{Ecn, Kind, Packet};
use linklab_core::time::Time;

use crate::tun::Tun;

/// How long before a deadline the loop stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(60);

/// What a bridge run counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BridgeStats {
    /// Packets read from each side's TUN device (a, b).
    pub read: [u64; 2],
    /// Packets written to each side (delivered by the link toward a, b).
    pub written: [u64; 2],
    /// Packets the link dropped or lost, by the side that sent them.
    pub dropped: [u64; 2],
    /// Packets that were not IPv4 and were not forwarded.
    pub ignored: u64,
    /// Lateness of each delivery against its model time, nanoseconds.
    pub lateness_ns: Vec<u64>,
}

/// What the link decided for one packet: delivered at its model time, or
/// dropped (at enqueue or on the way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Delivered; the model time it was due.
    Delivered(Time),
    /// Dropped by the queue or lost on the link.
    Dropped,
}

/// Every arrival at the link and every decision, for replay
/// ([`Bridge::recording`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// Arrivals in order: (model time, direction, the model's packet).
    pub arrivals: Vec<(Time, Dir, Packet)>,
    /// Decisions by packet id.
    pub outcomes: HashMap<u64, Outcome>,
}

/// Feed `record`'s arrivals to `link` in simulated time — every delivery
/// polled exactly at its due time — and list the packets whose outcome
/// differs from the recorded one (the live run polled late; a sans-IO model
/// must decide the same).
pub fn replay(link: &mut dyn Link, record: &Record) -> (usize, Vec<u64>) {
    let mut got: HashMap<u64, Outcome> = HashMap::new();
    let drain = |link: &mut dyn Link, until: Option<Time>, got: &mut HashMap<u64, Outcome>| {
        while let Some(due) = link.poll_timeout() {
            if until.is_some_and(|u| due > u) {
                break;
            }
            match link.poll_deliver(due) {
                Some((_, Delivery::Arrived(p))) => {
                    got.insert(p.uid, Outcome::Delivered(due));
                }
                Some((_, Delivery::Lost(p, _))) => {
                    got.insert(p.uid, Outcome::Dropped);
                }
                None => {
                    if link.poll_timeout() == Some(due) {
                        break; // nothing more at this instant
                    }
                }
            }
        }
    };
    for &(t, dir, pkt) in &record.arrivals {
        drain(link, Some(t), &mut got);
        if let Some((p, _)) = link.enqueue(t, dir, pkt) {
            got.insert(p.uid, Outcome::Dropped);
        }
    }
    drain(link, None, &mut got);
    let mut bad: Vec<u64> = record
        .outcomes
        .iter()
        .filter(|(uid, o)| got.get(uid) != Some(o))
        .map(|(uid, _)| *uid)
        .collect();
    bad.sort_unstable();
    (record.outcomes.len(), bad)
}

/// Percentiles of the deliveries' lateness, seconds (the summary's
/// `emulation.timing_error_s`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimingError {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
}

impl BridgeStats {
    /// The lateness percentiles (nearest rank); zeros before any delivery.
    pub fn timing_error(&self) -> TimingError {
        let mut v = self.lateness_ns.clone();
        if v.is_empty() {
            return TimingError::default();
        }
        v.sort_unstable();
        let at = |q: f64| {
            let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
            v[i] as f64 * 1e-9
        };
        TimingError {
            p50: at(0.5),
            p99: at(0.99),
            p999: at(0.999),
            max: v[v.len() - 1] as f64 * 1e-9,
        }
    }
}

/// Two TUN devices joined by a link model.
pub struct Bridge {
    tuns: [Tun; 2],
    link: Box<dyn Link>,
    payloads: HashMap<u64, Vec<u8>>,
    next_uid: u64,
    /// Counters of the run so far.
    pub stats: BridgeStats,
    /// Arrivals and decisions, when recording.
    pub record: Option<Record>,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// The model's view of an IPv4 packet: sizes, kind, ECN (no payload bytes).
pub fn parse(b: &[u8], uid: u64) -> Option<Packet> {
    if b.len() < 20 || b[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(b[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([b[2], b[3]])).min(b.len());
    let mut header = ihl;
    if b[9] == 6 && total >= ihl + 20 {
        header += usize::from(b[ihl + 12] >> 4) * 4;
    }
    let header = header.min(total);
    let payload = (total - header) as u32;
    Some(Packet {
        uid,
        kind: if b[9] == 6 && payload == 0 {
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

impl Bridge {
    /// Join side `a` (sends on the link's a→b direction) and side `b`.
    pub fn new(a: Tun, b: Tun, link: Box<dyn Link>) -> Bridge {
        Bridge {
            tuns: [a, b],
            link,
            payloads: HashMap::new(),
            next_uid: 0,
            stats: BridgeStats::default(),
            record: None,
        }
    }

    /// Record every arrival and decision (see [`replay`]).
    pub fn recording(mut self) -> Bridge {
        self.record = Some(Record::default());
        self
    }

    /// The two TUN devices (a, b).
    pub fn tuns(&self) -> &[Tun; 2] {
        &self.tuns
    }

    /// The link model (for its counters).
    pub fn link(&self) -> &dyn Link {
        self.link.as_ref()
    }

    /// Run for `duration` of wall-clock time from now.
    pub fn run(&mut self, duration: Duration) -> io::Result<()> {
        // SAFETY: plain syscalls creating descriptors we own.
        let ep = unsafe { OwnedFd::from_raw_fd(check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
        let tfd = unsafe {
            OwnedFd::from_raw_fd(check(libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            ))?)
        };
        let fds: [RawFd; 3] = [
            self.tuns[0].as_raw_fd(),
            self.tuns[1].as_raw_fd(),
            tfd.as_raw_fd(),
        ];
        for (i, fd) in fds.iter().enumerate() {
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: i as u64,
            };
            // SAFETY: valid epoll and target descriptors, event owned.
            check(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, *fd, &mut ev) })?;
        }
        let start = Instant::now();
        let mut base = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec we own.
        check(unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut base) })?;
        let base_ns = base.tv_sec as u128 * 1_000_000_000 + base.tv_nsec as u128;
        let end = start + duration;
        let mut buf = vec![0u8; 65_536];
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
        loop {
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            // The model catches up to now (polled at its own due times), then
            // takes the packets that arrived: the order a replay in simulated
            // time keeps, so both decide alike.
            let t = Time((now - start).as_nanos() as u64);
            self.deliver(t, start)?;
            self.read_all(t, &mut buf)?;
            self.deliver(t, start)?;
            let deadline = self.link.poll_timeout();
            let wall_deadline = deadline.map(|d| start + Duration::from_nanos(d.as_nanos()));
            if let Some(w) = wall_deadline {
                if w <= Instant::now() {
                    continue;
                }
                if w - Instant::now() <= SPIN {
                    while Instant::now() < w {
                        std::hint::spin_loop();
                    }
                    continue;
                }
                let at = base_ns + (w - start).as_nanos() - SPIN.as_nanos();
                let spec = libc::itimerspec {
                    it_interval: libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    },
                    it_value: libc::timespec {
                        tv_sec: (at / 1_000_000_000) as libc::time_t,
                        tv_nsec: (at % 1_000_000_000) as libc::c_long,
                    },
                };
                // SAFETY: arming our timerfd with a spec we own.
                check(unsafe {
                    libc::timerfd_settime(
                        tfd.as_raw_fd(),
                        libc::TFD_TIMER_ABSTIME,
                        &spec,
                        std::ptr::null_mut(),
                    )
                })?;
            }
            let cap = wall_deadline.unwrap_or(end).min(end);
            let ms = cap
                .saturating_duration_since(Instant::now())
                .as_millis()
                .min(1000) as i32
                + 1;
            // SAFETY: waiting on our epoll descriptor into our event array.
            let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), 8, ms) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            for ev in events.iter().take(n.max(0) as usize) {
                if ev.u64 == 2 {
                    let mut x = [0u8; 8];
                    // SAFETY: reading the expiration count into 8 bytes we own.
                    unsafe { libc::read(tfd.as_raw_fd(), x.as_mut_ptr().cast(), 8) };
                }
            }
            if let Some(w) = wall_deadline {
                while Instant::now() < w && w - Instant::now() <= SPIN {
                    std::hint::spin_loop();
                }
            }
        }
    }

    /// Offer every waiting packet of both sides to the link at `t`.
    fn read_all(&mut self, t: Time, buf: &mut [u8]) -> io::Result<()> {
        for side in 0..2 {
            while let Some(n) = self.tuns[side].recv(buf)? {
                let uid = self.next_uid;
                let Some(pkt) = parse(&buf[..n], uid) else {
                    self.stats.ignored += 1;
                    continue;
                };
                self.next_uid += 1;
                self.stats.read[side] += 1;
                self.payloads.insert(uid, buf[..n].to_vec());
                let dir = if side == 0 { Dir::AB } else { Dir::BA };
                if let Some(r) = &mut self.record {
                    r.arrivals.push((t, dir, pkt));
                }
                if let Some((p, _)) = self.link.enqueue(t, dir, pkt) {
                    self.payloads.remove(&p.uid);
                    self.stats.dropped[side] += 1;
                    if let Some(r) = &mut self.record {
                        r.outcomes.insert(p.uid, Outcome::Dropped);
                    }
                }
            }
        }
        Ok(())
    }

    /// Write what the link delivers by `t`, polling it at each of its due
    /// times in turn; each delivery's lateness is the time of its write
    /// against that due time.
    fn deliver(&mut self, t: Time, start: Instant) -> io::Result<()> {
        while let Some(due) = self.link.poll_timeout() {
            if due > t {
                break;
            }
            let Some((dir, d)) = self.link.poll_deliver(due) else {
                if self.link.poll_timeout() == Some(due) {
                    break; // nothing more at this instant
                }
                continue;
            };
            let to = if dir == Dir::AB { 1 } else { 0 };
            if let Some(r) = &mut self.record {
                let (uid, o) = match d {
                    Delivery::Arrived(p) => (p.uid, Outcome::Delivered(due)),
                    Delivery::Lost(p, _) => (p.uid, Outcome::Dropped),
                };
                r.outcomes.insert(uid, o);
            }
            match d {
                Delivery::Arrived(p) => {
                    let Some(mut bytes) = self.payloads.remove(&p.uid) else {
                        continue;
                    };
                    if p.ecn == Ecn::Ce {
                        mark_ce(&mut bytes);
                    }
                    if p.corrupt != 0 {
                        flip_bits(&mut bytes, &p);
                    }
                    self.tuns[to].send(&bytes)?;
                    self.stats.written[to] += 1;
                    let wall = (Instant::now() - start).as_nanos() as u64;
                    self.stats
                        .lateness_ns
                        .push(wall.saturating_sub(due.as_nanos()));
                }
                Delivery::Lost(p, _) => {
                    self.payloads.remove(&p.uid);
                    self.stats.dropped[1 - to] += 1;
                }
            }
        }
        Ok(())
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
        let p = parse(&packet(1448, 2), 7).unwrap();
        assert_eq!((p.uid, p.payload, p.header, p.size()), (7, 1448, 52, 1500));
        assert_eq!((p.kind, p.ecn), (Kind::Data, Ecn::Ect0));
        let ack = parse(&packet(0, 0), 8).unwrap();
        assert_eq!(
            (ack.kind, ack.ecn, ack.size()),
            (Kind::Ack, Ecn::NotEct, 52)
        );
        assert!(parse(&[0x60; 40], 9).is_none()); // IPv6 is not forwarded
        assert!(parse(&[0x45; 10], 9).is_none());
    }

    #[test]
    fn corrupt_packets_get_their_bits_flipped() {
        let clean = packet(100, 0);
        let mut b = clean.clone();
        let mut p = parse(&b, 42).unwrap();
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
    fn timing_error_percentiles_by_nearest_rank() {
        let mut st = BridgeStats::default();
        assert_eq!(st.timing_error(), TimingError::default());
        st.lateness_ns = (1..=1000).rev().map(|i| i * 1000).collect();
        let t = st.timing_error();
        assert_eq!(
            (t.p50, t.p99, t.p999, t.max),
            (500e-6, 990e-6, 999e-6, 1000e-6)
        );
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

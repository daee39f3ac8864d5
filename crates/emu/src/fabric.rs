//! The real-time loop: namespaces joined by a network of unchanged link
//! models. Nodes are numbered; some have a kernel (a namespace with a TUN
//! device and an address), the others only forward. A packet read from node
//! x's device is routed by its destination address to node y along the
//! simulator's static minimum-hop route (`net::routing::Router`), offered to
//! each link of the route in turn when the previous one delivers it (at that
//! delivery's model time), and written to y's device at the last; so a
//! node-to-node hop costs nothing but the links' own delays.
//!
//! One thread; epoll over the TUN descriptors and a `timerfd`
//! (CLOCK_MONOTONIC, absolute) armed a little before the next due time, then
//! a short spin to the deadline (timerfd wakes within tens of microseconds,
//! not at the nanosecond). Model time is the monotonic time since the start.
//! Each turn the links first catch up to now, each polled at its own due
//! times in global due order, and only then take the packets that arrived:
//! the order a replay in simulated time keeps, so that both decide alike
//! ([`replay`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use linklab_core::link::{Delivery, Dir, Link};
use linklab_core::metrics::histogram::Histogram;
use linklab_core::net::routing::Router;
use linklab_core::packet::{Ecn, FlowId, Kind, NodeId, Packet};
use linklab_core::time::Time;

use crate::tun::Tun;
use crate::wire::{flip_bits, mark_ce, parse, FlowKey};

/// How long before a deadline the loop stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(60);

/// What a run counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Packets read from each kernel's TUN device, in the order the kernels were given.
    pub read: Vec<u64>,
    /// Packets written to each kernel's device.
    pub written: Vec<u64>,
    /// Packets a link dropped or lost.
    pub dropped: u64,
    /// Packets that were not IPv4 and were not forwarded.
    pub ignored: u64,
    /// Packets whose destination address has no kernel or no route.
    pub unroutable: u64,
    /// Lateness of each write against its model time, nanoseconds.
    pub lateness_ns: Vec<u64>,
    /// Corrupted packets the kernel refused at the device (an invalid IP header).
    pub refused: u64,
    /// CPU time of the loop's thread, nanoseconds.
    pub loop_cpu_ns: u64,
}

/// Percentiles of the writes' lateness, seconds (the summary's
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

impl Stats {
    /// The lateness percentiles (nearest rank); zeros before any write.
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

/// What a link decided for one packet: delivered at its model time, or
/// dropped (at enqueue or on the way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Delivered; the model time it was due.
    Delivered(Time),
    /// Dropped by the queue or lost on the link.
    Dropped,
}

/// Every arrival at a link and every decision, for [`replay`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// Arrivals in order: (model time, link index, direction, the model's packet).
    pub arrivals: Vec<(Time, u32, Dir, Packet)>,
    /// Decisions by (packet id, link index).
    pub outcomes: HashMap<(u64, u32), Outcome>,
}

impl Record {
    /// The record as JSON text: `{"version": 1, "arrivals": [[t_ns, link,
    /// dir, uid, flow, src, dst, kind, payload, header, ecn], …],
    /// "outcomes": [[uid, link, due_ns or -1 for a drop], …]}` (`dir` 0 for
    /// a→b, `kind` 0 data / 1 ACK, `ecn` 0 not-ECT / 1 ECT(0) / 3 CE).
    pub fn to_json(&self) -> String {
        let arrivals: Vec<serde_json::Value> = self
            .arrivals
            .iter()
            .map(|(t, l, d, p)| {
                serde_json::json!([
                    t.as_nanos(),
                    l,
                    d.index(),
                    p.uid,
                    p.flow.0,
                    p.src.0,
                    p.dst.0,
                    u8::from(p.kind == Kind::Ack),
                    p.payload,
                    p.header,
                    match p.ecn {
                        Ecn::NotEct => 0,
                        Ecn::Ect0 => 1,
                        Ecn::Ce => 3,
                    }
                ])
            })
            .collect();
        let mut outcomes: Vec<(&(u64, u32), &Outcome)> = self.outcomes.iter().collect();
        outcomes.sort_unstable_by_key(|(k, _)| **k);
        let outcomes: Vec<serde_json::Value> = outcomes
            .into_iter()
            .map(|(&(uid, l), o)| {
                let due = match o {
                    Outcome::Delivered(t) => t.as_nanos() as i64,
                    Outcome::Dropped => -1,
                };
                serde_json::json!([uid, l, due])
            })
            .collect();
        serde_json::json!({"version": 1, "arrivals": arrivals, "outcomes": outcomes}).to_string()
    }

    /// Read [`Record::to_json`]'s text back; the error says what is wrong.
    pub fn from_json(text: &str) -> Result<Record, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if v["version"] != 1 {
            return Err("version: expected 1 (a record written by this linklab)".into());
        }
        let rows = |key: &str, width: usize| -> Result<Vec<Vec<i64>>, String> {
            let list = v[key]
                .as_array()
                .ok_or_else(|| format!("{key}: missing or not a list"))?;
            list.iter()
                .enumerate()
                .map(|(i, r)| {
                    let r = r.as_array().filter(|r| r.len() == width).ok_or_else(|| {
                        format!("{key}[{i}]: expected a list of {width} integers")
                    })?;
                    r.iter()
                        .map(|x| {
                            x.as_i64()
                                .ok_or_else(|| format!("{key}[{i}]: {x} is not an integer"))
                        })
                        .collect()
                })
                .collect()
        };
        let bad = |key: &str, i: usize| format!("{key}[{i}]: a value is out of range");
        let mut rec = Record::default();
        for (i, r) in rows("arrivals", 11)?.into_iter().enumerate() {
            let u = |x: i64| u64::try_from(x).map_err(|_| bad("arrivals", i));
            let small = |x: i64, max: i64| {
                if (0..=max).contains(&x) {
                    Ok(x)
                } else {
                    Err(bad("arrivals", i))
                }
            };
            let pkt = Packet {
                uid: u(r[3])?,
                flow: FlowId(small(r[4], u32::MAX.into())? as u32),
                src: NodeId(small(r[5], u32::MAX.into())? as u32),
                dst: NodeId(small(r[6], u32::MAX.into())? as u32),
                kind: if small(r[7], 1)? == 1 {
                    Kind::Ack
                } else {
                    Kind::Data
                },
                payload: small(r[8], u32::MAX.into())? as u32,
                header: small(r[9], u16::MAX.into())? as u16,
                ecn: match small(r[10], 3)? {
                    0 => Ecn::NotEct,
                    3 => Ecn::Ce,
                    _ => Ecn::Ect0,
                },
                ..Packet::default()
            };
            let dir = Dir::from_index(small(r[2], 1)? as usize);
            let link = small(r[1], u32::MAX.into())? as u32;
            rec.arrivals.push((Time(u(r[0])?), link, dir, pkt));
        }
        for (i, r) in rows("outcomes", 3)?.into_iter().enumerate() {
            let uid = u64::try_from(r[0]).map_err(|_| bad("outcomes", i))?;
            let link = u32::try_from(r[1]).map_err(|_| bad("outcomes", i))?;
            let o = match r[2] {
                -1 => Outcome::Dropped,
                t if t >= 0 => Outcome::Delivered(Time(t as u64)),
                _ => return Err(bad("outcomes", i)),
            };
            rec.outcomes.insert((uid, link), o);
        }
        Ok(rec)
    }
}

/// Feed `record`'s arrivals to fresh `links` (built as the recorded ones
/// were) in simulated time, every delivery polled exactly at its due time,
/// and list the (packet, link) decisions that differ from the recorded ones:
/// the live run polled late, and a sans-IO model must decide the same.
/// Returns the number of recorded decisions and the mismatches.
pub fn replay(links: &mut [Box<dyn Link>], record: &Record) -> (usize, Vec<(u64, u32)>) {
    let mut got: HashMap<(u64, u32), Outcome> = HashMap::new();
    let drain = |link: &mut dyn Link,
                 l: u32,
                 until: Option<Time>,
                 got: &mut HashMap<(u64, u32), Outcome>| {
        while let Some(due) = link.poll_timeout() {
            if until.is_some_and(|u| due > u) {
                break;
            }
            match link.poll_deliver(due) {
                Some((_, Delivery::Arrived(p))) => {
                    got.insert((p.uid, l), Outcome::Delivered(due));
                }
                Some((_, Delivery::Lost(p, _))) => {
                    got.insert((p.uid, l), Outcome::Dropped);
                }
                None => {
                    if link.poll_timeout() == Some(due) {
                        break; // nothing more at this instant
                    }
                }
            }
        }
    };
    for &(t, l, dir, pkt) in &record.arrivals {
        let Some(link) = links.get_mut(l as usize) else {
            continue;
        };
        drain(link.as_mut(), l, Some(t), &mut got);
        if let Some((p, _)) = link.enqueue(t, dir, pkt) {
            got.insert((p.uid, l), Outcome::Dropped);
        }
    }
    for (l, link) in links.iter_mut().enumerate() {
        drain(link.as_mut(), l as u32, None, &mut got);
    }
    let mut bad: Vec<(u64, u32)> = record
        .outcomes
        .iter()
        .filter(|(k, o)| got.get(k) != Some(o))
        .map(|(k, _)| *k)
        .collect();
    bad.sort_unstable();
    (record.outcomes.len(), bad)
}

/// What the fabric measured of one registered connection.
#[derive(Clone, Debug, Default)]
pub struct FlowTraffic {
    /// IP packets read in its data direction.
    pub data_packets: u64,
    /// IP bytes read in its data direction (headers included).
    pub data_bytes: u64,
    /// One-way delay through the fabric of its data packets that carried
    /// payload, from the read at the sender's device to the write at the
    /// receiver's, nanoseconds.
    pub delay: Histogram,
    /// |delay − the previous such packet's delay| (ns-3 FlowMonitor's
    /// jitter), nanoseconds.
    pub jitter: Histogram,
    /// Delay of the latest such packet, nanoseconds.
    pub last_delay: Option<u64>,
}

/// A packet on its way: its route, the bytes to write, when it was read and
/// the registered flow whose data it is.
struct InFlight {
    route: Arc<[u32]>,
    hop: usize,
    bytes: Vec<u8>,
    read_at: Time,
    data_of: Option<u32>,
}

/// CPU time of the calling thread, nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Nodes, links between them, and the kernels at some of the nodes.
pub struct Fabric {
    links: Vec<Box<dyn Link>>,
    ends: Vec<(usize, usize)>,
    tuns: Vec<(usize, Tun)>,
    /// The kernel at each node, by node index.
    kernel_at: Vec<Option<usize>>,
    by_addr: HashMap<Ipv4Addr, usize>,
    router: Router,
    routes: HashMap<(usize, usize), Option<Arc<[u32]>>>,
    flying: HashMap<u64, InFlight>,
    /// Registered listening ends (protocol, address, port) → flow id.
    listeners: HashMap<(u8, Ipv4Addr, u16), u32>,
    /// Other connections → flow id (after the registered ones).
    flows: HashMap<FlowKey, u32>,
    next_uid: u64,
    /// Per registered flow, in the order registered.
    pub traffic: Vec<FlowTraffic>,
    /// Counters of the run so far.
    pub stats: Stats,
    /// Arrivals and decisions, when recording.
    pub record: Option<Record>,
    /// pcap writers by kernel (packets its device sent and received).
    captures: Vec<Option<BufWriter<File>>>,
    /// Wall-clock (CLOCK_REALTIME) nanoseconds at model time 0, for capture timestamps.
    epoch_ns: u64,
    /// Per kernel, the timestamp of its capture's latest record.
    captured_ns: Vec<u64>,
}

/// LINKTYPE_RAW: the packet begins with its IP header.
const LINKTYPE_RAW: u32 = 101;

impl Fabric {
    /// `nodes` nodes joined by `links` (each `(a, b, model)`, the model's a→b
    /// direction running from node a to node b), with kernels `tuns` at some
    /// nodes (`(node, device)`).
    pub fn new(
        nodes: usize,
        links: Vec<(usize, usize, Box<dyn Link>)>,
        tuns: Vec<(usize, Tun)>,
    ) -> Fabric {
        let ends: Vec<(usize, usize)> = links.iter().map(|(a, b, _)| (*a, *b)).collect();
        let pairs: Vec<(NodeId, NodeId)> = ends
            .iter()
            .map(|&(a, b)| (NodeId(a as u32), NodeId(b as u32)))
            .collect();
        Fabric {
            router: Router::new(nodes, &pairs),
            links: links.into_iter().map(|(_, _, l)| l).collect(),
            ends,
            kernel_at: {
                let mut at = vec![None; nodes];
                for (k, (n, _)) in tuns.iter().enumerate() {
                    if let Some(slot) = at.get_mut(*n) {
                        *slot = Some(k);
                    }
                }
                at
            },
            by_addr: tuns.iter().map(|(n, t)| (t.addr(), *n)).collect(),
            stats: Stats {
                read: vec![0; tuns.len()],
                written: vec![0; tuns.len()],
                ..Stats::default()
            },
            tuns,
            routes: HashMap::new(),
            flying: HashMap::new(),
            listeners: HashMap::new(),
            flows: HashMap::new(),
            next_uid: 0,
            traffic: Vec::new(),
            record: None,
            captures: Vec::new(),
            epoch_ns: 0,
            captured_ns: Vec::new(),
        }
    }

    /// Capture what kernel `k`'s device sends and receives into `file` (a
    /// nanosecond pcap of raw IP packets, timestamps of the wall clock).
    /// Call before the run; [`Fabric::finish_captures`] flushes and syncs.
    pub fn capture(&mut self, k: usize, file: File) -> io::Result<()> {
        if k >= self.tuns.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no such kernel",
            ));
        }
        let mut w = BufWriter::with_capacity(1 << 16, file);
        w.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
        w.write_all(&2u16.to_le_bytes())?;
        w.write_all(&4u16.to_le_bytes())?;
        w.write_all(&[0; 8])?;
        w.write_all(&65_535u32.to_le_bytes())?;
        w.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        self.captures.resize_with(self.tuns.len(), || None);
        self.captured_ns.resize(self.tuns.len(), 0);
        self.captures[k] = Some(w);
        Ok(())
    }

    /// Flush and sync every capture file.
    pub fn finish_captures(&mut self) -> io::Result<()> {
        for w in self.captures.iter_mut().flatten() {
            w.flush()?;
            w.get_ref().sync_all()?;
        }
        Ok(())
    }

    /// Append `bytes` at model time `t` to kernel `k`'s capture, if any.
    fn captured(&mut self, k: usize, t: Time, bytes: &[u8]) -> io::Result<()> {
        let Some(w) = self.captures.get_mut(k).and_then(Option::as_mut) else {
            return Ok(());
        };
        // Never earlier than the record before (the stamps are monotonic
        // readings already; this keeps the file ordered whatever calls it).
        let last = &mut self.captured_ns[k];
        let ns = (self.epoch_ns + t.as_nanos()).max(*last);
        *last = ns;
        let len = bytes.len().min(65_535) as u32;
        w.write_all(&((ns / 1_000_000_000) as u32).to_le_bytes())?;
        w.write_all(&((ns % 1_000_000_000) as u32).to_le_bytes())?;
        w.write_all(&len.to_le_bytes())?;
        w.write_all(&(bytes.len() as u32).to_le_bytes())?;
        w.write_all(&bytes[..len as usize])
    }

    /// Two kernels, `a` (sending on the link's a→b direction) and `b`,
    /// joined by one link.
    pub fn pair(a: Tun, b: Tun, link: Box<dyn Link>) -> Fabric {
        Fabric::new(2, vec![(0, 1, link)], vec![(0, a), (1, b)])
    }

    /// Record every arrival and decision (see [`replay`]).
    pub fn recording(mut self) -> Fabric {
        self.record = Some(Record::default());
        self
    }

    /// Register a TCP listener at `addr:port`: the packets of connections to
    /// it carry the returned flow id (an index into [`Fabric::traffic`]),
    /// and their data (toward the listener) is counted and timed. Other
    /// connections get flow ids of their own after the registered ones.
    /// Register before the run.
    pub fn register_flow(&mut self, addr: Ipv4Addr, port: u16) -> u32 {
        let id = self.traffic.len() as u32;
        self.listeners.insert((6, addr, port), id);
        self.traffic.push(FlowTraffic::default());
        id
    }

    /// The kernels' devices, with their nodes, in the order given.
    pub fn tuns(&self) -> &[(usize, Tun)] {
        &self.tuns
    }

    /// The link models, in the order given.
    pub fn links(&self) -> &[Box<dyn Link>] {
        &self.links
    }

    /// The link models, taken out (for their summaries).
    pub fn into_links(self) -> Vec<Box<dyn Link>> {
        self.links
    }

    /// Run for `duration` of wall-clock time from now.
    pub fn run(&mut self, duration: Duration) -> io::Result<()> {
        self.run_from(Instant::now(), duration, None)
    }

    /// Run from `start` (model time 0; may be a moment ago) until `duration`
    /// after it, or earlier once `stop` is set (checked every turn, and at
    /// least every millisecond).
    pub fn run_from(
        &mut self,
        start: Instant,
        duration: Duration,
        stop: Option<&AtomicBool>,
    ) -> io::Result<()> {
        let cpu = thread_cpu_ns();
        let out = self.run_loop(start, duration, stop);
        self.stats.loop_cpu_ns += thread_cpu_ns().saturating_sub(cpu);
        out
    }

    fn run_loop(
        &mut self,
        start: Instant,
        duration: Duration,
        stop: Option<&AtomicBool>,
    ) -> io::Result<()> {
        // SAFETY: plain syscalls creating descriptors we own.
        let ep = unsafe { OwnedFd::from_raw_fd(check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
        let tfd = unsafe {
            OwnedFd::from_raw_fd(check(libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_CLOEXEC | libc::TFD_NONBLOCK,
            ))?)
        };
        const TIMER: u64 = u64::MAX;
        let fds = self
            .tuns
            .iter()
            .enumerate()
            .map(|(k, (_, t))| (k as u64, t.as_raw_fd()))
            .chain(std::iter::once((TIMER, tfd.as_raw_fd())));
        for (tag, fd) in fds {
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: tag,
            };
            // SAFETY: valid epoll and target descriptors, event owned.
            check(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        }
        // The monotonic clock's reading at `start`, for the absolute timer.
        let mut now_ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec we own.
        check(unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now_ts) })?;
        let base_ns = (now_ts.tv_sec as u128 * 1_000_000_000 + now_ts.tv_nsec as u128)
            .saturating_sub(start.elapsed().as_nanos());
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        self.epoch_ns = (wall.as_nanos().saturating_sub(start.elapsed().as_nanos())) as u64;
        let end = start + duration;
        let mut buf = vec![0u8; 65_536];
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 16];
        loop {
            let now = Instant::now();
            if now >= end || stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Ok(());
            }
            let t = Time((now - start).as_nanos() as u64);
            self.deliver(t, start)?;
            self.read_all(t, start, &mut buf)?;
            self.deliver(t, start)?;
            let deadline = self.links.iter().filter_map(|l| l.poll_timeout()).min();
            let wall_deadline = deadline.map(|d| start + Duration::from_nanos(d.as_nanos()));
            if let Some(w) = wall_deadline {
                let now = Instant::now();
                if w <= now {
                    continue;
                }
                if w - now <= SPIN {
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
            // The timer or a packet wakes the loop; the 1 ms timeout only
            // bounds how late `stop` and the end are noticed.
            // SAFETY: waiting on our epoll descriptor into our event array.
            let n = unsafe {
                libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, 1)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            for ev in events.iter().take(n.max(0) as usize) {
                if ev.u64 == TIMER {
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

    fn route(&mut self, src: usize, dst: usize) -> Option<Arc<[u32]>> {
        let router = &self.router;
        self.routes
            .entry((src, dst))
            .or_insert_with(|| {
                router
                    .route(NodeId(src as u32), NodeId(dst as u32))
                    .map(Arc::from)
            })
            .clone()
    }

    /// Offer `pkt` to hop `hop` of `route` at `t`; false if the link dropped it.
    fn offer(&mut self, t: Time, pkt: Packet, route: &[u32], hop: usize) -> bool {
        let code = route[hop];
        let (l, dir) = (code as usize / 2, Dir::from_index(code as usize % 2));
        if let Some(r) = &mut self.record {
            r.arrivals.push((t, code / 2, dir, pkt));
        }
        match self.links[l].enqueue(t, dir, pkt) {
            Some((p, _)) => {
                self.flying.remove(&p.uid);
                self.stats.dropped += 1;
                if let Some(r) = &mut self.record {
                    r.outcomes.insert((p.uid, code / 2), Outcome::Dropped);
                }
                false
            }
            None => true,
        }
    }

    /// Offer every waiting packet of every kernel to its first link at `t`.
    fn read_all(&mut self, t: Time, start: Instant, buf: &mut [u8]) -> io::Result<()> {
        for k in 0..self.tuns.len() {
            while let Some(n) = self.tuns[k].1.recv(buf)? {
                let uid = self.next_uid;
                let Some(parsed) = parse(&buf[..n], uid) else {
                    self.stats.ignored += 1;
                    continue;
                };
                self.next_uid += 1;
                self.stats.read[k] += 1;
                // Stamped when read, not at the loop's `t`: deliveries since
                // `t` were stamped later, and a capture is in time order.
                let wall = Time((Instant::now() - start).as_nanos() as u64);
                self.captured(k, wall, &buf[..n])?;
                let src = self.tuns[k].0;
                let to = self.by_addr.get(&parsed.dst).copied();
                let Some((dst, route)) = to.and_then(|d| Some((d, self.route(src, d)?))) else {
                    self.stats.unroutable += 1;
                    continue;
                };
                let to_listener = self
                    .listeners
                    .get(&(parsed.proto, parsed.dst, parsed.dport));
                let from_listener = self
                    .listeners
                    .get(&(parsed.proto, parsed.src, parsed.sport));
                let flow = match to_listener.or(from_listener) {
                    Some(&f) => f,
                    None => {
                        let fresh = (self.listeners.len() + self.flows.len()) as u32;
                        *self.flows.entry(parsed.flow_key()).or_insert(fresh)
                    }
                };
                let data_of = to_listener
                    .filter(|_| parsed.pkt.kind == Kind::Data)
                    .copied();
                if let Some(f) = data_of {
                    let tr = &mut self.traffic[f as usize];
                    tr.data_packets += 1;
                    tr.data_bytes += n as u64;
                }
                let pkt = Packet {
                    flow: FlowId(flow),
                    src: NodeId(src as u32),
                    dst: NodeId(dst as u32),
                    ..parsed.pkt
                };
                self.flying.insert(
                    uid,
                    InFlight {
                        route: route.clone(),
                        hop: 0,
                        bytes: buf[..n].to_vec(),
                        read_at: t,
                        data_of: data_of.filter(|_| pkt.payload > 0),
                    },
                );
                self.offer(t, pkt, &route, 0);
            }
        }
        Ok(())
    }

    /// Write what the links deliver by `t`, link by link in due-time order;
    /// each write's lateness is its wall time against its due time.
    fn deliver(&mut self, t: Time, start: Instant) -> io::Result<()> {
        loop {
            let Some((l, due)) = self
                .links
                .iter()
                .enumerate()
                .filter_map(|(i, l)| l.poll_timeout().map(|d| (i, d)))
                .min_by_key(|&(i, d)| (d, i))
            else {
                return Ok(());
            };
            if due > t {
                return Ok(());
            }
            let Some((dir, d)) = self.links[l].poll_deliver(due) else {
                if self.links[l].poll_timeout() == Some(due) {
                    return Ok(()); // nothing more at this instant
                }
                continue;
            };
            if let Some(r) = &mut self.record {
                let (uid, o) = match d {
                    Delivery::Arrived(p) => (p.uid, Outcome::Delivered(due)),
                    Delivery::Lost(p, _) => (p.uid, Outcome::Dropped),
                };
                r.outcomes.insert((uid, l as u32), o);
            }
            let p = match d {
                Delivery::Arrived(p) => p,
                Delivery::Lost(p, _) => {
                    self.flying.remove(&p.uid);
                    self.stats.dropped += 1;
                    continue;
                }
            };
            let Some(mut f) = self.flying.remove(&p.uid) else {
                continue;
            };
            f.hop += 1;
            if f.hop < f.route.len() {
                let route = f.route.clone();
                let hop = f.hop;
                self.flying.insert(p.uid, f);
                self.offer(due, p, &route, hop);
                continue;
            }
            let node = if dir == Dir::AB {
                self.ends[l].1
            } else {
                self.ends[l].0
            };
            if p.ecn == Ecn::Ce {
                mark_ce(&mut f.bytes);
            }
            if p.corrupt != 0 {
                flip_bits(&mut f.bytes, &p);
            }
            let Some(k) = self.kernel_at.get(node).copied().flatten() else {
                continue;
            };
            match self.tuns[k].1.send(&f.bytes) {
                Ok(()) => self.stats.written[k] += 1,
                // The kernel refuses a packet whose IP header the errors made
                // invalid (EINVAL), as a receiver's IP layer would drop it.
                Err(_) if p.corrupt != 0 => {
                    self.stats.refused += 1;
                    continue;
                }
                Err(e) => return Err(e),
            }
            let wall = Time((Instant::now() - start).as_nanos() as u64);
            self.captured(k, wall, &f.bytes)?;
            self.stats.lateness_ns.push(wall.0.saturating_sub(due.0));
            if let Some(fl) = f.data_of {
                let tr = &mut self.traffic[fl as usize];
                let d = due.as_nanos().saturating_sub(f.read_at.as_nanos());
                tr.delay.record(d);
                if let Some(last) = tr.last_delay.replace(d) {
                    tr.jitter.record(d.abs_diff(last));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_json_form() {
        let mut rec = Record::default();
        let p = Packet {
            uid: 7,
            flow: FlowId(2),
            src: NodeId(1),
            dst: NodeId(3),
            kind: Kind::Ack,
            payload: 0,
            header: 52,
            ecn: Ecn::Ce,
            ..Packet::default()
        };
        rec.arrivals.push((Time(1_000), 4, Dir::BA, p));
        rec.outcomes
            .insert((7, 4), Outcome::Delivered(Time(21_000)));
        rec.outcomes.insert((8, 0), Outcome::Dropped);
        let back = Record::from_json(&rec.to_json()).unwrap();
        assert_eq!(back, rec);
        let e = Record::from_json(r#"{"version": 1, "arrivals": [[1, 2]], "outcomes": []}"#);
        assert!(e.unwrap_err().contains("arrivals[0]"));
        assert!(Record::from_json("{}").unwrap_err().contains("version"));
    }

    #[test]
    fn timing_error_percentiles_by_nearest_rank() {
        let mut st = Stats::default();
        assert_eq!(st.timing_error(), TimingError::default());
        st.lateness_ns = (1..=1000).rev().map(|i| i * 1000).collect();
        let t = st.timing_error();
        assert_eq!(
            (t.p50, t.p99, t.p999, t.max),
            (500e-6, 990e-6, 999e-6, 1000e-6)
        );
    }
}

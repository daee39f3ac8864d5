//! Many namespaces joined by a network of link models: the multi-hop form of
//! [`Bridge`](crate::engine::Bridge). Nodes are numbered; some have a kernel
//! (a namespace with a TUN device and an address), the others only forward.
//! A packet read from node x's device is routed by its destination address
//! to node y along the simulator's static minimum-hop route
//! (`net::routing::Router`), offered to each link of the route in turn when
//! the previous one delivers it (at that delivery's model time), and written
//! to y's device at the last. All links are polled in the order of their due
//! times, so a node-to-node hop costs nothing but the links' own delays.

use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use linklab_core::link::{Delivery, Dir, Link};
use linklab_core::net::routing::Router;
use linklab_core::packet::{Ecn, NodeId, Packet};
use linklab_core::time::Time;

use crate::engine::{flip_bits, mark_ce, parse, BridgeStats};
use crate::tun::Tun;

/// A packet on its way: where it goes, its route and the bytes to write.
struct InFlight {
    route: Arc<[u32]>,
    hop: usize,
    bytes: Vec<u8>,
}

/// Nodes, links between them, and the kernels at some of the nodes.
pub struct Fabric {
    links: Vec<Box<dyn Link>>,
    ends: Vec<(usize, usize)>,
    tuns: Vec<(usize, Tun)>,
    by_addr: HashMap<Ipv4Addr, usize>,
    router: Router,
    routes: HashMap<(usize, usize), Option<Arc<[u32]>>>,
    flying: HashMap<u64, InFlight>,
    next_uid: u64,
    /// Counters (`read`/`written` are by kernel, in the order added; index 0 and 1 only
    /// for the first two kernels).
    pub stats: BridgeStats,
    /// Packets whose destination has no route or no kernel.
    pub unroutable: u64,
}

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
            by_addr: tuns.iter().map(|(n, t)| (t.addr(), *n)).collect(),
            tuns,
            routes: HashMap::new(),
            flying: HashMap::new(),
            next_uid: 0,
            stats: BridgeStats::default(),
            unroutable: 0,
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

    /// Offer packet `pkt` to hop `hop` of `route` at `t`.
    fn offer(&mut self, t: Time, pkt: Packet, route: &[u32], hop: usize) {
        let code = route[hop] as usize;
        let (l, dir) = (code / 2, Dir::from_index(code % 2));
        if let Some((p, _)) = self.links[l].enqueue(t, dir, pkt) {
            self.flying.remove(&p.uid);
            self.stats.dropped[0] += 1;
        }
    }

    /// Run for `duration` of wall-clock time (sleeping in short steps and
    /// spinning near deadlines; see [`Bridge::run`](crate::engine::Bridge::run)
    /// for the epoll form, which this will share).
    pub fn run(&mut self, duration: Duration) -> io::Result<()> {
        let start = Instant::now();
        let end = start + duration;
        let mut buf = vec![0u8; 65_536];
        while Instant::now() < end {
            let t = Time((Instant::now() - start).as_nanos() as u64);
            self.deliver(t, start)?;
            self.read_all(t, &mut buf)?;
            self.deliver(t, start)?;
            let next = self.links.iter().filter_map(|l| l.poll_timeout()).min();
            let wait = next
                .map(|d| {
                    (start + Duration::from_nanos(d.as_nanos()))
                        .saturating_duration_since(Instant::now())
                })
                .unwrap_or(Duration::from_micros(200))
                .min(Duration::from_micros(200));
            if wait > Duration::from_micros(60) {
                std::thread::sleep(wait - Duration::from_micros(50));
            }
        }
        Ok(())
    }

    fn read_all(&mut self, t: Time, buf: &mut [u8]) -> io::Result<()> {
        for k in 0..self.tuns.len() {
            while let Some(n) = self.tuns[k].1.recv(buf)? {
                let uid = self.next_uid;
                let Some(pkt) = parse(&buf[..n], uid) else {
                    self.stats.ignored += 1;
                    continue;
                };
                self.next_uid += 1;
                self.stats.read[k.min(1)] += 1;
                let dst = Ipv4Addr::new(buf[16], buf[17], buf[18], buf[19]);
                let src = self.tuns[k].0;
                let to = self.by_addr.get(&dst).copied();
                let route = to.and_then(|d| self.route(src, d));
                let Some(route) = route else {
                    self.unroutable += 1;
                    continue;
                };
                self.flying.insert(
                    uid,
                    InFlight {
                        route: route.clone(),
                        hop: 0,
                        bytes: buf[..n].to_vec(),
                    },
                );
                self.offer(t, pkt, &route, 0);
            }
        }
        Ok(())
    }

    /// Deliver everything due by `t`, link by link in due-time order.
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
            let p = match d {
                Delivery::Arrived(p) => p,
                Delivery::Lost(p, _) => {
                    self.flying.remove(&p.uid);
                    self.stats.dropped[0] += 1;
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
            if let Some(k) = self.tuns.iter().position(|(n, _)| *n == node) {
                self.tuns[k].1.send(&f.bytes)?;
                self.stats.written[k.min(1)] += 1;
                let wall = (Instant::now() - start).as_nanos() as u64;
                self.stats
                    .lateness_ns
                    .push(wall.saturating_sub(due.as_nanos()));
            }
        }
    }
}

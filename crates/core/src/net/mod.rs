//! The network: nodes, link directions, static shortest-path routes, flows,
//! and the [`Simulation`] that drives them all from the event engine.

mod routing;

use std::collections::HashMap;

use crate::aqm::DropCause;
use crate::capture::PcapWriter;
use crate::engine::{EventQueue, Wakeups};
use crate::link::{Delivery, Dir, Link};
use crate::metrics::histogram::Histogram;
use crate::metrics::Traces;
use crate::packet::{FlowId, Kind, NodeId, Packet};
use crate::tcp::{App, TcpConfig, TcpReceiver, TcpSender};
use crate::time::Time;

/// Index of a (duplex) link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// What a popped event wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Link(u32),
    Sender(u32),
    Receiver(u32),
    Start(u32),
    Stop(u32),
}

/// A flow to create: one TCP connection from `src` to `dst`.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Display name.
    pub name: String,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// TCP configuration (shared by both ends).
    pub tcp: TcpConfig,
    /// Application.
    pub app: App,
    /// When the application starts.
    pub start: Time,
    /// When it stops offering new data (`None`: never).
    pub stop: Option<Time>,
}

/// Per-flow measurements kept by the simulation (the endpoints keep their own counters).
#[derive(Debug)]
pub struct FlowMetrics {
    /// One-way TCP-layer delay of every data packet that reached the receiver, ns.
    pub delay: Histogram,
}

struct LinkSlot {
    /// Direction names, "A->B" and "B->A".
    names: [String; 2],
    /// Where each direction arrives: b for AB, a for BA.
    to: [NodeId; 2],
    model: Box<dyn Link>,
    capture: [Option<PcapWriter>; 2],
}

struct FlowSlot {
    spec: FlowSpec,
    sender: TcpSender,
    receiver: TcpReceiver,
    metrics: FlowMetrics,
}

/// Builds a [`Simulation`]: add nodes, link directions and flows, then [`NetworkBuilder::build`].
#[derive(Default)]
pub struct NetworkBuilder {
    nodes: Vec<String>,
    index: HashMap<String, NodeId>,
    links: Vec<(NodeId, NodeId, Box<dyn Link>)>,
    flows: Vec<FlowSpec>,
}

impl NetworkBuilder {
    /// An empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// The node called `name`, created if new.
    pub fn node(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(name.to_string());
        self.index.insert(name.to_string(), id);
        id
    }

    /// Look a node up by name.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }

    /// Add a duplex link between `a` and `b` (its `Dir::AB` runs a → b).
    pub fn link(&mut self, a: NodeId, b: NodeId, model: Box<dyn Link>) -> LinkId {
        self.links.push((a, b, model));
        LinkId(self.links.len() as u32 - 1)
    }

    /// Add a flow.
    pub fn flow(&mut self, spec: FlowSpec) -> FlowId {
        self.flows.push(spec);
        FlowId(self.flows.len() as u32 - 1)
    }

    /// Compute routes and assemble the simulation. Fails (with the flow's
    /// index and a message) if a flow's endpoints are not connected both ways.
    pub fn build(self) -> Result<Simulation, (usize, String)> {
        let n = self.nodes.len();
        // Edge 2i is link i's a→b direction, edge 2i+1 its b→a (route code = link * 2 + dir).
        let edges: Vec<(NodeId, NodeId)> = self
            .links
            .iter()
            .flat_map(|(a, b, _)| [(*a, *b), (*b, *a)])
            .collect();
        let routes = routing::shortest_paths(n, &edges);
        for (i, f) in self.flows.iter().enumerate() {
            for (a, b) in [(f.src, f.dst), (f.dst, f.src)] {
                if a == b {
                    return Err((
                        i,
                        format!(
                            "a flow needs two different nodes, got '{}' twice",
                            self.nodes[a.0 as usize]
                        ),
                    ));
                }
                if routes[a.0 as usize * n + b.0 as usize] == routing::NO_ROUTE {
                    return Err((
                        i,
                        format!(
                            "no path from '{}' to '{}' (flows need links in both directions)",
                            self.nodes[a.0 as usize], self.nodes[b.0 as usize]
                        ),
                    ));
                }
            }
        }
        let nodes = &self.nodes;
        let links: Vec<LinkSlot> = self
            .links
            .into_iter()
            .map(|(a, b, model)| {
                let (na, nb) = (&nodes[a.0 as usize], &nodes[b.0 as usize]);
                LinkSlot {
                    names: [format!("{na}->{nb}"), format!("{nb}->{na}")],
                    to: [b, a],
                    model,
                    capture: [None, None],
                }
            })
            .collect();
        let flows: Vec<FlowSlot> = self
            .flows
            .into_iter()
            .enumerate()
            .map(|(i, spec)| FlowSlot {
                sender: TcpSender::new(
                    spec.tcp.clone(),
                    FlowId(i as u32),
                    spec.src,
                    spec.dst,
                    spec.app,
                ),
                receiver: TcpReceiver::new(spec.tcp.clone(), FlowId(i as u32), spec.dst, spec.src),
                metrics: FlowMetrics {
                    delay: Histogram::new(),
                },
                spec,
            })
            .collect();
        let mut queue = EventQueue::new();
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.spec.start, Target::Start(i as u32));
            if let Some(stop) = f.spec.stop {
                queue.push(stop, Target::Stop(i as u32));
            }
        }
        Ok(Simulation {
            wake_links: Wakeups::new(links.len()),
            wake_senders: Wakeups::new(flows.len()),
            wake_receivers: Wakeups::new(flows.len()),
            queue,
            nodes: self.nodes,
            routes,
            links,
            flows,
            next_uid: 0,
            delivered_pkts: 0,
            dropped_pkts: 0,
            traces: None,
            end: Time::ZERO,
        })
    }
}

/// A network with its flows, ready to run.
pub struct Simulation {
    queue: EventQueue<Target>,
    wake_links: Wakeups,
    wake_senders: Wakeups,
    wake_receivers: Wakeups,
    nodes: Vec<String>,
    /// `routes[src * n + dst]` = link index of the first hop.
    routes: Vec<u32>,
    links: Vec<LinkSlot>,
    flows: Vec<FlowSlot>,
    next_uid: u64,
    delivered_pkts: u64,
    dropped_pkts: u64,
    traces: Option<Traces>,
    end: Time,
}

impl Simulation {
    /// Record traces (cwnd, queue occupancy, sequence numbers) from now on.
    pub fn enable_traces(&mut self) {
        self.traces = Some(Traces::default());
        for l in &mut self.links {
            for d in Dir::BOTH {
                l.model.occupancy_mut(d).enable_trace();
            }
        }
        for f in &mut self.flows {
            f.sender.set_trace(true);
        }
    }

    /// Capture link direction `name` (`"A->B"`) as pcap; false if no such link.
    pub fn capture(&mut self, name: &str) -> bool {
        for l in &mut self.links {
            for d in Dir::BOTH {
                if l.names[d.index()] == name {
                    l.capture[d.index()] = Some(PcapWriter::new());
                    return true;
                }
            }
        }
        false
    }

    /// Names of all link directions.
    pub fn link_names(&self) -> Vec<String> {
        self.links
            .iter()
            .flat_map(|l| l.names.iter().cloned())
            .collect()
    }

    /// Run until `until` (inclusive); may be called repeatedly with later times.
    pub fn run(&mut self, until: Time) {
        while let Some((now, target)) = self.queue.pop_until(until) {
            match target {
                Target::Link(i) => {
                    if self.wake_links.fire(i as usize, now) {
                        self.service_link(i as usize, now);
                    }
                }
                Target::Sender(f) => {
                    if self.wake_senders.fire(f as usize, now) {
                        self.flows[f as usize].sender.handle_timeout(now);
                        self.flush_sender(f as usize, now);
                    }
                }
                Target::Receiver(f) => {
                    if self.wake_receivers.fire(f as usize, now) {
                        self.flows[f as usize].receiver.handle_timeout(now);
                        self.flush_receiver(f as usize, now);
                    }
                }
                Target::Start(f) => {
                    self.flows[f as usize].sender.start(now);
                    self.flush_sender(f as usize, now);
                }
                Target::Stop(f) => {
                    self.flows[f as usize].sender.stop(now);
                    self.flush_sender(f as usize, now);
                }
            }
        }
        self.end = self.end.max(until);
    }

    /// Packet accounting: (sent by endpoints, delivered to endpoints, dropped,
    /// inside links). Conservation: sent = delivered + dropped + inside.
    pub fn packet_balance(&self) -> (u64, u64, u64, u64) {
        let inside = self.links.iter().map(|l| l.model.in_transit() as u64).sum();
        (
            self.next_uid,
            self.delivered_pkts,
            self.dropped_pkts,
            inside,
        )
    }

    fn service_link(&mut self, i: usize, now: Time) {
        while let Some((dir, d)) = self.links[i].model.poll_deliver(now) {
            match d {
                Delivery::Arrived(p) => {
                    if let Some(c) = self.links[i].capture[dir.index()].as_mut() {
                        c.record(now, &p);
                    }
                    let at = self.links[i].to[dir.index()];
                    self.arrive(at, p, now);
                }
                Delivery::Lost(p, cause) => self.dropped(&p, cause, now),
            }
        }
        let next = self.links[i].model.poll_timeout();
        self.wake_links
            .schedule(&mut self.queue, i, next, Target::Link(i as u32));
    }

    fn arrive(&mut self, node: NodeId, p: Packet, now: Time) {
        if p.dst != node {
            self.forward(node, p, now);
            return;
        }
        self.delivered_pkts += 1;
        let f = p.flow.0 as usize;
        match p.kind {
            Kind::Data => {
                let slot = &mut self.flows[f];
                if p.payload > 0 && p.repair.is_none() {
                    slot.metrics
                        .delay
                        .record(now.saturating_sub(p.sent_at).as_nanos());
                    if let Some(t) = self.traces.as_mut() {
                        t.seq(now, p.flow, "received", p.seq);
                    }
                }
                slot.receiver.on_packet(now, &p);
                self.flush_receiver(f, now);
            }
            Kind::Ack => {
                self.flows[f].sender.on_packet(now, &p);
                self.flush_sender(f, now);
            }
        }
    }

    fn forward(&mut self, node: NodeId, p: Packet, now: Time) {
        let n = self.nodes.len();
        let code = self.routes[node.0 as usize * n + p.dst.0 as usize] as usize;
        let (l, dir) = (code / 2, Dir::from_index(code % 2));
        if let Some((p, cause)) = self.links[l].model.enqueue(now, dir, p) {
            self.dropped(&p, cause, now);
        }
        let next = self.links[l].model.poll_timeout();
        self.wake_links
            .schedule(&mut self.queue, l, next, Target::Link(l as u32));
    }

    fn dropped(&mut self, p: &Packet, _cause: DropCause, now: Time) {
        self.dropped_pkts += 1;
        if let Some(t) = self.traces.as_mut() {
            if p.kind == Kind::Data && p.payload > 0 {
                t.seq(now, p.flow, "dropped", p.seq);
            }
        }
    }

    fn flush_sender(&mut self, f: usize, now: Time) {
        while let Some(mut p) = self.flows[f].sender.poll_transmit(now) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            let src = self.flows[f].spec.src;
            self.forward(src, p, now);
        }
        let next = self.flows[f].sender.poll_timeout();
        self.wake_senders
            .schedule(&mut self.queue, f, next, Target::Sender(f as u32));
    }

    fn flush_receiver(&mut self, f: usize, now: Time) {
        while let Some(mut p) = self.flows[f].receiver.poll_transmit(now) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            let dst = self.flows[f].spec.dst;
            self.forward(dst, p, now);
        }
        let next = self.flows[f].receiver.poll_timeout();
        self.wake_receivers
            .schedule(&mut self.queue, f, next, Target::Receiver(f as u32));
    }
}

pub mod report;

#[cfg(test)]
mod tests;

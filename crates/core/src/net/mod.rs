//! The network: nodes, link directions, static shortest-path routes, flows,
//! and the [`Simulation`] that drives them all from the event engine.

pub mod limits;
mod routing;

use std::collections::HashMap;

use crate::aqm::DropCause;
use crate::capture::PcapWriter;
use crate::engine::{EventQueue, Wakeups};
use crate::link::{Delivery, Dir, Link};
use crate::metrics::histogram::Histogram;
use crate::metrics::Traces;
use crate::packet::{FlowId, Kind, NodeId, Packet};
use crate::tcp::{App, ReceiverLossDetector, TcpConfig, TcpReceiver, TcpSender};
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

/// Which end of a TCP flow measures the end-to-end loss rate fed to a link
/// (seed 001 §III-B): the receiver counts a segment lost once three higher ones
/// arrived, the sender counts fast retransmits and timeouts.
pub use crate::tcp::EstimatorSide;

/// A cross-layer feed: flow `flow`'s loss event rate, measured at `side`,
/// goes to direction `dir` of link `link` (the direction its data crosses).
#[derive(Debug)]
struct Feed {
    flow: usize,
    link: usize,
    dir: Dir,
    /// The receiver-side detector (observes the data the receiver gets).
    rx: Option<ReceiverLossDetector>,
    /// The rate last passed to the link.
    last: Option<f64>,
    /// MaxDAT last traced (`Some(None)`: unlimited; `None`: not yet read).
    traced: Option<Option<u32>>,
}

/// One row of the `arq` trace: a link direction's MaxDAT changed.
#[derive(Debug)]
struct ArqSample {
    link: String,
    t: Time,
    max_dat: Option<u32>,
    p_tcp: f64,
    p_ll: Option<f64>,
    target: Option<f64>,
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
    feeds: Vec<(LinkId, FlowId, EstimatorSide, Dir)>,
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

    /// The direction of link `link` that the data of flow `flow` crosses on
    /// its (static, minimum-hop) route, if it crosses the link at all.
    pub fn data_direction(&self, flow: FlowId, link: LinkId) -> Option<Dir> {
        let f = self.flows.get(flow.0 as usize)?;
        let n = self.nodes.len();
        let edges = self.edges();
        let routes = routing::shortest_paths(n, &edges);
        let mut node = f.src;
        for _ in 0..edges.len() {
            if node == f.dst {
                break;
            }
            let code = routes[node.0 as usize * n + f.dst.0 as usize];
            if code == routing::NO_ROUTE {
                return None;
            }
            if code / 2 == link.0 {
                return Some(Dir::from_index(code as usize % 2));
            }
            node = edges[code as usize].1;
        }
        None
    }

    /// Feed the end-to-end loss event rate of flow `flow`, measured at
    /// `side`, to link `link` (seed 001 §III cross-layer adaptation, see
    /// [`Link::on_e2e_loss_rate`]). Returns the direction it feeds (the one
    /// the flow's data crosses); `Err` if the flow does not cross the link.
    pub fn cross_layer(
        &mut self,
        link: LinkId,
        flow: FlowId,
        side: EstimatorSide,
    ) -> Result<Dir, String> {
        let dir = self.data_direction(flow, link).ok_or_else(|| {
            let name = self
                .flows
                .get(flow.0 as usize)
                .map_or("?", |f| f.name.as_str());
            format!("flow '{name}' does not cross this link")
        })?;
        self.feeds.push((link, flow, side, dir));
        Ok(dir)
    }

    /// Edge 2i is link i's a→b direction, edge 2i+1 its b→a.
    fn edges(&self) -> Vec<(NodeId, NodeId)> {
        self.links
            .iter()
            .flat_map(|(a, b, _)| [(*a, *b), (*b, *a)])
            .collect()
    }

    /// Compute routes and assemble the simulation. Fails (with the flow's
    /// index and a message) if a flow's endpoints are not connected both ways.
    pub fn build(self) -> Result<Simulation, (usize, String)> {
        let n = self.nodes.len();
        // Route code = link * 2 + dir.
        let edges = self.edges();
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
        let mut flows = flows;
        let feeds: Vec<Feed> = self
            .feeds
            .iter()
            .map(|&(link, flow, side, dir)| {
                if side == EstimatorSide::Sender {
                    flows[flow.0 as usize].sender.enable_loss_events();
                }
                Feed {
                    flow: flow.0 as usize,
                    link: link.0 as usize,
                    dir,
                    rx: (side == EstimatorSide::Receiver).then(ReceiverLossDetector::new),
                    last: None,
                    traced: None,
                }
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
            feeds,
            arq_trace: Vec::new(),
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
    feeds: Vec<Feed>,
    arq_trace: Vec<ArqSample>,
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
                if p.payload > 0 && !self.feeds.is_empty() {
                    self.observe_arrival(f, &p, now);
                }
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
        if !self.feeds.is_empty() {
            let p = self.flows[f]
                .sender
                .loss_events()
                .and_then(|e| e.loss_event_rate());
            for i in 0..self.feeds.len() {
                if self.feeds[i].flow == f && self.feeds[i].rx.is_none() {
                    self.feed(i, p, now);
                }
            }
        }
    }

    /// Receiver-side loss detection on the data segment `p` of flow `f`
    /// arriving at its receiver. The round trip used to group losses is the
    /// sender's smoothed RTT (TFRC carries it in every data packet).
    fn observe_arrival(&mut self, f: usize, p: &Packet, now: Time) {
        let mss = u64::from(self.flows[f].spec.tcp.mss.max(1));
        let rtt = self.flows[f].sender.srtt().unwrap_or(Time::ZERO);
        for i in 0..self.feeds.len() {
            if self.feeds[i].flow != f {
                continue;
            }
            let Some(rx) = self.feeds[i].rx.as_mut() else {
                continue;
            };
            rx.on_arrival(now, p.seq / mss, rtt);
            let rate = rx.loss_event_rate();
            self.feed(i, rate, now);
        }
    }

    /// Pass a new loss event rate of feed `i` to its link, if it changed.
    fn feed(&mut self, i: usize, p: Option<f64>, now: Time) {
        let Some(p) = p else { return };
        let fd = &mut self.feeds[i];
        if fd.last == Some(p) {
            return;
        }
        fd.last = Some(p);
        let (l, dir) = (fd.link, fd.dir);
        let link = &mut self.links[l];
        if self.traces.is_some() && fd.traced.is_none() {
            // The limit before the first update: rows are changes only.
            fd.traced = link.model.arq_stats(dir, now).map(|st| st.max_dat);
        }
        link.model.on_e2e_loss_rate(now, dir, p);
        if self.traces.is_none() {
            return;
        }
        let Some(st) = link.model.arq_stats(dir, now) else {
            return;
        };
        if self.feeds[i].traced != Some(st.max_dat) {
            self.feeds[i].traced = Some(st.max_dat);
            self.arq_trace.push(ArqSample {
                link: link.names[dir.index()].clone(),
                t: now,
                max_dat: st.max_dat,
                p_tcp: p,
                p_ll: st.p_ll,
                target: st.target,
            });
        }
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
pub mod summary;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod arq_tests;

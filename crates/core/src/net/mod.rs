//! The network: nodes, link directions, static shortest-path routes, flows,
//! and the [`Simulation`] that drives them all from the event engine.

pub mod account;
pub mod limits;
pub mod monitor;
pub mod routing;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::aqm::DropCause;
use crate::capture::{FlowWire, Format, Interface, PcapWriter};
use crate::engine::{EventQueue, Wakeups};
use crate::link::{Delivery, Dir, Link, Then};
use crate::media;
use crate::metrics::bins::{FlowHistograms, HistogramsConfig};
use crate::metrics::histogram::Histogram;
use crate::metrics::Traces;
use crate::packet::{pool, FlowId, Kind, NodeId, Packet, TcpFlags};
use crate::tcp::{App, ReceiverLossDetector, TcpConfig, TcpReceiver, TcpSender};
use crate::time::Time;
use crate::workload::{Job, Plan};

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
    /// A media stream's source.
    Media(u32),
    /// The next arrival of workload `i` (`[[workloads]]`).
    Arrival(u32),
    /// Flow `f`'s paced application offers more, or switches on or off.
    App(u32),
    /// Closed-loop client `c` starts its next transaction.
    Client(u32),
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
    /// TCP configuration, shared by both ends (and by the flows that were
    /// given the same `Arc`: a `[[flows]]` entry's range, a workload's flows).
    pub tcp: Arc<TcpConfig>,
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
    /// Jitter as ns-3's FlowMonitor defines it: |delay − the delay of the data
    /// packet that arrived before it| for every data packet after the first, ns.
    pub jitter: Histogram,
    /// Delay of the latest data packet that arrived, ns.
    pub last_delay: Option<u64>,
}

/// A link of a built network: its model and where its directions go.
///
/// Kept small (32 bytes, the names behind a pointer): every packet hop reads
/// a slot, and with tens of thousands of links the slots then stay in cache.
pub struct NetLink {
    /// Direction names, "A->B" and "B->A".
    pub names: Box<[String; 2]>,
    /// Where each direction arrives: b for AB, a for BA.
    pub to: [NodeId; 2],
    /// The link model.
    pub model: Box<dyn Link>,
}

impl NetLink {
    /// The node a direction starts from.
    pub fn from(&self, d: Dir) -> NodeId {
        self.to[1 - d.index()]
    }
}

/// A built network taken apart for an executor other than the simulator
/// (the live emulator): node names, links with their models, and the flows
/// to create. The simulator's TCP endpoints are not part of it.
pub struct Network {
    /// Node names by [`NodeId`].
    pub nodes: Vec<String>,
    /// Links in scenario order.
    pub links: Vec<NetLink>,
    /// Flows in scenario order.
    pub flows: Vec<FlowSpec>,
    /// Whether some link takes a cross-layer feed from a flow's TCP.
    pub cross_layer: bool,
    /// Whether the scenario has a `[monitor]`.
    pub monitored: bool,
    /// Media streams (`[[media]]`), which only the simulator runs.
    pub media: usize,
    /// Whether the scenario has `[[workloads]]` (not in `flows`).
    pub workloads: bool,
    /// Whether some flow's application is paced (rate cap, on/off).
    pub paced: bool,
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
    /// The workload flow this slot carries, if it is one (`None` for a
    /// `[[flows]]` flow, and for a free slot).
    job: Option<Job>,
    /// Its application's rate cap and on/off periods, if paced.
    pacer: Option<Box<app::Pacer>>,
    /// Handshake segments (SYN, SYN-ACK) of its connection dropped in the
    /// network.
    handshake_drops: u64,
}

impl FlowSlot {
    /// The handshake drops a workload flow `job` on this slot's connection
    /// is charged: all of them for the connection's first flow (`base` 0),
    /// none for a later flow of a persistent connection.
    fn handshake_drops_of(&self, job: &crate::workload::Job) -> u64 {
        if job.base == 0 {
            self.handshake_drops
        } else {
            0
        }
    }
}

impl FlowMetrics {
    fn new() -> FlowMetrics {
        FlowMetrics {
            delay: Histogram::new(),
            jitter: Histogram::new(),
            last_delay: None,
        }
    }
}

/// Builds a [`Simulation`]: add nodes, link directions and flows, then [`NetworkBuilder::build`].
#[derive(Default)]
pub struct NetworkBuilder {
    nodes: Vec<String>,
    index: HashMap<String, NodeId>,
    links: Vec<(NodeId, NodeId, Box<dyn Link>)>,
    flows: Vec<FlowSpec>,
    feeds: Vec<(LinkId, FlowId, EstimatorSide, Dir)>,
    media: Vec<media::MediaSpec>,
    /// The topology preprocessed for routing; reset when a node or link is added.
    router: OnceCell<routing::Router>,
    /// `[[workloads]]`: flows created as they arrive.
    workloads: Option<Box<Plan>>,
    /// Flows whose application is paced (rate cap, on/off).
    paced: Vec<(FlowId, app::AppShape)>,
    /// The run seed (paced applications' random streams).
    seed: u64,
}

impl NetworkBuilder {
    /// The index [`NetworkBuilder::build`] fails with when the whole network,
    /// not one flow, is at fault.
    pub const WHOLE: usize = usize::MAX;

    /// [`NetworkBuilder::build`] fails with `MEDIA + i` when media stream
    /// `i` is at fault.
    pub const MEDIA: usize = usize::MAX / 2;

    /// [`NetworkBuilder::build`] fails with `WORKLOAD + i` when workload `i`
    /// is at fault (below [`NetworkBuilder::MEDIA`]).
    pub const WORKLOAD: usize = usize::MAX / 4;

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
        self.router = OnceCell::new();
        id
    }

    /// Look a node up by name.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }

    /// Add a duplex link between `a` and `b` (its `Dir::AB` runs a → b).
    pub fn link(&mut self, a: NodeId, b: NodeId, model: Box<dyn Link>) -> LinkId {
        self.links.push((a, b, model));
        self.router = OnceCell::new();
        LinkId(self.links.len() as u32 - 1)
    }

    /// Run these workloads (flows created as they arrive, in slots freed by
    /// finished ones).
    pub fn workloads(&mut self, plan: Plan) {
        self.workloads = Some(Box::new(plan));
    }

    /// The run seed, for the random streams the network itself draws from.
    pub fn seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// Pace flow `flow`'s application (a rate cap, on/off periods).
    pub fn pace(&mut self, flow: FlowId, shape: app::AppShape) {
        self.paced.push((flow, shape));
    }

    /// Add a flow.
    pub fn flow(&mut self, spec: FlowSpec) -> FlowId {
        self.flows.push(spec);
        FlowId(self.flows.len() as u32 - 1)
    }

    /// Add a media stream (UDP, one way); returns its index.
    pub fn media(&mut self, spec: media::MediaSpec) -> usize {
        self.media.push(spec);
        self.media.len() - 1
    }

    /// The direction of link `link` that the data of flow `flow` crosses on
    /// its (static, minimum-hop) route, if it crosses the link at all.
    pub fn data_direction(&self, flow: FlowId, link: LinkId) -> Option<Dir> {
        let f = self.flows.get(flow.0 as usize)?;
        let route = self.router().route(f.src, f.dst)?;
        route
            .iter()
            .find(|&&code| code / 2 == link.0)
            .map(|&code| Dir::from_index(code as usize % 2))
    }

    /// The routing view of the topology (built on first use).
    fn router(&self) -> &routing::Router {
        self.router.get_or_init(|| self.new_router())
    }

    fn new_router(&self) -> routing::Router {
        let ends: Vec<(NodeId, NodeId)> = self.links.iter().map(|(a, b, _)| (*a, *b)).collect();
        routing::Router::new(self.nodes.len(), &ends)
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

    /// Check the size caps ([`limits`]) and that there is something to run.
    fn check_size(nodes: usize, links: usize, flows: usize) -> Result<(), String> {
        let caps = [
            ("nodes", nodes, limits::MAX_NODES, "MAX_NODES"),
            ("links", links, limits::MAX_LINKS, "MAX_LINKS"),
            ("flows", flows, limits::MAX_FLOWS, "MAX_FLOWS"),
        ];
        for (what, n, cap, name) in caps {
            if n > cap {
                return Err(format!(
                    "the network has {n} {what}; at most {cap} are allowed (limit {name})"
                ));
            }
        }
        if flows == 0 {
            return Err(
                "the network has no flows; add at least one flow (a [[flows]] entry) to simulate"
                    .into(),
            );
        }
        Ok(())
    }

    /// Compute routes and assemble the simulation. Fails with the index of
    /// the offending flow and a message if a flow's endpoints are not
    /// connected both ways, or with index [`NetworkBuilder::WHOLE`] if the
    /// network is over a size cap or has no flows.
    pub fn build(mut self) -> Result<Simulation, (usize, String)> {
        let sources = self.workloads.as_ref().map_or(0, |w| w.sources.len());
        // Media streams alone are something to run too.
        let flows = match (self.flows.len() + sources, self.media.len()) {
            (0, m) => m.min(1),
            (f, _) => f,
        };
        Self::check_size(self.nodes.len(), self.links.len(), flows)
            .map_err(|m| (Self::WHOLE, m))?;
        let n = self.media.len();
        if n > media::MAX_STREAMS {
            return Err((
                Self::WHOLE,
                format!(
                    "the network has {n} media streams; at most {} are allowed (limit media::MAX_STREAMS)",
                    media::MAX_STREAMS
                ),
            ));
        }
        // Route 2f: flow f's data (src -> dst); route 2f + 1: its ACKs; then
        // the same for each workload pair.
        let work_pairs = self.workloads.as_ref().map_or(&[][..], |w| &w.pairs[..]);
        let pairs: Vec<(NodeId, NodeId)> = self
            .flows
            .iter()
            .map(|f| (f.src, f.dst))
            .chain(work_pairs.iter().copied())
            .flat_map(|(a, b)| [(a, b), (b, a)])
            .collect();
        let router = self.router.take().unwrap_or_else(|| self.new_router());
        let set = router.routes(&pairs);
        let media_pairs: Vec<(NodeId, NodeId)> =
            self.media.iter().map(|m| (m.src, m.dst)).collect();
        let media_set = router.routes(&media_pairs);
        drop(router);
        for (i, m) in self.media.iter().enumerate() {
            let (a, b) = (&self.nodes[m.src.0 as usize], &self.nodes[m.dst.0 as usize]);
            if m.src == m.dst {
                return Err((
                    Self::MEDIA + i,
                    format!("a media stream needs two different nodes, got '{a}' twice"),
                ));
            }
            if !media_set.has(i) {
                return Err((Self::MEDIA + i, format!("no path from '{a}' to '{b}'")));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.src == f.dst {
                return Err((
                    i,
                    format!(
                        "a flow needs two different nodes, got '{}' twice",
                        self.nodes[f.src.0 as usize]
                    ),
                ));
            }
            for (k, (a, b)) in [(f.src, f.dst), (f.dst, f.src)].into_iter().enumerate() {
                if !set.has(2 * i + k) {
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
        let nf = self.flows.len();
        for (k, &(a, b)) in work_pairs.iter().enumerate() {
            let owner = self.workloads.as_ref().map_or(0, |w| {
                w.sources
                    .iter()
                    .position(|s| s.pairs.contains(&(k as u32)))
                    .unwrap_or(0)
            });
            for (j, (x, y)) in [(a, b), (b, a)].into_iter().enumerate() {
                if !set.has(2 * (nf + k) + j) {
                    return Err((
                        Self::WORKLOAD + owner,
                        format!(
                            "no path from '{}' to '{}' (flows need links in both directions)",
                            self.nodes[x.0 as usize], self.nodes[y.0 as usize]
                        ),
                    ));
                }
            }
        }
        let routes = set.table;
        let nodes = &self.nodes;
        let links: Vec<NetLink> = self
            .links
            .into_iter()
            .map(|(a, b, model)| {
                let (na, nb) = (&nodes[a.0 as usize], &nodes[b.0 as usize]);
                NetLink {
                    names: Box::new([format!("{na}->{nb}"), format!("{nb}->{na}")]),
                    to: [b, a],
                    model,
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
                metrics: FlowMetrics::new(),
                job: None,
                pacer: None,
                handshake_drops: 0,
                spec,
            })
            .collect();
        let mut flows = flows;
        let paced = !self.paced.is_empty();
        for (id, shape) in std::mem::take(&mut self.paced) {
            let slot = &mut flows[id.0 as usize];
            let total = match slot.spec.app {
                App::Bulk => None,
                App::Bytes(n) => Some(n),
            };
            slot.pacer = Some(Box::new(app::Pacer::new(
                shape,
                total,
                u64::from(slot.spec.tcp.mss),
                crate::rng::Rng::stream(0, ""),
                Time::ZERO,
            )));
        }
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
        let streams: Vec<media::Stream> = self
            .media
            .into_iter()
            .enumerate()
            .map(|(i, spec)| media::Stream::new(i, spec))
            .collect();
        let mut wake_media = Wakeups::new(streams.len());
        for (i, m) in streams.iter().enumerate() {
            let next = m.source.poll_timeout();
            wake_media.schedule(&mut queue, i, next, Target::Media(i as u32));
        }
        for (i, f) in flows.iter().enumerate() {
            queue.push(f.spec.start, Target::Start(i as u32));
            if let Some(stop) = f.spec.stop {
                queue.push(stop, Target::Stop(i as u32));
            }
        }
        let mut work = self.workloads.take();
        if let Some(w) = work.as_mut() {
            for (i, s) in w.sources.iter_mut().enumerate() {
                if let Some((load, name)) = s.load.clone() {
                    let rate = links
                        .iter()
                        .flat_map(|l| Dir::BOTH.map(|d| (l, d)))
                        .find(|(l, d)| l.names[d.index()] == name)
                        .map(|(l, d)| l.model.rate_bps(d))
                        .ok_or_else(|| {
                            (
                                Self::WORKLOAD + i,
                                format!("arrivals.link {name:?} is not a link direction; allowed: \"A->B\" of [[links]] ends"),
                            )
                        })?;
                    if rate == 0 {
                        return Err((
                            Self::WORKLOAD + i,
                            format!("arrivals.link {name:?} has no rate at the start; allowed: a link direction with a rate"),
                        ));
                    }
                    s.set_rate(load * rate as f64 / (8.0 * s.mean_size().max(1.0)));
                }
                if let Some(t) = s.next_time(None) {
                    queue.push(t, Target::Arrival(i as u32));
                }
            }
            // Closed-loop clients start at uniform times over one think time.
            for (c, cl) in w.clients.iter_mut().enumerate() {
                let s = &w.sources[cl.workload as usize];
                if let crate::workload::Process::Closed(k) = &s.process {
                    let t = s.start + Time::from_secs_f64(cl.rng.uniform() * k.think.as_secs_f64());
                    if t < s.stop {
                        queue.push(t, Target::Client(c as u32));
                    }
                }
            }
        }
        Ok(Simulation {
            route_of: (0..flows.len() as u32).map(|i| 2 * i).collect(),
            seed: self.seed,
            paced,
            static_flows: flows.len(),
            free: Vec::new(),
            work,
            seen: vec![account::DirSeen::default(); 2 * links.len()],
            legs: vec![Default::default(); flows.len()],
            wake_links: Wakeups::new(links.len()),
            servicing: usize::MAX,
            serviced_touched: false,
            touched: vec![Time::ZERO; links.len()],
            held_queue_rows: Vec::new(),
            queue_rows_final: Time::ZERO,
            wake_senders: Wakeups::new(flows.len()),
            wake_receivers: Wakeups::new(flows.len()),
            queue,
            nodes: self.nodes,
            routes,
            links,
            captures: Vec::new(),
            taps: Vec::new(),
            flows,
            next_uid: 0,
            spare: Vec::new(),
            traces: None,
            end: Time::ZERO,
            feeds,
            arq_trace: Vec::new(),
            monitor: None,
            histograms: None,
            media_legs: vec![Default::default(); streams.len()],
            media: streams,
            media_routes: media_set.table,
            wake_media,
        })
    }
}

/// Boxes a network keeps for reuse at most (`Simulation::spare`).
const SPARE: usize = 1024;

/// A network with its flows, ready to run.
pub struct Simulation {
    queue: EventQueue<Target>,
    /// Per flow slot, the route of its data (its ACKs: the next one): 2f
    /// for `[[flows]]` flow f; a workload flow's pair's. Kept apart from the
    /// slots so that forwarding a packet reads 4 bytes, not a flow's state.
    route_of: Vec<u32>,
    /// Whether some `[[flows]]` flow has a paced application.
    paced: bool,
    /// The run seed.
    seed: u64,
    /// The `[[flows]]` flows: slots `0..static_flows`; workload flows after.
    static_flows: usize,
    /// Workload slots free for the next arrival.
    free: Vec<u32>,
    /// `[[workloads]]`, if any.
    work: Option<Box<Plan>>,
    wake_links: Wakeups,
    /// The link whose wake-up is being served (`usize::MAX`: none).
    servicing: usize,
    /// Set when the link being serviced is offered a packet (or fed a loss
    /// rate) while its delivery is processed: its [`Then::Idle`] no longer holds.
    serviced_touched: bool,
    wake_senders: Wakeups,
    wake_receivers: Wakeups,
    nodes: Vec<String>,
    /// Route 2f: flow f's data path; 2f + 1: its ACK path (link-direction codes).
    routes: routing::Routes,
    links: Vec<NetLink>,
    /// Captures asked for: (spec, writer).
    captures: Vec<(String, PcapWriter)>,
    /// Per link, where its packets are captured: `[a->b entering, b->a
    /// entering, a->b leaving, b->a leaving]` → (capture, interface). Empty
    /// until a capture is asked for.
    taps: Vec<[Vec<(u32, u32)>; 4]>,
    flows: Vec<FlowSlot>,
    next_uid: u64,
    /// Packet boxes freed at their destination, reused by the next packet a
    /// sender or receiver emits: the pool of `packet::pool` without its
    /// thread-local access (a call and a borrow check per hop).
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Packet>>,
    traces: Option<Traces>,
    end: Time,
    feeds: Vec<Feed>,
    arq_trace: Vec<ArqSample>,
    /// When each link was last serviced, while tracing: its model has
    /// brought its state up to then, so queue changes it records later are
    /// not earlier.
    touched: Vec<Time>,
    /// `queue` trace rows kept back by [`Simulation::drain_traces`]:
    /// (time, link direction, packets, bytes).
    held_queue_rows: Vec<(Time, usize, u32, u64)>,
    /// Every `queue` row recorded from now on is at this time or later.
    queue_rows_final: Time,
    /// `[monitor]`'s watch, if any.
    monitor: Option<monitor::Monitor>,
    /// Fixed-width delay and jitter histograms per flow, when switched on.
    histograms: Option<Box<FlowHistograms>>,
    /// Per link direction (code 2·link + dir), what crossed its boundary.
    seen: Vec<account::DirSeen>,
    /// Per flow, its data and ACK legs as the network saw them.
    legs: Vec<[account::Leg; 2]>,
    /// Media streams (`[[media]]`): source and sink.
    media: Vec<media::Stream>,
    /// Route i: media stream i's path.
    media_routes: routing::Routes,
    /// Per media stream, its packets as the network saw them.
    media_legs: Vec<account::Leg>,
    wake_media: Wakeups,
}

impl Simulation {
    /// Keep fixed-width delay and jitter histograms of every flow from now
    /// on (ns-3 FlowMonitor's; `[histograms]`), handed over as the
    /// `histograms` table when the run's traces are taken at its end
    /// ([`Simulation::take_traces`]), whether or not other traces are on.
    pub fn enable_histograms(&mut self, cfg: &HistogramsConfig) {
        self.histograms = Some(Box::new(FlowHistograms::new(self.flows.len(), cfg)));
    }

    /// Whether [`Simulation::enable_histograms`] was called.
    pub fn histograms_enabled(&self) -> bool {
        self.histograms.is_some()
    }

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

    /// Watch the shared buffer `shared` and the link buffers `links` (link
    /// direction names) as `[monitor]` says; `Err` names a direction that
    /// does not exist.
    pub fn monitor(
        &mut self,
        shared: &str,
        links: &[String],
        cfg: &monitor::MonitorConfig,
    ) -> Result<(), String> {
        let names = self.link_names();
        let code = |n: &str| {
            names
                .iter()
                .position(|x| x == n)
                .ok_or_else(|| format!("{n} is not a link direction"))
        };
        let shared = code(shared)?;
        let links = links
            .iter()
            .map(|n| code(n))
            .collect::<Result<Vec<_>, _>>()?;
        for &c in std::iter::once(&shared).chain(&links) {
            self.links[c / 2]
                .model
                .occupancy_mut(Dir::from_index(c % 2))
                .watch_busy();
        }
        self.monitor = Some(monitor::Monitor::new(shared, links, cfg));
        Ok(())
    }

    /// Capture `spec` in `format`: `"A->B"` (one link direction) or `"A-B"`
    /// (both, one pcapng interface each, in one file in time order), where
    /// packets enter the direction (at A, before its queue: everything A
    /// sends into it), or with `"@rx"` appended where they leave it (at B:
    /// what B receives; lost packets are missing). `Err` says what is wrong.
    pub fn capture(&mut self, spec: &str, format: Format) -> Result<(), String> {
        let (link, rx) = match spec.strip_suffix("@rx") {
            Some(l) => (l, true),
            None => (spec.strip_suffix("@tx").unwrap_or(spec), false),
        };
        let dirs: Vec<String> = if let Some((a, b)) = link.split_once("->") {
            vec![format!("{a}->{b}")]
        } else if let Some((a, b)) = link.split_once('-') {
            vec![format!("{a}->{b}"), format!("{b}->{a}")]
        } else {
            vec![]
        };
        let names = self.link_names();
        let codes: Vec<usize> = dirs
            .iter()
            .filter_map(|d| names.iter().position(|n| n == d))
            .collect();
        if dirs.is_empty() || codes.len() != dirs.len() {
            let shown: Vec<&str> = names.iter().take(12).map(|s| s.as_str()).collect();
            return Err(format!(
                "is not a link; write A->B for one direction or A-B for both, optionally \
                 with @rx to capture where packets leave the link (links: {}{})",
                shown.join(", "),
                if names.len() > 12 { ", …" } else { "" }
            ));
        }
        if self.captures.iter().any(|(s, _)| s == spec) {
            return Err("is captured twice".into());
        }
        let interfaces: Vec<Interface> = dirs
            .iter()
            .map(|d| {
                let (a, b) = d.split_once("->").unwrap_or_default();
                Interface {
                    name: if rx { format!("{d}@rx") } else { d.clone() },
                    description: if rx {
                        format!("link {d}: packets leaving it at {b}")
                    } else {
                        format!("link {d}: packets entering it at {a}, before its queue")
                    },
                }
            })
            .collect();
        let flows: std::sync::Arc<[FlowWire]> = self
            .flows
            .iter()
            .map(|f| FlowWire::of(&f.spec.tcp))
            .collect();
        let c = self.captures.len() as u32;
        self.captures.push((
            spec.to_string(),
            PcapWriter::with_info(format, flows, &interfaces, &self.nodes),
        ));
        self.taps.resize_with(self.links.len(), Default::default);
        for (iface, code) in codes.into_iter().enumerate() {
            let side = if rx { 2 } else { 0 };
            self.taps[code / 2][side + code % 2].push((c, iface as u32));
        }
        Ok(())
    }

    /// Whether `flow` is a workload flow (`[[workloads]]`), not a `[[flows]]`
    /// flow or a media stream.
    fn is_workload(&self, flow: FlowId) -> bool {
        media::stream_of(flow).is_none() && flow.0 as usize >= self.static_flows
    }

    /// Record `p` in the captures that tap link `l`'s `slot` (see `taps`).
    fn tap(&mut self, l: usize, slot: usize, now: Time, p: &Packet) {
        if self.is_workload(p.flow) {
            return; // workload flows are not captured
        }
        if let Some(t) = self.taps.get(l) {
            for &(c, iface) in &t[slot] {
                self.captures[c as usize].1.record_on(iface, now, p);
            }
        }
    }

    /// The network taken apart: nodes, links with their models (in the
    /// state this simulation left them) and flow specifications.
    pub fn into_network(self) -> Network {
        Network {
            cross_layer: !self.feeds.is_empty(),
            monitored: self.monitor.is_some(),
            media: self.media.len(),
            nodes: self.nodes,
            links: self.links,
            workloads: self.work.is_some(),
            paced: self.paced,
            flows: self.flows.into_iter().map(|f| f.spec).collect(),
        }
    }

    /// The names of every link direction, in link order.
    pub fn link_names(&self) -> Vec<String> {
        self.links
            .iter()
            .flat_map(|l| l.names.iter().cloned())
            .collect()
    }

    /// Run until `until` (inclusive); may be called repeatedly with later times.
    pub fn run(&mut self, until: Time) {
        self.run_for(until, u64::MAX);
    }

    /// Run towards `until` (inclusive), but stop once `max_events` events
    /// were processed — only between two instants, never among the events of
    /// one — so that a front can drain traces and captures
    /// ([`Simulation::take_traces`], [`Simulation::take_captures`]) in between.
    /// Returns true once `until` is reached. Running in slices gives exactly
    /// the results of one [`Simulation::run`].
    pub fn run_for(&mut self, until: Time, max_events: u64) -> bool {
        let stop = self.queue.popped().saturating_add(max_events);
        loop {
            if self.queue.popped() >= stop
                && self
                    .queue
                    .next_time()
                    .is_some_and(|t| t <= until && t > self.queue.now())
            {
                return false;
            }
            let Some((now, target)) = self.queue.pop_until(until) else {
                break;
            };
            self.dispatch(now, target);
        }
        self.end = self.end.max(until);
        true
    }

    fn dispatch(&mut self, now: Time, target: Target) {
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
                let f = f as usize;
                self.flows[f].sender.start(now);
                if let Some((shape, total)) =
                    self.flows[f].pacer.as_ref().map(|p| (p.shape(), p.total()))
                {
                    // The application starts offering now (its periods from now).
                    let (mss, rng) = (u64::from(self.flows[f].spec.tcp.mss), self.app_rng(f));
                    self.flows[f].pacer =
                        Some(Box::new(app::Pacer::new(shape, total, mss, rng, now)));
                    self.app_tick(f, now);
                }
                self.flush_sender(f, now);
            }
            Target::Stop(f) => {
                self.flows[f as usize].pacer = None;
                self.flows[f as usize].sender.stop(now);
                self.flush_sender(f as usize, now);
            }
            Target::Media(m) => {
                if self.wake_media.fire(m as usize, now) {
                    self.flush_media(m as usize, now);
                }
            }
            Target::Arrival(w) => self.arrival(w as usize, now),
            Target::Client(c) => self.client_start(c as usize, now),
            Target::App(f) => {
                let due = self.flows[f as usize].pacer.as_ref().and_then(|p| p.due);
                if due == Some(now) {
                    self.app_tick(f as usize, now);
                    self.flush_sender(f as usize, now);
                }
            }
        }
    }

    fn service_link(&mut self, i: usize, now: Time) {
        if self.traces.is_some() {
            self.touched[i] = now;
        }
        // Its wake-up has fired: until it is scheduled again below, an offer
        // to this link must ask for the whole link's wake-up (`forward`).
        self.servicing = i;
        // One pass: the deliveries due by `now`, then (from the same look at
        // the link, nothing having touched it since) its next wake-up.
        let next = loop {
            let (dir, d, then) = match self.links[i].model.poll_deliver_or_timeout(now) {
                Ok(x) => x,
                Err(next) => break next,
            };
            self.serviced_touched = false;
            match d {
                Delivery::Arrived(p) => {
                    self.seen[2 * i + dir.index()].arrived += 1;
                    // `taps` is empty unless capturing: no memory touched.
                    self.tap(i, 2 + dir.index(), now, &p);
                    let at = self.links[i].to[dir.index()];
                    self.arrive(at, p, now);
                }
                Delivery::Lost(p, cause) => {
                    self.dropped(&p, cause, now, 2 * i + dir.index());
                    pool::recycle(p);
                }
            }
            // The link said what the next pass would answer, and nothing
            // offered to it (or fed it) since: that pass is not made.
            if let Then::Idle(next) = then {
                if !self.serviced_touched {
                    break next;
                }
            }
        };
        self.servicing = usize::MAX;
        self.wake_links
            .schedule(&mut self.queue, i, next, Target::Link(i as u32));
    }

    /// `b` kept for the next packet emitted here (at most `SPARE` boxes;
    /// the rest go back to the thread's pool).
    #[inline(always)]
    fn spare_box(&mut self, b: Box<Packet>) {
        if self.spare.len() < SPARE {
            self.spare.push(b);
        } else {
            pool::recycle(b);
        }
    }

    /// `p` in a box: a spare one of this network's, else the thread pool's.
    #[inline(always)]
    fn boxed(&mut self, p: Packet) -> Box<Packet> {
        match self.spare.pop() {
            Some(mut b) => {
                *b = p;
                b
            }
            None => pool::boxed(p),
        }
    }

    /// Packet `p` arrives at `node`: forwarded on in its box, or received
    /// (then the box goes back to the pool).
    fn arrive(&mut self, node: NodeId, p: Box<Packet>, now: Time) {
        if p.dst != node {
            self.forward(node, p, now);
            return;
        }
        self.receive(&p, now);
        self.spare_box(p);
    }

    /// Packet `p` has reached its destination.
    fn receive(&mut self, p: &Packet, now: Time) {
        if let Some(m) = media::stream_of(p.flow) {
            self.media_legs[m].delivered += 1;
            if let Some(t) = self.traces.as_mut() {
                t.media(now, m as u32, "received", p.seq);
            }
            self.media[m].sink.on_packet(now, p);
            return;
        }
        let f = p.flow.0 as usize;
        self.legs[f][account::leg_index(p)].delivered += 1;
        match p.kind {
            Kind::Data => {
                let slot = &mut self.flows[f];
                if let Some(job) = slot.job.as_mut() {
                    slot.receiver.on_packet(now, p);
                    let fresh =
                        job.delivered_at.is_none() && slot.receiver.delivered() >= job.end();
                    if fresh {
                        job.delivered_at = Some(now);
                    }
                    let job = *job;
                    self.flush_receiver(f, now);
                    if fresh && job.client != Job::NO_CLIENT {
                        self.stage_done(job, now);
                    }
                    return;
                }
                if p.payload > 0 && p.repair.is_none() {
                    let d = now.saturating_sub(p.sent_at).as_nanos();
                    let m = &mut slot.metrics;
                    m.delay.record(d);
                    let jitter = m.last_delay.replace(d).map(|last| d.abs_diff(last));
                    if let Some(j) = jitter {
                        m.jitter.record(j);
                    }
                    if let Some(h) = self.histograms.as_mut() {
                        h.record(f, d, jitter);
                    }
                    if let Some(t) = self.traces.as_mut() {
                        t.seq(now, p.flow, "received", p.seq);
                    }
                }
                slot.receiver.on_packet(now, p);
                if p.payload > 0 && !self.feeds.is_empty() {
                    self.observe_arrival(f, p, now);
                }
                self.flush_receiver(f, now);
            }
            Kind::Ack => {
                self.flows[f].sender.on_packet(now, p);
                self.flush_sender(f, now);
            }
        }
    }

    fn forward(&mut self, node: NodeId, mut p: Box<Packet>, now: Time) {
        // Data goes sender -> receiver on the flow's route, ACKs back on the next.
        let code = match media::stream_of(p.flow) {
            Some(m) => self.media_routes.hop(m, p.hop),
            None => {
                let route =
                    self.route_of[p.flow.0 as usize] as usize + usize::from(p.kind == Kind::Ack);
                self.routes.hop(route, p.hop)
            }
        } as usize;
        p.hop += 1;
        let (l, dir) = (code / 2, Dir::from_index(code % 2));
        self.tap(l, dir.index(), now, &p);
        self.seen[code].offered += 1;
        debug_assert_eq!(
            self.links[l].to[1 - dir.index()],
            node,
            "route leaves {node:?}"
        );
        if let Some((p, cause)) = self.links[l].model.enqueue_boxed(now, dir, p) {
            self.dropped(&p, cause, now, code);
            pool::recycle(p);
        }
        // The link's live wake-up is at or before its other direction's next
        // one (every touch of a link ends in `schedule` with both), except
        // while the link is serviced: its wake-up fired and is not yet
        // renewed. Elsewhere the offered direction's own time decides the
        // same pushes as the whole link's (`Wakeups::schedule` pushes only
        // what is earlier than the live one).
        let model = &self.links[l].model;
        let next = if l == self.servicing {
            self.serviced_touched = true;
            model.poll_timeout()
        } else {
            model.poll_timeout_after_enqueue(dir)
        };
        self.wake_links
            .schedule(&mut self.queue, l, next, Target::Link(l as u32));
    }

    /// Packet `p` was lost on link direction `code` (2·link + dir).
    fn dropped(&mut self, p: &Packet, cause: DropCause, now: Time, code: usize) {
        self.seen[code].dropped.add(cause);
        let stream = media::stream_of(p.flow);
        if let Some(m) = stream {
            self.media_legs[m].drop(code, cause);
        } else if let Some(legs) = self.legs.get_mut(p.flow.0 as usize) {
            legs[account::leg_index(p)].drop(code, cause);
            if p.flags.has(TcpFlags::SYN) {
                if let Some(slot) = self.flows.get_mut(p.flow.0 as usize) {
                    slot.handshake_drops += 1;
                }
            }
        }
        if self.is_workload(p.flow) {
            self.maybe_retire(p.flow.0 as usize);
            return; // workload flows are not traced
        }
        if let Some(m) = self.monitor.as_mut() {
            if m.shared == code {
                m.drops.push((now, cause, p.size()));
            }
        }
        // Media packets: a `media_packets` row, and a `drops` row of kind
        // `media` whose flow is the stream's index.
        if let (Some(t), Some(m)) = (self.traces.as_mut(), stream) {
            t.media(now, m as u32, "dropped", p.seq);
            let link = &self.links[code / 2].names[code % 2];
            t.drop(now, FlowId(m as u32), ("media", p.seq), link, cause.name());
            return;
        }
        if let Some(t) = self.traces.as_mut() {
            if p.kind == Kind::Data && p.payload > 0 {
                t.seq(now, p.flow, "dropped", p.seq);
            }
            let what = match p.kind {
                Kind::Data => ("data", p.seq),
                Kind::Ack => ("ack", p.ack),
            };
            let link = &self.links[code / 2].names[code % 2];
            t.drop(now, p.flow, what, link, cause.name());
        }
    }

    fn flush_sender(&mut self, f: usize, now: Time) {
        while let Some(mut p) = self.flows[f].sender.poll_transmit(now) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            self.legs[f][account::leg_index(&p)].sent += 1;
            let src = self.flows[f].spec.src;
            let b = self.boxed(p);
            self.forward(src, b, now);
        }
        let next = self.flows[f].sender.poll_timeout();
        self.wake_senders
            .schedule(&mut self.queue, f, next, Target::Sender(f as u32));
        if f >= self.static_flows {
            self.maybe_retire(f);
            return;
        }
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
        if l == self.servicing {
            self.serviced_touched = true;
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

    /// Send what media stream `m`'s source has due at `now`.
    fn flush_media(&mut self, m: usize, now: Time) {
        while let Some(mut p) = self.media[m].source.poll_transmit(now) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            self.media_legs[m].sent += 1;
            if let Some(t) = self.traces.as_mut() {
                t.media(now, m as u32, "sent", p.seq);
            }
            let src = self.media[m].spec.src;
            let b = self.boxed(p);
            self.forward(src, b, now);
        }
        let next = self.media[m].source.poll_timeout();
        self.wake_media
            .schedule(&mut self.queue, m, next, Target::Media(m as u32));
    }

    fn flush_receiver(&mut self, f: usize, now: Time) {
        while let Some(mut p) = self.flows[f].receiver.poll_transmit(now) {
            p.uid = self.next_uid;
            self.next_uid += 1;
            self.legs[f][account::leg_index(&p)].sent += 1;
            let dst = self.flows[f].spec.dst;
            let b = self.boxed(p);
            self.forward(dst, b, now);
        }
        let next = self.flows[f].receiver.poll_timeout();
        self.wake_receivers
            .schedule(&mut self.queue, f, next, Target::Receiver(f as u32));
        if f >= self.static_flows {
            self.maybe_retire(f);
        }
    }
}

pub mod app;
mod dynamic;
pub mod report;
pub mod summary;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod arq_tests;

//! A workload while it runs: its arrival process and size sampler, the
//! flows it has alive, the records of finished flows, the empty-path
//! baselines slowdowns are measured against, and the summary.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::Sizes;
use crate::metrics::histogram::Histogram;
use crate::net::Simulation;
use crate::packet::NodeId;
use crate::rng::Rng;
use crate::tcp::TcpConfig;
use crate::time::Time;

/// How arrivals are spaced.
#[derive(Clone, Debug)]
pub enum Process {
    /// Exponential gaps, this many arrivals per second.
    Poisson(f64),
    /// Equal gaps, this many arrivals per second.
    Deterministic(f64),
    /// (offset from the start, size) from a file.
    Trace(Arc<Vec<(Time, u64)>>),
    /// A closed loop of clients (no open arrivals).
    Closed(Closed),
}

/// A closed loop's settings.
#[derive(Clone, Copy, Debug)]
pub struct Closed {
    /// Clients.
    pub clients: u32,
    /// Mean (or exact) think time.
    pub think: Time,
    /// Whether think times are exponential (else fixed).
    pub exponential: bool,
    /// Objects per transaction.
    pub objects: u32,
    /// Objects in progress at once.
    pub parallel: u32,
}

/// One client of a closed loop.
#[derive(Clone, Debug)]
pub struct Client {
    /// Its workload.
    pub workload: u32,
    /// Its pair (requests), and the reverse pair (responses).
    pub pair: u32,
    /// The reverse pair.
    pub back: u32,
    /// When its transaction started.
    pub started: Time,
    /// Objects of the transaction not yet started.
    pub to_start: u32,
    /// Objects finished.
    pub done: u32,
    /// Its think times.
    pub rng: Rng,
}

/// One workload's generator and counters.
pub struct Source {
    /// Name.
    pub name: String,
    /// TCP of its flows (shared by them).
    pub tcp: std::sync::Arc<TcpConfig>,
    /// Its pairs: indices into [`Plan::pairs`].
    pub pairs: Vec<u32>,
    /// Cumulative weights of `pairs` (last 1), or `None` for uniform.
    pub cum: Option<Vec<f64>>,
    /// The arrival process.
    pub process: Process,
    /// The size sampler (`None` for trace arrivals); requests of a closed loop.
    pub sizes: Option<Sizes>,
    /// Responses of a closed loop.
    pub response: Option<Sizes>,
    /// Transactions (closed loop) finished.
    pub transactions: u64,
    /// Their durations, ns.
    txn: Histogram,
    /// First arrival at or after.
    pub start: Time,
    /// No arrival at or after.
    pub stop: Time,
    /// Size-bucket edges, bytes.
    pub edges: Vec<u64>,
    /// The application's rate cap and on/off periods, if paced.
    pub app: Option<crate::net::app::AppShape>,
    /// A load target (load, link direction), resolved into the rate when
    /// the network is built.
    pub load: Option<(f64, String)>,
    /// Persistent connections: the most open at once per pair (`None`: a
    /// new connection per flow).
    pub persistent: Option<u32>,
    gaps: Rng,
    draws: Rng,
    picks: Rng,
    /// Arrivals scheduled so far (the index of the next one).
    k: u64,
    /// Arrivals that became flows.
    pub arrivals: u64,
    /// Arrivals refused because [`crate::net::limits::MAX_FLOWS`] flows were alive.
    pub rejected: u64,
    /// Bytes the arrivals asked for.
    pub offered_bytes: u64,
    /// Flows whose last byte reached the receiver.
    pub completed: u64,
    /// Handshake segments (SYN, SYN-ACK) of its flows dropped in the network.
    pub handshake_drops: u64,
    /// Per bucket (index 0: all flows), FCT (ns) and slowdown (×10⁶).
    hists: Vec<(Histogram, Histogram)>,
}

impl Source {
    /// A workload named `name` drawing from streams of run seed `seed`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        seed: u64,
        tcp: TcpConfig,
        pairs: Vec<u32>,
        weights: Option<&[f64]>,
        process: Process,
        sizes: Option<Sizes>,
        (start, stop): (Time, Time),
        edges: Vec<u64>,
    ) -> Source {
        let cum = weights.map(|w| {
            let total: f64 = w.iter().sum();
            let mut acc = 0.0;
            let mut c: Vec<f64> = w
                .iter()
                .map(|x| {
                    acc += x / total;
                    acc
                })
                .collect();
            if let Some(l) = c.last_mut() {
                *l = 1.0;
            }
            c
        });
        let stream = |part: &str| Rng::stream(seed, &format!("workload:{name}:{part}"));
        Source {
            gaps: stream("arrivals"),
            draws: stream("sizes"),
            picks: stream("pairs"),
            hists: vec![(Histogram::new(), Histogram::new()); edges.len() + 2],
            name,
            tcp: tcp.into(),
            pairs,
            cum,
            process,
            sizes,
            start,
            stop,
            edges,
            load: None,
            persistent: None,
            app: None,
            response: None,
            transactions: 0,
            txn: Histogram::new(),
            k: 0,
            arrivals: 0,
            rejected: 0,
            handshake_drops: 0,
            offered_bytes: 0,
            completed: 0,
        }
    }

    /// The mean flow size, bytes.
    pub fn mean_size(&self) -> f64 {
        match (&self.sizes, &self.process) {
            (Some(s), _) => s.mean(),
            (None, Process::Trace(t)) => {
                t.iter().map(|x| x.1 as f64).sum::<f64>() / t.len().max(1) as f64
            }
            (None, _) => 0.0,
        }
    }

    /// Arrivals per second (the trace's count over its span for a trace).
    pub fn rate(&self) -> Option<f64> {
        match &self.process {
            Process::Poisson(r) | Process::Deterministic(r) => Some(*r),
            Process::Trace(_) | Process::Closed(_) => None,
        }
    }

    /// A request size (closed loop).
    pub fn draw_request(&mut self) -> u64 {
        self.sizes
            .as_ref()
            .map_or(1, |s| s.sample(self.draws.uniform(), self.draws.uniform()))
    }

    /// A response size (closed loop), if the loop has responses.
    pub fn draw_response(&mut self) -> Option<u64> {
        let s = self.response.as_ref()?;
        Some(s.sample(self.draws.uniform(), self.draws.uniform()))
    }

    /// Count a finished transaction of duration `d`.
    pub fn transaction(&mut self, d: Time) {
        self.transactions += 1;
        self.txn.record(d.0);
    }

    /// Set the arrival rate (a load target resolved against its link).
    pub fn set_rate(&mut self, rate: f64) {
        match &mut self.process {
            Process::Poisson(r) | Process::Deterministic(r) => *r = rate,
            Process::Trace(_) | Process::Closed(_) => {}
        }
    }

    /// The time of the next arrival after one at `prev` (the first if
    /// `None`), or `None` when no more come before `stop`.
    pub fn next_time(&mut self, prev: Option<Time>) -> Option<Time> {
        if self.k >= super::MAX_ARRIVALS {
            return None;
        }
        let t = match &self.process {
            Process::Poisson(r) => {
                let u = self.gaps.uniform();
                let gap = -(1.0 - u).ln() / r;
                prev.unwrap_or(self.start) + Time::from_secs_f64(gap)
            }
            Process::Deterministic(r) => self.start + Time::from_secs_f64(self.k as f64 / r),
            Process::Trace(t) => self.start + t.get(self.k as usize)?.0,
            Process::Closed(_) => return None,
        };
        (t < self.stop).then(|| {
            self.k += 1;
            t
        })
    }

    /// The pair (index into [`Plan::pairs`]) and size of the arrival just
    /// scheduled by [`Source::next_time`].
    pub fn draw(&mut self) -> (u32, u64) {
        let i = match &self.cum {
            None if self.pairs.len() == 1 => 0,
            None => ((self.picks.uniform() * self.pairs.len() as f64) as usize)
                .min(self.pairs.len() - 1),
            Some(c) => {
                let u = self.picks.uniform();
                c.partition_point(|&x| x <= u).min(c.len() - 1)
            }
        };
        let size = match (&self.sizes, &self.process) {
            (Some(s), _) => s.sample(self.draws.uniform(), self.draws.uniform()),
            (None, Process::Trace(t)) => t[(self.k - 1) as usize].1,
            (None, _) => 1,
        };
        (self.pairs[i], size)
    }

    /// The bucket of a flow of `bytes` (1-based; 0 is all flows).
    fn bucket(&self, bytes: u64) -> usize {
        1 + self.edges.partition_point(|&e| e < bytes)
    }

    /// Count a finished flow.
    fn measure(&mut self, bytes: u64, fct: Time, ideal: Option<Time>) {
        self.completed += 1;
        let b = self.bucket(bytes);
        for i in [0, b] {
            self.hists[i].0.record(fct.0);
            if let Some(id) = ideal.filter(|t| t.0 > 0) {
                self.hists[i]
                    .1
                    .record((fct.0 as f64 / id.0 as f64 * 1e6).round() as u64);
            }
        }
    }
}

/// A flow of a workload, carried by its flow slot while alive.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    /// The workload (index).
    pub workload: u32,
    /// Serial number of the flow among all the run's workload flows.
    pub serial: u64,
    /// Index into [`Plan::pairs`].
    pub pair: u32,
    /// Bytes to deliver.
    pub size: u64,
    /// When the connection started.
    pub start: Time,
    /// When the last byte reached the receiver.
    pub delivered_at: Option<Time>,
    /// The closed-loop client it serves ([`Job::NO_CLIENT`]: none).
    pub client: u32,
    /// 0: a request (or an open-loop flow), 1: a response.
    pub stage: u8,
    /// On a persistent connection: the bytes its connection carried before
    /// this flow (the flow is the stream's bytes `base .. base + size`); 0
    /// on a new connection.
    pub base: u64,
    /// Carried by a persistent connection (measured when its last byte is
    /// acknowledged; the slot is not freed).
    pub persistent: bool,
    /// The connection's sender counters (retransmits, timeouts) when the
    /// flow started on it (0 on a new connection).
    pub counts0: (u64, u64),
    /// The marker an idle persistent connection's slot carries (no flow).
    pub idle: bool,
}

impl Job {
    /// [`Job::client`] of a flow that serves no client.
    pub const NO_CLIENT: u32 = u32::MAX;

    /// The stream offset just past the flow's last byte.
    pub fn end(&self) -> u64 {
        self.base + self.size
    }
}

/// The persistent connections of one (workload, pair).
#[derive(Debug, Default)]
pub struct Pool {
    /// Connections open (flow slots), idle or busy.
    pub open: u32,
    /// Idle connections: (slot, bytes the connection carried so far).
    pub idle: Vec<(u32, u64)>,
    /// Flows waiting for a connection, in arrival order.
    pub waiting: std::collections::VecDeque<Job>,
}

/// A finished (or, at the end, unfinished) workload flow: one row of the
/// `fct` table.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// The flow.
    pub job: Job,
    /// Completion time of the same size alone on the empty path.
    pub ideal: Option<Time>,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Handshake segments (SYN, SYN-ACK) of the flow's connection dropped
    /// in the network (0 for a later flow of a persistent connection).
    pub handshake_drops: u64,
}

/// Builds the empty-path run of one workload's TCP (by index) between one
/// pair (an index into [`Plan::pairs`]): a
/// single greedy flow starting at 0 on fresh links of the same scenario and
/// seed (`None` if it cannot be built).
pub type BaselineFactory = Box<dyn Fn(u32, u32) -> Option<Simulation> + Send>;

/// The empty-path run of one (workload, pair): a greedy flow alone, stepped
/// only as far as the largest size asked about, and the times its receiver
/// got each in-order byte count.
pub struct Baseline {
    sim: Option<Box<Simulation>>,
    curve: Vec<(u64, Time)>,
    horizon: Time,
}

impl Baseline {
    /// A baseline over `sim` (if built), given up at `horizon`.
    pub fn new(sim: Option<Simulation>, horizon: Time) -> Baseline {
        Baseline {
            sim: sim.map(Box::new),
            curve: Vec::new(),
            horizon,
        }
    }

    /// The time the flow alone had delivered `bytes` in order: the
    /// completion time of a flow of `bytes` on the empty path (the greedy
    /// flow's segment holding the last byte is a full one, so for a size not
    /// a multiple of the segment this is later than the exact value by at
    /// most the unused part of a segment's serialisation per hop).
    pub fn ideal(&mut self, bytes: u64) -> Option<Time> {
        loop {
            let i = self.curve.partition_point(|c| c.0 < bytes);
            if let Some(c) = self.curve.get(i) {
                return Some(c.1);
            }
            let sim = self.sim.as_mut()?;
            let reached = sim.run_for(self.horizon, 1);
            let d = sim.flow_delivered(0);
            if d > self.curve.last().map_or(0, |c| c.0) {
                self.curve.push((d, sim.now()));
            }
            if reached {
                self.sim = None;
            }
        }
    }
}

/// Every workload of a run while it runs.
pub struct Plan {
    /// The workloads.
    pub sources: Vec<Source>,
    /// Every (sender, receiver) pair any workload uses; the route of pair k
    /// follows the `[[flows]]`' routes.
    pub pairs: Vec<(NodeId, NodeId)>,
    /// Builds empty-path runs.
    pub factory: Option<BaselineFactory>,
    /// Empty-path runs by (workload, pair).
    pub baselines: BTreeMap<(u32, u32), Baseline>,
    /// Records not yet taken.
    pub records: Vec<Record>,
    /// Flows alive now, and at most.
    pub alive: usize,
    /// The largest `alive`.
    pub peak_alive: usize,
    /// Workload flows started.
    pub serial: u64,
    /// Whether the flows alive at the end were recorded.
    pub closed: bool,
    /// How far an empty-path run may go.
    pub horizon: Time,
    /// Closed-loop clients of every workload.
    pub clients: Vec<Client>,
    /// Persistent connections by (workload, pair).
    pub pools: BTreeMap<(u32, u32), Pool>,
    /// Flows waiting for a persistent connection, over every pool.
    pub waiting: usize,
}

impl Plan {
    /// Measure the flow `job` that ended with these counters.
    pub fn finish(&mut self, job: Job, retransmits: u64, timeouts: u64, handshake_drops: u64) {
        let ideal = match job.delivered_at {
            Some(at) => {
                let fct = at.saturating_sub(job.start);
                let ideal = self.ideal(job.workload, job.pair, job.size);
                self.sources[job.workload as usize].measure(job.size, fct, ideal);
                ideal
            }
            None => None,
        };
        self.sources[job.workload as usize].handshake_drops += handshake_drops;
        self.records.push(Record {
            job,
            ideal,
            retransmits,
            timeouts,
            handshake_drops,
        });
    }

    fn ideal(&mut self, w: u32, pair: u32, bytes: u64) -> Option<Time> {
        let horizon = self.horizon;
        let factory = self.factory.as_ref();
        self.baselines
            .entry((w, pair))
            .or_insert_with(|| Baseline::new(factory.and_then(|f| f(w, pair)), horizon))
            .ideal(bytes)
    }

    /// The summary.
    pub fn summary(&self, slots: usize) -> WorkloadsSummary {
        WorkloadsSummary {
            peak_alive: self.peak_alive as u64,
            slots: slots as u64,
            flows_started: self.serial,
            workloads: self
                .sources
                .iter()
                .map(|s| {
                    let mut lo = 0;
                    let buckets = (0..=s.edges.len())
                        .map(|i| {
                            let hi = s.edges.get(i).copied();
                            let (f, sd) = &s.hists[i + 1];
                            let out = BucketSummary {
                                above_bytes: lo,
                                upto_bytes: hi,
                                fct_s: Quantiles::of(f, 1e-9),
                                slowdown: Quantiles::of(sd, 1e-6),
                            };
                            lo = hi.unwrap_or(0);
                            out
                        })
                        .collect();
                    WorkloadSummary {
                        name: s.name.clone(),
                        arrivals: s.arrivals,
                        rejected: s.rejected,
                        completed: s.completed,
                        unfinished: s.arrivals - s.completed,
                        handshake_drops: s.handshake_drops,
                        offered_bytes: s.offered_bytes,
                        mean_size_bytes: s.mean_size(),
                        rate_per_s: s.rate(),
                        transactions: s.transactions,
                        transaction_s: Quantiles::of(&s.txn, 1e-9),
                        fct_s: Quantiles::of(&s.hists[0].0, 1e-9),
                        slowdown: Quantiles::of(&s.hists[0].1, 1e-6),
                        buckets,
                    }
                })
                .collect(),
        }
    }
}

/// Count, mean and quantiles of a set of values (`null` when empty).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Quantiles {
    /// Values.
    pub count: u64,
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
}

impl Quantiles {
    fn of(h: &Histogram, unit: f64) -> Quantiles {
        if h.count() == 0 {
            return Quantiles::default();
        }
        let q = |x: f64| Some(h.quantile(x) as f64 * unit);
        Quantiles {
            count: h.count(),
            mean: Some(h.mean() * unit),
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            max: Some(h.max() as f64 * unit),
        }
    }
}

/// The summary's `workloads` object (docs/metrics.md).
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadsSummary {
    /// Most workload flows alive at once.
    pub peak_alive: u64,
    /// Flow slots the run allocated for them (reused as flows finish).
    pub slots: u64,
    /// Workload flows started.
    pub flows_started: u64,
    /// One entry per `[[workloads]]` entry.
    pub workloads: Vec<WorkloadSummary>,
}

/// One workload's completion times.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSummary {
    /// Name.
    pub name: String,
    /// Flows started.
    pub arrivals: u64,
    /// Arrivals refused: the network had its most flows alive.
    pub rejected: u64,
    /// Flows whose last byte reached the receiver.
    pub completed: u64,
    /// Flows not complete at the end.
    pub unfinished: u64,
    /// Handshake segments (SYN, SYN-ACK) of its flows dropped in the network
    /// (the sum of the `fct` table's `handshake_drops`).
    pub handshake_drops: u64,
    /// Bytes the started flows asked for.
    pub offered_bytes: u64,
    /// Mean of the size distribution, bytes.
    pub mean_size_bytes: f64,
    /// Arrivals per second (`null` for a trace or a closed loop).
    pub rate_per_s: Option<f64>,
    /// Closed loop: transactions finished (a request and its response, or
    /// a page of objects).
    pub transactions: u64,
    /// Closed loop: their durations (response time, page load time), seconds.
    pub transaction_s: Quantiles,
    /// Flow completion times of completed flows, seconds.
    pub fct_s: Quantiles,
    /// FCT over the same size's FCT alone on the empty path.
    pub slowdown: Quantiles,
    /// The same per size bucket.
    pub buckets: Vec<BucketSummary>,
}

/// Completion times of the flows of one size bucket.
#[derive(Clone, Debug, Serialize)]
pub struct BucketSummary {
    /// Sizes above this, bytes.
    pub above_bytes: u64,
    /// Up to this, bytes (`null`: no bound).
    pub upto_bytes: Option<u64>,
    /// Flow completion times, seconds.
    pub fct_s: Quantiles,
    /// Slowdowns.
    pub slowdown: Quantiles,
}

//! Workload flows (`[[workloads]]`): created as they arrive, in the slot of
//! a finished one when there is one, and retired — measured, recorded and
//! their slot freed — once nothing of them is left in the network.

use super::{account, FlowMetrics, FlowSlot, FlowSpec, Simulation, Target};
use crate::metrics::{Column, Table};
use crate::packet::FlowId;
use crate::tcp::{App, TcpReceiver, TcpSender};
use crate::time::Time;
use crate::workload::{Job, WorkloadsSummary};

impl Simulation {
    /// Workload `w`'s next flow arrives now.
    pub(super) fn arrival(&mut self, w: usize, now: Time) {
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        let src = &mut plan.sources[w];
        let (pair, size) = src.draw();
        if let Some(t) = src.next_time(Some(now)) {
            self.queue.push(t, Target::Arrival(w as u32));
        }
        self.spawn(w, pair, size, now, Job::NO_CLIENT, 0);
    }

    /// Closed-loop client `c` starts a transaction: its first objects.
    pub(super) fn client_start(&mut self, c: usize, now: Time) {
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        let cl = &mut plan.clients[c];
        let crate::workload::Process::Closed(k) = plan.sources[cl.workload as usize].process else {
            return;
        };
        cl.started = now;
        cl.to_start = k.objects;
        cl.done = 0;
        for _ in 0..k.parallel.min(k.objects) {
            self.client_object(c, now);
        }
    }

    /// Client `c` requests its next object.
    fn client_object(&mut self, c: usize, now: Time) {
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        let cl = &mut plan.clients[c];
        cl.to_start -= 1;
        let (w, pair) = (cl.workload as usize, cl.pair);
        let size = plan.sources[w].draw_request();
        if !self.spawn(w, pair, size, now, c as u32, 0) {
            self.client_object_done(c, now);
        }
    }

    /// A request or response of a client was delivered.
    pub(super) fn stage_done(&mut self, job: Job, now: Time) {
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        let c = job.client as usize;
        let (w, back) = (plan.clients[c].workload as usize, plan.clients[c].back);
        if job.stage == 0 {
            if let Some(size) = plan.sources[w].draw_response() {
                if self.spawn(w, back, size, now, job.client, 1) {
                    return;
                }
            }
        }
        self.client_object_done(c, now);
    }

    /// One object of client `c`'s transaction is done: the next one, or the
    /// end of the transaction and the think time before the next.
    fn client_object_done(&mut self, c: usize, now: Time) {
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        let cl = &mut plan.clients[c];
        cl.done += 1;
        if cl.to_start > 0 {
            self.client_object(c, now);
            return;
        }
        let w = cl.workload as usize;
        let crate::workload::Process::Closed(k) = plan.sources[w].process else {
            return;
        };
        if cl.done < k.objects {
            return;
        }
        let took = now.saturating_sub(cl.started);
        let think = if k.exponential {
            -(1.0 - cl.rng.uniform()).ln() * k.think.as_secs_f64()
        } else {
            k.think.as_secs_f64()
        };
        let next = now + Time::from_secs_f64(think);
        let src = &mut plan.sources[w];
        src.transaction(took);
        if next < src.stop {
            self.queue.push(next, Target::Client(c as u32));
        }
    }

    /// Start a flow of workload `w` on pair `pair` of `size` bytes now
    /// (serving `client`'s `stage`); false if refused (too many alive).
    fn spawn(&mut self, w: usize, pair: u32, size: u64, now: Time, client: u32, stage: u8) -> bool {
        let Some(plan) = self.work.as_mut() else {
            return false;
        };
        let job = Job {
            workload: w as u32,
            serial: plan.serial,
            pair,
            size,
            start: now,
            delivered_at: None,
            client,
            stage,
            base: 0,
            persistent: false,
            counts0: (0, 0),
            idle: false,
        };
        if let Some(bound) = plan.sources[w].persistent {
            return self.request(
                Job {
                    persistent: true,
                    ..job
                },
                bound,
                now,
            );
        }
        let src = &mut plan.sources[w];
        if plan.alive >= super::limits::MAX_FLOWS {
            src.rejected += 1;
            return false;
        }
        src.arrivals += 1;
        src.offered_bytes += size;
        plan.serial += 1;
        let f = self.open_slot(job, true, now);
        if let Some(shape) = self.work.as_ref().and_then(|p| p.sources[w].app) {
            let rng = self.app_rng(f);
            let mss = u64::from(self.flows[f].spec.tcp.mss);
            self.flows[f].pacer = Some(Box::new(super::app::Pacer::new(
                shape,
                Some(size),
                mss,
                rng,
                now,
            )));
            self.app_tick(f, now);
        }
        self.flush_sender(f, now);
        true
    }

    /// A flow of a persistent workload (pool bound `bound` per pair)
    /// arrives: on an idle connection of its pool, on a new one if the pool
    /// has fewer than `bound` open, else it waits for the first to become
    /// idle. False if refused (too many alive or waiting).
    fn request(&mut self, job: Job, bound: u32, now: Time) -> bool {
        let Some(plan) = self.work.as_mut() else {
            return false;
        };
        let pool = plan.pools.entry((job.workload, job.pair)).or_default();
        let idle = pool.idle.pop();
        let open = idle.is_none() && pool.open < bound && plan.alive < super::limits::MAX_FLOWS;
        let wait = idle.is_none() && !open;
        let src = &mut plan.sources[job.workload as usize];
        if wait && (pool.open == 0 || plan.waiting >= super::limits::MAX_FLOWS) {
            src.rejected += 1;
            return false;
        }
        src.arrivals += 1;
        src.offered_bytes += job.size;
        plan.serial += 1;
        if wait {
            pool.waiting.push_back(job);
            plan.waiting += 1;
            return true;
        }
        let (f, carried) = match idle {
            Some((f, carried)) => (f as usize, carried),
            None => {
                pool.open += 1;
                // The response side of a client's connection is open once
                // the request has arrived: no handshake of its own.
                (self.open_slot(job, job.stage == 0, now), 0)
            }
        };
        self.assign(f, job, carried, now);
        true
    }

    /// Persistent connection `f`, which carried `carried` bytes so far,
    /// takes flow `job`: its application offers the flow's bytes after them.
    fn assign(&mut self, f: usize, mut job: Job, carried: u64, now: Time) {
        let st = self.flows[f].sender.stats();
        job.base = carried;
        job.counts0 = (st.retransmits, st.timeouts);
        let slot = &mut self.flows[f];
        slot.job = Some(job);
        slot.sender.offer(now, job.end(), true);
        self.flush_sender(f, now);
    }

    /// A flow slot for `job` (a free one if any), its sender started now
    /// (with the handshake of the workload's TCP if `handshake`, else none).
    fn open_slot(&mut self, job: Job, handshake: bool, now: Time) -> usize {
        let plan = self.work.as_mut().expect("workloads");
        let src = &plan.sources[job.workload as usize];
        // The workload's configuration, shared; a response on a persistent
        // client connection (no handshake of its own) gets its own copy.
        let tcp = if handshake || !src.tcp.handshake {
            src.tcp.clone()
        } else {
            std::sync::Arc::new(crate::tcp::TcpConfig {
                handshake: false,
                ..(*src.tcp).clone()
            })
        };
        let name = format!("{}#{}", src.name, job.serial);
        plan.alive += 1;
        plan.peak_alive = plan.peak_alive.max(plan.alive);
        let (a, b) = plan.pairs[job.pair as usize];
        let route = 2 * (self.static_flows as u32 + job.pair);
        let f = match self.free.pop() {
            Some(f) => f as usize,
            None => {
                let f = self.flows.len();
                self.legs.push(Default::default());
                self.wake_senders.grow(f + 1);
                self.wake_receivers.grow(f + 1);
                self.route_of.push(route);
                f
            }
        };
        let bytes = App::Bytes(job.size);
        let slot = FlowSlot {
            sender: TcpSender::new(tcp.clone(), FlowId(f as u32), a, b, bytes),
            receiver: TcpReceiver::new(tcp.clone(), FlowId(f as u32), b, a),
            metrics: FlowMetrics::new(),
            job: Some(job),
            pacer: None,
            handshake_drops: 0,
            spec: FlowSpec {
                name,
                src: a,
                dst: b,
                tcp,
                app: bytes,
                start: now,
                stop: None,
            },
        };
        self.route_of[f] = route;
        if f == self.flows.len() {
            self.flows.push(slot);
        } else {
            self.flows[f] = slot;
        }
        self.flows[f].sender.start(now);
        f
    }

    /// The random stream of flow slot `f`'s application periods: by flow
    /// name, so a workload flow's periods do not depend on its slot.
    pub(super) fn app_rng(&self, f: usize) -> crate::rng::Rng {
        crate::rng::Rng::stream(self.seed, &format!("app:{}", self.flows[f].spec.name))
    }

    /// Flow `f`'s paced application catches up to `now` and offers its
    /// sender what it has; its next wake-up is scheduled.
    pub(super) fn app_tick(&mut self, f: usize, now: Time) {
        let slot = &mut self.flows[f];
        let Some(p) = slot.pacer.as_mut() else { return };
        let (limit, open, next) = p.advance(now, slot.sender.snd_max());
        slot.sender.offer(now, limit, open);
        if let Some(t) = next {
            self.queue.push(t, Target::App(f as u32));
        }
    }

    /// Retire workload flow `f` if it is done: its last byte delivered,
    /// every byte acknowledged, no timer set and none of its packets left
    /// in the network (so its slot can carry another flow without a stray
    /// packet reaching the new one).
    pub(super) fn maybe_retire(&mut self, f: usize) {
        let slot = &self.flows[f];
        let Some(job) = slot.job else { return };
        if job.persistent {
            self.maybe_idle(f);
            return;
        }
        if job.delivered_at.is_none()
            || slot.sender.stats().completed_at.is_none()
            || slot.sender.poll_timeout().is_some()
            || slot.receiver.poll_timeout().is_some()
            || self.in_flight(f) != 0
        {
            return;
        }
        let st = slot.sender.stats();
        let (rtx, rto) = (st.retransmits, st.timeouts);
        let hs = slot.handshake_drops;
        self.flows[f].job = None;
        self.free.push(f as u32);
        if let Some(plan) = self.work.as_mut() {
            plan.alive -= 1;
            plan.finish(job, rtx, rto, hs);
        }
    }

    /// Persistent connection `f` is done with its flow once the last byte
    /// is delivered and acknowledged (the sender knows the connection is
    /// free): the flow is measured, and the connection takes the pool's next
    /// waiting flow or becomes idle. Its slot is never freed.
    fn maybe_idle(&mut self, f: usize) {
        let slot = &self.flows[f];
        let Some(job) = slot.job else { return };
        if job.idle || job.delivered_at.is_none() || slot.sender.snd_una() < job.end() {
            return;
        }
        let st = slot.sender.stats();
        let counts = (st.retransmits - job.counts0.0, st.timeouts - job.counts0.1);
        let hs = slot.handshake_drops_of(&job);
        let now = self.now();
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        plan.finish(job, counts.0, counts.1, hs);
        let pool = plan.pools.entry((job.workload, job.pair)).or_default();
        match pool.waiting.pop_front() {
            Some(next) => {
                plan.waiting -= 1;
                self.assign(f, next, job.end(), now);
            }
            None => {
                pool.idle.push((f as u32, job.end()));
                self.flows[f].job = Some(Job { idle: true, ..job });
            }
        }
    }

    /// Packets of flow slot `f` inside the network: what its endpoints sent
    /// less what arrived or was dropped (a retired occupant left none, so
    /// the slot's running counts are the current flow's).
    fn in_flight(&self, f: usize) -> i64 {
        self.legs[f]
            .iter()
            .map(|l: &account::Leg| {
                let dropped: u64 = l.dropped.iter().map(|d| d.2).sum();
                l.sent as i64 - l.delivered as i64 - dropped as i64
            })
            .sum()
    }

    /// Bytes the receiver of flow slot `f` delivered in order.
    pub fn flow_delivered(&self, f: usize) -> u64 {
        self.flows.get(f).map_or(0, |s| s.receiver.delivered())
    }

    /// The time of the last event processed.
    pub fn now(&self) -> Time {
        self.queue.now()
    }

    /// Record the workload flows still alive (once, at the end of the run):
    /// those whose last byte arrived count as completed.
    pub(super) fn close_workloads(&mut self) {
        let Some(plan) = self.work.as_mut() else {
            return;
        };
        if plan.closed {
            return;
        }
        plan.closed = true;
        for slot in &self.flows[self.static_flows..] {
            if let Some(job) = slot.job.filter(|j| !j.idle) {
                let st = slot.sender.stats();
                plan.finish(
                    job,
                    st.retransmits - job.counts0.0,
                    st.timeouts - job.counts0.1,
                    slot.handshake_drops_of(&job),
                );
            }
        }
        // Flows still waiting for a persistent connection: unfinished.
        let waiting: Vec<Job> = plan
            .pools
            .values_mut()
            .flat_map(|p| std::mem::take(&mut p.waiting))
            .collect();
        plan.waiting = 0;
        for job in waiting {
            plan.finish(job, 0, 0, 0);
        }
    }

    /// The summary's `workloads` object.
    pub(super) fn workloads_summary(&mut self) -> Option<WorkloadsSummary> {
        self.close_workloads();
        let slots = self.flows.len() - self.static_flows;
        self.work.as_ref().map(|p| p.summary(slots))
    }

    /// The `fct` table of the workload flows recorded since the last call
    /// (`all`: the run is over, the flows alive are recorded too).
    pub(super) fn take_fct(&mut self, all: bool) -> Option<Table> {
        if all {
            self.close_workloads();
        }
        let plan = self.work.as_mut()?;
        let rows = std::mem::take(&mut plan.records);
        let nodes = &self.nodes;
        let name = |r: &crate::workload::Record, end: usize| {
            let (a, b) = plan.pairs[r.job.pair as usize];
            nodes[[a, b][end].0 as usize].clone()
        };
        let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let fct = |r: &crate::workload::Record| {
            r.job
                .delivered_at
                .map(|t| t.saturating_sub(r.job.start).as_secs_f64())
        };
        Some(Table {
            name: "fct".into(),
            columns: vec![
                (
                    "workload".into(),
                    Column::Str(
                        rows.iter()
                            .map(|r| plan.sources[r.job.workload as usize].name.clone())
                            .collect(),
                    ),
                ),
                (
                    "flow".into(),
                    Column::U64(rows.iter().map(|r| r.job.serial).collect()),
                ),
                (
                    "from".into(),
                    Column::Str(rows.iter().map(|r| name(r, 0)).collect()),
                ),
                (
                    "to".into(),
                    Column::Str(rows.iter().map(|r| name(r, 1)).collect()),
                ),
                (
                    "size_bytes".into(),
                    Column::U64(rows.iter().map(|r| r.job.size).collect()),
                ),
                (
                    "start_s".into(),
                    Column::F64(rows.iter().map(|r| r.job.start.as_secs_f64()).collect()),
                ),
                (
                    "fct_s".into(),
                    Column::F64(rows.iter().map(|r| opt(fct(r))).collect()),
                ),
                (
                    "ideal_s".into(),
                    Column::F64(
                        rows.iter()
                            .map(|r| opt(r.ideal.map(|t| t.as_secs_f64())))
                            .collect(),
                    ),
                ),
                (
                    "slowdown".into(),
                    Column::F64(
                        rows.iter()
                            .map(|r| match (fct(r), r.ideal) {
                                (Some(x), Some(i)) if i.0 > 0 => x / i.as_secs_f64(),
                                _ => f64::NAN,
                            })
                            .collect(),
                    ),
                ),
                (
                    "retransmits".into(),
                    Column::U64(rows.iter().map(|r| r.retransmits).collect()),
                ),
                (
                    "timeouts".into(),
                    Column::U64(rows.iter().map(|r| r.timeouts).collect()),
                ),
                (
                    "handshake_drops".into(),
                    Column::U64(rows.iter().map(|r| r.handshake_drops).collect()),
                ),
            ],
        })
    }
}

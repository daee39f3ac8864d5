//! End-of-run summary and trace tables of a [`Simulation`].

use serde_json::{json, Value};

use super::Simulation;
use crate::api::{Column, Table};
use crate::link::{ArqStats, Dir};
use crate::metrics::histogram::Histogram;
use crate::packet::FlowId;
use crate::time::Time;

fn bps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// Percentage `part / whole` (0 when `whole` is 0).
fn pct(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

fn delay_fields(h: &Histogram) -> [(&'static str, Value); 4] {
    let s = |ns: u64| ns as f64 * 1e-9;
    if h.count() == 0 {
        return [
            ("delay_mean_s", Value::Null),
            ("delay_p50_s", Value::Null),
            ("delay_p95_s", Value::Null),
            ("delay_max_s", Value::Null),
        ];
    }
    [
        ("delay_mean_s", json!(h.mean() * 1e-9)),
        ("delay_p50_s", json!(s(h.quantile(0.5)))),
        ("delay_p95_s", json!(s(h.quantile(0.95)))),
        ("delay_max_s", json!(s(h.max()))),
    ]
}

/// The ARQ fields of a link direction's summary object.
fn arq_fields(a: &ArqStats) -> serde_json::Map<String, Value> {
    let mut o = serde_json::Map::new();
    o.insert("sdus_acked".into(), json!(a.sdus_acked));
    o.insert("sdus_discarded".into(), json!(a.sdus_discarded));
    o.insert("residual_sdu_loss".into(), json!(a.residual_sdu_loss()));
    o.insert("efficiency".into(), json!(a.efficiency()));
    o.insert("max_dat".into(), json!(a.max_dat));
    o.insert("max_dat_mean".into(), json!(a.max_dat_mean));
    o.insert(
        "max_dat_unlimited_fraction".into(),
        json!(a.max_dat_unlimited_fraction),
    );
    o.insert("max_dat_changes".into(), json!(a.max_dat_changes));
    o.insert("p_ll".into(), json!(a.p_ll));
    o.insert("p_tcp".into(), json!(a.p_tcp));
    o.insert("target".into(), json!(a.target));
    o
}

impl Simulation {
    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    /// The simulated time the run has reached.
    pub fn sim_time(&self) -> Time {
        self.end
    }

    /// Close the books and build the summary (see `docs/metrics.md`).
    pub fn summary(&mut self) -> Value {
        let end = self.end;
        let secs = end.as_secs_f64();
        for l in &mut self.links {
            for d in Dir::BOTH {
                l.model.occupancy_mut(d).finish(end);
            }
        }
        let mut all = Histogram::new();
        let (mut delivered, mut timeouts, mut frs, mut rtx) = (0u64, 0u64, 0u64, 0u64);
        let mut episodes = 0u64;
        let (mut wire, mut payload, mut pro, mut rea, mut rebuilt) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut lt_any = false;
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let st = f.sender.stats();
            let d = f.receiver.delivered();
            delivered += d;
            timeouts += st.timeouts;
            episodes += st.timeout_episodes;
            frs += st.fast_retransmits;
            rtx += st.retransmits;
            all.merge(&f.metrics.delay);
            let mut o = serde_json::Map::new();
            o.insert("id".into(), json!(i));
            o.insert("name".into(), json!(f.spec.name));
            o.insert("from".into(), json!(self.nodes[f.spec.src.0 as usize]));
            o.insert("to".into(), json!(self.nodes[f.spec.dst.0 as usize]));
            o.insert("goodput_bps".into(), json!(bps(d, secs)));
            for (k, v) in delay_fields(&f.metrics.delay) {
                o.insert(k.into(), v);
            }
            o.insert("timeouts".into(), json!(st.timeouts));
            o.insert("timeout_episodes".into(), json!(st.timeout_episodes));
            o.insert("fast_retransmits".into(), json!(st.fast_retransmits));
            o.insert("retransmits".into(), json!(st.retransmits));
            o.insert("ecn_reductions".into(), json!(st.ecn_reductions));
            o.insert("segments_sent".into(), json!(st.segments_sent));
            o.insert("delivered_bytes".into(), json!(d));
            o.insert("throughput_bps".into(), json!(bps(st.wire_bytes, secs)));
            wire += st.wire_bytes;
            let sent = st.bytes_sent + st.repair_bytes_proactive + st.repair_bytes_reactive;
            payload += sent;
            if f.sender.lt_config().any() {
                lt_any = true;
                let rs = f.receiver.stats();
                pro += st.repair_bytes_proactive;
                rea += st.repair_bytes_reactive;
                rebuilt += rs.blocks_rebuilt;
                o.insert(
                    "lt".into(),
                    json!({
                        "fec_blocks": st.fec_blocks,
                        "repairs_proactive": st.repairs_proactive,
                        "repairs_reactive": st.repairs_reactive,
                        "proactive_overhead_pct": pct(st.repair_bytes_proactive, sent),
                        "reactive_overhead_pct": pct(st.repair_bytes_reactive, sent),
                        "blocks_rebuilt": rs.blocks_rebuilt,
                        "bytes_rebuilt": rs.bytes_rebuilt,
                        "repairs_received": rs.repairs_received,
                        "loss_responses_skipped": st.loss_responses_skipped,
                        "erasure_estimate": f.sender.erasure_estimate(),
                        "mss": f.sender.mss(),
                    }),
                );
            }
            o.insert(
                "completed_s".into(),
                st.completed_at
                    .map_or(Value::Null, |t| json!(t.as_secs_f64())),
            );
            flows.push(Value::Object(o));
        }
        let mut agg = serde_json::Map::new();
        agg.insert("goodput_bps".into(), json!(bps(delivered, secs)));
        for (k, v) in delay_fields(&all) {
            agg.insert(k.into(), v);
        }
        agg.insert("timeouts".into(), json!(timeouts));
        agg.insert("timeout_episodes".into(), json!(episodes));
        agg.insert("fast_retransmits".into(), json!(frs));
        agg.insert("retransmits".into(), json!(rtx));
        agg.insert("delivered_bytes".into(), json!(delivered));
        agg.insert("throughput_bps".into(), json!(bps(wire, secs)));
        if lt_any {
            agg.insert(
                "lt".into(),
                json!({
                    "proactive_overhead_pct": pct(pro, payload),
                    "reactive_overhead_pct": pct(rea, payload),
                    "blocks_rebuilt": rebuilt,
                }),
            );
        }

        let mut links = Vec::new();
        let mut queues = Vec::new();
        for l in &self.links {
            for d in Dir::BOTH {
                let name = &l.names[d.index()];
                let s = l.model.stats(d);
                let mut entry = json!({
                    "name": name,
                    "rate_bps": l.model.rate_bps(d),
                    "throughput_bps": bps(s.tx_bytes, secs),
                    "tx_packets": s.tx_packets,
                    "tx_bytes": s.tx_bytes,
                    "rx_packets": s.rx_packets,
                    "lost": s.lost,
                });
                if let Some(f) = &s.fec {
                    entry["fec"] = json!({
                        "fragments_sent": f.fragments_sent,
                        "repair_fragments_sent": f.repair_fragments_sent,
                        "fragments_erased": f.fragments_erased,
                        "overhead": f.overhead(),
                        "retransmissions": f.retransmissions,
                        "recovered_by_fec": f.recovered_by_fec,
                        "recovered_by_arq": f.recovered_by_arq,
                        "lost_after_persistence": f.lost_after_persistence,
                    });
                }
                if let Some(a) = l.model.arq_stats(d, end) {
                    let mut o: serde_json::Map<String, Value> = a
                        .counters
                        .iter()
                        .map(|&(k, v)| (k.to_string(), json!(v)))
                        .collect();
                    o.extend(arq_fields(&a));
                    entry[a.protocol] = Value::Object(o);
                }
                links.push(entry);
                let qs = l.model.occupancy(d).stats();
                let mean = |area: u128| {
                    if end.0 > 0 {
                        area as f64 / end.0 as f64
                    } else {
                        0.0
                    }
                };
                queues.push(json!({
                    "link": name,
                    "kind": l.model.queue_kind(d),
                    "arrivals": qs.arrivals,
                    "drops": {
                        "overflow": qs.drops_overflow,
                        "aqm_early": qs.drops_aqm_early,
                        "aqm_forced": qs.drops_aqm_forced,
                        "link_arq": qs.drops_link_arq,
                    },
                    "ecn_marks": qs.ecn_marks,
                    "mean_packets": mean(qs.area_packets),
                    "mean_bytes": mean(qs.area_bytes),
                    "max_packets": qs.max_packets,
                }));
            }
        }
        json!({
            "sim_time_s": secs,
            "events": self.events(),
            "aggregate": Value::Object(agg),
            "flows": flows,
            "links": links,
            "queues": queues,
        })
    }

    /// Trace tables of everything recorded since the last take or drain
    /// (empty unless traces were enabled; then always the same tables,
    /// possibly without rows). Call it at the end of a run.
    ///
    /// Every table is in time order; rows of one instant are in flow (or link
    /// direction) order, then recording order.
    pub fn take_traces(&mut self) -> Vec<Table> {
        self.traces(true)
    }

    /// Like [`Simulation::take_traces`], between two slices of
    /// [`Simulation::run_for`]: recording goes on, and rows that a later one
    /// could still precede are kept for the next call — links update lazily
    /// and may record a queue change a little in the past. The pieces of
    /// successive drains and the final take join into exactly the tables one
    /// take at the end gives.
    pub fn drain_traces(&mut self) -> Vec<Table> {
        self.traces(false)
    }

    fn traces(&mut self, all: bool) -> Vec<Table> {
        let Some(mut traces) = self.traces.take() else {
            return Vec::new();
        };
        let lt_any = self.flows.iter().any(|f| f.sender.lt_config().any());
        let (mut cwnd, mut sent, mut erasure, mut blocks) = (vec![], vec![], vec![], vec![]);
        for (i, f) in self.flows.iter_mut().enumerate() {
            let id = i as u64;
            cwnd.extend(
                f.sender
                    .take_cwnd_trace()
                    .into_iter()
                    .map(|(t, c, s)| (t, id, c, s)),
            );
            sent.extend(
                f.sender
                    .take_sent_trace()
                    .into_iter()
                    .map(|(t, seq, _rtx)| (FlowId(i as u32), t, seq)),
            );
            erasure.extend(
                f.sender
                    .take_erasure_trace()
                    .into_iter()
                    .map(|(t, l, e)| (t, id, l, e)),
            );
            blocks.extend(f.sender.take_mss_trace().into_iter().map(|r| (r.0, id, r)));
        }
        let mut queue = std::mem::take(&mut self.held_queue_rows);
        let fresh = queue.len();
        for (li, l) in self.links.iter_mut().enumerate() {
            for d in Dir::BOTH {
                let at = 2 * li + d.index();
                queue.extend(
                    l.model
                        .occupancy_mut(d)
                        .take_trace()
                        .into_iter()
                        .map(|(t, p, b)| (t, at, p, b)),
                );
            }
        }
        debug_assert!(
            queue[fresh..].iter().all(|r| r.0 >= self.queue_rows_final),
            "a link recorded a queue change before a time it had been brought up to"
        );
        // Stable sorts: ties stay in flow (link direction) order, then recording order.
        cwnd.sort_by_key(|r| r.0);
        erasure.sort_by_key(|r| r.0);
        blocks.sort_by_key(|r| r.0);
        queue.sort_by_key(|r| (r.0, r.1));
        if !all {
            // Later queue rows come from a link holding packets, at or after
            // the last time it was serviced.
            let mut horizon = self.queue.now();
            for (l, t) in self.links.iter().zip(&self.touched) {
                if l.model.in_transit() > 0 {
                    horizon = horizon.min(*t);
                }
            }
            let done = queue.partition_point(|r| r.0 < horizon);
            self.held_queue_rows = queue.split_off(done);
            self.queue_rows_final = horizon;
        }
        let secs = |t: &Time| t.as_secs_f64();
        let mut tables = vec![
            Table {
                name: "cwnd".into(),
                columns: vec![
                    (
                        "flow".into(),
                        Column::U64(cwnd.iter().map(|r| r.1).collect()),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(cwnd.iter().map(|r| secs(&r.0)).collect()),
                    ),
                    (
                        "cwnd_bytes".into(),
                        Column::U64(cwnd.iter().map(|r| r.2).collect()),
                    ),
                    (
                        "ssthresh_bytes".into(),
                        Column::U64(cwnd.iter().map(|r| r.3).collect()),
                    ),
                ],
            },
            Table {
                name: "queue".into(),
                columns: vec![
                    (
                        "link".into(),
                        Column::Str(
                            queue
                                .iter()
                                .map(|r| self.links[r.1 / 2].names[r.1 % 2].clone())
                                .collect(),
                        ),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(queue.iter().map(|r| secs(&r.0)).collect()),
                    ),
                    (
                        "packets".into(),
                        Column::U64(queue.iter().map(|r| u64::from(r.2)).collect()),
                    ),
                    (
                        "bytes".into(),
                        Column::U64(queue.iter().map(|r| r.3).collect()),
                    ),
                ],
            },
            traces.take_table(sent),
        ];
        self.traces = Some(traces);
        // Only runs with a cross-layer feed have MaxDAT changes to trace.
        if !self.feeds.is_empty() {
            let arq = std::mem::take(&mut self.arq_trace);
            let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
            tables.push(Table {
                name: "arq".into(),
                columns: vec![
                    (
                        "link".into(),
                        Column::Str(arq.iter().map(|a| a.link.clone()).collect()),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(arq.iter().map(|a| secs(&a.t)).collect()),
                    ),
                    (
                        "max_dat".into(),
                        Column::U64(arq.iter().map(|a| a.max_dat.map_or(0, u64::from)).collect()),
                    ),
                    (
                        "p_tcp".into(),
                        Column::F64(arq.iter().map(|a| a.p_tcp).collect()),
                    ),
                    (
                        "p_ll".into(),
                        Column::F64(arq.iter().map(|a| opt(a.p_ll)).collect()),
                    ),
                    (
                        "target".into(),
                        Column::F64(arq.iter().map(|a| opt(a.target)).collect()),
                    ),
                ],
            });
        }
        if lt_any {
            tables.push(Table {
                name: "lt_erasure".into(),
                columns: vec![
                    (
                        "flow".into(),
                        Column::U64(erasure.iter().map(|r| r.1).collect()),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(erasure.iter().map(|r| secs(&r.0)).collect()),
                    ),
                    (
                        "new_l".into(),
                        Column::F64(erasure.iter().map(|r| r.2).collect()),
                    ),
                    (
                        "estimate".into(),
                        Column::F64(erasure.iter().map(|r| r.3).collect()),
                    ),
                ],
            });
            tables.push(Table {
                name: "lt_blocks".into(),
                columns: vec![
                    (
                        "flow".into(),
                        Column::U64(blocks.iter().map(|r| r.1).collect()),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(blocks.iter().map(|r| secs(&r.0)).collect()),
                    ),
                    (
                        "mss".into(),
                        Column::U64(blocks.iter().map(|r| u64::from(r.2 .1)).collect()),
                    ),
                    (
                        "cwnd_bytes".into(),
                        Column::U64(blocks.iter().map(|r| r.2 .2).collect()),
                    ),
                    (
                        "k".into(),
                        Column::U64(blocks.iter().map(|r| u64::from(r.2 .3)).collect()),
                    ),
                    (
                        "p".into(),
                        Column::U64(blocks.iter().map(|r| u64::from(r.2 .4)).collect()),
                    ),
                ],
            });
        }
        tables
    }

    /// pcap bytes of the captured link directions written since the last
    /// call: (link name, bytes) for every captured direction, in link order.
    /// The pieces of one direction joined are its pcap file; capturing goes on.
    pub fn take_captures(&mut self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for (l, captures) in self.links.iter().zip(&mut self.captures) {
            for d in Dir::BOTH {
                if let Some(c) = captures[d.index()].as_mut() {
                    out.push((l.names[d.index()].clone(), c.take_bytes()));
                }
            }
        }
        out
    }
}

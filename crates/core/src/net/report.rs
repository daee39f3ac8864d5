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

    /// Trace tables recorded so far (empty unless traces were enabled).
    pub fn take_traces(&mut self) -> Vec<Table> {
        let Some(traces) = self.traces.take() else {
            return Vec::new();
        };
        let (mut cf, mut ct, mut cw, mut cs) = (vec![], vec![], vec![], vec![]);
        let (mut ef, mut et, mut en, mut ee) = (vec![], vec![], vec![], vec![]);
        let (mut bf, mut bt, mut bm, mut bc, mut bk, mut bp) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        let lt_any = self.flows.iter().any(|f| f.sender.lt_config().any());
        let mut sent = Vec::new();
        for (i, f) in self.flows.iter_mut().enumerate() {
            for (t, cwnd, ssthresh) in f.sender.take_cwnd_trace() {
                cf.push(i as u64);
                ct.push(t.as_secs_f64());
                cw.push(cwnd);
                cs.push(ssthresh);
            }
            for (t, seq, _rtx) in f.sender.take_sent_trace() {
                sent.push((FlowId(i as u32), t, seq));
            }
            for (t, new_l, e) in f.sender.take_erasure_trace() {
                ef.push(i as u64);
                et.push(t.as_secs_f64());
                en.push(new_l);
                ee.push(e);
            }
            for (t, mss, cwnd, k, p) in f.sender.take_mss_trace() {
                bf.push(i as u64);
                bt.push(t.as_secs_f64());
                bm.push(u64::from(mss));
                bc.push(cwnd);
                bk.push(u64::from(k));
                bp.push(u64::from(p));
            }
        }
        let (mut ql, mut qt, mut qp, mut qb) = (vec![], vec![], vec![], vec![]);
        for l in &mut self.links {
            for d in Dir::BOTH {
                for (t, p, b) in l.model.occupancy_mut(d).take_trace() {
                    ql.push(l.names[d.index()].clone());
                    qt.push(t.as_secs_f64());
                    qp.push(u64::from(p));
                    qb.push(b);
                }
            }
        }
        let arq = std::mem::take(&mut self.arq_trace);
        let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let arq_table = Table {
            name: "arq".into(),
            columns: vec![
                (
                    "link".into(),
                    Column::Str(arq.iter().map(|a| a.link.clone()).collect()),
                ),
                (
                    "time_s".into(),
                    Column::F64(arq.iter().map(|a| a.t.as_secs_f64()).collect()),
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
        };
        let mut tables = vec![
            Table {
                name: "cwnd".into(),
                columns: vec![
                    ("flow".into(), Column::U64(cf)),
                    ("time_s".into(), Column::F64(ct)),
                    ("cwnd_bytes".into(), Column::U64(cw)),
                    ("ssthresh_bytes".into(), Column::U64(cs)),
                ],
            },
            Table {
                name: "queue".into(),
                columns: vec![
                    ("link".into(), Column::Str(ql)),
                    ("time_s".into(), Column::F64(qt)),
                    ("packets".into(), Column::U64(qp)),
                    ("bytes".into(), Column::U64(qb)),
                ],
            },
            traces.into_table(sent),
        ];
        // Only runs with a cross-layer feed have MaxDAT changes to trace.
        if !self.feeds.is_empty() {
            tables.push(arq_table);
        }
        if lt_any {
            tables.push(Table {
                name: "lt_erasure".into(),
                columns: vec![
                    ("flow".into(), Column::U64(ef)),
                    ("time_s".into(), Column::F64(et)),
                    ("new_l".into(), Column::F64(en)),
                    ("estimate".into(), Column::F64(ee)),
                ],
            });
            tables.push(Table {
                name: "lt_blocks".into(),
                columns: vec![
                    ("flow".into(), Column::U64(bf)),
                    ("time_s".into(), Column::F64(bt)),
                    ("mss".into(), Column::U64(bm)),
                    ("cwnd_bytes".into(), Column::U64(bc)),
                    ("k".into(), Column::U64(bk)),
                    ("p".into(), Column::U64(bp)),
                ],
            });
        }
        tables
    }

    /// pcap files of the captured links: (link name, bytes).
    pub fn take_captures(&mut self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for l in &mut self.links {
            for d in Dir::BOTH {
                if let Some(c) = l.capture[d.index()].take() {
                    out.push((l.names[d.index()].clone(), c.into_bytes()));
                }
            }
        }
        out
    }
}

//! Trace tables and packet captures of a [`Simulation`] (its summary: `summary.rs`).

use super::Simulation;
use crate::link::Dir;
use crate::metrics::{Column, Table};
use crate::packet::FlowId;
use crate::time::Time;

impl Simulation {
    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    /// The simulated time the run has reached.
    pub fn sim_time(&self) -> Time {
        self.end
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

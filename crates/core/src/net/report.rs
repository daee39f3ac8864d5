//! Trace tables and packet captures of a [`Simulation`] (its summary: `summary.rs`).

use super::Simulation;
use crate::link::Dir;
use crate::metrics::bins::FlowHistograms;
use crate::metrics::{Column, Table};
use crate::packet::FlowId;
use crate::tcp::{RtoRow, RttRow};
use crate::time::Time;

impl Simulation {
    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.queue.popped()
    }

    /// Packet-hops so far: packets handed over at the far end of a link
    /// direction, summed over directions (the per-direction account's
    /// `arrived`, so no counter of its own on the per-packet path).
    pub fn hops(&self) -> u64 {
        self.seen.iter().map(|s| s.arrived).sum()
    }

    /// The simulated time the run has reached.
    pub fn sim_time(&self) -> Time {
        self.end
    }

    /// Trace tables of everything recorded since the last take or drain
    /// (empty unless traces were enabled; then always the same tables,
    /// possibly without rows), and the `histograms` table when histograms
    /// are on ([`Simulation::enable_histograms`]; alone without traces).
    /// Call it at the end of a run.
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
        // The histograms cover the whole run: their rows come with the last
        // take (drains give the table without rows).
        let histograms = self.histograms.as_mut().map(|h| {
            if all {
                h.take_table()
            } else {
                FlowHistograms::new(0, &Default::default()).take_table()
            }
        });
        // Workload runs always have their `fct` table, traced or not.
        let fct = self.take_fct(all);
        let Some(mut traces) = self.traces.take() else {
            return histograms.into_iter().chain(fct).collect();
        };
        let lt_any = self.flows.iter().any(|f| f.sender.lt_config().any());
        let (mut cwnd, mut sent, mut erasure, mut blocks) = (vec![], vec![], vec![], vec![]);
        let (mut rtt, mut rto) = (vec![], vec![]);
        for (i, f) in self.flows.iter_mut().enumerate() {
            let id = i as u64;
            rtt.extend(f.sender.take_rtt_trace().into_iter().map(|r| (id, r)));
            rto.extend(f.sender.take_rto_trace().into_iter().map(|r| (id, r)));
            cwnd.extend(
                f.sender
                    .take_cwnd_trace()
                    .into_iter()
                    .map(|(t, c, s, n)| (t, id, c, s, n)),
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
        rtt.sort_by_key(|r| r.1.at);
        rto.sort_by_key(|r| r.1.at);
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
                    (
                        "timeouts".into(),
                        Column::U64(cwnd.iter().map(|r| r.4 .0).collect()),
                    ),
                    (
                        "fast_retransmits".into(),
                        Column::U64(cwnd.iter().map(|r| r.4 .1).collect()),
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
            traces.take_drops(),
            rtt_table(&rtt),
            rto_table(&rto),
        ];
        // Runs with media streams have their packets' table.
        if !self.media.is_empty() {
            tables.push(traces.take_media());
        }
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
        tables.extend(histograms);
        tables.extend(fct);
        tables
    }

    /// Capture bytes written since the last call: (spec, bytes) for every
    /// capture, in the order they were asked for ([`Simulation::capture`]).
    /// The pieces of one capture joined are its file; capturing goes on.
    pub fn take_captures(&mut self) -> Vec<(String, Vec<u8>)> {
        self.captures
            .iter_mut()
            .map(|(spec, w)| (spec.clone(), w.take_bytes()))
            .collect()
    }
}

/// The `rtt` table: one row per RTT sample, the estimator after it.
fn rtt_table(rows: &[(u64, RttRow)]) -> Table {
    let secs =
        |f: fn(&RttRow) -> Time| Column::F64(rows.iter().map(|r| f(&r.1).as_secs_f64()).collect());
    Table {
        name: "rtt".into(),
        columns: vec![
            (
                "flow".into(),
                Column::U64(rows.iter().map(|r| r.0).collect()),
            ),
            ("time_s".into(), secs(|r| r.at)),
            ("sample_s".into(), secs(|r| r.sample)),
            ("srtt_s".into(), secs(|r| r.srtt)),
            ("rttvar_s".into(), secs(|r| r.rttvar)),
            ("rto_s".into(), secs(|r| r.rto)),
        ],
    }
}

/// The `rto` table: one row per retransmission-timer expiry.
fn rto_table(rows: &[(u64, RtoRow)]) -> Table {
    let secs =
        |f: fn(&RtoRow) -> Time| Column::F64(rows.iter().map(|r| f(&r.1).as_secs_f64()).collect());
    let ints = |f: fn(&RtoRow) -> u64| Column::U64(rows.iter().map(|r| f(&r.1)).collect());
    Table {
        name: "rto".into(),
        columns: vec![
            (
                "flow".into(),
                Column::U64(rows.iter().map(|r| r.0).collect()),
            ),
            ("time_s".into(), secs(|r| r.at)),
            (
                "kind".into(),
                Column::Str(
                    rows.iter()
                        .map(|r| if r.1.syn { "syn" } else { "data" }.to_string())
                        .collect(),
                ),
            ),
            ("rto_s".into(), secs(|r| r.rto)),
            ("backoff".into(), ints(|r| u64::from(r.backoff))),
            ("next_rto_s".into(), secs(|r| r.next_rto)),
            ("seq".into(), ints(|r| r.seq)),
            ("cwnd_bytes".into(), ints(|r| r.cwnd)),
            ("ssthresh_bytes".into(), ints(|r| r.ssthresh)),
        ],
    }
}

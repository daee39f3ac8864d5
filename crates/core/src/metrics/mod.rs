//! Measurement: delay histograms and columnar trace buffers.
//!
//! Definitions (written once, here and in `docs/metrics.md`):
//! * **goodput** — bytes delivered in order to the receiving application,
//!   × 8, divided by the simulated time of the run;
//! * **throughput** of a link direction — IP bytes it transmitted, × 8,
//!   divided by the simulated time;
//! * **delay** — one-way TCP-layer transfer time of a data packet: from the
//!   moment the sending TCP emitted that transmission to the moment it reached
//!   the receiving TCP (every arriving data packet counts, retransmissions too).

pub mod histogram;

pub use traces::Traces;

/// One column of a trace table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Floats.
    F64(Vec<f64>),
    /// Unsigned integers.
    U64(Vec<u64>),
    /// Strings.
    Str(Vec<String>),
}

/// A named columnar table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Table name (file stem when written).
    pub name: String,
    /// Columns, all of one length.
    pub columns: Vec<(String, Column)>,
}

mod traces {

    use super::{Column, Table};
    use crate::packet::FlowId;
    use crate::time::Time;

    /// Sequence-number events of all flows, as columns.
    #[derive(Debug, Default)]
    pub struct Traces {
        flow: Vec<u64>,
        time_s: Vec<f64>,
        event: Vec<&'static str>,
        seq: Vec<u64>,
    }

    impl Traces {
        /// Record a sequence-number event (`sent`, `received`, `dropped`).
        pub fn seq(&mut self, now: Time, flow: FlowId, event: &'static str, seq: u64) {
            self.flow.push(u64::from(flow.0));
            self.time_s.push(now.as_secs_f64());
            self.event.push(event);
            self.seq.push(seq);
        }

        /// Merge the senders' `sent` events and return the `seq` table sorted by time.
        pub fn into_table(mut self, sent: Vec<(FlowId, Time, u64)>) -> Table {
            for (f, t, s) in sent {
                self.seq(t, f, "sent", s);
            }
            let mut idx: Vec<usize> = (0..self.flow.len()).collect();
            // Stable sort by time: events at the same instant keep recording order.
            idx.sort_by(|&a, &b| self.time_s[a].total_cmp(&self.time_s[b]));
            Table {
                name: "seq".into(),
                columns: vec![
                    (
                        "flow".into(),
                        Column::U64(idx.iter().map(|&i| self.flow[i]).collect()),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(idx.iter().map(|&i| self.time_s[i]).collect()),
                    ),
                    (
                        "event".into(),
                        Column::Str(idx.iter().map(|&i| self.event[i].to_string()).collect()),
                    ),
                    (
                        "seq".into(),
                        Column::U64(idx.iter().map(|&i| self.seq[i]).collect()),
                    ),
                ],
            }
        }
    }
}

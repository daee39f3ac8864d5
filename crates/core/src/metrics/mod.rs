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

pub mod bins;
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

    /// Sequence-number events of all flows, in the order they happened.
    #[derive(Debug, Default)]
    pub struct Traces {
        rows: Vec<(Time, u32, &'static str, u64)>,
        drops: Vec<Drop>,
        /// Media packets: (time, stream, event, sequence number).
        media: Vec<(Time, u32, &'static str, u64)>,
    }

    /// One packet lost: when, whose, what, where and why.
    #[derive(Debug)]
    struct Drop {
        at: Time,
        flow: u32,
        kind: &'static str,
        seq: u64,
        link: String,
        cause: &'static str,
    }

    impl Traces {
        /// Record a lost packet of `flow`: `kind` (`data`, `ack`), its
        /// sequence number (data) or acknowledgement number (ACKs), the link
        /// direction that lost it and the cause.
        pub fn drop(
            &mut self,
            at: Time,
            flow: FlowId,
            (kind, seq): (&'static str, u64),
            link: &str,
            cause: &'static str,
        ) {
            self.drops.push(Drop {
                at,
                flow: flow.0,
                kind,
                seq,
                link: link.to_string(),
                cause,
            });
        }

        /// The `drops` table of the losses recorded since the last call, in
        /// time order (recording order within an instant).
        pub fn take_drops(&mut self) -> Table {
            let mut rows = std::mem::take(&mut self.drops);
            rows.sort_by_key(|r| r.at); // stable
            let strs = |f: fn(&Drop) -> String| Column::Str(rows.iter().map(f).collect());
            Table {
                name: "drops".into(),
                columns: vec![
                    (
                        "flow".into(),
                        Column::U64(rows.iter().map(|r| u64::from(r.flow)).collect()),
                    ),
                    (
                        "time_s".into(),
                        Column::F64(rows.iter().map(|r| r.at.as_secs_f64()).collect()),
                    ),
                    ("kind".into(), strs(|r| r.kind.to_string())),
                    (
                        "seq".into(),
                        Column::U64(rows.iter().map(|r| r.seq).collect()),
                    ),
                    ("link".into(), strs(|r| r.link.clone())),
                    ("cause".into(), strs(|r| r.cause.to_string())),
                ],
            }
        }

        /// Record an event (`sent`, `received`, `dropped`) of media stream
        /// `stream`'s packet number `seq`.
        pub fn media(&mut self, now: Time, stream: u32, event: &'static str, seq: u64) {
            self.media.push((now, stream, event, seq));
        }

        /// The `media_packets` table of the media packet events recorded
        /// since the last call, in time order (recording order within an
        /// instant).
        pub fn take_media(&mut self) -> Table {
            let mut rows = std::mem::take(&mut self.media);
            rows.sort_by_key(|r| r.0); // stable
            event_table("media_packets", "stream", &rows)
        }

        /// Record a sequence-number event (`sent`, `received`, `dropped`).
        pub fn seq(&mut self, now: Time, flow: FlowId, event: &'static str, seq: u64) {
            self.rows.push((now, flow.0, event, seq));
        }

        /// The `seq` table of the events recorded since the last call, with
        /// the senders' `sent` events merged in, sorted by time. Rows of one
        /// instant keep recording order, the `sent` rows (in the order given)
        /// after the others; so tables taken between instants (see
        /// [`crate::net::Simulation::run_for`]) join into the table of the
        /// whole run.
        pub fn take_table(&mut self, sent: Vec<(FlowId, Time, u64)>) -> Table {
            let mut rows = std::mem::take(&mut self.rows);
            rows.extend(sent.into_iter().map(|(f, t, s)| (t, f.0, "sent", s)));
            rows.sort_by_key(|r| r.0); // stable
            event_table("seq", "flow", &rows)
        }
    }

    /// A table of packet events, one row per (time, id, event, sequence
    /// number), sorted by time: `seq` (TCP flows) and `media_packets`
    /// (media streams) differ only in their name and their id column's.
    fn event_table(name: &str, id: &str, rows: &[(Time, u32, &'static str, u64)]) -> Table {
        Table {
            name: name.into(),
            columns: vec![
                (
                    id.into(),
                    Column::U64(rows.iter().map(|r| u64::from(r.1)).collect()),
                ),
                (
                    "time_s".into(),
                    Column::F64(rows.iter().map(|r| r.0.as_secs_f64()).collect()),
                ),
                (
                    "event".into(),
                    Column::Str(rows.iter().map(|r| r.2.to_string()).collect()),
                ),
                (
                    "seq".into(),
                    Column::U64(rows.iter().map(|r| r.3).collect()),
                ),
            ],
        }
    }
}

//! Fixed-width histograms of each flow's delay and jitter, as ns-3's
//! FlowMonitor keeps them (`delayHistogram`, `jitterHistogram`; its
//! `DelayBinWidth` and `JitterBinWidth` attributes): a value `v` falls in bin
//! `floor(v / width)`, which covers `[index·width, (index + 1)·width)`, and
//! only bins that counted something are listed. Switched on by a scenario's
//! `[histograms]` table (or the run's option); off, nothing is kept.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Column, Table};
use crate::config::{ConfigError, Result};
use crate::time::Time;

/// `[histograms]`: per-flow delay and jitter histograms with fixed-width
/// bins (docs/metrics.md, the `histograms` table).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistogramsConfig {
    /// Width of a delay bin, > 0 (ns-3's `DelayBinWidth`). Default "1ms".
    pub delay_bin_width: Option<Time>,
    /// Width of a jitter bin, > 0 (ns-3's `JitterBinWidth`). Default "1ms".
    pub jitter_bin_width: Option<Time>,
}

/// The default bin width, 1 ms (ns-3's FlowMonitor's).
pub const DEFAULT_BIN_WIDTH: Time = Time::from_millis(1);

impl HistogramsConfig {
    /// Check the widths (paths relative to the table).
    pub fn validate(&self) -> Result<()> {
        for (key, w) in [
            ("delay_bin_width", self.delay_bin_width),
            ("jitter_bin_width", self.jitter_bin_width),
        ] {
            if w == Some(Time::ZERO) {
                return Err(ConfigError::new(
                    key,
                    "\"0s\"",
                    "is zero; allowed: a positive time such as \"1ms\"",
                ));
            }
        }
        Ok(())
    }

    /// The delay and jitter bin widths, defaults filled in.
    pub fn widths(&self) -> (Time, Time) {
        (
            self.delay_bin_width.unwrap_or(DEFAULT_BIN_WIDTH),
            self.jitter_bin_width.unwrap_or(DEFAULT_BIN_WIDTH),
        )
    }
}

/// A histogram of non-negative integer values (nanoseconds) with bins of one
/// fixed width; only the bins that counted something are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bins {
    width: u64,
    counts: BTreeMap<u64, u64>,
}

impl Bins {
    /// An empty histogram with bins `width` ns wide (at least 1).
    pub fn new(width: u64) -> Bins {
        Bins {
            width: width.max(1),
            counts: BTreeMap::new(),
        }
    }

    /// Count value `v` in bin `v / width`.
    pub fn record(&mut self, v: u64) {
        *self.counts.entry(v / self.width).or_insert(0) += 1;
    }

    /// The bin width, ns.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// `(index, count)` of every bin that counted something, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&i, &c)| (i, c))
    }
}

/// Every flow's delay and jitter histograms.
#[derive(Clone, Debug)]
pub struct FlowHistograms {
    flows: Vec<[Bins; 2]>,
}

impl FlowHistograms {
    /// Histograms for `flows` flows with the widths of `cfg`.
    pub fn new(flows: usize, cfg: &HistogramsConfig) -> FlowHistograms {
        let (d, j) = cfg.widths();
        FlowHistograms {
            flows: (0..flows)
                .map(|_| [Bins::new(d.as_nanos()), Bins::new(j.as_nanos())])
                .collect(),
        }
    }

    /// A data packet of `flow` arrived after `delay` ns; `jitter` is its
    /// jitter (none for the flow's first).
    pub fn record(&mut self, flow: usize, delay: u64, jitter: Option<u64>) {
        if let Some([d, j]) = self.flows.get_mut(flow) {
            d.record(delay);
            if let Some(v) = jitter {
                j.record(v);
            }
        }
    }

    /// The delay (`0`) and jitter (`1`) histograms of `flow`.
    pub fn of(&self, flow: usize) -> Option<&[Bins; 2]> {
        self.flows.get(flow)
    }

    /// The `histograms` table of the counts so far, which are then cleared:
    /// one row per flow, metric (`delay`, then `jitter`) and bin that counted
    /// something, in that order.
    pub fn take_table(&mut self) -> Table {
        let (mut flow, mut metric, mut bin) = (vec![], vec![], vec![]);
        let (mut start, mut width, mut count) = (vec![], vec![], vec![]);
        for (f, pair) in self.flows.iter_mut().enumerate() {
            for (name, h) in ["delay", "jitter"].into_iter().zip(pair.iter_mut()) {
                let w = h.width;
                for (i, c) in h.iter() {
                    flow.push(f as u64);
                    metric.push(name.to_string());
                    bin.push(i);
                    // Divided (correctly rounded): 18 ms is 0.018, not 0.018000000000000002.
                    start.push(i.saturating_mul(w) as f64 / 1e9);
                    width.push(w as f64 / 1e9);
                    count.push(c);
                }
                h.counts.clear();
            }
        }
        Table {
            name: "histograms".into(),
            columns: vec![
                ("flow".into(), Column::U64(flow)),
                ("metric".into(), Column::Str(metric)),
                ("bin".into(), Column::U64(bin)),
                ("start_s".into(), Column::F64(start)),
                ("width_s".into(), Column::F64(width)),
                ("count".into(), Column::U64(count)),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> u64 {
        Time::from_millis(x).as_nanos()
    }

    /// ns-3's `Histogram::AddValue`: bin floor(v / width); a value on a bin's
    /// edge belongs to the bin it starts.
    #[test]
    fn values_fall_in_floor_bins() {
        let mut b = Bins::new(ms(1));
        for v in [0, ms(1) - 1, ms(1), ms(1) + 1, ms(7), ms(7) + ms(1) / 2] {
            b.record(v);
        }
        assert_eq!(b.iter().collect::<Vec<_>>(), [(0, 2), (1, 2), (7, 2)]);
        assert_eq!(b.total(), 6);
    }

    #[test]
    fn table_counts_add_up_and_list_only_nonempty_bins() {
        let cfg = HistogramsConfig {
            delay_bin_width: Some(Time::from_millis(10)),
            jitter_bin_width: Some(Time::from_millis(2)),
        };
        let mut h = FlowHistograms::new(2, &cfg);
        let delays = [ms(25), ms(21), ms(40), ms(5)];
        let mut last = None;
        for d in delays {
            h.record(1, d, last.map(|l: u64| l.abs_diff(d)));
            last = Some(d);
        }
        let t = h.take_table();
        let Column::U64(count) = &t.columns[5].1 else {
            panic!("count is u64")
        };
        let Column::Str(metric) = &t.columns[1].1 else {
            panic!("metric is str")
        };
        let sum = |m: &str| -> u64 {
            metric
                .iter()
                .zip(count)
                .filter(|(x, _)| *x == m)
                .map(|(_, c)| c)
                .sum()
        };
        assert_eq!(sum("delay"), 4);
        assert_eq!(sum("jitter"), 3);
        // Delay bins of 10 ms: 0 (5), 2 (25, 21), 4 (40); jitter 4, 19, 35 ms
        // in bins of 2 ms: 2, 9, 17.
        let Column::U64(bin) = &t.columns[2].1 else {
            panic!("bin is u64")
        };
        assert_eq!(bin, &[0, 2, 4, 2, 9, 17]);
        assert_eq!(count, &[1, 2, 1, 1, 1, 1]);
        let Column::F64(start) = &t.columns[3].1 else {
            panic!("start is f64")
        };
        assert_eq!(start[1], 0.02);
        assert_eq!(start[4], 0.018);
        // Flow 0 had nothing: no rows; taken once, the counts are gone.
        let Column::U64(flow) = &t.columns[0].1 else {
            panic!("flow is u64")
        };
        assert!(flow.iter().all(|&f| f == 1));
        assert_eq!(h.take_table().columns[0].1, Column::U64(vec![]));
    }

    #[test]
    fn zero_width_is_refused_with_its_key() {
        let cfg = HistogramsConfig {
            delay_bin_width: None,
            jitter_bin_width: Some(Time::ZERO),
        };
        let e = cfg.validate().unwrap_err();
        assert_eq!(e.path, "jitter_bin_width");
        assert!(HistogramsConfig::default().validate().is_ok());
        assert_eq!(
            HistogramsConfig::default().widths(),
            (DEFAULT_BIN_WIDTH, DEFAULT_BIN_WIDTH)
        );
    }
}

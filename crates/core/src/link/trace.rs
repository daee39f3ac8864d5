//! Trace-driven link rate, as Mahimahi's `mm-link` plays it (Netravali et
//! al., USENIX ATC 2015): a trace file lists delivery opportunities, one
//! integer millisecond timestamp per line; each opportunity can carry
//! `opportunity` bytes (1500 by default; `"1504B"` for byte parity with
//! `mm-link`, whose packets carry a 4-byte tunnel header).
//!
//! Semantics (`mahimahi/src/packet/link_queue.cc`, `use_a_delivery_opportunity`
//! and `rationalize`):
//!
//! - at each opportunity the packet at the head of the queue takes as many of
//!   the opportunity's bytes as it still needs; a packet larger than what is
//!   left continues at the next opportunity and leaves at the one that
//!   completes it; the next queued packet goes on with the bytes left over;
//! - bytes of an opportunity that no queued packet uses are lost (the queue is
//!   empty at that instant);
//! - opportunities are used before packets arriving at the same instant are
//!   queued, so a packet uses only opportunities strictly after its arrival;
//! - the trace repeats with period = its last timestamp (which must be > 0),
//!   unless `once`: then the link delivers nothing after the last opportunity.

use std::sync::Arc;

use crate::config::{quoted, ConfigError, Result};
use crate::time::Time;

/// The largest trace file read (bytes).
pub const MAX_TRACE_BYTES: usize = 256 << 20;

/// A parsed Mahimahi trace: delivery opportunities in time order, stored by
/// runs of equal timestamps (a file of 133 million `1` lines is one run; a
/// trace of distinct timestamps costs 16 bytes per line, about twice its
/// text), so memory stays a small multiple of the file whatever it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// The distinct timestamps (ms from the start of a cycle), increasing.
    at: Vec<u64>,
    /// `end[j]`: the opportunities at `at[0..=j]` (cumulative, increasing).
    end: Vec<u64>,
}

/// Runs of equal timestamps, built line by line.
#[derive(Default)]
struct Runs {
    at: Vec<u64>,
    end: Vec<u64>,
}

impl Runs {
    /// Add opportunity `ms`; `Err(prev)` if it goes back in time.
    fn push(&mut self, ms: u64) -> Result<(), u64> {
        match self.at.last() {
            Some(&prev) if ms < prev => return Err(prev),
            Some(&prev) if ms == prev => {
                *self.end.last_mut().expect("a run per timestamp") += 1;
                return Ok(());
            }
            _ => {}
        }
        let total = self.end.last().copied().unwrap_or(0);
        self.at.push(ms);
        self.end.push(total + 1);
        Ok(())
    }

    fn finish(mut self) -> Result<Trace, String> {
        match self.at.last() {
            None => Err("is empty; a trace lists at least one opportunity".into()),
            Some(0) => {
                Err("lasts 0 ms; the last timestamp (the trace's period) must be above 0".into())
            }
            Some(_) => {
                self.at.shrink_to_fit();
                self.end.shrink_to_fit();
                Ok(Trace {
                    at: self.at,
                    end: self.end,
                })
            }
        }
    }
}

impl Trace {
    /// A trace from opportunity times in milliseconds (non-decreasing, not
    /// empty, the last one > 0). `Err` says what is wrong.
    pub fn from_millis(ms: &[u64]) -> Result<Trace, String> {
        let mut runs = Runs::default();
        for &m in ms {
            runs.push(m).map_err(|prev| {
                format!(
                    "timestamp {m} goes back in time (after {prev}); timestamps must not decrease"
                )
            })?;
        }
        runs.finish()
    }

    /// Parse the text of trace file `file` (named in errors): one integer
    /// millisecond timestamp per line; blank lines are skipped.
    pub fn parse(text: &str, file: &str) -> Result<Trace> {
        let at = |line: usize, why: String| {
            ConfigError::new("", quoted(file), format!("line {line}: {why}"))
        };
        let mut runs = Runs::default();
        let mut last_line = 0;
        for (i, line) in text.lines().enumerate() {
            let s = line.trim();
            if s.is_empty() {
                continue;
            }
            let v: u64 = s.parse().map_err(|_| {
                let shown: String = s.chars().take(40).collect();
                at(
                    i + 1,
                    format!(
                        "{} is not a timestamp; each line is one whole number of milliseconds, e.g. 12",
                        quoted(&shown)
                    ),
                )
            })?;
            if v > 1 << 40 {
                return Err(at(
                    i + 1,
                    format!("{v} ms is too far; timestamps are at most 2^40 ms"),
                ));
            }
            runs.push(v).map_err(|prev| {
                at(
                    i + 1,
                    format!("{v} goes back in time (after {prev}); timestamps must not decrease"),
                )
            })?;
            last_line = i + 1;
        }
        let empty = runs.at.is_empty();
        runs.finish().map_err(|why| {
            if empty {
                ConfigError::new("", quoted(file), why)
            } else {
                at(last_line, why)
            }
        })
    }

    /// Opportunities per cycle.
    pub fn len(&self) -> usize {
        self.total() as usize
    }

    fn total(&self) -> u64 {
        self.end[self.end.len() - 1]
    }

    /// Never true (a trace has at least one opportunity).
    pub fn is_empty(&self) -> bool {
        self.end.is_empty()
    }

    /// The period: the last timestamp.
    pub fn period(&self) -> Time {
        Time::from_millis(self.at[self.at.len() - 1])
    }

    /// The time of opportunity `i` (< `len()`) within a cycle.
    fn time(&self, i: u64) -> Time {
        Time::from_millis(self.at[self.end.partition_point(|&e| e <= i)])
    }

    /// How many opportunities of a cycle are at or before `within`.
    fn count_until(&self, within: Time) -> u64 {
        match self.at.partition_point(|&m| Time::from_millis(m) <= within) {
            0 => 0,
            j => self.end[j - 1],
        }
    }
}

/// A trace file named in a scenario (`trace = "FILE"`): the path as
/// written, relative to the scenario file, and its opportunities once the
/// scenario loader has read it ([`TraceFile::load`]).
#[derive(Clone, Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(from = "String")]
#[schemars(with = "String")]
pub struct TraceFile {
    /// The path as written.
    pub path: String,
    /// The parsed trace (`None` until loaded).
    pub loaded: Option<Arc<Trace>>,
}

impl From<String> for TraceFile {
    fn from(path: String) -> TraceFile {
        TraceFile { path, loaded: None }
    }
}

impl TraceFile {
    /// A trace given directly (in Rust), already loaded; `name` names it in reports.
    pub fn new(name: impl Into<String>, trace: Trace) -> TraceFile {
        TraceFile {
            path: name.into(),
            loaded: Some(Arc::new(trace)),
        }
    }

    /// Read and parse the file, with paths relative to `base` (the scenario
    /// file's directory; `None`: the current directory), unless already
    /// loaded; `cache` keeps each file read once per run.
    pub fn load(
        &mut self,
        base: Option<&std::path::Path>,
        cache: &mut std::collections::HashMap<std::path::PathBuf, Arc<Trace>>,
    ) -> Result<()> {
        if self.loaded.is_some() {
            return Ok(());
        }
        let rel = std::path::Path::new(&self.path);
        let full = match base {
            Some(b) if rel.is_relative() => b.join(rel),
            _ => rel.to_path_buf(),
        };
        if let Some(t) = cache.get(&full) {
            self.loaded = Some(Arc::clone(t));
            return Ok(());
        }
        let fail = |why: String| ConfigError::new("", quoted(&self.path), why);
        let hint = "give a Mahimahi trace file, its path relative to the scenario file";
        let shown = full.display();
        let meta = std::fs::metadata(&full).map_err(|e| {
            fail(format!(
                "cannot be read ({shown}: {}); {hint}",
                io_reason(&e)
            ))
        })?;
        if !meta.is_file() {
            return Err(fail(format!("is not a regular file ({shown}); {hint}")));
        }
        if meta.len() > MAX_TRACE_BYTES as u64 {
            return Err(fail(format!(
                "has {} bytes ({shown}); allowed: at most {} MiB",
                meta.len(),
                MAX_TRACE_BYTES >> 20
            )));
        }
        let bytes = std::fs::read(&full).map_err(|e| {
            fail(format!(
                "cannot be read ({shown}: {}); {hint}",
                io_reason(&e)
            ))
        })?;
        let text =
            String::from_utf8(bytes).map_err(|_| fail(format!("is not text ({shown}); {hint}")))?;
        let trace = Arc::new(Trace::parse(&text, &self.path)?);
        cache.insert(full, Arc::clone(&trace));
        self.loaded = Some(trace);
        Ok(())
    }
}

/// An I/O error's reason without Rust's `(os error N)` suffix.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// How a direction plays a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceConfig {
    /// The opportunities.
    pub trace: Arc<Trace>,
    /// Bytes per opportunity (> 0).
    pub opportunity: u32,
    /// Play the trace once instead of repeating it.
    pub once: bool,
}

impl TraceConfig {
    /// The mean rate of the trace, bit/s (at least 1).
    pub fn mean_rate_bps(&self) -> u64 {
        let bits = self.trace.len() as f64 * f64::from(self.opportunity) * 8.0;
        (bits / self.trace.period().as_secs_f64()).round().max(1.0) as u64
    }
}

/// The transmitter of a trace-driven direction: the opportunity the next
/// packet starts in and how many of its bytes are left.
#[derive(Clone, Debug)]
pub struct TraceServer {
    cfg: TraceConfig,
    /// Absolute index of the opportunity the next packet starts in.
    n: u64,
    /// Its bytes not yet used.
    left: u32,
}

impl TraceServer {
    /// A transmitter that has used no opportunity yet.
    pub fn new(cfg: TraceConfig) -> TraceServer {
        TraceServer {
            n: 0,
            left: cfg.opportunity,
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TraceConfig {
        &self.cfg
    }

    /// The time of absolute opportunity `n` (`None` past the end of a trace played once).
    fn time_of(&self, n: u64) -> Option<Time> {
        let len = self.cfg.trace.total();
        let cycle = n / len;
        if self.cfg.once && cycle > 0 {
            return None;
        }
        let base = self.cfg.trace.period().as_nanos().checked_mul(cycle)?;
        let t = self.cfg.trace.time(n % len).as_nanos();
        base.checked_add(t).map(Time::from_nanos)
    }

    /// The first opportunity strictly after `t`.
    fn first_after(&self, t: Time) -> Option<u64> {
        let period = self.cfg.trace.period().as_nanos();
        let len = self.cfg.trace.total();
        let cycle = t.as_nanos() / period;
        let within = Time::from_nanos(t.as_nanos() - cycle * period);
        let i = self.cfg.trace.count_until(within);
        let n = cycle.checked_mul(len)?.checked_add(i)?;
        self.time_of(n).map(|_| n)
    }

    /// When a queued packet next starts: the opportunity with bytes left
    /// (`None`: a trace played once has ended).
    pub fn next_start(&self) -> Option<Time> {
        self.time_of(self.n)
    }

    /// A packet arrives at an idle transmitter at `now`: opportunities up to
    /// `now` passed with an empty queue, so their bytes are lost; the packet
    /// starts at the first opportunity strictly after `now`.
    pub fn wake(&mut self, now: Time) {
        if self.next_start().is_some_and(|t| t <= now) {
            // Past the end of a trace played once: no opportunity is left.
            self.n = self.first_after(now).unwrap_or(u64::MAX);
            self.left = self.cfg.opportunity;
        }
    }

    /// Send `bytes` from the current opportunity on; returns the time of the
    /// opportunity that completes them, or `None` if the trace (played once)
    /// ends first.
    pub fn send(&mut self, bytes: u64) -> Option<Time> {
        let (mut n, mut left) = (self.n, u64::from(self.left));
        self.time_of(n)?;
        let mut need = bytes;
        while need > left {
            need -= left;
            n = n.checked_add(1)?;
            left = u64::from(self.cfg.opportunity);
            self.time_of(n)?;
        }
        let done = self.time_of(n);
        left -= need;
        if left == 0 {
            self.n = n.saturating_add(1);
            self.left = self.cfg.opportunity;
        } else {
            self.n = n;
            self.left = left as u32;
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn server(ms: &[u64], opp: u32, once: bool) -> TraceServer {
        TraceServer::new(TraceConfig {
            trace: Arc::new(Trace::from_millis(ms).unwrap()),
            opportunity: opp,
            once,
        })
    }

    const MS: fn(u64) -> Time = Time::from_millis;

    /// A packet of `bytes` arriving at `at`: wake the transmitter if it is
    /// idle (`idle`), then send; the departure time in ms.
    fn send(s: &mut TraceServer, at: u64, bytes: u64, idle: bool) -> Option<u64> {
        if idle {
            s.wake(MS(at));
        }
        s.send(bytes).map(|t| t.as_nanos() / 1_000_000)
    }

    #[test]
    fn one_packet_per_opportunity() {
        let mut s = server(&[1, 2, 3, 4], 1500, false);
        // Four packets queued at 0: one per opportunity.
        assert_eq!(s.next_start(), Some(MS(1)));
        assert_eq!(send(&mut s, 0, 1500, true), Some(1));
        assert_eq!(s.next_start(), Some(MS(2)));
        assert_eq!(send(&mut s, 0, 1500, false), Some(2));
        assert_eq!(send(&mut s, 0, 1500, false), Some(3));
        assert_eq!(send(&mut s, 0, 1500, false), Some(4));
    }

    #[test]
    fn a_packet_spans_opportunities_and_the_next_uses_the_rest() {
        let mut s = server(&[10, 20, 30], 1000, false);
        // 1500 B: 1000 at 10 ms, 500 at 20 ms, leaves at 20 ms with 500 left.
        assert_eq!(send(&mut s, 0, 1500, true), Some(20));
        assert_eq!(s.next_start(), Some(MS(20)));
        // A queued 400-byte packet fits in the 500 left at 20 ms.
        assert_eq!(send(&mut s, 5, 400, false), Some(20));
        // The next queued one (300 B) uses the last 100 and 200 of 30 ms.
        assert_eq!(send(&mut s, 5, 300, false), Some(30));
    }

    #[test]
    fn unused_bytes_are_lost_when_the_queue_is_empty() {
        let mut s = server(&[10, 20, 30], 1500, false);
        assert_eq!(send(&mut s, 0, 100, true), Some(10));
        // Arriving after 10 ms (the queue was empty then): 1400 B of 10 ms are
        // lost; the packet waits for 20 ms even though it is small.
        assert_eq!(send(&mut s, 11, 100, true), Some(20));
    }

    #[test]
    fn a_packet_arriving_at_an_opportunity_waits_for_the_next() {
        let mut s = server(&[10, 20], 1500, false);
        assert_eq!(send(&mut s, 10, 100, true), Some(20));
        // Idle, but the next opportunity is still ahead: nothing is skipped.
        let mut s = server(&[10, 20, 30], 1500, false);
        assert_eq!(send(&mut s, 0, 1500, true), Some(10));
        assert_eq!(send(&mut s, 15, 1500, true), Some(20));
    }

    #[test]
    fn equal_timestamps_are_several_opportunities_at_once() {
        let mut s = server(&[5, 5, 5, 9], 1500, false);
        assert_eq!(send(&mut s, 0, 4500, true), Some(5));
        assert_eq!(send(&mut s, 0, 100, false), Some(9));
    }

    #[test]
    fn the_trace_wraps_around_with_its_last_timestamp_as_period() {
        let mut s = server(&[0, 4, 10], 1500, false);
        // After 10 ms come 10 + 0 = 10 (again), 14, 20, 20, 24 …
        assert_eq!(send(&mut s, 9, 1500, true), Some(10));
        assert_eq!(send(&mut s, 9, 1500, false), Some(10));
        assert_eq!(send(&mut s, 9, 1500, false), Some(14));
        assert_eq!(send(&mut s, 15, 1500, true), Some(20));
        // Far later: cycle 100 starts at 1000 ms.
        assert_eq!(send(&mut s, 1001, 1500, true), Some(1004));
    }

    #[test]
    fn played_once_the_link_stops_after_the_last_opportunity() {
        let mut s = server(&[1, 2], 1500, true);
        assert_eq!(send(&mut s, 0, 1500, true), Some(1));
        assert_eq!(send(&mut s, 0, 1500, false), Some(2));
        assert_eq!(s.next_start(), None);
        assert_eq!(send(&mut s, 0, 1500, false), None);
        assert_eq!(send(&mut s, 5, 10, true), None);
        // A packet that needs more than the trace has left never completes.
        let mut s = server(&[1, 2], 1500, true);
        assert_eq!(send(&mut s, 0, 4000, true), None);
    }

    #[test]
    fn parse_errors_name_the_file_and_line() {
        let e = Trace::parse("1\n2\nx3\n", "t.down").unwrap_err();
        assert_eq!(e.value, "\"t.down\"");
        assert!(
            e.allowed.starts_with("line 3: \"x3\" is not a timestamp"),
            "{e}"
        );
        let e = Trace::parse("1\n5\n4\n", "t").unwrap_err();
        assert!(e.allowed.starts_with("line 3: 4 goes back in time"), "{e}");
        let e = Trace::parse("\n\n", "t").unwrap_err();
        assert!(e.allowed.contains("is empty"), "{e}");
        let e = Trace::parse("0\n0\n", "t").unwrap_err();
        assert!(e.allowed.contains("line 2: lasts 0 ms"), "{e}");
        let e = Trace::parse("-1\n", "t").unwrap_err();
        assert!(e.allowed.contains("not a timestamp"), "{e}");
        assert_eq!(Trace::parse("0\n\n3 \n7\n", "t").unwrap().len(), 3);
    }

    #[test]
    fn mean_rate() {
        // One 1500-byte opportunity per ms: 12 Mbit/s.
        let ms: Vec<u64> = (1..=1000).collect();
        let c = TraceConfig {
            trace: Arc::new(Trace::from_millis(&ms).unwrap()),
            opportunity: 1500,
            once: false,
        };
        assert_eq!(c.mean_rate_bps(), 12_000_000);
    }

    /// Runs of equal timestamps are stored once (issue 34 item 7: a 254-MiB
    /// file of `1` lines took 2.3 GB as one 8-byte time per line).
    #[test]
    fn equal_timestamps_are_one_run() {
        let text = "1\n".repeat(100_000) + "2\n2\n";
        let t = Trace::parse(&text, "ones").unwrap();
        assert_eq!((t.len(), t.at.len(), t.period()), (100_002, 2, MS(2)));
        assert_eq!(
            (t.time(0), t.time(99_999), t.time(100_000)),
            (MS(1), MS(1), MS(2))
        );
        assert_eq!(t.count_until(MS(1)), 100_000);
        assert!(t.at.capacity() == 2 && t.end.capacity() == 2);
    }

    proptest! {
        /// The runs answer as the list of every opportunity would: the time
        /// of each, and how many are at or before any instant.
        #[test]
        fn runs_match_the_expanded_list(
            gaps in prop::collection::vec(0u64..3, 1..60),
            probe in 0u64..200_000_000,
        ) {
            let mut ms = Vec::new();
            let mut t = 1;
            for g in gaps { t += g; ms.push(t); }
            let tr = Trace::from_millis(&ms).unwrap();
            prop_assert_eq!(tr.len(), ms.len());
            for (i, &m) in ms.iter().enumerate() {
                prop_assert_eq!(tr.time(i as u64), MS(m));
            }
            let within = Time::from_nanos(probe);
            let naive = ms.iter().filter(|&&m| MS(m) <= within).count() as u64;
            prop_assert_eq!(tr.count_until(within), naive);
        }

        /// Departures never go back in time, come strictly after an idle
        /// arrival, and every byte sent is carried by an opportunity at or
        /// before its departure: the bytes delivered by time t never exceed
        /// the opportunities' bytes up to t.
        #[test]
        fn departures_respect_the_opportunities(
            gaps in prop::collection::vec(0u64..5, 1..30),
            sends in prop::collection::vec((0u64..40, 1u64..4000, any::<bool>()), 1..60),
            opp in 100u32..2000,
        ) {
            let mut ms = Vec::new();
            let mut t = 1;
            for g in gaps { t += g; ms.push(t); }
            let mut s = server(&ms, opp, false);
            let (mut last, mut sent) = (0u64, 0u64);
            for (gap, bytes, idle) in sends {
                let at = last + gap;
                let end = send(&mut s, at, bytes, idle).unwrap();
                prop_assert!(end >= last);
                if idle { prop_assert!(end > at); }
                sent += bytes;
                // Opportunities up to `end`, over all cycles.
                let period = ms[ms.len() - 1];
                let full = end / period;
                let within = ms.iter().filter(|&&m| m <= end - full * period).count() as u64;
                let opps = full * ms.len() as u64 + within;
                prop_assert!(sent <= opps * u64::from(opp), "{} > {} opportunities", sent, opps);
                last = end;
            }
        }
    }
}

//! Workloads (`[[workloads]]`): open-loop arrivals of finite TCP flows
//! between node sets, each arrival a new connection, and the flow-completion
//! metrics they are measured by (docs/models/workloads.md).
//!
//! The configuration lives here ([`WorkloadConfig`], the arrival and size
//! families); the network creates a flow per arrival in a slot freed by a
//! finished flow ([`crate::net`]), so memory is bounded by the flows alive at
//! once; each finished flow leaves one compact record (the `fct` table).

mod dist;
mod run;

pub use dist::{
    Cdf, CdfSize, DataMining, FixedSize, LognormalSize, ParetoSize, SizeConfig, SizeKind, Sizes,
    WebSearch, CDF_PACKET, DATA_MINING, WEB_SEARCH,
};
pub use run::{
    Baseline, BaselineFactory, BucketSummary, Client, Closed, Job, Plan, Pool, Process, Quantiles,
    Record, Source, WorkloadSummary, WorkloadsSummary,
};

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::kind::tagged_enum;
use crate::config::{quoted, Bytes, ConfigError, Result};
use crate::tcp::TcpOverlay;
use crate::time::Time;

/// Default size-bucket edges of the summary, bytes: (0, 10 kB], (10 kB,
/// 100 kB], (100 kB, 1 MB], (1 MB, 10 MB], above 10 MB.
pub const DEFAULT_BUCKETS: [u64; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

/// Arrivals a workload may make over a run (a bound on the work and on the
/// `fct` table, not on memory: finished flows free their state).
pub const MAX_ARRIVALS: u64 = 100_000_000;

/// Bytes a trace or CDF file may have.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// One open-loop workload: flows arriving between node sets.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Name (in the summary and the `fct` table). Default "workloads[i]".
    pub name: Option<String>,
    /// Sender nodes: a node or a range like "S{1..10}".
    pub from: String,
    /// Receiver nodes: a node or a range.
    pub to: String,
    /// How senders and receivers pair: "cross" (every sender with every
    /// receiver, the same node never with itself; default) or "zip" (as
    /// `[[flows]]`: equal lengths zipped, or fanned out by groups).
    pub pairs: Option<PairMode>,
    /// One weight ≥ 0 per pair, in pair order (not all 0): an arrival picks
    /// a pair with probability proportional to its weight. Default: uniform.
    pub weights: Option<Vec<f64>>,
    /// When flows arrive.
    pub arrivals: ArrivalConfig,
    /// How large each flow is (not with `arrivals.kind = "trace"`, whose
    /// file gives the sizes); with `arrivals.kind = "closed"`, each request.
    pub size: Option<SizeConfig>,
    /// With `arrivals.kind = "closed"`: the size of each response, sent back
    /// by the server once the request has arrived. Default: no response.
    pub response: Option<SizeConfig>,
    /// First arrival at or after this time. Default "0s".
    pub start: Option<Time>,
    /// No arrival at or after this time. Default: the end of the run.
    pub stop: Option<Time>,
    /// Size-bucket edges of the summary, increasing (1 to 16 edges). Default
    /// ["10kB", "100kB", "1MB", "10MB"].
    pub buckets: Option<Vec<Bytes>>,
    /// TCP overrides for these flows (over the scenario's `[tcp]`).
    pub tcp: Option<TcpOverlay>,
    /// Each flow's application offers data at most at this rate
    /// (application-limited flows). Default: as fast as TCP takes it.
    pub rate_cap: Option<crate::config::Rate>,
    /// On/off applications: mean (or exact) on-period duration; needs `off`.
    pub on: Option<Time>,
    /// On/off applications: mean (or exact) off-period duration.
    pub off: Option<Time>,
    /// How on and off periods last: "exponential" (default) or "fixed".
    pub on_off: Option<crate::net::app::OnOffLaw>,
    /// What carries each flow: "new" (a new TCP connection per arrival,
    /// with its handshake and slow start; default) or "persistent" (a
    /// request on a pooled connection of its sender/receiver pair, opened
    /// on demand and reused once idle).
    pub connection: Option<ConnectionMode>,
    /// With `connection = "persistent"`: the most connections open at once
    /// per sender/receiver pair, 1 to 1000 (a request finding them all busy
    /// waits for the first to become idle). Default 6.
    pub pool: Option<u32>,
}

/// Default [`WorkloadConfig::pool`]: the six connections per host that
/// browsers open over HTTP/1.1.
pub const DEFAULT_POOL: u32 = 6;

/// What carries a workload's flows (`connection`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionMode {
    /// A new TCP connection per flow (handshake, slow start).
    #[default]
    New,
    /// A request on a persistent connection of the pair's pool.
    Persistent,
}

/// How the nodes of `from` and `to` pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PairMode {
    /// Every sender with every receiver (not itself).
    Cross,
    /// As `[[flows]]`.
    Zip,
}

/// An arrival process's configuration.
pub trait ArrivalKind {
    /// Check the keys (paths relative to the `arrivals` table).
    fn validate(&self) -> Result<()>;
}

tagged_enum! {
    /// When the flows of a workload arrive.
    pub enum ArrivalConfig: dyn ArrivalKind, "arrivals", tag "kind" {
        /// Poisson arrivals: exponential gaps of mean 1/rate.
        Poisson(RateConfig) = "poisson",
        /// One arrival every 1/rate seconds.
        Deterministic(EvenRate) = "deterministic",
        /// Arrival times and sizes from a file.
        Trace(TraceArrivals) = "trace",
        /// A closed loop: clients that each start a transaction, wait for it
        /// to finish, think, and start the next.
        Closed(ClosedLoop) = "closed",
    }
}

/// `arrivals = { kind = "closed", clients = 10, think = "1s" }`: each client
/// runs transactions one after the other — a request of `size` to its
/// server, the server's response of `response` bytes, or a page of
/// `objects` such exchanges over at most `parallel` connections at once —
/// with a think time between the end of one and the start of the next.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoop {
    /// Concurrent clients, 1 to 100000; client i uses pair i modulo the pairs.
    pub clients: u32,
    /// Mean think time (exact with `think_law = "fixed"`), ≥ 0.
    pub think: Time,
    /// "exponential" (default) or "fixed".
    pub think_law: Option<crate::net::app::OnOffLaw>,
    /// Objects per transaction (a page), 1 to 1000. Default 1.
    pub objects: Option<u32>,
    /// Object exchanges in progress at once, 1 to `objects`. Default 1
    /// (objects one after the other, as on one persistent connection).
    pub parallel: Option<u32>,
}

/// The rate of Poisson or deterministic arrivals: `rate` flows per second,
/// or `load` of link direction `link` (rate = load × the link's rate / (8 ×
/// the mean size)).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    /// Arrivals per second, above 0 and at most 1e7.
    pub rate: Option<f64>,
    /// Offered load: the mean size's bits per second over the rate of
    /// `link`, above 0 and at most 10 (above 1 overloads it).
    pub load: Option<f64>,
    /// The link direction whose rate `load` is relative to, "A->B".
    pub link: Option<String>,
}

/// `arrivals = { kind = "trace", file = "arrivals.txt" }`: one flow per
/// line, `START SIZE` (seconds after the workload's `start`, bytes).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceArrivals {
    /// The file, relative to the scenario file.
    pub file: String,
    /// The arrivals, once read.
    #[serde(skip)]
    #[schemars(skip)]
    pub loaded: Option<Arc<Vec<(Time, u64)>>>,
}

impl ArrivalKind for RateConfig {
    fn validate(&self) -> Result<()> {
        match (self.rate, self.load, &self.link) {
            (Some(r), None, None) => {
                if !(r > 0.0 && r <= 1e7) {
                    return Err(ConfigError::new(
                        "rate",
                        r.to_string(),
                        "is out of range; allowed: above 0, at most 1e7 arrivals per second",
                    ));
                }
                Ok(())
            }
            (None, Some(l), Some(_)) => {
                if !(l > 0.0 && l <= 10.0) {
                    return Err(ConfigError::new(
                        "load",
                        l.to_string(),
                        "is out of range; allowed: above 0, at most 10",
                    ));
                }
                Ok(())
            }
            (None, Some(_), None) => Err(ConfigError::at_key(
                "link",
                "missing; a load is relative to a link direction, e.g. link = \"R->D\"",
            )),
            (Some(_), Some(_), _) => Err(ConfigError::at_key(
                "",
                "has both rate and load; allowed: one of them",
            )),
            (Some(_), None, Some(_)) => Err(ConfigError::at_key(
                "link",
                "is only used with load; with a rate, leave it out",
            )),
            (None, None, _) => Err(ConfigError::at_key(
                "",
                "has neither rate nor load; allowed: rate = ARRIVALS_PER_SECOND, or load = 0.5 with link = \"A->B\"",
            )),
        }
    }
}

/// The rate of deterministic arrivals (the keys of [`RateConfig`]).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct EvenRate(pub RateConfig);

impl ArrivalKind for EvenRate {
    fn validate(&self) -> Result<()> {
        self.0.validate()
    }
}

impl ArrivalKind for ClosedLoop {
    fn validate(&self) -> Result<()> {
        crate::config::check_range("clients", self.clients, 1, 100_000)?;
        let objects = self.objects.unwrap_or(1);
        crate::config::check_range("objects", objects, 1, 1000)?;
        crate::config::check_range("parallel", self.parallel.unwrap_or(1), 1, objects)?;
        Ok(())
    }
}

impl ArrivalKind for TraceArrivals {
    fn validate(&self) -> Result<()> {
        Ok(())
    }
}

impl TraceArrivals {
    /// Parse an arrival file's text (`file` named in errors as `file:line`):
    /// one flow per line, `START SIZE` — START seconds after the workload's
    /// start (a decimal number ≥ 0, never decreasing), SIZE bytes (a whole
    /// number ≥ 1) — separated by spaces, tabs or a comma; `#` starts a
    /// comment; blank lines are skipped.
    pub fn parse(text: &str, file: &str) -> Result<Vec<(Time, u64)>> {
        let mut out: Vec<(Time, u64)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let s = raw.split('#').next().unwrap_or("").trim();
            if s.is_empty() {
                continue;
            }
            let bad = |why: &str| {
                let shown: String = s.chars().take(40).collect();
                ConfigError::new(
                    "file",
                    quoted(file),
                    format!(
                        "{file}:{}: {} {why}; each line is START SIZE (seconds ≥ 0, never decreasing; whole bytes ≥ 1), e.g. 0.25 20000",
                        i + 1,
                        quoted(&shown)
                    ),
                )
            };
            let fields: Vec<&str> = s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let [t, b] = fields[..] else {
                return Err(bad("does not have two fields"));
            };
            let t: f64 = t
                .parse()
                .map_err(|_| bad("has a START that is not a number"))?;
            if !(t.is_finite() && (0.0..=1e9).contains(&t)) {
                return Err(bad("has a START out of range"));
            }
            let b: u64 = b
                .parse()
                .map_err(|_| bad("has a SIZE that is not a whole number"))?;
            if b == 0 || b > 1 << 50 {
                return Err(bad("has a SIZE out of range"));
            }
            let t = Time::from_secs_f64(t);
            if out.last().is_some_and(|&(p, _)| t < p) {
                return Err(bad("goes back in time"));
            }
            out.push((t, b));
            if out.len() as u64 > MAX_ARRIVALS {
                return Err(ConfigError::new(
                    "file",
                    quoted(file),
                    format!("has more than {MAX_ARRIVALS} arrivals"),
                ));
            }
        }
        if out.is_empty() {
            return Err(ConfigError::new(
                "file",
                quoted(file),
                "has no arrivals; each line is START SIZE",
            ));
        }
        Ok(out)
    }
}

/// Read file `name` (relative to `base`) as text, at most [`MAX_FILE_BYTES`];
/// errors at key `file`.
pub fn read_text(base: Option<&std::path::Path>, name: &str, what: &str) -> Result<String> {
    let rel = std::path::Path::new(name);
    let full = match base {
        Some(b) if rel.is_relative() => b.join(rel),
        _ => rel.to_path_buf(),
    };
    let shown = full.display();
    let fail = |why: String| ConfigError::new("file", quoted(name), why);
    let hint = format!("give {what}, its path relative to the scenario file");
    let meta = std::fs::metadata(&full)
        .map_err(|e| fail(format!("cannot be read ({shown}: {e}); {hint}")))?;
    if !meta.is_file() {
        return Err(fail(format!("is not a regular file ({shown}); {hint}")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(format!(
            "has {} bytes ({shown}); allowed: at most {} MiB",
            meta.len(),
            MAX_FILE_BYTES >> 20
        )));
    }
    let bytes =
        std::fs::read(&full).map_err(|e| fail(format!("cannot be read ({shown}: {e}); {hint}")))?;
    String::from_utf8(bytes).map_err(|_| fail(format!("is not text ({shown}); {hint}")))
}

impl WorkloadConfig {
    /// Read the files the workload names (a trace of arrivals, a CDF).
    pub fn load_files(&mut self, base: Option<&std::path::Path>) -> Result<()> {
        if let ArrivalConfig::Trace(t) = &mut self.arrivals {
            let text = read_text(base, &t.file, "a file of START SIZE lines")
                .map_err(|e| e.at("arrivals"))?;
            t.loaded = Some(Arc::new(
                TraceArrivals::parse(&text, &t.file).map_err(|e| e.at("arrivals"))?,
            ));
        }
        if let Some(SizeConfig::Cdf(c)) = &mut self.response {
            let text = read_text(base, &c.file, "a CDF file of SIZE PROBABILITY lines")
                .map_err(|e| e.at("response"))?;
            c.loaded = Some(Arc::new(
                Cdf::parse(&text, &c.file).map_err(|e| e.at("response"))?,
            ));
        }
        if let Some(SizeConfig::Cdf(c)) = &mut self.size {
            let text = read_text(base, &c.file, "a CDF file of SIZE PROBABILITY lines")
                .map_err(|e| e.at("size"))?;
            c.loaded = Some(Arc::new(
                Cdf::parse(&text, &c.file).map_err(|e| e.at("size"))?,
            ));
        }
        Ok(())
    }

    /// The files the workload reads.
    pub fn file_names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        if let ArrivalConfig::Trace(t) = &self.arrivals {
            out.push(t.file.as_str());
        }
        for s in [&self.size, &self.response] {
            if let Some(SizeConfig::Cdf(c)) = s {
                out.push(c.file.as_str());
            }
        }
        out
    }

    /// Check the keys that need no topology (paths relative to the entry);
    /// `duration` is the run's.
    pub fn validate(&self, duration: Time) -> Result<()> {
        if let Some(n) = &self.name {
            if n.is_empty() || n.len() > 100 {
                return Err(ConfigError::new(
                    "name",
                    quoted(n),
                    "allowed: 1 to 100 characters",
                ));
            }
        }
        self.arrivals
            .model()
            .validate()
            .map_err(|e| e.at("arrivals"))?;
        match (&self.arrivals, &self.size) {
            (ArrivalConfig::Trace(_), Some(_)) => {
                return Err(ConfigError::at_key(
                    "size",
                    "is given by the trace file (START SIZE lines); leave size out with arrivals.kind = \"trace\"",
                ))
            }
            (ArrivalConfig::Trace(_), None) => {}
            (_, None) => {
                return Err(ConfigError::at_key(
                    "size",
                    format!(
                        "missing; a workload needs a size distribution: size = {{ kind = {} }}",
                        crate::config::one_of(SizeConfig::KINDS)
                    ),
                ))
            }
            (_, Some(s)) => s.model().validate().map_err(|e| e.at("size"))?,
        }
        match (&self.arrivals, &self.response) {
            (ArrivalConfig::Closed(_), Some(r)) => {
                r.model().validate().map_err(|e| e.at("response"))?
            }
            (ArrivalConfig::Closed(_), None) => {}
            (_, Some(_)) => {
                return Err(ConfigError::at_key(
                    "response",
                    "is only used with arrivals.kind = \"closed\" (request/response); allowed: leave it out",
                ))
            }
            (_, None) => {}
        }
        let start = self.start.unwrap_or(Time::ZERO);
        if start >= duration {
            return Err(ConfigError::new(
                "start",
                format!("\"{start}\""),
                format!("is not before the end of the run ({duration})"),
            ));
        }
        if let Some(stop) = self.stop {
            if stop <= start {
                return Err(ConfigError::new(
                    "stop",
                    format!("\"{stop}\""),
                    format!("is not after the start ({start})"),
                ));
            }
        }
        if let Some(b) = &self.buckets {
            if b.is_empty() || b.len() > 16 {
                return Err(ConfigError::at_key(
                    "buckets",
                    "allowed: 1 to 16 increasing sizes, e.g. [\"10kB\", \"100kB\", \"1MB\"]",
                ));
            }
            for (i, w) in b.windows(2).enumerate() {
                if w[1] <= w[0] {
                    return Err(ConfigError::new(
                        format!("buckets[{}]", i + 1),
                        w[1].get().to_string(),
                        format!(
                            "is not above the edge before it ({}); edges increase",
                            w[0].get()
                        ),
                    ));
                }
            }
            if b[0].get() == 0 {
                return Err(ConfigError::new(
                    "buckets[0]",
                    "0",
                    "allowed: edges ≥ 1 byte",
                ));
            }
        }
        let paced = crate::net::app::AppShape::of(self.rate_cap, self.on, self.off, self.on_off)?;
        self.check_connection(paced.is_some())?;
        if let Some(w) = &self.weights {
            if let Some((i, x)) = w
                .iter()
                .enumerate()
                .find(|(_, x)| !(**x >= 0.0 && x.is_finite()))
            {
                return Err(ConfigError::new(
                    format!("weights[{i}]"),
                    x.to_string(),
                    "allowed: finite weights ≥ 0",
                ));
            }
            if !w.iter().any(|x| *x > 0.0) {
                return Err(ConfigError::at_key(
                    "weights",
                    "are all 0; allowed: at least one pair with a weight above 0",
                ));
            }
        }
        Ok(())
    }

    /// The pool bound of a persistent workload (`None`: new connections).
    pub fn persistent_pool(&self) -> Option<u32> {
        (self.connection.unwrap_or_default() == ConnectionMode::Persistent)
            .then(|| self.pool.unwrap_or(DEFAULT_POOL))
    }

    /// Check `connection` and `pool` (`paced`: the flows have a rate cap or
    /// on/off periods).
    fn check_connection(&self, paced: bool) -> Result<()> {
        let persistent = self.connection.unwrap_or_default() == ConnectionMode::Persistent;
        if let Some(n) = self.pool {
            if !persistent {
                return Err(ConfigError::at_key(
                    "pool",
                    "is only used with connection = \"persistent\"; allowed: leave it out, or add connection = \"persistent\"",
                ));
            }
            crate::config::check_range("pool", n, 1, 1000)?;
        }
        if persistent && paced {
            let key = if self.rate_cap.is_some() {
                "rate_cap"
            } else {
                "on"
            };
            return Err(ConfigError::at_key(
                "connection",
                format!(
                    "\"persistent\" cannot be used with {key} (an application's pacing belongs to one transfer, a persistent connection carries many); allowed: connection = \"new\" with rate_cap/on/off, or persistent without them"
                ),
            ));
        }
        Ok(())
    }

    /// The bucket edges, bytes.
    pub fn bucket_edges(&self) -> Vec<u64> {
        self.buckets.as_ref().map_or_else(
            || DEFAULT_BUCKETS.to_vec(),
            |b| b.iter().map(|x| x.get()).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wl(text: &str) -> Result<WorkloadConfig> {
        let v: toml::Value = toml::from_str::<toml::Table>(text).unwrap().into();
        crate::config::deserialize::<WorkloadConfig, _>(v)
    }

    #[test]
    fn keys_are_read_and_checked() {
        let w = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poisson\", rate = 10 }\nsize = \"web_search\"\n").unwrap();
        w.validate(Time::from_secs(1)).unwrap();
        let e = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poison\", rate = 10 }\nsize = \"web_search\"\n").unwrap_err();
        assert_eq!(e.path, "arrivals.kind", "{e}");
        assert!(e.allowed.contains("poisson"), "{e}");
        let e = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poisson\", rate = 10 }\nsize = { kind = \"pareto\", mean = 1000, shape = 0.9 }\n")
            .unwrap()
            .validate(Time::from_secs(1))
            .unwrap_err();
        assert_eq!(e.path, "size.shape", "{e}");
        let e = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poisson\", load = 0.5 }\nsize = \"data_mining\"\n")
            .unwrap()
            .validate(Time::from_secs(1))
            .unwrap_err();
        assert_eq!(e.path, "arrivals.link", "{e}");
        let e = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poisson\", rate = 1 }\n")
            .unwrap()
            .validate(Time::from_secs(1))
            .unwrap_err();
        assert_eq!(e.path, "size", "{e}");
        let e = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poisson\", rate = 1 }\nsize = { kind = \"fixed\", bytes = 10 }\nbuckets = [100, 50]\n")
            .unwrap()
            .validate(Time::from_secs(1))
            .unwrap_err();
        assert_eq!(e.path, "buckets[1]", "{e}");
        let e = wl("from = \"S\"\nto = \"D\"\narrivals = { kind = \"poisson\", rate = 1 }\nsize = \"fixed\"\n").unwrap_err();
        assert_eq!(e.path, "size.bytes", "{e}");
    }

    #[test]
    fn trace_files_are_checked_line_by_line() {
        let t = TraceArrivals::parse("# t size\n0 100\n0.5, 2000\n\n1.5 1\n", "a.txt").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[1], (Time::from_millis(500), 2000));
        let e = TraceArrivals::parse("0 100\n0.5 0\n", "a.txt").unwrap_err();
        assert!(e.allowed.starts_with("a.txt:2:"), "{e}");
        let e = TraceArrivals::parse("1 100\n0.5 10\n", "a.txt").unwrap_err();
        assert!(
            e.allowed.starts_with("a.txt:2:") && e.allowed.contains("back"),
            "{e}"
        );
        let e = TraceArrivals::parse("1 100 3\n", "a.txt").unwrap_err();
        assert!(e.allowed.starts_with("a.txt:1:"), "{e}");
        let e = TraceArrivals::parse("-1 100\n", "a.txt").unwrap_err();
        assert!(e.allowed.starts_with("a.txt:1:"), "{e}");
    }
}

#[cfg(test)]
mod e2e;

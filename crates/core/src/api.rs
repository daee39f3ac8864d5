//! The one entry point the Python binding (and any other front) calls: load a
//! scenario, run it, hand back a summary, columnar traces and packet captures.
//!
//! A scenario comes as TOML text, as a parsed table, or built in Rust from the
//! same configuration types a file is read into:
//!
//! ```
//! use linklab_core::api::{run, FlowConfig, RunOptions, ScenarioConfig, Source};
//! use linklab_core::aqm::RedConfig;
//! use linklab_core::link::WiredLinkConfig;
//! use linklab_core::time::Time;
//!
//! let scenario = ScenarioConfig::new(Time::from_secs(5))
//!     .name("two hops")
//!     .link(WiredLinkConfig::new("S", "R").rate("100Mbit".parse()?).delay(Time::from_millis(1)))
//!     .link(
//!         WiredLinkConfig::new("R", "D")
//!             .rate("2Mbit".parse()?)
//!             .delay(Time::from_millis(20))
//!             .queue(RedConfig::new(5.0, 15.0)),
//!     )
//!     .flow(FlowConfig::new("S", "D").count(2));
//! let out = run(Source::Config(Box::new(scenario)), &RunOptions::default())?;
//! let goodput = out.summary.network.aggregate.totals.goodput_bps;
//! assert!(goodput > 1e6 && goodput < 2e6, "{goodput}");
//! # Ok::<(), linklab_core::api::ConfigError>(())
//! ```

use crate::capture::Format;
pub use crate::config::ConfigError;
pub use crate::metrics::{Column, Table};
pub use crate::net::account::AccountingError;
pub use crate::net::summary::Summary;
use crate::net::Simulation;
use crate::scenario::{self};
pub use crate::scenario::{FlowConfig, ScenarioConfig};
use crate::time::Time;

/// Where a scenario comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// TOML text (the contents of a scenario file).
    Toml(String),
    /// An already-parsed table (e.g. a Python dict).
    Table(toml::Table),
    /// A scenario built in Rust (it has no `[params]`).
    Config(Box<ScenarioConfig>),
}

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Run seed; `None` uses the scenario's `seed` (default 1).
    pub seed: Option<u64>,
    /// `--set name=value` overrides of `[params]`, values as typed on the command line.
    pub params: Vec<(String, String)>,
    /// Record traces (cwnd, queue occupancy, sequence numbers, drops, RTT
    /// samples, timer expiries).
    pub trace: bool,
    /// Keep per-flow delay and jitter histograms (the `histograms` table),
    /// with the scenario's `[histograms]` bin widths or the defaults (1 ms);
    /// a scenario with `[histograms]` has them anyway.
    pub histograms: bool,
    /// Links to capture as classic pcap, each `"A->B"` (one direction) or
    /// `"A-B"` (both), with `"@rx"` appended to capture where packets leave
    /// the link instead of where they enter it ([`Simulation::capture`]).
    pub pcap_links: Vec<String>,
    /// Links to capture as pcapng (interfaces named after the link
    /// directions, node names resolved), specs as in `pcap_links`.
    pub pcapng_links: Vec<String>,
    /// The directory that relative file names in the scenario (trace files)
    /// start from: the scenario file's. `None`: the current directory.
    pub base_dir: Option<std::path::PathBuf>,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The summary (see `docs/metrics.md`).
    pub summary: Summary,
    /// Trace tables (empty unless `trace`; the `histograms` table alone
    /// when only histograms are on).
    pub traces: Vec<Table>,
    /// Capture files: (link spec, file bytes), `pcap_links` then `pcapng_links`.
    pub pcaps: Vec<(String, Vec<u8>)>,
}

/// Load, validate and run a scenario.
///
/// # Panics
/// If a packet account does not close at the end of the run (a bug in the
/// core); `start(src, opts)?.finish()` returns it as an [`AccountingError`].
pub fn run(src: Source, opts: &RunOptions) -> Result<RunOutput, ConfigError> {
    match start(src, opts)?.finish() {
        Ok(out) => Ok(out),
        Err(e) => panic!("{e}"),
    }
}

/// A scenario loaded and built, with its traces and captures switched on,
/// ready to run: in one go ([`Run::finish`]) or in slices ([`Run::advance`])
/// with traces and captures drained in between, so that a front can stream
/// them to disk in bounded memory. Both give the same results.
pub struct Run {
    sim: Simulation,
    duration: Time,
    name: String,
    seed: u64,
    params: serde_json::Map<String, serde_json::Value>,
}

impl Run {
    /// Run on for about `max_events` more events (whole instants); true once
    /// the scenario's duration is reached.
    pub fn advance(&mut self, max_events: u64) -> bool {
        self.sim.run_for(self.duration, max_events)
    }

    /// The trace rows and pcap bytes ready since the last call (see
    /// [`Simulation::drain_traces`], [`Simulation::take_captures`]).
    pub fn drain(&mut self) -> (Vec<Table>, Vec<(String, Vec<u8>)>) {
        (self.sim.drain_traces(), self.sim.take_captures())
    }

    /// The run taken apart before it starts, for an executor other than
    /// the simulator (the live emulator): the network with its link models
    /// and flow specifications, and what the summary's header needs.
    pub fn into_parts(self) -> RunParts {
        RunParts {
            network: self.sim.into_network(),
            duration: self.duration,
            name: self.name,
            seed: self.seed,
            params: self.params,
        }
    }

    /// Run to the end; the summary and the traces and captures not yet
    /// taken. Fails if a packet account does not close (a bug in the core;
    /// the message names the link or flow, the counts, the scenario and
    /// the seed).
    pub fn finish(mut self) -> Result<RunOutput, AccountingError> {
        self.sim.run(self.duration);
        let accounts = self.sim.close_accounts().map_err(|e| AccountingError {
            message: format!(
                "packet account broken in scenario '{}', seed {}: {}",
                self.name, self.seed, e.message
            ),
        })?;
        let summary = Summary {
            scenario: self.name,
            seed: self.seed,
            params: self.params,
            network: self.sim.summary_with(Some(accounts)),
        };
        Ok(RunOutput {
            summary,
            traces: self.sim.take_traces(),
            pcaps: self.sim.take_captures(),
        })
    }
}

/// A built run taken apart ([`Run::into_parts`]).
pub struct RunParts {
    /// Nodes, links (models included) and flows.
    pub network: crate::net::Network,
    /// The scenario's duration.
    pub duration: Time,
    /// The scenario's name (empty if it has none).
    pub name: String,
    /// The run seed.
    pub seed: u64,
    /// The resolved `[params]`.
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// Load and build a scenario, ready to [`Run::advance`] or [`Run::finish`].
pub fn start(src: Source, opts: &RunOptions) -> Result<Run, ConfigError> {
    let mut loaded = match src {
        Source::Toml(text) => scenario::load(scenario::parse(&text)?, &opts.params)?,
        Source::Table(t) => scenario::load(t, &opts.params)?,
        Source::Config(c) => scenario::loaded(*c, &opts.params)?,
    };
    scenario::read_files(&mut loaded, opts.base_dir.clone())?;
    let seed = opts.seed.or(loaded.file.seed).unwrap_or(1);
    let (mut sim, duration) = scenario::build(&loaded, seed)?;
    if opts.trace {
        sim.enable_traces();
    }
    if opts.histograms && !sim.histograms_enabled() {
        sim.enable_histograms(&Default::default());
    }
    let captures = opts.pcap_links.iter().map(|s| (s, Format::Pcap));
    for (spec, format) in captures.chain(opts.pcapng_links.iter().map(|s| (s, Format::Pcapng))) {
        sim.capture(spec, format)
            .map_err(|why| ConfigError::new("--pcap", crate::config::quoted(spec), why))?;
    }
    let params = loaded
        .params
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
        .collect();
    Ok(Run {
        sim,
        duration,
        name: loaded.file.name.clone().unwrap_or_default(),
        seed,
        params,
    })
}

/// The files a scenario reads (trace files), after its parameters are
/// substituted, resolved against `opts.base_dir`; nothing is read. For
/// caches that must notice when an input file changes.
pub fn input_files(src: Source, opts: &RunOptions) -> Result<Vec<std::path::PathBuf>, ConfigError> {
    let loaded = match src {
        Source::Toml(text) => scenario::load(scenario::parse(&text)?, &opts.params)?,
        Source::Table(t) => scenario::load(t, &opts.params)?,
        Source::Config(c) => scenario::loaded(*c, &opts.params)?,
    };
    let mut out = Vec::new();
    let workload_files = loaded.file.workloads.iter().flat_map(|w| w.file_names());
    for name in workload_files {
        let p = std::path::Path::new(name);
        out.push(match &opts.base_dir {
            Some(b) if p.is_relative() => b.join(p),
            _ => p.to_path_buf(),
        });
    }
    for l in &loaded.file.links {
        for name in l.model().file_names() {
            let p = std::path::Path::new(name);
            out.push(match &opts.base_dir {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.to_path_buf(),
            });
        }
    }
    Ok(out)
}

/// The JSON Schema of scenario files.
pub fn json_schema() -> serde_json::Value {
    crate::scenario::json_schema()
}

//! The typed form of a scenario (a file after `[params]` substitution, or
//! one built in Rust). Every model's part is its own configuration type; the
//! JSON Schema is generated from these types ([`super::json_schema`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::units::schema_impl;
use crate::config::{Bytes, ConfigError, Result};
use crate::link::LinkConfig;
use crate::metrics::bins::HistogramsConfig;
use crate::net::monitor::MonitorConfig;
use crate::sch::AllocationConfig;
use crate::tcp::TcpOverlay;
use crate::time::Time;

/// A scenario: links between nodes, TCP flows and media streams over them,
/// and how long to run.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioConfig {
    /// The JSON Schema the file follows (`linklab schema`), for editors;
    /// ignored by the runs.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// Scenario name (shown in results).
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Simulated time, e.g. "100s" (> 0).
    pub duration: Time,
    /// Default run seed (the command line's --seed wins). Default 1.
    pub seed: Option<u64>,
    /// Named parameters with defaults (strings, numbers or booleans), referred
    /// to elsewhere as "${name}" and overridden by `--set name=value`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ParamValue>")]
    pub params: toml::Table,
    /// TCP settings shared by all flows (each flow may override).
    #[serde(default)]
    pub tcp: TcpOverlay,
    /// Full-duplex links; node names may be ranges like "S{1..10}".
    #[serde(default)]
    pub links: Vec<LinkConfig>,
    /// TCP flows.
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
    /// Real-time media streams over UDP (docs/models/media.md).
    #[serde(default)]
    pub media: Vec<crate::media::MediaConfig>,
    /// Open-loop workloads: finite TCP flows arriving over the run
    /// (docs/models/workloads.md).
    #[serde(default)]
    pub workloads: Vec<crate::workload::WorkloadConfig>,
    /// cdma2000 SCH allocations: generated rate schedules of mobiles' links
    /// (docs/models/sch-allocation.md).
    #[serde(default)]
    pub allocations: Vec<AllocationConfig>,
    /// Dead periods of a shared buffer and the link buffers it feeds, and
    /// its drops (seed 003; docs/metrics.md).
    pub monitor: Option<MonitorConfig>,
    /// Per-flow delay and jitter histograms with fixed-width bins, as ns-3's
    /// FlowMonitor keeps them: the `histograms` table (docs/metrics.md).
    /// Absent: none (`linklab run --histograms` asks for them too).
    pub histograms: Option<HistogramsConfig>,
}

/// A parameter's default: a string, a number or a boolean.
pub struct ParamValue;

schema_impl!(
    ParamValue,
    "ParamValue",
    serde_json::json!({ "type": ["string", "number", "boolean"] })
);

/// One or more TCP flows from `from` to `to`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Sender node (or a range, zipped with `to`).
    pub from: String,
    /// Receiver node (or a range).
    pub to: String,
    /// Name prefix. Default "FROM->TO".
    pub name: Option<String>,
    /// Parallel flows per (from, to) pair, 1 to 200000. Default 1.
    #[schemars(range(min = 1, max = 200_000))]
    pub count: Option<u32>,
    /// Application start. Default "0s".
    pub start: Option<Time>,
    /// Each flow starts at a uniform random time in [start, start + start_jitter).
    pub start_jitter: Option<Time>,
    /// Application stops offering new data (retransmissions go on); after `start`.
    pub stop: Option<Time>,
    /// Finite transfer of this many bytes (≥ 1); absent = greedy bulk transfer.
    pub bytes: Option<Bytes>,
    /// TCP overrides for these flows.
    pub tcp: Option<TcpOverlay>,
    /// The application offers data at most at this rate (an
    /// application-limited flow). Default: as fast as TCP takes it.
    pub rate_cap: Option<crate::config::Rate>,
    /// On/off application: mean (or, with `on_off = "fixed"`, exact)
    /// duration of its on periods, which alternate with `off` periods in
    /// which it offers nothing. Needs `off`.
    pub on: Option<Time>,
    /// On/off application: mean (or exact) duration of its off periods.
    pub off: Option<Time>,
    /// How on and off periods last: "exponential" (default) or "fixed".
    pub on_off: Option<crate::net::app::OnOffLaw>,
}

impl ScenarioConfig {
    /// An empty scenario of `duration`: add links and flows.
    pub fn new(duration: Time) -> Self {
        ScenarioConfig {
            schema: None,
            name: None,
            description: None,
            duration,
            seed: None,
            params: toml::Table::new(),
            tcp: TcpOverlay::default(),
            links: Vec::new(),
            flows: Vec::new(),
            media: Vec::new(),
            workloads: Vec::new(),
            allocations: Vec::new(),
            monitor: None,
            histograms: None,
        }
    }

    /// Name the scenario.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The TCP settings of every flow.
    pub fn tcp(mut self, tcp: TcpOverlay) -> Self {
        self.tcp = tcp;
        self
    }

    /// Add a link.
    pub fn link(mut self, link: impl Into<LinkConfig>) -> Self {
        self.links.push(link.into());
        self
    }

    /// Add a flow.
    pub fn flow(mut self, flow: FlowConfig) -> Self {
        self.flows.push(flow);
        self
    }
}

impl FlowConfig {
    /// One greedy flow from `from` to `to` (names or ranges), starting at 0.
    pub fn new(from: impl Into<String>, to: impl Into<String>) -> Self {
        FlowConfig {
            from: from.into(),
            to: to.into(),
            ..FlowConfig::default()
        }
    }

    /// Parallel flows per (from, to) pair.
    pub fn count(mut self, count: u32) -> Self {
        self.count = Some(count);
        self
    }

    /// A finite transfer of `bytes`.
    pub fn bytes(mut self, bytes: u64) -> Self {
        self.bytes = Some(Bytes(bytes));
        self
    }

    /// When the application starts.
    pub fn start(mut self, start: Time) -> Self {
        self.start = Some(start);
        self
    }

    /// TCP settings of these flows, over the scenario's.
    pub fn tcp(mut self, tcp: TcpOverlay) -> Self {
        self.tcp = Some(tcp);
        self
    }

    /// Check the keys that need no topology; paths relative to the flow.
    pub fn validate(&self) -> Result<()> {
        let start = self.start.unwrap_or(Time::ZERO);
        if let Some(stop) = self.stop {
            if stop <= start {
                return Err(ConfigError::new(
                    "stop",
                    format!("\"{stop}\""),
                    format!("is not after the start ({start})"),
                ));
            }
        }
        if self.bytes == Some(Bytes(0)) {
            return Err(ConfigError::new(
                "bytes",
                "0",
                "is empty; a finite transfer needs at least 1 byte",
            ));
        }
        if let Some(n) = self.count {
            crate::config::check_range("count", n, 1, crate::net::limits::MAX_FLOWS as u32)?;
        }
        self.app_shape()?;
        Ok(())
    }

    /// The application's pacing (rate cap, on/off), if any.
    pub fn app_shape(&self) -> Result<Option<crate::net::app::AppShape>> {
        crate::net::app::AppShape::of(self.rate_cap, self.on, self.off, self.on_off)
    }
}

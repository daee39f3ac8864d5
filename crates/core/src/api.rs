//! The one entry point the Python binding (and any other front) calls: load a
//! scenario, run it, hand back a summary, columnar traces and packet captures.

use crate::scenario::ScenarioError;

pub use crate::scenario::Run;

/// Where a scenario comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// TOML text (the contents of a scenario file).
    Toml(String),
    /// An already-parsed table (e.g. a Python dict).
    Table(toml::Table),
}

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Run seed; `None` uses the scenario's `seed` (default 1).
    pub seed: Option<u64>,
    /// `--set name=value` overrides of `[params]`, values as typed on the command line.
    pub params: Vec<(String, String)>,
    /// Record traces (cwnd, queue occupancy, sequence numbers).
    pub trace: bool,
    /// Links to capture, each `"A->B"` (one direction) or `"A-B"` (both).
    pub pcap_links: Vec<String>,
}

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

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The summary (see `docs/metrics.md`).
    pub summary: serde_json::Value,
    /// Trace tables (empty unless `trace`).
    pub traces: Vec<Table>,
    /// pcap files: (link spec, file bytes).
    pub pcaps: Vec<(String, Vec<u8>)>,
}

/// Load, validate and run a scenario.
pub fn run(src: Source, opts: &RunOptions) -> Result<RunOutput, ScenarioError> {
    crate::scenario::run(src, opts)
}

/// Load and build a scenario, to run it in slices ([`Run::advance`]) and
/// drain its traces and captures in between.
pub fn start(src: Source, opts: &RunOptions) -> Result<Run, ScenarioError> {
    crate::scenario::start(src, opts)
}

/// The JSON Schema of scenario files.
pub fn json_schema() -> serde_json::Value {
    crate::scenario::json_schema()
}

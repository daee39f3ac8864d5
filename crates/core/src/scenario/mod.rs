//! Scenario files: parsing, `[params]` substitution, validation, building a network.

use crate::api::{RunOptions, RunOutput, Source};

/// A scenario that cannot be run: where, what, and what is allowed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ScenarioError {
    /// Key path of the offending value, e.g. `links[2].ab.loss`.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// Load, validate and run (stub; being written).
pub fn run(_src: Source, _opts: &RunOptions) -> Result<RunOutput, ScenarioError> {
    Err(ScenarioError {
        path: String::new(),
        message: "not yet implemented".into(),
    })
}

/// JSON Schema (stub; being written).
pub fn json_schema() -> serde_json::Value {
    serde_json::json!({})
}

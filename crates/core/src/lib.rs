//! linklab core: deterministic, sans-IO models of TCP over wired and wireless links.
//!
//! Every model is a state machine that takes `now` explicitly, reports when it
//! next needs waking and hands back packets; the [`engine`] drives them in
//! simulated time, and later a live emulator drives the same models with a wall
//! clock. Nothing here does I/O, reads a clock or keeps global state.
#![warn(missing_docs)]

pub mod analytic;
pub mod api;
pub mod aqm;
pub mod capture;
pub mod channel;
pub mod config;
pub mod engine;
pub mod fec;
pub mod link;
pub mod media;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod rng;
pub mod scenario;
pub mod sch;
pub mod tcp;
pub mod time;
pub mod workload;

pub use packet::{FlowId, NodeId, Packet};
pub use time::Time;

//! Run a scenario file from the command line, without Python (for profiling):
//! `cargo run --release --example run -- SCENARIO [SEED] [name=value ...]`.
//! Prints the wall time of each phase: build (load, expand, route, build), run
//! and summary, and the events and packet-hops per wall-second of the run phase.

use std::io::Write;
use std::time::Instant;

use linklab_core::api::{start, RunOptions, Source};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run SCENARIO [SEED] [name=value ...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let mut opts = RunOptions::default();
    for a in args {
        match a.split_once('=') {
            Some((k, v)) => opts.params.push((k.to_string(), v.to_string())),
            None => opts.seed = a.parse().ok(),
        }
    }
    let t0 = Instant::now();
    match start(Source::Toml(text), &opts) {
        Ok(mut run) => {
            let t1 = Instant::now();
            while !run.advance(u64::MAX) {}
            let t2 = Instant::now();
            let hwm_run = peak_rss_kib();
            let output = match run.finish() {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("internal error: {e}");
                    std::process::exit(3);
                }
            };
            let t3 = Instant::now();
            let hwm_finish = peak_rss_kib();
            let s = &output.summary.to_json();
            // Peak RSS (Linux VmHWM) at the run's end, after the typed summary, and after its JSON tree.
            eprintln!(
                "peak RSS KiB: run {} summary {} json {}",
                hwm_run,
                hwm_finish,
                peak_rss_kib()
            );
            let secs = |a: Instant, b: Instant| (b - a).as_secs_f64();
            let mut out = std::io::stdout().lock();
            // Write errors (a closed pipe) are ignored: this is a dev tool.
            let _ = writeln!(
                out,
                "goodput {:.4} Mbit/s  events {}  hops {}  run {:.2} M events/s {:.2} M hops/s  wall {:.3} s (build {:.3}, run {:.3}, summary {:.3})\n{}",
                s["aggregate"]["goodput_bps"].as_f64().unwrap_or(0.0) / 1e6,
                s["events"],
                s["hops"],
                output.summary.network.events as f64 / secs(t1, t2) / 1e6,
                output.summary.network.hops as f64 / secs(t1, t2) / 1e6,
                secs(t0, t3),
                secs(t0, t1),
                secs(t1, t2),
                secs(t2, t3),
                s["aggregate"]
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2)
        }
    }
}

/// The process's peak resident set so far, KiB (Linux `VmHWM`; 0 elsewhere).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

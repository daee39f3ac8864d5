//! Run a scenario file from the command line, without Python (for profiling):
//! `cargo run --release --example run -- SCENARIO [SEED] [name=value ...]`.

use std::io::Write;
use std::time::Instant;

use linklab_core::api::{run, RunOptions, Source};

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
    match run(Source::Toml(text), &opts) {
        Ok(out) => {
            let wall = t0.elapsed().as_secs_f64();
            let s = &out.summary.to_json();
            let mut out = std::io::stdout().lock();
            // Write errors (a closed pipe) are ignored: this is a dev tool.
            let _ = writeln!(
                out,
                "goodput {:.4} Mbit/s  events {}  wall {:.3} s\n{}",
                s["aggregate"]["goodput_bps"].as_f64().unwrap_or(0.0) / 1e6,
                s["events"],
                wall,
                s["aggregate"]
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2)
        }
    }
}

//! Scenarios run live: kernel TCP through the scenario's own link models.

use linklab_core::api::{start, RunOptions, Source};
use linklab_emu::emulate::{emulate, Options};
use linklab_emu::fabric::replay;
use serde_json::json;

/// Emulation tests run one at a time: each spins on a core near its deadlines.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn privileged() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    root && std::path::Path::new("/dev/net/tun").exists()
}

/// One flow A → B over a 10 Mbit/s, 20 ms link with a drop-tail queue of
/// `limit` (the issue's 1-BDP case: 40 ms × 10 Mbit/s = 34 packets of 1500 B),
/// TCP as Linux ships it (which the emulator applies to the kernels).
fn scenario(cc: &str, limit: &str, duration: &str) -> String {
    format!(
        r#"
name = "emu-test"
duration = "{duration}"
[tcp]
cc = "{cc}"
variant = "sack"
timestamps = true
initial_window = 10
min_rto = "200ms"
mss = 1448
[[links]]
a = "A"
b = "B"
rate = "10Mbit"
delay = "20ms"
queue = {{ limit = "{limit}" }}
[[flows]]
from = "A"
to = "B"
"#
    )
}

fn parts(text: &str, seed: u64) -> linklab_core::api::RunParts {
    let opts = RunOptions {
        seed: Some(seed),
        ..RunOptions::default()
    };
    start(Source::Toml(text.to_string()), &opts)
        .unwrap()
        .into_parts()
}

#[test]
fn kernel_cubic_through_a_scenario_link_fills_it_and_replays_alike() {
    if !privileged() {
        println!("SKIP: needs root and /dev/net/tun");
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = scenario("cubic", "34p", "4s");
    let out = emulate(
        parts(&text, 1),
        &Options {
            record: true,
            ..Options::default()
        },
    )
    .unwrap();
    let s = &out.summary;
    let goodput = s["flows"][0]["goodput_bps"].as_f64().unwrap();
    // Payload capacity 10 Mbit/s × 1448/1500; the first ~0.5 s is slow start.
    let share = goodput / (10e6 * 1448.0 / 1500.0);
    println!(
        "goodput share {share:.3}, emulation {}",
        serde_json::to_string(&s["emulation"]).unwrap()
    );
    assert!((0.80..=1.01).contains(&share), "{share}");
    assert_eq!(s["emulation"]["tun_drops"], 0, "{}", s["emulation"]);
    assert_eq!(s["flows"][0]["cc"], "cubic");
    let k = &s["emulation"]["kernel_tcp"]["A"];
    assert_eq!(
        (
            &k["sack"],
            &k["timestamps"],
            &k["initcwnd"],
            &k["rto_min_ms"]
        ),
        (&json!(true), &json!(true), &json!(10), &json!(200))
    );
    // MSS 1448 with timestamps: 1500-byte IP packets on the data direction.
    let size =
        s["links"][0]["tx_bytes"].as_f64().unwrap() / s["links"][0]["tx_packets"].as_f64().unwrap();
    assert!((1400.0..=1500.0).contains(&size), "{size}");
    // The one-way delay of the data: 20 ms plus serialisation and queueing.
    let d50 = s["flows"][0]["delay_p50_s"].as_f64().unwrap();
    assert!((0.0201..0.060).contains(&d50), "{d50}");
    // The link's own counters: the data direction sent what was read.
    let tx = s["links"][0]["tx_packets"].as_u64().unwrap();
    assert!(tx > 2500, "{tx}");
    assert_eq!(s["links"][0]["name"], "A->B");
    assert_eq!(s["queues"][0]["kind"], "droptail");
    // TCP_INFO every 10 ms for ~4 s.
    let rows = out.tcp_info.len();
    assert!((300..=420).contains(&rows), "{rows}");
    assert!(out.tcp_info.iter().any(|r| r.cwnd > 10));
    // The same links, rebuilt from the same scenario and seed, decide every
    // recorded packet alike in simulated time.
    let rec = out.record.unwrap();
    let mut fresh: Vec<_> = parts(&text, 1)
        .network
        .links
        .into_iter()
        .map(|l| l.model)
        .collect();
    let (n, bad) = replay(&mut fresh, &rec);
    println!("replay: {n} decisions, {} mismatches", bad.len());
    assert!(n > 3000);
    assert!(bad.is_empty(), "{:?}", &bad[..bad.len().min(5)]);
}

#[test]
fn what_emulation_cannot_do_is_refused_with_a_reason() {
    // Checked before anything is created, so no root is needed.
    let text = scenario("westwood", "34p", "1s");
    let err = emulate(parts(&text, 1), &Options::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("flows[0].cc") && msg.contains("westwood"),
        "{msg}"
    );
    assert!(msg.contains("allowed here"), "{msg}");
    let text = scenario("cubic", "34p", "7200s");
    let msg = emulate(parts(&text, 1), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("duration"), "{msg}");
    let msg = emulate(
        parts(&scenario("cubic", "34p", "1s"), 1),
        &Options {
            shell: Some("C".into()),
            ..Options::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(msg.contains("--shell") && msg.contains("\"C\""), "{msg}");
}

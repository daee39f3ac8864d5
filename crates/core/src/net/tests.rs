//! End-to-end tests of the simulation built from scenario text.

use proptest::prelude::*;
use serde_json::Value;

use crate::api::run;
use crate::api::{RunOptions, Source};
use crate::scenario::{build, load, parse};
use crate::time::Time;

fn run_text(text: &str, seed: u64) -> Value {
    let opts = RunOptions {
        seed: Some(seed),
        ..RunOptions::default()
    };
    run(Source::Toml(text.to_string()), &opts)
        .unwrap()
        .summary
        .to_json()
}

const CHAIN: &str = r#"
name = "chain"
duration = "20s"
[params]
loss = 0.0
variant = "sack"
[tcp]
variant = "${variant}"
mss = 1460
rwnd = "1MiB"
initial_window = 2
[[links]]
a = "S"
b = "R"
rate = "100Mbit"
delay = "1ms"
[[links]]
a = "R"
b = "M"
rate = "2Mbit"
delay = "25ms"
queue = { limit = "40p" }
ab = { loss = "${loss}" }
[[flows]]
from = "S"
to = "M"
"#;

#[test]
fn single_flow_converges_to_link_rate_times_payload_share() {
    for variant in ["reno", "newreno", "sack"] {
        let text = CHAIN.replace("\"${variant}\"", &format!("\"{variant}\""));
        let loaded = load(parse(&text).unwrap(), &[]).unwrap();
        let (mut sim, _) = build(&loaded, 1).unwrap();
        sim.run(Time::from_secs(10));
        let d0 = sim.summary().to_json()["aggregate"]["delivered_bytes"]
            .as_u64()
            .unwrap();
        sim.run(Time::from_secs(20));
        let d1 = sim.summary().to_json()["aggregate"]["delivered_bytes"]
            .as_u64()
            .unwrap();
        // 1460 payload bytes in 1500-byte packets on a 2 Mbit/s bottleneck whose
        // 40-packet buffer exceeds the path's BDP: once past slow start, the
        // link never idles and goodput is the payload share of its rate.
        let g = (d1 - d0) as f64 * 8.0 / 10.0;
        let share = 2e6 * 1460.0 / 1500.0;
        assert!(g <= share * 1.001, "{variant}: goodput {g} above {share}");
        assert!(
            g >= 0.99 * share,
            "{variant}: steady goodput {g} below {share}"
        );
    }
}

#[test]
fn same_seed_same_result_different_seed_different() {
    let text = CHAIN.replace("loss = 0.0", "loss = 0.02");
    let a = run_text(&text, 7);
    let b = run_text(&text, 7);
    assert_eq!(a, b);
    let c = run_text(&text, 8);
    assert_ne!(a["aggregate"], c["aggregate"]);
}

#[test]
fn parallel_runs_are_identical_to_sequential() {
    let text = CHAIN.replace("loss = 0.0", "loss = 0.02");
    let seq: Vec<Value> = (0..4).map(|s| run_text(&text, s)).collect();
    let par: Vec<Value> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|s| {
                let t = text.clone();
                sc.spawn(move || run_text(&t, s))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(seq, par);
}

#[test]
fn summary_has_the_documented_keys() {
    let s = run_text(CHAIN, 1);
    for k in [
        "scenario",
        "seed",
        "params",
        "sim_time_s",
        "events",
        "hops",
        "aggregate",
        "flows",
        "links",
        "queues",
    ] {
        assert!(s.get(k).is_some(), "missing {k}");
    }
    for k in ["goodput_bps", "delay_mean_s", "timeouts", "retransmits"] {
        assert!(s["aggregate"].get(k).is_some(), "missing aggregate.{k}");
        assert!(s["flows"][0].get(k).is_some(), "missing flows[0].{k}");
    }
    assert_eq!(s["links"].as_array().unwrap().len(), 4);
}

/// `hops` counts what crossed a link direction: the links' own `rx_packets`
/// summed (the network's book and the links' agree), and at least one hop
/// per delivered data segment and per link of its path.
#[test]
fn hops_are_the_packets_that_crossed_a_link_direction() {
    let s = run_text(CHAIN, 1);
    let rx: u64 = s["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["rx_packets"].as_u64().unwrap())
        .sum();
    let hops = s["hops"].as_u64().unwrap();
    assert_eq!(hops, rx);
    let delivered: u64 = s["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["account"]["data"]["delivered"].as_u64().unwrap())
        .sum();
    assert!(delivered > 0 && hops >= 2 * delivered, "{hops} {delivered}");
}

fn bad(text: &str) -> (String, String) {
    let e = run(Source::Toml(text.to_string()), &RunOptions::default()).unwrap_err();
    (e.path.clone(), e.message())
}

#[test]
fn bad_input_names_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("rate = \"2Mbit\"", "rate = \"-2Mbit\"", "links[1]"),
        ("rate = \"2Mbit\"", "rate = \"2Mbps\"", "links[1]"),
        (
            "ab = { loss = \"${loss}\" }",
            "ab = { loss = 1.5 }",
            "links[1].ab.loss",
        ),
        ("mss = 1460", "mss = 0", "tcp.mss"),
        (
            "mss = 1460",
            "mss = 1460\nwindow_cuts = \"ns3\"",
            "tcp.window_cuts",
        ),
        (
            "mss = 1460",
            "mss = 1460\ncc = \"cubic\"\nwindow_cuts = \"ns2\"",
            "tcp.window_cuts",
        ),
        (
            "initial_window = 2",
            "initial_window = 11",
            "tcp.initial_window",
        ),
        (
            "variant = \"${variant}\"",
            "variant = \"vegas\"",
            "tcp.variant",
        ),
        ("to = \"M\"", "to = \"Nowhere\"", "flows[0].to"),
        // Errors in a link's own keys are reported where they are written.
        (
            "queue = { limit = \"40p\" }",
            "queue = { limit = \"40\" }",
            "links[1].queue.limit",
        ),
        (
            "queue = { limit = \"40p\" }",
            "queue = { limit = \"40p\", minth = 3 }",
            "links[1].queue.minth",
        ),
        (
            "queue = { limit = \"40p\" }",
            "queue = { kind = \"red\", limit = \"40p\", minth = 30, maxth = 20 }",
            "links[1].queue.minth",
        ),
        (
            "ab = { loss = \"${loss}\" }",
            "ab = { queue = { kind = \"red\", limit = \"40p\", minth = 50, maxth = 60 } }",
            "links[1].ab.queue.minth",
        ),
        ("delay = \"25ms\"", "delay = 25", "links[1].delay"),
        (
            "variant = \"${variant}\"",
            "variant = \"cubic\"",
            "tcp.variant",
        ),
        ("duration = \"20s\"", "duration = \"20\"", "duration"),
        (
            "delay = \"25ms\"",
            "delay = \"25ms\"\nspeed = 3",
            "links[1]",
        ),
    ];
    for (from, to, path) in cases {
        assert!(CHAIN.contains(from), "test case does not apply: {from}");
        let (p, m) = bad(&CHAIN.replacen(from, to, 1));
        assert!(
            p.starts_with(path),
            "{to}: path '{p}' (message: {m}) should start with {path}"
        );
        assert!(!m.is_empty());
    }
}

#[test]
fn channels_on_wired_links() {
    // A Gilbert-Elliott channel on the slow link loses packets in bursts.
    let ge = CHAIN.replace(
        "ab = { loss = \"${loss}\" }",
        "ab = { channel = { kind = \"gilbert_elliott\", p_good = 0.0, p_bad = 1.0, g = 0.99, b = 0.9, slot = \"10ms\" } }",
    );
    let s = run_text(&ge, 1);
    let lost = s["links"][2]["lost"].as_u64().unwrap();
    let sent = s["links"][2]["tx_packets"].as_u64().unwrap();
    // Stationary bad fraction (1-g)/(2-g-b) = 0.0909 of the slots.
    let rate = lost as f64 / sent as f64;
    assert!(rate > 0.03 && rate < 0.2, "GE loss rate {rate}");
    let cases: &[(&str, &str)] = &[
        ("{ kind = \"gilbert_elliott\", p_good = 0.0, p_bad = 1.0, g = 0.99, b = 0.9 }", "links[1].ab.channel.slot"),
        ("{ kind = \"gilbert_elliott\", p_good = 0.0, p_bad = 1.0, g = 1.0, b = 1.0, slot = \"10ms\" }", "links[1].ab.channel"),
        ("{ kind = \"bernoulli\", p = 0.1, g = 0.5 }", "links[1].ab.channel.g"),
        ("{ kind = \"rayleigh\", fer = 0.1, slot = \"10ms\" }", "links[1].ab.channel.fd_t"),
        ("{ kind = \"rayleigh\", fd_t = 0.01, fer = 1.5, slot = \"10ms\" }", "links[1].ab.channel"),
        ("{ kind = \"fractal\" }", "links[1].ab.channel.kind"),
    ];
    for (chan, path) in cases {
        let text = CHAIN.replace(
            "ab = { loss = \"${loss}\" }",
            &format!("ab = {{ channel = {chan} }}"),
        );
        let (p, m) = bad(&text);
        assert!(
            p.starts_with(path),
            "{chan}: path {p} ({m}) should start with {path}"
        );
    }
    let both = CHAIN.replace(
        "ab = { loss = \"${loss}\" }",
        "ab = { loss = 0.1, channel = { kind = \"bernoulli\", p = 0.1 } }",
    );
    assert!(bad(&both).1.contains("either"));
}

#[test]
fn unconnected_flow_is_refused() {
    let text = CHAIN.to_string() + "[[links]]\na = \"X\"\nb = \"Y\"\nrate = \"1Mbit\"\n[[flows]]\nfrom = \"S\"\nto = \"Y\"\n";
    let (p, m) = bad(&text);
    assert_eq!(p, "flows[1]");
    assert!(m.contains("no path"), "{m}");
}

#[test]
fn set_overrides_params() {
    let opts = RunOptions {
        params: vec![("loss".into(), "0.05".into())],
        ..RunOptions::default()
    };
    let s = run(Source::Toml(CHAIN.to_string()), &opts)
        .unwrap()
        .summary
        .to_json();
    assert_eq!(s["params"]["loss"], serde_json::json!(0.05));
    assert!(
        s["links"][2]["lost"].as_u64().unwrap() > 0,
        "{}",
        s["links"]
    );
}

/// A column of `t` by name.
fn column<'a>(t: &'a crate::api::Table, name: &str) -> &'a crate::api::Column {
    &t.columns.iter().find(|(n, _)| n == name).unwrap().1
}

/// The `rtt`, `rto` and `histograms` tables agree with the summary (issue
/// 35, item 16): an RTO row per timeout (episodes where the back-off is 0),
/// an RTT row per sample ending at the summary's SRTT, and histogram counts
/// adding up to the data packets that arrived (jitter: one fewer).
#[test]
fn rtt_rto_and_histogram_tables_agree_with_the_summary() {
    use crate::api::{Column, Table};
    let opts = RunOptions {
        trace: true,
        histograms: true,
        params: vec![("loss".into(), "0.05".into())],
        ..RunOptions::default()
    };
    let out = run(Source::Toml(CHAIN.to_string()), &opts).unwrap();
    let s = out.summary.to_json();
    let table = |n: &str| -> &Table { out.traces.iter().find(|t| t.name == n).unwrap() };
    let u64s = |t: &str, c: &str| match column(table(t), c) {
        Column::U64(v) => v.clone(),
        other => panic!("{t}.{c}: {other:?}"),
    };
    let f64s = |t: &str, c: &str| match column(table(t), c) {
        Column::F64(v) => v.clone(),
        other => panic!("{t}.{c}: {other:?}"),
    };
    let strs = |t: &str, c: &str| match column(table(t), c) {
        Column::Str(v) => v.clone(),
        other => panic!("{t}.{c}: {other:?}"),
    };
    let flow = &s["flows"][0];
    let timeouts = flow["timeouts"].as_u64().unwrap();
    assert!(timeouts >= 2, "5 % loss over 20 s should time out: {flow}");
    assert_eq!(u64s("rto", "flow").len() as u64, timeouts);
    let episodes = u64s("rto", "backoff").iter().filter(|&&b| b == 0).count() as u64;
    assert_eq!(episodes, flow["timeout_episodes"].as_u64().unwrap());
    let samples = flow["rtt"]["samples"].as_u64().unwrap();
    let srtt = f64s("rtt", "srtt_s");
    assert_eq!(srtt.len() as u64, samples);
    assert_eq!(srtt.last().copied(), flow["rtt"]["srtt_s"].as_f64());
    let least = f64s("rtt", "sample_s")
        .into_iter()
        .fold(f64::INFINITY, f64::min);
    assert_eq!(Some(least), flow["send_limits"]["min_rtt_s"].as_f64());
    // Histograms: every data packet that arrived is one delay value.
    let arrived = strs("seq", "event")
        .iter()
        .filter(|e| *e == "received")
        .count() as u64;
    let (metric, count) = (strs("histograms", "metric"), u64s("histograms", "count"));
    let sum = |m: &str| -> u64 {
        metric
            .iter()
            .zip(&count)
            .filter(|(x, _)| *x == m)
            .map(|(_, c)| c)
            .sum()
    };
    assert!(arrived > 1000, "{arrived}");
    assert_eq!(sum("delay"), arrived);
    assert_eq!(sum("jitter"), arrived - 1);
    // 1 ms bins: the smallest delay is above the path's 26 ms one way.
    let bins = u64s("histograms", "bin");
    assert!(bins[0] >= 26, "{bins:?}");
    assert!(f64s("histograms", "width_s").iter().all(|&w| w == 0.001));
    // Off, no table: histograms alone when only they are on.
    let only = RunOptions {
        histograms: true,
        ..RunOptions::default()
    };
    let out = run(Source::Toml(CHAIN.to_string()), &only).unwrap();
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["histograms"]);
    let plain = run(Source::Toml(CHAIN.to_string()), &RunOptions::default()).unwrap();
    assert!(plain.traces.is_empty());
}

/// `[histograms]` switches them on with its bin widths; a zero width is
/// refused with its key path.
#[test]
fn histograms_table_of_a_scenario() {
    let text = format!("{CHAIN}\n[histograms]\ndelay_bin_width = \"5ms\"\n");
    let out = run(Source::Toml(text.clone()), &RunOptions::default()).unwrap();
    assert_eq!(out.traces.len(), 1);
    let crate::api::Column::F64(w) = column(&out.traces[0], "width_s") else {
        panic!("width_s")
    };
    let crate::api::Column::Str(m) = column(&out.traces[0], "metric") else {
        panic!("metric")
    };
    for (w, m) in w.iter().zip(m) {
        assert_eq!(*w, if m == "delay" { 0.005 } else { 0.001 }, "{m}");
    }
    let bad = text.replace("\"5ms\"", "\"0s\"");
    let e = run(Source::Toml(bad), &RunOptions::default()).unwrap_err();
    assert_eq!(e.path, "histograms.delay_bin_width");
}

#[test]
fn traces_and_capture() {
    let opts = RunOptions {
        trace: true,
        pcap_links: vec!["R->M".into()],
        ..RunOptions::default()
    };
    let out = run(Source::Toml(CHAIN.to_string()), &opts).unwrap();
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["cwnd", "queue", "seq", "drops", "rtt", "rto"]);
    assert_eq!(out.pcaps.len(), 1);
    assert_eq!(&out.pcaps[0].1[..4], &0xa1b23c4du32.to_le_bytes());
    let bad = RunOptions {
        pcap_links: vec!["R->Q".into()],
        ..RunOptions::default()
    };
    let e = run(Source::Toml(CHAIN.to_string()), &bad).unwrap_err();
    assert_eq!(e.path, "--pcap");
}

fn random_scenario(
    hops: usize,
    rates_kbit: &[u64],
    delays_ms: &[u64],
    losses: &[f64],
    qlen: &[u32],
    flows: &[(u64, u8, bool)],
) -> String {
    let mut s = String::from("duration = \"30s\"\n");
    for h in 0..hops {
        s += &format!(
            "[[links]]\na = \"N{h}\"\nb = \"N{}\"\nrate = \"{}kbit\"\ndelay = \"{}ms\"\nloss = {}\nqueue = {{ limit = \"{}p\" }}\n",
            h + 1,
            rates_kbit[h],
            delays_ms[h],
            losses[h],
            qlen[h]
        );
    }
    for (bytes, variant, ecn) in flows {
        // Variant 3: LT-TCP with every building block on.
        let (v, ecn, lt) = match *variant % 4 {
            3 => (
                "sack",
                true,
                ", lt = { ecn_only = true, adaptive_mss = true, proactive_fec = true, reactive_fec = true, mss_min = 64 }",
            ),
            i => (["reno", "newreno", "sack"][i as usize], *ecn, ""),
        };
        s += &format!(
            "[[flows]]\nfrom = \"N0\"\nto = \"N{hops}\"\nbytes = {bytes}\ntcp = {{ variant = \"{v}\", ecn = {ecn}, mss = 536, min_rto = \"200ms\"{lt} }}\n"
        );
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Random small chains: packets are conserved, finite transfers deliver
    /// exactly their bytes (never more), goodput stays below the bottleneck.
    #[test]
    fn random_chains_conserve_and_deliver(
        hops in 1usize..4,
        rates in proptest::collection::vec(200u64..20_000, 3),
        delays in proptest::collection::vec(0u64..40, 3),
        losses in proptest::collection::vec(prop_oneof![Just(0.0), 0.0..0.08f64], 3),
        qlen in proptest::collection::vec(2u32..60, 3),
        flows in proptest::collection::vec((1u64..60_000, 0u8..4, any::<bool>()), 1..4),
        seed in 0u64..1000,
    ) {
        let text = random_scenario(hops, &rates, &delays, &losses, &qlen, &flows);
        let loaded = load(parse(&text).unwrap(), &[]).unwrap();
        let (mut sim, duration) = build(&loaded, seed).unwrap();
        for step in 1..=6u64 {
            sim.run(Time(duration.0 * step / 6));
            let closed = sim.close_accounts();
            prop_assert!(closed.is_ok(), "{:?}", closed.err());
        }
        let s = sim.summary().to_json();
        let bottleneck = rates[..hops].iter().min().unwrap() * 1000;
        let g = s["aggregate"]["goodput_bps"].as_f64().unwrap();
        prop_assert!(g <= bottleneck as f64, "goodput {} > bottleneck {}", g, bottleneck);
        for (i, f) in flows.iter().enumerate() {
            let d = s["flows"][i]["delivered_bytes"].as_u64().unwrap();
            prop_assert!(d <= f.0, "flow {} delivered {} > {}", i, d, f.0);
            if !s["flows"][i]["completed_s"].is_null() {
                prop_assert_eq!(d, f.0);
            }
        }
        // Loss-free chains must finish every transfer well within 30 s. Not
        // asked of LT-TCP (variant 3): its ECN-only response reads the
        // drop-tail queues' congestion losses as erasures (the paper assumes
        // an ECN network), so a 2-packet queue can hold it in RTO back-off.
        if losses[..hops].iter().all(|&l| l == 0.0) {
            for (i, f) in flows.iter().enumerate().filter(|(_, f)| f.1 % 4 != 3) {
                prop_assert_eq!(s["flows"][i]["delivered_bytes"].as_u64().unwrap(), f.0, "{}", text);
            }
        }
    }
}

const UMTS: &str = r#"
duration = "20s"
[tcp]
variant = "reno"
mss = 1460
[[links]]
a = "S"
b = "RNC"
rate = "1Mbit"
delay = "100ms"
[[links]]
a = "RNC"
b = "UE"
kind = "rlc_am"
preset = "seed000"
rate = "384kbit"
buffer = "40p"
channel = { kind = "rayleigh", fd_t = 0.01, fer = 0.1 }
[[flows]]
from = "S"
to = "UE"
"#;

#[test]
fn umts_bearer_runs_and_conserves() {
    let loaded = load(parse(UMTS).unwrap(), &[]).unwrap();
    let (mut sim, d) = build(&loaded, 3).unwrap();
    sim.run(d);
    sim.close_accounts().unwrap();
    let s = sim.summary().to_json();
    let g = s["aggregate"]["goodput_bps"].as_f64().unwrap();
    assert!(g > 150e3 && g < 384e3, "goodput {g}");
    assert_eq!(s["queues"][2]["kind"], "droptail");
    // RLC counters on the bearer's entries only; efficiency = delivered / air.
    assert!(s["links"][0].get("rlc").is_none());
    let down = &s["links"][2]["rlc"];
    let air = down["air_bytes"].as_u64().unwrap();
    let useful = down["delivered_bytes"].as_u64().unwrap();
    let eff = down["efficiency"].as_f64().unwrap();
    assert!(air > 0 && useful > 0);
    assert!((eff - useful as f64 / air as f64).abs() < 1e-12);
    // 10 % frame errors and 42-byte PDUs for 40 payload bytes: well below 1.
    assert!(eff > 0.5 && eff < 0.9, "efficiency {eff}");
    assert_eq!(down["sdus_delivered"], s["links"][2]["rx_packets"]);
}

#[test]
fn max_dat_accepts_a_number_written_as_text() {
    // A string parameter defaulting to "none" gives "4" for `--set max_dat=4`.
    let text = UMTS.replacen("buffer = \"40p\"", "buffer = \"40p\"\nmax_dat = \"4\"", 1);
    let a = run(Source::Toml(text), &RunOptions::default()).unwrap();
    let text = UMTS.replacen("buffer = \"40p\"", "buffer = \"40p\"\nmax_dat = 4", 1);
    let b = run(Source::Toml(text), &RunOptions::default()).unwrap();
    assert_eq!(a.summary.to_json()["links"], b.summary.to_json()["links"]);
}

#[test]
fn umts_bad_input_names_the_rule() {
    let cases: &[(&str, &str, &str)] = &[
        // SBD minth >= maxth
        ("buffer = \"40p\"", "buffer = \"40p\"\nqueue = { kind = \"sbd\", minth = 40, maxth = 30, tr = \"1s\", alpha = 5 }", "links[1].queue.minth"),
        // alpha <= 0
        ("buffer = \"40p\"", "buffer = \"40p\"\nqueue = { kind = \"sbd\", minth = 20, maxth = 40, tr = \"1s\", alpha = 0 }", "links[1].queue.alpha"),
        // maxth above the bearer's buffer
        ("buffer = \"40p\"", "buffer = \"40p\"\nqueue = { kind = \"sbd\", minth = 20, maxth = 50, tr = \"1s\", alpha = 5 }", "links[1].queue.maxth"),
        ("buffer = \"40p\"", "buffer = \"40p\"\nqueue = { kind = \"red\", limit = \"40p\", minth = 20, maxth = 40 }", "links[1].queue.limit"),
        // a PDU payload that does not fit the bearer's TTI (8 kbit/s * 10 ms = 80 bits < 320)
        ("rate = \"384kbit\"", "rate = \"8kbit\"", "links[1].rate"),
        ("rate = \"384kbit\"", "rate = \"384kbit\"\nab = { rate_schedule = [{ at = \"0s\", rate = \"8kbit\" }] }", "links[1].ab"),
        ("rate = \"384kbit\"", "rate_schedule = [{ at = \"0s\", rate = \"8kbit\" }]", "links[1].rate_schedule[0].rate"),
        // a rate schedule going backwards in time
        ("rate = \"384kbit\"", "rate_schedule = [{ at = \"0s\", rate = \"384kbit\" }, { at = \"50s\", rate = \"128kbit\" }, { at = \"40s\", rate = \"64kbit\" }]", "links[1].rate_schedule[2].at"),
        ("rate = \"384kbit\"", "rate_schedule = [{ at = \"1s\", rate = \"384kbit\" }]", "links[1].rate_schedule[0].at"),
        ("preset = \"seed000\"", "preset = \"lte\"", "links[1].preset"),
        ("buffer = \"40p\"", "buffer = \"40p\"\nmax_dat = \"sometimes\"", "links[1].max_dat"),
        ("buffer = \"40p\"", "buffer = \"40p\"\nmax_dat = \"0\"", "links[1].max_dat"),
        ("buffer = \"40p\"", "buffer = \"40p\"\nepc = \"sometimes\"", "links[1].epc"),
        ("buffer = \"40p\"", "buffer = \"40p\"\nloss = 0.1", "links[1].loss"),
        ("delay = \"100ms\"", "delay = \"100ms\"\ntti = \"10ms\"", "links[0].tti"),
        ("buffer = \"40p\"", "buffer = \"40p\"\nqueue = { kind = \"sbd\", minth = 20, maxth = 40, tr = \"1s\", alpha = 5, maxp = 0.1 }", "links[1].queue.maxp"),
    ];
    for (from, to, path) in cases {
        assert!(UMTS.contains(from), "test case does not apply: {from}");
        let (p, m) = bad(&UMTS.replacen(from, to, 1));
        assert!(
            p.starts_with(path),
            "{to}: path '{p}' ({m}) should start with {path}"
        );
    }
}

#[test]
fn rate_switch_applies_the_aqm_table() {
    let text = UMTS.replace(
        "rate = \"384kbit\"",
        "rate_schedule = [{ at = \"0s\", rate = \"384kbit\" }, { at = \"10s\", rate = \"128kbit\" }]\n\
         aqm_table = [\n\
           { rate = \"384kbit\", queue = { kind = \"sbd\", minth = 20, maxth = 40, tr = \"200ms\", alpha = 5 } },\n\
           { rate = \"128kbit\", queue = { kind = \"sbd\", minth = 15, maxth = 40, tr = \"1300ms\", alpha = 5 } },\n\
         ]",
    );
    let s = run_text(&text, 1);
    assert_eq!(s["queues"][2]["kind"], "sbd", "{}", s["queues"][2]);
    let g = s["aggregate"]["goodput_bps"].as_f64().unwrap();
    assert!(g > 80e3 && g < 384e3, "goodput {g}");
}

/// CHAIN with link-level FEC `fec` on the lossy direction R->M.
fn chain_fec(fec: &str) -> String {
    let from = "ab = { loss = \"${loss}\" }";
    assert!(CHAIN.contains(from));
    CHAIN.replace(
        from,
        &format!("ab = {{ loss = \"${{loss}}\", fec = {fec} }}"),
    )
}

fn with_loss(text: &str, loss: f64) -> Value {
    let opts = RunOptions {
        seed: Some(1),
        params: vec![("loss".into(), loss.to_string())],
        ..RunOptions::default()
    };
    run(Source::Toml(text.to_string()), &opts)
        .unwrap()
        .summary
        .to_json()
}

#[test]
fn link_fec_end_to_end() {
    // Hybrid (10, 9) with ARQ persistence 3 at 10 % fragment erasure leaves
    // ~0.26^4 residual loss: far better than the bare link at 10 % loss.
    let hybrid = chain_fec("{ scheme = \"hybrid\", loss_unit = \"fragment\" }");
    let s = with_loss(&hybrid, 0.1);
    let f = &s["links"][2]["fec"];
    assert_eq!(s["links"][2]["name"], "R->M");
    assert!((f["overhead"].as_f64().unwrap() - 0.1).abs() < 1e-12);
    assert!(f["recovered_by_fec"].as_u64().unwrap() > 0);
    assert!(f["recovered_by_arq"].as_u64().unwrap() > 0);
    let bare = with_loss(CHAIN, 0.1);
    let g = |s: &Value| s["aggregate"]["goodput_bps"].as_f64().unwrap();
    assert!(
        g(&s) > 3.0 * g(&bare),
        "hybrid {} vs bare {}",
        g(&s),
        g(&bare)
    );
    assert!(
        s["links"][0].get("fec").is_none(),
        "only the FEC direction reports it"
    );
    // Matched LL-FEC: k = 9 at a 20 % fragment rate needs r = ⌈9·0.2/0.8⌉ = 3.
    let matched = chain_fec(
        "{ scheme = \"ll-fec\", k = 9, matched_per = \"link\", loss_unit = \"fragment\" }",
    );
    let s = with_loss(&matched, 0.2);
    let f = &s["links"][2]["fec"];
    assert!((f["overhead"].as_f64().unwrap() - 3.0 / 12.0).abs() < 1e-12);
    assert_eq!(f["retransmissions"], 0);
    // With loss_unit = "packet", 10 % per 500-byte packet is a much smaller
    // fragment rate: (10, 9) FEC alone then loses almost nothing.
    let conv = chain_fec("{ scheme = \"ll-fec\", n = 10, k = 9 }");
    let s = with_loss(&conv, 0.1);
    let f = &s["links"][2]["fec"];
    let erased = f["fragments_erased"].as_f64().unwrap() / f["fragments_sent"].as_f64().unwrap();
    // CHAIN's data packets are 1500 bytes: fragments of 167 bytes.
    let q = crate::fec::unit_erasure(0.1, 500, 167);
    assert!((erased - q).abs() < 0.01, "{erased} vs {q}");
}

#[test]
fn link_fec_conserves_packets_in_a_network() {
    // Mid-run, packets held by the FEC/ARQ layer (awaiting retransmission or
    // in-order release) are counted inside the link.
    let text =
        chain_fec("{ scheme = \"hybrid\", loss_unit = \"fragment\", feedback_delay = \"30ms\" }");
    link_fec_conserves(&text);
    link_fec_conserves(&chain_fec(
        "{ scheme = \"hybrid\", loss_unit = \"fragment\", feedback = \"ideal\" }",
    ));
}

fn link_fec_conserves(text: &str) {
    let loaded = load(parse(text).unwrap(), &[("loss".into(), "0.15".into())]).unwrap();
    let (mut sim, d) = build(&loaded, 4).unwrap();
    for step in 1..=7u64 {
        sim.run(Time(d.0 * step / 7));
        sim.close_accounts().unwrap();
    }
}

#[test]
fn link_fec_bad_input_names_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "{ scheme = \"ll-fec\", n = 256, k = 9 }",
            "links[1].ab.fec.n",
        ),
        (
            "{ scheme = \"ll-fec\", n = 10, k = 10 }",
            "links[1].ab.fec.k",
        ),
        (
            "{ scheme = \"ll-fec\", n = 10, k = 0 }",
            "links[1].ab.fec.k",
        ),
        (
            "{ scheme = \"hybrid\", n = 10, k = 12 }",
            "links[1].ab.fec.k",
        ),
        ("{ scheme = \"ll-fec\", n = 10 }", "links[1].ab.fec.k"),
        ("{ scheme = \"ll-fec\" }", "links[1].ab.fec.n"),
        (
            "{ scheme = \"hybrid\", persistence = -1 }",
            "links[1].ab.fec.persistence",
        ),
        (
            "{ scheme = \"ll-fec\", n = 10, k = 9, persistence = 3 }",
            "links[1].ab.fec.persistence",
        ),
        (
            "{ scheme = \"hybrid\", feedback_delay = \"soon\" }",
            "links[1].ab.fec.feedback_delay",
        ),
        (
            "{ scheme = \"hybrid\", feedback = \"ideal\", feedback_delay = \"1ms\" }",
            "links[1].ab.fec.feedback_delay",
        ),
        (
            "{ scheme = \"hybrid\", feedback = \"soon\" }",
            "links[1].ab.fec.feedback",
        ),
        (
            "{ scheme = \"ll-fec\", k = 9, matched_per = 1.5 }",
            "links[1].ab.fec.matched_per",
        ),
        (
            "{ scheme = \"ll-fec\", k = 9, matched_per = \"auto\" }",
            "links[1].ab.fec.matched_per",
        ),
        (
            "{ scheme = \"ll-fec\", k = 200, matched_per = 0.5, loss_unit = \"fragment\" }",
            "links[1].ab.fec.matched_per",
        ),
        (
            "{ scheme = \"ll-fec\", n = 3, matched_per = 0.9, loss_unit = \"fragment\" }",
            "links[1].ab.fec.matched_per",
        ),
        (
            "{ scheme = \"ll-fec\", n = 12, k = 9, matched_per = 0.1 }",
            "links[1].ab.fec.n",
        ),
        (
            "{ scheme = \"ll-fec\", matched_per = 0.1 }",
            "links[1].ab.fec.k",
        ),
        (
            "{ scheme = \"ll-fec\", n = 10, k = 9, loss_unit = \"bit\" }",
            "links[1].ab.fec.loss_unit",
        ),
        (
            "{ scheme = \"ll-fec\", n = 10, k = 9, per_size = 0 }",
            "links[1].ab.fec.per_size",
        ),
        (
            "{ scheme = \"raptor\", n = 10, k = 9 }",
            "links[1].ab.fec.scheme",
        ),
        (
            "{ scheme = \"ll-fec\", n = 10, k = 9, m = 3 }",
            "links[1].ab.fec",
        ),
    ];
    for (fec, path) in cases {
        let (p, m) = bad(&chain_fec(fec));
        assert!(
            p.starts_with(path),
            "{fec}: path '{p}' (message: {m}) should start with {path}"
        );
        assert!(!m.is_empty());
    }
    // A channel's units are fragments: loss_unit does not apply.
    let text = CHAIN.replace(
        "ab = { loss = \"${loss}\" }",
        "ab = { channel = { kind = \"bernoulli\", p = 0.1 }, fec = { scheme = \"hybrid\", loss_unit = \"packet\" } }",
    );
    assert_eq!(bad(&text).0, "links[1].ab.fec.loss_unit");
}

#[test]
fn shipped_link_fec_scenarios_match_the_paper_codes() {
    // LL-FEC with n = 10: k matched to the erasure rate, R/N = PER (seed 002 §3.3).
    let llfec = include_str!("../../../../scenarios/dumbbell-ll-fec.toml");
    for (per, k) in [
        (0.0, 10.0),
        (0.1, 9.0),
        (0.2, 8.0),
        (0.3, 7.0),
        (0.4, 6.0),
        (0.5, 5.0),
    ] {
        let loaded = load(
            parse(llfec).unwrap(),
            &[
                ("per".into(), per.to_string()),
                ("duration".into(), "1s".into()),
            ],
        )
        .unwrap();
        let (mut sim, d) = build(&loaded, 1).unwrap();
        sim.run(d);
        let s = sim.summary().to_json();
        let lr = s["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == "L->R")
            .unwrap();
        let ovh = lr["fec"]["overhead"].as_f64().unwrap();
        assert!(
            (ovh - (10.0 - k) / 10.0).abs() < 1e-12,
            "per {per}: overhead {ovh}"
        );
    }
    // Hybrid: (10, 9), persistence 3, on L->R only.
    let hybrid = include_str!("../../../../scenarios/dumbbell-ll-hybrid.toml");
    let loaded = load(
        parse(hybrid).unwrap(),
        &[
            ("per".into(), "0.1".into()),
            ("duration".into(), "2s".into()),
        ],
    )
    .unwrap();
    let (mut sim, d) = build(&loaded, 1).unwrap();
    sim.run(d);
    let s = sim.summary().to_json();
    let with_fec: Vec<&Value> = s["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l.get("fec").is_some())
        .collect();
    assert_eq!(with_fec.len(), 1);
    assert_eq!(with_fec[0]["name"], "L->R");
    assert!((with_fec[0]["fec"]["overhead"].as_f64().unwrap() - 0.1).abs() < 1e-12);
    assert!(with_fec[0]["fec"]["retransmissions"].as_u64().unwrap() > 0);
}

const LT_TCP: &str = include_str!("../../../../scenarios/dumbbell-lt-tcp.toml");

fn lt_run(params: &[(&str, &str)], seed: u64) -> Value {
    let opts = RunOptions {
        seed: Some(seed),
        params: params
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..RunOptions::default()
    };
    run(Source::Toml(LT_TCP.to_string()), &opts)
        .unwrap()
        .summary
        .to_json()
}

#[test]
fn lt_tcp_beats_sack_under_erasures_and_reports_its_blocks() {
    let common = [("flows", "4"), ("duration", "15s"), ("per", "0.1")];
    let lt = lt_run(&common, 3);
    let mut sack_params = common.to_vec();
    for k in ["ecn_only", "adaptive_mss", "proactive", "reactive"] {
        sack_params.push((k, "false"));
    }
    let sack = lt_run(&sack_params, 3);
    let g = |s: &Value| s["aggregate"]["goodput_bps"].as_f64().unwrap();
    assert!(g(&lt) > 3.0 * g(&sack), "{} vs {}", g(&lt), g(&sack));
    let a = &lt["aggregate"];
    assert!(a["lt"]["blocks_rebuilt"].as_u64().unwrap() > 100);
    let pro = a["lt"]["proactive_overhead_pct"].as_f64().unwrap();
    assert!((5.0..60.0).contains(&pro), "{pro}");
    assert!(a["throughput_bps"].as_f64().unwrap() > g(&lt));
    let f = &lt["flows"][0]["lt"];
    let e = f["erasure_estimate"].as_f64().unwrap();
    assert!((0.03..0.3).contains(&e), "E = {e}");
    assert!(f["mss"].as_u64().unwrap() <= 448);
    assert!(sack["aggregate"].get("lt").is_none());
}

#[test]
fn lt_tcp_initial_estimate_sets_e_before_the_first_window() {
    // Without erasures E stays where it starts (eq. 1: a window without
    // erasures leaves it unchanged): 0 gives no proactive repairs, 0.2 gives
    // repairs from the first block on and keeps E at 0.2.
    let run_with = |e0: &str| {
        let text = LT_TCP.replace(
            "estimator = \"${estimator}\"",
            &format!("estimator = \"${{estimator}}\"\ninitial_estimate = {e0}"),
        );
        let opts = RunOptions {
            seed: Some(1),
            params: [("flows", "2"), ("duration", "5s"), ("per", "0")]
                .iter()
                .map(|&(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..RunOptions::default()
        };
        run(Source::Toml(text), &opts).unwrap().summary.to_json()
    };
    let (zero, start) = (run_with("0.0"), run_with("0.2"));
    let repairs = |s: &Value| s["flows"][0]["lt"]["repairs_proactive"].as_u64().unwrap();
    assert_eq!(repairs(&zero), 0);
    assert!(repairs(&start) > 100, "{}", repairs(&start));
    let e = start["flows"][0]["lt"]["erasure_estimate"]
        .as_f64()
        .unwrap();
    assert!((e - 0.2).abs() < 1e-12, "E = {e}");
}

#[test]
fn lt_tcp_bad_input_names_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "mss_min = \"${mss_min}\"",
            "mss_min = 500",
            "tcp.lt.mss_min",
        ),
        (
            "g_min_segments = \"${g}\"",
            "g_min_segments = 0",
            "tcp.lt.g_min_segments",
        ),
        ("[1.0, 11]]", "[0.9, 11]]", "tcp.lt.proactive_bins"),
        (
            "reactive_bins = [[0.001, 0]",
            "reactive_bins = [[0.5, 0], [0.4, 1]",
            "tcp.lt.reactive_bins",
        ),
        (
            "[0.001, 0], [0.05, 1]",
            "[0.001, -1], [0.05, 1]",
            "tcp.lt.proactive_bins[0]",
        ),
        (
            "mss_min = \"${mss_min}\"",
            "mss_min = 100\nblock_max = 256",
            "tcp.lt.block_max",
        ),
        (
            "estimator = \"${estimator}\"",
            "estimator = \"oracle\"",
            "tcp.lt.estimator",
        ),
        (
            "mss_min = \"${mss_min}\"",
            "mss_min = 100\ninitial_estimate = 1.0",
            "tcp.lt.initial_estimate",
        ),
        (
            "reactive_limit = \"inventory\"",
            "reactive_limit = \"holes\"",
            "tcp.lt.reactive_limit",
        ),
        (
            "reactive_in_window = false",
            "reactive_in_window = \"yes\"",
            "tcp.lt.reactive_in_window",
        ),
        (
            "mss_min = \"${mss_min}\"",
            "mss_min = 100\nmss_max = 1000",
            "tcp.lt.mss_max",
        ),
        ("variant = \"sack\"", "variant = \"newreno\"", "tcp.lt"),
        ("ecn = true", "ecn = false", "tcp.lt.ecn_only"),
        (
            "mss_min = \"${mss_min}\"",
            "mss_min = 100\nspeed = 1",
            "tcp.lt",
        ),
    ];
    for (from, to, path) in cases {
        assert!(LT_TCP.contains(from), "test case does not apply: {from}");
        let (p, m) = bad(&LT_TCP.replacen(from, to, 1));
        assert!(
            p.starts_with(path),
            "{to}: path '{p}' (message: {m}) should start with {path}"
        );
        assert!(!m.is_empty());
    }
}

/// Append the columns of `more` to `into` (tables in the same order).
fn append_tables(into: &mut Vec<crate::api::Table>, more: Vec<crate::api::Table>) {
    use crate::api::Column;
    if into.is_empty() {
        *into = more;
        return;
    }
    assert_eq!(into.len(), more.len(), "every piece has the same tables");
    for (a, b) in into.iter_mut().zip(more) {
        assert_eq!(a.name, b.name);
        for ((na, ca), (nb, cb)) in a.columns.iter_mut().zip(b.columns) {
            assert_eq!(*na, nb);
            match (ca, cb) {
                (Column::F64(x), Column::F64(y)) => x.extend(y),
                (Column::U64(x), Column::U64(y)) => x.extend(y),
                (Column::Str(x), Column::Str(y)) => x.extend(y),
                _ => panic!("column {na} changed type"),
            }
        }
    }
}

/// Append the pcap pieces `more` to `into` (captures in the same order).
fn append_pcaps(into: &mut Vec<(String, Vec<u8>)>, more: Vec<(String, Vec<u8>)>) {
    if into.is_empty() {
        *into = more;
        return;
    }
    for ((name, bytes), (other, piece)) in into.iter_mut().zip(more) {
        assert_eq!(*name, other);
        bytes.extend(piece);
    }
}

#[test]
fn sliced_runs_with_drained_traces_equal_one_run() {
    use crate::api::{start, Column};
    let lt = include_str!("../../../../scenarios/dumbbell-lt-tcp.toml");
    let arq = include_str!("../../testdata/arq_adaptive.toml");
    let cases = [
        (CHAIN, &[("loss", "0.02")][..], "R-M"),
        (
            lt,
            &[("flows", "3"), ("duration", "6s"), ("per", "0.05")],
            "L-R",
        ),
        (arq, &[("duration", "40s")], "R->M"),
    ];
    for (text, params, pcap) in cases {
        let opts = RunOptions {
            seed: Some(2),
            params: params
                .iter()
                .map(|&(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            trace: true,
            histograms: true,
            pcap_links: vec![pcap.to_string()],
            ..RunOptions::default()
        };
        let whole = run(Source::Toml(text.to_string()), &opts).unwrap();
        for budget in [1, 97, 1_000] {
            let mut r = start(Source::Toml(text.to_string()), &opts).unwrap();
            let (mut traces, mut pcaps) = (Vec::new(), Vec::<(String, Vec<u8>)>::new());
            let mut slices = 0;
            while !r.advance(budget) {
                slices += 1;
                let (t, p) = r.drain();
                append_tables(&mut traces, t);
                append_pcaps(&mut pcaps, p);
            }
            assert!(slices > 1, "{budget}: {slices} slices");
            let last = r.finish().unwrap();
            append_tables(&mut traces, last.traces);
            append_pcaps(&mut pcaps, last.pcaps);
            assert_eq!(
                last.summary.to_json(),
                whole.summary.to_json(),
                "budget {budget}"
            );
            assert_eq!(pcaps, whole.pcaps, "budget {budget}");
            // NaN cells (arq) compare equal as text.
            for (a, b) in traces.iter().zip(&whole.traces) {
                for ((name, x), (_, y)) in a.columns.iter().zip(&b.columns) {
                    let (x, y) = (format!("{x:?}"), format!("{y:?}"));
                    let at = x.bytes().zip(y.bytes()).position(|(p, q)| p != q);
                    assert!(
                        at.is_none() && x.len() == y.len(),
                        "budget {budget}: {}.{name} differs at {at:?}: {} | {}",
                        a.name,
                        &x[at.unwrap_or(0).saturating_sub(60)..][..120.min(x.len())],
                        &y[at.unwrap_or(0).saturating_sub(60)..][..120.min(y.len())],
                    );
                }
            }
            assert_eq!(traces.len(), whole.traces.len());
        }
        // Every table is in time order (the histograms have no time).
        for t in whole.traces.iter().filter(|t| t.name != "histograms") {
            let Some((_, Column::F64(ts))) = t.columns.iter().find(|(n, _)| n == "time_s") else {
                panic!("{} has no time_s", t.name);
            };
            assert!(
                ts.windows(2).all(|w| w[0] <= w[1]),
                "{} not in time order",
                t.name
            );
        }
        let names: Vec<&str> = whole.traces.iter().map(|t| t.name.as_str()).collect();
        assert!(names.len() >= 3, "{names:?}");
    }
}

#[test]
fn size_caps_and_an_empty_network_are_refused() {
    use crate::net::limits::{MAX_FLOWS, MAX_LINKS, MAX_NODES};
    use crate::net::NetworkBuilder;
    let check = NetworkBuilder::check_size;
    assert!(check(MAX_NODES, MAX_LINKS, MAX_FLOWS).is_ok());
    let e = check(MAX_NODES + 1, 1, 1).unwrap_err();
    assert!(
        e.contains("1000001 nodes") && e.contains("MAX_NODES"),
        "{e}"
    );
    let e = check(2, MAX_LINKS + 1, 1).unwrap_err();
    assert!(e.contains("links") && e.contains("MAX_LINKS"), "{e}");
    let e = check(2, 1, MAX_FLOWS + 1).unwrap_err();
    assert!(
        e.contains("200001 flows") && e.contains("at most 200000"),
        "{e}"
    );
    // Through the scenario: nothing to simulate.
    let e = run(
        Source::Toml("duration = \"2s\"".into()),
        &RunOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.path, "links", "{e}");
    let links_only = CHAIN.split("[[flows]]").next().unwrap().to_string();
    let e = run(Source::Toml(links_only), &RunOptions::default()).unwrap_err();
    assert_eq!(e.path, "flows", "{e}");
}

#[test]
fn a_flow_from_a_node_to_itself_is_refused() {
    let text = CHAIN.to_string() + "[[flows]]\nfrom = \"R\"\nto = \"R\"\n";
    let (p, m) = bad(&text);
    assert_eq!(p, "flows[1]");
    assert!(
        m.contains("two different nodes") && m.contains("'R'"),
        "{m}"
    );
}

/// Regression (issue 33): CoDel's dequeue-time drops asked for a wake-up "at
/// once" (time zero), which the wake-up bookkeeping kept as live forever, so
/// the bottleneck was never woken again and every packet on its wire
/// vanished: 4 CUBIC flows over a 1000-packet CoDel queue delivered
/// 0.16 Mbit/s of 10. Now they fill the link, and CoDel keeps its delay
/// near the target.
#[test]
fn codel_dequeue_drops_do_not_strand_the_link() {
    for (queue, mss) in [("codel", 448), ("codel", 1448), ("fq_codel", 1448)] {
        let text = format!(
            r#"
duration = "100s"
[tcp]
cc = "cubic"
variant = "sack"
mss = {mss}
timestamps = true
initial_window = 10
delayed_ack = true
rwnd = "4MiB"
[[links]]
a = "S{{1..4}}"
b = "L"
rate = "100Mbit"
delay = "1ms"
queue = {{ limit = "1000p" }}
[[links]]
a = "L"
b = "R"
rate = "10Mbit"
delay = "20ms"
queue = {{ kind = "{queue}", limit = "1000p" }}
[[links]]
a = "R"
b = "D{{1..4}}"
rate = "100Mbit"
delay = "1ms"
queue = {{ limit = "1000p" }}
[[flows]]
from = "S{{1..4}}"
to = "D{{1..4}}"
start_jitter = "1s"
"#
        );
        let s = run_text(&text, 1);
        // Payload share of a packet: MSS + 12 timestamp + 20 TCP + 20 IP bytes.
        let share = f64::from(mss) / f64::from(mss + 52);
        let g = s["aggregate"]["goodput_bps"].as_f64().unwrap();
        assert!(g > 0.9 * share * 10e6, "{queue} mss {mss}: goodput {g}");
        let q = s["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["link"] == "L->R")
            .unwrap();
        let delay = q["mean_bytes"].as_f64().unwrap() * 8.0 / 10e6;
        // Slow start overshoots to ~500 packets in the first seconds; after
        // that CoDel holds about its target (5 ms; 12-13 packets of 500 B):
        // over the whole run, within three targets.
        assert!(delay < 0.015, "{queue} mss {mss}: mean queueing {delay} s");
    }
}

/// Regression (issue 33): one NewReno flow with SACK and RACK-TLP over a
/// 1000-packet PIE queue settled at PIE dropping half of its packets (49 %
/// of 246,000 in 60 s) at full goodput: a fast retransmit set ssthresh to
/// half of snd_nxt − snd_una, which under lost retransmissions spans several
/// windows of data known lost, so each loss raised the window and PIE's
/// probability climbed to hold its delay. A window-halving flow at 10 Mbit/s
/// and a 60 ms RTT (140 segments of 536 B) needs a drop rate near
/// (1.22 / 140)² ≈ 8·10⁻⁵ (Mathis et al. 1997); more than 1 % is a runaway.
/// Halving from one BDP (44 ms) plus PIE's 15 ms target leaves 29.5 ms of
/// data in flight, so such a flow keeps the link at least ~80 % busy.
#[test]
fn rack_under_pie_does_not_run_away() {
    let text = r#"
duration = "20s"
[tcp]
variant = "sack"
rack = true
prr = true
rto_keeps_sack = true
mss = 536
timestamps = true
initial_window = 10
delayed_ack = true
rwnd = "1MiB"
[[links]]
a = "S"
b = "L"
rate = "100Mbit"
delay = "1ms"
queue = { limit = "1000p" }
[[links]]
a = "L"
b = "R"
rate = "10Mbit"
delay = "20ms"
queue = { kind = "pie", limit = "1000p" }
[[links]]
a = "R"
b = "D"
rate = "100Mbit"
delay = "1ms"
queue = { limit = "1000p" }
[[flows]]
from = "S"
to = "D"
"#;
    let s = run_text(text, 1);
    let q = s["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["link"] == "L->R")
        .unwrap();
    let arrivals = q["arrivals"].as_f64().unwrap();
    let early = q["drops"]["aqm_early"].as_f64().unwrap();
    assert!(early < 0.01 * arrivals, "PIE dropped {early} of {arrivals}");
    let g = s["aggregate"]["goodput_bps"].as_f64().unwrap();
    assert!(g > 0.8 * 10e6 * 536.0 / 588.0, "goodput {g}");
}

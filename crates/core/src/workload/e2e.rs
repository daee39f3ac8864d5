//! Workloads end to end: runs of small scenarios through the scenario layer.

use crate::api::{start, RunOptions, Source};

/// A dumbbell-like path S{1..4} → R → D{1..2} with `workload` appended.
fn scenario(duration: &str, workload: &str) -> String {
    format!(
        "duration = \"{duration}\"\n\
         [[links]]\na = \"S{{1..4}}\"\nb = \"R\"\nrate = \"100Mbit\"\ndelay = \"1ms\"\n\
         [[links]]\na = \"R\"\nb = \"M\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\nqueue = {{ kind = \"droptail\", limit = \"200p\" }}\n\
         [[links]]\na = \"M\"\nb = \"D{{1..2}}\"\nrate = \"100Mbit\"\ndelay = \"1ms\"\n\
         [[workloads]]\nfrom = \"S{{1..4}}\"\nto = \"D{{1..2}}\"\n{workload}"
    )
}

fn run(text: &str, seed: u64) -> crate::api::RunOutput {
    let opts = RunOptions {
        seed: Some(seed),
        ..RunOptions::default()
    };
    start(Source::Toml(text.to_string()), &opts)
        .unwrap()
        .finish()
        .unwrap()
}

fn column<'a>(out: &'a crate::api::RunOutput, name: &str) -> &'a crate::metrics::Column {
    let t = out
        .traces
        .iter()
        .find(|t| t.name == "fct")
        .expect("fct table");
    &t.columns.iter().find(|c| c.0 == name).expect("column").1
}

#[test]
fn alone_on_the_path_every_flow_has_slowdown_one() {
    // 1 arrival/s of 20 segments (29 200 B) on a 10 Mbit/s path: each flow
    // is alone (its FCT is a few tens of ms), so its FCT is the empty-path
    // one and the slowdown is 1 up to the histogram's 0.4 %.
    let text = scenario(
        "20s",
        "arrivals = { kind = \"deterministic\", rate = 1 }\nsize = { kind = \"fixed\", bytes = 29200 }\n",
    );
    let out = run(&text, 1);
    let w = out.summary.network.workloads.as_ref().unwrap();
    let s = &w.workloads[0];
    assert_eq!(s.arrivals, 20);
    assert_eq!(s.completed, 20);
    assert_eq!(w.peak_alive, 1);
    assert_eq!(w.slots, 1, "one slot reused by every flow");
    let m = s.slowdown.mean.unwrap();
    assert!((m - 1.0).abs() < 0.005, "{m}");
    let crate::metrics::Column::F64(sd) = column(&out, "slowdown") else {
        panic!()
    };
    assert!(sd.iter().all(|x| (x - 1.0).abs() < 1e-9), "{sd:?}");
}

#[test]
fn poisson_arrivals_finish_free_their_slots_and_are_deterministic() {
    // Load 0.5 of 20 kB-mean Pareto flows on the 10 Mbit/s link, arriving
    // for 8 s of a 10 s run: every flow (FCTs below a second) finishes.
    let text = scenario(
        "10s",
        "arrivals = { kind = \"poisson\", load = 0.5, link = \"R->M\" }\nstop = \"8s\"\nsize = { kind = \"pareto\", mean = \"20kB\", shape = 1.5, max = \"2MB\" }\n",
    );
    let a = run(&text, 3);
    let w = a.summary.network.workloads.as_ref().unwrap();
    let s = &w.workloads[0];
    // rate = 0.5 × 10⁷ / (8 × mean) ≈ 33/s over 10 s (the capped mean is below 20 kB).
    assert!(s.arrivals > 200 && s.arrivals < 400, "{}", s.arrivals);
    assert_eq!((s.completed, s.unfinished), (s.arrivals, 0), "{s:?}");
    assert!(
        w.slots < s.arrivals / 5,
        "slots {} for {} flows",
        w.slots,
        s.arrivals
    );
    assert!(s.slowdown.p50.unwrap() >= 0.99, "{:?}", s.slowdown);
    let b = run(&text, 3);
    assert_eq!(a.summary.to_json(), b.summary.to_json());
    assert_eq!(a.traces, b.traces);
    let c = run(&text, 4);
    assert_ne!(a.summary.to_json(), c.summary.to_json());
}

#[test]
fn trace_arrivals_and_errors_name_the_workload() {
    let dir = std::env::temp_dir().join(format!("linklab-wl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "0 1460\n0.5 14600\n0.5 2920\n").unwrap();
    let text = scenario("2s", "arrivals = { kind = \"trace\", file = \"a.txt\" }\n");
    let opts = RunOptions {
        base_dir: Some(dir.clone()),
        ..RunOptions::default()
    };
    let out = start(Source::Toml(text.clone()), &opts)
        .unwrap()
        .finish()
        .unwrap();
    let s = &out.summary.network.workloads.as_ref().unwrap().workloads[0];
    assert_eq!((s.arrivals, s.completed, s.offered_bytes), (3, 3, 18980));
    std::fs::write(dir.join("a.txt"), "0 1460\nzero 10\n").unwrap();
    let e = start(Source::Toml(text), &opts).err().unwrap();
    assert_eq!(e.path, "workloads[0].arrivals.file", "{e}");
    assert!(e.allowed.starts_with("a.txt:2:"), "{e}");
    let e = start(
        Source::Toml(scenario("2s", "arrivals = { kind = \"poisson\", load = 0.5, link = \"R->X\" }\nsize = \"web_search\"\n")),
        &RunOptions::default(),
    )
    .err()
    .unwrap();
    assert_eq!(e.path, "workloads[0]", "{e}");
    assert!(e.allowed.contains("R->X"), "{e}");
    let e = start(
        Source::Toml(scenario("2s", "arrivals = { kind = \"poisson\", rate = 1 }\nsize = \"web_search\"\nweights = [1, 2]\n")),
        &RunOptions::default(),
    )
    .err()
    .unwrap();
    assert_eq!(e.path, "workloads[0].weights", "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// One flow S → D over 10 Mbit/s, 5 ms, with `keys` added to the flow.
fn paced(keys: &str) -> String {
    format!(
        "duration = \"10s\"\n[[links]]\na = \"S\"\nb = \"D\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
         [[flows]]\nfrom = \"S\"\nto = \"D\"\n{keys}"
    )
}

fn goodput(text: &str) -> f64 {
    run(text, 1).summary.network.flows[0].totals.goodput_bps
}

#[test]
fn a_rate_cap_limits_the_application() {
    // 1 Mbit/s offered for 10 s (less the handshake's round trip): 0.99 Mbit/s.
    let g = goodput(&paced("rate_cap = \"1Mbit\"\n"));
    assert!((0.97e6..=1.0e6).contains(&g), "{g}");
    // Fixed 1 s on / 1 s off at 2 Mbit/s: on half the time, 1 Mbit/s.
    let g = goodput(&paced(
        "rate_cap = \"2Mbit\"\non = \"1s\"\noff = \"1s\"\non_off = \"fixed\"\n",
    ));
    assert!((0.95e6..=1.0e6).contains(&g), "{g}");
    // A greedy application on half the time: what it handed TCP during an
    // on period is still delivered after it (the window in flight and the
    // 100-packet buffer, up to 0.12 s of the link), so between half the link
    // less slow start's cost and half plus that drain: 3 to 6.2 Mbit/s.
    let g = goodput(&paced(
        "on = \"500ms\"\noff = \"500ms\"\non_off = \"fixed\"\n",
    ));
    assert!((3.0e6..=6.2e6).contains(&g), "{g}");
    // A finite transfer completes when its last byte is acknowledged, not
    // at the end of each offer: 125 kB at 1 Mbit/s take 1 s.
    let out = run(&paced("rate_cap = \"1Mbit\"\nbytes = 125000\n"), 1);
    let done = out.summary.network.flows[0].completed_s.unwrap();
    assert!((1.0..1.05).contains(&done), "{done}");
    let e = start(Source::Toml(paced("on = \"1s\"\n")), &RunOptions::default())
        .err()
        .unwrap();
    assert_eq!(e.path, "flows[0].off", "{e}");
}

#[test]
fn a_paced_workload_is_measured_against_a_paced_baseline() {
    // 50 kB flows capped at 2 Mbit/s, one every 2 s: alone, each takes its
    // 0.2 s of offering, and its baseline (paced alike) as long: slowdown 1.
    let text = scenario(
        "10s",
        "arrivals = { kind = \"deterministic\", rate = 0.5 }\nsize = { kind = \"fixed\", bytes = 49640 }\nrate_cap = \"2Mbit\"\n",
    );
    let out = run(&text, 1);
    let s = &out.summary.network.workloads.as_ref().unwrap().workloads[0];
    assert_eq!(s.completed, 5);
    let f = s.fct_s.mean.unwrap();
    assert!((0.19..0.23).contains(&f), "{f}");
    assert!(
        (s.slowdown.mean.unwrap() - 1.0).abs() < 0.005,
        "{:?}",
        s.slowdown
    );
}

fn closed(keys: &str) -> String {
    format!(
        "duration = \"20s\"\n[[links]]\na = \"C\"\nb = \"S\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
         [[workloads]]\nfrom = \"C\"\nto = \"S\"\n{keys}"
    )
}

fn f64s(out: &crate::api::RunOutput, name: &str) -> Vec<f64> {
    match column(out, name) {
        crate::metrics::Column::F64(v) => v.clone(),
        _ => panic!("{name}"),
    }
}

#[test]
fn request_response_transactions_are_the_request_then_the_response() {
    // One client: a 1000-byte request, the server's 100 kB response, 1 s of
    // thinking. Alone on the path, each transaction is its request's FCT
    // plus its response's (the response starts when the request arrives).
    let out = run(
        &closed(
            "arrivals = { kind = \"closed\", clients = 1, think = \"1s\", think_law = \"fixed\" }\n\
             size = { kind = \"fixed\", bytes = 1000 }\nresponse = { kind = \"fixed\", bytes = 100000 }\n",
        ),
        1,
    );
    let s = &out.summary.network.workloads.as_ref().unwrap().workloads[0];
    let fct = f64s(&out, "fct_s");
    let from = match column(&out, "from") {
        crate::metrics::Column::Str(v) => v.clone(),
        _ => panic!(),
    };
    let mean = |who: &str| {
        let v: Vec<f64> = fct
            .iter()
            .zip(&from)
            .filter(|(x, f)| f.as_str() == who && x.is_finite())
            .map(|(x, _)| *x)
            .collect();
        (v.iter().sum::<f64>() / v.len() as f64, v.len())
    };
    let ((req, nq), (resp, nr)) = (mean("C"), mean("S"));
    // About 20 s / (1 s + ~0.1 s) transactions.
    assert!(
        s.transactions >= 16 && s.transactions <= 19,
        "{}",
        s.transactions
    );
    assert!(nq as u64 >= s.transactions && nr as u64 >= s.transactions);
    let t = s.transaction_s.mean.unwrap();
    // Histogram quantiles are 0.4 %; the mean is exact.
    assert!((t - (req + resp)).abs() < 1e-6, "{t} vs {req} + {resp}");
}

#[test]
fn a_page_of_objects_over_parallel_connections() {
    // 8 objects of 50 kB over at most 2 connections at once: the page takes
    // at least 4 rounds of object fetches, at most 8.
    let text = closed(
        "arrivals = { kind = \"closed\", clients = 1, think = \"2s\", objects = 8, parallel = 2 }\n\
         size = { kind = \"fixed\", bytes = 500 }\nresponse = { kind = \"fixed\", bytes = 50000 }\n",
    );
    let out = run(&text, 1);
    let s = &out.summary.network.workloads.as_ref().unwrap().workloads[0];
    assert!(s.transactions >= 5, "{}", s.transactions);
    let page = s.transaction_s.mean.unwrap();
    let per_object = s.fct_s.mean.unwrap() * 2.0; // a request and its response
    assert!(
        page > 3.0 * per_object && page < 8.0 * per_object,
        "{page} vs {per_object}"
    );
    let e = start(
        Source::Toml(text.replace("parallel = 2", "parallel = 9")),
        &RunOptions::default(),
    )
    .err()
    .unwrap();
    assert_eq!(e.path, "workloads[0].arrivals.parallel", "{e}");
}

/// The FCTs (seconds) of the `fct` table, in row order.
fn fcts(out: &crate::api::RunOutput) -> Vec<f64> {
    f64s(out, "fct_s")
}

/// [`scenario`] with one pair, S1 → D1.
fn one_pair(duration: &str, workload: &str) -> String {
    scenario(duration, workload).replace(
        "from = \"S{1..4}\"\nto = \"D{1..2}\"",
        "from = \"S1\"\nto = \"D1\"",
    )
}

#[test]
fn persistent_connections_skip_the_handshake() {
    // One 10-segment flow a second (within the initial window of 10), each
    // alone on the S → R → M → D path (7 ms one way). On a new connection a
    // flow's FCT is its handshake (SYN, SYN-ACK: the round trip, 14 ms plus
    // the SYNs' serialisation, ~0.1 ms) then its data's one-way trip; on the
    // persistent connection every flow after the first skips the handshake.
    // Expected difference: 14.0 to 14.5 ms per flow, fixed from the path.
    let flows = "arrivals = { kind = \"deterministic\", rate = 1 }\nsize = { kind = \"fixed\", bytes = 14600 }\ntcp = { initial_window = 10 }\n";
    let new = run(&one_pair("10s", flows), 1);
    let kept = run(
        &one_pair("10s", &format!("{flows}connection = \"persistent\"\n")),
        1,
    );
    let (a, b) = (fcts(&new), fcts(&kept));
    assert_eq!((a.len(), b.len()), (10, 10));
    // The first persistent flow opens its connection: the same FCT.
    assert!((a[0] - b[0]).abs() < 1e-9, "{} vs {}", a[0], b[0]);
    for (x, y) in a.iter().zip(&b).skip(1) {
        let d = x - y;
        assert!((0.0140..=0.0145).contains(&d), "new {x} persistent {y}");
    }
    let w = kept.summary.network.workloads.as_ref().unwrap();
    assert_eq!(
        (w.slots, w.peak_alive),
        (1, 1),
        "one connection carries all"
    );
    let s = &w.workloads[0];
    assert_eq!((s.arrivals, s.completed, s.unfinished), (10, 10, 0));
    // Deterministic: the same run again is identical.
    let again = run(
        &one_pair("10s", &format!("{flows}connection = \"persistent\"\n")),
        1,
    );
    assert_eq!(kept.summary.to_json(), again.summary.to_json());
    assert_eq!(kept.traces, again.traces);
}

#[test]
fn a_warm_connection_keeps_its_window() {
    // 100-segment flows (146 kB) once a second over 100 Mbit/s with a 40 ms
    // round trip (BDP 500 kB, 342 segments: slow start is what a new
    // connection pays). A new connection spends its handshake and four
    // slow-start rounds from 10 segments (10, 20, 40, 30); the connection is
    // idle about 0.85 s between flows, less than its RTO (1 s), so no
    // restart after idle (`idle_restart`) applies and on the persistent
    // connection a later flow needs at most two rounds. Expected: faster by more than
    // the handshake plus one round, 80 ms. (A first version of this test
    // ran on the 14 ms, 10 Mbit/s path of [`scenario`] and expected 40 ms
    // saved: it measured 17.6 ms, the handshake and little more, because
    // there the BDP is 12 segments and slow start from 10 fills it within
    // one round — a wrong expectation, not a model fault.)
    let text = |keys: &str| {
        format!(
            "duration = \"6s\"\n[[links]]\na = \"S\"\nb = \"D\"\nrate = \"100Mbit\"\ndelay = \"20ms\"\n\
             queue = {{ kind = \"droptail\", limit = \"1000p\" }}\n\
             [[workloads]]\nfrom = \"S\"\nto = \"D\"\n\
             arrivals = {{ kind = \"deterministic\", rate = 1 }}\nsize = {{ kind = \"fixed\", bytes = 146000 }}\n\
             tcp = {{ initial_window = 10 }}\n{keys}"
        )
    };
    let a = fcts(&run(&text(""), 1));
    let b = fcts(&run(&text("connection = \"persistent\"\n"), 1));
    assert_eq!((a.len(), b.len()), (6, 6));
    for (x, y) in a.iter().zip(&b).skip(1) {
        assert!(x - y > 0.080, "new {x} persistent {y}");
    }
}

/// `idle_restart` on a persistent connection: the flows of the test above
/// every 3 s instead of every second, so the connection is idle ~2.85 s,
/// longer than its RTO (1 s). RFC 5681 §4.1 (the default) restarts it from
/// the restart window min(IW, cwnd) = 10 segments: a later flow takes the
/// same four slow-start rounds as on a new connection and saves only the
/// handshake, one round trip (40 ms; expected 40 ms ± 5 ms, the rest of
/// the two paths being the same). With `idle_restart = "off"` (ns-3) it
/// keeps its window and saves more than the handshake and a round (80 ms).
#[test]
fn an_idle_persistent_connection_restarts_from_the_initial_window() {
    let text = |keys: &str| {
        format!(
            "duration = \"16s\"\n[[links]]\na = \"S\"\nb = \"D\"\nrate = \"100Mbit\"\ndelay = \"20ms\"\n\
             queue = {{ kind = \"droptail\", limit = \"1000p\" }}\n\
             [[workloads]]\nfrom = \"S\"\nto = \"D\"\n\
             arrivals = {{ kind = \"deterministic\", rate = 0.3333333333 }}\nsize = {{ kind = \"fixed\", bytes = 146000 }}\n{keys}"
        )
    };
    let new = fcts(&run(&text("tcp = { initial_window = 10 }\n"), 1));
    let rfc = fcts(&run(
        &text("tcp = { initial_window = 10 }\nconnection = \"persistent\"\n"),
        1,
    ));
    let off = fcts(&run(
        &text(
            "tcp = { initial_window = 10, idle_restart = \"off\" }\nconnection = \"persistent\"\n",
        ),
        1,
    ));
    assert_eq!((new.len(), rfc.len(), off.len()), (6, 6, 6));
    for ((x, y), z) in new.iter().zip(&rfc).zip(&off).skip(1) {
        assert!((x - y - 0.040).abs() < 0.005, "new {x} persistent {y}");
        assert!(x - z > 0.080, "new {x} persistent without restart {z}");
    }
}

#[test]
fn a_full_pool_makes_flows_wait() {
    // Three 50-segment flows arriving together: on a pool of one connection
    // they go one after the other (each waits for the one before to be
    // acknowledged), so the FCTs increase by at least one transfer (50
    // segments at 10 Mbit/s: 58 ms); a pool of three carries them at once.
    let dir = std::env::temp_dir().join(format!("linklab-pool-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "0 73000\n0 73000\n0 73000\n").unwrap();
    let go = |pool: u32| {
        let text = one_pair(
            "3s",
            &format!(
                "arrivals = {{ kind = \"trace\", file = \"a.txt\" }}\nconnection = \"persistent\"\npool = {pool}\n"
            ),
        );
        let opts = RunOptions {
            base_dir: Some(dir.clone()),
            seed: Some(1),
            ..RunOptions::default()
        };
        start(Source::Toml(text), &opts).unwrap().finish().unwrap()
    };
    let one = go(1);
    let f = fcts(&one);
    assert_eq!(f.len(), 3);
    assert!(f[1] - f[0] > 0.058 && f[2] - f[1] > 0.058, "{f:?}");
    assert_eq!(one.summary.network.workloads.as_ref().unwrap().slots, 1);
    let three = go(3);
    assert_eq!(three.summary.network.workloads.as_ref().unwrap().slots, 3);
    let g = fcts(&three);
    assert!(g[2] < f[2], "{g:?} vs {f:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn persistent_request_response_skips_both_handshakes() {
    // One client, 1000-byte requests and 1000-byte responses over the
    // 10 Mbit/s, 5 ms link: a transaction on new connections pays two
    // handshakes (10 ms round trip each, plus the SYNs' serialisation,
    // ~0.1 ms); on persistent ones (the response rides the client's
    // connection) none after the first. Expected median difference 20.0
    // to 21 ms.
    let keys = "arrivals = { kind = \"closed\", clients = 1, think = \"500ms\", think_law = \"fixed\" }\n\
                size = { kind = \"fixed\", bytes = 1000 }\nresponse = { kind = \"fixed\", bytes = 1000 }\n";
    let p50 = |text: String| {
        let out = run(&text, 1);
        let s = &out.summary.network.workloads.as_ref().unwrap().workloads[0];
        (s.transaction_s.p50.unwrap(), s.transactions)
    };
    let (a, na) = p50(closed(keys));
    let (b, nb) = p50(closed(&format!("{keys}connection = \"persistent\"\n")));
    assert!(nb >= na, "{nb} vs {na}");
    assert!(
        (0.0200..=0.021).contains(&(a - b)),
        "new {a} persistent {b}"
    );
}

#[test]
fn persistent_with_pacing_or_pool_without_it_is_refused() {
    let err = |keys: &str| {
        start(
            Source::Toml(scenario(
                "2s",
                &format!(
                    "arrivals = {{ kind = \"poisson\", rate = 1 }}\nsize = \"web_search\"\n{keys}"
                ),
            )),
            &RunOptions::default(),
        )
        .err()
        .unwrap()
    };
    let e = err("connection = \"persistent\"\nrate_cap = \"1Mbit\"\n");
    assert_eq!(e.path, "workloads[0].connection", "{e}");
    assert!(e.allowed.contains("rate_cap"), "{e}");
    let e = err("pool = 4\n");
    assert_eq!(e.path, "workloads[0].pool", "{e}");
    let e = err("connection = \"persistent\"\npool = 0\n");
    assert_eq!(e.path, "workloads[0].pool", "{e}");
    let e = err("connection = \"kept\"\n");
    assert_eq!(e.path, "workloads[0].connection", "{e}");
}

fn u64s(out: &crate::api::RunOutput, name: &str) -> Vec<u64> {
    let crate::metrics::Column::U64(v) = column(out, name) else {
        panic!("{name} is not a u64 column")
    };
    v.clone()
}

#[test]
fn handshake_drops_are_counted_per_flow() {
    // One-segment flows, one a second, each alone on a 10 Mbit/s, 5 ms link
    // that loses 20 % of the packets in each direction: some lose a SYN or a
    // SYN-ACK. Each such drop costs the client one expiry of its SYN timer
    // (the receiver answers every SYN, and has no timer of its own), so a
    // flow that retransmitted no data segment (no data timeout) has exactly
    // as many timeouts as handshake drops; and its FCT is at least the
    // backed-off SYN timers (1 s, 2 s, ...) those drops cost.
    let text = "duration = \"200s\"\n\
         [[links]]\na = \"S\"\nb = \"D\"\nrate = \"10Mbit\"\ndelay = \"5ms\"\n\
         ab = { loss = 0.2 }\nba = { loss = 0.2 }\n\
         [[workloads]]\nfrom = \"S\"\nto = \"D\"\nstop = \"150s\"\n\
         arrivals = { kind = \"deterministic\", rate = 1 }\nsize = { kind = \"fixed\", bytes = 1000 }\n";
    let out = run(text, 7);
    let (hs, rtx, rto) = (
        u64s(&out, "handshake_drops"),
        u64s(&out, "retransmits"),
        u64s(&out, "timeouts"),
    );
    let fct = fcts(&out);
    assert_eq!(hs.len(), 150);
    let mut clean_with_drops = 0;
    for i in 0..hs.len() {
        if rtx[i] == 0 {
            assert_eq!(hs[i], rto[i], "flow {i}: handshake drops vs timeouts");
            if hs[i] > 0 {
                clean_with_drops += 1;
                let timers = ((1u64 << hs[i]) - 1) as f64; // 1 + 2 + ... seconds
                assert!(
                    fct[i] >= timers,
                    "flow {i}: {} drops, FCT {}",
                    hs[i],
                    fct[i]
                );
            }
        }
    }
    // At 20 % per packet, ~36 % of the handshakes lose a SYN or SYN-ACK.
    let total: u64 = hs.iter().sum();
    assert!((25..=120).contains(&total), "handshake drops {total}");
    assert!(clean_with_drops >= 10, "{clean_with_drops}");
    // Flows whose handshake went through at the first try were charged none.
    let none = hs.iter().filter(|&&x| x == 0).count();
    assert!(none >= 75, "{none}");
    // The summary's total is the column's sum.
    let w = out.summary.network.workloads.as_ref().unwrap();
    assert_eq!(w.workloads[0].handshake_drops, total);
}

//! Media streams end to end, from scenario text.

use serde_json::Value;

use crate::api::{run, RunOptions, Source};

fn run_text(text: &str, seed: u64) -> Result<Value, String> {
    let opts = RunOptions {
        seed: Some(seed),
        ..RunOptions::default()
    };
    run(Source::Toml(text.to_string()), &opts)
        .map(|o| o.summary.to_json())
        .map_err(|e| e.to_string())
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// Two hops, no other traffic: every packet of 200 + 28 bytes takes the
/// propagation (5 + 10 ms) plus its serialization on each hop (228·8 bits
/// at 10 Mbit/s, 0.1824 ms, and at 2 Mbit/s, 0.912 ms): 16.0944 ms, exactly,
/// for every packet, so jitter 0 and no loss; the packets sent at 9.99 s
/// and 10 s are still on the way when the run ends (at 10 s).
#[test]
fn cbr_over_an_idle_path_takes_propagation_plus_serialization_exactly() {
    let text = r#"
        duration = "10s"
        [[links]]
        a = "S"
        b = "R"
        rate = "10Mbit"
        delay = "5ms"
        [[links]]
        a = "R"
        b = "D"
        rate = "2Mbit"
        delay = "10ms"
        [[media]]
        kind = "cbr"
        from = "S"
        to = "D"
        size = "200B"
        interval = "10ms"
    "#;
    let s = run_text(text, 1).unwrap();
    let m = &s["media"][0];
    assert_eq!(m["name"], "cbr:S->D");
    assert_eq!(
        (n(m, "sent"), n(m, "received"), n(m, "in_flight")),
        (1001, 999, 2)
    );
    assert_eq!((n(m, "lost"), n(m, "late"), n(m, "duplicates")), (0, 0, 0));
    let want = 0.016_094_4;
    for key in [
        "delay_mean_s",
        "delay_p50_s",
        "delay_p99_s",
        "delay_p999_s",
        "delay_max_s",
    ] {
        assert!((f(m, key) - want).abs() < 1e-12, "{key}: {}", f(m, key));
    }
    assert_eq!(f(m, "jitter_s"), 0.0);
    assert_eq!(f(m, "loss_pct"), 0.0);
    assert!(m.get("emodel").is_none());
    // The packet account closes with the media leg in it.
    let acc = &m["account"];
    assert_eq!(
        (n(acc, "sent"), n(acc, "delivered"), n(acc, "in_flight")),
        (1001, 999, 2)
    );
    // No TCP flow: the flows list is empty.
    assert_eq!(s["flows"].as_array().unwrap().len(), 0);
}

const SHARED: &str = r#"
    duration = "30s"
    [tcp]
    mss = 1460
    rwnd = "1MiB"
    [[links]]
    a = "S"
    b = "R"
    rate = "100Mbit"
    delay = "1ms"
    [[links]]
    a = "R"
    b = "D"
    rate = "2Mbit"
    delay = "10ms"
    queue = { kind = "droptail", limit = "75000B" }
    [[flows]]
    from = "S"
    to = "D"
    [[media]]
    kind = "cbr"
    from = "S"
    to = "D"
    size = "100B"
    interval = "20ms"
    start = "10s"
"#;

/// A bulk TCP flow fills a 75 kB drop-tail queue in front of 2 Mbit/s
/// (its window far above the 5.5 kB path BDP, so after each halving the
/// queue stays above half full): a CBR stream behind it waits up to the
/// queue's bound, 75,000 B · 8 / 2 Mbit/s = 300 ms, plus at most one
/// 1500 B packet in service (6 ms), 11 ms of propagation, 0.512 ms of its
/// own serialization and 0.01 ms on the first hop: max ≤ 317.6 ms. The
/// queue sits near full much of the time, so p99 ≥ 90 % of the 300 ms
/// bound (270 ms); the mean lies above the half-full 150 ms; the queue
/// overflows (TCP's drops).
///
/// Two first versions missed, for causes found by experiment: (1) with the
/// default 64 KiB receive window (44 segments) the queue stopped at about
/// 41 packets (max 257 ms, p99 251 ms): the window, not the buffer, bounded
/// it, hence `rwnd = "1MiB"`; (2) with a 50-packet limit the media's own
/// small packets (one per 20 ms, about 13 of them in a 250 ms queue) took
/// slots, so a full queue held only ~37 TCP packets (queue trace: 58.5 kB
/// at 50 packets; p99 262 ms): a byte limit makes the bound the bytes.
/// That version also held that the stream loses packets to overflow; with
/// the byte limit it lost none (a 128 B packet fits in room a 1500 B
/// segment does not), so the overflow is checked on the queue instead.
#[test]
fn cbr_behind_bulk_tcp_waits_up_to_the_droptail_bound() {
    let s = run_text(SHARED, 1).unwrap();
    let m = &s["media"][0];
    assert!(f(m, "delay_max_s") <= 0.3176, "{m}");
    assert!(f(m, "delay_p99_s") >= 0.270, "{m}");
    assert!(f(m, "delay_mean_s") >= 0.150, "{m}");
    assert!(f(m, "jitter_s") > 0.0);
    let q = &s["queues"][2];
    assert_eq!(q["link"], "R->D");
    assert!(n(&q["drops"], "overflow") > 0, "{q}");
    // Every packet is later than the 100 ms playout deadline.
    assert!(
        n(m, "late") + n(m, "lost") + n(m, "in_flight") == n(m, "sent"),
        "{m}"
    );
    let acc = &m["account"];
    assert_eq!(
        n(acc, "delivered") + n(m, "lost") + n(acc, "in_flight"),
        n(acc, "sent")
    );
}

const CALL: &str = r#"
    duration = "20s"
    [[links]]
    a = "A"
    b = "B"
    rate = "5Mbit"
    delay = "20ms"
    queue = { kind = "droptail", limit = "30p" }
    ab = { netem = { jitter = "5ms", duplicate = 0.01 } }
    [[media]]
    kind = "voice"
    from = "A"
    to = "B"
    direction = "two-way"
    codec = "g729a"
    [[media]]
    kind = "video"
    from = "A"
    to = "B"
    rate = "1Mbit"
    size_cv = 0.5
    gop = 30
"#;

/// Same seed, same everything; another seed draws other talk spurts and
/// frame sizes. netem's copies are counted as duplicates and in the
/// account; a two-way call is two streams.
#[test]
fn media_runs_are_deterministic_and_account_copies() {
    let a = run_text(CALL, 3).unwrap();
    let b = run_text(CALL, 3).unwrap();
    assert_eq!(a, b);
    let c = run_text(CALL, 4).unwrap();
    assert_ne!(a["media"][0]["sent"], c["media"][0]["sent"]);
    let media = a["media"].as_array().unwrap();
    let names: Vec<&str> = media.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["voice:A->B", "voice:A->B (back)", "video:A->B"]);
    let v = &media[0];
    assert!(n(v, "duplicates") > 0);
    assert_eq!(n(&v["account"], "copies"), n(v, "duplicates"));
    let e = &v["emodel"];
    // G.729A, 20 ms packets: Ta = 20 + 5 + 100 ms.
    assert!((f(e, "ta_ms") - 125.0).abs() < 1e-9);
    assert!(f(e, "r") < 93.2 - 11.0 && f(e, "mos") > 1.0);
    assert_eq!(media[1]["from"], "B");
    assert!(media[2].get("emodel").is_none());
}

#[test]
fn bad_media_entries_are_named() {
    let base = "duration = \"1s\"\n[[links]]\na = \"A\"\nb = \"B\"\nrate = \"1Mbit\"\n";
    let cases = [
        ("kind = \"voice\"\nfrom = \"A\"\nto = \"C\"", "media[0].to"),
        ("kind = \"voice\"\nfrom = \"A\"\nto = \"A\"", "media[0]"),
        (
            "kind = \"voice\"\nfrom = \"A\"\nto = \"B\"\ncodec = \"opus\"",
            "media[0].codec",
        ),
        (
            "kind = \"cbr\"\nfrom = \"A\"\nto = \"B\"\nsize = 0",
            "media[0].size",
        ),
        (
            "kind = \"video\"\nfrom = \"A\"\nto = \"B\"\nbitrate = \"1Mbit\"",
            "media[0].bitrate",
        ),
        ("from = \"A\"\nto = \"B\"", "media[0].kind"),
    ];
    for (entry, path) in cases {
        let e = run_text(&format!("{base}[[media]]\n{entry}\n"), 1).unwrap_err();
        assert!(e.starts_with(&format!("{path}:")), "{entry}: {e}");
    }
    // A name given to two streams.
    let two = "[[media]]\nkind = \"cbr\"\nfrom = \"A\"\nto = \"B\"\nname = \"x\"\n\
               [[media]]\nkind = \"cbr\"\nfrom = \"B\"\nto = \"A\"\nname = \"x\"\n";
    let e = run_text(&format!("{base}{two}"), 1).unwrap_err();
    assert!(e.starts_with("media[1].name:"), "{e}");
}

/// Video on an idle 10 Mbit/s, 10 ms link, 1 Mbit/s at 25 frames/s of fixed
/// size: 5000 B a frame, sent as four 1200 B packets and one of 200 B
/// (+ 12 RTP + 28 IP/UDP each: 5200 B), back to back, so every frame's
/// last packet arrives 10 ms + 5200 · 8 / 10 Mbit/s = 14.16 ms after it
/// was sent. Over 4 s: 101 frames (0 s to 4 s); the frame of 4 s is not
/// complete at the end; the 3 frames of the last 100 ms are left out of
/// the played share, the other 98 all played: 100 %.
#[test]
fn video_frames_on_an_idle_link() {
    let text = r#"
        duration = "4s"
        [[links]]
        a = "A"
        b = "B"
        rate = "10Mbit"
        delay = "10ms"
        [[media]]
        kind = "video"
        from = "A"
        to = "B"
        rate = "1Mbit"
        frame_rate = 25
    "#;
    let s = run_text(text, 1).unwrap();
    let m = &s["media"][0];
    let v = &m["video"];
    assert_eq!(
        (
            n(v, "frames"),
            n(v, "frames_complete"),
            n(v, "frames_played")
        ),
        (101, 100, 100)
    );
    assert_eq!(f(v, "frames_played_pct"), 100.0);
    for key in [
        "frame_delay_p50_s",
        "frame_delay_p99_s",
        "frame_delay_max_s",
    ] {
        assert!((f(v, key) - 0.014_16).abs() < 1e-12, "{key}: {}", f(v, key));
    }
    assert_eq!(n(m, "sent"), 505);
}

/// Behind the bulk TCP flow of the drop-tail test (a 300 ms buffer), a
/// 100 ms playout delay plays no video frame: every frame waits in the
/// standing queue longer than that.
#[test]
fn video_frames_behind_a_standing_queue_are_not_played() {
    let text = SHARED.replace(
        "kind = \"cbr\"\n    from = \"S\"\n    to = \"D\"\n    size = \"100B\"\n    interval = \"20ms\"",
        "kind = \"video\"\n    from = \"S\"\n    to = \"D\"\n    rate = \"200kbit\"",
    );
    let s = run_text(&text, 1).unwrap();
    let v = &s["media"][0]["video"];
    assert!(n(v, "frames") > 500, "{v}");
    assert_eq!(n(v, "frames_played"), 0, "{v}");
    assert!(f(v, "frame_delay_p50_s") > 0.15, "{v}");
}

/// Media packets in the trace tables: every packet the stream sent is a
/// `sent` row of `media_packets`, every one delivered a `received` row and
/// every one lost a `dropped` row and a `drops` row of kind `media` (flow:
/// the stream's index) on the link and with the cause of the account; the
/// `queue` table follows a link that only media packets cross.
#[test]
fn media_packets_are_in_the_trace_tables() {
    // 1 Mbit/s of 1000-byte packets into 500 kbit/s behind a 5-packet
    // drop-tail buffer: about half the packets overflow.
    let text = r#"
        duration = "2s"
        [[links]]
        a = "S"
        b = "R"
        rate = "100Mbit"
        delay = "1ms"
        [[links]]
        a = "R"
        b = "D"
        rate = "500kbit"
        delay = "10ms"
        queue = { kind = "droptail", limit = "5p" }
        [[media]]
        kind = "cbr"
        from = "S"
        to = "D"
        size = "972B"
        rate = "1Mbit"
    "#;
    let opts = RunOptions {
        seed: Some(1),
        trace: true,
        ..RunOptions::default()
    };
    let out = run(Source::Toml(text.to_string()), &opts).unwrap();
    let s = out.summary.to_json();
    let m = &s["media"][0];
    let acc = &m["account"];
    let table = |name: &str| {
        out.traces
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let strs = |t: &crate::metrics::Table, c: &str| match &t
        .columns
        .iter()
        .find(|x| x.0 == c)
        .unwrap()
        .1
    {
        crate::metrics::Column::Str(v) => v.clone(),
        _ => panic!("{c}"),
    };
    let u64s = |t: &crate::metrics::Table, c: &str| match &t
        .columns
        .iter()
        .find(|x| x.0 == c)
        .unwrap()
        .1
    {
        crate::metrics::Column::U64(v) => v.clone(),
        _ => panic!("{c}"),
    };
    let pk = table("media_packets");
    let ev = strs(pk, "event");
    let count = |e: &str| ev.iter().filter(|x| x.as_str() == e).count() as u64;
    let dropped = acc["dropped"][0]["packets"].as_u64().unwrap();
    assert!(dropped > 50, "{acc}");
    assert_eq!(count("sent"), n(acc, "sent"));
    assert_eq!(count("received"), n(acc, "delivered"));
    assert_eq!(count("dropped"), dropped);
    assert!(u64s(pk, "stream").iter().all(|x| *x == 0));
    // Every dropped packet number was sent, and none was received.
    let seqs = u64s(pk, "seq");
    let with = |e: &str| -> std::collections::BTreeSet<u64> {
        seqs.iter()
            .zip(&ev)
            .filter(|(_, x)| x.as_str() == e)
            .map(|(q, _)| *q)
            .collect()
    };
    let (sent, got, lost) = (with("sent"), with("received"), with("dropped"));
    assert!(lost.is_subset(&sent) && lost.is_disjoint(&got));
    let drops = table("drops");
    let kinds = strs(drops, "kind");
    assert_eq!(kinds.len() as u64, dropped);
    assert!(kinds.iter().all(|k| k == "media"));
    assert!(strs(drops, "link").iter().all(|l| l == "R->D"));
    assert!(strs(drops, "cause").iter().all(|c| c == "overflow"));
    // The queue of R->D, crossed by media packets only, reaches its limit.
    let q = table("queue");
    let most = strs(q, "link")
        .iter()
        .zip(u64s(q, "packets"))
        .filter(|(l, _)| l.as_str() == "R->D")
        .map(|(_, p)| p)
        .max();
    assert_eq!(most, Some(5));
}

/// Finding M1 of docs/checking.md: netem copies still in flight at the end.
/// One 10 Mbit/s, 10 ms link with netem `duplicate = 0.5` and 50 ms of
/// jitter, a CBR packet every 1 ms for 1 s: the account's `in_flight`
/// counts packet instances (copies included), the stream's counts distinct
/// packets not received, so received + lost + in flight = sent exactly
/// (before the fix: in flight 33 of which 12 copies, lost 0 where 21
/// originals were in flight, the sum 1013 > 1001 sent).
#[test]
fn copies_in_flight_at_the_end_count_once() {
    let text = r#"
        duration = "1s"
        [[links]]
        a = "S"
        b = "D"
        rate = "10Mbit"
        delay = "10ms"
        ab = { netem = { duplicate = 0.5, jitter = "50ms" } }
        [[media]]
        kind = "cbr"
        from = "S"
        to = "D"
        size = "200B"
        interval = "1ms"
    "#;
    let s = run_text(text, 1).unwrap();
    let m = &s["media"][0];
    let acc = &m["account"];
    let (sent, rx, lost, flight) = (
        n(m, "sent"),
        n(m, "received"),
        n(m, "lost"),
        n(m, "in_flight"),
    );
    assert_eq!(rx + lost + flight, sent, "{m}");
    assert!(n(acc, "copies") > 0 && flight < n(acc, "in_flight"), "{m}");
    // Nothing is dropped on this link: every packet not received is in flight.
    assert_eq!(lost, 0, "{m}");
}

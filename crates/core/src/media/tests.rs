use super::*;

fn spec(pattern: Pattern, start: Time, stop: Option<Time>) -> MediaSpec {
    MediaSpec {
        name: "m".into(),
        src: NodeId(0),
        dst: NodeId(1),
        pattern,
        start,
        stop,
        playout: Time::from_millis(100),
        rng: Rng::stream(7, "media:m"),
    }
}

/// Every packet of `src` until `end`, stepped by hand: (send time, payload).
fn drain(src: &mut MediaSource, end: Time) -> Vec<(Time, u32)> {
    let mut out = Vec::new();
    while let Some(t) = src.poll_timeout().filter(|&t| t <= end) {
        let mut n = 0;
        while let Some(p) = src.poll_transmit(t) {
            assert_eq!(p.sent_at, t);
            assert_eq!(p.seq, out.len() as u64, "packet numbers run on");
            assert_eq!(stream_of(p.flow), Some(3));
            out.push((t, p.payload));
            n += 1;
        }
        assert!(n > 0, "woken at {t} with nothing to send");
        assert!(src.poll_timeout().is_none_or(|u| u > t), "no progress");
    }
    out
}

#[test]
fn cbr_sends_on_the_exact_schedule_until_stop() {
    let p = Pattern::Cbr {
        payload: 100,
        interval: Time::from_micros(3_333),
    };
    let mut s = MediaSource::new(3, &spec(p, Time::from_millis(5), Some(Time::from_secs(1))));
    let out = drain(&mut s, Time::from_secs(10));
    // Ticks 5 ms + k · 3.333 ms below 1 s: k = 0 ..= 298.
    assert_eq!(out.len(), 299);
    for (k, (t, size)) in out.iter().enumerate() {
        assert_eq!(
            *t,
            Time::from_millis(5) + Time::from_nanos(k as u64 * 3_333_000)
        );
        assert_eq!(*size, 100);
    }
    assert_eq!(s.sent_bytes(), 299 * 128);
}

#[test]
fn flow_ids_name_streams_and_not_tcp_flows() {
    assert_eq!(stream_of(flow_id(0)), Some(0));
    assert_eq!(stream_of(flow_id(9_999)), Some(9_999));
    assert_eq!(stream_of(FlowId(0)), None);
    assert_eq!(
        stream_of(FlowId(crate::net::limits::MAX_FLOWS as u32)),
        None
    );
}

/// The share of time a voice source sends is its mean talk spurt over the
/// mean cycle, 1.004 / (1.004 + 1.587) = 0.3875 with P.59's means, plus
/// about half a packet interval per spurt (a spurt sends whole packets,
/// at least one): 0.3875 · (1 + 0.010 / 1.004) ≈ 0.391. Over 50,000 s
/// (about 19,300 cycles) the sampling error of the share is about 0.8 %
/// (one sigma); the tolerance is 4 %.
#[test]
fn voice_talk_spurts_send_the_p59_activity() {
    let p = Pattern::Voice {
        codec: Codec::G711,
        payload: 172,
        interval: Time::from_millis(20),
        spurts: Some((config::P59_TALK, config::P59_SILENCE)),
    };
    let end = Time::from_secs(50_000);
    let mut s = MediaSource::new(3, &spec(p, Time::ZERO, None));
    let out = drain(&mut s, end);
    let share = out.len() as f64 * 0.020 / end.as_secs_f64();
    assert!((share / 0.391 - 1.0).abs() < 0.04, "activity {share}");
    // Within a spurt packets are 20 ms apart; between spurts more.
    let gaps: Vec<u64> = out
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).as_nanos())
        .collect();
    assert!(gaps.iter().all(|&g| g >= 20_000_000));
    let spurts = 1 + gaps.iter().filter(|&&g| g > 20_000_000).count();
    let mean_packets = out.len() as f64 / spurts as f64;
    // A spurt of mean 1.004 s sends about 1.004/0.02 + 0.5 = 50.7 packets.
    assert!((mean_packets / 50.7 - 1.0).abs() < 0.04, "{mean_packets}");
}

#[test]
fn voice_without_spurts_is_cbr() {
    let p = Pattern::Voice {
        codec: Codec::G729a,
        payload: 32,
        interval: Time::from_millis(20),
        spurts: None,
    };
    let mut s = MediaSource::new(3, &spec(p, Time::ZERO, None));
    let out = drain(&mut s, Time::from_millis(1_000));
    assert_eq!(out.len(), 51);
}

/// A video source of 30 frames/s at 1 Mbit/s sends 4166.7 bytes a frame on
/// average: with log-normal sizes of CV 0.5 over 30,000 frames, the mean
/// is within 1 % (the sample mean's error is 0.5/√30000 = 0.3 %); every
/// frame goes out at its tick as packets of at most 1200 + 12 bytes.
#[test]
fn video_frames_split_into_packets_at_the_mean_rate() {
    let p = Pattern::Video {
        fps: 30,
        mean_bytes: 1e6 / 8.0 / 30.0,
        cv: 0.5,
        gop: 0,
        key_scale: 5.0,
        max_payload: 1200,
    };
    let end = Time::from_secs(1000);
    let mut s = MediaSource::new(3, &spec(p, Time::ZERO, None));
    let out = drain(&mut s, end - Time::from_nanos(1));
    let frames: std::collections::BTreeSet<Time> = out.iter().map(|x| x.0).collect();
    assert_eq!(frames.len(), 30_000);
    let bytes: u64 = out.iter().map(|x| u64::from(x.1 - RTP_HEADER)).sum();
    let mean = bytes as f64 / 30_000.0;
    assert!((mean / (1e6 / 240.0) - 1.0).abs() < 0.01, "{mean}");
    assert!(out.iter().all(|x| x.1 <= 1212 && x.1 > RTP_HEADER));
    // The last tick: frame 29,999 at 999.9667 s, no drift.
    assert_eq!(
        *frames.last().unwrap(),
        Time::from_nanos(29_999 * 1_000_000_000 / 30)
    );
}

/// Key frames every 10 frames, 5× the others, and the mean stays the
/// configured one: base = mean · 10 / 14, key = 5 · base.
#[test]
fn video_key_frames_keep_the_mean() {
    let p = Pattern::Video {
        fps: 10,
        mean_bytes: 14_000.0,
        cv: 0.0,
        gop: 10,
        key_scale: 5.0,
        max_payload: 1000,
    };
    let mut s = MediaSource::new(3, &spec(p, Time::ZERO, None));
    let out = drain(&mut s, Time::from_millis(1_950));
    let frame = |t: u64| -> u32 {
        out.iter()
            .filter(|x| x.0 == Time::from_millis(t))
            .map(|x| x.1 - RTP_HEADER)
            .sum()
    };
    assert_eq!(frame(0), 50_000);
    assert_eq!(frame(100), 10_000);
    assert_eq!(frame(1_000), 50_000);
    assert_eq!(out.iter().filter(|x| x.0 == Time::ZERO).count(), 50);
}

fn pkt(seq: u64, sent_ms: u64) -> Packet {
    Packet {
        flow: flow_id(0),
        seq,
        payload: 172,
        header: 28,
        sent_at: Time::from_millis(sent_ms),
        ..Packet::default()
    }
}

/// RFC 3550 §6.4.1 by hand: transit times 10, 12, 11, 15, 15 ms give
/// |D| = 2, 1, 4, 0 ms and J = 2/16 = 0.125, then 0.125 + (1 − 0.125)/16
/// = 0.1796875, then + (4 − 0.1796875)/16 = 0.41845703125, then
/// − 0.41845703125/16 = 0.392303466796875 ms.
#[test]
fn rfc3550_jitter_by_hand() {
    let mut sink = MediaSink::new(Time::from_millis(100));
    let transits = [10u64, 12, 11, 15, 15];
    let expect = [0.0, 0.125, 0.1796875, 0.41845703125, 0.392303466796875];
    for (i, (&tr, &j)) in transits.iter().zip(&expect).enumerate() {
        let sent = 20 * i as u64;
        sink.on_packet(Time::from_millis(sent + tr), &pkt(i as u64, sent));
        assert!(
            (sink.jitter_ns() * 1e-6 - j).abs() < 1e-12,
            "{i}: {}",
            sink.jitter_ns()
        );
    }
    assert_eq!(sink.received(), 5);
    assert_eq!(sink.delay().min(), 10_000_000);
    assert_eq!(sink.delay().max(), 15_000_000);
}

/// In order of arrival, not of sequence (RFC 3550): a reordered packet's
/// transit is compared with the one that arrived before it.
#[test]
fn jitter_follows_arrival_order() {
    let mut sink = MediaSink::new(Time::from_millis(100));
    sink.on_packet(Time::from_millis(10), &pkt(0, 0));
    sink.on_packet(Time::from_millis(50), &pkt(2, 40)); // transit 10
    sink.on_packet(Time::from_millis(51), &pkt(1, 20)); // transit 31
    assert!((sink.jitter_ns() * 1e-6 - 21.0 / 16.0).abs() < 1e-12);
}

#[test]
fn late_and_duplicate_packets() {
    let mut sink = MediaSink::new(Time::from_millis(50));
    sink.on_packet(Time::from_millis(50), &pkt(0, 0)); // at the deadline: on time
    sink.on_packet(Time::from_millis(71), &pkt(1, 20)); // 51 ms: late
    sink.on_packet(Time::from_millis(72), &pkt(1, 20)); // a copy
    assert_eq!((sink.received, sink.late, sink.duplicates), (2, 1, 1));
}

/// The summary's loss and the E-model input: of 100 packets sent, 5 in
/// flight, 90 received of which 9 late: lost 5 of the 95 settled (5.26 %),
/// late 9.47 %, Ppl 14.7 %; Ta = 20 ms + 0 look-ahead + 100 ms playout.
#[test]
fn summary_counts_and_emodel_inputs() {
    let p = Pattern::Voice {
        codec: Codec::G711Plc,
        payload: 172,
        interval: Time::from_millis(20),
        spurts: None,
    };
    let mut st = Stream::new(0, spec(p, Time::ZERO, None));
    while st.source.sent() < 100 {
        let t = st.source.poll_timeout().unwrap();
        let p = st.source.poll_transmit(t).unwrap();
        let k = p.seq;
        if k < 90 {
            let d = if k < 9 { 150 } else { 30 };
            st.sink.on_packet(p.sent_at + Time::from_millis(d), &p);
        }
    }
    let s = st.summary(0, "A", "B", 5, Time::from_secs(10));
    assert_eq!(
        (s.sent, s.received, s.lost, s.late, s.in_flight),
        (100, 90, 5, 9, 5)
    );
    assert!((s.loss_pct - 500.0 / 95.0).abs() < 1e-9);
    assert!((s.late_pct - 900.0 / 95.0).abs() < 1e-9);
    let e = s.emodel.unwrap();
    assert!((e.ta_ms - 120.0).abs() < 1e-9);
    assert!((e.ppl_pct - 1400.0 / 95.0).abs() < 1e-9);
    let want = EModel::voip(120.0, 0.0, 25.1, 1400.0 / 95.0).rate();
    assert_eq!(e.r, want.r);
    assert!(e.r < 93.2 - 20.0, "{e:?}");
}

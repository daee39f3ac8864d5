use super::*;
use proptest::prelude::*;

fn s(x: f64) -> Time {
    Time((x * 1e9).round() as u64)
}

fn cfg(pattern: Pattern) -> AllocationConfig {
    AllocationConfig {
        from: "BTS".into(),
        to: "MS{1..4}".into(),
        pattern,
        at: None,
        fch: None,
        sch: None,
        mobiles: None,
        rise: None,
        burst: None,
        gap: None,
        spread: None,
        until: None,
        admission: None,
        ack_regulation: None,
    }
}

#[test]
fn step_switches_the_chosen_mobiles_and_holds() {
    let mut c = cfg(Pattern::Step);
    c.at = Some(s(100.0));
    c.mobiles = Some(1);
    c.validate().unwrap();
    let g = c.expand(4, s(200.0), MAX_STEPS).unwrap();
    assert_eq!(g.per_mobile[0], vec![(s(100.0), Time::MAX)]);
    assert!(g.per_mobile[1..].iter().all(Vec::is_empty));
    let sch = c.schedules(&g);
    assert_eq!(sch[0], vec![(Time::ZERO, 9_600), (s(100.0), 163_200)]);
    assert_eq!(sch[3], vec![(Time::ZERO, 9_600)]);
    c.mobiles = Some(5);
    assert_eq!(
        c.expand(4, s(200.0), MAX_STEPS).unwrap_err().path,
        "mobiles"
    );
}

#[test]
fn sequential_spreads_over_the_rise_time() {
    let mut c = cfg(Pattern::Sequential);
    c.at = Some(s(50.0));
    c.rise = Some(s(1.0));
    let g = c.expand(4, s(100.0), MAX_STEPS).unwrap();
    let starts: Vec<Time> = g.per_mobile.iter().map(|m| m[0].0).collect();
    assert_eq!(starts, vec![s(50.0), s(50.25), s(50.5), s(50.75)]);
}

#[test]
fn finite_burst_spreads_up_and_down_switches() {
    let mut c = cfg(Pattern::Burst);
    c.burst = Some(s(1.0));
    c.gap = Some(s(2.0));
    let g = c.expand(2, s(6.0), MAX_STEPS).unwrap();
    assert_eq!(g.per_mobile[0], vec![(s(0.0), s(1.0)), (s(3.0), s(4.0))]);
    assert_eq!(g.per_mobile[1], vec![(s(0.05), s(1.1)), (s(3.05), s(4.1))]);
    assert_eq!(g.requested, 4);
    let sch = c.schedules(&g);
    assert_eq!(
        sch[1],
        vec![
            (Time::ZERO, 9_600),
            (s(0.05), 163_200),
            (s(1.1), 9_600),
            (s(3.05), 163_200),
            (s(4.1), 9_600)
        ]
    );
    // A grant at 0 replaces the first step; back-to-back grants merge.
    assert_eq!(sch[0][0], (Time::ZERO, 163_200));
    let merged = Grants {
        per_mobile: vec![vec![(s(1.0), s(2.0)), (s(2.0), s(3.0))]],
        ..Grants::default()
    };
    assert_eq!(
        c.schedules(&merged)[0],
        vec![(Time::ZERO, 9_600), (s(1.0), 163_200), (s(3.0), 9_600)]
    );
}

#[test]
fn scheduled_allocation_keeps_the_aggregate_level() {
    let mut c = cfg(Pattern::Scheduled);
    c.burst = Some(s(1.0));
    c.gap = Some(s(1.0));
    let g = c.expand(2, s(10.0), MAX_STEPS).unwrap();
    assert_eq!(g.per_mobile[0][..2], [(s(0.0), s(1.0)), (s(2.0), s(3.0))]);
    assert_eq!(g.per_mobile[1][..2], [(s(1.0), s(2.0)), (s(3.0), s(4.0))]);
}

#[test]
fn admission_limits_the_rise_rate() {
    let mut c = cfg(Pattern::Step);
    c.at = Some(s(10.0));
    c.admission = Some(AdmissionConfig {
        max_rise: Rate::from_bps(2 * 153_600).unwrap(),
        window: None,
        retry: None,
    });
    c.validate().unwrap();
    let g = c.expand(4, s(100.0), MAX_STEPS).unwrap();
    let starts: Vec<Time> = g.per_mobile.iter().map(|m| m[0].0).collect();
    assert_eq!(starts, vec![s(10.0), s(10.0), s(11.0), s(11.0)]);
    assert_eq!((g.requested, g.delayed, g.refused), (4, 2, 0));
    // A burst too short to wait for is refused.
    let mut c = cfg(Pattern::Burst);
    c.burst = Some(s(0.5));
    c.gap = Some(s(5.0));
    c.spread = Some(0.0);
    c.admission = Some(AdmissionConfig {
        max_rise: Rate::from_bps(153_600).unwrap(),
        window: None,
        retry: None,
    });
    let g = c.expand(2, s(5.0), MAX_STEPS).unwrap();
    assert_eq!(g.per_mobile[0], vec![(s(0.0), s(0.5))]);
    assert!(g.per_mobile[1].is_empty());
    assert_eq!((g.requested, g.delayed, g.refused), (2, 1, 1));
}

#[test]
fn keys_are_checked_against_the_pattern() {
    let mut c = cfg(Pattern::Burst);
    c.burst = Some(s(1.0));
    assert_eq!(c.validate().unwrap_err().path, "gap");
    c.gap = Some(s(1.0));
    c.rise = Some(s(1.0));
    let e = c.validate().unwrap_err();
    assert_eq!(e.path, "rise");
    assert!(e.allowed.contains("burst, gap, spread, until"), "{e}");
    c.rise = None;
    c.spread = Some(1.5);
    assert_eq!(c.validate().unwrap_err().path, "spread");
    c.spread = None;
    c.admission = Some(AdmissionConfig {
        max_rise: Rate::from_bps(100_000).unwrap(),
        window: None,
        retry: None,
    });
    assert_eq!(c.validate().unwrap_err().path, "admission.max_rise");
    let mut c = cfg(Pattern::Step);
    c.gap = Some(s(1.0));
    assert_eq!(c.validate().unwrap_err().path, "gap");
    let mut c = cfg(Pattern::Burst);
    c.burst = Some(s(0.02));
    c.gap = Some(s(0.02));
    let e = c.expand(4, s(1000.0), 1000).unwrap_err();
    assert!(e.allowed.contains("MAX_STEPS"), "{e}");
}

fn regulation(hold: f64) -> AckRegulationConfig {
    AckRegulationConfig {
        link: "BSC->R".into(),
        rate: Rate::from_bps(153_600).unwrap(),
        hold: s(hold),
    }
}

#[test]
fn ack_regulation_drops_at_each_upswitch_and_recovers_after_the_latest() {
    let r = regulation(2.0);
    let base = 3_840_000;
    let one = r.schedule(&[s(10.0)], base);
    assert_eq!(one[0], (Time::ZERO, base));
    assert_eq!(one[1], (s(10.0), 153_600));
    assert_eq!(one.len(), 2 + RECOVERY_STEPS as usize);
    assert_eq!(*one.last().unwrap(), (s(12.0), base));
    // Geometric: halfway through the recovery, the geometric mean.
    let mid = one.iter().find(|x| x.0 == s(11.0)).unwrap().1;
    assert_eq!(mid, (153_600f64 * 3_840_000f64).sqrt().round() as u64);
    // A later up-switch within the hold restarts it; repeats collapse.
    let two = r.schedule(&[s(10.5), s(10.0), s(10.5)], base);
    assert_eq!(*two.last().unwrap(), (s(12.5), base));
    assert_eq!(two.iter().filter(|x| x.1 == 153_600).count(), 2);
    let before: Vec<_> = two.iter().filter(|x| x.0 < s(10.5)).collect();
    assert_eq!(before.len(), 1 + 1 + 4, "{two:?}"); // 0 s, 10 s, 10.1..10.4 s
                                                    // No up-switch: the fixed rate.
    assert_eq!(r.schedule(&[], base), vec![(Time::ZERO, base)]);
    // An up-switch at 0 s starts low.
    assert_eq!(r.schedule(&[Time::ZERO], base)[0], (Time::ZERO, 153_600));
}

#[test]
fn ack_regulation_keys_are_checked() {
    let mut c = cfg(Pattern::Step);
    c.ack_regulation = Some(regulation(0.0));
    assert_eq!(c.validate().unwrap_err().path, "ack_regulation.hold");
    let mut r = regulation(1.0);
    r.link = "BSC".into();
    c.ack_regulation = Some(r);
    let e = c.validate().unwrap_err();
    assert_eq!(e.path, "ack_regulation.link");
    assert!(e.allowed.contains("A->B"), "{}", e.allowed);
}

proptest! {
    /// ACK regulation: times increase from 0, every rate lies between the
    /// regulated and the own rate, and the own rate is back `hold` after the
    /// latest up-switch.
    #[test]
    fn ack_regulation_schedules_are_well_formed(
        starts in proptest::collection::vec(0u64..20_000, 0..30),
        hold_ms in 1u64..5000,
    ) {
        let ms = Time::from_millis;
        let r = AckRegulationConfig { hold: ms(hold_ms), ..regulation(1.0) };
        let t: Vec<Time> = starts.iter().map(|&x| ms(x)).collect();
        let out = r.schedule(&t, 1_000_000);
        prop_assert_eq!(out[0].0, Time::ZERO);
        for w in out.windows(2) {
            prop_assert!(w[0].0 < w[1].0 && w[0].1 != w[1].1, "{:?}", out);
        }
        prop_assert!(out.iter().all(|x| (153_600..=1_000_000).contains(&x.1)));
        prop_assert_eq!(out.last().unwrap().1, 1_000_000);
        if let Some(&last) = t.iter().max() {
            prop_assert!(out.last().unwrap().0 <= last + ms(hold_ms));
        }
    }
}

proptest! {
    /// Every schedule starts at 0 with increasing times and alternates
    /// between the two rates; with admission, no window holds more grants
    /// than the rise budget allows.
    #[test]
    fn schedules_are_well_formed(
        pattern in prop_oneof![
            Just(Pattern::Step), Just(Pattern::Sequential),
            Just(Pattern::Burst), Just(Pattern::Scheduled)
        ],
        n in 1usize..12,
        at_ms in 0u64..3000,
        rise_ms in 0u64..5000,
        burst_ms in 1u64..4000,
        gap_ms in 1u64..4000,
        spread in 0.0f64..1.0,
        cap in proptest::option::of(1u64..4),
        window_ms in 1u64..3000,
    ) {
        let ms = Time::from_millis;
        let mut c = cfg(pattern);
        c.at = Some(ms(at_ms));
        match pattern {
            Pattern::Sequential => c.rise = Some(ms(rise_ms)),
            Pattern::Step => {}
            _ => {
                c.burst = Some(ms(burst_ms));
                c.gap = Some(ms(gap_ms));
                if pattern == Pattern::Burst {
                    c.spread = Some(spread);
                }
            }
        }
        c.admission = cap.map(|k| AdmissionConfig {
            max_rise: Rate::from_bps(k * 153_600).unwrap(),
            window: Some(ms(window_ms)),
            retry: Some(ms(50)),
        });
        c.validate().unwrap();
        let g = c.expand(n, ms(20_000), MAX_STEPS).unwrap();
        for sch in c.schedules(&g) {
            prop_assert_eq!(sch[0].0, Time::ZERO);
            for w in sch.windows(2) {
                prop_assert!(w[0].0 < w[1].0, "{:?}", sch);
                prop_assert!(w[0].1 != w[1].1, "{:?}", sch);
            }
        }
        if let Some(k) = cap {
            let mut starts: Vec<Time> = g.per_mobile.iter().flatten().map(|x| x.0).collect();
            starts.sort();
            for (i, &t) in starts.iter().enumerate() {
                let inside = starts[i..].iter().take_while(|&&u| u < t + ms(window_ms)).count();
                prop_assert!(inside as u64 <= k, "{} grants within a window from {}", inside, t);
            }
        }
    }
}

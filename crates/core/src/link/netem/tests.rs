//! Hand-computed cases from `sch_netem.c` / `tc-netem(8)` and invariants.

use super::*;
use crate::rng::Rng;
use proptest::prelude::{any, prop, prop_assert, prop_assert_eq, proptest};

const MS: fn(u64) -> Time = Time::from_millis;

fn stage(cfg: NetemConfig) -> Netem {
    cfg.validate().unwrap();
    cfg.build(Rng::stream(7, "netem"))
}

fn pkt(uid: u64, size: u32) -> Packet {
    Packet {
        uid,
        payload: size - 40,
        header: 40,
        ..Packet::default()
    }
}

fn prob(p: f64) -> Option<Probability> {
    Some(Probability::new(p).unwrap())
}

/// Admit packets `(ms, uid, size)`, drain everything: (ms out, uid, arrived).
fn run(n: &mut Netem, offers: &[(u64, u64, u32)]) -> Vec<(u64, u64, bool)> {
    let mut out = Vec::new();
    let mut offers = offers.iter().peekable();
    loop {
        let next_in = offers.peek().map(|o| MS(o.0));
        let now = match (n.next_time(), next_in) {
            // Due packets leave before arrivals at the same instant.
            (Some(a), Some(b)) if a <= b => a,
            (_, Some(b)) => b,
            (Some(a), None) => a,
            (None, None) => break,
        };
        while let Some(d) = n.pop(now) {
            let ms = now.as_nanos() / 1_000_000;
            out.push(match d {
                Delivery::Arrived(p) => (ms, p.uid, true),
                Delivery::Lost(p, _) => (ms, p.uid, false),
            });
        }
        while offers.peek().is_some_and(|o| MS(o.0) <= now) {
            let &(_, uid, size) = offers.next().unwrap();
            n.admit(now, pkt(uid, size));
        }
    }
    out
}

#[test]
fn correlation_arithmetic_is_the_kernels() {
    // rho = 0.5 → 2^31 (rounded); value 0, last 2^32 − 1:
    // (2^32 − 1)(2^31 + 1) >> 32 = (2^63 + 2^31 − 1) >> 32 = 2^31.
    assert_eq!(scale(0.5), 1 << 31);
    assert_eq!(correlate(0, u32::MAX, scale(0.5)), 1 << 31);
    // rho = 1 (2^32 − 1): the previous value is kept.
    assert_eq!(correlate(12345, 777, u32::MAX), 777);
    assert_eq!(scale(1.0), u32::MAX);
    assert_eq!(scale(0.0), 0);
}

#[test]
fn uniform_jitter_is_tabledists() {
    // (rnd % 2σ) + μ − σ, in ns: σ = 10 ms, μ = 100 ms.
    let (mu, sigma) = (100_000_000, 10_000_000);
    assert_eq!(
        dist_value(5_000_000, mu, sigma, Distribution::Uniform),
        95_000_000
    );
    assert_eq!(
        dist_value(25_000_000, mu, sigma, Distribution::Uniform),
        95_000_000
    );
    assert_eq!(dist_value(0, mu, sigma, Distribution::Uniform), 90_000_000);
}

#[test]
fn distribution_tables_are_iproute2s() {
    let normal = table(Distribution::Normal).unwrap();
    let pareto = table(Distribution::Pareto).unwrap();
    let pn = table(Distribution::Paretonormal).unwrap();
    assert_eq!(normal.len(), 4096);
    assert_eq!(pareto.len(), 4096);
    assert_eq!(pn.len(), 4096);
    // normal.dist: the first entry is clipped, the table is the inverse CDF
    // scaled by 8192 (Φ⁻¹(4.5/16384) ≈ −3.456), symmetric around the middle.
    assert_eq!(normal[0], i16::MIN);
    assert!((i32::from(normal[1]) + 28_310).abs() < 30, "{}", normal[1]);
    assert!(i32::from(normal[2048]).abs() < 10, "{}", normal[2048]);
    let mean: f64 = normal.iter().map(|&v| f64::from(v)).sum::<f64>() / 4096.0 / 8192.0;
    let sd = (normal
        .iter()
        .map(|&v| (f64::from(v) / 8192.0 - mean).powi(2))
        .sum::<f64>()
        / 4096.0)
        .sqrt();
    assert!(mean.abs() < 0.01 && (sd - 1.0).abs() < 0.02, "{mean} {sd}");
    // pareto.dist: (1/u^(1/3) − 1.5)·(4/3)·8192 from u = 1 down, clipped at 32767.
    assert_eq!(pareto[0], -5461);
    assert_eq!(pareto[4095], 32767);
    assert!(pareto.windows(2).all(|w| w[0] <= w[1]));
    // paretonormal: (normal + 3·pareto)/4 at the same grid points.
    let raw = (normal_grid()[0] * 8192.0).round_ties_even() as i64;
    assert_eq!(i64::from(pn[0]), ((raw + 3 * -5461) / 4).max(-32768));
    let raw = (normal_grid()[8000] * 8192.0).round_ties_even() as i64;
    assert_eq!(
        i64::from(pn[2000]),
        (raw + 3 * pareto_value(65536 - 4 * 8000)) / 4
    );
}

#[test]
fn table_interpolation_is_tabledists() {
    // x = (σ % 8192)·t ± 4096, then x/8192 + (σ/8192)·t + μ (integer division).
    let normal = table(Distribution::Normal).unwrap();
    let t = i64::from(normal[100]);
    let sigma = 10_000_000i64;
    let mut x = (sigma % 8192) * t;
    x += if x >= 0 { 4096 } else { -4096 };
    let want = x / 8192 + (sigma / 8192) * t + 50;
    assert_eq!(dist_value(100, 50, sigma, Distribution::Normal), want);
    // 4096 + 100 picks the same entry.
    assert_eq!(dist_value(4196, 50, sigma, Distribution::Normal), want);
}

#[test]
fn constant_delay_keeps_order_and_adds_the_delay() {
    let mut n = stage(NetemConfig {
        delay: Some(MS(10)),
        ..NetemConfig::default()
    });
    let got = run(&mut n, &[(0, 1, 1500), (1, 2, 1500), (1, 3, 100)]);
    assert_eq!(got, vec![(10, 1, true), (11, 2, true), (11, 3, true)]);
}

#[test]
fn reorder_with_gap_sends_every_fifth_packet_at_once() {
    // tc-netem(8): "reorder 100% gap 5": packets 5, 10, … are sent at once.
    let mut n = stage(NetemConfig {
        delay: Some(MS(10)),
        reorder: prob(1.0),
        gap: Some(5),
        ..NetemConfig::default()
    });
    let offers: Vec<(u64, u64, u32)> = (1..=10).map(|i| (i, i, 1000)).collect();
    let got = run(&mut n, &offers);
    let immediate: Vec<u64> = got.iter().filter(|g| g.0 == g.1).map(|g| g.1).collect();
    assert_eq!(immediate, vec![5, 10]);
    assert_eq!(n.stats().reordered, 2);
    // The others keep their 10 ms.
    assert!(got.iter().filter(|g| g.1 % 5 != 0).all(|g| g.0 == g.1 + 10));
    // gap 1 (the default): every packet is reordered with probability P.
    let mut n = stage(NetemConfig {
        delay: Some(MS(10)),
        reorder: prob(1.0),
        ..NetemConfig::default()
    });
    let got = run(&mut n, &offers);
    assert!(got.iter().all(|g| g.0 == g.1));
}

#[test]
fn duplicate_corrupt_and_limit() {
    let mut n = stage(NetemConfig {
        delay: Some(MS(5)),
        duplicate: prob(1.0),
        ..NetemConfig::default()
    });
    let got = run(&mut n, &[(0, 1, 1000), (1, 2, 1000)]);
    assert_eq!(
        got,
        vec![(5, 1, true), (5, 1, true), (6, 2, true), (6, 2, true)]
    );
    assert_eq!(n.stats().duplicated, 2);
    // Corrupted packets arrive (after the delay) and are discarded.
    let mut n = stage(NetemConfig {
        delay: Some(MS(5)),
        corrupt: prob(1.0),
        ..NetemConfig::default()
    });
    assert_eq!(run(&mut n, &[(0, 1, 1000)]), vec![(5, 1, false)]);
    // limit 2: the third packet held at once overflows.
    let mut n = stage(NetemConfig {
        delay: Some(MS(5)),
        limit: Some(2),
        ..NetemConfig::default()
    });
    let got = run(&mut n, &[(0, 1, 100), (0, 2, 100), (0, 3, 100)]);
    assert_eq!(got, vec![(0, 3, false), (5, 1, true), (5, 2, true)]);
    assert_eq!(n.stats().overflow, 1);
}

#[test]
fn loss_with_duplication_drops_the_copy_and_ecn_marks() {
    // Duplicated and lost: count 2 − 1 = 1, the packet goes through once,
    // without a copy (the clone is made only when count > 1 after the loss).
    let lossy = Some(NetemLossConfig::Random(RandomLossConfig {
        p: Probability::ONE,
        correlation: None,
    }));
    let mut n = stage(NetemConfig {
        duplicate: prob(1.0),
        loss: lossy.clone(),
        ..NetemConfig::default()
    });
    assert_eq!(run(&mut n, &[(0, 1, 100)]), vec![(0, 1, true)]);
    assert_eq!((n.stats().duplicated, n.stats().lost), (0, 0));
    // ecn: ECN-capable packets are marked instead of dropped.
    let mut n = stage(NetemConfig {
        loss: lossy,
        ecn: Some(true),
        ..NetemConfig::default()
    });
    let mut p = pkt(1, 100);
    p.ecn = Ecn::Ect0;
    n.admit(Time::ZERO, p);
    n.admit(Time::ZERO, pkt(2, 100));
    let a = n.pop(Time::ZERO).unwrap();
    let b = n.pop(Time::ZERO).unwrap();
    assert!(
        matches!(b, Delivery::Arrived(p) if p.uid == 1 && p.ecn == Ecn::Ce),
        "{b:?}"
    );
    assert!(matches!(a, Delivery::Lost(p, _) if p.uid == 2), "{a:?}");
    assert_eq!(n.stats().ecn_marked, 1);
}

#[test]
fn rate_serialises_and_never_reorders() {
    // 1250-byte packets at 10 Mbit/s take 1 ms; delay 10 ms: 11, 12, 13 ms.
    let mut n = stage(NetemConfig {
        delay: Some(MS(10)),
        rate: Some("10Mbit".parse().unwrap()),
        ..NetemConfig::default()
    });
    let got = run(&mut n, &[(0, 1, 1250), (0, 2, 1250), (0, 3, 1250)]);
    assert_eq!(got, vec![(11, 1, true), (12, 2, true), (13, 3, true)]);
}

#[test]
fn gemodel_hand_case() {
    // p = 1, r = 0, 1-h = 1, 1-k = 0: the first packet is drawn in the good
    // state (no loss) after moving to bad; every later one is lost.
    let mut m = GeLossConfig {
        p: Probability::ONE,
        r: prob(0.0),
        loss_bad: None,
        loss_good: None,
    }
    .model();
    let mut rng = Rng::stream(1, "ge");
    let got: Vec<bool> = (0..5).map(|_| m.event(&mut rng)).collect();
    assert_eq!(got, vec![false, true, true, true, true]);
}

/// Long-run loss rate of `m` over `n` packets.
fn loss_rate(mut m: LossModel, n: usize) -> f64 {
    let mut rng = Rng::stream(11, "rate");
    (0..n).filter(|_| m.event(&mut rng)).count() as f64 / n as f64
}

#[test]
fn loss_models_reach_their_stationary_rates() {
    let n = 400_000;
    // Random, uncorrelated: p.
    let r = loss_rate(
        RandomLossConfig {
            p: Probability::new(0.03).unwrap(),
            correlation: None,
        }
        .model(),
        n,
    );
    assert!((r - 0.03).abs() < 0.002, "{r}");
    // Gilbert–Elliott: π_bad = p/(p+r); loss = π_bad(1−h) + π_good(1−k).
    let (p, rr, lb, lg) = (0.02, 0.25, 0.6, 0.01);
    let ge = GeLossConfig {
        p: Probability::new(p).unwrap(),
        r: prob(rr),
        loss_bad: prob(lb),
        loss_good: prob(lg),
    };
    let pb = p / (p + rr);
    let want = pb * lb + (1.0 - pb) * lg;
    let got = loss_rate(ge.model(), n);
    assert!((got - want).abs() < 0.004, "{got} vs {want}");
    // 4-state: solve π = πP for P over states 1..4 and sum π3 + π4.
    let (p13, p31, p32, p23, p14) = (0.02, 0.3, 0.2, 0.4, 0.01);
    let st = StateLossConfig {
        p13: Probability::new(p13).unwrap(),
        p31: prob(p31),
        p32: prob(p32),
        p23: prob(p23),
        p14: prob(p14),
    };
    st.validate().unwrap();
    // Balance: π4 = p14·π1; π3(p31+p32) = p13·π1 + p23·π2; π2·p23 = p32·π3;
    // π1 = 1 with normalisation at the end.
    let pi1 = 1.0;
    let pi4 = p14 * pi1;
    // π3(p31+p32) = p13 + p23·π2 and π2 = p32·π3/p23 → π3·p31 = p13.
    let pi3 = p13 * pi1 / p31;
    let pi2 = p32 * pi3 / p23;
    let want = (pi3 + pi4) / (pi1 + pi2 + pi3 + pi4);
    let got = loss_rate(st.model(), n);
    assert!((got - want).abs() < 0.004, "{got} vs {want}");
}

#[test]
fn config_rules() {
    let bad = |c: NetemConfig| c.validate().unwrap_err().path;
    assert_eq!(
        bad(NetemConfig {
            reorder: prob(0.1),
            ..NetemConfig::default()
        }),
        "reorder"
    );
    assert_eq!(
        bad(NetemConfig {
            delay: Some(MS(1)),
            gap: Some(3),
            ..NetemConfig::default()
        }),
        "gap"
    );
    assert_eq!(
        bad(NetemConfig {
            limit: Some(0),
            ..NetemConfig::default()
        }),
        "limit"
    );
    let st = NetemLossConfig::State(StateLossConfig {
        p13: Probability::new(0.7).unwrap(),
        p14: prob(0.5),
        ..StateLossConfig::default()
    });
    assert_eq!(
        bad(NetemConfig {
            loss: Some(st),
            ..NetemConfig::default()
        }),
        "loss.p14"
    );
}

proptest! {
    /// Whatever the impairments, every packet admitted comes out exactly once
    /// per copy (arrived or lost), never before its admission; with `pfifo`
    /// or `rate` arrivals keep their order; with `tfifo` leaving times never
    /// go back.
    #[test]
    fn conservation_and_order(
        gaps in prop::collection::vec(0u64..5, 1..80),
        jitter in 0u64..30,
        dist in 0usize..4,
        dup in 0.0f64..0.5,
        loss in 0.0f64..0.5,
        reorder in 0.0f64..0.5,
        pfifo in any::<bool>(),
        rate in any::<bool>(),
    ) {
        let cfg = NetemConfig {
            delay: Some(MS(20)),
            jitter: Some(MS(jitter)),
            distribution: Some([Distribution::Uniform, Distribution::Normal,
                Distribution::Pareto, Distribution::Paretonormal][dist]),
            duplicate: prob(dup),
            loss: Some(NetemLossConfig::Random(RandomLossConfig {
                p: Probability::new(loss).unwrap(), correlation: prob(0.3) })),
            reorder: prob(reorder),
            rate: rate.then(|| "100Mbit".parse().unwrap()),
            child: Some(if pfifo { Child::Pfifo } else { Child::Tfifo }),
            ..NetemConfig::default()
        };
        let mut n = stage(cfg);
        let mut t = 0;
        let offers: Vec<(u64, u64, u32)> = gaps.iter().enumerate()
            .map(|(i, g)| { t += g; (t, i as u64, 1000) }).collect();
        let got = run(&mut n, &offers);
        let s = n.stats().clone();
        prop_assert_eq!(got.len() as u64, offers.len() as u64 + s.duplicated);
        prop_assert_eq!(n.held(), 0);
        for g in &got {
            prop_assert!(g.0 >= offers[g.1 as usize].0);
        }
        let times: Vec<u64> = got.iter().map(|g| g.0).collect();
        prop_assert!(times.windows(2).all(|w| w[0] <= w[1]));
        if (pfifo || rate) && reorder == 0.0 {
            let uids: Vec<u64> = got.iter().filter(|g| g.2).map(|g| g.1).collect();
            prop_assert!(uids.windows(2).all(|w| w[0] <= w[1]), "{:?}", uids);
        }
    }
}

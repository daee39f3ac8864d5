use super::*;
use crate::rng::Rng;
use proptest::prelude::*;

/// Paper parameters (§III-A, Fig. 3): p_G = 0.01, p_B = 0.9, g = 0.9, n_pdu = 25.
fn paper(b: f64) -> ArqModel {
    ArqModel::new(0.01, 0.9, 0.9, b, 25).unwrap()
}

/// Pr{SDU incomplete after `rounds` rounds | channel state `c`, `k` PDUs left},
/// by enumerating every PDU's outcome separately (no binomials, no matrices).
fn brute_survive(m: &ArqModel, c: usize, k: u32, rounds: u32) -> f64 {
    if k == 0 {
        return 0.0;
    }
    if rounds == 0 {
        return 1.0;
    }
    let p = if c == 0 { m.p_good } else { m.p_bad };
    let stay = if c == 0 { m.g } else { m.b };
    let mut total = 0.0;
    for mask in 0u32..(1 << k) {
        let fails = mask.count_ones();
        let mut pr = 1.0;
        for i in 0..k {
            pr *= if mask >> i & 1 == 1 { p } else { 1.0 - p };
        }
        if pr == 0.0 {
            continue;
        }
        total += pr
            * (stay * brute_survive(m, c, fails, rounds - 1)
                + (1.0 - stay) * brute_survive(m, 1 - c, fails, rounds - 1));
    }
    total
}

fn brute_f(m: &ArqModel, n: u32) -> f64 {
    let (pg, pb) = m.stationary();
    pg * brute_survive(m, 0, m.npdu, n) + pb * brute_survive(m, 1, m.npdu, n)
}

/// Dense `Q` (rows/cols `c * n + k − 1`), for the power iteration.
fn dense_q(m: &ArqModel) -> Vec<Vec<f64>> {
    let n = m.npdu as usize;
    let pm = [[m.g, 1.0 - m.g], [1.0 - m.b, m.b]];
    let mut q = vec![vec![0.0; 2 * n]; 2 * n];
    let binom = m.binom().unwrap();
    for c in 0..2 {
        for k in 1..=n {
            for c2 in 0..2 {
                for kp in 1..=k {
                    q[c * n + k - 1][c2 * n + kp - 1] = binom[c][tri(k, kp)] * pm[c][c2];
                }
            }
        }
    }
    q
}

fn power_iteration(q: &[Vec<f64>], iters: usize) -> f64 {
    let d = q.len();
    let mut v = vec![1.0; d];
    let mut est = 0.0;
    for _ in 0..iters {
        let mut w = vec![0.0; d];
        for i in 0..d {
            for j in 0..d {
                w[j] += v[i] * q[i][j];
            }
        }
        let s: f64 = w.iter().sum();
        let prev: f64 = v.iter().sum();
        est = s / prev;
        if s == 0.0 {
            return 0.0;
        }
        v = w.iter().map(|x| x / s).collect();
    }
    est
}

/// Wilson interval for a proportion at normal quantile `z`.
fn wilson(hits: u64, n: u64, z: f64) -> (f64, f64) {
    let nf = n as f64;
    let p = hits as f64 / nf;
    let den = 1.0 + z * z / nf;
    let centre = (p + z * z / (2.0 * nf)) / den;
    let half = z * (p * (1.0 - p) / nf + z * z / (4.0 * nf * nf)).sqrt() / den;
    (centre - half, centre + half)
}

#[test]
fn matches_brute_force_enumeration() {
    for &(pg, pb, g, b, npdu) in &[
        (0.1, 0.7, 0.8, 0.6, 1),
        (0.2, 0.9, 0.9, 0.9, 2),
        (0.05, 0.5, 0.3, 0.1, 3),
        (0.3, 0.6, 0.5, 0.95, 4),
    ] {
        let m = ArqModel::new(pg, pb, g, b, npdu).unwrap();
        let curve = m.residual_loss_curve(4).unwrap();
        for n in 0..=4u32 {
            let want = brute_f(&m, n);
            assert!(
                (curve[n as usize] - want).abs() < 1e-12,
                "npdu={npdu} n={n}: {} vs {want}",
                curve[n as usize]
            );
            assert_eq!(m.residual_loss(n).unwrap(), curve[n as usize]);
        }
    }
}

#[test]
fn monte_carlo_within_95_percent_interval() {
    for (i, &b) in [0.1, 0.9].iter().enumerate() {
        let m = paper(b);
        let mut rng = Rng::stream(2026, &format!("test:arq-mc-{i}"));
        let n_sdus = 20_000;
        let etas = m.simulate(n_sdus, 200, &mut rng).unwrap();
        let f = m.residual_loss_curve(30).unwrap();
        // The 31 estimates come from the same SDUs, so the intervals are
        // Bonferroni-corrected: together they cover F at every n with 95 %
        // probability (z = Φ⁻¹(1 − 0.025/31) = 3.16).
        for n in 0..=30u32 {
            let hits = etas.iter().filter(|&&e| e > n).count() as u64;
            let (lo, hi) = wilson(hits, n_sdus as u64, 3.16);
            let fn_ = f[n as usize];
            assert!(
                lo - 1e-12 <= fn_ && fn_ <= hi + 1e-12,
                "b={b} n={n}: F={fn_} outside [{lo}, {hi}] ({hits} hits)"
            );
        }
        assert!(etas.iter().all(|&e| (1..=201).contains(&e)));
        let mean = etas.iter().map(|&e| e as f64).sum::<f64>() / n_sdus as f64;
        assert!(
            (mean - m.mean_tx().unwrap()).abs() < 0.05 * m.mean_tx().unwrap(),
            "b={b} mean {mean}"
        );
    }
}

#[test]
fn simulate_caps_and_is_deterministic() {
    let dead = ArqModel::new(1.0, 1.0, 0.5, 0.5, 3).unwrap();
    assert_eq!(
        dead.simulate(5, 7, &mut Rng::stream(1, "t")).unwrap(),
        vec![8; 5]
    );
    let m = paper(0.9);
    let a = m.simulate(100, 50, &mut Rng::stream(1, "t")).unwrap();
    let b = m.simulate(100, 50, &mut Rng::stream(1, "t")).unwrap();
    assert_eq!(a, b);
}

#[test]
fn paper_parameters_sanity() {
    // b = 0.1: π_B = 0.1; b = 0.9: π_B = 0.5 and BAD spells last 10 frames.
    let lo = paper(0.1);
    let hi = paper(0.9);
    let (pg, pb) = lo.stationary();
    assert!((pg - 0.9).abs() < 1e-15 && (pb - 0.1).abs() < 1e-15);
    let (pg, pb) = hi.stationary();
    assert!((pg - 0.5).abs() < 1e-15 && (pb - 0.5).abs() < 1e-15);
    for m in [&lo, &hi] {
        let c = m.residual_loss_curve(60).unwrap();
        assert!(c[1] > 0.2 && c[60] < 1e-3, "{:?}", &c[..5]);
        assert!(m.mean_tx().unwrap().is_finite() && m.mean_tx().unwrap() > 1.0);
    }
    // High burstiness: BAD spells last 10 frames, so the tail decays slowly.
    assert!(hi.lambda1() > lo.lambda1());
    assert!(hi.residual_loss(20).unwrap() > lo.residual_loss(20).unwrap());
}

#[test]
fn edge_probabilities_are_exact() {
    let perfect = ArqModel::new(0.0, 0.0, 0.5, 0.5, 25).unwrap();
    assert_eq!(
        perfect.residual_loss_curve(3).unwrap(),
        vec![1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(perfect.mean_tx().unwrap(), 1.0);
    assert_eq!(perfect.lambda1(), 0.0);
    assert_eq!(perfect.limit_for_target(0.01), 1);

    let dead = ArqModel::new(1.0, 1.0, 0.5, 0.5, 3).unwrap();
    assert_eq!(dead.residual_loss(50).unwrap(), 1.0);
    assert_eq!(dead.lambda1(), 1.0);
    assert!(dead.mean_tx().unwrap().is_infinite());
    assert_eq!(dead.limit_for_target(0.5), LIMIT_CAP);

    // p_B = 1 with b = 1: BAD is a trap and π_B = 1.
    let trap = ArqModel::new(0.1, 1.0, 0.5, 1.0, 2).unwrap();
    assert!(trap.mean_tx().unwrap().is_infinite());

    // p_B = 1 but BAD is left: finite.
    let ok = ArqModel::new(0.0, 1.0, 0.9, 0.5, 4).unwrap();
    assert!(ok.mean_tx().unwrap().is_finite());
    let direct: f64 = ok.residual_loss_curve(2000).unwrap().iter().sum();
    assert!((ok.mean_tx().unwrap() - direct).abs() < 1e-9);
}

#[test]
fn near_absorbing_channel_keeps_f_hat_1_equal_to_f_1() {
    // Found by hypothesis: g close to 1 with b = 1 made 2 − g − b round so that
    // π_G + π_B ≠ 1 and F̂(1) = 1.1e-11 while F(1) = 0.
    let m = ArqModel::new(0.0, 0.0, 0.99999, 1.0, 1).unwrap();
    let (pg, pb) = m.stationary();
    assert_eq!(pg + pb, 1.0);
    assert_eq!(m.residual_loss_approx(1), 0.0);
    assert_eq!(m.residual_loss(1).unwrap(), 0.0);
    let tiny = ArqModel::new(1e-18, 1e-18, 0.5, 0.5, 10).unwrap();
    assert!((tiny.residual_loss_approx(1) / 1e-17 - 1.0).abs() < 1e-9);
}

#[test]
fn large_npdu_and_n_stay_finite() {
    let m = ArqModel::new(0.3, 0.99, 0.5, 0.99, 64).unwrap();
    let c = m.residual_loss_curve(1000).unwrap();
    assert!(c.iter().all(|x| x.is_finite() && (0.0..=1.0).contains(x)));
    assert!(c[1000] > 0.0 && c[1000] < c[1]);
    // The binomial rows sum to one even for n_pdu = 64 (no overflow).
    let binom = m.binom().unwrap();
    for table in &binom {
        for k in 0..=64usize {
            let s: f64 = (0..=k).map(|kp| table[tri(k, kp)]).sum();
            assert!((s - 1.0).abs() < 1e-12, "row {k}: {s}");
        }
    }
    assert!(m.mean_tx().unwrap().is_finite());
}

#[test]
fn invalid_parameters_are_refused() {
    let e = ArqModel::new(1.5, 0.5, 0.5, 0.5, 1).unwrap_err();
    assert!(e.contains("p_good") && e.contains("[0, 1]"), "{e}");
    let e = ArqModel::new(0.1, 0.5, 1.0, 1.0, 1).unwrap_err();
    assert!(e.contains("g = b = 1"), "{e}");
    let e = ArqModel::new(0.1, 0.5, 0.5, 0.5, 0).unwrap_err();
    assert!(e.contains("npdu") && e.contains("at least 1"), "{e}");
    assert!(ArqModel::new(0.1, f64::NAN, 0.5, 0.5, 1).is_err());
}

#[test]
fn sizes_beyond_the_bounds_are_refused_without_allocating() {
    use crate::analytic::arq::{MAX_N, MAX_NPDU, MAX_SDUS};
    // A huge SDU: the closed forms (all the simulator needs) still work...
    let huge = ArqModel::new(0.01, 0.9, 0.9, 0.9, 1_000_000).unwrap();
    assert!(huge.limit_for_target(0.5) >= 1);
    assert!(huge.residual_loss_approx(3) > 0.0);
    // ...the exact chain says which bound it exceeds.
    for e in [
        huge.residual_loss_curve(3).unwrap_err(),
        huge.residual_loss(3).unwrap_err(),
        huge.mean_tx().unwrap_err(),
        huge.mean_tx_limited(3).unwrap_err(),
        huge.mean_tx_limited_curve(3).unwrap_err(),
        huge.simulate(5, 5, &mut Rng::stream(1, "t")).unwrap_err(),
    ] {
        assert!(
            e.contains("npdu = 1000000") && e.contains(&format!("at most {MAX_NPDU}")),
            "{e}"
        );
    }
    let m = paper(0.9);
    let at_limit = ArqModel::new(0.01, 0.9, 0.9, 0.9, MAX_NPDU).unwrap();
    assert!(at_limit.mean_tx().unwrap().is_finite());
    for e in [
        m.residual_loss_curve(MAX_N + 1).unwrap_err(),
        m.residual_loss(u32::MAX).unwrap_err(),
        m.mean_tx_limited_curve(MAX_N + 1).unwrap_err(),
        m.simulate(1, MAX_N + 1, &mut Rng::stream(1, "t"))
            .unwrap_err(),
    ] {
        assert!(
            e.starts_with("n = ") && e.contains(&format!("at most {MAX_N}")),
            "{e}"
        );
    }
    assert_eq!(
        m.residual_loss_curve(MAX_N).unwrap().len(),
        MAX_N as usize + 1
    );
    let e = m
        .simulate(MAX_SDUS + 1, 5, &mut Rng::stream(1, "t"))
        .unwrap_err();
    assert!(
        e.contains("sdus") && e.contains(&format!("at most {MAX_SDUS}")),
        "{e}"
    );
}

#[test]
fn limit_for_target_inverts_eq5() {
    let m = paper(0.9);
    for &t in &[0.5, 0.1, 1e-2, 1e-3, 1e-5] {
        let mt = m.limit_for_target(t);
        assert!(m.residual_loss_approx(mt) <= t);
        assert!(
            mt == 1 || m.residual_loss_approx(mt - 1) > t,
            "t={t} mt={mt}"
        );
    }
    assert_eq!(m.limit_for_target(1.0), 1);
    assert_eq!(m.limit_for_target(0.0), LIMIT_CAP);
    assert_eq!(m.limit_for_target(-1.0), LIMIT_CAP);
    assert_eq!(m.limit_for_target(f64::NAN), LIMIT_CAP);
    assert!(m.limit_for_target(1e-300) <= LIMIT_CAP);
}

fn params() -> impl Strategy<Value = (f64, f64, f64, f64, u32)> {
    (
        0.05f64..0.95,
        0.05f64..0.95,
        0.05f64..0.95,
        0.05f64..0.95,
        1u32..=6,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn f_is_non_increasing_and_f1_matches((pg, pb, g, b, npdu) in params()) {
        let m = ArqModel::new(pg, pb, g, b, npdu).unwrap();
        let c = m.residual_loss_curve(60).unwrap();
        prop_assert_eq!(c[0], 1.0);
        for w in c.windows(2) {
            prop_assert!(w[1] <= w[0] + 1e-15, "{} > {}", w[1], w[0]);
        }
        let (pi_g, pi_b) = m.stationary();
        let f1 = 1.0 - (pi_g * (1.0 - pg).powi(npdu as i32) + pi_b * (1.0 - pb).powi(npdu as i32));
        prop_assert!((c[1] - f1).abs() < 1e-12);
        prop_assert!((m.residual_loss_approx(1) - c[1]).abs() < 1e-12);
    }

    #[test]
    fn lambda1_is_the_dominant_eigenvalue((pg, pb, g, b, npdu) in params()) {
        let m = ArqModel::new(pg, pb, g, b, npdu.min(4)).unwrap();
        let est = power_iteration(&dense_q(&m), 20_000);
        prop_assert!((est - m.lambda1()).abs() < 1e-6 * m.lambda1().max(1e-3),
            "power {} vs closed form {}", est, m.lambda1());
    }

    #[test]
    fn successive_ratio_tends_to_lambda1((pg, pb, g, b, npdu) in params()) {
        let m = ArqModel::new(pg, pb, g, b, npdu).unwrap();
        let l1 = m.lambda1();
        // The next eigenvalues: the smaller root at X = 1, the larger at X = 2.
        let tr = g * pg + b * pb;
        let det = pb * pg * (g + b - 1.0);
        let lminus = ((tr - (tr * tr - 4.0 * det).max(0.0).sqrt()) / 2.0).abs();
        let m2 = ArqModel::new(pg * pg, pb * pb, g, b, 1).unwrap();
        let r = lminus.max(m2.lambda1()) / l1;
        // Longest horizon before F underflows.
        let n = ((-250.0 * 10f64.ln() / l1.ln()).floor() as u32).min(1000);
        prop_assume!(r.powi(n as i32) < 1e-8);
        let c = m.residual_loss_curve(n + 1).unwrap();
        let ratio = c[n as usize + 1] / c[n as usize];
        prop_assert!((ratio - l1).abs() < 1e-4 * l1, "ratio {} vs λ1 {}", ratio, l1);
    }

    #[test]
    fn limited_mean_tends_to_mean((pg, pb, g, b, npdu) in params()) {
        let m = ArqModel::new(pg, pb, g, b, npdu).unwrap();
        let full = m.mean_tx().unwrap();
        let mut prev = 0.0;
        for mt in [1u32, 2, 5, 20, 100] {
            let lim = m.mean_tx_limited(mt).unwrap();
            prop_assert!(lim >= prev && lim <= full * (1.0 + 1e-12));
            prev = lim;
        }
        prop_assert_eq!(m.mean_tx_limited(1).unwrap(), 1.0);
        let far = m.mean_tx_limited(3000).unwrap();
        prop_assert!((far - full).abs() < 1e-9 * full, "{} vs {}", far, full);
    }

    #[test]
    fn limit_is_minimal((pg, pb, g, b, npdu) in params(), t in 1e-6f64..1.0) {
        let m = ArqModel::new(pg, pb, g, b, npdu).unwrap();
        let mt = m.limit_for_target(t);
        prop_assert!(mt >= 1);
        prop_assert!(m.residual_loss_approx(mt) <= t);
        prop_assert!(mt == 1 || m.residual_loss_approx(mt - 1) > t);
    }
}

/// The windows of the binomial rows skip only what does not count: `F(n)`
/// with them equals `F(n)` from whole rows within 1e-13 (relative) over 300
/// steps, for wide (`p = ½`), narrow (`p` near 0 or 1) and one-entry
/// (`p = 1`) rows; and a row with `p = 1` is the single `k' = k`.
#[test]
fn binomial_windows_change_nothing() {
    for (pg, pb) in [(0.5, 1.0), (0.9, 0.999), (0.01, 0.5), (0.3, 0.7)] {
        let m = ArqModel::new(pg, pb, 0.99, 0.95, 300).unwrap();
        let binom = m.binom().unwrap();
        let win = windows(&binom, 300);
        let full: Windows = [
            (0..=300).map(|k| (1, k)).collect(),
            (0..=300).map(|k| (1, k)).collect(),
        ];
        if pb == 1.0 {
            assert!((1..=300).all(|k| win[1][k] == (k, k)));
        }
        if pg == 0.5 {
            let (lo, hi) = win[0][300];
            assert!(hi - lo < 200, "the p = 1/2 row is not trimmed: {lo}..={hi}");
        }
        let (mut a, mut b) = (m.initial(), m.initial());
        let mut next = vec![0.0; a.len()];
        for n in 1..=300 {
            m.step(&binom, &win, &a, &mut next);
            std::mem::swap(&mut a, &mut next);
            m.step(&binom, &full, &b, &mut next);
            std::mem::swap(&mut b, &mut next);
            let (fa, fb): (f64, f64) = (a.iter().sum(), b.iter().sum());
            assert!(
                (fa - fb).abs() <= 1e-13 * fb,
                "p_G {pg} p_B {pb} n {n}: {fa} vs {fb}"
            );
        }
    }
}

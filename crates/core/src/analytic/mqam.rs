//! Uncoded M-QAM over a flat channel and adaptive modulation from a predicted
//! channel (seed 004, WIPEMU, and its reference \[17\], Sternad & Falahati,
//! "Maximizing throughput with adaptive M-QAM based on imperfect channel
//! predictions").
//!
//! A frame carries [`SYMBOLS`] data symbols of one modulation and is received
//! intact with probability (1 − P_s(M, γ))^108 at the real symbol SNR γ
//! (Es/N0, linear). Symbol error probabilities over AWGN:
//!
//! - BPSK: P_s = Q(√(2γ));
//! - square M-QAM (4, 16, 64, 256): P_s = 1 − (1 − 2(1 − 1/√M)·Q(√(3γ/(M−1))))²;
//! - cross M-QAM (8, 32, 128), [`Qam8::Cross`]: the cross-constellation
//!   approximation P_s ≈ 1 − (1 − 2(1 − 1/√(2M))·Q(√(96γ/(31M−32))))² (Smith's
//!   average energy (31M/32 − 1)·d²/6, so d²/(2N0) = 96γ/(31M − 32); exact in
//!   the limit of large M, an approximation for M = 8);
//! - 8-QAM as the 4×2 rectangle, [`Qam8::Rectangular`]: the exact
//!   P_s = 1 − (1 − 1.5·Q(√(γ/3)))·(1 − Q(√(γ/3))) (average energy 1.5·d²).
//!
//! **Adaptive modulation.** The transmitter knows the predicted SNR γ̂ of a
//! frame and the local mean SNR γ̄ (fading averaged out, shadowing not). The
//! prediction error of the complex gain is circular Gaussian with variance
//! NMSE·γ̄ on the SNR scale (the predictor is unbiased: E γ̂ = (1 − NMSE)·γ̄),
//! so given γ̂ the real SNR is non-central χ² with two degrees of freedom
//! (Rician). For every frame the modulation with the largest expected bits,
//! bits(M)·E[(1 − P_s(M, γ))^108 | γ̂], is chosen; below the lowest level the
//! lowest modulation of the set is sent anyway (one user: a skipped frame is
//! a wasted one). With NMSE 0 the choice reduces to the real SNR.

use std::f64::consts::SQRT_2;

/// Data symbols per WIPEMU frame.
pub const SYMBOLS: i32 = 108;

/// One modulation of the set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Modulation {
    /// Binary PSK, 1 bit per symbol.
    Bpsk,
    /// 4-QAM (QPSK), 2 bits.
    Qam4,
    /// 8-QAM (cross or rectangular, see [`Qam8`]), 3 bits.
    Qam8,
    /// 16-QAM, 4 bits.
    Qam16,
    /// 32-cross-QAM, 5 bits.
    Qam32,
    /// 64-QAM, 6 bits.
    Qam64,
    /// 128-cross-QAM, 7 bits.
    Qam128,
    /// 256-QAM, 8 bits.
    Qam256,
}

/// Which 8-point constellation `Qam8` is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Qam8 {
    /// The cross-constellation approximation (default; seed 004 names
    /// "8-CrQAM").
    #[default]
    Cross,
    /// The 4×2 rectangle (exact).
    Rectangular,
}

impl Modulation {
    /// Every modulation, from BPSK up.
    pub const ALL: [Modulation; 8] = [
        Modulation::Bpsk,
        Modulation::Qam4,
        Modulation::Qam8,
        Modulation::Qam16,
        Modulation::Qam32,
        Modulation::Qam64,
        Modulation::Qam128,
        Modulation::Qam256,
    ];

    /// Seed 004's adaptive set, "4–256 QAM": every M from 4 to 256.
    pub fn adaptive() -> &'static [Modulation] {
        &Self::ALL[1..]
    }

    /// Bits per symbol, log2 M.
    pub fn bits(self) -> u32 {
        self as u32 + 1
    }

    /// The number of points M.
    pub fn points(self) -> u32 {
        1 << self.bits()
    }

    /// The name used in scenarios and JSON: `bpsk`, `4qam`, `8qam`, ….
    pub fn name(self) -> &'static str {
        match self {
            Modulation::Bpsk => "bpsk",
            Modulation::Qam4 => "4qam",
            Modulation::Qam8 => "8qam",
            Modulation::Qam16 => "16qam",
            Modulation::Qam32 => "32qam",
            Modulation::Qam64 => "64qam",
            Modulation::Qam128 => "128qam",
            Modulation::Qam256 => "256qam",
        }
    }

    /// The modulation called `name` (see [`Modulation::name`]).
    pub fn from_name(name: &str) -> Option<Modulation> {
        Modulation::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Symbol error probability at symbol SNR `snr` (linear Es/N0) over AWGN.
    pub fn ser(self, snr: f64, qam8: Qam8) -> f64 {
        let snr = snr.max(0.0);
        let m = f64::from(self.points());
        let p = match self {
            Modulation::Bpsk => q((2.0 * snr).sqrt()),
            Modulation::Qam4 | Modulation::Qam16 | Modulation::Qam64 | Modulation::Qam256 => {
                let p1 = 2.0 * (1.0 - 1.0 / m.sqrt()) * q((3.0 * snr / (m - 1.0)).sqrt());
                p1 * (2.0 - p1) // 1 − (1 − p1)², without cancellation
            }
            Modulation::Qam8 if qam8 == Qam8::Rectangular => {
                let x = q((snr / 3.0).sqrt());
                1.5 * x + x - 1.5 * x * x // 1 − (1 − 1.5x)(1 − x)
            }
            Modulation::Qam8 | Modulation::Qam32 | Modulation::Qam128 => {
                let p1 = 2.0
                    * (1.0 - 1.0 / (2.0 * m).sqrt())
                    * q((96.0 * snr / (31.0 * m - 32.0)).sqrt());
                p1 * (2.0 - p1) // 1 − (1 − p1)², without cancellation
            }
        };
        p.clamp(0.0, 1.0)
    }

    /// Probability that a frame of [`SYMBOLS`] symbols is received intact.
    pub fn frame_success(self, snr: f64, qam8: Qam8) -> f64 {
        (f64::from(SYMBOLS) * (-self.ser(snr, qam8)).ln_1p()).exp()
    }
}

/// The Gaussian tail Q(x) = ½·erfc(x/√2).
pub fn q(x: f64) -> f64 {
    0.5 * libm::erfc(x / SQRT_2)
}

/// e^(−x)·I0(x), x ≥ 0 (Abramowitz & Stegun 9.8.1–9.8.2, |ε| < 2·10⁻⁷).
fn i0e(x: f64) -> f64 {
    if x < 3.75 {
        let t = (x / 3.75).powi(2);
        let p = 1.0
            + t * (3.515_622_9
                + t * (3.089_942_4
                    + t * (1.206_749_2 + t * (0.265_973_2 + t * (0.036_076_8 + t * 0.004_581_3)))));
        p * (-x).exp()
    } else {
        let t = 3.75 / x;
        let p = 0.398_942_28
            + t * (0.013_285_92
                + t * (0.002_253_19
                    + t * (-0.001_575_65
                        + t * (0.009_162_81
                            + t * (-0.020_577_06
                                + t * (0.026_355_37 + t * (-0.016_476_33 + t * 0.003_923_77)))))));
        p / x.sqrt()
    }
}

/// Points of the Simpson rule over the conditional SNR (odd).
const GRID: usize = 101;

/// E[f(γ) | γ̂] where γ = |ĥ + e|²·γ̄ with the predicted SNR γ̂ = |ĥ|²·γ̄ and
/// the error e circular Gaussian of variance `nmse` (on the unit-mean gain).
pub fn conditional_mean(predicted: f64, mean: f64, nmse: f64, f: impl Fn(f64) -> f64) -> f64 {
    if nmse <= 0.0 || mean <= 0.0 {
        return f(predicted);
    }
    // Work on the gain scale: x = γ/γ̄, x̂ = γ̂/γ̄; x | x̂ is non-central χ²
    // with pdf (1/ν)·exp(−(x + x̂)/ν)·I0(2√(x·x̂)/ν).
    let (xh, nu) = (predicted.max(0.0) / mean, nmse);
    let (a, b) = (xh.sqrt(), 7.0 * nu.sqrt());
    let lo = (a - b).max(0.0).powi(2);
    let hi = (a + b).powi(2);
    let h = (hi - lo) / (GRID - 1) as f64;
    let pdf = |x: f64| {
        let z = 2.0 * (x * xh).sqrt() / nu;
        (1.0 / nu) * (-(x.sqrt() - a).powi(2) / nu).exp() * i0e(z)
    };
    let (mut sum, mut norm) = (0.0, 0.0);
    for i in 0..GRID {
        let x = lo + h * i as f64;
        let w = if i == 0 || i == GRID - 1 {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let p = w * pdf(x);
        sum += p * f(x * mean);
        norm += p;
    }
    // Normalise by the integrated pdf: removes the truncation and rule error.
    if norm > 0.0 {
        sum / norm
    } else {
        f(predicted)
    }
}

/// Expected bits a frame of modulation `m` delivers when the predicted SNR is
/// `predicted` (linear), the local mean SNR `mean`, the prediction `nmse`.
pub fn expected_bits(m: Modulation, predicted: f64, mean: f64, nmse: f64, qam8: Qam8) -> f64 {
    f64::from(m.bits() * SYMBOLS as u32)
        * conditional_mean(predicted, mean, nmse, |g| m.frame_success(g, qam8))
}

/// The modulation of `set` with the most expected bits (the lowest of `set`
/// when none beats it).
pub fn choose(set: &[Modulation], predicted: f64, mean: f64, nmse: f64, qam8: Qam8) -> Modulation {
    let mut best = (set[0], expected_bits(set[0], predicted, mean, nmse, qam8));
    for &m in &set[1..] {
        let e = expected_bits(m, predicted, mean, nmse, qam8);
        if e > best.1 {
            best = (m, e);
        }
    }
    best.0
}

/// Switching levels: each modulation chosen somewhere, with the lowest
/// predicted SNR (dB) from which it is chosen, scanning −10 … 60 dB in
/// 0.01 dB after a 0.5 dB pass. The first entry is the set's floor at −∞.
pub fn levels(set: &[Modulation], mean: f64, nmse: f64, qam8: Qam8) -> Vec<(Modulation, f64)> {
    let pick = |db: f64| choose(set, db_to_lin(db), mean, nmse, qam8);
    let mut out = vec![(set[0], f64::NEG_INFINITY)];
    let mut prev = pick(-10.0);
    if prev != set[0] {
        out.push((prev, -10.0));
    }
    let mut db = -10.0;
    while db < 60.0 {
        let next = pick(db + 0.5);
        if next != prev {
            // Refine the crossing by bisection to 0.01 dB.
            let (mut lo, mut hi) = (db, db + 0.5);
            while hi - lo > 0.005 {
                let mid = 0.5 * (lo + hi);
                if pick(mid) == prev {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let m = pick(hi);
            out.push((m, (hi * 100.0).round() / 100.0));
            prev = m;
            if m != next {
                prev = pick(db + 0.5);
                out.push((prev, ((db + 0.5) * 100.0).round() / 100.0));
            }
        }
        db += 0.5;
    }
    out
}

/// dB to linear.
pub fn db_to_lin(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

/// The link ceiling in bits per symbol: the expected delivered bits per
/// symbol of adaptive modulation over `set` (one try per frame) averaged over
/// Rayleigh fading with mean SNR `mean_db` times log-normal shadowing of
/// `shadow_db` standard deviation, with prediction `nmse`.
pub fn ceiling(set: &[Modulation], mean_db: f64, shadow_db: f64, nmse: f64, qam8: Qam8) -> f64 {
    // One modulation: no choice, so the prediction does not matter.
    let nmse = if set.len() == 1 { 0.0 } else { nmse };
    // Shadowing: trapezoid over ±5σ (one point when σ = 0).
    let shadows: Vec<(f64, f64)> = if shadow_db > 0.0 {
        let n = 41;
        (0..n)
            .map(|i| {
                let z = -5.0 + 10.0 * i as f64 / (n - 1) as f64;
                (z * shadow_db, (-0.5 * z * z).exp())
            })
            .collect()
    } else {
        vec![(0.0, 1.0)]
    };
    let wsum: f64 = shadows.iter().map(|s| s.1).sum();
    let mut total = 0.0;
    for &(s, w) in &shadows {
        let mean = db_to_lin(mean_db + s);
        let lv = levels(set, mean, nmse, qam8);
        // The predicted gain x̂ is exponential with mean 1 − NMSE.
        let scale = (1.0 - nmse).max(1e-9);
        let n = 600;
        let mut acc = 0.0;
        let mut norm = 0.0;
        for i in 0..n {
            // Midpoints in u = 1 − e^(−x̂/scale), uniform on (0, 1).
            let u = (i as f64 + 0.5) / n as f64;
            let xh = -scale * (1.0 - u).ln();
            let predicted = xh * mean;
            let db = 10.0 * predicted.log10();
            let m = lv.iter().rev().find(|l| db >= l.1).map_or(set[0], |l| l.0);
            acc += expected_bits(m, predicted, mean, nmse, qam8);
            norm += 1.0;
        }
        total += w * acc / norm;
    }
    total / wsum / f64::from(SYMBOLS as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn awgn_symbol_errors_by_hand() {
        // BPSK at 0 dB: Q(√2) = 0.0786496.
        assert!((Modulation::Bpsk.ser(1.0, Qam8::Cross) - 0.078_649_6).abs() < 1e-6);
        // 4-QAM is two BPSK branches at half the SNR each: 1 − (1 − Q(√γ))².
        let g = db_to_lin(10.0);
        let p = q(g.sqrt());
        assert!(
            (Modulation::Qam4.ser(g, Qam8::Cross) - (1.0 - (1.0 - p) * (1.0 - p))).abs() < 1e-12
        );
        // 16-QAM at 20 dB: 1 − (1 − 1.5·Q(√(300/15)))².
        let p1 = 1.5 * q((300.0f64 / 15.0).sqrt());
        let want = 1.0 - (1.0 - p1) * (1.0 - p1);
        assert!((Modulation::Qam16.ser(100.0, Qam8::Cross) - want).abs() < 1e-12);
        // Rectangular 8-QAM needs more SNR than the cross approximation.
        assert!(Modulation::Qam8.ser(g, Qam8::Rectangular) > Modulation::Qam8.ser(g, Qam8::Cross));
        // Frame success: 108 independent symbols.
        let s = Modulation::Qam4.ser(g, Qam8::Cross);
        assert!(
            (Modulation::Qam4.frame_success(g, Qam8::Cross) - (1.0 - s).powi(108)).abs() < 1e-12
        );
    }

    #[test]
    fn more_points_need_more_snr() {
        for g in [1.0, 10.0, 100.0, 1000.0] {
            for w in Modulation::ALL.windows(2) {
                assert!(
                    w[0].ser(g, Qam8::Cross) <= w[1].ser(g, Qam8::Cross),
                    "{w:?} at {g}"
                );
            }
        }
        assert_eq!(Modulation::Qam256.points(), 256);
        assert_eq!(Modulation::from_name("8qam"), Some(Modulation::Qam8));
    }

    #[test]
    fn i0e_matches_the_series() {
        for x in [0.0f64, 0.5, 2.0, 3.7, 3.8, 10.0, 50.0] {
            // I0(x) = Σ (x/2)^(2k) / (k!)².
            let mut term = 1.0;
            let mut sum = 1.0;
            for k in 1..200 {
                term *= (x / 2.0).powi(2) / f64::from(k * k);
                sum += term;
            }
            let want = sum * (-x).exp();
            assert!(
                (i0e(x) - want).abs() / want < 1e-6,
                "x {x}: {} vs {want}",
                i0e(x)
            );
        }
    }

    #[test]
    fn the_conditional_pdf_has_the_right_mean() {
        // E[x | x̂] = x̂ + ν for the non-central χ².
        let (mean, nmse) = (40.0, 0.1);
        for xh in [0.05, 0.5, 1.0, 3.0] {
            let got = conditional_mean(xh * mean, mean, nmse, |g| g / mean);
            assert!((got - (xh + nmse)).abs() < 2e-3, "x̂ {xh}: {got}");
        }
        assert_eq!(conditional_mean(7.0, 40.0, 0.0, |g| g), 7.0);
    }

    #[test]
    fn levels_rise_and_become_conservative_with_prediction_errors() {
        let mean = db_to_lin(16.0);
        let perfect = levels(Modulation::adaptive(), mean, 0.0, Qam8::Cross);
        let noisy = levels(Modulation::adaptive(), mean, 0.1, Qam8::Cross);
        assert_eq!(perfect.len(), 7, "{perfect:?}");
        for w in perfect.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1, "{perfect:?}");
        }
        // With NMSE 0.1 each step up needs a higher predicted SNR.
        for (p, n) in perfect.iter().zip(&noisy).skip(1) {
            if p.0 == n.0 {
                assert!(n.1 > p.1, "{perfect:?} vs {noisy:?}");
            }
        }
        // Perfect levels: 4 → 8-QAM where 3·S8 = 2·S4.
        let l8 = db_to_lin(perfect[1].1);
        let r = 3.0 * Modulation::Qam8.frame_success(l8, Qam8::Cross)
            / (2.0 * Modulation::Qam4.frame_success(l8, Qam8::Cross));
        assert!((r - 1.0).abs() < 0.01, "{r}");
    }

    #[test]
    fn ceiling_grows_with_snr_and_shrinks_with_errors() {
        let set = Modulation::adaptive();
        let a = ceiling(set, 10.0, 0.0, 0.0, Qam8::Cross);
        let b = ceiling(set, 16.0, 0.0, 0.0, Qam8::Cross);
        let c = ceiling(set, 16.0, 0.0, 0.1, Qam8::Cross);
        assert!(a < b && c < b, "{a} {b} {c}");
        assert!(b > 1.5 && b < 6.0, "{b}");
    }
}

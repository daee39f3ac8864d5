//! Correlated Rayleigh fading sampled once per slot, compared with a fade
//! margin: a slot whose instantaneous power falls below the threshold is in a
//! fade (BAD).
//!
//! The complex fading gain `h` (E|h|² = 1) follows a first-order
//! Gauss–Markov (complex AR(1)) process across slots,
//! `h[n+1] = ρ·h[n] + √(1−ρ²)·w[n]`, `w ~ CN(0, 1)`, with `ρ = J0(2π f_d T)`,
//! the Clarke/Jakes autocorrelation at lag one slot. Because the joint law of
//! two consecutive samples is then exactly that of the Clarke process, the
//! per-slot fade statistics that depend on pairs of slots (fraction of BAD
//! slots, GOOD→BAD transition rate, hence the mean burst length) are exact;
//! longer lags decay as `ρ^k` instead of oscillating as `J0(2π f_d T k)`.
//! See `docs/models/channel.md`.

use std::f64::consts::PI;

use super::{check_probability, pow_slots, Channel, SlotClock};
use crate::rng::Rng;
use crate::time::Time;

/// A slotted Rayleigh fading channel with a fade-margin threshold.
///
/// A slot is BAD when `|h|² < 1/F`, with the fade margin `F = −1/ln(1 − fer)`
/// chosen so that a fraction `fer` of slots is BAD. Units in a BAD slot are
/// lost with probability `p_bad` (default 1: the whole frame is lost), units
/// in a GOOD slot with probability `p_good` (default 0).
#[derive(Clone, Debug)]
pub struct Rayleigh {
    fd_t: f64,
    fer: f64,
    p_good: f64,
    p_bad: f64,
    /// Lag-one correlation of the complex gain, `J0(2π f_d T)`.
    rho: f64,
    /// Power threshold `1/F`.
    threshold: f64,
    /// Real and imaginary part of the gain in the current slot.
    h: (f64, f64),
    clock: SlotClock,
    rng: Rng,
}

impl Rayleigh {
    /// A channel with slots of length `slot`, normalised Doppler `fd_t`
    /// (`f_d` times the slot length), target frame error ratio `fer` and unit
    /// error probabilities `p_good`/`p_bad`. The gain in slot 0 is drawn from
    /// the stationary distribution.
    ///
    /// # Panics
    /// If the parameters are invalid (see [`Rayleigh::check`]) or `slot` is
    /// zero.
    pub fn new(slot: Time, fd_t: f64, fer: f64, p_good: f64, p_bad: f64, mut rng: Rng) -> Rayleigh {
        if let Err(e) = Self::check(fd_t, fer, p_good, p_bad) {
            panic!("invalid Rayleigh channel: {e}");
        }
        let clock = SlotClock::new(slot);
        let h = complex_gaussian(&mut rng);
        Rayleigh {
            fd_t,
            fer,
            p_good,
            p_bad,
            rho: bessel_j0(2.0 * PI * fd_t),
            threshold: 1.0 / margin_from_fer(fer),
            h,
            clock,
            rng,
        }
    }

    /// As [`Rayleigh::new`], with the fade margin given in dB instead of a
    /// target frame error ratio.
    ///
    /// # Panics
    /// If the parameters are invalid, including a margin that is not finite.
    pub fn with_margin_db(
        slot: Time,
        fd_t: f64,
        margin_db: f64,
        p_good: f64,
        p_bad: f64,
        rng: Rng,
    ) -> Rayleigh {
        Rayleigh::new(
            slot,
            fd_t,
            fer_from_margin_db(margin_db),
            p_good,
            p_bad,
            rng,
        )
    }

    /// Validates the parameters; the message names the parameter and its
    /// allowed range.
    pub fn check(fd_t: f64, fer: f64, p_good: f64, p_bad: f64) -> Result<(), String> {
        if !(fd_t.is_finite() && fd_t > 0.0) {
            return Err(format!(
                "fd_t = {fd_t} (normalised Doppler f_d·T) must be finite and > 0"
            ));
        }
        if !(fer > 0.0 && fer < 1.0) {
            return Err(format!(
                "fer = {fer} (target frame error ratio) must be in (0, 1), exclusive"
            ));
        }
        check_probability("p_good", p_good)?;
        check_probability("p_bad", p_bad)
    }

    /// Normalised Doppler frequency f_d·T.
    pub fn fd_t(&self) -> f64 {
        self.fd_t
    }

    /// Target (and long-run) fraction of BAD slots.
    pub fn fer(&self) -> f64 {
        self.fer
    }

    /// Lag-one correlation of the complex gain, `J0(2π f_d T)`.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// Fade margin F (linear power ratio).
    pub fn margin(&self) -> f64 {
        1.0 / self.threshold
    }

    /// The complex gain in the current slot, as (real, imaginary).
    pub fn gain(&self) -> (f64, f64) {
        self.h
    }

    /// Instantaneous power `|h|²` in the current slot (mean 1).
    pub fn power(&self) -> f64 {
        self.h.0 * self.h.0 + self.h.1 * self.h.1
    }
}

impl Channel for Rayleigh {
    fn advance(&mut self, now: Time) {
        let k = self.clock.advance(now);
        if k == 0 {
            return;
        }
        // k steps of the AR(1) recursion at once: h ← ρ^k h + √(1−ρ^{2k}) w.
        let a = pow_slots(self.rho, k);
        let s = (1.0 - a * a).max(0.0).sqrt();
        let w = complex_gaussian(&mut self.rng);
        self.h = (a * self.h.0 + s * w.0, a * self.h.1 + s * w.1);
    }

    fn unit_error(&mut self) -> bool {
        let p = if self.is_bad() {
            self.p_bad
        } else {
            self.p_good
        };
        self.rng.bernoulli(p)
    }

    fn is_bad(&self) -> bool {
        self.power() < self.threshold
    }

    fn mean_error_rate(&self) -> f64 {
        self.fer * self.p_bad + (1.0 - self.fer) * self.p_good
    }
}

/// One circularly-symmetric complex Gaussian sample with E|w|² = 1 (Box–Muller:
/// `|w|²` is exponential with mean 1, the phase uniform).
fn complex_gaussian(rng: &mut Rng) -> (f64, f64) {
    let u1 = 1.0 - rng.uniform(); // (0, 1]
    let u2 = rng.uniform();
    let r = (-u1.ln()).sqrt();
    let (s, c) = (2.0 * PI * u2).sin_cos();
    (r * c, r * s)
}

/// Fade margin F (linear) giving a Rayleigh outage probability `fer`:
/// `P(|h|² < 1/F) = 1 − e^{−1/F} = fer` ⇒ `F = −1/ln(1 − fer)`.
pub fn margin_from_fer(fer: f64) -> f64 {
    -1.0 / (-fer).ln_1p()
}

/// Fade margin in dB for a target frame error ratio `fer` (0.1 ⇒ 9.77 dB).
pub fn margin_db_from_fer(fer: f64) -> f64 {
    10.0 * margin_from_fer(fer).log10()
}

/// Outage probability (frame error ratio) of a Rayleigh channel with fade
/// margin `margin_db`: `1 − exp(−10^{−margin_db/10})`.
pub fn fer_from_margin_db(margin_db: f64) -> f64 {
    -(-(10f64.powf(-margin_db / 10.0))).exp_m1()
}

/// Average fade duration of a continuous-time Clarke/Jakes Rayleigh process
/// below the threshold set by `fer`, in slots of length T:
/// `(e^{ρ²} − 1) / (√(2π) · f_d T · ρ)` with `ρ² = 1/F = −ln(1 − fer)`.
pub fn average_fade_duration_slots(fd_t: f64, fer: f64) -> f64 {
    let th = -(-fer).ln_1p(); // ρ_th² = 1/F
    th.exp_m1() / ((2.0 * PI).sqrt() * fd_t * th.sqrt())
}

/// Bessel function of the first kind of order zero, `J0(x)`, to about 1e-13
/// absolute: the power series for |x| ≤ 12 and Hankel's asymptotic expansion
/// beyond.
pub fn bessel_j0(x: f64) -> f64 {
    let x = x.abs();
    if x <= 12.0 {
        // Σ (−x²/4)^k / (k!)²; the largest term is below 1e4, so about 12
        // significant digits survive the cancellation.
        let q = -0.25 * x * x;
        let (mut term, mut sum) = (1.0f64, 1.0f64);
        let mut k = 1.0f64;
        while term.abs() > 1e-17 * sum.abs().max(1e-300) || k < 3.0 {
            term *= q / (k * k);
            sum += term;
            k += 1.0;
            if k > 200.0 {
                break;
            }
        }
        sum
    } else {
        // J0(x) ~ √(2/(πx)) [P cos ω − Q sin ω], ω = x − π/4, with
        // a_k = a_{k−1}·(−(2k−1)²)/(8k), P = Σ (−1)^j a_{2j} x^{−2j},
        // Q = Σ (−1)^j a_{2j+1} x^{−2j−1}; summed until the terms grow.
        let (mut p, mut q) = (1.0f64, 0.0f64);
        let mut a = 1.0f64;
        let mut last = f64::INFINITY;
        for k in 1..40u32 {
            let kf = f64::from(k);
            a *= -(2.0 * kf - 1.0).powi(2) / (8.0 * kf);
            let t = a / x.powi(k as i32);
            if t.abs() >= last {
                break;
            }
            last = t.abs();
            // Sign (−1)^j with j = k/2 (even k) or (k−1)/2 (odd k).
            let sign = if (k / 2) % 2 == 0 { 1.0 } else { -1.0 };
            if k % 2 == 0 {
                p += sign * t;
            } else {
                q += sign * t;
            }
        }
        let w = x - PI / 4.0;
        (2.0 / (PI * x)).sqrt() * (p * w.cos() - q * w.sin())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOT: Time = Time::from_millis(10);
    /// f_d·T values of the burst-length table in `docs/models/channel.md`.
    const TABLE: [f64; 7] = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5];
    /// Exact mean BAD run (slots) of the per-slot-sampled Clarke process at FER
    /// 0.1: `fer / (fer − P(B, B))` with `P(B, B)` from the bivariate Rayleigh
    /// law at correlation J0(2π f_d T) (numerical integration of the Rician
    /// conditional CDF, scipy).
    const DISCRETE: [f64; 7] = [
        136.563, 27.3196, 13.6708, 6.85756, 2.81120, 1.58783, 1.12243,
    ];

    fn slot(i: u64) -> Time {
        Time::from_nanos(SLOT.as_nanos() * i)
    }

    fn channel(fd_t: f64, seed: u64) -> Rayleigh {
        Rayleigh::new(SLOT, fd_t, 0.1, 0.0, 1.0, Rng::stream(seed, "ray"))
    }

    /// Steps `n` slots one by one; returns (fraction BAD, mean BAD run in slots).
    fn bad_runs(ch: &mut Rayleigh, n: u64) -> (f64, f64) {
        let (mut bad, mut runs) = (0u64, 0u64);
        let mut prev = ch.is_bad();
        for i in 1..=n {
            ch.advance(slot(i));
            let b = ch.is_bad();
            bad += u64::from(b);
            runs += u64::from(b && !prev);
            prev = b;
        }
        (bad as f64 / n as f64, bad as f64 / runs.max(1) as f64)
    }

    #[test]
    fn bessel_j0_known_values() {
        // Reference values: scipy.special.j0.
        let cases = [
            (0.0, 1.0),
            (0.1, 0.99750156206604),
            (1.0, 0.7651976865579665),
            (2.404825557695773, 0.0),
            (5.0, -0.1775967713143383),
            (10.0, -0.24593576445134832),
            (12.0, 0.04768931079683335),
            (13.0, 0.2069261023770678),
            (20.0, 0.16702466434058322),
            (50.0, 0.055812327669252086),
            (100.0, 0.01998585030422333),
            (-1.0, 0.7651976865579665),
        ];
        for (x, want) in cases {
            let got = bessel_j0(x);
            assert!((got - want).abs() < 1e-11, "J0({x}) = {got}, want {want}");
        }
    }

    #[test]
    fn margin_conversions() {
        assert!((margin_from_fer(0.1) - 9.491221581029905).abs() < 1e-9);
        assert!((margin_db_from_fer(0.1) - 9.773227).abs() < 1e-5);
        assert!((fer_from_margin_db(margin_db_from_fer(0.1)) - 0.1).abs() < 1e-12);
        let ch = Rayleigh::with_margin_db(SLOT, 0.01, 9.773227, 0.0, 1.0, Rng::stream(1, "r"));
        assert!((ch.fer() - 0.1).abs() < 1e-6);
        assert!((ch.margin() - 9.4912).abs() < 1e-3);
        assert_eq!(ch.mean_error_rate(), ch.fer());
    }

    #[test]
    fn bad_fraction_matches_fer() {
        // (fd_t, fer, slots, relative tolerance): slow fading needs many slots,
        // the fraction's standard error at f_d·T = 0.01 over 4M slots is ~2 %.
        for &(fd_t, fer, n, tol) in &[
            (0.1, 0.1, 400_000u64, 0.03),
            (0.05, 0.3, 400_000, 0.03),
            (0.5, 0.01, 1_000_000, 0.03),
            (0.01, 0.1, 4_000_000, 0.06),
        ] {
            let mut ch = Rayleigh::new(SLOT, fd_t, fer, 0.0, 1.0, Rng::stream(2, "ray"));
            let (frac, _) = bad_runs(&mut ch, n);
            assert!(
                (frac / fer - 1.0).abs() < tol,
                "fd_t {fd_t}: bad fraction {frac} vs {fer}"
            );
        }
    }

    #[test]
    fn unit_errors_follow_slot_state() {
        let mut ch = Rayleigh::new(SLOT, 0.05, 0.1, 0.02, 0.7, Rng::stream(9, "ray"));
        let (mut ub, mut eb, mut ug, mut eg) = (0u64, 0u64, 0u64, 0u64);
        for i in 0..300_000u64 {
            ch.advance(slot(i));
            for _ in 0..4 {
                let e = u64::from(ch.unit_error());
                if ch.is_bad() {
                    ub += 1;
                    eb += e;
                } else {
                    ug += 1;
                    eg += e;
                }
            }
        }
        let (rb, rg) = (eb as f64 / ub as f64, eg as f64 / ug as f64);
        assert!(
            (rb - 0.7).abs() < 0.01 && (rg - 0.02).abs() < 0.002,
            "{rb} {rg}"
        );
        let overall = (eb + eg) as f64 / (ub + ug) as f64;
        assert!(
            (overall / ch.mean_error_rate() - 1.0).abs() < 0.05,
            "{overall}"
        );
    }

    #[test]
    fn mean_burst_matches_fade_duration_at_fdt_001() {
        let mut ch = channel(0.01, 3);
        let (_, burst) = bad_runs(&mut ch, 3_000_000);
        let afd = average_fade_duration_slots(0.01, 0.1);
        assert!((afd - 13.656).abs() < 1e-3, "AFD formula {afd}");
        assert!(
            (burst / afd - 1.0).abs() < 0.15,
            "burst {burst} vs AFD {afd}"
        );
        // And, tighter, against the exact sampled-process value.
        assert!((burst / DISCRETE[2] - 1.0).abs() < 0.06, "burst {burst}");
    }

    #[test]
    fn mean_burst_decreases_with_doppler() {
        let mut prev = f64::INFINITY;
        for (i, &fd_t) in TABLE.iter().enumerate() {
            // The estimate's standard error is ~14 % at 0.001, ~2.6 % at 0.005
            // and ≤ 1.3 % above (measured over seeds); tolerances are ~3σ.
            let (n, tol) = match i {
                0 => (4_000_000, 0.4),
                1 => (4_000_000, 0.12),
                2 => (4_000_000, 0.06),
                _ => (1_000_000, 0.05),
            };
            let mut ch = channel(fd_t, 4 + i as u64);
            let (_, burst) = bad_runs(&mut ch, n);
            assert!(burst < prev, "fd_t {fd_t}: burst {burst} not below {prev}");
            assert!(
                (burst / DISCRETE[i] - 1.0).abs() < tol,
                "fd_t {fd_t}: burst {burst} vs {}",
                DISCRETE[i]
            );
            prev = burst;
        }
    }

    #[test]
    fn lag_one_gain_correlation_is_j0() {
        for &fd_t in &[0.01, 0.1, 0.3, 0.5] {
            let mut ch = channel(fd_t, 5);
            let n = 200_000u64;
            let (mut cross, mut power) = (0.0, 0.0);
            let mut prev = ch.gain();
            for i in 1..=n {
                ch.advance(slot(i));
                let h = ch.gain();
                // Re(h[n] · conj(h[n−1])).
                cross += h.0 * prev.0 + h.1 * prev.1;
                power += h.0 * h.0 + h.1 * h.1;
                prev = h;
            }
            let est = cross / power;
            let want = bessel_j0(2.0 * PI * fd_t);
            assert!((ch.rho() - want).abs() < 1e-15);
            assert!((est - want).abs() < 0.02, "fd_t {fd_t}: {est} vs {want}");
        }
    }

    #[test]
    fn skipping_slots_matches_stepping() {
        // Observe every k-th slot, stepping slot by slot or jumping; compare the
        // BAD fraction and the lag-k correlation of the gain (ρ^k).
        let (fd_t, k, obs) = (0.02, 5u64, 200_000u64);
        let run = |jump: bool, seed: u64| {
            let mut ch = channel(fd_t, seed);
            let (mut t, mut bad, mut cross, mut power) = (0u64, 0u64, 0.0, 0.0);
            let mut prev = ch.gain();
            for j in 1..=obs {
                if jump {
                    t = j * k;
                    ch.advance(slot(t));
                } else {
                    while t < j * k {
                        t += 1;
                        ch.advance(slot(t));
                    }
                }
                let h = ch.gain();
                bad += u64::from(ch.is_bad());
                cross += h.0 * prev.0 + h.1 * prev.1;
                power += h.0 * h.0 + h.1 * h.1;
                prev = h;
            }
            (bad as f64 / obs as f64, cross / power)
        };
        let want = channel(fd_t, 0).rho().powi(k as i32);
        let (f_step, c_step) = run(false, 20);
        let (f_jump, c_jump) = run(true, 21);
        for (f, c) in [(f_step, c_step), (f_jump, c_jump)] {
            assert!((f - 0.1).abs() < 0.008, "bad fraction {f}");
            assert!((c - want).abs() < 0.01, "lag-{k} correlation {c} vs {want}");
        }
        assert!((f_step - f_jump).abs() < 0.012);
    }

    #[test]
    fn huge_skips_decorrelate() {
        let mut ch = channel(0.001, 6);
        let n = 100_000u64;
        let mut bad = 0u64;
        for i in 1..=n {
            ch.advance(Time::from_secs(10_000 * i));
            bad += u64::from(ch.is_bad());
        }
        let frac = bad as f64 / n as f64;
        assert!((frac - 0.1).abs() < 0.006, "bad fraction {frac}");
    }

    #[test]
    fn deterministic_per_seed() {
        let run = |seed| {
            let mut ch = channel(0.01, seed);
            (0..5000u64)
                .map(|i| {
                    ch.advance(slot(i));
                    ch.power().to_bits()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn check_rejects_bad_parameters() {
        for fd_t in [0.0, -0.01, f64::NAN, f64::INFINITY] {
            assert!(Rayleigh::check(fd_t, 0.1, 0.0, 1.0)
                .unwrap_err()
                .contains("fd_t = "));
        }
        for fer in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            let e = Rayleigh::check(0.01, fer, 0.0, 1.0).unwrap_err();
            assert!(e.contains("fer = ") && e.contains("(0, 1)"), "{e}");
        }
        assert!(Rayleigh::check(0.01, 0.1, -0.1, 1.0)
            .unwrap_err()
            .contains("p_good"));
        assert!(Rayleigh::check(0.01, 0.1, 0.0, 1.1)
            .unwrap_err()
            .contains("p_bad"));
        assert!(Rayleigh::check(5.0, 0.999, 1.0, 0.0).is_ok());
    }
}

//! Correlated Rayleigh fading sampled once per slot, compared with a fade
//! margin: a slot whose instantaneous power falls below the threshold is in a
//! fade (BAD).
//!
//! The complex fading gain `h(t)` (E|h|² = 1) is the sum-of-sinusoids
//! generator of Zheng & Xiao (2003), with [`Rayleigh::SINUSOIDS`] sinusoids
//! per quadrature branch and random `θ`, `φ`, `ψ_n` drawn once per channel
//! instance. Its (ensemble) autocorrelation is `J0(2π f_d τ)` at every lag,
//! as for Clarke/Jakes fading, and the gain in slot `k` is a deterministic
//! function of `k`, so skipping slots is exact and costs O(M). The threshold
//! is calibrated for the finite number of sinusoids so that the fraction of
//! BAD slots equals the target FER. See `docs/models/channel.md`.

use std::f64::consts::PI;

use schemars::JsonSchema;
use serde::Deserialize;

#[cfg(test)]
use super::sos_bank::phase_at;
use super::sos_bank::SosBank;
use super::{check_probability, Channel, ChannelModel, SlotClock};
use crate::config::{ConfigError, Probability, Result};
use crate::rng::Rng;
use crate::time::Time;

/// `kind = "rayleigh"`: correlated Rayleigh fading sampled per slot; a slot
/// is in a fade (BAD) when the gain is below the margin set from `fer`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RayleighConfig {
    /// Normalised Doppler frequency f_d·T (T = the slot), > 0.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub fd_t: f64,
    /// Target frame (slot) error ratio, 0 < fer < 1: sets the fade margin.
    #[schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub fer: f64,
    /// Unit error probability in a slot above the threshold. Default 0.
    #[serde(default)]
    pub p_good: Probability,
    /// Unit error probability in a slot in a fade. Default 1.
    #[serde(default = "one")]
    pub p_bad: Probability,
    /// Slot length, e.g. `"10ms"`: required on wired links; a radio link
    /// samples the fading once per TTI.
    #[serde(default)]
    pub slot: Option<Time>,
}

fn one() -> Probability {
    Probability::ONE
}

impl RayleighConfig {
    /// Fading with Doppler `fd_t` and target frame error ratio `fer`; a slot in
    /// a fade loses every unit, other slots none.
    pub fn new(fd_t: f64, fer: f64) -> Self {
        RayleighConfig {
            fd_t,
            fer,
            p_good: Probability::ZERO,
            p_bad: Probability::ONE,
            slot: None,
        }
    }
}

impl ChannelModel for RayleighConfig {
    fn validate(&self) -> Result<()> {
        Rayleigh::check(self.fd_t, self.fer, self.p_good.get(), self.p_bad.get())
            .map_err(|m| ConfigError::at_key("", m))
    }

    fn mean_error_rate(&self) -> f64 {
        mean_error_rate(self.fer, self.p_good.get(), self.p_bad.get())
    }

    fn slot(&self) -> Option<Time> {
        self.slot
    }

    fn slotted(&self) -> bool {
        true
    }

    fn build(&self, slot: Time, rng: Rng) -> Box<dyn Channel> {
        let (p_good, p_bad) = (self.p_good.get(), self.p_bad.get());
        Box::new(Rayleigh::new(slot, self.fd_t, self.fer, p_good, p_bad, rng))
    }
}

/// Long-run unit error probability: a fraction `fer` of the slots is BAD.
fn mean_error_rate(fer: f64, p_good: f64, p_bad: f64) -> f64 {
    fer * p_bad + (1.0 - fer) * p_good
}

/// Number of sinusoids per quadrature branch.
pub(crate) const M: usize = 16;

/// Range of the random time origin, in Doppler periods `1/f_d`.
const ORIGIN_PERIODS: f64 = 1e6;

/// One sinusoid of each quadrature branch: `amp·cos(2π(ν·k + phase))`, `ν`
/// and `phase` in cycles per slot and cycles.
#[derive(Clone, Copy, Debug)]
struct Sinusoid {
    amp_re: f64,
    nu_re: f64,
    phase_re: f64,
    amp_im: f64,
    nu_im: f64,
    phase_im: f64,
}

/// A unit-power complex Rayleigh gain as a function of the slot index: the
/// sum-of-sinusoids generator of Zheng & Xiao (2003) with [`M`] sinusoids per
/// quadrature branch, random phases and a random time origin.
#[derive(Clone, Debug)]
pub struct Sos {
    sinusoids: [Sinusoid; M],
}

impl Sos {
    /// A generator with normalised Doppler `fd_t` (f_d times the slot), its
    /// phases and time origin drawn from `rng`.
    pub fn new(fd_t: f64, rng: &mut Rng) -> Sos {
        // Zheng & Xiao (2003): α_n = (2πn − π + θ)/(4M); θ, φ, ψ_n uniform on
        // [−π, π). The random origin t0 (uniform over ORIGIN_PERIODS Doppler
        // periods) becomes a per-sinusoid phase offset ν_n·t0.
        let theta = uniform_angle(rng);
        let phi = uniform_angle(rng) / (2.0 * PI);
        let origin = ORIGIN_PERIODS * rng.uniform();
        let amp = (2.0 / M as f64).sqrt();
        let sinusoids = std::array::from_fn(|i| {
            let n = (i + 1) as f64;
            let alpha = (2.0 * PI * n - PI + theta) / (4.0 * M as f64);
            let (sin_a, cos_a) = alpha.sin_cos();
            let (sin_psi, cos_psi) = uniform_angle(rng).sin_cos();
            Sinusoid {
                amp_re: amp * cos_psi,
                nu_re: fd_t * cos_a,
                phase_re: phi + (cos_a * origin).fract(),
                amp_im: amp * sin_psi,
                nu_im: fd_t * sin_a,
                phase_im: phi + (sin_a * origin).fract(),
            }
        });
        Sos { sinusoids }
    }

    /// The generator's 2M terms, the real branch's then the imaginary
    /// branch's, each as (amplitude, ν in cycles per slot, phase in cycles):
    /// term n contributes `amp·cos(2π((ν·k).fract() + phase))` to its branch
    /// in slot k, summed in this order by [`Sos::gain_at`].
    pub(crate) fn terms(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        let re = self
            .sinusoids
            .iter()
            .map(|s| (s.amp_re, s.nu_re, s.phase_re));
        let im = self
            .sinusoids
            .iter()
            .map(|s| (s.amp_im, s.nu_im, s.phase_im));
        re.chain(im)
    }

    /// The gain (real, imaginary) in slot `k` from a cosine per sinusoid:
    /// the definition the recurrence ([`SosBank`]) is checked against.
    #[cfg(test)]
    pub fn gain_at(&self, k: u64) -> (f64, f64) {
        let t = k as f64;
        let (mut re, mut im) = (0.0, 0.0);
        for s in &self.sinusoids {
            // Reduce to cycles in [0, 2) before scaling by 2π.
            re += s.amp_re * phase_at(s.nu_re, s.phase_re, t).cos();
            im += s.amp_im * phase_at(s.nu_im, s.phase_im, t).cos();
        }
        (re, im)
    }
}

/// A slotted Rayleigh fading channel with a fade-margin threshold.
///
/// A slot is BAD when `|h|² < 1/F`. The fade margin `F` is chosen so that a
/// fraction `fer` of slots is BAD: `F = −1/ln(1 − fer)` for an exactly
/// Gaussian gain, corrected (first-order Edgeworth term, see
/// [`Rayleigh::margin`]) for the finite number of sinusoids. Units in a BAD
/// slot are lost with probability `p_bad` (default 1: the whole frame is
/// lost), units in a GOOD slot with probability `p_good` (default 0).
#[derive(Clone, Debug)]
pub struct Rayleigh {
    fd_t: f64,
    fer: f64,
    p_good: f64,
    p_bad: f64,
    /// Power threshold `1/F`.
    threshold: f64,
    /// The generator's terms as a recurrence ([`SosBank`]).
    bank: SosBank,
    /// The generator itself (the exact evaluation in tests).
    #[cfg(test)]
    sos: Sos,
    /// Index of the current slot.
    slot: u64,
    /// Real and imaginary part of the gain in the current slot.
    h: (f64, f64),
    clock: SlotClock,
    rng: Rng,
}

impl Rayleigh {
    /// Number of sinusoids `M` per quadrature branch of the generator.
    pub const SINUSOIDS: usize = M;

    /// A channel with slots of length `slot`, normalised Doppler `fd_t`
    /// (`f_d` times the slot length), target frame error ratio `fer` and unit
    /// error probabilities `p_good`/`p_bad`. The generator's random phases
    /// and a uniformly random time origin are drawn from `rng` here, so slot
    /// 0 is a sample of the stationary process.
    ///
    /// # Panics
    /// If the parameters are invalid (see [`Rayleigh::check`]) or `slot` is
    /// zero.
    pub fn new(slot: Time, fd_t: f64, fer: f64, p_good: f64, p_bad: f64, mut rng: Rng) -> Rayleigh {
        if let Err(e) = Self::check(fd_t, fer, p_good, p_bad) {
            panic!("invalid Rayleigh channel: {e}");
        }
        let clock = SlotClock::new(slot);
        let sos = Sos::new(fd_t, &mut rng);
        let bank = SosBank::new(sos.terms().enumerate().map(|(j, (a, nu, phase))| {
            if j < M {
                (nu, phase, a, 0.0)
            } else {
                (nu, phase, 0.0, a)
            }
        }));
        let mut ch = Rayleigh {
            fd_t,
            fer,
            p_good,
            p_bad,
            threshold: sos_threshold(fer, M),
            bank,
            #[cfg(test)]
            sos,
            slot: 0,
            h: (0.0, 0.0),
            clock,
            rng,
        };
        ch.h = ch.gain_at(0);
        ch
    }

    /// As [`Rayleigh::new`], with the fade margin given in dB instead of a
    /// target frame error ratio: the target is the outage probability of an
    /// exact Rayleigh channel with that margin ([`fer_from_margin_db`]).
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

    /// Correlation of the complex gain at a lag of one slot, `J0(2π f_d T)`
    /// (the lag-`k` correlation is `J0(2π f_d T k)`).
    pub fn rho(&self) -> f64 {
        bessel_j0(2.0 * PI * self.fd_t)
    }

    /// Fade margin F (linear power ratio) actually applied: slightly below
    /// [`margin_from_fer`] (0.08 dB at FER 0.1), because the power of a
    /// finite sum of sinusoids is less often near zero than an exponential
    /// variable.
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

    /// The gain in slot `k` (time `k·T` after the random origin), by the
    /// recurrence of [`SosBank`] (within 10⁻¹¹ of [`Sos::gain_at`]).
    fn gain_at(&mut self, k: u64) -> (f64, f64) {
        self.bank.at(k)
    }
}

impl Channel for Rayleigh {
    fn advance(&mut self, now: Time) {
        let k = self.clock.advance(now);
        if k == 0 {
            return;
        }
        self.slot += k;
        self.h = self.gain_at(self.slot);
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
        mean_error_rate(self.fer, self.p_good, self.p_bad)
    }
}

/// A uniform angle in [−π, π).
fn uniform_angle(rng: &mut Rng) -> f64 {
    PI * (2.0 * rng.uniform() - 1.0)
}

/// Power threshold `x = 1/F` of an `m`-sinusoid Zheng–Xiao generator with
/// `P(|h|² < x) = fer`. With independent phases the gain is a normalised sum
/// of `m` i.i.d. planar vectors; the first-order Edgeworth expansion of the
/// law of `|h|²` (fourth cumulants; the third vanish by symmetry), averaged
/// over the angle, is
/// `P(|h|² < x) ≈ 1 − e^{−x} + K·x(1 − x/2)·e^{−x}`, `K = −5/(16 m)`.
/// This is solved for `x` by Newton's method from the Rayleigh value
/// `−ln(1 − fer)`; the error left is O(1/m²).
fn sos_threshold(fer: f64, m: usize) -> f64 {
    let x0 = -(-fer).ln_1p();
    let k = -5.0 / (16.0 * m as f64);
    let mut x = x0;
    for _ in 0..50 {
        let e = (-x).exp();
        let f = -(-x).exp_m1() + k * x * (1.0 - 0.5 * x) * e - fer;
        let df = e * (1.0 + k * (1.0 - 2.0 * x + 0.5 * x * x));
        if df.is_nan() || df <= 0.0 {
            return x0;
        }
        let dx = f / df;
        x -= dx;
        if !(x > 0.0 && x.is_finite()) {
            return x0;
        }
        if dx.abs() <= 1e-15 * x {
            break;
        }
    }
    x
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
    /// Exact mean BAD run (slots) of the per-slot-sampled (Gaussian) Clarke
    /// process at FER 0.1: `fer / (fer − P(B, B))` with `P(B, B)` from the
    /// bivariate Rayleigh law at correlation J0(2π f_d T) (numerical
    /// integration of the Rician conditional CDF, scipy).
    const DISCRETE: [f64; 7] = [
        136.563, 27.3196, 13.6708, 6.85756, 2.81120, 1.58783, 1.12243,
    ];

    fn slot(i: u64) -> Time {
        Time::from_nanos(SLOT.as_nanos() * i)
    }

    fn channel(fd_t: f64, seed: u64) -> Rayleigh {
        Rayleigh::new(SLOT, fd_t, 0.1, 0.0, 1.0, Rng::stream(seed, "ray"))
    }

    /// BAD-slot and fade statistics accumulated over channel instances.
    #[derive(Default)]
    struct Fades {
        slots: u64,
        bad: u64,
        /// Completed fades (runs of BAD slots) by length.
        runs: Vec<u64>,
    }

    impl Fades {
        /// Steps `n` slots one by one on `ch`; runs cut by the end of the
        /// observation window are not counted as fades.
        fn observe(&mut self, ch: &mut Rayleigh, n: u64) {
            let mut run: Option<u64> = None; // None: run in progress at the start
            let mut cur = 0u64;
            let mut started = !ch.is_bad();
            for i in 1..=n {
                ch.advance(slot(i));
                let b = ch.is_bad();
                self.slots += 1;
                self.bad += u64::from(b);
                if b {
                    cur += 1;
                } else {
                    if started && cur > 0 {
                        run = Some(cur);
                    }
                    started = true;
                    cur = 0;
                }
                if let Some(r) = run.take() {
                    self.runs.push(r);
                }
            }
        }

        fn fraction(&self) -> f64 {
            self.bad as f64 / self.slots as f64
        }

        fn mean_run(&self) -> f64 {
            self.runs.iter().sum::<u64>() as f64 / self.runs.len() as f64
        }

        fn tail(&self, len: u64) -> f64 {
            self.runs.iter().filter(|&&r| r >= len).count() as f64 / self.runs.len() as f64
        }
    }

    /// `instances` channels (seeds `seed..seed+instances`) observed `n` slots each.
    fn fades(fd_t: f64, fer: f64, seed: u64, instances: u64, n: u64) -> Fades {
        let mut f = Fades::default();
        for s in seed..seed + instances {
            let mut ch = Rayleigh::new(SLOT, fd_t, fer, 0.0, 1.0, Rng::stream(s, "ray"));
            f.observe(&mut ch, n);
        }
        f
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
        // The calibrated margin: x = 1/F solves the Edgeworth-corrected CDF.
        let x = 1.0 / ch.margin();
        let k = -5.0 / (16.0 * Rayleigh::SINUSOIDS as f64);
        let cdf = -(-x).exp_m1() + k * x * (1.0 - 0.5 * x) * (-x).exp();
        assert!((cdf - ch.fer()).abs() < 1e-12, "{cdf}");
        let db = 10.0 * ch.margin().log10();
        assert!((db - 9.773).abs() < 0.15 && db < 9.773, "margin {db} dB");
        assert_eq!(ch.mean_error_rate(), ch.fer());
        // The correction vanishes as M grows and stays sane at the extremes.
        for fer in [1e-6f64, 0.01, 0.5, 0.99, 1.0 - 1e-9] {
            let (x0, x) = (-(-fer).ln_1p(), sos_threshold(fer, 16));
            assert!(
                x > 0.0 && (x / x0 - 1.0).abs() < 0.05,
                "fer {fer}: {x} vs {x0}"
            );
            assert!((sos_threshold(fer, 1 << 20) / x0 - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn gain_autocorrelation_is_j0_at_all_lags() {
        // One realisation is not ergodic in the correlation (its time-average
        // correlation depends on θ and ψ_n), so the estimate is an ensemble
        // average: for each of N independent instances, the mean of
        // Re(h[s+k]·h*[s]) over 8 origins s (1000 slots apart) — one number per
        // instance; the test compares the mean over instances with J0 using
        // the standard error measured from the spread over instances (5σ; the
        // ensemble correlation is exactly J0 for any M, so there is no bias).
        let fd_t = 0.01;
        let lags = [1u64, 10, 38, 60, 100];
        let n = 2000u64;
        let mut sum = [0.0f64; 5];
        let mut sum2 = [0.0f64; 5];
        for seed in 0..n {
            let mut ch = channel(fd_t, 1000 + seed);
            let mut per = [0.0f64; 5];
            for j in 0..8u64 {
                let s = 1 + 1000 * j;
                ch.advance(slot(s));
                let h0 = ch.gain();
                for (l, &k) in lags.iter().enumerate() {
                    ch.advance(slot(s + k));
                    let h = ch.gain();
                    per[l] += (h.0 * h0.0 + h.1 * h0.1) / 8.0;
                }
            }
            for l in 0..lags.len() {
                sum[l] += per[l];
                sum2[l] += per[l] * per[l];
            }
        }
        for (l, &k) in lags.iter().enumerate() {
            let mean = sum[l] / n as f64;
            let sd = (sum2[l] / n as f64 - mean * mean).sqrt();
            let se = sd / (n as f64).sqrt();
            let want = bessel_j0(2.0 * PI * fd_t * k as f64);
            assert!(se < 0.02, "lag {k}: standard error {se}");
            assert!(
                (mean - want).abs() < 5.0 * se + 1e-3,
                "lag {k}: {mean} ± {se} vs J0 = {want}"
            );
        }
        // J0 crosses zero near lag 38 at f_d T = 0.01; AR(1) would give 0.963.
        assert!(bessel_j0(2.0 * PI * 0.38).abs() < 0.01);
    }

    #[test]
    fn bad_fraction_matches_fer() {
        // (fd_t, fer, instances, slots each, relative tolerance); the ensemble
        // fraction is the calibrated target (residual bias O(1/M²) ≲ 0.3 %),
        // the tolerances are ~4 standard errors of the pooled fraction.
        for &(fd_t, fer, inst, n, tol) in &[
            (0.1, 0.1, 20u64, 50_000u64, 0.03),
            (0.05, 0.3, 20, 50_000, 0.03),
            (0.5, 0.01, 20, 100_000, 0.04),
            (0.01, 0.1, 40, 100_000, 0.04),
        ] {
            let frac = fades(fd_t, fer, 2000, inst, n).fraction();
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
    fn fade_durations_at_fdt_001() {
        // 40 instances × 100 000 slots: ~29 000 fades.
        let f = fades(0.01, 0.1, 3000, 40, 100_000);
        let afd = average_fade_duration_slots(0.01, 0.1);
        assert!((afd - 13.656).abs() < 1e-3, "AFD formula {afd}");
        let mean = f.mean_run();
        assert!(
            (mean / afd - 1.0).abs() < 0.05,
            "mean fade {mean} vs AFD {afd}"
        );
        assert!((mean / DISCRETE[2] - 1.0).abs() < 0.05, "mean fade {mean}");
        // The tail: the Gaussian Clarke process sampled per slot has 0.95 % of
        // fades ≥ 60 slots and 0.09 % ≥ 100; the AR(1) model had 6 % and 2.6 %.
        let (t60, t100) = (f.tail(60), f.tail(100));
        assert!(t60 < 0.02, "fades ≥ 60 slots: {t60}");
        assert!(t100 < 0.004, "fades ≥ 100 slots: {t100}");
    }

    #[test]
    fn mean_burst_decreases_with_doppler() {
        let mut prev = f64::INFINITY;
        for (i, &fd_t) in TABLE.iter().enumerate() {
            // Observation long enough for ≥ ~2000 fades; ±6 % covers the
            // sampling error (≤ 3 %) and the finite-M departure from the
            // Gaussian value (≤ 1 %, see docs).
            let (inst, n) = match i {
                0 => (40, 1_000_000),
                1 => (40, 200_000),
                _ => (20, 100_000),
            };
            let burst = fades(fd_t, 0.1, 4000 + 100 * i as u64, inst, n).mean_run();
            assert!(burst < prev, "fd_t {fd_t}: burst {burst} not below {prev}");
            assert!(
                (burst / DISCRETE[i] - 1.0).abs() < 0.06,
                "fd_t {fd_t}: burst {burst} vs {}",
                DISCRETE[i]
            );
            prev = burst;
        }
    }

    #[test]
    fn skipping_slots_is_exact() {
        // The gain is a deterministic function of the slot index: observing
        // every k-th slot by stepping or by jumping gives identical gains.
        let fd_t = 0.02;
        let mut step = channel(fd_t, 20);
        let mut jump = channel(fd_t, 20);
        let mut t = 0u64;
        for j in 1..=20_000u64 {
            let target = j * (1 + j % 7);
            let target = target.max(t);
            while t < target {
                t += 1;
                step.advance(slot(t));
            }
            jump.advance(slot(target));
            assert_eq!(step.gain(), jump.gain(), "slot {target}");
            assert_eq!(step.is_bad(), jump.is_bad());
        }
        // Within a slot nothing changes.
        let g = jump.gain();
        jump.advance(slot(t) + Time::from_millis(5));
        assert_eq!(jump.gain(), g);
    }

    #[test]
    fn recurrence_is_within_1e_11_of_the_cosines() {
        // Bound fixed beforehand (channel/sos_bank.rs): ≤ 127² · 3.3e-16 per
        // unit term after at most 127 steps, the 32 amplitudes √(2/16) summing
        // to ≤ 11.4: 6e-11 in the worst case; with random signs far less, so
        // 1e-11 is asked, over 2·10⁵ slots visited one by one and by jumps.
        // (Far beyond, both evaluations carry the rounding of ν·k itself:
        // half an ulp of ν·k cycles, 1.2e-9 rad at k = 10⁹ and f_d·T = 0.02,
        // at the anchor and at k alike; the recurrence adds nothing to it.)
        let mut ch = channel(0.02, 11);
        let mut worst: f64 = 0.0;
        let jumps = (1..2000u64).map(|j| 100_000 + j * 47 + j % 5);
        for i in (0..100_000u64).chain(jumps) {
            ch.advance(slot(i));
            let ((a, b), (c, d)) = (ch.gain(), ch.sos.gain_at(ch.slot));
            worst = worst.max((a - c).abs()).max((b - d).abs());
        }
        assert!(worst < 1e-11, "max |Δh| {worst:e}");
    }

    #[test]
    fn huge_skips_stay_stationary() {
        let mut ch = channel(0.001, 6);
        let n = 100_000u64;
        let (mut bad, mut power) = (0u64, 0.0);
        for i in 1..=n {
            ch.advance(Time::from_secs(10_000 * i));
            bad += u64::from(ch.is_bad());
            power += ch.power();
        }
        let frac = bad as f64 / n as f64;
        assert!((frac - 0.1).abs() < 0.01, "bad fraction {frac}");
        assert!((power / n as f64 - 1.0).abs() < 0.02, "mean power {power}");
    }

    #[test]
    fn deterministic_per_seed() {
        let run = |seed| {
            let mut ch = channel(0.01, seed);
            (0..5000u64)
                .map(|i| {
                    ch.advance(slot(i));
                    (ch.power().to_bits(), ch.unit_error())
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

//! A frequency-selective Rayleigh fading channel with log-normal shadowing
//! and a predicted copy, sampled once per radio frame for one frequency bin
//! (seed 004, WIPEMU: "a Jakes model with 12 taps set according to typical
//! urban fading … an AR(1) process provided shadow samples at an interval of
//! 2 meter … a copy of this channel was then processed to include prediction
//! errors").
//!
//! - **Fast fading**: a tapped delay line; tap i is an independent
//!   sum-of-sinusoids Rayleigh process (`Sos`, Zheng & Xiao) of power p_i
//!   (normalised to Σ p_i = 1) and delay τ_i, all with the maximum Doppler
//!   f_d = v·f_c/c. The bin's gain is the channel's frequency response at the
//!   bin's offset f from the reference: h = Σ_i h_i·e^(−j2π f τ_i), so
//!   E|h|² = 1 and its autocorrelation is J0(2π f_d τ).
//! - **Shadowing**: an AR(1) process in dB, s_j = a·s_{j−1} + σ√(1 − a²)·w_j,
//!   one sample per `distance` travelled (every distance/v seconds),
//!   stationary from the first sample, linearly interpolated between samples.
//! - **SNR**: the real SNR of frame k is γ_k = γ̄·10^(s/10)·|h_k|²; the local
//!   mean γ̄·10^(s/10) is known to the transmitter.
//! - **Prediction**: the predicted gain is ĥ = (1 − ν)·h + √(ν(1 − ν))·w with
//!   w circular Gaussian, independent per frame: the error h − ĥ has variance
//!   ν (the NMSE) and is uncorrelated with ĥ, as for an MMSE predictor; the
//!   predicted SNR is γ̂ = local mean·|ĥ|².
//!
//! Three random streams (fading, shadowing, prediction) come from the
//! link's seed and name only, so a replication sees the same channel in every
//! configuration that differs in what rides on it (common random numbers).

use schemars::JsonSchema;
use serde::Deserialize;

use super::rayleigh::{Sos, M};
use super::sos_bank::SosBank;
#[cfg(test)]
use super::sos_bank::ANCHOR_EVERY;
use crate::config::{ConfigError, Decibel, Frequency, Length, Result, Speed};
use crate::rng::{Keyed, Rng};
use crate::time::Time;

/// Speed of light, m/s.
const C: f64 = 299_792_458.0;

/// One tap of the delay line.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tap {
    /// Excess delay, e.g. `"0.5us"`.
    pub delay: Time,
    /// Average power relative to the others, e.g. `"-2.6dB"`.
    pub power: Decibel,
}

/// The typical-urban 12-tap profile (GSM 05.05 / 3GPP TS 45.005 Annex C,
/// TUx 12-tap setting): delays in µs and relative powers in dB.
pub const TU12: [(f64, f64); 12] = [
    (0.0, -4.0),
    (0.1, -3.0),
    (0.3, 0.0),
    (0.5, -2.6),
    (0.8, -3.0),
    (1.1, -5.0),
    (1.3, -7.0),
    (1.7, -5.0),
    (2.3, -6.5),
    (3.1, -8.6),
    (3.2, -11.0),
    (5.0, -10.0),
];

/// Log-normal shadowing (seed 004: σ 4 dB, pole 0.74, a sample per 2 m).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShadowConfig {
    /// Standard deviation in dB (`"0dB"`: no shadowing). Default `"4dB"`.
    pub sigma: Option<Decibel>,
    /// AR(1) pole a, 0 ≤ a < 1. Default 0.74.
    pub pole: Option<f64>,
    /// Distance between samples, e.g. `"2m"`. Default `"2m"`.
    pub distance: Option<Length>,
}

/// `channel = { … }` of a frame link: fading, shadowing, prediction.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FadingConfig {
    /// Mean SNR per symbol (Es/N0). Default `"16dB"`.
    pub snr: Option<Decibel>,
    /// Terminal speed. Default `"100km/h"`.
    pub speed: Option<Speed>,
    /// Carrier frequency (seed 004 does not give it). Default `"2GHz"`.
    pub carrier: Option<Frequency>,
    /// The delay line. Default the typical-urban 12-tap profile [`TU12`].
    pub taps: Option<Vec<Tap>>,
    /// The bin's centre relative to the reference frequency. Default `"0Hz"`.
    pub bin: Option<Frequency>,
    /// Shadowing; default seed 004's (σ 4 dB, pole 0.74, 2 m).
    pub shadow: Option<ShadowConfig>,
    /// Prediction NMSE ν on the complex gain, 0 ≤ ν < 1. Default 0 (perfect).
    pub nmse: Option<f64>,
}

impl FadingConfig {
    /// Mean SNR, linear.
    pub fn mean_snr(&self) -> f64 {
        db(self.snr.map_or(16.0, Decibel::db))
    }

    /// Speed, m/s.
    pub fn speed_mps(&self) -> f64 {
        self.speed.map_or(100.0 / 3.6, Speed::mps)
    }

    /// Maximum Doppler frequency f_d = v·f_c/c, Hz.
    pub fn doppler_hz(&self) -> f64 {
        self.speed_mps() * self.carrier.map_or(2e9, Frequency::hz) / C
    }

    /// Prediction NMSE.
    pub fn nmse(&self) -> f64 {
        self.nmse.unwrap_or(0.0)
    }

    /// (σ dB, pole, seconds between samples); σ = 0: none.
    pub fn shadow(&self) -> (f64, f64, f64) {
        let s = self.shadow.as_ref();
        let sigma = s.and_then(|s| s.sigma).map_or(4.0, Decibel::db);
        let pole = s.and_then(|s| s.pole).unwrap_or(0.74);
        let dist = s.and_then(|s| s.distance).map_or(2.0, Length::meters);
        (sigma, pole, dist / self.speed_mps())
    }

    /// The taps as (delay s, linear power normalised to sum 1).
    pub fn taps(&self) -> Vec<(f64, f64)> {
        let raw: Vec<(f64, f64)> = match &self.taps {
            Some(t) => t
                .iter()
                .map(|t| (t.delay.as_secs_f64(), db(t.power.db())))
                .collect(),
            None => TU12.iter().map(|&(d, p)| (d * 1e-6, db(p))).collect(),
        };
        let total: f64 = raw.iter().map(|t| t.1).sum();
        raw.into_iter().map(|(d, p)| (d, p / total)).collect()
    }

    /// Check the values (paths relative to the `channel` table).
    pub fn validate(&self) -> Result<()> {
        if let Some(n) = self.nmse {
            if !(0.0..1.0).contains(&n) {
                return Err(ConfigError::new(
                    "nmse",
                    n.to_string(),
                    "is not an NMSE; allowed: 0 to 1 (1 excluded)",
                ));
            }
        }
        if self.speed.is_some_and(|s| s.mps() <= 0.0) {
            return Err(ConfigError::new(
                "speed",
                "0",
                "is not moving; allowed: a speed > 0 (fading needs Doppler)",
            ));
        }
        if self.carrier.is_some_and(|f| f.hz() <= 0.0) {
            return Err(ConfigError::new(
                "carrier",
                "0",
                "is zero; allowed: a frequency > 0",
            ));
        }
        if let Some(t) = &self.taps {
            if t.is_empty() || t.len() > 64 {
                return Err(ConfigError::at_key(
                    "taps",
                    format!("has {} taps; allowed: 1 to 64", t.len()),
                ));
            }
        }
        if let Some(s) = &self.shadow {
            if let Some(p) = s.pole {
                if !(0.0..1.0).contains(&p) {
                    return Err(ConfigError::new(
                        "shadow.pole",
                        p.to_string(),
                        "is not a stable AR(1) pole; allowed: 0 to 1 (1 excluded)",
                    ));
                }
            }
            if s.distance.is_some_and(|d| d.meters() <= 0.0) {
                return Err(ConfigError::new(
                    "shadow.distance",
                    "0",
                    "is zero; allowed: > 0",
                ));
            }
        }
        Ok(())
    }
}

/// dB to linear.
fn db(x: f64) -> f64 {
    10f64.powf(x / 10.0)
}

/// The channel of one frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameChannel {
    /// Real SNR (linear).
    pub snr: f64,
    /// Predicted SNR (linear).
    pub predicted: f64,
    /// Local mean SNR: the mean times the shadowing (linear).
    pub local_mean: f64,
    /// The fading gain |h|² alone (unit mean).
    pub gain: f64,
    /// The shadowing, dB.
    pub shadow_db: f64,
    /// The prediction error |h − ĥ|² on the unit-mean gain (0 when perfect).
    pub error: f64,
}

/// One tap: its amplitude and its rotation at the bin (its generator's
/// sinusoids are in the [`SosBank`]).
#[derive(Clone, Debug)]
struct TapGen {
    amp: f64,
    rot: (f64, f64),
}

/// The bank of every tap's 2M sinusoids, each weighted onto the bin's gain:
/// tap i contributes amp_i·(A_i + jB_i)·(rc_i + j·rs_i), A_i and B_i its real
/// and imaginary branch (Σ a_n cos θ_n, Σ b_n cos θ'_n), so a real-branch term
/// weighs (amp_i·a_n·rc_i, amp_i·a_n·rs_i) on (Re h, Im h) and an
/// imaginary-branch term (−amp_i·b_n·rs_i, amp_i·b_n·rc_i).
fn bank(taps: &[TapGen], gens: &[Sos]) -> SosBank {
    let mut terms = Vec::new();
    for (tap, sos) in taps.iter().zip(gens) {
        let (rc, rs) = tap.rot;
        for (j, (a, nu, phase)) in sos.terms().enumerate() {
            let w = tap.amp * a;
            terms.push(if j < M {
                (nu, phase, w * rc, w * rs)
            } else {
                (nu, phase, -w * rs, w * rc)
            });
        }
    }
    SosBank::new(terms)
}

/// The channel of a frame link, sampled frame by frame (see the module).
#[derive(Clone, Debug)]
pub struct FadingChannel {
    mean: f64,
    nmse: f64,
    bank: SosBank,
    /// The taps and generators themselves (for the exact evaluation in tests).
    #[cfg(test)]
    taps: Vec<TapGen>,
    #[cfg(test)]
    gens: Vec<Sos>,
    /// Shadowing: σ, pole, frames per sample, the two samples around the
    /// current frame and the index of the later one.
    sigma: f64,
    pole: f64,
    frames_per_sample: f64,
    shadow: (f64, f64),
    sample: u64,
    shadow_rng: Rng,
    pred: Keyed,
}

impl FadingChannel {
    /// The channel of `cfg` for frames of length `frame`, its streams drawn
    /// from `seed` and the link direction's `name`.
    pub fn new(cfg: &FadingConfig, frame: Time, seed: u64, name: &str) -> FadingChannel {
        let t = frame.as_secs_f64();
        let fd_t = cfg.doppler_hz() * t;
        let mut fade_rng = Rng::stream(seed, &format!("{name}/fading"));
        let bin = cfg.bin.map_or(0.0, Frequency::hz);
        let mut gens = Vec::new();
        let taps: Vec<TapGen> = cfg
            .taps()
            .into_iter()
            .map(|(delay, p)| {
                let (s, c) = (-2.0 * std::f64::consts::PI * bin * delay).sin_cos();
                gens.push(Sos::new(fd_t, &mut fade_rng));
                TapGen {
                    amp: p.sqrt(),
                    rot: (c, s),
                }
            })
            .collect();
        let bank = bank(&taps, &gens);
        let (sigma, pole, every) = cfg.shadow();
        let mut shadow_rng = Rng::stream(seed, &format!("{name}/shadowing"));
        let first = sigma * shadow_rng.normal();
        let second = pole * first + sigma * (1.0 - pole * pole).sqrt() * shadow_rng.normal();
        FadingChannel {
            mean: cfg.mean_snr(),
            nmse: cfg.nmse(),
            bank,
            #[cfg(test)]
            taps,
            #[cfg(test)]
            gens,
            sigma,
            pole,
            frames_per_sample: (every / t).max(1e-9),
            shadow: (first, second),
            sample: 1,
            shadow_rng,
            pred: Keyed::new(seed, &format!("{name}/prediction")),
        }
    }

    /// The channel of frame `k` (frames are visited in increasing order; a
    /// skipped frame costs nothing but its shadowing samples).
    pub fn at(&mut self, k: u64) -> FrameChannel {
        let (re, im) = self.h(k);
        let shadow_db = self.shadow_at(k);
        let local_mean = self.mean * db(shadow_db);
        let gain = re * re + im * im;
        let (predicted, error) = if self.nmse > 0.0 {
            let (c, d) = (
                1.0 - self.nmse,
                (self.nmse * (1.0 - self.nmse) / 2.0).sqrt(),
            );
            // Keyed by the frame index: the same error at the same frame in
            // every configuration of a replication.
            let (wr, wi) = (self.pred.normal(k, 0), self.pred.normal(k, 1));
            let (pr, pi) = (c * re + d * wr, c * im + d * wi);
            (
                local_mean * (pr * pr + pi * pi),
                (re - pr).powi(2) + (im - pi).powi(2),
            )
        } else {
            (local_mean * gain, 0.0)
        };
        FrameChannel {
            snr: local_mean * gain,
            predicted,
            local_mean,
            gain,
            shadow_db,
            error,
        }
    }

    /// The bin's complex gain h at frame `k` (the recurrence of [`SosBank`]).
    fn h(&mut self, k: u64) -> (f64, f64) {
        self.bank.at(k)
    }

    /// h at frame `k` from a cosine per sinusoid ([`Sos::gain_at`]): what
    /// the recurrence is checked against.
    #[cfg(test)]
    fn h_exact(&self, k: u64) -> (f64, f64) {
        let (mut re, mut im) = (0.0, 0.0);
        for (tap, sos) in self.taps.iter().zip(&self.gens) {
            let (a, b) = sos.gain_at(k);
            re += tap.amp * (a * tap.rot.0 - b * tap.rot.1);
            im += tap.amp * (a * tap.rot.1 + b * tap.rot.0);
        }
        (re, im)
    }

    /// Shadowing at frame `k`, dB, linearly interpolated between samples.
    fn shadow_at(&mut self, k: u64) -> f64 {
        if self.sigma <= 0.0 {
            return 0.0;
        }
        let pos = k as f64 / self.frames_per_sample;
        while pos > self.sample as f64 {
            let next = self.pole * self.shadow.1
                + self.sigma * (1.0 - self.pole * self.pole).sqrt() * self.shadow_rng.normal();
            self.shadow = (self.shadow.1, next);
            self.sample += 1;
        }
        let frac = pos - (self.sample - 1) as f64;
        self.shadow.0 + (self.shadow.1 - self.shadow.0) * frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(nmse: f64, shadow: bool) -> FadingChannel {
        let cfg = FadingConfig {
            nmse: Some(nmse),
            shadow: (!shadow).then(|| ShadowConfig {
                sigma: Some("0dB".parse().unwrap()),
                pole: None,
                distance: None,
            }),
            ..FadingConfig::default()
        };
        FadingChannel::new(&cfg, Time::from_nanos(666_667), 7, "BS->MS")
    }

    #[test]
    fn gains_have_unit_mean_and_are_exponential() {
        let mut ch = channel(0.0, false);
        let n = 100_000u64;
        let (mut sum, mut below) = (0.0, 0u64);
        // Sample every 50 frames: far apart compared to the coherence time.
        for k in 0..n {
            let g = ch.at(k * 50).gain;
            sum += g;
            below += u64::from(g < 0.1);
        }
        let mean = sum / n as f64;
        assert!((mean - 1.0).abs() < 0.05, "mean {mean}");
        // P(|h|² < 0.1) = 1 − e^−0.1 for Rayleigh.
        let p = below as f64 / n as f64;
        assert!((p - (1.0 - (-0.1f64).exp())).abs() < 0.012, "{p}");
    }

    #[test]
    fn power_autocorrelation_is_j0_squared() {
        // For Rayleigh fading corr(|h_k|², |h_{k+L}|²) = J0²(2π f_d T L).
        let mut ch = channel(0.0, false);
        let fd_t = FadingConfig::default().doppler_hz() * 666_667e-9;
        let g: Vec<f64> = (0..120_000u64).map(|k| ch.at(k).gain).collect();
        let m = g.iter().sum::<f64>() / g.len() as f64;
        let var = g.iter().map(|x| (x - m).powi(2)).sum::<f64>() / g.len() as f64;
        for lag in [1usize, 2, 3, 5] {
            let c = g
                .windows(lag + 1)
                .map(|w| (w[0] - m) * (w[lag] - m))
                .sum::<f64>()
                / (g.len() - lag) as f64
                / var;
            let want = libm::j0(2.0 * std::f64::consts::PI * fd_t * lag as f64).powi(2);
            assert!((c - want).abs() < 0.06, "lag {lag}: {c} vs J0² {want}");
        }
    }

    #[test]
    fn doppler_of_seed_004() {
        let cfg = FadingConfig::default();
        // 100 km/h at 2 GHz: 27.78 m/s · 2e9 / c = 185.31 Hz.
        assert!(
            (cfg.doppler_hz() - 185.31).abs() < 0.01,
            "{}",
            cfg.doppler_hz()
        );
        let (sigma, pole, every) = cfg.shadow();
        assert_eq!((sigma, pole), (4.0, 0.74));
        assert!((every - 0.072).abs() < 1e-9);
        let taps = cfg.taps();
        assert_eq!(taps.len(), 12);
        assert!((taps.iter().map(|t| t.1).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn prediction_error_has_the_nmse() {
        let mut ch = channel(0.1, false);
        let (mut real, mut pred, mut err) = (0.0, 0.0, 0.0);
        for k in 0..50_000u64 {
            let f = ch.at(k * 7);
            real += f.snr / f.local_mean;
            pred += f.predicted / f.local_mean;
            err += f.error;
        }
        assert!(
            (err / 50_000.0 - 0.1).abs() < 0.005,
            "NMSE {}",
            err / 50_000.0
        );
        // MMSE: E|h|² = E|ĥ|² + ν, with E|h|² = 1.
        let (real, pred) = (real / 50_000.0, pred / 50_000.0);
        assert!((real - pred - 0.1).abs() < 0.02, "{real} {pred}");
        assert!((pred - 0.9).abs() < 0.06, "{pred}");
    }

    #[test]
    fn shadowing_has_sigma_and_pole() {
        let mut ch = channel(0.0, true);
        let every = ch.frames_per_sample;
        let n = 100_000u64;
        let xs: Vec<f64> = (0..n)
            .map(|j| ch.at((j as f64 * every).ceil() as u64).shadow_db)
            .collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64;
        assert!((var.sqrt() - 4.0).abs() < 0.15, "sigma {}", var.sqrt());
        let lag1 =
            xs.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / (n - 1) as f64 / var;
        assert!((lag1 - 0.74).abs() < 0.03, "pole {lag1}");
    }

    /// Largest |h − h_exact| over frames `ks` (visited in that order).
    fn max_error(ch: &mut FadingChannel, ks: impl Iterator<Item = u64>) -> f64 {
        ks.map(|k| {
            let ((a, b), (c, d)) = (ch.h(k), ch.h_exact(k));
            (a - c).hypot(b - d)
        })
        .fold(0.0, f64::max)
    }

    #[test]
    fn recurrence_stays_within_1e_9_of_the_exact_evaluation() {
        // Target fixed beforehand: a step rounds each phasor by a few ulp
        // (≤ 63 steps: ~6e-14 per term), and the exact evaluation itself
        // rounds ν·k to f64 (at k = 2·10⁵, ν ≤ f_d·T = 0.12: half an ulp of
        // 2.5·10⁴ cycles, 1.4e-11 rad) at the anchor and at k; the 384
        // terms' amplitudes sum to ≤ 3.5 · 5.7 = 20, so |Δh| ≤ ~6e-10 in the
        // worst case, far less with random signs.
        let mut ch = channel(0.0, false);
        let err = max_error(&mut ch, 0..200_000);
        assert!(err < 1e-9, "max |Δh| {err:e}");
        // Anchor frames are the bank's exact evaluation (a cosine per term,
        // the same sums), bit for bit.
        for k in (0..200_000).step_by(ANCHOR_EVERY as usize * 7) {
            assert_eq!(ch.h(k), ch.bank.exact(k));
        }
    }

    #[test]
    fn value_of_a_frame_does_not_depend_on_the_frames_visited() {
        let mut all = channel(0.1, true);
        let mut some = channel(0.1, true);
        let every: Vec<FrameChannel> = (0..5_000).map(|k| all.at(k)).collect();
        // Gaps inside a block, across blocks, of many blocks.
        let mut k = 0;
        for gap in [1u64, 3, 1, 70, 2, 200, 1, 1, 63, 64, 65, 5, 1000, 1, 2] {
            k += gap;
            assert_eq!(some.at(k), every[k as usize], "frame {k}");
        }
    }

    #[test]
    fn same_seed_same_channel() {
        let mut a = channel(0.1, true);
        let mut b = channel(0.1, true);
        for k in 0..1000 {
            assert_eq!(a.at(k), b.at(k));
        }
    }
}

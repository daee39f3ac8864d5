//! The continuous-flow model of the losses one rate switch causes at a shared
//! buffer (seed 003, Paliwal et al., §3, Eqs. 1–6).
//!
//! One TCP flow with a fixed window W (bytes) and round-trip propagation T
//! crosses a shared buffer of B bytes served for it at b_b, then its radio
//! link buffer served at b_ll. At t0 = 0 the radio rate switches up to b_lh:
//! the link buffer's backlog W − b_ll·T moves to the shared buffer, which
//! receives data at b_lh from t_start = T until t_end (Eq. 5), fills after
//! B/(b_lh − b_b) and then drops at b_lh − b_b:
//!
//! - case 1, b_lh ≥ W/T: the link buffer empties before the faster flow
//!   reaches the shared buffer (Eq. 1);
//! - case 2, W/(T + B/b_b) < b_lh < W/T: the faster flow arrives first, the
//!   link buffer empties later (Eq. 2);
//! - case 3, b_lh ≤ W/(T + B/b_b): the sender learns of the first drop before
//!   the link buffer empties (Eq. 3);
//!
//! L_V = max[(t_end − t_start)(b_lh − b_b) − B, 0] (Eq. 6; the clamp at 0
//! is the paper's for cases 1 and 2, case 3's volume W(b_lh − b_b)/b_lh is
//! never negative). With b_lh ≤ b_b the shared buffer never fills: "case 0",
//! no loss. Rates are in bytes per second here.

/// The model's inputs (bytes, bytes/s, seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossVolumeInput {
    /// Radio rate before the switch, b_ll.
    pub b_ll: f64,
    /// The flow's service rate at the shared buffer, b_b.
    pub b_b: f64,
    /// Radio rate after the switch, b_lh.
    pub b_lh: f64,
    /// The sender's fixed window W.
    pub window: f64,
    /// The flow's space in the shared buffer, B.
    pub buffer: f64,
    /// Round-trip propagation delay T.
    pub rtt: f64,
}

/// What the model gives for one switch at t0 = 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossVolume {
    /// 1, 2 or 3 as in Eq. 5 (0: b_lh ≤ b_b, the shared buffer never fills).
    pub case: u8,
    /// When the faster flow reaches the shared buffer (T).
    pub t_start: f64,
    /// When it stops arriving at b_lh (Eq. 5); `None` in case 0.
    pub t_end: Option<f64>,
    /// W / (T + B/b_b), bytes/s: case 3 below it.
    pub threshold_low: f64,
    /// W / T, bytes/s: case 1 at or above it.
    pub threshold_high: f64,
    /// Bytes dropped at the shared buffer (Eq. 6).
    pub loss_volume: f64,
    /// Eq. 6's expression was negative and clamped to 0.
    pub clamped: bool,
}

impl LossVolumeInput {
    /// Check the inputs: `Err((name, what is allowed))`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let finite_pos = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err((name, "is not positive; need a positive value".to_string()))
            }
        };
        finite_pos("b_ll", self.b_ll)?;
        finite_pos("b_b", self.b_b)?;
        finite_pos("b_lh", self.b_lh)?;
        finite_pos("window", self.window)?;
        finite_pos("rtt", self.rtt)?;
        if !(self.buffer.is_finite() && self.buffer >= 0.0) {
            return Err(("buffer", "is negative; need 0 or more".to_string()));
        }
        if self.b_lh <= self.b_ll {
            return Err((
                "b_lh",
                "is not above b_ll; the model is of a switch up (need b_lh > b_ll)".to_string(),
            ));
        }
        if self.window < self.b_ll * self.rtt {
            return Err((
                "window",
                format!(
                    "is below b_ll·T = {:.0} B, so the low rate is not the bottleneck before \
                     the switch; need W ≥ b_ll·T",
                    self.b_ll * self.rtt
                ),
            ));
        }
        Ok(())
    }

    /// Evaluate Eqs. 1–6 (of checked inputs).
    pub fn evaluate(&self) -> LossVolume {
        let (bll, bb, blh, w, b, t) = (
            self.b_ll,
            self.b_b,
            self.b_lh,
            self.window,
            self.buffer,
            self.rtt,
        );
        let threshold_low = w / (t + b / bb);
        let threshold_high = w / t;
        if blh <= bb {
            return LossVolume {
                case: 0,
                t_start: t,
                t_end: None,
                threshold_low,
                threshold_high,
                loss_volume: 0.0,
                clamped: false,
            };
        }
        let (case, t_end) = if blh <= threshold_low {
            (3, t + b / (blh - bb) + w / blh)
        } else if blh < threshold_high {
            (2, t + (w - bb * t) / (blh - bb))
        } else {
            (1, t + (w - bll * t) / (blh - bll))
        };
        let raw = (t_end - t) * (blh - bb) - b;
        LossVolume {
            case,
            t_start: t,
            t_end: Some(t_end),
            threshold_low,
            threshold_high,
            loss_volume: raw.max(0.0),
            clamped: raw < 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Fig. 5's constants: b_ll 9.6 kbit/s, b_b 38.4 kbit/s, B 5 kB.
    fn fig5(blh_kbit: f64, w: f64, t: f64) -> LossVolumeInput {
        LossVolumeInput {
            b_ll: 9600.0 / 8.0,
            b_b: 38_400.0 / 8.0,
            b_lh: blh_kbit * 1000.0 / 8.0,
            window: w,
            buffer: 5000.0,
            rtt: t,
        }
    }

    #[test]
    fn the_three_cases_by_hand() {
        // W 32 kB, T 0.3 s: W/T = 106 667 B/s, W/(T + B/b_b) = 32 000/(0.3 +
        // 5000/4800) = 23 851 B/s.
        // b_lh 163.2 kbit/s = 20 400 B/s ≤ 23 851: case 3,
        // L = W(b_lh − b_b)/b_lh = 32 000 · 15 600 / 20 400 = 24 470.6 B.
        let r = fig5(163.2, 32_000.0, 0.3).evaluate();
        assert_eq!(r.case, 3);
        assert!((r.loss_volume - 32_000.0 * 15_600.0 / 20_400.0).abs() < 1e-6);
        assert!((r.threshold_low - 32_000.0 / (0.3 + 5000.0 / 4800.0)).abs() < 1e-9);
        // t_end = T + B/(b_lh − b_b) + W/b_lh.
        let te = 0.3 + 5000.0 / 15_600.0 + 32_000.0 / 20_400.0;
        assert!((r.t_end.unwrap() - te).abs() < 1e-12);
        // A short window: W 8 kB, T 0.3 s: W/T = 26 667, W/(T + B/b_b) =
        // 5963; b_lh 20 400 between: case 2, L = W − B − b_b·T = 8000 − 5000 −
        // 1440 = 1560 B.
        let r = fig5(163.2, 8000.0, 0.3).evaluate();
        assert_eq!(r.case, 2);
        assert!((r.loss_volume - 1560.0).abs() < 1e-9);
        // b_lh above W/T: case 1, L = (W − b_ll T)(b_lh − b_b)/(b_lh − b_ll) − B:
        // W 8 kB, b_lh 1 Mbit/s = 125 000 B/s: (8000 − 360)(120 200)/(123 800) − 5000.
        let r = fig5(1000.0, 8000.0, 0.3).evaluate();
        assert_eq!(r.case, 1);
        let want = (8000.0 - 360.0) * 120_200.0 / 123_800.0 - 5000.0;
        assert!((r.loss_volume - want).abs() < 1e-9);
        // b_lh below b_b: nothing fills.
        let r = fig5(19.2 + 9.6, 8000.0, 0.3).evaluate();
        assert_eq!((r.case, r.loss_volume, r.t_end), (0, 0.0, None));
    }

    #[test]
    fn negative_volumes_are_clamped() {
        // Case 2 with W − B − b_b·T < 0: W 5.5 kB, T 0.2 s, b_lh 20 400 B/s
        // (thresholds 4430 and 27 500 B/s): 5500 − 5000 − 960 = −460.
        let r = fig5(163.2, 5500.0, 0.2).evaluate();
        assert_eq!(r.case, 2);
        assert!(r.clamped && r.loss_volume == 0.0);
    }

    #[test]
    fn limit_for_a_very_sharp_swing() {
        // §4.1: L_V → W − B − b_ll·T as b_lh → ∞.
        let r = fig5(1e9, 32_000.0, 0.3).evaluate();
        let limit = 32_000.0 - 5000.0 - 1200.0 * 0.3;
        assert!(
            (r.loss_volume - limit).abs() / limit < 1e-3,
            "{}",
            r.loss_volume
        );
    }

    #[test]
    fn checks() {
        let mut i = fig5(163.2, 32_000.0, 0.3);
        i.b_lh = i.b_ll;
        assert_eq!(i.check().unwrap_err().0, "b_lh");
        let i = fig5(163.2, 100.0, 0.3);
        assert_eq!(i.check().unwrap_err().0, "window");
        let mut i = fig5(163.2, 32_000.0, 0.3);
        i.rtt = 0.0;
        assert_eq!(i.check().unwrap_err().0, "rtt");
        let mut i = fig5(163.2, 32_000.0, 0.3);
        i.buffer = -1.0;
        assert_eq!(i.check().unwrap_err().0, "buffer");
    }

    proptest! {
        /// The three cases meet continuously at their thresholds, the
        /// volume never exceeds what the link buffer held (W − b_ll·T) and
        /// never grows with the shared buffer.
        #[test]
        fn continuity_and_bounds(
            w in 2000.0f64..200_000.0,
            t in 0.05f64..2.0,
            b in 0.0f64..50_000.0,
            blh in 5000.0f64..500_000.0,
        ) {
            let mut i = fig5(0.0, w, t);
            i.b_lh = blh;
            prop_assume!(i.check().is_ok());
            let r = i.evaluate();
            prop_assert!(r.loss_volume >= 0.0);
            prop_assert!(r.loss_volume <= w - i.b_ll * t + 1e-6);
            let mut more = i;
            more.buffer = b + 1000.0;
            i.buffer = b;
            prop_assert!(more.evaluate().loss_volume <= i.evaluate().loss_volume + 1e-9);
            for th in [r.threshold_low, r.threshold_high] {
                if th > i.b_b * 1.001 && th > i.b_ll {
                    let mut lo = i;
                    lo.b_lh = th * (1.0 - 1e-9);
                    let mut hi = i;
                    hi.b_lh = th * (1.0 + 1e-9);
                    if lo.check().is_ok() && hi.check().is_ok() {
                        let (a, c) = (lo.evaluate().loss_volume, hi.evaluate().loss_volume);
                        prop_assert!((a - c).abs() <= 1e-3 * w, "{} vs {} at {}", a, c, th);
                    }
                }
            }
        }
    }
}

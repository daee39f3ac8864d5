//! The ITU-T G.107 E-model (06/2015 edition; the algorithm of §7 is unchanged
//! since 03/2005 apart from the `sT`/`mT` delay-sensitivity parameters of
//! 12/2011, whose defaults give the earlier `Idd`): the transmission rating
//! factor `R = Ro − Is − Id − Ie,eff + A` of a narrowband telephone
//! connection, and the MOS of Annex B.
//!
//! Every input of G.107 Table 3 is a field of [`EModel`], with its default;
//! a media stream sets only the delays (`t`, `tr`, `ta`, from its measured
//! mouth-to-ear delay) and the codec's `ie` and `bpl` with the measured
//! packet loss `ppl` (ITU-T G.113 Appendix I gives `Ie` and `Bpl`; see
//! [`Codec`](crate::media::Codec)).

/// The inputs of the E-model (G.107 Table 3, defaults in [`EModel::default`]).
/// Levels in dB, delays in ms, `ppl` in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EModel {
    /// Send loudness rating SLR, dB (default 8).
    pub slr: f64,
    /// Receive loudness rating RLR, dB (default 2).
    pub rlr: f64,
    /// Sidetone masking rating STMR, dB (default 15).
    pub stmr: f64,
    /// Listener sidetone rating LSTR, dB (default 18).
    pub lstr: f64,
    /// D-value of the telephone, send side Ds (default 3).
    pub ds: f64,
    /// D-value of the telephone, receive side Dr (default 3).
    pub dr: f64,
    /// Talker echo loudness rating TELR, dB (default 65).
    pub telr: f64,
    /// Weighted echo path loss WEPL, dB (default 110).
    pub wepl: f64,
    /// Mean one-way delay of the echo path T, ms (default 0).
    pub t: f64,
    /// Round-trip delay in a 4-wire loop Tr, ms (default 0).
    pub tr: f64,
    /// Absolute (mouth-to-ear) delay in echo-free connections Ta, ms (default 0).
    pub ta: f64,
    /// Number of quantization distortion units qdu (default 1).
    pub qdu: f64,
    /// Equipment impairment factor Ie (default 0).
    pub ie: f64,
    /// Packet-loss robustness factor Bpl (default 4.3, G.711 without PLC).
    pub bpl: f64,
    /// Random packet-loss probability Ppl, % (default 0).
    pub ppl: f64,
    /// Burst ratio BurstR (default 1: random loss).
    pub burst_r: f64,
    /// Circuit noise referred to the 0 dBr point Nc, dBm0p (default −70).
    pub nc: f64,
    /// Noise floor at the receive side Nfor, dBmp (default −64).
    pub nfor: f64,
    /// Room noise at the send side Ps, dB(A) (default 35).
    pub ps: f64,
    /// Room noise at the receive side Pr, dB(A) (default 35).
    pub pr: f64,
    /// Advantage factor A (default 0).
    pub a: f64,
    /// Delay sensitivity sT (default 1; G.107 since 12/2011).
    pub s_t: f64,
    /// Minimum perceivable delay mT, ms (default 100).
    pub m_t: f64,
}

impl Default for EModel {
    fn default() -> Self {
        EModel {
            slr: 8.0,
            rlr: 2.0,
            stmr: 15.0,
            lstr: 18.0,
            ds: 3.0,
            dr: 3.0,
            telr: 65.0,
            wepl: 110.0,
            t: 0.0,
            tr: 0.0,
            ta: 0.0,
            qdu: 1.0,
            ie: 0.0,
            bpl: 4.3,
            ppl: 0.0,
            burst_r: 1.0,
            nc: -70.0,
            nfor: -64.0,
            ps: 35.0,
            pr: 35.0,
            a: 0.0,
            s_t: 1.0,
            m_t: 100.0,
        }
    }
}

/// The terms of one evaluation: `r = ro − is − id − ie_eff + a`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// Basic signal-to-noise ratio Ro.
    pub ro: f64,
    /// Simultaneous impairment factor Is.
    pub is: f64,
    /// Delay impairment factor Id = Idte + Idle + Idd.
    pub id: f64,
    /// Its absolute-delay part Idd.
    pub idd: f64,
    /// Effective equipment impairment factor Ie,eff.
    pub ie_eff: f64,
    /// The rating R.
    pub r: f64,
    /// The MOS (conversational quality, estimated) of Annex B.
    pub mos: f64,
}

fn lg(x: f64) -> f64 {
    x.log10()
}

impl EModel {
    /// The defaults with a mouth-to-ear delay of `ta_ms` as a VoIP path has
    /// it: the echo path is as long (`T = Ta`, `Tr = 2 Ta`; with the default
    /// TELR of 65 dB the echo impairment stays small), and the codec's `ie`,
    /// `bpl` at `ppl` % packet loss, random (BurstR 1).
    pub fn voip(ta_ms: f64, ie: f64, bpl: f64, ppl: f64) -> EModel {
        EModel {
            t: ta_ms,
            tr: 2.0 * ta_ms,
            ta: ta_ms,
            ie,
            bpl,
            ppl,
            ..EModel::default()
        }
    }

    /// Check the inputs: every one finite; delays, `qdu`, `bpl`,
    /// `burst_r`, `s_t`, `m_t` within G.107 Table 3's ranges where the
    /// formulas need them. `Err((name, allowed))`.
    pub fn check(&self) -> Result<(), (&'static str, &'static str)> {
        let all = [
            ("slr", self.slr),
            ("rlr", self.rlr),
            ("stmr", self.stmr),
            ("lstr", self.lstr),
            ("ds", self.ds),
            ("dr", self.dr),
            ("telr", self.telr),
            ("wepl", self.wepl),
            ("t", self.t),
            ("tr", self.tr),
            ("ta", self.ta),
            ("qdu", self.qdu),
            ("ie", self.ie),
            ("bpl", self.bpl),
            ("ppl", self.ppl),
            ("burst_r", self.burst_r),
            ("nc", self.nc),
            ("nfor", self.nfor),
            ("ps", self.ps),
            ("pr", self.pr),
            ("a", self.a),
            ("s_t", self.s_t),
            ("m_t", self.m_t),
        ];
        if let Some((name, _)) = all.iter().find(|(_, v)| !v.is_finite()) {
            return Err((name, "a finite number"));
        }
        for (name, v) in [("t", self.t), ("tr", self.tr), ("ta", self.ta)] {
            if !(0.0..=10_000.0).contains(&v) {
                return Err((name, "a delay from 0 to 10000 ms"));
            }
        }
        let rules: [(&'static str, bool, &'static str); 7] = [
            ("qdu", (1.0..=14.0).contains(&self.qdu), "1 to 14"),
            ("ie", (0.0..=95.0).contains(&self.ie), "0 to 95"),
            ("bpl", (1.0..=40.0).contains(&self.bpl), "1 to 40"),
            ("ppl", (0.0..=100.0).contains(&self.ppl), "0 to 100 (%)"),
            ("burst_r", (1.0..=100.0).contains(&self.burst_r), "1 to 100"),
            ("s_t", (0.4..=3.0).contains(&self.s_t), "0.4 to 3"),
            ("m_t", (5.0..=1000.0).contains(&self.m_t), "5 to 1000 ms"),
        ];
        for (name, ok, allowed) in rules {
            if !ok {
                return Err((name, allowed));
            }
        }
        Ok(())
    }

    /// Evaluate the model (G.107 §7.1–7.6 and Annex B). The inputs are not
    /// checked; see [`EModel::check`].
    pub fn rate(&self) -> Rating {
        let p10 = |x: f64| 10f64.powf(x / 10.0);
        // §7.2 Basic signal-to-noise ratio.
        let olr = self.slr + self.rlr;
        let nos =
            self.ps - self.slr - self.ds - 100.0 + 0.004 * (self.ps - olr - self.ds - 14.0).powi(2);
        let pre = self.pr + 10.0 * lg(1.0 + p10(10.0 - self.lstr));
        let nor = self.rlr - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
        let nfo = self.nfor + self.rlr;
        let no = 10.0 * lg(p10(self.nc) + p10(nos) + p10(nor) + p10(nfo));
        let ro = 15.0 - 1.5 * (self.slr + no);
        // §7.3 Simultaneous impairment factor.
        let xolr = olr + 0.2 * (64.0 + no - self.rlr);
        let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
        let stmro = -10.0 * lg(p10(-self.stmr) + (-self.t / 4.0).exp() * p10(-self.telr));
        let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
            - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
            - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
            + 29.0;
        let q = 37.0 - 15.0 * lg(self.qdu);
        let g = 1.07 + 0.258 * q + 0.0602 * q * q;
        let z = 46.0 / 30.0 - g / 40.0;
        let y = (ro - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
        let iq = 15.0 * lg(1.0 + 10f64.powf(y) + 10f64.powf(z));
        let is = iolr + ist + iq;
        // §7.4 Delay impairment factor.
        let terv = self.telr - 40.0 * lg((1.0 + self.t / 10.0) / (1.0 + self.t / 150.0))
            + 6.0 * (-0.3 * self.t * self.t).exp();
        // With STMR < 9 dB the echo is masked less: TERVs = TERV + Ist/2.
        let terv = if self.stmr < 9.0 {
            terv + ist / 2.0
        } else {
            terv
        };
        let roe = -1.5 * (no - self.rlr);
        let re = 80.0 + 2.5 * (terv - 14.0);
        let idte = ((roe - re) / 2.0 + ((roe - re).powi(2) / 4.0 + 100.0).sqrt() - 1.0)
            * (1.0 - (-self.t).exp());
        // STMR > 20 dB: the talker hears the echo louder than the sidetone.
        let idte = if self.stmr > 20.0 {
            (idte * idte + ist * ist).sqrt()
        } else {
            idte
        };
        let rle = 10.5 * (self.wepl + 7.0) * (self.tr + 1.0).powf(-0.25);
        let idle = (ro - rle) / 2.0 + ((ro - rle).powi(2) / 4.0 + 169.0).sqrt();
        let idd = idd(self.ta, self.m_t, self.s_t);
        let id = idte + idle + idd;
        // §7.5 Effective equipment impairment factor.
        let ie_eff = ie_eff(self.ie, self.bpl, self.ppl, self.burst_r);
        let r = ro - is - id - ie_eff + self.a;
        Rating {
            ro,
            is,
            id,
            idd,
            ie_eff,
            r,
            mos: mos(r),
        }
    }
}

/// G.107 §7.4: the impairment of an absolute delay `ta` ms, 0 up to `m_t`
/// (100 ms by default), with delay sensitivity `s_t` (1 by default):
/// `X = lg(Ta/mT)/lg 2`, `Idd = 25 {(1 + X^(6 sT))^(1/(6 sT)) − 3 (1 +
/// (X/3)^(6 sT))^(1/(6 sT)) + 2}`.
pub fn idd(ta: f64, m_t: f64, s_t: f64) -> f64 {
    if ta <= m_t {
        return 0.0;
    }
    let x = lg(ta / m_t) / lg(2.0);
    let k = 6.0 * s_t;
    25.0 * ((1.0 + x.powf(k)).powf(1.0 / k) - 3.0 * (1.0 + (x / 3.0).powf(k)).powf(1.0 / k) + 2.0)
}

/// G.107 §7.5, eq. (7-29): `Ie,eff = Ie + (95 − Ie) · Ppl / (Ppl/BurstR + Bpl)`,
/// `ppl` in percent.
pub fn ie_eff(ie: f64, bpl: f64, ppl: f64, burst_r: f64) -> f64 {
    ie + (95.0 - ie) * ppl / (ppl / burst_r + bpl)
}

/// G.107 Annex B, eq. (B-4): the estimated MOS (conversational quality) of a
/// rating `r`: 1 below 0, 4.5 above 100, and between
/// `1 + 0.035 R + R (R − 60)(100 − R) · 7·10⁻⁶`.
pub fn mos(r: f64) -> f64 {
    if r < 0.0 {
        1.0
    } else if r > 100.0 {
        4.5
    } else {
        1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// G.107 §7.7: "Using the default values […] results in a rating of
    /// R = 93.2", the highest rating of a narrowband connection.
    #[test]
    fn the_defaults_rate_93_2() {
        let r = EModel::default().rate();
        assert!((r.r - 93.2).abs() < 0.05, "{r:?}");
        // Ro = 94.77 and Is = 1.41 as G.107's defaults give them (the
        // difference is Id = Idle = 0.15 with no delay).
        assert!((r.ro - 94.77).abs() < 0.01, "{r:?}");
        assert!((r.is - 1.41).abs() < 0.01, "{r:?}");
        assert!(r.idd == 0.0 && r.ie_eff == 0.0);
        // Annex B: R = 93.2 is MOS 4.41.
        assert!((r.mos - 4.41).abs() < 0.005, "{r:?}");
    }

    /// Idd by hand from §7.4's formula (sT = 1, mT = 100 ms): 0 up to 100 ms;
    /// Ta = 200 ms is X = 1: 25 (2^(1/6) − 3 (1 + 3⁻⁶)^(1/6) + 2) = 3.04;
    /// Ta = 400 ms is X = 2: 25 (65^(1/6) − 3 (1 + (2/3)⁶)^(1/6) + 2) = 24.08.
    #[test]
    fn idd_by_hand() {
        assert_eq!(idd(50.0, 100.0, 1.0), 0.0);
        assert_eq!(idd(100.0, 100.0, 1.0), 0.0);
        let x1 = 25.0 * (2f64.powf(1.0 / 6.0) - 3.0 * (1.0 + 3f64.powi(-6)).powf(1.0 / 6.0) + 2.0);
        assert!((idd(200.0, 100.0, 1.0) - x1).abs() < 1e-12);
        assert!((x1 - 3.04).abs() < 0.005, "{x1}");
        assert!((idd(400.0, 100.0, 1.0) - 24.08).abs() < 0.01);
        // Monotone in Ta.
        let mut last = 0.0;
        for ta in (100..2000).step_by(10) {
            let v = idd(f64::from(ta), 100.0, 1.0);
            assert!(v >= last);
            last = v;
        }
    }

    /// Ie,eff (§7.5) with G.113 Appendix I values: G.729A+VAD (Ie 11,
    /// Bpl 19) at 2 % random loss is 11 + 84·2/21 = 19; G.711 with PLC
    /// (Ie 0, Bpl 25.1) at 1 %: 95/26.1 = 3.64; no loss leaves Ie.
    #[test]
    fn ie_eff_by_hand() {
        assert!((ie_eff(11.0, 19.0, 2.0, 1.0) - 19.0).abs() < 1e-12);
        assert!((ie_eff(0.0, 25.1, 1.0, 1.0) - 95.0 / 26.1).abs() < 1e-12);
        assert_eq!(ie_eff(15.0, 16.1, 0.0, 1.0), 15.0);
        // Bursty loss impairs more than random loss at the same Ppl.
        assert!(ie_eff(0.0, 25.1, 5.0, 2.0) > ie_eff(0.0, 25.1, 5.0, 1.0));
        // Everything lost: Ie,eff = 95 with random loss.
        assert!((ie_eff(0.0, 4.3, 100.0, 1.0) - 95.0 * 100.0 / 104.3).abs() < 1e-12);
    }

    /// Annex B / G.109 Table 1: the R boundaries of the user-satisfaction
    /// categories and their MOS: 90 → 4.34, 70 → 3.60, 60 → 3.10,
    /// 50 → 2.58 (two decimals, so within 0.005); and the clamps.
    ///
    /// R = 80: the table as reproduced widely prints 4.03, but eq. (B-4)
    /// gives 1 + 2.8 + 80·20·20·7·10⁻⁶ = 4.024 exactly (which rounds to
    /// 4.02); a first version of this test held 80 → 4.03 to 0.005 and
    /// missed by 0.006. The formula is what G.107 specifies, so R = 80 is
    /// checked against the hand value 4.024 instead.
    #[test]
    fn mos_at_g109_category_bounds() {
        for (r, m) in [(90.0, 4.34), (70.0, 3.60), (60.0, 3.10), (50.0, 2.58)] {
            assert!((mos(r) - m).abs() < 0.005, "R {r}: {}", mos(r));
        }
        assert!((mos(80.0) - 4.024).abs() < 1e-12);
        assert_eq!(mos(-3.0), 1.0);
        assert_eq!(mos(120.0), 4.5);
        assert!((mos(0.0) - 1.0).abs() < 1e-12 && (mos(100.0) - 4.5).abs() < 1e-12);
    }

    /// Ie,eff at 2 % random loss from the codecs' G.113 Ie and Bpl, as the
    /// published codec tables list them (e.g. the ICAO ACP WG-I working
    /// paper's Table B-1, "Ie (2 % loss)"): G.711 with PLC 7, G.729A+VAD 19,
    /// G.723.1+VAD 24 (rounded to integers, so within 0.5).
    #[test]
    fn ie_eff_at_two_percent_matches_published_codec_tables() {
        use crate::media::Codec;
        for (c, want) in [
            (Codec::G711Plc, 7.0),
            (Codec::G729a, 19.0),
            (Codec::G7231, 24.0),
        ] {
            let got = ie_eff(c.ie(), c.bpl(), 2.0, 1.0);
            assert!((got - want).abs() < 0.5, "{c:?}: {got}");
        }
    }

    /// G.107 with T = Ta, Tr = 2 Ta (G.711, TELR 65 dB): no delay gives the
    /// default 93.2; R never rises with delay; up to mT = 100 ms only the
    /// echo terms act, so R loses less than Idd(200 ms) = 3.04 there; past
    /// it R falls at least by Idd.
    #[test]
    fn rating_falls_with_delay() {
        let at = |ta: f64| EModel::voip(ta, 0.0, 4.3, 0.0).rate();
        assert!((at(0.0).r - 93.2).abs() < 0.05);
        assert!(at(0.0).r - at(100.0).r < 3.04, "{:?}", at(100.0));
        for ta in [200.0, 400.0, 800.0] {
            assert!(at(0.0).r - at(ta).r >= idd(ta, 100.0, 1.0) - 1e-9);
        }
        let mut last = f64::INFINITY;
        for ta in (0..1000).step_by(25) {
            let r = at(f64::from(ta)).r;
            assert!(r <= last + 1e-9, "R rose at {ta} ms");
            last = r;
        }
    }

    /// The whole chain on the G.729A+VAD example: Ta 150 ms, 2 % random
    /// loss: R = R(delay only) − (Ie,eff = 19).
    #[test]
    fn equipment_impairment_subtracts() {
        let clean = EModel::voip(150.0, 0.0, 19.0, 0.0).rate();
        let lossy = EModel::voip(150.0, 11.0, 19.0, 2.0).rate();
        assert!((clean.r - lossy.r - 19.0).abs() < 1e-9);
    }

    #[test]
    fn check_names_the_bad_input() {
        let bad = EModel {
            ppl: 120.0,
            ..EModel::default()
        };
        assert_eq!(bad.check().unwrap_err().0, "ppl");
        let nan = EModel {
            ta: f64::NAN,
            ..EModel::default()
        };
        assert_eq!(nan.check().unwrap_err().0, "ta");
        assert!(EModel::default().check().is_ok());
    }
}

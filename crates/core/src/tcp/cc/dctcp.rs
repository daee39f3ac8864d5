//! DCTCP (RFC 8257): the sender estimates the fraction α of bytes that met
//! congestion (CE echoed) per window and cuts the window by α/2 once per
//! window, instead of halving. The receiver echoes CE exactly (see
//! `receiver.rs`, DCTCP mode). See docs/models/dctcp.md.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{reno_grow, CcModel, CongestionControl, NewRenoCc, Signal, Window};
use crate::config::{ConfigError, Result};
use crate::time::Time;

/// `cc = { kind = "dctcp", … }` (needs `[tcp] ecn = true` and an ECN-marking queue).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DctcpConfig {
    /// g, the weight of a window's marked fraction in α, in (0, 1]
    /// (RFC 8257 §4.2: 1/16; ns-3 `DctcpShiftG`). Default 0.0625.
    #[serde(default = "defaults::g")]
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub g: f64,
    /// α at the start, in [0, 1] (RFC 8257 §3.3: 1; ns-3 `DctcpAlphaOnInit`). Default 1.
    #[serde(default = "defaults::alpha_init")]
    #[schemars(range(min = 0, max = 1))]
    pub alpha_init: f64,
    /// The response to a loss (fast retransmit) and a timeout: "halve"
    /// (RFC 8257 §3.5, Linux: as standard TCP) or "alpha" (ns-3.44's
    /// `TcpDctcp::GetSsThresh`, ssthresh = cwnd·(1 − α/2) as for a mark).
    /// Default "halve" ("alpha" with `[tcp] profile = "ns3"`).
    #[serde(default)]
    pub loss: Option<DctcpLoss>,
    /// The receiver's ECN echo: "rfc8257" (RFC 8257 §3.2, Linux's
    /// `dctcp_ece_ack_update`: a CE change ACKs the segments held by delayed
    /// ACK at once, with the old state) or "ns3" (ns-3.44's
    /// `TcpDctcp::CeState0to1`/`CeState1to0`: that ACK acknowledges the
    /// sequence recorded before the previous segment, so an isolated mark is
    /// echoed on a duplicate ACK or on the segment before it — half the
    /// marks reach α). Default "rfc8257" ("ns3" with `[tcp] profile = "ns3"`).
    #[serde(default)]
    pub echo: Option<DctcpEcho>,
}

/// `cc.echo` of DCTCP: how the receiver echoes CE on its ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DctcpEcho {
    /// RFC 8257 §3.2 (Linux): ECE on the ACKs of the CE segments; when the
    /// CE state changes, the segments held by delayed ACK are acknowledged
    /// at once with the old state.
    #[default]
    Rfc8257,
    /// ns-3.44 (`src/internet/model/tcp-dctcp.cc`, `CeState0to1`,
    /// `CeState1to0`, called before the segment enters the receive buffer):
    /// on a CE change while a delayed ACK is reserved, an ACK (old state) of
    /// the `rcv_nxt` saved at the previous segment's arrival; the reservation
    /// is cleared only by an ACK the delayed-ACK count sends.
    Ns3,
}

/// `cc.loss` of DCTCP: how a loss or a timeout cuts the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DctcpLoss {
    /// As standard TCP (RFC 8257 §3.5; Linux `dctcp_ssthresh` is only
    /// called for ECN, `tcp_enter_loss`/`tcp_enter_recovery` halve through
    /// `dctcp_react_to_loss`): ssthresh = max(FlightSize/2, 2·MSS).
    #[default]
    Halve,
    /// ns-3.44 (`src/internet/model/tcp-dctcp.cc`, `GetSsThresh`, called by
    /// `EnterRecovery` and `ReTxTimeout` as by `EnterCwr`): ssthresh =
    /// max(cwnd·(1 − α/2), 2·MSS) — with α near 0 a loss barely cuts the
    /// window; after a timeout cwnd is one segment as usual.
    Alpha,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            loss: None,
            echo: None,
        }
    }
}

/// The defaults of [`DctcpConfig`] for keys not written.
mod defaults {
    pub fn g() -> f64 {
        super::DctcpConfig::default().g
    }
    pub fn alpha_init() -> f64 {
        super::DctcpConfig::default().alpha_init
    }
}

impl CcModel for DctcpConfig {
    fn validate(&self) -> Result<()> {
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(ConfigError::new(
                "g",
                self.g.to_string(),
                "is out of range; allowed: 0 < g ≤ 1",
            ));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(ConfigError::new(
                "alpha_init",
                self.alpha_init.to_string(),
                "is out of range; allowed: 0 to 1",
            ));
        }
        Ok(())
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(DctcpCc::new(*self))
    }

    fn needs_ecn(&self) -> bool {
        true
    }
}

/// DCTCP sender state (RFC 8257 §3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpCc {
    /// Growth by the bytes acknowledged (`[tcp] abc`).
    abc: bool,
    cfg: DctcpConfig,
    alpha: f64,
    /// Bytes acknowledged, and those with ECE, in the current observation window.
    bytes_acked: u64,
    bytes_marked: u64,
    /// The window ends when SND.UNA passes this (`DCTCP.WindowEnd`); `None` before the first ACK.
    window_end: Option<u64>,
    /// The latest cumulative ACK and SND.NXT, from [`CongestionControl::on_ack_numbers`].
    ack: u64,
    snd_max: u64,
}

impl DctcpCc {
    /// DCTCP with `cfg`, α = `alpha_init`.
    pub fn new(cfg: DctcpConfig) -> DctcpCc {
        DctcpCc {
            abc: false,
            alpha: cfg.alpha_init,
            cfg,
            bytes_acked: 0,
            bytes_marked: 0,
            window_end: None,
            ack: 0,
            snd_max: 0,
        }
    }

    /// The congestion estimate α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for DctcpCc {
    fn set_abc(&mut self, on: bool) {
        self.abc = on;
    }

    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack_numbers(&mut self, ack: u64, snd_max: u64) {
        self.ack = ack;
        self.snd_max = snd_max;
    }

    /// RFC 8257 §3.3 steps 1–4: count the bytes, and at the end of each
    /// observation window update α = (1 − g)·α + g·M.
    fn on_ecn_feedback(&mut self, acked: u64, ece: bool) {
        self.bytes_acked += acked;
        if ece {
            self.bytes_marked += acked;
        }
        let end = *self.window_end.get_or_insert(self.snd_max);
        if self.ack <= end {
            return;
        }
        let m = if self.bytes_acked > 0 {
            self.bytes_marked as f64 / self.bytes_acked as f64
        } else {
            0.0
        };
        self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * m;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
        self.window_end = Some(self.snd_max);
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: Option<Time>, now: Time) {
        let _ = (rtt, now);
        reno_grow(w, acked, self.abc);
    }

    fn on_congestion(&mut self, w: &mut Window, signal: Signal, flight: u64, now: Time) {
        let cut = ((w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * w.mss);
        match (signal, self.cfg.loss.unwrap_or_default()) {
            // §3.3: at most once per window (the sender's ECN rule), cwnd·(1 − α/2).
            (Signal::Ecn, _) => {
                w.cwnd = cut;
                w.ssthresh = w.cwnd;
            }
            // ns-3.44: the same cut for loss; a timeout restarts from one segment.
            (Signal::FastRetransmit, DctcpLoss::Alpha) => {
                w.ssthresh = cut;
                w.cwnd = cut;
            }
            (Signal::Timeout, DctcpLoss::Alpha) => {
                w.ssthresh = cut;
                w.cwnd = w.mss;
            }
            // §3.4: loss is answered as standard TCP does.
            (Signal::FastRetransmit | Signal::Timeout, DctcpLoss::Halve) => {
                NewRenoCc::default().on_congestion(w, signal, flight, now)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8257 §3.3 by hand, g = 1/16, α from 1: a window with no marks
    /// gives α = 15/16; then one with half its bytes marked gives
    /// 15/16·15/16 + 1/16·1/2 = 0.910156…; the ECN cut is cwnd·(1 − α/2).
    #[test]
    fn rfc8257_alpha_and_cut_by_hand() {
        let mut cc = DctcpCc::new(DctcpConfig::default());
        // Window 1: [0, 10 000) sent; ACKs up to 10 000 and one past the end.
        cc.on_ack_numbers(0, 10_000);
        cc.on_ecn_feedback(0, false); // sets the window end at 10 000
        for a in 1..=10 {
            cc.on_ack_numbers(a * 1000, 20_000);
            cc.on_ecn_feedback(1000, false);
        }
        assert_eq!(
            cc.alpha(),
            1.0,
            "the window ends when SND.UNA passes 10 000"
        );
        cc.on_ack_numbers(11_000, 20_000);
        cc.on_ecn_feedback(1000, false);
        assert_eq!(cc.alpha(), 15.0 / 16.0);
        // Window 2 up to 20 000: 10 ACKs, every other one marked.
        for a in 12..=21 {
            cc.on_ack_numbers(a * 1000, 30_000);
            cc.on_ecn_feedback(1000, a % 2 == 0);
        }
        let expect = 15.0 / 16.0 * 15.0 / 16.0 + 0.5 / 16.0;
        assert!((cc.alpha() - expect).abs() < 1e-12, "{}", cc.alpha());
        let mut w = Window {
            cwnd: 100_000,
            ssthresh: u64::MAX / 2,
            mss: 1000,
        };
        cc.on_congestion(&mut w, Signal::Ecn, 100_000, Time::ZERO);
        let cut = (100_000.0 * (1.0 - expect / 2.0)) as u64;
        assert_eq!((w.cwnd, w.ssthresh), (cut, cut));
    }

    /// Loss is standard TCP's response (halving by flight size).
    #[test]
    fn rfc8257_s3_4_loss_is_standard() {
        let mut cc = DctcpCc::new(DctcpConfig::default());
        let mut w = Window {
            cwnd: 20_000,
            ssthresh: u64::MAX / 2,
            mss: 1000,
        };
        cc.on_congestion(&mut w, Signal::FastRetransmit, 20_000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (10_000, 10_000));
    }

    /// ns-3.44's loss response (`loss = "alpha"`): a fast retransmit or a
    /// timeout sets ssthresh = cwnd·(1 − α/2), not half the flight; by hand
    /// with α = 0.1: 40 000 · 0.95 = 38 000.
    #[test]
    fn ns3_loss_response_cuts_by_alpha() {
        let cfg = DctcpConfig {
            alpha_init: 0.1,
            loss: Some(DctcpLoss::Alpha),
            ..DctcpConfig::default()
        };
        let mut cc = DctcpCc::new(cfg);
        let mut w = Window {
            cwnd: 40_000,
            ssthresh: u64::MAX / 2,
            mss: 1000,
        };
        cc.on_congestion(&mut w, Signal::FastRetransmit, 30_000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (38_000, 38_000));
        let mut w = Window {
            cwnd: 40_000,
            ssthresh: u64::MAX / 2,
            mss: 1000,
        };
        cc.on_congestion(&mut w, Signal::Timeout, 30_000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (1000, 38_000));
        // The default halves the flight (RFC 8257 §3.5) whatever α is.
        let mut cc = DctcpCc::new(DctcpConfig { loss: None, ..cfg });
        w.cwnd = 40_000;
        cc.on_congestion(&mut w, Signal::Timeout, 30_000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (1000, 15_000));
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let e = DctcpConfig {
            g: 0.0,
            ..DctcpConfig::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.path, "g");
        let e = DctcpConfig {
            alpha_init: 1.5,
            ..DctcpConfig::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.path, "alpha_init");
    }

    proptest::proptest! {
        /// α stays in [0, 1]; the ECN cut never goes below 2 MSS nor above cwnd.
        #[test]
        fn alpha_is_a_fraction(acks in proptest::collection::vec((1u64..5000, proptest::bool::ANY), 1..400)) {
            let mut cc = DctcpCc::new(DctcpConfig::default());
            let mut ack = 0;
            for (bytes, ece) in acks {
                ack += bytes;
                cc.on_ack_numbers(ack, ack + 10_000);
                cc.on_ecn_feedback(bytes, ece);
                proptest::prop_assert!((0.0..=1.0).contains(&cc.alpha()));
            }
            let mut w = Window { cwnd: 50_000, ssthresh: u64::MAX / 2, mss: 1000 };
            cc.on_congestion(&mut w, Signal::Ecn, 50_000, Time::ZERO);
            proptest::prop_assert!(w.cwnd >= 2000 && w.cwnd <= 50_000);
        }
    }
}

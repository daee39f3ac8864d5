//! Cross-layer adaptive ARQ persistence (seed 001 §III): the link layer
//! chooses its retransmission limit `M_t` so that its residual SDU loss is a
//! fraction α of the loss the TCP flow suffers elsewhere.
//!
//! With `P_TCP` the flow's end-to-end loss event rate (TFRC estimator,
//! [`crate::tcp::loss_events`]) and `P_LL` the link's residual SDU loss
//! ([`SduLossWindow`]), eq. (1) `1 − P_TCP = (1 − P_W)(1 − P_LL)` gives the
//! loss outside the link, `P_W = (P_TCP − P_LL)/(1 − P_LL)`, clamped to
//! [0, 1]. The target is `P̂_LL = α·P_W`, and `M_t` is the smallest limit
//! whose approximate residual loss `F̂(M_t)` (eq. (5), [`ArqModel`]) is at
//! most the target, for the Gilbert–Elliott channel of the link direction
//! and SDUs of `n_pdu` PDUs.
//!
//! Conventions where the paper is silent: `P_LL` is 0 until an SDU has
//! completed; a target of 0 (no loss outside the link, or `P_LL ≥ P_TCP`, or
//! α = 0) means unlimited persistence (no finite `M_t` reaches zero residual
//! loss); `P_LL = 1` gives `P_W = 0`, hence unlimited persistence too.
//! Before the first loss event `P_TCP` is undefined and the link keeps its
//! initial limit (unlimited for `max_dat = "adaptive"`).

use std::collections::VecDeque;

use crate::analytic::arq::{ArqModel, LIMIT_CAP};

/// The loss outside the link, `P_W`, from eq. (1), clamped to [0, 1].
pub fn wired_loss(p_tcp: f64, p_ll: f64) -> f64 {
    if p_ll >= 1.0 {
        return 0.0;
    }
    ((p_tcp - p_ll) / (1.0 - p_ll)).clamp(0.0, 1.0)
}

/// The target link loss `P̂_LL = α·P_W`.
pub fn target_loss(alpha: f64, p_tcp: f64, p_ll: f64) -> f64 {
    alpha * wired_loss(p_tcp, p_ll)
}

/// `M_t` for a target residual loss: the model's smallest limit `≥ 1` with
/// `F̂(M_t) ≤ target`; `None` (unlimited) for a target of 0 and for a target
/// the model cannot meet below [`LIMIT_CAP`] transmissions.
pub fn limit_for(model: &ArqModel, target: f64) -> Option<u32> {
    if target.is_nan() || target <= 0.0 {
        return None;
    }
    let m = model.limit_for_target(target).max(1);
    (m < LIMIT_CAP).then_some(m)
}

/// Moving average of the SDU loss frequency over the last `W` SDUs at an
/// ARQ transmitter (seed 001 §III-B, W = 100): an SDU counts as received
/// when its acknowledgement completes, as lost when discarded at the
/// retransmission limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SduLossWindow {
    window: usize,
    outcomes: VecDeque<bool>,
    lost: usize,
}

impl SduLossWindow {
    /// A window of `window` SDUs (at least 1).
    pub fn new(window: u32) -> Self {
        let window = window.max(1) as usize;
        SduLossWindow {
            window,
            outcomes: VecDeque::with_capacity(window),
            lost: 0,
        }
    }

    /// Record the fate of one SDU.
    pub fn push(&mut self, lost: bool) {
        if self.outcomes.len() == self.window && self.outcomes.pop_front() == Some(true) {
            self.lost -= 1;
        }
        self.outcomes.push_back(lost);
        self.lost += usize::from(lost);
    }

    /// Lost SDUs / SDUs in the window (`None` before the first SDU).
    pub fn estimate(&self) -> Option<f64> {
        if self.outcomes.is_empty() {
            None
        } else {
            Some(self.lost as f64 / self.outcomes.len() as f64)
        }
    }

    /// SDUs in the window.
    pub fn len(&self) -> usize {
        self.outcomes.len()
    }

    /// Whether no SDU has completed yet.
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// The window length `W`.
    pub fn window(&self) -> usize {
        self.window
    }
}

/// Gilbert–Elliott parameters of a link direction's channel, in the
/// analytic model's terms (`p_G`, `p_B`, `g`, `b`; one step per TTI).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeParams {
    /// Unit error probability in GOOD.
    pub p_good: f64,
    /// Unit error probability in BAD.
    pub p_bad: f64,
    /// Probability of staying GOOD.
    pub g: f64,
    /// Probability of staying BAD.
    pub b: f64,
}

/// The controller of one link direction: α, the channel, and the model
/// cached for the current SDU length in PDUs.
#[derive(Clone, Debug)]
pub struct AdaptiveArq {
    alpha: f64,
    ge: GeParams,
    model: Option<(u32, ArqModel)>,
    p_tcp: Option<f64>,
    target: Option<f64>,
}

impl AdaptiveArq {
    /// A controller with weight `alpha` (in [0, 1]) for channel `ge`.
    pub fn new(alpha: f64, ge: GeParams) -> Self {
        AdaptiveArq {
            alpha,
            ge,
            model: None,
            p_tcp: None,
            target: None,
        }
    }

    /// A new `P_TCP`; returns the limit to apply (`None`: unlimited) for the
    /// link's current `P_LL` (`None` = no SDU completed yet, taken as 0) and
    /// SDUs of `n_pdu` PDUs. `Err` if the model refuses the parameters.
    pub fn update(
        &mut self,
        p_tcp: f64,
        p_ll: Option<f64>,
        n_pdu: u32,
    ) -> Result<Option<u32>, String> {
        let n_pdu = n_pdu.max(1);
        if self.model.as_ref().is_none_or(|(n, _)| *n != n_pdu) {
            let GeParams {
                p_good,
                p_bad,
                g,
                b,
            } = self.ge;
            self.model = Some((n_pdu, ArqModel::new(p_good, p_bad, g, b, n_pdu)?));
        }
        let target = target_loss(self.alpha, p_tcp, p_ll.unwrap_or(0.0));
        self.p_tcp = Some(p_tcp);
        self.target = Some(target);
        let (_, model) = self.model.as_ref().expect("built above");
        Ok(limit_for(model, target))
    }

    /// The weight α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The last `P_TCP` received.
    pub fn p_tcp(&self) -> Option<f64> {
        self.p_tcp
    }

    /// The last target `P̂_LL`.
    pub fn target(&self) -> Option<f64> {
        self.target
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equation_one_hand_computed() {
        // 1 − 0.05 = (1 − P_W)(1 − 0.01) → P_W = 0.04/0.99.
        assert!((wired_loss(0.05, 0.01) - 0.04 / 0.99).abs() < 1e-15);
        assert_eq!(wired_loss(0.05, 0.0), 0.05);
        // P_LL above P_TCP: no loss is left for the wired part.
        assert_eq!(wired_loss(0.01, 0.02), 0.0);
        assert_eq!(wired_loss(0.3, 1.0), 0.0);
        assert!((target_loss(0.1, 0.05, 0.01) - 0.1 * 0.04 / 0.99).abs() < 1e-15);
        assert_eq!(target_loss(0.0, 0.05, 0.01), 0.0);
    }

    /// The paper's channel (p_G = 0.01, p_B = 0.9, g = b = 0.9), 1000-byte
    /// packets in 40-byte PDUs (n_pdu = 25). By hand (eq. (5)):
    /// π_G = π_B = 0.5, F(1) = 1 − 0.5·0.99²⁵ − 0.5·0.1²⁵ = 0.611089,
    /// λ₁ = (0.819 + √(0.819² − 4·0.9·0.01·0.8))/2 = 0.810112.
    fn paper_channel() -> GeParams {
        GeParams {
            p_good: 0.01,
            p_bad: 0.9,
            g: 0.9,
            b: 0.9,
        }
    }

    #[test]
    fn controller_hand_stepped() {
        let mut c = AdaptiveArq::new(0.1, paper_channel());
        // P_TCP = 0.05, P_LL = 0.01: P_W = 0.04/0.99, target 0.0040404;
        // F̂(24) = 0.0048155 > target ≥ F̂(25) = 0.0039011 → M_t = 25.
        assert_eq!(c.update(0.05, Some(0.01), 25), Ok(Some(25)));
        assert!((c.target().unwrap() - 0.1 * 0.04 / 0.99).abs() < 1e-15);
        assert_eq!(c.p_tcp(), Some(0.05));
        // No SDU completed yet: P_LL = 0, target 0.001 → F̂(32) = 0.000893.
        assert_eq!(c.update(0.01, None, 25), Ok(Some(32)));
        // P_LL ≥ P_TCP: target 0 → unlimited.
        assert_eq!(c.update(0.01, Some(0.02), 25), Ok(None));
        let mut c = AdaptiveArq::new(1.0, paper_channel());
        // α = 1, P_W = 0.05: F̂(12) = 0.06027 > 0.05 ≥ F̂(13) = 0.04883.
        assert_eq!(c.update(0.05, Some(0.0), 25), Ok(Some(13)));
        let mut c = AdaptiveArq::new(0.5, paper_channel());
        // Target 0.5·0.015/0.995 = 0.0075377: F̂(22) = 0.0073376.
        assert_eq!(c.update(0.02, Some(0.005), 25), Ok(Some(22)));
        // α = 0: unlimited whatever the losses.
        let mut c = AdaptiveArq::new(0.0, paper_channel());
        assert_eq!(c.update(0.3, Some(0.0), 25), Ok(None));
        // Low burstiness b = 0.1: λ₁ = 0.099, F(1) = 0.29996; target 0.005 → 3.
        let mut c = AdaptiveArq::new(
            0.1,
            GeParams {
                b: 0.1,
                ..paper_channel()
            },
        );
        assert_eq!(c.update(0.05, None, 25), Ok(Some(3)));
    }

    #[test]
    fn controller_matches_the_model_inversion() {
        let ge = paper_channel();
        let model = ArqModel::new(ge.p_good, ge.p_bad, ge.g, ge.b, 26).unwrap();
        let mut c = AdaptiveArq::new(0.3, ge);
        for (p_tcp, p_ll) in [(0.1, 0.02), (0.03, 0.0), (0.2, 0.1)] {
            let t = 0.3 * (p_tcp - p_ll) / (1.0 - p_ll);
            let m = c.update(p_tcp, Some(p_ll), 26).unwrap().unwrap();
            assert_eq!(m, model.limit_for_target(t));
            assert!(model.residual_loss_approx(m) <= t);
            assert!(m == 1 || model.residual_loss_approx(m - 1) > t);
        }
    }

    #[test]
    fn sdu_window_is_a_moving_average() {
        let mut w = SduLossWindow::new(4);
        assert_eq!(w.estimate(), None);
        w.push(true);
        assert_eq!(w.estimate(), Some(1.0));
        w.push(false);
        w.push(false);
        w.push(false);
        assert_eq!(w.estimate(), Some(0.25));
        w.push(false); // the loss slides out
        assert_eq!(w.estimate(), Some(0.0));
        assert_eq!(w.len(), 4);
        assert_eq!(SduLossWindow::new(0).window(), 1);
    }

    proptest! {
        /// P_W is a probability, and (1 − P_W)(1 − P_LL) = 1 − P_TCP
        /// whenever P_LL ≤ P_TCP < 1 (no clamping).
        #[test]
        fn wired_loss_inverts_equation_one(p_tcp in 0.0f64..1.0, p_ll in 0.0f64..1.0) {
            let w = wired_loss(p_tcp, p_ll);
            prop_assert!((0.0..=1.0).contains(&w));
            if p_ll <= p_tcp {
                prop_assert!(((1.0 - w) * (1.0 - p_ll) - (1.0 - p_tcp)).abs() < 1e-12);
            } else {
                prop_assert_eq!(w, 0.0);
            }
        }

        /// The window estimate equals the loss count over the last W fates.
        #[test]
        fn sdu_window_matches_a_recount(
            fates in proptest::collection::vec(any::<bool>(), 0..300),
            window in 1u32..120,
        ) {
            let mut w = SduLossWindow::new(window);
            for &f in &fates {
                w.push(f);
            }
            let tail = &fates[fates.len().saturating_sub(window as usize)..];
            let want = if tail.is_empty() {
                None
            } else {
                Some(tail.iter().filter(|&&f| f).count() as f64 / tail.len() as f64)
            };
            prop_assert_eq!(w.estimate(), want);
        }
    }
}

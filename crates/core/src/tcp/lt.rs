//! LT-TCP building blocks (Tickoo et al., seed paper 002, §2): the per-window
//! erasure-rate estimator of eqs. (1)–(2), the erasure-bin tables of
//! `P = f(E)` and `R = g(E)`, and the adaptive-MSS / FEC block plan.
//!
//! The sender and receiver use these pure pieces; see `docs/models/lt-tcp.md`.

use crate::config::{check_range, ConfigError, Result};

/// One erasure bin: estimates `E < upto` (and at least the previous bin's
/// `upto`) select `packets`. The last bin has `upto = 1` and also takes `E = 1`.
/// Written `[upto, packets]`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize)]
pub struct Bin {
    /// Upper bound of the bin (exclusive, except 1.0 for the last bin).
    pub upto: f64,
    /// Repair packets (per window for proactive FEC, per duplicate ACK for reactive FEC).
    pub packets: u16,
}

/// Which end of a TCP connection makes an estimate: LT-TCP's erasure rate
/// here, seed 001's loss-event rate in `net` (the cross-layer feed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EstimatorSide {
    /// The receiver, from the segments it sees (for LT-TCP echoed to the
    /// sender in ACKs).
    Receiver,
    /// The sender, from ACK/SACK information (and its retransmissions).
    #[default]
    Sender,
}

/// How many reactive repairs a block may get (`reactive_limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReactiveLimit {
    /// The paper's rule (§2: "for every dupack, the sender transmits R
    /// reactive FEC packets"): `g(E)` repairs per duplicate ACK while the
    /// block's code has repairs left (`block_max`).
    #[default]
    Inventory,
    /// linklab's cap: no more repairs for a block in all (proactive
    /// included) than its known holes / (1 − E).
    Deficit,
}

/// LT-TCP switches and parameters. With every switch off the sender is plain TCP.
#[derive(Clone, Debug, PartialEq)]
pub struct LtConfig {
    /// Congestion response to ECN marks only, not to loss (timeouts still reduce).
    pub ecn_only: bool,
    /// Adaptive MSS: at least `g_min_segments` segments per window within [`mss_min`, `mss_max`].
    pub adaptive_mss: bool,
    /// Proactive FEC (PHASE 1): `P = f(E)` repair packets per window.
    pub proactive_fec: bool,
    /// Reactive FEC (PHASE 2): `R = g(E)` repair packets per duplicate ACK.
    pub reactive_fec: bool,
    /// Where the erasure estimate is made.
    pub estimator: EstimatorSide,
    /// G: minimum segments per window (adaptive MSS).
    pub g_min_segments: u32,
    /// Smallest segment payload (adaptive MSS), bytes.
    pub mss_min: u32,
    /// Largest segment payload (adaptive MSS), bytes; the TCP `mss` when not given.
    pub mss_max: u32,
    /// `f(E)`: minimum proactive repair packets per window, by erasure bin.
    pub proactive_bins: Vec<Bin>,
    /// `g(E)`: reactive repair packets per duplicate ACK, by erasure bin.
    pub reactive_bins: Vec<Bin>,
    /// Longest code (n of the shortened RS code): data, proactive and reactive
    /// repairs of one block together, at most 255.
    pub block_max: u16,
    /// E before the first window, in [0, 1) (the paper does not give it).
    pub initial_estimate: f64,
    /// How many reactive repairs a block may get.
    pub reactive_limit: ReactiveLimit,
    /// Reactive repairs wait for room in the window and occupy it (true), or
    /// go out at the duplicate ACK on top of the window, as in the paper's
    /// implementation (false: its §4 lists "ensure that reactive FEC packets
    /// also honor the TCP window" as work to do).
    pub reactive_in_window: bool,
}

impl Default for LtConfig {
    fn default() -> Self {
        let bins = |v: &[(f64, u16)]| {
            v.iter()
                .map(|&(upto, packets)| Bin { upto, packets })
                .collect()
        };
        LtConfig {
            ecn_only: false,
            adaptive_mss: false,
            proactive_fec: false,
            reactive_fec: false,
            estimator: EstimatorSide::Sender,
            g_min_segments: 10,
            mss_min: 100,
            mss_max: 1460,
            proactive_bins: bins(&[
                (0.001, 0),
                (0.05, 1),
                (0.10, 3),
                (0.15, 4),
                (0.20, 5),
                (0.30, 7),
                (0.40, 9),
                (1.0, 11),
            ]),
            reactive_bins: bins(&[(0.001, 0), (0.30, 1), (1.0, 2)]),
            block_max: 255,
            initial_estimate: 0.0,
            reactive_limit: ReactiveLimit::Inventory,
            reactive_in_window: false,
        }
    }
}

impl LtConfig {
    /// Whether any building block that needs FEC blocks (adaptive MSS, FEC) is on.
    pub fn blocks(&self) -> bool {
        self.adaptive_mss || self.proactive_fec || self.reactive_fec
    }

    /// Whether any switch is on.
    pub fn any(&self) -> bool {
        self.ecn_only || self.blocks()
    }

    /// Check the parameters; the error's path is relative to `[tcp.lt]`.
    pub fn validate(&self) -> Result<()> {
        self.validate_ranges()?;
        if self.mss_min > self.mss_max {
            return Err(ConfigError::new(
                "mss_min",
                self.mss_min.to_string(),
                format!(
                    "is above mss_max ({}); need mss_min <= mss_max",
                    self.mss_max
                ),
            ));
        }
        Ok(())
    }

    /// Check each parameter on its own (also when LT-TCP is off, so that a
    /// value out of range is never silently kept).
    pub fn validate_ranges(&self) -> Result<()> {
        check_range("g_min_segments", self.g_min_segments, 1, 254)?;
        check_range("mss_min", self.mss_min, 1, MSS_MAX)?;
        check_range("mss_max", self.mss_max, 1, MSS_MAX)?;
        if let Err(m) = crate::fec::RsCode::new(i64::from(self.block_max), 1) {
            return Err(ConfigError::new(
                "block_max",
                self.block_max.to_string(),
                format!("packets: {m}"),
            ));
        }
        if !(0.0..1.0).contains(&self.initial_estimate) {
            return Err(ConfigError::new(
                "initial_estimate",
                self.initial_estimate.to_string(),
                "0 <= initial_estimate < 1",
            ));
        }
        check_bins("proactive_bins", &self.proactive_bins)?;
        check_bins("reactive_bins", &self.reactive_bins)
    }
}

/// The largest segment payload (an IPv4 packet of 65535 bytes less 40 header bytes).
pub const MSS_MAX: u32 = 65_495;

fn check_bins(key: &str, bins: &[Bin]) -> Result<()> {
    let mut prev = 0.0;
    for (i, b) in bins.iter().enumerate() {
        let at = format!("{key}[{i}]");
        if !(b.upto > prev && b.upto <= 1.0) {
            return Err(ConfigError::new(
                at,
                format!("[{}, {}]", b.upto, b.packets),
                format!(
                    "has upper bound {}; it must be above the previous ({prev}) and at most 1: \
                     bins are [[upto, packets], ...] in increasing order covering [0, 1]",
                    b.upto
                ),
            ));
        }
        if b.packets > 253 {
            return Err(ConfigError::new(
                at,
                format!("[{}, {}]", b.upto, b.packets),
                format!("has {} packets; allowed: 0 to 253", b.packets),
            ));
        }
        prev = b.upto;
    }
    if prev != 1.0 {
        return Err(ConfigError::at_key(
            key,
            format!("the bins end at {prev}; they must cover [0, 1] (the last upper bound is 1)"),
        ));
    }
    Ok(())
}

crate::config::units::schema_impl!(
    Bin,
    "Bin",
    serde_json::json!({
        "type": "array",
        "prefixItems": [
            { "type": "number", "exclusiveMinimum": 0, "maximum": 1 },
            { "type": "integer", "minimum": 0, "maximum": 253 },
        ],
        "minItems": 2,
        "maxItems": 2,
        "description": "[upto, packets]: estimates below upto (0 < upto ≤ 1) select packets (0 to 253)",
    })
);

/// The packets of the bin that `e` falls in (0 for an empty table).
pub fn lookup(bins: &[Bin], e: f64) -> u16 {
    bins.iter()
        .find(|b| e < b.upto)
        .or(bins.last())
        .map_or(0, |b| b.packets)
}

/// The adaptive-weight EWMA of eqs. (1)–(2):
/// `E ← α·new + β·E` with `α = new / (new + E)`, `β = E / (new + E)`,
/// i.e. `E ← (new² + E²) / (new + E)`; unchanged when both are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErasureEstimator {
    e: f64,
    windows: u64,
}

impl ErasureEstimator {
    /// An estimator that starts at `e` (clamped to [0, 1]) before any window.
    pub fn starting_at(e: f64) -> Self {
        ErasureEstimator {
            e: e.clamp(0.0, 1.0),
            windows: 0,
        }
    }

    /// Fold in the erasure fraction `new_l` ∈ [0, 1] of one window; returns the new E.
    pub fn update(&mut self, new_l: f64) -> f64 {
        let new_l = new_l.clamp(0.0, 1.0);
        let sum = new_l + self.e;
        if sum > 0.0 {
            let alpha = new_l / sum;
            let beta = self.e / sum;
            self.e = alpha * new_l + beta * self.e;
        }
        self.windows += 1;
        self.e
    }

    /// Current estimate E.
    pub fn value(&self) -> f64 {
        self.e
    }

    /// Windows folded in so far.
    pub fn windows(&self) -> u64 {
        self.windows
    }
}

/// Shape of the next FEC block (= one window of data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockPlan {
    /// Segment payload of the block's data and repair packets.
    pub mss: u32,
    /// Data segments.
    pub k: u16,
    /// Proactive repair packets.
    pub p: u16,
}

/// Plan the block sent from window `cwnd` (bytes) at erasure estimate `e`.
///
/// * `P₀ = f(E)` if proactive FEC is on, else 0;
/// * adaptive MSS: `MSS = clamp(⌊cwnd / (G + P₀)⌋, MSS_min, MSS_max)` so that
///   the window holds at least G data segments plus the repair packets (when
///   the bounds allow), else the fixed `mss`;
/// * `N = max(1, ⌊cwnd / MSS⌋)` packets fit in the window;
/// * `P = min(max(P₀, ⌈E·N⌉), N − 1)`: at least the expected erasures of the
///   window, and repairs honour the window (at least one data segment);
/// * `k = N − P`, capped so that `k + max(P, 1) ≤ block_max ≤ 255` (shortened RS over GF(2⁸)).
pub fn plan_block(cfg: &LtConfig, fixed_mss: u32, cwnd: u64, e: f64) -> BlockPlan {
    let p0 = if cfg.proactive_fec {
        lookup(&cfg.proactive_bins, e)
    } else {
        0
    };
    let mss = if cfg.adaptive_mss {
        let per = cwnd / u64::from(cfg.g_min_segments + u32::from(p0)).max(1);
        per.clamp(u64::from(cfg.mss_min), u64::from(cfg.mss_max)) as u32
    } else {
        fixed_mss.max(1)
    };
    let n_max = cfg.block_max.clamp(2, 255);
    let n = (cwnd / u64::from(mss)).clamp(1, u64::from(n_max)) as u16;
    let mut p = 0;
    if cfg.proactive_fec {
        let expected = (e * f64::from(n)).ceil() as u16;
        p = p0.max(expected).min(n - 1);
    }
    let k = (n - p).clamp(1, n_max - p.max(1));
    BlockPlan { mss, k, p }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimator_follows_eqs_1_and_2() {
        let mut est = ErasureEstimator::default();
        // E = 0: the first sample is taken whole (α = 1).
        assert_eq!(est.update(0.2), 0.2);
        // new = 0.1, E = 0.2: α = 1/3, β = 2/3 → 0.1/3 + 0.4/3 = 1/6.
        assert!((est.update(0.1) - 1.0 / 6.0).abs() < 1e-12);
        // A spike pulls hard: new = 0.5, E = 1/6 → (0.25 + 1/36) / (2/3) = 5/12.
        assert!((est.update(0.5) - 5.0 / 12.0).abs() < 1e-12);
        // ...and decays slowly: new = 0 → α = 0, E unchanged (bias after a spike).
        assert!((est.update(0.0) - 5.0 / 12.0).abs() < 1e-12);
        // Both zero: stays zero (no 0/0).
        let mut z = ErasureEstimator::default();
        assert_eq!(z.update(0.0), 0.0);
        assert_eq!(z.windows(), 1);
        // A start at E0 = 0.3 (initial_estimate): a window without erasures keeps
        // it, and the first sample is weighed against it, not taken whole.
        let mut s = ErasureEstimator::starting_at(0.3);
        assert_eq!((s.value(), s.windows()), (0.3, 0));
        assert_eq!(s.update(0.0), 0.3);
        // new = 0.1, E = 0.3: (0.01 + 0.09) / 0.4 = 0.25.
        assert!((s.update(0.1) - 0.25).abs() < 1e-12);
        let mut c = LtConfig::default();
        for bad in [1.0, -0.1, f64::NAN] {
            c.initial_estimate = bad;
            assert_eq!(c.validate().unwrap_err().path, "initial_estimate");
        }
        c.initial_estimate = 0.5;
        assert!(c.validate().is_ok());
    }

    #[test]
    fn bins_lookup_and_validation() {
        let c = LtConfig::default();
        assert_eq!(lookup(&c.proactive_bins, 0.0), 0);
        assert_eq!(lookup(&c.proactive_bins, 0.10), 4);
        assert_eq!(lookup(&c.proactive_bins, 1.0), 11);
        assert!(c.validate().is_ok());
        let mut bad = c.clone();
        bad.proactive_bins.pop();
        assert!(bad
            .validate()
            .unwrap_err()
            .path
            .starts_with("proactive_bins"));
        let mut bad = c.clone();
        bad.reactive_bins[1].upto = 0.0001;
        assert!(bad
            .validate()
            .unwrap_err()
            .path
            .starts_with("reactive_bins"));
        let mut bad = c.clone();
        bad.mss_min = 2000;
        assert!(bad.validate().unwrap_err().path.starts_with("mss_min"));
        let mut bad = c.clone();
        bad.block_max = 256;
        assert!(bad.validate().unwrap_err().path.starts_with("block_max"));
        let mut bad = c;
        bad.g_min_segments = 0;
        assert!(bad
            .validate()
            .unwrap_err()
            .path
            .starts_with("g_min_segments"));
    }

    #[test]
    fn plan_keeps_g_segments_within_bounds() {
        let c = LtConfig {
            adaptive_mss: true,
            mss_min: 100,
            mss_max: 1000,
            g_min_segments: 8,
            ..LtConfig::default()
        };
        // Large window: MSS at its maximum, more than G segments.
        assert_eq!(
            plan_block(&c, 1000, 40_000, 0.0),
            BlockPlan {
                mss: 1000,
                k: 40,
                p: 0
            }
        );
        // Medium window: MSS shrinks so that G segments fit.
        let b = plan_block(&c, 1000, 4_000, 0.0);
        assert_eq!((b.mss, b.k), (500, 8));
        // Tiny window: MSS at its minimum, fewer than G segments.
        let b = plan_block(&c, 1000, 500, 0.0);
        assert_eq!((b.mss, b.k), (100, 5));
        // With proactive FEC: G data segments plus f(E) repairs.
        let f = LtConfig {
            proactive_fec: true,
            ..c
        };
        let b = plan_block(&f, 1000, 6_000, 0.12);
        assert_eq!(b.p, 4);
        assert_eq!(b.mss, 500);
        assert_eq!(b.k, 8);
        // Repairs honour the window: at least one data segment.
        let b = plan_block(&f, 1000, 100, 0.5);
        assert_eq!((b.k, b.p), (1, 0));
        // n <= 255.
        let b = plan_block(&f, 1000, 10_000_000, 0.5);
        assert!(u32::from(b.k) + u32::from(b.p) <= 255, "{b:?}");
    }
}

//! Erasure-code rules shared by every FEC model (link-level FEC and hybrid
//! FEC/ARQ in [`crate::link`], and LT-TCP's end-to-end FEC).
//!
//! The codes are shortened Reed–Solomon codes over GF(2⁸): a block of `n`
//! symbols (fragments, packets) carries `k` data symbols and `n − k` repair
//! symbols, with `1 ≤ k < n ≤ 255`. RS codes are maximum-distance separable,
//! so a block is decodable **iff at least `k` of its `n` symbols arrive**,
//! whichever they are. The simulators never compute the code: they count
//! arrivals and apply [`decodable`]. `tests/rs_any_k_of_n.rs` encodes and
//! decodes real bytes with the `reed-solomon-erasure` crate (GF(2⁸)) for random
//! erasure patterns to show that the rule holds for the code used.
//!
//! Also here, once: the conversion from a packet erasure rate to the erasure
//! rate of a smaller unit ([`unit_erasure`]), the residual loss of a block
//! ([`block_failure`]), and the "matched" redundancy rule ([`matched_repair`]).
//! The derivations are in `docs/models/ll-fec.md`.
//!
//! Reuse (LT-TCP): validate a user's `(n, k)` with [`RsCode::new`] (it gives
//! the one-line message for the scenario error), then decide each block with
//! [`RsCode::decodable`] from the count of distinct symbols received.

/// Largest block length of a (shortened) Reed–Solomon code over GF(2⁸).
pub const RS_MAX_N: u32 = 255;

/// A validated shortened Reed–Solomon code over GF(2⁸): `1 ≤ k < n ≤ 255`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RsCode {
    n: u32,
    k: u32,
}

impl RsCode {
    /// The code with block length `n` and `k` data symbols.
    ///
    /// # Errors
    /// A one-line message naming `n` or `k`, the value and the allowed range
    /// when `n > 255`, `k < 1` or `k ≥ n`.
    pub fn new(n: i64, k: i64) -> Result<RsCode, String> {
        if !(2..=i64::from(RS_MAX_N)).contains(&n) {
            return Err(format!(
                "n = {n} is not a shortened Reed-Solomon block length over GF(2^8); allowed: 2 ≤ n ≤ {RS_MAX_N}"
            ));
        }
        if k < 1 || k >= n {
            return Err(format!(
                "k = {k} data symbols with n = {n}; allowed: 1 ≤ k < n (at least one repair symbol)"
            ));
        }
        Ok(RsCode {
            n: n as u32,
            k: k as u32,
        })
    }

    /// Block length (data + repair symbols).
    pub fn n(self) -> u32 {
        self.n
    }

    /// Data symbols per block.
    pub fn k(self) -> u32 {
        self.k
    }

    /// Repair symbols per block, `n − k`.
    pub fn repair(self) -> u32 {
        self.n - self.k
    }

    /// Whether a block of which `received` distinct symbols arrived decodes.
    pub fn decodable(self, received: u32) -> bool {
        decodable(received, self.k)
    }
}

/// The MDS rule: a block with `k` data symbols decodes iff at least `k`
/// distinct symbols (data or repair, any mix) arrived.
#[inline]
pub fn decodable(received: u32, k: u32) -> bool {
    received >= k
}

/// Erasure probability of a unit of `unit_bytes` bytes on a channel that
/// erases a packet of `packet_bytes` bytes with probability `per`, assuming
/// independent bit errors: the bit error rate `b` solves
/// `1 − per = (1 − b)^(8·packet_bytes)`, so a unit of `s` bytes survives with
/// `(1 − b)^(8·s) = (1 − per)^(s / packet_bytes)`:
///
/// `q = 1 − (1 − per)^(unit_bytes / packet_bytes)`.
///
/// `per` in [0, 1]; `packet_bytes > 0`. `per = 1` gives `q = 1` for any
/// non-empty unit.
pub fn unit_erasure(per: f64, packet_bytes: u32, unit_bytes: u32) -> f64 {
    debug_assert!((0.0..=1.0).contains(&per) && packet_bytes > 0);
    if unit_bytes == 0 {
        return 0.0;
    }
    1.0 - (1.0 - per).powf(f64::from(unit_bytes) / f64::from(packet_bytes))
}

/// Probability that a block of `n` symbols with `k` data symbols does not
/// decode when each symbol is erased independently with probability `q`:
/// `P[received < k] = Σ_{j=0}^{k−1} C(n, j) (1−q)^j q^(n−j)`.
pub fn block_failure(n: u32, k: u32, q: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    if k > n {
        return 1.0;
    }
    // Sum the binomial terms in log space (n ≤ 255 keeps this exact enough).
    let (lq, lp) = (q.ln(), (1.0 - q).ln());
    let mut ln_c = 0.0; // ln C(n, j)
    let mut sum = 0.0;
    for j in 0..k {
        if j > 0 {
            ln_c += f64::from(n - j + 1).ln() - f64::from(j).ln();
        }
        let t = ln_c + f64::from(j) * lp + f64::from(n - j) * lq;
        let term = if (q == 0.0 && j < n) || (q == 1.0 && j > 0) {
            0.0
        } else if q == 1.0 && j == 0 {
            1.0
        } else {
            t.exp()
        };
        sum += term;
    }
    sum.clamp(0.0, 1.0)
}

/// The "matched" redundancy for `k` data symbols erased independently with
/// probability `q`: the smallest number of repair symbols `r ≥ 0` that covers
/// the expected number of erased symbols of the block, `r ≥ (k + r)·q`, i.e.
/// `r = ⌈k·q / (1 − q)⌉` (the FEC rate `r/n` matches the erasure rate `q`,
/// the link-level FEC of Barakat & Altman 2002 tuned to the average channel).
/// `None` if `q ≥ 1` (no finite redundancy covers it).
pub fn matched_repair(k: u32, q: f64) -> Option<u32> {
    if !(0.0..1.0).contains(&q) {
        return None;
    }
    let exact = f64::from(k) * q / (1.0 - q);
    // Absorb floating-point noise so that e.g. k = 9, q = 0.1 gives exactly 1.
    let r = (exact - 1e-9).ceil().max(0.0);
    if r > f64::from(u32::MAX) {
        return None;
    }
    Some(r as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rs_code_limits() {
        assert_eq!(
            RsCode::new(10, 9).map(|c| (c.n(), c.k(), c.repair())),
            Ok((10, 9, 1))
        );
        assert!(RsCode::new(255, 1).is_ok());
        for (n, k, needle) in [
            (256, 10, "n = 256"),
            (0, 0, "n = 0"),
            (1, 1, "n = 1"),
            (10, 10, "k = 10"),
            (10, 11, "k = 11"),
            (10, 0, "k = 0"),
            (10, -3, "k = -3"),
        ] {
            let e = RsCode::new(n, k).unwrap_err();
            assert!(e.contains(needle) && e.contains("allowed"), "{e}");
        }
    }

    #[test]
    fn decodable_is_any_k_of_n() {
        let c = RsCode::new(10, 9).unwrap();
        assert!(!c.decodable(8));
        assert!(c.decodable(9));
        assert!(c.decodable(10));
    }

    #[test]
    fn unit_erasure_conversion() {
        // A whole packet keeps its rate; half a packet survives with sqrt(1 - per).
        assert!((unit_erasure(0.1, 500, 500) - 0.1).abs() < 1e-15);
        assert!((unit_erasure(0.19, 500, 250) - 0.1).abs() < 1e-12);
        assert_eq!(unit_erasure(0.0, 500, 56), 0.0);
        assert_eq!(unit_erasure(1.0, 500, 56), 1.0);
        // k fragments of size S/k, all needed: the packet rate comes back.
        let q = unit_erasure(0.3, 500, 50);
        assert!((1.0 - (1.0 - q).powi(10) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn block_failure_known_values() {
        // (10, 9) at q = 0.1: 1 − 0.9^10 − 10·0.1·0.9^9.
        let want = 1.0 - 0.9f64.powi(10) - 0.9f64.powi(9);
        assert!((block_failure(10, 9, 0.1) - want).abs() < 1e-12);
        assert_eq!(block_failure(10, 9, 0.0), 0.0);
        assert_eq!(block_failure(10, 9, 1.0), 1.0);
        // Uncoded: all k needed.
        assert!((block_failure(5, 5, 0.2) - (1.0 - 0.8f64.powi(5))).abs() < 1e-12);
    }

    #[test]
    fn matched_repair_values() {
        assert_eq!(matched_repair(9, 0.0), Some(0));
        assert_eq!(matched_repair(9, 0.1), Some(1));
        assert_eq!(matched_repair(9, 0.2), Some(3));
        assert_eq!(matched_repair(9, 0.5), Some(9));
        assert_eq!(matched_repair(9, 1.0), None);
        assert_eq!(matched_repair(9, f64::NAN), None);
    }

    proptest! {
        #[test]
        fn matched_repair_is_smallest_cover(k in 1u32..200, q in 0.0f64..0.95) {
            let r = matched_repair(k, q).unwrap();
            let covers = |r: u32| f64::from(r) + 1e-9 >= f64::from(k + r) * q - 1e-9;
            prop_assert!(covers(r));
            prop_assert!(r == 0 || !covers(r - 1) || (f64::from(r - 1) - f64::from(k + r - 1) * q).abs() < 1e-6);
        }

        #[test]
        fn block_failure_monotone_in_q(n in 2u32..60, kf in 0.05f64..1.0, q1 in 0.0f64..1.0, q2 in 0.0f64..1.0) {
            let k = ((f64::from(n) * kf) as u32).clamp(1, n);
            let (lo, hi) = if q1 <= q2 { (q1, q2) } else { (q2, q1) };
            prop_assert!(block_failure(n, k, lo) <= block_failure(n, k, hi) + 1e-12);
        }
    }
}

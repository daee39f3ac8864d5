//! Sums of sinusoids on a regular grid by a second-order recurrence (issue 38).
//!
//! Both fading generators (the slotted [`super::Rayleigh`] channel and the
//! frame link's [`super::fading::FadingChannel`]) are, at slot k, a fixed
//! linear combination of cosines `cos θ_j(k)` with θ_j(k) = 2π(ν_j·k + φ_j)
//! (ν_j in cycles per slot): each output (real, imaginary) is Σ_j c_j·cos θ_j(k).
//! Instead of a libm cosine per term and slot, the bank keeps cos θ_j at two
//! consecutive slots and steps by the Chebyshev recurrence
//! cos θ(k + 1) = 2 cos(2πν)·cos θ(k) − cos θ(k − 1): one multiply and one
//! subtraction per term and slot (the complex rotation it replaces took four
//! multiplies and two additions, and the cosine 95–135 instructions).
//!
//! Every [`ANCHOR_EVERY`] slots (k ≡ 0 mod `ANCHOR_EVERY`) the state is set
//! from the exact phase (`sin_cos` of the expression [`super::rayleigh::Sos`]
//! takes the cosine of), so the rounding error of the recurrence stays
//! bounded, and slot k's value is always the anchor of its block stepped
//! k mod `ANCHOR_EVERY` times: it depends on k alone, not on which slots
//! were visited before (a jump re-anchors and steps forward within its block).
//!
//! **Error bound.** A rounding error δ made at step i reaches step n
//! multiplied by the Chebyshev polynomial U_{n−i−1}(cos w) = sin((n−i)w)/sin w,
//! at most n − i in magnitude whatever the frequency, so after n steps a term
//! is off by at most about n²·δ: with δ ≈ 3.3·10⁻¹⁶ (the rounding of the
//! product, of the difference and of 2 cos w itself) that is 1.4·10⁻¹² at
//! n = 63 and 5.4·10⁻¹² at n = 127, against coefficients whose absolute sum
//! is about 20 for the 12-tap channel (384 terms): |Δh| ≤ 1.1·10⁻¹⁰ in the
//! worst case, far less with random signs (measured: `docs/models/frame-arq.md`).
//!
//! The sums run over four lanes (the loops vectorise); the order is fixed,
//! so the values are the same on every run and platform (IEEE multiply and
//! add, no FMA contraction in Rust), and only the anchors call libm. Where
//! the processor has AVX the loops take the four lanes in one register (the
//! same operations lane by lane, so the same bits), and a bank whose blocks
//! each weigh on one output only (a fading channel without a frequency
//! rotation) skips the other output's additions of exact zeros, which change
//! no bit (see [`SosBank::new`]).

use std::f64::consts::PI;

/// Slots between two exact evaluations ("anchors"): slot k's value is the
/// exact one at k₀ = k − (k mod `ANCHOR_EVERY`) stepped k − k₀ times.
pub const ANCHOR_EVERY: u64 = 128;

/// Lanes of the sums (the term arrays are padded to a multiple).
const LANES: usize = 4;

/// `x.fract()` without a call: `x − trunc(x)`, the cast (signed like `x`) truncating exactly
/// where |x| < 2⁵² (beyond, every double is whole and the fraction is 0).
#[inline]
pub(crate) fn fract(x: f64) -> f64 {
    if x.abs() < 4.5e15 {
        x - ((x as i64) as f64).copysign(x)
    } else {
        x.fract()
    }
}

/// The cosine phase of a term at slot `t` (as a float): the expression the
/// exact evaluation ([`super::rayleigh::Sos::gain_at`]) takes the cosine of.
#[inline]
pub(crate) fn phase_at(nu: f64, phase: f64, t: f64) -> f64 {
    2.0 * PI * (fract(nu * t) + phase)
}

/// Two lanes of doubles: an SSE2 register on x86-64 (baseline there, so
/// always available), a pair elsewhere. Each operation is the IEEE operation
/// on each lane, so both forms give the same bits.
#[cfg(target_arch = "x86_64")]
mod v2 {
    use std::arch::x86_64::{
        __m128d, _mm_add_pd, _mm_cvtsd_f64, _mm_mul_pd, _mm_set_pd, _mm_setzero_pd, _mm_sub_pd,
        _mm_unpackhi_pd,
    };

    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub(super) struct V2(__m128d);

    impl V2 {
        #[inline(always)]
        pub(super) fn new(lo: f64, hi: f64) -> V2 {
            // SAFETY (every block here): SSE2 is part of the x86-64 baseline.
            unsafe { V2(_mm_set_pd(hi, lo)) }
        }
        #[inline(always)]
        pub(super) fn zero() -> V2 {
            unsafe { V2(_mm_setzero_pd()) }
        }
        #[inline(always)]
        pub(super) fn get(self) -> [f64; 2] {
            unsafe {
                let hi = _mm_unpackhi_pd(self.0, self.0);
                [_mm_cvtsd_f64(self.0), _mm_cvtsd_f64(hi)]
            }
        }
        #[inline(always)]
        pub(super) fn mul(self, o: V2) -> V2 {
            unsafe { V2(_mm_mul_pd(self.0, o.0)) }
        }
        #[inline(always)]
        pub(super) fn add(self, o: V2) -> V2 {
            unsafe { V2(_mm_add_pd(self.0, o.0)) }
        }
        #[inline(always)]
        pub(super) fn sub(self, o: V2) -> V2 {
            unsafe { V2(_mm_sub_pd(self.0, o.0)) }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod v2 {
    #[derive(Clone, Copy, Debug)]
    pub(super) struct V2([f64; 2]);

    impl V2 {
        #[inline(always)]
        pub(super) fn new(lo: f64, hi: f64) -> V2 {
            V2([lo, hi])
        }
        #[inline(always)]
        pub(super) fn zero() -> V2 {
            V2([0.0; 2])
        }
        #[inline(always)]
        pub(super) fn get(self) -> [f64; 2] {
            self.0
        }
        #[inline(always)]
        pub(super) fn mul(self, o: V2) -> V2 {
            V2([self.0[0] * o.0[0], self.0[1] * o.0[1]])
        }
        #[inline(always)]
        pub(super) fn add(self, o: V2) -> V2 {
            V2([self.0[0] + o.0[0], self.0[1] + o.0[1]])
        }
        #[inline(always)]
        pub(super) fn sub(self, o: V2) -> V2 {
            V2([self.0[0] - o.0[0], self.0[1] - o.0[1]])
        }
    }
}

use v2::V2;

/// Four terms' recurrence state and weights, together in memory (one
/// pointer walks the loop), as two pairs of lanes: lanes 0–1, then 2–3
/// (so each `[V2; 2]` is the four lanes in order, as the AVX loops load them).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Block {
    /// cos θ at two consecutive slots: `c[par]` the current, `c[1 − par]`
    /// the one before (see [`SosBank::par`]).
    c: [[V2; 2]; 2],
    /// 2 cos(2πν), the recurrence's factor.
    two_cos: [V2; 2],
    /// Weights on the real and the imaginary output.
    cr: [V2; 2],
    ci: [V2; 2],
}

/// Four values as two pairs of lanes.
fn pairs(x: [f64; LANES]) -> [V2; 2] {
    [V2::new(x[0], x[1]), V2::new(x[2], x[3])]
}

/// Two pairs of lanes as four values.
fn unpair(x: [V2; 2]) -> [f64; LANES] {
    let ([a, b], [c, d]) = (x[0].get(), x[1].get());
    [a, b, c, d]
}

/// A bank of sinusoids and their two output combinations (see the module).
#[derive(Clone, Debug)]
pub(crate) struct SosBank {
    /// ν_j (cycles per slot) and φ_j (cycles), for the anchors.
    nu: Vec<f64>,
    phase: Vec<f64>,
    /// cos and sin of 2πν_j: the anchor's second value cos(θ − 2πν).
    cos_w: Vec<f64>,
    sin_w: Vec<f64>,
    blocks: Vec<Block>,
    /// Which of a block's two cosine rows is the current slot's.
    par: usize,
    /// The slot the current row holds; `None` before the first anchor.
    at: Option<u64>,
    /// `Some(n)`: blocks `..n` weigh on the real output only and the rest on
    /// the imaginary one only (see [`SosBank::new`]); `None`: every block on both.
    re_only: Option<usize>,
    /// The four-lane (AVX) loops may run on this processor.
    avx: bool,
}

impl SosBank {
    /// A bank of `terms`, each (ν cycles per slot, φ cycles, coefficient on
    /// the real output, coefficient on the imaginary output).
    pub(crate) fn new(terms: impl IntoIterator<Item = (f64, f64, f64, f64)>) -> SosBank {
        let mut terms: Vec<(f64, f64, f64, f64)> = terms.into_iter().collect();
        // Padding: a constant term (ν = 0) with no weight.
        while terms.is_empty() || !terms.len().is_multiple_of(LANES) {
            terms.push((0.0, 0.0, 0.0, 0.0));
        }
        let mut b = SosBank {
            nu: Vec::new(),
            phase: Vec::new(),
            cos_w: Vec::new(),
            sin_w: Vec::new(),
            blocks: Vec::new(),
            par: 0,
            at: None,
            re_only: None,
            avx: avx(),
        };
        // A block whose four terms weigh on one output only (all of its weights
        // on the other are ±0: the taps of a channel without a frequency
        // rotation) adds exact zeros to the other output's lanes; a lane sum
        // starts at +0 and is never −0 (x + y rounds an exact zero to +0), so
        // such additions leave every sum's bits as they are and are skipped:
        // the blocks are kept real-only first, then imaginary-only, each part
        // in its original order (each sum sees its terms in the same order).
        let chunks: Vec<&[(f64, f64, f64, f64)]> = terms.chunks_exact(LANES).collect();
        let zero = |c: &[(f64, f64, f64, f64)], re: bool| {
            c.iter().all(|t| if re { t.2 == 0.0 } else { t.3 == 0.0 })
        };
        let order: Vec<&[(f64, f64, f64, f64)]> =
            if chunks.iter().all(|c| zero(c, true) || zero(c, false)) {
                let (re, im): (Vec<_>, Vec<_>) = chunks.iter().partition(|c| zero(c, false));
                b.re_only = Some(re.len());
                re.into_iter().chain(im).collect()
            } else {
                chunks
            };
        for chunk in order {
            let (mut two_cos, mut cr, mut ci) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
            for (l, &(nu, phase, r, i)) in chunk.iter().enumerate() {
                let (s, c) = (2.0 * PI * nu).sin_cos();
                b.nu.push(nu);
                b.phase.push(phase);
                b.cos_w.push(c);
                b.sin_w.push(s);
                (two_cos[l], cr[l], ci[l]) = (2.0 * c, r, i);
            }
            b.blocks.push(Block {
                c: [[V2::zero(); 2]; 2],
                two_cos: pairs(two_cos),
                cr: pairs(cr),
                ci: pairs(ci),
            });
        }
        b
    }

    /// The outputs (real, imaginary) at slot `k`.
    pub(crate) fn at(&mut self, k: u64) -> (f64, f64) {
        let at = match self.at {
            Some(at) if at <= k && at / ANCHOR_EVERY == k / ANCHOR_EVERY => at,
            _ => {
                let k0 = k - k % ANCHOR_EVERY;
                self.anchor(k0);
                k0
            }
        };
        if at == k {
            return self.sum();
        }
        for _ in at + 1..k {
            self.step();
        }
        self.at = Some(k);
        self.step_sum()
    }

    /// The state at slot `k` from the exact phase.
    fn anchor(&mut self, k: u64) {
        let t = k as f64;
        self.par = 0;
        for (i, blk) in self.blocks.iter_mut().enumerate() {
            let (mut now, mut before) = ([0.0; LANES], [0.0; LANES]);
            for l in 0..LANES {
                let j = i * LANES + l;
                let (s, c) = phase_at(self.nu[j], self.phase[j], t).sin_cos();
                now[l] = c;
                // cos(θ − w) = cos θ cos w + sin θ sin w.
                before[l] = c * self.cos_w[j] + s * self.sin_w[j];
            }
            blk.c = [pairs(now), pairs(before)];
        }
        self.at = Some(k);
    }

    /// One slot on, without the sums.
    fn step(&mut self) {
        let (cur, prev) = (self.par, 1 - self.par);
        #[cfg(target_arch = "x86_64")]
        if self.avx {
            // SAFETY: the processor has AVX (checked when the bank was made).
            unsafe { v4::step(&mut self.blocks, cur) };
            self.par = prev;
            return;
        }
        for b in &mut self.blocks {
            for h in 0..2 {
                b.c[prev][h] = b.two_cos[h].mul(b.c[cur][h]).sub(b.c[prev][h]);
            }
        }
        self.par = prev;
    }

    /// One slot on, and the sums at the new slot; lane l accumulates the
    /// same terms in the same order as [`SosBank::sum`] and
    /// [`SosBank::exact`].
    fn step_sum(&mut self) -> (f64, f64) {
        let (cur, prev) = (self.par, 1 - self.par);
        if let Some(n) = self.re_only {
            self.par = prev;
            let (re, im) = self.blocks.split_at_mut(n);
            #[cfg(target_arch = "x86_64")]
            if self.avx {
                // SAFETY: the processor has AVX (checked when the bank was made).
                return unsafe { (v4::step_sum(re, cur, true), v4::step_sum(im, cur, false)) };
            }
            return (step_sum_one(re, cur, true), step_sum_one(im, cur, false));
        }
        let (mut re, mut im) = ([V2::zero(); 2], [V2::zero(); 2]);
        for b in &mut self.blocks {
            for h in 0..2 {
                let next = b.two_cos[h].mul(b.c[cur][h]).sub(b.c[prev][h]);
                b.c[prev][h] = next;
                re[h] = re[h].add(b.cr[h].mul(next));
                im[h] = im[h].add(b.ci[h].mul(next));
            }
        }
        self.par = prev;
        (lanes(unpair(re)), lanes(unpair(im)))
    }

    /// The sums at the current slot.
    fn sum(&self) -> (f64, f64) {
        if let Some(n) = self.re_only {
            let (re, im) = self.blocks.split_at(n);
            return (sum_one(re, self.par, true), sum_one(im, self.par, false));
        }
        let (mut re, mut im) = ([V2::zero(); 2], [V2::zero(); 2]);
        for b in &self.blocks {
            for h in 0..2 {
                re[h] = re[h].add(b.cr[h].mul(b.c[self.par][h]));
                im[h] = im[h].add(b.ci[h].mul(b.c[self.par][h]));
            }
        }
        (lanes(unpair(re)), lanes(unpair(im)))
    }

    /// The outputs at slot `k` from a cosine per term, summed lane by lane
    /// as the recurrence sums them (an anchor slot is bit-identical to it).
    #[cfg(test)]
    pub(crate) fn exact(&self, k: u64) -> (f64, f64) {
        let t = k as f64;
        let (mut re, mut im) = ([0.0; LANES], [0.0; LANES]);
        for (i, b) in self.blocks.iter().enumerate() {
            let (cr, ci) = (unpair(b.cr), unpair(b.ci));
            for l in 0..LANES {
                let j = i * LANES + l;
                let c = phase_at(self.nu[j], self.phase[j], t).cos();
                re[l] += cr[l] * c;
                im[l] += ci[l] * c;
            }
        }
        (lanes(re), lanes(im))
    }

    /// The absolute sum of the weights (tests: the error bound).
    #[cfg(test)]
    fn weight(&self) -> f64 {
        self.blocks
            .iter()
            .flat_map(|b| unpair(b.cr).into_iter().chain(unpair(b.ci)))
            .map(f64::abs)
            .sum()
    }
}

/// Whether the four-lane loops may run here (AVX, detected at run time).
fn avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// One slot on for `blocks` that weigh on one output only (the real one
/// when `re`), and that output's sum at the new slot.
fn step_sum_one(blocks: &mut [Block], cur: usize, re: bool) -> f64 {
    let prev = 1 - cur;
    let mut acc = [V2::zero(); 2];
    for b in blocks {
        let w = if re { b.cr } else { b.ci };
        for h in 0..2 {
            let next = b.two_cos[h].mul(b.c[cur][h]).sub(b.c[prev][h]);
            b.c[prev][h] = next;
            acc[h] = acc[h].add(w[h].mul(next));
        }
    }
    lanes(unpair(acc))
}

/// The sum of `blocks` (weighing on one output only) at row `par`.
fn sum_one(blocks: &[Block], par: usize, re: bool) -> f64 {
    let mut acc = [V2::zero(); 2];
    for b in blocks {
        let w = if re { b.cr } else { b.ci };
        for h in 0..2 {
            acc[h] = acc[h].add(w[h].mul(b.c[par][h]));
        }
    }
    lanes(unpair(acc))
}

/// The loops on four lanes at once (AVX): each operation is the same IEEE
/// operation on each lane as the pairs' (no FMA), so the bits are the same.
#[cfg(target_arch = "x86_64")]
mod v4 {
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_load_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_store_pd,
        _mm256_storeu_pd, _mm256_sub_pd,
    };

    use super::{lanes, Block};

    /// Lanes 0–3 of a `[V2; 2]` (32-byte aligned in a `Block`).
    macro_rules! at {
        ($x:expr) => {
            $x.as_ptr().cast::<f64>()
        };
    }

    /// [`super::SosBank::step`] on four lanes.
    ///
    /// # Safety
    /// The processor must have AVX.
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn step(blocks: &mut [Block], cur: usize) {
        let prev = 1 - cur;
        for b in blocks {
            let next = _mm256_sub_pd(
                _mm256_mul_pd(
                    _mm256_load_pd(at!(b.two_cos)),
                    _mm256_load_pd(at!(b.c[cur])),
                ),
                _mm256_load_pd(at!(b.c[prev])),
            );
            _mm256_store_pd(b.c[prev].as_mut_ptr().cast::<f64>(), next);
        }
    }

    /// [`super::step_sum_one`] on four lanes.
    ///
    /// # Safety
    /// The processor must have AVX.
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn step_sum(blocks: &mut [Block], cur: usize, re: bool) -> f64 {
        let prev = 1 - cur;
        let mut acc = _mm256_setzero_pd();
        for b in blocks {
            let next = _mm256_sub_pd(
                _mm256_mul_pd(
                    _mm256_load_pd(at!(b.two_cos)),
                    _mm256_load_pd(at!(b.c[cur])),
                ),
                _mm256_load_pd(at!(b.c[prev])),
            );
            _mm256_store_pd(b.c[prev].as_mut_ptr().cast::<f64>(), next);
            let w = if re { at!(b.cr) } else { at!(b.ci) };
            acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_load_pd(w), next));
        }
        let mut out = [0.0; 4];
        _mm256_storeu_pd(out.as_mut_ptr(), acc);
        lanes(out)
    }
}

/// The lanes' total, in a fixed order.
#[inline]
fn lanes(x: [f64; LANES]) -> f64 {
    (x[0] + x[1]) + (x[2] + x[3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn bank(n: usize, fd_t: f64, seed: u64) -> SosBank {
        let mut rng = Rng::stream(seed, "bank");
        SosBank::new((0..n).map(|_| {
            let nu = fd_t * (2.0 * rng.uniform() - 1.0);
            let phase = rng.uniform();
            (nu, phase, rng.normal(), rng.normal())
        }))
    }

    #[test]
    fn fract_is_std_fract() {
        for x in [
            0.0,
            -0.0,
            0.25,
            -0.25,
            1.5,
            -1.5,
            1e15 + 0.5,
            -1e15 - 0.5,
            4.6e15,
            1e300,
            123.456,
        ] {
            assert_eq!(fract(x).to_bits(), x.fract().to_bits(), "{x}");
        }
        let mut rng = Rng::stream(3, "fract");
        for _ in 0..100_000 {
            let x = (rng.uniform() - 0.5) * 10f64.powi((rng.uniform() * 18.0) as i32);
            assert_eq!(fract(x).to_bits(), x.fract().to_bits(), "{x}");
        }
    }

    #[test]
    fn recurrence_within_its_bound() {
        // Bound fixed beforehand (module doc): ≤ n²·3.3e-16 per unit term
        // after n ≤ 127 steps, times the coefficients' absolute sum.
        for (n, fd_t) in [(32, 0.01), (384, 0.124), (384, 0.5)] {
            let mut b = bank(n, fd_t, 5);
            let weight = b.weight();
            let steps = (ANCHOR_EVERY - 1) as f64;
            let bound = steps * steps * 3.3e-16 * weight;
            let mut worst: f64 = 0.0;
            for k in 0..20 * ANCHOR_EVERY {
                let ((a, b2), (c, d)) = (b.at(k), b.exact(k));
                worst = worst.max((a - c).abs()).max((b2 - d).abs());
            }
            assert!(worst < bound, "{n} terms: {worst:e} vs {bound:e}");
        }
    }

    #[test]
    fn one_sided_blocks_and_four_lanes_keep_the_bits() {
        // Terms laid out as the fading channel's without a rotation: blocks of
        // four on the real output only, then on the imaginary one (weights
        // ±0 on the other), and a mixed bank that keeps the general loop.
        let mut rng = Rng::stream(11, "sided");
        let terms: Vec<(f64, f64, f64, f64)> = (0..96)
            .map(|j| {
                let (nu, phase, w) = (
                    0.01 * (2.0 * rng.uniform() - 1.0),
                    rng.uniform(),
                    rng.normal(),
                );
                if (j / 16) % 2 == 0 {
                    (nu, phase, w, if j % 3 == 0 { -0.0 } else { 0.0 })
                } else {
                    (nu, phase, -0.0 * w, w)
                }
            })
            .collect();
        let fast = SosBank::new(terms.iter().copied());
        assert_eq!(fast.re_only, Some(12));
        // The partitioned bank on four lanes (where the processor has AVX),
        // on pairs, and the general loop over the partitioned blocks.
        let mut variants = vec![fast.clone(), fast.clone(), fast];
        variants[1].avx = false;
        (variants[2].re_only, variants[2].avx) = (None, false);
        // The reference: the general loop over the blocks in their original
        // order (one term weighing on both outputs defeats the partition;
        // it adds 1e-300 times a cosine, which moves no bit of these sums).
        let mut mixed = terms;
        mixed.push((0.0, 0.0, 1e-300, 1e-300));
        let mut reference = SosBank::new(mixed);
        assert_eq!(reference.re_only, None);
        let mut k = 0;
        for gap in [0u64, 1, 1, 1, 5, 1, 130, 1, 1, 2, 300, 1, 1, 1, 127, 1] {
            k += gap;
            let (a, b) = reference.at(k);
            for v in &mut variants {
                let (c, d) = v.at(k);
                assert_eq!(
                    (c.to_bits(), d.to_bits()),
                    (a.to_bits(), b.to_bits()),
                    "slot {k}"
                );
            }
        }
    }

    #[test]
    fn anchors_are_exact_and_slots_independent_of_visits() {
        let mut all = bank(40, 0.05, 9);
        let mut some = bank(40, 0.05, 9);
        let every: Vec<(f64, f64)> = (0..5 * ANCHOR_EVERY).map(|k| all.at(k)).collect();
        for k in (0..5 * ANCHOR_EVERY).step_by(ANCHOR_EVERY as usize) {
            assert_eq!(every[k as usize], all.exact(k), "anchor {k}");
        }
        let mut k = 0;
        for gap in [1u64, 3, 1, 70, 2, 200, 1, 1, 63, 64, 65, 5, 1, 0, 2] {
            k += gap;
            assert_eq!(some.at(k), every[k as usize], "slot {k}");
        }
    }
}

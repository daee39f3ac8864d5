//! Log-linear histogram of `u64` nanosecond values (HDR-histogram style).
//!
//! Values below 1024 ns have a bucket each (exact). Above, every power-of-two
//! range `[2^k, 2^(k+1))`, k = 10..=63, is split into 128 equal sub-buckets of
//! width `2^(k−7)`, so a bucket is at most 1/128 (0.78 %) of any value in it
//! wide. Quantiles return the bucket midpoint (clamped to `[min, max]`), within
//! 1/256 (0.39 %) of every value in the bucket; `min`, `max` and `mean` are
//! exact. Counters are kept only for the span of buckets between the smallest
//! and the largest value seen (a flow whose delays lie within one factor of 8
//! holds about 400 counters, 1.6 KiB, instead of all 7936), so a network of
//! 100,000 flows keeps one histogram per flow cheaply; recording allocates only
//! when a value falls outside the span so far. Counters are 32-bit; a bucket
//! that passes 2^32 − 1 values keeps its multiples of 2^32 in a side list
//! (empty in every run short of four billion packets a flow), so counts stay
//! exact.

/// Values below this have their own bucket.
const EXACT: u64 = 1024;
/// log2 of [`EXACT`].
const EXACT_BITS: u32 = 10;
/// log2 of the sub-buckets per power-of-two range.
const SUB_BITS: u32 = 7;
/// Sub-buckets per power-of-two range.
const SUB: usize = 1 << SUB_BITS;
/// Total buckets: the exact ones plus 128 for each of k = 10..=63.
const BUCKETS: usize = EXACT as usize + (64 - EXACT_BITS as usize) * SUB;

/// Bucket index of `v`.
#[inline]
fn index(v: u64) -> usize {
    if v < EXACT {
        v as usize
    } else {
        let k = 63 - v.leading_zeros();
        let sub = ((v >> (k - SUB_BITS)) as usize) & (SUB - 1);
        EXACT as usize + (k - EXACT_BITS) as usize * SUB + sub
    }
}

/// Lowest value of bucket `i` and its width.
#[inline]
fn bucket_range(i: usize) -> (u64, u64) {
    if i < EXACT as usize {
        (i as u64, 1)
    } else {
        let j = i - EXACT as usize;
        let k = (j / SUB) as u32 + EXACT_BITS;
        let sub = (j % SUB) as u64;
        let shift = k - SUB_BITS;
        (((SUB as u64) + sub) << shift, 1u64 << shift)
    }
}

/// Buckets added beyond the one needed when the span of counters grows.
const SLACK: usize = 16;

/// A histogram of nanosecond values with bounded relative error.
#[derive(Clone, Debug)]
pub struct Histogram {
    /// Bucket index of `counts[0]`.
    base: usize,
    /// Counts of buckets `base .. base + counts.len()` (empty before the first
    /// value), modulo 2^32.
    counts: Vec<u32>,
    /// The multiples of 2^32 of buckets whose count passed `u32::MAX`: (bucket
    /// index, count − its 32-bit counter).
    carry: Vec<(usize, u64)>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    /// Largest relative distance between a value and the quantile reported
    /// for it (half a bucket: 1/256).
    pub const RELATIVE_ERROR: f64 = 1.0 / 256.0;

    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram {
            base: 0,
            counts: Vec::new(),
            carry: Vec::new(),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Record one value.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let i = index(ns);
        if i.wrapping_sub(self.base) >= self.counts.len() {
            self.cover(i, i);
        }
        let c = &mut self.counts[i - self.base];
        match c.checked_add(1) {
            Some(v) => *c = v,
            None => {
                *c = 0;
                self.add_carry(i, 1 << 32);
            }
        }
        self.count += 1;
        self.sum += u128::from(ns);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Add `high` (a multiple of 2^32) to bucket `i`'s side count.
    #[cold]
    fn add_carry(&mut self, i: usize, high: u64) {
        match self.carry.iter_mut().find(|(b, _)| *b == i) {
            Some((_, h)) => *h += high,
            None => self.carry.push((i, high)),
        }
    }

    /// Count of bucket `base + j`.
    #[inline]
    fn bucket(&self, j: usize) -> u64 {
        let low = u64::from(self.counts[j]);
        if self.carry.is_empty() {
            low
        } else {
            let i = self.base + j;
            low + self
                .carry
                .iter()
                .filter(|(b, _)| *b == i)
                .map(|(_, h)| h)
                .sum::<u64>()
        }
    }

    /// Add `n` to bucket `i` (within the span).
    fn add(&mut self, i: usize, n: u64) {
        let c = &mut self.counts[i - self.base];
        let s = u64::from(*c) + (n & u64::from(u32::MAX));
        *c = s as u32;
        let high = (n >> 32 << 32) + (s >> 32 << 32);
        if high > 0 {
            self.add_carry(i, high);
        }
    }

    /// Widen the span of counters to include buckets `lo ..= hi`.
    fn cover(&mut self, lo: usize, hi: usize) {
        let end = self.base + self.counts.len();
        if self.counts.is_empty() {
            self.base = lo;
            self.counts.resize((hi + 1).min(BUCKETS) - lo, 0);
            return;
        }
        if hi >= end {
            let new_end = (hi + 1 + SLACK).min(BUCKETS);
            self.counts.resize(new_end - self.base, 0);
        }
        if lo < self.base {
            let new_base = lo.saturating_sub(SLACK);
            let mut counts = vec![0u32; self.base - new_base + self.counts.len()];
            counts[self.base - new_base..].copy_from_slice(&self.counts);
            self.counts = counts;
            self.base = new_base;
        }
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Exact mean of the values (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Largest value recorded (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Smallest value recorded (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// The `q`-quantile (nearest rank: the value of rank `⌈q·n⌉`, at least 1),
    /// `q` clamped to [0, 1]. Exact for the extremes and below 1024 ns,
    /// otherwise the midpoint of the bucket holding that value, clamped to
    /// `[min, max]` (relative error ≤ [`Histogram::RELATIVE_ERROR`]). 0 when
    /// empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank == 1 {
            return self.min;
        }
        if rank == self.count {
            return self.max;
        }
        let mut seen = 0u64;
        for j in 0..self.counts.len() {
            seen += self.bucket(j);
            if seen >= rank {
                let (lo, w) = bucket_range(self.base + j);
                let mid = lo + w / 2;
                return mid.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Add every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        let (lo, hi) = (other.base, other.base + other.counts.len() - 1);
        self.cover(lo, hi);
        for j in 0..other.counts.len() {
            let n = other.bucket(j);
            if n > 0 {
                self.add(lo + j, n);
            }
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Forget every value (keeps the storage).
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.carry.clear();
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }
}

impl PartialEq for Histogram {
    /// Equal when they hold the same values (the spans of counters may differ).
    fn eq(&self, other: &Histogram) -> bool {
        let nonzero = |h: &Histogram| {
            (0..h.counts.len())
                .map(|j| (h.base + j, h.bucket(j)))
                .filter(|&(_, c)| c > 0)
                .collect::<Vec<_>>()
        };
        (self.count, self.sum, self.min, self.max) == (other.count, other.sum, other.min, other.max)
            && nonzero(self) == nonzero(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use proptest::prelude::*;

    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let n = sorted.len() as u64;
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        sorted[(rank - 1) as usize]
    }

    #[test]
    fn buckets_tile_the_range() {
        assert_eq!(index(0), 0);
        assert_eq!(index(1023), 1023);
        assert_eq!(index(1024), 1024);
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        // Contiguous, non-overlapping, and within 1/128 relative width.
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bucket_range(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + (w - 1)), i);
            if lo >= EXACT {
                assert!(w as f64 / lo as f64 <= 1.0 / 128.0 + 1e-15);
            }
            next = lo.wrapping_add(w);
        }
        assert_eq!(next, 0, "last bucket ends at 2^64");
    }

    #[test]
    fn empty() {
        let h = Histogram::new();
        assert_eq!((h.count(), h.min(), h.max(), h.quantile(0.5)), (0, 0, 0, 0));
        assert_eq!(h.mean(), 0.0);
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in 0..1000u64 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 499);
        assert_eq!(h.quantile(0.95), 949);
        assert_eq!(h.quantile(0.0), 0);
        assert_eq!(h.quantile(1.0), 999);
        assert_eq!(h.mean(), 499.5);
    }

    #[test]
    fn quantiles_match_exact_within_relative_error() {
        let mut rng = Rng::stream(3, "hist");
        // Log-uniform from 100 ns to 10 s, plus a cluster around 50 ms.
        let mut xs: Vec<u64> = (0..200_000)
            .map(|i| {
                if i % 4 == 0 {
                    (50e6 * (1.0 + 0.01 * rng.uniform())) as u64
                } else {
                    (100.0 * 1e8f64.powf(rng.uniform())) as u64
                }
            })
            .collect();
        let mut h = Histogram::new();
        for &x in &xs {
            h.record(x);
        }
        xs.sort_unstable();
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64;
        assert!((h.mean() - mean).abs() / mean < 1e-12);
        assert_eq!(h.min(), xs[0]);
        assert_eq!(h.max(), *xs.last().unwrap());
        let mut worst: f64 = 0.0;
        for q in [
            0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0,
        ] {
            let e = exact_quantile(&xs, q);
            let got = h.quantile(q);
            let rel = (got as f64 - e as f64).abs() / e as f64;
            worst = worst.max(rel);
            assert!(
                rel <= Histogram::RELATIVE_ERROR,
                "q {q}: {got} vs {e} ({rel})"
            );
        }
        assert!(worst > 0.0, "some quantile should be approximate");
    }

    #[test]
    fn merge_equals_recording_everything() {
        let mut rng = Rng::stream(4, "merge");
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for i in 0..10_000 {
            let v = (1e9 * rng.uniform()) as u64;
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
        a.merge(&Histogram::new());
        assert_eq!(a, all);
        let mut e = Histogram::new();
        e.merge(&all);
        assert_eq!(e, all);
        e.clear();
        assert_eq!(e, Histogram::new());
    }

    #[test]
    fn counters_span_only_the_values_seen() {
        let mut h = Histogram::new();
        for v in [60_000_000u64, 40_000_000, 200_000_000, 45_000_000] {
            h.record(v);
        }
        assert!(h.counts.len() < 450, "{} counters", h.counts.len());
        let mut dense = Histogram::new();
        dense.cover(0, BUCKETS - 1);
        for v in [200_000_000u64, 60_000_000, 45_000_000, 40_000_000] {
            dense.record(v);
        }
        assert_eq!(h, dense);
        for q in [0.0, 0.3, 0.5, 0.7, 1.0] {
            assert_eq!(h.quantile(q), dense.quantile(q));
        }
    }

    #[test]
    fn counts_past_32_bits_stay_exact() {
        // A bucket whose 32-bit counter wraps keeps the rest in the side list.
        let mut h = Histogram::new();
        h.record(5_000);
        h.record(9_000);
        let j = index(5_000) - h.base;
        h.counts[j] = u32::MAX - 1;
        h.count += u64::from(u32::MAX - 2);
        h.record(5_000);
        h.record(5_000);
        h.record(5_000);
        assert_eq!(h.bucket(j), u64::from(u32::MAX) + 2);
        assert_eq!(h.carry, vec![(index(5_000), 1u64 << 32)]);
        assert_eq!(h.quantile(0.5), h.quantile(0.999_999_999));
        // Merging adds the side counts too, and carries the sum past 2^32.
        let mut m = Histogram::new();
        m.merge(&h);
        m.merge(&h);
        assert_eq!(
            m.bucket(index(5_000) - m.base),
            2 * (u64::from(u32::MAX) + 2)
        );
        assert_eq!(m.count(), 2 * h.count());
        assert!(m != h);
        let mut again = Histogram::new();
        again.merge(&m);
        assert!(again == m);
        m.clear();
        assert!(m.carry.is_empty() && m.is_empty());
    }

    #[test]
    fn huge_values() {
        let mut h = Histogram::new();
        h.record(u64::MAX);
        h.record(u64::MAX - 1);
        h.record(1 << 63);
        assert_eq!(h.quantile(1.0), u64::MAX);
        assert_eq!(h.quantile(0.0), 1 << 63);
        let m = h.quantile(0.5);
        assert!(m >= 1 << 63);
        assert!(((u64::MAX - m) as f64) / (m as f64) < Histogram::RELATIVE_ERROR);
    }

    proptest! {
        #[test]
        fn quantile_invariants(
            xs in prop::collection::vec(0u64..u64::MAX, 1..300),
            small in prop::collection::vec(0u64..5_000_000, 0..300),
            qs in prop::collection::vec(0.0f64..=1.0, 1..20),
        ) {
            let mut h = Histogram::new();
            let mut all: Vec<u64> = xs.iter().chain(small.iter()).copied().collect();
            for &x in &all {
                h.record(x);
            }
            all.sort_unstable();
            let mut qs = qs;
            qs.sort_by(f64::total_cmp);
            let mut prev = 0u64;
            for &q in &qs {
                let v = h.quantile(q);
                prop_assert!(v >= h.min() && v <= h.max());
                prop_assert!(v >= prev, "not monotone at {}", q);
                prev = v;
                let e = exact_quantile(&all, q);
                let rel = (v as f64 - e as f64).abs() / (e as f64).max(1.0);
                prop_assert!(rel <= Histogram::RELATIVE_ERROR, "q {}: {} vs {}", q, v, e);
            }
            prop_assert_eq!(h.count(), all.len() as u64);
            prop_assert_eq!(h.min(), all[0]);
            prop_assert_eq!(h.max(), *all.last().unwrap());
        }
    }
}

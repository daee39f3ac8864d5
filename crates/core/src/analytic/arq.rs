//! Selective-repeat ARQ over a Gilbert–Elliott channel: the discrete Markov
//! chain of Vacirca, De Vendictis, Todini and Baiocchi ("On the Effects of ARQ
//! Mechanisms on TCP Performance in Wireless Environments", §III-A).
//!
//! One isolated SDU is segmented into `n_pdu` PDUs. In every frame (the
//! channel's unit time τ) all PDUs still missing are sent; each fails
//! independently with the error probability `p_C` of the current channel state
//! `C`; the acknowledgement arrives error-free at the end of the frame; then
//! the channel moves (stay probabilities `g`, `b`). The chain state is
//! `(C, X)`, `X` the number of PDUs still to deliver; `X = 0` is absorbing.
//!
//! With `T_C[k][k'] = C(k,k') p_C^k' (1−p_C)^(k−k')` the transition matrix is
//! `P = [[g T_G, (1−g) T_G], [(1−b) T_B, b T_B]]` and `Q` is its restriction to
//! the transient states `X ≥ 1`. The absorption time `η` is the number of
//! frames (transmission rounds) the SDU needs, and
//!
//! * `F(n) = Pr{η > n} = π Qⁿ e` is the residual SDU loss probability when each
//!   PDU may be transmitted at most `n` times, with `π` the stationary channel
//!   distribution placed on `X = n_pdu`;
//! * `E[η] = Σ F(n) = π (I−Q)⁻¹ e` (eq. 2) and
//!   `E[η | n ≤ M_t] = Σ_{n<M_t} F(n)` (eq. 3);
//! * `λ₁`, the dominant eigenvalue of `Q` (the larger eigenvalue of the 2×2
//!   block at `X = 1`), gives the approximation
//!   `F̂(n) = F(1) λ₁^(n−1)` (eq. 5).
//!
//! Numerics: `Q` is block-triangular in `X` (X never increases) with 2×2
//! diagonal blocks, so `(I−Q) x = e` is solved by forward substitution over
//! `X`, one 2×2 solve per level, and `π Qⁿ` by repeated vector–matrix
//! products that cost `O(n_pdu²)` each (the binomial step, then the 2×2
//! channel step). Binomial probabilities are evaluated in the log domain, so
//! they neither overflow nor lose precision for large `n_pdu`; `p = 0` and
//! `p = 1` are exact.
//!
//! Bounds: building a model costs nothing, and `λ₁`, `F(1)`, `F̂(n)` and
//! [`ArqModel::limit_for_target`] (what the simulator's adaptive ARQ uses)
//! hold for any `n_pdu`. The exact chain needs a table of `n_pdu²` binomial
//! probabilities, so the functions that use it refuse `n_pdu >` [`MAX_NPDU`],
//! curves longer than [`MAX_N`] and Monte Carlo samples larger than
//! [`MAX_SDUS`] with an error instead of allocating without bound.

use crate::channel::GilbertElliott;
use crate::rng::Rng;

/// Largest value [`ArqModel::limit_for_target`] returns: targets that cannot be
/// met within this many transmissions (including `target ≤ 0` and channels
/// with `λ₁ = 1`) saturate here. 3GPP's MaxDAT tops out at 40, so this is
/// "unlimited" for every practical purpose.
pub const LIMIT_CAP: u32 = 1024;

/// Most PDUs per SDU of the exact chain (its binomial table takes
/// `8·n_pdu²` bytes: 8 MiB here).
pub const MAX_NPDU: u32 = 1024;

/// Most steps `n` of a curve ([`ArqModel::residual_loss_curve`] and the like)
/// and most frames per SDU of [`ArqModel::simulate`].
pub const MAX_N: u32 = 100_000;

/// Most SDUs of one [`ArqModel::simulate`] (4 bytes each).
pub const MAX_SDUS: usize = 10_000_000;

/// `Err` naming `name` unless `value ≤ max`.
fn at_most<T: PartialOrd + std::fmt::Display>(name: &str, value: T, max: T) -> Result<(), String> {
    if value <= max {
        Ok(())
    } else {
        Err(format!("{name} = {value} is too large; at most {max}"))
    }
}

/// The ARQ Markov model of one SDU of `n_pdu` PDUs over a Gilbert–Elliott
/// channel.
#[derive(Clone, Debug)]
pub struct ArqModel {
    p_good: f64,
    p_bad: f64,
    g: f64,
    b: f64,
    npdu: u32,
}

/// `binom[c][k][k']` = probability that `k'` of `k` PDUs fail in state `c`
/// (0 = GOOD, 1 = BAD), `1 ≤ k ≤ n_pdu`, `0 ≤ k' ≤ k`, stored row-major in
/// a flat vector at `k (k+1) / 2 + k'` (row `k = 0` included for indexing).
type Binom = [Vec<f64>; 2];

/// Where a row of the transient part of a binomial table matters: for each
/// state `c` and `k`, the range `lo..=hi` of `k' ≥ 1` whose probability is at
/// least [`WINDOW_FLOOR`] times the row's largest over `k' ≥ 1` (`(1, 0)`,
/// empty, when the whole transient row is 0). Outside it the terms are below
/// the rounding of the row's sum, so [`ArqModel::step`] skips them: with
/// `p_C = 1` a row is the single `k' = k`, and with `p_C = ½` it is about
/// 9·√k wide instead of `k`.
type Windows = [Vec<(usize, usize)>; 2];

/// Relative floor of a binomial row's window (2⁻⁷⁰ ≈ 8.5·10⁻²²): the
/// geometric tails outside the window sum to less than 10⁻²⁰ of the row.
const WINDOW_FLOOR: f64 = 8.470_329_472_543_003e-22;

fn windows(binom: &Binom, n: usize) -> Windows {
    let row = |t: &Vec<f64>, k: usize| {
        let r = &t[tri(k, 1)..=tri(k, k)];
        let top = r.iter().copied().fold(0.0, f64::max);
        if top <= 0.0 {
            return (1, 0);
        }
        let keep = |x: &f64| *x >= top * WINDOW_FLOOR;
        let lo = r.iter().position(keep).unwrap_or(0);
        let hi = r.iter().rposition(keep).unwrap_or(0);
        (lo + 1, hi + 1)
    };
    let mut w: Windows = [vec![(1, 0)], vec![(1, 0)]];
    for (c, wc) in w.iter_mut().enumerate() {
        wc.extend((1..=n).map(|k| row(&binom[c], k)));
    }
    w
}

fn tri(k: usize, kp: usize) -> usize {
    k * (k + 1) / 2 + kp
}

/// `ln C(n, k)` through `ln Γ`-free summation (exact enough for n ≤ a few
/// thousand; n_pdu is small).
fn ln_choose(ln_fact: &[f64], n: usize, k: usize) -> f64 {
    ln_fact[n] - ln_fact[k] - ln_fact[n - k]
}

/// `C(k,k') p^k' (1−p)^(k−k')`, exact at `p ∈ {0, 1}`.
fn binom_pmf(ln_fact: &[f64], k: usize, kp: usize, p: f64) -> f64 {
    let fails = kp;
    let succ = k - kp;
    if p <= 0.0 {
        return if fails == 0 { 1.0 } else { 0.0 };
    }
    if p >= 1.0 {
        return if succ == 0 { 1.0 } else { 0.0 };
    }
    let ln = ln_choose(ln_fact, k, kp) + fails as f64 * p.ln() + succ as f64 * (-p).ln_1p();
    ln.exp()
}

impl ArqModel {
    /// A model with unit error probabilities `p_good`/`p_bad`, stay
    /// probabilities `g`/`b` and `npdu` PDUs per SDU.
    ///
    /// Errors: every probability must lie in `[0, 1]`, `g = b = 1` is refused
    /// (no stationary distribution), and `npdu ≥ 1`.
    pub fn new(p_good: f64, p_bad: f64, g: f64, b: f64, npdu: u32) -> Result<ArqModel, String> {
        GilbertElliott::check(p_good, p_bad, g, b)?;
        if npdu < 1 {
            return Err(format!("npdu = {npdu} must be at least 1"));
        }
        Ok(ArqModel {
            p_good,
            p_bad,
            g,
            b,
            npdu,
        })
    }

    /// The binomial tables of the exact chain (`Err` if `n_pdu > MAX_NPDU`).
    fn binom(&self) -> Result<Binom, String> {
        at_most("npdu", self.npdu, MAX_NPDU)?;
        let n = self.npdu as usize;
        let mut ln_fact = vec![0.0; n + 1];
        for i in 1..=n {
            ln_fact[i] = ln_fact[i - 1] + (i as f64).ln();
        }
        let table = |p: f64| {
            let mut t = vec![0.0; tri(n, n) + 1];
            for k in 0..=n {
                for kp in 0..=k {
                    t[tri(k, kp)] = binom_pmf(&ln_fact, k, kp, p);
                }
            }
            t
        };
        Ok([table(self.p_good), table(self.p_bad)])
    }

    /// PDUs per SDU.
    pub fn npdu(&self) -> u32 {
        self.npdu
    }

    /// Stationary channel distribution `(π_G, π_B)` =
    /// `((1−b)/(2−g−b), (1−g)/(2−g−b))`.
    pub fn stationary(&self) -> (f64, f64) {
        // (1−g) + (1−b) rather than 2−g−b: the two terms are exact, so the
        // probabilities sum to 1 within an ulp even when g or b is near 1.
        let (lg, lb) = (1.0 - self.g, 1.0 - self.b);
        let d = lg + lb;
        (lb / d, lg / d)
    }

    /// The dominant eigenvalue of `Q`, in closed form:
    /// `λ₁ = (g p_G + b p_B + √((g p_G + b p_B)² − 4 p_B p_G (g + b − 1))) / 2`.
    pub fn lambda1(&self) -> f64 {
        let tr = self.g * self.p_good + self.b * self.p_bad;
        let det = self.p_bad * self.p_good * (self.g + self.b - 1.0);
        // The 2×2 block has non-negative entries, so its eigenvalues are real;
        // clamp rounding noise.
        let disc = (tr * tr - 4.0 * det).max(0.0);
        ((tr + disc.sqrt()) / 2.0).min(1.0)
    }

    /// One step `v ← v Q` of a row vector over the transient states, laid out
    /// as `v[c * n_pdu + (k − 1)]`.
    fn step(&self, binom: &Binom, win: &Windows, v: &[f64], out: &mut [f64]) {
        let n = self.npdu as usize;
        // w[c][k'] = Σ_k v[c][k] T_c[k][k'] (k' ≥ 1: the absorbed mass leaves).
        let mut w = [vec![0.0; n], vec![0.0; n]];
        for (c, wc) in w.iter_mut().enumerate() {
            let t = &binom[c];
            for k in 1..=n {
                let vk = v[c * n + k - 1];
                let (lo, hi) = win[c][k];
                if vk == 0.0 || lo > hi {
                    continue;
                }
                let row = &t[tri(k, lo)..=tri(k, hi)];
                for (x, &p) in wc[lo - 1..hi].iter_mut().zip(row) {
                    *x += vk * p;
                }
            }
        }
        for kp in 0..n {
            let (wg, wb) = (w[0][kp], w[1][kp]);
            out[kp] = wg * self.g + wb * (1.0 - self.b);
            out[n + kp] = wg * (1.0 - self.g) + wb * self.b;
        }
    }

    fn initial(&self) -> Vec<f64> {
        let n = self.npdu as usize;
        let (pg, pb) = self.stationary();
        let mut v = vec![0.0; 2 * n];
        v[n - 1] = pg;
        v[2 * n - 1] = pb;
        v
    }

    /// `F(n) = Pr{η > n} = π Qⁿ e`: the probability that the SDU is still
    /// incomplete after `n` transmissions per PDU (`F(0) = 1`).
    /// `Err` if `n > MAX_N` or `n_pdu > MAX_NPDU`.
    pub fn residual_loss(&self, n: u32) -> Result<f64, String> {
        Ok(*self
            .residual_loss_curve(n)?
            .last()
            .expect("curve has n + 1 points"))
    }

    /// `[F(0), F(1), …, F(n_max)]`, in one pass.
    /// `Err` if `n_max > MAX_N` or `n_pdu > MAX_NPDU`.
    pub fn residual_loss_curve(&self, n_max: u32) -> Result<Vec<f64>, String> {
        at_most("n", n_max, MAX_N)?;
        let binom = self.binom()?;
        let win = windows(&binom, self.npdu as usize);
        let mut v = self.initial();
        let mut next = vec![0.0; v.len()];
        let mut out = Vec::with_capacity(n_max as usize + 1);
        out.push(1.0);
        for _ in 0..n_max {
            self.step(&binom, &win, &v, &mut next);
            std::mem::swap(&mut v, &mut next);
            out.push(v.iter().sum::<f64>().clamp(0.0, 1.0));
        }
        Ok(out)
    }

    /// `F(1) = 1 − [π_G (1−p_G)^n_pdu + π_B (1−p_B)^n_pdu]`, the SDU loss
    /// without retransmissions.
    fn f1(&self) -> f64 {
        let (pg, pb) = self.stationary();
        // π_G·(1 − (1−p_G)^n) + π_B·(1 − (1−p_B)^n): no cancellation, exactly 0
        // for p = 0, accurate for tiny p.
        let fail = |p: f64| {
            if p >= 1.0 {
                1.0
            } else {
                -(self.npdu as f64 * (-p).ln_1p()).exp_m1()
            }
        };
        (pg * fail(self.p_good) + pb * fail(self.p_bad)).clamp(0.0, 1.0)
    }

    /// The approximation of eq. (5): `F̂(n) = F(1) λ₁^(n−1)` for `n ≥ 1`
    /// (`F̂(0)` is taken as 1, like `F(0)`).
    pub fn residual_loss_approx(&self, n: u32) -> f64 {
        if n == 0 {
            return 1.0;
        }
        let l = self.lambda1();
        let e = n - 1;
        let pow = if e == 0 {
            1.0
        } else if l == 0.0 {
            0.0
        } else {
            (e as f64 * l.ln()).exp()
        };
        self.f1() * pow
    }

    /// `E[η] = π (I−Q)⁻¹ e`, the mean number of transmission rounds per SDU
    /// with unlimited retransmissions, by forward substitution over `X`.
    /// Infinite when the SDU can stay incomplete for ever (`λ₁ = 1`, e.g.
    /// `p_B = 1` with `b = 1`). `Err` if `n_pdu > MAX_NPDU`.
    pub fn mean_tx(&self) -> Result<f64, String> {
        let binom = self.binom()?;
        if self.lambda1() >= 1.0 {
            return Ok(f64::INFINITY);
        }
        let n = self.npdu as usize;
        // x[c][k] = 1 + Σ_{c'} Σ_{k' ≤ k} T_c[k][k'] P[c][c'] x[c'][k'];
        // the k' = k terms form the 2×2 system solved at each level.
        let pm = [[self.g, 1.0 - self.g], [1.0 - self.b, self.b]];
        let mut x = [vec![0.0; n + 1], vec![0.0; n + 1]];
        for k in 1..=n {
            let mut rhs = [1.0; 2];
            for (c, r) in rhs.iter_mut().enumerate() {
                let t = &binom[c];
                for kp in 1..k {
                    let mix = pm[c][0] * x[0][kp] + pm[c][1] * x[1][kp];
                    *r += t[tri(k, kp)] * mix;
                }
            }
            let dg = binom[0][tri(k, k)];
            let db = binom[1][tri(k, k)];
            // (I − diag(dg, db) P) [xg, xb]ᵀ = rhs
            let a11 = 1.0 - dg * pm[0][0];
            let a12 = -dg * pm[0][1];
            let a21 = -db * pm[1][0];
            let a22 = 1.0 - db * pm[1][1];
            let det = a11 * a22 - a12 * a21;
            x[0][k] = (rhs[0] * a22 - a12 * rhs[1]) / det;
            x[1][k] = (a11 * rhs[1] - a21 * rhs[0]) / det;
        }
        let (pg, pb) = self.stationary();
        Ok(pg * x[0][n] + pb * x[1][n])
    }

    /// `E[η | n ≤ M_t] = Σ_{n=0}^{M_t−1} F(n)` (eq. 3): mean transmission
    /// rounds per SDU when each PDU may be sent at most `m_t` times
    /// (0 for `m_t = 0`). `Err` if `m_t > MAX_N` or `n_pdu > MAX_NPDU`.
    pub fn mean_tx_limited(&self, m_t: u32) -> Result<f64, String> {
        Ok(*self
            .mean_tx_limited_curve(m_t)?
            .last()
            .expect("curve has m_t + 1 points"))
    }

    /// `[E[η | n ≤ 0], …, E[η | n ≤ m_max]]`: the partial sums of
    /// [`ArqModel::residual_loss_curve`], in one pass.
    /// `Err` if `m_max > MAX_N` or `n_pdu > MAX_NPDU`.
    pub fn mean_tx_limited_curve(&self, m_max: u32) -> Result<Vec<f64>, String> {
        at_most("n", m_max, MAX_N)?;
        let mut acc = 0.0;
        let mut out = Vec::with_capacity(m_max as usize + 1);
        out.push(0.0);
        if m_max > 0 {
            for f in self.residual_loss_curve(m_max - 1)? {
                acc += f;
                out.push(acc);
            }
        }
        Ok(out)
    }

    /// Monte Carlo of `sdus` isolated SDUs under the model's assumptions: the
    /// channel state drawn from `π`, then per frame every remaining PDU fails
    /// with probability `p_C`, then the channel steps. Returns `η` per SDU
    /// (frames until every PDU got through), capped at `cap`: an SDU still
    /// incomplete after `cap` frames reports `cap + 1`. An independent check
    /// of [`ArqModel::residual_loss`], with no matrix and no binomial.
    /// `Err` if `sdus > MAX_SDUS`, `cap > MAX_N` or `n_pdu > MAX_NPDU`.
    pub fn simulate(&self, sdus: usize, cap: u32, rng: &mut Rng) -> Result<Vec<u32>, String> {
        at_most("sdus", sdus, MAX_SDUS)?;
        at_most("n", cap, MAX_N)?;
        at_most("npdu", self.npdu, MAX_NPDU)?;
        let (_, pi_b) = self.stationary();
        let etas = (0..sdus)
            .map(|_| {
                let mut bad = rng.bernoulli(pi_b);
                let mut left = self.npdu;
                let mut eta = 0;
                while left > 0 {
                    if eta == cap {
                        return cap + 1;
                    }
                    let p = if bad { self.p_bad } else { self.p_good };
                    left = (0..left).filter(|_| rng.bernoulli(p)).count() as u32;
                    eta += 1;
                    bad = rng.bernoulli(if bad { self.b } else { 1.0 - self.g });
                }
                eta
            })
            .collect();
        Ok(etas)
    }

    /// The smallest `M_t ≥ 1` with `F̂(M_t) ≤ target`, i.e. eq. (5) inverted.
    ///
    /// A `target ≤ 0` (or NaN) asks for zero residual loss, i.e. full
    /// persistence, and returns [`LIMIT_CAP`]; so does any target the model
    /// cannot meet within [`LIMIT_CAP`] transmissions (e.g. `λ₁ = 1`). A
    /// `target ≥ F(1)` gives 1.
    pub fn limit_for_target(&self, target: f64) -> u32 {
        if target.is_nan() || target <= 0.0 {
            return LIMIT_CAP;
        }
        let f1 = self.f1();
        if f1 <= target {
            return 1;
        }
        let l = self.lambda1();
        if l >= 1.0 {
            return LIMIT_CAP;
        }
        if l == 0.0 {
            return 2;
        }
        // F(1) λ^(M−1) ≤ target ⇔ M ≥ 1 + ln(target/F(1)) / ln λ.
        let guess = 1.0 + ((target / f1).ln() / l.ln()).ceil();
        let mut m = if guess.is_finite() {
            guess.clamp(1.0, LIMIT_CAP as f64) as u32
        } else {
            LIMIT_CAP
        };
        // Guard the rounding of the logarithms with the exact comparison.
        while m > 1 && self.residual_loss_approx(m - 1) <= target {
            m -= 1;
        }
        while m < LIMIT_CAP && self.residual_loss_approx(m) > target {
            m += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests;

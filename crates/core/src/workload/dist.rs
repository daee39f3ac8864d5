//! Flow-size distributions (`size = …` of a `[[workloads]]` entry): fixed,
//! Pareto, log-normal, an empirical CDF from a file, and the two standard
//! data-centre CDFs shipped with linklab (web search, data mining).
//!
//! Every distribution is sampled by inversion from one uniform draw of the
//! workload's `sizes` stream, and knows its mean (for a load target).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::kind::tagged_enum;
use crate::config::{quoted, Bytes, ConfigError, Result};

/// A flow-size distribution's configuration.
pub trait SizeKind {
    /// Check the keys (paths relative to the `size` table).
    fn validate(&self) -> Result<()>;
    /// The sampler (after files are loaded).
    fn sampler(&self) -> Result<Sizes>;
}

tagged_enum! {
    /// How large each arriving flow is, in bytes of application data.
    pub enum SizeConfig: dyn SizeKind, "size", tag "kind" {
        /// Every flow the same size.
        Fixed(FixedSize) = "fixed",
        /// Pareto of a mean and a shape, optionally capped.
        Pareto(ParetoSize) = "pareto",
        /// Log-normal of a median and a sigma, optionally capped.
        Lognormal(LognormalSize) = "lognormal",
        /// An empirical CDF from a file.
        Cdf(CdfSize) = "cdf",
        /// The web-search CDF of the DCTCP paper (Alizadeh et al. 2010).
        WebSearch(WebSearch) = "web_search",
        /// The data-mining CDF of the VL2 paper (Greenberg et al. 2009).
        DataMining(DataMining) = "data_mining",
    }
}

/// `size = { kind = "fixed", bytes = "20kB" }`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixedSize {
    /// Bytes of every flow (≥ 1).
    pub bytes: Bytes,
}

/// `size = { kind = "pareto", mean = "100kB", shape = 1.2, max = "100MB" }`:
/// P(X > x) = (x_m / x)^shape for x ≥ x_m = mean·(shape − 1)/shape.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParetoSize {
    /// Mean of the uncapped distribution (≥ 1 byte).
    pub mean: Bytes,
    /// Shape α, above 1 (a finite mean) and at most 10.
    pub shape: f64,
    /// Sizes above this are cut to it. Default: no cap.
    pub max: Option<Bytes>,
}

/// `size = { kind = "lognormal", median = "20kB", sigma = 1.5 }`:
/// ln X is normal with mean ln(median) and standard deviation sigma.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LognormalSize {
    /// Median (≥ 1 byte).
    pub median: Bytes,
    /// Standard deviation of ln X, 0 to 5.
    pub sigma: f64,
    /// Sizes above this are cut to it. Default: no cap.
    pub max: Option<Bytes>,
}

/// `size = { kind = "cdf", file = "sizes.cdf", scale = 1460 }`: an
/// empirical CDF, one `SIZE PROBABILITY` point per line (docs/models/workloads.md).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CdfSize {
    /// The file, relative to the scenario file.
    pub file: String,
    /// Sizes in the file are multiplied by this (e.g. 1460 for a CDF in
    /// packets), > 0. Default 1.
    pub scale: Option<f64>,
    /// The points, once read.
    #[serde(skip)]
    #[schemars(skip)]
    pub loaded: Option<Arc<Cdf>>,
}

/// `size = "web_search"`: the DCTCP paper's web-search flow sizes.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearch {}

/// `size = "data_mining"`: the VL2 paper's data-mining flow sizes.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataMining {}

/// Bytes of one segment in the shipped CDFs (they are given in packets).
pub const CDF_PACKET: f64 = 1460.0;

/// Web search (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010,
/// Fig. 3), as the points of the pFabric simulations (Alizadeh et al.,
/// SIGCOMM 2013) give it: (size in 1460-byte packets, cumulative probability).
pub const WEB_SEARCH: &[(f64, f64)] = &[
    (6.0, 0.0),
    (6.0, 0.15),
    (13.0, 0.2),
    (19.0, 0.3),
    (33.0, 0.4),
    (53.0, 0.53),
    (133.0, 0.6),
    (667.0, 0.7),
    (1333.0, 0.8),
    (3333.0, 0.9),
    (6667.0, 0.97),
    (20000.0, 1.0),
];

/// Data mining (Greenberg et al., "VL2: A Scalable and Flexible Data Center
/// Network", SIGCOMM 2009, Fig. 2), as the pFabric simulations give it:
/// (size in 1460-byte packets, cumulative probability).
pub const DATA_MINING: &[(f64, f64)] = &[
    (1.0, 0.0),
    (1.0, 0.5),
    (2.0, 0.6),
    (3.0, 0.7),
    (7.0, 0.8),
    (267.0, 0.9),
    (2107.0, 0.95),
    (66667.0, 0.99),
    (666667.0, 1.0),
];

/// A piecewise-linear CDF: points (bytes, cumulative probability), both
/// non-decreasing, the first probability ≥ 0, the last 1. A probability step
/// at one size is a point mass there.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// A CDF from points; `Err` (index of the bad point, why) otherwise.
    pub fn new(points: Vec<(f64, f64)>) -> std::result::Result<Cdf, (usize, String)> {
        if points.is_empty() {
            return Err((0, "no points; a CDF needs at least one line".into()));
        }
        let mut prev = (0.0f64, 0.0f64);
        for (i, &(x, p)) in points.iter().enumerate() {
            if !(x.is_finite() && x >= 0.0) {
                return Err((i, format!("size {x} is not a finite size ≥ 0")));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err((i, format!("probability {p} is not between 0 and 1")));
            }
            if i > 0 && (x < prev.0 || p < prev.1) {
                return Err((
                    i,
                    format!(
                        "({x}, {p}) goes back after ({}, {}); sizes and probabilities must not decrease",
                        prev.0, prev.1
                    ),
                ));
            }
            prev = (x, p);
        }
        if (prev.1 - 1.0).abs() > 1e-9 {
            return Err((
                points.len() - 1,
                format!("the last probability is {}; it must be 1", prev.1),
            ));
        }
        if prev.0 < 1.0 {
            return Err((points.len() - 1, "the largest size is below 1 byte".into()));
        }
        Ok(Cdf { points })
    }

    /// The shipped CDF `pts` (in packets) in bytes.
    pub fn packets(pts: &[(f64, f64)]) -> Cdf {
        Cdf {
            points: pts.iter().map(|&(x, p)| (x * CDF_PACKET, p)).collect(),
        }
    }

    /// The same CDF with every size multiplied by `k`.
    pub fn scaled(&self, k: f64) -> Cdf {
        Cdf {
            points: self.points.iter().map(|&(x, p)| (x * k, p)).collect(),
        }
    }

    /// Parse a CDF file's text (`file` named in errors as `file:line`): one
    /// point per line, `SIZE PROBABILITY` (bytes, cumulative probability),
    /// separated by spaces, tabs or a comma; `#` starts a comment; blank
    /// lines are skipped.
    pub fn parse(text: &str, file: &str) -> Result<Cdf> {
        let mut points = Vec::new();
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let s = raw.split('#').next().unwrap_or("").trim();
            if s.is_empty() {
                continue;
            }
            let fields: Vec<&str> = s
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let bad = |why: &str| {
                let shown: String = s.chars().take(40).collect();
                ConfigError::new(
                    "file",
                    quoted(file),
                    format!(
                        "{file}:{}: {} {why}; each line is SIZE PROBABILITY (bytes, cumulative probability), e.g. 1460 0.15",
                        i + 1,
                        quoted(&shown)
                    ),
                )
            };
            let [x, p] = fields[..] else {
                return Err(bad("does not have two fields"));
            };
            let (Ok(x), Ok(p)) = (x.parse::<f64>(), p.parse::<f64>()) else {
                return Err(bad("is not two numbers"));
            };
            points.push((x, p));
            lines.push(i + 1);
            if points.len() > MAX_CDF_POINTS {
                return Err(ConfigError::new(
                    "file",
                    quoted(file),
                    format!("has more than {MAX_CDF_POINTS} points"),
                ));
            }
        }
        Cdf::new(points).map_err(|(i, why)| {
            let at = lines
                .get(i)
                .map_or(String::new(), |l| format!("{file}:{l}: "));
            ConfigError::new("file", quoted(file), format!("{at}{why}"))
        })
    }

    /// The size at cumulative probability `u` (0 ≤ u < 1).
    pub fn quantile(&self, u: f64) -> f64 {
        let pts = &self.points;
        // The first point whose probability is above u.
        let i = pts.partition_point(|&(_, p)| p <= u);
        if i == 0 {
            return pts[0].0;
        }
        if i >= pts.len() {
            return pts[pts.len() - 1].0;
        }
        let (x0, p0) = pts[i - 1];
        let (x1, p1) = pts[i];
        x0 + (u - p0) / (p1 - p0) * (x1 - x0)
    }

    /// The mean: the point mass at the first size plus each segment's
    /// probability times its midpoint.
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0 * pts[0].1;
        for w in pts.windows(2) {
            m += (w[1].1 - w[0].1) * 0.5 * (w[0].0 + w[1].0);
        }
        m
    }
}

/// Points a CDF file may hold.
pub const MAX_CDF_POINTS: usize = 100_000;

/// A sampler of flow sizes.
#[derive(Clone, Debug)]
pub enum Sizes {
    /// Always this many bytes.
    Fixed(u64),
    /// x_m / U^(1/α), capped.
    Pareto {
        /// Scale x_m, bytes.
        xm: f64,
        /// Shape α.
        shape: f64,
        /// Cap, bytes.
        max: f64,
    },
    /// median · e^(σ N), capped.
    Lognormal {
        /// Median, bytes.
        median: f64,
        /// σ.
        sigma: f64,
        /// Cap, bytes.
        max: f64,
    },
    /// By inversion of a piecewise-linear CDF.
    Cdf(Arc<Cdf>),
}

impl Sizes {
    /// A size from uniforms `u` (and `v` for the log-normal's second draw).
    pub fn sample(&self, u: f64, v: f64) -> u64 {
        let x = match self {
            Sizes::Fixed(b) => return *b,
            Sizes::Pareto { xm, shape, max } => (xm / (1.0 - u).powf(1.0 / shape)).min(*max),
            Sizes::Lognormal { median, sigma, max } => {
                let n = (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
                (median * (sigma * n).exp()).min(*max)
            }
            Sizes::Cdf(c) => c.quantile(u),
        };
        // Whole bytes, at least one; a value beyond u64 cannot be reached
        // (caps and CDF sizes are finite).
        (x.round().max(1.0)).min(u64::MAX as f64 / 2.0) as u64
    }

    /// The mean size, bytes (of the capped distribution, before rounding).
    pub fn mean(&self) -> f64 {
        match self {
            Sizes::Fixed(b) => *b as f64,
            Sizes::Pareto { xm, shape, max } => {
                let a = *shape;
                if *max <= *xm {
                    return *max;
                }
                // E[min(X, M)] = x_m α/(α−1) − x_m^α M^(1−α)/(α−1).
                xm * a / (a - 1.0) - xm.powf(a) * max.powf(1.0 - a) / (a - 1.0)
            }
            Sizes::Lognormal { median, sigma, max } => {
                let (mu, s) = (median.ln(), *sigma);
                if s == 0.0 {
                    return median.min(*max);
                }
                if max.is_infinite() {
                    return (mu + s * s / 2.0).exp();
                }
                // E[min(X, M)] = e^(μ+σ²/2) Φ((ln M − μ − σ²)/σ) + M (1 − Φ((ln M − μ)/σ)).
                let lm = max.ln();
                (mu + s * s / 2.0).exp() * phi((lm - mu - s * s) / s)
                    + max * (1.0 - phi((lm - mu) / s))
            }
            Sizes::Cdf(c) => c.mean(),
        }
    }
}

/// The standard normal CDF (erfc by Numerical Recipes' Chebyshev fit,
/// relative error below 1.2e-7).
pub fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

fn check_max(max: Option<Bytes>, floor: f64, what: &str) -> Result<f64> {
    match max {
        None => Ok(f64::INFINITY),
        Some(Bytes(0)) => Err(ConfigError::new("max", "0", "is empty; allowed: ≥ 1 byte")),
        Some(Bytes(m)) if (m as f64) < floor => Err(ConfigError::new(
            "max",
            m.to_string(),
            format!("is below the {what} ({floor:.0} bytes); allowed: a cap at or above it"),
        )),
        Some(Bytes(m)) => Ok(m as f64),
    }
}

impl SizeKind for FixedSize {
    fn validate(&self) -> Result<()> {
        if self.bytes.get() == 0 {
            return Err(ConfigError::new(
                "bytes",
                "0",
                "is empty; a flow needs at least 1 byte",
            ));
        }
        Ok(())
    }
    fn sampler(&self) -> Result<Sizes> {
        self.validate()?;
        Ok(Sizes::Fixed(self.bytes.get()))
    }
}

impl SizeKind for ParetoSize {
    fn validate(&self) -> Result<()> {
        if !(self.shape > 1.0 && self.shape <= 10.0) {
            return Err(ConfigError::new(
                "shape",
                self.shape.to_string(),
                "is out of range; allowed: above 1 (a finite mean) and at most 10",
            ));
        }
        if self.mean.get() == 0 {
            return Err(ConfigError::new("mean", "0", "is empty; allowed: ≥ 1 byte"));
        }
        let xm = self.mean.get() as f64 * (self.shape - 1.0) / self.shape;
        check_max(self.max, xm, "scale x_m = mean·(shape − 1)/shape")?;
        Ok(())
    }
    fn sampler(&self) -> Result<Sizes> {
        self.validate()?;
        Ok(Sizes::Pareto {
            xm: self.mean.get() as f64 * (self.shape - 1.0) / self.shape,
            shape: self.shape,
            max: check_max(self.max, 0.0, "")?,
        })
    }
}

impl SizeKind for LognormalSize {
    fn validate(&self) -> Result<()> {
        crate::config::check_range("sigma", self.sigma, 0.0, 5.0)?;
        if self.median.get() == 0 {
            return Err(ConfigError::new(
                "median",
                "0",
                "is empty; allowed: ≥ 1 byte",
            ));
        }
        check_max(self.max, 1.0, "smallest size")?;
        Ok(())
    }
    fn sampler(&self) -> Result<Sizes> {
        self.validate()?;
        Ok(Sizes::Lognormal {
            median: self.median.get() as f64,
            sigma: self.sigma,
            max: check_max(self.max, 0.0, "")?,
        })
    }
}

impl SizeKind for CdfSize {
    fn validate(&self) -> Result<()> {
        if let Some(k) = self.scale {
            if !(k > 0.0 && k <= 1e9) {
                return Err(ConfigError::new(
                    "scale",
                    k.to_string(),
                    "is out of range; allowed: above 0, at most 1e9",
                ));
            }
        }
        Ok(())
    }
    fn sampler(&self) -> Result<Sizes> {
        self.validate()?;
        let c = self.loaded.as_ref().ok_or_else(|| {
            ConfigError::new(
                "file",
                quoted(&self.file),
                "was not read (an internal error)",
            )
        })?;
        Ok(Sizes::Cdf(Arc::new(c.scaled(self.scale.unwrap_or(1.0)))))
    }
}

impl SizeKind for WebSearch {
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    fn sampler(&self) -> Result<Sizes> {
        Ok(Sizes::Cdf(Arc::new(Cdf::packets(WEB_SEARCH))))
    }
}

impl SizeKind for DataMining {
    fn validate(&self) -> Result<()> {
        Ok(())
    }
    fn sampler(&self) -> Result<Sizes> {
        Ok(Sizes::Cdf(Arc::new(Cdf::packets(DATA_MINING))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn sample_mean(s: &Sizes, n: usize) -> f64 {
        let mut r = Rng::stream(7, "test");
        (0..n)
            .map(|_| s.sample(r.uniform(), r.uniform()) as f64)
            .sum::<f64>()
            / n as f64
    }

    #[test]
    fn shipped_cdfs_are_valid_and_their_means_match_sampling() {
        for pts in [WEB_SEARCH, DATA_MINING] {
            let c = Cdf::packets(pts);
            Cdf::new(c.points.clone()).unwrap();
            let s = Sizes::Cdf(Arc::new(c));
            let (m, est) = (s.mean(), sample_mean(&s, 400_000));
            // Heavy tails: 400 000 draws give the mean within a few percent.
            assert!((est / m - 1.0).abs() < 0.05, "{m} vs {est}");
        }
        // The web-search mean is about 1.6 MB (1138 packets of 1460 B).
        let m = Cdf::packets(WEB_SEARCH).mean();
        assert!((m / 1460.0 - 1138.0).abs() < 10.0, "{}", m / 1460.0);
    }

    #[test]
    fn capped_means_match_sampling() {
        let p = ParetoSize {
            mean: Bytes(100_000),
            shape: 1.5,
            max: Some(Bytes(2_000_000)),
        }
        .sampler()
        .unwrap();
        let (m, est) = (p.mean(), sample_mean(&p, 400_000));
        assert!((est / m - 1.0).abs() < 0.02, "{m} vs {est}");
        assert!(m < 100_000.0);
        let l = LognormalSize {
            median: Bytes(20_000),
            sigma: 1.5,
            max: Some(Bytes(1_000_000)),
        }
        .sampler()
        .unwrap();
        let (m, est) = (l.mean(), sample_mean(&l, 400_000));
        assert!((est / m - 1.0).abs() < 0.02, "{m} vs {est}");
        let u = LognormalSize {
            median: Bytes(20_000),
            sigma: 1.0,
            max: None,
        }
        .sampler()
        .unwrap();
        assert!((u.mean() - 20_000.0 * 0.5f64.exp()).abs() < 1.0);
    }

    #[test]
    fn phi_known_values() {
        assert!((phi(0.0) - 0.5).abs() < 1e-7);
        assert!((phi(1.96) - 0.975_002).abs() < 1e-5);
        assert!((phi(-1.0) - 0.158_655).abs() < 1e-5);
    }

    #[test]
    fn cdf_files_are_checked_line_by_line() {
        let c = Cdf::parse("# sizes\n100 0\n\n1000, 0.5\n10000 1\n", "a.cdf").unwrap();
        assert_eq!(c.quantile(0.25), 550.0);
        assert_eq!(c.quantile(0.0), 100.0);
        let e = Cdf::parse("100 0\n50 0.5\n100 1\n", "a.cdf").unwrap_err();
        assert!(e.allowed.starts_with("a.cdf:2:"), "{e}");
        let e = Cdf::parse("100 0\nx 0.5\n", "a.cdf").unwrap_err();
        assert!(e.allowed.starts_with("a.cdf:2:"), "{e}");
        let e = Cdf::parse("100 0\n200 0.9\n", "a.cdf").unwrap_err();
        assert!(e.allowed.contains("a.cdf:2: the last probability"), "{e}");
        let e = Cdf::parse("100 0 7\n", "b.cdf").unwrap_err();
        assert!(e.allowed.contains("b.cdf:1:"), "{e}");
    }
}

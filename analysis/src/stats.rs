//! Statistics (pure numerics).
//!
//! Everything here is a deterministic function of its arguments: no randomness except the
//! fixed-seed generator of [`geometric_mean_ratio`], no global state, no allocation beyond the
//! scratch a function documents. The comparison layer ([`crate::compare`]) builds verdicts on top
//! of these; `docs/gating.md` spells the method out for users.
//!
//! # Contents
//!
//! | function | what it computes |
//! |---|---|
//! | [`quantile`], [`quantile_sorted`], [`median`], [`quartiles`], [`iqr`] | type-7 (linear interpolation) sample quantiles |
//! | [`erfc`], [`normal_cdf`], [`normal_sf`], [`normal_quantile`] | the standard normal distribution |
//! | [`mann_whitney_u`] | two-sided Mann-Whitney U (Wilcoxon rank-sum) test |
//! | [`hodges_lehmann`] | Hodges-Lehmann shift estimate with the Moses distribution-free confidence interval |
//! | [`holm`], [`benjamini_hochberg`] | multiple-testing adjusted p-values |
//! | [`geometric_mean_ratio`] | geometric mean of ratios with a fixed-seed percentile-bootstrap interval |
//!
//! # Glossary
//!
//! - **type-7 quantile**: for sorted `x[0..n]` and `0 <= q <= 1`, let `h = (n - 1) q`,
//!   `j = floor(h)`; the quantile is `x[j] + (h - j) (x[j+1] - x[j])`. This is R's default, numpy's
//!   `linear` and Excel's `PERCENTILE.INC`.
//! - **IQR**: `Q3 - Q1`, the type-7 quantiles at 0.75 and 0.25.
//! - **U statistic**: for samples `x` (size `n`) and `y` (size `m`),
//!   `U_x = #{(i, j): x_i > y_j} + 0.5 #{(i, j): x_i = y_j}`; `U_x + U_y = n m`.
//! - **shift**: the `Δ` of the location-shift model `y ~ x + Δ`.
//!
//! # Conventions
//!
//! Inputs are expected to be finite. Functions that would otherwise produce a meaningless result
//! return `None` on empty or non-finite input; none of them panics.

use serde::Serialize;
use std::cmp::Ordering;

// ---------------------------------------------------------------------------------------------
// Quantiles
// ---------------------------------------------------------------------------------------------

/// Type-7 quantile of data that is already sorted ascending.
///
/// With `h = (n - 1) q` and `j = floor(h)`: `x[j] + (h - j) (x[j+1] - x[j])`.
/// `q` is clamped to `[0, 1]`. Returns `None` for empty input or a NaN `q`.
/// Cost: O(1).
#[must_use]
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || q.is_nan() {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor();
    let frac = h - lo;
    // `lo` is in [0, n - 1]: the cast is exact.
    let j = lo as usize;
    let a = *sorted.get(j)?;
    match sorted.get(j + 1) {
        Some(&b) if frac > 0.0 => Some(a + frac * (b - a)),
        _ => Some(a),
    }
}

/// Sorts a copy of `data` (by [`f64::total_cmp`]) for the quantile functions.
fn sorted_copy(data: &[f64]) -> Option<Vec<f64>> {
    if data.is_empty() || data.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = data.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    Some(v)
}

/// Type-7 quantile of unsorted data (see [`quantile_sorted`]).
///
/// Returns `None` for empty input or any non-finite value. Cost: O(n log n) and one copy.
#[must_use]
pub fn quantile(data: &[f64], q: f64) -> Option<f64> {
    quantile_sorted(&sorted_copy(data)?, q)
}

/// Median (type-7 quantile at 0.5: the mean of the two middle values for even `n`).
#[must_use]
pub fn median(data: &[f64]) -> Option<f64> {
    quantile(data, 0.5)
}

/// A distribution-free confidence interval for the median of `sorted` (ascending): the order
/// statistics `x(j)` and `x(k)` whose ranks are `n/2 -/+ z sqrt(n)/2` (the normal approximation
/// of the binomial), widened to the extremes when `n` is too small for them.
///
/// Returns `None` for empty input or a confidence outside (0, 1). Cost: O(1).
#[must_use]
pub fn median_interval_sorted(sorted: &[f64], confidence: f64) -> Option<(f64, f64)> {
    if sorted.is_empty() || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let n = sorted.len() as f64;
    let half_width = normal_quantile(0.5 + confidence / 2.0) * n.sqrt() / 2.0;
    // 1-based ranks, clamped to [1, n]; both are whole numbers in range, so the casts are exact.
    let lower_rank = ((n / 2.0 - half_width).floor()).clamp(1.0, n);
    let upper_rank = ((n / 2.0 + half_width).ceil() + 1.0).clamp(1.0, n);
    Some((
        *sorted.get(lower_rank as usize - 1)?,
        *sorted.get(upper_rank as usize - 1)?,
    ))
}

/// First quartile, median and third quartile (type-7).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quartiles {
    /// Quantile at 0.25.
    pub q1: f64,
    /// Quantile at 0.5.
    pub median: f64,
    /// Quantile at 0.75.
    pub q3: f64,
}

impl Quartiles {
    /// Interquartile range `q3 - q1`.
    #[must_use]
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// Quartiles of unsorted data. `None` for empty input or any non-finite value.
#[must_use]
pub fn quartiles(data: &[f64]) -> Option<Quartiles> {
    let v = sorted_copy(data)?;
    Some(Quartiles {
        q1: quantile_sorted(&v, 0.25)?,
        median: quantile_sorted(&v, 0.5)?,
        q3: quantile_sorted(&v, 0.75)?,
    })
}

/// Interquartile range `Q3 - Q1` (type-7). `None` for empty input or any non-finite value.
#[must_use]
pub fn iqr(data: &[f64]) -> Option<f64> {
    quartiles(data).map(|q| q.iqr())
}

// ---------------------------------------------------------------------------------------------
// The normal distribution
// ---------------------------------------------------------------------------------------------

/// Upper bound on the relative error of [`erfc`] (and so of [`normal_cdf`] / [`normal_sf`]).
pub const ERFC_MAX_RELATIVE_ERROR: f64 = 1.2e-7;

/// Upper bound on the relative error of [`normal_quantile`].
pub const NORMAL_QUANTILE_MAX_RELATIVE_ERROR: f64 = 1.15e-9;

/// Complementary error function `erfc(x) = 2/sqrt(pi) * integral_x^inf exp(-t^2) dt`.
///
/// Chebyshev-fitted approximation of Numerical Recipes (2nd ed., section 6.2, `erfcc`): with
/// `z = |x|` and `t = 1 / (1 + z/2)`,
///
/// ```text
/// erfc(z) ~ t * exp(-z^2 - 1.26551223 + t(1.00002368 + t(0.37409196 + t(0.09678418
///           + t(-0.18628806 + t(0.27886807 + t(-1.13520398 + t(1.48851587
///           + t(-0.82215223 + t 0.17087277)))))))))
/// erfc(-z) = 2 - erfc(z)
/// ```
///
/// Its relative ("fractional") error is below [`ERFC_MAX_RELATIVE_ERROR`] = 1.2e-7 for every
/// `x`, including the far tail, so tiny p-values keep their leading digits. NaN gives NaN.
#[must_use]
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ans = t * (-z * z + poly).exp();
    if x >= 0.0 { ans } else { 2.0 - ans }
}

/// Standard normal cumulative distribution function `Phi(x) = erfc(-x / sqrt(2)) / 2`.
///
/// Relative error below [`ERFC_MAX_RELATIVE_ERROR`].
#[must_use]
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Standard normal survival function `1 - Phi(x) = erfc(x / sqrt(2)) / 2`, computed without
/// cancellation so the upper tail keeps its relative accuracy.
#[must_use]
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

/// Inverse of [`normal_cdf`]: the `z` with `Phi(z) = p`.
///
/// Peter J. Acklam's rational approximation (central region `0.02425 <= p <= 0.97575` and the
/// two tails), relative error below [`NORMAL_QUANTILE_MAX_RELATIVE_ERROR`] = 1.15e-9.
/// Returns `-inf` at 0, `+inf` at 1 and NaN outside `[0, 1]`.
#[must_use]
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;

    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < P_LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p <= 1.0 - P_LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    }
}

// ---------------------------------------------------------------------------------------------
// Mann-Whitney U
// ---------------------------------------------------------------------------------------------

/// Largest `n + m` for which [`mann_whitney_u`] (without ties) and [`hodges_lehmann`] use the
/// exact null distribution of `U` instead of the normal approximation.
///
/// At this size the counts `C(n + m, n) <= C(50, 25) ~ 1.3e14` are exact in an `f64`, and the
/// dynamic program costs at most `n^2 m^2 / 4 ~ 1e5` additions.
pub const MWU_EXACT_MAX_TOTAL: usize = 50;

/// How a Mann-Whitney p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MwuMethod {
    /// Exact null distribution of `U` (no ties and `n + m <= MWU_EXACT_MAX_TOTAL`).
    Exact,
    /// Normal approximation with tie and continuity correction.
    Normal,
}

/// Result of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// `U_x`: pairs with `x_i > y_j`, ties counting one half (`R_x - n(n+1)/2`).
    pub u: f64,
    /// Standardised statistic `(U_x - nm/2 -+ 1/2) / sigma` (continuity-corrected toward 0,
    /// tie-corrected `sigma`); 0 when `sigma` is 0. Positive when `x` tends to be larger.
    pub z: f64,
    /// Two-sided p-value, in `[0, 1]`.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: MwuMethod,
    /// Whether the pooled sample had tied values.
    pub ties: bool,
}

/// Two-sided Mann-Whitney U test of `x` against `y` (H0: both come from the same distribution).
///
/// Ranks the pooled sample (midranks for ties), `R_x` = rank sum of `x`, and
///
/// ```text
/// U_x     = R_x - n(n+1)/2
/// mu      = n m / 2
/// sigma^2 = n m / 12 * ((N + 1) - sum_t (t^3 - t) / (N (N - 1)))   N = n + m, t = tie-group sizes
/// z       = (U_x - mu - sign(U_x - mu) / 2) / sigma                (0 if |U_x - mu| <= 1/2)
/// p       = min(1, 2 * normal_sf(|z|))                               (method Normal)
/// ```
///
/// Without ties and with `n + m <= MWU_EXACT_MAX_TOTAL`, the p-value is exact instead:
/// `p = min(1, 2 P(U >= max(U_x, U_y)))` from the null distribution of `U` (method Exact). This
/// matches `scipy.stats.mannwhitneyu` (`method="exact"` and `method="asymptotic"`).
///
/// Returns `None` if either sample is empty or holds a non-finite value.
/// Cost: O(N log N) for the ranks, plus O(n^2 m^2) (bounded, see [`MWU_EXACT_MAX_TOTAL`]) for
/// the exact distribution.
#[must_use]
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let n = x.len() as f64;
    let m = y.len() as f64;
    let total = n + m;

    let mut pooled: Vec<(f64, bool)> = x
        .iter()
        // `+ 0.0` turns -0.0 into 0.0 so that `total_cmp` groups equal values.
        .map(|&v| (v + 0.0, true))
        .chain(y.iter().map(|&v| (v + 0.0, false)))
        .collect();
    pooled.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));

    // Midranks: a tie group occupying 1-based ranks start+1 ..= end gets (start + 1 + end) / 2.
    let mut rank_sum_x = 0.0;
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < pooled.len() {
        let value = pooled.get(start).map_or(0.0, |p| p.0);
        let end = pooled.get(start..).map_or(0, |rest| {
            rest.iter()
                .take_while(|p| p.0.total_cmp(&value) == Ordering::Equal)
                .count()
        }) + start;
        let group = pooled.get(start..end).unwrap_or_default();
        let t = group.len() as f64;
        let midrank = (start + 1 + end) as f64 / 2.0;
        rank_sum_x += midrank * group.iter().filter(|p| p.1).count() as f64;
        tie_term += t * t * t - t;
        start = end.max(start + 1);
    }
    let ties = tie_term > 0.0;

    let u = rank_sum_x - n * (n + 1.0) / 2.0;
    let mu = n * m / 2.0;
    let variance = n * m / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    let sigma = variance.max(0.0).sqrt();
    let deviation = u - mu;
    let z = if sigma > 0.0 {
        let corrected = (deviation.abs() - 0.5).max(0.0);
        corrected.copysign(deviation) / sigma
    } else {
        0.0
    };

    if !ties && x.len() + y.len() <= MWU_EXACT_MAX_TOTAL {
        let pmf = u_null_pmf_kept(x.len(), y.len());
        let u_max = u.max(n * m - u);
        // U is an integer without ties; round away representation noise before indexing.
        let from = u_max.round() as usize;
        let upper_tail: f64 = pmf.get(from..).map_or(0.0, |t| t.iter().sum());
        return Some(MannWhitney {
            u,
            z,
            p_value: (2.0 * upper_tail).min(1.0),
            method: MwuMethod::Exact,
            ties,
        });
    }

    let p_value = if sigma > 0.0 {
        (2.0 * normal_sf(z.abs())).min(1.0)
    } else {
        1.0
    };
    Some(MannWhitney {
        u,
        z,
        p_value,
        method: MwuMethod::Normal,
        ties,
    })
}

/// [`u_null_pmf`], computed once per pair of sizes and kept for the process: a comparison of
/// 1,000 benchmarks of 20 samples asks for the same distribution 2,000 times, and computing it
/// was most of the comparison's time. Sizes are at most [`MWU_EXACT_MAX_TOTAL`] together, so at
/// most a few thousand distributions are ever kept.
fn u_null_pmf_kept(n: usize, m: usize) -> std::sync::Arc<[f64]> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    type Distributions = HashMap<(usize, usize), Arc<[f64]>>;
    static KEPT: OnceLock<Mutex<Distributions>> = OnceLock::new();
    let kept = KEPT.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(pmf) = kept.lock().ok().and_then(|k| k.get(&(n, m)).cloned()) {
        return pmf;
    }
    let pmf: Arc<[f64]> = u_null_pmf(n, m).into();
    if n + m <= MWU_EXACT_MAX_TOTAL
        && let Ok(mut k) = kept.lock()
    {
        k.insert((n, m), Arc::clone(&pmf));
    }
    pmf
}

/// Null distribution of the Mann-Whitney `U` for sample sizes `n` and `m` (no ties):
/// `pmf[u] = P(U = u)` for `u = 0 ..= n m`.
///
/// Counts satisfy `c(i, j; u) = c(i - 1, j; u - j) + c(i, j - 1; u)` (is the largest pooled value
/// an `x` or a `y`?), with `c(i, 0; 0) = c(0, j; 0) = 1`; every term is a non-negative integer at
/// most `C(n + m, n)`, so the recursion has no cancellation. Dividing by `C(n + m, n)` gives the
/// probabilities. Cost: O(n^2 m^2 / 4) additions, O(n m^2) memory.
fn u_null_pmf(n: usize, m: usize) -> Vec<f64> {
    // prev[j] = counts for (i - 1, j); cur[j] = counts for (i, j), each of length (i j + 1).
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        cur.push(vec![1.0]);
        for j in 1..=m {
            let mut counts = vec![0.0; i * j + 1];
            // Largest value is an x: it beats all j y's, so U grows by j.
            if let Some(from_prev) = prev.get(j) {
                for (u, &c) in from_prev.iter().enumerate() {
                    if let Some(slot) = counts.get_mut(u + j) {
                        *slot += c;
                    }
                }
            }
            // Largest value is a y: U is unchanged.
            if let Some(from_left) = cur.get(j - 1) {
                for (slot, &c) in counts.iter_mut().zip(from_left) {
                    *slot += c;
                }
            }
            cur.push(counts);
        }
        prev = cur;
    }
    let counts = prev.pop().unwrap_or_else(|| vec![1.0]);
    let total: f64 = counts.iter().sum();
    counts.into_iter().map(|c| c / total).collect()
}

// ---------------------------------------------------------------------------------------------
// Hodges-Lehmann shift and the Moses confidence interval
// ---------------------------------------------------------------------------------------------

/// Hodges-Lehmann estimate of a location shift with its Moses confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    /// Median of the `n m` pairwise differences `y_j - x_i`.
    pub estimate: f64,
    /// Lower confidence bound: the `k`-th smallest difference.
    pub lower: f64,
    /// Upper confidence bound: the `k`-th largest difference.
    pub upper: f64,
    /// The order-statistic index `k` (1-based) of the bounds.
    pub k: usize,
    /// Coverage actually achieved, `1 - 2 P(U <= k - 1)`: at least the requested confidence,
    /// except when the samples are too small for it (then `k = 1` and this is lower).
    pub coverage: f64,
    /// Whether `k` came from the exact null distribution of `U` (else: normal approximation).
    pub exact: bool,
    /// Whether a sample larger than [`HL_MAX_SAMPLES`] was thinned to that many quantiles.
    pub thinned: bool,
}

/// Largest sample size [`hodges_lehmann`] uses as is. A larger sample is replaced by this many
/// evenly spaced type-7 quantiles (`q = i / (HL_MAX_SAMPLES - 1)`), which keeps its shape and
/// bounds the pairwise differences at `HL_MAX_SAMPLES^2` = 4 million (32 MB, some 20 ms). The
/// interval is then computed for the thinned sizes, so it is slightly wider than for the full
/// samples.
pub const HL_MAX_SAMPLES: usize = 2000;

/// `sample` itself, or [`HL_MAX_SAMPLES`] evenly spaced quantiles of it when it is larger.
fn thin(sample: &[f64]) -> Option<std::borrow::Cow<'_, [f64]>> {
    if sample.len() <= HL_MAX_SAMPLES {
        return Some(std::borrow::Cow::Borrowed(sample));
    }
    let sorted = sorted_copy(sample)?;
    let last = (HL_MAX_SAMPLES - 1) as f64;
    (0..HL_MAX_SAMPLES)
        .map(|i| quantile_sorted(&sorted, i as f64 / last))
        .collect::<Option<Vec<f64>>>()
        .map(std::borrow::Cow::Owned)
}

/// Hodges-Lehmann estimate of the shift of `y` relative to `x`, with the distribution-free
/// (Moses) confidence interval at level `confidence` (e.g. 0.95).
///
/// With `D(1) <= ... <= D(N)` the `N = n m` sorted differences `y_j - x_i`:
///
/// ```text
/// estimate = median(D)
/// [lower, upper] = [D(k), D(N + 1 - k)]
/// k = the largest integer with P(U <= k - 1) <= (1 - confidence) / 2 under H0
///   exact:  from the null distribution of U        (n + m <= MWU_EXACT_MAX_TOTAL)
///   normal: k = floor(n m / 2 - z sqrt(n m (n + m + 1) / 12) + 1/2), z = Phi^-1((1 + confidence) / 2)
/// k is clamped to [1, ceil(N / 2)].
/// ```
///
/// The interval inverts the Mann-Whitney test: a shift `d` lies inside iff the test of `x`
/// against `y - d` does not reject at level `1 - confidence`. Apply it to log values to get a
/// log-ratio: `exp(estimate)` is then the ratio of `y` to `x`.
///
/// Cost: O(n m) time and one O(n m) scratch buffer; the three order statistics are found with
/// `select_nth_unstable` (expected linear), never a full sort. Samples larger than
/// [`HL_MAX_SAMPLES`] are thinned first, which bounds both. Returns `None` if either sample is
/// empty or holds a non-finite value.
#[must_use]
pub fn hodges_lehmann(x: &[f64], y: &[f64], confidence: f64) -> Option<Shift> {
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let thinned = x.len() > HL_MAX_SAMPLES || y.len() > HL_MAX_SAMPLES;
    let (x, y) = (thin(x)?, thin(y)?);
    let (x, y) = (x.as_ref(), y.as_ref());
    let (n, m) = (x.len(), y.len());
    let pairs = n.checked_mul(m)?;
    let alpha_half = (1.0 - confidence) / 2.0;

    let max_k = pairs.div_ceil(2);
    let (k, coverage, exact) = if n + m <= MWU_EXACT_MAX_TOTAL {
        let pmf = u_null_pmf_kept(n, m);
        // Largest k with P(U <= k - 1) <= alpha/2.
        let mut cumulative = 0.0;
        let mut k = 0;
        for &p in pmf.iter() {
            if cumulative + p > alpha_half {
                break;
            }
            cumulative += p;
            k += 1;
        }
        let k = k.clamp(1, max_k);
        let below: f64 = pmf.iter().take(k).sum();
        (k, 1.0 - 2.0 * below, true)
    } else {
        let (nf, mf) = (n as f64, m as f64);
        let mean = nf * mf / 2.0;
        let sigma = (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
        let z = normal_quantile(1.0 - alpha_half);
        let raw = (mean - z * sigma + 0.5).floor();
        // A NaN or negative `raw` saturates to 0 and is clamped to 1.
        let k = (raw as usize).clamp(1, max_k);
        let coverage = 1.0 - 2.0 * normal_cdf((k as f64 - 0.5 - mean) / sigma);
        (k, coverage, false)
    };

    let mut diffs: Vec<f64> = Vec::with_capacity(pairs);
    for &b in y {
        diffs.extend(x.iter().map(|&a| b - a));
    }
    let (estimate, lower, upper) = order_statistics(&mut diffs, k)?;
    Some(Shift {
        estimate,
        lower,
        upper,
        k,
        coverage,
        exact,
        thinned,
    })
}

/// Median, `k`-th smallest and `k`-th largest of `d` (1-based `k <= ceil(N / 2)`), in expected
/// linear time: one selection for the (lower) middle, then selections in its two halves.
fn order_statistics(d: &mut [f64], k: usize) -> Option<(f64, f64, f64)> {
    let len = d.len();
    if len == 0 || k == 0 || k > len.div_ceil(2) {
        return None;
    }
    let mid = (len - 1) / 2; // lower middle (0-based)
    let (left, mid_value, right) = d.select_nth_unstable_by(mid, f64::total_cmp);
    let mid_value = *mid_value;
    let median = if len % 2 == 1 {
        mid_value
    } else {
        // The upper middle is the smallest value above the lower middle.
        let upper_mid = right.iter().copied().min_by(f64::total_cmp)?;
        (mid_value + upper_mid) / 2.0
    };
    // 0-based indices k - 1 <= mid and len - k >= mid.
    let lo_index = k - 1;
    let lower = if lo_index == mid {
        mid_value
    } else {
        *left.select_nth_unstable_by(lo_index, f64::total_cmp).1
    };
    let hi_index = len - k;
    let upper = if hi_index == mid {
        mid_value
    } else {
        *right
            .select_nth_unstable_by(hi_index - mid - 1, f64::total_cmp)
            .1
    };
    Some((median, lower, upper))
}

// ---------------------------------------------------------------------------------------------
// Multiple testing
// ---------------------------------------------------------------------------------------------

/// Indices of `p` in ascending order of p-value (ties keep input order).
fn ascending_order(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| {
        let pa = p.get(a).copied().unwrap_or(f64::NAN);
        let pb = p.get(b).copied().unwrap_or(f64::NAN);
        pa.total_cmp(&pb).then(a.cmp(&b))
    });
    order
}

/// Holm's step-down adjusted p-values (controls the family-wise error rate).
///
/// With `p_(1) <= ... <= p_(m)` sorted ascending:
/// `p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`. Returned in input order; monotone in the
/// raw p-values and capped at 1 (R's `p.adjust(p, "holm")`). A NaN input sorts last and comes
/// out as 1. Inputs are expected in `[0, 1]`.
#[must_use]
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len() as f64;
    let mut adjusted = vec![1.0; p.len()];
    let mut running_max: f64 = 0.0;
    for (rank, &index) in ascending_order(p).iter().enumerate() {
        let raw = p.get(index).copied().unwrap_or(1.0);
        let value = ((m - rank as f64) * raw).min(1.0);
        running_max = running_max.max(value);
        if let Some(slot) = adjusted.get_mut(index) {
            *slot = running_max;
        }
    }
    adjusted
}

/// Benjamini-Hochberg adjusted p-values ("q-values"; controls the false discovery rate).
///
/// With `p_(1) <= ... <= p_(m)` sorted ascending:
/// `q_(i) = min_{j >= i} min(1, m p_(j) / j)`. Returned in input order; monotone and capped at 1
/// (R's `p.adjust(p, "BH")`). A NaN input sorts last and comes out as 1.
#[must_use]
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len() as f64;
    let mut adjusted = vec![1.0; p.len()];
    let mut running_min: f64 = 1.0;
    for (rank, &index) in ascending_order(p).iter().enumerate().rev() {
        let raw = p.get(index).copied().unwrap_or(1.0);
        let value = (m * raw / (rank as f64 + 1.0)).min(1.0);
        running_min = running_min.min(value);
        if let Some(slot) = adjusted.get_mut(index) {
            *slot = running_min;
        }
    }
    adjusted
}

// ---------------------------------------------------------------------------------------------
// Geometric mean of ratios
// ---------------------------------------------------------------------------------------------

/// Number of bootstrap resamples of [`geometric_mean_ratio`].
pub const GEOMEAN_BOOTSTRAP_RESAMPLES: usize = 2000;

/// Seed of the SplitMix64 generator of [`geometric_mean_ratio`]: a fixed seed makes the interval
/// reproducible.
pub const GEOMEAN_BOOTSTRAP_SEED: u64 = 0x5EED_B007_57A7_5EED;

/// Geometric mean of ratios, with a percentile-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GeomeanRatio {
    /// `exp(mean(ln r_i))`.
    pub ratio: f64,
    /// Lower bound of the bootstrap interval (`None` with fewer than 2 ratios).
    pub lower: Option<f64>,
    /// Upper bound of the bootstrap interval (`None` with fewer than 2 ratios).
    pub upper: Option<f64>,
    /// How many ratios went in.
    pub n: usize,
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator, for the bootstrap
/// and the interleaved schedule, whose results are then pure functions of their seed.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-enough index in `0..len` (multiply-shift; bias below `len / 2^64`).
    pub fn below(&mut self, len: usize) -> usize {
        ((u128::from(self.next_u64()) * len as u128) >> 64) as usize
    }
}

/// Geometric mean of positive ratios with a percentile-bootstrap confidence interval.
///
/// ```text
/// ratio = exp( (1/k) sum ln r_i )
/// interval: draw GEOMEAN_BOOTSTRAP_RESAMPLES resamples of k log-ratios with replacement
///           (SplitMix64 seeded with GEOMEAN_BOOTSTRAP_SEED), take the mean of each, and
///           exponentiate the type-7 quantiles at (1 - confidence)/2 and (1 + confidence)/2.
/// ```
///
/// The interval describes how much the summary depends on which benchmarks are in the suite;
/// it is absent for fewer than two ratios. Returns `None` for no ratios or any ratio that is not
/// finite and positive. Cost: O(`GEOMEAN_BOOTSTRAP_RESAMPLES` k).
#[must_use]
pub fn geometric_mean_ratio(ratios: &[f64], confidence: f64) -> Option<GeomeanRatio> {
    if ratios.is_empty() || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let k = logs.len();
    let mean = logs.iter().sum::<f64>() / k as f64;
    let (lower, upper) = if k >= 2 {
        let mut rng = SplitMix64(GEOMEAN_BOOTSTRAP_SEED);
        let mut means: Vec<f64> = (0..GEOMEAN_BOOTSTRAP_RESAMPLES)
            .map(|_| {
                let sum: f64 = (0..k)
                    .map(|_| logs.get(rng.below(k)).copied().unwrap_or(mean))
                    .sum();
                sum / k as f64
            })
            .collect();
        means.sort_unstable_by(f64::total_cmp);
        let tail = ((1.0 - confidence) / 2.0).clamp(0.0, 0.5);
        (
            quantile_sorted(&means, tail).map(f64::exp),
            quantile_sorted(&means, 1.0 - tail).map(f64::exp),
        )
    } else {
        (None, None)
    };
    Some(GeomeanRatio {
        ratio: mean.exp(),
        lower,
        upper,
        n: k,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {

    #[test]
    fn median_interval_is_made_of_order_statistics_around_the_median() {
        let sorted: Vec<f64> = (1..=25).map(f64::from).collect();
        let (lo, hi) = median_interval_sorted(&sorted, 0.95).unwrap_or((f64::NAN, f64::NAN));
        // n = 25: ranks 25/2 -/+ 1.96 * 5 / 2 = 7.6 and 17.4, i.e. x(7) and x(19).
        assert_eq!((lo, hi), (7.0, 19.0));
        assert!(lo <= 13.0 && hi >= 13.0);
        // Tiny samples widen to the extremes; bad input gives nothing.
        assert_eq!(median_interval_sorted(&[2.0, 5.0], 0.95), Some((2.0, 5.0)));
        assert_eq!(median_interval_sorted(&[4.0], 0.95), Some((4.0, 4.0)));
        assert_eq!(median_interval_sorted(&[], 0.95), None);
        assert_eq!(median_interval_sorted(&[1.0], 1.0), None);
    }
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[test]
    fn type7_quantiles() {
        let data = [7.0, 1.0, 3.0, 5.0];
        // Sorted 1 3 5 7: h = 3q.
        assert_eq!(quantile(&data, 0.0), Some(1.0));
        assert_eq!(quantile(&data, 1.0), Some(7.0));
        assert_eq!(median(&data), Some(4.0));
        assert_eq!(quantile(&data, 0.25), Some(2.5)); // h = 0.75
        assert_eq!(quantile(&data, 0.75), Some(5.5)); // h = 2.25
        assert_eq!(iqr(&data), Some(3.0));
        assert_eq!(median(&[2.0, 9.0, 4.0]), Some(4.0));
        assert_eq!(quantile(&[42.0], 0.3), Some(42.0));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[1.0, f64::NAN], 0.5), None);
        // numpy.percentile(range(1, 11), [25, 75]) == [3.25, 7.75]
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let q = quartiles(&ten).unwrap();
        assert!(close(q.q1, 3.25, 1e-12) && close(q.q3, 7.75, 1e-12));
        assert!(close(q.median, 5.5, 1e-12));
    }

    #[test]
    fn erfc_matches_reference_values() {
        // Python math.erfc.
        let cases = [
            (0.0, 1.0),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_266),
            (3.0, 2.209_049_699_858_544e-5),
            (5.0, 1.537_459_794_428_034_8e-12),
            (10.0, 2.088_487_583_762_545e-45),
            (-1.0, 1.842_700_792_949_715),
        ];
        for (i, (x, want)) in cases.into_iter().enumerate() {
            let got = erfc(x);
            assert!(
                close(got, want, ERFC_MAX_RELATIVE_ERROR),
                "case {i}: erfc({x}) = {got}, want {want}"
            );
        }
        assert!(close(normal_cdf(1.959_963_984_540_054), 0.975, 1e-7));
        assert!(close(normal_sf(1.959_963_984_540_054), 0.025, 1e-6));
        assert!(erfc(f64::NAN).is_nan());
    }

    #[test]
    fn normal_quantile_matches_reference_values() {
        // Python statistics.NormalDist().inv_cdf.
        let cases = [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.995, 2.575_829_303_548_900_4),
            (0.01, -2.326_347_874_040_841),
            (1e-10, -6.361_340_902_404_056),
        ];
        for (i, (p, want)) in cases.into_iter().enumerate() {
            let got = normal_quantile(p);
            assert!(
                (got - want).abs() <= 1e-8 * want.abs().max(1.0),
                "case {i}: quantile({p}) = {got}, want {want}"
            );
        }
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(1.5).is_nan());
    }

    #[test]
    fn kept_distributions_are_the_computed_ones() {
        for (n, m) in [(5, 5), (20, 20), (3, 7), (7, 3)] {
            assert_eq!(&*u_null_pmf_kept(n, m), u_null_pmf(n, m).as_slice());
            assert_eq!(&*u_null_pmf_kept(n, m), u_null_pmf(n, m).as_slice(), "kept");
        }
    }

    #[test]
    fn mann_whitney_scipy_example() {
        // scipy.stats.mannwhitneyu docs: males vs females.
        let x = [19.0, 22.0, 16.0, 29.0, 24.0];
        let y = [20.0, 11.0, 17.0, 12.0];
        let r = mann_whitney_u(&x, &y).unwrap();
        assert_eq!(r.u, 17.0);
        assert_eq!(r.method, MwuMethod::Exact);
        // Exact: 2 * 7 / 126.
        assert!(close(r.p_value, 0.111_111_111_111_111_1, 1e-12));
        // Asymptotic p of scipy: 0.11134688653314041, z = 6.5 / sqrt(50/3).
        assert!(close(r.z, 6.5 / (50.0_f64 / 3.0).sqrt(), 1e-12));
        assert!(close(
            2.0 * normal_sf(r.z),
            0.111_346_886_533_140_41,
            ERFC_MAX_RELATIVE_ERROR * 2.0
        ));
        // Swapping the samples mirrors U and z, keeps p.
        let s = mann_whitney_u(&y, &x).unwrap();
        assert_eq!(s.u, 3.0);
        assert!(close(s.z, -r.z, 1e-12));
        assert!(close(s.p_value, r.p_value, 1e-12));
    }

    #[test]
    fn mann_whitney_with_ties_uses_corrected_normal() {
        // Hand computation: pooled 1 2 2 3 3 3 4 5 (x = 1 2 3 3, y = 2 3 4 5).
        // Midranks: 1 -> 1, 2 -> 2.5, 3 -> 5, 4 -> 7, 5 -> 8.  R_x = 1 + 2.5 + 5 + 5 = 13.5.
        // U_x = 13.5 - 10 = 3.5, mu = 8, ties: t = 2, 3 -> sum(t^3 - t) = 6 + 24 = 30.
        // sigma^2 = 16/12 * (9 - 30/56), z = -(4.5 - 0.5)/sigma.
        let x = [1.0, 2.0, 3.0, 3.0];
        let y = [2.0, 3.0, 4.0, 5.0];
        let r = mann_whitney_u(&x, &y).unwrap();
        assert_eq!(r.method, MwuMethod::Normal);
        assert!(r.ties);
        assert_eq!(r.u, 3.5);
        let sigma = (16.0 / 12.0 * (9.0 - 30.0 / 56.0_f64)).sqrt();
        assert!(close(r.z, -4.0 / sigma, 1e-12));
        // scipy asymptotic p-value for these data: 2 * sf(4 / sigma).
        assert!(close(r.p_value, 0.233_778_794_184_047_84, 1e-6));
    }

    #[test]
    fn mann_whitney_large_samples_and_degenerate_input() {
        // Completely separated samples of 30: exact p = 2 / C(60, 30) is far below 1e-16.
        let x: Vec<f64> = (0..30).map(f64::from).collect();
        let y: Vec<f64> = (100..130).map(f64::from).collect();
        let r = mann_whitney_u(&x, &y).unwrap();
        assert_eq!(r.method, MwuMethod::Normal); // n + m = 60 > MWU_EXACT_MAX_TOTAL
        assert_eq!(r.u, 0.0);
        assert!(r.p_value < 1e-9);
        // Identical constant samples: no evidence at all.
        let c = mann_whitney_u(&[1.0; 10], &[1.0; 12]).unwrap();
        assert_eq!((c.z, c.p_value), (0.0, 1.0));
        assert!(mann_whitney_u(&[], &[1.0]).is_none());
        assert!(mann_whitney_u(&[f64::INFINITY], &[1.0]).is_none());
    }

    #[test]
    fn exact_null_distribution() {
        // n = m = 5: C(10, 5) = 252 arrangements, counts 1 1 2 3 5 7 9 11 14 16 18 19 20 20 ...
        let pmf = u_null_pmf(5, 5);
        assert_eq!(pmf.len(), 26);
        let counts: Vec<f64> = pmf.iter().map(|p| (p * 252.0).round()).collect();
        assert_eq!(
            counts.get(..13).unwrap(),
            &[
                1.0, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0, 11.0, 14.0, 16.0, 18.0, 19.0, 20.0
            ]
        );
        assert!(close(pmf.iter().sum::<f64>(), 1.0, 1e-12));
        // Symmetry P(U = u) = P(U = nm - u), also for unequal sizes.
        let pmf = u_null_pmf(3, 7);
        for u in 0..=21 {
            assert!(close(pmf[u], pmf[21 - u], 1e-12), "u = {u}");
        }
    }

    #[test]
    fn hodges_lehmann_exact_interval() {
        // y = x + 10. Differences 10 + (j - i): 6 (1), 7 (2), 8 (3), ..., 14 (1).
        // n = m = 5: P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252, so k = 3:
        // [D(3), D(23)] = [7, 13], coverage 1 - 8/252.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [11.0, 12.0, 13.0, 14.0, 15.0];
        let s = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert_eq!(s.estimate, 10.0);
        assert_eq!((s.lower, s.upper, s.k), (7.0, 13.0, 3));
        assert!(s.exact);
        assert!(close(s.coverage, 1.0 - 8.0 / 252.0, 1e-12));
        // The estimate is antisymmetric.
        let r = hodges_lehmann(&y, &x, 0.95).unwrap();
        assert_eq!((r.estimate, r.lower, r.upper), (-10.0, -13.0, -7.0));
    }

    #[test]
    fn hodges_lehmann_normal_interval_and_even_median() {
        // Two samples of 40 with a shift of 3: every difference is 3 + (j - i) / 8 for i, j in 0..40.
        let x: Vec<f64> = (0..40).map(|i| f64::from(i) / 8.0).collect();
        let y: Vec<f64> = x.iter().map(|v| v + 3.0).collect();
        let s = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert!(!s.exact);
        assert!(close(s.estimate, 3.0, 1e-12));
        // k = floor(800 - 1.959964 * sqrt(1600 * 81 / 12) + 0.5) = floor(596.81) = 596.
        assert_eq!(s.k, 596);
        assert!(s.lower < 3.0 && s.upper > 3.0);
        assert!(close(s.lower - 3.0, -(s.upper - 3.0), 1e-12));
        assert!(s.coverage >= 0.95 && s.coverage < 0.952);
        // Even number of differences with distinct middles: median averages them.
        let e = hodges_lehmann(&[0.0], &[1.0, 2.0], 0.5).unwrap();
        assert_eq!(e.estimate, 1.5);
        // Tiny samples cannot reach 95%: k is clamped to 1 and the coverage says so.
        let t = hodges_lehmann(&[0.0, 1.0], &[5.0, 6.0], 0.95).unwrap();
        assert_eq!((t.k, t.lower, t.upper), (1, 4.0, 6.0));
        assert!(t.coverage < 0.95);
        assert!(hodges_lehmann(&[], &[1.0], 0.95).is_none());
    }

    #[test]
    fn hodges_lehmann_thins_huge_samples() {
        // 2100 base values thinned to 2000 quantiles, against 41 head values.
        let x: Vec<f64> = (0..2100).map(|i| f64::from(i) / 2099.0).collect();
        let y: Vec<f64> = (0..41).map(|i| f64::from(i) / 40.0 + 0.25).collect();
        let s = hodges_lehmann(&x, &y, 0.95).unwrap();
        assert!(s.thinned && !s.exact);
        assert!((s.estimate - 0.25).abs() < 1e-3, "{s:?}");
        assert!(s.lower < 0.25 && s.upper > 0.25);
        assert!(!hodges_lehmann(&x[..100], &y, 0.95).unwrap().thinned);
    }

    #[test]
    fn order_statistics_match_a_full_sort() {
        let mut state = 12345_u64;
        let mut data: Vec<f64> = (0..1001)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                (state >> 11) as f64
            })
            .collect();
        let mut sorted = data.clone();
        sorted.sort_by(f64::total_cmp);
        for k in [1, 2, 17, 500, 501] {
            let (med, lo, hi) = order_statistics(&mut data.clone(), k).unwrap();
            assert_eq!(med, sorted[500]);
            assert_eq!(lo, sorted[k - 1]);
            assert_eq!(hi, sorted[1001 - k]);
        }
        data.pop();
        let (med, lo, hi) = order_statistics(&mut data.clone(), 500).unwrap();
        sorted = data;
        sorted.sort_by(f64::total_cmp);
        assert_eq!(med, (sorted[499] + sorted[500]) / 2.0);
        assert_eq!((lo, hi), (sorted[499], sorted[500]));
        assert!(order_statistics(&mut [1.0, 2.0], 2).is_none());
    }

    #[test]
    fn holm_and_bh_textbook_values() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
        //    p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH")   = 0.02 0.04 0.04 0.02
        let p = [0.01, 0.04, 0.03, 0.005];
        let h = holm(&p);
        let b = benjamini_hochberg(&p);
        for (i, (got, want)) in h.iter().zip([0.03, 0.06, 0.06, 0.02]).enumerate() {
            assert!(close(*got, want, 1e-12), "holm {i}: {got} vs {want}");
        }
        for (i, (got, want)) in b.iter().zip([0.02, 0.04, 0.04, 0.02]).enumerate() {
            assert!(close(*got, want, 1e-12), "bh {i}: {got} vs {want}");
        }
        // R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") = 0.05 0.08 0.09 0.09 0.09; BH: all 0.05
        let p = [0.01, 0.02, 0.03, 0.04, 0.05];
        for (got, want) in holm(&p).iter().zip([0.05, 0.08, 0.09, 0.09, 0.09]) {
            assert!(close(*got, want, 1e-12));
        }
        for got in benjamini_hochberg(&p) {
            assert!(close(got, 0.05, 1e-12));
        }
        // Capped at 1, empty input.
        assert_eq!(holm(&[0.6, 0.7]), vec![1.0, 1.0]);
        assert_eq!(benjamini_hochberg(&[0.9, 0.95]), vec![0.95, 0.95]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn geometric_mean_of_ratios() {
        let g = geometric_mean_ratio(&[2.0, 0.5, 1.0], 0.95).unwrap();
        assert!(close(g.ratio, 1.0, 1e-12));
        let (lo, hi) = (g.lower.unwrap(), g.upper.unwrap());
        assert!(lo < 1.0 && hi > 1.0 && lo >= 0.5 && hi <= 2.0);
        // Deterministic: same input, same interval.
        assert_eq!(geometric_mean_ratio(&[2.0, 0.5, 1.0], 0.95), Some(g));
        let one = geometric_mean_ratio(&[1.1], 0.95).unwrap();
        assert!(close(one.ratio, 1.1, 1e-12));
        assert_eq!((one.lower, one.upper), (None, None));
        assert!(geometric_mean_ratio(&[], 0.95).is_none());
        assert!(geometric_mean_ratio(&[1.0, 0.0], 0.95).is_none());
    }
}

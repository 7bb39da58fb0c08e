//! Change points: where a benchmark's history steps up or down (pure).
//!
//! One detector, shared by the noise model ([`crate::noise`], which must not learn a real step
//! as noise) and the trend page of `bench-web` (which marks the runs at which a benchmark's
//! level changed, so a step that a table hides is found without squinting). It is binary
//! segmentation with a mean-shift cost on the logarithm of the headline estimates, so shifts
//! are relative (a 10% step is a 10% step at 1 ns and at 1 s):
//!
//! ```text
//! x_i = ln(v_i)
//!
//! segment [a, b), split at k, left L = [a, k), right R = [k, b), n_L, n_R >= MIN_SEGMENT:
//!   gain(k)  = n_L n_R / (n_L + n_R) * (mean_R - mean_L)^2      (drop in squared error)
//!   k*       = argmax gain(k)                                     (prefix sums: O(b - a))
//!   shift    = exp(mean_R - mean_L) - 1                           (relative change of level)
//!   s^2      = (SSE_L + SSE_R) / (n_L + n_R - 2)                  (pooled within-segment var.)
//!   t        = |mean_R - mean_L| / sqrt(s^2 (1/n_L + 1/n_R))
//!
//! accept k* iff |shift| * 100 >= max(MIN_SHIFT_PCT, noise floor)  and  t >= MIN_T,
//! then recurse into [a, k*) and [k*, b).
//! ```
//!
//! Finally a pruning pass re-checks every accepted point against its *final* neighbouring
//! segments (a split found early may be explained by later, finer ones) and drops the weakest
//! failing point until all pass. The reported levels are the geometric means of the two
//! neighbouring segments.
//!
//! - The **noise floor** argument is the benchmark's own run-to-run noise, so a noisy
//!   benchmark needs a bigger step than a quiet one. The caller chooses it; the noise model
//!   passes a preliminary robust estimate from the median consecutive change
//!   ([`crate::noise::preliminary_floor_pct`]), because the final floor is computed from the
//!   segments this detector finds.
//! - `MIN_T` is high because `k*` is the best of many candidate splits (the maximum of many
//!   t statistics); a clean step has an enormous `t`, drift and noise do not.
//! - A series with a non-positive or non-finite value has no logarithm; no change point is
//!   reported for it.
//!
//! Cost: O(n log n) for balanced splits, O(n²) in the worst case; n is the number of runs.

/// Fewest points on each side of a change point.
pub const MIN_SEGMENT: usize = 3;
/// Smallest relative step, in percent, that counts even for a perfectly quiet benchmark.
pub const MIN_SHIFT_PCT: f64 = 1.0;
/// Smallest standardised difference of the two segments' mean log values.
pub const MIN_T: f64 = 5.0;

/// One detected change of level.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChangePoint {
    /// Index of the first point at the new level.
    pub index: usize,
    /// Level before (geometric mean of the segment before).
    pub before: f64,
    /// Level after (geometric mean of the segment after).
    pub after: f64,
    /// `after / before - 1`, in percent.
    pub shift_pct: f64,
}

/// Running sums of a series and of its squares, for O(1) segment statistics.
struct Prefix {
    sum: Vec<f64>,
    sum_sq: Vec<f64>,
}

impl Prefix {
    fn new(x: &[f64]) -> Self {
        let mut sum = Vec::with_capacity(x.len() + 1);
        let mut sum_sq = Vec::with_capacity(x.len() + 1);
        let (mut s, mut q) = (0.0, 0.0);
        sum.push(s);
        sum_sq.push(q);
        for v in x {
            s += v;
            q += v * v;
            sum.push(s);
            sum_sq.push(q);
        }
        Self { sum, sum_sq }
    }

    /// Count, mean and sum of squared deviations of `[a, b)`.
    fn stats(&self, a: usize, b: usize) -> (f64, f64, f64) {
        let get = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0);
        #[expect(clippy::cast_precision_loss, reason = "run counts are far below 2^52")]
        let n = (b - a) as f64;
        if n <= 0.0 {
            return (0.0, 0.0, 0.0);
        }
        let s = get(&self.sum, b) - get(&self.sum, a);
        let q = get(&self.sum_sq, b) - get(&self.sum_sq, a);
        let mean = s / n;
        (n, mean, (q - s * mean).max(0.0))
    }
}

/// The test of a split of `[a, b)` at `k`: `(shift_pct, t)`.
fn test_split(p: &Prefix, a: usize, k: usize, b: usize) -> (f64, f64) {
    let (n_l, mean_l, sse_l) = p.stats(a, k);
    let (n_r, mean_r, sse_r) = p.stats(k, b);
    let diff = mean_r - mean_l;
    let shift_pct = diff.exp_m1() * 100.0;
    let dof = n_l + n_r - 2.0;
    let var = if dof > 0.0 {
        (sse_l + sse_r) / dof
    } else {
        0.0
    };
    let se = (var * (1.0 / n_l + 1.0 / n_r)).sqrt();
    let t = if diff == 0.0 {
        0.0
    } else if se > 0.0 {
        diff.abs() / se
    } else {
        f64::INFINITY
    };
    (shift_pct, t)
}

fn accepted(shift_pct: f64, t: f64, limit_pct: f64) -> bool {
    shift_pct.abs() >= limit_pct && t >= MIN_T
}

fn segment(p: &Prefix, a: usize, b: usize, limit_pct: f64, out: &mut Vec<usize>) {
    if b - a < 2 * MIN_SEGMENT {
        return;
    }
    let (n, mean, _) = p.stats(a, b);
    let mut best: Option<(usize, f64)> = None;
    for k in a + MIN_SEGMENT..=b - MIN_SEGMENT {
        let (n_l, mean_l, _) = p.stats(a, k);
        let n_r = n - n_l;
        // mean_R from the whole and the left part: n mean = n_L mean_L + n_R mean_R.
        let mean_r = (n * mean - n_l * mean_l) / n_r;
        let gain = n_l * n_r / n * (mean_r - mean_l).powi(2);
        if best.is_none_or(|(_, g)| gain > g) {
            best = Some((k, gain));
        }
    }
    let Some((k, _)) = best else {
        return;
    };
    let (shift_pct, t) = test_split(p, a, k, b);
    if accepted(shift_pct, t, limit_pct) {
        segment(p, a, k, limit_pct, out);
        out.push(k);
        segment(p, k, b, limit_pct, out);
    }
}

/// Detects change points in `values` (a benchmark's headline estimates in commit order), given
/// the benchmark's noise floor in percent. See the module docs for the rule.
#[must_use]
pub fn detect(values: &[f64], noise_floor_pct: f64) -> Vec<ChangePoint> {
    if values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Vec::new();
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let prefix = Prefix::new(&logs);
    let limit_pct = MIN_SHIFT_PCT.max(if noise_floor_pct.is_finite() {
        noise_floor_pct
    } else {
        0.0
    });
    let mut cuts = Vec::new();
    segment(&prefix, 0, logs.len(), limit_pct, &mut cuts);

    // Prune against the final neighbouring segments, weakest failure first.
    loop {
        let bounds = |i: usize, cuts: &[usize]| {
            let a = if i == 0 {
                0
            } else {
                cuts.get(i - 1).copied().unwrap_or(0)
            };
            let b = cuts.get(i + 1).copied().unwrap_or(logs.len());
            (a, b)
        };
        let weakest = cuts
            .iter()
            .enumerate()
            .filter_map(|(i, &k)| {
                let (a, b) = bounds(i, &cuts);
                let (shift, t) = test_split(&prefix, a, k, b);
                (!accepted(shift, t, limit_pct)).then_some((i, shift.abs()))
            })
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match weakest {
            Some((i, _)) => {
                cuts.remove(i);
            }
            None => break,
        }
    }

    cuts.iter()
        .enumerate()
        .map(|(i, &k)| {
            let a = if i == 0 {
                0
            } else {
                cuts.get(i - 1).copied().unwrap_or(0)
            };
            let b = cuts.get(i + 1).copied().unwrap_or(logs.len());
            let (_, mean_l, _) = prefix.stats(a, k);
            let (_, mean_r, _) = prefix.stats(k, b);
            ChangePoint {
                index: k,
                before: mean_l.exp(),
                after: mean_r.exp(),
                shift_pct: (mean_r - mean_l).exp_m1() * 100.0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic small noise: a fixed pattern within ±`amp` (relative).
    fn noisy(level: f64, n: usize, amp: f64, phase: usize) -> Vec<f64> {
        const PATTERN: [f64; 7] = [0.0, 0.6, -0.4, 1.0, -1.0, 0.3, -0.5];
        (0..n)
            .map(|i| level * (1.0 + amp * PATTERN[(i + phase) % PATTERN.len()]))
            .collect()
    }

    #[test]
    fn finds_one_clean_step() {
        let mut v = noisy(100.0, 20, 0.005, 0);
        v.extend(noisy(120.0, 20, 0.005, 3));
        let cps = detect(&v, 2.0);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 20);
        assert!((cps[0].shift_pct - 20.0).abs() < 0.5, "{cps:?}");
        assert!((cps[0].before - 100.0).abs() < 1.0);
    }

    #[test]
    fn finds_two_steps_in_both_directions() {
        let mut v = noisy(50.0, 15, 0.005, 0);
        v.extend(noisy(40.0, 15, 0.005, 2));
        v.extend(noisy(60.0, 15, 0.005, 5));
        let idx: Vec<usize> = detect(&v, 1.0).iter().map(|c| c.index).collect();
        assert_eq!(idx, vec![15, 30]);
    }

    #[test]
    fn ignores_noise_and_small_steps() {
        let flat = noisy(100.0, 60, 0.02, 0);
        assert!(detect(&flat, 2.0).is_empty(), "noise alone");
        // A 1.5% step on a benchmark whose noise floor is 5% is not a change.
        let mut small = noisy(100.0, 30, 0.001, 0);
        small.extend(noisy(101.5, 30, 0.001, 1));
        assert!(detect(&small, 5.0).is_empty());
        // ... but it is one on a benchmark with a 1% floor.
        assert_eq!(detect(&small, 1.0).len(), 1);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(detect(&[], 2.0).is_empty());
        assert!(detect(&[1.0, 2.0, 3.0], 2.0).is_empty(), "too short");
        assert!(detect(&[1.0, 1.0, 1.0, 0.0, 2.0, 2.0, 2.0], 2.0).is_empty());
        assert!(detect(&[1.0, 1.0, 1.0, f64::NAN, 2.0, 2.0], 2.0).is_empty());
        // Identical values within each side: zero variance, infinite t, still a step.
        let v = [3.0, 3.0, 3.0, 6.0, 6.0, 6.0];
        let cps = detect(&v, 2.0);
        assert_eq!(cps.len(), 1);
        assert!((cps[0].shift_pct - 100.0).abs() < 1e-9);
        assert!(detect(&[5.0; 12], 0.0).is_empty(), "constant");
    }
}

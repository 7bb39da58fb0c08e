//! Paired A/B analysis: the process is the unit of replication (pure).
//!
//! `bench-run ab` runs the base and the head bench executables alternately, one process per side
//! per round, in a balanced random order. Each process gives one value per benchmark (the median
//! of its own samples), so round `r` gives one **paired log-ratio**
//!
//! ```text
//! d_r = ln(head_r / base_r)
//! ```
//!
//! measured under the conditions of that round: drift, a neighbour's compile job or a CPU clock
//! change hit both sides of a round alike and cancel in `d_r`. Samples *within* one process are
//! not independent replicates (they share the process's code layout, heap placement and
//! neighbours), which is why the rounds, not the samples, carry the verdict.
//!
//! ```text
//! change    = exp(median(d)) - 1
//! interval  = [exp(d(k)) - 1, exp(d(n+1-k)) - 1]         order statistics of the sorted d
//! k         = the largest k >= 1 with P(B <= k - 1) <= (1 - confidence) / 2,  B ~ Binomial(n, 1/2)
//! coverage  = 1 - 2 P(B <= k - 1)
//! p         = min(1, 2 P(B >= max(n+, n-)))               exact two-sided sign test, n = n+ + n-
//! ```
//!
//! Both are distribution-free: they assume only that, with no code change, a round is as likely
//! to favour either side (which the random side order makes true), not that the noise is normal
//! or symmetric. A round disturbed by a burst of load moves one order statistic, not the median
//! or the interval (up to `k - 1` such rounds on each side are trimmed). Rounds with `d_r = 0`
//! count for neither side in the sign test.
//!
//! The p-values of a suite are corrected together (Holm by default, in [`crate::compare`]). A
//! sign test over `n` rounds cannot give a p-value below `2^(1-n)`, so with `M` benchmarks Holm
//! can only ever reach `alpha` if `M 2^(1-n) <= alpha`: [`rounds_needed`] gives the fewest rounds
//! for which it can, even with one round out of line.
//!
//! [`calibrate`] turns the rounds into claims about the settings themselves: it resamples the
//! rounds' residuals `d_r - median(d)` (what the rounds would look like with no change) and
//! reports how often the verdict rule would raise a false alarm, and the smallest change it
//! would catch 9 times in 10.

use crate::stats::{self, SplitMix64};
use serde::Serialize;

/// Fewest rounds `bench-run ab` runs by default, whatever the suite's size.
pub const DEFAULT_MIN_ROUNDS: usize = 10;
/// Most rounds [`rounds_needed`] proposes: beyond this, split the suite.
pub const MAX_DEFAULT_ROUNDS: usize = 40;
/// Resamples of [`calibrate`].
pub const CALIBRATION_RESAMPLES: usize = 1000;
/// Seed of [`calibrate`]'s resampling: a fixed seed makes the claims reproducible.
pub const CALIBRATION_SEED: u64 = 0xA1A1_CA11_B8A7_E5ED;
/// Share of resamples that must catch a change for [`calibrate`] to call it detectable.
pub const DETECTION_POWER: f64 = 0.9;
/// Largest change, in percent, [`calibrate`] searches for the smallest detectable one.
pub const MAX_DETECTABLE_PCT: f64 = 1000.0;

/// `ln P(B = k)` for `B ~ Binomial(n, 1/2)`, `k <= n`.
fn ln_binomial_half_pmf(n: usize, k: usize) -> f64 {
    // ln C(n, k) = sum over i < min(k, n-k) of ln((n - i) / (i + 1)): a sum of logs is exact
    // enough for the round counts met here and needs no gamma function.
    let k = k.min(n.saturating_sub(k));
    #[expect(clippy::cast_precision_loss, reason = "round counts are small")]
    let ln_choose: f64 = (0..k)
        .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum();
    #[expect(clippy::cast_precision_loss, reason = "round counts are small")]
    let n_ln2 = n as f64 * std::f64::consts::LN_2;
    ln_choose - n_ln2
}

/// `P(B <= k)` for `B ~ Binomial(n, 1/2)`, exact up to rounding. `k >= n` gives 1.
#[must_use]
pub fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    if k >= n {
        return 1.0;
    }
    (0..=k)
        .map(|i| ln_binomial_half_pmf(n, i).exp())
        .sum::<f64>()
        .min(1.0)
}

/// Exact two-sided sign test: `n_pos` rounds favour one side, `n_neg` the other (ties are left
/// out before calling). `1` when there is no round.
#[must_use]
pub fn sign_test_p(n_pos: usize, n_neg: usize) -> f64 {
    let n = n_pos + n_neg;
    if n == 0 {
        return 1.0;
    }
    // P(B >= m) = P(B <= n - m) by symmetry.
    let m = n_pos.max(n_neg);
    (2.0 * binomial_half_cdf(n, n - m)).min(1.0)
}

/// The 1-based rank `k` of the order-statistic interval `[x(k), x(n+1-k)]` for the median of
/// `n` values, with its coverage: the largest `k` with `P(B <= k-1) <= (1 - confidence)/2`,
/// at least 1 (then the interval is the whole range and covers `1 - 2^(1-n)`). `None` for
/// `n = 0` or a confidence outside (0, 1).
#[must_use]
pub fn median_interval_rank(n: usize, confidence: f64) -> Option<(usize, f64)> {
    if n == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    let mut k = 1;
    while k < n.div_ceil(2) && binomial_half_cdf(n, k) <= tail {
        k += 1;
    }
    let coverage = 1.0 - 2.0 * binomial_half_cdf(n, k - 1);
    Some((k, coverage))
}

/// Fewest rounds with which a suite of `family` benchmarks can reach `alpha` under Holm's
/// correction even when one round disagrees with the rest (`family * 2 (n + 1) / 2^n <=
/// alpha`), at least [`DEFAULT_MIN_ROUNDS`] and at most [`MAX_DEFAULT_ROUNDS`].
#[must_use]
pub fn rounds_needed(family: usize, alpha: f64) -> usize {
    let family = family.max(1);
    (DEFAULT_MIN_ROUNDS..MAX_DEFAULT_ROUNDS)
        .find(|&n| {
            #[expect(clippy::cast_precision_loss, reason = "suite sizes are small")]
            let worst = family as f64 * sign_test_p(n - 1, 1);
            worst <= alpha
        })
        .unwrap_or(MAX_DEFAULT_ROUNDS)
}

/// Paired log-ratios `ln(head_r / base_r)` of two equally long series of per-round values.
///
/// # Errors
/// When the lengths differ, there is no round, or a value is not positive and finite.
pub fn log_ratios(base: &[f64], head: &[f64]) -> Result<Vec<f64>, String> {
    if base.len() != head.len() {
        return Err(format!(
            "the base has {} round(s), the head {}",
            base.len(),
            head.len()
        ));
    }
    if base.is_empty() {
        return Err("no round".to_owned());
    }
    base.iter()
        .zip(head)
        .enumerate()
        .map(|(r, (&b, &h))| {
            if b.is_finite() && b > 0.0 && h.is_finite() && h > 0.0 {
                Ok((h / b).ln())
            } else {
                Err(format!(
                    "round {} has base {b} and head {h}; both must be positive and finite",
                    r + 1
                ))
            }
        })
        .collect()
}

/// What the rounds say about one benchmark (log scale: a change of `exp(x) - 1`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedChange {
    /// Rounds.
    pub rounds: usize,
    /// Median of the log-ratios.
    pub log_median: f64,
    /// Lower end of its interval.
    pub log_lower: f64,
    /// Upper end of its interval.
    pub log_upper: f64,
    /// Rank of the interval's order statistics.
    pub k: usize,
    /// Coverage the interval achieves.
    pub coverage: f64,
    /// Rounds in which the head took longer (`d_r > 0`).
    pub head_higher: usize,
    /// Rounds in which the head took less (`d_r < 0`).
    pub head_lower: usize,
    /// Exact two-sided sign-test p-value.
    pub p_value: f64,
}

/// The median, its distribution-free interval and the sign test of the log-ratios `d`.
/// `None` when `d` is empty, holds a non-finite value, or `confidence` is outside (0, 1).
#[must_use]
pub fn analyze(d: &[f64], confidence: f64) -> Option<PairedChange> {
    if d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let (k, coverage) = median_interval_rank(d.len(), confidence)?;
    let mut sorted = d.to_vec();
    sorted.sort_by(f64::total_cmp);
    let head_higher = d.iter().filter(|v| **v > 0.0).count();
    let head_lower = d.iter().filter(|v| **v < 0.0).count();
    Some(PairedChange {
        rounds: d.len(),
        log_median: stats::quantile_sorted(&sorted, 0.5)?,
        log_lower: *sorted.get(k - 1)?,
        log_upper: *sorted.get(sorted.len() - k)?,
        k,
        coverage,
        head_higher,
        head_lower,
        p_value: sign_test_p(head_higher, head_lower),
    })
}

/// Whether the verdict rule of a paired row would raise an alarm on the log-ratios `d`:
/// significant at `alpha` and the median change of the rounds beyond `limit_pct`.
fn alarms(d: &[f64], confidence: f64, alpha: f64, limit_pct: f64) -> bool {
    let Some(c) = analyze(d, confidence) else {
        return false;
    };
    c.p_value <= alpha && c.log_median.exp_m1().abs() * 100.0 > limit_pct
}

/// What the rounds say about the settings that produced them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Calibration {
    /// Share of resamples of the no-change residuals that raise an alarm (A/A false-alarm rate).
    pub false_alarm_rate: f64,
    /// Smallest slowdown, in percent, caught in at least [`DETECTION_POWER`] of the resamples;
    /// `None` when none up to [`MAX_DETECTABLE_PCT`] is (too few rounds for the suite's size).
    pub detectable_pct: Option<f64>,
    /// Resamples drawn.
    pub resamples: usize,
    /// The per-test significance level the resamples were judged at (Holm's first step,
    /// `alpha / family`: the strictest level any benchmark of the suite faces).
    pub alpha: f64,
}

/// Resamples the residuals `d_r - median(d)` (the rounds with their change taken out) to
/// measure the verdict rule at these settings: the rate of false alarms with no change, and the
/// smallest change detected [`DETECTION_POWER`] of the time. `alpha` is the per-test level
/// (pass `alpha / family` for Holm's worst case). `None` for fewer than two rounds.
///
/// ```text
/// e_r          = d_r - median(d)
/// resample     = n draws of e with replacement (SplitMix64, CALIBRATION_SEED)
/// false alarms = share of CALIBRATION_RESAMPLES resamples e* that alarm
/// detectable   = smallest s (bisection, 0.01% resolution) such that e* + ln(1 + s) alarms in
///                at least DETECTION_POWER of the resamples (the same resamples for every s)
/// ```
#[must_use]
pub fn calibrate(d: &[f64], confidence: f64, alpha: f64, limit_pct: f64) -> Option<Calibration> {
    if d.len() < 2 || d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let center = stats::median(d)?;
    let residuals: Vec<f64> = d.iter().map(|v| v - center).collect();
    let mut rng = SplitMix64(CALIBRATION_SEED);
    let resamples: Vec<Vec<f64>> = (0..CALIBRATION_RESAMPLES)
        .map(|_| {
            (0..residuals.len())
                .map(|_| {
                    residuals
                        .get(rng.below(residuals.len()))
                        .copied()
                        .unwrap_or(0.0)
                })
                .collect()
        })
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "resample counts are small")]
    let rate = |shift: f64| {
        let hits = resamples
            .iter()
            .filter(|e| {
                let shifted: Vec<f64> = e.iter().map(|v| v + shift).collect();
                alarms(&shifted, confidence, alpha, limit_pct)
            })
            .count();
        hits as f64 / resamples.len() as f64
    };
    let false_alarm_rate = rate(0.0);
    let detected = |pct: f64| rate((pct / 100.0).ln_1p()) >= DETECTION_POWER;
    let detectable_pct = if detected(MAX_DETECTABLE_PCT) {
        let (mut low, mut high) = (0.0, MAX_DETECTABLE_PCT);
        while high - low > 0.01 {
            let mid = (low + high) / 2.0;
            if detected(mid) {
                high = mid;
            } else {
                low = mid;
            }
        }
        Some(high)
    } else {
        None
    };
    Some(Calibration {
        false_alarm_rate,
        detectable_pct,
        resamples: resamples.len(),
        alpha,
    })
}

/// The side each round runs first, balanced (as many base-first as head-first rounds, one more
/// of one of them when `rounds` is odd) and shuffled by `seed`: `true` means base first.
#[must_use]
pub fn side_order(rounds: usize, seed: u64) -> Vec<bool> {
    let mut order: Vec<bool> = (0..rounds).map(|r| r % 2 == 0).collect();
    let mut rng = SplitMix64(seed);
    // Fisher-Yates.
    for i in (1..order.len()).rev() {
        let j = rng.below(i + 1);
        order.swap(i, j);
    }
    order
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn binomial_cdf_matches_hand_counts() {
        // n = 10: P(B <= 1) = 11/1024, P(B <= 2) = 56/1024.
        assert!(close(binomial_half_cdf(10, 1), 11.0 / 1024.0, 1e-12));
        assert!(close(binomial_half_cdf(10, 2), 56.0 / 1024.0, 1e-12));
        assert!(close(binomial_half_cdf(10, 10), 1.0, 0.0));
        assert!(close(binomial_half_cdf(1, 0), 0.5, 1e-12));
        // Symmetry: P(B <= 4) + P(B <= 5) = 1 for n = 9.
        assert!(close(
            binomial_half_cdf(9, 4) + binomial_half_cdf(9, 4),
            1.0,
            1e-12
        ));
    }

    #[test]
    fn sign_test_is_exact() {
        assert!(close(sign_test_p(10, 0), 2.0 / 1024.0, 1e-12));
        assert!(close(sign_test_p(0, 10), 2.0 / 1024.0, 1e-12));
        assert!(close(sign_test_p(9, 1), 22.0 / 1024.0, 1e-12));
        assert!(close(sign_test_p(5, 5), 1.0, 0.0));
        assert!(close(sign_test_p(0, 0), 1.0, 0.0));
        // R: binom.test(8, 12)$p.value = 0.3876953
        assert!(close(sign_test_p(8, 4), 0.387_695_3, 1e-6));
    }

    #[test]
    fn median_interval_ranks_match_tables() {
        // The classic table of order-statistic intervals for the median at 95%.
        let cases = [
            (6, 1, 0.96875),
            (10, 2, 1.0 - 2.0 * 11.0 / 1024.0),
            (12, 3, 1.0 - 2.0 * 79.0 / 4096.0),
            (20, 6, 0.958_611),
        ];
        for (i, (n, k, coverage)) in cases.into_iter().enumerate() {
            let (got_k, got_cov) = median_interval_rank(n, 0.95).unwrap();
            assert_eq!(got_k, k, "case {i}: n = {n}");
            assert!(close(got_cov, coverage, 1e-5), "case {i}: {got_cov}");
        }
        // Too few rounds for 95%: the whole range, which covers less.
        let (k, cov) = median_interval_rank(4, 0.95).unwrap();
        assert_eq!(k, 1);
        assert!(close(cov, 0.875, 1e-12));
        assert!(median_interval_rank(0, 0.95).is_none());
        assert!(median_interval_rank(5, 1.0).is_none());
    }

    #[test]
    fn rounds_grow_with_the_suite() {
        assert_eq!(rounds_needed(1, 0.05), DEFAULT_MIN_ROUNDS);
        // 5 benchmarks: 5 * 2 * 12 / 2^11 = 0.059 > 0.05 at 11 rounds; 5 * 26 / 4096 at 12.
        assert_eq!(rounds_needed(5, 0.05), 12);
        assert_eq!(rounds_needed(20, 0.05), 14);
        assert!(rounds_needed(100, 0.05) > rounds_needed(20, 0.05));
        assert_eq!(rounds_needed(1_000_000_000, 0.05), MAX_DEFAULT_ROUNDS);
    }

    #[test]
    fn analysis_of_a_clean_slowdown() {
        let d: Vec<f64> = (0..12)
            .map(|i| (1.05f64).ln() + 0.001 * (f64::from(i) - 5.5))
            .collect();
        let c = analyze(&d, 0.95).unwrap();
        assert_eq!(c.rounds, 12);
        assert_eq!((c.head_higher, c.head_lower), (12, 0));
        assert!(close(c.log_median.exp_m1(), 0.05, 0.001));
        assert!(c.log_lower > 0.0 && c.log_lower < c.log_median && c.log_median < c.log_upper);
        assert!(close(c.p_value, 2.0 / 4096.0, 1e-12));
        assert_eq!(c.k, 3);
    }

    #[test]
    fn outlier_rounds_are_trimmed() {
        // Two rounds hit by a burst of load (one each way) do not move the interval's ends past
        // the clean rounds.
        let mut d = vec![0.05f64.ln_1p(); 10];
        d.push(0.9);
        d.push(-0.9);
        let c = analyze(&d, 0.95).unwrap();
        assert!(close(c.log_lower, 0.05f64.ln_1p(), 1e-12));
        assert!(close(c.log_upper, 0.05f64.ln_1p(), 1e-12));
    }

    #[test]
    fn bad_input_gives_none_or_an_error() {
        assert!(analyze(&[], 0.95).is_none());
        assert!(analyze(&[0.1, f64::NAN], 0.95).is_none());
        assert!(log_ratios(&[1.0], &[1.0, 2.0]).is_err());
        assert!(log_ratios(&[], &[]).is_err());
        assert!(log_ratios(&[1.0, 0.0], &[1.0, 1.0]).is_err());
        assert!(log_ratios(&[1.0, f64::INFINITY], &[1.0, 1.0]).is_err());
        assert!(log_ratios(&[-1.0], &[1.0]).is_err());
        let d = log_ratios(&[100.0, 200.0], &[110.0, 220.0]).unwrap();
        assert!(d.iter().all(|v| close(*v, 1.1f64.ln(), 1e-12)));
        assert!(calibrate(&[0.1], 0.95, 0.05, 3.0).is_none());
    }

    #[test]
    fn calibration_of_quiet_rounds() {
        // 14 rounds with +-0.5% noise around no change, judged at 3%: no false alarm, and a
        // change a little above the threshold is caught.
        let d: Vec<f64> = (0..14)
            .map(|i| 0.005 * ((f64::from(i) * 2.399).sin()))
            .collect();
        let c = calibrate(&d, 0.95, 0.05 / 5.0, 3.0).unwrap();
        assert!(close(c.false_alarm_rate, 0.0, 0.0), "{c:?}");
        let detectable = c.detectable_pct.unwrap();
        assert!(detectable > 3.0 && detectable < 4.5, "{detectable}");
        assert_eq!(c.resamples, CALIBRATION_RESAMPLES);
        // Deterministic.
        assert_eq!(calibrate(&d, 0.95, 0.05 / 5.0, 3.0), Some(c));
    }

    #[test]
    fn calibration_of_noisy_rounds_needs_bigger_changes() {
        let quiet: Vec<f64> = (0..14)
            .map(|i| 0.005 * (f64::from(i) * 2.399).sin())
            .collect();
        let noisy: Vec<f64> = quiet.iter().map(|v| v * 20.0).collect();
        let q = calibrate(&quiet, 0.95, 0.01, 3.0).unwrap();
        let n = calibrate(&noisy, 0.95, 0.01, 3.0).unwrap();
        assert!(n.detectable_pct.unwrap() > q.detectable_pct.unwrap() + 3.0);
    }

    #[test]
    fn too_few_rounds_detect_nothing() {
        // 4 rounds: the sign test's smallest p is 1/8, never below 0.05.
        let c = calibrate(&[0.0, 0.001, -0.001, 0.0], 0.95, 0.05, 3.0).unwrap();
        assert_eq!(c.detectable_pct, None);
        assert!(close(c.false_alarm_rate, 0.0, 0.0));
    }

    #[test]
    fn side_order_is_balanced_and_seeded() {
        for rounds in [0usize, 1, 2, 7, 12] {
            let order = side_order(rounds, 42);
            assert_eq!(order.len(), rounds);
            let base_first = order.iter().filter(|b| **b).count();
            assert_eq!(base_first, rounds.div_ceil(2), "rounds {rounds}");
        }
        assert_eq!(side_order(12, 7), side_order(12, 7));
        assert_ne!(side_order(12, 7), side_order(12, 8));
    }
}

//! Calibrated claims for the single-run gate (pure): what `bench-run calibrate`'s A/A runs say
//! about the gate's own settings.
//!
//! `calibrate` runs a suite `N` times with nothing changed. Comparing each run with the one
//! before it, with the gate's rule and the history the gate would have had (the runs before
//! it), is an A/A trial:
//!
//! ```text
//! false alarms   = A/A comparisons whose row is a regression or an improvement
//! detectable     = limit + median half-width of the A/A change intervals
//!                  limit = max(threshold, noise floor of the history after the last run)
//! ```
//!
//! A slowdown `s` is flagged when the end of its interval nearest 0 clears the limit, i.e. when
//! `s - half-width > limit`; the A/A intervals show how wide that interval is on this machine.
//! The same executable ran every time, so the same-binary rule (which would make every verdict
//! unchanged) is not applied here: the question is what the rule does when the code *did*
//! change and its speed did not.

use crate::compare::{Comparison, Evidence, Verdict};
use crate::model::MetricKey;
use serde::Serialize;
use std::collections::BTreeMap;

/// A/A outcomes of one key.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AaOutcome {
    /// A/A comparisons of this key.
    pub comparisons: usize,
    /// Of which raised an alarm (regression or improvement).
    pub false_alarms: usize,
    /// Half-widths of the change intervals, in percent.
    pub half_widths_pct: Vec<f64>,
}

impl AaOutcome {
    /// The false-alarm rate, when there was a comparison.
    #[must_use]
    pub fn rate(&self) -> Option<f64> {
        #[expect(clippy::cast_precision_loss, reason = "counts are small")]
        (self.comparisons > 0).then(|| self.false_alarms as f64 / self.comparisons as f64)
    }

    /// The smallest change the gate would flag at a limit of `limit_pct`: the limit plus the
    /// median half-width of the A/A intervals (`None` without an interval).
    #[must_use]
    pub fn detectable_pct(&self, limit_pct: f64) -> Option<f64> {
        crate::stats::median(&self.half_widths_pct).map(|w| limit_pct + w)
    }
}

/// Gathers the A/A outcomes of consecutive comparisons of unchanged code, per key. Ignored,
/// new, missing and unusable rows do not count.
#[must_use]
pub fn aa_outcomes(comparisons: &[Comparison]) -> BTreeMap<MetricKey, AaOutcome> {
    let mut out: BTreeMap<MetricKey, AaOutcome> = BTreeMap::new();
    for comparison in comparisons {
        for row in &comparison.rows {
            let judged = matches!(
                row.evidence,
                Evidence::Samples { .. }
                    | Evidence::Paired { .. }
                    | Evidence::Intervals { .. }
                    | Evidence::Exact
            ) && row.verdict != Verdict::Ignored;
            if !judged {
                continue;
            }
            let entry = out
                .entry(MetricKey::new(row.benchmark.clone(), row.metric.clone()))
                .or_default();
            entry.comparisons += 1;
            if matches!(row.verdict, Verdict::Regression | Verdict::Improvement) {
                entry.false_alarms += 1;
            }
            if let Some(change) = row.change
                && let (Some(lower), Some(upper)) = (change.lower_pct, change.upper_pct)
                && lower.is_finite()
                && upper.is_finite()
            {
                entry.half_widths_pct.push((upper - lower) / 2.0);
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::compare::{CompareConfig, compare};
    use crate::model::{
        BenchmarkId, Direction, Estimate, History, Measurement, Samples, SamplingMode, metric,
    };

    fn timed(level: f64, spread: f64) -> Measurement {
        let times: Vec<f64> = (0..30)
            .map(|i| level * (1.0 + spread * (f64::from(i) * 0.37).sin()))
            .collect();
        Measurement {
            benchmark: BenchmarkId::named("b"),
            metric: metric::TIME.to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(level),
            statistics: BTreeMap::new(),
            throughput: None,
            samples: Samples::new(SamplingMode::Flat, vec![1.0; 30], times).ok(),
        }
    }

    #[test]
    fn counts_alarms_and_interval_widths() {
        let config = CompareConfig::default();
        // Two A/A pairs: one quiet, one where the second run is 20% slower (a false alarm).
        let quiet = compare(
            &[timed(100.0, 0.01)],
            &[timed(100.0, 0.01)],
            &History::new(),
            &config,
        );
        let jump = compare(
            &[timed(100.0, 0.01)],
            &[timed(120.0, 0.01)],
            &History::new(),
            &config,
        );
        let outcomes = aa_outcomes(&[quiet, jump]);
        let b = &outcomes[&MetricKey::new("b", metric::TIME)];
        assert_eq!((b.comparisons, b.false_alarms), (2, 1));
        assert_eq!(b.rate(), Some(0.5));
        assert_eq!(b.half_widths_pct.len(), 2);
        let detectable = b.detectable_pct(3.0).unwrap();
        assert!(detectable > 3.0 && detectable < 6.0, "{detectable}");
        assert_eq!(AaOutcome::default().rate(), None);
        assert_eq!(AaOutcome::default().detectable_pct(3.0), None);
    }
}

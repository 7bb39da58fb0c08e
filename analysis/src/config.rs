//! The settings of a comparison (pure): thresholds, significance, history, correction, and the
//! benchmark patterns that pick per-benchmark thresholds, ignored and quarantined rows.
//! [`crate::compare`] re-exports all of it; `docs/gating.md` names the constants.

use crate::noise::{self, NoiseSettings};
use crate::stats;
use serde::Serialize;

/// Default [`CompareConfig::threshold_pct`]: changes up to 3% are not reported.
pub const DEFAULT_THRESHOLD_PCT: f64 = 3.0;
/// Default threshold, in percent, for deterministic metrics: rows judged on exact values (no
/// samples, no bounds), such as instruction counts, whose run-to-run noise is near zero.
pub const DEFAULT_DETERMINISTIC_THRESHOLD_PCT: f64 = 0.5;
/// Default [`CompareConfig::alpha`]: significance level after correction.
pub const DEFAULT_ALPHA: f64 = 0.05;
/// Default [`CompareConfig::confidence`]: level of the change's confidence interval.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;
/// Default [`CompareConfig::default_noise_floor_pct`]: the floor without enough history.
pub const DEFAULT_NOISE_FLOOR_PCT: f64 = 2.0;
/// Default [`CompareConfig::min_history`]: deltas needed before the history floor applies.
pub const DEFAULT_MIN_HISTORY: usize = 5;
/// Default [`CompareConfig::max_history`]: most recent deltas the history floor looks at.
pub const DEFAULT_MAX_HISTORY: usize = 30;
/// Fewest raw samples per side for sample evidence (Mann-Whitney needs two to rank anything).
pub const MIN_SAMPLES: usize = 2;

/// Correction for testing many rows at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Correction {
    /// Holm's step-down method: controls the family-wise error rate ([`stats::holm`]).
    #[default]
    Holm,
    /// Benjamini-Hochberg: controls the false discovery rate ([`stats::benjamini_hochberg`]).
    BenjaminiHochberg,
    /// No correction: each row is tested at `alpha` on its own.
    None,
}

impl Correction {
    /// Stable name used in output and on the command line.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Holm => "holm",
            Self::BenjaminiHochberg => "bh",
            Self::None => "none",
        }
    }

    /// Inverse of [`Correction::name`] (also accepts `benjamini-hochberg`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "holm" => Some(Self::Holm),
            "bh" | "benjamini-hochberg" => Some(Self::BenjaminiHochberg),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    /// Adjusts `p` (in input order).
    #[must_use]
    pub fn adjust(self, p: &[f64]) -> Vec<f64> {
        match self {
            Self::Holm => stats::holm(p),
            Self::BenjaminiHochberg => stats::benjamini_hochberg(p),
            Self::None => p.to_vec(),
        }
    }
}

/// How a comparison decides. See the module docs and `docs/gating.md`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareConfig {
    /// Smallest change, in percent, that can be a regression or an improvement.
    pub threshold_pct: f64,
    /// Threshold, in percent, of rows judged on exact values (deterministic metrics such as
    /// instruction counts) that no per-benchmark pattern matches.
    pub deterministic_threshold_pct: f64,
    /// Per-benchmark thresholds as `(pattern, percent)`; the first pattern that matches the
    /// benchmark's full id wins (see [`pattern_matches`]).
    pub per_benchmark_threshold: Vec<(String, f64)>,
    /// Patterns of benchmarks whose rows get [`Verdict::Ignored`] and never fail the gate.
    pub ignore: Vec<String>,
    /// Patterns of benchmarks that are compared and shown as usual (verdict included) but
    /// never fail the gate: known-noisy benchmarks a team keeps in a quarantine file
    /// ([`crate::quarantine`]). Unlike [`CompareConfig::ignore`], a quarantined row stays in
    /// the family, the geomean and the counts.
    pub quarantine: Vec<String>,
    /// Significance level applied to corrected p-values.
    pub alpha: f64,
    /// Confidence level of the change's interval.
    pub confidence: f64,
    /// Multiple-testing correction across the family.
    pub correction: Correction,
    /// Noise floor, in percent, when the history is too short.
    pub default_noise_floor_pct: f64,
    /// Fewest history deltas for a history-based noise floor.
    pub min_history: usize,
    /// Most recent history deltas used for the noise floor.
    pub max_history: usize,
    /// Keep the verdict of a paired row whose change is within its layout spread, instead of
    /// calling it layout-sensitive ([`crate::layout`]).
    pub layout_strict: bool,
}

impl Default for CompareConfig {
    fn default() -> Self {
        Self {
            threshold_pct: DEFAULT_THRESHOLD_PCT,
            deterministic_threshold_pct: DEFAULT_DETERMINISTIC_THRESHOLD_PCT,
            per_benchmark_threshold: Vec::new(),
            ignore: Vec::new(),
            quarantine: Vec::new(),
            alpha: DEFAULT_ALPHA,
            confidence: DEFAULT_CONFIDENCE,
            correction: Correction::Holm,
            default_noise_floor_pct: DEFAULT_NOISE_FLOOR_PCT,
            min_history: DEFAULT_MIN_HISTORY,
            max_history: DEFAULT_MAX_HISTORY,
            layout_strict: false,
        }
    }
}

/// A [`CompareConfig`] value out of range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// `alpha` must lie strictly between 0 and 1.
    #[error("alpha must be in (0, 1), got {0}")]
    Alpha(f64),
    /// `confidence` must lie strictly between 0 and 1.
    #[error("confidence must be in (0, 1), got {0}")]
    Confidence(f64),
    /// A threshold is negative or not finite.
    #[error("threshold{} must be a finite, non-negative percentage, got {value}", pattern.as_ref().map(|p| format!(" for `{p}`")).unwrap_or_default())]
    Threshold {
        /// The per-benchmark pattern, or `None` for the global threshold.
        pattern: Option<String>,
        /// The offending value.
        value: f64,
    },
    /// The default noise floor is negative or not finite.
    #[error("default noise floor must be a finite, non-negative percentage, got {0}")]
    NoiseFloor(f64),
    /// `min_history > max_history`: the history floor could never apply.
    #[error(
        "min_history ({min}) exceeds max_history ({max}): the history noise floor could never apply"
    )]
    History {
        /// `min_history`.
        min: usize,
        /// `max_history`.
        max: usize,
    },
}

impl CompareConfig {
    /// Checks every value's range. [`compare`] never panics on a bad config, but its verdicts are
    /// meaningless; callers should validate first (and exit 2 on error).
    ///
    /// # Errors
    /// The first value out of range, as a [`ConfigError`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        let unit_open = |v: f64| v > 0.0 && v < 1.0;
        if !unit_open(self.alpha) {
            return Err(ConfigError::Alpha(self.alpha));
        }
        if !unit_open(self.confidence) {
            return Err(ConfigError::Confidence(self.confidence));
        }
        let valid_pct = |v: f64| v.is_finite() && v >= 0.0;
        for value in [self.threshold_pct, self.deterministic_threshold_pct] {
            if !valid_pct(value) {
                return Err(ConfigError::Threshold {
                    pattern: None,
                    value,
                });
            }
        }
        for (pattern, value) in &self.per_benchmark_threshold {
            if !valid_pct(*value) {
                return Err(ConfigError::Threshold {
                    pattern: Some(pattern.clone()),
                    value: *value,
                });
            }
        }
        if !valid_pct(self.default_noise_floor_pct) {
            return Err(ConfigError::NoiseFloor(self.default_noise_floor_pct));
        }
        if self.min_history > self.max_history {
            return Err(ConfigError::History {
                min: self.min_history,
                max: self.max_history,
            });
        }
        Ok(())
    }

    /// Threshold for a benchmark: the first matching per-benchmark pattern, else the global one.
    #[must_use]
    pub fn threshold_for(&self, benchmark: &str) -> (f64, Option<&str>) {
        self.per_benchmark_threshold
            .iter()
            .find(|(pattern, _)| pattern_matches(pattern, benchmark))
            .map_or((self.threshold_pct, None), |(pattern, pct)| {
                (*pct, Some(pattern.as_str()))
            })
    }

    /// The first ignore pattern matching a benchmark, if any.
    #[must_use]
    pub fn ignored_by(&self, benchmark: &str) -> Option<&str> {
        self.ignore
            .iter()
            .find(|pattern| pattern_matches(pattern, benchmark))
            .map(String::as_str)
    }

    /// The first quarantine pattern matching a benchmark, if any.
    #[must_use]
    pub fn quarantined_by(&self, benchmark: &str) -> Option<&str> {
        self.quarantine
            .iter()
            .find(|pattern| pattern_matches(pattern, benchmark))
            .map(String::as_str)
    }

    /// The settings of the noise model.
    #[must_use]
    pub const fn noise_settings(&self) -> NoiseSettings {
        NoiseSettings {
            default_floor_pct: self.default_noise_floor_pct,
            min_history: self.min_history,
            max_history: self.max_history,
        }
    }

    /// How many earlier runs the ledger reads as history ([`noise::history_runs`]).
    #[must_use]
    pub const fn history_runs(&self) -> usize {
        noise::history_runs(self.max_history)
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (including none and
/// including `/`) and every other character matches itself. The whole text must match:
/// `decode/*` matches `decode/100` but not `x/decode/100`.
#[must_use]
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    // Position of the last `*` seen and the text position it currently stands for.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(c) if t.get(ti) == Some(c) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                // Let the last `*` swallow one more byte and retry.
                Some((star_pi, star_ti)) => {
                    star = Some((star_pi, star_ti + 1));
                    pi = star_pi + 1;
                    ti = star_ti + 1;
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == b'*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let cases = [
            ("decode/*", "decode/100", true),
            ("decode/*", "x/decode/100", false),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("*/plain", "rows=2000/encode/plain", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("exact", "exact", true),
            ("exact", "exact2", false),
            ("**x", "x", true),
            ("ü*", "über", true),
        ];
        for (i, (pattern, text, want)) in cases.into_iter().enumerate() {
            assert_eq!(
                pattern_matches(pattern, text),
                want,
                "case {i}: {pattern:?} vs {text:?}"
            );
        }
    }

    #[test]
    fn config_validation() {
        assert_eq!(CompareConfig::default().validate(), Ok(()));
        let bad = |f: fn(&mut CompareConfig)| {
            let mut c = CompareConfig::default();
            f(&mut c);
            c.validate()
        };
        assert_eq!(bad(|c| c.alpha = 0.0), Err(ConfigError::Alpha(0.0)));
        assert_eq!(
            bad(|c| c.confidence = 1.0),
            Err(ConfigError::Confidence(1.0))
        );
        assert!(matches!(
            bad(|c| c.per_benchmark_threshold.push(("x".into(), -1.0))),
            Err(ConfigError::Threshold {
                pattern: Some(_),
                ..
            })
        ));
        assert!(matches!(
            bad(|c| c.min_history = 40),
            Err(ConfigError::History { min: 40, max: 30 })
        ));
        assert_eq!(
            Correction::from_name("bh"),
            Some(Correction::BenjaminiHochberg)
        );
        assert_eq!(
            Correction::from_name(Correction::Holm.name()),
            Some(Correction::Holm)
        );
    }
}

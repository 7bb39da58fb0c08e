//! What a comparison returns (pure): a [`Row`] per key with its [`Verdict`], [`Change`] and
//! [`Evidence`], the [`Comparison`] of two runs with its [`Counts`] and [`Geomean`], and the
//! [`gate_outcome`] that turns a comparison into the exit status of `bench-run`.

use crate::comparable::{Mismatch, same_binary_sentence};
use crate::config::Correction;
use crate::model::Direction;
use crate::noise::{NoiseExplanation, NoiseFlag, NoiseFloor};
use crate::stats::MwuMethod;
use serde::Serialize;
use std::fmt;

/// A relative change from base to head, in percent of the base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// Point estimate.
    pub point_pct: f64,
    /// Lower bound of its interval, when there is one.
    pub lower_pct: Option<f64>,
    /// Upper bound of its interval, when there is one.
    pub upper_pct: Option<f64>,
}

/// The outcome of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significant, beyond the limit, in the bad direction.
    Regression,
    /// Significant, beyond the limit, in the good direction.
    Improvement,
    /// Anything else between two runs (not significant, within the limit, or unusable input).
    Unchanged,
    /// Only in head.
    New,
    /// Only in base.
    Missing,
    /// Matches an ignore pattern.
    Ignored,
}

impl Verdict {
    /// Stable name used in output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Regression => "regression",
            Self::Improvement => "improvement",
            Self::Unchanged => "unchanged",
            Self::New => "new",
            Self::Missing => "missing",
            Self::Ignored => "ignored",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How significance was judged for a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// Raw samples on both sides: Mann-Whitney U on log per-iteration times gives the p-value,
    /// the Hodges-Lehmann estimate with its Moses interval gives the change.
    Samples {
        /// Base samples.
        base_n: usize,
        /// Head samples.
        head_n: usize,
        /// `U` of the head sample against the base sample.
        u: f64,
        /// Standardised `U` (positive: head slower).
        z: f64,
        /// Exact or normal-approximation p-value.
        method: MwuMethod,
        /// Coverage actually achieved by the change interval.
        coverage: f64,
    },
    /// Paired A/B rounds (`bench-run ab`): one value per process and side in each round; the
    /// exact sign test over the rounds' log-ratios gives the p-value, their median with its
    /// order-statistic interval the change (see [`crate::paired`]).
    Paired {
        /// Rounds.
        rounds: usize,
        /// Rounds in which the head's value was higher.
        head_higher: usize,
        /// Rounds in which the head's value was lower.
        head_lower: usize,
        /// Rank of the interval's order statistics.
        k: usize,
        /// Coverage the interval achieves.
        coverage: f64,
    },
    /// Confidence bounds (no samples on one side at least): significant iff the intervals do
    /// not overlap. A side without bounds counts as the exact interval `[v, v]`.
    Intervals {
        /// Whether the intervals overlap.
        overlap: bool,
    },
    /// Neither samples nor bounds: values are exact and any difference is significant.
    Exact,
    /// Only one side exists (new or missing row).
    Unpaired,
    /// The inputs cannot be compared (unit or direction differ, an estimate is negative or not
    /// finite).
    Unusable {
        /// Why.
        reason: String,
    },
}

/// One compared key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric name.
    pub metric: String,
    /// Unit of `before` and `after`.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Base headline estimate.
    pub before: Option<f64>,
    /// Head headline estimate.
    pub after: Option<f64>,
    /// Change from base to head (absent if a side is missing, the input is unusable, or the base
    /// is 0).
    pub change: Option<Change>,
    /// Raw p-value (sample evidence only).
    pub p_value: Option<f64>,
    /// Corrected p-value (family members only).
    pub p_adjusted: Option<f64>,
    /// Whether the change is significant under its evidence (always false for ignored, new,
    /// missing and unusable rows).
    pub significant: bool,
    /// Noise floor of this key.
    pub noise_floor: NoiseFloor,
    /// How the noise floor was obtained from the history.
    pub noise: NoiseExplanation,
    /// Why this key cannot be gated reliably (too noisy, bimodal), if it cannot.
    pub flags: Vec<NoiseFlag>,
    /// The quarantine pattern matching this key: its verdict never fails the gate. Always
    /// `None` for ignored rows.
    pub quarantined_by: Option<String>,
    /// Threshold of this key, in percent.
    pub threshold_pct: f64,
    /// The per-benchmark pattern that set the threshold, if any.
    pub threshold_pattern: Option<String>,
    /// The outcome.
    pub verdict: Verdict,
    /// How significance was judged.
    pub evidence: Evidence,
    /// Every input of the verdict as sentences, for `--explain`.
    pub reasons: Vec<String>,
    /// Paired rows: the verdict rule measured on the rounds themselves (A/A false-alarm rate,
    /// smallest detectable change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<crate::paired::Calibration>,
    /// Paired rows run under randomized layouts: each side's per-layout medians and spread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<crate::layout::LayoutSpread>,
    /// A significant change within the layout spread: "unchanged", because links of the same
    /// code were that far apart ([`crate::layout`]).
    pub layout_sensitive: bool,
}

impl Row {
    /// The row's name in one-line messages: the benchmark, with its metric in brackets unless it
    /// is the time (`decode/100`, `work/knob [instructions]`).
    #[must_use]
    pub fn name(&self) -> String {
        if self.metric == crate::model::metric::TIME {
            self.benchmark.clone()
        } else {
            format!("{} [{}]", self.benchmark, self.metric)
        }
    }

    /// The limit a change must exceed: `max(threshold_pct, noise_floor.pct)`.
    #[must_use]
    pub fn limit_pct(&self) -> f64 {
        self.threshold_pct.max(self.noise_floor.pct)
    }
}

/// Geometric mean of the after/before ratios of the paired rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Geomean {
    /// Geometric mean of the oriented ratios: above 1 means worse.
    pub ratio: f64,
    /// `(ratio - 1) * 100`: positive means worse.
    pub change_pct: f64,
    /// Lower bound of the bootstrap interval, in percent.
    pub lower_pct: Option<f64>,
    /// Upper bound of the bootstrap interval, in percent.
    pub upper_pct: Option<f64>,
    /// Rows that went in.
    pub n_rows: usize,
}

/// How many rows got each verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    /// Regressions.
    pub regressions: usize,
    /// Improvements.
    pub improvements: usize,
    /// Unchanged (including unusable) rows.
    pub unchanged: usize,
    /// New rows.
    pub new: usize,
    /// Missing rows.
    pub missing: usize,
    /// Ignored rows.
    pub ignored: usize,
    /// Paired, non-ignored rows whose input is unusable (a subset of `unchanged`).
    pub unusable: usize,
    /// Paired rows that were not ignored.
    pub paired: usize,
    /// Rows (not ignored) matching a quarantine pattern, whatever their verdict.
    pub quarantined: usize,
    /// Rows whose significant change lay within their layout spread (a subset of `unchanged`).
    pub layout_sensitive: usize,
}

/// The result of [`compare`](super::compare).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// One row per key, sorted by benchmark then metric.
    pub rows: Vec<Row>,
    /// Geometric mean over paired, usable, non-ignored rows with positive values.
    pub geomean: Option<Geomean>,
    /// Verdict counts.
    pub counts: Counts,
    /// The correction applied.
    pub correction: Correction,
    /// Size of the family the correction ran over.
    pub family_size: usize,
    /// The SHA-256 of the executable both runs ran, when [`mark_same_binary`] found one: then no
    /// row is a regression or an improvement.
    ///
    /// [`mark_same_binary`]: crate::comparable::mark_same_binary
    pub same_binary: Option<String>,
}

impl Comparison {
    /// Rows with [`Verdict::Regression`].
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regression)
    }

    /// Rows with [`Verdict::Improvement`].
    pub fn improvements(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Improvement)
    }

    /// Paired, non-ignored rows whose input could not be compared.
    pub fn unusable(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| {
            r.verdict != Verdict::Ignored && matches!(r.evidence, Evidence::Unusable { .. })
        })
    }

    /// Regressions that fail the gate: not quarantined.
    pub fn gating_regressions(&self) -> impl Iterator<Item = &Row> {
        self.regressions().filter(|r| r.quarantined_by.is_none())
    }

    /// Whether any row that is not quarantined is a regression.
    #[must_use]
    pub fn has_regression(&self) -> bool {
        self.gating_regressions().next().is_some()
    }

    /// Rows (not ignored) that the noise model flagged as too noisy or bimodal.
    pub fn flagged(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict != Verdict::Ignored && !r.flags.is_empty())
    }

    /// Rows matching a quarantine pattern.
    pub fn quarantined(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.quarantined_by.is_some())
    }
}

/// What the gate decides. The exit status of `bench-run` is [`GateOutcome::exit_code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// Exit 0: comparable runs, usable input, no regression.
    Pass,
    /// Exit 1: at least one regression.
    Regression,
    /// Exit 2: incomparable runs (not allowed), unusable rows, or nothing paired.
    Unusable,
}

impl GateOutcome {
    /// Process exit code: 0, 1 or 2.
    #[must_use]
    pub const fn exit_code(self) -> i32 {
        match self {
            Self::Pass => 0,
            Self::Regression => 1,
            Self::Unusable => 2,
        }
    }
}

/// The gate: [`GateOutcome::Unusable`] if `mismatches` is non-empty and not allowed, if any
/// paired non-ignored row that is not quarantined is unusable, or if no row is paired and not
/// ignored; else [`GateOutcome::Regression`] if any row that is not quarantined is a
/// regression; else [`GateOutcome::Pass`]. Unusable input wins over a regression: a verdict
/// built on it cannot be trusted. Quarantined rows never fail the gate.
#[must_use]
pub fn gate_outcome(
    comparison: &Comparison,
    mismatches: &[Mismatch],
    allow_mismatch: bool,
) -> GateOutcome {
    if (!mismatches.is_empty() && !allow_mismatch)
        || comparison.unusable().any(|r| r.quarantined_by.is_none())
        || comparison.counts.paired == 0
    {
        GateOutcome::Unusable
    } else if comparison.has_regression() {
        GateOutcome::Regression
    } else {
        GateOutcome::Pass
    }
}

/// Applies the same-binary rule to a comparison of two runs of one executable (`sha256`, from
/// [`same_binary`]): every regression and improvement becomes [`Verdict::Unchanged`], every
/// paired row says why, the counts follow, and [`Comparison::same_binary`] records the hash.
/// New, missing and ignored rows keep their verdict. The statistics (change, p-values,
/// `significant`) are left as computed: they describe how much the environment moved.
pub fn mark_same_binary(comparison: &mut Comparison, sha256: &str) {
    let sentence = same_binary_sentence(sha256);
    let mut overridden = 0;
    for row in &mut comparison.rows {
        if !matches!(
            row.verdict,
            Verdict::Regression | Verdict::Improvement | Verdict::Unchanged
        ) {
            continue;
        }
        let was = row.verdict;
        if was != Verdict::Unchanged {
            row.verdict = Verdict::Unchanged;
            overridden += 1;
        }
        let note = if was == Verdict::Unchanged {
            format!("Same executable: {sentence}; this row is unchanged either way.")
        } else {
            format!(
                "Same executable: {sentence}, so this row is unchanged (it would otherwise be \
                 {was})."
            )
        };
        // After the verdict sentence, which `finish` writes last.
        row.reasons.push(note);
    }
    let counts = &mut comparison.counts;
    counts.regressions = 0;
    counts.improvements = 0;
    counts.unchanged += overridden;
    comparison.same_binary = Some(sha256.to_owned());
}

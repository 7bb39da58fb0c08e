//! Comparisons and verdicts (pure).
//!
//! [`compare`] pairs the measurements of a base run and a head run by benchmark and metric, judges
//! every pair with the best evidence both sides carry, corrects for testing many benchmarks at
//! once, and gives each row a [`Verdict`] with the sentences that justify it ([`Row::reasons`],
//! printed by `--explain`). [`check_comparable`] says whether two runs may be compared at all, and
//! [`gate`] turns both into the exit status of `bench-run`. `docs/gating.md` is the user-facing
//! description of this module and names the constants below; keep the two in sync.
//!
//! # Glossary
//!
//! - **row**: one `(benchmark full id, metric)` key, with its base and/or head measurement.
//! - **paired row**: a row present in both runs.
//! - **headline estimate**: [`crate::model::Measurement::estimate`] (the median for criterion).
//! - **change**: relative change of the metric from base to head, in percent; for sample
//!   evidence the Hodges-Lehmann estimate, otherwise `after / before - 1`.
//! - **evidence**: how significance was judged ([`Evidence`]): raw samples (Mann-Whitney U),
//!   confidence intervals (overlap), or exact values (any difference).
//! - **family**: the paired, non-ignored rows with a p-value; the multiple-testing correction
//!   runs over it.
//! - **noise floor**: how much this benchmark moves between runs when nothing changed, learnt
//!   from its history by the noise model ([`crate::noise`], [`noise_floor`]).
//! - **threshold**: the smallest change the user cares about ([`CompareConfig::threshold_pct`]
//!   or a per-benchmark pattern).
//! - **limit**: `max(threshold, noise floor)`; a change must exceed it to count.
//! - **bad direction**: up for [`Direction::LowerIsBetter`], down for
//!   [`Direction::HigherIsBetter`].
//!
//! # The rule
//!
//! ```text
//! Regression  <=> significant AND |change| > max(threshold, noise floor) AND change in bad direction
//! Improvement <=> significant AND |change| > max(threshold, noise floor) AND change in good direction
//! Unchanged   otherwise (and for rows whose input is unusable)
//! New / Missing for rows only in head / only in base; Ignored for rows matching an ignore pattern
//! ```
//!
//! When base and head ran the same executable ([`same_binary`]), [`mark_same_binary`] then turns
//! every regression and improvement into `Unchanged`: the code cannot have changed, so the
//! differences are the environment's.
//! A row matching a quarantine pattern keeps its verdict, is marked quarantined, and never
//! fails the gate ([`CompareConfig::quarantine`]).
//!
//! Everything is deterministic: rows come out sorted by benchmark then metric, maps are
//! `BTreeMap`s, and the only resampling (the geomean interval) uses a fixed seed.

pub use crate::comparable::{
    Mismatch, MismatchField, SHORT_HASH_LEN, check_comparable, mark_same_binary, same_binary,
    same_binary_sentence, short_hash,
};
pub use crate::config::{
    CompareConfig, ConfigError, Correction, DEFAULT_ALPHA, DEFAULT_CONFIDENCE,
    DEFAULT_DETERMINISTIC_THRESHOLD_PCT, DEFAULT_MAX_HISTORY, DEFAULT_MIN_HISTORY,
    DEFAULT_NOISE_FLOOR_PCT, DEFAULT_THRESHOLD_PCT, MIN_SAMPLES, pattern_matches,
};
use crate::model::{Direction, Estimate, Measurement, Samples, SamplingMode};
pub use crate::model::{History, MetricKey};
use crate::noise::{self, NoiseAnalysis, NoiseExplanation, NoiseFlag};
pub use crate::noise::{HistoryPoint, NOISE_FENCE_IQR_MULTIPLIER, NoiseFloor, NoiseSource};
use crate::paired;
use crate::stats::{self, MwuMethod};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Noise floor of one key from its history (oldest first): [`noise::analyse`]'s floor, whose
/// docs give the method (run-to-run changes within segments between change points, outliers
/// trimmed, `Q3 + NOISE_FENCE_IQR_MULTIPLIER * IQR` of the last `max_history` of them, or
/// `default_noise_floor_pct` with fewer than `min_history`).
#[must_use]
pub fn noise_floor(history: &[HistoryPoint], config: &CompareConfig) -> NoiseFloor {
    noise_analysis(history, config).floor
}

/// The whole noise model of one key: floor, explanation and flags ([`noise::analyse`]).
#[must_use]
pub fn noise_analysis(history: &[HistoryPoint], config: &CompareConfig) -> NoiseAnalysis {
    noise::analyse(history, &config.noise_settings())
}

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
}

/// The result of [`compare`].
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
pub fn gate(comparison: &Comparison, mismatches: &[Mismatch], allow_mismatch: bool) -> GateOutcome {
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

// ---------------------------------------------------------------------------------------------
// compare
// ---------------------------------------------------------------------------------------------

/// Base and head measurement of one key, with how many duplicates were dropped.
#[derive(Default)]
struct Slot<'a> {
    base: Option<&'a Measurement>,
    head: Option<&'a Measurement>,
    base_duplicates: usize,
    head_duplicates: usize,
}

/// What a paired row's evidence says before the correction.
enum Judgement {
    /// Sample evidence: significance waits for the corrected p-value.
    Samples(stats::MannWhitney),
    /// Paired rounds: significance waits for the corrected sign-test p-value.
    Paired(f64),
    /// Interval or exact evidence: significance is known.
    Decided(bool),
    /// No verdict possible.
    None,
}

/// A row before the correction.
struct Draft {
    key: MetricKey,
    unit: String,
    direction: Direction,
    before: Option<f64>,
    after: Option<f64>,
    change: Option<Change>,
    /// |change| in percent, infinite when the base is 0 and the head is not.
    magnitude_pct: f64,
    /// Sign of the change: -1, 0 or 1.
    sign: f64,
    judgement: Judgement,
    evidence: Evidence,
    p_adjusted: Option<f64>,
    noise: NoiseAnalysis,
    threshold_pct: f64,
    threshold_pattern: Option<String>,
    ignored_by: Option<String>,
    quarantined_by: Option<String>,
    /// Evidence sentences gathered while judging.
    notes: Vec<String>,
    /// Paired rows: the rounds' log-ratios, for the calibration.
    log_ratios: Option<Vec<f64>>,
}

/// Size of a change for the limit test: the end of its interval nearest zero (0 when the
/// interval straddles zero), or the point when there is no interval.
fn conservative_magnitude(change: &Change) -> f64 {
    match (change.lower_pct, change.upper_pct) {
        (Some(lower), Some(upper)) if lower > 0.0 && upper > 0.0 => lower.min(upper),
        (Some(lower), Some(upper)) if lower < 0.0 && upper < 0.0 => (-lower).min(-upper),
        (Some(_), Some(_)) => 0.0,
        _ => change.point_pct.abs(),
    }
}

/// Compares `head` against `base`.
///
/// Rows are paired by `(benchmark full id, metric)`; if a run holds a key twice the first
/// occurrence is used (and a reason says so). Each paired row is judged by the best evidence both
/// sides offer, in this order:
///
/// 1. **samples**: both sides have at least [`MIN_SAMPLES`] raw samples with positive
///    per-iteration times. `p` = two-sided [`stats::mann_whitney_u`] on `ln(time)`; the change is
///    `exp(HL) - 1` with the Moses interval ([`stats::hodges_lehmann`] of head against base on
///    `ln(time)` at `confidence`). Samples are per-iteration times; for a
///    [`Direction::HigherIsBetter`] metric the metric is taken as proportional to `1 / time`,
///    so the change is `exp(-HL) - 1` (interval bounds swapped). The p-values of all sample rows
///    that are not ignored form the family and are adjusted by `config.correction`;
///    significant iff adjusted `p <= alpha`.
/// 2. **intervals**: either side has finite lower and upper bounds (a side without them counts
///    as `[v, v]`): significant iff the intervals do not overlap. Change = `after / before - 1`
///    with interval `[lo_head / hi_base - 1, hi_head / lo_base - 1]`.
/// 3. **exact**: no samples or bounds: significant iff `after != before`. Change =
///    `after / before - 1`, its interval the point itself.
///
/// Then `Regression`/`Improvement` iff significant, `|change| > max(threshold, noise floor)`, and
/// in the bad/good direction; else `Unchanged`. When the base value is 0 the relative change is
/// undefined (`change` is `None`) and any nonzero head counts as an infinitely large change.
///
/// Pure and deterministic; never panics. Cost: O(n m) per sample row (n, m samples).
#[must_use]
pub fn compare(
    base: &[Measurement],
    head: &[Measurement],
    history: &History,
    config: &CompareConfig,
) -> Comparison {
    compare_rows(base, head, history, config, false)
}

/// Compares the two sides of a paired A/B run (`bench-run ab`): rows whose results carry one
/// per-process value per round on both sides ([`SamplingMode::PerProcess`], the same number of
/// rounds) are judged on the rounds' paired log-ratios (evidence [`Evidence::Paired`]: exact
/// sign test, median with its order-statistic interval; see [`crate::paired`]); rows whose
/// rounds all gave one value on each side (deterministic metrics) are compared exactly; any
/// other row as [`compare`] would, without a history. Paired rows have no noise floor: their
/// interval already holds the between-process noise. Each paired row also carries its
/// [`crate::paired::Calibration`] at the family's strictest level.
#[must_use]
pub fn compare_paired(
    base: &[Measurement],
    head: &[Measurement],
    config: &CompareConfig,
) -> Comparison {
    compare_rows(base, head, &History::new(), config, true)
}

fn compare_rows(
    base: &[Measurement],
    head: &[Measurement],
    history: &History,
    config: &CompareConfig,
    paired: bool,
) -> Comparison {
    let mut slots: BTreeMap<MetricKey, Slot<'_>> = BTreeMap::new();
    for m in base {
        let slot = slots.entry(MetricKey::of(m)).or_default();
        if slot.base.is_none() {
            slot.base = Some(m);
        } else {
            slot.base_duplicates += 1;
        }
    }
    for m in head {
        let slot = slots.entry(MetricKey::of(m)).or_default();
        if slot.head.is_none() {
            slot.head = Some(m);
        } else {
            slot.head_duplicates += 1;
        }
    }

    let mut drafts: Vec<Draft> = slots
        .into_iter()
        .filter_map(|(key, slot)| assess(key, &slot, history, config, paired))
        .collect();

    // The family: sample rows that are not ignored, in row order.
    let family: Vec<(usize, f64)> = drafts
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match &d.judgement {
            Judgement::Samples(mw) if d.ignored_by.is_none() => Some((i, mw.p_value)),
            Judgement::Paired(p) if d.ignored_by.is_none() => Some((i, *p)),
            _ => None,
        })
        .collect();
    let raw: Vec<f64> = family.iter().map(|&(_, p)| p).collect();
    let adjusted = config.correction.adjust(&raw);
    for (&(i, _), p) in family.iter().zip(adjusted) {
        if let Some(d) = drafts.get_mut(i) {
            d.p_adjusted = Some(p);
        }
    }
    let family_size = family.len();

    let rows: Vec<Row> = drafts
        .into_iter()
        .map(|d| finish(d, config, family_size))
        .collect();

    let mut counts = Counts::default();
    for row in &rows {
        match row.verdict {
            Verdict::Regression => counts.regressions += 1,
            Verdict::Improvement => counts.improvements += 1,
            Verdict::Unchanged => counts.unchanged += 1,
            Verdict::New => counts.new += 1,
            Verdict::Missing => counts.missing += 1,
            Verdict::Ignored => counts.ignored += 1,
        }
        if row.quarantined_by.is_some() {
            counts.quarantined += 1;
        }
        let paired = row.before.is_some() && row.after.is_some();
        if paired && row.verdict != Verdict::Ignored {
            counts.paired += 1;
            if matches!(row.evidence, Evidence::Unusable { .. }) {
                counts.unusable += 1;
            }
        }
    }

    Comparison {
        geomean: geomean(&rows, config.confidence),
        rows,
        counts,
        correction: config.correction,
        family_size,
        same_binary: None,
    }
}

/// Geometric mean of oriented ratios (`after/before` for lower-is-better, `before/after` for
/// higher-is-better, so above 1 is always worse) over paired, usable, non-ignored rows with
/// positive finite values.
fn geomean(rows: &[Row], confidence: f64) -> Option<Geomean> {
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| {
            r.verdict != Verdict::Ignored
                && !matches!(r.evidence, Evidence::Unusable { .. } | Evidence::Unpaired)
        })
        .filter_map(|r| {
            let (b, a) = (r.before?, r.after?);
            let ratio = match r.direction {
                Direction::LowerIsBetter => a / b,
                Direction::HigherIsBetter => b / a,
            };
            (ratio.is_finite() && ratio > 0.0).then_some(ratio)
        })
        .collect();
    let g = stats::geometric_mean_ratio(&ratios, confidence)?;
    let pct = |r: f64| (r - 1.0) * 100.0;
    Some(Geomean {
        ratio: g.ratio,
        change_pct: pct(g.ratio),
        lower_pct: g.lower.map(pct),
        upper_pct: g.upper.map(pct),
        n_rows: g.n,
    })
}

/// Per-iteration times of a measurement, logged, if it has enough usable samples.
fn log_times(m: &Measurement) -> Result<Vec<f64>, String> {
    let samples = m.samples.as_ref().ok_or_else(|| "no samples".to_owned())?;
    if samples.len() < MIN_SAMPLES {
        return Err(format!("only {} sample(s)", samples.len()));
    }
    let times = samples.per_iteration_ns();
    if times.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
        return Err("a per-iteration time of 0, whose logarithm is undefined".to_owned());
    }
    Ok(times.iter().map(|t| t.ln()).collect())
}

/// The per-round values of a paired A/B result, in round order.
fn per_round_values(m: &Measurement) -> Option<&[f64]> {
    m.samples
        .as_ref()
        .filter(|s| s.mode() == SamplingMode::PerProcess)
        .map(Samples::times_ns)
}

/// Whether every value equals the first (bit for bit: deterministic counts repeat exactly).
fn is_constant(values: &[f64]) -> bool {
    values
        .first()
        .is_some_and(|first| values.iter().all(|v| v.total_cmp(first).is_eq()))
}

/// Fills a draft with the evidence of paired rounds: per-round values `x` (base) and `y` (head).
fn paired_evidence(draft: &mut Draft, x: &[f64], y: &[f64], confidence: f64) -> Result<(), String> {
    let d = paired::log_ratios(x, y)?;
    let c = paired::analyze(&d, confidence)
        .ok_or_else(|| "the rounds' log-ratios cannot be analysed".to_owned())?;
    let pct = |log_ratio: f64| log_ratio.exp_m1() * 100.0;
    // The values are the metric's own, so the change is head over base whichever way is better.
    let change = Change {
        point_pct: pct(c.log_median),
        lower_pct: Some(pct(c.log_lower)),
        upper_pct: Some(pct(c.log_upper)),
    };
    let ties = c.rounds - c.head_higher - c.head_lower;
    draft.notes.push(format!(
        "Evidence: {} paired round(s), one process per side per round in a balanced random order. The head's value was higher in {} round(s) and lower in {}{}: exact two-sided sign test p = {}.",
        c.rounds,
        c.head_higher,
        c.head_lower,
        if ties > 0 {
            format!(" ({ties} tie(s) left out)")
        } else {
            String::new()
        },
        pval(c.p_value)
    ));
    draft.notes.push(format!(
        "Change {}, {}% interval [{}, {}] (achieved coverage {:.1}%): median of the rounds' ln(head / base) = {:.5}, interval from order statistics {} and {} of {}.",
        pct_str(change.point_pct),
        num(100.0 * confidence),
        change.lower_pct.map_or_else(|| "?".to_owned(), pct_str),
        change.upper_pct.map_or_else(|| "?".to_owned(), pct_str),
        100.0 * c.coverage,
        c.log_median,
        c.k,
        c.rounds + 1 - c.k,
        c.rounds
    ));
    if c.coverage + 1e-12 < confidence {
        draft.notes.push(format!(
            "The rounds are too few for a {:.1}% interval; the whole range covers only {:.1}%.",
            100.0 * confidence,
            100.0 * c.coverage
        ));
    }
    // The median of the rounds, not the interval's end: the rounds are the replicates, and
    // significance over them already says the change is real. Requiring the whole interval
    // beyond the threshold missed most 5% slowdowns under load with 10 rounds (interval
    // +-4%; results/accuracy), while the median beyond 3% never alarmed on A/A pairs.
    draft.magnitude_pct = change.point_pct.abs();
    draft.sign = signum(change.point_pct);
    draft.change = Some(change);
    draft.evidence = Evidence::Paired {
        rounds: c.rounds,
        head_higher: c.head_higher,
        head_lower: c.head_lower,
        k: c.k,
        coverage: c.coverage,
    };
    draft.judgement = Judgement::Paired(c.p_value);
    draft.noise = NoiseAnalysis {
        floor: NoiseFloor {
            pct: 0.0,
            source: NoiseSource::Paired,
        },
        explanation: NoiseExplanation::default(),
        flags: Vec::new(),
    };
    draft.log_ratios = Some(d);
    Ok(())
}

/// The finite `[lower, upper]` of an estimate, if it has both.
fn bounds(e: &Estimate) -> Option<(f64, f64)> {
    match (e.lower, e.upper) {
        (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() => Some((lo, hi)),
        _ => None,
    }
}

/// Relative change in percent: `(after / before - 1) * 100`; 0 when both are 0; `None` when the
/// base is 0 and the head is not.
fn relative_pct(before: f64, after: f64) -> Option<f64> {
    if before > 0.0 {
        Some((after / before - 1.0) * 100.0)
    } else if after - before == 0.0 {
        Some(0.0)
    } else {
        None
    }
}

/// Judges one key (before the correction). `None` only for an empty slot.
fn assess(
    key: MetricKey,
    slot: &Slot<'_>,
    history: &History,
    config: &CompareConfig,
    paired: bool,
) -> Option<Draft> {
    let reference = slot.head.or(slot.base)?;
    let (threshold_pct, threshold_pattern) = config.threshold_for(&key.benchmark);
    let threshold_pattern = threshold_pattern.map(str::to_owned);
    let ignored_by = config.ignored_by(&key.benchmark).map(str::to_owned);
    // Ignoring takes precedence: an ignored row is not also quarantined.
    let quarantined_by = config
        .quarantined_by(&key.benchmark)
        .filter(|_| ignored_by.is_none())
        .map(str::to_owned);
    let noise = noise_analysis(history.get(&key).map_or(&[][..], Vec::as_slice), config);
    let mut notes = Vec::new();
    if slot.base_duplicates > 0 {
        notes.push(format!(
            "The base run holds this key {} more time(s); the first occurrence was used.",
            slot.base_duplicates
        ));
    }
    if slot.head_duplicates > 0 {
        notes.push(format!(
            "The head run holds this key {} more time(s); the first occurrence was used.",
            slot.head_duplicates
        ));
    }
    let mut draft = Draft {
        key,
        unit: reference.unit.clone(),
        direction: reference.direction,
        before: slot.base.map(|m| m.estimate.point),
        after: slot.head.map(|m| m.estimate.point),
        change: None,
        magnitude_pct: 0.0,
        sign: 0.0,
        judgement: Judgement::None,
        evidence: Evidence::Unpaired,
        p_adjusted: None,
        noise,
        threshold_pct,
        threshold_pattern,
        ignored_by,
        quarantined_by,
        notes,
        log_ratios: None,
    };
    let (Some(b), Some(h)) = (slot.base, slot.head) else {
        return Some(draft);
    };

    let unusable = if b.unit != h.unit {
        Some(format!(
            "units differ: base `{}`, head `{}`",
            b.unit, h.unit
        ))
    } else if b.direction != h.direction {
        Some(format!(
            "directions differ: base {}, head {}",
            direction_words(b.direction),
            direction_words(h.direction)
        ))
    } else {
        [("base", b.estimate.point), ("head", h.estimate.point)]
            .iter()
            .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
            .map(|(side, v)| format!("the {side} estimate {v} is negative or not finite"))
    };
    if let Some(reason) = unusable {
        draft.notes.push(format!("Input unusable: {reason}."));
        draft.evidence = Evidence::Unusable { reason };
        return Some(draft);
    }

    let (before, after) = (b.estimate.point, h.estimate.point);
    let mut deterministic = false;
    if let (true, Some(x), Some(y)) = (paired, per_round_values(b), per_round_values(h)) {
        if is_constant(x) && is_constant(y) {
            deterministic = true;
            draft.notes.push(format!(
                "Every one of the {} round(s) gave the same value on each side: the metric is deterministic, so the values are compared exactly.",
                x.len().max(y.len())
            ));
        } else {
            match paired_evidence(&mut draft, x, y, config.confidence) {
                Ok(()) => return Some(draft),
                Err(why) => draft.notes.push(format!(
                    "No paired evidence: {why}; the rows are compared unpaired."
                )),
            }
        }
    }
    match (log_times(b), log_times(h)) {
        _ if deterministic => {}
        (Ok(x), Ok(y)) => {
            if let (Some(mw), Some(shift)) = (
                stats::mann_whitney_u(&y, &x),
                stats::hodges_lehmann(&x, &y, config.confidence),
            ) {
                let pct = |log_ratio: f64| log_ratio.exp_m1() * 100.0;
                let change = match draft.direction {
                    Direction::LowerIsBetter => Change {
                        point_pct: pct(shift.estimate),
                        lower_pct: Some(pct(shift.lower)),
                        upper_pct: Some(pct(shift.upper)),
                    },
                    Direction::HigherIsBetter => Change {
                        point_pct: pct(-shift.estimate),
                        lower_pct: Some(pct(-shift.upper)),
                        upper_pct: Some(pct(-shift.lower)),
                    },
                };
                draft.notes.push(format!(
                    "Evidence: raw samples ({} base, {} head). Mann-Whitney U on ln(per-iteration time) of head against base: U = {}, z = {:.3}, two-sided p = {} ({}).",
                    x.len(),
                    y.len(),
                    num(mw.u),
                    mw.z,
                    pval(mw.p_value),
                    match mw.method {
                        MwuMethod::Exact => "exact null distribution",
                        MwuMethod::Normal => "normal approximation with tie and continuity correction",
                    }
                ));
                draft.notes.push(format!(
                    "Change {}, {}% interval [{}, {}] (achieved coverage {:.1}%): Hodges-Lehmann shift of ln(time) = {:.5}, Moses interval from the k = {} order statistic of the {} pairwise differences{}.",
                    pct_str(change.point_pct),
                    num(100.0 * config.confidence),
                    change.lower_pct.map_or_else(|| "?".to_owned(), pct_str),
                    change.upper_pct.map_or_else(|| "?".to_owned(), pct_str),
                    100.0 * shift.coverage,
                    shift.estimate,
                    shift.k,
                    x.len() * y.len(),
                    match draft.direction {
                        Direction::LowerIsBetter => "",
                        Direction::HigherIsBetter =>
                            " (higher is better: the metric is taken as proportional to 1/time, so the change is exp(-shift) - 1)",
                    }
                ));
                if shift.thinned {
                    draft.notes.push(format!(
                        "More than {} samples on a side: the change interval uses {} evenly spaced quantiles of each larger sample.",
                        stats::HL_MAX_SAMPLES,
                        stats::HL_MAX_SAMPLES
                    ));
                }
                if shift.coverage + 1e-12 < config.confidence {
                    draft.notes.push(format!(
                        "The samples are too few for a {:.1}% interval; the widest possible interval covers only {:.1}%.",
                        100.0 * config.confidence,
                        100.0 * shift.coverage
                    ));
                }
                // Compared with the limit: the end of the interval nearest zero, so a change
                // counts only when it is confidently beyond the limit (a transient stall that
                // widens the interval cannot carry the verdict on its point estimate alone).
                draft.magnitude_pct = conservative_magnitude(&change);
                draft.sign = signum(change.point_pct);
                draft.change = Some(change);
                draft.evidence = Evidence::Samples {
                    base_n: x.len(),
                    head_n: y.len(),
                    u: mw.u,
                    z: mw.z,
                    method: mw.method,
                    coverage: shift.coverage,
                };
                draft.judgement = Judgement::Samples(mw);
                return Some(draft);
            }
        }
        (base_result, head_result) => {
            // Only worth a sentence when some samples exist but could not be used.
            if b.samples.is_some() || h.samples.is_some() {
                for (side, result) in [("base", base_result), ("head", head_result)] {
                    if let Err(why) = result {
                        draft.notes.push(format!(
                            "No sample evidence: the {side} run has {why}; sample evidence needs at least {MIN_SAMPLES} usable samples on both sides."
                        ));
                    }
                }
            }
        }
    }

    // No sample evidence: intervals or exact values.
    let point = relative_pct(before, after);
    draft.sign = signum(after - before);
    draft.magnitude_pct = match point {
        Some(p) => p.abs(),
        None if draft.sign == 0.0 => 0.0,
        None => f64::INFINITY,
    };
    let (b_bounds, h_bounds) = if deterministic {
        (None, None)
    } else {
        (bounds(&b.estimate), bounds(&h.estimate))
    };
    if b_bounds.is_some() || h_bounds.is_some() {
        let (bl, bh) = b_bounds.unwrap_or((before, before));
        let (hl, hh) = h_bounds.unwrap_or((after, after));
        let overlap = hl <= bh && bl <= hh;
        draft.change = point.map(|p| Change {
            point_pct: p,
            lower_pct: relative_pct(bh, hl),
            upper_pct: relative_pct(bl, hh),
        });
        let side = |has: bool| {
            if has {
                "reported bounds"
            } else {
                "no bounds: the exact value"
            }
        };
        draft.notes.push(format!(
            "Evidence: confidence intervals, no p-value (raw samples missing on at least one side). Base [{}, {}] ({}), head [{}, {}] ({}): {}.",
            num(bl),
            num(bh),
            side(b_bounds.is_some()),
            num(hl),
            num(hh),
            side(h_bounds.is_some()),
            if overlap {
                "the intervals overlap, so the change is not significant"
            } else {
                "the intervals do not overlap, so the change is significant"
            }
        ));
        draft.evidence = Evidence::Intervals { overlap };
        draft.judgement = Judgement::Decided(!overlap);
    } else {
        let differs = draft.sign != 0.0;
        draft.change = point.map(|p| Change {
            point_pct: p,
            lower_pct: Some(p),
            upper_pct: Some(p),
        });
        draft.notes.push(format!(
            "Evidence: exact values (no samples, no bounds): {}.",
            if differs {
                "they differ, so the change is significant"
            } else {
                "they are equal, so there is no change"
            }
        ));
        draft.evidence = Evidence::Exact;
        draft.judgement = Judgement::Decided(differs);
        if draft.threshold_pattern.is_none() {
            draft.threshold_pct = config.deterministic_threshold_pct;
        }
        // A deterministic metric has no run-to-run noise to assume: without history its
        // floor is 0 and the deterministic threshold alone sets the limit.
        if matches!(draft.noise.floor.source, NoiseSource::Default { .. }) {
            draft.noise.floor.pct = 0.0;
        }
    }
    if point.is_none() && draft.sign != 0.0 {
        draft.notes.push(
            "The base value is 0: the relative change is undefined and counts as infinitely large."
                .to_owned(),
        );
    } else if let Some(c) = draft.change {
        draft.notes.push(format!(
            "Change {} = after / before - 1 of the headline estimates{}.",
            pct_str(c.point_pct),
            match (c.lower_pct, c.upper_pct, &draft.evidence) {
                (Some(lo), Some(hi), Evidence::Intervals { .. }) => format!(
                    ", interval [{}, {}] from the bounds",
                    pct_str(lo),
                    pct_str(hi)
                ),
                _ => String::new(),
            }
        ));
    }
    Some(draft)
}

/// Applies the corrected p-value and the rule; writes the reasons.
fn finish(d: Draft, config: &CompareConfig, family_size: usize) -> Row {
    let mut reasons = Vec::with_capacity(d.notes.len() + 6);
    reasons.push(format!(
        "`{}` metric `{}` in {}: {} is better.",
        d.key.benchmark,
        d.key.metric,
        d.unit,
        direction_words(d.direction)
    ));
    reasons.push(match (d.before, d.after) {
        (Some(b), Some(a)) => format!(
            "Before {} {unit}, after {} {unit} (headline estimates).",
            num(b),
            num(a),
            unit = d.unit
        ),
        (None, Some(a)) => format!("Only in head ({} {}): new.", num(a), d.unit),
        (Some(b), None) => format!("Only in base ({} {}): missing from head.", num(b), d.unit),
        (None, None) => "In neither run.".to_owned(),
    });
    reasons.extend(d.notes);

    let p_value = match &d.judgement {
        Judgement::Samples(mw) => Some(mw.p_value),
        Judgement::Paired(p) => Some(*p),
        _ => None,
    };
    let significant = match (&d.judgement, d.p_adjusted) {
        (Judgement::Samples(_) | Judgement::Paired(_), Some(p)) => p <= config.alpha,
        (Judgement::Decided(s), _) => *s,
        _ => false,
    };
    if let (Some(raw), Some(p)) = (p_value, d.p_adjusted) {
        let adjusted = match config.correction {
            Correction::None => "no correction".to_owned(),
            c => format!(
                "{} over {family_size} test(s) gives {}",
                match c {
                    Correction::Holm => "Holm's step-down correction",
                    _ => "Benjamini-Hochberg correction",
                },
                pval(p)
            ),
        };
        reasons.push(format!(
            "Significance: p = {}, {adjusted}; {} alpha = {}, so the change is {}significant.",
            pval(raw),
            if significant { "<=" } else { ">" },
            config.alpha,
            if significant { "" } else { "not " }
        ));
    }

    let limit = d.threshold_pct.max(d.noise.floor.pct);
    let paired = matches!(
        d.evidence,
        Evidence::Samples { .. }
            | Evidence::Paired { .. }
            | Evidence::Intervals { .. }
            | Evidence::Exact
    );
    if paired || d.ignored_by.is_some() {
        reasons.push(match &d.threshold_pattern {
            Some(p) => format!(
                "Threshold {:.2}% (per-benchmark pattern `{p}`).",
                d.threshold_pct
            ),
            None if matches!(d.evidence, Evidence::Exact) => format!(
                "Threshold {:.2}% (deterministic metrics: exact values).",
                d.threshold_pct
            ),
            None => format!("Threshold {:.2}% (global).", d.threshold_pct),
        });
        reasons.extend(d.noise.reasons(config.min_history));
    }

    let worse = match d.direction {
        Direction::LowerIsBetter => d.sign > 0.0,
        Direction::HigherIsBetter => d.sign < 0.0,
    };
    let better = d.sign != 0.0 && !worse;
    let exceeds = d.magnitude_pct > limit;

    let verdict = if let Some(pattern) = &d.ignored_by {
        reasons.push(format!(
            "Verdict: ignored (matches ignore pattern `{pattern}`); never fails the gate."
        ));
        Verdict::Ignored
    } else {
        match (&d.evidence, d.before, d.after) {
            (Evidence::Unpaired, None, Some(_)) => {
                reasons.push("Verdict: new.".to_owned());
                Verdict::New
            }
            (Evidence::Unpaired, _, _) => {
                reasons.push("Verdict: missing.".to_owned());
                Verdict::Missing
            }
            (Evidence::Unusable { .. }, _, _) => {
                reasons.push("Verdict: unchanged (input unusable; the gate exits 2).".to_owned());
                Verdict::Unchanged
            }
            _ => {
                let size = if d.magnitude_pct.is_finite() {
                    format!("{:.2}%", d.magnitude_pct)
                } else {
                    "infinite".to_owned()
                };
                let measure = match d.evidence {
                    Evidence::Samples { .. } => "|change| at the interval end nearest 0",
                    Evidence::Paired { .. } => "|median change of the rounds|",
                    _ => "|change|",
                };
                let comparison = format!(
                    "{measure} {size} {} max(threshold {:.2}%, noise floor {:.2}%) = {:.2}%",
                    if exceeds { ">" } else { "<=" },
                    d.threshold_pct,
                    d.noise.floor.pct,
                    limit
                );
                let verdict = if significant && exceeds && worse {
                    Verdict::Regression
                } else if significant && exceeds && better {
                    Verdict::Improvement
                } else {
                    Verdict::Unchanged
                };
                let why = match verdict {
                    Verdict::Regression => format!(
                        "significant, {comparison}, and {} is worse for this metric",
                        if d.sign > 0.0 { "up" } else { "down" }
                    ),
                    Verdict::Improvement => format!(
                        "significant, {comparison}, and {} is better for this metric",
                        if d.sign > 0.0 { "up" } else { "down" }
                    ),
                    _ if !significant => "not significant".to_owned(),
                    _ if !exceeds => format!("significant but {comparison}"),
                    _ => "no change".to_owned(),
                };
                reasons.push(format!("Verdict: {verdict} ({why})."));
                verdict
            }
        }
    };
    if let Some(pattern) = &d.quarantined_by {
        reasons.push(format!(
            "Quarantined (matches quarantine pattern `{pattern}`): the verdict is shown but never fails the gate."
        ));
    }

    let calibration = d.log_ratios.as_deref().and_then(|rounds| {
        // Holm's first step is the strictest level any row of the family faces.
        #[expect(clippy::cast_precision_loss, reason = "family sizes are small")]
        let alpha = match config.correction {
            Correction::None => config.alpha,
            _ => config.alpha / family_size.max(1) as f64,
        };
        paired::calibrate(rounds, config.confidence, alpha, limit)
    });
    if let Some(c) = &calibration {
        reasons.push(format!(
            "Calibration at these settings ({} resamples of the rounds with their change taken out, judged at the strictest level alpha = {}): false alarms {:.1}% of the time with no change; {}.",
            c.resamples,
            pval(c.alpha),
            100.0 * c.false_alarm_rate,
            c.detectable_pct.map_or_else(
                || "no change up to 1000% would be caught 9 times in 10 (too few rounds for this suite)".to_owned(),
                |p| format!("a change of {p:.1}% or more is caught 9 times in 10")
            )
        ));
    }
    Row {
        benchmark: d.key.benchmark,
        metric: d.key.metric,
        unit: d.unit,
        direction: d.direction,
        before: d.before,
        after: d.after,
        change: d.change,
        p_value,
        p_adjusted: d.p_adjusted,
        significant: significant && d.ignored_by.is_none(),
        noise_floor: d.noise.floor,
        noise: d.noise.explanation,
        flags: d.noise.flags,
        quarantined_by: d.quarantined_by,
        threshold_pct: d.threshold_pct,
        threshold_pattern: d.threshold_pattern,
        verdict,
        evidence: d.evidence,
        reasons,
        calibration,
    }
}

fn signum(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

fn direction_words(direction: Direction) -> &'static str {
    match direction {
        Direction::LowerIsBetter => "lower",
        Direction::HigherIsBetter => "higher",
    }
}

/// A value with about six significant digits, without trailing zeros (shared with the noise
/// model's sentences).
pub(crate) fn num(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() < 1e-3 || v.abs() >= 1e12) {
        return format!("{v:.4e}");
    }
    let s = format!("{v:.4}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A percentage with sign and two decimals.
pub(crate) fn pct_str(v: f64) -> String {
    format!("{v:+.2}%")
}

/// A p-value: four decimals, or scientific notation below 1e-4.
fn pval(p: f64) -> String {
    if p > 0.0 && p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::model::RunProvenance;
    use crate::model::{
        BenchmarkId, BuildConfig, Machine, Samples, SamplingMode, Toolchain, metric,
    };

    /// Deterministic uniform numbers in [0, 1) (64-bit LCG, high bits).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 11) as f64 / (1_u64 << 53) as f64
        }
    }

    /// `n` per-iteration times around `center` with +-`jitter_pct` uniform jitter.
    fn jittered(seed: u64, n: usize, center: f64, jitter_pct: f64) -> Vec<f64> {
        let mut rng = Lcg(seed);
        (0..n)
            .map(|_| center * (1.0 + jitter_pct / 100.0 * (2.0 * rng.next() - 1.0)))
            .collect()
    }

    /// A time measurement with raw samples (10 iterations each); the headline is the median.
    fn timed(id: &str, per_iter: &[f64]) -> Measurement {
        let iters = vec![10.0; per_iter.len()];
        let times = per_iter.iter().map(|t| t * 10.0).collect();
        Measurement {
            benchmark: BenchmarkId::named(id),
            metric: metric::TIME.to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(stats::median(per_iter).unwrap()),
            statistics: BTreeMap::new(),
            throughput: None,
            samples: Some(Samples::new(SamplingMode::Flat, iters, times).unwrap()),
        }
    }

    /// A measurement with only a point estimate (BMF-style).
    fn exact(id: &str, metric: &str, unit: &str, direction: Direction, value: f64) -> Measurement {
        Measurement {
            benchmark: BenchmarkId::named(id),
            metric: metric.to_owned(),
            unit: unit.to_owned(),
            direction,
            estimate: Estimate::point(value),
            statistics: BTreeMap::new(),
            throughput: None,
            samples: None,
        }
    }

    fn bounded(id: &str, point: f64, lower: f64, upper: f64) -> Measurement {
        let mut m = exact(id, metric::TIME, "ns", Direction::LowerIsBetter, point);
        m.estimate.lower = Some(lower);
        m.estimate.upper = Some(upper);
        m.estimate.confidence_level = Some(0.95);
        m
    }

    /// History points with run ids 1, 2, ...
    fn points(values: &[f64]) -> Vec<HistoryPoint> {
        values
            .iter()
            .zip(1..)
            .map(|(&v, run)| HistoryPoint::new(run, v))
            .collect()
    }

    fn run(base: &[Measurement], head: &[Measurement]) -> Comparison {
        compare(base, head, &History::new(), &CompareConfig::default())
    }

    fn row<'a>(c: &'a Comparison, id: &str) -> &'a Row {
        c.rows.iter().find(|r| r.benchmark == id).unwrap()
    }

    #[test]
    fn thirty_percent_slowdown_is_a_regression() {
        let base = [timed("decode/100", &jittered(1, 100, 1000.0, 2.0))];
        let head = [timed("decode/100", &jittered(2, 100, 1300.0, 2.0))];
        let c = run(&base, &head);
        let r = row(&c, "decode/100");
        assert_eq!(r.verdict, Verdict::Regression, "{:#?}", r.reasons);
        assert!(c.has_regression());
        assert_eq!(c.regressions().count(), 1);
        let change = r.change.unwrap();
        assert!((change.point_pct - 30.0).abs() < 1.5, "{change:?}");
        assert!(change.lower_pct.unwrap() < change.point_pct);
        assert!(change.upper_pct.unwrap() > change.point_pct);
        assert!(r.p_value.unwrap() < 1e-10 && r.p_adjusted.unwrap() < 1e-10);
        assert!(r.significant);
        assert!(matches!(
            r.evidence,
            Evidence::Samples { base_n: 100, head_n: 100, method: MwuMethod::Normal, z, .. } if z > 0.0
        ));
        assert_eq!(c.family_size, 1);
        assert_eq!(gate(&c, &[], false), GateOutcome::Regression);
        assert_eq!(gate(&c, &[], false).exit_code(), 1);
        // The explanation names every input.
        let text = r.reasons.join("\n");
        for needle in [
            "Mann-Whitney",
            "Hodges-Lehmann",
            "Holm",
            "Threshold 3.00%",
            "Noise floor 2.00%",
            "Verdict: regression",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        // The same slowdown is an improvement the other way round.
        let back = run(&head, &base);
        assert_eq!(row(&back, "decode/100").verdict, Verdict::Improvement);
        assert!((row(&back, "decode/100").change.unwrap().point_pct + 23.1).abs() < 1.5);
    }

    #[test]
    fn a_a_comparison_is_unchanged() {
        let base: Vec<Measurement> = (0..20)
            .map(|i| timed(&format!("b{i:02}"), &jittered(100 + i, 100, 500.0, 2.0)))
            .collect();
        let head: Vec<Measurement> = (0..20)
            .map(|i| timed(&format!("b{i:02}"), &jittered(900 + i, 100, 500.0, 2.0)))
            .collect();
        let c = run(&base, &head);
        assert_eq!(c.counts.unchanged, 20);
        assert_eq!(c.family_size, 20);
        for r in &c.rows {
            assert_eq!(r.verdict, Verdict::Unchanged, "{}", r.reasons.join("\n"));
            assert!(r.change.unwrap().point_pct.abs() < 1.0);
            assert!(r.p_adjusted.unwrap() >= r.p_value.unwrap());
        }
        let g = c.geomean.unwrap();
        assert_eq!(g.n_rows, 20);
        assert!(g.change_pct.abs() < 1.0);
        assert_eq!(gate(&c, &[], false), GateOutcome::Pass);
    }

    #[test]
    fn small_shift_is_significant_but_below_threshold() {
        // 3% slower with 0.5% jitter: clearly significant, but within the 5% threshold.
        let base = [timed("x", &jittered(7, 50, 100.0, 0.5))];
        let head = [timed("x", &jittered(8, 50, 103.0, 0.5))];
        let c = run(&base, &head);
        let r = row(&c, "x");
        assert!(r.significant);
        assert_eq!(r.verdict, Verdict::Unchanged);
        assert!(
            r.reasons
                .last()
                .unwrap()
                .contains("significant but |change| at the interval end nearest 0 ")
        );
        // With a 1% threshold it becomes a regression (the default floor is 2%).
        let config = CompareConfig {
            threshold_pct: 1.0,
            ..CompareConfig::default()
        };
        let c = compare(&base, &head, &History::new(), &config);
        assert_eq!(row(&c, "x").verdict, Verdict::Regression);
    }

    #[test]
    fn higher_is_better_metrics() {
        let ops = |v: f64| exact("rows", "ops", "ops/s", Direction::HigherIsBetter, v);
        let c = run(&[ops(1000.0)], &[ops(700.0)]);
        let r = row(&c, "rows");
        assert_eq!(r.verdict, Verdict::Regression);
        assert!((r.change.unwrap().point_pct + 30.0).abs() < 1e-9);
        assert_eq!(
            row(&run(&[ops(1000.0)], &[ops(1300.0)]), "rows").verdict,
            Verdict::Improvement
        );

        // With time samples, a higher-is-better metric is taken as 1/time.
        let mut base = timed("tp", &jittered(3, 100, 1000.0, 2.0));
        let mut head = timed("tp", &jittered(4, 100, 1300.0, 2.0));
        for m in [&mut base, &mut head] {
            m.metric = "throughput".to_owned();
            m.unit = "bytes/s".to_owned();
            m.direction = Direction::HigherIsBetter;
            m.estimate = Estimate::point(1e9 / m.estimate.point);
        }
        let c = run(&[base], &[head]);
        let r = row(&c, "tp");
        assert_eq!(r.verdict, Verdict::Regression, "{:#?}", r.reasons);
        let change = r.change.unwrap();
        assert!((change.point_pct + 23.1).abs() < 1.5, "{change:?}");
        assert!(change.lower_pct.unwrap() < change.point_pct);
        assert!(change.upper_pct.unwrap() > change.point_pct);
        // The geomean orients the ratio: >1 is worse.
        assert!(c.geomean.unwrap().change_pct > 25.0);
    }

    #[test]
    fn geomean_orients_mixed_directions() {
        let base = [
            exact("a", "time", "ns", Direction::LowerIsBetter, 100.0),
            exact("b", "ops", "ops/s", Direction::HigherIsBetter, 100.0),
        ];
        let head = [
            exact("a", "time", "ns", Direction::LowerIsBetter, 110.0),
            exact("b", "ops", "ops/s", Direction::HigherIsBetter, 50.0),
        ];
        let g = run(&base, &head).geomean.unwrap();
        assert!((g.ratio - (1.1_f64 * 2.0).sqrt()).abs() < 1e-12);
        assert_eq!(g.n_rows, 2);
        assert!(g.lower_pct.unwrap() <= g.change_pct && g.change_pct <= g.upper_pct.unwrap());
    }

    #[test]
    fn ignore_list() {
        let base = [
            timed("flaky/io", &jittered(1, 100, 1000.0, 2.0)),
            timed("stable", &jittered(5, 100, 1000.0, 2.0)),
        ];
        let head = [
            timed("flaky/io", &jittered(2, 100, 1300.0, 2.0)),
            timed("stable", &jittered(6, 100, 1000.0, 2.0)),
            exact("flaky/new", "time", "ns", Direction::LowerIsBetter, 1.0),
        ];
        let config = CompareConfig {
            ignore: vec!["flaky/*".to_owned()],
            ..CompareConfig::default()
        };
        let c = compare(&base, &head, &History::new(), &config);
        let r = row(&c, "flaky/io");
        assert_eq!(r.verdict, Verdict::Ignored);
        assert!(r.p_value.is_some() && r.p_adjusted.is_none());
        assert!(!r.significant);
        assert!(r.reasons.last().unwrap().contains("`flaky/*`"));
        assert_eq!(row(&c, "flaky/new").verdict, Verdict::Ignored);
        assert!(!c.has_regression());
        assert_eq!(c.family_size, 1);
        assert_eq!(c.counts.ignored, 2);
        assert_eq!(c.geomean.unwrap().n_rows, 1);
        assert_eq!(gate(&c, &[], false), GateOutcome::Pass);
    }

    #[test]
    fn per_benchmark_thresholds_first_match_wins() {
        let base = [
            timed("slow/a", &jittered(1, 100, 1000.0, 2.0)),
            timed("fast/a", &jittered(3, 100, 1000.0, 2.0)),
        ];
        let head = [
            timed("slow/a", &jittered(2, 100, 1300.0, 2.0)),
            timed("fast/a", &jittered(4, 100, 1300.0, 2.0)),
        ];
        let config = CompareConfig {
            per_benchmark_threshold: vec![("slow/*".to_owned(), 50.0), ("*".to_owned(), 1.0)],
            ..CompareConfig::default()
        };
        assert_eq!(config.threshold_for("slow/a"), (50.0, Some("slow/*")));
        assert_eq!(config.threshold_for("fast/a"), (1.0, Some("*")));
        let c = compare(&base, &head, &History::new(), &config);
        let slow = row(&c, "slow/a");
        assert_eq!(slow.verdict, Verdict::Unchanged);
        assert_eq!(
            (slow.threshold_pct, slow.threshold_pattern.as_deref()),
            (50.0, Some("slow/*"))
        );
        assert!(
            slow.reasons
                .iter()
                .any(|s| s.contains("per-benchmark pattern `slow/*`"))
        );
        assert_eq!(row(&c, "fast/a").verdict, Verdict::Regression);
    }

    #[test]
    fn new_and_missing_rows() {
        let base = [
            exact("gone", "time", "ns", Direction::LowerIsBetter, 5.0),
            exact("kept", "time", "ns", Direction::LowerIsBetter, 5.0),
        ];
        let head = [
            exact("added", "time", "ns", Direction::LowerIsBetter, 5.0),
            exact("kept", "time", "ns", Direction::LowerIsBetter, 5.0),
        ];
        let c = run(&base, &head);
        let ids: Vec<&str> = c.rows.iter().map(|r| r.benchmark.as_str()).collect();
        assert_eq!(ids, ["added", "gone", "kept"]);
        let added = row(&c, "added");
        assert_eq!(
            (added.verdict, added.before, added.after),
            (Verdict::New, None, Some(5.0))
        );
        assert_eq!(added.evidence, Evidence::Unpaired);
        assert_eq!(row(&c, "gone").verdict, Verdict::Missing);
        assert_eq!(row(&c, "kept").verdict, Verdict::Unchanged);
        assert_eq!((c.counts.new, c.counts.missing, c.counts.paired), (1, 1, 1));
        assert_eq!(gate(&c, &[], false), GateOutcome::Pass);
        // Nothing paired: the gate has nothing to judge.
        let c = run(&base[..1], &head[..1]);
        assert_eq!(gate(&c, &[], false), GateOutcome::Unusable);
    }

    #[test]
    fn exact_metrics() {
        let bytes = |v: f64| exact("enc", "bytes", "bytes", Direction::LowerIsBetter, v);
        let r = run(&[bytes(1000.0)], &[bytes(1100.0)]);
        assert_eq!(row(&r, "enc").verdict, Verdict::Regression);
        assert_eq!(row(&r, "enc").evidence, Evidence::Exact);
        assert!(row(&r, "enc").p_value.is_none());
        assert_eq!(r.family_size, 0);
        // Deterministic: 1% is beyond the deterministic threshold; 0.3% is within it.
        let r = run(&[bytes(1000.0)], &[bytes(1010.0)]);
        assert_eq!(row(&r, "enc").verdict, Verdict::Regression);
        assert_eq!(
            row(&r, "enc").threshold_pct,
            DEFAULT_DETERMINISTIC_THRESHOLD_PCT
        );
        let r = run(&[bytes(1000.0)], &[bytes(1003.0)]);
        assert!(row(&r, "enc").significant);
        assert_eq!(row(&r, "enc").verdict, Verdict::Unchanged);
        let r = run(&[bytes(1000.0)], &[bytes(1000.0)]);
        assert!(!row(&r, "enc").significant);
        assert_eq!(row(&r, "enc").change.unwrap().point_pct, 0.0);
        // From zero: the relative change is undefined and counts as infinite.
        let r = run(&[bytes(0.0)], &[bytes(8.0)]);
        let z = row(&r, "enc");
        assert_eq!((z.verdict, z.change), (Verdict::Regression, None));
        assert!(z.reasons.iter().any(|s| s.contains("base value is 0")));
        assert_eq!(
            row(&run(&[bytes(0.0)], &[bytes(0.0)]), "enc").verdict,
            Verdict::Unchanged
        );
    }

    #[test]
    fn interval_evidence() {
        let r = run(
            &[bounded("b", 100.0, 50.0, 150.0)],
            &[bounded("b", 130.0, 80.0, 180.0)],
        );
        let row_b = row(&r, "b");
        assert_eq!(row_b.evidence, Evidence::Intervals { overlap: true });
        assert_eq!(row_b.verdict, Verdict::Unchanged);
        assert!(row_b.reasons.iter().any(|s| s.contains("no p-value")));
        let r = run(
            &[bounded("b", 100.0, 95.0, 105.0)],
            &[bounded("b", 130.0, 125.0, 135.0)],
        );
        let row_b = row(&r, "b");
        assert_eq!(row_b.evidence, Evidence::Intervals { overlap: false });
        assert_eq!(row_b.verdict, Verdict::Regression);
        let change = row_b.change.unwrap();
        assert!((change.point_pct - 30.0).abs() < 1e-9);
        assert!((change.lower_pct.unwrap() - (125.0 / 105.0 - 1.0) * 100.0).abs() < 1e-9);
        assert!((change.upper_pct.unwrap() - (135.0 / 95.0 - 1.0) * 100.0).abs() < 1e-9);
        // One side without bounds counts as an exact interval.
        let plain = exact("b", metric::TIME, "ns", Direction::LowerIsBetter, 104.0);
        let r = run(&[bounded("b", 100.0, 95.0, 105.0)], &[plain]);
        assert_eq!(row(&r, "b").evidence, Evidence::Intervals { overlap: true });
        // Samples on one side only: bounds decide.
        let mut with_samples = timed("b", &jittered(1, 10, 100.0, 1.0));
        with_samples.estimate.lower = Some(99.0);
        with_samples.estimate.upper = Some(101.0);
        let r = run(&[with_samples], &[bounded("b", 200.0, 190.0, 210.0)]);
        assert_eq!(
            row(&r, "b").evidence,
            Evidence::Intervals { overlap: false }
        );
        assert_eq!(row(&r, "b").verdict, Verdict::Regression);
    }

    #[test]
    fn noise_floor_fence() {
        let config = CompareConfig::default();
        // Consecutive relative changes: 1%, 2%, 3%, 4%, 5%, 6% (all positive steps).
        let mut history = vec![100.0];
        for pct in 1..=6 {
            let last = *history.last().unwrap();
            history.push(last * (1.0 + f64::from(pct) / 100.0));
        }
        // Deltas 0.01..0.06: Q1 = 0.0225, Q3 = 0.0475, IQR = 0.025, fence = 0.0475 + 0.075.
        // (The steady climb has no change point and no outlier: every delta is used.)
        let history = points(&history);
        let floor = noise_floor(&history, &config);
        assert_eq!(floor.source, NoiseSource::History { n_deltas: 6 });
        assert!((floor.pct - 12.25).abs() < 1e-9, "{floor:?}");
        // Only the most recent max_history deltas count.
        let short = CompareConfig {
            max_history: 5,
            min_history: 5,
            ..CompareConfig::default()
        };
        // Deltas 0.02..0.06: Q1 = 0.03, Q3 = 0.05, fence = 0.05 + 0.06.
        let floor = noise_floor(&history, &short);
        assert_eq!(floor.source, NoiseSource::History { n_deltas: 5 });
        assert!((floor.pct - 11.0).abs() < 1e-9, "{floor:?}");
        // Too little history: the default.
        let floor = noise_floor(&history[..5], &config);
        assert_eq!(floor.source, NoiseSource::Default { n_deltas: 4 });
        assert_eq!(floor.pct, DEFAULT_NOISE_FLOOR_PCT);
        assert_eq!(
            noise_floor(&[], &config).source,
            NoiseSource::Default { n_deltas: 0 }
        );
        // Unusable values are dropped, and so is the outlier 15: deltas 10 -> 10 -> 11 only.
        let floor = noise_floor(&points(&[0.0, 10.0, 15.0, f64::NAN, 10.0, 11.0]), &config);
        assert_eq!(floor.source, NoiseSource::Default { n_deltas: 2 });
    }

    #[test]
    fn a_noisy_history_raises_the_limit() {
        // Run-to-run changes of about 20-40%: a 30% slowdown is within the noise.
        let history: History = [(
            MetricKey::new("noisy", metric::TIME),
            points(&[1000.0, 1300.0, 1000.0, 1400.0, 1000.0, 1250.0, 1000.0]),
        )]
        .into_iter()
        .collect();
        let base = [timed("noisy", &jittered(1, 100, 1000.0, 2.0))];
        let head = [timed("noisy", &jittered(2, 100, 1300.0, 2.0))];
        let c = compare(&base, &head, &history, &CompareConfig::default());
        let r = row(&c, "noisy");
        // Three of seven runs are off the median: too many to be outliers (at most a quarter of
        // a segment is trimmed), so only the farthest is dropped and the rest is noise.
        assert!(
            matches!(r.noise_floor.source, NoiseSource::History { n_deltas: 5 }),
            "{:?} {:#?}",
            r.noise_floor,
            r.reasons
        );
        assert!(r.noise_floor.pct > 35.0);
        assert!(r.significant);
        assert_eq!(r.verdict, Verdict::Unchanged, "{:#?}", r.reasons);
        // Two levels taking turns: the noise model flags it as too noisy (seven runs are too few
        // for two clusters of four, the least the bimodality test accepts), and so does the
        // comparison.
        assert!(
            matches!(r.flags.as_slice(), [NoiseFlag::TooNoisy { .. }]),
            "{:?}",
            r.flags
        );
        assert_eq!(c.flagged().count(), 1);
    }

    #[test]
    fn a_real_step_in_the_history_does_not_hide_a_ten_percent_regression() {
        // Issue 20: the history holds a real 12% step (20 runs at 1000 ns, then 8 at 1120 ns,
        // +-0.5%). Learnt from every consecutive change, the floor would let the step count as
        // noise; within segments it stays near the run-to-run noise, and a 10% slowdown of the
        // latest level is a regression.
        let mut rng = Lcg(11);
        let mut values: Vec<f64> = (0..20)
            .map(|_| 1000.0 * (1.0 + 0.005 * (2.0 * rng.next() - 1.0)))
            .collect();
        values.extend((0..8).map(|_| 1120.0 * (1.0 + 0.005 * (2.0 * rng.next() - 1.0))));
        let history: History = [(MetricKey::new("step", metric::TIME), points(&values))]
            .into_iter()
            .collect();
        let base = [timed("step", &jittered(3, 100, 1120.0, 2.0))];
        let head = [timed("step", &jittered(4, 100, 1232.0, 2.0))];
        let c = compare(&base, &head, &history, &CompareConfig::default());
        let r = row(&c, "step");
        assert!(
            matches!(r.noise_floor.source, NoiseSource::History { .. }),
            "{:#?}",
            r.reasons
        );
        assert!(r.noise_floor.pct < 3.0, "{:#?}", r.reasons);
        assert_eq!(r.noise.change_points.len(), 1);
        assert_eq!(r.noise.change_points[0].run, 21);
        assert_eq!(r.verdict, Verdict::Regression, "{:#?}", r.reasons);
        assert!(r.flags.is_empty());
        let text = r.reasons.join("\n");
        assert!(text.contains("2 segment(s): #1-#20"), "{text}");
        assert!(text.contains("change point(s) at #21 (+11.99%)"), "{text}");
        assert!(gate(&c, &[], false) == GateOutcome::Regression);
    }

    #[test]
    fn quarantined_rows_are_shown_but_never_fail_the_gate() {
        let base = [
            timed("flaky/io", &jittered(1, 100, 1000.0, 2.0)),
            timed("stable", &jittered(5, 100, 1000.0, 2.0)),
            exact("odd", "time", "ns", Direction::LowerIsBetter, 100.0),
        ];
        let head = [
            timed("flaky/io", &jittered(2, 100, 1300.0, 2.0)),
            timed("stable", &jittered(6, 100, 1000.0, 2.0)),
            exact("odd", "time", "ns", Direction::LowerIsBetter, f64::NAN),
        ];
        let plain = compare(&base, &head, &History::new(), &CompareConfig::default());
        assert_eq!(gate(&plain, &[], false), GateOutcome::Unusable);

        let config = CompareConfig {
            quarantine: vec!["flaky/*".to_owned(), "odd".to_owned()],
            ..CompareConfig::default()
        };
        let c = compare(&base, &head, &History::new(), &config);
        let r = row(&c, "flaky/io");
        assert_eq!(
            r.verdict,
            Verdict::Regression,
            "the verdict is still computed"
        );
        assert_eq!(r.quarantined_by.as_deref(), Some("flaky/*"));
        assert!(r.p_adjusted.is_some(), "still in the family");
        assert!(r.reasons.last().unwrap().starts_with("Quarantined"));
        assert_eq!(c.family_size, 2);
        assert_eq!(c.counts.regressions, 1);
        assert_eq!(c.counts.quarantined, 2);
        assert_eq!(c.counts.unusable, 1);
        assert!(!c.has_regression());
        assert_eq!(c.gating_regressions().count(), 0);
        assert_eq!(c.quarantined().count(), 2);
        assert_eq!(gate(&c, &[], false), GateOutcome::Pass);
        assert_eq!(row(&c, "stable").quarantined_by, None);

        // Ignoring wins over quarantine: the row is ignored, not quarantined.
        let both = CompareConfig {
            ignore: vec!["flaky/*".to_owned()],
            ..config
        };
        let c = compare(&base, &head, &History::new(), &both);
        let r = row(&c, "flaky/io");
        assert_eq!(r.verdict, Verdict::Ignored);
        assert_eq!(r.quarantined_by, None);
        assert_eq!(c.counts.quarantined, 1);
    }

    #[test]
    fn correction_is_applied_across_the_family() {
        // Small samples with a modest shift: raw p = 0.026 each, below alpha alone but not after Holm.
        let base: Vec<Measurement> = (0..4)
            .map(|i| {
                timed(
                    &format!("m{i}"),
                    &[100.0, 101.0, 102.0, 103.0, 104.0, 105.0],
                )
            })
            .collect();
        let head: Vec<Measurement> = (0..4)
            .map(|i| {
                timed(
                    &format!("m{i}"),
                    &[102.5, 104.5, 106.5, 107.5, 108.5, 109.5],
                )
            })
            .collect();
        let none = CompareConfig {
            correction: Correction::None,
            threshold_pct: 0.0,
            default_noise_floor_pct: 0.0,
            ..CompareConfig::default()
        };
        let c = compare(&base, &head, &History::new(), &none);
        let raw = c.rows[0].p_value.unwrap();
        assert!((raw - 24.0 / 924.0).abs() < 1e-12, "raw p {raw}");
        // U = 3 + 5 + 4 * 6 = 32 pairs with head > base; no ties and 12 samples: exact p-value
        // 2 P(U <= 4) = 2 * 12 / 924.
        assert!(matches!(
            c.rows[0].evidence,
            Evidence::Samples { u, method: MwuMethod::Exact, .. } if u == 32.0
        ));
        assert_eq!(c.counts.regressions, 4);
        let holm = CompareConfig {
            correction: Correction::Holm,
            ..none.clone()
        };
        let c = compare(&base, &head, &History::new(), &holm);
        assert_eq!(c.family_size, 4);
        assert!((c.rows[0].p_adjusted.unwrap() - (4.0 * raw).min(1.0)).abs() < 1e-12);
        assert_eq!(c.counts.regressions, 0);
        let bh = CompareConfig {
            correction: Correction::BenjaminiHochberg,
            ..none
        };
        let c = compare(&base, &head, &History::new(), &bh);
        // Equal p-values: BH leaves them as they are.
        assert!((c.rows[0].p_adjusted.unwrap() - raw).abs() < 1e-12);
        assert_eq!(c.counts.regressions, 4);
    }

    #[test]
    fn deterministic_and_order_independent() {
        let base: Vec<Measurement> = (0..10)
            .map(|i| {
                timed(
                    &format!("b{}", 9 - i),
                    &jittered(i, 30, 100.0 + i as f64, 3.0),
                )
            })
            .collect();
        let head: Vec<Measurement> = (0..10)
            .map(|i| timed(&format!("b{i}"), &jittered(50 + i, 30, 104.0, 3.0)))
            .collect();
        let a = run(&base, &head);
        let reversed_base: Vec<Measurement> = base.iter().rev().cloned().collect();
        let reversed_head: Vec<Measurement> = head.iter().rev().cloned().collect();
        let b = run(&reversed_base, &reversed_head);
        assert_eq!(a, b);
        assert_eq!(a, run(&base, &head));
        let ids: Vec<&str> = a.rows.iter().map(|r| r.benchmark.as_str()).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn unusable_input_and_duplicates() {
        let a = exact("x", "time", "ns", Direction::LowerIsBetter, 10.0);
        let b = exact("x", "time", "us", Direction::LowerIsBetter, 10.0);
        let c = run(std::slice::from_ref(&a), &[b]);
        let r = row(&c, "x");
        assert!(
            matches!(&r.evidence, Evidence::Unusable { reason } if reason.contains("units differ"))
        );
        assert_eq!(r.verdict, Verdict::Unchanged);
        assert_eq!(c.unusable().count(), 1);
        assert_eq!(gate(&c, &[], false), GateOutcome::Unusable);
        let nan = exact("x", "time", "ns", Direction::LowerIsBetter, f64::NAN);
        assert_eq!(run(std::slice::from_ref(&a), &[nan]).counts.unusable, 1);
        let dup = exact("x", "time", "ns", Direction::LowerIsBetter, 99.0);
        let c = run(&[a.clone(), dup], &[a]);
        assert_eq!(row(&c, "x").verdict, Verdict::Unchanged);
        assert!(
            row(&c, "x")
                .reasons
                .iter()
                .any(|s| s.contains("first occurrence"))
        );
    }

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

    #[test]
    fn same_binary_turns_every_verdict_into_unchanged() {
        let hash = "ab12cd34ef56".repeat(5) + "abcd";
        let exe = |sha: &str| {
            Some(crate::model::BenchExe {
                sha256: sha.to_owned(),
                bytes: 1000,
            })
        };
        let mut base = provenance();
        let mut head = provenance();
        assert_eq!(same_binary(&base, &head), None, "no hash recorded");
        base.bench_exe = exe(&hash);
        assert_eq!(same_binary(&base, &head), None, "only one side has a hash");
        head.bench_exe = exe(&"0".repeat(64));
        assert_eq!(same_binary(&base, &head), None, "different executables");
        head.bench_exe = exe(&hash);
        assert_eq!(same_binary(&base, &head), Some(hash.clone()));

        let base_rows = [
            timed("slow", &jittered(1, 100, 1000.0, 2.0)),
            timed("fast", &jittered(3, 100, 1000.0, 2.0)),
            timed("same", &jittered(5, 100, 1000.0, 2.0)),
            timed("gone", &jittered(7, 100, 1000.0, 2.0)),
        ];
        let head_rows = [
            timed("slow", &jittered(2, 100, 1300.0, 2.0)),
            timed("fast", &jittered(4, 100, 700.0, 2.0)),
            timed("same", &jittered(6, 100, 1000.0, 2.0)),
            timed("born", &jittered(8, 100, 1000.0, 2.0)),
        ];
        let mut c = run(&base_rows, &head_rows);
        assert_eq!((c.counts.regressions, c.counts.improvements), (1, 1));
        let slow_change = row(&c, "slow").change;
        mark_same_binary(&mut c, &hash);
        assert_eq!(c.same_binary.as_deref(), Some(hash.as_str()));
        let verdicts: Vec<(&str, Verdict)> = c
            .rows
            .iter()
            .map(|r| (r.benchmark.as_str(), r.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("born", Verdict::New),
                ("fast", Verdict::Unchanged),
                ("gone", Verdict::Missing),
                ("same", Verdict::Unchanged),
                ("slow", Verdict::Unchanged),
            ]
        );
        assert_eq!(
            (
                c.counts.regressions,
                c.counts.improvements,
                c.counts.unchanged
            ),
            (0, 0, 3)
        );
        assert_eq!(c.counts.new + c.counts.missing, 2);
        // The statistics stay: they measure the environment.
        assert_eq!(row(&c, "slow").change, slow_change);
        assert!(row(&c, "slow").significant);
        let last = row(&c, "slow").reasons.last().unwrap();
        assert!(
            last.contains("same executable (sha256 ab12cd34ef56)")
                && last.contains("environment's, not the code's")
                && last.contains("would otherwise be regression"),
            "{last}"
        );
        assert_eq!(gate(&c, &[], false), GateOutcome::Pass);
    }

    fn provenance() -> RunProvenance {
        RunProvenance {
            machine: Machine {
                fingerprint: "m1".to_owned(),
                hostname: "ci-1".to_owned(),
                cpu_model: "EPYC".to_owned(),
                ..Machine::default()
            },
            toolchain: Some(Toolchain {
                rustc_version: "1.95.0".to_owned(),
                rustc_commit: Some("59807616e".to_owned()),
                ..Toolchain::default()
            }),
            build: BuildConfig {
                profile: "bench".to_owned(),
                features: vec!["zstd".to_owned(), "lz4".to_owned()],
                feature_flags: Vec::new(),
                rustflags: Some("-C target-cpu=native".to_owned()),
            },
            ..RunProvenance::default()
        }
    }

    #[test]
    fn mismatch_detection() {
        let base = provenance();
        assert!(check_comparable(&base, &base).is_empty());
        // Feature order and RUSTFLAGS whitespace do not matter; the rest does.
        let mut head = provenance();
        head.build.features = vec!["lz4".to_owned(), "zstd".to_owned()];
        head.build.rustflags = Some("  -C   target-cpu=native ".to_owned());
        head.cwd = "/elsewhere".to_owned();
        assert!(check_comparable(&base, &head).is_empty());

        head.machine.fingerprint = "m2".to_owned();
        head.machine.hostname = "ci-2".to_owned();
        head.toolchain = None;
        head.build.profile = "release".to_owned();
        head.build.features.pop();
        head.build.feature_flags = vec!["--no-default-features".to_owned()];
        head.build.rustflags = None;
        let found = check_comparable(&base, &head);
        let fields: Vec<MismatchField> = found.iter().map(|m| m.field).collect();
        assert_eq!(
            fields,
            [
                MismatchField::Machine,
                MismatchField::Toolchain,
                MismatchField::Profile,
                MismatchField::Features,
                MismatchField::FeatureFlags,
                MismatchField::Rustflags,
            ]
        );
        let text: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            text[0],
            "machine differs: base `m1` (ci-1, EPYC), head `m2` (ci-2, EPYC)"
        );
        assert_eq!(
            text[1],
            "toolchain differs: base rustc 1.95.0 (59807616e), head unknown"
        );
        assert_eq!(text[2], "profile differs: base `bench`, head `release`");
        assert_eq!(text[3], "features differs: base [lz4, zstd], head [lz4]");
        assert_eq!(
            text[5],
            "RUSTFLAGS differs: base `-C target-cpu=native`, head (unset)"
        );

        // Same toolchain release, other commit.
        let mut nightly = provenance();
        if let Some(t) = nightly.toolchain.as_mut() {
            t.rustc_commit = Some("abc".to_owned());
        }
        assert_eq!(check_comparable(&base, &nightly).len(), 1);

        // The gate refuses mismatched runs unless told otherwise.
        let c = run(
            &[exact("x", "t", "ns", Direction::LowerIsBetter, 1.0)],
            &[exact("x", "t", "ns", Direction::LowerIsBetter, 1.0)],
        );
        assert_eq!(gate(&c, &found, false).exit_code(), 2);
        assert_eq!(gate(&c, &found, true).exit_code(), 0);
    }
}

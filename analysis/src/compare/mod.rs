//! Comparisons and verdicts (pure).
//!
//! [`compare`] pairs the measurements of a base run and a head run by benchmark and metric, judges
//! every pair with the best evidence both sides carry, corrects for testing many benchmarks at
//! once, and gives each row a [`Verdict`] with the sentences that justify it ([`Row::reasons`],
//! printed by `--explain`). [`check_comparable`] says whether two runs may be compared at all, and
//! [`gate_outcome`] turns both into the exit status of `bench-run`. `docs/gating.md` is the user-facing
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
//!
//! # Layout
//!
//! This file pairs the rows and runs the correction over the family ([`compare`],
//! [`compare_paired`]); `comparison.rs` holds the result types ([`Comparison`], [`Row`],
//! [`Verdict`], [`Evidence`]) and [`gate_outcome`]; `judge.rs` judges one row: its evidence, its change
//! and the sentences of its verdict. The public items of both are re-exported here.

mod comparison;
#[cfg(test)]
pub(crate) mod fixtures;
mod judge;
#[cfg(test)]
mod judge_tests;
#[cfg(test)]
mod paired_tests;

pub use self::comparison::{
    Change, Comparison, Counts, Evidence, GateOutcome, Geomean, Row, Verdict, gate_outcome,
    mark_same_binary,
};
pub use self::judge::noise_analysis;
use self::judge::{Draft, Judgement, Pairing, Slot, assess, finish};
pub use crate::comparable::{
    Mismatch, MismatchField, SHORT_HASH_LEN, check_comparable, same_binary, same_binary_sentence,
    short_hash,
};
pub use crate::config::{
    CompareConfig, ConfigError, Correction, DEFAULT_ALPHA, DEFAULT_CONFIDENCE,
    DEFAULT_DETERMINISTIC_THRESHOLD_PCT, DEFAULT_MAX_HISTORY, DEFAULT_MIN_HISTORY,
    DEFAULT_NOISE_FLOOR_PCT, DEFAULT_THRESHOLD_PCT, MIN_SAMPLES, pattern_matches,
};
use crate::model::{Direction, History, HistoryPoint, Measurement, MetricKey};
pub use crate::noise::{NOISE_FENCE_IQR_MULTIPLIER, NoiseFloor, NoiseSource};
use crate::stats;
use std::collections::BTreeMap;

/// Noise floor of one key from its history (oldest first): [`crate::noise::analyse`]'s floor, whose
/// docs give the method (run-to-run changes within segments between change points, outliers
/// trimmed, `Q3 + NOISE_FENCE_IQR_MULTIPLIER * IQR` of the last `max_history` of them, or
/// `default_noise_floor_pct` with fewer than `min_history`).
#[must_use]
pub fn noise_floor(history: &[HistoryPoint], config: &CompareConfig) -> NoiseFloor {
    noise_analysis(history, config).floor
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
    compare_rows(base, head, history, config, Pairing::None)
}

/// Compares the two sides of a paired A/B run (`bench-run ab`): rows whose results carry one
/// per-process value per round on both sides ([`SamplingMode::PerProcess`], the same number of
/// rounds) are judged on the rounds' paired log-ratios (evidence [`Evidence::Paired`]: exact
/// sign test, median with its order-statistic interval; see [`crate::paired`]); rows whose
/// rounds all gave one value on each side (deterministic metrics) are compared exactly; any
/// other row as [`compare`] would, without a history. Paired rows have no noise floor: their
/// interval already holds the between-process noise. Each paired row also carries its
/// [`crate::paired::Calibration`] at the family's strictest level.
///
/// [`SamplingMode::PerProcess`]: crate::model::SamplingMode::PerProcess
#[must_use]
pub fn compare_paired(
    base: &[Measurement],
    head: &[Measurement],
    config: &CompareConfig,
) -> Comparison {
    compare_paired_layouts(base, head, &[], config)
}

/// [`compare_paired`] of rounds run under randomized layouts: `round_layouts` holds the layout
/// seed of each round (`bench-run ab --layouts K`). Each paired row also gets its
/// [`crate::layout::LayoutSpread`], and a regression or improvement no larger than that spread
/// becomes "unchanged, layout-sensitive" unless [`CompareConfig::layout_strict`]. An empty
/// slice is [`compare_paired`].
#[must_use]
pub fn compare_paired_layouts(
    base: &[Measurement],
    head: &[Measurement],
    round_layouts: &[u64],
    config: &CompareConfig,
) -> Comparison {
    compare_rows(
        base,
        head,
        &History::new(),
        config,
        Pairing::Rounds(round_layouts),
    )
}

fn compare_rows(
    base: &[Measurement],
    head: &[Measurement],
    history: &History,
    config: &CompareConfig,
    pairing: Pairing<'_>,
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
        .filter_map(|(key, slot)| assess(key, &slot, history, config, pairing))
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
        if row.layout_sensitive {
            counts.layout_sensitive += 1;
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
/// higher-is-better, so above 1 is always worse; for rows of paired rounds, their change: the
/// median of the rounds' ratios) over paired, usable, non-ignored rows with positive finite
/// values.
fn geomean(rows: &[Row], confidence: f64) -> Option<Geomean> {
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|r| {
            r.verdict != Verdict::Ignored
                && !matches!(r.evidence, Evidence::Unusable { .. } | Evidence::Unpaired)
        })
        .filter_map(|r| {
            // A paired row's change is the median of its rounds' ratios, which need not be
            // the ratio of the two sides' medians: the geomean takes the row's own change, so
            // a one-row geomean is its row.
            let head_over_base = match (&r.evidence, r.change) {
                (Evidence::Paired { .. }, Some(c)) => 1.0 + c.point_pct / 100.0,
                _ => r.after? / r.before?,
            };
            let ratio = match r.direction {
                Direction::LowerIsBetter => head_over_base,
                Direction::HigherIsBetter => 1.0 / head_over_base,
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::compare::fixtures::*;
    use crate::model::metric;
    use crate::noise::NoiseFlag;
    use crate::stats::MwuMethod;

    /// The default comparison of two runs.
    pub(super) fn run(base: &[Measurement], head: &[Measurement]) -> Comparison {
        compare(base, head, &History::new(), &CompareConfig::default())
    }

    /// The row of benchmark `id`.
    pub(super) fn row<'a>(c: &'a Comparison, id: &str) -> &'a Row {
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
        assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Regression);
        assert_eq!(gate_outcome(&c, &[], false).exit_code(), 1);
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
        assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Pass);
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
        assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Pass);
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
        assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Pass);
        // Nothing paired: the gate has nothing to judge.
        let c = run(&base[..1], &head[..1]);
        assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Unusable);
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
        assert!(gate_outcome(&c, &[], false) == GateOutcome::Regression);
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
        assert_eq!(gate_outcome(&c, &[], false), GateOutcome::Pass);
    }

    #[test]
    fn the_gate_refuses_mismatched_runs_unless_told_otherwise() {
        let mut head = provenance();
        head.machine.fingerprint = "m2".to_owned();
        let found = check_comparable(&provenance(), &head);
        assert_eq!(found.len(), 1);
        let c = run(
            &[exact("x", "t", "ns", Direction::LowerIsBetter, 1.0)],
            &[exact("x", "t", "ns", Direction::LowerIsBetter, 1.0)],
        );
        assert_eq!(gate_outcome(&c, &found, false).exit_code(), 2);
        assert_eq!(gate_outcome(&c, &found, true).exit_code(), 0);
    }
}

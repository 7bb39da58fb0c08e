//! Which results a log entry shows: at most [`MAX_ROWS`], the ones a reader needs first.
//!
//! A suite can record hundreds of results; the entry is read by a person, and every result stays
//! in the ledger (`bench-run show N`). The rows are picked in three tiers, each filling what
//! the tiers before it left:
//!
//! 1. **Held against a bar**: ratios ([`BAR_METRICS`]: `ratio` from an import, `speedup` from
//!    `interleave`). Such a row is the claim itself, so all of them come first, in name order.
//! 2. **Changed**: rows the comparison with the baseline called a regression or an improvement,
//!    the largest change (in absolute percent) first.
//! 3. **The rest**, a cross-section of the suite: one row of each benchmark group in turn (the
//!    group is criterion's group, else the name up to its first `/`), so fifteen rows show
//!    fifteen groups before a second row of any; within a group, the row whose metric and
//!    function the entry shows least so far. Shown in name order.
//!
//! `--only` patterns narrow the candidates before any tier is filled.

use crate::compare::{Verdict, pattern_matches};
use crate::model::{Measurement, metric};
use std::collections::BTreeMap;

/// The change of one result against the baseline, as the log shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// Change of the headline estimate in percent (positive: larger).
    pub change_pct: f64,
    /// The comparison's verdict.
    pub verdict: Verdict,
}

/// Most rows an entry shows: a log a person reads; the rest stays in the ledger.
pub const MAX_ROWS: usize = 15;

/// Metrics whose rows are held against a bar: ratios imported from a tool (`ratio`, with
/// either direction) and the paired speedups `interleave` records.
pub const BAR_METRICS: [&str; 2] = ["ratio", metric::SPEEDUP];

/// Why a row is in the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A ratio held against a bar.
    Bar,
    /// A significant change against the baseline.
    Changed,
    /// Neither: chosen to show the rest of the suite.
    Other,
}

/// One row of the entry and why it was chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen<'a> {
    /// The result.
    pub row: &'a Measurement,
    /// Why it is shown.
    pub reason: Reason,
}

/// Whether `m` is held against a bar (see [`BAR_METRICS`]).
#[must_use]
pub fn held_against_bar(m: &Measurement) -> bool {
    BAR_METRICS.contains(&m.metric.as_str())
}

/// Whether `m` matches one of `patterns` (`BENCHMARK` or `BENCHMARK:METRIC`, `*` a wildcard);
/// every row matches when there are none.
fn matches_any(m: &Measurement, patterns: &[String]) -> bool {
    patterns.is_empty()
        || patterns.iter().any(|p| {
            pattern_matches(p, &m.benchmark.full)
                || pattern_matches(p, &format!("{}:{}", m.benchmark.full, m.metric))
        })
}

fn key(m: &Measurement) -> (String, String) {
    (m.benchmark.full.clone(), m.metric.clone())
}

fn by_name(a: &Measurement, b: &Measurement) -> std::cmp::Ordering {
    (&a.benchmark.full, &a.metric).cmp(&(&b.benchmark.full, &b.metric))
}

/// The group a row belongs to when the rest is spread over the suite.
fn group_of(m: &Measurement) -> &str {
    m.benchmark.group.as_deref().unwrap_or_else(|| {
        m.benchmark
            .full
            .split_once('/')
            .map_or(m.benchmark.full.as_str(), |(group, _)| group)
    })
}

/// The rows an entry shows, in the order it shows them: bar rows, then the largest significant
/// changes, then the rest (see the module docs); at most `max` (itself at most [`MAX_ROWS`]).
/// `deltas` are the changes against the baseline by (benchmark, metric); empty without one.
#[must_use]
pub fn select_rows<'a>(
    results: &'a [Measurement],
    deltas: &BTreeMap<(String, String), Delta>,
    patterns: &[String],
    max: usize,
) -> Vec<Chosen<'a>> {
    let max = max.min(MAX_ROWS);
    let candidates: Vec<&Measurement> = results
        .iter()
        .filter(|m| matches_any(m, patterns))
        .collect();

    let mut bars: Vec<&Measurement> = candidates
        .iter()
        .copied()
        .filter(|m| held_against_bar(m))
        .collect();
    bars.sort_by(|a, b| by_name(a, b));

    let significant = |m: &Measurement| {
        deltas.get(&key(m)).filter(|d| {
            matches!(d.verdict, Verdict::Regression | Verdict::Improvement)
                && d.change_pct.is_finite()
        })
    };
    let mut changed: Vec<(&Measurement, f64)> = candidates
        .iter()
        .copied()
        .filter(|m| !held_against_bar(m))
        .filter_map(|m| significant(m).map(|d| (m, d.change_pct.abs())))
        .collect();
    changed.sort_by(|(a, da), (b, db)| db.total_cmp(da).then_with(|| by_name(a, b)));

    let mut chosen: Vec<Chosen<'a>> = bars
        .into_iter()
        .map(|row| Chosen {
            row,
            reason: Reason::Bar,
        })
        .chain(changed.into_iter().map(|(row, _)| Chosen {
            row,
            reason: Reason::Changed,
        }))
        .take(max)
        .collect();

    let rest: Vec<&Measurement> = candidates
        .iter()
        .copied()
        .filter(|m| !held_against_bar(m) && significant(m).is_none())
        .collect();
    let mut others = spread_over_groups(rest, max - chosen.len());
    others.sort_by(|a, b| by_name(a, b));
    chosen.extend(others.into_iter().map(|row| Chosen {
        row,
        reason: Reason::Other,
    }));
    chosen
}

/// The last part of a benchmark's name (criterion's function, else after the last `/`):
/// `decompress_only_1t` of `nanoaod/f32/decompress_only_1t`.
fn function_of(m: &Measurement) -> &str {
    m.benchmark.function.as_deref().unwrap_or_else(|| {
        m.benchmark
            .full
            .rsplit_once('/')
            .map_or(m.benchmark.full.as_str(), |(_, function)| function)
    })
}

/// Up to `count` of `rows`, a cross-section of the suite: one row of each group in turn
/// (groups in name order), each time the group's row whose metric, function, and then the pair
/// of both, the picks so far show least (ties in name order). Groups of `{decompress, full}` x
/// `{time, bytes}` then show every function and metric, not each group's first name.
fn spread_over_groups(mut rows: Vec<&Measurement>, count: usize) -> Vec<&Measurement> {
    rows.sort_by(|a, b| by_name(a, b));
    let mut groups: BTreeMap<&str, Vec<&Measurement>> = BTreeMap::new();
    for row in rows {
        groups.entry(group_of(row)).or_default().push(row);
    }
    let mut metrics_shown: BTreeMap<&str, usize> = BTreeMap::new();
    let mut functions_shown: BTreeMap<&str, usize> = BTreeMap::new();
    let mut pairs_shown: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut picked = Vec::with_capacity(count);
    while picked.len() < count && !groups.is_empty() {
        groups.retain(|_, group| {
            if picked.len() < count {
                let least_shown = |m: &&Measurement| {
                    (
                        metrics_shown.get(m.metric.as_str()).copied().unwrap_or(0),
                        functions_shown.get(function_of(m)).copied().unwrap_or(0),
                        pairs_shown
                            .get(&(function_of(m), m.metric.as_str()))
                            .copied()
                            .unwrap_or(0),
                    )
                };
                // `min_by_key` keeps the first of equal keys: name order breaks ties.
                if let Some(index) = (0..group.len()).min_by_key(|&i| least_shown(&group[i])) {
                    let row = group.remove(index);
                    *metrics_shown.entry(row.metric.as_str()).or_default() += 1;
                    *functions_shown.entry(function_of(row)).or_default() += 1;
                    *pairs_shown
                        .entry((function_of(row), row.metric.as_str()))
                        .or_default() += 1;
                    picked.push(row);
                }
            }
            !group.is_empty()
        });
    }
    picked
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::Direction;

    fn row(benchmark: &str, metric: &str) -> Measurement {
        Measurement {
            metric: metric.to_owned(),
            ..Measurement::time_ns(benchmark, 1.0)
        }
    }

    fn delta(change_pct: f64, verdict: Verdict) -> Delta {
        Delta {
            change_pct,
            verdict,
        }
    }

    fn names(chosen: &[Chosen<'_>]) -> Vec<String> {
        chosen
            .iter()
            .map(|c| format!("{}:{}", c.row.benchmark.full, c.row.metric))
            .collect()
    }

    /// 200 results in 10 groups: 3 ratios, 4 significant changes, the rest unchanged.
    fn suite_of_200() -> (Vec<Measurement>, BTreeMap<(String, String), Delta>) {
        let mut results = Vec::new();
        for g in 0..10 {
            for i in 0..20 {
                results.push(row(&format!("g{g}/b{i:02}"), "time"));
            }
        }
        // Three of them become ratios held against a bar.
        for (i, name) in ["g3/b05", "g7/b01", "g0/b19"].iter().enumerate() {
            let r = results
                .iter_mut()
                .find(|m| m.benchmark.full == *name)
                .unwrap();
            r.metric = BAR_METRICS[i % 2].to_owned();
            r.unit = "x".to_owned();
            r.direction = Direction::HigherIsBetter;
        }
        let mut deltas: BTreeMap<(String, String), Delta> = results
            .iter()
            .map(|m| (key(m), delta(1.0, Verdict::Unchanged)))
            .collect();
        for (name, pct, verdict) in [
            ("g1/b00", 12.0, Verdict::Regression),
            ("g2/b00", -40.0, Verdict::Improvement),
            ("g4/b03", 7.5, Verdict::Regression),
            ("g5/b09", -3.1, Verdict::Improvement),
        ] {
            deltas.insert((name.to_owned(), "time".to_owned()), delta(pct, verdict));
        }
        // A large change that is not significant ranks with the rest.
        deltas.insert(
            ("g9/b10".to_owned(), "time".to_owned()),
            delta(90.0, Verdict::Unchanged),
        );
        (results, deltas)
    }

    #[test]
    fn two_hundred_results_give_fifteen_rows_bars_first_then_largest_changes() {
        let (results, deltas) = suite_of_200();
        let chosen = select_rows(&results, &deltas, &[], MAX_ROWS);
        assert_eq!(chosen.len(), MAX_ROWS);
        let shown = names(&chosen);
        assert_eq!(
            shown[..7],
            [
                "g0/b19:ratio",
                "g3/b05:ratio",
                "g7/b01:speedup",
                "g2/b00:time",
                "g1/b00:time",
                "g4/b03:time",
                "g5/b09:time",
            ],
            "{shown:?}"
        );
        let reasons: Vec<Reason> = chosen.iter().map(|c| c.reason).collect();
        assert_eq!(reasons[..3], [Reason::Bar; 3]);
        assert_eq!(reasons[3..7], [Reason::Changed; 4]);
        assert!(reasons[7..].iter().all(|r| *r == Reason::Other));
        // The other eight rows come from eight different groups, in name order.
        let groups: Vec<&str> = chosen[7..].iter().map(|c| group_of(c.row)).collect();
        let mut distinct = groups.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "{groups:?}");
        assert!(shown[7..].is_sorted(), "{shown:?}");
        assert!(!shown.contains(&"g9/b10:time".to_owned()), "{shown:?}");
        // No row twice.
        let mut unique = shown.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), shown.len());
    }

    #[test]
    fn a_lower_limit_keeps_the_first_tiers() {
        let (results, deltas) = suite_of_200();
        let chosen = select_rows(&results, &deltas, &[], 5);
        assert_eq!(
            names(&chosen),
            [
                "g0/b19:ratio",
                "g3/b05:ratio",
                "g7/b01:speedup",
                "g2/b00:time",
                "g1/b00:time"
            ]
        );
        assert!(select_rows(&results, &deltas, &[], 0).is_empty());
        // Never more than MAX_ROWS, whatever is asked.
        assert_eq!(select_rows(&results, &deltas, &[], 1000).len(), MAX_ROWS);
    }

    #[test]
    fn without_a_baseline_the_rest_spreads_over_the_groups() {
        let (results, _) = suite_of_200();
        let chosen = select_rows(&results, &BTreeMap::new(), &[], MAX_ROWS);
        assert_eq!(chosen.len(), MAX_ROWS);
        assert_eq!(chosen.iter().filter(|c| c.reason == Reason::Bar).count(), 3);
        // Twelve other rows over ten groups: every group once, two of them twice.
        let mut per_group: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &chosen[3..] {
            *per_group.entry(group_of(c.row)).or_default() += 1;
        }
        assert_eq!(per_group.len(), 10, "{per_group:?}");
        assert!(per_group.values().all(|n| (1..=2).contains(n)));
    }

    #[test]
    fn small_runs_show_everything_and_patterns_narrow_the_candidates() {
        let results = vec![
            row("pg/ingest", "throughput"),
            row("pg/trend_page", "latency_p99"),
            row("pg/trend_page", "latency_p50"),
            row("sqlite/ingest", "throughput"),
        ];
        let none = BTreeMap::new();
        assert_eq!(select_rows(&results, &none, &[], MAX_ROWS).len(), 4);
        assert_eq!(
            names(&select_rows(
                &results,
                &none,
                &["*:throughput".to_owned()],
                MAX_ROWS
            )),
            ["pg/ingest:throughput", "sqlite/ingest:throughput"]
        );
        assert_eq!(
            names(&select_rows(
                &results,
                &none,
                &[
                    "pg/trend_page:latency_p99".to_owned(),
                    "sqlite/*".to_owned()
                ],
                MAX_ROWS
            )),
            ["pg/trend_page:latency_p99", "sqlite/ingest:throughput"]
        );
    }

    #[test]
    fn the_rest_is_a_cross_section_of_groups_functions_and_metrics() {
        let mut results = Vec::new();
        for group in ["bool", "f32", "string", "u64"] {
            for function in ["decompress_only", "full"] {
                for metric in ["bytes", "time"] {
                    results.push(row(&format!("nanoaod/{group}/{function}"), metric));
                }
            }
        }
        for r in &mut results {
            let (group, function) = r.benchmark.full.rsplit_once('/').unwrap();
            r.benchmark.group = Some(group.to_owned());
            r.benchmark.function = Some(function.to_owned());
        }
        let chosen = select_rows(&results, &BTreeMap::new(), &[], 4);
        assert_eq!(
            names(&chosen),
            [
                "nanoaod/bool/decompress_only:bytes",
                "nanoaod/f32/full:time",
                "nanoaod/string/decompress_only:time",
                "nanoaod/u64/full:bytes",
            ]
        );
    }

    #[test]
    fn more_bars_than_rows_fill_the_entry_with_bars() {
        let results: Vec<Measurement> = (0..40)
            .map(|i| row(&format!("r/{i:02}"), "ratio"))
            .collect();
        let chosen = select_rows(&results, &BTreeMap::new(), &[], MAX_ROWS);
        assert_eq!(chosen.len(), MAX_ROWS);
        assert!(chosen.iter().all(|c| c.reason == Reason::Bar));
        assert_eq!(chosen[0].row.benchmark.full, "r/00");
    }

    #[test]
    fn a_change_that_is_not_a_number_is_not_ranked_as_changed() {
        let results = vec![row("a/x", "time"), row("b/y", "time")];
        let mut deltas = BTreeMap::new();
        deltas.insert(
            ("a/x".to_owned(), "time".to_owned()),
            delta(f64::NAN, Verdict::Regression),
        );
        deltas.insert(
            ("b/y".to_owned(), "time".to_owned()),
            delta(f64::INFINITY, Verdict::Improvement),
        );
        let chosen = select_rows(&results, &deltas, &[], MAX_ROWS);
        assert_eq!(chosen.len(), 2);
        assert!(chosen.iter().all(|c| c.reason == Reason::Other));
    }
}

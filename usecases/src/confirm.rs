//! `gate --confirm N`: re-run only the benchmarks a gate flagged, and decide whether each
//! flagged regression holds.
//!
//! When the gate finds regressions, `bench-run` runs the head's suite `N` more times with a
//! criterion filter that selects exactly the flagged benchmarks ([`exact_filter`](bench_report::exact_filter)) and the head
//! run's own measurement settings ([`confirmation_args`]). Each confirmation run is compared
//! with the base by the same verdict rule as the head (same configuration, same noise floor:
//! the history before the head run), and for each flagged `(benchmark, metric)`:
//!
//! ```text
//! votes   = confirmation runs in which the row is a Regression, or is missing or unusable
//! holds   = votes > N / 2          (a strict majority of the confirmation runs)
//! ```
//!
//! The flagged head run itself does not vote: it was selected because it looked bad. A row that
//! a confirmation run could not measure (missing, unusable input) votes for the regression, so a
//! regression is only cleared by measurements that clear it. The multiple-testing correction of
//! a confirmation comparison runs over the flagged rows only: each confirmation is a new
//! experiment on those hypotheses alone.

use bench_analysis::compare::{Comparison, Evidence, Row, Verdict};
use bench_model::{MetricKey, RunId, format};

/// Criterion arguments of a confirmation run: the head run's arguments (its measurement
/// settings) with any benchmark filter (`FILTER`, `--exact`, `--ignored`) replaced by
/// [`exact_filter`](bench_report::exact_filter) of `ids`.
#[must_use]
pub fn confirmation_args(head_args: &[String], ids: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut args = head_args.iter();
    while let Some(arg) = args.next() {
        if bench_runner::suite::run::CRITERION_FLAGS_WITH_VALUE.contains(&arg.as_str()) {
            kept.push(arg.clone());
            if let Some(value) = args.next() {
                kept.push(value.clone());
            }
        } else if arg.starts_with('-') && arg != "--exact" && arg != "--ignored" {
            kept.push(arg.clone());
        }
    }
    kept.push(bench_report::exact_filter(ids));
    kept
}

/// The criterion arguments a suite run recorded: what follows `--` in its `cargo bench`
/// command.
#[must_use]
pub fn recorded_criterion_args(cargo_command: &[String]) -> Vec<String> {
    cargo_command
        .iter()
        .skip_while(|a| *a != "--")
        .skip(1)
        .cloned()
        .collect()
}

/// What one confirmation run said about a flagged row.
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    /// The confirmation run.
    pub run: RunId,
    /// Its verdict on the row (`None`: not measured).
    pub verdict: Option<Verdict>,
    /// The change against the base, in percent, when there is one.
    pub change_pct: Option<f64>,
    /// Whether the row was unusable in this comparison.
    pub unusable: bool,
}

impl Vote {
    /// Whether this vote keeps the regression (a regression, or no usable measurement).
    #[must_use]
    pub fn keeps_regression(&self) -> bool {
        self.unusable
            || matches!(
                self.verdict,
                None | Some(Verdict::Regression | Verdict::Missing)
            )
    }
}

/// A flagged regression and what the confirmation runs made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    /// The row's key.
    pub key: MetricKey,
    /// The change the head run showed, in percent.
    pub flagged_change_pct: Option<f64>,
    /// One vote per confirmation run, in run order.
    pub votes: Vec<Vote>,
}

impl Confirmed {
    /// Votes that keep the regression.
    #[must_use]
    pub fn kept(&self) -> usize {
        self.votes.iter().filter(|v| v.keeps_regression()).count()
    }

    /// Whether the regression holds: a strict majority of the confirmation runs keep it.
    #[must_use]
    pub fn holds(&self) -> bool {
        holds(self.kept(), self.votes.len())
    }
}

/// The rule: a regression holds when more than half of `runs` confirmation runs keep it.
#[must_use]
pub const fn holds(kept: usize, runs: usize) -> bool {
    2 * kept > runs
}

fn find<'a>(comparison: &'a Comparison, row: &Row) -> Option<&'a Row> {
    comparison
        .rows
        .iter()
        .find(|r| r.benchmark == row.benchmark && r.metric == row.metric)
}

/// Tallies every regression of `flagged` against the confirmation comparisons (base against
/// each confirmation run, in run order).
#[must_use]
pub fn tally(flagged: &Comparison, confirmations: &[(RunId, Comparison)]) -> Vec<Confirmed> {
    flagged
        .regressions()
        .map(|row| Confirmed {
            key: MetricKey::new(&row.benchmark, &row.metric),
            flagged_change_pct: row.change.map(|c| c.point_pct),
            votes: confirmations
                .iter()
                .map(|(run, comparison)| {
                    let found = find(comparison, row);
                    Vote {
                        run: *run,
                        verdict: found.map(|r| r.verdict),
                        change_pct: found.and_then(|r| r.change).map(|c| c.point_pct),
                        unusable: found
                            .is_some_and(|r| matches!(r.evidence, Evidence::Unusable { .. })),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The report of a confirmation, one line per flagged row, e.g.
/// `sum/4000 [time]: flagged +31.20%; regression in 3 of 3 confirmation runs (#5 +30.90%, ...): holds`.
#[must_use]
pub fn render(confirmed: &[Confirmed]) -> String {
    let runs = confirmed.first().map_or(0, |c| c.votes.len());
    let mut out = format!(
        "Confirmation of {} flagged regression(s) by {runs} re-run(s) of only those benchmarks \
         (a regression holds when more than half of the re-runs keep it):\n",
        confirmed.len()
    );
    for c in confirmed {
        let votes: Vec<String> = c
            .votes
            .iter()
            .map(|v| {
                let change = v
                    .change_pct
                    .map_or_else(String::new, |p| format!(" {}", format::pct(p)));
                let what = match (v.unusable, v.verdict) {
                    (true, _) => "unusable".to_owned(),
                    (false, None | Some(Verdict::Missing)) => "not measured".to_owned(),
                    (false, Some(verdict)) => verdict.to_string(),
                };
                format!("#{}{change} {what}", v.run)
            })
            .collect();
        out.push_str(&format!(
            "  {} [{}]: flagged {}; kept in {} of {} re-run(s) ({}): {}\n",
            c.key.benchmark,
            c.key.metric,
            c.flagged_change_pct
                .map_or_else(|| "—".to_owned(), format::pct),
            c.kept(),
            c.votes.len(),
            votes.join(", "),
            if c.holds() { "holds" } else { "not confirmed" }
        ));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bench_analysis::compare::{CompareConfig, compare};
    use bench_model::{
        BenchmarkId, Direction, Estimate, History, Measurement, Samples, SamplingMode,
    };

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn confirmation_runs_keep_the_measurement_settings_and_replace_the_filter() {
        let head = strings(&[
            "--warm-up-time",
            "0.3",
            "--sample-size",
            "20",
            "--noplot",
            "sum",
            "--exact",
            "--measurement-time=1",
        ]);
        assert_eq!(
            confirmation_args(&head, &strings(&["sum/4000"])),
            strings(&[
                "--warm-up-time",
                "0.3",
                "--sample-size",
                "20",
                "--noplot",
                "--measurement-time=1",
                "^(?:sum/4000)$"
            ])
        );
        let cargo = strings(&["cargo", "bench", "-p", "tiny", "--", "--noplot", "x"]);
        assert_eq!(recorded_criterion_args(&cargo), ["--noplot", "x"]);
        assert!(recorded_criterion_args(&strings(&["cargo", "bench"])).is_empty());
    }

    #[test]
    fn a_regression_holds_in_a_strict_majority() {
        let table = [
            (0, 1, false),
            (1, 1, true),
            (1, 2, false),
            (2, 2, true),
            (1, 3, false),
            (2, 3, true),
            (2, 4, false),
            (3, 4, true),
            (0, 0, false),
        ];
        for (index, (kept, runs, expected)) in table.into_iter().enumerate() {
            assert_eq!(
                holds(kept, runs),
                expected,
                "case {index}: {kept} of {runs}"
            );
        }
    }

    /// A time measurement of `id` with 20 samples around `level` ns.
    fn timed(id: &str, level: f64) -> Measurement {
        let times: Vec<f64> = (0..20)
            .map(|i| level * 10.0 * (1.0 + 0.001 * f64::from(i % 5)))
            .collect();
        Measurement {
            benchmark: BenchmarkId::named(id),
            metric: "time".to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(level),
            statistics: std::collections::BTreeMap::new(),
            throughput: None,
            samples: Some(Samples::new(SamplingMode::Flat, vec![10.0; 20], times).unwrap()),
        }
    }

    #[test]
    fn each_flagged_row_is_judged_by_the_confirmation_runs() {
        let config = CompareConfig::default();
        let history = History::new();
        let base = [timed("a", 100.0), timed("b", 100.0), timed("c", 100.0)];
        let head = [timed("a", 130.0), timed("b", 130.0), timed("c", 100.0)];
        let flagged = compare(&base, &head, &history, &config);
        assert_eq!(flagged.regressions().count(), 2);
        // `a` stays slow in two of three re-runs; `b` was a fluke; the third run measured
        // only `b`.
        let reruns = [
            vec![timed("a", 131.0), timed("b", 100.0)],
            vec![timed("a", 100.5), timed("b", 100.2)],
            vec![timed("b", 99.8)],
        ];
        let confirmations: Vec<(RunId, Comparison)> = reruns
            .iter()
            .zip(10..)
            .map(|(rerun, id)| (id, compare(&base, rerun, &history, &config)))
            .collect();
        let confirmed = tally(&flagged, &confirmations);
        assert_eq!(confirmed.len(), 2);
        let a = &confirmed[0];
        assert_eq!(a.key, MetricKey::new("a", "time"));
        assert_eq!(a.votes.len(), 3);
        assert_eq!(a.votes[0].verdict, Some(Verdict::Regression));
        assert_eq!(a.votes[1].verdict, Some(Verdict::Unchanged));
        // Not measured counts for the regression.
        assert_eq!(a.votes[2].verdict, Some(Verdict::Missing));
        assert_eq!((a.kept(), a.holds()), (2, true));
        let b = &confirmed[1];
        assert_eq!((b.kept(), b.holds()), (0, false));
        let text = render(&confirmed);
        assert!(text.contains("by 3 re-run(s)"), "{text}");
        assert!(
            text.contains("  a [time]: flagged +30.00%; kept in 2 of 3 re-run(s) (#10 +31.00% regression, #11 +0.50% unchanged, #12 not measured): holds"),
            "{text}"
        );
        assert!(
            text.contains("  b [time]: flagged +30.00%; kept in 0 of 3"),
            "{text}"
        );
        assert!(text.trim_end().ends_with("not confirmed"), "{text}");
    }
}

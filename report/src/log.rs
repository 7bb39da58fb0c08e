//! `bench-run log`: a run's entry for the append-only BENCHMARKS.md, in the layout of the
//! hand-kept log it replaces (date, machine, toolchain, commands, profile, notes, results with
//! deltas against the baseline).
//!
//! Appending is the only write: [`append`] opens the file in append mode and never reads,
//! truncates or rewrites what is there.

use super::format;
use super::table::{Align, Table, code_span};
use super::{machine_line, shell_join, short_commit, toolchain_line};
use crate::model::StoredRun;
use crate::model::{Direction, Measurement};
use std::collections::BTreeMap;

/// The change of one result against the baseline, as the log shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// Change of the headline estimate in percent (positive: larger).
    pub change_pct: f64,
    /// The verdict word (`regression`, `improvement`, `unchanged`, ...).
    pub verdict: String,
}

/// Everything one log entry shows.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The run.
    pub run: &'a StoredRun,
    /// The results shown.
    pub results: &'a [Measurement],
    /// How many results the run has (more than shown: the entry points to `bench-run show`).
    pub total_results: usize,
    /// The baseline run, if any.
    pub baseline: Option<&'a StoredRun>,
    /// Deltas by (benchmark, metric).
    pub deltas: BTreeMap<(String, String), Delta>,
    /// Extra notes given on the command line.
    pub notes: Vec<String>,
}

/// Renders the entry as markdown, starting with a `---` separator.
#[must_use]
pub fn render(entry: &Entry<'_>) -> String {
    let run = entry.run;
    let p = &run.provenance;
    let date = run.created_at.get(..10).unwrap_or(&run.created_at);
    let mut out = String::new();
    out.push_str("\n---\n\n");
    out.push_str(&format!(
        "## {date} — `{}` (bench-run run #{}, {})\n\n",
        p.suite,
        run.id,
        run.source.name()
    ));
    out.push_str(&format!(
        "Date (UTC): {}\n\n",
        run.created_at
            .split('.')
            .next()
            .unwrap_or(&run.created_at)
            .to_owned()
            + "Z"
    ));
    out.push_str("Machine:\n\n");
    out.push_str(&format!("- CPU: {}\n", machine_line(p)));
    out.push_str(&format!(
        "- OS: {}, Linux {} {}\n",
        p.machine.os, p.machine.kernel, p.machine.arch
    ));
    out.push_str(&format!(
        "- CPU governor / turbo: {} / {}\n",
        p.cpu_governor.as_deref().unwrap_or("unknown"),
        p.turbo.as_deref().unwrap_or("unknown")
    ));
    out.push_str(&format!("- Fingerprint: `{}`\n", p.machine.fingerprint));
    out.push_str(&format!("- Rust: {}\n\n", toolchain_line(p)));
    out.push_str("Command(s):\n\n");
    out.push_str(&format!("- `{}`\n", shell_join(&p.command)));
    if let Some(cargo) = &p.cargo_command {
        out.push_str(&format!(
            "- `{}` (equivalent cargo command)\n",
            shell_join(cargo)
        ));
    }
    out.push_str("\nProfile:\n\n");
    out.push_str(&format!(
        "- {} (cargo bench; criterion){}{}{}\n\n",
        p.build.profile,
        if p.build.features.is_empty() {
            String::new()
        } else {
            format!(", features `{}`", p.build.features.join(","))
        },
        p.build
            .rustflags
            .as_ref()
            .map(|f| format!(", RUSTFLAGS=`{f}`"))
            .unwrap_or_default(),
        if p.quick { ", --quick (smoke run)" } else { "" }
    ));
    out.push_str("Notes:\n\n");
    out.push_str(&format!(
        "- Git: {}\n",
        match &p.git.commit {
            Some(c) => format!(
                "`{}` on `{}`{}",
                short_commit(Some(c), p.git.dirty),
                p.git.branch.as_deref().unwrap_or("detached HEAD"),
                p.git
                    .summary
                    .as_ref()
                    .map(|s| format!(" — {}", s.replace('`', "'")))
                    .unwrap_or_default()
            ),
            None => "not a git repository".to_owned(),
        }
    ));
    if let Some(c) = &p.conditions {
        let findings = crate::contention::assess(c);
        out.push_str(&format!(
            "- Machine conditions: {}{}\n",
            crate::contention::summary_line(c),
            if findings.is_empty() {
                " (quiet)".to_owned()
            } else {
                format!("; **busy**: {}", crate::contention::describe(&findings))
            }
        ));
    }
    out.push_str(&match entry.baseline {
        Some(base) => format!(
            "- Baseline for deltas: run #{} ({}, commit `{}`).\n",
            base.id,
            base.created_at,
            short_commit(
                base.provenance.git.commit.as_deref(),
                base.provenance.git.dirty
            )
        ),
        None => {
            "- No baseline: no earlier full run of this suite on this machine (--quick runs and \
                 confirmation re-runs are never a default baseline).\n"
                .to_owned()
        }
    });
    if let Some(sha256) = entry
        .baseline
        .and_then(|base| crate::compare::same_binary(&base.provenance, p))
    {
        out.push_str(&format!(
            "- Same executable: {}.\n",
            crate::compare::same_binary_sentence(&sha256)
        ));
    }
    for a in &run.annotations {
        out.push_str(&format!("- Annotation ({}): {}\n", a.created_at, a.text));
    }
    for note in &entry.notes {
        out.push_str(&format!("- {note}\n"));
    }
    out.push_str(&format!(
        "- Recorded in the ledger as run #{}; `bench-run show {}` has every estimate and raw sample.\n\n",
        run.id, run.id
    ));
    if entry.results.len() < entry.total_results {
        out.push_str(&format!(
            "Results: {} of {} (all of them: `bench-run show {}`), median with 95% CI; lower is \
             better unless marked ↑:\n\n",
            entry.results.len(),
            entry.total_results,
            run.id
        ));
    } else {
        out.push_str("Results (median with 95% CI; lower is better unless marked ↑):\n\n");
    }
    let mut table = Table::new(&[
        ("Benchmark", Align::Left),
        ("Median", Align::Right),
        ("95% CI", Align::Right),
        ("Throughput", Align::Right),
        ("Delta vs baseline", Align::Right),
        ("Verdict", Align::Left),
    ]);
    for m in entry.results {
        let key = (m.benchmark.full.clone(), m.metric.clone());
        let delta = entry.deltas.get(&key);
        let name = if m.metric == crate::model::metric::TIME {
            code_span(&m.benchmark.full)
        } else {
            format!(
                "{} ({}{})",
                code_span(&m.benchmark.full),
                m.metric,
                if m.direction == Direction::HigherIsBetter {
                    " ↑"
                } else {
                    ""
                }
            )
        };
        let ci = match (m.estimate.lower, m.estimate.upper) {
            (Some(l), Some(u)) => format!(
                "[{}, {}]",
                format::value(l, &m.unit),
                format::value(u, &m.unit)
            ),
            _ => String::new(),
        };
        table.push(vec![
            name,
            format::value(m.estimate.point, &m.unit),
            ci,
            format::throughput(m).unwrap_or_default(),
            delta
                .map(|d| format::pct(d.change_pct))
                .unwrap_or_else(|| "—".to_owned()),
            delta.map(|d| d.verdict.clone()).unwrap_or_default(),
        ]);
    }
    out.push_str(&table.to_markdown());
    out
}

/// Most rows an entry shows: a log a person reads; the rest stays in the ledger.
pub const MAX_ROWS: usize = 15;

/// The results an entry shows: those matching one of `patterns` (`BENCHMARK` or
/// `BENCHMARK:METRIC`, `*` a wildcard; all when none), at most [`MAX_ROWS`].
#[must_use]
pub fn rows_to_show(results: &[Measurement], patterns: &[String]) -> Vec<Measurement> {
    results
        .iter()
        .filter(|m| {
            patterns.is_empty()
                || patterns.iter().any(|p| {
                    crate::compare::pattern_matches(p, &m.benchmark.full)
                        || crate::compare::pattern_matches(
                            p,
                            &format!("{}:{}", m.benchmark.full, m.metric),
                        )
                })
        })
        .take(MAX_ROWS)
        .cloned()
        .collect()
}

/// Header written when the log file does not exist yet.
pub const NEW_LOG_HEADER: &str = "# Benchmark log (append-only)\n\nRules:\n\n- Append-only; never edit old entries. Corrections are new entries or ledger annotations.\n- Entries are written by `bench-run log`, from the ledger; each names its run id, exact\n  command(s), machine, toolchain and git commit.\n- Any performance claim in this repository cites one of these entries.\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn results(names: &[(&str, &str)]) -> Vec<Measurement> {
        names
            .iter()
            .map(|(b, m)| Measurement {
                metric: (*m).to_owned(),
                ..Measurement::time_ns(b, 1.0)
            })
            .collect()
    }

    #[test]
    fn patterns_pick_rows_by_benchmark_or_metric_and_at_most_fifteen() {
        let r = results(&[
            ("pg/ingest", "throughput"),
            ("pg/trend_page", "latency_p99"),
            ("pg/trend_page", "latency_p50"),
            ("sqlite/ingest", "throughput"),
        ]);
        let names = |rows: Vec<Measurement>| -> Vec<String> {
            rows.iter()
                .map(|m| format!("{}:{}", m.benchmark.full, m.metric))
                .collect()
        };
        assert_eq!(rows_to_show(&r, &[]).len(), 4);
        assert_eq!(
            names(rows_to_show(&r, &["*:throughput".to_owned()])),
            ["pg/ingest:throughput", "sqlite/ingest:throughput"]
        );
        assert_eq!(
            names(rows_to_show(
                &r,
                &[
                    "pg/trend_page:latency_p99".to_owned(),
                    "sqlite/*".to_owned()
                ]
            )),
            ["pg/trend_page:latency_p99", "sqlite/ingest:throughput"]
        );
        let many: Vec<(String, String)> = (0..40)
            .map(|i| (format!("b{i}"), "time".to_owned()))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(rows_to_show(&results(&many), &[]).len(), MAX_ROWS);
    }
}

//! Comparisons rendered for terminals, pull requests (markdown) and scripts (JSON).

use super::format;
use super::table::{Align, Table, escape_markdown_cell};
use crate::compare::{Comparison, Evidence, NoiseSource, Row, Verdict};
use crate::model::Direction;
use crate::model::StoredRun;
use crate::noise::NoiseFlag;
use crate::run_lines::{busy_text, machine_line, short_commit, toolchain_line};
use serde_json::{Value, json};

fn change_cell(row: &Row) -> String {
    row.change
        .map(|c| format::pct(c.point_pct))
        .unwrap_or_else(|| "—".to_owned())
}

fn ci_cell(row: &Row) -> String {
    match row.change {
        Some(c) => match (c.lower_pct, c.upper_pct) {
            (Some(l), Some(u)) => format!("[{}, {}]", format::pct(l), format::pct(u)),
            _ => String::new(),
        },
        None => String::new(),
    }
}

fn value_cell(value: Option<f64>, unit: &str) -> String {
    value
        .map(|v| format::value(v, unit))
        .unwrap_or_else(|| "—".to_owned())
}

fn p_cell(row: &Row) -> String {
    format::p_value(row.p_adjusted.or(row.p_value))
}

/// The noise-floor cell of a comparison table: the floor, starred when it is the default.
#[must_use]
pub fn noise_cell(row: &Row) -> String {
    match row.noise_floor.source {
        NoiseSource::History { .. } => format!("{:.2}%", row.noise_floor.pct),
        NoiseSource::Default { .. } => format!("{:.2}%*", row.noise_floor.pct),
        NoiseSource::Paired => "paired".to_owned(),
    }
}

fn verdict_cell(row: &Row, markdown: bool) -> String {
    let name = row.verdict.name();
    let quarantined = row.quarantined_by.is_some();
    let cell = match (row.verdict, markdown) {
        // A quarantined regression does not fail the gate: no alarm in its cell.
        (Verdict::Regression, _) if quarantined => name.to_owned(),
        (Verdict::Regression, true) => format!("**{name}** ❌"),
        (Verdict::Improvement, true) => format!("**{name}** ✅"),
        (Verdict::Regression, false) => name.to_uppercase(),
        _ => name.to_owned(),
    };
    let cell = if row.layout_sensitive {
        format!("{cell} (layout-sensitive)")
    } else {
        cell
    };
    if quarantined {
        format!("{cell} (quarantined)")
    } else {
        cell
    }
}

/// The layout spread of a row measured under several layouts (`ab --layouts K`).
fn layout_cell(row: &Row) -> String {
    row.layout
        .as_ref()
        .map_or_else(String::new, |l| format!("{:.1}%", l.spread_pct()))
}

/// Lines under the table: the rows the noise model flagged and the quarantined rows, each with
/// its reason (empty when there are none).
fn notes(c: &Comparison, markdown: bool) -> String {
    let name = |r: &Row| {
        let label = label(r);
        if markdown {
            format!("`{}`", escape_markdown_cell(&label))
        } else {
            label
        }
    };
    let mut out = String::new();
    let flagged: Vec<String> = c
        .flagged()
        .map(|r| {
            let why: Vec<String> = r.flags.iter().map(NoiseFlag::describe).collect();
            format!("{} {}", name(r), why.join("; "))
        })
        .collect();
    if !flagged.is_empty() {
        out.push_str(&format!(
            "Flagged by the noise model ({}; consider quarantining them): {}.\n",
            flagged.len(),
            flagged.join(", ")
        ));
    }
    let quarantined: Vec<String> = c
        .quarantined()
        .map(|r| {
            format!(
                "{} ({}, pattern `{}`)",
                name(r),
                r.verdict,
                r.quarantined_by.as_deref().unwrap_or_default()
            )
        })
        .collect();
    if !quarantined.is_empty() {
        out.push_str(&format!(
            "Quarantined ({}; shown, never failing the gate): {}.\n",
            quarantined.len(),
            quarantined.join(", ")
        ));
    }
    let sensitive: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.layout_sensitive)
        .map(|r| {
            format!(
                "{} ({} within a layout spread of {})",
                name(r),
                change_cell(r),
                layout_cell(r)
            )
        })
        .collect();
    if !sensitive.is_empty() {
        out.push_str(&format!(
            "Layout-sensitive ({}; the change is within how far links of the same code in \
             different function orders were apart, so it is not attributed to the code; \
             --layout-strict judges them as usual): {}.\n",
            sensitive.len(),
            sensitive.join(", ")
        ));
    }
    if c.rows
        .iter()
        .any(|r| matches!(r.evidence, Evidence::Paired { .. }))
    {
        out.push_str(
            "Paired rounds: before and after are the medians of each side's per-round values; \
             change and its interval are the median of the rounds' head/base ratios (one per \
             round), so change need not equal after/before.\n",
        );
    }
    if let Some(k) = c
        .rows
        .iter()
        .find_map(|r| r.layout.as_ref().map(|l| l.layouts()))
    {
        out.push_str(&format!(
            "Layout spread: the range of the changes the rounds of each of the {k} layouts \
             showed (each layout links both sides in another function order).\n"
        ));
    }
    out
}

fn label(row: &Row) -> String {
    let arrow = if row.direction == Direction::HigherIsBetter {
        " ↑"
    } else {
        ""
    };
    if row.metric == crate::model::metric::TIME {
        row.benchmark.clone()
    } else {
        format!("{} [{}{arrow}]", row.benchmark, row.metric)
    }
}

fn table(c: &Comparison, markdown: bool) -> Table {
    let layouts = c.rows.iter().any(|r| r.layout.is_some());
    let mut columns = vec![
        ("benchmark", Align::Left),
        ("before", Align::Right),
        ("after", Align::Right),
        ("change", Align::Right),
        ("95% CI", Align::Right),
        ("noise", Align::Right),
        ("p", Align::Right),
        ("verdict", Align::Left),
    ];
    if layouts {
        columns.insert(7, ("layout spread", Align::Right));
    }
    let mut table = Table::new(&columns);
    for row in &c.rows {
        let mut cells = vec![
            label(row),
            value_cell(row.before, &row.unit),
            value_cell(row.after, &row.unit),
            if markdown && matches!(row.verdict, Verdict::Regression | Verdict::Improvement) {
                format!("**{}**", change_cell(row))
            } else {
                change_cell(row)
            },
            ci_cell(row),
            noise_cell(row),
            p_cell(row),
            verdict_cell(row, markdown),
        ];
        if layouts {
            cells.insert(7, layout_cell(row));
        }
        table.push(cells);
    }
    if let Some(g) = &c.geomean {
        let ci = match (g.lower_pct, g.upper_pct) {
            (Some(l), Some(u)) => format!("[{}, {}]", format::pct(l), format::pct(u)),
            _ => String::new(),
        };
        let mut cells = vec![
            format!("geomean ({} rows; + is worse)", g.n_rows),
            String::new(),
            String::new(),
            format::pct(g.change_pct),
            ci,
            String::new(),
            String::new(),
            String::new(),
        ];
        if layouts {
            cells.push(String::new());
        }
        table.push(cells);
    }
    table
}

/// Verdict counts in words: `1 regression(s), 0 improvement(s), 2 unchanged, 1 new`.
#[must_use]
pub fn summary(c: &Comparison) -> String {
    let n = &c.counts;
    let mut parts = vec![
        format!("{} regression(s)", n.regressions),
        format!("{} improvement(s)", n.improvements),
        format!("{} unchanged", n.unchanged),
    ];
    for (count, what) in [
        (n.new, "new"),
        (n.missing, "missing"),
        (n.ignored, "ignored"),
        (n.quarantined, "quarantined"),
        (n.layout_sensitive, "layout-sensitive"),
    ] {
        if count > 0 {
            parts.push(format!("{count} {what}"));
        }
    }
    parts.join(", ")
}

fn run_label(run: &StoredRun) -> String {
    let commit = short_commit(
        run.provenance.git.commit.as_deref(),
        run.provenance.git.dirty,
    );
    if commit.is_empty() {
        format!("run #{}", run.id)
    } else {
        format!("run #{} ({commit})", run.id)
    }
}

/// What a reader must know before the table: that both runs ran the same executable, and
/// which of them ran on a busy machine. One sentence each, in that order.
#[must_use]
pub fn comparison_notes(c: &Comparison, base: &StoredRun, head: &StoredRun) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(sha256) = &c.same_binary {
        notes.push(format!(
            "Same executable: {}; no row is a regression or an improvement.",
            crate::compare::same_binary_sentence(sha256)
        ));
    }
    for (side, run) in [("base", base), ("head", head)] {
        if let Some(text) = busy_text(run) {
            notes.push(format!(
                "Busy machine: the {side} {text}; its timings may be the machine's, not the code's."
            ));
        }
    }
    notes
}

/// The comparison as an aligned terminal table with a summary.
#[must_use]
pub fn comparison_terminal(c: &Comparison, base: &StoredRun, head: &StoredRun) -> String {
    let mut out = format!(
        "{}: {} (before) -> {} (after)\n\n",
        head.provenance.suite,
        run_label(base),
        run_label(head)
    );
    for note in comparison_notes(c, base, head) {
        out.push_str(&note);
        out.push_str("\n\n");
    }
    out.push_str(&table(c, false).to_terminal());
    out.push_str(&format!("\n{}. {}\n", summary(c), method_note(c, false)));
    out.push_str(&notes(c, false));
    out
}

/// Whether any row of `c` was judged on paired A/B rounds.
fn is_paired(c: &Comparison) -> bool {
    c.rows
        .iter()
        .any(|r| matches!(r.evidence, crate::compare::Evidence::Paired { .. }))
}

/// How the table's p-values, intervals and floors were obtained: one sentence per kind of
/// evidence the rows used. Mann-Whitney is named only when a row was judged on raw samples.
fn method_note(c: &Comparison, markdown: bool) -> String {
    use crate::compare::Evidence;
    let star = if markdown { "\\*" } else { "*" };
    if is_paired(c) {
        return format!(
            "Paired A/B rounds (one process per side per round): change and 95% CI are the median of \
             the rounds' head/base ratios with its order-statistic interval; p is the {}-corrected \
             exact sign test over {} row(s); a regression must be significant and its median change \
             must exceed the threshold (no noise floor: the rounds hold the between-process noise).",
            c.correction.name(),
            c.family_size
        );
    }
    let count = |f: fn(&Evidence) -> bool| c.rows.iter().filter(|r| f(&r.evidence)).count();
    let samples = count(|e| matches!(e, Evidence::Samples { .. }));
    let intervals = count(|e| matches!(e, Evidence::Intervals { .. }));
    let exact = count(|e| matches!(e, Evidence::Exact));
    let mut sentences = Vec::new();
    if samples > 0 {
        sentences.push(if markdown {
            format!(
                "Change and 95% CI from the Hodges-Lehmann estimate of the raw samples; p is {}-corrected \
                 Mann-Whitney U; a regression must be significant and its whole confidence interval must \
                 clear both the threshold and the benchmark's noise floor ({star} = default floor, too \
                 little history).",
                c.correction.name()
            )
        } else {
            format!(
                "p: {}-corrected Mann-Whitney U over {} rows; noise: floor learned from history ({star} = \
                 default, too little history).",
                c.correction.name(),
                c.family_size
            )
        });
    }
    if intervals > 0 {
        sentences.push(format!(
            "{intervals} row(s) without raw samples on both sides judged on confidence intervals (no \
             p-value): a change is significant only when the base and head intervals do not overlap, \
             and a regression must exceed both the threshold and the noise floor."
        ));
    }
    if exact > 0 {
        sentences.push(format!(
            "{exact} row(s) of exact values (no samples, no bounds; deterministic metrics such as \
             instruction counts): any difference is real, and a regression must exceed the threshold."
        ));
    }
    if sentences.is_empty() {
        "No row had values on both sides to judge.".to_owned()
    } else {
        sentences.join(" ")
    }
}

/// The comparison as markdown fit for a CI job summary or a pull-request comment.
#[must_use]
pub fn comparison_markdown(c: &Comparison, base: &StoredRun, head: &StoredRun) -> String {
    let status = if c.has_regression() {
        "❌ regression"
    } else if c.same_binary.is_some() {
        "✅ same executable, no verdict"
    } else {
        "✅ no regression"
    };
    let mut out = format!(
        "### `{}`: {status}\n\n**Before:** {} · **After:** {} · **Machine:** {} · **Toolchain:** {}\n\n",
        escape_markdown_cell(&head.provenance.suite),
        run_label(base),
        run_label(head),
        escape_markdown_cell(&machine_line(&head.provenance)),
        escape_markdown_cell(&toolchain_line(&head.provenance)),
    );
    for note in comparison_notes(c, base, head) {
        out.push_str(&format!("> ⚠️ {}\n\n", escape_markdown_cell(&note)));
    }
    out.push_str(&table(c, true).to_markdown());
    out.push_str(&format!("\n{}. {}\n", summary(c), method_note(c, true)));
    for line in notes(c, true).lines() {
        out.push('\n');
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The comparison as JSON (stable contract).
#[must_use]
pub fn comparison_json(c: &Comparison, base: &StoredRun, head: &StoredRun) -> String {
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            json!({
                "benchmark": r.benchmark,
                "metric": r.metric,
                "unit": r.unit,
                "direction": r.direction,
                "before": r.before,
                "after": r.after,
                "change_pct": r.change.map(|c| c.point_pct),
                "change_lower_pct": r.change.and_then(|c| c.lower_pct),
                "change_upper_pct": r.change.and_then(|c| c.upper_pct),
                "p_value": r.p_value,
                "p_adjusted": r.p_adjusted,
                "significant": r.significant,
                "noise_floor_pct": r.noise_floor.pct,
                "noise_floor_source": r.noise_floor.source,
                "noise": r.noise,
                "flags": r.flags,
                "quarantined_by": r.quarantined_by,
                "layout": r.layout,
                "layout_spread_pct": r.layout.as_ref().map(bench_analysis::layout::LayoutSpread::spread_pct),
                "layout_sensitive": r.layout_sensitive,
                "threshold_pct": r.threshold_pct,
                "verdict": r.verdict,
                "evidence": r.evidence,
                "reasons": r.reasons,
            })
        })
        .collect();
    let side = |run: &StoredRun| {
        let findings = run
            .provenance
            .conditions
            .as_ref()
            .map(crate::contention::assess);
        json!({
            "id": run.id,
            "git_commit": run.provenance.git.commit,
            "created_at": run.created_at,
            "bench_exe_sha256": run.provenance.bench_exe.as_ref().map(|e| &e.sha256),
            "busy": findings.as_ref().map(|f| !f.is_empty()),
            "busy_findings": findings,
        })
    };
    let doc = json!({
        "base": side(base),
        "head": side(head),
        "same_binary": c.same_binary,
        "notes": comparison_notes(c, base, head),
        "suite": head.provenance.suite,
        "rows": rows,
        "flagged": c.flagged().map(|r| json!({
            "benchmark": r.benchmark,
            "metric": r.metric,
            "flags": r.flags,
            "reasons": r.flags.iter().map(NoiseFlag::describe).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "quarantined": c.quarantined().map(|r| json!({
            "benchmark": r.benchmark,
            "metric": r.metric,
            "verdict": r.verdict,
            "pattern": r.quarantined_by,
        })).collect::<Vec<_>>(),
        "geomean": c.geomean,
        "counts": c.counts,
        "correction": c.correction.name(),
        "family_size": c.family_size,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}

/// Every input of every verdict, one block per row.
#[must_use]
pub fn explain(c: &Comparison) -> String {
    let mut out = String::from("\nExplanation of each verdict:\n");
    for row in &c.rows {
        out.push_str(&format!(
            "\n{} [{}]: {}\n",
            row.benchmark, row.metric, row.verdict
        ));
        for reason in &row.reasons {
            out.push_str(&format!("  - {reason}\n"));
        }
    }
    out
}

/// Where a noise floor came from, in words.
#[must_use]
pub fn noise_source(source: &NoiseSource) -> String {
    match source {
        NoiseSource::History { n_deltas } => format!("history ({n_deltas} run-to-run changes)"),
        NoiseSource::Default { n_deltas } => {
            format!("default (only {n_deltas} run-to-run changes in history)")
        }
        NoiseSource::Paired => "none needed (paired rounds)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CompareConfig, compare};
    use crate::model::{
        BenchmarkId, Estimate, History, Measurement, Samples, SamplingMode, metric,
    };

    fn measurement(id: &str, point: f64, bounds: bool, samples: bool) -> Measurement {
        let mut estimate = Estimate::point(point);
        if bounds {
            estimate.lower = Some(point * 0.99);
            estimate.upper = Some(point * 1.01);
            estimate.confidence_level = Some(0.95);
        }
        let times: Vec<f64> = (0..20).map(|i| point * 10.0 + f64::from(i)).collect();
        Measurement {
            benchmark: BenchmarkId::named(id),
            metric: metric::TIME.to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate,
            statistics: std::collections::BTreeMap::new(),
            throughput: None,
            samples: samples
                .then(|| Samples::new(SamplingMode::Flat, vec![10.0; 20], times).ok())
                .flatten(),
        }
    }

    fn note(base: &[Measurement], head: &[Measurement]) -> (String, String) {
        let c = compare(base, head, &History::new(), &CompareConfig::default());
        (method_note(&c, false), method_note(&c, true))
    }

    #[test]
    fn mann_whitney_is_named_only_when_a_row_used_it() {
        let (plain, markdown) = note(
            &[measurement("a", 100.0, true, false)],
            &[measurement("a", 130.0, true, false)],
        );
        for text in [&plain, &markdown] {
            assert!(!text.contains("Mann-Whitney"), "{text}");
            assert!(text.contains("judged on confidence intervals"), "{text}");
        }
        let (plain, _) = note(
            &[measurement("a", 100.0, false, false)],
            &[measurement("a", 130.0, false, false)],
        );
        assert!(!plain.contains("Mann-Whitney"), "{plain}");
        assert!(plain.contains("exact values"), "{plain}");
        let (plain, markdown) = note(
            &[
                measurement("a", 100.0, true, true),
                measurement("b", 100.0, true, false),
            ],
            &[
                measurement("a", 130.0, true, true),
                measurement("b", 130.0, true, false),
            ],
        );
        for text in [&plain, &markdown] {
            assert!(text.contains("Mann-Whitney"), "{text}");
            assert!(text.contains("1 row(s) without raw samples"), "{text}");
        }
        let (plain, _) = note(&[], &[measurement("a", 100.0, true, true)]);
        assert_eq!(plain, "No row had values on both sides to judge.");
    }
}

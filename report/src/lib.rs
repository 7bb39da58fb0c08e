//! # bench-report
//!
//! Runs, results and comparisons rendered as terminal tables, markdown and JSON.
//!
//! Everything here is a pure function of data read from the ledger: the model's runs and the
//! analysis' verdicts in, text out. No I/O. The JSON shapes are a
//! stable contract for scripts (see the README); they are built explicitly with `json!` so a
//! refactor of the model cannot change them by accident.

use bench_model::format;
pub mod log;
pub mod table;

use crate::model::{Direction, Measurement, RunSummary, StoredRun};
use serde_json::{Value, json};
use table::{Align, Table};

use bench_analysis::{calibration, compare, contention, noise, ratio};
use bench_model as model;

pub use compare_report::{
    comparison_json, comparison_markdown, comparison_notes, comparison_terminal, explain,
    noise_cell, noise_source, summary,
};

mod compare_report;
mod interleave_report;
mod output;
mod ratio_report;
mod run_lines;

pub use interleave_report::interleave_report;
pub use output::OutputFormat;
use output::to_json;
pub use ratio_report::{RatioSources, ratio_report};
pub use run_lines::{
    busy_text, escape_regex, exact_filter, features_text, machine_line, shell_join, short_commit,
    toolchain_line,
};

/// The layout sensitivity of a suite (`bench-run calibrate --layouts`): per benchmark, each
/// layout's median, the spread between them, the process noise within one layout, and whether
/// a change of `threshold_pct` could be the layout's alone.
#[must_use]
pub fn layout_sensitivity(
    rows: &[bench_analysis::layout::Sensitivity],
    threshold_pct: f64,
    format: OutputFormat,
) -> String {
    if format == OutputFormat::Json {
        let doc = json!({
            "threshold_pct": threshold_pct,
            "rows": rows.iter().map(|r| json!({
                "benchmark": r.benchmark,
                "metric": r.metric,
                "unit": r.unit,
                "layout_medians": r.layouts.medians.iter().map(|(seed, m)| json!({"seed": seed, "median": m})).collect::<Vec<_>>(),
                "layout_spread_pct": r.layouts.spread_pct,
                "within_layout_pct": r.within_pct,
                "layout_sensitive": r.exceeds(threshold_pct),
            })).collect::<Vec<_>>(),
        });
        return format!("{doc:#}\n");
    }
    let mut t = Table::new(&[
        ("benchmark", Align::Left),
        ("fastest layout", Align::Right),
        ("slowest layout", Align::Right),
        ("layout spread", Align::Right),
        ("within a layout", Align::Right),
        ("verdict", Align::Left),
    ]);
    for r in rows {
        let fastest = r
            .layouts
            .medians
            .iter()
            .map(|m| m.1)
            .fold(f64::INFINITY, f64::min);
        let slowest = r.layouts.medians.iter().map(|m| m.1).fold(0.0, f64::max);
        let name = if r.metric == bench_model::metric::TIME {
            r.benchmark.clone()
        } else {
            format!("{} [{}]", r.benchmark, r.metric)
        };
        t.push(vec![
            if format == OutputFormat::Markdown {
                table::code_span(&name)
            } else {
                name
            },
            format::value(fastest, &r.unit),
            format::value(slowest, &r.unit),
            format!("{:.1}%", r.layouts.spread_pct),
            r.within_pct
                .map_or_else(|| "—".to_owned(), |w| format!("{w:.1}%")),
            if r.exceeds(threshold_pct) {
                format!(
                    "layout-sensitive: a change under {:.1}% is not attributable",
                    r.layouts.spread_pct
                )
            } else {
                format!("can carry {threshold_pct}%")
            },
        ]);
    }
    let sensitive = rows.iter().filter(|r| r.exceeds(threshold_pct)).count();
    let k = rows.first().map_or(0, |r| r.layouts.medians.len());
    let body = if format == OutputFormat::Markdown {
        t.to_markdown()
    } else {
        t.to_terminal()
    };
    format!(
        "{body}\n{sensitive} of {} benchmark(s) move more than the {threshold_pct}% threshold \
         between {k} links of the same code (layout spread: max over min of the layouts' \
         medians; within a layout: the median spread of one layout's own processes, the noise \
         the spread also holds). `bench-run ab` reports a change within a benchmark's spread as \
         layout-sensitive, not as a regression.\n",
        rows.len()
    )
}

/// The `busy` cell of a run list: `BUSY`, else empty (quiet, or not recorded: imports).
fn busy_cell(busy: Option<bool>) -> &'static str {
    if busy == Some(true) { "BUSY" } else { "" }
}

/// `list` output.
#[must_use]
pub fn runs_list(runs: &[RunSummary], format: OutputFormat) -> String {
    match format {
        OutputFormat::Json => to_json(&Value::Array(runs.iter().map(run_summary_json).collect())),
        OutputFormat::Table | OutputFormat::Markdown => {
            let mut table = Table::new(&[
                ("id", Align::Right),
                ("suite", Align::Left),
                ("created (UTC)", Align::Left),
                ("commit", Align::Left),
                ("branch", Align::Left),
                ("machine", Align::Left),
                ("results", Align::Right),
                ("source", Align::Left),
                ("quick", Align::Left),
                ("busy", Align::Left),
                ("tags", Align::Left),
            ]);
            for r in runs {
                table.push(vec![
                    r.id.to_string(),
                    r.suite.clone(),
                    r.created_at
                        .chars()
                        .take(19)
                        .collect::<String>()
                        .replace('T', " "),
                    short_commit(r.git_commit.as_deref(), r.git_dirty),
                    r.git_branch.clone().unwrap_or_default(),
                    r.machine.chars().take(8).collect(),
                    r.results.to_string(),
                    r.source.name().to_owned(),
                    if r.quick { "quick" } else { "" }.to_owned(),
                    busy_cell(crate::contention::is_busy(r.conditions.as_ref())).to_owned(),
                    r.tags.join(", "),
                ]);
            }
            let legend = if runs
                .iter()
                .any(|r| crate::contention::is_busy(r.conditions.as_ref()) == Some(true))
            {
                "\nBUSY: other processes or the hypervisor took CPU time while the run measured \
                 (`bench-run show RUN` says how much).\n"
            } else {
                ""
            };
            if format == OutputFormat::Markdown {
                table.to_markdown() + legend
            } else if table.is_empty() {
                "no runs recorded yet\n".to_owned()
            } else {
                table.to_terminal() + legend
            }
        }
    }
}

fn run_summary_json(r: &RunSummary) -> Value {
    json!({
        "id": r.id,
        "suite": r.suite,
        "created_at": r.created_at,
        "source": r.source.name(),
        "git_commit": r.git_commit,
        "git_branch": r.git_branch,
        "git_dirty": r.git_dirty,
        "git_summary": r.git_summary,
        "machine": r.machine,
        "cpu_model": r.cpu_model,
        "results": r.results,
        "tags": r.tags,
        "quick": r.quick,
        "busy": crate::contention::is_busy(r.conditions.as_ref()),
    })
}

/// The `run` object of `show --format json`.
#[must_use]
pub fn run_json(run: &StoredRun) -> Value {
    let p = &run.provenance;
    json!({
        "id": run.id,
        "suite": p.suite,
        "package": p.package,
        "created_at": run.created_at,
        "source": run.source.name(),
        "command": p.command,
        "cargo_command": p.cargo_command,
        "cwd": p.cwd,
        "git_commit": p.git.commit,
        "git_branch": p.git.branch,
        "git_dirty": p.git.dirty,
        "git_commit_time": p.git.commit_time,
        "git_summary": p.git.summary,
        "machine": {
            "fingerprint": p.machine.fingerprint,
            "hostname": p.machine.hostname,
            "cpu_model": p.machine.cpu_model,
            "physical_cores": p.machine.physical_cores,
            "logical_cores": p.machine.logical_cores,
            "memory_bytes": p.machine.memory_bytes,
            "os": p.machine.os,
            "kernel": p.machine.kernel,
            "arch": p.machine.arch,
            "cpu_governor": p.cpu_governor,
            "turbo": p.turbo,
        },
        "toolchain": p.toolchain.as_ref().map(|t| json!({
            "fingerprint": t.fingerprint,
            "rustc_version": t.rustc_version,
            "rustc_commit": t.rustc_commit,
            "host": t.host,
            "llvm_version": t.llvm_version,
            "rustc_verbose": t.rustc_verbose,
            "cargo_version": t.cargo_version,
        })),
        "build": {
            "profile": p.build.profile,
            "features": p.build.features,
            "feature_flags": p.build.feature_flags,
            "rustflags": p.build.rustflags,
        },
        "env": p.env,
        "quick": p.quick,
        "duration_ms": p.duration_ms,
        "bench_exe": p.bench_exe,
        "conditions": p.conditions,
        "busy": p.conditions.as_ref().map(|c| !crate::contention::assess(c).is_empty()),
        "busy_findings": p.conditions.as_ref().map(crate::contention::assess),
        "tags": run.tags,
        "annotations": run.annotations,
    })
}

/// One entry of `results` in `show --format json` (times in nanoseconds).
#[must_use]
pub fn measurement_json(m: &Measurement) -> Value {
    let statistics: serde_json::Map<String, Value> = m
        .statistics
        .iter()
        .map(|(s, e)| {
            (
                s.name().to_owned(),
                json!({"estimate": e.point, "lower": e.lower, "upper": e.upper,
                       "confidence_level": e.confidence_level, "standard_error": e.standard_error}),
            )
        })
        .collect();
    let throughput = m.throughput.map(|t| {
        #[expect(clippy::cast_precision_loss, reason = "a rate for display and scripts")]
        let per_second = (m.unit == "ns" && m.estimate.point > 0.0)
            .then(|| t.per_iteration as f64 / (m.estimate.point * 1e-9));
        json!({
            "kind": t.kind,
            "per_iteration": t.per_iteration,
            "per_second": per_second,
            "unit": t.kind.rate_unit(),
        })
    });
    json!({
        "benchmark": m.benchmark.full,
        "group": m.benchmark.group,
        "function": m.benchmark.function,
        "value": m.benchmark.value,
        "metric": m.metric,
        "unit": m.unit,
        "direction": m.direction,
        "estimate": m.estimate.point,
        "lower": m.estimate.lower,
        "upper": m.estimate.upper,
        "confidence_level": m.estimate.confidence_level,
        "statistics": statistics,
        "samples": m.samples.as_ref().map_or(0, crate::model::Samples::len),
        "throughput": throughput,
    })
}

/// `show` output.
#[must_use]
pub fn run_show(run: &StoredRun, results: &[Measurement], format: OutputFormat) -> String {
    match format {
        OutputFormat::Json => to_json(&json!({
            "run": run_json(run),
            "results": results.iter().map(measurement_json).collect::<Vec<_>>(),
        })),
        OutputFormat::Table | OutputFormat::Markdown => {
            let mut out = provenance_text(run, format == OutputFormat::Markdown);
            out.push('\n');
            let table = results_table(results);
            out.push_str(&if format == OutputFormat::Markdown {
                table.to_markdown()
            } else {
                table.to_terminal()
            });
            if let Some(note) = samples_note(run.id, results) {
                out.push('\n');
                out.push_str(&note);
                out.push('\n');
            }
            out
        }
    }
}

/// What the `samples` column of `show` holds and where the samples themselves are: the table
/// (and `show --format json`) give counts only. `None` when no result stored any.
fn samples_note(run_id: i64, results: &[Measurement]) -> Option<String> {
    let total: usize = results
        .iter()
        .filter_map(|m| m.samples.as_ref().map(crate::model::Samples::len))
        .sum();
    (total > 0).then(|| {
        format!(
            "samples: how many raw samples each result stored ({total} in all); \
             `bench-run export {run_id} --format json` prints them."
        )
    })
}

/// The results of one run as a table: estimate, bounds, throughput, sample count.
#[must_use]
pub fn results_table(results: &[Measurement]) -> Table {
    let mut table = Table::new(&[
        ("benchmark", Align::Left),
        ("metric", Align::Left),
        ("estimate", Align::Right),
        ("lower", Align::Right),
        ("upper", Align::Right),
        ("throughput", Align::Right),
        ("samples", Align::Right),
    ]);
    for m in results {
        let bound = |b: Option<f64>| b.map(|v| format::value(v, &m.unit)).unwrap_or_default();
        table.push(vec![
            m.benchmark.full.clone(),
            format!(
                "{}{}",
                m.metric,
                if m.direction == Direction::HigherIsBetter {
                    " (↑)"
                } else {
                    ""
                }
            ),
            format::value(m.estimate.point, &m.unit),
            bound(m.estimate.lower),
            bound(m.estimate.upper),
            format::throughput(m).unwrap_or_default(),
            m.samples
                .as_ref()
                .map_or(0, crate::model::Samples::len)
                .to_string(),
        ]);
    }
    table
}

fn provenance_text(run: &StoredRun, markdown: bool) -> String {
    let p = &run.provenance;
    let code = |s: &str| {
        if markdown {
            format!("`{s}`")
        } else {
            s.to_owned()
        }
    };
    let mut lines = vec![
        format!(
            "run #{} of suite {} ({})",
            run.id,
            p.suite,
            run.source.name()
        ),
        format!("recorded: {}", run.created_at),
        format!("command: {}", code(&shell_join(&p.command))),
    ];
    if let Some(cargo) = &p.cargo_command {
        lines.push(format!("cargo: {}", code(&shell_join(cargo))));
    }
    lines.push(format!(
        "git: {}",
        match &p.git.commit {
            Some(c) => format!(
                "{}{} on {}{}",
                c,
                if p.git.dirty { " (dirty)" } else { "" },
                p.git.branch.as_deref().unwrap_or("detached HEAD"),
                p.git
                    .summary
                    .as_ref()
                    .map(|s| format!(": {s}"))
                    .unwrap_or_default()
            ),
            None => "not a git repository".to_owned(),
        }
    ));
    lines.push(format!(
        "machine: {} [{}]",
        machine_line(p),
        p.machine.fingerprint
    ));
    lines.push(format!(
        "os: {}, kernel {} {}; governor {}, turbo {}",
        p.machine.os,
        p.machine.kernel,
        p.machine.arch,
        p.cpu_governor.as_deref().unwrap_or("unknown"),
        p.turbo.as_deref().unwrap_or("unknown")
    ));
    lines.push(format!("toolchain: {}", toolchain_line(p)));
    lines.push(format!(
        "profile: {}; {}{}",
        p.build.profile,
        features_text(&p.build),
        p.build
            .rustflags
            .as_ref()
            .map(|f| format!("; RUSTFLAGS={f}"))
            .unwrap_or_default()
    ));
    if p.quick {
        lines.push("quick: yes (short warm-up and measurement; a smoke run)".to_owned());
    }
    if let Some(exe) = &p.bench_exe {
        lines.push(format!(
            "executable: sha256 {} ({} bytes)",
            code(&exe.sha256),
            exe.bytes
        ));
    }
    if let Some(c) = &p.conditions {
        let findings = crate::contention::assess(c);
        lines.push(format!(
            "conditions: {}{}",
            crate::contention::summary_line(c),
            if findings.is_empty() {
                " (quiet)".to_owned()
            } else {
                format!("; BUSY: {}", crate::contention::describe(&findings))
            }
        ));
    }
    if !run.tags.is_empty() {
        lines.push(format!("tags: {}", run.tags.join(", ")));
    }
    for a in &run.annotations {
        lines.push(format!("note ({}): {}", a.created_at, a.text));
    }
    let sep = if markdown { "  \n" } else { "\n" };
    let mut out = lines.join(sep);
    out.push('\n');
    out
}

/// The table of `bench-run calibrate`: per benchmark of `history`, its noise floor under
/// `config` and what the A/A comparisons of the calibration runs (`aa`) said.
#[must_use]
pub fn calibration_table(
    history: &model::History,
    aa: &std::collections::BTreeMap<model::MetricKey, crate::calibration::AaOutcome>,
    config: &crate::compare::CompareConfig,
) -> String {
    let mut table = Table::new(&[
        ("benchmark", Align::Left),
        ("metric", Align::Left),
        ("runs", Align::Right),
        ("noise floor", Align::Right),
        ("source", Align::Left),
        ("segments", Align::Right),
        ("dropped", Align::Right),
        ("flags", Align::Left),
        ("A/A alarms", Align::Right),
        ("detects", Align::Right),
    ]);
    for (key, points) in history {
        let noise = crate::compare::noise_analysis(points, config);
        let flags: Vec<&str> = noise.flags.iter().map(|f| f.name()).collect();
        let outcome = aa.get(key).cloned().unwrap_or_default();
        let limit = config.threshold_for(&key.benchmark).0.max(noise.floor.pct);
        table.push(vec![
            key.benchmark.clone(),
            key.metric.clone(),
            points.len().to_string(),
            format!("{:.2}%", noise.floor.pct),
            noise_source(&noise.floor.source),
            noise.explanation.segments.len().to_string(),
            noise.explanation.dropped.len().to_string(),
            flags.join(", "),
            format!("{}/{}", outcome.false_alarms, outcome.comparisons),
            outcome
                .detectable_pct(limit)
                .map_or_else(|| "—".to_owned(), |p| format!(">= {p:.1}%")),
        ]);
    }
    table.to_terminal()
}

/// Export formats of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ExportFormat {
    /// The `show --format json` document, with raw samples.
    Json,
    /// One CSV row per result.
    Csv,
    /// Bencher Metric Format.
    Bmf,
}

/// `export` output.
#[must_use]
pub fn export(run: &StoredRun, results: &[Measurement], format: ExportFormat) -> String {
    match format {
        ExportFormat::Json => {
            let results: Vec<Value> = results
                .iter()
                .map(|m| {
                    let mut v = measurement_json(m);
                    if let (Some(obj), Some(s)) = (v.as_object_mut(), &m.samples) {
                        obj.insert(
                            "raw_samples".to_owned(),
                            json!({"mode": s.mode(), "iters": s.iters(), "times_ns": s.times_ns()}),
                        );
                    }
                    v
                })
                .collect();
            to_json(&json!({"run": run_json(run), "results": results}))
        }
        ExportFormat::Csv => {
            let mut out = String::from(
                "run_id,benchmark,metric,unit,direction,estimate,lower,upper,samples,throughput_kind,throughput_per_iteration\n",
            );
            for m in results {
                let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{}\n",
                    run.id,
                    csv_field(&m.benchmark.full),
                    csv_field(&m.metric),
                    csv_field(&m.unit),
                    match m.direction {
                        Direction::LowerIsBetter => "lower_is_better",
                        Direction::HigherIsBetter => "higher_is_better",
                    },
                    m.estimate.point,
                    opt(m.estimate.lower),
                    opt(m.estimate.upper),
                    m.samples.as_ref().map_or(0, crate::model::Samples::len),
                    m.throughput
                        .map(|t| serde_json::to_value(t.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default())
                        .unwrap_or_default(),
                    m.throughput
                        .map(|t| t.per_iteration.to_string())
                        .unwrap_or_default(),
                ));
            }
            out
        }
        ExportFormat::Bmf => {
            let mut doc = serde_json::Map::new();
            for m in results {
                let measure = if m.metric == crate::model::metric::TIME {
                    "latency"
                } else {
                    &m.metric
                };
                let mut value = json!({"value": m.estimate.point});
                if let (Some(obj), Some(lower), Some(upper)) =
                    (value.as_object_mut(), m.estimate.lower, m.estimate.upper)
                {
                    obj.insert("lower_value".to_owned(), json!(lower));
                    obj.insert("upper_value".to_owned(), json!(upper));
                }
                let entry = doc
                    .entry(m.benchmark.full.clone())
                    .or_insert_with(|| json!({}));
                if let Some(obj) = entry.as_object_mut() {
                    obj.insert(measure.to_owned(), value);
                }
            }
            to_json(&Value::Object(doc))
        }
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_join_quotes_only_when_needed() {
        let argv: Vec<String> = ["bench-run", "--suite", "a b", "it's"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(shell_join(&argv), r"bench-run --suite 'a b' 'it'\''s'");
    }

    #[test]
    fn show_says_the_samples_column_is_a_count() {
        use crate::model::{BenchmarkId, Estimate, Samples, SamplingMode, metric};
        let measurement = |samples: Option<Samples>| Measurement {
            benchmark: BenchmarkId::named("decode"),
            metric: metric::TIME.to_owned(),
            unit: "ns".to_owned(),
            direction: Direction::LowerIsBetter,
            estimate: Estimate::point(10.0),
            statistics: std::collections::BTreeMap::new(),
            throughput: None,
            samples,
        };
        let samples = Samples::new(SamplingMode::Flat, vec![1.0; 3], vec![10.0; 3]).ok();
        assert!(samples.is_some());
        let note = samples_note(7, &[measurement(samples), measurement(None)]);
        assert_eq!(
            note.as_deref(),
            Some(
                "samples: how many raw samples each result stored (3 in all); \
                 `bench-run export 7 --format json` prints them."
            )
        );
        assert_eq!(samples_note(7, &[measurement(None)]), None);
    }

    #[test]
    fn the_features_line_says_what_the_json_records() {
        let build = |features: &[&str], flags: &[&str]| model::BuildConfig {
            features: features.iter().map(|f| (*f).to_owned()).collect(),
            feature_flags: flags.iter().map(|f| (*f).to_owned()).collect(),
            ..model::BuildConfig::default()
        };
        assert_eq!(
            features_text(&build(&[], &[])),
            "features: none; cargo flags: none (default features on)"
        );
        assert_eq!(
            features_text(&build(&["benchmarks"], &["--features", "benchmarks"])),
            "features: benchmarks; cargo flags: --features benchmarks (default features on)"
        );
        assert_eq!(
            features_text(&build(
                &["a", "b"],
                &["--features", "a,b", "--no-default-features"]
            )),
            "features: a,b; cargo flags: --features a,b --no-default-features \
             (default features off)"
        );
        assert_eq!(
            features_text(&build(&[], &["--all-features"])),
            "features: none; cargo flags: --all-features (all features on)"
        );
    }

    #[test]
    fn csv_fields_are_quoted() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}

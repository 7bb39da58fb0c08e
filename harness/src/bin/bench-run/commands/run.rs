//! `bench-run --suite` and `bench-run calibrate`: build, run and record a criterion suite, or a
//! gungraun (instruction-count) suite through [`harness::gungraun`].

use super::push::push_run;
use super::{compare_config, invocation, open_ledger, print_comparison, progress_bar, warn_busy};
use crate::Outcome;
use crate::cli::RunArgs;
use anyhow::{Result, anyhow, bail};
use harness::ledger::{Ledger, RunId};
use harness::model::RunSource;
use harness::record::{self, Progress, SuiteRequest};
use harness::report;
use harness::suite::Workspace;
use harness::{baseline, compare, quick};
use std::path::{Path, PathBuf};

/// Runs a suite once and records it ([`harness::record::record_suite`]), drawing its progress on
/// the terminal; `prebuilt` is the executable to run, set after the first build.
pub(super) async fn measure_and_record(
    args: &RunArgs,
    ledger: &Ledger,
    cwd: &Path,
    source: RunSource,
    prebuilt: &mut Option<PathBuf>,
) -> Result<(RunId, Workspace)> {
    let suite = args
        .suite
        .clone()
        .ok_or_else(|| anyhow!("--suite is required"))?;
    let request = SuiteRequest {
        suite,
        package: args.build.package.clone(),
        start_dir: args.build.start_dir(cwd),
        cwd: cwd.to_owned(),
        build: args.build.options(),
        target_dir: None,
        quick: args.quick,
        criterion_args: args.criterion_args.clone(),
        record_env: args.build.record_env.clone(),
        command: invocation(),
        source,
    };
    let mut progress = TerminalProgress::default();
    let recorded =
        record::record_suite(ledger, &request, prebuilt.as_deref(), &mut progress).await?;
    *prebuilt = Some(recorded.executable.clone());
    eprintln!(
        "bench-run: benchmarks ran for {:.1} s",
        recorded.elapsed.as_secs_f64()
    );
    if !recorded.busy.is_empty() {
        eprintln!(
            "warning: the machine was busy during run #{}: {}; `bench-run gate` refuses it \
             unless --allow-busy",
            recorded.id,
            harness::conditions::describe(&recorded.busy)
        );
    }
    Ok((recorded.id, recorded.workspace))
}

/// A recording's progress on stderr: a bar on a terminal, `[n/m] id` lines otherwise.
#[derive(Default)]
struct TerminalProgress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress for TerminalProgress {
    fn note(&mut self, text: &str) {
        eprintln!("bench-run: {text}");
    }

    fn warning(&mut self, text: &str) {
        eprintln!("warning: {text}");
    }

    fn started(&mut self, total: usize) {
        self.bar = Some(progress_bar(total));
    }

    fn benchmark(&mut self, n: usize, total: usize, id: &str) {
        match &self.bar {
            Some(bar) if !bar.is_hidden() => {
                bar.set_position(u64::try_from(n.saturating_sub(1)).unwrap_or(0));
                bar.set_message(id.to_owned());
            }
            _ => eprintln!("[{n}/{total}] {id}"),
        }
    }

    fn finished(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

pub(super) async fn run_suite(
    args: &RunArgs,
    db: Option<&str>,
    cwd: &Path,
    source: RunSource,
) -> Result<Outcome> {
    // Open the ledger first: an unwritable path or a newer schema should fail before minutes
    // of benchmarking, not after.
    let start_dir = args.build.start_dir(cwd);
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let (id, _) = measure_and_record(args, &ledger, cwd, source, &mut None).await?;
    push_run(&ledger, id, args.push.as_deref()).await;
    let head = ledger.require_run(id).await?;
    let base =
        baseline::resolve_baseline(&ledger, &head, args.base.as_deref(), Some(&start_dir)).await?;
    match base {
        Some(base) => {
            for mismatch in compare::check_comparable(&base.provenance, &head.provenance) {
                eprintln!("warning: baseline differs: {mismatch}");
            }
            warn_busy(&base, &head);
            if let Some(warning) = quick::mixing_warning(&base, &head) {
                eprintln!("warning: {warning}");
            }
            let comparison = harness::judge::compare_runs(&ledger, &base, &head, &config).await?;
            print_comparison(&comparison, &base, &head, args.format, args.verdict.explain);
        }
        None => {
            let results = ledger.measurements(id).await?;
            eprintln!(
                "bench-run: no baseline yet (no earlier full run of {} on this machine; \
                 --quick runs and confirmation re-runs are never a default baseline)",
                head.provenance.suite
            );
            print!("{}", report::run_show(&head, &results, args.format));
        }
    }
    Ok(Outcome::Ok)
}

/// Compares each calibration run with the one before it, with the gate's rule and the history
/// the gate would have had (the same-binary rule left out: the question is what the rule does
/// when code changed and its speed did not).
async fn aa_trials(
    ledger: &Ledger,
    ids: &[RunId],
    config: &compare::CompareConfig,
) -> Result<std::collections::BTreeMap<compare::MetricKey, harness::calibration::AaOutcome>> {
    let mut comparisons = Vec::new();
    for pair in ids.windows(2) {
        let [before, after] = *pair else { continue };
        let head = ledger.require_run(after).await?;
        comparisons.push(harness::judge::compare_on_history(ledger, before, &head, config).await?);
    }
    Ok(harness::calibration::aa_outcomes(&comparisons))
}

pub(super) async fn calibrate(
    args: &RunArgs,
    runs: u32,
    db: Option<&str>,
    cwd: &Path,
) -> Result<Outcome> {
    if runs < 2 {
        bail!("--runs must be at least 2 to measure run-to-run noise");
    }
    let start_dir = args.build.start_dir(cwd);
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let mut exe = None;
    let mut ids = Vec::new();
    for i in 1..=runs {
        eprintln!("bench-run: calibration run {i} of {runs}");
        let (id, _) =
            measure_and_record(args, &ledger, cwd, RunSource::Calibration, &mut exe).await?;
        push_run(&ledger, id, args.push.as_deref()).await;
        ids.push(id);
    }
    let head = ledger
        .require_run(*ids.last().ok_or_else(|| anyhow!("no calibration run"))?)
        .await?;
    let history = if head.provenance.quick {
        // Quick runs are never history: show the noise of these runs alone, and say so.
        eprintln!(
            "warning: --quick runs are not history: compare and gate will not learn from them; \
             the table shows the noise of these {runs} runs alone"
        );
        let mut history = compare::History::new();
        for &id in &ids {
            for m in ledger.measurements(id).await? {
                history
                    .entry(compare::MetricKey::of(&m))
                    .or_default()
                    .push(compare::HistoryPoint::new(id, m.estimate.point));
            }
        }
        history
    } else {
        // The noise floor of the next run: history up to and including the last calibration
        // run.
        ledger
            .history(
                &head.provenance.suite,
                head.machine_id,
                head.id + 1,
                config.history_runs(),
            )
            .await?
    };
    let aa = aa_trials(&ledger, &ids, &config).await?;
    let mut table = report::table::Table::new(&[
        ("benchmark", report::table::Align::Left),
        ("metric", report::table::Align::Left),
        ("runs", report::table::Align::Right),
        ("noise floor", report::table::Align::Right),
        ("source", report::table::Align::Left),
        ("segments", report::table::Align::Right),
        ("dropped", report::table::Align::Right),
        ("flags", report::table::Align::Left),
        ("A/A alarms", report::table::Align::Right),
        ("detects", report::table::Align::Right),
    ]);
    for (key, points) in &history {
        let noise = compare::noise_analysis(points, &config);
        let flags: Vec<&str> = noise.flags.iter().map(|f| f.name()).collect();
        let outcome = aa.get(key).cloned().unwrap_or_default();
        let limit = config.threshold_for(&key.benchmark).0.max(noise.floor.pct);
        table.push(vec![
            key.benchmark.clone(),
            key.metric.clone(),
            points.len().to_string(),
            format!("{:.2}%", noise.floor.pct),
            report::noise_source(&noise.floor.source),
            noise.explanation.segments.len().to_string(),
            noise.explanation.dropped.len().to_string(),
            flags.join(", "),
            format!("{}/{}", outcome.false_alarms, outcome.comparisons),
            outcome
                .detectable_pct(limit)
                .map_or_else(|| "—".to_owned(), |p| format!(">= {p:.1}%")),
        ]);
    }
    println!(
        "Run-to-run noise of suite {} on this machine:\n",
        head.provenance.suite
    );
    print!("{}", table.to_terminal());
    println!(
        "\nA/A alarms: comparisons of consecutive calibration runs (unchanged code) that the gate's \
         rule, with the history it would have had, called a regression or an improvement. \
         detects: the smallest slowdown a gate against one of these runs would flag, the limit \
         max(threshold, noise floor) plus the median half-width of the A/A change intervals. \
         For verdicts that hold on a busy machine, use bench-run ab."
    );
    Ok(Outcome::Ok)
}

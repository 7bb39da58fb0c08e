//! `bench-run --suite` and `bench-run calibrate`: build, run and record a criterion suite, or a
//! gungraun (instruction-count) suite through [`harness::gungraun`].

use super::push::push_run;
use super::{
    compare_config, git_info, open_ledger, print_comparison, progress_bar, record, resolve_run,
    warn_busy,
};
use crate::Outcome;
use crate::cli::RunArgs;
use anyhow::{Context, Result, anyhow, bail};
use harness::compare;
use harness::ledger::{Ledger, RunId};
use harness::model::{BuildConfig, Measurement, RunProvenance, RunSource};
use harness::report;
use harness::suite::{self, ProgressTracker, Workspace};
use harness::{adapter, provenance, quick};
use std::path::{Path, PathBuf};

/// Runs a suite once and records it; returns the new run id.
pub(super) async fn measure_and_record(
    args: &RunArgs,
    ledger: &Ledger,
    cwd: &Path,
    source: RunSource,
    prebuilt: &mut Option<PathBuf>,
) -> Result<(RunId, Workspace)> {
    let name = args
        .suite
        .as_deref()
        .ok_or_else(|| anyhow!("--suite is required"))?;
    let start_dir = args.build.start_dir(cwd);
    let workspace = Workspace::discover(&start_dir)?;
    let target = workspace.find(name, args.build.package.as_deref())?.clone();
    let gungraun = harness::gungraun::detect(&target)?;
    let build = args.build.options();

    let exe = match prebuilt {
        Some(exe) => exe.clone(),
        None => {
            eprintln!(
                "bench-run: building {} (package {})",
                target.name, target.package
            );
            let exe = suite::build(&target, &build, &workspace.root)?;
            *prebuilt = Some(exe.clone());
            exe
        }
    };
    if gungraun {
        let tools = harness::gungraun::check_tools(&target.name, &workspace.root)?;
        eprintln!(
            "bench-run: {} is a gungraun suite: counting instructions under valgrind ({} {})",
            target.name, tools.runner, tools.runner_version
        );
        if args.quick {
            eprintln!(
                "bench-run: --quick has no effect on a gungraun suite (one run per benchmark)"
            );
        }
    }

    // Hashed before it runs: two runs of one executable measured the same code.
    let bench_exe = provenance::hash_executable(&exe)
        .inspect_err(|e| {
            eprintln!(
                "warning: bench executable {} not hashed: {e}",
                exe.display()
            )
        })
        .ok();

    // Criterion's settings mean nothing to gungraun, which rejects unknown arguments.
    let mut criterion_args = if args.quick && !gungraun {
        suite::quick_args(&args.criterion_args)
    } else {
        Vec::new()
    };
    criterion_args.extend(args.criterion_args.iter().cloned());
    // Criterion's plots would land in the scratch directory and be thrown away: skip them.
    if !gungraun && !criterion_args.iter().any(|a| a == "--noplot" || a == "-n") {
        criterion_args.push("--noplot".to_owned());
    }

    let scratch_parent = workspace.target_dir.join("bench-run");
    std::fs::create_dir_all(&scratch_parent)
        .with_context(|| format!("cannot create {}", scratch_parent.display()))?;
    let criterion_home = tempfile::Builder::new()
        .prefix("criterion-")
        .tempdir_in(&scratch_parent)
        .context("cannot create a scratch directory for criterion's output")?;

    let listed = suite::list_benchmarks(&exe, &target, &criterion_args, criterion_home.path())?;
    if listed.is_empty() {
        bail!(
            "suite {} selects no benchmarks{}",
            target.name,
            if args.criterion_args.is_empty() {
                String::new()
            } else {
                format!(" with arguments {:?}", args.criterion_args)
            }
        );
    }
    let mut tracker = ProgressTracker::new(listed.clone());
    let progress = progress_bar(tracker.total());
    let on_progress = |n: usize, total: usize, id: &str| {
        if progress.is_hidden() {
            eprintln!("[{n}/{total}] {id}");
        } else {
            progress.set_position(u64::try_from(n.saturating_sub(1)).unwrap_or(0));
            progress.set_message(id.to_owned());
        }
    };
    let output = if gungraun {
        harness::gungraun::run_bench(
            &exe,
            &target,
            &criterion_args,
            criterion_home.path(),
            &workspace.root,
            &listed,
            on_progress,
        )
    } else {
        suite::run_bench(
            &exe,
            &target,
            &criterion_args,
            criterion_home.path(),
            &mut tracker,
            on_progress,
        )
    };
    progress.finish_and_clear();
    let output = output?;

    let measurements = if gungraun {
        adapter::gungraun::read_dir(criterion_home.path())
            .with_context(|| format!("cannot read gungraun's summaries of suite {}", target.name))?
    } else {
        adapter::criterion::read_dir(criterion_home.path()).with_context(|| {
        format!("cannot read criterion's output of suite {} (is it a criterion bench with `harness = false`?)", target.name)
    })?
    };

    let quick = args.quick && !gungraun && quick_took_effect(&criterion_args, &measurements);

    let mut command: Vec<String> = std::env::args().collect();
    if let Some(first) = command.first_mut() {
        *first = "bench-run".to_owned();
    }
    let provenance = RunProvenance {
        suite: target.name.clone(),
        package: Some(target.package.clone()),
        command,
        cargo_command: Some(suite::cargo_bench_command(&target, &build, &criterion_args)),
        cwd: cwd.display().to_string(),
        machine: provenance::machine(),
        toolchain: match provenance::toolchain(&workspace.root) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("warning: toolchain not recorded: {e}");
                None
            }
        },
        build: BuildConfig {
            profile: build.profile_name(),
            features: sorted(&args.build.features),
            feature_flags: feature_flags(args.build.all_features, args.build.no_default_features),
            rustflags: std::env::var("RUSTFLAGS").ok().filter(|f| !f.is_empty()),
        },
        env: provenance::environment(&args.build.record_env),
        git: git_info(&workspace.root),
        cpu_governor: provenance::cpu_governor(),
        turbo: provenance::turbo(),
        quick,
        duration_ms: i64::try_from(output.elapsed.as_millis()).ok(),
        bench_exe,
        conditions: output.conditions,
    };
    let busy = provenance
        .conditions
        .as_ref()
        .map(harness::conditions::assess)
        .unwrap_or_default();
    let id = record(ledger, source, provenance, measurements).await?;
    eprintln!(
        "bench-run: benchmarks ran for {:.1} s",
        output.elapsed.as_secs_f64()
    );
    if !busy.is_empty() {
        eprintln!(
            "warning: the machine was busy during run #{id}: {}; `bench-run gate` refuses it \
             unless --allow-busy",
            harness::conditions::describe(&busy)
        );
    }
    Ok((id, workspace))
}

/// Whether `--quick` took effect (see `harness::quick`); says so when it did not, or only in
/// part.
fn quick_took_effect(criterion_args: &[String], measurements: &[Measurement]) -> bool {
    let Some(requested) = quick::RequestedSettings::from_criterion_args(criterion_args) else {
        return true;
    };
    let check = quick::check(measurements, requested);
    if let Some(message) = check.message() {
        eprintln!("{message}");
    }
    check.effect().is_quick()
}

pub(super) fn sorted(values: &[String]) -> Vec<String> {
    let mut v: Vec<String> = values
        .iter()
        .flat_map(|f| f.split([',', ' ']))
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

pub(super) fn feature_flags(all: bool, no_default: bool) -> Vec<String> {
    let mut flags = Vec::new();
    if all {
        flags.push("--all-features".to_owned());
    }
    if no_default {
        flags.push("--no-default-features".to_owned());
    }
    flags
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
    let base = match &args.base {
        Some(reference) => {
            Some(resolve_run(&ledger, reference, Some(&head.provenance.suite), &start_dir).await?)
        }
        None => match ledger.previous_run(id).await? {
            Some(prev) => Some(ledger.require_run(prev).await?),
            None => None,
        },
    };
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

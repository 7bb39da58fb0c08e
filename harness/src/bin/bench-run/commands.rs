//! The subcommands: argument handling and I/O around the library.

use crate::Outcome;
use crate::cli::{Cli, Command, CorrectionArg, ImportArgs, ImportSource, RunArgs, VerdictArgs};
use anyhow::{Context, Result, anyhow, bail};
use harness::compare::{self, CompareConfig, Comparison, Correction};
use harness::ledger::{Ledger, RunFilter, RunId, StoredRun};
use harness::model::{BuildConfig, Direction, NewRun, RunProvenance, RunSource, metric};
use harness::ratio::{self, Anchors, PairRule, RatioConfig, RunSpeeds};
use harness::refs::{self, RunRef};
use harness::report::{self, OutputFormat, log};
use harness::suite::{self, BuildOptions, ProgressTracker, Workspace};
use harness::worker_process::WorkerProcess;
use harness::{adapter, provenance};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

pub async fn dispatch(cli: Cli) -> Result<Outcome> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let db = cli.db.clone();
    match cli.command {
        None => run_suite(&cli.run, db.as_deref(), &cwd, RunSource::BenchRun).await,
        Some(Command::List {
            suite,
            branch,
            limit,
            format,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let runs = ledger
                .runs(&RunFilter {
                    suite,
                    branch,
                    limit: Some(limit),
                    ..RunFilter::default()
                })
                .await?;
            print!("{}", report::runs_list(&runs, format));
            Ok(Outcome::Ok)
        }
        Some(Command::Show { run, format }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            let results = ledger.measurements(run.id).await?;
            print!("{}", report::run_show(&run, &results, format));
            Ok(Outcome::Ok)
        }
        Some(Command::Compare {
            base,
            head,
            format,
            verdict,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let head = resolve_run(&ledger, &head, None, &cwd).await?;
            let base = resolve_run(&ledger, &base, Some(&head.provenance.suite), &cwd).await?;
            let config = compare_config(&verdict)?;
            for mismatch in compare::check_comparable(&base.provenance, &head.provenance) {
                eprintln!("warning: runs differ: {mismatch}");
            }
            let comparison = ledger.compare_runs(&base, &head, &config).await?;
            print_comparison(&comparison, &base, &head, format, verdict.explain);
            Ok(Outcome::Ok)
        }
        Some(Command::Gate {
            base,
            head,
            suite,
            allow_mismatch,
            format,
            verdict,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            gate(
                &ledger,
                &cwd,
                &base,
                &head,
                suite.as_deref(),
                allow_mismatch,
                format,
                &verdict,
            )
            .await
        }
        Some(Command::Ratio {
            runs,
            anchor,
            pair,
            only,
            at_least,
            format,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let request = RatioRequest {
                runs,
                anchors: anchor,
                pairs: pair,
                only,
                at_least,
                format,
            };
            ratio(&ledger, &cwd, request).await
        }
        Some(Command::Interleave {
            worker,
            worker_as,
            pair,
            only,
            rounds,
            warmup_rounds,
            seed,
            timeout,
            at_least,
            format,
            record,
        }) => {
            let request = InterleaveRequest {
                workers: worker,
                labeled_workers: worker_as,
                pairs: pair,
                only,
                rounds,
                warmup: warmup_rounds,
                seed,
                timeout: std::time::Duration::from_secs(timeout),
                at_least,
                format,
                record,
            };
            interleave(request, db.as_deref(), &cwd).await
        }
        Some(Command::Calibrate { runs, run }) => calibrate(&run, runs, db.as_deref(), &cwd).await,
        Some(Command::Tag { run, name }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            ledger.tag(run.id, &name).await?;
            eprintln!("tagged run #{} as {name:?}", run.id);
            Ok(Outcome::Ok)
        }
        Some(Command::Annotate { run, text }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            ledger.annotate(run.id, &text).await?;
            eprintln!("annotated run #{}", run.id);
            Ok(Outcome::Ok)
        }
        Some(Command::Log {
            run,
            file,
            note,
            base,
            dry_run,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            log_run(&ledger, &cwd, &run, file, note, base.as_deref(), dry_run).await
        }
        Some(Command::Import { source }) => import(source, db.as_deref(), &cwd).await,
        Some(Command::Export { run, format }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            let results = ledger.measurements(run.id).await?;
            print!("{}", report::export(&run, &results, format));
            Ok(Outcome::Ok)
        }
    }
}

use harness::ledger::workspace_root;

fn ledger_path(db: Option<&Path>, cwd: &Path) -> PathBuf {
    harness::ledger::default_path(db, cwd)
}

async fn open_ledger(db: Option<&Path>, cwd: &Path) -> Result<Ledger> {
    let path = ledger_path(db, cwd);
    Ledger::open(&path).await.map_err(|e| anyhow!(e))
}

async fn resolve_run(
    ledger: &Ledger,
    text: &str,
    suite: Option<&str>,
    cwd: &Path,
) -> Result<StoredRun> {
    let reference = RunRef::parse(text);
    let id = refs::resolve(ledger, &reference, suite, Some(cwd)).await?;
    Ok(ledger.require_run(id).await?)
}

/// The arguments of `ratio`.
struct RatioRequest {
    runs: Vec<String>,
    anchors: Vec<String>,
    pairs: Vec<String>,
    only: Vec<String>,
    at_least: Option<f64>,
    format: OutputFormat,
}

async fn ratio(ledger: &Ledger, cwd: &Path, request: RatioRequest) -> Result<Outcome> {
    let rules = request
        .pairs
        .iter()
        .map(|p| PairRule::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    if request.anchors.is_empty() && rules.is_empty() {
        bail!(
            "give --anchor RUN (the anchor's results) or --pair OURS=ANCHOR (anchors in the same runs)"
        );
    }
    if let Some(bar) = request.at_least
        && !(bar.is_finite() && bar > 0.0)
    {
        bail!("--at-least must be a positive number, not {bar}");
    }
    let load = async |refs: &[String]| -> Result<(Vec<i64>, Vec<RunSpeeds>)> {
        let mut ids = Vec::new();
        let mut speeds = Vec::new();
        for text in refs {
            let run = resolve_run(ledger, text, None, cwd).await?;
            let measurements = ledger.measurements(run.id).await?;
            if measurements.iter().any(|m| m.metric == metric::SPEEDUP) {
                eprintln!(
                    "note: run #{} is interleaved; its paired speedups (the median of per-round \
                     ratios) are recorded as `<ours> vs <anchor>` rows (bench-run show {}); the \
                     ratios below compare whole-run medians",
                    run.id, run.id
                );
            }
            speeds.push(ratio::run_speeds(&measurements));
            ids.push(run.id);
        }
        Ok((ids, speeds))
    };
    let (ours_ids, ours) = load(&request.runs).await?;
    let (anchor_ids, anchor_runs) = load(&request.anchors).await?;
    let anchors = if request.anchors.is_empty() {
        Anchors::SameRuns
    } else {
        Anchors::Runs(&anchor_runs)
    };
    let config = RatioConfig {
        rules,
        only: request.only,
    };
    let table = ratio::ratios(&ours, anchors, &config);
    if table.rows.is_empty() {
        for (benchmark, why) in &table.unpaired {
            eprintln!("not paired: {benchmark}: {why}");
        }
        bail!("no benchmark of runs {ours_ids:?} could be paired with an anchor");
    }
    let sources = report::RatioSources {
        ours: ours_ids,
        anchors: anchor_ids,
    };
    print!(
        "{}",
        report::ratio_report(&table, &sources, request.at_least, request.format)
    );
    let below = request.at_least.is_some_and(|bar| {
        table
            .rows
            .iter()
            .any(|r| ratio::BarVerdict::of(r, bar) == ratio::BarVerdict::Below)
    });
    Ok(if below {
        Outcome::BelowBar
    } else {
        Outcome::Ok
    })
}

/// What `bench-run interleave` was asked.
struct InterleaveRequest {
    workers: Vec<String>,
    /// `LABEL=COMMAND`.
    labeled_workers: Vec<String>,
    pairs: Vec<String>,
    only: Vec<String>,
    rounds: usize,
    warmup: usize,
    seed: Option<u64>,
    timeout: std::time::Duration,
    at_least: Option<f64>,
    format: OutputFormat,
    record: ImportArgs,
}

/// `LABEL=COMMAND` of `--worker-as`: a label that can stand in front of a benchmark name.
fn parse_labeled_worker(text: &str) -> Result<(&str, &str)> {
    let (label, command) = text
        .split_once('=')
        .ok_or_else(|| anyhow!("--worker-as wants LABEL=COMMAND, not `{text}`"))?;
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if label.is_empty() || !label.chars().all(fits) {
        bail!("--worker-as label `{label}`: use letters, digits, `_`, `-` or `.`");
    }
    if command.trim().is_empty() {
        bail!("--worker-as `{label}` has no command");
    }
    Ok((label, command))
}

async fn interleave(request: InterleaveRequest, db: Option<&Path>, cwd: &Path) -> Result<Outcome> {
    let rules = request
        .pairs
        .iter()
        .map(|p| PairRule::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    if request.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    if let Some(bar) = request.at_least
        && !(bar.is_finite() && bar > 0.0)
    {
        bail!("--at-least must be a positive number, not {bar}");
    }
    // Open the ledger first: a run that cannot be recorded should not be measured.
    let ledger = open_ledger(db, cwd).await?;
    let seed = request.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let mut command = invocation();
    if request.seed.is_none() {
        command.extend(["--seed".to_owned(), seed.to_string()]);
    }
    // Every worker sets up at once (setup is not timed), then each greets.
    let mut workers = Vec::new();
    for text in &request.workers {
        workers.push(WorkerProcess::shell(text, cwd)?);
    }
    for text in &request.labeled_workers {
        let (label, command) = parse_labeled_worker(text)?;
        workers.push(WorkerProcess::shell(command, cwd)?.labeled(label));
    }
    eprintln!("bench-run: waiting for {} workers to set up", workers.len());
    let announced = workers
        .iter_mut()
        .map(|w| w.hello(request.timeout))
        .collect::<Result<Vec<_>, _>>()?;
    let plan = harness::interleave::plan(&announced, &rules, &request.only)?;
    let steps = harness::interleave::schedule(&plan, request.warmup, request.rounds, seed);
    let pairs = plan
        .units
        .iter()
        .filter(|u| matches!(u, harness::interleave::Unit::Group { .. }))
        .count();
    eprintln!(
        "bench-run: {} trials: {} units ({pairs} with anchors) x {} rounds (+{} warm-up), seed {seed}",
        steps.len(),
        plan.units.len(),
        request.rounds,
        request.warmup
    );
    let started = std::time::Instant::now();
    let bar = progress_bar(steps.len());
    // Without a terminal (CI logs, redirected output) the bar is hidden: say when each round ends.
    let log_rounds = !std::io::stderr().is_terminal();
    let all_rounds = request.warmup + request.rounds;
    let per_round = steps.len() / all_rounds.max(1);
    let mut done = 0usize;
    let observations = crate::workers::run_trials(
        &mut workers,
        &plan,
        &steps,
        request.timeout,
        |id| {
            bar.inc(1);
            bar.set_message(id.to_owned());
            done += 1;
            if log_rounds && per_round > 0 && done.is_multiple_of(per_round) {
                let round = done / per_round;
                let elapsed = started.elapsed().as_secs_f64();
                let left = elapsed / round as f64 * (all_rounds - round) as f64;
                eprintln!(
                    "bench-run: round {round}/{all_rounds} done ({elapsed:.0} s, about {left:.0} s left)"
                );
            }
        },
    )?;
    bar.finish_and_clear();
    let elapsed_ms = i64::try_from(started.elapsed().as_millis()).ok();
    let ratios = harness::interleave::paired_ratios(&plan, &observations);
    let mut measurements = harness::interleave::measurements(&plan, &observations);
    measurements.extend(harness::interleave::speedup_measurements(&ratios));
    let provenance = external_provenance(cwd, &request.record, command, elapsed_ms)?;
    let id = record(&ledger, RunSource::Interleaved, provenance, measurements).await?;
    push_run(&ledger, id, request.record.push.as_deref()).await;
    if ratios.is_empty() {
        eprintln!("bench-run: no pairs (give --pair OURS=ANCHOR to compare two sides)");
    } else {
        print!(
            "{}",
            report::interleave_report(
                id,
                request.rounds,
                &ratios,
                request.at_least,
                request.format
            )
        );
    }
    let below = request.at_least.is_some_and(|b| {
        ratios
            .iter()
            .any(|r| r.verdict(b) == ratio::BarVerdict::Below)
    });
    Ok(if below {
        Outcome::BelowBar
    } else {
        Outcome::Ok
    })
}

fn compare_config(args: &VerdictArgs) -> Result<CompareConfig> {
    let mut config = CompareConfig::default();
    if let Some(t) = args.threshold {
        if !(t.is_finite() && t >= 0.0) {
            bail!("--threshold must be a non-negative percentage, got {t}");
        }
        config.threshold_pct = t;
    }
    for spec in &args.threshold_for {
        let (pattern, pct) = spec
            .rsplit_once('=')
            .ok_or_else(|| anyhow!("--threshold-for expects PATTERN=PCT, got {spec:?}"))?;
        let pct: f64 = pct
            .trim()
            .trim_end_matches('%')
            .parse()
            .with_context(|| format!("--threshold-for {spec:?}: not a number"))?;
        config
            .per_benchmark_threshold
            .push((pattern.to_owned(), pct));
    }
    config.ignore.clone_from(&args.ignore);
    if let Some(alpha) = args.alpha {
        if !(alpha > 0.0 && alpha < 1.0) {
            bail!("--alpha must be between 0 and 1, got {alpha}");
        }
        config.alpha = alpha;
    }
    if let Some(c) = args.correction {
        config.correction = match c {
            CorrectionArg::Holm => Correction::Holm,
            CorrectionArg::Bh => Correction::BenjaminiHochberg,
            CorrectionArg::None => Correction::None,
        };
    }
    config.validate()?;
    Ok(config)
}

fn print_comparison(
    c: &Comparison,
    base: &StoredRun,
    head: &StoredRun,
    format: OutputFormat,
    explain: bool,
) {
    match format {
        OutputFormat::Json => print!("{}", report::comparison_json(c, base, head)),
        OutputFormat::Markdown => print!("{}", report::comparison_markdown(c, base, head)),
        OutputFormat::Table => print!("{}", report::comparison_terminal(c, base, head)),
    }
    if explain {
        // Explanations go to stderr with JSON output so stdout stays machine-readable.
        let text = report::explain(c);
        if format == OutputFormat::Json {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the gate's command-line flags"
)]
async fn gate(
    ledger: &Ledger,
    cwd: &Path,
    base: &str,
    head: &str,
    suite: Option<&str>,
    allow_mismatch: bool,
    format: OutputFormat,
    verdict: &VerdictArgs,
) -> Result<Outcome> {
    let config = compare_config(verdict)?;
    let head = resolve_run(ledger, head, suite, cwd).await?;
    let base = resolve_run(
        ledger,
        base,
        Some(suite.unwrap_or(&head.provenance.suite)),
        cwd,
    )
    .await?;
    if base.provenance.suite != head.provenance.suite {
        eprintln!(
            "gate: refusing to compare suite {:?} (run #{}) with suite {:?} (run #{})",
            base.provenance.suite, base.id, head.provenance.suite, head.id
        );
        return Ok(Outcome::Incomparable);
    }
    let mismatches = compare::check_comparable(&base.provenance, &head.provenance);
    if !mismatches.is_empty() {
        let verb = if allow_mismatch {
            "warning"
        } else {
            "gate: refusing to compare"
        };
        eprintln!(
            "{verb}: run #{} and run #{} are not comparable:",
            base.id, head.id
        );
        for m in &mismatches {
            eprintln!("  - {m}");
        }
        if !allow_mismatch {
            eprintln!("(pass --allow-mismatch to compare anyway)");
            return Ok(Outcome::Incomparable);
        }
    }
    if head.provenance.quick || base.provenance.quick {
        eprintln!(
            "warning: a --quick run takes part; its short measurement is meant for smoke tests"
        );
    }
    let comparison = ledger.compare_runs(&base, &head, &config).await?;
    print_comparison(&comparison, &base, &head, format, verdict.explain);
    let verdict_line = format!("run #{} vs base run #{}", head.id, base.id);
    match compare::gate(&comparison, &mismatches, allow_mismatch) {
        compare::GateOutcome::Pass => {
            eprintln!("gate: pass ({verdict_line}): no regression");
            Ok(Outcome::Ok)
        }
        compare::GateOutcome::Regression => {
            let names: Vec<&str> = comparison
                .regressions()
                .map(|r| r.benchmark.as_str())
                .collect();
            eprintln!(
                "gate: FAIL ({verdict_line}): {} regression(s): {}",
                names.len(),
                names.join(", ")
            );
            Ok(Outcome::Regression)
        }
        compare::GateOutcome::Unusable => {
            let unusable: Vec<&str> = comparison
                .unusable()
                .map(|r| r.benchmark.as_str())
                .collect();
            if unusable.is_empty() {
                eprintln!(
                    "gate: no benchmark of {verdict_line} can be compared (nothing in common)"
                );
            } else {
                eprintln!(
                    "gate: unusable input ({verdict_line}): {}",
                    unusable.join(", ")
                );
            }
            Ok(Outcome::Incomparable)
        }
    }
}

/// Runs a suite once and records it; returns the new run id.
async fn measure_and_record(
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
    let start_dir = args
        .workspace
        .as_deref()
        .map_or_else(|| cwd.to_owned(), |d| cwd.join(d));
    let workspace = Workspace::discover(&start_dir)?;
    let target = workspace.find(name, args.package.as_deref())?.clone();
    let build = BuildOptions {
        features: args.features.clone(),
        all_features: args.all_features,
        no_default_features: args.no_default_features,
        profile: args.profile.clone(),
    };

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

    let mut criterion_args = if args.quick {
        suite::quick_args(&args.criterion_args)
    } else {
        Vec::new()
    };
    criterion_args.extend(args.criterion_args.iter().cloned());
    // Criterion's plots would land in the scratch directory and be thrown away: skip them.
    if !criterion_args.iter().any(|a| a == "--noplot" || a == "-n") {
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
    let mut tracker = ProgressTracker::new(listed);
    let progress = progress_bar(tracker.total());
    let output = suite::run_bench(
        &exe,
        &target,
        &criterion_args,
        criterion_home.path(),
        &mut tracker,
        |n, total, id| {
            if progress.is_hidden() {
                eprintln!("[{n}/{total}] {id}");
            } else {
                progress.set_position(u64::try_from(n.saturating_sub(1)).unwrap_or(0));
                progress.set_message(id.to_owned());
            }
        },
    );
    progress.finish_and_clear();
    let output = output?;

    let measurements = adapter::criterion::read_dir(criterion_home.path()).with_context(|| {
        format!("cannot read criterion's output of suite {} (is it a criterion bench with `harness = false`?)", target.name)
    })?;

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
            features: sorted(&args.features),
            feature_flags: feature_flags(args.all_features, args.no_default_features),
            rustflags: std::env::var("RUSTFLAGS").ok().filter(|f| !f.is_empty()),
        },
        env: provenance::environment(&args.record_env),
        git: git_info(&workspace.root),
        cpu_governor: provenance::cpu_governor(),
        turbo: provenance::turbo(),
        quick: args.quick,
        duration_ms: i64::try_from(output.elapsed.as_millis()).ok(),
    };
    let id = record(ledger, source, provenance, measurements).await?;
    eprintln!(
        "bench-run: benchmarks ran for {:.1} s",
        output.elapsed.as_secs_f64()
    );
    Ok((id, workspace))
}

fn progress_bar(total: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(u64::try_from(total).unwrap_or(0));
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
    ) {
        bar.set_style(style);
    }
    if std::io::stderr().is_terminal() {
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

fn sorted(values: &[String]) -> Vec<String> {
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

fn feature_flags(all: bool, no_default: bool) -> Vec<String> {
    let mut flags = Vec::new();
    if all {
        flags.push("--all-features".to_owned());
    }
    if no_default {
        flags.push("--no-default-features".to_owned());
    }
    flags
}

fn git_info(dir: &Path) -> harness::model::GitInfo {
    provenance::git(dir).unwrap_or_else(|e| {
        eprintln!("warning: git state not recorded: {e}");
        harness::model::GitInfo::default()
    })
}

async fn run_suite(
    args: &RunArgs,
    db: Option<&Path>,
    cwd: &Path,
    source: RunSource,
) -> Result<Outcome> {
    // Open the ledger first: an unwritable path or a newer schema should fail before minutes
    // of benchmarking, not after.
    let start_dir = args
        .workspace
        .as_deref()
        .map_or_else(|| cwd.to_owned(), |d| cwd.join(d));
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict)?;
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
            let comparison = ledger.compare_runs(&base, &head, &config).await?;
            print_comparison(&comparison, &base, &head, args.format, args.verdict.explain);
        }
        None => {
            let results = ledger.measurements(id).await?;
            eprintln!(
                "bench-run: no baseline yet (first run of {} on this machine)",
                head.provenance.suite
            );
            print!("{}", report::run_show(&head, &results, args.format));
        }
    }
    Ok(Outcome::Ok)
}

async fn calibrate(args: &RunArgs, runs: u32, db: Option<&Path>, cwd: &Path) -> Result<Outcome> {
    if runs < 2 {
        bail!("--runs must be at least 2 to measure run-to-run noise");
    }
    let start_dir = args
        .workspace
        .as_deref()
        .map_or_else(|| cwd.to_owned(), |d| cwd.join(d));
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict)?;
    let mut exe = None;
    let mut last = None;
    for i in 1..=runs {
        eprintln!("bench-run: calibration run {i} of {runs}");
        let (id, _) =
            measure_and_record(args, &ledger, cwd, RunSource::Calibration, &mut exe).await?;
        push_run(&ledger, id, args.push.as_deref()).await;
        last = Some(id);
    }
    let head = ledger
        .require_run(last.ok_or_else(|| anyhow!("no calibration run"))?)
        .await?;
    // The noise floor of the next run: history up to and including the last calibration run.
    let history = ledger
        .history(
            &head.provenance.suite,
            head.machine_id,
            head.id + 1,
            config.max_history + 1,
        )
        .await?;
    let mut table = report::table::Table::new(&[
        ("benchmark", report::table::Align::Left),
        ("metric", report::table::Align::Left),
        ("runs", report::table::Align::Right),
        ("noise floor", report::table::Align::Right),
        ("source", report::table::Align::Left),
    ]);
    for (key, values) in &history {
        let floor = compare::noise_floor(values, &config);
        table.push(vec![
            key.benchmark.clone(),
            key.metric.clone(),
            values.len().to_string(),
            format!("{:.2}%", floor.pct),
            report::noise_source(&floor.source),
        ]);
    }
    println!(
        "Run-to-run noise of suite {} on this machine:\n",
        head.provenance.suite
    );
    print!("{}", table.to_terminal());
    Ok(Outcome::Ok)
}

async fn log_run(
    ledger: &Ledger,
    cwd: &Path,
    run: &str,
    file: Option<PathBuf>,
    notes: Vec<String>,
    base: Option<&str>,
    dry_run: bool,
) -> Result<Outcome> {
    let run = resolve_run(ledger, run, None, cwd).await?;
    let results = ledger.measurements(run.id).await?;
    let base = match base {
        Some(reference) => {
            Some(resolve_run(ledger, reference, Some(&run.provenance.suite), cwd).await?)
        }
        None => match ledger.previous_run(run.id).await? {
            Some(prev) => Some(ledger.require_run(prev).await?),
            None => None,
        },
    };
    let mut deltas = BTreeMap::new();
    if let Some(base) = &base {
        let comparison = ledger
            .compare_runs(base, &run, &CompareConfig::default())
            .await?;
        for row in &comparison.rows {
            if let Some(change) = &row.change {
                deltas.insert(
                    (row.benchmark.clone(), row.metric.clone()),
                    log::Delta {
                        change_pct: change.point_pct,
                        verdict: row.verdict.to_string(),
                    },
                );
            }
        }
    }
    let text = log::render(&log::Entry {
        run: &run,
        results: &results,
        baseline: base.as_ref(),
        deltas,
        notes,
    });
    if dry_run {
        print!("{text}");
        return Ok(Outcome::Ok);
    }
    let path = file.unwrap_or_else(|| workspace_root(cwd).join("BENCHMARKS.md"));
    log::append(&path, &text).with_context(|| format!("cannot append to {}", path.display()))?;
    eprintln!("bench-run: appended run #{} to {}", run.id, path.display());
    Ok(Outcome::Ok)
}

/// Reads an import file, or standard input for `-`, with the adapters' size limit.
fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(adapter::MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        if bytes.len() as u64 > adapter::MAX_FILE_BYTES {
            bail!("standard input exceeds {} bytes", adapter::MAX_FILE_BYTES);
        }
        return Ok(bytes);
    }
    Ok(adapter::read_input(path)?)
}

fn parse_directions(specs: &[String]) -> Result<BTreeMap<String, Direction>> {
    specs
        .iter()
        .map(|spec| {
            let (measure, dir) = spec
                .rsplit_once('=')
                .ok_or_else(|| anyhow!("--direction expects MEASURE=lower|higher, got {spec:?}"))?;
            let direction = match dir.trim() {
                "lower" | "lower_is_better" => Direction::LowerIsBetter,
                "higher" | "higher_is_better" => Direction::HigherIsBetter,
                other => bail!("--direction {spec:?}: expected lower or higher, got {other:?}"),
            };
            Ok((measure.trim().to_owned(), direction))
        })
        .collect()
}

async fn import(source: ImportSource, db: Option<&Path>, cwd: &Path) -> Result<Outcome> {
    let (kind, args, measurements) = match &source {
        ImportSource::Criterion { dir, args } => (
            RunSource::ImportCriterion,
            args,
            adapter::criterion::read_dir(dir)
                .with_context(|| format!("cannot import {}", dir.display()))?,
        ),
        ImportSource::Bmf {
            file,
            direction,
            args,
        } => {
            let directions = parse_directions(direction)?;
            let bytes = read_input(file)?;
            (
                RunSource::ImportBmf,
                args,
                adapter::bmf::parse(&bytes, &directions)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::Hyperfine { file, args } => {
            let bytes = read_input(file)?;
            (
                RunSource::ImportHyperfine,
                args,
                adapter::hyperfine::parse(&bytes)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::CargoCriterion { file, args } => {
            let bytes = read_input(file)?;
            let text = String::from_utf8(bytes)
                .with_context(|| format!("{} is not UTF-8", file.display()))?;
            (
                RunSource::ImportCargoCriterion,
                args,
                adapter::cargo_criterion::parse_messages(&text)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
    };
    let ledger = open_ledger(db, cwd).await?;
    let id = record_import(&ledger, cwd, kind, args, measurements).await?;
    push_run(&ledger, id, args.push.as_deref()).await;
    println!("{id}");
    Ok(Outcome::Ok)
}

async fn record_import(
    ledger: &Ledger,
    cwd: &Path,
    source: RunSource,
    args: &ImportArgs,
    measurements: Vec<harness::model::Measurement>,
) -> Result<RunId> {
    let provenance = external_provenance(cwd, args, invocation(), None)?;
    record(ledger, source, provenance, measurements).await
}

/// This process's command line, with `bench-run` as its program name.
fn invocation() -> Vec<String> {
    let mut command: Vec<String> = std::env::args().collect();
    if let Some(first) = command.first_mut() {
        *first = "bench-run".to_owned();
    }
    command
}

/// Provenance of results that other programs measured (imports, interleaved workers): this
/// machine, the workspace's toolchain and git state, and an unknown build profile.
fn external_provenance(
    cwd: &Path,
    args: &ImportArgs,
    command: Vec<String>,
    duration_ms: Option<i64>,
) -> Result<RunProvenance> {
    if args.suite.trim().is_empty() {
        bail!("--suite must not be empty");
    }
    let root = workspace_root(cwd);
    Ok(RunProvenance {
        suite: args.suite.clone(),
        package: None,
        command,
        cargo_command: None,
        cwd: cwd.display().to_string(),
        machine: provenance::machine(),
        toolchain: provenance::toolchain(&root).ok(),
        build: BuildConfig {
            profile: "unknown".to_owned(),
            ..BuildConfig::default()
        },
        env: provenance::environment(&args.record_env),
        git: git_info(&root),
        cpu_governor: provenance::cpu_governor(),
        turbo: provenance::turbo(),
        quick: false,
        duration_ms,
    })
}

/// Records a run and says so on stderr.
async fn record(
    ledger: &Ledger,
    source: RunSource,
    provenance: RunProvenance,
    measurements: Vec<harness::model::Measurement>,
) -> Result<RunId> {
    let count = measurements.len();
    let id = ledger
        .record_run(&NewRun {
            source,
            provenance,
            measurements,
        })
        .await
        .with_context(|| format!("cannot record the run in {}", ledger.path().display()))?;
    eprintln!(
        "bench-run: recorded run #{id} ({count} results) in {}",
        ledger.path().display()
    );
    Ok(id)
}

/// Pushes run `id` to the bench-web server at `url` (`None`: nothing to do). Never fails the
/// command: the run is already in the local ledger, so a failed push is only a warning.
async fn push_run(ledger: &Ledger, id: RunId, url: Option<&str>) {
    let Some(url) = url else {
        return;
    };
    match push(ledger, id, url).await {
        Ok(remote) => eprintln!("bench-run: pushed run #{id} to {url} (run #{remote} there)"),
        Err(e) => eprintln!(
            "warning: could not push run #{id} to {url}: {e:#} (the run is kept in the local ledger)"
        ),
    }
}

/// `POST URL/api/runs` with the run in the push format (version 1, described in the `web`
/// crate's `ingest` module) and `Authorization: Bearer $BENCH_PUSH_TOKEN`; returns the run's id
/// on the server.
async fn push(ledger: &Ledger, id: RunId, url: &str) -> Result<i64> {
    let token = std::env::var("BENCH_PUSH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| anyhow!("BENCH_PUSH_TOKEN is not set"))?;
    let run = ledger.require_run(id).await?;
    let measurements = ledger.measurements(id).await?;
    let body = serde_json::json!({
        "version": 1,
        "source": run.source,
        "provenance": run.provenance,
        "measurements": measurements,
    });
    let endpoint = format!("{}/api/runs", url.trim_end_matches('/'));
    tokio::task::spawn_blocking(move || post_run(&endpoint, &token, &body))
        .await
        .context("the push task failed")?
}

fn post_run(endpoint: &str, token: &str, body: &serde_json::Value) -> Result<i64> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(endpoint)
        .header("Authorization", &format!("Bearer {token}"))
        .send_json(body)
        .with_context(|| format!("POST {endpoint}"))?;
    let status = response.status();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    let answer: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    if !status.is_success() {
        let message = answer
            .as_ref()
            .and_then(|v| v["error"]["message"].as_str())
            .unwrap_or(&text);
        bail!("the server answered {status}: {message}");
    }
    answer
        .and_then(|v| v["id"].as_i64())
        .ok_or_else(|| anyhow!("unexpected answer from {endpoint}: {text}"))
}

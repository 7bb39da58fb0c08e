//! The subcommands: argument handling and I/O around the library, one file per subcommand;
//! this module dispatches and holds what they share (opening the ledger, naming runs,
//! recording, the verdict settings).

mod ab;
mod bisect;
mod calibrate;
mod calibrate_layouts;
mod compare;
mod confirm;
mod gate;
mod import;
mod ledger;
mod log;
mod profile;
mod push;
mod ratio;
mod run;

use crate::Outcome;
use crate::cli::{Cli, Command, CorrectionArg, ImportArgs, LedgerCommand, VerdictArgs};
use anyhow::{Context, Result, anyhow, bail};
use harness::baseline;
use harness::compare::{CompareConfig, Comparison, Correction};
use harness::ledger::{Ledger, RunFilter, RunId, StoredRun};
use harness::model::{BuildConfig, NewRun, RunProvenance, RunSource};
use harness::provenance;
use harness::report::{self, OutputFormat};
use std::io::IsTerminal;
use std::path::Path;

use harness::ledger::workspace_root;
pub async fn dispatch(cli: Cli) -> Result<Outcome> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let db = cli.db.clone();
    match cli.command {
        None => run::run_suite(&cli.run, db.as_deref(), &cwd, RunSource::BenchRun).await,
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
            suite,
            allow_mismatch,
            server,
            format,
            verdict,
        }) => {
            let request = compare::Request {
                base: &base,
                head: &head,
                suite: suite.as_deref(),
                allow_mismatch,
                format,
                verdict: &verdict,
            };
            match server {
                Some(url) => compare::compare_on_server(&url, &cwd, &request).await,
                None => {
                    let ledger = open_ledger(db.as_deref(), &cwd).await?;
                    compare::compare(&ledger, &cwd, &request).await
                }
            }
        }
        Some(Command::Gate {
            base,
            head,
            suite,
            allow_mismatch,
            allow_busy,
            confirm,
            server,
            format,
            verdict,
        }) => {
            let request = gate::Request {
                base: &base,
                head: &head,
                suite: suite.as_deref(),
                allow: harness::gate::Allow {
                    mismatch: allow_mismatch,
                    busy: allow_busy,
                },
                format,
                verdict: &verdict,
                confirm_runs: confirm,
            };
            match server {
                Some(url) => {
                    let server = harness::remote::Server::new(&url, gate::read_token());
                    gate::gate(gate::Source::Server(server), &cwd, &request).await
                }
                None => {
                    let ledger = open_ledger(db.as_deref(), &cwd).await?;
                    gate::gate(gate::Source::Local(&ledger), &cwd, &request).await
                }
            }
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
            let request = ratio::RatioRequest {
                runs,
                anchors: anchor,
                pairs: pair,
                only,
                at_least,
                format,
            };
            ratio::ratio(&ledger, &cwd, request).await
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
            let request = ratio::InterleaveRequest {
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
            ratio::interleave(request, db.as_deref(), &cwd).await
        }
        Some(Command::Ab(args)) => ab::ab(&args, db.as_deref(), &cwd).await,
        Some(Command::Bisect(args)) => bisect::bisect(&args, db.as_deref(), &cwd).await,
        Some(Command::Profile(args)) => profile::profile(&args, db.as_deref(), &cwd).await,
        Some(Command::Calibrate {
            runs,
            layouts: Some(layouts),
            seed,
            run,
        }) => calibrate_layouts::calibrate_layouts(&run, runs, layouts, seed, &cwd),
        Some(Command::Calibrate { runs, run, .. }) => {
            calibrate::calibrate(&run, runs, db.as_deref(), &cwd).await
        }
        Some(Command::Push { runs, to }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            push::push_runs(&ledger, &runs, &to, &cwd).await
        }
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
            title,
            claim,
            file,
            note,
            base,
            only,
            rows,
            dry_run,
        }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let request = log::Request {
                run: &run,
                title: title.as_deref(),
                claim: claim.as_deref(),
                file,
                notes: note,
                base: base.as_deref(),
                only: &only,
                rows,
                dry_run,
            };
            log::log_run(&ledger, &cwd, request).await
        }
        Some(Command::Import { source }) => import::import(source, db.as_deref(), &cwd).await,
        Some(Command::Export { run, format }) => {
            let ledger = open_ledger(db.as_deref(), &cwd).await?;
            let run = resolve_run(&ledger, &run, None, &cwd).await?;
            let results = ledger.measurements(run.id).await?;
            print!("{}", report::export(&run, &results, format));
            Ok(Outcome::Ok)
        }
        Some(Command::Ledger {
            command: LedgerCommand::Copy { from, to, format },
        }) => ledger::copy(&from, &to, format, &cwd).await,
    }
}

/// The build home of `repo` under `root` (default: [`harness::build_home::default_root`]),
/// waiting, with a line saying so, while another bench-run holds it.
fn open_build_home(
    repo: &Path,
    root: Option<&Path>,
    command: &str,
) -> Result<harness::build_home::BuildHome> {
    let root = root.map_or_else(harness::build_home::default_root, Path::to_owned);
    Ok(harness::build_home::BuildHome::open(repo, &root, |dir| {
        eprintln!(
            "bench-run {command}: waiting for another bench-run of this repository ({} is in use)",
            dir.display()
        );
    })?)
}

async fn open_ledger(db: Option<&str>, cwd: &Path) -> Result<Ledger> {
    let location = harness::ledger::default_location(db, cwd)?;
    Ledger::open(location).await.map_err(|e| anyhow!(e))
}

async fn resolve_run(
    ledger: &Ledger,
    text: &str,
    suite: Option<&str>,
    cwd: &Path,
) -> Result<StoredRun> {
    Ok(baseline::resolve_run(ledger, text, suite, Some(cwd)).await?)
}

/// A reference as sent to a bench-web server, which resolves references in its own repository
/// (if any): `merge-base:REV` is resolved here, where HEAD is the user's, and sent as its
/// commit hash; any other reference is sent as given.
fn server_ref(text: &str, cwd: &Path) -> Result<String> {
    let Some(rev) = harness::refs::merge_base_rev(text) else {
        return Ok(text.to_owned());
    };
    let base = provenance::merge_base_with_head(cwd, rev)?;
    eprintln!(
        "bench-run: merge-base:{rev} is commit {}{}; asking the server for its run there",
        base.commit,
        base.summary
            .as_ref()
            .map(|s| format!(" ({s:?})"))
            .unwrap_or_default()
    );
    Ok(base.commit)
}

/// The verdict settings of the command line; `dir` is in the workspace whose
/// `.bench-quarantine` applies when `--quarantine` is not given.
fn compare_config(args: &VerdictArgs, dir: &Path) -> Result<CompareConfig> {
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
    config.layout_strict = args.layout_strict;
    config.quarantine = quarantine(args.quarantine.as_deref(), dir)?;
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

/// The quarantine patterns: from `file` when given (it must be readable), else from
/// `.bench-quarantine` at the workspace root of `dir` when it exists.
fn quarantine(file: Option<&Path>, dir: &Path) -> Result<Vec<String>> {
    let path = match file {
        Some(path) => path.to_owned(),
        None => {
            let default = workspace_root(dir).join(harness::quarantine::QUARANTINE_FILE);
            if !default.is_file() {
                return Ok(Vec::new());
            }
            default
        }
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the quarantine file {}", path.display()))?;
    Ok(harness::quarantine::parse(&text))
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

/// Warns on stderr about each of `base` and `head` that ran on a busy machine (the reports
/// say so too).
fn warn_busy(base: &StoredRun, head: &StoredRun) {
    for (side, run) in [("base", base), ("head", head)] {
        if let Some(text) = report::busy_text(run) {
            eprintln!("warning: {side} {text}");
        }
    }
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

fn git_info(dir: &Path) -> harness::model::GitInfo {
    provenance::git(dir).unwrap_or_else(|e| {
        eprintln!("warning: git state not recorded: {e}");
        harness::model::GitInfo::default()
    })
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
        bench_exe: None,
        conditions: None,
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
        .with_context(|| format!("cannot record the run in {}", ledger.location()))?;
    eprintln!(
        "bench-run: recorded run #{id} ({count} results) in {}",
        ledger.location()
    );
    Ok(id)
}

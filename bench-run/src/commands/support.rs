//! What the subcommands share: opening the ledger and the build home, naming runs, the
//! verdict settings, recording, progress bars.

use crate::cli::{CorrectionArg, ImportArgs, VerdictArgs};
use anyhow::{Context, Result, anyhow, bail};
use bench_analysis::compare::{CompareConfig, Comparison, Correction};
use bench_model::{BuildConfig, NewRun, RunId, RunProvenance, RunSource, StoredRun};
use bench_report::OutputFormat;
use bench_runner::provenance;
use bench_store::Ledger;
use bench_verdicts::baseline;
use bench_verdicts::location::workspace_root;
use std::io::IsTerminal;
use std::path::Path;
/// The project named on the command line (`--project`, `BENCH_PROJECT`), set once by dispatch.
static PROJECT: std::sync::OnceLock<Option<bench_model::Project>> = std::sync::OnceLock::new();

/// Records the project the command line names.
///
/// # Errors
/// When it is not a valid project name.
pub(crate) fn set_project(name: Option<&str>) -> Result<()> {
    let project = name
        .filter(|n| !n.trim().is_empty())
        .map(|n| bench_model::Project::new(n.trim()))
        .transpose()?;
    let _ = PROJECT.set(project);
    Ok(())
}

/// The address of this repository's project on the server at `url`: the project the command
/// line names, else the one the repository's `origin` names, else the server's default.
pub(crate) fn server_url(url: &str) -> String {
    let named = PROJECT.get().cloned().flatten();
    let project = named.or_else(|| {
        let cwd = std::env::current_dir().ok()?;
        bench_model::Project::from_origin_url(&bench_git::origin_url(&cwd)?)
    });
    match project {
        Some(project) => bench_client::project_url(url, &project),
        None => url.trim_end_matches('/').to_owned(),
    }
}

/// The build home of `repo` under `root` (default: [`bench_runner::build_home::default_root`]),
/// waiting, with a line saying so, while another bench-run holds it.
pub(crate) fn open_build_home(
    repo: &Path,
    root: Option<&Path>,
    command: &str,
) -> Result<bench_runner::build_home::BuildHome> {
    let root = root.map_or_else(bench_runner::build_home::default_root, Path::to_owned);
    Ok(bench_runner::build_home::BuildHome::open(
        repo,
        &root,
        |dir| {
            eprintln!(
                "bench-run {command}: waiting for another bench-run of this repository ({} is in use)",
                dir.display()
            );
        },
    )?)
}

pub(crate) async fn open_ledger(db: Option<&str>, cwd: &Path) -> Result<Ledger> {
    let location = bench_verdicts::location::default_location(db, cwd)?;
    Ledger::open(location).await.map_err(|e| anyhow!(e))
}

pub(crate) async fn resolve_run(
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
pub(crate) fn server_ref(text: &str, cwd: &Path) -> Result<String> {
    let Some(rev) = bench_git::merge_base_rev(text) else {
        return Ok(text.to_owned());
    };
    let base = bench_git::merge_base_with_head(cwd, rev)?;
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
pub(crate) fn compare_config(args: &VerdictArgs, dir: &Path) -> Result<CompareConfig> {
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
pub(crate) fn quarantine(file: Option<&Path>, dir: &Path) -> Result<Vec<String>> {
    let path = match file {
        Some(path) => path.to_owned(),
        None => {
            let default = workspace_root(dir).join(bench_analysis::quarantine::QUARANTINE_FILE);
            if !default.is_file() {
                return Ok(Vec::new());
            }
            default
        }
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the quarantine file {}", path.display()))?;
    Ok(bench_analysis::quarantine::parse(&text))
}

pub(crate) fn print_comparison(
    c: &Comparison,
    base: &StoredRun,
    head: &StoredRun,
    format: OutputFormat,
    explain: bool,
) {
    match format {
        OutputFormat::Json => print!("{}", bench_report::comparison_json(c, base, head)),
        OutputFormat::Markdown => print!("{}", bench_report::comparison_markdown(c, base, head)),
        OutputFormat::Table => print!("{}", bench_report::comparison_terminal(c, base, head)),
    }
    if explain {
        // Explanations go to stderr with JSON output so stdout stays machine-readable.
        let text = bench_report::explain(c);
        if format == OutputFormat::Json {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
}

/// Warns on stderr about each of `base` and `head` that ran on a busy machine (the reports
/// say so too).
pub(crate) fn warn_busy(base: &StoredRun, head: &StoredRun) {
    for (side, run) in [("base", base), ("head", head)] {
        if let Some(text) = bench_report::busy_text(run) {
            eprintln!("warning: {side} {text}");
        }
    }
}

pub(crate) fn progress_bar(total: usize) -> indicatif::ProgressBar {
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

pub(crate) fn git_info(dir: &Path) -> bench_model::GitInfo {
    provenance::git(dir).unwrap_or_else(|e| {
        eprintln!("warning: git state not recorded: {e}");
        bench_model::GitInfo::default()
    })
}

/// This process's command line, with `bench-run` as its program name.
pub(crate) fn invocation() -> Vec<String> {
    let mut command: Vec<String> = std::env::args().collect();
    if let Some(first) = command.first_mut() {
        *first = "bench-run".to_owned();
    }
    command
}

/// Provenance of results that other programs measured (imports, interleaved workers): this
/// machine, the workspace's toolchain and git state, and an unknown build profile.
pub(crate) fn external_provenance(
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
pub(crate) async fn record(
    ledger: &Ledger,
    source: RunSource,
    provenance: RunProvenance,
    measurements: Vec<bench_model::Measurement>,
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

//! `bench-run --suite`: build, run and record a criterion suite, or a
//! gungraun (instruction-count) suite through [`bench_runner::gungraun`].

use super::push::push_run;
use super::support::{
    compare_config, invocation, open_ledger, print_comparison, progress_bar, warn_busy,
};
use crate::cli::RunArgs;
use crate::outcome::Outcome;
use anyhow::{Result, anyhow};
use bench_analysis::compare;
use bench_model::{RunId, RunSource};
use bench_runner::locate::Located;
use bench_runner::suite::Workspace;
use bench_store::Ledger;
use bench_usecases::record::{self, Progress, SuiteRequest};
use bench_verdicts::baseline;
use bench_verdicts::quick;
use std::path::{Path, PathBuf};

/// What `args` ask to run, recorded as made for `source`.
pub(crate) fn suite_request(args: &RunArgs, cwd: &Path, source: RunSource) -> Result<SuiteRequest> {
    let suite = args
        .suite
        .clone()
        .ok_or_else(|| anyhow!("--suite is required"))?;
    Ok(SuiteRequest {
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
    })
}

/// Finds the suite `args` name ([`bench_usecases::record::locate`]): done before the ledger is opened,
/// so that a suite that is not there leaves no ledger behind.
pub(crate) fn locate(args: &RunArgs, cwd: &Path) -> Result<Located> {
    Ok(record::locate(&suite_request(
        args,
        cwd,
        RunSource::BenchRun,
    )?)?)
}

/// Runs a suite that [`locate`] found once and records it
/// ([`bench_usecases::record::record_located`]), drawing its progress on the terminal; `prebuilt` is
/// the executable to run, set after the first build.
pub(crate) async fn measure_and_record(
    args: &RunArgs,
    ledger: &Ledger,
    located: &Located,
    cwd: &Path,
    source: RunSource,
    prebuilt: &mut Option<PathBuf>,
) -> Result<(RunId, Workspace)> {
    let request = suite_request(args, cwd, source)?;
    let mut progress = TerminalProgress::default();
    let recorded = record::record_located(
        ledger,
        &request,
        located,
        prebuilt.as_deref(),
        &mut progress,
    )
    .await?;
    *prebuilt = Some(recorded.executable.clone());
    Ok((recorded.id, recorded.workspace))
}

/// A recording's progress on stderr: a bar on a terminal, `[n/m] id` lines otherwise.
#[derive(Default)]
pub(crate) struct TerminalProgress {
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

pub(crate) async fn run_suite(
    args: &RunArgs,
    db: Option<&str>,
    cwd: &Path,
    source: RunSource,
) -> Result<Outcome> {
    // Find the suite, then open the ledger: a misspelt suite leaves no ledger file behind,
    // and an unwritable path or a newer schema fails before minutes of building and
    // benchmarking, not after.
    let start_dir = args.build.start_dir(cwd);
    let located = locate(args, cwd)?;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let (id, _) = measure_and_record(args, &ledger, &located, cwd, source, &mut None).await?;
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
            let comparison =
                bench_verdicts::evidence::compare_runs(&ledger, &base, &head, &config).await?;
            print_comparison(&comparison, &base, &head, args.format, args.verdict.explain);
        }
        None => {
            let results = ledger.measurements(id).await?;
            eprintln!(
                "bench-run: no baseline yet (no earlier full run of {} on this machine; \
                 --quick runs and confirmation re-runs are never a default baseline)",
                head.provenance.suite
            );
            print!("{}", bench_report::run_show(&head, &results, args.format));
        }
    }
    Ok(Outcome::Ok)
}

//! `bench-run bisect`: the commit that made a suite slower ([`bench_usecases::bisect`] builds,
//! measures, records and decides; this file prints, pushes and writes the summary).

use super::ab::TerminalAb;
use super::support::{compare_config, invocation, open_ledger};
use crate::cli::{BisectArgs, VerdictArgs};
use crate::outcome::Outcome;
use anyhow::{Context, Result};
use bench_report::OutputFormat;
use bench_runner::locate::locate;
use bench_runner::relink;
use bench_store::Ledger;
use bench_usecases::ab::{clock_seed, short};
use bench_usecases::bisect::search::Found;
use bench_usecases::bisect::{self, BisectOutcome, BisectRequest, Bisected, NotSlower};
use std::path::Path;

const NAME: &str = "bench-run bisect";

pub(crate) async fn bisect(args: &BisectArgs, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    let start_dir = args.build.start_dir(cwd);
    let workspace = locate(&start_dir, &args.suite, args.build.package.as_deref())?.workspace;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&default_verdict(), &start_dir)?;
    let build = args.build.options();
    let seed = args.seed.unwrap_or_else(clock_seed);
    let me = relink::own_executable().context("cannot find bench-run's own executable")?;
    let mut command = invocation();
    if args.seed.is_none() {
        command.extend(["--seed".to_owned(), seed.to_string()]);
    }
    let request = BisectRequest {
        workspace_root: &workspace.root,
        suite: &args.suite,
        package: args.build.package.as_deref(),
        good: &args.good,
        bad: &args.bad,
        benchmark: args.benchmark.as_deref(),
        threshold_pct: args.threshold,
        rounds: args.rounds,
        layouts: args.layouts,
        seed,
        build: &build,
        record_env: &args.build.record_env,
        criterion_args: &args.criterion_args,
        config: &config,
        command: &command,
        cwd,
        build_home: args.build_home.as_deref(),
        relinker: &me,
    };
    let outcome = bisect::bisect(&ledger, &request, &mut TerminalAb(NAME)).await;
    let shown = match outcome {
        Ok(outcome) => show(args, &ledger, outcome).await,
        Err(failure) => Err(failure.into()),
    };
    ledger.close().await;
    shown
}

/// The verdict settings of the ends' comparison: ab's defaults.
fn default_verdict() -> VerdictArgs {
    VerdictArgs {
        threshold: None,
        threshold_for: Vec::new(),
        ignore: Vec::new(),
        quarantine: None,
        alpha: None,
        correction: None,
        explain: false,
        layout_strict: false,
    }
}

async fn show(args: &BisectArgs, ledger: &Ledger, outcome: BisectOutcome) -> Result<Outcome> {
    match outcome {
        BisectOutcome::SameCommit { .. } => {
            eprintln!(
                "{NAME}: good `{}` and bad `{}` are the same commit; nothing to bisect",
                args.good, args.bad
            );
            Ok(Outcome::Incomparable)
        }
        BisectOutcome::IdenticalEnds { sha256 } => {
            eprintln!(
                "{NAME}: good and bad build the same bench executable (sha256 {}): no commit in \
                 between changed this suite's code, so there is nothing to bisect",
                short(&sha256)
            );
            Ok(Outcome::Incomparable)
        }
        BisectOutcome::NotSlower(ends) => {
            let NotSlower {
                good,
                bad,
                good_run,
                bad_run,
                comparison,
            } = *ends;
            eprint!(
                "{}",
                bench_report::comparison_terminal(&comparison, &good_run, &bad_run)
            );
            eprintln!(
                "{NAME}: bad ({}) is not slower than good ({}) on {}: nothing to bisect (runs \
                 #{} and #{})",
                short(&bad.hash),
                short(&good.hash),
                args.benchmark
                    .as_deref()
                    .map_or_else(|| "any benchmark".to_owned(), |p| format!("`{p}`")),
                good_run.id,
                bad_run.id
            );
            Ok(Outcome::Incomparable)
        }
        BisectOutcome::Searched(bisected) => {
            finish(args, ledger, &bisected).await?;
            Ok(match bisected.report.found {
                Found::Culprit { .. } => Outcome::Ok,
                Found::Unresolved { .. } => Outcome::Regression,
            })
        }
    }
}

/// Prints the report, pushes the steps, writes the summary.
async fn finish(args: &BisectArgs, ledger: &Ledger, bisected: &Bisected) -> Result<()> {
    let report = &bisected.report;
    match args.format {
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(report).context("cannot write the report as JSON")?
        ),
        OutputFormat::Markdown => print!("{}", report.markdown()),
        _ => print!("{}", report.table()),
    }
    let mut links = Vec::new();
    if let Some(url) = &args.push {
        for &(base, head) in &bisected.pairs {
            if let Some(link) = super::push::push_pair(ledger, base, head, url).await {
                links.push(link);
            }
        }
    }
    if let Some(path) = &args.summary {
        let mut text = report.markdown();
        if let Some(link) = links.last() {
            text.push_str(&format!(
                "\nOn the team's server: [the culprit's step]({link})\n"
            ));
        }
        std::fs::write(path, text)
            .with_context(|| format!("cannot write the summary to {}", path.display()))?;
        eprintln!("{NAME}: wrote the markdown summary to {}", path.display());
    }
    eprintln!("bisect: {} ({:.0} s)", report.headline(), report.wall_s);
    Ok(())
}

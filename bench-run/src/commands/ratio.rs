//! `bench-run ratio` and `bench-run interleave`: speed ratios against an anchor.

use super::push::push_run;
use super::support::{
    external_provenance, invocation, open_ledger, progress_bar, record, resolve_run,
};
use crate::cli::ImportArgs;
use crate::outcome::Outcome;
use anyhow::{Result, anyhow, bail};
use bench_analysis::ratio::{self, Anchors, PairRule, RatioConfig, RunSpeeds};
use bench_model::{RunSource, metric};
use bench_report::OutputFormat;
use bench_store::Ledger;
use bench_usecases::interleave::{
    InterleaveRequest as UseCaseRequest, TrialProgress, interleave as interleave_workers,
};
use bench_worker::process::WorkerProcess;
use std::io::IsTerminal;
use std::path::Path;

/// The arguments of `ratio`.
pub(crate) struct RatioRequest {
    pub(crate) runs: Vec<String>,
    pub(crate) anchors: Vec<String>,
    pub(crate) pairs: Vec<String>,
    pub(crate) only: Vec<String>,
    pub(crate) at_least: Option<f64>,
    pub(crate) format: OutputFormat,
}

pub(crate) async fn ratio(ledger: &Ledger, cwd: &Path, request: RatioRequest) -> Result<Outcome> {
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
    let sources = bench_report::RatioSources {
        ours: ours_ids,
        anchors: anchor_ids,
    };
    print!(
        "{}",
        bench_report::ratio_report(&table, &sources, request.at_least, request.format)
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
pub(crate) struct InterleaveRequest {
    pub(crate) workers: Vec<String>,
    /// `LABEL=COMMAND`.
    pub(crate) labeled_workers: Vec<String>,
    pub(crate) pairs: Vec<String>,
    pub(crate) only: Vec<String>,
    pub(crate) rounds: usize,
    pub(crate) warmup: usize,
    pub(crate) seed: Option<u64>,
    pub(crate) timeout: std::time::Duration,
    pub(crate) at_least: Option<f64>,
    pub(crate) format: OutputFormat,
    pub(crate) record: ImportArgs,
}

/// `LABEL=COMMAND` of `--worker-as`: a label that can stand in front of a benchmark name.
pub(crate) fn parse_labeled_worker(text: &str) -> Result<(&str, &str)> {
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

pub(crate) async fn interleave(
    request: InterleaveRequest,
    db: Option<&str>,
    cwd: &Path,
) -> Result<Outcome> {
    let rules = request
        .pairs
        .iter()
        .map(|p| PairRule::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
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
    let mut progress = TerminalTrials {
        bar: None,
        seed,
        rounds: request.rounds,
        warmup: request.warmup,
        started: std::time::Instant::now(),
    };
    let interleaved = interleave_workers(
        &mut workers,
        &UseCaseRequest {
            rules: &rules,
            only: &request.only,
            warmup: request.warmup,
            rounds: request.rounds,
            seed,
            timeout: request.timeout,
        },
        &mut progress,
    );
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    let interleaved = interleaved?;
    let elapsed_ms = i64::try_from(interleaved.elapsed.as_millis()).ok();
    let ratios = interleaved.ratios;
    let measurements = interleaved.measurements;
    let provenance = external_provenance(cwd, &request.record, command, elapsed_ms)?;
    let id = record(&ledger, RunSource::Interleaved, provenance, measurements).await?;
    push_run(&ledger, id, request.record.push.as_deref()).await;
    if ratios.is_empty() {
        eprintln!("bench-run: no pairs (give --pair OURS=ANCHOR to compare two sides)");
    } else {
        print!(
            "{}",
            bench_report::interleave_report(
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

/// The trials' progress on stderr: a bar on a terminal; without one (CI logs, redirected
/// output) the bar is hidden, so a line says when each round ends.
struct TerminalTrials {
    bar: Option<indicatif::ProgressBar>,
    seed: u64,
    rounds: usize,
    warmup: usize,
    started: std::time::Instant,
}

impl TrialProgress for TerminalTrials {
    fn planned(&mut self, trials: usize, units: usize, pairs: usize) {
        eprintln!(
            "bench-run: {trials} trials: {units} units ({pairs} with anchors) x {} rounds (+{} warm-up), seed {}",
            self.rounds, self.warmup, self.seed
        );
        self.started = std::time::Instant::now();
        self.bar = Some(progress_bar(trials));
    }

    fn trial(&mut self, done: usize, id: &str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(id.to_owned());
            let all_rounds = self.warmup + self.rounds;
            let per_round = bar.length().unwrap_or(0) as usize / all_rounds.max(1);
            if !std::io::stderr().is_terminal() && per_round > 0 && done.is_multiple_of(per_round) {
                let round = done / per_round;
                let elapsed = self.started.elapsed().as_secs_f64();
                let left = elapsed / round as f64 * (all_rounds - round) as f64;
                eprintln!(
                    "bench-run: round {round}/{all_rounds} done ({elapsed:.0} s, about {left:.0} s left)"
                );
            }
        }
    }
}

//! `bench-run calibrate`: run a suite N times unchanged and show its run-to-run noise and what
//! the gate's rule says about unchanged code.

use super::push::push_run;
use super::run::{TerminalProgress, locate, suite_request};
use super::support::{compare_config, open_ledger};
use crate::cli::RunArgs;
use crate::outcome::Outcome;
use anyhow::Result;
use bench_model::RunSource;
use bench_usecases::calibrate::{CalibrationRequest, calibrate as run_calibration};
use std::path::Path;

pub(crate) async fn calibrate(
    args: &RunArgs,
    runs: u32,
    db: Option<&str>,
    cwd: &Path,
) -> Result<Outcome> {
    let start_dir = args.build.start_dir(cwd);
    let located = locate(args, cwd)?;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let suite = suite_request(args, cwd, RunSource::Calibration)?;
    let calibration = run_calibration(
        &ledger,
        &CalibrationRequest {
            suite: &suite,
            located: &located,
            runs,
            config: &config,
        },
        &mut TerminalProgress::default(),
    )
    .await?;
    for run in &calibration.runs {
        push_run(&ledger, run.id, args.push.as_deref()).await;
    }
    println!(
        "Run-to-run noise of suite {} on this machine:\n",
        calibration.suite
    );
    print!(
        "{}",
        bench_report::calibration_table(&calibration.history, &calibration.aa, &config)
    );
    println!(
        "\nA/A alarms: comparisons of consecutive calibration runs (unchanged code) that the gate's \
         rule, with the history it would have had, called a regression or an improvement. \
         detects: the smallest slowdown a gate against one of these runs would flag, the limit \
         max(threshold, noise floor) plus the median half-width of the A/A change intervals. \
         For verdicts that hold on a busy machine, use bench-run ab."
    );
    Ok(Outcome::Ok)
}

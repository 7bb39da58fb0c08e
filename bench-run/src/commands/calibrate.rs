//! `bench-run calibrate`: run a suite N times unchanged and show its run-to-run noise and what
//! the gate's rule says about unchanged code.

use super::push::push_run;
use super::run::{locate, measure_and_record};
use super::support::{compare_config, open_ledger};
use crate::cli::RunArgs;
use crate::outcome::Outcome;
use anyhow::{Result, anyhow, bail};
use bench_analysis::compare;
use bench_model::RunSource;
use std::path::Path;

pub(crate) async fn calibrate(
    args: &RunArgs,
    runs: u32,
    db: Option<&str>,
    cwd: &Path,
) -> Result<Outcome> {
    if runs < 2 {
        bail!("--runs must be at least 2 to measure run-to-run noise");
    }
    let start_dir = args.build.start_dir(cwd);
    let located = locate(args, cwd)?;
    let ledger = open_ledger(db, &start_dir).await?;
    let config = compare_config(&args.verdict, &start_dir)?;
    let mut exe = None;
    let mut ids = Vec::new();
    for i in 1..=runs {
        eprintln!("bench-run: calibration run {i} of {runs}");
        let (id, _) = measure_and_record(
            args,
            &ledger,
            &located,
            cwd,
            RunSource::Calibration,
            &mut exe,
        )
        .await?;
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
    let aa = bench_verdicts::evidence::aa_outcomes(&ledger, &ids, &config).await?;
    println!(
        "Run-to-run noise of suite {} on this machine:\n",
        head.provenance.suite
    );
    print!(
        "{}",
        bench_report::calibration_table(&history, &aa, &config)
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

//! `bench-run calibrate`: a suite run N times unchanged, and what its run-to-run noise and the
//! gate's rule say about unchanged code (A/A alarms).

use crate::record::{self, Progress, RecordError, Recorded, SuiteRequest};
use bench_analysis::calibration::AaOutcome;
use bench_analysis::compare::CompareConfig;
use bench_model::{History, HistoryPoint, MetricKey, RunId};
use bench_runner::locate::Located;
use bench_store::{Ledger, LedgerError};
use std::collections::BTreeMap;

/// What to calibrate.
#[derive(Debug)]
pub struct CalibrationRequest<'a> {
    /// The suite and how to run it (its `source` should be `RunSource::Calibration`).
    pub suite: &'a SuiteRequest,
    /// Where [`record::locate`] found it.
    pub located: &'a Located,
    /// How many runs: at least 2.
    pub runs: u32,
    /// The verdict settings whose A/A alarms are counted.
    pub config: &'a CompareConfig,
}

/// The runs and what they say.
#[derive(Debug)]
pub struct Calibration {
    /// The suite.
    pub suite: String,
    /// The runs, in order.
    pub runs: Vec<Recorded>,
    /// Whether they were `--quick` runs: then `history` is theirs alone, since quick runs are
    /// never history for compare and gate.
    pub quick: bool,
    /// The noise floor's input: the history the next run would be compared with.
    pub history: History,
    /// Per benchmark, what the gate's rule said of consecutive runs of unchanged code.
    pub aa: BTreeMap<MetricKey, AaOutcome>,
}

/// Why a calibration stopped; the runs recorded before it stay recorded.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// One run cannot measure run-to-run noise.
    #[error("--runs must be at least 2 to measure run-to-run noise (got {0})")]
    TooFewRuns(u32),
    /// A run failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Reading the runs back failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Runs the suite `request.runs` times, building it once, and reads back its noise.
///
/// # Errors
/// See [`CalibrateError`].
pub async fn calibrate(
    ledger: &Ledger,
    request: &CalibrationRequest<'_>,
    progress: &mut dyn Progress,
) -> Result<Calibration, CalibrateError> {
    let total = request.runs;
    if total < 2 {
        return Err(CalibrateError::TooFewRuns(total));
    }
    let mut runs: Vec<Recorded> = Vec::new();
    for i in 1..=total {
        progress.note(&format!("calibration run {i} of {total}"));
        let prebuilt = runs.last().map(|r| r.executable.clone());
        let recorded = record::record_located(
            ledger,
            request.suite,
            request.located,
            prebuilt.as_deref(),
            progress,
        )
        .await?;
        runs.push(recorded);
    }
    let ids: Vec<RunId> = runs.iter().map(|r| r.id).collect();
    let last = *ids.last().unwrap_or(&0);
    let head = ledger.require_run(last).await?;
    let history = if head.provenance.quick {
        progress.warning(&format!(
            "--quick runs are not history: compare and gate will not learn from them; the \
             table shows the noise of these {total} runs alone"
        ));
        let mut history = History::new();
        for &id in &ids {
            for m in ledger.measurements(id).await? {
                history
                    .entry(MetricKey::of(&m))
                    .or_default()
                    .push(HistoryPoint::new(id, m.estimate.point));
            }
        }
        history
    } else {
        // The noise floor of the next run: history up to and including the last run.
        ledger
            .history(
                &head.provenance.suite,
                head.machine_id,
                head.id + 1,
                request.config.history_runs(),
            )
            .await?
    };
    let aa = bench_verdicts::evidence::aa_outcomes(ledger, &ids, request.config).await?;
    Ok(Calibration {
        suite: head.provenance.suite,
        runs,
        quick: head.provenance.quick,
        history,
        aa,
    })
}

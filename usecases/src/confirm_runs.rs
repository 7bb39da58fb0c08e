//! `gate --confirm N` as a use case: re-run only the benchmarks the gate flagged, N times,
//! compare each re-run with the base on the flagged verdict's noise floor, and keep the
//! regressions that hold (the rule is [`crate::confirm`]).

use crate::confirm::{self, Confirmed};
use crate::record::{self, Progress, RecordError, SuiteRequest};
use bench_analysis::compare::{self, CompareConfig, Comparison, Mismatch};
use bench_runner::locate::Located;
use bench_store::{Ledger, LedgerError, RunId, StoredRun};

/// What the gate asks the confirmation to do.
#[derive(Debug)]
pub struct ConfirmRequest<'a> {
    /// The re-runs: the head run's suite, build and settings, filtered to the flagged
    /// benchmarks ([`confirm::confirmation_args`]); its source should be `Confirmation`.
    pub rerun: &'a SuiteRequest,
    /// Where [`record::locate`] found the suite.
    pub located: &'a Located,
    /// The gate's base run.
    pub base: &'a StoredRun,
    /// The gate's head run.
    pub head: &'a StoredRun,
    /// The gate's comparison of head against base, with the regressions to confirm.
    pub flagged: &'a Comparison,
    /// The verdict settings.
    pub config: &'a CompareConfig,
    /// How many re-runs.
    pub runs: u32,
    /// Whether a re-run measured unlike the head (another build, machine, toolchain) is used
    /// anyway, with a warning.
    pub allow_mismatch: bool,
}

/// What the confirmation found.
#[derive(Debug)]
pub enum Confirmation {
    /// Every re-run was usable: per flagged regression, whether it held.
    Decided {
        /// The re-runs, in order.
        runs: Vec<RunId>,
        /// Per flagged regression, its votes and whether it held.
        confirmed: Vec<Confirmed>,
    },
    /// A re-run was not measured like the head, and mismatches were not allowed.
    Refused {
        /// The re-run.
        run: RunId,
        /// How it differs.
        mismatches: Vec<Mismatch>,
    },
}

/// Why the confirmation stopped; the re-runs recorded before it stay recorded.
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    /// A re-run failed.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// Re-runs the flagged benchmarks `request.runs` times (building once) and decides which of the
/// flagged regressions hold.
///
/// # Errors
/// See [`ConfirmError`].
pub async fn confirm_regressions(
    ledger: &Ledger,
    request: &ConfirmRequest<'_>,
    progress: &mut dyn Progress,
) -> Result<Confirmation, ConfirmError> {
    let head = request.head;
    // The same noise floor as the flagged verdict: the history before the head run, untouched
    // by the re-runs.
    let history = ledger
        .history(
            &head.provenance.suite,
            head.machine_id,
            head.id,
            request.config.max_history + 1,
        )
        .await?;
    let base_results = ledger.measurements(request.base.id).await?;
    let mut prebuilt = None;
    let mut confirmations: Vec<(RunId, Comparison)> = Vec::new();
    for i in 1..=request.runs {
        progress.note(&format!("confirmation run {i} of {}", request.runs));
        let recorded = record::record_located(
            ledger,
            request.rerun,
            request.located,
            prebuilt.as_deref(),
            progress,
        )
        .await?;
        prebuilt = Some(recorded.executable.clone());
        let id = recorded.id;
        let rerun = ledger.require_run(id).await?;
        let mismatches = compare::check_comparable(&head.provenance, &rerun.provenance);
        if !mismatches.is_empty() {
            if !request.allow_mismatch {
                return Ok(Confirmation::Refused {
                    run: id,
                    mismatches,
                });
            }
            let listed: Vec<String> = mismatches.iter().map(|m| format!("  - {m}")).collect();
            progress.warning(&format!(
                "confirmation run #{id} was not measured like head run #{}:\n{}",
                head.id,
                listed.join("\n")
            ));
        }
        let results = ledger.measurements(id).await?;
        confirmations.push((
            id,
            compare::compare(&base_results, &results, &history, request.config),
        ));
    }
    Ok(Confirmation::Decided {
        runs: confirmations.iter().map(|(id, _)| *id).collect(),
        confirmed: confirm::tally(request.flagged, &confirmations),
    })
}

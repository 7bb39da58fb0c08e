//! Verdicts on stored runs: reads what a comparison needs from the ledger (both runs'
//! results, the head's history, whether the two are the sides of one `bench-run ab`) and hands
//! it to the pure [`crate::compare`]. The store only stores; this is where the two meet.

use crate::calibration::AaOutcome;
use crate::compare::{self, CompareConfig, Comparison};
use crate::ledger::{Ledger, LedgerError, RunId, StoredRun};
use std::collections::BTreeMap;

/// Compares two stored runs: their results, with the noise floor learnt from the runs of
/// `head`'s suite and machine before it; or, when they are the base and head of one paired A/B
/// run, on their rounds ([`compare::compare_paired`]). When both ran the same executable
/// ([`compare::same_binary`]), the same-binary rule applies ([`compare::mark_same_binary`]).
///
/// # Errors
/// When a query fails.
pub async fn compare_runs(
    ledger: &Ledger,
    base: &StoredRun,
    head: &StoredRun,
    config: &CompareConfig,
) -> Result<Comparison, LedgerError> {
    // The two sides of one `bench-run ab` are judged on their rounds, not on history.
    if ledger.pairing_between(base.id, head.id).await?.is_some() {
        let base_results = ledger.measurements(base.id).await?;
        let head_results = ledger.measurements(head.id).await?;
        return Ok(compare::compare_paired(
            &base_results,
            &head_results,
            config,
        ));
    }
    let mut comparison = compare_on_history(ledger, base.id, head, config).await?;
    if let Some(sha256) = compare::same_binary(&base.provenance, &head.provenance) {
        compare::mark_same_binary(&mut comparison, &sha256);
    }
    Ok(comparison)
}

/// Compares run `base` with `head` under the history of `head`'s suite and machine before it:
/// the rule for two stored runs, without the pairing and same-binary rules (`calibrate` asks
/// what the rule alone does when code changed and its speed did not).
///
/// # Errors
/// When a query fails.
pub async fn compare_on_history(
    ledger: &Ledger,
    base: RunId,
    head: &StoredRun,
    config: &CompareConfig,
) -> Result<Comparison, LedgerError> {
    let history = ledger
        .history(
            &head.provenance.suite,
            head.machine_id,
            head.id,
            config.history_runs(),
        )
        .await?;
    Ok(compare::compare(
        &ledger.measurements(base).await?,
        &ledger.measurements(head.id).await?,
        &history,
        config,
    ))
}

/// The A/A comparisons of `calibrate`: each run of `runs` (ids in recording order) against the
/// one before it, with the gate's rule and the history the gate would have had (the
/// same-binary rule left out: the question is what the rule does when code changed and its
/// speed did not), summed per benchmark.
///
/// # Errors
/// When a query fails.
pub async fn aa_outcomes(
    ledger: &Ledger,
    runs: &[RunId],
    config: &CompareConfig,
) -> Result<BTreeMap<compare::MetricKey, AaOutcome>, LedgerError> {
    let mut comparisons = Vec::new();
    for pair in runs.windows(2) {
        let [before, after] = *pair else { continue };
        let head = ledger.require_run(after).await?;
        comparisons.push(compare_on_history(ledger, before, &head, config).await?);
    }
    Ok(crate::calibration::aa_outcomes(&comparisons))
}

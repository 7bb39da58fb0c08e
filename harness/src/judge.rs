//! Verdicts on stored runs: reads what a comparison needs from the ledger (both runs'
//! results, the head's history, whether the two are the sides of one `bench-run ab`) and hands
//! it to the pure [`crate::compare`]. The store only stores; this is where the two meet.

use crate::compare::{self, CompareConfig, Comparison};
use crate::ledger::{Ledger, LedgerError, StoredRun};

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
    let base_results = ledger.measurements(base.id).await?;
    let head_results = ledger.measurements(head.id).await?;
    // The two sides of one `bench-run ab` are judged on their rounds, not on history.
    if ledger.pairing_between(base.id, head.id).await?.is_some() {
        return Ok(compare::compare_paired(
            &base_results,
            &head_results,
            config,
        ));
    }
    let history = ledger
        .history(
            &head.provenance.suite,
            head.machine_id,
            head.id,
            config.history_runs(),
        )
        .await?;
    let mut comparison = compare::compare(&base_results, &head_results, &history, config);
    if let Some(sha256) = compare::same_binary(&base.provenance, &head.provenance) {
        compare::mark_same_binary(&mut comparison, &sha256);
    }
    Ok(comparison)
}

//! After a push, what its first viewers will ask for is prepared in the background: the kept
//! trend of the run's line extended by it (at 10M results reading a trend whole is seconds,
//! which a viewer would otherwise wait for) and the run's dashboard verdict. Both land in the caches
//! the pages read ([`crate::kept`]); a viewer who arrives while they are computed waits for
//! that computation rather than starting another.

use crate::AppState;
use crate::error::AppError;
use crate::trend::{self, MachineChoice, SeriesPage};
use bench_model::RunId;
use bench_store::{Ledger, TrendRuns};
use std::sync::Arc;

/// Prepares the views of pushed run `run` off the request, in the request's project, when no
/// other push is in flight (this one still holds its slot). One preparation at a time: a push
/// that arrives while one runs, or while other pushes are received, prepares nothing (the
/// last push of a burst, or the first viewer, computes what is missing), so a burst of pushes
/// never queues work nor takes the cores the pushes need.
pub fn after_push(state: &AppState, run: RunId) {
    if state.push_slots().in_flight() > 1 {
        return;
    }
    let Ok(permit) = Arc::clone(state.preparing()).try_acquire_owned() else {
        return;
    };
    let ledger = state.ledger();
    let state = state.clone();
    tokio::spawn(async move {
        let _permit = permit;
        if let Err(e) = prepare(&state, &ledger, run).await {
            tracing::debug!(run, error = %e, "the views of a pushed run were not prepared");
        }
    });
}

async fn prepare(state: &AppState, ledger: &Ledger, run: RunId) -> Result<(), AppError> {
    let head = ledger.require_run(run).await?;
    crate::pages::dashboard::verdict(state, ledger, &head).await?;
    // A kept trend is extended by the new run (a few values); a line nobody has viewed since
    // the server started is left to its first viewer (reading 12,500 runs of a long line
    // whole is seconds of work, which a burst of pushes would pay again and again).
    let line = (
        ledger.project().to_string(),
        head.provenance.suite.clone(),
        Some(head.machine_id),
        TrendRuns::Line,
    );
    if head.source.is_on_the_line() && !head.provenance.quick && state.trend_cache().holds(&line) {
        trend::load(
            ledger,
            state.trend_cache(),
            &head.provenance.suite,
            &MachineChoice::Fingerprint(head.provenance.machine.fingerprint.clone()),
            TrendRuns::Line,
            SeriesPage::default(),
        )
        .await?;
    }
    Ok(())
}

//! After a push, what its first viewers will ask for is prepared in the background: the trend
//! of the run's line (at 10M results a trend is seconds of reading and analysis, which a
//! viewer would otherwise wait for) and the run's dashboard verdict. Both land in the caches
//! the pages read ([`crate::kept`]); a viewer who arrives while they are computed waits for
//! that computation rather than starting another.

use crate::AppState;
use crate::error::AppError;
use crate::trend::{self, MachineChoice, SeriesPage};
use bench_model::RunId;
use bench_store::{Ledger, TrendRuns};
use std::sync::Arc;

/// Prepares the views of pushed run `run` off the request, in the request's project. One
/// preparation at a time: a push that arrives while one runs prepares nothing (the next push,
/// or the first viewer, computes what is missing), so a burst of pushes never queues work.
pub fn after_push(state: &AppState, run: RunId) {
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
    if head.source.is_on_the_line() && !head.provenance.quick {
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

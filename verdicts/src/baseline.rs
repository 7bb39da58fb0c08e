//! Which runs a verdict is about: the references a user gives resolved to stored runs, and the
//! default baseline of a run. `bench-run --suite`, `compare`, `gate`, `log` and the web app's
//! pages all pick their runs here, so they cannot disagree about what "the baseline" is.

use crate::refs::{self, RefError, RunRef};
use bench_model::StoredRun;
use bench_store::Ledger;
use std::path::Path;

/// The run `text` names ([`RunRef`]), with everything stored about it. `suite` narrows
/// `latest`, `previous` and git revisions; `git_dir` is where git revisions are looked up.
///
/// # Errors
/// When nothing matches or a query fails.
pub async fn resolve_run(
    ledger: &Ledger,
    text: &str,
    suite: Option<&str>,
    git_dir: Option<&Path>,
) -> Result<StoredRun, RefError> {
    let id = refs::resolve(ledger, &RunRef::parse(text), suite, git_dir).await?;
    Ok(ledger.require_run(id).await?)
}

/// The two runs of a comparison, `(base, head)`. The head is resolved first, in `suite` when
/// given; the base in `suite`, else in the head's suite, so `--base main` means main's run of
/// the suite being judged.
///
/// # Errors
/// When either reference matches nothing or a query fails.
pub async fn resolve_pair(
    ledger: &Ledger,
    base: &str,
    head: &str,
    suite: Option<&str>,
    git_dir: Option<&Path>,
) -> Result<(StoredRun, StoredRun), RefError> {
    let head = resolve_run(ledger, head, suite, git_dir).await?;
    let base_suite = suite.unwrap_or(&head.provenance.suite);
    let base = resolve_run(ledger, base, Some(base_suite), git_dir).await?;
    Ok((base, head))
}

/// The baseline of `head`: the run `given` names (in the head's suite), else the default: for
/// the head side of a paired A/B run (`bench-run ab`), its base side; for any other run, the
/// newest earlier full run of the same suite on the same machine
/// ([`bench_store::LedgerStore::previous_run`]: `--quick` runs and confirmation re-runs are
/// never a default baseline). `None` when there is no default baseline yet.
///
/// # Errors
/// When `given` matches nothing or a query fails.
pub async fn resolve_baseline(
    ledger: &Ledger,
    head: &StoredRun,
    given: Option<&str>,
    git_dir: Option<&Path>,
) -> Result<Option<StoredRun>, RefError> {
    let id = match given {
        Some(text) => Some(
            refs::resolve(
                ledger,
                &RunRef::parse(text),
                Some(&head.provenance.suite),
                git_dir,
            )
            .await?,
        ),
        // The head side of a paired A/B run is judged against its own base side.
        None => match ledger.pairing_of(head.id).await? {
            Some(pairing) if pairing.head_run == head.id => Some(pairing.base_run),
            _ => ledger.previous_run(head.id).await?,
        },
    };
    match id {
        Some(id) => Ok(Some(ledger.require_run(id).await?)),
        None => Ok(None),
    }
}

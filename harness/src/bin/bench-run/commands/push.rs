//! `--push URL`: a recorded run sent on to a bench-web server ([`harness::push`]).

use super::resolve_run;
use crate::Outcome;
use anyhow::{Result, anyhow};
use harness::ledger::{Ledger, RunId};
use harness::push::{self, PushError, RetryPolicy};
use std::path::Path;

/// The push token: `BENCH_PUSH_TOKEN`.
fn token() -> Option<String> {
    std::env::var("BENCH_PUSH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
}

/// Attempts: `BENCH_PUSH_ATTEMPTS` when set to a positive number, else the default policy's.
fn policy() -> RetryPolicy {
    let mut policy = RetryPolicy::default();
    if let Some(n) = std::env::var("BENCH_PUSH_ATTEMPTS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
    {
        policy.attempts = n;
    }
    policy
}

/// Pushes run `id` to the bench-web server at `url` (`None`: nothing to do). Never fails the
/// command: the run is already in the local ledger, so a failed push is only a warning.
pub(super) async fn push_run(ledger: &Ledger, id: RunId, url: Option<&str>) {
    let Some(url) = url else {
        return;
    };
    let Some(token) = token() else {
        eprintln!(
            "warning: could not push run #{id} to {url}: BENCH_PUSH_TOKEN is not set (the run \
             is kept in the local ledger)"
        );
        return;
    };
    match push::push_run(ledger, id, url, &token, policy()).await {
        Ok(pushed) => eprintln!(
            "bench-run: pushed run #{id} to {url} (run #{} there{})",
            pushed.remote_id,
            if pushed.created {
                ""
            } else {
                ", recorded by an earlier attempt"
            }
        ),
        Err(e @ (PushError::Refused { .. } | PushError::Unreachable { .. })) => eprintln!(
            "warning: could not push run #{id} to {url}: {e} (the run is kept in the local \
             ledger; push it again with `bench-run push {id} --to {url}` later)"
        ),
        Err(e) => eprintln!("warning: could not push run #{id} to {url}: {e}"),
    }
}

/// `bench-run push RUN... --to URL`: exit 0 when every run landed, 1 otherwise.
pub(super) async fn push_runs(
    ledger: &Ledger,
    runs: &[String],
    url: &str,
    cwd: &Path,
) -> Result<Outcome> {
    let token = token().ok_or_else(|| anyhow!("BENCH_PUSH_TOKEN is not set"))?;
    let mut failed = 0;
    for reference in runs {
        let run = resolve_run(ledger, reference, None, cwd).await?;
        match push::push_run(ledger, run.id, url, &token, policy()).await {
            Ok(pushed) => eprintln!(
                "bench-run: run #{} is run #{} on {url}{}",
                run.id,
                pushed.remote_id,
                if pushed.created {
                    " (pushed now)"
                } else {
                    " (it was there already)"
                }
            ),
            Err(e) => {
                failed += 1;
                eprintln!("error: could not push run #{} to {url}: {e}", run.id);
            }
        }
    }
    Ok(if failed == 0 {
        Outcome::Ok
    } else {
        Outcome::PushFailed
    })
}

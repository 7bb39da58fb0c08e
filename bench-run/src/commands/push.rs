//! `--push URL`: a recorded run sent on to a bench-web server ([`bench_client::push`]).

use super::support::resolve_run;
use crate::outcome::Outcome;
use anyhow::{Result, anyhow};
use bench_client::push::{self, PushError, RetryPolicy};
use bench_model::RunId;
use bench_store::Ledger;
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
pub(crate) async fn push_run(ledger: &Ledger, id: RunId, url: Option<&str>) {
    let Some(url) = url else {
        return;
    };
    let url = &super::support::server_url(url);
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

/// Pushes the pair `base`/`head` to `url` and returns the server's compare page; a failure is
/// a warning (the runs stay in the local ledger).
pub(crate) async fn push_pair(
    ledger: &Ledger,
    base: RunId,
    head: RunId,
    url: &str,
) -> Option<String> {
    let url = &super::support::server_url(url);
    let Some(token) = token() else {
        eprintln!(
            "warning: could not push runs #{base} and #{head} to {url}: BENCH_PUSH_TOKEN is not \
             set (they are kept in the local ledger)"
        );
        return None;
    };
    match push::push_pair(ledger, base, head, url, &token, policy()).await {
        Ok(pushed) => {
            // The server's link names the project already.
            let root = url.split("/p/").next().unwrap_or(url);
            let link = format!("{}{}", root.trim_end_matches('/'), pushed.url);
            eprintln!(
                "bench-run: pushed runs #{base} and #{head} to {url} (runs #{} and #{} there): {link}",
                pushed.base, pushed.head
            );
            Some(link)
        }
        Err(e) => {
            eprintln!(
                "warning: could not push runs #{base} and #{head} to {url}: {e} (they are kept \
                 in the local ledger; push them again with `bench-run push {head} --to {url}`)"
            );
            None
        }
    }
}

/// `bench-run push RUN... --to URL`: exit 0 when every run landed, 1 otherwise. A side of a
/// `bench-run ab` goes with its other side and their pairing.
pub(crate) async fn push_runs(
    ledger: &Ledger,
    runs: &[String],
    url: &str,
    cwd: &Path,
) -> Result<Outcome> {
    let url = &super::support::server_url(url);
    let token = token().ok_or_else(|| anyhow!("BENCH_PUSH_TOKEN is not set"))?;
    let mut failed = 0;
    let mut pairs_done = Vec::new();
    for reference in runs {
        let run = resolve_run(ledger, reference, None, cwd).await?;
        if let Some(pairing) = ledger.pairing_of(run.id).await? {
            if pairs_done.contains(&pairing.id) {
                continue;
            }
            pairs_done.push(pairing.id);
            let (base, head) = (pairing.base_run, pairing.head_run);
            match push::push_pair(ledger, base, head, url, &token, policy()).await {
                Ok(pushed) => eprintln!(
                    "bench-run: runs #{base} and #{head} (an ab pair) are runs #{} and #{} on {url}{}",
                    pushed.base,
                    pushed.head,
                    if pushed.created {
                        " (pushed now)"
                    } else {
                        " (they were there already)"
                    }
                ),
                Err(e) => {
                    failed += 1;
                    eprintln!("error: could not push runs #{base} and #{head} to {url}: {e}");
                }
            }
            continue;
        }
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

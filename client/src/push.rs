//! Pushing a recorded run to a team's bench-web server (`bench-run --push URL`).
//!
//! The run goes out in the push format (version 1, the `web` crate's `ingest` module) with
//! `Authorization: Bearer <push token>` and an `Idempotency-Key` of `<this ledger's id>/<run
//! id>`, so a push retried after a lost answer is recorded once on the server. A push is retried
//! with exponential backoff while the server cannot be reached or answers 408, 429 or 5xx; a
//! 4xx answer is final. Whatever happens, the run stays in the local ledger.
//!
//! A run's artifacts (profiles) follow it, one `POST /api/runs/{id}/artifacts` each (the `web`
//! crate's `artifacts` module), with the server's id of the run and of the base run a diff
//! compares against. The client learns the base's id there by pushing it again, as it was
//! pushed before (alone, or with its pairing): the server answers a repeated push with the run
//! it recorded. An artifact push is idempotent by content, so pushing a run again sends only
//! what the server lacks into it, and adds nothing twice.

use bench_model::RunId;
use bench_store::{Ledger, LedgerError};
// The policy lives with the client that applies it; pushes are one of its users.
pub use crate::remote::RetryPolicy;
use crate::remote::{self, Attempt};
use base64::Engine as _;
use bench_model::ArtifactSummary;
use std::collections::BTreeMap;

/// What the server answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// The run's id on the server.
    pub remote_id: i64,
    /// Whether this push recorded it (`false`: an earlier attempt had).
    pub created: bool,
    /// Attempts it took.
    pub attempts: u32,
    /// Its artifacts sent (recorded now or there already).
    pub artifacts: usize,
}

/// Why a push did not land.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The run could not be read from the local ledger.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The server refused it (a 4xx answer other than 408 and 429): retrying cannot help.
    #[error("the server answered {status}: {message}")]
    Refused {
        /// The status code.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// Every attempt failed to reach the server or got a transient error.
    #[error("gave up after {attempts} attempts; last: {last}")]
    Unreachable {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
}

/// The push body of a stored run.
///
/// # Errors
/// When the run cannot be read.
pub async fn push_body(ledger: &Ledger, id: RunId) -> Result<serde_json::Value, LedgerError> {
    let run = ledger.require_run(id).await?;
    let measurements = ledger.measurements(id).await?;
    Ok(serde_json::json!({
        "version": 1,
        "source": run.source,
        "provenance": run.provenance,
        "measurements": measurements,
    }))
}

/// The idempotency key of run `id` of the ledger with identity `ledger_id`.
#[must_use]
pub fn idempotency_key(ledger_id: &str, id: RunId) -> String {
    format!("{ledger_id}/{id}")
}

/// Pushes run `id` of `ledger` to the server at `url` with `token` (module docs).
///
/// # Errors
/// See [`PushError`].
pub async fn push_run(
    ledger: &Ledger,
    id: RunId,
    url: &str,
    token: &str,
    policy: RetryPolicy,
) -> Result<Pushed, PushError> {
    let ((remote_id, created), attempts) = post_run(ledger, id, url, token, policy).await?;
    let mut remote_ids = BTreeMap::from([(id, remote_id)]);
    let artifacts = push_artifacts(ledger, id, &mut remote_ids, url, token, policy).await?;
    Ok(Pushed {
        remote_id,
        created,
        attempts,
        artifacts,
    })
}

/// Posts run `id` alone (`POST /api/runs`): its id there, whether this recorded it, attempts.
async fn post_run(
    ledger: &Ledger,
    id: RunId,
    url: &str,
    token: &str,
    policy: RetryPolicy,
) -> Result<((i64, bool), u32), PushError> {
    let body = push_body(ledger, id).await?;
    let key = idempotency_key(&ledger.ledger_id().await?, id);
    let endpoint = format!("{}/api/runs", url.trim_end_matches('/'));
    post_with_retries(policy, endpoint, token, key, body, |status, answer| {
        answer["id"].as_i64().map(|id| (id, status == 201))
    })
    .await
}

/// What the server answered to a pushed pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedPair {
    /// The base side's id on the server.
    pub base: i64,
    /// The head side's id there.
    pub head: i64,
    /// Their comparison page there, relative to the server's URL.
    pub url: String,
    /// Whether this push recorded them.
    pub created: bool,
    /// Their artifacts sent (recorded now or there already).
    pub artifacts: usize,
}

/// Pushes the two sides of the `bench-run ab` pairing `base`/`head` of `ledger`, with their
/// pairing, to the server at `url` (`POST /api/pairs`, key `<ledger id>/<base>+<head>`).
///
/// # Errors
/// See [`PushError`]; [`LedgerError::Invalid`] when the two runs are not a pair.
pub async fn push_pair(
    ledger: &Ledger,
    base: RunId,
    head: RunId,
    url: &str,
    token: &str,
    policy: RetryPolicy,
) -> Result<PushedPair, PushError> {
    let mut pushed = post_pair(ledger, base, head, url, token, policy).await?;
    let mut remote_ids = BTreeMap::from([(base, pushed.base), (head, pushed.head)]);
    for side in [base, head] {
        pushed.artifacts +=
            push_artifacts(ledger, side, &mut remote_ids, url, token, policy).await?;
    }
    Ok(pushed)
}

/// Posts the pair `base`/`head` alone (`POST /api/pairs`).
async fn post_pair(
    ledger: &Ledger,
    base: RunId,
    head: RunId,
    url: &str,
    token: &str,
    policy: RetryPolicy,
) -> Result<PushedPair, PushError> {
    let pairing = ledger.pairing_between(base, head).await?.ok_or_else(|| {
        LedgerError::Invalid(format!(
            "runs {base} and {head} are not the sides of one ab run"
        ))
    })?;
    let body = serde_json::json!({
        "version": 1,
        "base": push_body(ledger, base).await?,
        "head": push_body(ledger, head).await?,
        "plan": pairing.plan,
    });
    let key = format!("{}/{base}+{head}", ledger.ledger_id().await?);
    let endpoint = format!("{}/api/pairs", url.trim_end_matches('/'));
    let (pushed, _) = post_with_retries(policy, endpoint, token, key, body, |status, answer| {
        Some(PushedPair {
            base: answer["base"].as_i64()?,
            head: answer["head"].as_i64()?,
            url: answer["url"].as_str()?.to_owned(),
            created: status == 201,
            artifacts: 0,
        })
    })
    .await?;
    Ok(pushed)
}

/// The push body of an artifact (the `web` crate's `artifacts::PushedArtifact`, version 1).
#[must_use]
pub fn artifact_body(
    summary: &ArtifactSummary,
    against: Option<i64>,
    bytes: &[u8],
) -> serde_json::Value {
    serde_json::json!({
        "version": 1,
        "benchmark": summary.benchmark,
        "kind": summary.kind,
        "profiler": summary.profiler,
        "against": against,
        "media_type": summary.media_type,
        "sha256": summary.sha256,
        "content_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// Sends the artifacts of local run `run` to the server, where `remote_ids` knows its id; a
/// base run the server's id of which is not known yet is pushed again to learn it (module
/// docs), and remembered. Returns how many were sent.
async fn push_artifacts(
    ledger: &Ledger,
    run: RunId,
    remote_ids: &mut BTreeMap<RunId, i64>,
    url: &str,
    token: &str,
    policy: RetryPolicy,
) -> Result<usize, PushError> {
    let artifacts = ledger.artifacts(run).await?;
    let Some(&remote_run) = remote_ids.get(&run) else {
        return Err(LedgerError::Invalid(format!("run {run} has no id on the server")).into());
    };
    let endpoint = format!(
        "{}/api/runs/{remote_run}/artifacts",
        url.trim_end_matches('/')
    );
    let ledger_id = ledger.ledger_id().await?;
    for summary in &artifacts {
        let against = match summary.against {
            Some(base) => Some(remote_id_of(ledger, base, remote_ids, url, token, policy).await?),
            None => None,
        };
        let stored = ledger
            .artifact(summary.id)
            .await?
            .ok_or_else(|| LedgerError::Corrupt(format!("artifact {} vanished", summary.id)))?;
        let body = artifact_body(summary, against, &stored.bytes);
        // Idempotent by content on the server; the key only names the request in its logs.
        let key = format!("{ledger_id}/artifact/{}", summary.id);
        post_with_retries(policy, endpoint.clone(), token, key, body, |_, answer| {
            answer["id"].as_i64()
        })
        .await?;
    }
    Ok(artifacts.len())
}

/// The server's id of local run `run`: known, or learnt by pushing it again as it was pushed
/// (a side of an ab run with its pairing, any other run alone).
async fn remote_id_of(
    ledger: &Ledger,
    run: RunId,
    remote_ids: &mut BTreeMap<RunId, i64>,
    url: &str,
    token: &str,
    policy: RetryPolicy,
) -> Result<i64, PushError> {
    if let Some(&id) = remote_ids.get(&run) {
        return Ok(id);
    }
    if let Some(pairing) = ledger.pairing_of(run).await? {
        let (base, head) = (pairing.base_run, pairing.head_run);
        let pair = post_pair(ledger, base, head, url, token, policy).await?;
        remote_ids.insert(base, pair.base);
        remote_ids.insert(head, pair.head);
    } else {
        let ((id, _), _) = post_run(ledger, run, url, token, policy).await?;
        remote_ids.insert(run, id);
    }
    remote_ids
        .get(&run)
        .copied()
        .ok_or_else(|| LedgerError::NoSuchRun(run).into())
}

/// `POST`s `body` to `endpoint` with the token and idempotency key, retried by `policy`; `read`
/// takes what it needs from a successful answer (status and JSON). Returns it with the attempts
/// taken.
async fn post_with_retries<T: Send + 'static>(
    policy: RetryPolicy,
    endpoint: String,
    token: &str,
    key: String,
    body: serde_json::Value,
    read: fn(u16, &serde_json::Value) -> Option<T>,
) -> Result<(T, u32), PushError> {
    let token = token.to_owned();
    let answer = remote::with_retries(policy, move || {
        let (endpoint, token, key, body) =
            (endpoint.clone(), token.clone(), key.clone(), body.clone());
        move || {
            let response = remote::agent()
                .post(&endpoint)
                .header("Authorization", &format!("Bearer {token}"))
                .header("Idempotency-Key", &key)
                .send_json(&body)
                .map_err(|e| Attempt::Transient(format!("POST {endpoint}: {e}")))?;
            let (status, answer) = remote::answer(response)?;
            read(status, &answer).ok_or_else(|| Attempt::Final {
                status,
                message: format!("unexpected answer from {endpoint}: {answer}"),
            })
        }
    })
    .await;
    answer.map_err(|e| match e {
        Attempt::Final { status, message } => PushError::Refused { status, message },
        Attempt::Transient(last) => PushError::Unreachable {
            attempts: policy.attempts.max(1),
            last,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_ledger_and_the_run() {
        assert_eq!(idempotency_key("ab12", 7), "ab12/7");
    }
}

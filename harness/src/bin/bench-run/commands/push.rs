//! Pushing a recorded run to a bench-web server (`--push URL`).

use anyhow::{Context, Result, anyhow, bail};
use harness::ledger::{Ledger, RunId};

/// Pushes run `id` to the bench-web server at `url` (`None`: nothing to do). Never fails the
/// command: the run is already in the local ledger, so a failed push is only a warning.
pub(super) async fn push_run(ledger: &Ledger, id: RunId, url: Option<&str>) {
    let Some(url) = url else {
        return;
    };
    match push(ledger, id, url).await {
        Ok(remote) => eprintln!("bench-run: pushed run #{id} to {url} (run #{remote} there)"),
        Err(e) => eprintln!(
            "warning: could not push run #{id} to {url}: {e:#} (the run is kept in the local ledger)"
        ),
    }
}

/// `POST URL/api/runs` with the run in the push format (version 1, described in the `web`
/// crate's `ingest` module) and `Authorization: Bearer $BENCH_PUSH_TOKEN`; returns the run's id
/// on the server.
pub(super) async fn push(ledger: &Ledger, id: RunId, url: &str) -> Result<i64> {
    let token = std::env::var("BENCH_PUSH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| anyhow!("BENCH_PUSH_TOKEN is not set"))?;
    let run = ledger.require_run(id).await?;
    let measurements = ledger.measurements(id).await?;
    let body = serde_json::json!({
        "version": 1,
        "source": run.source,
        "provenance": run.provenance,
        "measurements": measurements,
    });
    let endpoint = format!("{}/api/runs", url.trim_end_matches('/'));
    tokio::task::spawn_blocking(move || post_run(&endpoint, &token, &body))
        .await
        .context("the push task failed")?
}

pub(super) fn post_run(endpoint: &str, token: &str, body: &serde_json::Value) -> Result<i64> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(endpoint)
        .header("Authorization", &format!("Bearer {token}"))
        .send_json(body)
        .with_context(|| format!("POST {endpoint}"))?;
    let status = response.status();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    let answer: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    if !status.is_success() {
        let message = answer
            .as_ref()
            .and_then(|v| v["error"]["message"].as_str())
            .unwrap_or(&text);
        bail!("the server answered {status}: {message}");
    }
    answer
        .and_then(|v| v["id"].as_i64())
        .ok_or_else(|| anyhow!("unexpected answer from {endpoint}: {text}"))
}

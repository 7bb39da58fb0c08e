//! Talking to a team's bench-web server: the HTTP client under `--push` and `--server`.
//!
//! Every request is retried with backoff ([`RetryPolicy`]) while the server
//! cannot be reached or answers 408, 429 or 5xx; any other 4xx answer is final.

use bench_verdicts::evidence::Evidence;
use std::time::Duration;

/// How often and how patiently to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (at least 1).
    pub attempts: u32,
    /// Wait before the second attempt; doubled before each later one.
    pub first_delay: Duration,
    /// Longest wait between two attempts.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 6 attempts over about 15 s (0.5, 1, 2, 4, 8 s between them).
    fn default() -> Self {
        Self {
            attempts: 6,
            first_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `n` (1-based; none before the first).
    #[must_use]
    pub fn delay_before(&self, n: u32) -> Duration {
        if n <= 1 {
            return Duration::ZERO;
        }
        let doublings = (n - 2).min(16);
        self.first_delay
            .saturating_mul(1 << doublings)
            .min(self.max_delay)
    }
}

/// How one attempt failed.
#[derive(Debug)]
pub(crate) enum Attempt {
    /// Worth another try.
    Transient(String),
    /// Another try would get the same answer.
    Final {
        /// The status code.
        status: u16,
        /// The server's message.
        message: String,
    },
}

/// The HTTP agent: a minute per request, statuses read rather than raised.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// A response's status and JSON body; an error status is an [`Attempt`] failure carrying the
/// server's message.
pub(crate) fn answer(
    mut response: ureq::http::Response<ureq::Body>,
) -> Result<(u16, serde_json::Value), Attempt> {
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(512 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| Attempt::Transient(format!("cannot read the answer: {e}")))?;
    let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    if !(200..300).contains(&status) {
        let message = json
            .as_ref()
            .and_then(|v| v["error"]["message"].as_str())
            .unwrap_or(&text)
            .to_owned();
        return Err(if status == 408 || status == 429 || status >= 500 {
            Attempt::Transient(format!("the server answered {status}: {message}"))
        } else {
            Attempt::Final { status, message }
        });
    }
    json.map(|j| (status, j)).ok_or_else(|| Attempt::Final {
        status,
        message: format!(
            "the answer is not JSON: {}",
            text.chars().take(200).collect::<String>()
        ),
    })
}

/// Runs the blocking request `make()` builds, with retries: its result and the attempts taken,
/// or the last failure.
pub(crate) async fn with_retries<T, F, R>(policy: RetryPolicy, make: R) -> Result<(T, u32), Attempt>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, Attempt> + Send + 'static,
    R: Fn() -> F,
{
    let attempts = policy.attempts.max(1);
    let mut last = Attempt::Transient("no attempt made".to_owned());
    for n in 1..=attempts {
        tokio::time::sleep(policy.delay_before(n)).await;
        let result = tokio::task::spawn_blocking(make())
            .await
            .unwrap_or_else(|e| Err(Attempt::Transient(format!("the request task failed: {e}"))));
        match result {
            Ok(value) => return Ok((value, n)),
            Err(final_ @ Attempt::Final { .. }) => return Err(final_),
            Err(transient) => last = transient,
        }
    }
    Err(last)
}

/// A bench-web server, read with an optional read token (needed by a `--private` server).
#[derive(Debug, Clone)]
pub struct Server {
    url: String,
    token: Option<String>,
    policy: RetryPolicy,
}

/// Why a server could not answer.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// It refused (a 4xx answer other than 408 and 429).
    #[error("{url} answered {status}: {message}")]
    Refused {
        /// The server.
        url: String,
        /// The status code.
        status: u16,
        /// Its message.
        message: String,
    },
    /// It could not be reached, or kept failing.
    #[error("{url} could not answer: {last}")]
    Unreachable {
        /// The server.
        url: String,
        /// The last failure.
        last: String,
    },
    /// It answered something that is not evidence.
    #[error("{url} sent an answer this bench-run cannot read: {reason}")]
    Malformed {
        /// The server.
        url: String,
        /// Why.
        reason: String,
    },
}

impl Server {
    /// The server at `url` (e.g. `https://bench.example/`), read with `token` when given.
    #[must_use]
    pub fn new(url: &str, token: Option<String>) -> Self {
        Self {
            url: url.trim_end_matches('/').to_owned(),
            token,
            policy: RetryPolicy::default(),
        }
    }

    /// The evidence on `base` and `head` (references resolved by the server, in `suite` when
    /// given) with `history_runs` runs of history: what the server's ledger holds, as
    /// [`bench_verdicts::evidence::gather`] reads it from a local one.
    ///
    /// # Errors
    /// See [`RemoteError`].
    pub async fn evidence(
        &self,
        base: &str,
        head: &str,
        suite: Option<&str>,
        history_runs: usize,
    ) -> Result<Evidence, RemoteError> {
        let endpoint = format!("{}/api/evidence", self.url);
        let mut query = vec![
            ("base".to_owned(), base.to_owned()),
            ("head".to_owned(), head.to_owned()),
            ("history_runs".to_owned(), history_runs.to_string()),
        ];
        if let Some(suite) = suite {
            query.push(("suite".to_owned(), suite.to_owned()));
        }
        let token = self.token.clone();
        let result = with_retries(self.policy, move || {
            let (endpoint, query, token) = (endpoint.clone(), query.clone(), token.clone());
            move || {
                let mut request = agent().get(&endpoint);
                for (k, v) in &query {
                    request = request.query(k, v);
                }
                if let Some(token) = &token {
                    request = request.header("Authorization", &format!("Bearer {token}"));
                }
                let response = request
                    .call()
                    .map_err(|e| Attempt::Transient(format!("GET {endpoint}: {e}")))?;
                answer(response).map(|(_, json)| json)
            }
        })
        .await;
        let json = match result {
            Ok((json, _)) => json,
            Err(Attempt::Final { status, message }) => {
                return Err(RemoteError::Refused {
                    url: self.url.clone(),
                    status,
                    message,
                });
            }
            Err(Attempt::Transient(last)) => {
                return Err(RemoteError::Unreachable {
                    url: self.url.clone(),
                    last,
                });
            }
        };
        serde_json::from_value(json).map_err(|e| RemoteError::Malformed {
            url: self.url.clone(),
            reason: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let p = RetryPolicy::default();
        let waits: Vec<u64> = (1..=7)
            .map(|n| u64::try_from(p.delay_before(n).as_millis()).unwrap_or(u64::MAX))
            .collect();
        assert_eq!(waits, [0, 500, 1000, 2000, 4000, 8000, 8000]);
        assert_eq!(p.delay_before(u32::MAX), p.max_delay);
    }
}

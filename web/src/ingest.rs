//! `POST /api/runs`: CI runners on many machines push their runs to one server.
//!
//! Disabled unless the server has a push token ([`crate::access`]); then every request must
//! carry `Authorization: Bearer <push token>`.
//!
//! # The format (version 1)
//!
//! The body is what `bench-run --push URL` sends after recording a run: the run as it stands
//! in the pushing ledger, built from the `bench_model` types.
//!
//! ```json
//! {
//!   "version": 1,
//!   "source": "bench-run",                 // model::RunSource, kebab-case
//!   "provenance": { "suite": "...", "package": null, "command": ["bench-run", "..."],
//!                   "cargo_command": null, "cwd": "...",
//!                   "machine": { "fingerprint": "...", "hostname": "...", "cpu_model": "...",
//!                                "physical_cores": 8, "logical_cores": 16,
//!                                "memory_bytes": 34359738368, "os": "...", "kernel": "...",
//!                                "arch": "x86_64" },
//!                   "toolchain": null | { "fingerprint", "rustc_version", "rustc_commit", "host",
//!                                         "llvm_version", "rustc_verbose", "cargo_version" },
//!                   "build": { "profile": "bench", "features": [], "feature_flags": [],
//!                              "rustflags": null },
//!                   "env": {}, "git": { "commit": "...", "branch": "main", "dirty": false,
//!                                       "commit_time": 1767323045, "summary": "..." },
//!                   "cpu_governor": null, "turbo": null, "quick": false, "duration_ms": 1234,
//!                   // optional (absent from older clients; null when not recorded):
//!                   "bench_exe": null | { "sha256": "<64 hex digits>", "bytes": 3581016 },
//!                   "conditions": null | { "cpus": 2, "wall_ms": 5300,
//!                                          "load_start": null | { "one", "five", "fifteen" },
//!                                          "load_end": null | { ... },
//!                                          "own_cpus": 1.0, "others_cpus": 0.03,
//!                                          "steal_pct": 0.0,
//!                                          "per_benchmark": [ { "benchmark": "...",
//!                                              "wall_ms": 1700, "others_cpus": 0.02,
//!                                              "steal_pct": 0.0 } ] } },
//!   "measurements": [ { "benchmark": { "full": "group/function/value", "group": "group",
//!                                      "function": "function", "value": "value" },
//!                       "metric": "time", "unit": "ns", "direction": "lower_is_better",
//!                       "estimate": { "point": 1.0, "lower": 0.9, "upper": 1.1,
//!                                     "confidence_level": 0.95, "standard_error": 0.05 },
//!                       "statistics": { "mean": { ...estimate... }, ... },
//!                       "throughput": null | { "kind": "bytes", "per_iteration": 1024 },
//!                       "samples": null | { "mode": "linear", "iters": [...], "times_ns": [...] } } ]
//! }
//! ```
//!
//! The server validates it (see [`PushedRun::validate`]), records it in one transaction (the
//! server's own `created_at`) and answers `201 Created` with `{"id": <new run id>, "url":
//! "/runs/<id>"}` and a `Location` header, only once the transaction has committed: an
//! acknowledged run is stored.
//!
//! A push may carry an `Idempotency-Key` header (`bench-run` sends `<its ledger's id>/<run
//! id>`): a retry of it (same key, same body) is recorded once, and answered `200 OK` with the
//! run the first push recorded; the same key with another body is refused with 409.
//!
//! Errors: 400 for an invalid body or key (with the reason), 401 without a valid token, 403 for
//! a token that may not push or when ingest is disabled ([`crate::access`]), 409 for a reused
//! key, 413 over [`MAX_BODY_BYTES`].
//!
//! A run's artifacts (profiles) follow it, one `POST /api/runs/{id}/artifacts` each
//! ([`crate::artifacts`]).

use crate::AppState;
use crate::error::AppError;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bench_model::{Measurement, NewRun, RunProvenance, RunSource};
use bench_store::IngestKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::access::Scope;
use crate::extract::Peer;

/// The header naming a push, so that a retry of it is recorded once.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The version of the push format this server reads.
pub const FORMAT_VERSION: u32 = 1;
/// Largest accepted body.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
/// Most results in one pushed run.
pub const MAX_MEASUREMENTS: usize = 100_000;
/// Longest accepted suite, benchmark or metric name, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;

/// A run as pushed by `bench-run --push` (format version 1; see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushedRun {
    /// Format version: [`FORMAT_VERSION`].
    pub version: u32,
    /// Where the results came from.
    pub source: RunSource,
    /// Everything recorded about the run.
    pub provenance: RunProvenance,
    /// The results, with statistics and raw samples.
    pub measurements: Vec<Measurement>,
}

fn check_name(what: &str, name: &str) -> Result<(), AppError> {
    if name.trim().is_empty() {
        return Err(AppError::BadRequest(format!("{what} is empty")));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(AppError::BadRequest(format!(
            "{what} is longer than {MAX_NAME_BYTES} bytes"
        )));
    }
    Ok(())
}

fn check_number(what: &str, value: Option<f64>) -> Result<(), AppError> {
    match value {
        Some(v) if !v.is_finite() => Err(AppError::BadRequest(format!(
            "{what} is not a finite number"
        ))),
        _ => Ok(()),
    }
}

impl PushedRun {
    /// Checks the invariants the ledger and the pages rely on, and turns the run into a
    /// [`NewRun`]. Raw samples were checked when they were read (`Samples` deserializes
    /// through `Samples::new`).
    ///
    /// # Errors
    /// [`AppError::BadRequest`] naming the first problem: another format version, an empty
    /// suite or machine fingerprint, no or too many results, an empty or overlong benchmark or
    /// metric name, a non-finite estimate or bound, invalid samples, an executable hash that is
    /// not 64 hex digits, machine conditions with a negative or non-finite figure.
    pub fn validate(self) -> Result<NewRun, AppError> {
        if self.version != FORMAT_VERSION {
            return Err(AppError::BadRequest(format!(
                "unsupported push format version {} (this server reads version {FORMAT_VERSION})",
                self.version
            )));
        }
        let p = &self.provenance;
        check_name("provenance.suite", &p.suite)?;
        check_name("provenance.machine.fingerprint", &p.machine.fingerprint)?;
        if let Some(exe) = &p.bench_exe {
            exe.check()
                .map_err(|e| AppError::BadRequest(format!("provenance.{e}")))?;
        }
        if let Some(c) = &p.conditions {
            c.check()
                .map_err(|e| AppError::BadRequest(format!("provenance.{e}")))?;
            for (i, b) in c.per_benchmark.iter().enumerate() {
                check_name(
                    &format!("provenance.conditions.per_benchmark[{i}].benchmark"),
                    &b.benchmark,
                )?;
            }
        }
        if self.measurements.is_empty() {
            return Err(AppError::BadRequest(
                "the run has no measurements".to_owned(),
            ));
        }
        if self.measurements.len() > MAX_MEASUREMENTS {
            return Err(AppError::BadRequest(format!(
                "the run has {} measurements, more than {MAX_MEASUREMENTS}",
                self.measurements.len()
            )));
        }
        let mut measurements = Vec::with_capacity(self.measurements.len());
        for (i, m) in self.measurements.into_iter().enumerate() {
            let at = |field: &str| format!("measurements[{i}].{field}");
            check_name(&at("benchmark.full"), &m.benchmark.full)?;
            check_name(&at("metric"), &m.metric)?;
            if m.unit.len() > MAX_NAME_BYTES {
                return Err(AppError::BadRequest(format!("{} is too long", at("unit"))));
            }
            let estimates = std::iter::once(("estimate".to_owned(), &m.estimate)).chain(
                m.statistics
                    .iter()
                    .map(|(s, e)| (format!("statistics.{}", s.name()), e)),
            );
            for (name, e) in estimates {
                check_number(&at(&format!("{name}.point")), Some(e.point))?;
                check_number(&at(&format!("{name}.lower")), e.lower)?;
                check_number(&at(&format!("{name}.upper")), e.upper)?;
                check_number(&at(&format!("{name}.confidence_level")), e.confidence_level)?;
                check_number(&at(&format!("{name}.standard_error")), e.standard_error)?;
            }
            measurements.push(m);
        }
        Ok(NewRun {
            source: self.source,
            provenance: self.provenance,
            measurements,
        })
    }
}

/// What a successful push answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pushed {
    /// The run's id in this server's ledger.
    pub id: i64,
    /// The run's page.
    pub url: String,
}

/// `POST /api/runs`.
///
/// # Errors
/// See the module docs.
pub async fn ingest(
    State(state): State<AppState>,
    Peer(peer): Peer,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    let push = read_push(&state, &headers, peer, body, MAX_BODY_BYTES).await?;
    let pushed: PushedRun = serde_json::from_slice(&push.body)
        .map_err(|e| AppError::BadRequest(format!("invalid run JSON: {e}")))?;
    let run = pushed.validate()?;
    let (id, created) = match &push.key {
        Some(key) => {
            let done = state.ledger().record_run_once(&run, key).await?;
            (done.id, done.created)
        }
        None => (state.ledger().record_run(&run).await?, true),
    };
    if created {
        state.metrics().ingested(1);
        crate::warm::after_push(&state, id);
    }
    tracing::info!(
        token = %push.token,
        run = id,
        key = push.key.as_ref().map(|k| k.key.as_str()),
        created,
        suite = %run.provenance.suite,
        machine = %run.provenance.machine.fingerprint,
        results = run.measurements.len(),
        "ingested run"
    );
    let url = crate::view::href(&format!("/runs/{id}"));
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut response = (
        status,
        Json(Pushed {
            id,
            url: url.clone(),
        }),
    )
        .into_response();
    if let Ok(location) = HeaderValue::from_str(&url) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

/// A push whose client may push: its body, idempotency key and token, and the slot it holds
/// until it is answered.
pub(crate) struct Push {
    /// The body, read whole.
    pub body: axum::body::Bytes,
    /// The idempotency key with the body's digest, when one was sent.
    pub key: Option<IngestKey>,
    /// The name of the token that allowed it (for the log).
    pub token: String,
    _slot: tokio::sync::OwnedSemaphorePermit,
}

/// Checks the push token (throttling an address that presented too many wrong ones), takes a
/// push slot, then reads the body (never more than `limit` bytes, nor for longer than the body
/// timeout) and the idempotency key with the body's digest.
pub(crate) async fn read_push(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<std::net::IpAddr>,
    body: Body,
    limit: usize,
) -> Result<Push, AppError> {
    let token = state
        .authorize(headers, peer, Scope::Push)?
        .unwrap_or_default();
    let key = idempotency_key(headers)?;
    let slot = state.push_slots().take()?;
    // Read the body only once the client is known, and never more than the limit.
    let timeout = state.limits().body_timeout;
    let body = tokio::time::timeout(timeout, axum::body::to_bytes(body, limit))
        .await
        .map_err(|_| AppError::BodyTimeout(timeout.as_secs()))?
        .map_err(|e| {
            let too_large = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if too_large {
                AppError::PayloadTooLarge(limit)
            } else {
                AppError::BadRequest(format!("cannot read the request body: {e}"))
            }
        })?;
    let key = key.map(|key| IngestKey {
        key,
        content_sha256: hex(&Sha256::digest(&body)),
    });
    Ok(Push {
        body,
        key,
        token,
        _slot: slot,
    })
}

/// The two sides of a paired A/B run as `bench-run ab --push` sends them (`POST /api/pairs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushedPair {
    /// Format version: [`FORMAT_VERSION`].
    pub version: u32,
    /// The base side, in the push format of one run.
    pub base: PushedRun,
    /// The head side.
    pub head: PushedRun,
    /// The layout of the rounds.
    pub plan: bench_store::PairingPlan,
}

/// What a pushed pair answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedPairAnswer {
    /// The base side's id here.
    pub base: i64,
    /// The head side's id here.
    pub head: i64,
    /// Their comparison page.
    pub url: String,
}

/// `POST /api/pairs`: both sides of a `bench-run ab` and their pairing, in one transaction,
/// once per idempotency key (as `POST /api/runs`).
///
/// # Errors
/// As [`ingest`].
pub async fn ingest_pair(
    State(state): State<AppState>,
    Peer(peer): Peer,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    let push = read_push(&state, &headers, peer, body, MAX_BODY_BYTES).await?;
    let pushed: PushedPair = serde_json::from_slice(&push.body)
        .map_err(|e| AppError::BadRequest(format!("invalid pair JSON: {e}")))?;
    if pushed.version != FORMAT_VERSION {
        return Err(AppError::BadRequest(format!(
            "unsupported push format version {} (this server reads version {FORMAT_VERSION})",
            pushed.version
        )));
    }
    let base = pushed.base.validate()?;
    let head = pushed.head.validate()?;
    let (ids, created) = match &push.key {
        Some(key) => {
            let done = state
                .ledger()
                .record_pair_once(&base, &head, &pushed.plan, key)
                .await?;
            ((done.base, done.head), done.created)
        }
        None => (
            state
                .ledger()
                .record_pair(&base, &head, &pushed.plan)
                .await?,
            true,
        ),
    };
    if created {
        state.metrics().ingested(2);
    }
    tracing::info!(
        token = %push.token,
        base = ids.0,
        head = ids.1,
        key = push.key.as_ref().map(|k| k.key.as_str()),
        created,
        "ingested an A/B pair"
    );
    let url = crate::view::href(&format!("/compare?base={}&head={}", ids.0, ids.1));
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(PushedPairAnswer {
            base: ids.0,
            head: ids.1,
            url,
        }),
    )
        .into_response())
}

/// The `Idempotency-Key` header, when sent.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    let key = value.to_str().map(str::trim).unwrap_or_default();
    IngestKey::check_key(key)
        .map_err(|e| AppError::BadRequest(format!("{IDEMPOTENCY_KEY}: {e}")))?;
    Ok(Some(key.to_owned()))
}

/// Lowercase hex digits of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

//! Artifacts (profiles) over HTTP: `GET /artifacts/{id}` serves one, `GET
//! /api/runs/{ref}/artifacts` lists a run's, and `POST /api/runs/{id}/artifacts` pushes one to
//! a team server.
//!
//! # Serving, and why this content security policy
//!
//! An artifact is served with the one media type its kind has ([`ArtifactKind::media_type`]:
//! never HTML, whatever a client pushed), `X-Content-Type-Options: nosniff` and `Cache-Control:
//! immutable` (an id never changes its bytes in an append-only ledger).
//!
//! A flamegraph from inferno is an SVG document with an inline script (click to zoom, search)
//! started by an `onload` attribute. The pages embed it with `<img>`: an SVG as an image never
//! runs scripts, and the pages keep their own policy of no scripts at all. Opened directly (the
//! link under each image), the SVG gets [`SVG_CONTENT_SECURITY_POLICY`]:
//!
//! - `script-src 'unsafe-inline'` lets inferno's inline script and its `onload` handler run (a
//!   hash could not allow an event-handler attribute);
//! - `sandbox allow-scripts` runs it in an opaque origin: a hostile SVG pushed with a leaked push
//!   token can script only itself. It cannot read this server's pages (they are another origin
//!   to it), its cookies or storage; `default-src 'none'` leaves it no fetch, no connection and no
//!   external resource;
//! - `frame-ancestors 'none'`: no other site frames it.
//!
//! Folded stacks and function counts get the pages' policy plus `sandbox` (no scripts at all).
//!
//! # Pushing (format version 1)
//!
//! `bench-run push` (and `--push`) sends a run's artifacts after the run, one request each, with
//! the server's ids of the run and of its base run (which it learns by pushing those runs
//! again: their pushes are idempotent):
//!
//! ```json
//! {
//!   "version": 1,
//!   "benchmark": "group/function/value",
//!   "kind": "folded" | "flamegraph" | "diff-flamegraph" | "function-counts",
//!   "profiler": "perf" | "callgrind" | "pprof",
//!   "against": null | 12,                       // the base run's id on this server
//!   "media_type": "image/svg+xml",              // the kind's media type
//!   "sha256": "<64 lowercase hex digits of the content>",
//!   "content_base64": "<the content, standard base64 with padding>"
//! }
//! ```
//!
//! Answers: `201 Created` with `{"id", "url": "/artifacts/<id>"}` when recorded, `200 OK` with
//! the same when that content was there already (a retry, or a second push of the run):
//! recording is idempotent by content. 400 for a malformed body, base64 or content (with the
//! reason), a digest that does not match the content (corrupted in transit), a media type that
//! is not the kind's; 404 for an unknown run or base run; 413 for a body over
//! [`MAX_ARTIFACT_BODY_BYTES`] or content over [`MAX_ARTIFACT_BYTES`]; 401/403 as every push.

use crate::AppState;
use crate::error::AppError;
use crate::extract::{Path, Peer};
use crate::ingest;
use crate::pages::resolve_run;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use bench_model::{ArtifactKind, ArtifactSummary, MAX_ARTIFACT_BYTES, NewArtifact};
use serde::{Deserialize, Serialize};

/// Content security policy of an SVG artifact opened directly (module docs).
pub const SVG_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; \
     style-src 'unsafe-inline'; img-src data:; sandbox allow-scripts; frame-ancestors 'none'";

/// Content security policy of any other artifact: nothing runs.
pub const OTHER_CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; sandbox; frame-ancestors 'none'";

/// Largest body of an artifact push: the content's base64 (4 characters per 3 bytes) and room
/// for the other fields.
pub const MAX_ARTIFACT_BODY_BYTES: usize = MAX_ARTIFACT_BYTES.div_ceil(3) * 4 + 64 * 1024;

/// The `Content-Type` an artifact of `kind` is served with.
#[must_use]
pub const fn content_type(kind: ArtifactKind) -> &'static str {
    match kind {
        ArtifactKind::FoldedStacks => "text/plain; charset=utf-8",
        ArtifactKind::Flamegraph | ArtifactKind::DiffFlamegraph => "image/svg+xml",
        ArtifactKind::FunctionCounts => "application/json",
    }
}

/// The URL of artifact `id`.
#[must_use]
pub fn artifact_href(id: i64) -> String {
    crate::view::href(&format!("/artifacts/{id}"))
}

/// `GET /artifacts/{id}`.
///
/// # Errors
/// 400 for an id that is not a number, 404 for an unknown one.
pub async fn serve(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let id: i64 = id
        .parse()
        .map_err(|_| AppError::BadRequest(format!("an artifact id is a number, got {id:?}")))?;
    let stored = state
        .ledger()
        .artifact(id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("no artifact with id {id}")))?;
    let kind = stored.summary.kind;
    let policy = match kind {
        ArtifactKind::Flamegraph | ArtifactKind::DiffFlamegraph => SVG_CONTENT_SECURITY_POLICY,
        ArtifactKind::FoldedStacks | ArtifactKind::FunctionCounts => OTHER_CONTENT_SECURITY_POLICY,
    };
    let etag = format!("\"{}\"", stored.summary.sha256);
    let mut response = (
        [
            (header::CONTENT_TYPE, content_type(kind)),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, policy),
            (
                header::CACHE_CONTROL,
                "private, max-age=31536000, immutable",
            ),
        ],
        stored.bytes,
    )
        .into_response();
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, etag);
    }
    Ok(response)
}

/// `GET /api/runs/{ref}/artifacts`: `{"run": <id>, "artifacts": [summary with "url"]}`.
///
/// # Errors
/// As the run's page.
pub async fn list(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Json<serde_json::Value>, AppError> {
    let run = resolve_run(&state, &reference, None).await?;
    let artifacts: Vec<serde_json::Value> = state
        .ledger()
        .artifacts(run.id)
        .await?
        .into_iter()
        .map(|a| {
            let url = artifact_href(a.id);
            let mut v = serde_json::to_value(a).unwrap_or_default();
            if let Some(obj) = v.as_object_mut() {
                obj.insert("url".to_owned(), url.into());
            }
            v
        })
        .collect();
    Ok(Json(
        serde_json::json!({ "run": run.id, "artifacts": artifacts }),
    ))
}

/// An artifact as pushed (format version 1; module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushedArtifact {
    /// Format version: [`ingest::FORMAT_VERSION`].
    pub version: u32,
    /// The benchmark's full id.
    pub benchmark: String,
    /// What it holds.
    pub kind: ArtifactKind,
    /// The tool that produced it.
    pub profiler: String,
    /// The base run's id on the server.
    pub against: Option<i64>,
    /// The kind's media type.
    pub media_type: String,
    /// SHA-256 of the content, 64 lowercase hex digits.
    pub sha256: String,
    /// The content, standard base64.
    pub content_base64: String,
}

impl PushedArtifact {
    /// The push body of an artifact of `summary` with `bytes`, its base named by `against`.
    #[must_use]
    pub fn new(summary: &ArtifactSummary, against: Option<i64>, bytes: &[u8]) -> Self {
        Self {
            version: ingest::FORMAT_VERSION,
            benchmark: summary.benchmark.clone(),
            kind: summary.kind,
            profiler: summary.profiler.clone(),
            against,
            media_type: summary.media_type.clone(),
            sha256: summary.sha256.clone(),
            content_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Decodes and checks the content against its digest, and turns it into an artifact of
    /// run `run` (the ledger checks the rest: sizes, media type, content).
    ///
    /// # Errors
    /// [`AppError::BadRequest`] for another version, invalid base64 or a digest that does not
    /// match; [`AppError::PayloadTooLarge`] for content over [`MAX_ARTIFACT_BYTES`].
    pub fn validate(self, run: i64) -> Result<NewArtifact, AppError> {
        if self.version != ingest::FORMAT_VERSION {
            return Err(AppError::BadRequest(format!(
                "unsupported push format version {} (this server reads version {})",
                self.version,
                ingest::FORMAT_VERSION
            )));
        }
        // Refused before decoding: base64 holds 3 bytes in 4 characters.
        if self.content_base64.len() / 4 * 3 > MAX_ARTIFACT_BYTES + 3 {
            return Err(AppError::PayloadTooLarge(MAX_ARTIFACT_BYTES));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(self.content_base64.as_bytes())
            .map_err(|e| AppError::BadRequest(format!("content_base64 is not base64: {e}")))?;
        let digest = ingest::hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        if digest != self.sha256 {
            return Err(AppError::BadRequest(format!(
                "the content ({} bytes) does not match its sha256 (corrupted in transit?)",
                bytes.len()
            )));
        }
        Ok(NewArtifact {
            run,
            benchmark: self.benchmark,
            kind: self.kind,
            profiler: self.profiler,
            against: self.against,
            media_type: self.media_type,
            bytes,
        })
    }
}

/// What an artifact push answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedArtifactAnswer {
    /// The artifact's id here.
    pub id: i64,
    /// Where it is served.
    pub url: String,
}

/// `POST /api/runs/{id}/artifacts` (module docs).
///
/// # Errors
/// See the module docs.
pub async fn ingest(
    State(state): State<AppState>,
    Path(run): Path<String>,
    Peer(peer): Peer,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    let push = ingest::read_push(&state, &headers, peer, body, MAX_ARTIFACT_BODY_BYTES).await?;
    let run: i64 = run.parse().map_err(|_| {
        AppError::BadRequest(format!("artifacts are pushed to a run id, got {run:?}"))
    })?;
    let pushed: PushedArtifact = serde_json::from_slice(&push.body)
        .map_err(|e| AppError::BadRequest(format!("invalid artifact JSON: {e}")))?;
    let artifact = pushed.validate(run)?;
    let done = state.ledger().record_artifact_once(&artifact).await?;
    tracing::info!(
        token = %push.token,
        artifact = done.id,
        run,
        created = done.created,
        kind = %artifact.kind,
        bytes = artifact.bytes.len(),
        "ingested an artifact"
    );
    let url = artifact_href(done.id);
    let status = if done.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut response = (
        status,
        Json(PushedArtifactAnswer {
            id: done.id,
            url: url.clone(),
        }),
    )
        .into_response();
    if let Ok(location) = HeaderValue::from_str(&url) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

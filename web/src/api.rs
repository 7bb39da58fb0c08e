//! The JSON API: the pages' data for scripts, and the ingest endpoint.
//!
//! | route | body |
//! |---|---|
//! | `GET /api/runs?suite=&machine=&branch=&commit=&page=&per_page=` | `{"runs": [...], "page", "per_page", "next_page"}`; each run as in `bench-run list --format json` |
//! | `GET /api/runs/{ref}` | `bench-run show --format json`: `{"run": {...}, "results": [...]}` |
//! | `GET /api/compare?base=&head=&threshold=` | `bench-run compare --format json`, plus `mismatches`, `warnings` (a quick run meets a full one) and `threshold_pct` |
//! | `GET /api/suites/{suite}/trend?machine=&runs=&page=&per_page=` | [`crate::trend::Trend`]: series with points, change points and noise floors, 50 series a page (`series_total`, `page`, `per_page`, `next_page`) |
//! | `GET /api/evidence?base=&head=&suite=&history_runs=` | [`bench_verdicts::evidence::Evidence`]: both runs with their results, the head's history and whether they are paired: what `bench-run gate --server` decides on |
//! | `GET /api/testbeds` | `{"testbeds": [{"name", "testbed", "fingerprint", "cpu_model", "os", "runs", "latest_run"}]}`: every machine with runs; `testbed` is the `BENCH_MACHINE` name, `null` for a machine known by its hardware, and `name` is what `?testbed=` and `?machine=` take |
//! | `POST /api/runs` | ingest ([`crate::ingest`]) |
//! | `GET /api/runs/{ref}/artifacts` | `{"run": <id>, "artifacts": [{"id", "run", "benchmark", "kind", "profiler", "against", "media_type", "size", "sha256", "created_at", "url"}]}` |
//! | `POST /api/runs/{id}/artifacts` | push of one artifact of a run ([`crate::artifacts`]) |
//! | `POST /api/pairs` | ingest of both sides of a `bench-run ab` and their pairing ([`crate::ingest::ingest_pair`]) |
//!
//! Errors are `{"error": {"status": 404, "message": "..."}}` with the same status codes as the
//! pages (see [`crate::error`]).

use crate::AppState;
use crate::artifacts;
use crate::error::{AppError, PublicError};
use crate::extract::{Path, Query};
use crate::ingest;
use crate::pages::compare::{CompareParams, compare_view_json};
use crate::pages::runs::{RunsParams, list};
use crate::pages::suites::{TrendParams, trend_shows};
use crate::pages::{JSON, kept, kept_until_recorded, resolve_run, respond};
use crate::trend;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router, middleware};
use serde_json::{Value, json};

/// The `/api` routes (nested under `/api` by [`crate::app`]).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/runs", get(runs).post(ingest::ingest))
        .route("/pairs", axum::routing::post(ingest::ingest_pair))
        .route("/runs/{run}", get(run))
        .route(
            "/runs/{run}/artifacts",
            get(artifacts::list).post(artifacts::ingest),
        )
        .route("/compare", get(compare))
        .route("/suites/{suite}/trend", get(trend))
        .route("/evidence", get(evidence))
        .route("/testbeds", get(testbeds))
        .fallback(not_found)
        .layer(middleware::map_response(json_errors))
}

/// Turns the app's HTML error responses into JSON ones, keeping status and headers.
async fn json_errors(response: Response) -> Response {
    let Some(public) = response.extensions().get::<PublicError>().cloned() else {
        return response;
    };
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = json!({"error": {"status": public.status.as_u16(), "message": public.message}});
    Response::from_parts(parts, Body::from(body.to_string()))
}

async fn not_found(uri: axum::http::Uri) -> AppError {
    AppError::NotFound(format!("no API endpoint at {}", uri.path()))
}

async fn runs(
    State(state): State<AppState>,
    Query(params): Query<RunsParams>,
) -> Result<Response, AppError> {
    kept_until_recorded(&state, format!("/api/runs {params:?}"), JSON, async {
        let page = list(&state.ledger(), &params).await?;
        encode(&json!({
            "runs": page.runs,
            "page": page.page,
            "per_page": page.per_page,
            "next_page": page.has_next.then_some(page.page + 1),
        }))
    })
    .await
}

/// `value` as the bytes of a JSON answer.
fn encode(value: &impl serde::Serialize) -> Result<Bytes, AppError> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| AppError::Internal(format!("cannot encode the answer: {e}")))
}

async fn run(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Json<Value>, AppError> {
    let run = resolve_run(&state, &reference, None).await?;
    let results = state.ledger().measurements(run.id).await?;
    Ok(Json(json!({
        "run": bench_report::run_json(&run),
        "results": results.iter().map(bench_report::measurement_json).collect::<Vec<_>>(),
    })))
}

async fn compare(
    State(state): State<AppState>,
    Query(params): Query<CompareParams>,
) -> Result<Json<Value>, AppError> {
    Ok(Json(compare_view_json(&state, &params).await?))
}

async fn trend(
    State(state): State<AppState>,
    Path(suite): Path<String>,
    Query(params): Query<TrendParams>,
) -> Result<Response, AppError> {
    let trend = trend::load(
        &state.ledger(),
        state.trend_cache(),
        &suite,
        &params.machine(),
        params.runs()?,
        params.page()?,
    )
    .await?;
    // Kept as the trend page is: encoding 50 series of 1,250 points costs more than the rest.
    let answer = format!("/api/suites/{suite}/trend {params:?}");
    let shown = trend_shows(&trend);
    kept(&state, answer, shown, JSON, async { encode(&trend) }).await
}

/// The query of `GET /api/evidence`.
#[derive(Debug, serde::Deserialize)]
pub struct EvidenceParams {
    /// The base run's reference.
    pub base: String,
    /// The head run's reference.
    pub head: String,
    /// The suite references are resolved in.
    pub suite: Option<String>,
    /// Runs of history (default: the gate's).
    pub history_runs: Option<usize>,
}

/// Most runs of history one request may ask for.
pub const MAX_HISTORY_RUNS: usize = 1000;

async fn evidence(
    State(state): State<AppState>,
    Query(params): Query<EvidenceParams>,
) -> Result<Response, AppError> {
    let history_runs = params
        .history_runs
        .unwrap_or_else(|| bench_analysis::compare::CompareConfig::default().history_runs());
    if history_runs > MAX_HISTORY_RUNS {
        return Err(AppError::BadRequest(format!(
            "history_runs is at most {MAX_HISTORY_RUNS}"
        )));
    }
    let (base, head) = bench_verdicts::baseline::resolve_pair(
        &state.ledger(),
        &params.base,
        &params.head,
        params.suite.as_deref(),
        state.git_dir(),
    )
    .await?;
    let key = (
        state.ledger().project().to_string(),
        base.id,
        head.id,
        history_runs,
    );
    let json = state
        .evidence_cache()
        .get_or_compute(key, async {
            let evidence =
                bench_verdicts::evidence::gather(&state.ledger(), &base, &head, history_runs)
                    .await?;
            encode(&evidence)
        })
        .await?;
    Ok(respond(JSON, Bytes::clone(&json)))
}

async fn testbeds(State(state): State<AppState>) -> Result<Json<Value>, AppError> {
    let machines = state.ledger().machines(None).await?;
    let list: Vec<Value> = machines
        .iter()
        .map(|m| {
            json!({
                "name": m.testbed.clone().unwrap_or_else(|| m.fingerprint.clone()),
                "testbed": m.testbed,
                "fingerprint": m.fingerprint,
                "cpu_model": m.cpu_model,
                "os": m.os,
                "runs": m.runs,
                "latest_run": m.latest_run,
            })
        })
        .collect();
    Ok(Json(json!({ "testbeds": list })))
}

//! `GET /healthz` (whether the ledger answers) and `GET /metrics` (the server's counters,
//! [`crate::metrics`]), and the middleware that feeds the counters.

use crate::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Instant;

/// Times and counts every request (a middleware over the routes, so the matched route is
/// known).
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = request.method().as_str().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics().observe(
        &route,
        &method,
        response.status(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics().render(),
    )
}

/// `GET /healthz`: 200 when the ledger answers a query, else 503 (for load balancers and
/// orchestrators; never needs a token).
pub async fn healthz(State(state): State<AppState>) -> Response {
    match state.ledger().latest_run(None).await {
        Ok(_) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"status": "ok", "ledger": "reachable"})),
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check: the ledger does not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"status": "unavailable", "ledger": "unreachable"})),
            )
                .into_response()
        }
    }
}

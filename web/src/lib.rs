//! # web
//!
//! `bench-web`: the ledger of `bench-run`, read with eyes. A server-rendered axum app (every
//! page works without JavaScript) with:
//!
//! | route | what |
//! |---|---|
//! | `/` | dashboard: suites, the newest run per suite and machine, its regressions against its baseline |
//! | `/runs` | runs, filtered by suite, machine, branch and commit, paginated |
//! | `/runs/{ref}` | one run: provenance, results, tags, annotations |
//! | `/compare?base=&head=` | the before/after table with confidence intervals, noise floors, verdicts, geomean, the annotations of the span compared, markdown to copy |
//! | `/artifacts/{id}` | one artifact of a run (a flamegraph, folded stacks, function counts), see [`artifacts`] |
//! | `/suites/{suite}` | one SVG trend chart per benchmark with confidence band, change points and annotations |
//! | `/api/...` | the same data as JSON, and `POST /api/runs` to ingest runs (see [`ingest`]) |
//! | `/healthz`, `/metrics` | whether the ledger answers; counters and latencies for Prometheus ([`health`], [`metrics`]) |
//!
//! Who may push and read: [`access`] (tokens with scopes; reads open unless private). What
//! keeps one client from taking the server: [`limits`]; the connections, their timeouts and
//! TLS: [`serve`].
//!
//! Layers: `bench-verdicts` resolves runs and gathers evidence from the ledger (the same use
//! cases as `bench-run`), `bench-analysis` does every statistic
//! ([`bench_analysis::compare`], and [`bench_analysis::noise`] with its change points from
//! [`bench_analysis::changepoint`], the same ones `bench-run gate` uses), [`trend`] shapes
//! histories, [`chart`] draws them (log axes labelled at [`ticks`]), and the page modules only turn results into templates. [`app`] builds the whole router; `main` and the tests
//! share it.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use bench_store::Ledger;
//! let ledger = Ledger::open_read_only(std::path::Path::new("results/ledger.sqlite")).await?;
//! let app = web::app(web::AppState::new(ledger));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let options = web::serve::ServeOptions::default();
//! web::serve::serve(listener, app, options, std::future::pending()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Glossary
//!
//! - **ref**: a run reference as `bench-run` takes it: an id, `latest`, `previous`, a tag or a
//!   git revision ([`bench_verdicts::refs`]).
//! - **baseline** of a run: the previous run of the same suite on the same machine.
//! - **series**: the headline estimates of one benchmark and metric over the runs of a suite on
//!   one machine, in commit order ([`trend::Series`]).
//! - **change point**: a run at which a series' level moved by more than its noise
//!   ([`bench_analysis::changepoint`], found by the noise model [`bench_analysis::noise`]).

#![deny(missing_docs)]

pub mod access;
pub mod api;
pub mod artifacts;
pub mod chart;
pub mod error;
mod extract;
pub mod health;
pub mod ingest;
pub mod kept;
pub mod limits;
pub mod metrics;
pub(crate) mod pages;
pub mod project;
pub mod serve;
mod state;
pub mod ticks;
pub mod trend;
mod view;
pub mod warm;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use std::time::Duration;
use tower_http::compression::CompressionLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

pub use error::AppError;
pub use state::{AppState, TREND_CACHE_CAPACITY};

/// How long a request may take before the server answers 503.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Content security policy of every response but an artifact's ([`artifacts`]): no scripts at
/// all, styles from this server only. Even a template that forgot to escape could not run a
/// script.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
     form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The stylesheet, embedded.
const STYLE_CSS: &str = include_str!("../static/style.css");

async fn style() -> impl axum::response::IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE_CSS,
    )
}

async fn not_found(uri: axum::http::Uri) -> AppError {
    AppError::NotFound(format!("no page at {}", uri.path()))
}

/// On a private server, every request but a push, the stylesheet and the health check needs a
/// read token.
async fn require_read(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Result<Response, AppError> {
    let path = request.uri().path();
    // Every POST under /api is a push, which checks its push token itself.
    let exempt = (request.method() == Method::POST && path.starts_with("/api/"))
        || path == "/static/style.css"
        || path == "/healthz";
    if !exempt {
        let peer = extract::Peer::of(request.extensions());
        state.authorize(request.headers(), peer, access::Scope::Read)?;
    }
    Ok(next.run(request).await)
}

/// The whole application: pages, the JSON API, the stylesheet, and the layers every response
/// goes through (tracing, compression, security headers, a timeout). Every path is served in
/// a project: `/p/{project}/...`, or the default project for the paths without the prefix
/// ([`project`]).
pub fn app(state: AppState) -> Router {
    let routes = project_routes(state);
    let in_project = tower::service_fn(move |request: Request| {
        let routes = routes.clone();
        async move { Ok::<_, std::convert::Infallible>(project::enter(routes, request).await) }
    });
    Router::new()
        .fallback_service(in_project)
        .layer(CompressionLayer::new())
        // A response with a policy of its own keeps it (an SVG artifact's, see [`artifacts`]).
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            REQUEST_TIMEOUT,
        ))
        .layer(TraceLayer::new_for_http())
}

/// The routes of one project, with who may read them and the counters.
fn project_routes(state: AppState) -> Router {
    Router::new()
        .merge(pages::router())
        .nest("/api", api::router())
        .route("/static/style.css", get(style))
        .route("/artifacts/{id}", get(artifacts::serve))
        .route("/healthz", get(health::healthz))
        .route("/metrics", get(health::metrics))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), require_read))
        .layer(middleware::from_fn_with_state(state.clone(), health::track))
        .with_state(state)
}

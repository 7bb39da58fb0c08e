//! What the page handlers share, with the API's and the artifacts' handlers: rendering a
//! template, keeping a drawn page, and resolving a run reference. Below them and the page
//! router (mod.rs), which re-exports them.

use crate::AppState;
use crate::error::AppError;
use askama::Template;
use axum::body::Bytes;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use bench_model::StoredRun;
use std::hash::{Hash, Hasher};

/// Renders a template into a 200 page.
pub fn render<T: Template>(template: &T) -> Result<Html<String>, AppError> {
    Ok(Html(template.render()?))
}

/// The content type of a page.
pub const HTML: &str = "text/html; charset=utf-8";
/// The content type of an API answer.
pub const JSON: &str = "application/json";

/// The page `page` (its path and query, as the handler names it), drawn by `draw` once and
/// kept while `shows` (a hash of [`shows`]: whatever else of the ledger it shows) stays the
/// same. Pages of stored runs change only where the ledger can still add something (a tag, a
/// note, a profile, a newer run of the line), so at 1,000 benchmarks a view is a lookup, not
/// a re-read of every result and a re-render of every row.
pub async fn drawn<F>(
    state: &AppState,
    page: String,
    shows: u64,
    draw: F,
) -> Result<Response, AppError>
where
    F: Future<Output = Result<Html<String>, AppError>>,
{
    kept(state, page, shows, HTML, async {
        draw.await.map(|html| Bytes::from(html.0))
    })
    .await
}

/// The answer `page` (a page or an API answer, of `content_type`) as [`drawn`] keeps it,
/// kept until anything is recorded in the ledger ([`bench_store::LedgerStore::stamp`], read
/// before the answer is computed): for answers that summarise many runs (the run lists, a
/// suite's trend), where checking what changed would cost what answering does.
pub async fn kept_until_recorded<F>(
    state: &AppState,
    page: String,
    content_type: &'static str,
    answer: F,
) -> Result<Response, AppError>
where
    F: Future<Output = Result<Bytes, AppError>>,
{
    let stamp = state.ledger().stamp().await?;
    kept(state, page, shows(&stamp), content_type, answer).await
}

/// `answer` (of `content_type`) kept under (project, `page`, `shows`), as [`drawn`] keeps a
/// page.
pub async fn kept<F>(
    state: &AppState,
    page: String,
    shows: u64,
    content_type: &'static str,
    answer: F,
) -> Result<Response, AppError>
where
    F: Future<Output = Result<Bytes, AppError>>,
{
    let key = (state.ledger().project().to_string(), page, shows);
    let bytes = state.drawn_pages().get_or_compute(key, answer).await?;
    Ok(respond(content_type, Bytes::clone(&bytes)))
}

/// A 200 answer of `content_type`.
#[must_use]
pub fn respond(content_type: &'static str, bytes: Bytes) -> Response {
    ([(header::CONTENT_TYPE, content_type)], bytes).into_response()
}

/// A hash of what a drawn page shows besides its query ([`drawn`]).
#[must_use]
pub fn shows(what: &impl Hash) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    what.hash(&mut hasher);
    hasher.finish()
}

/// Resolves a run reference as `bench-run` does (id, `latest`, `previous`, tag, git revision),
/// narrowing `latest`, `previous` and git revisions to `suite` when given.
pub async fn resolve_run(
    state: &AppState,
    text: &str,
    suite: Option<&str>,
) -> Result<StoredRun, AppError> {
    Ok(
        bench_verdicts::baseline::resolve_run(&state.ledger(), text, suite, state.git_dir())
            .await?,
    )
}

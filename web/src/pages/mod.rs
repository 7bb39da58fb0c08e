//! The HTML pages. Each module has its own `router()`; they are merged here.

pub(crate) mod compare;
pub(crate) mod dashboard;
pub(crate) mod profiles;
pub(crate) mod runs;
pub(crate) mod suites;

use crate::AppState;
use crate::error::AppError;
use askama::Template;
use axum::Router;
use axum::response::Html;
use harness::ledger::StoredRun;

/// All page routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(dashboard::router())
        .merge(runs::router())
        .merge(compare::router())
        .merge(suites::router())
}

/// Renders a template into a 200 page.
pub fn render<T: Template>(template: &T) -> Result<Html<String>, AppError> {
    Ok(Html(template.render()?))
}

/// Resolves a run reference as `bench-run` does (id, `latest`, `previous`, tag, git revision),
/// narrowing `latest`, `previous` and git revisions to `suite` when given.
pub async fn resolve_run(
    state: &AppState,
    text: &str,
    suite: Option<&str>,
) -> Result<StoredRun, AppError> {
    Ok(harness::baseline::resolve_run(state.ledger(), text, suite, state.git_dir()).await?)
}

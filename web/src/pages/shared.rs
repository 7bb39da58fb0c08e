//! What the page handlers share, with the API's and the artifacts' handlers: rendering a
//! template and resolving a run reference. Below them and the page router (mod.rs), which
//! re-exports both.

use crate::AppState;
use crate::error::AppError;
use askama::Template;
use axum::response::Html;
use bench_model::StoredRun;

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
    Ok(
        bench_verdicts::baseline::resolve_run(&state.ledger(), text, suite, state.git_dir())
            .await?,
    )
}

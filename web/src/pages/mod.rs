//! The HTML pages. Each module has its own `router()`; they are merged here.

pub(crate) mod compare;
pub(crate) mod dashboard;
pub(crate) mod profiles;
pub(crate) mod runs;
mod shared;
pub(crate) mod suites;

use crate::AppState;
use axum::Router;
pub use shared::{
    HTML, JSON, drawn, kept, kept_until_recorded, render, resolve_run, respond, shows,
};

/// All page routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(dashboard::router())
        .merge(runs::router())
        .merge(compare::router())
        .merge(suites::router())
}

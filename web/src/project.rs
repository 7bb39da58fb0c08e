//! Which project a request reads and writes: `/p/{project}/...` names it; every other path is
//! the default project's (so a single team's URLs, and pushes from older clients, work as they
//! did). The project is set for the whole request ([`enter`]); [`crate::AppState::ledger`]
//! scopes the ledger to it and [`href`] prefixes the links the pages write.
//!
//! | path | project | the app sees |
//! |---|---|---|
//! | `/p/alpha/runs/3` | `alpha` | `/runs/3` |
//! | `/p/alpha` | `alpha` | `/` |
//! | `/runs/3` | `default` | `/runs/3` |

use crate::error::AppError;
use axum::extract::Request;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use bench_model::Project;
use tower::ServiceExt;

tokio::task_local! {
    static CURRENT: Project;
}

/// The project of the request being served (the default one outside a request).
#[must_use]
pub fn current() -> Project {
    CURRENT.try_with(Clone::clone).unwrap_or_default()
}

/// `path` (absolute, starting with `/`) within the current project: `/p/{project}{path}`, or
/// `path` itself in the default project.
#[must_use]
pub fn href(path: &str) -> String {
    let project = current();
    if project.as_str() == Project::DEFAULT {
        path.to_owned()
    } else {
        format!("/p/{project}{path}")
    }
}

/// Splits `/p/{project}/rest` into the project and `/rest` (`/` when nothing follows).
///
/// # Errors
/// [`AppError::NotFound`] for a project name that cannot exist.
fn split(path: &str) -> Result<Option<(Project, String)>, AppError> {
    let Some(after) = path.strip_prefix("/p/") else {
        return Ok(None);
    };
    let (name, rest) = after.split_once('/').map_or((after, ""), |(n, r)| (n, r));
    let project = Project::new(name).map_err(|e| AppError::NotFound(e.to_string()))?;
    Ok(Some((project, format!("/{rest}"))))
}

/// Serves `request` with `app` inside its project.
pub async fn enter(app: axum::Router, mut request: Request) -> Response {
    let (project, rest) = match split(request.uri().path()) {
        Ok(Some(found)) => found,
        Ok(None) => (Project::default(), request.uri().path().to_owned()),
        Err(e) => return e.into_response(),
    };
    let path_and_query = match request.uri().query() {
        Some(q) => format!("{rest}?{q}"),
        None => rest,
    };
    let mut parts = request.uri().clone().into_parts();
    parts.path_and_query = path_and_query.parse().ok();
    if let Ok(uri) = Uri::from_parts(parts) {
        *request.uri_mut() = uri;
    }
    CURRENT
        .scope(project, async move {
            match app.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        })
        .await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn a_project_prefix_is_split_off() {
        let (p, rest) = split("/p/alpha/runs/3").unwrap().unwrap();
        assert_eq!((p.as_str(), rest.as_str()), ("alpha", "/runs/3"));
        assert_eq!(split("/p/alpha").unwrap().unwrap().1, "/");
        assert!(split("/runs/3").unwrap().is_none());
        assert!(split("/p/.bad/x").is_err());
    }

    #[tokio::test]
    async fn links_carry_the_project_except_the_default_ones() {
        assert_eq!(href("/runs/1"), "/runs/1");
        let inside = CURRENT
            .scope(Project::new("alpha").unwrap(), async { href("/runs/1") })
            .await;
        assert_eq!(inside, "/p/alpha/runs/1");
    }
}

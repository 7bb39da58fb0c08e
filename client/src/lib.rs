//! # bench-client
//!
//! `bench-run`'s side of the team server: [`push`] sends runs (with their pairings and
//! artifacts) so that none is lost or stored twice, and [`remote`] asks the server for the
//! evidence `gate --server` decides on, with retries under a [`remote::RetryPolicy`]; both
//! address one project of the server ([`project_url`]).

pub mod push;
pub mod remote;

use bench_model::Project;

/// The address of `project` on the server at `server`: `SERVER/p/PROJECT`, or `server` itself
/// for the default project or an address that names a project already (`.../p/NAME`).
#[must_use]
pub fn project_url(server: &str, project: &Project) -> String {
    let base = server.trim_end_matches('/');
    if project.as_str() == Project::DEFAULT || base.contains("/p/") {
        base.to_owned()
    } else {
        format!("{base}/p/{project}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_a_path_of_the_server() {
        let alpha = Project::new("alpha").unwrap();
        assert_eq!(
            project_url("https://b.example/", &alpha),
            "https://b.example/p/alpha"
        );
        assert_eq!(
            project_url("https://b.example/p/beta", &alpha),
            "https://b.example/p/beta"
        );
        assert_eq!(
            project_url("http://h:8080", &Project::default()),
            "http://h:8080"
        );
    }
}

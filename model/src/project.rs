//! Projects: named histories sharing one ledger (an organisation's server holds many; a local
//! ledger records into [`Project::DEFAULT`]).

use serde::{Deserialize, Serialize};

/// The name of a project: 1 to [`Project::MAX_LEN`] characters of ASCII letters, digits, `.`,
/// `_` and `-`, not starting with `.` or `-` (it is a URL path segment, `/p/{project}/...`, and
/// a token's scope, `push:PROJECT:SECRET`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Project(String);

/// A project name that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a project name is 1 to {max} ASCII letters, digits, `.`, `_` and `-`, not starting with \
     `.` or `-`; got {0:?}",
    max = Project::MAX_LEN
)]
pub struct ProjectNameError(pub String);

impl Project {
    /// The project of a local ledger, and of runs recorded before projects existed.
    pub const DEFAULT: &'static str = "default";
    /// Longest name.
    pub const MAX_LEN: usize = 100;

    /// The project `name`.
    ///
    /// # Errors
    /// [`ProjectNameError`] for a name outside the rule above.
    pub fn new(name: &str) -> Result<Self, ProjectNameError> {
        let ok = !name.is_empty()
            && name.len() <= Self::MAX_LEN
            && !name.starts_with(['.', '-'])
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if ok {
            Ok(Self(name.to_owned()))
        } else {
            Err(ProjectNameError(
                name.chars().take(Self::MAX_LEN + 1).collect(),
            ))
        }
    }

    /// The default project.
    #[must_use]
    pub fn default_project() -> Self {
        Self(Self::DEFAULT.to_owned())
    }

    /// The name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The project a repository's `origin` URL names: its last path segment without `.git`
    /// (`https://github.com/tafia/quick-xml.git` and `git@github.com:tafia/quick-xml` give
    /// `quick-xml`), made a valid name (other characters become `-`). `None` when nothing is
    /// left.
    #[must_use]
    pub fn from_origin_url(url: &str) -> Option<Self> {
        let path = url.trim().trim_end_matches('/');
        let last = path.rsplit(['/', ':']).next()?;
        let last = last.strip_suffix(".git").unwrap_or(last);
        let cleaned: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let cleaned = cleaned.trim_start_matches(['.', '-']);
        let cleaned: String = cleaned.chars().take(Self::MAX_LEN).collect();
        Self::new(&cleaned).ok()
    }
}

impl Default for Project {
    fn default() -> Self {
        Self::default_project()
    }
}

impl std::fmt::Display for Project {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Project {
    type Error = ProjectNameError;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        Self::new(&name)
    }
}

impl From<Project> for String {
    fn from(project: Project) -> Self {
        project.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_url_and_token_safe() {
        for good in ["default", "quick-xml", "rust_lang.rustc", "A1"] {
            assert_eq!(
                Project::new(good).map(|p| p.to_string()),
                Ok(good.to_owned())
            );
        }
        for bad in [
            "",
            ".hidden",
            "-x",
            "a/b",
            "a:b",
            "a b",
            "é",
            &"x".repeat(101),
        ] {
            assert!(Project::new(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Project::default().as_str(), "default");
    }

    #[test]
    fn an_origin_url_names_its_repository() {
        let name = |url: &str| Project::from_origin_url(url).map(|p| p.to_string());
        assert_eq!(
            name("https://github.com/tafia/quick-xml.git").as_deref(),
            Some("quick-xml")
        );
        assert_eq!(
            name("git@github.com:tafia/quick-xml").as_deref(),
            Some("quick-xml")
        );
        assert_eq!(name("/srv/git/my repo.git/").as_deref(), Some("my-repo"));
        assert_eq!(name("ssh://host/.git"), None);
    }
}

//! Where a ledger lives, from a `--db` / `BENCH_DB` value.

use crate::LedgerError;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a ledger lives; the engine follows from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A fresh SQLite database in memory (tests, benchmarks).
    Memory,
    /// A PostgreSQL server: a `postgres://` URL (its password is never printed).
    Postgres(String),
}

impl Location {
    /// Parses a `--db` value: `postgres://...` or `postgresql://...` is a server;
    /// `sqlite::memory:` is an in-memory ledger; `sqlite://PATH` or `sqlite:PATH` is a file, as is
    /// anything without a scheme. A URL of another scheme is refused rather than taken for a
    /// file name.
    ///
    /// # Errors
    /// [`LedgerError::Invalid`] for an empty value or an unknown scheme.
    pub fn parse(value: &str) -> Result<Self, LedgerError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(LedgerError::Invalid(
                "the ledger location is empty: give a file path or a postgres:// URL".to_owned(),
            ));
        }
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            return Ok(Self::Postgres(value.to_owned()));
        }
        if value == "sqlite::memory:" {
            return Ok(Self::Memory);
        }
        if let Some(path) = value
            .strip_prefix("sqlite://")
            .or_else(|| value.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or(path);
            if path.is_empty() {
                return Err(LedgerError::Invalid(format!(
                    "{value}: no file path after sqlite:"
                )));
            }
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = value.split_once("://")
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(LedgerError::Invalid(format!(
                "unsupported ledger URL scheme {scheme:?} in {value:?}: use a file path, \
                 sqlite:PATH, or postgres://user@host/db"
            )));
        }
        Ok(Self::Sqlite(PathBuf::from(value)))
    }

    /// The engine's name: `sqlite` or `postgres`.
    #[must_use]
    pub const fn engine(&self) -> &'static str {
        match self {
            Self::Sqlite(_) | Self::Memory => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Self {
        Self::Sqlite(path.to_owned())
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Self {
        Self::Sqlite(path)
    }
}

impl From<&PathBuf> for Location {
    fn from(path: &PathBuf) -> Self {
        Self::Sqlite(path.clone())
    }
}

impl From<&Location> for Location {
    fn from(location: &Location) -> Self {
        location.clone()
    }
}

/// The location for messages: a path, `:memory:`, or a URL with its password replaced by `***`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "{}", path.display()),
            Self::Memory => f.write_str(":memory:"),
            Self::Postgres(url) => f.write_str(&redact_password(url)),
        }
    }
}

/// `scheme://user:secret@host/...` as `scheme://user:***@host/...`; a `password=` query
/// parameter likewise.
fn redact_password(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let authority_start = scheme_end + 3;
        let authority_end = out[authority_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| authority_start + i);
        if let Some(at) = out[authority_start..authority_end].rfind('@') {
            let userinfo = &out[authority_start..authority_start + at];
            if let Some(colon) = userinfo.find(':') {
                out.replace_range(authority_start + colon + 1..authority_start + at, "***");
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let query: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_owned(),
            })
            .collect();
        out = format!("{head}{}", query.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_pick_their_engine() {
        let cases = [
            (
                "results/ledger.sqlite",
                Location::Sqlite("results/ledger.sqlite".into()),
            ),
            ("/abs/l.db", Location::Sqlite("/abs/l.db".into())),
            ("sqlite:l.db", Location::Sqlite("l.db".into())),
            (
                "sqlite:///tmp/l.db?mode=rwc",
                Location::Sqlite("/tmp/l.db".into()),
            ),
            ("sqlite::memory:", Location::Memory),
            (
                "postgres://u@h/db",
                Location::Postgres("postgres://u@h/db".into()),
            ),
            (
                "postgresql://u@h/db",
                Location::Postgres("postgresql://u@h/db".into()),
            ),
        ];
        for (i, (value, want)) in cases.into_iter().enumerate() {
            assert_eq!(Location::parse(value).ok(), Some(want), "case {i}: {value}");
        }
        for (i, value) in ["", "  ", "mysql://u@h/db", "http://x/y", "sqlite:"]
            .iter()
            .enumerate()
        {
            assert!(
                Location::parse(value).is_err(),
                "case {i}: {value:?} was accepted"
            );
        }
    }

    #[test]
    fn passwords_are_never_printed() {
        let cases = [
            (
                "postgres://u:hunter2@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            (
                "postgres://u@h/db?password=hunter2&sslmode=require",
                "postgres://u@h/db?password=***&sslmode=require",
            ),
            (
                "postgres://u@localhost/db?host=/run/pg",
                "postgres://u@localhost/db?host=/run/pg",
            ),
        ];
        for (i, (url, want)) in cases.into_iter().enumerate() {
            let shown = Location::Postgres(url.to_owned()).to_string();
            assert_eq!(shown, want, "case {i}");
            assert!(!shown.contains("hunter2"), "case {i}");
        }
    }
}

//! The one error type of the store.

use bench_model::RunId;
use std::path::PathBuf;

/// A database error, kept as its message chain: no engine type crosses the store's API.
pub type DbError = Box<dyn std::error::Error + Send + Sync>;

/// Errors raised by the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The ledger could not be reached, created or opened.
    #[error("cannot open ledger {location}: {source}")]
    Open {
        /// Where the ledger is (a path, or a URL without its password).
        location: String,
        /// The cause.
        source: DbError,
    },
    /// The directory for a ledger file could not be created.
    #[error("cannot create ledger directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The ledger was written by a newer version of bench-run.
    #[error(
        "ledger {location} has schema version {found}, newer than this bench-run supports \
         ({supported}); upgrade bench-run (the ledger was left untouched)"
    )]
    NewerSchema {
        /// Where the ledger is.
        location: String,
        /// Newest migration found in the ledger.
        found: i64,
        /// Newest migration this build knows.
        supported: i64,
    },
    /// Migrating the schema failed.
    #[error("cannot migrate ledger {location}: {source}")]
    Migrate {
        /// Where the ledger is.
        location: String,
        /// The cause.
        source: DbError,
    },
    /// A query failed.
    #[error("ledger query failed: {0}")]
    Query(DbError),
    /// A stored value is not what this version expects.
    #[error("corrupt ledger row: {0}")]
    Corrupt(String),
    /// A run id that does not exist.
    #[error("no run with id {0}")]
    NoSuchRun(RunId),
    /// An idempotency key that recorded other content before.
    #[error(
        "idempotency key {key:?} was used for other content (run {run}); a retried push sends the \
         same run with the same key"
    )]
    KeyReused {
        /// The key.
        key: String,
        /// The run it recorded.
        run: RunId,
    },
    /// An artifact that cannot be recorded: too large, of the wrong media type, malformed.
    #[error(transparent)]
    Artifact(#[from] bench_model::ArtifactError),
    /// An invalid argument, e.g. an empty tag name, or a `--db` value no engine takes.
    #[error("{0}")]
    Invalid(String),
}

impl From<sqlx::Error> for LedgerError {
    fn from(e: sqlx::Error) -> Self {
        Self::Query(Box::new(e))
    }
}

impl LedgerError {
    /// Whether the database refused a write because it would change or replace stored rows
    /// (the append-only triggers, or a unique key).
    #[must_use]
    pub fn is_append_only_refusal(&self) -> bool {
        match self {
            Self::Query(e) => refused_as_append_only(e.as_ref()),
            _ => false,
        }
    }
}

/// Whether `e` is the database refusing to change, delete or duplicate a stored row.
pub(crate) fn refused_as_append_only(e: &(dyn std::error::Error + 'static)) -> bool {
    match e.downcast_ref::<sqlx::Error>() {
        Some(sqlx::Error::Database(db)) => {
            db.message().contains("append-only")
                || matches!(db.kind(), sqlx::error::ErrorKind::UniqueViolation)
        }
        _ => false,
    }
}

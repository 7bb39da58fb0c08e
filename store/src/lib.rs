//! # bench-store
//!
//! The append-only benchmark ledger behind one trait of domain operations, [`LedgerStore`]:
//! record a run, read it back, list and find runs, tag and annotate them, read a benchmark's
//! history and a suite's trend. No database type crosses the trait. One implementation, with
//! every statement written once, runs on two engines; each engine's module holds only what
//! differs (connecting, migrating, locking, and a few spellings of SQL):
//!
//! - [`sqlite`]: one file, the embedded default for one machine (`results/ledger.sqlite`);
//! - [`postgres`]: a server, for a team whose runners all record into one history.
//!
//! The engine is chosen by where the ledger is, a [`Location`] parsed from the `--db` /
//! `BENCH_DB` value: a path or `sqlite:` URL, or a `postgres://` URL (a unix-socket server is
//! `postgres://user@localhost/db?host=/path/to/socket/dir`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), bench_store::LedgerError> {
//! use bench_store::{Ledger, Location, RunFilter};
//! let ledger = Ledger::open(Location::parse("results/ledger.sqlite")?).await?;
//! for run in ledger.runs(&RunFilter { limit: Some(5), ..RunFilter::default() }).await? {
//!     println!("#{} {} {}", run.id, run.suite, run.created_at);
//! }
//! # Ok(()) }
//! ```
//!
//! Guarantees, on both engines, enforced by the database and tested by one suite run on both
//! (`store/tests/`):
//!
//! - **Nothing partial**: a run with its results, statistics, raw samples and conditions is one
//!   transaction; a crash or a kill before commit leaves no trace of it.
//! - **Nothing rewritten**: triggers reject UPDATE and DELETE (and replacing inserts on SQLite,
//!   TRUNCATE on PostgreSQL) on every table. A correction is an annotation.
//! - **Concurrent writers all land**: SQLite waits on its write lock (WAL, a busy timeout);
//!   PostgreSQL's transactions run side by side.
//! - **No silent downgrade**: a ledger migrated by a newer build is refused with
//!   [`LedgerError::NewerSchema`] and left untouched.
//!
//! Adding a third SQL engine is one module implementing the store's `Engine` hooks for its sqlx
//! driver, its migrations, and one arm in [`Ledger::open`].

#[macro_use]
mod history_sources;

mod artifacts;

pub mod copy;
mod engine;
mod error;
mod ledger_store;
mod location;
pub mod postgres;
mod rows;
mod sql;
pub mod sqlite;
mod timestamps;
mod types;

pub use error::LedgerError;
pub use location::Location;
pub use types::{
    ArtifactIngested, DatedRun, IngestKey, Ingested, MachineSummary, PairIngested, Pairing,
    PairingPlan, ProjectSummary, RunAnnotation, RunCopy, RunFilter, SuiteSummary, TrendData,
    TrendRun, TrendRuns, TrendSeries, TrendValue,
};

pub use engine::BUSY_TIMEOUT;
pub use ledger_store::LedgerStore;
use std::sync::Arc;

/// An open ledger on any engine: a cheap, cloneable handle to a [`LedgerStore`] (its methods
/// are reached through `Deref`).
#[derive(Debug, Clone)]
pub struct Ledger {
    store: Arc<dyn LedgerStore>,
}

impl std::ops::Deref for Ledger {
    type Target = dyn LedgerStore;

    fn deref(&self) -> &Self::Target {
        &*self.store
    }
}

impl Ledger {
    /// Opens the ledger at `location`, creating and migrating it if needed.
    ///
    /// # Errors
    /// When it cannot be reached or created, is not a ledger, or has a newer schema.
    pub async fn open(location: impl Into<Location>) -> Result<Self, LedgerError> {
        let location = location.into();
        Ok(match &location {
            Location::Sqlite(path) => Self::from_store(sqlite::SqliteStore::open(path).await?),
            Location::Memory => Self::from_store(sqlite::SqliteStore::in_memory().await?),
            Location::Postgres(url) => {
                Self::from_store(postgres::PostgresStore::open(url, &location).await?)
            }
        })
    }

    /// Opens the ledger at `location` for reading only. It must exist and be fully migrated.
    ///
    /// # Errors
    /// When it cannot be reached, is not a ledger, or its schema is older or newer.
    pub async fn open_read_only(location: impl Into<Location>) -> Result<Self, LedgerError> {
        let location = location.into();
        Ok(match &location {
            Location::Sqlite(path) => {
                Self::from_store(sqlite::SqliteStore::open_read_only(path).await?)
            }
            Location::Memory => {
                return Err(LedgerError::Invalid(
                    "an in-memory ledger cannot be opened read-only: it would be empty".to_owned(),
                ));
            }
            Location::Postgres(url) => {
                Self::from_store(postgres::PostgresStore::open_read_only(url, &location).await?)
            }
        })
    }

    /// A fresh in-memory SQLite ledger (tests and benchmarks).
    ///
    /// # Errors
    /// When SQLite cannot be initialised.
    pub async fn in_memory() -> Result<Self, LedgerError> {
        Self::open(Location::Memory).await
    }

    /// A handle to `store`.
    pub fn from_store(store: impl LedgerStore + 'static) -> Self {
        Self {
            store: Arc::new(store),
        }
    }

    /// A handle on the same ledger scoped to `project` (cheap: it shares the connections).
    #[must_use]
    pub fn in_project(&self, project: &bench_model::Project) -> Self {
        Self {
            store: self.store.in_project(project),
        }
    }
}

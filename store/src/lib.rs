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

mod artifacts;
/// The SQL list of the source codes whose runs are never a run's history or its commit's run
/// ([`bench_model::RunSource::kept_out_of_history`]: paired sides, profiles).
/// A macro, so queries stay `&'static str` (checked against the enum by a test below).
macro_rules! kept_out_of_history {
    () => {
        "(9, 10, 13, 14, 15)"
    };
}

pub mod copy;
mod engine;
mod error;
mod location;
pub mod postgres;
mod rows;
mod sql;
pub mod sqlite;
mod types;

pub use bench_model::{
    ArtifactId, ArtifactKind, ArtifactSummary, History, HistoryPoint, MetricKey, NewArtifact,
    RunId, StoredArtifact,
};
pub use error::LedgerError;
pub use location::Location;
pub use types::{
    Annotation, ArtifactIngested, DatedRun, IngestKey, Ingested, MachineSummary, PairIngested,
    Pairing, PairingPlan, RunAnnotation, RunCopy, RunFilter, RunSummary, StoredRun, SuiteSummary,
    TrendData, TrendRun, TrendSeries, TrendValue,
};

use async_trait::async_trait;
use bench_model::{Measurement, NewRun};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How long a writer waits for another writer (SQLite's lock; a PostgreSQL connection).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The ledger's operations. Every engine implements all of them with the same meaning; the
/// store tests (`store/tests/`) hold each engine to it.
#[async_trait]
pub trait LedgerStore: Send + Sync + std::fmt::Debug {
    /// Where the ledger lives.
    fn location(&self) -> &Location;

    /// Records a run, its results, statistics, raw samples and conditions in one transaction.
    ///
    /// # Errors
    /// When the run is invalid (no results, duplicate benchmark/metric pairs, bad conditions)
    /// or the database refuses the write. Nothing is stored on error.
    async fn record_run(&self, run: &NewRun) -> Result<RunId, LedgerError>;

    /// Records a pushed run once per idempotency key, in one transaction: the first push with
    /// `key` records the run; a retry with the same key and content answers the run it
    /// recorded, stores nothing, and says so ([`Ingested::created`] is `false`). Concurrent
    /// pushes with one key record one run.
    ///
    /// # Errors
    /// [`LedgerError::KeyReused`] when the key recorded other content; otherwise as
    /// [`LedgerStore::record_run`]. Nothing is stored on error.
    async fn record_run_once(&self, run: &NewRun, key: &IngestKey)
    -> Result<Ingested, LedgerError>;

    /// Records a run measured before it is recorded (an entry of a hand-kept log) with
    /// [`DatedRun::recorded_at`] as its recording time and its notes as annotations of that
    /// time, once per idempotency key, in one transaction, as [`LedgerStore::record_run_once`]
    /// records a pushed run.
    ///
    /// # Errors
    /// [`LedgerError::Invalid`] when `recorded_at` is not a time in the ledger's form or a note
    /// is empty; otherwise as [`LedgerStore::record_run_once`]. Nothing is stored on error.
    async fn record_dated_run_once(
        &self,
        run: &DatedRun,
        key: &IngestKey,
    ) -> Result<Ingested, LedgerError>;

    /// Records the pushed sides of a paired A/B run and their pairing once per idempotency key,
    /// in one transaction, as [`LedgerStore::record_run_once`] records one run (the key is kept
    /// with the head run).
    ///
    /// # Errors
    /// [`LedgerError::KeyReused`] when the key recorded other content; otherwise as
    /// [`LedgerStore::record_pair`]. Nothing is stored on error.
    async fn record_pair_once(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
        key: &IngestKey,
    ) -> Result<PairIngested, LedgerError>;

    /// Records the two sides of a paired A/B run and their pairing in one transaction.
    ///
    /// # Errors
    /// When a side is invalid, a result does not hold one value per round, or the write fails.
    async fn record_pair(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
    ) -> Result<(RunId, RunId), LedgerError>;

    /// A run with its provenance, tags and annotations.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    async fn run(&self, id: RunId) -> Result<Option<StoredRun>, LedgerError>;

    /// Runs matching `filter`, newest first.
    ///
    /// # Errors
    /// When the query fails.
    async fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, LedgerError>;

    /// Suites in the ledger with their run counts, by name.
    ///
    /// # Errors
    /// When the query fails.
    async fn suites(&self) -> Result<Vec<SuiteSummary>, LedgerError>;

    /// The newest run, optionally of one suite.
    ///
    /// # Errors
    /// When the query fails.
    async fn latest_run(&self, suite: Option<&str>) -> Result<Option<RunId>, LedgerError>;

    /// The default baseline of `run`: the newest earlier run of the same suite on the same
    /// machine that is a full measurement, i.e. neither a `--quick` run nor a `gate --confirm`
    /// re-run of a few benchmarks, nor a side of a `bench-run ab` (its values are per-process
    /// quantiles over rounds, a different estimate).
    ///
    /// # Errors
    /// When the query fails.
    async fn previous_run(&self, run: RunId) -> Result<Option<RunId>, LedgerError>;

    /// The newest run at a commit (full hash or prefix), optionally of one suite. The sides of
    /// a `bench-run ab` are not found this way (name them by id or tag).
    ///
    /// # Errors
    /// When the query fails.
    async fn run_at_commit(
        &self,
        commit: &str,
        suite: Option<&str>,
    ) -> Result<Option<RunId>, LedgerError>;

    /// The run a tag names (the newest tag row of that name wins).
    ///
    /// # Errors
    /// When the query fails.
    async fn run_by_tag(&self, name: &str) -> Result<Option<RunId>, LedgerError>;

    /// Gives `run` the tag `name` (moving the name if another run had it).
    ///
    /// # Errors
    /// When the run does not exist, the name is empty or all digits, or the write fails.
    async fn tag(&self, run: RunId, name: &str) -> Result<(), LedgerError>;

    /// Adds a note to `run`.
    ///
    /// # Errors
    /// When the run does not exist, the text is empty, or the write fails.
    async fn annotate(&self, run: RunId, text: &str) -> Result<(), LedgerError>;

    /// All results of `run`, with statistics and raw samples, sorted by benchmark and metric.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn measurements(&self, run: RunId) -> Result<Vec<Measurement>, LedgerError>;

    /// Headline estimates of up to `runs` earlier runs of `suite` on `machine_id`, before run
    /// `before`, oldest first, each with its run: the input of the noise model. `--quick`
    /// runs and the sides of a `bench-run ab` are never history.
    ///
    /// # Errors
    /// When the query fails.
    async fn history(
        &self,
        suite: &str,
        machine_id: i64,
        before: RunId,
        runs: usize,
    ) -> Result<History, LedgerError>;

    /// The pairing `run` is a side of, if any.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    async fn pairing_of(&self, run: RunId) -> Result<Option<Pairing>, LedgerError>;

    /// Machines with runs (of `suite`, if given), by row id.
    ///
    /// # Errors
    /// When the query fails.
    async fn machines(&self, suite: Option<&str>) -> Result<Vec<MachineSummary>, LedgerError>;

    /// The newest run of every (suite, machine) pair, ordered by suite, then newest first.
    ///
    /// # Errors
    /// When the query fails.
    async fn latest_runs_per_machine(&self) -> Result<Vec<RunId>, LedgerError>;

    /// Every headline estimate of `suite` (on machine `machine_id`, if given): the runs in
    /// commit order (git commit time, falling back to the recording time for runs outside git,
    /// then run id) and one series per benchmark and metric (sorted by both) whose values
    /// follow that order. The input of the trend charts.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn trend(&self, suite: &str, machine_id: Option<i64>) -> Result<TrendData, LedgerError>;

    /// Annotations on runs of `suite` (on machine `machine_id`, if given), oldest first.
    ///
    /// # Errors
    /// When the query fails.
    async fn suite_annotations(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<Vec<RunAnnotation>, LedgerError>;

    /// Annotations on the runs of `suite` on machine `machine_id` from run `from` to run `to`
    /// in commit order (the order of [`LedgerStore::trend`]), both ends included, whichever of
    /// the two comes first: what was noted about the history a comparison spans. Ordered by
    /// run in commit order, then oldest note first. A missing end counts as the other end;
    /// none when both are missing.
    ///
    /// # Errors
    /// When the query fails.
    async fn annotations_between(
        &self,
        suite: &str,
        machine_id: i64,
        from: RunId,
        to: RunId,
    ) -> Result<Vec<RunAnnotation>, LedgerError>;

    /// Every tag row of the ledger, oldest first, with the run it named: what a copy of the
    /// ledger must replay in order so that the same names end on the same runs.
    ///
    /// # Errors
    /// When the query fails.
    async fn tag_history(&self) -> Result<Vec<(RunId, String)>, LedgerError>;

    /// This ledger's identity: random, given when it was created, the same by any path or URL.
    ///
    /// # Errors
    /// When the query fails.
    async fn ledger_id(&self) -> Result<String, LedgerError>;

    /// The runs copied here from the ledger `origin_ledger`: its run ids, each with the id of
    /// the copy here.
    ///
    /// # Errors
    /// When the query fails.
    async fn copied_runs(&self, origin_ledger: &str)
    -> Result<BTreeMap<RunId, RunId>, LedgerError>;

    /// The runs here that are copies of run `origin_run` of a ledger whose identity starts with
    /// `origin_prefix` (a citation `LEDGER#RUN` names a run by where it was first recorded).
    /// More than one when the prefix is shared by two ledgers copied here.
    ///
    /// # Errors
    /// When the query fails.
    async fn copies_of(
        &self,
        origin_prefix: &str,
        origin_run: RunId,
    ) -> Result<Vec<RunId>, LedgerError>;

    /// Records a copy of a run of another ledger as it was stored there (its creation time,
    /// source, provenance, results and annotations), with where it came from, in one
    /// transaction.
    ///
    /// # Errors
    /// When the run was copied here before, or the write fails. Nothing is stored on error.
    async fn record_copy(&self, copy: &RunCopy) -> Result<RunId, LedgerError>;

    /// Adds an annotation as it was written elsewhere (its own creation time) to `run`.
    ///
    /// # Errors
    /// When the run does not exist or the write fails.
    async fn copy_annotation(&self, run: RunId, annotation: &Annotation)
    -> Result<(), LedgerError>;

    /// Every pairing, oldest first.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn pairings(&self) -> Result<Vec<Pairing>, LedgerError>;

    /// Records a pairing of two runs as it was stored elsewhere (its creation time).
    ///
    /// # Errors
    /// When either run is already paired, or the write fails.
    async fn copy_pairing(
        &self,
        base: RunId,
        head: RunId,
        pairing: &Pairing,
    ) -> Result<(), LedgerError>;

    /// Records an artifact of a run and one of its benchmarks, such as a profile, once: the
    /// same content for the same run, benchmark, kind, profiler and base run is the artifact
    /// already recorded ([`ArtifactIngested::created`] is `false`), so a retried push or a
    /// second copy adds nothing.
    ///
    /// # Errors
    /// [`LedgerError::Artifact`] for one the model refuses (over
    /// [`bench_model::MAX_ARTIFACT_BYTES`], a media type not its kind's, malformed content);
    /// [`LedgerError::NoSuchRun`] when its run or base run does not exist; or when the write
    /// fails. Nothing is stored on error.
    async fn record_artifact_once(
        &self,
        artifact: &NewArtifact,
    ) -> Result<ArtifactIngested, LedgerError>;

    /// Records an artifact as it was stored elsewhere (its own creation time), once, as
    /// [`LedgerStore::record_artifact_once`] does.
    ///
    /// # Errors
    /// As [`LedgerStore::record_artifact_once`].
    async fn copy_artifact(
        &self,
        artifact: &NewArtifact,
        created_at: &str,
    ) -> Result<ArtifactIngested, LedgerError>;

    /// The artifacts of `run`, without their bytes, by benchmark, then kind, then id.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn artifacts(&self, run: RunId) -> Result<Vec<ArtifactSummary>, LedgerError>;

    /// One artifact with its bytes (checked against its SHA-256).
    ///
    /// # Errors
    /// When the query fails, or the row is corrupt or no longer matches its digest.
    async fn artifact(&self, id: ArtifactId) -> Result<Option<StoredArtifact>, LedgerError>;

    /// Closes the connections (waits for them to finish).
    async fn close(&self);

    /// Records an artifact (see [`LedgerStore::record_artifact_once`]) and returns its id.
    ///
    /// # Errors
    /// As [`LedgerStore::record_artifact_once`].
    async fn record_artifact(&self, artifact: &NewArtifact) -> Result<ArtifactId, LedgerError> {
        Ok(self.record_artifact_once(artifact).await?.id)
    }

    /// The artifacts of run `head` that compare it against run `base` (a differential
    /// flamegraph, a diff of function counts), as [`LedgerStore::artifacts`] orders them.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    async fn artifacts_against(
        &self,
        base: RunId,
        head: RunId,
    ) -> Result<Vec<ArtifactSummary>, LedgerError> {
        let mut found = self.artifacts(head).await?;
        found.retain(|a| a.against == Some(base));
        Ok(found)
    }

    /// Like [`LedgerStore::run`], but a missing run is an error.
    ///
    /// # Errors
    /// [`LedgerError::NoSuchRun`] when there is no such run.
    async fn require_run(&self, id: RunId) -> Result<StoredRun, LedgerError> {
        self.run(id).await?.ok_or(LedgerError::NoSuchRun(id))
    }

    /// The pairing whose base is `base` and head is `head`, if they are the two sides of one.
    ///
    /// # Errors
    /// When the query fails.
    async fn pairing_between(
        &self,
        base: RunId,
        head: RunId,
    ) -> Result<Option<Pairing>, LedgerError> {
        Ok(self
            .pairing_of(base)
            .await?
            .filter(|p| p.base_run == base && p.head_run == head))
    }

    /// Whether the ledger holds any run of `suite`.
    ///
    /// # Errors
    /// When the query fails.
    async fn has_suite(&self, suite: &str) -> Result<bool, LedgerError> {
        Ok(self.latest_run(Some(suite)).await?.is_some())
    }
}

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
}

/// How the ledger writes times: RFC 3339, UTC, milliseconds (`2026-02-14T17:26:18.000Z`).
const TIME_FORMAT: &[time::format_description::BorrowedFormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
);

/// The current time as the ledger writes it: RFC 3339, UTC, milliseconds.
pub(crate) fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(TIME_FORMAT)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

/// Checks a [`DatedRun`]: a time in the ledger's own form (what both engines sort and the trend
/// query parses), notes with text, and the run itself.
pub(crate) fn check_dated_run(dated: &DatedRun) -> Result<(), LedgerError> {
    rows::check_new_run(&dated.run)?;
    if time::PrimitiveDateTime::parse(&dated.recorded_at, TIME_FORMAT).is_err() {
        return Err(LedgerError::Invalid(format!(
            "a run's recording time is written like 2026-02-14T17:26:18.000Z (UTC, \
             milliseconds), got {:?}",
            dated.recorded_at.chars().take(40).collect::<String>()
        )));
    }
    for note in &dated.notes {
        rows::check_annotation(note)?;
    }
    Ok(())
}

#[cfg(test)]
mod paired_sources_tests {
    use bench_model::RunSource;

    #[test]
    fn the_sql_list_names_every_source_kept_out_of_history() {
        let codes: Vec<String> = (0..100)
            .filter_map(RunSource::from_code)
            .filter(|s| s.kept_out_of_history())
            .map(|s| s.code().to_string())
            .collect();
        assert_eq!(kept_out_of_history!(), format!("({})", codes.join(", ")));
    }
}

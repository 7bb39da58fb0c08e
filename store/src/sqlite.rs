//! The SQLite engine: one file, the embedded default.
//!
//! A run is written in one `BEGIN IMMEDIATE` transaction, which takes the write lock at the
//! start: concurrent writers queue on it (WAL journal, [`crate::BUSY_TIMEOUT`]) instead of
//! failing half way. Triggers (migrations/sqlite) reject UPDATE, DELETE and replacing inserts.
//! The statements are shared with PostgreSQL (`engine.rs`); this module opens the file,
//! migrates it, and says what SQLite spells its own way.

use crate::engine::Rendered;
use crate::engine::{BoxFuture, Engine, Query};
use crate::rows::{self, duplicate_result, json_text};
use crate::sql::SqlStore;
use crate::{BUSY_TIMEOUT, LedgerError, LedgerStore, Location};
use bench_model::{Measurement, RunId, Samples};
use sqlx::Sqlite;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The SQLite schema migrations (migrations/sqlite), embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

/// Whether sqlx's migrations table exists.
const HAS_MIGRATIONS: &str =
    "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'";

crate::rows::impl_cols!(SqliteRow);

/// A ledger in one SQLite file (or in memory).
pub type SqliteStore = SqlStore<Sqlite>;

impl Engine for Sqlite {
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";

    const COMMIT_ORDER: &'static str =
        "COALESCE(git_commit_time, CAST(strftime('%s', created_at) AS INTEGER))";

    const RUN_ID_IN: &'static str = "run_id IN (SELECT value FROM json_each($1))";

    // One writer at a time assigns ids in commit order, and nothing is deleted: the largest
    // ids say everything.
    const STAMP: &'static str = concat!("SELECT ", largest_ids!(), " AS stamp");

    fn run_id_in_select(select: &str) -> String {
        format!("run_id IN ({select})")
    }

    fn bind_runs(query: Query<Self>, runs: &[RunId]) -> Result<Query<Self>, LedgerError> {
        Ok(query.bind(json_text(&runs)?))
    }

    fn rendered() -> &'static Rendered {
        static RENDERED: LazyLock<Rendered> = LazyLock::new(Rendered::new::<Sqlite>);
        &RENDERED
    }

    /// One statement per row: in-process, a prepared statement costs no round trip.
    fn insert_measurements<'a>(
        tx: &'a mut SqliteConnection,
        run: RunId,
        measurements: &'a [Measurement],
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move {
            for (index, m) in measurements.iter().enumerate() {
                rows::failpoint("record-run", index);
                insert_measurement(tx, run, m).await?;
            }
            Ok(())
        })
    }
}

/// Anonymous `?` parameters, unlike the shared statements' `$N`: sqlx binds them without
/// reading each parameter's name, which counts on a statement run for every result.
async fn insert_measurement(
    tx: &mut SqliteConnection,
    run_id: RunId,
    m: &Measurement,
) -> Result<(), LedgerError> {
    let e = &m.estimate;
    let sample_count = m.samples.as_ref().map_or(0, Samples::len);
    let result_id: i64 = sqlx::query_scalar(
        "INSERT INTO results (run_id, benchmark, group_id, function_id, value_str, metric, unit,
            direction, estimate, lower, upper, confidence_level, standard_error, throughput_kind,
            throughput_per_iter, sample_count)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(run_id)
    .bind(&m.benchmark.full)
    .bind(&m.benchmark.group)
    .bind(&m.benchmark.function)
    .bind(&m.benchmark.value)
    .bind(&m.metric)
    .bind(&m.unit)
    .bind(m.direction.code())
    .bind(e.point)
    .bind(e.lower)
    .bind(e.upper)
    .bind(e.confidence_level)
    .bind(e.standard_error)
    .bind(m.throughput.map(|t| t.kind.code()))
    .bind(
        m.throughput
            .and_then(|t| i64::try_from(t.per_iteration).ok()),
    )
    .bind(i64::try_from(sample_count).unwrap_or(i64::MAX))
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| duplicate_result(e, m))?;
    for (statistic, s) in &m.statistics {
        sqlx::query(
            "INSERT INTO statistics (result_id, statistic, point, lower, upper, confidence_level,
                standard_error)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(result_id)
        .bind(statistic.code())
        .bind(s.point)
        .bind(s.lower)
        .bind(s.upper)
        .bind(s.confidence_level)
        .bind(s.standard_error)
        .execute(&mut *tx)
        .await?;
    }
    if let Some(samples) = &m.samples {
        sqlx::query(
            "INSERT INTO samples (result_id, sampling_mode, iters, times_ns)
             VALUES (?, ?, ?, ?)",
        )
        .bind(result_id)
        .bind(samples.mode().code())
        .bind(rows::f64s_to_blob(samples.iters()))
        .bind(rows::f64s_to_blob(samples.times_ns()))
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

impl SqliteStore {
    /// Opens (creating and migrating if needed) the ledger file at `path`.
    ///
    /// # Errors
    /// When the file cannot be created or opened, is not a ledger, or has a newer schema.
    pub async fn open(path: &Path) -> Result<Self, LedgerError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| LedgerError::CreateDir {
                path: parent.to_owned(),
                source,
            })?;
        }
        let options = SqliteConnectOptions::new()
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal);
        let store = Self::connect(path, options).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Opens the ledger file at `path` read-only. It must exist and be fully migrated.
    ///
    /// # Errors
    /// When the file cannot be opened, is not a ledger, or its schema is older or newer.
    pub async fn open_read_only(path: &Path) -> Result<Self, LedgerError> {
        let store = Self::connect(path, SqliteConnectOptions::new().read_only(true)).await?;
        store.require_migrated(&MIGRATOR, HAS_MIGRATIONS).await?;
        Ok(store)
    }

    /// A fresh in-memory ledger (tests and benchmarks).
    ///
    /// # Errors
    /// When SQLite cannot be initialised.
    pub async fn in_memory() -> Result<Self, LedgerError> {
        let options = SqliteConnectOptions::new()
            .in_memory(true)
            .foreign_keys(true);
        // One connection: every in-memory connection would be its own database.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        let store = Self::new(pool, Location::Memory);
        store.migrate().await?;
        Ok(store)
    }

    async fn connect(path: &Path, options: SqliteConnectOptions) -> Result<Self, LedgerError> {
        let location = Location::Sqlite(path.to_owned());
        let options = options
            .filename(path)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| LedgerError::Open {
                location: location.to_string(),
                source: Box::new(source),
            })?;
        Ok(Self::new(pool, location))
    }

    async fn migrate(&self) -> Result<(), LedgerError> {
        if !self.needs_migration(&MIGRATOR, HAS_MIGRATIONS).await? {
            return Ok(());
        }
        // Serialise concurrent first-time migrations: sqlx's SQLite migrator takes no lock, and
        // two processes creating the same tables would collide.
        let lock = migration_lock(self.location())?;
        let result = MIGRATOR.run(self.pool()).await;
        drop(lock);
        result.map_err(|source| self.migrate_error(source))
    }
}

/// An exclusive lock on the ledger file's migrations, held until dropped (`None` in memory).
fn migration_lock(location: &Location) -> Result<Option<std::fs::File>, LedgerError> {
    let Location::Sqlite(path) = location else {
        return Ok(None);
    };
    // In the temp directory, not beside the ledger: a lock file cannot be removed safely
    // after use (a waiter may hold it open), and one beside the ledger would be left in
    // the user's results/ folder. Named by the ledger's path, so one ledger, one lock.
    let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
    let hash = canonical
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    let lock_path = std::env::temp_dir()
        .join(format!("bench-ledger-{hash:016x}.migrate-lock"))
        .into_os_string();
    let lock_error = |source| LedgerError::CreateDir {
        path: PathBuf::from(&lock_path),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(lock_error)?;
    file.lock().map_err(lock_error)?;
    Ok(Some(file))
}

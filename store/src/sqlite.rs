//! The SQLite engine: one file, the embedded default.
//!
//! A run is written in one `BEGIN IMMEDIATE` transaction, which takes the write lock at the
//! start: concurrent writers queue on it (WAL journal, [`crate::BUSY_TIMEOUT`]) instead of
//! failing half way. Triggers (migrations/sqlite) reject UPDATE, DELETE and replacing inserts.

use crate::artifacts;
use crate::rows::{self, Cols, check_new_run, json_text};
use crate::{
    Annotation, ArtifactId, ArtifactIngested, ArtifactSummary, BUSY_TIMEOUT, DatedRun, History,
    IngestKey, Ingested, LedgerError, LedgerStore, Location, MachineSummary, PairIngested, Pairing,
    PairingPlan, RunAnnotation, RunCopy, RunFilter, RunId, RunSummary, StoredArtifact, StoredRun,
    SuiteSummary, TrendData, now_rfc3339,
};
use async_trait::async_trait;
use bench_model::{Measurement, NewArtifact, NewRun, RunSource};
use sqlx::AssertSqlSafe;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The SQLite schema migrations (migrations/sqlite), embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

crate::rows::impl_cols!(SqliteRow);

type Tx<'a> = sqlx::Transaction<'a, sqlx::Sqlite>;

mod write;
use write::{insert_annotation, insert_new_run, insert_pairing, insert_run, stored_key};

/// A ledger in one SQLite file (or in memory).
#[derive(Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
    location: Location,
}

fn newest_known_migration() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

impl SqliteStore {
    /// Records a checked run with its recording time and notes under `key`, unless the key
    /// recorded it already (see [`LedgerStore::record_run_once`]).
    async fn record_once(
        &self,
        run: &NewRun,
        created_at: &str,
        notes: &[String],
        key: &IngestKey,
    ) -> Result<Ingested, LedgerError> {
        key.check()?;
        // The write lock is taken first, so a concurrent push with this key waits and then
        // finds it.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(earlier) = rows::earlier_push(key, stored_key(&mut tx, key).await?)? {
            return Ok(earlier);
        }
        let id = insert_run(
            &mut tx,
            run.source,
            &run.provenance,
            &run.measurements,
            created_at,
        )
        .await?;
        for text in notes {
            let note = Annotation {
                created_at: created_at.to_owned(),
                text: text.clone(),
            };
            insert_annotation(&mut tx, id, &note).await?;
        }
        sqlx::query(
            "INSERT INTO ingest_keys (idempotency_key, run_id, content_sha256) VALUES (?, ?, ?)",
        )
        .bind(&key.key)
        .bind(id)
        .bind(&key.content_sha256)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Ingested { id, created: true })
    }
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
        let applied = store.applied_migrations().await?;
        let supported = newest_known_migration();
        match applied.iter().max() {
            Some(&found) if found > supported => Err(LedgerError::NewerSchema {
                location: store.location.to_string(),
                found,
                supported,
            }),
            Some(&found) if found == supported => Ok(store),
            _ => Err(LedgerError::Invalid(format!(
                "{} is not a migrated ledger; open it once with bench-run to create it",
                path.display()
            ))),
        }
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
        let store = Self {
            pool,
            location: Location::Memory,
        };
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
        Ok(Self { pool, location })
    }

    /// Runs one SQL statement outside the store's operations and returns the rows it changed:
    /// for tests that the database itself refuses to change stored rows.
    ///
    /// # Errors
    /// Whatever the database says.
    pub async fn execute_unchecked(&self, sql: &str) -> Result<u64, LedgerError> {
        Ok(sqlx::query(AssertSqlSafe(sql.to_owned()))
            .execute(&self.pool)
            .await?
            .rows_affected())
    }

    /// Runs one `SELECT COUNT(*) ...` outside the store's operations (tests).
    ///
    /// # Errors
    /// Whatever the database says.
    pub async fn count_unchecked(&self, sql: &str) -> Result<i64, LedgerError> {
        Ok(sqlx::query_scalar(AssertSqlSafe(sql.to_owned()))
            .fetch_one(&self.pool)
            .await?)
    }

    async fn applied_migrations(&self) -> Result<Vec<i64>, LedgerError> {
        let has_table: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(|source| LedgerError::Open {
            location: self.location.to_string(),
            source: Box::new(source),
        })?;
        if has_table.is_none() {
            return Ok(Vec::new());
        }
        Ok(
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success = 1")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    async fn migrate(&self) -> Result<(), LedgerError> {
        let supported = newest_known_migration();
        let applied = self.applied_migrations().await?;
        if let Some(&found) = applied.iter().max() {
            if found > supported {
                return Err(LedgerError::NewerSchema {
                    location: self.location.to_string(),
                    found,
                    supported,
                });
            }
            if MIGRATOR.iter().all(|m| applied.contains(&m.version)) {
                return Ok(());
            }
        }
        // Serialise concurrent first-time migrations: sqlx's SQLite migrator takes no lock, and
        // two processes creating the same tables would collide.
        let lock = self.migration_lock()?;
        let result = MIGRATOR.run(&self.pool).await;
        drop(lock);
        result.map_err(|source| LedgerError::Migrate {
            location: self.location.to_string(),
            source: Box::new(source),
        })
    }

    fn migration_lock(&self) -> Result<Option<std::fs::File>, LedgerError> {
        let Location::Sqlite(path) = &self.location else {
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

    async fn require_exists(&self, run: RunId) -> Result<(), LedgerError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE id = ?")
            .bind(run)
            .fetch_optional(&self.pool)
            .await?;
        found.map(|_| ()).ok_or(LedgerError::NoSuchRun(run))
    }

    /// Records a checked artifact with its recording time, unless the same one is there.
    async fn insert_artifact(
        &self,
        artifact: &NewArtifact,
        created_at: &str,
    ) -> Result<ArtifactIngested, LedgerError> {
        let sha256 = artifacts::check(artifact)?;
        // The write lock first: a concurrent recording of the same artifact waits, then finds it.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for run in std::iter::once(artifact.run).chain(artifact.against) {
            let found: Option<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE id = ?")
                .bind(run)
                .fetch_optional(&mut *tx)
                .await?;
            found.ok_or(LedgerError::NoSuchRun(run))?;
        }
        let earlier: Option<ArtifactId> = sqlx::query_scalar(
            "SELECT id FROM artifacts WHERE run_id = ? AND benchmark = ? AND kind = ?
               AND profiler = ? AND COALESCE(against_run_id, 0) = COALESCE(?, 0) AND sha256 = ?",
        )
        .bind(artifact.run)
        .bind(&artifact.benchmark)
        .bind(artifact.kind.code())
        .bind(&artifact.profiler)
        .bind(artifact.against)
        .bind(&sha256)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(id) = earlier {
            return Ok(ArtifactIngested { id, created: false });
        }
        let id: ArtifactId = sqlx::query_scalar(
            "INSERT INTO artifacts (run_id, benchmark, kind, profiler, against_run_id, media_type,
                size, sha256, created_at, bytes)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(artifact.run)
        .bind(&artifact.benchmark)
        .bind(artifact.kind.code())
        .bind(&artifact.profiler)
        .bind(artifact.against)
        .bind(&artifact.media_type)
        .bind(artifacts::size_of(artifact))
        .bind(&sha256)
        .bind(created_at)
        .bind(&artifact.bytes)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(ArtifactIngested { id, created: true })
    }

    async fn tags_of(&self, run: RunId) -> Result<Vec<String>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT g.name FROM tags g WHERE g.run_id = ?
             AND g.id = (SELECT MAX(h.id) FROM tags h WHERE h.name = g.name) ORDER BY g.name",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn annotations(&self, run: RunId) -> Result<Vec<Annotation>, LedgerError> {
        let rows =
            sqlx::query("SELECT created_at, text FROM annotations WHERE run_id = ? ORDER BY id")
                .bind(run)
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(rows::annotation_from_row).collect()
    }

    /// Value rows of a trend: see [`rows::assemble_trend`].
    async fn trend_values(&self, runs: &[RunId]) -> Result<Vec<SqliteRow>, LedgerError> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        Ok(sqlx::query(
            "SELECT run_id, length(benchmark) || ':' || benchmark || metric AS series, estimate,
                    lower, upper
             FROM results WHERE run_id IN (SELECT value FROM json_each(?))",
        )
        .bind(json_text(&runs)?)
        .fetch_all(&self.pool)
        .await?)
    }
}

#[async_trait]
impl LedgerStore for SqliteStore {
    fn location(&self) -> &Location {
        &self.location
    }

    async fn record_run(&self, run: &NewRun) -> Result<RunId, LedgerError> {
        check_new_run(run)?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let run_id = insert_new_run(&mut tx, run).await?;
        tx.commit().await?;
        Ok(run_id)
    }

    async fn record_run_once(
        &self,
        run: &NewRun,
        key: &IngestKey,
    ) -> Result<Ingested, LedgerError> {
        check_new_run(run)?;
        self.record_once(run, &now_rfc3339(), &[], key).await
    }

    async fn record_dated_run_once(
        &self,
        dated: &DatedRun,
        key: &IngestKey,
    ) -> Result<Ingested, LedgerError> {
        crate::check_dated_run(dated)?;
        self.record_once(&dated.run, &dated.recorded_at, &dated.notes, key)
            .await
    }

    async fn record_pair_once(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
        key: &IngestKey,
    ) -> Result<PairIngested, LedgerError> {
        rows::check_pair(base, head, plan)?;
        key.check()?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(earlier) = rows::earlier_push(key, stored_key(&mut tx, key).await?)? {
            let base_id: Option<RunId> =
                sqlx::query_scalar("SELECT base_run_id FROM pairings WHERE head_run_id = ?")
                    .bind(earlier.id)
                    .fetch_optional(&mut *tx)
                    .await?;
            return rows::earlier_pair(key, earlier, base_id);
        }
        let base_id = insert_new_run(&mut tx, base).await?;
        let head_id = insert_new_run(&mut tx, head).await?;
        insert_pairing(&mut tx, base_id, head_id, plan, &now_rfc3339()).await?;
        sqlx::query(
            "INSERT INTO ingest_keys (idempotency_key, run_id, content_sha256) VALUES (?, ?, ?)",
        )
        .bind(&key.key)
        .bind(head_id)
        .bind(&key.content_sha256)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(PairIngested {
            base: base_id,
            head: head_id,
            created: true,
        })
    }

    async fn record_pair(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
    ) -> Result<(RunId, RunId), LedgerError> {
        rows::check_pair(base, head, plan)?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let base_id = insert_new_run(&mut tx, base).await?;
        let head_id = insert_new_run(&mut tx, head).await?;
        insert_pairing(&mut tx, base_id, head_id, plan, &now_rfc3339()).await?;
        tx.commit().await?;
        Ok((base_id, head_id))
    }

    async fn run(&self, id: RunId) -> Result<Option<StoredRun>, LedgerError> {
        let row = sqlx::query(
            "SELECT r.*, m.fingerprint, m.cpu_model, m.physical_cores, m.logical_cores,
                    m.memory_bytes, m.os, m.arch, m.testbed,
                    t.fingerprint AS t_fingerprint, t.rustc_version, t.rustc_commit, t.host,
                    t.llvm_version, t.rustc_verbose, t.cargo_version, c.*
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN toolchains t ON t.id = r.toolchain_id
             LEFT JOIN run_conditions c ON c.run_id = r.id
             WHERE r.id = ?",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (source, created_at, machine_id) = rows::run_header(&row, id)?;
        Ok(Some(StoredRun {
            id,
            created_at,
            source,
            machine_id,
            provenance: rows::provenance_from_row(&row)?,
            tags: self.tags_of(id).await?,
            annotations: self.annotations(id).await?,
        }))
    }

    async fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, LedgerError> {
        // Prefixes compare with substr, not LIKE: `_` and `%` in a user's prefix are characters.
        let rows = sqlx::query(
            "SELECT r.id, r.suite, r.created_at, r.source, r.git_commit, r.git_branch,
                    r.git_dirty, r.git_summary, r.machine_id, m.fingerprint, m.cpu_model, r.quick,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id) AS n_results,
                    (SELECT group_concat(name, char(31)) FROM
                        (SELECT DISTINCT g.name FROM tags g WHERE g.run_id = r.id
                         AND g.id = (SELECT MAX(h.id) FROM tags h WHERE h.name = g.name)
                         ORDER BY g.name)) AS tag_names, c.*
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN run_conditions c ON c.run_id = r.id
             WHERE (?1 IS NULL OR r.suite = ?1)
               AND (?2 IS NULL OR substr(m.fingerprint, 1, length(?2)) = ?2)
               AND (?3 IS NULL OR r.git_branch = ?3)
               AND (?4 IS NULL OR substr(r.git_commit, 1, length(?4)) = ?4)
             ORDER BY r.id DESC LIMIT ?5 OFFSET ?6",
        )
        .bind(&filter.suite)
        .bind(&filter.machine)
        .bind(&filter.branch)
        .bind(&filter.commit)
        .bind(filter.limit.unwrap_or(-1))
        .bind(filter.offset)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(rows::summary_from_row).collect()
    }

    async fn suites(&self) -> Result<Vec<SuiteSummary>, LedgerError> {
        let rows = sqlx::query(
            "SELECT suite, COUNT(*) AS runs, MAX(id) AS latest FROM runs GROUP BY suite ORDER BY suite",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(SuiteSummary {
                    suite: r.text("suite")?,
                    runs: r.int("runs")?,
                    latest_run: r.int("latest")?,
                })
            })
            .collect()
    }

    async fn latest_run(&self, suite: Option<&str>) -> Result<Option<RunId>, LedgerError> {
        Ok(
            sqlx::query_scalar("SELECT MAX(id) FROM runs WHERE ?1 IS NULL OR suite = ?1")
                .bind(suite)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    async fn previous_run(&self, run: RunId) -> Result<Option<RunId>, LedgerError> {
        Ok(sqlx::query_scalar(concat!(
            "SELECT MAX(p.id) FROM runs p JOIN runs r ON r.id = ?
             WHERE p.suite = r.suite AND p.machine_id = r.machine_id AND p.id < r.id
               AND p.quick = 0 AND p.source <> ? AND p.source NOT IN ",
            kept_out_of_history!()
        ))
        .bind(run)
        .bind(RunSource::Confirmation.code())
        .fetch_one(&self.pool)
        .await?)
    }

    async fn run_at_commit(
        &self,
        commit: &str,
        suite: Option<&str>,
    ) -> Result<Option<RunId>, LedgerError> {
        if commit.is_empty() {
            return Ok(None);
        }
        // A range rather than LIKE: the prefix is the user's, and LIKE would read `_` and `%`.
        Ok(sqlx::query_scalar(concat!(
            "SELECT MAX(id) FROM runs WHERE git_commit >= ?1 AND git_commit < ?1 || 'g'
             AND (?2 IS NULL OR suite = ?2) AND source NOT IN ",
            kept_out_of_history!()
        ))
        .bind(commit)
        .bind(suite)
        .fetch_one(&self.pool)
        .await?)
    }

    async fn run_by_tag(&self, name: &str) -> Result<Option<RunId>, LedgerError> {
        Ok(
            sqlx::query_scalar("SELECT run_id FROM tags WHERE name = ? ORDER BY id DESC LIMIT 1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    async fn tag(&self, run: RunId, name: &str) -> Result<(), LedgerError> {
        let name = rows::check_tag_name(name)?;
        self.require_exists(run).await?;
        sqlx::query("INSERT INTO tags (run_id, name, created_at) VALUES (?, ?, ?)")
            .bind(run)
            .bind(name)
            .bind(now_rfc3339())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn annotate(&self, run: RunId, text: &str) -> Result<(), LedgerError> {
        let note = Annotation {
            created_at: now_rfc3339(),
            text: text.to_owned(),
        };
        self.copy_annotation(run, &note).await
    }

    async fn measurements(&self, run: RunId) -> Result<Vec<Measurement>, LedgerError> {
        let results = sqlx::query(
            "SELECT r.*, s.sampling_mode, s.iters, s.times_ns FROM results r
             LEFT JOIN samples s ON s.result_id = r.id
             WHERE r.run_id = ? ORDER BY r.benchmark, r.metric",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        let statistics = sqlx::query(
            "SELECT st.* FROM statistics st JOIN results r ON r.id = st.result_id WHERE r.run_id = ?",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        rows::assemble_measurements(&results, &statistics)
    }

    async fn history(
        &self,
        suite: &str,
        machine_id: i64,
        before: RunId,
        runs: usize,
    ) -> Result<History, LedgerError> {
        let rows = sqlx::query(concat!(
            "SELECT x.run_id, x.benchmark, x.metric, x.estimate FROM results x
             JOIN (SELECT id FROM runs WHERE suite = ? AND machine_id = ? AND id < ? AND quick = 0
                     AND source NOT IN ",
            kept_out_of_history!(),
            "
                   ORDER BY id DESC LIMIT ?) p ON p.id = x.run_id
             ORDER BY x.run_id"
        ))
        .bind(suite)
        .bind(machine_id)
        .bind(before)
        .bind(i64::try_from(runs).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await?;
        rows::assemble_history(&rows)
    }

    async fn pairing_of(&self, run: RunId) -> Result<Option<Pairing>, LedgerError> {
        let row = sqlx::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev,
                    (SELECT round_seeds FROM pairing_layouts WHERE pairing_id = pairings.id)
                        AS round_seeds
             FROM pairings WHERE base_run_id = ?1 OR head_run_id = ?1",
        )
        .bind(run)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(rows::pairing_from_row).transpose()
    }

    async fn machines(&self, suite: Option<&str>) -> Result<Vec<MachineSummary>, LedgerError> {
        let rows = sqlx::query(
            "SELECT m.id, m.fingerprint, m.cpu_model, m.os, m.testbed, COUNT(r.id) AS runs, MAX(r.id) AS latest
             FROM machines m JOIN runs r ON r.machine_id = m.id
             WHERE (?1 IS NULL OR r.suite = ?1)
             GROUP BY m.id ORDER BY m.id",
        )
        .bind(suite)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(rows::machine_from_row).collect()
    }

    async fn latest_runs_per_machine(&self) -> Result<Vec<RunId>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT MAX(id) AS latest FROM runs GROUP BY suite, machine_id
             ORDER BY suite, latest DESC",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    async fn has_suite(&self, suite: &str) -> Result<bool, LedgerError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM runs WHERE suite = ? LIMIT 1")
            .bind(suite)
            .fetch_optional(&self.pool)
            .await?;
        Ok(found.is_some())
    }

    async fn trend(&self, suite: &str, machine_id: Option<i64>) -> Result<TrendData, LedgerError> {
        let run_rows = sqlx::query(
            "SELECT id, git_commit, git_commit_time, created_at FROM runs
             WHERE suite = ?1 AND (?2 IS NULL OR machine_id = ?2)
             ORDER BY COALESCE(git_commit_time, CAST(strftime('%s', created_at) AS INTEGER)), id",
        )
        .bind(suite)
        .bind(machine_id)
        .fetch_all(&self.pool)
        .await?;
        let runs = run_rows
            .iter()
            .map(rows::trend_run_from_row)
            .collect::<Result<Vec<_>, LedgerError>>()?;
        // The results in two halves read concurrently (each pool connection decodes rows on
        // its own thread).
        let ids: Vec<RunId> = runs.iter().map(|r| r.id).collect();
        let (older, newer) = ids.split_at(ids.len() / 2);
        let (mut values, newer) =
            tokio::try_join!(self.trend_values(older), self.trend_values(newer))?;
        values.extend(newer);
        let (mut trend, keys) = rows::assemble_trend(runs, &values)?;
        let meta = sqlx::query(
            "SELECT run_id, length(benchmark) || ':' || benchmark || metric AS series, benchmark,
                    metric, unit, direction
             FROM results WHERE run_id IN (SELECT value FROM json_each(?))",
        )
        .bind(json_text(&rows::first_runs(&keys))?)
        .fetch_all(&self.pool)
        .await?;
        rows::name_trend_series(&mut trend, &keys, &meta)?;
        Ok(trend)
    }

    async fn suite_annotations(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<Vec<RunAnnotation>, LedgerError> {
        let rows = sqlx::query(
            "SELECT a.run_id, a.created_at, a.text FROM annotations a JOIN runs r ON r.id = a.run_id
             WHERE r.suite = ?1 AND (?2 IS NULL OR r.machine_id = ?2) ORDER BY a.id",
        )
        .bind(suite)
        .bind(machine_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(rows::run_annotation_from_row).collect()
    }

    async fn annotations_between(
        &self,
        suite: &str,
        machine_id: i64,
        from: RunId,
        to: RunId,
    ) -> Result<Vec<RunAnnotation>, LedgerError> {
        // Runs are ordered as in `trend`: commit time (recording time outside git), then id.
        let rows = sqlx::query(
            "WITH ends AS (
                 SELECT COALESCE(git_commit_time, CAST(strftime('%s', created_at) AS INTEGER)) AS k, id
                 FROM runs WHERE id IN (?3, ?4)
             ),
             lo AS (SELECT k, id FROM ends ORDER BY k, id LIMIT 1),
             hi AS (SELECT k, id FROM ends ORDER BY k DESC, id DESC LIMIT 1),
             noted AS (
                 SELECT a.id AS note_id, a.run_id, a.created_at, a.text,
                        COALESCE(r.git_commit_time, CAST(strftime('%s', r.created_at) AS INTEGER)) AS k
                 FROM annotations a JOIN runs r ON r.id = a.run_id
                 WHERE r.suite = ?1 AND r.machine_id = ?2
             )
             SELECT n.run_id, n.created_at, n.text FROM noted n, lo, hi
             WHERE (n.k, n.run_id) >= (lo.k, lo.id) AND (n.k, n.run_id) <= (hi.k, hi.id)
             ORDER BY n.k, n.run_id, n.note_id",
        )
        .bind(suite)
        .bind(machine_id)
        .bind(from)
        .bind(to)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(rows::run_annotation_from_row).collect()
    }

    async fn tag_history(&self) -> Result<Vec<(RunId, String)>, LedgerError> {
        Ok(sqlx::query_as("SELECT run_id, name FROM tags ORDER BY id")
            .fetch_all(&self.pool)
            .await?)
    }

    async fn ledger_id(&self) -> Result<String, LedgerError> {
        Ok(
            sqlx::query_scalar("SELECT ledger_id FROM ledger_identity WHERE id = 1")
                .fetch_one(&self.pool)
                .await?,
        )
    }

    async fn copied_runs(
        &self,
        origin_ledger: &str,
    ) -> Result<BTreeMap<RunId, RunId>, LedgerError> {
        let pairs: Vec<(RunId, RunId)> =
            sqlx::query_as("SELECT origin_run, run_id FROM run_origins WHERE origin_ledger = ?")
                .bind(origin_ledger)
                .fetch_all(&self.pool)
                .await?;
        Ok(pairs.into_iter().collect())
    }

    async fn record_copy(&self, copy: &RunCopy) -> Result<RunId, LedgerError> {
        rows::check_run_parts(&copy.provenance, &copy.measurements)?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let run_id = insert_run(
            &mut tx,
            copy.source,
            &copy.provenance,
            &copy.measurements,
            &copy.created_at,
        )
        .await?;
        sqlx::query("INSERT INTO run_origins (run_id, origin_ledger, origin_run) VALUES (?, ?, ?)")
            .bind(run_id)
            .bind(&copy.origin_ledger)
            .bind(copy.origin_run)
            .execute(&mut *tx)
            .await?;
        for note in &copy.annotations {
            insert_annotation(&mut tx, run_id, note).await?;
        }
        tx.commit().await?;
        Ok(run_id)
    }

    async fn copy_annotation(
        &self,
        run: RunId,
        annotation: &Annotation,
    ) -> Result<(), LedgerError> {
        rows::check_annotation(&annotation.text)?;
        self.require_exists(run).await?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        insert_annotation(&mut tx, run, annotation).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn pairings(&self) -> Result<Vec<Pairing>, LedgerError> {
        let rows = sqlx::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev,
                    (SELECT round_seeds FROM pairing_layouts WHERE pairing_id = pairings.id)
                        AS round_seeds
             FROM pairings ORDER BY id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(rows::pairing_from_row).collect()
    }

    async fn copy_pairing(
        &self,
        base: RunId,
        head: RunId,
        pairing: &Pairing,
    ) -> Result<(), LedgerError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        insert_pairing(&mut tx, base, head, &pairing.plan, &pairing.created_at).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn record_artifact_once(
        &self,
        artifact: &NewArtifact,
    ) -> Result<ArtifactIngested, LedgerError> {
        self.insert_artifact(artifact, &now_rfc3339()).await
    }

    async fn copy_artifact(
        &self,
        artifact: &NewArtifact,
        created_at: &str,
    ) -> Result<ArtifactIngested, LedgerError> {
        self.insert_artifact(artifact, created_at).await
    }

    async fn artifacts(&self, run: RunId) -> Result<Vec<ArtifactSummary>, LedgerError> {
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {} FROM artifacts WHERE run_id = ? ORDER BY benchmark, kind, id",
            artifacts::SUMMARY_COLUMNS
        )))
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(artifacts::summary_from_row).collect()
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Option<StoredArtifact>, LedgerError> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {}, bytes FROM artifacts WHERE id = ?",
            artifacts::SUMMARY_COLUMNS
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(artifacts::stored_from_row).transpose()
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

//! The PostgreSQL engine: a server a team's runners all record into.
//!
//! The schema (migrations/postgres) has the same tables and columns as SQLite's in PostgreSQL
//! types, "C" collation on every text column (so names sort as on SQLite), and triggers that
//! reject UPDATE, DELETE and TRUNCATE on every table. A run is one transaction; concurrent
//! writers run side by side (machines and toolchains are shared rows, inserted with
//! `ON CONFLICT DO NOTHING` and read back, so two first runs of one machine both land).
//! sqlx's migrator holds an advisory lock, so concurrent first opens migrate once.

use crate::rows::{self, Cols, check_new_run, duplicate_result, json_text, to_i64};
use crate::{
    Annotation, BUSY_TIMEOUT, History, IngestKey, Ingested, LedgerError, LedgerStore, Location,
    MachineSummary, PairIngested, Pairing, PairingPlan, RunAnnotation, RunCopy, RunFilter, RunId,
    RunSummary, StoredRun, SuiteSummary, TrendData, now_rfc3339,
};
use async_trait::async_trait;
use bench_model::{Machine, Measurement, NewRun, RunProvenance, RunSource, Samples, Toolchain};
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use std::collections::BTreeMap;
use std::str::FromStr;

/// The PostgreSQL schema migrations (migrations/postgres), embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

crate::rows::impl_cols!(PgRow);

type Tx<'a> = sqlx::Transaction<'a, sqlx::Postgres>;

/// Connections per store: a CLI needs few; bench-web serves concurrent requests with them.
const MAX_CONNECTIONS: u32 = 8;

/// A ledger on a PostgreSQL server.
#[derive(Debug)]
pub struct PostgresStore {
    pool: PgPool,
    location: Location,
}

fn newest_known_migration() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

impl PostgresStore {
    /// Connects to the database at `url`, migrating it if needed. The database must exist (a
    /// server's administrator creates it); its tables are created here.
    ///
    /// # Errors
    /// When the server cannot be reached, the URL is invalid, the database is not a ledger of
    /// this schema, or it has a newer one.
    pub async fn open(url: &str, location: &Location) -> Result<Self, LedgerError> {
        let store = Self::connect(url, location, false).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Connects to the ledger at `url` for reading only (every transaction is read-only). It
    /// must be fully migrated.
    ///
    /// # Errors
    /// When the server cannot be reached, or the schema is missing, older or newer.
    pub async fn open_read_only(url: &str, location: &Location) -> Result<Self, LedgerError> {
        let store = Self::connect(url, location, true).await?;
        let applied = store.applied_migrations().await?;
        let supported = newest_known_migration();
        match applied.iter().max() {
            Some(&found) if found > supported => Err(LedgerError::NewerSchema {
                location: location.to_string(),
                found,
                supported,
            }),
            Some(&found) if found == supported => Ok(store),
            _ => Err(LedgerError::Invalid(format!(
                "{location} is not a migrated ledger; open it once with bench-run to create it"
            ))),
        }
    }

    async fn connect(url: &str, location: &Location, read_only: bool) -> Result<Self, LedgerError> {
        let open_error = |source: sqlx::Error| LedgerError::Open {
            location: location.to_string(),
            source: Box::new(source),
        };
        let mut options = PgConnectOptions::from_str(url).map_err(open_error)?;
        if read_only {
            options = options.options([("default_transaction_read_only", "on")]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(BUSY_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(open_error)?;
        Ok(Self {
            pool,
            location: location.clone(),
        })
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
            "SELECT 1::BIGINT FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations'",
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
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
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
        MIGRATOR
            .run(&self.pool)
            .await
            .map_err(|source| LedgerError::Migrate {
                location: self.location.to_string(),
                source: Box::new(source),
            })
    }

    async fn require_exists(&self, run: RunId) -> Result<(), LedgerError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE id = $1")
            .bind(run)
            .fetch_optional(&self.pool)
            .await?;
        found.map(|_| ()).ok_or(LedgerError::NoSuchRun(run))
    }

    async fn tags_of(&self, run: RunId) -> Result<Vec<String>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT g.name FROM tags g WHERE g.run_id = $1
             AND g.id = (SELECT MAX(h.id) FROM tags h WHERE h.name = g.name) ORDER BY g.name",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?)
    }

    async fn annotations(&self, run: RunId) -> Result<Vec<Annotation>, LedgerError> {
        let rows =
            sqlx::query("SELECT created_at, text FROM annotations WHERE run_id = $1 ORDER BY id")
                .bind(run)
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(rows::annotation_from_row).collect()
    }

    /// Value rows of a trend: see [`rows::assemble_trend`].
    async fn trend_values(&self, runs: &[RunId]) -> Result<Vec<PgRow>, LedgerError> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        Ok(sqlx::query(
            "SELECT run_id, length(benchmark) || ':' || benchmark || metric AS series, estimate,
                    lower, upper
             FROM results WHERE run_id = ANY($1)",
        )
        .bind(runs)
        .fetch_all(&self.pool)
        .await?)
    }
}

#[async_trait]
impl LedgerStore for PostgresStore {
    fn location(&self) -> &Location {
        &self.location
    }

    async fn record_run(&self, run: &NewRun) -> Result<RunId, LedgerError> {
        check_new_run(run)?;
        let mut tx = self.pool.begin().await?;
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
        key.check()?;
        let lookup = "SELECT run_id, content_sha256 FROM ingest_keys WHERE idempotency_key = $1";
        let mut tx = self.pool.begin().await?;
        let found = sqlx::query_as(lookup)
            .bind(&key.key)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(earlier) = rows::earlier_push(key, found)? {
            return Ok(earlier);
        }
        let id = insert_new_run(&mut tx, run).await?;
        // A concurrent push with this key holds the key's index entry until it commits; this
        // insert waits for it and then inserts nothing.
        let inserted = sqlx::query(
            "INSERT INTO ingest_keys (idempotency_key, run_id, content_sha256) VALUES ($1, $2, $3)
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(&key.key)
        .bind(id)
        .bind(&key.content_sha256)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            tx.rollback().await?;
            let found = sqlx::query_as(lookup)
                .bind(&key.key)
                .fetch_optional(&self.pool)
                .await?;
            return rows::earlier_push(key, found)?.ok_or_else(|| {
                LedgerError::Corrupt(format!("idempotency key {:?} vanished", key.key))
            });
        }
        tx.commit().await?;
        Ok(Ingested { id, created: true })
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
        let lookup = "SELECT run_id, content_sha256 FROM ingest_keys WHERE idempotency_key = $1";
        let base_of = "SELECT base_run_id FROM pairings WHERE head_run_id = $1";
        let mut tx = self.pool.begin().await?;
        let found = sqlx::query_as(lookup)
            .bind(&key.key)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(earlier) = rows::earlier_push(key, found)? {
            let base_id = sqlx::query_scalar(base_of)
                .bind(earlier.id)
                .fetch_optional(&mut *tx)
                .await?;
            return rows::earlier_pair(key, earlier, base_id);
        }
        let base_id = insert_new_run(&mut tx, base).await?;
        let head_id = insert_new_run(&mut tx, head).await?;
        insert_pairing(&mut tx, base_id, head_id, plan, &now_rfc3339()).await?;
        // As in record_run_once: a concurrent push with this key makes this insert a no-op.
        let inserted = sqlx::query(
            "INSERT INTO ingest_keys (idempotency_key, run_id, content_sha256) VALUES ($1, $2, $3)
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(&key.key)
        .bind(head_id)
        .bind(&key.content_sha256)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            tx.rollback().await?;
            let found = sqlx::query_as(lookup)
                .bind(&key.key)
                .fetch_optional(&self.pool)
                .await?;
            let earlier = rows::earlier_push(key, found)?.ok_or_else(|| {
                LedgerError::Corrupt(format!("idempotency key {:?} vanished", key.key))
            })?;
            let base_id = sqlx::query_scalar(base_of)
                .bind(earlier.id)
                .fetch_optional(&self.pool)
                .await?;
            return rows::earlier_pair(key, earlier, base_id);
        }
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
        let mut tx = self.pool.begin().await?;
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
                    t.llvm_version, t.rustc_verbose, t.cargo_version,
                    c.bench_exe_sha256, c.bench_exe_bytes, c.cpus, c.wall_ms, c.load_start_1,
                    c.load_start_5, c.load_start_15, c.load_end_1, c.load_end_5, c.load_end_15,
                    c.own_cpus, c.others_cpus, c.steal_pct, c.per_benchmark
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN toolchains t ON t.id = r.toolchain_id
             LEFT JOIN run_conditions c ON c.run_id = r.id
             WHERE r.id = $1",
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
        let rows = sqlx::query(
            "SELECT r.id, r.suite, r.created_at, r.source, r.git_commit, r.git_branch,
                    r.git_dirty, r.git_summary, r.machine_id, m.fingerprint, m.cpu_model,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id) AS n_results,
                    (SELECT string_agg(g.name, chr(31) ORDER BY g.name) FROM
                        (SELECT DISTINCT g.name FROM tags g WHERE g.run_id = r.id
                         AND g.id = (SELECT MAX(h.id) FROM tags h WHERE h.name = g.name)) g)
                        AS tag_names,
                    c.bench_exe_sha256, c.bench_exe_bytes, c.cpus, c.wall_ms, c.load_start_1,
                    c.load_start_5, c.load_start_15, c.load_end_1, c.load_end_5, c.load_end_15,
                    c.own_cpus, c.others_cpus, c.steal_pct, c.per_benchmark
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN run_conditions c ON c.run_id = r.id
             WHERE ($1::TEXT IS NULL OR r.suite = $1)
               AND ($2::TEXT IS NULL OR starts_with(m.fingerprint, $2))
               AND ($3::TEXT IS NULL OR r.git_branch = $3)
               AND ($4::TEXT IS NULL OR starts_with(r.git_commit, $4))
             ORDER BY r.id DESC LIMIT $5 OFFSET $6",
        )
        .bind(&filter.suite)
        .bind(&filter.machine)
        .bind(&filter.branch)
        .bind(&filter.commit)
        .bind(filter.limit)
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
            sqlx::query_scalar("SELECT MAX(id) FROM runs WHERE $1::TEXT IS NULL OR suite = $1")
                .bind(suite)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    async fn previous_run(&self, run: RunId) -> Result<Option<RunId>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT MAX(p.id) FROM runs p JOIN runs r ON r.id = $1
             WHERE p.suite = r.suite AND p.machine_id = r.machine_id AND p.id < r.id
               AND NOT p.quick AND p.source NOT IN ($2, $3, $4)",
        )
        .bind(run)
        .bind(RunSource::Confirmation.code())
        .bind(RunSource::AbBase.code())
        .bind(RunSource::AbHead.code())
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
        Ok(sqlx::query_scalar(
            "SELECT MAX(id) FROM runs WHERE starts_with(git_commit, $1)
             AND ($2::TEXT IS NULL OR suite = $2) AND source NOT IN ($3, $4)",
        )
        .bind(commit)
        .bind(suite)
        .bind(RunSource::AbBase.code())
        .bind(RunSource::AbHead.code())
        .fetch_one(&self.pool)
        .await?)
    }

    async fn run_by_tag(&self, name: &str) -> Result<Option<RunId>, LedgerError> {
        Ok(
            sqlx::query_scalar("SELECT run_id FROM tags WHERE name = $1 ORDER BY id DESC LIMIT 1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    async fn tag(&self, run: RunId, name: &str) -> Result<(), LedgerError> {
        let name = rows::check_tag_name(name)?;
        self.require_exists(run).await?;
        sqlx::query("INSERT INTO tags (run_id, name, created_at) VALUES ($1, $2, $3)")
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
             WHERE r.run_id = $1 ORDER BY r.benchmark, r.metric",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        let statistics = sqlx::query(
            "SELECT st.* FROM statistics st JOIN results r ON r.id = st.result_id
             WHERE r.run_id = $1",
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
        let rows = sqlx::query(
            "SELECT x.run_id, x.benchmark, x.metric, x.estimate FROM results x
             JOIN (SELECT id FROM runs WHERE suite = $1 AND machine_id = $2 AND id < $3
                     AND NOT quick AND source NOT IN ($4, $5)
                   ORDER BY id DESC LIMIT $6) p ON p.id = x.run_id
             ORDER BY x.run_id",
        )
        .bind(suite)
        .bind(machine_id)
        .bind(before)
        .bind(RunSource::AbBase.code())
        .bind(RunSource::AbHead.code())
        .bind(i64::try_from(runs).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await?;
        rows::assemble_history(&rows)
    }

    async fn pairing_of(&self, run: RunId) -> Result<Option<Pairing>, LedgerError> {
        let row = sqlx::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev
             FROM pairings WHERE base_run_id = $1 OR head_run_id = $1",
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
             WHERE ($1::TEXT IS NULL OR r.suite = $1)
             GROUP BY m.id, m.fingerprint, m.cpu_model, m.os, m.testbed ORDER BY m.id",
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

    async fn trend(&self, suite: &str, machine_id: Option<i64>) -> Result<TrendData, LedgerError> {
        let run_rows = sqlx::query(
            "SELECT id, git_commit, git_commit_time, created_at FROM runs
             WHERE suite = $1 AND ($2::BIGINT IS NULL OR machine_id = $2)
             ORDER BY COALESCE(git_commit_time,
                               EXTRACT(EPOCH FROM created_at::TIMESTAMPTZ)::BIGINT), id",
        )
        .bind(suite)
        .bind(machine_id)
        .fetch_all(&self.pool)
        .await?;
        let runs = run_rows
            .iter()
            .map(rows::trend_run_from_row)
            .collect::<Result<Vec<_>, LedgerError>>()?;
        let ids: Vec<RunId> = runs.iter().map(|r| r.id).collect();
        let (older, newer) = ids.split_at(ids.len() / 2);
        let (mut values, newer) =
            tokio::try_join!(self.trend_values(older), self.trend_values(newer))?;
        values.extend(newer);
        let (mut trend, keys) = rows::assemble_trend(runs, &values)?;
        let meta = sqlx::query(
            "SELECT run_id, length(benchmark) || ':' || benchmark || metric AS series, benchmark,
                    metric, unit, direction
             FROM results WHERE run_id = ANY($1)",
        )
        .bind(rows::first_runs(&keys))
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
             WHERE r.suite = $1 AND ($2::BIGINT IS NULL OR r.machine_id = $2) ORDER BY a.id",
        )
        .bind(suite)
        .bind(machine_id)
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
            sqlx::query_as("SELECT origin_run, run_id FROM run_origins WHERE origin_ledger = $1")
                .bind(origin_ledger)
                .fetch_all(&self.pool)
                .await?;
        Ok(pairs.into_iter().collect())
    }

    async fn record_copy(&self, copy: &RunCopy) -> Result<RunId, LedgerError> {
        rows::check_run_parts(&copy.provenance, &copy.measurements)?;
        let mut tx = self.pool.begin().await?;
        let run_id = insert_run(
            &mut tx,
            copy.source,
            &copy.provenance,
            &copy.measurements,
            &copy.created_at,
        )
        .await?;
        sqlx::query(
            "INSERT INTO run_origins (run_id, origin_ledger, origin_run) VALUES ($1, $2, $3)",
        )
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
        let mut tx = self.pool.begin().await?;
        insert_annotation(&mut tx, run, annotation).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn pairings(&self) -> Result<Vec<Pairing>, LedgerError> {
        let rows = sqlx::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev
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
        let mut tx = self.pool.begin().await?;
        insert_pairing(&mut tx, base, head, &pairing.plan, &pairing.created_at).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

async fn insert_annotation(
    tx: &mut Tx<'_>,
    run: RunId,
    annotation: &Annotation,
) -> Result<(), LedgerError> {
    sqlx::query("INSERT INTO annotations (run_id, created_at, text) VALUES ($1, $2, $3)")
        .bind(run)
        .bind(&annotation.created_at)
        .bind(&annotation.text)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

async fn insert_pairing(
    tx: &mut Tx<'_>,
    base: RunId,
    head: RunId,
    plan: &PairingPlan,
    created_at: &str,
) -> Result<(), LedgerError> {
    sqlx::query(
        "INSERT INTO pairings (created_at, base_run_id, head_run_id, rounds, seed, side_order,
            base_rev, head_rev)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(created_at)
    .bind(base)
    .bind(head)
    .bind(i64::try_from(plan.base_first.len()).unwrap_or(i64::MAX))
    .bind(plan.seed.to_string())
    .bind(rows::order_text(&plan.base_first))
    .bind(&plan.base_rev)
    .bind(&plan.head_rev)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Inserts a run being recorded now.
async fn insert_new_run(tx: &mut Tx<'_>, run: &NewRun) -> Result<RunId, LedgerError> {
    insert_run(
        tx,
        run.source,
        &run.provenance,
        &run.measurements,
        &now_rfc3339(),
    )
    .await
}

/// Inserts a run, its results, statistics, raw samples and conditions inside `tx` (the caller
/// commits).
async fn insert_run(
    tx: &mut Tx<'_>,
    source: RunSource,
    p: &RunProvenance,
    measurements: &[Measurement],
    created_at: &str,
) -> Result<RunId, LedgerError> {
    let machine_id = upsert_machine(tx, &p.machine).await?;
    let toolchain_id = match &p.toolchain {
        Some(t) => Some(upsert_toolchain(tx, t).await?),
        None => None,
    };
    let run_id: RunId = sqlx::query_scalar(
        "INSERT INTO runs (created_at, source, suite, package, command, cargo_command, cwd,
            machine_id, hostname, kernel, toolchain_id, profile, features, feature_flags,
            rustflags, env, cpu_governor, turbo, git_commit, git_branch, git_dirty,
            git_commit_time, git_summary, quick, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
                 $19, $20, $21, $22, $23, $24, $25)
         RETURNING id",
    )
    .bind(created_at)
    .bind(source.code())
    .bind(&p.suite)
    .bind(&p.package)
    .bind(json_text(&p.command)?)
    .bind(p.cargo_command.as_ref().map(json_text).transpose()?)
    .bind(&p.cwd)
    .bind(machine_id)
    .bind(&p.machine.hostname)
    .bind(&p.machine.kernel)
    .bind(toolchain_id)
    .bind(&p.build.profile)
    .bind(json_text(&p.build.features)?)
    .bind(json_text(&p.build.feature_flags)?)
    .bind(&p.build.rustflags)
    .bind(json_text(&p.env)?)
    .bind(&p.cpu_governor)
    .bind(&p.turbo)
    .bind(&p.git.commit)
    .bind(&p.git.branch)
    .bind(p.git.dirty)
    .bind(p.git.commit_time)
    .bind(&p.git.summary)
    .bind(p.quick)
    .bind(p.duration_ms)
    .fetch_one(&mut **tx)
    .await?;
    insert_run_conditions(tx, run_id, p).await?;
    // Results by the thousand: one statement per table, not per row (a server pays a round
    // trip for each).
    for (chunk_index, chunk) in measurements.chunks(RESULTS_PER_STATEMENT).enumerate() {
        let first = chunk_index * RESULTS_PER_STATEMENT;
        for index in first..first + chunk.len() {
            rows::failpoint("record-run", index);
        }
        insert_measurements(tx, run_id, chunk).await?;
    }
    Ok(run_id)
}

async fn upsert_machine(tx: &mut Tx<'_>, m: &Machine) -> Result<i64, LedgerError> {
    sqlx::query(
        "INSERT INTO machines (fingerprint, cpu_model, physical_cores, logical_cores, memory_bytes, os, arch,
            testbed)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (fingerprint) DO NOTHING",
    )
    .bind(&m.fingerprint)
    .bind(&m.cpu_model)
    .bind(m.physical_cores.map(i64::from))
    .bind(i64::from(m.logical_cores))
    .bind(m.memory_bytes.and_then(|b| i64::try_from(b).ok()))
    .bind(&m.os)
    .bind(&m.arch)
    .bind(&m.testbed)
    .execute(&mut **tx)
    .await?;
    Ok(
        sqlx::query_scalar("SELECT id FROM machines WHERE fingerprint = $1")
            .bind(&m.fingerprint)
            .fetch_one(&mut **tx)
            .await?,
    )
}

async fn upsert_toolchain(tx: &mut Tx<'_>, t: &Toolchain) -> Result<i64, LedgerError> {
    sqlx::query(
        "INSERT INTO toolchains (fingerprint, rustc_version, rustc_commit, host, llvm_version,
            rustc_verbose, cargo_version) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (fingerprint) DO NOTHING",
    )
    .bind(&t.fingerprint)
    .bind(&t.rustc_version)
    .bind(&t.rustc_commit)
    .bind(&t.host)
    .bind(&t.llvm_version)
    .bind(&t.rustc_verbose)
    .bind(&t.cargo_version)
    .execute(&mut **tx)
    .await?;
    Ok(
        sqlx::query_scalar("SELECT id FROM toolchains WHERE fingerprint = $1")
            .bind(&t.fingerprint)
            .fetch_one(&mut **tx)
            .await?,
    )
}

/// Results written by one statement.
const RESULTS_PER_STATEMENT: usize = 1000;

/// Inserts `measurements` (distinct benchmark and metric pairs, checked before) with their
/// statistics and raw samples: three statements whatever their number.
async fn insert_measurements(
    tx: &mut Tx<'_>,
    run_id: RunId,
    measurements: &[Measurement],
) -> Result<(), LedgerError> {
    let text = |f: fn(&Measurement) -> Option<&str>| -> Vec<Option<&str>> {
        measurements.iter().map(f).collect()
    };
    let float = |f: fn(&Measurement) -> Option<f64>| -> Vec<Option<f64>> {
        measurements.iter().map(f).collect()
    };
    let ids: Vec<(i64, String, String)> = sqlx::query_as(
        "INSERT INTO results (run_id, benchmark, group_id, function_id, value_str, metric, unit,
            direction, estimate, lower, upper, confidence_level, standard_error, throughput_kind,
            throughput_per_iter, sample_count)
         SELECT $1, * FROM UNNEST($2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::TEXT[],
             $7::TEXT[], $8::BIGINT[], $9::DOUBLE PRECISION[], $10::DOUBLE PRECISION[],
             $11::DOUBLE PRECISION[], $12::DOUBLE PRECISION[], $13::DOUBLE PRECISION[],
             $14::BIGINT[], $15::BIGINT[], $16::BIGINT[])
         RETURNING id, benchmark, metric",
    )
    .bind(run_id)
    .bind(text(|m| Some(m.benchmark.full.as_str())))
    .bind(text(|m| m.benchmark.group.as_deref()))
    .bind(text(|m| m.benchmark.function.as_deref()))
    .bind(text(|m| m.benchmark.value.as_deref()))
    .bind(text(|m| Some(m.metric.as_str())))
    .bind(text(|m| Some(m.unit.as_str())))
    .bind(
        measurements
            .iter()
            .map(|m| m.direction.code())
            .collect::<Vec<i64>>(),
    )
    .bind(float(|m| Some(m.estimate.point)))
    .bind(float(|m| m.estimate.lower))
    .bind(float(|m| m.estimate.upper))
    .bind(float(|m| m.estimate.confidence_level))
    .bind(float(|m| m.estimate.standard_error))
    .bind(
        measurements
            .iter()
            .map(|m| m.throughput.map(|t| t.kind.code()))
            .collect::<Vec<Option<i64>>>(),
    )
    .bind(
        measurements
            .iter()
            .map(|m| {
                m.throughput
                    .and_then(|t| i64::try_from(t.per_iteration).ok())
            })
            .collect::<Vec<Option<i64>>>(),
    )
    .bind(
        measurements
            .iter()
            .map(|m| {
                let n = m.samples.as_ref().map_or(0, Samples::len);
                i64::try_from(n).unwrap_or(i64::MAX)
            })
            .collect::<Vec<i64>>(),
    )
    .fetch_all(&mut **tx)
    .await
    .map_err(|e| match measurements.first() {
        Some(m) => duplicate_result(e, m),
        None => LedgerError::from(e),
    })?;
    // RETURNING's order is not promised: match the ids back by the unique key.
    let id_of: BTreeMap<(&str, &str), i64> = ids
        .iter()
        .map(|(id, b, m)| ((b.as_str(), m.as_str()), *id))
        .collect();
    let result_id = |m: &Measurement| -> Result<i64, LedgerError> {
        id_of
            .get(&(m.benchmark.full.as_str(), m.metric.as_str()))
            .copied()
            .ok_or_else(|| {
                LedgerError::Corrupt(format!(
                    "no id returned for result {:?} {:?}",
                    m.benchmark.full, m.metric
                ))
            })
    };

    let (mut stat_ids, mut codes, mut points) = (Vec::new(), Vec::new(), Vec::new());
    let (mut lowers, mut uppers, mut levels, mut errors) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut sample_ids, mut modes, mut iters, mut times) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for m in measurements {
        let id = result_id(m)?;
        for (statistic, e) in &m.statistics {
            stat_ids.push(id);
            codes.push(statistic.code());
            points.push(e.point);
            lowers.push(e.lower);
            uppers.push(e.upper);
            levels.push(e.confidence_level);
            errors.push(e.standard_error);
        }
        if let Some(samples) = &m.samples {
            sample_ids.push(id);
            modes.push(samples.mode().code());
            iters.push(rows::f64s_to_blob(samples.iters()));
            times.push(rows::f64s_to_blob(samples.times_ns()));
        }
    }
    if !stat_ids.is_empty() {
        sqlx::query(
            "INSERT INTO statistics (result_id, statistic, point, lower, upper, confidence_level,
                standard_error)
             SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::DOUBLE PRECISION[],
                 $4::DOUBLE PRECISION[], $5::DOUBLE PRECISION[], $6::DOUBLE PRECISION[],
                 $7::DOUBLE PRECISION[])",
        )
        .bind(stat_ids)
        .bind(codes)
        .bind(points)
        .bind(lowers)
        .bind(uppers)
        .bind(levels)
        .bind(errors)
        .execute(&mut **tx)
        .await?;
    }
    if !sample_ids.is_empty() {
        sqlx::query(
            "INSERT INTO samples (result_id, sampling_mode, iters, times_ns)
             SELECT * FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::BYTEA[], $4::BYTEA[])",
        )
        .bind(sample_ids)
        .bind(modes)
        .bind(iters)
        .bind(times)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

async fn insert_run_conditions(
    tx: &mut Tx<'_>,
    run_id: RunId,
    p: &RunProvenance,
) -> Result<(), LedgerError> {
    if p.bench_exe.is_none() && p.conditions.is_none() {
        return Ok(());
    }
    let exe = p.bench_exe.as_ref();
    let c = p.conditions.as_ref();
    let [s1, s5, s15, e1, e5, e15] = rows::load_columns(c);
    sqlx::query(
        "INSERT INTO run_conditions (run_id, bench_exe_sha256, bench_exe_bytes, cpus, wall_ms,
            load_start_1, load_start_5, load_start_15, load_end_1, load_end_5, load_end_15,
            own_cpus, others_cpus, steal_pct, per_benchmark)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(run_id)
    .bind(exe.map(|e| &e.sha256))
    .bind(
        exe.map(|e| to_i64("bench_exe.bytes", e.bytes))
            .transpose()?,
    )
    .bind(c.map(|c| i64::from(c.cpus)))
    .bind(
        c.map(|c| to_i64("conditions.wall_ms", c.wall_ms))
            .transpose()?,
    )
    .bind(s1)
    .bind(s5)
    .bind(s15)
    .bind(e1)
    .bind(e5)
    .bind(e15)
    .bind(c.map(|c| c.own_cpus))
    .bind(c.map(|c| c.others_cpus))
    .bind(c.map(|c| c.steal_pct))
    .bind(c.map(|c| json_text(&c.per_benchmark)).transpose()?)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

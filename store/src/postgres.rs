//! The PostgreSQL engine: a server a team's runners all record into.
//!
//! The schema (migrations/postgres) has the same tables and columns as SQLite's in PostgreSQL
//! types, "C" collation on every text column (so names sort as on SQLite), and triggers that
//! reject UPDATE, DELETE and TRUNCATE on every table. A run is one transaction; concurrent
//! writers run side by side (machines and toolchains are shared rows, inserted with
//! `ON CONFLICT DO NOTHING` and read back, so two first runs of one machine both land).
//! sqlx's migrator holds an advisory lock, so concurrent first opens migrate once.

use crate::artifacts;
use crate::rows::{self, Cols, check_new_run};
use crate::{
    Annotation, ArtifactId, ArtifactIngested, ArtifactSummary, BUSY_TIMEOUT, DatedRun, History,
    IngestKey, Ingested, LedgerError, LedgerStore, Location, MachineSummary, PairIngested, Pairing,
    PairingPlan, RunAnnotation, RunCopy, RunFilter, RunId, RunSummary, StoredArtifact, StoredRun,
    SuiteSummary, TrendData, now_rfc3339,
};
use async_trait::async_trait;
use bench_model::{Measurement, NewArtifact, NewRun, RunSource};
use sqlx::AssertSqlSafe;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use std::collections::BTreeMap;
use std::str::FromStr;

/// The PostgreSQL schema migrations (migrations/postgres), embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

crate::rows::impl_cols!(PgRow);

type Tx<'a> = sqlx::Transaction<'a, sqlx::Postgres>;

mod write;
use write::{
    base_of, claim_key, insert_annotation, insert_new_run, insert_pairing, insert_run, stored_key,
};

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
        let mut tx = self.pool.begin().await?;
        if let Some(earlier) = rows::earlier_push(key, stored_key(&mut *tx, key).await?)? {
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
        // A concurrent push with this key may have claimed it since the lookup: its run wins.
        if !claim_key(&mut tx, key, id).await? {
            tx.rollback().await?;
            return rows::earlier_push(key, stored_key(&self.pool, key).await?)?
                .ok_or_else(|| vanished(key));
        }
        tx.commit().await?;
        Ok(Ingested { id, created: true })
    }

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

    /// Records a checked artifact with its recording time, unless the same one is there.
    async fn insert_artifact(
        &self,
        artifact: &NewArtifact,
        created_at: &str,
    ) -> Result<ArtifactIngested, LedgerError> {
        let sha256 = artifacts::check(artifact)?;
        for run in std::iter::once(artifact.run).chain(artifact.against) {
            self.require_exists(run).await?;
        }
        // A concurrent recording of the same artifact holds its index entry until it commits:
        // this insert waits for it, inserts nothing, and the row is read back below.
        let inserted: Option<ArtifactId> = sqlx::query_scalar(
            "INSERT INTO artifacts (run_id, benchmark, kind, profiler, against_run_id, media_type,
                size, sha256, created_at, bytes)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT DO NOTHING RETURNING id",
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
        .fetch_optional(&self.pool)
        .await?;
        if let Some(id) = inserted {
            return Ok(ArtifactIngested { id, created: true });
        }
        let id: ArtifactId = sqlx::query_scalar(
            "SELECT id FROM artifacts WHERE run_id = $1 AND benchmark = $2 AND kind = $3
               AND profiler = $4 AND COALESCE(against_run_id, 0) = COALESCE($5, 0)
               AND sha256 = $6",
        )
        .bind(artifact.run)
        .bind(&artifact.benchmark)
        .bind(artifact.kind.code())
        .bind(&artifact.profiler)
        .bind(artifact.against)
        .bind(&sha256)
        .fetch_one(&self.pool)
        .await?;
        Ok(ArtifactIngested { id, created: false })
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
        let mut tx = self.pool.begin().await?;
        if let Some(earlier) = rows::earlier_push(key, stored_key(&mut *tx, key).await?)? {
            let base = base_of(&mut *tx, earlier.id).await?;
            return rows::earlier_pair(key, earlier, base);
        }
        let base_id = insert_new_run(&mut tx, base).await?;
        let head_id = insert_new_run(&mut tx, head).await?;
        insert_pairing(&mut tx, base_id, head_id, plan, &now_rfc3339()).await?;
        if !claim_key(&mut tx, key, head_id).await? {
            tx.rollback().await?;
            let earlier = rows::earlier_push(key, stored_key(&self.pool, key).await?)?
                .ok_or_else(|| vanished(key))?;
            let base = base_of(&self.pool, earlier.id).await?;
            return rows::earlier_pair(key, earlier, base);
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
                    r.git_dirty, r.git_summary, r.machine_id, m.fingerprint, m.cpu_model, r.quick,
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
        Ok(sqlx::query_scalar(concat!(
            "SELECT MAX(p.id) FROM runs p JOIN runs r ON r.id = $1
             WHERE p.suite = r.suite AND p.machine_id = r.machine_id AND p.id < r.id
               AND NOT p.quick AND p.source <> $2 AND p.source NOT IN ",
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
        Ok(sqlx::query_scalar(concat!(
            "SELECT MAX(id) FROM runs WHERE starts_with(git_commit, $1)
             AND ($2::TEXT IS NULL OR suite = $2) AND source NOT IN ",
            kept_out_of_history!()
        ))
        .bind(commit)
        .bind(suite)
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
        let rows = sqlx::query(concat!(
            "SELECT x.run_id, x.benchmark, x.metric, x.estimate FROM results x
             JOIN (SELECT id FROM runs WHERE suite = $1 AND machine_id = $2 AND id < $3
                     AND NOT quick AND source NOT IN ",
            kept_out_of_history!(),
            "
                   ORDER BY id DESC LIMIT $4) p ON p.id = x.run_id
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
                 SELECT COALESCE(git_commit_time,
                                 EXTRACT(EPOCH FROM created_at::TIMESTAMPTZ)::BIGINT) AS k, id
                 FROM runs WHERE id IN ($3, $4)
             ),
             lo AS (SELECT k, id FROM ends ORDER BY k, id LIMIT 1),
             hi AS (SELECT k, id FROM ends ORDER BY k DESC, id DESC LIMIT 1),
             noted AS (
                 SELECT a.id AS note_id, a.run_id, a.created_at, a.text,
                        COALESCE(r.git_commit_time,
                                 EXTRACT(EPOCH FROM r.created_at::TIMESTAMPTZ)::BIGINT) AS k
                 FROM annotations a JOIN runs r ON r.id = a.run_id
                 WHERE r.suite = $1 AND r.machine_id = $2
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
        let mut tx = self.pool.begin().await?;
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
            "SELECT {} FROM artifacts WHERE run_id = $1 ORDER BY benchmark, kind, id",
            artifacts::SUMMARY_COLUMNS
        )))
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(artifacts::summary_from_row).collect()
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Option<StoredArtifact>, LedgerError> {
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {}, bytes FROM artifacts WHERE id = $1",
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

/// A key that a concurrent push claimed but that is not stored once it committed.
fn vanished(key: &IngestKey) -> LedgerError {
    LedgerError::Corrupt(format!("idempotency key {:?} vanished", key.key))
}

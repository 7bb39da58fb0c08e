//! The ledger on an SQL engine: [`SqlStore`] implements [`LedgerStore`] once for both engines,
//! every statement written once ([`crate::engine`] says how, and what differs between them).
//!
//! Reads run on a connection of the pool; writes run in one transaction each (`write.rs`);
//! the schema is checked against the embedded migrations on open (`schema.rs`).

use crate::artifacts;
use crate::engine::{Engine, Tx};
use crate::rows::{self, Cols, check_new_run};
use crate::timestamps::now_rfc3339;
use crate::{
    ArtifactIngested, DatedRun, IngestKey, Ingested, LedgerError, LedgerStore, Location,
    MachineSummary, PairIngested, Pairing, PairingPlan, ProjectSummary, RunAnnotation, RunCopy,
    RunFilter, SuiteSummary, TrendData, TrendRuns,
};
use async_trait::async_trait;
use bench_model::{
    Annotation, ArtifactId, ArtifactSummary, History, Measurement, NewArtifact, NewRun, Project,
    RunId, RunSource, RunSummary, StoredArtifact, StoredRun,
};
use sqlx::Database;
use sqlx::pool::{Pool, PoolConnection};
use std::collections::BTreeMap;

mod schema;
mod write;

/// The columns of `run_conditions` a run's row is read with.
macro_rules! condition_columns {
    () => {
        "c.bench_exe_sha256, c.bench_exe_bytes, c.cpus, c.wall_ms, c.load_start_1,
         c.load_start_5, c.load_start_15, c.load_end_1, c.load_end_5, c.load_end_15,
         c.own_cpus, c.others_cpus, c.steal_pct, c.per_benchmark"
    };
}

/// The columns of an artifact's summary ([`artifacts::summary_from_row`]).
macro_rules! artifact_columns {
    () => {
        "id, run_id, benchmark, kind, profiler, against_run_id, media_type, size, sha256, created_at"
    };
}

/// A ledger in an SQL database of engine `E`: a pool of connections, where it is, and the
/// project every read and write of this handle is scoped to.
#[derive(Debug)]
pub struct SqlStore<E: Database> {
    pool: Pool<E>,
    location: Location,
    project: Project,
}

impl<E: Engine> SqlStore<E> {
    /// A store on `pool` in the default project; its schema is checked or migrated by the
    /// engine's constructor.
    pub(crate) fn new(pool: Pool<E>, location: Location) -> Self {
        Self {
            pool,
            location,
            project: Project::default(),
        }
    }

    /// The project's name, as bound in queries.
    fn p(&self) -> &str {
        self.project.as_str()
    }

    pub(crate) fn pool(&self) -> &Pool<E> {
        &self.pool
    }

    async fn conn(&self) -> Result<PoolConnection<E>, LedgerError> {
        Ok(self.pool.acquire().await?)
    }

    async fn begin_write(&self) -> Result<Tx<E>, LedgerError> {
        Ok(self.pool.begin_with(E::BEGIN_WRITE).await?)
    }

    async fn tags_of(&self, run: RunId) -> Result<Vec<String>, LedgerError> {
        // A tag names the run it was last given to in the project.
        E::query(
            "SELECT DISTINCT g.name FROM tags g WHERE g.run_id = $1
             AND g.id = (SELECT MAX(h.id) FROM tags h JOIN runs u ON u.id = h.run_id
                         WHERE h.name = g.name AND u.project = $2) ORDER BY g.name",
        )
        .bind(run)
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(|r| r.text("name"))
        .collect()
    }

    async fn annotations(&self, run: RunId) -> Result<Vec<Annotation>, LedgerError> {
        E::query("SELECT created_at, text FROM annotations WHERE run_id = $1 ORDER BY id")
            .bind(run)
            .fetch_all(&mut *self.conn().await?)
            .await?
            .iter()
            .map(rows::annotation_from_row)
            .collect()
    }

    /// The trend of the runs with ids above `after` (0: every run).
    async fn trend_after(
        &self,
        suite: &str,
        machine_id: Option<i64>,
        runs: TrendRuns,
        after: RunId,
    ) -> Result<TrendData, LedgerError> {
        let runs = E::query(&E::rendered().trend_runs)
            .bind(suite)
            .bind(machine_id)
            .bind(i64::from(runs == TrendRuns::Everything))
            .bind(self.p())
            .bind(after)
            .fetch_all(&mut *self.conn().await?)
            .await?
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
        let meta = E::query(&E::rendered().trend_series)
            .bind_runs(&rows::first_runs(&keys))?
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows::name_trend_series(&mut trend, &keys, &meta)?;
        Ok(trend)
    }

    /// Value rows of a trend: see [`rows::assemble_trend`].
    async fn trend_values(&self, runs: &[RunId]) -> Result<Vec<E::Row>, LedgerError> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        E::query(&E::rendered().trend_values)
            .bind_runs(runs)?
            .fetch_all(&mut *self.conn().await?)
            .await
    }
}

#[async_trait]
impl<E: Engine> LedgerStore for SqlStore<E> {
    fn location(&self) -> &Location {
        &self.location
    }

    fn project(&self) -> &Project {
        &self.project
    }

    fn in_project(&self, project: &Project) -> std::sync::Arc<dyn LedgerStore> {
        std::sync::Arc::new(Self {
            pool: self.pool.clone(),
            location: self.location.clone(),
            project: project.clone(),
        })
    }

    async fn stamp(&self) -> Result<String, LedgerError> {
        E::query(E::STAMP)
            .fetch_one(&mut *self.conn().await?)
            .await?
            .text("stamp")
    }

    async fn projects(&self) -> Result<Vec<ProjectSummary>, LedgerError> {
        E::query(
            "SELECT project, CAST(SUM(runs) AS BIGINT) AS runs, COUNT(DISTINCT suite) AS suites,
                    MAX(latest_run) AS latest
             FROM line_summaries GROUP BY project ORDER BY project",
        )
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(|r| {
            Ok(ProjectSummary {
                name: r.text("project")?,
                runs: r.int("runs")?,
                suites: r.int("suites")?,
                latest_run: r.int("latest")?,
            })
        })
        .collect()
    }

    async fn record_run(&self, run: &NewRun) -> Result<RunId, LedgerError> {
        check_new_run(run)?;
        let mut tx = self.begin_write().await?;
        let run_id = Self::insert_new_run(&mut tx, self.p(), run).await?;
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
        crate::timestamps::check_dated_run(dated)?;
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
        let mut tx = self.begin_write().await?;
        if let Some(earlier) = rows::earlier_push(key, Self::stored_key(&mut tx, key).await?)? {
            let base = Self::base_of(&mut tx, earlier.id).await?;
            return rows::earlier_pair(key, earlier, base);
        }
        let base_id = Self::insert_new_run(&mut tx, self.p(), base).await?;
        let head_id = Self::insert_new_run(&mut tx, self.p(), head).await?;
        Self::insert_pairing(&mut tx, base_id, head_id, plan, &now_rfc3339()).await?;
        // A concurrent push with this key may have claimed it since the lookup: its pair wins.
        if !Self::claim_key(&mut tx, key, head_id).await? {
            tx.rollback().await?;
            let mut conn = self.conn().await?;
            let earlier = rows::earlier_push(key, Self::stored_key(&mut conn, key).await?)?
                .ok_or_else(|| vanished(key))?;
            let base = Self::base_of(&mut conn, earlier.id).await?;
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
        let mut tx = self.begin_write().await?;
        let base_id = Self::insert_new_run(&mut tx, self.p(), base).await?;
        let head_id = Self::insert_new_run(&mut tx, self.p(), head).await?;
        Self::insert_pairing(&mut tx, base_id, head_id, plan, &now_rfc3339()).await?;
        tx.commit().await?;
        Ok((base_id, head_id))
    }

    async fn run(&self, id: RunId) -> Result<Option<StoredRun>, LedgerError> {
        let row = E::query(concat!(
            "SELECT r.*, m.fingerprint, m.cpu_model, m.physical_cores, m.logical_cores,
                    m.memory_bytes, m.os, m.arch, m.testbed,
                    t.fingerprint AS t_fingerprint, t.rustc_version, t.rustc_commit, t.host,
                    t.llvm_version, t.rustc_verbose, t.cargo_version, ",
            condition_columns!(),
            "
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN toolchains t ON t.id = r.toolchain_id
             LEFT JOIN run_conditions c ON c.run_id = r.id
             WHERE r.id = $1 AND r.project = $2"
        ))
        .bind(id)
        .bind(self.p())
        .fetch_optional(&mut *self.conn().await?)
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
        // Tag names are joined with U+001F (see rows::summary_from_row).
        E::query(concat!(
            "SELECT r.id, r.suite, r.created_at, r.source, r.git_commit, r.git_branch,
                    r.git_dirty, r.git_summary, r.machine_id, m.fingerprint, m.cpu_model, r.quick,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id) AS n_results,
                    (SELECT string_agg(g.name, '\u{1f}' ORDER BY g.name) FROM
                        (SELECT DISTINCT g.name FROM tags g WHERE g.run_id = r.id
                         AND g.id = (SELECT MAX(h.id) FROM tags h JOIN runs u ON u.id = h.run_id
                                     WHERE h.name = g.name AND u.project = r.project)) g)
                        AS tag_names, ",
            condition_columns!(),
            "
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN run_conditions c ON c.run_id = r.id
             WHERE r.project = $7 AND (CAST($1 AS TEXT) IS NULL OR r.suite = $1)
               AND (CAST($2 AS TEXT) IS NULL OR substr(m.fingerprint, 1, length($2)) = $2)
               AND (CAST($3 AS TEXT) IS NULL OR r.git_branch = $3)
               AND (CAST($4 AS TEXT) IS NULL OR substr(r.git_commit, 1, length($4)) = $4)
             ORDER BY r.id DESC LIMIT $5 OFFSET $6"
        ))
        .bind(&filter.suite)
        .bind(&filter.machine)
        .bind(&filter.branch)
        .bind(&filter.commit)
        .bind(filter.limit.unwrap_or(i64::MAX))
        .bind(filter.offset)
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(rows::summary_from_row)
        .collect()
    }

    async fn suites(&self) -> Result<Vec<SuiteSummary>, LedgerError> {
        E::query(
            "SELECT suite, CAST(SUM(runs) AS BIGINT) AS runs, MAX(latest_run) AS latest
             FROM line_summaries WHERE project = $1 GROUP BY suite ORDER BY suite",
        )
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
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
        let Some(suite) = suite else {
            return E::query("SELECT MAX(latest_run) AS id FROM line_summaries WHERE project = $1")
                .bind(self.p())
                .fetch_one(&mut *self.conn().await?)
                .await?
                .opt_int("id");
        };
        E::query(
            "SELECT MAX(latest_run) AS id FROM line_summaries WHERE project = $2 AND suite = $1",
        )
        .bind(suite)
        .bind(self.p())
        .fetch_one(&mut *self.conn().await?)
        .await?
        .opt_int("id")
    }

    async fn previous_run(&self, run: RunId) -> Result<Option<RunId>, LedgerError> {
        // Newest first with a limit, not MAX: the scan stops at the first run that qualifies
        // (as MAX over a join, PostgreSQL read every earlier run: 9 ms at 10k runs).
        E::query(concat!(
            "SELECT p.id FROM runs p JOIN runs r ON r.id = $1 AND r.project = $3
             WHERE p.project = r.project AND p.suite = r.suite AND p.machine_id = r.machine_id
               AND p.id < $1
               AND NOT p.quick AND p.source <> $2 AND p.source NOT IN ",
            kept_out_of_history!(),
            " ORDER BY p.id DESC LIMIT 1"
        ))
        .bind(run)
        .bind(RunSource::Confirmation.code())
        .bind(self.p())
        .fetch_optional(&mut *self.conn().await?)
        .await?
        .map(|r| r.int("id"))
        .transpose()
    }

    async fn run_at_commit(
        &self,
        commit: &str,
        suite: Option<&str>,
    ) -> Result<Option<RunId>, LedgerError> {
        if commit.is_empty() {
            return Ok(None);
        }
        // A range of hashes (hex digits, all below 'g') rather than LIKE: the index serves it,
        // and LIKE would read `_` and `%` in the user's prefix.
        E::query(concat!(
            "SELECT MAX(id) AS id FROM runs WHERE git_commit >= $1 AND git_commit < $1 || 'g'
             AND project = $3 AND (CAST($2 AS TEXT) IS NULL OR suite = $2) AND source NOT IN ",
            kept_out_of_history!()
        ))
        .bind(commit)
        .bind(suite)
        .bind(self.p())
        .fetch_one(&mut *self.conn().await?)
        .await?
        .opt_int("id")
    }

    async fn run_by_tag(&self, name: &str) -> Result<Option<RunId>, LedgerError> {
        E::query(
            "SELECT g.run_id FROM tags g JOIN runs r ON r.id = g.run_id
             WHERE g.name = $1 AND r.project = $2 ORDER BY g.id DESC LIMIT 1",
        )
        .bind(name)
        .bind(self.p())
        .fetch_optional(&mut *self.conn().await?)
        .await?
        .map(|r| r.int("run_id"))
        .transpose()
    }

    async fn tag(&self, run: RunId, name: &str) -> Result<(), LedgerError> {
        let name = rows::check_tag_name(name)?;
        let mut conn = self.conn().await?;
        Self::require_exists(&mut conn, run, self.p()).await?;
        E::query("INSERT INTO tags (run_id, name, created_at) VALUES ($1, $2, $3)")
            .bind(run)
            .bind(name)
            .bind(now_rfc3339().as_str())
            .execute(&mut conn)
            .await
    }

    async fn annotate(&self, run: RunId, text: &str) -> Result<(), LedgerError> {
        let note = Annotation {
            created_at: now_rfc3339(),
            text: text.to_owned(),
        };
        self.copy_annotation(run, &note).await
    }

    async fn measurements(&self, run: RunId) -> Result<Vec<Measurement>, LedgerError> {
        let mut conn = self.conn().await?;
        let results = E::query(
            "SELECT r.*, s.sampling_mode, s.iters, s.times_ns FROM results r
             JOIN runs u ON u.id = r.run_id AND u.project = $2
             LEFT JOIN samples s ON s.result_id = r.id
             WHERE r.run_id = $1 ORDER BY r.benchmark, r.metric",
        )
        .bind(run)
        .bind(self.p())
        .fetch_all(&mut conn)
        .await?;
        let statistics = E::query(
            "SELECT st.* FROM statistics st JOIN results r ON r.id = st.result_id
             JOIN runs u ON u.id = r.run_id AND u.project = $2
             WHERE r.run_id = $1",
        )
        .bind(run)
        .bind(self.p())
        .fetch_all(&mut conn)
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
        let rows = E::query(&E::rendered().history)
            .bind(suite)
            .bind(machine_id)
            .bind(before)
            .bind(i64::try_from(runs).unwrap_or(i64::MAX))
            .bind(self.p())
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows::assemble_history(&rows)
    }

    async fn pairing_of(&self, run: RunId) -> Result<Option<Pairing>, LedgerError> {
        E::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev,
                    (SELECT round_seeds FROM pairing_layouts WHERE pairing_id = pairings.id)
                        AS round_seeds
             FROM pairings WHERE (base_run_id = $1 OR head_run_id = $1)
               AND EXISTS (SELECT 1 FROM runs r WHERE r.id = $1 AND r.project = $2)",
        )
        .bind(run)
        .bind(self.p())
        .fetch_optional(&mut *self.conn().await?)
        .await?
        .as_ref()
        .map(rows::pairing_from_row)
        .transpose()
    }

    async fn machines(&self, suite: Option<&str>) -> Result<Vec<MachineSummary>, LedgerError> {
        E::query(
            "SELECT m.id, m.fingerprint, m.cpu_model, m.os, m.testbed,
                    CAST(SUM(l.runs) AS BIGINT) AS runs,
                    CAST(SUM(l.line_runs) AS BIGINT) AS line_runs, MAX(l.latest_run) AS latest
             FROM machines m JOIN line_summaries l ON l.machine_id = m.id
             WHERE l.project = $2 AND (CAST($1 AS TEXT) IS NULL OR l.suite = $1)
             GROUP BY m.id, m.fingerprint, m.cpu_model, m.os, m.testbed ORDER BY m.id",
        )
        .bind(suite)
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(rows::machine_from_row)
        .collect()
    }

    async fn latest_runs_per_machine(&self) -> Result<Vec<RunId>, LedgerError> {
        E::query(
            "SELECT COALESCE(latest_line_run, latest_run) AS latest
             FROM line_summaries WHERE project = $1 ORDER BY suite, latest DESC",
        )
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(|r| r.int("latest"))
        .collect()
    }

    async fn has_suite(&self, suite: &str) -> Result<bool, LedgerError> {
        let found =
            E::query("SELECT 1 AS found FROM runs WHERE project = $2 AND suite = $1 LIMIT 1")
                .bind(suite)
                .bind(self.p())
                .fetch_optional(&mut *self.conn().await?)
                .await?;
        Ok(found.is_some())
    }

    async fn trend(
        &self,
        suite: &str,
        machine_id: Option<i64>,
        runs: TrendRuns,
    ) -> Result<TrendData, LedgerError> {
        self.trend_after(suite, machine_id, runs, 0).await
    }

    async fn trend_since(
        &self,
        suite: &str,
        machine_id: Option<i64>,
        runs: TrendRuns,
        after: RunId,
    ) -> Result<TrendData, LedgerError> {
        self.trend_after(suite, machine_id, runs, after).await
    }

    async fn suite_annotations(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<Vec<RunAnnotation>, LedgerError> {
        E::query(
            "SELECT a.run_id, a.created_at, a.text FROM annotations a JOIN runs r ON r.id = a.run_id
             WHERE r.project = $3 AND r.suite = $1
               AND (CAST($2 AS BIGINT) IS NULL OR r.machine_id = $2)
             ORDER BY a.id",
        )
        .bind(suite)
        .bind(machine_id)
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(rows::run_annotation_from_row)
        .collect()
    }

    async fn annotations_between(
        &self,
        suite: &str,
        machine_id: i64,
        from: RunId,
        to: RunId,
    ) -> Result<Vec<RunAnnotation>, LedgerError> {
        E::query(&E::rendered().annotations_between)
            .bind(suite)
            .bind(machine_id)
            .bind(from)
            .bind(to)
            .bind(self.p())
            .fetch_all(&mut *self.conn().await?)
            .await?
            .iter()
            .map(rows::run_annotation_from_row)
            .collect()
    }

    async fn tag_history(&self) -> Result<Vec<(RunId, String)>, LedgerError> {
        E::query(
            "SELECT g.run_id, g.name FROM tags g JOIN runs r ON r.id = g.run_id
             WHERE r.project = $1 ORDER BY g.id",
        )
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(|r| Ok((r.int("run_id")?, r.text("name")?)))
        .collect()
    }

    async fn ledger_id(&self) -> Result<String, LedgerError> {
        E::query("SELECT ledger_id FROM ledger_identity WHERE id = 1")
            .fetch_one(&mut *self.conn().await?)
            .await?
            .text("ledger_id")
    }

    async fn copied_runs(
        &self,
        origin_ledger: &str,
    ) -> Result<BTreeMap<RunId, RunId>, LedgerError> {
        E::query("SELECT origin_run, run_id FROM run_origins WHERE origin_ledger = $1")
            .bind(origin_ledger)
            .fetch_all(&mut *self.conn().await?)
            .await?
            .iter()
            .map(|r| Ok((r.int("origin_run")?, r.int("run_id")?)))
            .collect()
    }

    async fn copies_of(
        &self,
        origin_prefix: &str,
        origin_run: RunId,
    ) -> Result<Vec<RunId>, LedgerError> {
        E::query(
            "SELECT run_id FROM run_origins \
             WHERE origin_run = $1 AND substr(origin_ledger, 1, length($2)) = $2 \
             ORDER BY run_id",
        )
        .bind(origin_run)
        .bind(origin_prefix)
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(|r| r.int("run_id"))
        .collect()
    }

    async fn record_copy(&self, copy: &RunCopy) -> Result<RunId, LedgerError> {
        rows::check_run_parts(&copy.provenance, &copy.measurements)?;
        let mut tx = self.begin_write().await?;
        let run_id = Self::insert_run(
            &mut tx,
            self.p(),
            copy.source,
            &copy.provenance,
            &copy.measurements,
            &copy.created_at,
        )
        .await?;
        E::query("INSERT INTO run_origins (run_id, origin_ledger, origin_run) VALUES ($1, $2, $3)")
            .bind(run_id)
            .bind(&copy.origin_ledger)
            .bind(copy.origin_run)
            .execute(&mut tx)
            .await?;
        for note in &copy.annotations {
            Self::insert_annotation(&mut tx, run_id, note).await?;
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
        Self::require_exists(&mut *self.conn().await?, run, self.p()).await?;
        let mut tx = self.begin_write().await?;
        Self::insert_annotation(&mut tx, run, annotation).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn pairings(&self) -> Result<Vec<Pairing>, LedgerError> {
        E::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev,
                    (SELECT round_seeds FROM pairing_layouts WHERE pairing_id = pairings.id)
                        AS round_seeds
             FROM pairings
             WHERE EXISTS (SELECT 1 FROM runs r WHERE r.id = pairings.head_run_id AND r.project = $1)
             ORDER BY id",
        )
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(rows::pairing_from_row)
        .collect()
    }

    async fn copy_pairing(
        &self,
        base: RunId,
        head: RunId,
        pairing: &Pairing,
    ) -> Result<(), LedgerError> {
        let mut tx = self.begin_write().await?;
        Self::insert_pairing(&mut tx, base, head, &pairing.plan, &pairing.created_at).await?;
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
        E::query(concat!(
            "SELECT ",
            artifact_columns!(),
            " FROM artifacts a WHERE run_id = $1
              AND EXISTS (SELECT 1 FROM runs r WHERE r.id = a.run_id AND r.project = $2)
              ORDER BY benchmark, kind, id"
        ))
        .bind(run)
        .bind(self.p())
        .fetch_all(&mut *self.conn().await?)
        .await?
        .iter()
        .map(artifacts::summary_from_row)
        .collect()
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Option<StoredArtifact>, LedgerError> {
        E::query(concat!(
            "SELECT ",
            artifact_columns!(),
            ", bytes FROM artifacts a WHERE id = $1
              AND EXISTS (SELECT 1 FROM runs r WHERE r.id = a.run_id AND r.project = $2)"
        ))
        .bind(id)
        .bind(self.p())
        .fetch_optional(&mut *self.conn().await?)
        .await?
        .as_ref()
        .map(artifacts::stored_from_row)
        .transpose()
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}
/// A key that a concurrent push claimed but that is not stored once it committed.
fn vanished(key: &IngestKey) -> LedgerError {
    LedgerError::Corrupt(format!("idempotency key {:?} vanished", key.key))
}

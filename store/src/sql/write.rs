//! The ledger's writes, each one transaction begun with [`Engine::BEGIN_WRITE`], and how a run
//! becomes rows inside it: the run, its conditions, the shared machine and toolchain rows,
//! annotations, pairings, artifacts and the idempotency keys of pushed runs. Results are the
//! engine's ([`Engine::insert_measurements`]).
//!
//! Shared rows (machines, toolchains, idempotency keys, artifacts) are looked up first and
//! inserted with `ON CONFLICT DO NOTHING`, then read back when nothing was inserted. On SQLite
//! the write lock is held from `BEGIN IMMEDIATE`, so the lookup is final and no insert
//! conflicts (its append-only triggers would refuse one that did); on PostgreSQL a concurrent
//! writer may insert the same row between the lookup and the insert: the insert waits for it
//! to commit, inserts nothing, and its row is the one read back.

use super::{SqlStore, vanished};
use crate::artifacts;
use crate::engine::Engine;
use crate::rows::{self, Cols, json_text, to_i64};
use crate::timestamps::now_rfc3339;
use crate::{ArtifactIngested, IngestKey, Ingested, LedgerError, PairingPlan};
use bench_model::{
    Annotation, ArtifactId, Machine, Measurement, NewArtifact, NewRun, RunId, RunProvenance,
    RunSource, Toolchain,
};

impl<E: Engine> SqlStore<E> {
    /// Records a checked run with its recording time and notes under `key`, unless the key
    /// recorded it already (see [`crate::LedgerStore::record_run_once`]).
    pub(super) async fn record_once(
        &self,
        run: &NewRun,
        created_at: &str,
        notes: &[String],
        key: &IngestKey,
    ) -> Result<Ingested, LedgerError> {
        key.check()?;
        let mut tx = self.begin_write().await?;
        if let Some(earlier) = rows::earlier_push(key, Self::stored_key(&mut tx, key).await?)? {
            return Ok(earlier);
        }
        let id = Self::insert_run(
            &mut tx,
            self.p(),
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
            Self::insert_annotation(&mut tx, id, &note).await?;
        }
        // A concurrent push with this key may have claimed it since the lookup: its run wins.
        if !Self::claim_key(&mut tx, key, id).await? {
            tx.rollback().await?;
            let stored = Self::stored_key(&mut *self.conn().await?, key).await?;
            return rows::earlier_push(key, stored)?.ok_or_else(|| vanished(key));
        }
        tx.commit().await?;
        Ok(Ingested { id, created: true })
    }

    /// [`LedgerError::NoSuchRun`] unless run `run` exists.
    pub(super) async fn require_exists(
        conn: &mut E::Connection,
        run: RunId,
        project: &str,
    ) -> Result<(), LedgerError> {
        E::query("SELECT id FROM runs WHERE id = $1 AND project = $2")
            .bind(run)
            .bind(project)
            .fetch_optional(conn)
            .await?
            .map(|_| ())
            .ok_or(LedgerError::NoSuchRun(run))
    }

    /// Records a checked artifact with its recording time, unless the same one is there.
    pub(super) async fn insert_artifact(
        &self,
        artifact: &NewArtifact,
        created_at: &str,
    ) -> Result<ArtifactIngested, LedgerError> {
        let sha256 = artifacts::check(artifact)?;
        let mut tx = self.begin_write().await?;
        for run in std::iter::once(artifact.run).chain(artifact.against) {
            Self::require_exists(&mut tx, run, self.p()).await?;
        }
        if let Some(id) = Self::artifact_id(&mut tx, artifact, &sha256).await? {
            return Ok(ArtifactIngested { id, created: false });
        }
        // A concurrent recording of the same artifact (PostgreSQL) holds its index entry until
        // it commits: this insert waits for it, inserts nothing, and the row is read back below.
        let inserted = E::query(
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
        .fetch_optional(&mut tx)
        .await?;
        if let Some(row) = inserted {
            let id = row.int("id")?;
            tx.commit().await?;
            return Ok(ArtifactIngested { id, created: true });
        }
        let id = Self::artifact_id(&mut tx, artifact, &sha256)
            .await?
            .ok_or_else(|| {
                LedgerError::Corrupt(format!(
                    "artifact of run {} vanished while it was recorded",
                    artifact.run
                ))
            })?;
        tx.rollback().await?;
        Ok(ArtifactIngested { id, created: false })
    }

    /// The id of the artifact recorded with this content, if any.
    async fn artifact_id(
        conn: &mut E::Connection,
        artifact: &NewArtifact,
        sha256: &str,
    ) -> Result<Option<ArtifactId>, LedgerError> {
        E::query(
            "SELECT id FROM artifacts WHERE run_id = $1 AND benchmark = $2 AND kind = $3
               AND profiler = $4 AND COALESCE(against_run_id, 0) = COALESCE($5, 0)
               AND sha256 = $6",
        )
        .bind(artifact.run)
        .bind(&artifact.benchmark)
        .bind(artifact.kind.code())
        .bind(&artifact.profiler)
        .bind(artifact.against)
        .bind(sha256)
        .fetch_optional(conn)
        .await?
        .map(|r| r.int("id"))
        .transpose()
    }

    pub(super) async fn insert_annotation(
        tx: &mut E::Connection,
        run: RunId,
        annotation: &Annotation,
    ) -> Result<(), LedgerError> {
        E::query("INSERT INTO annotations (run_id, created_at, text) VALUES ($1, $2, $3)")
            .bind(run)
            .bind(&annotation.created_at)
            .bind(&annotation.text)
            .execute(tx)
            .await
    }

    pub(super) async fn insert_pairing(
        tx: &mut E::Connection,
        base: RunId,
        head: RunId,
        plan: &PairingPlan,
        created_at: &str,
    ) -> Result<(), LedgerError> {
        let id = E::query(
            "INSERT INTO pairings (created_at, base_run_id, head_run_id, rounds, seed, side_order,
                base_rev, head_rev)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             RETURNING id",
        )
        .bind(created_at)
        .bind(base)
        .bind(head)
        .bind(i64::try_from(plan.base_first.len()).unwrap_or(i64::MAX))
        .bind(plan.seed.to_string().as_str())
        .bind(rows::order_text(&plan.base_first).as_str())
        .bind(&plan.base_rev)
        .bind(&plan.head_rev)
        .fetch_one(tx)
        .await?
        .int("id")?;
        if !plan.round_layouts.is_empty() {
            E::query("INSERT INTO pairing_layouts (pairing_id, round_seeds) VALUES ($1, $2)")
                .bind(id)
                .bind(rows::layouts_text(&plan.round_layouts).as_str())
                .execute(tx)
                .await?;
        }
        Ok(())
    }

    /// The run and content digest stored under `key`, if any.
    pub(super) async fn stored_key(
        conn: &mut E::Connection,
        key: &IngestKey,
    ) -> Result<Option<(RunId, String)>, LedgerError> {
        E::query("SELECT run_id, content_sha256 FROM ingest_keys WHERE idempotency_key = $1")
            .bind(&key.key)
            .fetch_optional(conn)
            .await?
            .map(|r| Ok((r.int("run_id")?, r.text("content_sha256")?)))
            .transpose()
    }

    /// Stores `key` for run `run`; `false` when a concurrent push with this key committed
    /// first (it holds the key's index entry until it commits: this insert waits for it and
    /// inserts nothing).
    pub(super) async fn claim_key(
        tx: &mut E::Connection,
        key: &IngestKey,
        run: RunId,
    ) -> Result<bool, LedgerError> {
        let inserted = E::query(
            "INSERT INTO ingest_keys (idempotency_key, run_id, content_sha256) VALUES ($1, $2, $3)
             ON CONFLICT (idempotency_key) DO NOTHING RETURNING run_id",
        )
        .bind(&key.key)
        .bind(run)
        .bind(&key.content_sha256)
        .fetch_optional(tx)
        .await?;
        Ok(inserted.is_some())
    }

    /// The base side of the pairing whose head is `head`, if any.
    pub(super) async fn base_of(
        conn: &mut E::Connection,
        head: RunId,
    ) -> Result<Option<RunId>, LedgerError> {
        E::query("SELECT base_run_id FROM pairings WHERE head_run_id = $1")
            .bind(head)
            .fetch_optional(conn)
            .await?
            .map(|r| r.int("base_run_id"))
            .transpose()
    }

    /// Inserts a run being recorded now.
    pub(super) async fn insert_new_run(
        tx: &mut E::Connection,
        project: &str,
        run: &NewRun,
    ) -> Result<RunId, LedgerError> {
        Self::insert_run(
            tx,
            project,
            run.source,
            &run.provenance,
            &run.measurements,
            &now_rfc3339(),
        )
        .await
    }

    /// Inserts a run, its results, statistics, raw samples and conditions inside `tx` (the
    /// caller commits).
    pub(super) async fn insert_run(
        tx: &mut E::Connection,
        project: &str,
        source: RunSource,
        p: &RunProvenance,
        measurements: &[Measurement],
        created_at: &str,
    ) -> Result<RunId, LedgerError> {
        let machine_id = Self::upsert_machine(tx, &p.machine).await?;
        let toolchain_id = match &p.toolchain {
            Some(t) => Some(Self::upsert_toolchain(tx, t).await?),
            None => None,
        };
        let run_id = E::query(
            "INSERT INTO runs (created_at, source, suite, package, command, cargo_command, cwd,
                machine_id, hostname, kernel, toolchain_id, profile, features, feature_flags,
                rustflags, env, cpu_governor, turbo, git_commit, git_branch, git_dirty,
                git_commit_time, git_summary, quick, duration_ms, project)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                     $18, $19, $20, $21, $22, $23, $24, $25, $26)
             RETURNING id",
        )
        .bind(created_at)
        .bind(source.code())
        .bind(&p.suite)
        .bind(&p.package)
        .bind(&json_text(&p.command)?)
        .bind(
            p.cargo_command
                .as_ref()
                .map(json_text)
                .transpose()?
                .as_ref(),
        )
        .bind(&p.cwd)
        .bind(machine_id)
        .bind(&p.machine.hostname)
        .bind(&p.machine.kernel)
        .bind(toolchain_id)
        .bind(&p.build.profile)
        .bind(&json_text(&p.build.features)?)
        .bind(&json_text(&p.build.feature_flags)?)
        .bind(&p.build.rustflags)
        .bind(&json_text(&p.env)?)
        .bind(&p.cpu_governor)
        .bind(&p.turbo)
        .bind(&p.git.commit)
        .bind(&p.git.branch)
        .bind(p.git.dirty)
        .bind(p.git.commit_time)
        .bind(&p.git.summary)
        .bind(p.quick)
        .bind(p.duration_ms)
        .bind(project)
        .fetch_one(tx)
        .await?
        .int("id")?;
        Self::insert_run_conditions(tx, run_id, p).await?;
        E::insert_measurements(tx, run_id, measurements).await?;
        let on_the_line = source.is_on_the_line() && !p.quick;
        Self::count_in_line(tx, project, &p.suite, machine_id, run_id, on_the_line).await?;
        Ok(run_id)
    }

    /// Counts run `run` in its line's summary. Last of a run's statements: on PostgreSQL the
    /// summary's row stays locked until the run commits, and a concurrent push to the same
    /// line waits here for it, not for the whole insert of its results.
    async fn count_in_line(
        tx: &mut E::Connection,
        project: &str,
        suite: &str,
        machine_id: i64,
        run: RunId,
        on_the_line: bool,
    ) -> Result<(), LedgerError> {
        // Runs commit out of id order on PostgreSQL: the newest is the larger, not the last.
        E::query(
            "INSERT INTO line_summaries
                 (project, suite, machine_id, runs, line_runs, latest_run, latest_line_run)
             VALUES ($1, $2, $3, 1, $4, $5, $6)
             ON CONFLICT (project, suite, machine_id) DO UPDATE SET
                 runs = line_summaries.runs + 1,
                 line_runs = line_summaries.line_runs + excluded.line_runs,
                 latest_run = CASE WHEN excluded.latest_run > line_summaries.latest_run
                     THEN excluded.latest_run ELSE line_summaries.latest_run END,
                 latest_line_run = COALESCE(CASE
                     WHEN excluded.latest_line_run > line_summaries.latest_line_run
                     THEN excluded.latest_line_run ELSE line_summaries.latest_line_run END,
                     excluded.latest_line_run)",
        )
        .bind(project)
        .bind(suite)
        .bind(machine_id)
        .bind(i64::from(on_the_line))
        .bind(run)
        .bind(on_the_line.then_some(run))
        .execute(tx)
        .await?;
        Ok(())
    }

    /// The id of the machine row of `m`'s fingerprint, inserted if new.
    async fn upsert_machine(tx: &mut E::Connection, m: &Machine) -> Result<i64, LedgerError> {
        const FIND: &str = "SELECT id FROM machines WHERE fingerprint = $1";
        if let Some(row) = E::query(FIND)
            .bind(&m.fingerprint)
            .fetch_optional(tx)
            .await?
        {
            return row.int("id");
        }
        let inserted = E::query(
            "INSERT INTO machines (fingerprint, cpu_model, physical_cores, logical_cores,
                memory_bytes, os, arch, testbed)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (fingerprint) DO NOTHING RETURNING id",
        )
        .bind(&m.fingerprint)
        .bind(&m.cpu_model)
        .bind(m.physical_cores.map(i64::from))
        .bind(i64::from(m.logical_cores))
        .bind(m.memory_bytes.and_then(|b| i64::try_from(b).ok()))
        .bind(&m.os)
        .bind(&m.arch)
        .bind(&m.testbed)
        .fetch_optional(tx)
        .await?;
        match inserted {
            Some(row) => row.int("id"),
            // A concurrent first run of this machine inserted it since the lookup.
            None => E::query(FIND)
                .bind(&m.fingerprint)
                .fetch_one(tx)
                .await?
                .int("id"),
        }
    }

    /// The id of the toolchain row of `t`'s fingerprint, inserted if new.
    async fn upsert_toolchain(tx: &mut E::Connection, t: &Toolchain) -> Result<i64, LedgerError> {
        const FIND: &str = "SELECT id FROM toolchains WHERE fingerprint = $1";
        if let Some(row) = E::query(FIND)
            .bind(&t.fingerprint)
            .fetch_optional(tx)
            .await?
        {
            return row.int("id");
        }
        let inserted = E::query(
            "INSERT INTO toolchains (fingerprint, rustc_version, rustc_commit, host, llvm_version,
                rustc_verbose, cargo_version) VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (fingerprint) DO NOTHING RETURNING id",
        )
        .bind(&t.fingerprint)
        .bind(&t.rustc_version)
        .bind(&t.rustc_commit)
        .bind(&t.host)
        .bind(&t.llvm_version)
        .bind(&t.rustc_verbose)
        .bind(&t.cargo_version)
        .fetch_optional(tx)
        .await?;
        match inserted {
            Some(row) => row.int("id"),
            // A concurrent first run with this toolchain inserted it since the lookup.
            None => E::query(FIND)
                .bind(&t.fingerprint)
                .fetch_one(tx)
                .await?
                .int("id"),
        }
    }

    async fn insert_run_conditions(
        tx: &mut E::Connection,
        run_id: RunId,
        p: &RunProvenance,
    ) -> Result<(), LedgerError> {
        if p.bench_exe.is_none() && p.conditions.is_none() {
            return Ok(());
        }
        let exe = p.bench_exe.as_ref();
        let c = p.conditions.as_ref();
        let [s1, s5, s15, e1, e5, e15] = rows::load_columns(c);
        E::query(
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
        .bind(c.map(|c| json_text(&c.per_benchmark)).transpose()?.as_ref())
        .execute(tx)
        .await
    }
}

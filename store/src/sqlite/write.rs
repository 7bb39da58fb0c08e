//! How a run becomes rows on SQLite: the inserts of one `BEGIN IMMEDIATE` transaction, the
//! shared machine and toolchain rows, and the idempotency keys of pushed runs.

use super::Tx;
use crate::rows::{self, duplicate_result, json_text, to_i64};
use crate::{Annotation, IngestKey, LedgerError, PairingPlan, RunId, now_rfc3339};
use bench_model::{Machine, Measurement, NewRun, RunProvenance, RunSource, Samples, Toolchain};

pub(super) async fn insert_annotation(
    tx: &mut Tx<'_>,
    run: RunId,
    annotation: &Annotation,
) -> Result<(), LedgerError> {
    sqlx::query("INSERT INTO annotations (run_id, created_at, text) VALUES (?, ?, ?)")
        .bind(run)
        .bind(&annotation.created_at)
        .bind(&annotation.text)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

pub(super) async fn insert_pairing(
    tx: &mut Tx<'_>,
    base: RunId,
    head: RunId,
    plan: &PairingPlan,
    created_at: &str,
) -> Result<(), LedgerError> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO pairings (created_at, base_run_id, head_run_id, rounds, seed, side_order,
            base_rev, head_rev)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         RETURNING id",
    )
    .bind(created_at)
    .bind(base)
    .bind(head)
    .bind(i64::try_from(plan.base_first.len()).unwrap_or(i64::MAX))
    .bind(plan.seed.to_string())
    .bind(rows::order_text(&plan.base_first))
    .bind(&plan.base_rev)
    .bind(&plan.head_rev)
    .fetch_one(&mut **tx)
    .await?;
    if !plan.round_layouts.is_empty() {
        sqlx::query("INSERT INTO pairing_layouts (pairing_id, round_seeds) VALUES (?, ?)")
            .bind(id)
            .bind(rows::layouts_text(&plan.round_layouts))
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Inserts a run being recorded now.
/// The run and content digest stored under `key`, if any.
pub(super) async fn stored_key(
    tx: &mut Tx<'_>,
    key: &IngestKey,
) -> Result<Option<(RunId, String)>, LedgerError> {
    Ok(
        sqlx::query_as("SELECT run_id, content_sha256 FROM ingest_keys WHERE idempotency_key = ?")
            .bind(&key.key)
            .fetch_optional(&mut **tx)
            .await?,
    )
}

pub(super) async fn insert_new_run(tx: &mut Tx<'_>, run: &NewRun) -> Result<RunId, LedgerError> {
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
pub(super) async fn insert_run(
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
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
    for (index, m) in measurements.iter().enumerate() {
        rows::failpoint("record-run", index);
        insert_measurement(tx, run_id, m).await?;
    }
    Ok(run_id)
}

async fn upsert_machine(tx: &mut Tx<'_>, m: &Machine) -> Result<i64, LedgerError> {
    let existing: Option<i64> = sqlx::query_scalar("SELECT id FROM machines WHERE fingerprint = ?")
        .bind(&m.fingerprint)
        .fetch_optional(&mut **tx)
        .await?;
    if let Some(id) = existing {
        return Ok(id);
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO machines (fingerprint, cpu_model, physical_cores, logical_cores, memory_bytes, os, arch,
            testbed)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&m.fingerprint)
    .bind(&m.cpu_model)
    .bind(m.physical_cores.map(i64::from))
    .bind(i64::from(m.logical_cores))
    .bind(m.memory_bytes.and_then(|b| i64::try_from(b).ok()))
    .bind(&m.os)
    .bind(&m.arch)
    .bind(&m.testbed)
    .fetch_one(&mut **tx)
    .await?)
}

async fn upsert_toolchain(tx: &mut Tx<'_>, t: &Toolchain) -> Result<i64, LedgerError> {
    let existing: Option<i64> =
        sqlx::query_scalar("SELECT id FROM toolchains WHERE fingerprint = ?")
            .bind(&t.fingerprint)
            .fetch_optional(&mut **tx)
            .await?;
    if let Some(id) = existing {
        return Ok(id);
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO toolchains (fingerprint, rustc_version, rustc_commit, host, llvm_version,
            rustc_verbose, cargo_version) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&t.fingerprint)
    .bind(&t.rustc_version)
    .bind(&t.rustc_commit)
    .bind(&t.host)
    .bind(&t.llvm_version)
    .bind(&t.rustc_verbose)
    .bind(&t.cargo_version)
    .fetch_one(&mut **tx)
    .await?)
}

async fn insert_measurement(
    tx: &mut Tx<'_>,
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
    .fetch_one(&mut **tx)
    .await
    .map_err(|e| duplicate_result(e, m))?;
    for (statistic, s) in &m.statistics {
        sqlx::query(
            "INSERT INTO statistics (result_id, statistic, point, lower, upper, confidence_level, standard_error)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(result_id)
        .bind(statistic.code())
        .bind(s.point)
        .bind(s.lower)
        .bind(s.upper)
        .bind(s.confidence_level)
        .bind(s.standard_error)
        .execute(&mut **tx)
        .await?;
    }
    if let Some(samples) = &m.samples {
        sqlx::query(
            "INSERT INTO samples (result_id, sampling_mode, iters, times_ns) VALUES (?, ?, ?, ?)",
        )
        .bind(result_id)
        .bind(samples.mode().code())
        .bind(rows::f64s_to_blob(samples.iters()))
        .bind(rows::f64s_to_blob(samples.times_ns()))
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
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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

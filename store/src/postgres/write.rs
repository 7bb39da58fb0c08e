//! How a run becomes rows on PostgreSQL: the inserts of one transaction (results, statistics and
//! samples in one statement per table), the shared machine and toolchain rows, and the
//! idempotency keys of pushed runs.

use super::Tx;
use crate::rows::{self, duplicate_result, json_text, to_i64};
use crate::{Annotation, IngestKey, LedgerError, PairingPlan, RunId, now_rfc3339};
use bench_model::{Machine, Measurement, NewRun, RunProvenance, RunSource, Samples, Toolchain};
use std::collections::BTreeMap;

pub(super) async fn insert_annotation(
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
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
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
        sqlx::query("INSERT INTO pairing_layouts (pairing_id, round_seeds) VALUES ($1, $2)")
            .bind(id)
            .bind(rows::layouts_text(&plan.round_layouts))
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Inserts a run being recorded now.
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

/// The run and content digest stored under `key`, if any (in a transaction or on the pool).
pub(super) async fn stored_key<'e>(
    db: impl sqlx::PgExecutor<'e>,
    key: &IngestKey,
) -> Result<Option<(RunId, String)>, LedgerError> {
    Ok(
        sqlx::query_as("SELECT run_id, content_sha256 FROM ingest_keys WHERE idempotency_key = $1")
            .bind(&key.key)
            .fetch_optional(db)
            .await?,
    )
}

/// Stores `key` for run `run`; `false` when a concurrent push with this key committed first (it
/// holds the key's index entry until it commits: this insert waits for it and inserts nothing).
pub(super) async fn claim_key(
    tx: &mut Tx<'_>,
    key: &IngestKey,
    run: RunId,
) -> Result<bool, LedgerError> {
    let inserted = sqlx::query(
        "INSERT INTO ingest_keys (idempotency_key, run_id, content_sha256) VALUES ($1, $2, $3)
         ON CONFLICT (idempotency_key) DO NOTHING",
    )
    .bind(&key.key)
    .bind(run)
    .bind(&key.content_sha256)
    .execute(&mut **tx)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// The base side of the pairing whose head is `head`, if any.
pub(super) async fn base_of<'e>(
    db: impl sqlx::PgExecutor<'e>,
    head: RunId,
) -> Result<Option<RunId>, LedgerError> {
    Ok(
        sqlx::query_scalar("SELECT base_run_id FROM pairings WHERE head_run_id = $1")
            .bind(head)
            .fetch_optional(db)
            .await?,
    )
}

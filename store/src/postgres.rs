//! The PostgreSQL engine: a server a team's runners all record into.
//!
//! The schema (migrations/postgres) has the same tables and columns as SQLite's in PostgreSQL
//! types, "C" collation on every text column (so names sort as on SQLite), and triggers that
//! reject UPDATE, DELETE and TRUNCATE on every table. A run is one transaction; concurrent
//! writers run side by side (shared rows are inserted with `ON CONFLICT DO NOTHING` and read
//! back, so two first runs of one machine both land). sqlx's migrator holds an advisory lock,
//! so concurrent first opens migrate once. The statements are shared with SQLite
//! (`engine.rs`); this module connects, migrates, and says what PostgreSQL spells its
//! own way.

use crate::engine::Rendered;
use crate::engine::{BoxFuture, Engine, Query};
use crate::rows::{self, duplicate_result};
use crate::sql::SqlStore;
use crate::{BUSY_TIMEOUT, LedgerError, Location};
use bench_model::{Measurement, RunId, Samples};
use sqlx::Postgres;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPoolOptions, PgRow};
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::LazyLock;

/// The PostgreSQL schema migrations (migrations/postgres), embedded.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Whether sqlx's migrations table exists.
const HAS_MIGRATIONS: &str = "SELECT 1 AS found FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations'";

crate::rows::impl_cols!(PgRow);

/// Connections per store: a CLI needs few; bench-web serves concurrent requests with them,
/// and a push holds one for its whole transaction (tens of milliseconds), so readers need
/// their own beside the pushes in flight (`bench-web --max-pushes`, 16 by default).
const MAX_CONNECTIONS: u32 = 32;

/// A ledger on a PostgreSQL server.
pub type PostgresStore = SqlStore<Postgres>;

impl Engine for Postgres {
    const BEGIN_WRITE: &'static str = "BEGIN";

    const COMMIT_ORDER: &'static str =
        "COALESCE(git_commit_time, EXTRACT(EPOCH FROM created_at::TIMESTAMPTZ)::BIGINT)";

    const RUN_ID_IN: &'static str = "run_id = ANY($1)";

    // The largest ids, and the write transactions in flight: ids alone would not do (a run
    // whose transaction took its id first may commit after a run with a larger id), but such
    // a transaction is in flight when the stamp is read, and its end changes the list. A
    // transaction that begins later takes larger ids. Other writes of the server (vacuum,
    // other databases) change the stamp only while they are in flight at that moment.
    const STAMP: &'static str = concat!(
        "SELECT ",
        largest_ids!(),
        " || '/' || COALESCE((SELECT string_agg(CAST(x AS TEXT), ',' ORDER BY x)
             FROM pg_snapshot_xip(pg_current_snapshot()) x), '') AS stamp"
    );

    fn run_id_in_select(select: &str) -> String {
        format!("run_id = ANY(ARRAY({select}))")
    }

    fn bind_runs(query: Query<Self>, runs: &[RunId]) -> Result<Query<Self>, LedgerError> {
        Ok(query.bind(runs.to_vec()))
    }

    fn rendered() -> &'static Rendered {
        static RENDERED: LazyLock<Rendered> = LazyLock::new(Rendered::new::<Postgres>);
        &RENDERED
    }

    /// Results by the thousand: one statement per table, not per row (a server pays a round
    /// trip for each).
    fn insert_measurements<'a>(
        tx: &'a mut PgConnection,
        run: RunId,
        measurements: &'a [Measurement],
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move {
            for (chunk_index, chunk) in measurements.chunks(RESULTS_PER_STATEMENT).enumerate() {
                let first = chunk_index * RESULTS_PER_STATEMENT;
                for index in first..first + chunk.len() {
                    rows::failpoint("record-run", index);
                }
                insert_chunk(tx, run, chunk).await?;
            }
            Ok(())
        })
    }
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
        if store.needs_migration(&MIGRATOR, HAS_MIGRATIONS).await? {
            MIGRATOR
                .run(store.pool())
                .await
                .map_err(|source| store.migrate_error(source))?;
        }
        Ok(store)
    }

    /// Connects to the ledger at `url` for reading only (every transaction is read-only). It
    /// must be fully migrated.
    ///
    /// # Errors
    /// When the server cannot be reached, or the schema is missing, older or newer.
    pub async fn open_read_only(url: &str, location: &Location) -> Result<Self, LedgerError> {
        let store = Self::connect(url, location, true).await?;
        store.require_migrated(&MIGRATOR, HAS_MIGRATIONS).await?;
        Ok(store)
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
        Ok(Self::new(pool, location.clone()))
    }
}

/// Results written by one statement.
const RESULTS_PER_STATEMENT: usize = 1000;

/// Inserts `measurements` (distinct benchmark and metric pairs, checked before) with their
/// statistics and raw samples: three statements whatever their number.
async fn insert_chunk(
    tx: &mut PgConnection,
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
    .fetch_all(&mut *tx)
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
        .execute(&mut *tx)
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
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

//! What the shared statements need of an engine.
//!
//! Every statement of the store is written once (in `sql/`) and runs on both engines:
//!
//! - parameters are PostgreSQL's `$1`, `$2`, ...: SQLite reads `$N` as a named parameter and
//!   sqlx binds it to the N-th argument, so a parameter may appear twice on both;
//! - where the two spell a thing differently but share a form, the shared form is written:
//!   `CAST($1 AS TEXT)`, not `$1::TEXT`; `NOT quick`, true of a 0 flag on SQLite and of a
//!   false BOOLEAN on PostgreSQL; `string_agg(... ORDER BY ...)` (SQLite 3.44, bundled);
//!   `substr` prefixes; `ON CONFLICT ... DO NOTHING RETURNING`.
//!
//! What still differs is small and lives in each engine's [`Engine`] impl:
//!
//! - how a write transaction begins ([`Engine::BEGIN_WRITE`]);
//! - two SQL fragments, a run's commit order and a list of run ids ([`Engine::COMMIT_ORDER`],
//!   [`Engine::RUN_ID_IN`]), and the statements holding them, rendered once ([`Rendered`]);
//! - how a run's results are inserted ([`Engine::insert_measurements`]): a statement per row
//!   in-process, a statement per table over a network.
//!
//! The sqlx side, binding the ledger's kinds of value and running a statement, is [`Driver`]:
//! one blanket impl holds the sqlx bounds, so the shared code needs none.

use crate::LedgerError;
use crate::rows::Cols;
use bench_model::{Measurement, RunId};
use sqlx::{Database, Encode, Executor, IntoArguments, Type};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A statement as sqlx holds it: its text is `'static` (never a prepared-statement handle).
pub type Query<E> = sqlx::query::Query<'static, E, <E as Database>::Arguments>;

/// A write transaction of engine `E`.
pub type Tx<E> = sqlx::Transaction<'static, E>;

/// A boxed future, as sqlx's executors return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One value bound to a statement: the kinds of value the ledger stores, as [`Cols`] reads
/// them back.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// INTEGER / BIGINT.
    Int(Option<i64>),
    /// REAL / DOUBLE PRECISION.
    Real(Option<f64>),
    /// TEXT.
    Text(Option<&'a str>),
    /// A flag: INTEGER 0/1 on SQLite, BOOLEAN on PostgreSQL.
    Flag(bool),
    /// BLOB / BYTEA.
    Bytes(&'a [u8]),
}

macro_rules! arg_from {
    ($($t:ty => $arm:expr),* $(,)?) => {
        $(impl<'a> From<$t> for Arg<'a> {
            fn from(v: $t) -> Self {
                $arm(v)
            }
        })*
    };
}

arg_from! {
    i64 => |v| Arg::Int(Some(v)),
    Option<i64> => Arg::Int,
    f64 => |v| Arg::Real(Some(v)),
    Option<f64> => Arg::Real,
    bool => Arg::Flag,
    &'a str => |v| Arg::Text(Some(v)),
    &'a String => |v: &'a String| Arg::Text(Some(v.as_str())),
    Option<&'a str> => Arg::Text,
    Option<&'a String> => |v: Option<&'a String>| Arg::Text(v.map(String::as_str)),
    &'a Option<String> => |v: &'a Option<String>| Arg::Text(v.as_deref()),
    &'a [u8] => Arg::Bytes,
    &'a Vec<u8> => |v: &'a Vec<u8>| Arg::Bytes(v.as_slice()),
}

/// What the shared statements use of a sqlx driver: binding an [`Arg`] and running a statement
/// on a connection.
pub trait Driver: Database {
    /// Binds the next argument.
    fn bind(query: Query<Self>, arg: Arg<'_>) -> Query<Self>;
    /// Every row.
    fn fetch_all(
        conn: &mut Self::Connection,
        query: Query<Self>,
    ) -> BoxFuture<'_, sqlx::Result<Vec<Self::Row>>>;
    /// The first row, if any.
    fn fetch_optional(
        conn: &mut Self::Connection,
        query: Query<Self>,
    ) -> BoxFuture<'_, sqlx::Result<Option<Self::Row>>>;
    /// Runs it for its effect.
    fn execute(
        conn: &mut Self::Connection,
        query: Query<Self>,
    ) -> BoxFuture<'_, sqlx::Result<Self::QueryResult>>;
}

impl<DB> Driver for DB
where
    DB: Database<Arguments: IntoArguments<DB>>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    Option<i64>: for<'q> Encode<'q, DB> + Type<DB>,
    Option<f64>: for<'q> Encode<'q, DB> + Type<DB>,
    for<'a> Option<&'a str>: Encode<'a, DB> + Type<DB>,
    bool: for<'q> Encode<'q, DB> + Type<DB>,
    for<'a> &'a [u8]: Encode<'a, DB> + Type<DB>,
{
    fn bind(query: Query<Self>, arg: Arg<'_>) -> Query<Self> {
        match arg {
            Arg::Int(v) => query.bind(v),
            Arg::Real(v) => query.bind(v),
            Arg::Text(v) => query.bind(v),
            Arg::Flag(v) => query.bind(v),
            Arg::Bytes(v) => query.bind(v),
        }
    }

    fn fetch_all(
        conn: &mut Self::Connection,
        query: Query<Self>,
    ) -> BoxFuture<'_, sqlx::Result<Vec<Self::Row>>> {
        conn.fetch_all(query)
    }

    fn fetch_optional(
        conn: &mut Self::Connection,
        query: Query<Self>,
    ) -> BoxFuture<'_, sqlx::Result<Option<Self::Row>>> {
        conn.fetch_optional(query)
    }

    fn execute(
        conn: &mut Self::Connection,
        query: Query<Self>,
    ) -> BoxFuture<'_, sqlx::Result<Self::QueryResult>> {
        conn.execute(query)
    }
}

/// Where an engine's SQL or its way of writing differs; everything else is shared.
pub trait Engine: Driver + Database<Row: Cols> {
    /// The statement that begins a write transaction.
    const BEGIN_WRITE: &'static str;

    /// A run's place in commit order, an expression over the columns of `runs`: its git
    /// commit time, or outside git its recording time, in seconds since the Unix epoch.
    const COMMIT_ORDER: &'static str;

    /// A statement answering `stamp` (text) that changes whenever a write may have been
    /// committed since ([`crate::LedgerStore::stamp`]).
    const STAMP: &'static str;

    /// The condition that `run_id` is one of the run ids bound as `$1` by
    /// [`Engine::bind_runs`].
    const RUN_ID_IN: &'static str;

    /// The condition that `run_id` is one of the ids the query `select` returns. PostgreSQL
    /// reads the ids first (`= ANY(ARRAY(...))`): as a join, its planner estimates a run's
    /// results badly and scans the whole results table (226 ms against 10 ms at 1M results).
    fn run_id_in_select(select: &str) -> String;

    /// Binds run ids as [`Engine::RUN_ID_IN`] reads them.
    ///
    /// # Errors
    /// When the ids cannot be encoded.
    fn bind_runs(query: Query<Self>, runs: &[RunId]) -> Result<Query<Self>, LedgerError>;

    /// The shared statements that hold this engine's fragments, rendered once.
    fn rendered() -> &'static Rendered;

    /// Inserts `measurements` (distinct benchmark and metric pairs, checked before) of run
    /// `run` with their statistics and raw samples.
    fn insert_measurements<'a>(
        tx: &'a mut Self::Connection,
        run: RunId,
        measurements: &'a [Measurement],
    ) -> BoxFuture<'a, Result<(), LedgerError>>;

    /// A statement to bind and run.
    fn query(sql: &'static str) -> Stmt<Self> {
        Stmt(sqlx::query(sql))
    }
}

/// A statement of engine `E` with the arguments bound so far.
#[must_use = "a statement does nothing until it is run"]
pub struct Stmt<E: Database>(Query<E>);

impl<E: Engine> Stmt<E> {
    /// Binds the next argument (`$1`, then `$2`, ...).
    pub fn bind<'a>(self, value: impl Into<Arg<'a>>) -> Self {
        Self(E::bind(self.0, value.into()))
    }

    /// Binds run ids as [`Engine::RUN_ID_IN`] reads them.
    pub fn bind_runs(self, runs: &[RunId]) -> Result<Self, LedgerError> {
        Ok(Self(E::bind_runs(self.0, runs)?))
    }

    /// Every row.
    pub async fn fetch_all(self, conn: &mut E::Connection) -> Result<Vec<E::Row>, LedgerError> {
        Ok(E::fetch_all(conn, self.0).await?)
    }

    /// The first row, if any.
    pub async fn fetch_optional(
        self,
        conn: &mut E::Connection,
    ) -> Result<Option<E::Row>, LedgerError> {
        Ok(E::fetch_optional(conn, self.0).await?)
    }

    /// The first row; a statement that returned none is an error.
    pub async fn fetch_one(self, conn: &mut E::Connection) -> Result<E::Row, LedgerError> {
        E::fetch_optional(conn, self.0)
            .await?
            .ok_or_else(|| sqlx::Error::RowNotFound.into())
    }

    /// Runs it for its effect.
    pub async fn execute(self, conn: &mut E::Connection) -> Result<(), LedgerError> {
        E::execute(conn, self.0).await?;
        Ok(())
    }
}
/// How long a writer waits for another writer (SQLite's lock; a PostgreSQL connection).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// A result's series in a trend: its benchmark and metric in one text, unambiguous whatever
/// they hold (the benchmark's length first).
const SERIES_KEY: &str = "length(benchmark) || ':' || benchmark || metric AS series";

/// The statements that hold an engine's fragments ([`Engine::COMMIT_ORDER`],
/// [`Engine::RUN_ID_IN`]), rendered once per engine by [`Engine::rendered`].
#[derive(Debug)]
pub struct Rendered {
    pub(crate) trend_runs: String,
    pub(crate) trend_values: String,
    pub(crate) trend_series: String,
    pub(crate) annotations_between: String,
    pub(crate) history: String,
}

impl Rendered {
    /// The statements of engine `E`.
    pub(crate) fn new<E: Engine>() -> Self {
        let order = E::COMMIT_ORDER;
        let run_in = E::RUN_ID_IN;
        let history_runs = format!(
            "SELECT id FROM runs WHERE project = $5 AND suite = $1 AND machine_id = $2
               AND id < $3 AND NOT quick AND source NOT IN {kept}
             ORDER BY id DESC LIMIT $4",
            kept = kept_out_of_history!()
        );
        Self {
            // The newest `$4` ordinary runs of a line recorded before run `$3`, and their results.
            history: format!(
                "SELECT run_id, benchmark, metric, estimate FROM results WHERE {}
                 ORDER BY run_id",
                E::run_id_in_select(&history_runs)
            ),
            // $3 = 1: every run; else the suite's line only. Runs with ids above $5 only.
            trend_runs: format!(
                "SELECT id, git_commit, git_commit_time, created_at FROM runs
                 WHERE suite = $1 AND (CAST($2 AS BIGINT) IS NULL OR machine_id = $2)
                   AND project = $4 AND ($3 = 1 OR (NOT quick AND source NOT IN {off}))
                   AND id > $5
                 ORDER BY {order}, id",
                off = off_the_line!()
            ),
            trend_values: format!(
                "SELECT run_id, {SERIES_KEY}, estimate, lower, upper FROM results WHERE {run_in}"
            ),
            trend_series: format!(
                "SELECT run_id, {SERIES_KEY}, benchmark, metric, unit, direction
                 FROM results WHERE {run_in}"
            ),
            // Runs in the order of `trend`; the notes between two of them, both included.
            annotations_between: format!(
                "WITH ends AS (SELECT {order} AS k, id FROM runs WHERE id IN ($3, $4)),
                 lo AS (SELECT k, id FROM ends ORDER BY k, id LIMIT 1),
                 hi AS (SELECT k, id FROM ends ORDER BY k DESC, id DESC LIMIT 1),
                 noted AS (
                     SELECT a.id AS note_id, a.run_id, a.created_at, a.text, r.k
                     FROM annotations a
                     JOIN (SELECT id, {order} AS k FROM runs
                           WHERE project = $5 AND suite = $1 AND machine_id = $2) r
                         ON r.id = a.run_id
                 )
                 SELECT n.run_id, n.created_at, n.text FROM noted n, lo, hi
                 WHERE (n.k, n.run_id) >= (lo.k, lo.id) AND (n.k, n.run_id) <= (hi.k, hi.id)
                 ORDER BY n.k, n.run_id, n.note_id"
            ),
        }
    }
}

//! The append-only SQLite ledger.
//!
//! Storage sits behind domain operations (`record_run`, `measurements`, `history`, ...), never
//! behind "run this SQL". The schema lives in `migrations/` and is embedded at build time.
//!
//! Guarantees:
//!
//! - **Nothing partial**: a run, its results, statistics and raw samples are written in one
//!   `BEGIN IMMEDIATE` transaction. A crash or a kill before commit leaves no trace of the run.
//! - **Nothing rewritten**: triggers reject `UPDATE`, `DELETE` and replacing inserts on every
//!   table. A correction is an annotation.
//! - **Concurrent writers wait**: WAL journal and a busy timeout, so parallel imports and a
//!   running web server all land.
//! - **No silent downgrade**: a ledger migrated by a newer `bench-run` is refused with
//!   [`LedgerError::NewerSchema`] instead of being touched.

use crate::compare::{CompareConfig, Comparison, History, HistoryPoint, MetricKey};
use crate::model::{
    BenchExe, BenchmarkId, BuildConfig, Direction, Estimate, GitInfo, LoadAverage, Machine,
    Measurement, NewRun, RunConditions, RunProvenance, RunSource, Samples, SamplingMode, Statistic,
    Throughput, ThroughputKind, Toolchain,
};
use serde::Serialize;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{AssertSqlSafe, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The embedded schema migrations.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// How long a writer waits for another writer before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The workspace root above `dir`: the outermost directory whose Cargo.toml declares
/// `[workspace]`, else the nearest directory with a Cargo.toml, else `dir` itself.
#[must_use]
pub fn workspace_root(dir: &Path) -> PathBuf {
    let mut nearest = None;
    let mut outermost_workspace = None;
    for ancestor in dir.ancestors() {
        if let Ok(text) = std::fs::read_to_string(ancestor.join("Cargo.toml")) {
            nearest.get_or_insert_with(|| ancestor.to_owned());
            if text.lines().any(|l| l.trim() == "[workspace]") {
                outermost_workspace = Some(ancestor.to_owned());
            }
        }
    }
    outermost_workspace
        .or(nearest)
        .unwrap_or_else(|| dir.to_owned())
}

/// Where the ledger lives: `db` (relative to `cwd`) when given, else
/// `results/ledger.sqlite` at the workspace root above `cwd`. Shared by `bench-run` and
/// `bench-web` so both find the same default ledger.
#[must_use]
pub fn default_path(db: Option<&Path>, cwd: &Path) -> PathBuf {
    match db {
        Some(p) if p.is_absolute() => p.to_owned(),
        Some(p) => cwd.join(p),
        None => workspace_root(cwd).join("results").join("ledger.sqlite"),
    }
}

/// A run's id in the ledger.
pub type RunId = i64;

/// Errors raised by the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The database file could not be created or opened.
    #[error("cannot open ledger {path}: {source}")]
    Open {
        /// The ledger path.
        path: PathBuf,
        /// The cause.
        source: sqlx::Error,
    },
    /// The directory for the ledger could not be created.
    #[error("cannot create ledger directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The ledger was written by a newer version of bench-run.
    #[error(
        "ledger {path} has schema version {found}, newer than this bench-run supports ({supported}); \
         upgrade bench-run (the ledger was left untouched)"
    )]
    NewerSchema {
        /// The ledger path.
        path: PathBuf,
        /// Newest migration found in the ledger.
        found: i64,
        /// Newest migration this build knows.
        supported: i64,
    },
    /// Migrating the schema failed.
    #[error("cannot migrate ledger {path}: {source}")]
    Migrate {
        /// The ledger path.
        path: PathBuf,
        /// The cause.
        source: sqlx::migrate::MigrateError,
    },
    /// A query failed.
    #[error("ledger query failed: {0}")]
    Query(#[from] sqlx::Error),
    /// A stored value is not what this version expects.
    #[error("corrupt ledger row: {0}")]
    Corrupt(String),
    /// A run id that does not exist.
    #[error("no run with id {0}")]
    NoSuchRun(RunId),
    /// An invalid argument, e.g. an empty tag name.
    #[error("{0}")]
    Invalid(String),
}

/// A run as listed: identity and the provenance fields scripts filter on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Run id.
    pub id: RunId,
    /// Suite name.
    pub suite: String,
    /// When the run was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// Where its results came from.
    pub source: RunSource,
    /// Git commit, empty outside a repository.
    pub git_commit: Option<String>,
    /// Git branch.
    pub git_branch: Option<String>,
    /// Whether the work tree had uncommitted changes.
    pub git_dirty: bool,
    /// First line of the commit message.
    pub git_summary: Option<String>,
    /// Machine row id.
    pub machine_id: i64,
    /// Machine fingerprint.
    pub machine: String,
    /// CPU model of the machine.
    pub cpu_model: String,
    /// Number of results.
    pub results: i64,
    /// Tags given to this run.
    pub tags: Vec<String>,
    /// Whether the machine was busy while it ran (`crate::conditions::assess`); `None` when
    /// conditions were not recorded.
    pub busy: Option<bool>,
}

/// An annotation on a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Annotation {
    /// When it was written.
    pub created_at: String,
    /// What it says.
    pub text: String,
}

/// A stored run with its full provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredRun {
    /// Run id.
    pub id: RunId,
    /// When the run was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// Where its results came from.
    pub source: RunSource,
    /// Machine row id.
    pub machine_id: i64,
    /// Everything recorded about the run.
    pub provenance: RunProvenance,
    /// Tags given to this run.
    pub tags: Vec<String>,
    /// Annotations, oldest first.
    pub annotations: Vec<Annotation>,
}

/// Which runs to list.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only this suite.
    pub suite: Option<String>,
    /// Only this machine fingerprint (or prefix).
    pub machine: Option<String>,
    /// Only this branch.
    pub branch: Option<String>,
    /// Only commits starting with this prefix.
    pub commit: Option<String>,
    /// At most this many (newest first); `None` for all.
    pub limit: Option<i64>,
    /// Skip this many of the newest.
    pub offset: i64,
}

/// A suite seen in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuiteSummary {
    /// Suite name.
    pub suite: String,
    /// Number of runs.
    pub runs: i64,
    /// Id of the newest run.
    pub latest_run: RunId,
}

/// The append-only ledger.
#[derive(Debug, Clone)]
pub struct Ledger {
    pool: SqlitePool,
    path: PathBuf,
}

fn newest_known_migration() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

pub(crate) fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    now.format(&format)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

fn f64s_to_blob(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn blob_to_f64s(blob: &[u8]) -> Result<Vec<f64>, LedgerError> {
    let chunks = blob.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(LedgerError::Corrupt(format!(
            "sample blob of {} bytes is not a whole number of f64",
            blob.len()
        )));
    }
    Ok(chunks
        .map(|c| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(c);
            f64::from_le_bytes(bytes)
        })
        .collect())
}

fn json_text<T: Serialize>(value: &T) -> Result<String, LedgerError> {
    serde_json::to_string(value).map_err(|e| LedgerError::Corrupt(e.to_string()))
}

fn from_json_text<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<T, LedgerError> {
    serde_json::from_str(text).map_err(|e| LedgerError::Corrupt(format!("{what}: {e}")))
}

impl Ledger {
    /// Opens (creating and migrating if needed) the ledger at `path`.
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
        let ledger = Self::connect(path, options).await?;
        ledger.migrate().await?;
        Ok(ledger)
    }

    /// Opens the ledger at `path` read-only. It must exist and be fully migrated.
    ///
    /// # Errors
    /// When the file cannot be opened, is not a ledger, or its schema is older or newer.
    pub async fn open_read_only(path: &Path) -> Result<Self, LedgerError> {
        let ledger = Self::connect(path, SqliteConnectOptions::new().read_only(true)).await?;
        let applied = ledger.applied_migrations().await?;
        let supported = newest_known_migration();
        match applied.iter().max() {
            Some(&found) if found > supported => Err(LedgerError::NewerSchema {
                path: path.to_owned(),
                found,
                supported,
            }),
            Some(&found) if found == supported => Ok(ledger),
            _ => Err(LedgerError::Invalid(format!(
                "{} is not a migrated ledger; open it once with bench-run to create it",
                path.display()
            ))),
        }
    }

    async fn connect(path: &Path, options: SqliteConnectOptions) -> Result<Self, LedgerError> {
        let options = options
            .filename(path)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| LedgerError::Open {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            pool,
            path: path.to_owned(),
        })
    }

    /// A fresh in-memory ledger (for tests and benchmarks).
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
        let ledger = Self {
            pool,
            path: PathBuf::from(":memory:"),
        };
        ledger.migrate().await?;
        Ok(ledger)
    }

    /// Where the ledger lives.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying pool, for read-only queries by the web app.
    #[must_use]
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    async fn applied_migrations(&self) -> Result<Vec<i64>, LedgerError> {
        let has_table: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(|source| LedgerError::Open {
            path: self.path.clone(),
            source,
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
                    path: self.path.clone(),
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
            path: self.path.clone(),
            source,
        })
    }

    fn migration_lock(&self) -> Result<Option<std::fs::File>, LedgerError> {
        if self.path.as_os_str() == ":memory:" {
            return Ok(None);
        }
        let mut lock_path = self.path.clone().into_os_string();
        lock_path.push(".migrate-lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| LedgerError::CreateDir {
                path: PathBuf::from(&lock_path),
                source,
            })?;
        file.lock().map_err(|source| LedgerError::CreateDir {
            path: PathBuf::from(&lock_path),
            source,
        })?;
        Ok(Some(file))
    }

    /// Records a run, its results, statistics and raw samples in one transaction.
    ///
    /// # Errors
    /// When the run is invalid (no results, duplicate benchmark/metric pairs) or the database
    /// refuses the write. Nothing is stored on error.
    pub async fn record_run(&self, run: &NewRun) -> Result<RunId, LedgerError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let run_id = insert_run(&mut tx, run).await?;
        tx.commit().await?;
        Ok(run_id)
    }

    /// A run with its provenance, tags and annotations.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    pub async fn run(&self, id: RunId) -> Result<Option<StoredRun>, LedgerError> {
        let row = sqlx::query(
            "SELECT r.*, m.fingerprint, m.cpu_model, m.physical_cores, m.logical_cores,
                    m.memory_bytes, m.os, m.arch,
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
        let source_code: i64 = row.try_get("source")?;
        let source = RunSource::from_code(source_code).ok_or_else(|| {
            LedgerError::Corrupt(format!("run {id}: unknown source {source_code}"))
        })?;
        let toolchain = match row.try_get::<Option<String>, _>("t_fingerprint")? {
            Some(fingerprint) => Some(Toolchain {
                fingerprint,
                rustc_version: row.try_get("rustc_version")?,
                rustc_commit: row.try_get("rustc_commit")?,
                host: row.try_get("host")?,
                llvm_version: row.try_get("llvm_version")?,
                rustc_verbose: row.try_get("rustc_verbose")?,
                cargo_version: row.try_get("cargo_version")?,
            }),
            None => None,
        };
        let cargo_command: Option<String> = row.try_get("cargo_command")?;
        let provenance = RunProvenance {
            suite: row.try_get("suite")?,
            package: row.try_get("package")?,
            command: from_json_text(&row.try_get::<String, _>("command")?, "command")?,
            cargo_command: cargo_command
                .map(|c| from_json_text(&c, "cargo_command"))
                .transpose()?,
            cwd: row.try_get("cwd")?,
            machine: Machine {
                fingerprint: row.try_get("fingerprint")?,
                hostname: row.try_get("hostname")?,
                cpu_model: row.try_get("cpu_model")?,
                physical_cores: row
                    .try_get::<Option<i64>, _>("physical_cores")?
                    .and_then(|v| u32::try_from(v).ok()),
                logical_cores: u32::try_from(row.try_get::<i64, _>("logical_cores")?).unwrap_or(0),
                memory_bytes: row
                    .try_get::<Option<i64>, _>("memory_bytes")?
                    .and_then(|v| u64::try_from(v).ok()),
                os: row.try_get("os")?,
                kernel: row.try_get("kernel")?,
                arch: row.try_get("arch")?,
            },
            toolchain,
            build: BuildConfig {
                profile: row.try_get("profile")?,
                features: from_json_text(&row.try_get::<String, _>("features")?, "features")?,
                feature_flags: from_json_text(
                    &row.try_get::<String, _>("feature_flags")?,
                    "feature_flags",
                )?,
                rustflags: row.try_get("rustflags")?,
            },
            env: from_json_text(&row.try_get::<String, _>("env")?, "env")?,
            git: GitInfo {
                commit: row.try_get("git_commit")?,
                branch: row.try_get("git_branch")?,
                dirty: row.try_get("git_dirty")?,
                commit_time: row.try_get("git_commit_time")?,
                summary: row.try_get("git_summary")?,
            },
            cpu_governor: row.try_get("cpu_governor")?,
            turbo: row.try_get("turbo")?,
            quick: row.try_get("quick")?,
            duration_ms: row.try_get("duration_ms")?,
            bench_exe: bench_exe_from_row(&row)?,
            conditions: conditions_from_row(&row)?,
        };
        Ok(Some(StoredRun {
            id,
            created_at: row.try_get("created_at")?,
            source,
            machine_id: row.try_get("machine_id")?,
            provenance,
            tags: self.tags_of(id).await?,
            annotations: self.annotations(id).await?,
        }))
    }

    /// Like [`Ledger::run`], but a missing run is an error.
    ///
    /// # Errors
    /// [`LedgerError::NoSuchRun`] when there is no such run.
    pub async fn require_run(&self, id: RunId) -> Result<StoredRun, LedgerError> {
        self.run(id).await?.ok_or(LedgerError::NoSuchRun(id))
    }

    /// Runs matching `filter`, newest first.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, LedgerError> {
        let mut sql = String::from(
            "SELECT r.id, r.suite, r.created_at, r.source, r.git_commit, r.git_branch,
                    r.git_dirty, r.git_summary, r.machine_id, m.fingerprint, m.cpu_model,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id) AS n_results,
                    (SELECT group_concat(name, char(31)) FROM
                        (SELECT DISTINCT g.name FROM tags g WHERE g.run_id = r.id
                         AND g.id = (SELECT MAX(h.id) FROM tags h WHERE h.name = g.name)
                         ORDER BY g.name)) AS tag_names, c.*
             FROM runs r JOIN machines m ON m.id = r.machine_id
             LEFT JOIN run_conditions c ON c.run_id = r.id WHERE 1 = 1",
        );
        if filter.suite.is_some() {
            sql.push_str(" AND r.suite = ?");
        }
        if filter.machine.is_some() {
            sql.push_str(" AND m.fingerprint LIKE ? || '%'");
        }
        if filter.branch.is_some() {
            sql.push_str(" AND r.git_branch = ?");
        }
        if filter.commit.is_some() {
            sql.push_str(" AND r.git_commit LIKE ? || '%'");
        }
        sql.push_str(" ORDER BY r.id DESC LIMIT ? OFFSET ?");
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for value in [
            &filter.suite,
            &filter.machine,
            &filter.branch,
            &filter.commit,
        ]
        .into_iter()
        .flatten()
        {
            query = query.bind(value.clone());
        }
        let rows = query
            .bind(filter.limit.unwrap_or(-1))
            .bind(filter.offset)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(summary_from_row).collect()
    }

    /// Number of runs matching `filter` (ignoring its limit and offset).
    ///
    /// # Errors
    /// When the query fails.
    pub async fn count_runs(&self, filter: &RunFilter) -> Result<i64, LedgerError> {
        let unbounded = RunFilter {
            limit: None,
            offset: 0,
            ..filter.clone()
        };
        // Listing is cheap enough for the page sizes used; keep one code path for filters.
        Ok(i64::try_from(self.runs(&unbounded).await?.len()).unwrap_or(i64::MAX))
    }

    /// Suites in the ledger with their run counts, by name.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn suites(&self) -> Result<Vec<SuiteSummary>, LedgerError> {
        let rows = sqlx::query(
            "SELECT suite, COUNT(*) AS runs, MAX(id) AS latest FROM runs GROUP BY suite ORDER BY suite",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(SuiteSummary {
                    suite: r.try_get("suite")?,
                    runs: r.try_get("runs")?,
                    latest_run: r.try_get("latest")?,
                })
            })
            .collect()
    }

    /// The newest run, optionally of one suite.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn latest_run(&self, suite: Option<&str>) -> Result<Option<RunId>, LedgerError> {
        Ok(match suite {
            Some(s) => {
                sqlx::query_scalar("SELECT MAX(id) FROM runs WHERE suite = ?")
                    .bind(s)
                    .fetch_one(&self.pool)
                    .await?
            }
            None => {
                sqlx::query_scalar("SELECT MAX(id) FROM runs")
                    .fetch_one(&self.pool)
                    .await?
            }
        })
    }

    /// The default baseline of `run`: the newest earlier run of the same suite on the same
    /// machine that is a full measurement, i.e. neither a `--quick` run nor a `gate --confirm`
    /// re-run of a few benchmarks, nor a side of a `bench-run ab` (its values are per-process
    /// quantiles over rounds, a different estimate). Whatever `run` itself is (a quick head
    /// still gets the newest full run as its baseline).
    ///
    /// # Errors
    /// When the query fails.
    pub async fn previous_run(&self, run: RunId) -> Result<Option<RunId>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT MAX(p.id) FROM runs p JOIN runs r ON r.id = ?
             WHERE p.suite = r.suite AND p.machine_id = r.machine_id AND p.id < r.id
               AND p.quick = 0 AND p.source NOT IN (?, ?, ?)",
        )
        .bind(run)
        .bind(RunSource::Confirmation.code())
        .bind(RunSource::AbBase.code())
        .bind(RunSource::AbHead.code())
        .fetch_one(&self.pool)
        .await?)
    }

    /// The newest run at a commit (full hash or unique prefix), optionally of one suite. The
    /// sides of a `bench-run ab` are not found this way (name them by id or tag): a revision
    /// names the suite's ordinary run there.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn run_at_commit(
        &self,
        commit: &str,
        suite: Option<&str>,
    ) -> Result<Option<RunId>, LedgerError> {
        if commit.is_empty() {
            return Ok(None);
        }
        Ok(sqlx::query_scalar(
            "SELECT MAX(id) FROM runs WHERE git_commit >= ? AND git_commit < ? || 'g'
             AND (? IS NULL OR suite = ?) AND source NOT IN (?, ?)",
        )
        .bind(commit)
        .bind(commit)
        .bind(suite)
        .bind(suite)
        .bind(RunSource::AbBase.code())
        .bind(RunSource::AbHead.code())
        .fetch_one(&self.pool)
        .await?)
    }

    /// The run a tag names (the newest tag row of that name wins).
    ///
    /// # Errors
    /// When the query fails.
    pub async fn run_by_tag(&self, name: &str) -> Result<Option<RunId>, LedgerError> {
        Ok(
            sqlx::query_scalar("SELECT run_id FROM tags WHERE name = ? ORDER BY id DESC LIMIT 1")
                .bind(name)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Gives `run` the tag `name` (moving the name if another run had it).
    ///
    /// # Errors
    /// When the run does not exist, the name is empty or all digits, or the write fails.
    pub async fn tag(&self, run: RunId, name: &str) -> Result<(), LedgerError> {
        let name = name.trim();
        if name.is_empty() || name.chars().all(|c| c.is_ascii_digit()) {
            return Err(LedgerError::Invalid(format!(
                "invalid tag name {name:?}: it must be non-empty and not a number (numbers are run ids)"
            )));
        }
        self.require_exists(run).await?;
        sqlx::query("INSERT INTO tags (run_id, name, created_at) VALUES (?, ?, ?)")
            .bind(run)
            .bind(name)
            .bind(now_rfc3339())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Adds a note to `run`.
    ///
    /// # Errors
    /// When the run does not exist, the text is empty, or the write fails.
    pub async fn annotate(&self, run: RunId, text: &str) -> Result<(), LedgerError> {
        if text.trim().is_empty() {
            return Err(LedgerError::Invalid(
                "an annotation needs some text".to_owned(),
            ));
        }
        self.require_exists(run).await?;
        sqlx::query("INSERT INTO annotations (run_id, created_at, text) VALUES (?, ?, ?)")
            .bind(run)
            .bind(now_rfc3339())
            .bind(text)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn require_exists(&self, run: RunId) -> Result<(), LedgerError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE id = ?")
            .bind(run)
            .fetch_optional(&self.pool)
            .await?;
        found.map(|_| ()).ok_or(LedgerError::NoSuchRun(run))
    }

    /// Tags currently naming `run` (a tag later moved to another run is not listed).
    ///
    /// # Errors
    /// When the query fails.
    pub async fn tags_of(&self, run: RunId) -> Result<Vec<String>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT g.name FROM tags g WHERE g.run_id = ?
             AND g.id = (SELECT MAX(h.id) FROM tags h WHERE h.name = g.name) ORDER BY g.name",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Annotations of `run`, oldest first.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn annotations(&self, run: RunId) -> Result<Vec<Annotation>, LedgerError> {
        let rows =
            sqlx::query("SELECT created_at, text FROM annotations WHERE run_id = ? ORDER BY id")
                .bind(run)
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|r| {
                Ok(Annotation {
                    created_at: r.try_get("created_at")?,
                    text: r.try_get("text")?,
                })
            })
            .collect()
    }

    /// All results of `run`, with statistics and raw samples, sorted by benchmark and metric.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    pub async fn measurements(&self, run: RunId) -> Result<Vec<Measurement>, LedgerError> {
        let rows = sqlx::query(
            "SELECT r.*, s.sampling_mode, s.iters, s.times_ns FROM results r
             LEFT JOIN samples s ON s.result_id = r.id
             WHERE r.run_id = ? ORDER BY r.benchmark, r.metric",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        let stats = sqlx::query(
            "SELECT st.* FROM statistics st JOIN results r ON r.id = st.result_id WHERE r.run_id = ?",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        let mut by_result: BTreeMap<i64, BTreeMap<Statistic, Estimate>> = BTreeMap::new();
        for row in &stats {
            let code: i64 = row.try_get("statistic")?;
            let statistic = Statistic::from_code(code)
                .ok_or_else(|| LedgerError::Corrupt(format!("unknown statistic code {code}")))?;
            by_result
                .entry(row.try_get("result_id")?)
                .or_default()
                .insert(statistic, estimate_from_row(row, "point")?);
        }
        rows.iter()
            .map(|row| {
                let id: i64 = row.try_get("id")?;
                measurement_from_row(row, by_result.remove(&id).unwrap_or_default())
            })
            .collect()
    }

    /// Headline estimates of up to `runs` earlier runs of `suite` on `machine_id`, before run
    /// `before`, oldest first, each with its run: the input of the noise model. Runs recorded
    /// with `--quick` are never history (their short measurement has its own noise), nor are
    /// the sides of a `bench-run ab` (per-process quantiles over rounds, another estimate).
    ///
    /// # Errors
    /// When the query fails.
    pub async fn history(
        &self,
        suite: &str,
        machine_id: i64,
        before: RunId,
        runs: usize,
    ) -> Result<History, LedgerError> {
        let rows = sqlx::query(
            "SELECT x.run_id, x.benchmark, x.metric, x.estimate FROM results x
             JOIN (SELECT id FROM runs WHERE suite = ? AND machine_id = ? AND id < ? AND quick = 0
                     AND source NOT IN (?, ?)
                   ORDER BY id DESC LIMIT ?) p ON p.id = x.run_id
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
        let mut history = History::new();
        for row in &rows {
            let key = MetricKey {
                benchmark: row.try_get("benchmark")?,
                metric: row.try_get("metric")?,
            };
            history.entry(key).or_default().push(HistoryPoint {
                run: row.try_get("run_id")?,
                value: row.try_get("estimate")?,
            });
        }
        Ok(history)
    }

    /// Compares two stored runs: their results, with the noise floor learnt from the runs of
    /// `head`'s suite and machine before it; or, when they are the base and head of one paired
    /// A/B run, on their rounds ([`crate::compare::compare_paired`]). When both ran the same
    /// executable (`compare::same_binary`), the same-binary rule applies
    /// (`compare::mark_same_binary`).
    ///
    /// # Errors
    /// When a query fails.
    pub async fn compare_runs(
        &self,
        base: &StoredRun,
        head: &StoredRun,
        config: &CompareConfig,
    ) -> Result<Comparison, LedgerError> {
        let base_results = self.measurements(base.id).await?;
        let head_results = self.measurements(head.id).await?;
        // The two sides of one `bench-run ab` are judged on their rounds, not on history.
        if self.pairing_between(base.id, head.id).await?.is_some() {
            return Ok(crate::compare::compare_paired(
                &base_results,
                &head_results,
                config,
            ));
        }
        let history = self
            .history(
                &head.provenance.suite,
                head.machine_id,
                head.id,
                config.history_runs(),
            )
            .await?;
        let mut comparison =
            crate::compare::compare(&base_results, &head_results, &history, config);
        if let Some(sha256) = crate::compare::same_binary(&base.provenance, &head.provenance) {
            crate::compare::mark_same_binary(&mut comparison, &sha256);
        }
        Ok(comparison)
    }

    /// Headline estimates of `benchmark`/`metric` over runs of `suite`, oldest first, with
    /// the run each came from: the input of a trend chart.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn series(
        &self,
        suite: &str,
        metric: Option<&str>,
    ) -> Result<Vec<SeriesPoint>, LedgerError> {
        let rows = sqlx::query(
            "SELECT x.run_id, x.benchmark, x.metric, x.unit, x.direction, x.estimate, x.lower, x.upper,
                    r.git_commit, r.git_commit_time, r.created_at, r.machine_id
             FROM results x JOIN runs r ON r.id = x.run_id
             WHERE r.suite = ? AND (? IS NULL OR x.metric = ?)
             ORDER BY x.benchmark, x.metric, COALESCE(r.git_commit_time, 0), r.id",
        )
        .bind(suite)
        .bind(metric)
        .bind(metric)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                let code: i64 = r.try_get("direction")?;
                Ok(SeriesPoint {
                    run_id: r.try_get("run_id")?,
                    benchmark: r.try_get("benchmark")?,
                    metric: r.try_get("metric")?,
                    unit: r.try_get("unit")?,
                    direction: Direction::from_code(code).ok_or_else(|| {
                        LedgerError::Corrupt(format!("unknown direction code {code}"))
                    })?,
                    estimate: r.try_get("estimate")?,
                    lower: r.try_get("lower")?,
                    upper: r.try_get("upper")?,
                    git_commit: r.try_get("git_commit")?,
                    git_commit_time: r.try_get("git_commit_time")?,
                    created_at: r.try_get("created_at")?,
                    machine_id: r.try_get("machine_id")?,
                })
            })
            .collect()
    }
}

/// One point of a benchmark's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesPoint {
    /// The run.
    pub run_id: RunId,
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric.
    pub metric: String,
    /// Unit of the estimate.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Headline estimate.
    pub estimate: f64,
    /// Lower bound.
    pub lower: Option<f64>,
    /// Upper bound.
    pub upper: Option<f64>,
    /// Commit of the run.
    pub git_commit: Option<String>,
    /// Commit time of the run.
    pub git_commit_time: Option<i64>,
    /// When the run was recorded.
    pub created_at: String,
    /// Machine row id.
    pub machine_id: i64,
}

/// Test hook: when `BENCH_RUN_FAILPOINT=<name>:<index>` is set, the process stops (sleeps) at
/// that point so a test can kill it mid-transaction. Costs one environment lookup per call
/// only when the variable is set at start-up.
fn failpoint(name: &str, index: usize) {
    static SPEC: std::sync::OnceLock<Option<(String, usize)>> = std::sync::OnceLock::new();
    let spec = SPEC.get_or_init(|| {
        let value = std::env::var("BENCH_RUN_FAILPOINT").ok()?;
        let (n, i) = value.rsplit_once(':')?;
        Some((n.to_owned(), i.parse().ok()?))
    });
    if let Some((n, i)) = spec
        && n == name
        && *i == index
    {
        eprintln!("failpoint {name}:{index} reached");
        std::thread::sleep(Duration::from_secs(3600));
    }
}

pub(crate) type Tx<'a> = sqlx::Transaction<'a, sqlx::Sqlite>;

/// Inserts a run, its results, statistics and raw samples inside `tx` (the caller commits).
pub(crate) async fn insert_run(tx: &mut Tx<'_>, run: &NewRun) -> Result<RunId, LedgerError> {
    if run.measurements.is_empty() {
        return Err(LedgerError::Invalid(format!(
            "run of suite {} has no results; nothing recorded",
            run.provenance.suite
        )));
    }
    let p = &run.provenance;
    if let Some(exe) = &p.bench_exe {
        exe.check().map_err(LedgerError::Invalid)?;
    }
    if let Some(c) = &p.conditions {
        c.check().map_err(LedgerError::Invalid)?;
    }
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
    .bind(now_rfc3339())
    .bind(run.source.code())
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

    for (index, m) in run.measurements.iter().enumerate() {
        failpoint("record-run", index);
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
        "INSERT INTO machines (fingerprint, cpu_model, physical_cores, logical_cores, memory_bytes, os, arch)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(&m.fingerprint)
    .bind(&m.cpu_model)
    .bind(m.physical_cores.map(i64::from))
    .bind(i64::from(m.logical_cores))
    .bind(m.memory_bytes.and_then(|b| i64::try_from(b).ok()))
    .bind(&m.os)
    .bind(&m.arch)
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
    .map_err(|e| match e {
        sqlx::Error::Database(ref db) if db.message().contains("append-only") => {
            LedgerError::Invalid(format!(
                "duplicate result for benchmark {:?} metric {:?} in one run",
                m.benchmark.full, m.metric
            ))
        }
        other => LedgerError::Query(other),
    })?;
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
        .bind(f64s_to_blob(samples.iters()))
        .bind(f64s_to_blob(samples.times_ns()))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

fn estimate_from_row(row: &SqliteRow, point: &str) -> Result<Estimate, LedgerError> {
    Ok(Estimate {
        point: row.try_get(point)?,
        lower: row.try_get("lower")?,
        upper: row.try_get("upper")?,
        confidence_level: row.try_get("confidence_level")?,
        standard_error: row.try_get("standard_error")?,
    })
}

fn measurement_from_row(
    row: &SqliteRow,
    statistics: BTreeMap<Statistic, Estimate>,
) -> Result<Measurement, LedgerError> {
    let direction_code: i64 = row.try_get("direction")?;
    let direction = Direction::from_code(direction_code)
        .ok_or_else(|| LedgerError::Corrupt(format!("unknown direction code {direction_code}")))?;
    let throughput = match (
        row.try_get::<Option<i64>, _>("throughput_kind")?,
        row.try_get::<Option<i64>, _>("throughput_per_iter")?,
    ) {
        (Some(kind), Some(per_iteration)) => Some(Throughput {
            kind: ThroughputKind::from_code(kind)
                .ok_or_else(|| LedgerError::Corrupt(format!("unknown throughput kind {kind}")))?,
            per_iteration: u64::try_from(per_iteration).unwrap_or(0),
        }),
        _ => None,
    };
    let samples = match row.try_get::<Option<i64>, _>("sampling_mode")? {
        Some(code) => {
            let mode = SamplingMode::from_code(code)
                .ok_or_else(|| LedgerError::Corrupt(format!("unknown sampling mode {code}")))?;
            let iters = blob_to_f64s(&row.try_get::<Vec<u8>, _>("iters")?)?;
            let times = blob_to_f64s(&row.try_get::<Vec<u8>, _>("times_ns")?)?;
            Some(
                Samples::new(mode, iters, times)
                    .map_err(|e| LedgerError::Corrupt(e.to_string()))?,
            )
        }
        None => None,
    };
    Ok(Measurement {
        benchmark: BenchmarkId {
            full: row.try_get("benchmark")?,
            group: row.try_get("group_id")?,
            function: row.try_get("function_id")?,
            value: row.try_get("value_str")?,
        },
        metric: row.try_get("metric")?,
        unit: row.try_get("unit")?,
        direction,
        estimate: estimate_from_row(row, "estimate")?,
        statistics,
        throughput,
        samples,
    })
}

fn summary_from_row(row: &SqliteRow) -> Result<RunSummary, LedgerError> {
    let code: i64 = row.try_get("source")?;
    let tags: Option<String> = row.try_get("tag_names")?;
    Ok(RunSummary {
        id: row.try_get("id")?,
        suite: row.try_get("suite")?,
        created_at: row.try_get("created_at")?,
        source: RunSource::from_code(code)
            .ok_or_else(|| LedgerError::Corrupt(format!("unknown run source {code}")))?,
        git_commit: row.try_get("git_commit")?,
        git_branch: row.try_get("git_branch")?,
        git_dirty: row.try_get("git_dirty")?,
        git_summary: row.try_get("git_summary")?,
        machine_id: row.try_get("machine_id")?,
        machine: row.try_get("fingerprint")?,
        cpu_model: row.try_get("cpu_model")?,
        results: row.try_get("n_results")?,
        tags: tags
            .map(|t| t.split('\u{1f}').map(str::to_owned).collect())
            .unwrap_or_default(),
        busy: crate::conditions::is_busy(conditions_from_row(row)?.as_ref()),
    })
}

fn to_i64(what: &str, value: u64) -> Result<i64, LedgerError> {
    i64::try_from(value).map_err(|_| LedgerError::Invalid(format!("{what} {value} is too large")))
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
    let load = |l: Option<LoadAverage>| (l.map(|l| l.one), l.map(|l| l.five), l.map(|l| l.fifteen));
    let (s1, s5, s15) = load(c.and_then(|c| c.load_start));
    let (e1, e5, e15) = load(c.and_then(|c| c.load_end));
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

/// The bench executable of a row joined with `run_conditions` (`None` without a row or hash).
fn bench_exe_from_row(row: &SqliteRow) -> Result<Option<BenchExe>, LedgerError> {
    let sha256: Option<String> = row.try_get("bench_exe_sha256")?;
    let Some(sha256) = sha256 else {
        return Ok(None);
    };
    let bytes: Option<i64> = row.try_get("bench_exe_bytes")?;
    let bytes = bytes
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| LedgerError::Corrupt(format!("bench executable {sha256} has no size")))?;
    Ok(Some(BenchExe { sha256, bytes }))
}

/// The conditions of a row joined with `run_conditions` (`None` without a row or figures).
fn conditions_from_row(row: &SqliteRow) -> Result<Option<RunConditions>, LedgerError> {
    let Some(cpus) = row.try_get::<Option<i64>, _>("cpus")? else {
        return Ok(None);
    };
    let corrupt = |what: &str| LedgerError::Corrupt(format!("run conditions: {what}"));
    let figure = |name: &str| -> Result<f64, LedgerError> {
        row.try_get::<Option<f64>, _>(name)?
            .ok_or_else(|| corrupt(&format!("{name} is missing")))
    };
    let load = |prefix: &str| -> Result<Option<LoadAverage>, LedgerError> {
        let get = |m: &str| row.try_get::<Option<f64>, _>(format!("{prefix}_{m}").as_str());
        Ok(match (get("1")?, get("5")?, get("15")?) {
            (Some(one), Some(five), Some(fifteen)) => Some(LoadAverage { one, five, fifteen }),
            _ => None,
        })
    };
    let per_benchmark: Option<String> = row.try_get("per_benchmark")?;
    Ok(Some(RunConditions {
        cpus: u32::try_from(cpus).map_err(|_| corrupt(&format!("cpus = {cpus}")))?,
        wall_ms: row
            .try_get::<Option<i64>, _>("wall_ms")?
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| corrupt("wall_ms is missing"))?,
        load_start: load("load_start")?,
        load_end: load("load_end")?,
        own_cpus: figure("own_cpus")?,
        others_cpus: figure("others_cpus")?,
        steal_pct: figure("steal_pct")?,
        per_benchmark: per_benchmark
            .map(|t| from_json_text(&t, "run_conditions.per_benchmark"))
            .transpose()?
            .unwrap_or_default(),
    }))
}

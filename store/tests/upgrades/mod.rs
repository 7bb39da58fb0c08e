//! What the upgrade tests share with the writer of their fixtures: the engines and their
//! migrations, a raw connection to a ledger's database past the store, the schema a ledger has
//! (which tables, which columns), and a snapshot of every row.
//!
//! A fixture is a ledger of one engine at exactly one migration version, holding the data of
//! [`plan::Plan::for_schema`]: `tests/fixtures/upgrades/sqlite/<migration>.sqlite` (the ledger
//! file itself) and `tests/fixtures/upgrades/postgres/<migration>.sql` (a plain `pg_dump`),
//! written by `write_missing_upgrade_fixtures` in upgrade.rs (see the README there).

pub mod plan;
pub mod write;

use sha2::{Digest, Sha256};
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// An SQL engine of the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub const ALL: [Self; 2] = [Self::Sqlite, Self::Postgres];

    /// Its name: the folder of its migrations and of its fixtures.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }

    /// The extension of its fixtures: the ledger file, or a plain SQL dump.
    pub fn fixture_extension(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "sql",
        }
    }

    /// The migrations the store embeds.
    pub fn migrator(self) -> &'static Migrator {
        match self {
            Self::Sqlite => &bench_store::sqlite::MIGRATOR,
            Self::Postgres => &bench_store::postgres::MIGRATOR,
        }
    }

    /// The migration files in `migrations/<engine>`, oldest first.
    pub fn migrations(self) -> Vec<Migration> {
        let dir = workspace_root().join("migrations").join(self.name());
        let mut found: Vec<Migration> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "sql"))
            .map(|p| {
                let stem = p.file_stem().expect("stem").to_string_lossy().into_owned();
                let version = stem
                    .split_once('_')
                    .and_then(|(v, _)| v.parse().ok())
                    .unwrap_or_else(|| panic!("{}: not <version>_<name>.sql", p.display()));
                Migration {
                    engine: self,
                    version,
                    stem,
                }
            })
            .collect();
        found.sort_by_key(|m| m.version);
        found
    }

    /// The folder of its fixtures.
    pub fn fixtures_dir(self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/upgrades")
            .join(self.name())
    }
}

/// One migration file of one engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    pub engine: Engine,
    /// Its version, the number its name starts with.
    pub version: i64,
    /// Its file name without `.sql`.
    pub stem: String,
}

impl Migration {
    /// Where the fixture of a ledger at this version is.
    pub fn fixture(&self) -> PathBuf {
        self.engine.fixtures_dir().join(format!(
            "{}.{}",
            self.stem,
            self.engine.fixture_extension()
        ))
    }
}

impl std::fmt::Display for Migration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.engine.name(), self.stem)
    }
}

/// SHA-256 of `bytes`, 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the store lives in the workspace")
        .to_owned()
}

/// A connection of the test's own to a ledger's database, past the store.
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// One value of a row, as the ledger's columns hold them.
#[derive(Debug, Clone)]
pub enum Value {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    /// INTEGER 0/1 on SQLite, BOOLEAN on PostgreSQL.
    Flag(bool),
    Bytes(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Self::Int(Some(v))
    }
}
impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Self {
        Self::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Self::Real(Some(v))
    }
}
impl From<Option<f64>> for Value {
    fn from(v: Option<f64>) -> Self {
        Self::Real(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Self::Text(Some(v.to_owned()))
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Self::Text(Some(v.clone()))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Self::Text(Some(v))
    }
}
impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Self {
        Self::Text(v)
    }
}
impl From<&Option<String>> for Value {
    fn from(v: &Option<String>) -> Self {
        Self::Text(v.clone())
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Self::Flag(v)
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Self::Bytes(v)
    }
}

impl Db {
    /// The ledger file at `path` (created if missing), opened as the store opens it: WAL
    /// journal, foreign keys on.
    pub async fn sqlite(path: &Path) -> Self {
        Self::sqlite_with(path, SqliteConnectOptions::new()).await
    }

    /// A new ledger file at `path` of pages of `page_size` bytes (the fixtures' are small).
    pub async fn new_sqlite(path: &Path, page_size: u32) -> Self {
        assert!(!path.exists(), "{} exists", path.display());
        Self::sqlite_with(path, SqliteConnectOptions::new().page_size(page_size)).await
    }

    async fn sqlite_with(path: &Path, options: SqliteConnectOptions) -> Self {
        let options = options
            .filename(path)
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(bench_store::BUSY_TIMEOUT);
        Self::Sqlite(
            SqlitePoolOptions::new()
                .max_connections(1)
                .connect_with(options)
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
    }

    /// The PostgreSQL database at `url`.
    pub async fn postgres(url: &str) -> Self {
        Self::Postgres(
            PgPoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .unwrap_or_else(|e| panic!("{url}: {e}")),
        )
    }

    /// Applies the engine's migrations up to `version`, as a build of that time did.
    pub async fn migrate_to(&self, version: i64) {
        match self {
            Self::Sqlite(pool) => Engine::Sqlite.migrator().run_to(version, pool).await,
            Self::Postgres(pool) => Engine::Postgres.migrator().run_to(version, pool).await,
        }
        .unwrap_or_else(|e| panic!("migrate to {version}: {e}"));
    }

    pub async fn close(&self) {
        match self {
            Self::Sqlite(pool) => pool.close().await,
            Self::Postgres(pool) => pool.close().await,
        }
    }

    /// Runs `sql`.
    pub async fn execute(&self, sql: &str) {
        let query = sqlx::AssertSqlSafe(sql.to_owned());
        match self {
            Self::Sqlite(pool) => sqlx::raw_sql(query).execute(pool).await.map(|_| ()),
            Self::Postgres(pool) => sqlx::raw_sql(query).execute(pool).await.map(|_| ()),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Inserts one row into `table`; its `id` when `returning_id`.
    pub async fn insert(&self, table: &str, row: &[(&str, Value)], returning_id: bool) -> i64 {
        let columns: Vec<&str> = row.iter().map(|(c, _)| *c).collect();
        let params: Vec<String> = (1..=row.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({}){}",
            columns.join(", "),
            params.join(", "),
            if returning_id { " RETURNING id" } else { "" }
        );
        let fail = |e: sqlx::Error| -> i64 { panic!("{sql}: {e}") };
        macro_rules! bind_all {
            ($pool:expr) => {{
                let mut query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.clone()));
                for (_, value) in row {
                    query = match value.clone() {
                        Value::Int(v) => query.bind(v),
                        Value::Real(v) => query.bind(v),
                        Value::Text(v) => query.bind(v),
                        Value::Flag(v) => query.bind(v),
                        Value::Bytes(v) => query.bind(v),
                    };
                }
                if returning_id {
                    query.fetch_one($pool).await.unwrap_or_else(fail)
                } else {
                    query.fetch_optional($pool).await.map_or_else(fail, |_| 0)
                }
            }};
        }
        match self {
            Self::Sqlite(pool) => bind_all!(pool),
            Self::Postgres(pool) => bind_all!(pool),
        }
    }

    /// The one text column of every row `sql` returns, in its order.
    pub async fn texts(&self, sql: &str) -> Vec<String> {
        let query = sqlx::AssertSqlSafe(sql.to_owned());
        match self {
            Self::Sqlite(pool) => sqlx::query_scalar(query).fetch_all(pool).await,
            Self::Postgres(pool) => sqlx::query_scalar(query).fetch_all(pool).await,
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// How many rows of `table` have a value (not NULL) in `column`.
    pub async fn non_null(&self, table: &str, column: &str) -> i64 {
        let sql = format!("SELECT COUNT(\"{column}\") FROM \"{table}\"");
        let query = sqlx::AssertSqlSafe(sql.clone());
        match self {
            Self::Sqlite(pool) => sqlx::query_scalar(query).fetch_one(pool).await,
            Self::Postgres(pool) => sqlx::query_scalar(query).fetch_one(pool).await,
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The migrations applied, oldest first.
    pub async fn applied_migrations(&self) -> Vec<i64> {
        let sql = "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version";
        match self {
            Self::Sqlite(pool) => sqlx::query_scalar(sql).fetch_all(pool).await,
            Self::Postgres(pool) => sqlx::query_scalar(sql).fetch_all(pool).await,
        }
        .expect("applied migrations")
    }

    /// The ledger's tables (sqlx's own included), by name.
    pub async fn tables(&self) -> BTreeSet<String> {
        self.texts(match self {
            Self::Sqlite(_) => "SELECT name FROM sqlite_master WHERE type = 'table'",
            Self::Postgres(_) => {
                "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            }
        })
        .await
        .into_iter()
        .collect()
    }

    /// The columns of `table`, in order.
    pub async fn columns(&self, table: &str) -> Vec<String> {
        self.texts(&match self {
            Self::Sqlite(_) => {
                format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid")
            }
            Self::Postgres(_) => format!(
                "SELECT CAST(column_name AS TEXT) FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = '{table}'
                 ORDER BY ordinal_position"
            ),
        })
        .await
    }

    /// Every row of every table, each row as one text that tells every value apart (reals to
    /// the last bit, blobs in hex).
    pub async fn snapshot(&self) -> Snapshot {
        let mut tables = BTreeMap::new();
        for table in self.tables().await {
            let columns = self.columns(&table).await;
            let rows = self.rows(&table, &columns).await;
            tables.insert(table, (columns, rows));
        }
        Snapshot { tables }
    }

    /// The rows of `table` restricted to `columns`, sorted.
    async fn rows(&self, table: &str, columns: &[String]) -> Vec<String> {
        let sql = match self {
            Self::Sqlite(_) => {
                let values: Vec<String> = columns
                    .iter()
                    .map(|c| {
                        format!(
                            "CASE typeof(\"{c}\") WHEN 'real' THEN printf('%!.17g', \"{c}\") \
                             ELSE quote(\"{c}\") END"
                        )
                    })
                    .collect();
                format!("SELECT {} FROM \"{table}\"", values.join(" || ', ' || "))
            }
            Self::Postgres(_) => {
                let quoted: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
                format!(
                    "SELECT CAST(ROW({}) AS TEXT) FROM \"{table}\"",
                    quoted.join(", ")
                )
            }
        };
        let mut rows = self.texts(&sql).await;
        rows.sort();
        rows
    }

    /// The schema as text: every table, column, index, constraint and trigger, one line each,
    /// sorted; two ledgers of one schema give the same lines.
    pub async fn schema_text(&self) -> Vec<String> {
        let queries: &[&str] = match self {
            Self::Sqlite(_) => &["SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || \
                                  COALESCE(sql, '') FROM sqlite_master"],
            Self::Postgres(_) => &[
                "SELECT 'column ' || table_name || '.' || column_name || ' #' || ordinal_position
                     || ' ' || data_type || ' collate ' || COALESCE(collation_name, '-')
                     || ' null ' || is_nullable || ' default ' || COALESCE(column_default, '-')
                     || ' identity ' || is_identity || ' ' || COALESCE(identity_generation, '-')
                 FROM information_schema.columns WHERE table_schema = current_schema()",
                "SELECT 'constraint ' || CAST(conrelid::regclass AS TEXT) || ' ' || conname || ': '
                     || pg_get_constraintdef(oid)
                 FROM pg_constraint
                 WHERE connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
                "SELECT 'index ' || tablename || ' ' || indexname || ': ' || indexdef
                 FROM pg_indexes WHERE schemaname = current_schema()",
                "SELECT 'trigger ' || CAST(tgrelid::regclass AS TEXT) || ' ' || tgname || ': '
                     || pg_get_triggerdef(oid)
                 FROM pg_trigger WHERE NOT tgisinternal",
                "SELECT 'function ' || proname || ': ' || pg_get_functiondef(oid)
                 FROM pg_proc
                 WHERE pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
            ],
        };
        let mut lines = Vec::new();
        for sql in queries {
            lines.extend(self.texts(sql).await);
        }
        lines.sort();
        lines
    }
}

/// Every row of every table of a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Per table: its columns, and its rows as texts, sorted.
    pub tables: BTreeMap<String, (Vec<String>, Vec<String>)>,
}

impl Snapshot {
    /// Tables without a row.
    pub fn empty_tables(&self) -> Vec<&str> {
        self.tables
            .iter()
            .filter(|(_, (_, rows))| rows.is_empty())
            .map(|(t, _)| t.as_str())
            .collect()
    }

    /// Asserts that every row of `self` is still in `db`, every value of its columns the same
    /// (columns and rows added since are allowed).
    pub async fn assert_kept_in(&self, db: &Db, what: &str) {
        let now = db.tables().await;
        for (table, (columns, rows)) in &self.tables {
            assert!(now.contains(table), "{what}: table {table} is gone");
            let have = db.columns(table).await;
            for column in columns {
                assert!(
                    have.contains(column),
                    "{what}: column {table}.{column} is gone"
                );
            }
            let mut after = db.rows(table, columns).await;
            for row in rows {
                let Some(at) = after.iter().position(|r| r == row) else {
                    panic!("{what}: a row of {table} was lost or changed: {row}");
                };
                after.swap_remove(at);
            }
        }
    }
}

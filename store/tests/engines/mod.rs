//! The engines under test: a fresh ledger of each, and a connection of the test's own to the
//! same database, to try what the database must refuse (the store has no door for raw SQL).

use bench_store::{Ledger, LedgerError, Location};
use sqlx::postgres::PgPool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

/// A fresh, empty ledger on one engine.
pub struct Fixture {
    pub ledger: Ledger,
    pub location: Location,
    raw: Raw,
    // Keeps the SQLite file's directory alive.
    _dir: Option<tempfile::TempDir>,
}

/// The test's own connections to the ledger's database, past the store.
enum Raw {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Fixture {
    /// A ledger file in a new temporary directory.
    pub async fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ledger.sqlite");
        let location = Location::Sqlite(path.clone());
        let ledger = Ledger::open(&location).await.expect("open sqlite ledger");
        // Migrating leaves nothing beside the ledger but SQLite's own files (issue 45).
        let mut beside: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("ledger.sqlite") || n.ends_with("migrate-lock"))
            .collect();
        beside.sort();
        assert!(beside.is_empty(), "left beside the ledger: {beside:?}");
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .busy_timeout(bench_store::BUSY_TIMEOUT);
        let raw = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .expect("raw connection");
        Self {
            ledger,
            raw: Raw::Sqlite(raw),
            location,
            _dir: Some(dir),
        }
    }

    /// A new database on the test process's PostgreSQL server; `None` when skipped.
    pub async fn postgres(what: &str) -> Option<Self> {
        let server = testkit::postgres::server(what)?;
        let url = server.create_database();
        let location = Location::parse(&url).expect("postgres url");
        let ledger = Ledger::open(&location).await.expect("open postgres ledger");
        let raw = PgPool::connect(&url).await.expect("raw connection");
        Some(Self {
            ledger,
            raw: Raw::Postgres(raw),
            location,
            _dir: None,
        })
    }

    /// Runs `sql` directly on the database; the rows it changed.
    pub async fn execute(&self, sql: &str) -> Result<u64, LedgerError> {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        Ok(match &self.raw {
            Raw::Sqlite(pool) => sqlx::query(sql).execute(pool).await?.rows_affected(),
            Raw::Postgres(pool) => sqlx::query(sql).execute(pool).await?.rows_affected(),
        })
    }

    /// `SELECT COUNT(*) FROM table`.
    pub async fn count(&self, table: &str) -> i64 {
        let sql = sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}"));
        match &self.raw {
            Raw::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
            Raw::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        }
        .expect("count")
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.raw, Raw::Postgres(_))
    }
}

/// Declares each named test of `suite` twice, on SQLite and on PostgreSQL.
#[macro_export]
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    let fixture = $crate::engines::Fixture::sqlite().await;
                    $crate::suite::$name(&fixture).await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    let Some(fixture) = $crate::engines::Fixture::postgres(stringify!($name)).await
                    else {
                        return;
                    };
                    $crate::suite::$name(&fixture).await;
                }
            )*
        }
    };
}

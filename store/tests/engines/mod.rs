//! The engines under test: a fresh ledger of each, and a way around the store's operations to
//! try what the database must refuse.

use bench_store::postgres::PostgresStore;
use bench_store::sqlite::SqliteStore;
use bench_store::{Ledger, LedgerError, Location};

/// A fresh, empty ledger on one engine.
pub struct Fixture {
    pub ledger: Ledger,
    pub location: Location,
    raw: Raw,
    // Keeps the SQLite file's directory alive.
    _dir: Option<tempfile::TempDir>,
}

enum Raw {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
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
        Self {
            ledger,
            raw: Raw::Sqlite(SqliteStore::open(&path).await.expect("second handle")),
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
        let raw = PostgresStore::open(&url, &location)
            .await
            .expect("second handle");
        Some(Self {
            ledger,
            raw: Raw::Postgres(raw),
            location,
            _dir: None,
        })
    }

    /// Runs `sql` directly on the database.
    pub async fn execute(&self, sql: &str) -> Result<u64, LedgerError> {
        match &self.raw {
            Raw::Sqlite(s) => s.execute_unchecked(sql).await,
            Raw::Postgres(s) => s.execute_unchecked(sql).await,
        }
    }

    /// `SELECT COUNT(*) FROM table`.
    pub async fn count(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        match &self.raw {
            Raw::Sqlite(s) => s.count_unchecked(&sql).await,
            Raw::Postgres(s) => s.count_unchecked(&sql).await,
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

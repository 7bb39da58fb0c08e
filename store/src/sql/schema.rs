//! The ledger's schema against the migrations a build embeds: a newer one is refused (and
//! left untouched), a missing or older one is migrated, or refused by a read-only open.

use super::SqlStore;
use crate::LedgerError;
use crate::engine::Engine;
use crate::rows::Cols;
use sqlx::migrate::{MigrateError, Migrator};

impl<E: Engine> SqlStore<E> {
    /// The migrations applied to the ledger; `has_table` is the engine's query for whether
    /// sqlx's migrations table exists (none: a new database).
    async fn applied_migrations(&self, has_table: &'static str) -> Result<Vec<i64>, LedgerError> {
        let mut conn = self.conn().await.map_err(|e| self.open_error(e))?;
        let found = E::query(has_table)
            .fetch_optional(&mut conn)
            .await
            .map_err(|e| self.open_error(e))?;
        if found.is_none() {
            return Ok(Vec::new());
        }
        E::query("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(&mut conn)
            .await?
            .iter()
            .map(|r| r.int("version"))
            .collect()
    }

    fn open_error(&self, e: LedgerError) -> LedgerError {
        match e {
            LedgerError::Query(source) => LedgerError::Open {
                location: self.location.to_string(),
                source,
            },
            other => other,
        }
    }

    /// The newest migration `migrator` knows; an error when the ledger has a newer one.
    fn supported(&self, migrator: &Migrator, applied: &[i64]) -> Result<i64, LedgerError> {
        let supported = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        match applied.iter().max() {
            Some(&found) if found > supported => Err(LedgerError::NewerSchema {
                location: self.location.to_string(),
                found,
                supported,
            }),
            _ => Ok(supported),
        }
    }

    /// Whether some migration of `migrator` is still to run (a newer schema is refused).
    pub(crate) async fn needs_migration(
        &self,
        migrator: &Migrator,
        has_table: &'static str,
    ) -> Result<bool, LedgerError> {
        let applied = self.applied_migrations(has_table).await?;
        self.supported(migrator, &applied)?;
        Ok(!migrator.iter().all(|m| applied.contains(&m.version)))
    }

    /// Refuses a ledger whose schema is not the newest of `migrator`: not migrated, older or
    /// newer (a read-only open cannot migrate).
    pub(crate) async fn require_migrated(
        &self,
        migrator: &Migrator,
        has_table: &'static str,
    ) -> Result<(), LedgerError> {
        let applied = self.applied_migrations(has_table).await?;
        let supported = self.supported(migrator, &applied)?;
        match applied.iter().max() {
            Some(&found) if found == supported => Ok(()),
            Some(&found) => Err(LedgerError::Invalid(format!(
                "ledger {} has schema version {found}, older than this bench-run's \
                 ({supported}), and a read-only open cannot upgrade it; open it once with \
                 bench-run (any command, e.g. `bench-run list --db ...`) to upgrade it in place",
                self.location
            ))),
            None => Err(LedgerError::Invalid(format!(
                "{} is not a migrated ledger; open it once with bench-run to create it",
                self.location
            ))),
        }
    }

    /// The error of a failed migration.
    pub(crate) fn migrate_error(&self, source: MigrateError) -> LedgerError {
        LedgerError::Migrate {
            location: self.location.to_string(),
            source: Box::new(source),
        }
    }
}

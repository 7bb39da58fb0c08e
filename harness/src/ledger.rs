//! The ledger as the harness uses it: the store ([`bench_store`], SQLite or PostgreSQL behind
//! one trait) and where it lives by default, the workspace's `results/ledger.sqlite`.

pub use bench_store::copy::{CopyProgress, CopyReport, copy_ledger};
pub use bench_store::{
    Annotation, BUSY_TIMEOUT, DatedRun, IngestKey, Ingested, Ledger, LedgerError, LedgerStore,
    Location, MachineSummary, Pairing, PairingPlan, RunAnnotation, RunFilter, RunId, RunSummary,
    StoredRun, SuiteSummary, TrendData, TrendRun, TrendSeries, TrendValue,
};
use std::path::{Path, PathBuf};

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

/// Where the ledger lives: the `--db` / `BENCH_DB` value when given (a file path, relative to
/// `cwd`, or a URL, see [`Location::parse`]), else `results/ledger.sqlite` at the workspace root
/// above `cwd`. Shared by `bench-run` and `bench-web` so both find the same default ledger.
///
/// # Errors
/// When `db` is a URL no engine takes.
pub fn default_location(db: Option<&str>, cwd: &Path) -> Result<Location, LedgerError> {
    match db.map(Location::parse).transpose()? {
        Some(Location::Sqlite(p)) if p.is_relative() => Ok(Location::Sqlite(cwd.join(p))),
        Some(location) => Ok(location),
        None => Ok(Location::Sqlite(
            workspace_root(cwd).join("results").join("ledger.sqlite"),
        )),
    }
}

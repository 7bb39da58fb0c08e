//! Where the ledger lives by default: the workspace's `results/ledger.sqlite`, unless `--db` /
//! `BENCH_DB` names a file or a server (the store itself is [`bench_store`]).

use bench_store::{LedgerError, Location};
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

//! Test-only helpers shared by the workspace's crates: the pinned Python venv of the reference
//! implementations, a real PostgreSQL server for the store tests ([`postgres`]), and, with the
//! `ledger` feature, synthetic ledgers of a known shape (`synthetic`), shell workers of the
//! interleave protocol ([`worker`]), and criterion output to record runs from
//! ([`cargo_criterion`]).
//!
//! The interop tests run the real implementations (ROOT, C++ riegeli, Python booklet) from the
//! pinned venv that `tools/venv.sh` creates and `tools/test.sh` exports as `$BENCH_PYTHON`.
//! Outside CI a missing venv skips those tests with a note; under CI it fails them, so a CI
//! machine can never pass by skipping.

use std::path::{Path, PathBuf};

pub mod cargo_criterion;
pub mod postgres;
#[cfg(feature = "ledger")]
pub mod synthetic;
pub mod worker;

/// The workspace root (this crate lives directly under it).
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Whether the tests run under CI (`CI=true` or `CI=1`).
#[must_use]
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The venv's Python: `$BENCH_PYTHON`, else `<workspace>/tools/.venv/bin/python`.
///
/// Without either it returns `None` after printing `SKIPPED: {what}` on standard error, or,
/// under CI, panics with how to create the venv. `what` names the test or the package needed.
#[must_use]
pub fn venv_python(what: &str) -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("BENCH_PYTHON").map(PathBuf::from),
        Some(workspace_root().join("tools/.venv/bin/python")),
    ];
    if let Some(found) = candidates.into_iter().flatten().find(|p| p.exists()) {
        return Some(found);
    }
    assert!(
        !under_ci(),
        "{what}: no Python venv found and CI=true; tools/test.sh creates it (tools/venv.sh) \
         and exports BENCH_PYTHON"
    );
    eprintln!("SKIPPED: {what}: no Python venv (set BENCH_PYTHON or run tools/venv.sh)");
    None
}

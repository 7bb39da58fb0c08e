//! Shared helpers of the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

/// The committed fixtures directory.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
}

/// A fixture's path.
pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
}

/// The Python of the pinned venv: `$BENCH_PYTHON`, else `<workspace>/tools/.venv/bin/python`.
/// Without either: a failure under CI, a `SKIPPED` note (and `None`) otherwise.
pub fn python() -> Option<PathBuf> {
    testkit::venv_python("Python with ROOT 6.40")
}

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
    if let Some(p) = std::env::var_os("BENCH_PYTHON") {
        let p = PathBuf::from(p);
        if p.exists() {
            return Some(p);
        }
    }
    let venv = workspace_root()
        .join("tools")
        .join(".venv")
        .join("bin")
        .join("python");
    if venv.exists() {
        return Some(venv);
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !ci,
        "no Python venv with ROOT: tools/test.sh creates it (tools/venv.sh)"
    );
    eprintln!("SKIPPED: no Python venv with ROOT (set BENCH_PYTHON or run tools/test.sh)");
    None
}

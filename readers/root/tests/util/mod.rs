//! Shared helpers of the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

/// The committed fixtures directory.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
}

/// Runs `program` with `args`: whether it succeeded, its standard output and its standard error.
pub fn run(program: &str, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A fixture's path as a string, as command lines take it.
pub fn fixture_arg(name: &str) -> String {
    fixture(name).display().to_string()
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

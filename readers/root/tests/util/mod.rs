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

/// The labels of seed 001's six report lines, in its order.
pub const ROOTREADSPEED_LINES: [&str; 6] = [
    "Real time to setup MT run",
    "CPU time to setup MT run",
    "Real time",
    "CPU time",
    "Uncompressed data read",
    "Throughput",
];

/// The labels (text before the colon) of a report's first six lines.
pub fn first_six_labels(report: &str) -> Vec<&str> {
    report
        .lines()
        .take(6)
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect()
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

//! Shared helpers of the integration tests: fixture paths, the Python interpreter, temp dirs.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The crate's fixture directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python interpreter with booklet 0.12.10: `$BENCH_PYTHON`, else `<root>/tools/.venv/bin/python`.
/// Returns None (after printing SKIPPED) when neither exists; under CI it panics instead.
pub fn python() -> Option<PathBuf> {
    testkit::venv_python("Python with booklet 0.12.10")
}

/// Run `tools/booklet_interop.py` with arguments.
pub fn interop(py: &Path, args: &[&str]) -> Output {
    let script = workspace_root().join("tools/booklet_interop.py");
    let out = Command::new(py)
        .arg(script)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "booklet_interop.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Base64 (standard alphabet) decode.
pub fn b64(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64")
}

/// Base64 (standard alphabet) encode.
pub fn b64e(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A fresh temporary directory, on tmpfs (`/dev/shm`) when there is one: prune and clear
/// `fsync`, which costs tens of milliseconds per call on a disk.
pub fn tempdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(shm)
    {
        return d;
    }
    tempfile::tempdir().expect("tempdir")
}

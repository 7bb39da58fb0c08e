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

/// A value from tagged JSON (`tools/booklet_interop.py`: `{"$int": "digits"}`,
/// `{"$float": repr}`, `{"$bytes": b64}`, `{"$tuple": [...]}`, `{"$dict": [[k, v], ...]}`).
pub fn from_tagged(j: &serde_json::Value) -> booklet::Value {
    use booklet::Value as V;
    use serde_json::Value as J;
    match j {
        J::Null => V::None,
        J::Bool(b) => V::Bool(*b),
        J::String(s) => V::Str(s.clone()),
        J::Array(a) => V::List(a.iter().map(from_tagged).collect()),
        J::Object(o) => {
            let (tag, val) = o.iter().next().expect("one tag");
            match tag.as_str() {
                "$int" => V::Int(val.as_str().unwrap().parse().unwrap()),
                "$float" => V::Float(match val.as_str().unwrap() {
                    "inf" => f64::INFINITY,
                    "-inf" => f64::NEG_INFINITY,
                    s => s.parse().unwrap(),
                }),
                "$bytes" => V::Bytes(b64(val.as_str().unwrap())),
                "$tuple" => V::Tuple(val.as_array().unwrap().iter().map(from_tagged).collect()),
                "$dict" => V::Dict(
                    val.as_array()
                        .unwrap()
                        .iter()
                        .map(|kv| (from_tagged(&kv[0]), from_tagged(&kv[1])))
                        .collect(),
                ),
                other => panic!("unknown tag {other}"),
            }
        }
        J::Number(n) => panic!("untagged number {n}"),
    }
}

/// Tagged JSON of a value (the inverse of [`from_tagged`]).
pub fn to_tagged(v: &booklet::Value) -> serde_json::Value {
    use booklet::Value as V;
    use serde_json::{Value as J, json};
    match v {
        V::None => J::Null,
        V::Bool(b) => J::Bool(*b),
        V::Int(i) => json!({"$int": i.to_string()}),
        V::Float(f) => {
            let mut s = format!("{f:?}");
            if f.is_infinite() {
                s = if *f > 0.0 { "inf" } else { "-inf" }.into();
            }
            json!({"$float": s})
        }
        V::Str(s) => J::String(s.clone()),
        V::Bytes(b) => json!({"$bytes": b64e(b)}),
        V::List(a) => J::Array(a.iter().map(to_tagged).collect()),
        V::Tuple(a) => json!({"$tuple": a.iter().map(to_tagged).collect::<Vec<_>>()}),
        V::Dict(d) => {
            json!({"$dict": d.iter().map(|(k, x)| json!([to_tagged(k), to_tagged(x)])).collect::<Vec<_>>()})
        }
    }
}

/// The venv's Python, if it also has msgpack and zstandard (booklet's optional serializer
/// dependencies, pinned in tools/requirements.txt). Under CI a venv without them fails.
pub fn python_with_serializers() -> Option<PathBuf> {
    let py = python()?;
    let ok = Command::new(&py)
        .args(["-c", "import msgpack, zstandard, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(py);
    }
    assert!(
        !testkit::under_ci(),
        "{}: no msgpack/zstandard/numpy; rerun tools/venv.sh (tools/requirements.txt pins them)",
        py.display()
    );
    eprintln!(
        "SKIPPED: {} lacks msgpack/zstandard/numpy (rerun tools/venv.sh)",
        py.display()
    );
    None
}

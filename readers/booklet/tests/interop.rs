//! Interop with the real Python booklet 0.12.10 (via tools/booklet_interop.py), both directions:
//! files we write read identically in Python; the same operation sequence gives byte-identical
//! files (masking the per-file UUID and creation time); a Python writer's lock blocks ours.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use booklet::{Booklet, Error, Flag, OpenOptions, Serializer};
use serde_json::{Value, json};

const T0: u64 = 1_700_000_000_000_000;

struct Spec {
    key_ser: Serializer,
    value_ser: Serializer,
    n_buckets: u32,
    buffer_size: usize,
    timestamps: bool,
    value_len: Option<u32>,
}

impl Spec {
    fn options(&self) -> OpenOptions {
        let mut o = OpenOptions::new()
            .key_serializer(self.key_ser)
            .value_serializer(self.value_ser)
            .n_buckets(self.n_buckets)
            .buffer_size(self.buffer_size)
            .timestamps(self.timestamps);
        if let Some(v) = self.value_len {
            o = o.fixed_value_len(v);
        }
        o
    }
    fn py_name(s: Serializer) -> Value {
        if s == Serializer::None {
            Value::Null
        } else {
            json!(s.name())
        }
    }
}

/// Generate a random operation sequence, apply it to a Rust booklet, and return the ops as JSON.
fn run_random_ops(
    db: &mut Booklet,
    spec: &Spec,
    seed: u64,
    n_ops: usize,
    key_space: usize,
) -> Vec<Value> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut ops = Vec::new();
    let mut ts = T0;
    let fixed = spec.value_len.is_some();
    for _ in 0..n_ops {
        let r = rng.u32(0..1000);
        let key = format!("key{}", rng.usize(0..key_space)).into_bytes();
        if r < 700 {
            let v: Vec<u8> = match spec.value_len {
                Some(n) => (0..n).map(|_| rng.u8(..)).collect(),
                None => (0..rng.usize(0..40)).map(|_| rng.u8(b'a'..=b'z')).collect(),
            };
            ts += 1;
            if fixed || !spec.timestamps {
                db.set(&key, &v).unwrap();
            } else {
                db.set_with_timestamp(&key, &v, ts).unwrap();
            }
            ops.push(json!([
                "set",
                util::b64e(&key),
                util::b64e(&v),
                if spec.timestamps {
                    json!(ts)
                } else {
                    Value::Null
                }
            ]));
        } else if r < 850 {
            db.sync().unwrap();
            ops.push(json!(["sync"]));
            if db.contains(&key).unwrap() {
                db.delete(&key).unwrap();
                ops.push(json!(["del", util::b64e(&key)]));
            }
        } else if r < 950 {
            db.sync().unwrap();
            ops.push(json!(["sync"]));
        } else if r < 970 && spec.timestamps && !fixed {
            db.sync().unwrap();
            ops.push(json!(["sync"]));
            if db.contains(&key).unwrap() {
                db.set_timestamp(&key, T0 + 5).unwrap();
                ops.push(json!(["set_timestamp", util::b64e(&key), T0 + 5]));
            }
        } else if r < 985 {
            let cut = if spec.timestamps && !fixed && rng.bool() {
                Some(ts - 40)
            } else {
                None
            };
            let keep = format!("key{}", rng.usize(0..key_space)).into_bytes();
            let removed = db.prune(cut, &[&keep]).unwrap();
            let _ = removed;
            ops.push(json!([
                "prune",
                cut,
                if cut.is_some() {
                    vec![util::b64e(&keep)]
                } else {
                    vec![]
                }
            ]));
        } else if r < 987 {
            // Python's clear() keeps its write buffer and flushes it later at stale positions;
            // sync first so both sides clear an unbuffered handle.
            db.sync().unwrap();
            db.clear().unwrap();
            ops.push(json!(["sync"]));
            ops.push(json!(["clear"]));
        } else if r < 993 && !fixed {
            // Python writes orjson.dumps(obj): compact JSON.
            let n = rng.u32(..1000);
            let value = format!(r#"{{"n":{n},"name":"meta"}}"#);
            ts += 1;
            let t = spec.timestamps.then_some(ts);
            db.set_metadata(value.as_bytes(), t).unwrap();
            ops.push(json!(["set_metadata", {"n": n, "name": "meta"}, t]));
        } else if !fixed {
            let slot = rng.u8(1..=2);
            let v: Vec<u8> = (0..rng.usize(0..30)).map(|_| rng.u8(..)).collect();
            ts += 1;
            let t = spec.timestamps.then_some(ts);
            db.set_reserved(slot, &v, t).unwrap();
            ops.push(json!(["set_reserved", slot, util::b64e(&v), t]));
        }
    }
    ops
}

fn write_spec(dir: &Path, spec: &Spec, ops: Vec<Value>) -> std::path::PathBuf {
    let doc = json!({
        "key_serializer": Spec::py_name(spec.key_ser),
        "value_serializer": Spec::py_name(spec.value_ser),
        "n_buckets": spec.n_buckets,
        "buffer_size": spec.buffer_size,
        "timestamps": spec.timestamps,
        "value_len": spec.value_len,
        "ops": ops,
    });
    let p = dir.join("spec.json");
    std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
    p
}

fn masked(path: &Path) -> Vec<u8> {
    let mut b = std::fs::read(path).unwrap();
    // File creation time (42..49) and per-file UUID (49..65) legitimately differ.
    for x in &mut b[42..65] {
        *x = 0;
    }
    b
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// What Python reads from a file, compared with what we read.
fn assert_python_reads_same(py: &Path, path: &Path) {
    let out = util::interop(py, &["dump", path.to_str().unwrap()]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut db = booklet::open(path, Flag::Read).unwrap();
    assert_eq!(doc["len"].as_u64().unwrap(), db.len(), "len");
    let ours: Vec<Value> = db
        .iter()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            json!({"key_b64": util::b64e(&e.key), "value_b64": util::b64e(&e.value), "timestamp": e.timestamp})
        })
        .collect();
    assert_eq!(
        &ours,
        doc["items"].as_array().unwrap(),
        "items differ from Python's reading of {}",
        path.display()
    );
    if let Some(locs) = doc.get("locations") {
        let ours: Vec<Value> = db
            .locations()
            .unwrap()
            .map(|l| {
                let l = l.unwrap();
                json!([util::b64e(&l.key), l.timestamp, l.value_offset, l.value_len])
            })
            .collect();
        assert_eq!(&ours, locs.as_array().unwrap(), "locations");
    }
    if let Some(meta) = doc.get("metadata") {
        let ours: Value = db
            .get_metadata()
            .unwrap()
            .map_or(Value::Null, |b| serde_json::from_slice(&b).unwrap());
        assert_eq!(&ours, meta, "metadata");
        for slot in 1..=2u8 {
            let ours = db.get_reserved(slot).unwrap().map(|b| util::b64e(&b));
            assert_eq!(
                json!(ours),
                doc["reserved"][slot.to_string()],
                "reserved slot {slot}"
            );
        }
    }
}

fn same_ops_same_bytes(spec: &Spec, seed: u64, n_ops: usize, key_space: usize) {
    let Some(py) = util::python() else { return };
    let dir = util::tempdir();
    let ours = dir.path().join("rust.blt");
    let theirs = dir.path().join("python.blt");
    let mut db = spec.options().open(&ours, Flag::New).unwrap();
    let ops = run_random_ops(&mut db, spec, seed, n_ops, key_space);
    db.close().unwrap();
    let spec_path = write_spec(dir.path(), spec, ops);
    util::interop(
        &py,
        &[
            "run-ops",
            spec_path.to_str().unwrap(),
            theirs.to_str().unwrap(),
        ],
    );
    let (a, b) = (masked(&ours), masked(&theirs));
    if let Some(at) = first_difference(&a, &b) {
        panic!(
            "seed {seed}: files differ at byte {at} (ours {} bytes, Python {} bytes)",
            a.len(),
            b.len()
        );
    }
    assert_python_reads_same(&py, &ours);
}

#[test]
fn same_ops_byte_identical_str_timestamps_reindex() {
    // 7 buckets: the auto-reindex to 12007 happens early; small buffer: mid-set flushes.
    let spec = Spec {
        key_ser: Serializer::Str,
        value_ser: Serializer::Bytes,
        n_buckets: 7,
        buffer_size: 300,
        timestamps: true,
        value_len: None,
    };
    for seed in 1..=3 {
        same_ops_byte_identical_seed(&spec, seed);
    }
}

fn same_ops_byte_identical_seed(spec: &Spec, seed: u64) {
    same_ops_same_bytes(spec, seed, 600, 60);
}

#[test]
fn same_ops_byte_identical_no_timestamps_default_buffer() {
    let spec = Spec {
        key_ser: Serializer::Bytes,
        value_ser: Serializer::None,
        n_buckets: 31,
        buffer_size: 1 << 22,
        timestamps: false,
        value_len: None,
    };
    for seed in 10..=12 {
        same_ops_same_bytes(&spec, seed, 500, 80);
    }
}

#[test]
fn same_ops_byte_identical_fixed_length() {
    let spec = Spec {
        key_ser: Serializer::Str,
        value_ser: Serializer::None,
        n_buckets: 5,
        buffer_size: 200,
        timestamps: false,
        value_len: Some(6),
    };
    for seed in 20..=22 {
        same_ops_same_bytes(&spec, seed, 500, 50);
    }
}

#[test]
fn same_ops_byte_identical_second_reindex_with_skip_block() {
    // 12 100 keys from 7 buckets: 7 -> 12007 (old index at 200) -> 144013 (old index relocated,
    // overwritten by a skip block). Then deletes and a prune.
    let Some(py) = util::python() else { return };
    let spec = Spec {
        key_ser: Serializer::Str,
        value_ser: Serializer::Str,
        n_buckets: 7,
        buffer_size: 1 << 16,
        timestamps: true,
        value_len: None,
    };
    let dir = util::tempdir();
    let ours = dir.path().join("rust.blt");
    let theirs = dir.path().join("python.blt");
    let mut db = spec.options().open(&ours, Flag::New).unwrap();
    let mut ops = Vec::new();
    for i in 0..12_100u64 {
        let k = format!("k{i}");
        let v = format!("v{}", i * 7);
        db.set_with_timestamp(k.as_bytes(), v.as_bytes(), T0 + i)
            .unwrap();
        ops.push(json!([
            "set",
            util::b64e(k.as_bytes()),
            util::b64e(v.as_bytes()),
            T0 + i
        ]));
        if i % 3000 == 2999 {
            db.sync().unwrap();
            ops.push(json!(["sync"]));
        }
    }
    db.sync().unwrap();
    ops.push(json!(["sync"]));
    assert_eq!(db.header().n_buckets, 144_013);
    for i in (0..12_100u64).step_by(97) {
        let k = format!("k{i}");
        db.delete(k.as_bytes()).unwrap();
        ops.push(json!(["del", util::b64e(k.as_bytes())]));
    }
    db.prune(None, &[]).unwrap();
    ops.push(json!(["prune", null, []]));
    db.close().unwrap();
    let spec_path = write_spec(dir.path(), &spec, ops);
    util::interop(
        &py,
        &[
            "run-ops",
            spec_path.to_str().unwrap(),
            theirs.to_str().unwrap(),
        ],
    );
    let (a, b) = (masked(&ours), masked(&theirs));
    assert_eq!(
        first_difference(&a, &b),
        None,
        "ours {} bytes, Python {} bytes",
        a.len(),
        b.len()
    );
}

#[test]
fn python_reads_our_json_values() {
    let Some(py) = util::python() else { return };
    let dir = util::tempdir();
    let path = dir.path().join("j.blt");
    let mut db = OpenOptions::new()
        .key_serializer(Serializer::Str)
        .value_serializer(Serializer::Json)
        .n_buckets(7)
        .open(&path, Flag::New)
        .unwrap();
    let docs = [
        r#"{"b": 1, "a": [1.5, 1e-07, null, "caf\u00e9"]}"#,
        "[]",
        "12345678901234567890",
        r#""\ud83d\ude00""#,
    ];
    for (i, d) in docs.iter().enumerate() {
        let v = booklet::JsonValue::parse(d.as_bytes()).unwrap();
        db.set(format!("doc{i}").as_bytes(), v.to_python_json().as_bytes())
            .unwrap();
    }
    db.close().unwrap();
    assert_python_reads_same(&py, &path);
    // Python decodes the values as JSON: dump re-serializes with json.dumps, so equal bytes
    // above already prove Python parsed them to the same objects.
}

#[test]
fn python_writer_lock_blocks_our_writer() {
    let Some(py) = util::python() else { return };
    let dir = util::tempdir();
    let path = dir.path().join("locked.blt");
    let mut db = booklet::open(&path, Flag::New).unwrap();
    db.set(b"a", b"1").unwrap();
    db.close().unwrap();

    let script = util::workspace_root().join("tools/booklet_interop.py");
    let mut child = Command::new(&py)
        .arg(script)
        .args(["hold-lock", path.to_str().unwrap(), "3"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");

    let start = Instant::now();
    let r = OpenOptions::new()
        .lock_timeout(Duration::from_millis(300))
        .open(&path, Flag::Write);
    assert!(
        matches!(r, Err(Error::LockTimeout { .. })),
        "expected a lock timeout, got {r:?}"
    );
    assert!(start.elapsed() >= Duration::from_millis(300));
    // Readers need a shared lock: blocked too while Python writes.
    let r = OpenOptions::new()
        .lock_timeout(Duration::from_millis(100))
        .open(&path, Flag::Read);
    assert!(
        matches!(r, Err(Error::LockTimeout { .. })),
        "expected a lock timeout, got {r:?}"
    );

    // Once Python closes, a blocking open succeeds (bounded: Python sleeps 3 s).
    let mut db = OpenOptions::new()
        .lock_timeout(Duration::from_secs(30))
        .open(&path, Flag::Write)
        .unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    db.close().unwrap();
    assert!(child.wait().unwrap().success());
}

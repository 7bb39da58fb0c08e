//! The typed serializers against Python booklet 0.12.10: committed fixtures written by Python
//! (`tools/booklet_fixtures.py typed_values unsupported_numpy`, the latter numpy values now read),
//! and, with the venv, both
//! directions at test time (`tools/booklet_interop.py typed-*`): files we write decode in
//! Python to the same values, files Python writes decode here, and our encoders write the same
//! bytes as Python's for keys.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use std::path::Path;

use booklet::{Error, Flag, OpenOptions, Serializer, Value};
use serde_json::json;

const TYPED: [&str; 8] = [
    "pickle",
    "pickle_zstd",
    "msgpack",
    "msgpack_zstd",
    "json",
    "orjson",
    "orjson_zstd",
    "zstd",
];

fn read_doc(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Python writes `spec` (`typed-write`: key and value serializers, items to set and delete) into
/// `dir/<name>.blt`; the file and what Python then reads from it.
fn python_writes(
    py: &Path,
    dir: &Path,
    name: &str,
    spec: &serde_json::Value,
) -> (std::path::PathBuf, serde_json::Value) {
    let spec_path = dir.join(format!("{name}.json"));
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let path = dir.join(format!("{name}.blt"));
    let (spec_arg, path_arg) = (spec_path.to_str().unwrap(), path.to_str().unwrap());
    let out = util::interop(py, &["typed-write", spec_arg, path_arg]);
    (path, serde_json::from_slice(&out.stdout).unwrap())
}

/// Python's bytes for each of `values` (`serial_dict[ser].dumps`, through `typed-dumps`).
fn python_dumps(py: &Path, dir: &Path, ser: &str, values: &[&Value]) -> Vec<Vec<u8>> {
    let tagged: Vec<serde_json::Value> = values.iter().map(|v| util::to_tagged(v)).collect();
    let values_path = dir.join(format!("{ser}-values.json"));
    std::fs::write(&values_path, serde_json::to_string(&tagged).unwrap()).unwrap();
    let out = util::interop(py, &["typed-dumps", ser, values_path.to_str().unwrap()]);
    let python: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    python.iter().map(|b| util::b64(b)).collect()
}

/// Compare every item of `path` (read through the typed API, mapped and buffered) with a
/// `typed-read` document: same items in the same order, every key found by `get_typed`, and
/// our encoding of every decoded key equal to the stored bytes Python wrote.
fn check_against_python(path: &Path, doc: &serde_json::Value, ctx: &str) {
    for mode in [booklet::ReadMode::Mmap, booklet::ReadMode::Buffered] {
        let mut db = OpenOptions::new()
            .read_mode(mode)
            .open(path, Flag::Read)
            .unwrap();
        let want = doc["items"].as_array().unwrap();
        assert_eq!(db.len(), doc["len"].as_u64().unwrap(), "{ctx}");
        let got: Vec<(Value, Value)> = db.items_typed().unwrap().map(Result::unwrap).collect();
        assert_eq!(got.len(), want.len(), "{ctx}");
        for (i, ((k, v), w)) in got.iter().zip(want).enumerate() {
            assert_eq!(*k, util::from_tagged(&w[0]), "{ctx} item {i} key");
            assert_eq!(*v, util::from_tagged(&w[1]), "{ctx} item {i} value");
            let stored = util::b64(w[2].as_str().unwrap());
            assert_eq!(
                db.encode_key(k).unwrap(),
                stored,
                "{ctx} item {i} key bytes"
            );
            assert_eq!(
                db.get_typed(k).unwrap().as_ref(),
                Some(v),
                "{ctx} item {i} get"
            );
            assert!(db.contains_typed(k).unwrap(), "{ctx} item {i} contains");
        }
    }
}

#[test]
fn python_written_fixtures_decode() {
    for ser in TYPED {
        let path = util::fixtures().join(format!("typed_{ser}.blt"));
        let doc = read_doc(&path.with_extension("json"));
        assert_eq!(doc["serializer"], ser);
        assert_eq!(doc["lookups_ok"], true);
        let db = booklet::open(&path, Flag::Read).unwrap();
        assert_eq!(db.key_codec().unwrap().name(), ser);
        assert_eq!(db.value_codec().unwrap().name(), ser);
        drop(db);
        check_against_python(&path, &doc, ser);
    }
}

/// What Python reads back from a value we write: msgpack and JSON have no tuples, and JSON
/// keys are strings.
fn as_python_reads(v: &Value, ser: &str) -> Value {
    let keep_tuples = ser.starts_with("pickle");
    let json = ser.contains("json");
    match v {
        Value::Tuple(items) if !keep_tuples => {
            Value::List(items.iter().map(|x| as_python_reads(x, ser)).collect())
        }
        Value::List(items) => Value::List(items.iter().map(|x| as_python_reads(x, ser)).collect()),
        Value::Tuple(items) => {
            Value::Tuple(items.iter().map(|x| as_python_reads(x, ser)).collect())
        }
        Value::Dict(entries) => Value::Dict(
            entries
                .iter()
                .map(|(k, x)| {
                    let k = match (json, k) {
                        (true, Value::Int(i)) => Value::Str(i.to_string()),
                        (true, Value::Str(_)) | (false, _) => as_python_reads(k, ser),
                        (true, other) => panic!("generator made a JSON key {other:?}"),
                    };
                    (k, as_python_reads(x, ser))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A random plain value the serializer can hold.
fn random_value(rng: &mut fastrand::Rng, ser: &str, depth: u32) -> Value {
    let pickle = ser.starts_with("pickle");
    let msgpack = ser.starts_with("msgpack");
    let json = ser.contains("json");
    let pick = if depth >= 3 {
        rng.u32(0..6)
    } else {
        rng.u32(0..9)
    };
    match pick {
        0 => Value::None,
        1 => Value::Bool(rng.bool()),
        2 => Value::Int(match rng.u32(0..4) {
            0 => i128::from(rng.i8(..)),
            1 => i128::from(rng.i32(..)),
            2 if pickle => rng.i128(..) >> rng.u32(0..100),
            2 if json && ser == "json" => rng.i128(..) >> 40,
            _ => i128::from(rng.i64(..)),
        }),
        3 => Value::Float(match rng.u32(0..3) {
            0 => f64::from(rng.i32(..)) / 8.0,
            1 => rng.f64() * 10f64.powi(rng.i32(-30..30)),
            _ => -rng.f64(),
        }),
        4 => Value::Str(random_text(rng)),
        5 if pickle || msgpack => {
            Value::Bytes((0..rng.usize(0..300)).map(|_| rng.u8(..)).collect())
        }
        5 => Value::Str(random_text(rng)),
        6 => Value::List(
            (0..rng.usize(0..5))
                .map(|_| random_value(rng, ser, depth + 1))
                .collect(),
        ),
        7 => Value::Tuple(
            (0..rng.usize(0..5))
                .map(|_| random_value(rng, ser, depth + 1))
                .collect(),
        ),
        _ => {
            let n = rng.usize(0..5);
            let mut entries: Vec<(Value, Value)> = Vec::new();
            for i in 0..n {
                // Distinct keys (a Python dict keeps one entry per key).
                let k = match rng.u32(0..3) {
                    0 if pickle => {
                        Value::Tuple(vec![Value::Int(i as i128), Value::Str("t".into())])
                    }
                    1 if !json => Value::Bytes(format!("key{i}").into_bytes()),
                    2 if !msgpack => Value::Int(i as i128 * 1000 - 7),
                    _ => Value::Str(format!("{}{i}", random_text(rng))),
                };
                entries.push((k, random_value(rng, ser, depth + 1)));
            }
            Value::Dict(entries)
        }
    }
}

fn random_text(rng: &mut fastrand::Rng) -> String {
    let alphabet = [
        'a',
        'b',
        'é',
        '✓',
        '\u{1f600}',
        '"',
        '\\',
        '\n',
        '\u{1}',
        ' ',
        '\u{7f}',
    ];
    (0..rng.usize(0..12))
        .map(|_| alphabet[rng.usize(..alphabet.len())])
        .collect()
}

fn random_key(rng: &mut fastrand::Rng, ser: &str, i: usize) -> Value {
    if ser == "zstd" {
        return Value::Bytes(format!("key {i}").into_bytes());
    }
    match i % 4 {
        0 => Value::Str(format!("k{i}-{}", random_text(rng))),
        1 => Value::Int(i as i128 - 40),
        2 if ser.starts_with("pickle") => {
            Value::Tuple(vec![Value::Str(format!("t{i}")), Value::Int(i as i128)])
        }
        _ => Value::List(vec![
            Value::Str(format!("l{i}")),
            Value::Bool(i.is_multiple_of(3)),
        ]),
    }
}

/// We write random typed items (with overwrites, deletes and a prune, whose pages are then
/// released), Python reads them back: same values, every key found by Python's own encoding of
/// it.
#[test]
fn rust_written_files_decode_in_python() {
    let Some(py) = util::python_with_serializers() else {
        return;
    };
    let dir = util::tempdir();
    for (n, ser) in TYPED.into_iter().enumerate() {
        let s = Serializer::from_name(ser).unwrap();
        let path = dir.path().join(format!("{ser}.blt"));
        let mut rng = fastrand::Rng::with_seed(n as u64 + 100);
        let mut db = OpenOptions::new()
            .key_serializer(s)
            .value_serializer(s)
            .n_buckets(13)
            .open(&path, Flag::New)
            .unwrap();
        let mut expect: Vec<(Value, Value)> = Vec::new();
        for i in 0..60 {
            let k = random_key(&mut rng, ser, i);
            let v = if ser == "zstd" {
                Value::Bytes(random_text(&mut rng).repeat(rng.usize(0..50)).into_bytes())
            } else {
                random_value(&mut rng, ser, 0)
            };
            db.set_typed(&k, &v).unwrap();
            expect.push((k, v));
        }
        db.sync().unwrap();
        // Overwrite a few (they move to the end, in file order) and delete a few.
        for i in [3usize, 17, 40] {
            let (k, _) = expect.remove(i);
            let v = if ser == "zstd" {
                Value::Bytes(b"overwritten".to_vec())
            } else {
                Value::Str("overwritten".into())
            };
            db.set_typed(&k, &v).unwrap();
            expect.push((k, v));
        }
        for i in [0usize, 25] {
            let (k, _) = expect.remove(i);
            db.delete_typed(&k).unwrap();
            assert!(!db.contains_typed(&k).unwrap());
        }
        assert_eq!(db.prune(None, &[]).unwrap(), 5, "{ser}");
        db.close().unwrap();
        let out = util::interop(&py, &["typed-read", path.to_str().unwrap()]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["lookups_ok"], true, "{ser}: Python finds every key");
        let items = doc["items"].as_array().unwrap();
        assert_eq!(items.len(), expect.len(), "{ser}");
        for (i, ((k, v), w)) in expect.iter().zip(items).enumerate() {
            assert_eq!(
                util::from_tagged(&w[0]),
                as_python_reads(k, ser),
                "{ser} item {i} key"
            );
            assert_eq!(
                util::from_tagged(&w[1]),
                as_python_reads(v, ser),
                "{ser} item {i} value"
            );
        }
        // And we read back what Python read.
        check_against_python(&path, &doc, ser);
    }
}

/// Python writes random typed items (with deletes and a prune); we read them.
#[test]
fn python_written_files_decode_here() {
    let Some(py) = util::python_with_serializers() else {
        return;
    };
    let dir = util::tempdir();
    for (n, ser) in TYPED.into_iter().enumerate() {
        let mut rng = fastrand::Rng::with_seed(n as u64 + 200);
        let items: Vec<serde_json::Value> = (0..50)
            .map(|i| {
                let k = random_key(&mut rng, ser, i);
                let v = if ser == "zstd" {
                    Value::Bytes(random_text(&mut rng).into_bytes())
                } else {
                    random_value(&mut rng, ser, 0)
                };
                json!([util::to_tagged(&k), util::to_tagged(&v)])
            })
            .collect();
        let deletes: Vec<&serde_json::Value> = items.iter().step_by(7).map(|kv| &kv[0]).collect();
        let spec = json!({
            "key_serializer": ser, "value_serializer": ser, "n_buckets": 7,
            "set": items, "delete": deletes, "prune": n % 2 == 0,
        });
        let (path, doc) = python_writes(&py, dir.path(), ser, &spec);
        assert_eq!(doc["items"].as_array().unwrap().len(), 50 - 8, "{ser}");
        check_against_python(&path, &doc, ser);
    }
}

/// Our encoders write Python's bytes for keys: for each serializer, many random values,
/// encoded here and by Python's `serializers.serial_dict[name].dumps`.
#[test]
fn encoders_write_pythons_bytes() {
    let Some(py) = util::python_with_serializers() else {
        return;
    };
    let dir = util::tempdir();
    for (n, ser) in TYPED.into_iter().enumerate() {
        let s = Serializer::from_name(ser).unwrap();
        let mut rng = fastrand::Rng::with_seed(n as u64 + 300);
        let values: Vec<Value> = (0..300)
            .map(|i| {
                if ser == "zstd" {
                    Value::Bytes(random_text(&mut rng).repeat(i % 40).into_bytes())
                } else {
                    random_value(&mut rng, ser, 0)
                }
            })
            .collect();
        let python = python_dumps(&py, dir.path(), ser, &values.iter().collect::<Vec<_>>());
        for (i, (v, want)) in values.iter().zip(&python).enumerate() {
            assert_eq!(s.encode(v).unwrap(), *want, "{ser} value {i}: {v}");
        }
    }
}

const NUMPY: [&str; 7] = [
    "numpy_int1",
    "numpy_int2",
    "numpy_int4",
    "numpy_int8",
    "numpy_int2_zstd",
    "numpy_int4_zstd",
    "numpy_int8_zstd",
];

/// A random 1-D integer array (as the list it decodes to) within the serializer's width, its
/// extremes included.
fn random_ints(rng: &mut fastrand::Rng, ser: &str) -> Value {
    let bytes: u32 = ser["numpy_int".len()..][..1].parse().unwrap();
    let (lo, hi) = (-(1i128 << (8 * bytes - 1)), (1i128 << (8 * bytes - 1)) - 1);
    let n = if rng.u32(0..6) == 0 {
        0
    } else {
        rng.usize(1..40)
    };
    Value::List(
        (0..n)
            .map(|i| {
                Value::Int(match i % 5 {
                    0 => lo,
                    1 => hi,
                    _ => rng.i128(lo..=hi),
                })
            })
            .collect(),
    )
}

/// The numpy serializers both ways: arrays Python writes read here as lists of their integers,
/// lists we write read in Python as equal arrays, and our bytes are numpy's.
#[test]
fn numpy_arrays_cross_with_python() {
    let Some(py) = util::python_with_serializers() else {
        return;
    };
    let dir = util::tempdir();
    for (n, ser) in NUMPY.into_iter().enumerate() {
        let s = Serializer::from_name(ser).unwrap();
        let mut rng = fastrand::Rng::with_seed(n as u64 + 400);
        let items: Vec<(Value, Value)> = (0..30)
            .map(|i| (Value::Str(format!("row{i}")), random_ints(&mut rng, ser)))
            .collect();
        // Python writes (with deletes), we read.
        let tagged: Vec<serde_json::Value> = items
            .iter()
            .map(|(k, v)| json!([util::to_tagged(k), util::to_tagged(v)]))
            .collect();
        let deletes: Vec<&serde_json::Value> = tagged.iter().step_by(7).map(|kv| &kv[0]).collect();
        let spec = json!({
            "key_serializer": "str", "value_serializer": ser, "n_buckets": 7,
            "set": tagged, "delete": deletes,
        });
        let (path, doc) = python_writes(&py, dir.path(), &format!("{ser}-python"), &spec);
        assert_eq!(doc["items"].as_array().unwrap().len(), 30 - 5, "{ser}");
        check_against_python(&path, &doc, ser);
        // We write, Python reads.
        let path = dir.path().join(format!("{ser}-rust.blt"));
        let mut db = OpenOptions::new()
            .key_serializer(Serializer::Str)
            .value_serializer(s)
            .n_buckets(7)
            .open(&path, Flag::New)
            .unwrap();
        for (k, v) in &items {
            db.set_typed(k, v).unwrap();
        }
        db.close().unwrap();
        let out = util::interop(&py, &["typed-read", path.to_str().unwrap()]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["lookups_ok"], true, "{ser}");
        let read = doc["items"].as_array().unwrap();
        assert_eq!(read.len(), items.len(), "{ser}");
        for ((k, v), w) in items.iter().zip(read) {
            assert_eq!(util::from_tagged(&w[0]), *k, "{ser}");
            assert_eq!(util::from_tagged(&w[1]), *v, "{ser} {k}");
        }
        // Byte for byte what numpy's tobytes (and zstd level 1) writes.
        let values: Vec<&Value> = items.iter().map(|(_, v)| v).collect();
        let python = python_dumps(&py, dir.path(), ser, &values);
        for (i, (v, want)) in values.iter().zip(&python).enumerate() {
            assert_eq!(s.encode(v).unwrap(), *want, "{ser} value {i}");
        }
    }
}

#[test]
fn python_written_numpy_values_decode() {
    // Written by Python booklet with value serializer numpy_int4 (raw int32 bytes of i, -i and
    // 1000 i, tools/booklet_fixtures.py unsupported_numpy: the name of its first use).
    let path = util::fixtures().join("unsupported_numpy.blt");
    let mut db = booklet::open(&path, Flag::Read).unwrap();
    assert_eq!(db.value_codec().unwrap(), Serializer::NumpyInt4);
    for i in 0..3i128 {
        let v = db.get_typed(&Value::Str(format!("row{i}"))).unwrap();
        let ints = vec![Value::Int(i), Value::Int(-i), Value::Int(1000 * i)];
        assert_eq!(v, Some(Value::List(ints)));
    }
    assert_eq!(db.items_typed().unwrap().count(), 3);
}

#[test]
fn unsupported_serializer_is_named() {
    // A value serializer without a codec here (shapely's WKB), in a file of raw values.
    let dir = util::tempdir();
    let path = dir.path().join("wkb.blt");
    let mut db = OpenOptions::new()
        .key_serializer(Serializer::Str)
        .value_serializer(Serializer::Wkb)
        .open(&path, Flag::New)
        .unwrap();
    for i in 0..3u8 {
        db.set(format!("row{i}").as_bytes(), &[1, i, 0, 0, 0])
            .unwrap();
    }
    db.close().unwrap();
    let mut db = booklet::open(&path, Flag::Read).unwrap();
    // The byte API still works.
    let raw = db.get(b"row2").unwrap().unwrap();
    assert_eq!(raw.len(), 5);
    let err = db.get_typed(&Value::Str("row2".into())).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::UnsupportedSerializer { role: "value", code: 28, ref name } if name == "wkb"
        ),
        "{msg}"
    );
    assert!(msg.contains("value serializer wkb (code 28)"), "{msg}");
    assert!(db.items_typed().is_err());
    assert_eq!(db.key_codec().unwrap(), Serializer::Str);
    // booklet-tool shows the stored bytes and names the serializer.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_booklet-tool"))
        .args(["dump", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wkb"));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);
}

/// booklet-tool decodes the typed serializers: plain JSON as `value`, the rest as a repr.
#[test]
fn tool_shows_decoded_values() {
    let tool = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_booklet-tool"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let pickle = util::fixtures().join("typed_pickle.blt");
    let p = pickle.to_str().unwrap();
    assert_eq!(
        tool(&["get", p, "nested"]),
        "{'a': {'b': {'c': [[], [[]], {'d': 'deep'}]}}}\n"
    );
    // A tuple key goes by its stored bytes.
    let doc = read_doc(&pickle.with_extension("json"));
    let tuple_key = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|it| it[0].get("$tuple").is_some())
        .unwrap()[2]
        .as_str()
        .unwrap()
        .to_owned();
    let j: serde_json::Value = serde_json::from_str(&tool(&[
        "get",
        p,
        "--key-b64",
        &tuple_key,
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(j["value_repr"], "('a', b'\\x00\\xff', (1, 2.5))");
    let msgpack = util::fixtures().join("typed_msgpack_zstd.blt");
    let lines = tool(&["dump", msgpack.to_str().unwrap()]);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert!(
        first.get("key").is_some() && first.get("value").is_some(),
        "{first}"
    );
    let doc = read_doc(&msgpack.with_extension("json"));
    assert_eq!(
        lines.lines().count(),
        doc["items"].as_array().unwrap().len()
    );
}

//! Files written by Python booklet 0.12.10 (tests/fixtures, made by tools/booklet_fixtures.py)
//! read identically: header facts, every item in iteration order, lookups, misses.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use booklet::{Flag, JsonValue, Kind, OpenOptions, ReadMode, Serializer};
use serde_json::Value;

const FIXTURES: [&str; 9] = [
    "str_edits",
    "json_values",
    "bytes_no_ts",
    "pruned",
    "pruned_ts",
    "fixed",
    "fixed_pruned",
    "unclean",
    "v4",
];

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(util::fixtures().join(format!("{name}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn check_fixture(name: &str, mode: ReadMode) {
    let exp = expected(name);
    let path = util::fixtures().join(format!("{name}.blt"));
    let mut db = OpenOptions::new()
        .read_mode(mode)
        .open(&path, Flag::Read)
        .unwrap();
    let ctx = format!("{name} {mode:?}");
    let h = db.header().clone();
    assert_eq!(
        u64::from(h.version),
        exp["version"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(h.n_buckets, exp["n_buckets"].as_u64().unwrap(), "{ctx}");
    assert_eq!(
        u64::from(h.key_serializer),
        exp["key_serializer_code"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        u64::from(h.value_serializer),
        exp["value_serializer_code"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        u64::from(h.n_keys),
        exp["n_keys_header"].as_u64().unwrap(),
        "{ctx}"
    );
    assert_eq!(h.timestamps, exp["timestamps"].as_bool().unwrap(), "{ctx}");
    match h.kind {
        Kind::Fixed { value_len } => {
            assert_eq!(exp["kind"], "fixed", "{ctx}");
            assert_eq!(
                u64::from(value_len),
                exp["value_len"].as_u64().unwrap(),
                "{ctx}"
            );
        }
        Kind::Variable => assert_eq!(exp["kind"], "variable", "{ctx}"),
    }
    assert_eq!(db.len(), exp["len"].as_u64().unwrap(), "{ctx}");
    assert_eq!(db.file_len(), exp["file_size"].as_u64().unwrap(), "{ctx}");
    assert_eq!(db.was_unclean(), name == "unclean", "{ctx}");

    let items = exp["items"].as_array().unwrap();
    let got: Vec<_> = db
        .iter()
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.key.to_vec(), e.value.to_vec(), e.timestamp))
        .collect();
    assert_eq!(got.len(), items.len(), "{ctx}: item count");
    let vser = Serializer::from_code(h.value_serializer).unwrap();
    let kser = Serializer::from_code(h.key_serializer).unwrap();
    for (i, (item, (k, v, ts))) in items.iter().zip(&got).enumerate() {
        assert_eq!(
            *k,
            util::b64(item["key_b64"].as_str().unwrap()),
            "{ctx} item {i} key"
        );
        assert_eq!(
            *v,
            util::b64(item["value_b64"].as_str().unwrap()),
            "{ctx} item {i} value"
        );
        assert_eq!(
            *ts,
            item.get("timestamp").and_then(Value::as_u64),
            "{ctx} item {i} timestamp"
        );
        if let Some(key) = item.get("key").and_then(Value::as_str) {
            assert_eq!(
                kser.decode(k).unwrap(),
                booklet::Value::Str(key.to_owned()),
                "{ctx} item {i} decoded key"
            );
        }
        if vser == Serializer::Json {
            // Re-encoding what we decoded gives back Python's json.dumps bytes.
            let j = JsonValue::parse(v).unwrap();
            assert_eq!(
                j.to_python_json().as_bytes(),
                &v[..],
                "{ctx} item {i} json bytes"
            );
            let as_serde: Value = serde_json::from_str(&j.to_compact_json()).unwrap();
            assert_eq!(as_serde, item["value"], "{ctx} item {i} json value");
            // And through the typed layer: decode, encode gives the same bytes.
            let typed = vser.decode(v).unwrap();
            assert_eq!(
                vser.encode(&typed).unwrap(),
                *v,
                "{ctx} item {i} typed json"
            );
        }
        assert_eq!(
            db.get(k).unwrap().as_deref(),
            Some(&v[..]),
            "{ctx} item {i} get"
        );
        assert!(db.contains(k).unwrap(), "{ctx} item {i} contains");
        if h.timestamps {
            assert_eq!(
                db.get_timestamp(k).unwrap(),
                *ts,
                "{ctx} item {i} get_timestamp"
            );
        }
    }
    for m in exp["missing_b64"].as_array().unwrap() {
        let m = util::b64(m.as_str().unwrap());
        assert_eq!(db.get(&m).unwrap(), None, "{ctx} missing {m:?}");
        assert!(!db.contains(&m).unwrap(), "{ctx} missing {m:?}");
    }
    if let Some(md) = exp.get("metadata_json") {
        let raw = db.get_metadata().unwrap().expect("metadata");
        let v: Value = serde_json::from_slice(&raw).unwrap();
        assert_eq!(&v, md, "{ctx} metadata");
    }
}

#[test]
fn python_fixtures_read_identically_mmap() {
    for name in FIXTURES {
        check_fixture(name, ReadMode::Mmap);
    }
}

#[test]
fn python_fixtures_read_identically_buffered() {
    for name in FIXTURES {
        check_fixture(name, ReadMode::Buffered);
    }
}

#[test]
fn python_fixtures_survive_edits_in_write_mode() {
    // Open a copy with 'w', overwrite/delete/add, prune, and read back.
    for name in FIXTURES {
        let exp = expected(name);
        let dir = util::tempdir();
        let path = dir.path().join("f.blt");
        std::fs::copy(util::fixtures().join(format!("{name}.blt")), &path).unwrap();
        let mut db = booklet::open(&path, Flag::Write).unwrap();
        let fixed = matches!(db.header().kind, Kind::Fixed { .. });
        let items = exp["items"].as_array().unwrap();
        let first = util::b64(items[0]["key_b64"].as_str().unwrap());
        let newv: Vec<u8> = match db.header().kind {
            Kind::Fixed { value_len } => vec![7u8; value_len as usize],
            Kind::Variable => b"\"changed\"".to_vec(),
        };
        db.set(&first, &newv).unwrap();
        db.set(b"brand-new", &newv).unwrap();
        let last = util::b64(items[items.len() - 1]["key_b64"].as_str().unwrap());
        db.delete(&last).unwrap();
        let n = db.len();
        assert_eq!(n, items.len() as u64, "{name}: +1 new -1 deleted");
        let removed = db.prune(None, &[]).unwrap();
        assert!(removed >= 2, "{name}: removed {removed}");
        assert_eq!(db.len(), n, "{name}");
        assert_eq!(db.get(&first).unwrap(), Some(newv.clone()), "{name}");
        assert_eq!(db.get(&last).unwrap(), None, "{name}");
        db.close().unwrap();
        let mut db = booklet::open(&path, Flag::Read).unwrap();
        assert_eq!(db.iter().unwrap().count() as u64, n, "{name}");
        assert_eq!(
            db.get(b"brand-new").unwrap(),
            Some(newv),
            "{name} fixed={fixed}"
        );
    }
}

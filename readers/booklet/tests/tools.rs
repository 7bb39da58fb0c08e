//! `booklet-tool` end to end on Python-written fixtures.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use std::process::Command;

use serde_json::Value;

fn tool(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_booklet-tool"))
        .args(args)
        .output()
        .unwrap()
}

fn fixture(name: &str) -> String {
    util::fixtures()
        .join(format!("{name}.blt"))
        .to_str()
        .unwrap()
        .to_owned()
}

fn expected(name: &str) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(util::fixtures().join(format!("{name}.json"))).unwrap(),
    )
    .unwrap()
}

#[test]
fn dump_jsonl_matches_python_items() {
    for name in ["str_edits", "json_values", "bytes_no_ts", "fixed", "v4"] {
        let out = tool(&["dump", &fixture(name), "--format", "jsonl"]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let exp = expected(name);
        let items = exp["items"].as_array().unwrap();
        assert_eq!(lines.len(), items.len(), "{name}");
        for (i, (got, want)) in lines.iter().zip(items).enumerate() {
            assert_eq!(got["key_b64"], want["key_b64"], "{name} line {i}");
            assert_eq!(got["value_b64"], want["value_b64"], "{name} line {i}");
            assert_eq!(got.get("key"), want.get("key"), "{name} line {i}");
            assert_eq!(got.get("value"), want.get("value"), "{name} line {i}");
            assert_eq!(
                got.get("timestamp"),
                want.get("timestamp"),
                "{name} line {i}"
            );
        }
    }
}

#[test]
fn get_and_info() {
    let out = tool(&["get", &fixture("str_edits"), "key03"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "overwritten three\n"
    );

    let out = tool(&["get", &fixture("json_values"), "dict", "--format", "json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["value"]["nested"]["x"], -0.5);

    let out = tool(&["get", &fixture("str_edits"), "key07"]);
    assert_eq!(out.status.code(), Some(1), "deleted key: exit 1");

    let out = tool(&["info", &fixture("pruned"), "--format", "json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["n_buckets"], 12007);
    assert_eq!(v["key_serializer"]["name"], "str");
    assert_eq!(v["n_keys"], expected("pruned")["len"]);

    let out = tool(&["--buffered", "info", &fixture("fixed")]);
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("value length 8")
    );

    let out = tool(&["info", "/nonexistent/file.blt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("no such booklet file")
    );
}

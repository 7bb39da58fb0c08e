//! `riegeli-tool` end to end: write from len-prefixed input, cat in every format, info.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::io::Write;
use std::process::{Command, Stdio};

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_riegeli-tool"))
}

fn len_prefixed(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&(r.len() as u64).to_le_bytes());
        out.extend_from_slice(r);
    }
    out
}

#[test]
fn write_cat_info() {
    let dir = tempfile::tempdir().unwrap();
    let records = util::records(11, 200, 50);
    let input = len_prefixed(&records);
    for (options, array_record) in [
        ("transpose,zstd:3", false),
        ("group_size:16,brotli:5", true),
    ] {
        let path = dir.path().join("out.riegeli");
        let mut cmd = tool();
        cmd.args(["write", "--options", options]);
        if array_record {
            cmd.arg("--array-record");
        }
        let mut child = cmd
            .arg(&path)
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );

        let cat = tool().arg("cat").arg(&path).output().unwrap();
        assert!(cat.status.success());
        let expected_len_prefixed = len_prefixed(&records);
        // The ArrayRecord footer and postscript records follow the data records in a plain read.
        assert!(cat.stdout.starts_with(&expected_len_prefixed), "{options}");
        assert_eq!(
            cat.stdout.len() == expected_len_prefixed.len(),
            !array_record
        );

        let hex = tool()
            .args(["cat", "--format", "hex"])
            .arg(&path)
            .output()
            .unwrap();
        let first = String::from_utf8(hex.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned();
        assert_eq!(first, util::hex(&records[0]));
        let jsonl = tool()
            .args(["cat", "--format", "jsonl"])
            .arg(&path)
            .output()
            .unwrap();
        let line: serde_json::Value = serde_json::from_str(
            String::from_utf8(jsonl.stdout)
                .unwrap()
                .lines()
                .nth(1)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(util::b64(line["base64"].as_str().unwrap()), records[1]);
        assert_eq!(line["index"], 1);
        let b64 = tool()
            .args(["cat", "--format", "base64"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(b64.status.success());

        let info = tool()
            .args(["info", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(info.status.success());
        let doc: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        let n = doc["num_records"].as_u64().unwrap();
        assert!(n >= 200 && (n == 200) != array_record, "{options}: {n}");
        assert_eq!(doc["chunks"][0]["type"], "signature");
        let text = tool().arg("info").arg(&path).output().unwrap();
        assert!(String::from_utf8(text.stdout).unwrap().contains("records"));
    }
}

#[test]
fn errors_exit_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.riegeli");
    std::fs::write(
        &bad,
        b"definitely not riegeli, but longer than sixty-four bytes ..........",
    )
    .unwrap();
    let out = tool().arg("cat").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("riegeli-tool:"));
    let out = tool()
        .args(["write", "--options", "brotli:99"])
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = tool().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

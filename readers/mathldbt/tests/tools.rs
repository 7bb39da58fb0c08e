//! The command-line tools, run as a user would: exit codes, files written,
//! and output formats.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

use std::path::Path;
use std::process::{Command, Output};

fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mathldbt-tool"))
        .args(args)
        .output()
        .expect("run mathldbt-tool")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn sample_inspect_decode() {
    let dir = tempfile::tempdir().unwrap();
    for (i, extra) in [
        vec![],
        vec!["--dict-delta", "--checksum"],
        vec!["--compression", "zstd"],
        vec!["--dict-delta", "--compression", "gzip"],
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.path().join(format!("bars{i}.mldbt"));
        let mut args = vec!["sample", "--rows", "500", "--out", path_str(&file)];
        args.extend(extra.iter().copied());
        let out = tool(&args);
        assert!(out.status.success(), "case {i}: {}", text(&out.stderr));
        let written = std::fs::read(&file).unwrap();
        // The file is exactly the fixture as encoded by the library.
        let batch = mathldbt::Decoder::default()
            .decode_compressed(&written, 1 << 24)
            .unwrap();
        assert_eq!(batch, mathldbt::fixture::bars(500), "case {i}");

        let out = tool(&["inspect", path_str(&file)]);
        assert!(out.status.success(), "case {i}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.contains("500 rows, 8 columns"), "case {i}: {stdout}");
        assert!(stdout.contains("e_ms    i64"), "case {i}: {stdout}");
        if extra.contains(&"--dict-delta") {
            assert!(stdout.contains("dict_utf8"), "case {i}: {stdout}");
            assert!(stdout.contains("delta_varint_i64"), "case {i}: {stdout}");
        }

        let out = tool(&["decode", path_str(&file), "--head", "2"]);
        assert!(out.status.success(), "case {i}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.starts_with("ok: "), "case {i}: {stdout}");
        assert!(
            stdout.contains("pair\ttf\te_ms\topen\thigh\tlow\tclose\tvolume"),
            "{stdout}"
        );
    }
}

#[test]
fn invalid_input_exits_1_and_io_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.mldbt");
    let out = tool(&["sample", "--rows", "100", "--out", path_str(&file)]);
    assert!(out.status.success());
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&file, &bytes).unwrap();

    for cmd in ["decode", "inspect"] {
        let out = tool(&[cmd, path_str(&file)]);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("truncated"),
            "{cmd}: {}",
            text(&out.stderr)
        );
    }

    let out = tool(&["decode", path_str(&dir.path().join("missing"))]);
    assert_eq!(out.status.code(), Some(2));
    let out = tool(&["decode"]);
    assert_eq!(out.status.code(), Some(2), "usage error");
    let out = tool(&["--help"]);
    assert!(text(&out.stdout).contains("Examples:"));
}

#[test]
fn estimator_prints_table_and_bmf() {
    let run = |format: &str| {
        Command::new(env!("CARGO_BIN_EXE_transport_pipeline_estimator"))
            .args([
                "--rows", "300", "--rtt-ms", "30", "--mbit", "100", "--repeat", "1", "--format",
                format,
            ])
            .output()
            .expect("run estimator")
    };
    let out = run("table");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    for needle in [
        "| MATHLDBT ",
        "| JSON ",
        "| Arrow IPC ",
        "zstd (level=3)",
        "gzip (level=6)",
        "t_total_s",
    ] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| ")).count(),
        1 + 1 + 8
    );

    let out = run("bmf");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bmf: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let map = bmf.as_object().unwrap();
    assert_eq!(map.len(), 8);
    for (name, measures) in map {
        assert!(
            name.starts_with("transport_pipeline/") && name.ends_with("/300"),
            "{name}"
        );
        for m in ["bytes", "enc_s", "dec_s", "t_transfer_s", "t_total_s"] {
            assert!(measures[m]["value"].is_number(), "{name} {m}");
        }
    }

    let bad = Command::new(env!("CARGO_BIN_EXE_transport_pipeline_estimator"))
        .args(["--mbit", "0"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

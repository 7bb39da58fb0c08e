//! `root-tool` end to end: ls, dump (jsonl and csv) against ROOT's values, readspeed reports.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use std::process::Command;

use serde_json::Value;

fn tool(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_root-tool"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn fixture(name: &str) -> String {
    util::fixture(name).display().to_string()
}

#[test]
fn ls_lists_trees_with_paths_and_cycles() {
    let (ok, out, err) = tool(&["ls", &fixture("structure.root"), "--format", "json"]);
    assert!(ok, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let trees: Vec<String> = doc["trees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{};{}", t["path"].as_str().unwrap(), t["cycle"]))
        .collect();
    assert_eq!(trees.len(), 4);
    assert!(trees.contains(&"sub/deeper/t2;1".to_string()));
    let (ok, text, _) = tool(&["ls", &fixture("types_lz4.root")]);
    assert!(ok);
    assert!(
        text.contains("jets") && text.contains("vector<f32>") && text.contains("lz4-4"),
        "{text}"
    );
    assert!(text.contains("f32[4]") && text.contains("f64[]"), "{text}");
}

#[test]
fn dump_jsonl_equals_root_values() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(util::fixture("types_zstd.json")).unwrap())
            .unwrap();
    let branches = &expected["trees"]["t;1"]["branches"];
    let (ok, out, err) = tool(&[
        "dump",
        &fixture("types_zstd.root"),
        "t;1",
        "--entries",
        "10:60",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 50);
    for (k, line) in lines.iter().enumerate() {
        let row: Value = serde_json::from_str(line).unwrap();
        for (name, b) in branches.as_object().unwrap() {
            let want = &b["values"][k + 10];
            let got = &row[name];
            let f32_branch = b["type"] == "f32";
            let same = |g: &Value, w: &Value| {
                if f32_branch {
                    g.as_f64().map(|x| x as f32) == w.as_f64().map(|x| x as f32)
                } else {
                    g == w
                }
            };
            let ok = match (got, want) {
                (Value::Array(g), Value::Array(w)) => {
                    g.len() == w.len() && g.iter().zip(w).all(|(g, w)| same(g, w))
                }
                (g, w) => same(g, w),
            };
            assert!(ok, "entry {} branch {name}: {got} vs {want}", k + 10);
        }
    }
    // f32 values use the shortest text that round-trips to f32.
    let (_, out, _) = tool(&[
        "dump",
        &fixture("types_zstd.root"),
        "t",
        "--branches",
        "jets",
        "--entries",
        "2:3",
    ]);
    assert_eq!(out.trim(), r#"{"jets":[2.0,2.1]}"#);
}

#[test]
fn dump_csv_and_errors() {
    let (ok, out, _) = tool(&[
        "dump",
        &fixture("structure.root"),
        "sub/inner",
        "--format",
        "csv",
        "--branches",
        "w",
    ]);
    assert!(ok);
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec![
            "w", "0.0", "-0.75", "-1.5", "-2.25", "-3.0", "-3.75", "-4.5"
        ]
    );
    let (ok, _, err) = tool(&["dump", &fixture("structure.root"), "t", "--entries", "0:99"]);
    assert!(!ok && err.contains("outside"), "{err}");
    let (ok, _, err) = tool(&["dump", &fixture("structure.root"), "nope"]);
    assert!(!ok && err.contains("nope"), "{err}");
    let (ok, _, err) = tool(&["ls", "/nonexistent.root"]);
    assert!(!ok && err.contains("nonexistent"), "{err}");
}

#[test]
fn readspeed_reports() {
    let f = fixture("types_zlib.root");
    let (ok, out, err) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "t",
        "--branches",
        "f",
        "jets",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    for key in [
        "real_time_s",
        "cpu_time_s",
        "uncompressed_bytes",
        "compressed_bytes",
        "threads",
    ] {
        assert!(doc.get(key).is_some(), "{key} missing in {doc}");
    }
    assert_eq!(doc["threads"], 1);
    assert_eq!(doc["branches"], 2);
    // f: 200 entries x 4 bytes; jets: 10-byte headers + values.
    assert!(doc["uncompressed_bytes"].as_u64().unwrap() > 800);
    let (ok, out, _) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "t",
        "--branches-regex",
        "^x",
        "--threads",
        "2",
        "--format",
        "bmf",
        "--bmf-name",
        "rs/x",
    ]);
    assert!(ok);
    let bmf: Value = serde_json::from_str(&out).unwrap();
    assert!(bmf["rs/x"]["throughput"]["value"].as_f64().unwrap() > 0.0);
    let (ok, out, _) = tool(&["readspeed", "--files", &f, "--trees", "t", "--all-branches"]);
    assert!(ok);
    assert!(
        out.contains("Real time:") && out.contains("CPU efficiency") && out.contains("bottleneck")
    );
    let (ok, _, err) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "t",
        "--branches",
        "zz",
    ]);
    assert!(!ok && err.contains("zz"), "{err}");
    let (ok, _, _) = tool(&["readspeed", "--files", &f, "--trees", "t"]);
    assert!(!ok);
}

/// `--stages` says where the time went: each stage timed, on one and two threads, in text
/// and JSON; without it, no stages.
#[test]
fn readspeed_stages_say_where_the_time_went() {
    let f = fixture("types_zlib.root");
    let stages = |extra: &[&str]| {
        let mut args = vec!["readspeed", "--files", &f, "--trees", "t"];
        args.extend(["--branches", "f", "jets", "--format", "json"]);
        args.extend(extra);
        let (ok, out, err) = tool(&args);
        assert!(ok, "{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        doc["stages"].clone()
    };
    assert!(stages(&[]).is_null());
    for threads in ["1", "2"] {
        let st = stages(&["--stages", "--threads", threads]);
        let s = |k: &str| st[k].as_f64().unwrap_or_else(|| panic!("{k} in {st}"));
        // Compressed baskets (zlib) with entry-offset tables (jets): every stage took time.
        for key in ["read_s", "decompress_s", "index_s", "decode_s"] {
            assert!(s(key) > 0.0, "{key} in {st}");
        }
        assert!(s("decompress_s") < 10.0, "{st}");
    }
    // Decompression alone: nothing read from the files, nothing indexed.
    let st = stages(&["--stages", "--decompress-only"]);
    assert_eq!(st["read_s"], 0.0);
    assert_eq!(st["index_s"], 0.0);
    assert!(st["decompress_s"].as_f64().unwrap() > 0.0, "{st}");
    let text = [
        "readspeed",
        "--files",
        &f,
        "--trees",
        "t",
        "--all-branches",
        "--stages",
    ];
    let (ok, out, err) = tool(&text);
    assert!(ok, "{err}");
    for line in [
        "Stages (thread-seconds",
        "  read ",
        "  decompress ",
        "  index ",
        "  decode ",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
}

#[test]
fn dump_of_a_chain_is_the_files_dumps_one_after_the_other() {
    let (a, b) = (fixture("types_zlib.root"), fixture("types_zstd.root"));
    let one = |file: &str| {
        let (ok, out, err) = tool(&["dump", file, "t", "--branches", "i,x,jets"]);
        assert!(ok, "{err}");
        out
    };
    let (ok, chained, err) = tool(&["dump", &a, "t", "--chain", &b, "--branches", "i,x,jets"]);
    assert!(ok, "{err}");
    assert_eq!(chained, one(&a) + &one(&b));
    // A range across the boundary, and one past the chain's end.
    let (ok, part, _) = tool(&[
        "dump",
        &a,
        "t",
        "--chain",
        &b,
        "--branches",
        "i",
        "--entries",
        "199:201",
    ]);
    assert!(ok);
    let lines: Vec<&str> = chained.lines().collect();
    let want: Vec<String> = lines[199..201]
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!("{{\"i\":{}}}", v["i"])
        })
        .collect();
    assert_eq!(part.lines().collect::<Vec<_>>(), want);
    let (ok, _, err) = tool(&["dump", &a, "t", "--chain", &b, "--entries", "0:401"]);
    assert!(!ok && err.contains("outside"), "{err}");
    let (ok, _, err) = tool(&["dump", &a, "t", "--chain", &fixture("structure.root")]);
    assert!(!ok && err.contains("structure.root"), "{err}");
}

#[test]
fn dump_leaves_out_a_branch_it_cannot_read_unless_asked_for_it() {
    // A copy of a fixture whose `jets` baskets are damaged (their compressed bytes zeroed):
    // the other branches are still dumped.
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.root");
    let mut bytes = std::fs::read(util::fixture("types_zstd.root")).unwrap();
    let file = root_reader::RootFile::open(util::fixture("types_zstd.root")).unwrap();
    let tree = file.tree("t").unwrap();
    for info in tree.branch("jets").unwrap().baskets() {
        if let root_reader::BasketLocation::OnDisk { seek, bytes: n } = info.location {
            // Past the key header (under 100 bytes), into the compressed stream.
            let (a, b) = (seek as usize + 100, (seek + u64::from(n)) as usize);
            bytes[a..b].fill(0);
        }
    }
    std::fs::write(&damaged, &bytes).unwrap();
    let damaged = damaged.display().to_string();
    let (ok, out, err) = tool(&["dump", &damaged, "t", "--entries", "0:3"]);
    assert!(ok, "{err}");
    assert!(err.contains("branch jets left out"), "{err}");
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(first.get("jets").is_none());
    assert!(first.get("f").is_some(), "{first}");
    // Asked for by name, it is an error.
    let (ok, _, err) = tool(&["dump", &damaged, "t", "--branches", "jets"]);
    assert!(!ok && err.contains("jets"), "{err}");
}

#[test]
fn readspeed_text_starts_with_rootreadspeeds_report_line_for_line() {
    let (ok, out, err) = tool(&[
        "readspeed",
        "--files",
        &fixture("types_zstd.root"),
        "--trees",
        "t",
        "--all-branches",
    ]);
    assert!(ok, "{err}");
    let labels: Vec<&str> = out
        .lines()
        .take(6)
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    // The six lines of seed 001's example, in its order.
    assert_eq!(
        labels,
        [
            "Real time to setup MT run",
            "CPU time to setup MT run",
            "Real time",
            "CPU time",
            "Uncompressed data read",
            "Throughput"
        ]
    );
    assert!(out.contains("bottleneck"), "{out}");
}

/// `readspeed --test` reads the built-in fixtures in every mode on one and two threads and
/// finds ROOT's rootreadspeed byte counts for each (the counts come from ROOT itself,
/// `tools/readspeed_expected.py`); with other arguments it is refused.
#[test]
fn readspeed_self_test_passes_and_stands_alone() {
    let (ok, out, err) = tool(&["readspeed", "--test"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("115 checks: 115 passed, 0 failed"), "{out}");
    assert!(
        out.contains("objects.root --trees t --branches cstr"),
        "{out}"
    );
    assert!(out.contains("2 thread(s), DecompressCopy"), "{out}");
    assert!(out.contains("2 thread(s), ReadCopy"), "{out}");
    assert!(out.contains("2 thread(s), ReadFind"), "{out}");
    assert!(out.contains("2 thread(s), ReadDecompress"), "{out}");
    assert!(out.contains("2 thread(s), ReadTouch"), "{out}");
    assert!(out.contains("2 thread(s), FullCopiedStrings"), "{out}");
    let (ok, _, err) = tool(&["readspeed", "--test", "--threads", "2"]);
    assert!(!ok);
    assert!(err.contains("cannot be used with"), "{err}");
    // The modes are one at a time.
    for pair in [
        ["--decompress-copy", "--read-copy"],
        ["--read-decompress", "--decompress-only"],
        ["--read-decompress", "--copy-strings"],
        ["--read-copy", "--copy-strings"],
        ["--read-find", "--read-copy"],
        ["--read-find", "--decompress-only"],
        ["--read-touch", "--read-decompress"],
        ["--read-touch", "--copy-strings"],
    ] {
        let mut args = vec![
            "readspeed",
            "--files",
            "x.root",
            "--trees",
            "t",
            "--all-branches",
        ];
        args.extend(pair);
        let (ok, _, err) = tool(&args);
        assert!(!ok, "{pair:?}");
        assert!(err.contains("cannot be used with"), "{pair:?}: {err}");
    }
}

//! `root-tool` end to end: ls, dump (jsonl and csv) against ROOT's values, readspeed reports.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use util::fixture_arg as fixture;

use serde_json::{Map, Value};

fn tool(args: &[&str]) -> (bool, String, String) {
    util::run(env!("CARGO_BIN_EXE_root-tool"), args)
}

/// A JSON object's members in order, a name given twice kept twice (serde_json's `Map` keeps
/// only the last, as most JSON readers do: what a repeated column name loses).
struct Members(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// The names of one dump line's members, in order, repeats kept.
fn member_names(line: &str) -> Vec<String> {
    let Members(members) = serde_json::from_str(line).unwrap();
    members.into_iter().map(|(name, _)| name).collect()
}

/// `paths.root` (tools/root_fixtures.py): every readable branch as `dump` names its column, and
/// its full path (the key of ROOT's values in `paths.json`). `x`, `y`, `hit.e` and `hit.id`
/// are members of both `a` and `b`, and `x` is also a top-level branch; two top-level branches
/// are named `dup`.
const PATHS_COLUMNS: [(&str, &str); 16] = [
    ("a/x", "a/x"),
    ("a/y", "a/y"),
    ("a/hit/hit.e", "a/hit/hit.e"),
    ("a/hit/hit.id", "a/hit/hit.id"),
    ("b/x", "b/x"),
    ("b/y", "b/y"),
    ("b/hit/hit.e", "b/hit/hit.e"),
    ("b/hit/hit.id", "b/hit/hit.id"),
    ("c.x", "c./c.x"),
    ("c.y", "c./c.y"),
    ("c.hit.e", "c./c.hit/c.hit.e"),
    ("c.hit.id", "c./c.hit/c.hit.id"),
    ("x", "x"),
    ("n", "n"),
    ("dup", "dup"),
    ("dup#2", "dup#2"),
];

/// ROOT's values of `paths.root`'s branches, by full path.
fn paths_expected() -> Value {
    let json = std::fs::read_to_string(util::fixture("paths.json")).unwrap();
    let doc: Value = serde_json::from_str(&json).unwrap();
    doc["trees"]["t;1"]["branches"].clone()
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

/// Issue 49 item 3: branches that share a name under different parents are columns of their
/// full paths, every one once in a line and in the CSV header, each with its own branch's
/// values (ROOT's, read through each branch object); names no other branch has stay short.
#[test]
fn dump_names_a_shared_name_by_its_full_path_once() {
    let expected = paths_expected();
    let columns: Vec<&str> = PATHS_COLUMNS.iter().map(|(c, _)| *c).collect();
    let (ok, out, err) = tool(&["dump", &fixture("paths.root"), "t"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 30);
    for (j, line) in lines.iter().enumerate() {
        assert_eq!(member_names(line), columns, "entry {j}");
        let row: Value = serde_json::from_str(line).unwrap();
        for (column, path) in PATHS_COLUMNS {
            let want = &expected[path]["values"][j];
            let got = &row[column];
            let same = if expected[path]["type"] == "f32" {
                got.as_f64().map(|g| g as f32) == want.as_f64().map(|w| w as f32)
            } else {
                got == want
            };
            assert!(
                same,
                "entry {j} column {column} ({path}): {got} vs ROOT's {want}"
            );
        }
    }
    let (ok, csv, err) = tool(&["dump", &fixture("paths.root"), "t", "--format", "csv"]);
    assert!(ok, "{err}");
    assert_eq!(csv.lines().next().unwrap(), columns.join(","));
    assert_eq!(csv.lines().count(), 31);
    // Chained, the first file's column names.
    let (ok, out, err) = tool(&[
        "dump",
        &fixture("paths.root"),
        "t",
        "--chain",
        &fixture("paths.root"),
        "--entries",
        "29:31",
    ]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(member_names(lines[1]), columns);
    let row: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(
        (&row["b/x"], &row["dup#2"]),
        (
            &expected["b/x"]["values"][0],
            &expected["dup#2"]["values"][0]
        )
    );
}

/// `--branches` takes full paths (as uproot's keys and `ls` give them), column names, and names
/// no other branch has; a name several branches have is refused with their full paths, and a
/// branch asked for twice is refused.
#[test]
fn dump_branches_takes_full_paths_and_refuses_a_shared_name() {
    let expected = paths_expected();
    let f = fixture("paths.root");
    let (ok, out, err) = tool(&[
        "dump",
        &f,
        "t",
        "--branches",
        "b/hit/hit.e,x,a/x,c./c.y,c.x,n,dup#2,dup",
        "--entries",
        "3:4",
    ]);
    assert!(ok, "{err}");
    // Columns keep their names however they were asked for (`c./c.y` is column `c.y`); `x` is
    // the top-level branch's full path, as uproot's `tree["x"]` is.
    let names = member_names(out.trim());
    assert_eq!(
        names,
        ["b/hit/hit.e", "x", "a/x", "c.y", "c.x", "n", "dup#2", "dup"]
    );
    let row: Value = serde_json::from_str(out.trim()).unwrap();
    let path = |column: &str| PATHS_COLUMNS.iter().find(|(c, _)| *c == column).unwrap().1;
    for name in &names {
        let (got, want) = (&row[name.as_str()], &expected[path(name)]["values"][3]);
        assert_eq!(got.as_f64(), want.as_f64(), "{name}");
    }
    for (shared, paths) in [
        ("hit.e", &["a/hit/hit.e", "b/hit/hit.e"][..]),
        ("y", &["a/y", "b/y"]),
        ("hit", &["a/hit", "b/hit"]),
    ] {
        let (ok, out, err) = tool(&["dump", &f, "t", "--branches", shared]);
        assert!(!ok && out.is_empty(), "{shared}: {out}");
        assert!(
            err.contains(&format!("2 branches named {shared:?}")),
            "{err}"
        );
        for p in paths {
            assert!(err.contains(p), "{shared}: {p} not in {err}");
        }
    }
    let (ok, _, err) = tool(&["dump", &f, "t", "--branches", "c.x,c./c.x"]);
    assert!(!ok && err.contains("twice"), "{err}");
    let (ok, _, err) = tool(&["dump", &f, "t", "--branches", "a/nope"]);
    assert!(!ok && err.contains("a/nope"), "{err}");
    // readspeed takes the same names.
    let (ok, out, err) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "t",
        "--branches",
        "a/x",
        "b/x",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["branches"], 2);
    let (ok, _, err) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "t",
        "--branches",
        "y",
    ]);
    assert!(!ok && err.contains("a/y") && err.contains("b/y"), "{err}");
}

/// `ls` shows every branch by its full path, and in JSON its own name, path and column name;
/// in a tree whose names are all different, every column name is the branch's own name, as
/// before issue 49.
#[test]
fn ls_shows_full_paths() {
    let (ok, text, err) = tool(&["ls", &fixture("paths.root")]);
    assert!(ok, "{err}");
    let listed: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let mut want = vec!["a", "a/x", "a/y", "a/hit", "a/hit/hit.e", "a/hit/hit.id"];
    want.extend(["b", "b/x", "b/y", "b/hit", "b/hit/hit.e", "b/hit/hit.id"]);
    want.extend([
        "c.",
        "c./c.x",
        "c./c.y",
        "c./c.hit",
        "c./c.hit/c.hit.e",
        "c./c.hit/c.hit.id",
    ]);
    want.extend(["x", "n", "dup", "dup#2"]);
    assert_eq!(listed, want);
    let (ok, out, err) = tool(&["ls", &fixture("paths.root"), "--format", "json"]);
    assert!(ok, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let branches = doc["trees"][0]["branches"].as_array().unwrap();
    let field =
        |k: &str| -> Vec<&str> { branches.iter().map(|b| b[k].as_str().unwrap()).collect() };
    assert_eq!(field("path"), want);
    assert_eq!(field("name")[..3], ["a", "x", "y"]);
    for (column, path) in PATHS_COLUMNS {
        let b = branches.iter().find(|b| b["path"] == path).unwrap();
        assert_eq!(b["column"], column, "{path}");
    }
    // Trees without shared names: columns are the branches' own names (split.root's `evt.`
    // members are `evt.run`, ..., nested as `evt./evt.lead/evt.lead.e`).
    let mut nested = 0;
    for name in [
        "split.root",
        "objects.root",
        "types_zstd.root",
        "structure.root",
    ] {
        let (ok, out, err) = tool(&["ls", &fixture(name), "--format", "json"]);
        assert!(ok, "{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        for t in doc["trees"].as_array().unwrap() {
            for b in t["branches"].as_array().unwrap() {
                assert_eq!(b["column"], b["name"], "{name}: {b}");
                nested += usize::from(b["path"] != b["name"]);
            }
        }
    }
    assert!(nested > 10, "{nested} nested branches");
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

/// Splits CSV text (RFC 4180: quoted cells, doubled quotes) into rows of cells.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            (true, '"') | (false, '"') => quoted = !quoted,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            _ => cell.push(c),
        }
    }
    rows
}

/// An RNTuple dumped as CSV holds what its JSON lines hold: a header of the field names, strings
/// as their text, numbers and bools as in JSON, collections and records as their JSON text.
#[test]
fn rntuples_dump_as_csv() {
    for name in ["rntuple_zstd.root", "rntuple_classes.root"] {
        let f = fixture(name);
        let (ok, jsonl, err) = tool(&["dump", &f, "events"]);
        assert!(ok, "{err}");
        let (ok, csv, err) = tool(&["dump", &f, "events", "--format", "csv"]);
        assert!(ok, "{err}");
        let rows = csv_rows(&csv);
        let objects: Vec<Map<String, Value>> = jsonl
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), objects.len() + 1, "{name}");
        let header = &rows[0];
        let mut names = header.clone();
        names.sort();
        assert_eq!(
            names,
            objects[0].keys().cloned().collect::<Vec<_>>(),
            "{name}"
        );
        for (row, object) in rows[1..].iter().zip(&objects) {
            for (cell, key) in row.iter().zip(header) {
                let want = &object[key];
                match want {
                    Value::String(text) => assert_eq!(cell, text, "{name} {key}"),
                    _ => assert_eq!(
                        &serde_json::from_str::<Value>(cell).unwrap(),
                        want,
                        "{name} {key}"
                    ),
                }
            }
        }
    }
}

/// readspeed on an RNTuple: the same report, the fields' pages counted (decompressed) as the
/// bytes read, on one and two threads, for the decompress-only ceiling and the read+decompress
/// and read+copy floors; the other TTree floors are refused by name.
#[test]
fn readspeed_reads_rntuples() {
    let f = fixture("rntuple_zstd.root");
    let speed = |extra: &[&str]| {
        let mut args = vec![
            "readspeed",
            "--files",
            &f,
            "--trees",
            "events",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let (ok, out, err) = tool(&args);
        assert!(ok, "{extra:?}: {err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    // `f`: 120 floats of 4 bytes; `vf`: 120 offsets of 8 bytes and its items.
    let f_only = speed(&["--branches", "f"]);
    assert_eq!(f_only["uncompressed_bytes"], 480);
    assert_eq!(f_only["mode"], "read+decompress+decode");
    assert_eq!(f_only["branches"], 1);
    assert!(
        f_only["baskets"].as_u64().unwrap() >= 4,
        "a page per cluster at least"
    );
    let both = speed(&["--branches", "f", "vf", "--threads", "2"]);
    assert_eq!(both["threads"], 2);
    let (_, out, _) = tool(&["dump", &f, "events", "--branches", "vf"]);
    let items: usize = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["vf"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(
        both["uncompressed_bytes"].as_u64().unwrap(),
        480 + 120 * 8 + 4 * items as u64
    );
    let ceiling = speed(&["--branches", "f", "vf", "--decompress-only"]);
    assert_eq!(ceiling["mode"], "decompress-only");
    assert_eq!(ceiling["uncompressed_bytes"], both["uncompressed_bytes"]);
    assert_eq!(ceiling["compressed_bytes"], both["compressed_bytes"]);
    let all = speed(&["--all-branches"]);
    assert!(all["branches"].as_u64().unwrap() > 10, "{all}");
    let (ok, _, err) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "events",
        "--branches",
        "f",
        "--read-find",
    ]);
    assert!(!ok && err.contains("decompress-only"), "{err}");
    let floor = speed(&["--branches", "f", "vf", "--read-decompress"]);
    assert_eq!(floor["mode"], "read+decompress");
    assert_eq!(floor["uncompressed_bytes"], both["uncompressed_bytes"]);
    let copied = speed(&["--branches", "f", "vf", "--read-copy"]);
    assert_eq!(copied["mode"], "read+decompress+copy");
    assert_eq!(copied["uncompressed_bytes"], both["uncompressed_bytes"]);
    let (ok, _, err) = tool(&[
        "readspeed",
        "--files",
        &f,
        "--trees",
        "events",
        "--branches",
        "nope",
    ]);
    assert!(!ok && err.contains("nope"), "{err}");
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
    // The six lines of seed 001's example, in its order.
    assert_eq!(util::first_six_labels(&out), util::ROOTREADSPEED_LINES);
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

/// `rntuple_*.json` (tools/root_fixtures.py): ROOT's values of the fields of `events`.
fn rntuple_expected(name: &str) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(util::fixture(&format!("{name}.json"))).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    json["ntuples"]["events"]["fields"]
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn ls_lists_rntuples_with_fields_and_types() {
    let (ok, out, err) = tool(&["ls", &fixture("rntuple_encodings.root"), "--format", "json"]);
    assert!(ok, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["trees"], Value::Array(Vec::new()));
    let nt = &doc["rntuples"][0];
    assert_eq!(nt["path"], "events");
    assert_eq!(nt["entries"], 120);
    assert_eq!(nt["clusters"], 4);
    assert_eq!(nt["format"], "1.0.2.0");
    let expected = rntuple_expected("rntuple_encodings");
    let fields = nt["fields"].as_array().unwrap();
    assert_eq!(fields.len(), expected.len());
    for f in fields {
        let name = f["name"].as_str().unwrap();
        assert_eq!(f["type"], expected[name]["type"], "{name}");
    }
    let d32 = fields.iter().find(|f| f["name"] == "d32").unwrap();
    assert_eq!(d32["alias"], "Double32_t");
    assert_eq!(d32["columns"], serde_json::json!(["SplitReal32"]));
    let v = fields.iter().find(|f| f["name"] == "v_si32").unwrap();
    assert_eq!(
        v["columns"],
        serde_json::json!(["SplitIndex32", "_0: SplitInt16"])
    );

    let (ok, out, err) = tool(&["ls", &fixture("rntuple_zstd.root")]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("events;1  RNTuple 1.0.2.0  120 entries  4 clusters\n"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == [
                "vvf",
                "std::vector<std::vector<float>>",
                "SplitIndex64,",
                "_0:",
                "SplitIndex64,",
                "_0:",
                "_0:",
                "SplitReal32"
            ]),
        "{out}"
    );
}

/// `dump` writes floats in their shortest round-trip text (`-19.63` for the f32 ROOT reads
/// as -19.6299991607666): a number equals ROOT's when equal, or when ROOT's is an f32 that
/// `dump`'s text names.
fn same(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| same(x, y)))
        }
        (Value::Number(a), Value::Number(b)) if a.is_f64() && b.is_f64() => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            #[expect(
                clippy::cast_possible_truncation,
                reason = "f32 values compared as f32"
            )]
            let f32_equal = a as f32 == b as f32 && f64::from(b as f32) == b;
            a == b || f32_equal
        }
        _ => got == want,
    }
}

#[test]
fn dump_rntuple_matches_root() {
    for name in ["rntuple_lz4", "rntuple_encodings", "rntuple_classes"] {
        let (ok, out, err) = tool(&["dump", &fixture(&format!("{name}.root")), "events"]);
        assert!(ok, "{err}");
        let expected = rntuple_expected(name);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 120, "{name}");
        // Unsupported fields are left out with a warning naming their types.
        if name == "rntuple_encodings" {
            assert!(err.contains("TNamed"), "{err}");
        }
        let mut compared = 0;
        for (i, line) in lines.iter().enumerate() {
            let row: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
            for (field, exp) in &expected {
                match exp.get("values") {
                    Some(values) => {
                        assert!(
                            same(&row[field], &values[i]),
                            "{name} {field} entry {i}: {} vs ROOT {}",
                            row[field],
                            values[i]
                        );
                        compared += 1;
                    }
                    None => assert!(!row.contains_key(field), "{name} {field}"),
                }
            }
        }
        let with_values = expected
            .values()
            .filter(|f| f.get("values").is_some())
            .count();
        assert!(with_values >= 7, "{name}");
        assert_eq!(compared, 120 * with_values, "{name}");
    }
    // A selection and a range; a subfield of a record by its dotted path.
    let (ok, out, err) = tool(&[
        "dump",
        &fixture("rntuple_zstd.root"),
        "events",
        "--branches",
        "p._1,vs",
        "--entries",
        "118:",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "{\"p._1\":59.0,\"vs\":[\"oooo\"]}\n{\"p._1\":59.5,\"vs\":[\"pppppé\",\"\"]}\n"
    );
    // Items of a collection are not entries; unsupported fields asked for by name fail.
    for field in ["vf._0", "named"] {
        let file = if field == "named" {
            "rntuple_encodings.root"
        } else {
            "rntuple_zstd.root"
        };
        let (ok, _, err) = tool(&["dump", &fixture(file), "events", "--branches", field]);
        assert!(!ok, "{field}");
        assert!(err.contains(field), "{err}");
    }
}

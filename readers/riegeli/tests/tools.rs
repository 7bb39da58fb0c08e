//! `riegeli-tool` end to end: write from len-prefixed input, cat in every format, info.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::io::Write;
use std::process::{Command, Stdio};

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_riegeli-tool"))
}

/// `riegeli-tool write ARGS OUT` with `input` on its standard input; its output once it exits.
fn tool_write(args: &[&str], out: &std::path::Path, input: &[u8]) -> std::process::Output {
    let mut child = tool()
        .arg("write")
        .args(args)
        .arg(out)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// `riegeli-tool write ARGS OUT` with a file of `input` as its standard input (mapped for
/// Snappy and Zstd); its output once it exits.
fn tool_write_from_file(
    args: &[&str],
    out: &std::path::Path,
    input: &[u8],
) -> std::process::Output {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(input).unwrap();
    std::io::Seek::rewind(&mut file).unwrap();
    tool()
        .arg("write")
        .args(args)
        .arg(out)
        .stdin(file)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
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
        let mut args = vec!["--options", options];
        if array_record {
            args.push("--array-record");
        }
        let out = tool_write(&args, &path, &input);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );

        let cat = tool().arg("cat").arg(&path).output().unwrap();
        assert!(cat.status.success());
        let expected_len_prefixed = len_prefixed(&records);
        // Exactly the records; an ArrayRecord file's footer and postscript records follow them
        // only in the raw view.
        assert_eq!(cat.stdout, expected_len_prefixed, "{options}");
        let raw = tool().args(["cat", "--raw"]).arg(&path).output().unwrap();
        assert!(raw.stdout.starts_with(&expected_len_prefixed), "{options}");
        assert_eq!(
            raw.stdout.len() == expected_len_prefixed.len(),
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
        assert_eq!(doc["num_records"], 200, "{options}");
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

/// `write` widens the pipe on its standard input to 1 MiB (64 KiB by default: a wake-up on
/// both sides for each 64 KiB, which dominated the tool's time on an idle machine).
#[cfg(target_os = "linux")]
#[test]
fn write_widens_its_input_pipe() {
    let limit = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap();
    if limit.trim().parse::<usize>().unwrap() < 1 << 20 {
        eprintln!("SKIPPED: write_widens_its_input_pipe: pipe-max-size {limit}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = tool()
        .args(["write", "--options", "snappy"])
        .arg(dir.path().join("out"))
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // More than a default pipe holds: once written, the tool has started reading.
    let records: Vec<Vec<u8>> = (0..400u32).map(|i| vec![i as u8; 10_240]).collect();
    stdin.write_all(&len_prefixed(&records)).unwrap();
    assert_eq!(rustix::pipe::fcntl_getpipe_size(&stdin).unwrap(), 1 << 20);
    drop(stdin);
    assert!(child.wait_with_output().unwrap().status.success());
}

/// `write` fails with exit 1 and names the record where its input ends early: inside a length,
/// inside a record, or inside a record whose length is absurd (which is not allocated). Both ways
/// of taking the input: parsed by the writer (a fast codec) and gathered on the input thread
/// (Brotli).
#[test]
fn write_refuses_truncated_input() {
    let dir = tempfile::tempdir().unwrap();
    let whole = len_prefixed(&[b"first".to_vec(), vec![7u8; 100_000]]);
    let mut absurd = len_prefixed(&[b"first".to_vec()]);
    absurd.extend_from_slice(&(1u64 << 62).to_le_bytes());
    absurd.extend_from_slice(b"a few bytes");
    for (input, message) in [
        (
            &whole[..13 + 3],
            "inside the length of record 1 (3 of 8 bytes)",
        ),
        (
            &whole[..whole.len() - 1],
            "inside record 1 (99999 of 100000 bytes)",
        ),
        (
            &absurd[..],
            "inside record 1 (11 of 4611686018427387904 bytes)",
        ),
    ] {
        for options in ["group_size:1,snappy", "group_size:1,brotli:6"] {
            let args = ["--array-record", "--options", options];
            let out_path = dir.path().join("out");
            for out in [
                tool_write(&args, &out_path, input),
                tool_write_from_file(&args, &out_path, input),
            ] {
                assert_eq!(out.status.code(), Some(1), "{options}: {message}");
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(stderr.contains(message), "{options}: {message}: {stderr}");
            }
        }
    }
}

/// A file on standard input (mapped, with a background encoding thread, for Snappy and Zstd)
/// gives the same file, byte for byte, as the same input through a pipe, for every codec and
/// for both layouts.
#[test]
fn write_from_a_file_matches_write_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let input = len_prefixed(&util::records(300, 5000, 64));
    for (array_record, options) in [
        (true, "group_size:16,snappy"),
        (true, "group_size:16,zstd:3"),
        (true, "group_size:16,brotli:6"),
        (true, "group_size:16,uncompressed"),
        (false, "snappy,chunk_size:64K"),
        (false, "transpose,zstd:3,chunk_size:64K"),
    ] {
        let args = [
            &["--options", options][..],
            &["--array-record"][..array_record as usize],
        ]
        .concat();
        let (piped, from_file) = (dir.path().join("piped"), dir.path().join("from_file"));
        let out = tool_write(&args, &piped, &input);
        assert!(out.status.success(), "{args:?} piped: {out:?}");
        let out = tool_write_from_file(&args, &from_file, &input);
        assert!(out.status.success(), "{args:?} from a file: {out:?}");
        assert_eq!(
            std::fs::read(&piped).unwrap(),
            std::fs::read(&from_file).unwrap(),
            "{args:?}"
        );
    }
}

/// Files written by C++ `ArrayRecordWriter` (the pinned array-record wheel), with the default
/// and an explicit group size: `cat` prints exactly the user's records and `info` counts them,
/// as C++ `ArrayRecordReader` does; `--raw` shows the plain Riegeli view with the footer.
#[test]
fn array_record_files_from_cpp_show_the_users_records() {
    let Some(python) = util::python("array_record_files_from_cpp_show_the_users_records") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys
from array_record.python.array_record_module import ArrayRecordWriter
path, options, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
w = ArrayRecordWriter(path, options)
for i in range(n):
    w.write(("record %d " % i).encode() * (i % 7 + 1))
w.close()
"#;
    let n = 500usize;
    let records: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("record {i} ").repeat(i % 7 + 1).into_bytes())
        .collect();
    // The wheel's default options write groups of one record (`group_size:1`).
    for (options, group_size) in [("", 1u64), ("group_size:7,zstd:3", 7)] {
        let path = dir.path().join(format!("cpp_{group_size}.array_record"));
        let status = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(&path)
            .arg(options)
            .arg(n.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "{options}");

        let cat = tool().arg("cat").arg(&path).output().unwrap();
        assert!(cat.status.success(), "{options}");
        assert_eq!(cat.stdout, len_prefixed(&records), "{options}");
        let raw = tool().args(["cat", "--raw"]).arg(&path).output().unwrap();
        assert!(raw.stdout.starts_with(&cat.stdout) && raw.stdout.len() > cat.stdout.len());

        let info = tool()
            .args(["info", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        assert_eq!(doc["num_records"], n as u64, "{options}");
        assert_eq!(doc["array_record"]["records"], n as u64, "{options}");
        assert_eq!(doc["array_record"]["group_size"], group_size, "{options}");
        let raw_info = tool()
            .args(["info", "--raw", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&raw_info.stdout).unwrap();
        assert!(doc["num_records"].as_u64().unwrap() > n as u64, "{options}");
        assert!(doc["array_record"].is_null());
    }
}

/// Issue 24, item 10: `riegeli-tool write --array-record --options group_size:64,<codec>` and C++
/// `ArrayRecordWriter` given the same option string write equivalent files, for every codec the
/// `riegeli_tool_write` bench times: each file reads back as exactly the input records with our
/// reader (`cat`) and with C++'s (sequentially and by index), both files hold the same chunks
/// (records and decoded bytes each, same codec), C++ sees the same writer options in both, and the
/// uncompressed files are identical byte for byte.
#[test]
fn tool_write_matches_cpp_array_record_writer() {
    let Some(python) = util::python("tool_write_matches_cpp_array_record_writer") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Proto-like, empty and 30 KB records, and 10 KiB text records as in the bench: groups of 64
    // cross block boundaries.
    let mut records = util::records(29, 300, 40);
    records.extend((0..100).map(|i| {
        format!("{{\"id\":{i},\"pad\":\"")
            .bytes()
            .chain((0..10_240).map(|k| b"abcdefghijklmnop"[(k * 7 + i) % 16]))
            .take(10_240)
            .collect()
    }));
    let input = len_prefixed(&records);
    let input_path = dir.path().join("records.len_prefixed");
    std::fs::write(&input_path, &input).unwrap();
    let script = util::workspace_root().join("tools/riegeli_cpp_write.py");
    let indices = [0, 399, 64, 63, 200];

    for codec in ["uncompressed", "zstd:3", "brotli:6", "snappy"] {
        let options = format!("group_size:64,{codec}");
        let ours = dir.path().join("tool.array_record");
        let out = tool_write(&["--array-record", "--options", &options], &ours, &input);
        assert!(
            out.status.success(),
            "{codec}: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        // C++ writes the same records once, untimed, and reads them back (--check).
        let theirs = dir.path().join("cpp.array_record");
        let out = Command::new(&python)
            .arg(&script)
            .arg(&input_path)
            .arg(&theirs)
            .arg(&options)
            .arg("0")
            .arg("--check")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{codec}: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        let mut writer_options = Vec::new();
        let mut layouts = Vec::new();
        for (who, file) in [("tool", &ours), ("C++", &theirs)] {
            let cat = tool().arg("cat").arg(file).output().unwrap();
            assert!(cat.status.success(), "{codec}, {who}'s file");
            assert!(cat.stdout == input, "{codec}: our reader on {who}'s file");
            let (all, random, options) = util::cpp_read(&python, file, &indices);
            assert!(all == records, "{codec}: C++ on {who}'s file");
            let expected: Vec<&Vec<u8>> = indices.iter().map(|&i| &records[i as usize]).collect();
            assert!(
                random.iter().eq(expected),
                "{codec}: C++ by index on {who}'s file"
            );
            writer_options.push(options);
            layouts.push(data_chunks(file));
        }
        assert_eq!(
            writer_options[0], writer_options[1],
            "{codec}: writer options"
        );
        assert!(writer_options[0].starts_with("group_size:64,"), "{codec}");
        assert_eq!(layouts[0], layouts[1], "{codec}: data chunks");
        assert_eq!(layouts[0].len(), records.len().div_ceil(64), "{codec}");
        if codec == "uncompressed" {
            assert!(
                std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
                "uncompressed: the same bytes"
            );
            // The bench's timed C++ writes: one time per write asked for.
            let out = Command::new(&python)
                .arg(&script)
                .arg(&input_path)
                .arg(&theirs)
                .arg(&options)
                .arg("2")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let ns = doc["ns"].as_array().unwrap();
            assert!(
                ns.len() == 2 && ns.iter().all(|t| t.as_u64().unwrap() > 0),
                "{doc}"
            );
        }
    }
}

/// (type, compression, records, decoded bytes) of each chunk of an ArrayRecord file's user
/// records (before its footer), from `riegeli-tool info --format json`.
fn data_chunks(file: &std::path::Path) -> Vec<(String, String, u64, u64)> {
    let info = tool()
        .args(["info", "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(info.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(doc["array_record"]["group_size"], 64);
    let footer = doc["array_record"]["footer_offset"].as_u64().unwrap();
    doc["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["begin"].as_u64().unwrap() < footer && c["type"] != "signature")
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_owned(),
                c["compression"].as_str().unwrap_or("-").to_owned(),
                c["num_records"].as_u64().unwrap(),
                c["decoded_data_size"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `cat --fields` prints what the library's projected read gives; a bad projection is bad usage.
#[test]
fn cat_fields_projects_transposed_files() {
    use riegeli_records::{FieldProjection, RecordReader, RecordWriter, WriterOptions};
    let records = util::records(21, 200, 0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.riegeli");
    let mut w = RecordWriter::new(
        std::fs::File::create(&path).unwrap(),
        WriterOptions::parse("transpose,zstd:3").unwrap(),
    )
    .unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap();
    let mut reader = RecordReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    reader
        .set_field_projection(FieldProjection::parse("1,3.2,4.0").unwrap())
        .unwrap();
    let mut projected = Vec::new();
    while let Some(r) = reader.read_record().unwrap() {
        projected.push(r.to_vec());
    }
    assert!(projected != records, "the projection drops something");
    let out = tool()
        .args(["cat", "--fields", "1,3.2,4.0"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, len_prefixed(&projected));
    for bad in ["0", "1..2", "536870912", ""] {
        let out = tool()
            .args(["cat", "--fields", bad])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--fields {bad:?}");
    }
}

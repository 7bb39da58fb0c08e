//! `riegeli_tool_write`: `riegeli-tool write --array-record` end to end against C++
//! `ArrayRecordWriter`, with the same option string, in one run (issue 24, item 10).
//!
//! 10,000 `head_to_head` records of 10 KiB (102.4 MB; JSON-like text then low-entropy binary:
//! compressible, neither zeros nor random), written as ArrayRecord files with
//! `group_size:64,<codec>` for the codecs `uncompressed`, `zstd:3`, `brotli:6` and `snappy`.
//! Every file goes to one scratch directory (in `/dev/shm` when there is one), so all sides write
//! to the same filesystem. Ids read `<codec>/<side>`; throughput is the record bytes. Per codec,
//! back to back:
//!
//! * `riegeli_tool_write`: the `riegeli-tool` process, spawned, with the records piped into its
//!   standard input in its input format (8-byte little-endian length, then the bytes) from this
//!   process's memory, timed from the spawn until it has exited: what `producer | riegeli-tool
//!   write` costs.
//! * `riegeli_tool_write_stdin_file`: the same process with its standard input opened on a file of
//!   that input (in the scratch directory): no pipe, and no producer on the other core.
//! * `library_write_file`: the tool's writer in this process (`RecordWriter` over the tool's own
//!   file sink, `src/bin/riegeli-tool/output.rs`) on records already in memory: the writer's
//!   cost alone, without the process, its input, or parsing it.
//! * `cpp_array_record_write`: C++ `ArrayRecordWriter` (the pinned `array-record` wheel) on the
//!   same records, opened, every record written, closed, timed inside `tools/riegeli_cpp_write.py`
//!   (Python's startup and loading the records are not counted; its call per record is, about
//!   3 ms of a cell). One process per sample, after one untimed write: it ends inside the
//!   benchmark, so bench-run's busy check counts it as the bench's own CPU, not another
//!   program's.
//!
//! And once, codec aside, the limit of the piped cells:
//!
//! * `limits/pipe_only`: the same input piped the same way into a process that only reads it
//!   (this bench binary, started again as a drain: it widens its pipe to 1 MiB and reads 1 MiB at
//!   a time, as the tool does) and checks its length: spawning a process and moving the records
//!   through a pipe, with nothing encoded or written. No tool fed through a pipe can be faster;
//!   where this is slower than `cpp_array_record_write` (which takes its records from its own
//!   memory), the piped bar is above what any such tool can reach on this machine.
//!
//! Before measuring, every codec's files are checked to be equivalent: the tool's file and C++'s
//! are read back by our reader and by C++'s (`tools/riegeli_fixtures.py digest`) as exactly the
//! input records, and their data chunks have the same records and sizes.
//!
//! The ratio to hold (>= 1.0x): `bench-run ratio RUN --pair '*/riegeli_tool_write=*/cpp_array_record_write'`,
//! or recorded in the ledger with `tools/riegeli_tool_write_ratios.py` (with the pipe's limit).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "benches fail loudly"
)]

use std::fs::File;
use std::hint::black_box;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group};
use riegeli_records::{ArrayRecordReader, ChunkType, RecordReader, RecordWriter};
use sha2::{Digest, Sha256};

mod common;
use common::{NUM_RECORDS, json_record, scratch_dir};

/// The tool's output sink, shared with the `library_write_file` cell so that both write alike.
#[allow(
    dead_code,
    reason = "benches build with cfg(test): the module's unit-test helpers are compiled, unused"
)]
#[path = "../src/bin/riegeli-tool/output.rs"]
mod output;

/// (id, codec option): the codecs C++ `ArrayRecordWriter` accepts, at riegeli's default levels.
const CODECS: [(&str, &str); 4] = [
    ("uncompressed", "uncompressed"),
    ("zstd_3", "zstd:3"),
    ("brotli_6", "brotli:6"),
    ("snappy", "snappy"),
];

/// The group size: options `group_size:64,<codec>` for both writers.
const GROUP_SIZE: u64 = 64;

const RECORD_SIZE: usize = 10 * 1024;

fn len_prefixed(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.iter().map(|r| r.len() + 8).sum());
    for r in records {
        out.extend_from_slice(&(r.len() as u64).to_le_bytes());
        out.extend_from_slice(r);
    }
    out
}

fn tool_command(options: &str, out: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_riegeli-tool"));
    cmd.args(["write", "--array-record", "--options", options])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn check_exit(child: std::process::Child, what: &str) {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// One `riegeli-tool write` process fed `input` through a pipe from this process.
fn tool_write_piped(options: &str, input: &[u8], out: &Path) -> Duration {
    feed_piped(
        tool_command(options, out),
        input,
        "riegeli-tool write (piped)",
    )
}

/// The process of `cmd`, spawned and fed `input` through a pipe from this process, timed from
/// the spawn until it has exited.
fn feed_piped(mut cmd: Command, input: &[u8], what: &str) -> Duration {
    let start = Instant::now();
    let mut child = cmd.stdin(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A failed write (the child exited early) leaves its reason on its stderr.
    let fed = stdin.write_all(input);
    drop(stdin);
    check_exit(child, what);
    let elapsed = start.elapsed();
    fed.unwrap();
    elapsed
}

/// Set (to the input's length) in this binary's environment when it is started as a drain.
const DRAIN: &str = "RIEGELI_TOOL_WRITE_DRAIN_BYTES";

/// This bench binary started again as a drain of `bytes` bytes (see `limits/pipe_only`).
fn drain_command(bytes: usize) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(DRAIN, bytes.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// The drain: standard input read to its end as the tool reads it (a 1 MiB pipe, 1 MiB reads);
/// fails unless it held `bytes` bytes.
fn drain_stdin(bytes: &str) {
    let expected: usize = bytes.parse().unwrap();
    let _ = rustix::pipe::fcntl_setpipe_size(std::io::stdin(), 1 << 20);
    let mut stdin = std::io::stdin().lock();
    let mut block = vec![0u8; 1 << 20];
    let mut total = 0;
    loop {
        match stdin.read(&mut block) {
            Ok(0) => break,
            Ok(n) => total += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("drain: {e}"),
        }
    }
    assert_eq!(total, expected, "drain: bytes read");
}

/// One `riegeli-tool write` process reading the input file as its standard input.
fn tool_write_from_file(options: &str, input: &Path, out: &Path) -> Duration {
    let start = Instant::now();
    let child = tool_command(options, out)
        .stdin(File::open(input).unwrap())
        .spawn()
        .unwrap();
    check_exit(child, "riegeli-tool write (stdin a file)");
    start.elapsed()
}

/// What the tool does after parsing its input: the same writer over the same sink.
fn library_write(options: &str, records: &[Vec<u8>], out: &Path) -> u64 {
    let file = output::OutputFile::create(out).unwrap();
    let mut w = RecordWriter::with_options_text(file, options, true).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.close().unwrap().finish().unwrap()
}

/// SHA-256 of `file`'s user records as the tool reads them in (length-prefixed), and the
/// (records, decoded bytes) of each data chunk.
fn our_digest(file: &Path) -> (String, Vec<(u64, u64)>) {
    let mut reader = ArrayRecordReader::new(BufReader::new(File::open(file).unwrap())).unwrap();
    let mut sha = Sha256::new();
    reader
        .for_each(|r| {
            sha.update((r.len() as u64).to_le_bytes());
            sha.update(r);
        })
        .unwrap();
    let footer = reader.footer_offset();
    let mut chunks = RecordReader::new(BufReader::new(File::open(file).unwrap())).unwrap();
    let mut shapes = Vec::new();
    while let Some(c) = chunks.read_chunk_info().unwrap() {
        if c.begin < footer && c.header.chunk_type == ChunkType::Simple {
            shapes.push((c.header.num_records, c.header.decoded_data_size));
        }
    }
    (hex(&sha.finalize()), shapes)
}

/// SHA-256 of `file`'s records as C++ `ArrayRecordReader` reads them.
fn cpp_digest(python: &Path, file: &Path) -> String {
    let output = Command::new(python)
        .arg(tool_script("riegeli_fixtures.py"))
        .arg("digest")
        .arg(file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "C++ could not read {}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    doc["sha256"].as_str().unwrap().to_owned()
}

/// A script under the workspace's `tools/`.
fn tool_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools")
        .join(name)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bench(c: &mut Criterion) {
    let scratch = scratch_dir().unwrap();
    let dir = scratch.path();
    let records: Vec<Vec<u8>> = (0..NUM_RECORDS)
        .map(|i| json_record(i, RECORD_SIZE))
        .collect();
    let bytes: u64 = records.iter().map(|r| r.len() as u64).sum();
    let input = len_prefixed(&records);
    let expected = hex(&Sha256::digest(&input));
    let input_path = dir.join("records.len_prefixed");
    std::fs::write(&input_path, &input).unwrap();

    let python = testkit::venv_python("riegeli_tool_write's C++ side");

    for (codec, option) in CODECS {
        let options = format!("group_size:{GROUP_SIZE},{option}");
        let tool_out = dir.join(format!("{codec}.tool.array_record"));
        let library_out = dir.join(format!("{codec}.library.array_record"));
        let cpp_out = dir.join(format!("{codec}.cpp.array_record"));

        // Equivalence first: the same records both ways, in the same groups.
        tool_write_piped(&options, &input, &tool_out);
        let (tool_sha, tool_shapes) = our_digest(&tool_out);
        assert_eq!(tool_sha, expected, "{codec}: our reader on the tool's file");
        assert_eq!(tool_shapes.len(), NUM_RECORDS.div_ceil(GROUP_SIZE as usize));
        library_write(&options, &records, &library_out);
        assert_eq!(
            std::fs::read(&library_out).unwrap(),
            std::fs::read(&tool_out).unwrap(),
            "{codec}: the library cell writes what the tool writes"
        );
        if let Some(python) = &python {
            assert_eq!(
                cpp_digest(python, &tool_out),
                expected,
                "{codec}: C++ on the tool's file"
            );
            // Written, and read back by C++, with no timed write.
            cpp_writes(python, &input_path, &cpp_out, &options, 0, true);
            let (cpp_sha, cpp_shapes) = our_digest(&cpp_out);
            assert_eq!(cpp_sha, expected, "{codec}: our reader on C++'s file");
            assert_eq!(
                cpp_shapes, tool_shapes,
                "{codec}: chunks of C++ and the tool"
            );
        }

        let mut group = whole_writes(c, codec, bytes);
        group.bench_function("riegeli_tool_write", |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| tool_write_piped(&options, &input, &tool_out))
                    .sum()
            });
        });
        group.bench_function("riegeli_tool_write_stdin_file", |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| tool_write_from_file(&options, &input_path, &tool_out))
                    .sum()
            });
        });
        group.bench_function("library_write_file", |b| {
            b.iter(|| black_box(library_write(&options, &records, &library_out)));
        });
        if let Some(python) = &python {
            group.bench_function("cpp_array_record_write", |b| {
                b.iter_custom(|iters| {
                    cpp_writes(python, &input_path, &cpp_out, &options, iters, false)
                });
            });
        }
        group.finish();
    }

    let mut group = whole_writes(c, "limits", bytes);
    group.bench_function("pipe_only", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| feed_piped(drain_command(input.len()), &input, "the drain"))
                .sum()
        });
    });
    group.finish();
}

/// A group of cells that each move the whole input (`bytes`) once per iteration: 0.05-1 s, so
/// ten samples of a fixed count, not criterion's ramp.
fn whole_writes<'a>(
    c: &'a mut Criterion,
    name: &str,
    bytes: u64,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Bytes(bytes));
    group
}

/// `iters` timed writes by C++ in one `tools/riegeli_cpp_write.py` process (after an untimed
/// one; with `check`, C++ reads that one back first); their total time.
fn cpp_writes(
    python: &Path,
    input: &Path,
    out: &Path,
    options: &str,
    iters: u64,
    check: bool,
) -> Duration {
    let mut cmd = Command::new(python);
    cmd.arg(tool_script("riegeli_cpp_write.py"))
        .arg(input)
        .arg(out)
        .arg(options)
        .arg(iters.to_string());
    if check {
        cmd.arg("--check");
    }
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "riegeli_cpp_write.py {options}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let ns: Vec<u64> = doc["ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap())
        .collect();
    assert_eq!(
        ns.len() as u64,
        iters,
        "riegeli_cpp_write.py's timed writes"
    );
    Duration::from_nanos(ns.iter().sum())
}

criterion_group!(benches, bench);

fn main() {
    if let Some(bytes) = std::env::var_os(DRAIN) {
        drain_stdin(&bytes.to_string_lossy());
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

//! Seed 004's summary table, printed after the criterion run:
//!
//! ```text
//! Config                 Payload  Rust W MB/s   C++ W MB/s  Rust R MB/s   C++ R MB/s   Rust Ratio    C++ Ratio
//! ```
//!
//! "Rust" is this crate, "C++" is C++ riegeli through the pinned `array-record` wheel
//! (`tools/riegeli_cpp_bench.py --cells ... --sizes ...`). Both sides do the same thing, so the
//! columns compare like with like: a write is open, every record, close, into a file in
//! `/dev/shm`; a read is every record of that file, on one thread. Both write the ArrayRecord
//! layout the wheel writes (its option string `group_size:G,<config>`, with `G` records per 1 MiB
//! chunk), since the wheel writes no other; our writer makes the same chunks from those options.
//! Each speed is the median of 3 repetitions after a warm-up (1 under criterion's `--test`), in MB/s
//! (10^6 bytes) of record bytes. Ratio = file size / record bytes (lower is better); the layout's
//! footer and its 64 KiB-aligned end weigh on the 1 MB small cells (0.26 for zstd:3 where the chunks
//! alone take 0.14), equally on both sides.
//!
//! The table covers the cells that criterion's filter arguments select (a cell is selected when a
//! filter names it or part of it); it is skipped under `--list` and `--profile-time`, and when
//! `RIEGELI_H2H_SUMMARY=0` (bench-run recordings, which read criterion's files, need no table).
//! Without the venv the C++ columns read `n/a`.

use std::fs::File;
use std::hint::black_box;
use std::io::BufReader;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use riegeli_records::{ArrayRecordReader, WriterOptions};
use serde_json::Value;

use crate::common::{
    CHUNK_SIZE, HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, json_record, scratch_dir,
    write_ours_file,
};

/// Criterion options that take a value (the value is not a filter).
const VALUE_FLAGS: &[&str] = &[
    "-c",
    "--color",
    "-s",
    "--save-baseline",
    "-b",
    "--baseline",
    "--baseline-lenient",
    "--load-baseline",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--plotting-backend",
    "--output-format",
    "--format",
    "--logfile",
];

/// Which cells the table covers and how many repetitions each speed takes.
pub struct Plan {
    cells: Vec<Cell>,
    repeats: usize,
}

/// One head_to_head cell: configuration, payload and record size.
struct Cell {
    config: &'static str,
    options: &'static str,
    payload: &'static str,
    size: usize,
}

impl Cell {
    fn name(&self) -> String {
        format!("{}_{}", self.config, self.payload)
    }

    /// The seed's spelling of the configuration: `transpose+brotli:6`.
    fn label(&self) -> String {
        let (layout, codec) = self.config.split_once('_').unwrap_or((self.config, ""));
        let codec = match codec {
            "brotli_6" => "brotli:6",
            "zstd_3" => "zstd:3",
            other => other,
        };
        format!("{layout}+{codec}")
    }

    /// The wheel's option string, which both sides write with.
    fn array_record_options(&self) -> String {
        let group = (CHUNK_SIZE as usize / (self.size + 8)).max(1);
        format!("group_size:{group},{}", self.options)
    }
}

impl Plan {
    /// The plan for a bench command line (criterion's arguments), or `None` when no table is
    /// wanted.
    pub fn from_args(args: &[String]) -> Option<Plan> {
        if std::env::var("RIEGELI_H2H_SUMMARY").is_ok_and(|v| v == "0") {
            return None;
        }
        let mut filters = Vec::new();
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            match arg.as_str() {
                "--list" | "--profile-time" | "-h" | "--help" | "-V" | "--version" => return None,
                a if VALUE_FLAGS.contains(&a) => {
                    iter.next();
                }
                a if a.starts_with('-') => {}
                a => filters.push(a.to_owned()),
            }
        }
        let cells: Vec<Cell> = HEAD_TO_HEAD_SIZES
            .iter()
            .flat_map(|&(payload, size)| {
                HEAD_TO_HEAD_CONFIGS
                    .iter()
                    .map(move |&(config, options)| Cell {
                        config,
                        options,
                        payload,
                        size,
                    })
            })
            .filter(|cell| {
                let name = cell.name();
                filters.is_empty()
                    || filters
                        .iter()
                        .any(|f| name.contains(f.as_str()) || f.starts_with(&name))
            })
            .collect();
        let repeats = if args.iter().any(|a| a == "--test") {
            1
        } else {
            3
        };
        (!cells.is_empty()).then_some(Plan { cells, repeats })
    }
}

/// One side's figures for a cell.
#[derive(Clone, Copy)]
struct Figures {
    write_mbs: f64,
    read_mbs: f64,
    ratio: f64,
}

/// Measures the plan's cells on both sides and prints the table to standard output.
pub fn print(plan: &Plan) {
    let cpp = cpp_figures(plan);
    println!();
    println!(
        "{:<22} {:>7} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "Config",
        "Payload",
        "Rust W MB/s",
        "C++ W MB/s",
        "Rust R MB/s",
        "C++ R MB/s",
        "Rust Ratio",
        "C++ Ratio"
    );
    println!(
        "{:<22} {:>7} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "------",
        "-------",
        "-----------",
        "----------",
        "-----------",
        "----------",
        "----------",
        "---------"
    );
    let scratch = scratch_dir().expect("scratch directory");
    for cell in &plan.cells {
        let ours = ours_figures(cell, plan.repeats, scratch.path());
        let theirs = cpp.as_ref().and_then(|c| figures_of(c, &cell.name()));
        let speed = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.1}"));
        let ratio = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.3}"));
        println!(
            "{:<22} {:>7} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
            cell.label(),
            cell.payload,
            speed(Some(ours.write_mbs)),
            speed(theirs.map(|f| f.write_mbs)),
            speed(Some(ours.read_mbs)),
            speed(theirs.map(|f| f.read_mbs)),
            ratio(Some(ours.ratio)),
            ratio(theirs.map(|f| f.ratio)),
        );
    }
    println!(
        "(MB/s of record bytes, median of {} after a warm-up; ratio = file size / record bytes; \
         C++ = C++ riegeli via the array-record wheel; both write the ArrayRecord layout)",
        plan.repeats
    );
}

/// Our write and read of `cell`, the way the wheel's are measured.
fn ours_figures(cell: &Cell, repeats: usize, dir: &Path) -> Figures {
    let records: Vec<Vec<u8>> = (0..NUM_RECORDS)
        .map(|i| json_record(i, cell.size))
        .collect();
    let bytes = records.iter().map(Vec::len).sum::<usize>();
    let options =
        WriterOptions::parse_array_record(&cell.array_record_options()).expect("cell options");
    let path = dir.join(format!("{}.array_record", cell.name()));
    let mut size = 0;
    let write = median(repeats, || {
        size = write_ours_file(&options, &records, &path)
    });
    let read = median(repeats, || assert_eq!(read_array_record(&path), bytes));
    std::fs::remove_file(&path).expect("remove scratch file");
    Figures {
        write_mbs: mbs(bytes, write),
        read_mbs: mbs(bytes, read),
        ratio: size as f64 / bytes as f64,
    }
}

/// Every record of the ArrayRecord file at `path`, in order, as the wheel's `read_all` reads
/// them; returns the bytes read.
fn read_array_record(path: &Path) -> usize {
    let file = BufReader::new(File::open(path).expect("open scratch file"));
    let mut reader = ArrayRecordReader::new(file).expect("our ArrayRecord file");
    let mut total = 0;
    reader
        .for_each(|r| total += black_box(r).len())
        .expect("read our ArrayRecord file");
    total
}

/// The median time of `repeats` runs of `f` after one warm-up run.
fn median(repeats: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..repeats)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn mbs(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64() / 1e6
}

/// The wheel's figures: `(BMF results, file sizes)` of `tools/riegeli_cpp_bench.py`, or `None`
/// (with a note on standard error) when there is no venv or the script fails.
fn cpp_figures(plan: &Plan) -> Option<(Value, Value)> {
    let python = testkit::venv_python("head_to_head's C++ columns")?;
    let dir = tempfile::tempdir().ok()?;
    let (out, sizes) = (dir.path().join("cpp.json"), dir.path().join("sizes.json"));
    let cells: Vec<String> = plan.cells.iter().map(Cell::name).collect();
    let script = testkit::workspace_root().join("tools/riegeli_cpp_bench.py");
    eprintln!("head_to_head: measuring C++ riegeli ({})", script.display());
    let status = Command::new(python)
        .arg(&script)
        .arg("head_to_head")
        .arg(&out)
        .args(["--repeats", &plan.repeats.to_string()])
        .args(["--cells", &cells.join(",")])
        .arg("--sizes")
        .arg(&sizes)
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!(
            "head_to_head: {} failed; C++ columns left out",
            script.display()
        );
        return None;
    }
    let parse =
        |p: &Path| -> Option<Value> { serde_json::from_slice(&std::fs::read(p).ok()?).ok() };
    Some((parse(&out)?, parse(&sizes)?))
}

/// A cell's figures from the wheel's output.
fn figures_of((results, sizes): &(Value, Value), cell: &str) -> Option<Figures> {
    let throughput = |op: &str| {
        results
            .get(format!("{cell}/{op}"))?
            .get("throughput")?
            .get("value")?
            .as_f64()
    };
    let size = sizes.get(cell)?.as_f64()?;
    let bytes = HEAD_TO_HEAD_SIZES
        .iter()
        .find(|(payload, _)| cell.ends_with(payload))
        .map(|&(_, s)| (s * NUM_RECORDS) as f64)?;
    Some(Figures {
        write_mbs: throughput("cpp_write")? / 1e6,
        read_mbs: throughput("cpp_read")? / 1e6,
        ratio: size / bytes,
    })
}

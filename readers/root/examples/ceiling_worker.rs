//! A `bench-run interleave` worker for the cells of the `root_ceiling` suite: each trial is
//! `readspeed` of one branch in one mode, its timed part only, on the files the suite reads.
//! Run in alternation, round by round, the full read and the codec alone are measured within
//! a fraction of a second of each other, so their ratio holds on a machine whose speed drifts
//! from one second to the next (the suite's cells run one after the other, a second each).
//!
//! ```text
//! cargo build --release -p root-reader --example ceiling_worker
//! bench-run interleave --suite root_ceiling_paired \
//!     --worker target/release/examples/ceiling_worker \
//!     --pair '*/full_1t=*/decompress_only_1t' \
//!     --pair '*/read_decompress_1t=*/decompress_only_1t' \
//!     --pair '*/read_copy_1t=*/decompress_only_1t' \
//!     --pair '*/full_copied_strings_1t=*/decompress_only_1t' --rounds 15
//! ```
//!
//! Ids are `<file>/<type>/<mode>_<threads>t`, as in the criterion suite. The files are written by
//! ROOT 6.40 on first use (see `benches/data`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark worker fails loudly"
)]

#[path = "../benches/data/mod.rs"]
mod data;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bench_worker::{DeclaredThroughput, TrialLength, WorkerBenchmark};
use root_reader::readspeed::{self, Config, Mode, Selection};

/// Shortest time one trial aims at (timed parts only): long enough for the timer, short enough
/// to interleave.
const TRIAL: Duration = Duration::from_millis(40);

fn config(file: &Path, tree: &str, branch: &str, threads: usize, mode: Mode) -> Config {
    Config {
        files: vec![file.to_path_buf()],
        trees: vec![tree.to_string()],
        branches: Selection::Names(vec![branch.to_string()]),
        threads,
        mode,
        stages: false,
    }
}

/// Every cell of one branch ([`data::ceiling_cells`]), with its `readspeed` configuration.
fn cells(
    group: &str,
    file: &Path,
    tree: &str,
    branch: &str,
    strings: bool,
    two_threads: bool,
) -> Vec<(String, Config)> {
    data::ceiling_cells(strings, two_threads)
        .into_iter()
        .map(|(name, threads, mode)| {
            (
                format!("{group}/{name}"),
                config(file, tree, branch, threads, mode),
            )
        })
        .collect()
}

fn main() -> std::io::Result<()> {
    let nano = data::nanoaod_file(200_000);
    let dir = data::readspeed_files(2_000_000);
    let mut all = Vec::new();
    for (kind, branch) in data::NANO_BRANCHES {
        all.extend(cells(
            &format!("nanoaod/{kind}"),
            &nano,
            "Events",
            branch,
            data::holds_strings(kind),
            false,
        ));
    }
    for codec in ["zlib", "zstd"] {
        let file = dir.join(format!("readspeed_{codec}.root"));
        for branch in ["pt", "arr", "jets"] {
            all.extend(cells(
                &format!("readspeed_{codec}/{branch}"),
                &file,
                "t",
                branch,
                false,
                true,
            ));
        }
    }
    // Each cell's throughput is the bytes its full read counts, found once here.
    let mut benchmarks = Vec::new();
    let mut by_id = HashMap::new();
    for (id, config) in all {
        let bytes = readspeed::run(&config).unwrap().uncompressed_bytes;
        benchmarks.push(WorkerBenchmark {
            id: id.clone(),
            throughput: Some(DeclaredThroughput::Bytes(bytes)),
        });
        by_id.insert(id, config);
    }
    let mut lengths = TrialLength::new(TRIAL);
    bench_worker::serve(&benchmarks, |id| {
        let config = by_id.get(id).ok_or("unknown benchmark")?;
        let mut failure = None;
        let done = lengths.run(id, || match readspeed::run(config) {
            Ok(report) => Duration::from_secs_f64(report.real_time_s),
            Err(e) => {
                failure = Some(e.to_string());
                Duration::ZERO
            }
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(done),
        }
    })
}

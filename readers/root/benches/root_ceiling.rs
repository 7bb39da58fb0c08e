//! `root_ceiling`: the reader against the codec alone, branch type by branch type, in one run.
//!
//! For each branch type of a 200,000-entry NanoAOD-like file (`tools/root_nanoaod.py`, zstd-5,
//! written by ROOT 6.40 into `<target>/root-bench-data/`) and for the three branches of the
//! 2,000,000-entry readspeed files (`tools/root_readspeed_compare.py`, zlib-1 and zstd-5):
//!
//! * `<file>/<type>/full_1t`: `readspeed` on one thread: read, decompress and decode every
//!   basket of the branch (what an analysis pays);
//! * `<file>/<type>/decompress_only_1t`: the same baskets, preloaded, decompressed only (the
//!   ceiling no reader can beat);
//! * `<file>/<type>/decompress_copy_1t`: decompressed and copied once (the floor of any reader
//!   that hands its values out in memory of its own: where this is under 0.85 of
//!   decompress-only, the bar is above what any such reader can reach);
//! * `<file>/<type>/read_copy_1t`: read from the file as the full read reads it, decompressed,
//!   then copied once with one end per entry where entries vary in size, and per item in lists
//!   of strings and of lists (the floor of any reader of the file that hands out every entry in
//!   memory of its own; it decodes nothing);
//! * `<file>/<type>/read_find_1t`: read as the full read reads it, decompressed, and every string
//!   (every item of lists of strings and of lists) found where it lies, nothing checked or
//!   copied, one at a time (what finding them costs a reader that lends them where they lie, as
//!   the full read does, handing them out one after the other; a measure, not a bound on the
//!   full read's checks, which find many at a time);
//! * `<file>/<type>/read_decompress_1t`: read from the file as the full read reads it and
//!   decompressed, nothing else (the floor of any reader of the file: where this is under 0.85
//!   of decompress-only, reading the file alone puts the bar out of reach);
//! * `<file>/<type>/read_touch_1t`: as `read_decompress_1t`, plus one byte of every 64-byte
//!   line of the entries (of `char*` and `std::string`, each entry's length byte, loaded as the
//!   full read's check loads them) and every start of the entry-offset table, converted,
//!   summed, nothing stored or checked (the floor of any reader of every entry: what the bar
//!   allows over it is all that checking and decoding them may cost);
//! * `<file>/<type>/full_copied_strings_1t` (`char*`, `std::string` and `vector<string>`): the full read with
//!   the strings copied into a column of their own, as the library's column reads return them
//!   (`full_1t` checks them and hands them out where they lie in the basket);
//! * `<file>/<type>/full_2t` (the 2M-entry files): the full read on two threads;
//! * `<file>/<type>/decompress_only_2t` (the 2M-entry files): the codec alone on two threads,
//!   what this machine's second core gives the codec (on a VM whose second core is shared with
//!   its host, under 2x: where it is under 1.8x, so is every reader's two-thread read);
//! * `<file>/<type>/read_decompress_2t` (the 2M-entry files): read and decompressed on two
//!   threads, nothing else (the floor of any reader of the file on two threads: its speed-up
//!   over `read_decompress_1t` is what two threads can give a reader of the file here).
//!
//! Only the timed part of `readspeed` is measured (`iter_custom` with its real time), so opening
//! the file and listing baskets is outside, as in ROOT's rootreadspeed. The bar: full_1t at most
//! 1/0.85 of decompress_only_1t; full_2t at least 1.8x faster than full_1t.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod data;

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use root_reader::readspeed::{self, Config, Mode, Selection};

const NANO_ENTRIES: u64 = 200_000;
const READSPEED_ENTRIES: u64 = 2_000_000;

/// `readspeed` of one branch, its timed part only.
fn timed(file: &Path, tree: &str, branch: &str, threads: usize, mode: Mode) -> Duration {
    let report = readspeed::run(&Config {
        files: vec![file.to_path_buf()],
        trees: vec![tree.to_string()],
        branches: Selection::Names(vec![branch.to_string()]),
        threads,
        mode,
        stages: false,
    })
    .unwrap();
    Duration::from_secs_f64(report.real_time_s)
}

fn bench_branch(
    c: &mut Criterion,
    group: &str,
    file: &Path,
    tree: &str,
    branch: &str,
    (strings, two_threads): (bool, bool),
) {
    let mut g = c.benchmark_group(group);
    for (name, threads, mode) in data::ceiling_cells(strings, two_threads) {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| timed(file, tree, branch, threads, mode))
                    .sum()
            });
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let nano = data::nanoaod_file(NANO_ENTRIES);
    let dir = data::readspeed_files(READSPEED_ENTRIES);
    for (kind, branch) in data::NANO_BRANCHES {
        bench_branch(
            c,
            &format!("nanoaod/{kind}"),
            &nano,
            "Events",
            branch,
            (data::holds_strings(kind), false),
        );
    }
    for codec in ["zlib", "zstd"] {
        let file = dir.join(format!("readspeed_{codec}.root"));
        for branch in ["pt", "arr", "jets"] {
            bench_branch(
                c,
                &format!("readspeed_{codec}/{branch}"),
                &file,
                "t",
                branch,
                (false, true),
            );
        }
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! { name = root_ceiling; config = config(); targets = benches }
criterion_main!(root_ceiling);

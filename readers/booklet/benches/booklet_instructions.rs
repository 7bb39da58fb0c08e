//! `booklet_instructions`: booklet lookups on a real file written by our writer, counted in
//! instructions.
//!
//! A gungraun suite: each benchmark runs once under valgrind's Callgrind and reports exact counts
//! (instructions, estimated cycles, L1/LL/RAM hits). It needs valgrind and `gungraun-runner` at
//! the version of the `gungraun` dev-dependency; `bench-run --suite booklet_instructions` runs
//! and records it.
//!
//! The workload is `booklet_ops`'s (`common`): keys of 12 random lowercase letters, values of 200
//! characters, `str` serializers, the file written and synced by our writer in the system temp
//! directory and reopened read-only. Setup (the dataset, the file, opening it and one pass of
//! lookups) is not counted, nor is closing and removing the file afterwards: every benchmark
//! returns its handle.
//!
//! **The lookups take the file format's own path**: `BLAKE2s` of the key, its bucket slot, the
//! bucket's chain of blocks (`key_table_limit(0)`). The in-memory key table that the default
//! options build after `len() / 2` lookups is left out on purpose: it hashes keys with `foldhash`
//! seeded per process from the clock, so its probe sequences, and with them its instruction
//! counts, change from one run of the same binary to the next (by up to 1.5% at 1,000 keys,
//! measured). Counts are only worth gating when they are the same on every run; the wall-time
//! suite `booklet_ops` measures the key table.
//!
//! Ids read `lookups/<operation>/<mode>_<keys>`, at 1,000 and 10,000 keys (the two smaller sizes of
//! `booklet_ops`):
//!
//! | function | what is counted, per pass over all `n` keys |
//! |---|---|
//! | `get` | `get_str` of every present key, shuffled |
//! | `get_miss` | `get_ref` of `n` absent keys |
//! | `contains` | `contains` of the `n` present and `n` absent keys, shuffled |
//!
//! Modes: `mmap` (the default read path) and `buffered` (positioned reads; valgrind counts the
//! instructions around each `pread`, not the kernel's work).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks fail loudly"
)]
#![allow(
    missing_docs,
    reason = "gungraun's macros generate public items without docs"
)]

use std::hint::black_box;

use booklet::{Booklet, Flag, ReadMode};
use gungraun::prelude::*;

mod common;
use common::{Tmp, dataset, options, tmp, write_all};

/// An open read handle on a written file (removed when this is dropped) and the keys to look up.
struct Lookups {
    _file: Tmp,
    db: Booklet,
    keys: Vec<Vec<u8>>,
}

/// Which keys a benchmark looks up.
#[derive(Clone, Copy)]
enum Keys {
    Present,
    Absent,
    Both,
}

fn open(n: usize, mode: ReadMode, which: Keys) -> Lookups {
    let d = dataset(n);
    let keys: Vec<Vec<u8>> = match which {
        Keys::Present => d.shuffled_keys().into_iter().map(<[u8]>::to_vec).collect(),
        Keys::Absent => d.misses.clone(),
        Keys::Both => d.contains.clone(),
    };
    let file = tmp();
    write_all(&file.path, &d).close().unwrap();
    let db = options()
        .read_mode(mode)
        .key_table_limit(0)
        .open(&file.path, Flag::Read)
        .unwrap();
    // One pass before the counted one, as criterion's warm-up: the same work, nothing lazy left.
    for k in &d.contains {
        black_box(db.contains(k).unwrap());
    }
    assert!(!db.has_key_table(), "lookups walk the bucket chains");
    Lookups {
        _file: file,
        db,
        keys,
    }
}

#[library_benchmark]
#[bench::mmap_1000(args = (1_000, ReadMode::Mmap, Keys::Present), setup = open)]
#[bench::mmap_10000(args = (10_000, ReadMode::Mmap, Keys::Present), setup = open)]
#[bench::buffered_1000(args = (1_000, ReadMode::Buffered, Keys::Present), setup = open)]
#[bench::buffered_10000(args = (10_000, ReadMode::Buffered, Keys::Present), setup = open)]
fn get(l: Lookups) -> Lookups {
    for k in &l.keys {
        black_box(l.db.get_str(black_box(k)).unwrap().unwrap().len());
    }
    l
}

#[library_benchmark]
#[bench::mmap_1000(args = (1_000, ReadMode::Mmap, Keys::Absent), setup = open)]
#[bench::mmap_10000(args = (10_000, ReadMode::Mmap, Keys::Absent), setup = open)]
fn get_miss(l: Lookups) -> Lookups {
    for k in &l.keys {
        black_box(l.db.get_ref(black_box(k)).unwrap());
    }
    l
}

#[library_benchmark]
#[bench::mmap_1000(args = (1_000, ReadMode::Mmap, Keys::Both), setup = open)]
#[bench::mmap_10000(args = (10_000, ReadMode::Mmap, Keys::Both), setup = open)]
#[bench::buffered_1000(args = (1_000, ReadMode::Buffered, Keys::Both), setup = open)]
#[bench::buffered_10000(args = (10_000, ReadMode::Buffered, Keys::Both), setup = open)]
fn contains(l: Lookups) -> Lookups {
    for k in &l.keys {
        black_box(l.db.contains(black_box(k)).unwrap());
    }
    l
}

library_benchmark_group!(name = lookups, benchmarks = [get, get_miss, contains]);

main!(library_benchmark_groups = lookups);

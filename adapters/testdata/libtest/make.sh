#!/usr/bin/env bash
# Regenerates the libtest fixtures in this directory from REAL `cargo +nightly bench` runs of
# `#[bench]` functions (libtest's unstable bench harness; needs a nightly toolchain:
# `rustup toolchain install nightly`).
#
# The throwaway project has two bench binaries, so each capture holds two `running N tests` ...
# `test result:` sections: the library's unit tests (benchmarks in a module and a nested module,
# one with `b.bytes` set so its line ends `= N MB/s`, an ignored benchmark and a plain #[test],
# which `cargo bench` reports as ignored) and `benches/extra.rs` (a top-level name).
#
#   basic.txt  `cargo +nightly bench`: the default (pretty) format
#   quiet.txt  `cargo +nightly bench -q`: the terse format (a `i` per ignored test, no newline)
#   color.txt  `cargo +nightly bench -- --color always`: terminal colour escapes around
#              `bench`, `ignored` and `ok`
#
# Only the bench binaries' stdout is captured; cargo's own progress (Compiling, Finished,
# Running) goes to stderr. The temporary project is never committed. Measured numbers change on
# every run: the tests in adapters/src/libtest.rs pin every value of the three captures; update them
# after regenerating. Set CARGO_TARGET_DIR to share build artifacts between runs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo +nightly --version
rustc +nightly --version

proj="$work/libtest-capture"
mkdir -p "$proj/src" "$proj/benches"
cat > "$proj/Cargo.toml" <<'TOML'
[package]
name = "libtest-capture"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]
TOML
cat > "$proj/src/lib.rs" <<'RS'
#![feature(test)]
extern crate test;

pub fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |acc, &b| acc.wrapping_mul(31).wrapping_add(u64::from(b)))
}

#[cfg(test)]
mod benches {
    use super::checksum;
    use std::hint::black_box;
    use test::Bencher;

    #[bench]
    fn add_two(b: &mut Bencher) {
        b.iter(|| black_box(2u64) + black_box(3u64));
    }

    #[bench]
    fn checksum_4k(b: &mut Bencher) {
        let data = vec![7u8; 4096];
        b.bytes = data.len() as u64;
        b.iter(|| checksum(black_box(&data)));
    }

    #[bench]
    fn sort_10k(b: &mut Bencher) {
        let data: Vec<u64> = (0..10_000u64).map(|i| i.wrapping_mul(2_654_435_761) % 10_007).collect();
        b.iter(|| {
            let mut v = data.clone();
            v.sort_unstable();
            black_box(v)
        });
    }

    #[bench]
    #[ignore]
    fn ignored_bench(b: &mut Bencher) {
        b.iter(|| black_box(1u64));
    }

    #[test]
    fn a_plain_test() {
        assert_eq!(checksum(&[]), 0);
    }

    mod nested {
        use std::hint::black_box;
        use test::Bencher;

        #[bench]
        fn string_format(b: &mut Bencher) {
            b.iter(|| format!("{}-{}", black_box(12_345u32), black_box("x")));
        }
    }
}
RS
cat > "$proj/benches/extra.rs" <<'RS'
#![feature(test)]
extern crate test;

use std::hint::black_box;
use test::Bencher;

#[bench]
fn vec_push_1k(b: &mut Bencher) {
    b.iter(|| {
        let mut v = Vec::new();
        for i in 0..black_box(1000u32) {
            v.push(i);
        }
        v
    });
}
RS
cd "$proj"
cargo +nightly bench > "$here/basic.txt"
cargo +nightly bench -q > "$here/quiet.txt"
cargo +nightly bench -- --color always > "$here/color.txt"

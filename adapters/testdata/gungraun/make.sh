#!/usr/bin/env bash
# Regenerates the gungraun fixtures in this directory from a REAL gungraun 0.20 run.
#
#   adapters/testdata/gungraun/make.sh
#
# Needs valgrind and `gungraun-runner` 0.20.0 on PATH (tools/test.sh installs both). It builds a
# throw-away cargo project in a temporary directory with library benchmarks (with and without
# ids, `#[benches]` lists, an extra DHAT profile) and a binary benchmark, runs it twice with
# GUNGRAUN_HOME in a scratch directory and `--save-summary=json`, and copies here:
#
#   first/<file>/<group>/<function>[.<id>]/summary.json   the first run (only `new` values)
#   rerun/<file>/<group>/<function>[.<id>]/summary.json   the second run into the same home
#                                                          (`new` and `old` values, `change`)
#   first.jsonl                                           the first run's stdout with
#                                                          `--output-format=json` (one line each)
#
# The temporary project is never committed. Instruction counts depend on the compiler and the
# machine's cache geometry: the tests cross-check parsed values against the JSON files themselves,
# and a few spot checks in `adapters/src/gungraun.rs` pin the committed capture (update them
# after regenerating).
#
# Set CARGO_TARGET_DIR to share build artifacts between runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version=0.20.0
runner="$(gungraun-runner --version 2>/dev/null || true)"
if [ "$runner" != "gungraun-runner $version" ]; then
  echo "make.sh: needs gungraun-runner $version on PATH (found: ${runner:-none});" \
       "cargo install gungraun-runner --version $version --locked" >&2
  exit 1
fi
command -v valgrind >/dev/null || { echo "make.sh: needs valgrind on PATH" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
proj="$work/gungraun-capture"
mkdir -p "$proj/benches" "$proj/src/bin"
cat > "$proj/Cargo.toml" <<EOF
[package]
name = "gungraun-capture"
version = "0.1.0"
edition = "2021"
publish = false

[dev-dependencies]
gungraun = "=$version"

[[bench]]
name = "capture"
harness = false

[workspace]
EOF
cat > "$proj/src/lib.rs" <<'EOF'
pub fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |acc, &b| acc.wrapping_mul(31).wrapping_add(u64::from(b)))
}
EOF
cat > "$proj/src/bin/capture-echo.rs" <<'EOF'
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let data = vec![7u8; n];
    println!("{}", gungraun_capture::checksum(&data));
}
EOF
cat > "$proj/benches/capture.rs" <<'EOF'
use gungraun::prelude::*;
use gungraun::Dhat;
use std::hint::black_box;

fn bytes(n: usize) -> Vec<u8> {
    vec![7u8; n]
}

#[library_benchmark]
#[bench::small(bytes(64))]
#[bench::large(bytes(4096))]
fn fold(data: Vec<u8>) -> u64 {
    black_box(gungraun_capture::checksum(black_box(&data)))
}

#[library_benchmark]
#[benches::sizes(bytes(8), bytes(512))]
fn listed(data: Vec<u8>) -> u64 {
    black_box(gungraun_capture::checksum(black_box(&data)))
}

#[library_benchmark]
fn plain_add() -> u64 {
    black_box(black_box(2u64) + black_box(3u64))
}

#[library_benchmark(config = LibraryBenchmarkConfig::default().tool(Dhat::default()))]
fn with_dhat() -> usize {
    black_box(black_box(vec![1u8; 1000]).len())
}

library_benchmark_group!(name = checksum, benchmarks = [fold, listed]);
library_benchmark_group!(name = misc, benchmarks = [plain_add, with_dhat]);

main!(library_benchmark_groups = checksum, misc);
EOF
# A bench file's main! runs either library or binary benchmarks: the binary one has its own file.
cat > "$proj/benches/capture_bin.rs" <<'EOF'
use gungraun::prelude::*;

#[binary_benchmark]
#[bench::hundred("100")]
fn echo(n: &str) -> gungraun::Command {
    gungraun::Command::new(env!("CARGO_BIN_EXE_capture-echo")).arg(n).build()
}

binary_benchmark_group!(name = binary, benchmarks = [echo]);

main!(binary_benchmark_groups = binary);
EOF
cat >> "$proj/Cargo.toml" <<'EOF'

[[bench]]
name = "capture_bin"
harness = false
EOF

home="$work/home"
run() {
  (cd "$proj" && GUNGRAUN_HOME="$home" cargo bench --bench capture --bench capture_bin -- \
      --save-summary=json --output-format=json)
}
run > "$work/first.jsonl"
rm -rf "$here/first" "$here/rerun"
(cd "$home" && find . -name summary.json -print0 | while IFS= read -r -d '' f; do
  mkdir -p "$here/first/$(dirname "$f")"; cp "$f" "$here/first/$f"; done)
cp "$work/first.jsonl" "$here/first.jsonl"
run > /dev/null
(cd "$home" && find . -name summary.json -print0 | while IFS= read -r -d '' f; do
  mkdir -p "$here/rerun/$(dirname "$f")"; cp "$f" "$here/rerun/$f"; done)

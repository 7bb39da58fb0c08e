#!/usr/bin/env bash
# Runs the seeds' own commands as they are printed (../shared/seeds/002 for MATHLDBT, 004 for
# Riegeli), each in the crate that stands for the seed's project, and checks that seed 000's
# benchmark ids exist as it prints them.
#
# Usage: tools/seed_commands.sh [--full]
#   default: every command as printed; a `cargo bench` command gets criterion's `--test` after
#            its own arguments (each benchmark runs once: the command resolves its features and
#            targets, builds, and every benchmark runs), so the check takes minutes, not an hour;
#            one with `--profile-time N` (which `--test` conflicts with) profiles each benchmark
#            for criterion's minimum, 1 s, instead;
#   --full:  the bench commands as printed, measuring for real.
# Exits non-zero at the first command that fails, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

full=0
if [ "${1:-}" = "--full" ]; then
    full=1
elif [ $# -gt 0 ]; then
    printf 'usage: tools/seed_commands.sh [--full]\n' >&2
    exit 2
fi

failed() {
    printf 'seed command failed (in %s): %s\n' "$1" "$2" >&2
    exit 1
}

# run DIR COMMAND...: runs COMMAND (as printed in a seed) in DIR.
run() {
    local dir="$1"
    shift
    local printed="$*"
    local args=("$@")
    if [ "$full" -eq 0 ] && [ "${args[0]} ${args[1]}" = "cargo bench" ]; then
        local has_sep=0 profile_time=-1 i
        for i in "${!args[@]}"; do
            [ "${args[$i]}" = "--" ] && has_sep=1
            [ "${args[$i]}" = "--profile-time" ] && profile_time=$((i + 1))
        done
        if [ "$profile_time" -ge 0 ]; then
            args[profile_time]=1
        # criterion's test mode, after the command's own `--` arguments if it has some.
        elif [ "$has_sep" -eq 1 ]; then
            args+=(--test)
        else
            args+=(-- --test)
        fi
    fi
    printf '\n==> (%s) %s\n' "$dir" "$printed" >&2
    (cd "$dir" && "${args[@]}") || failed "$dir" "$printed"
}

# target_dir DIR: cargo's target directory for DIR.
target_dir() {
    local target
    target="$(cd "$1" && cargo metadata --format-version 1 --no-deps |
        grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
    [ -n "$target" ] || failed "$1" "cargo metadata (no target_directory)"
    printf '%s\n' "$target"
}

# criterion_dir DIR: where criterion writes for a bench run in DIR ($CRITERION_HOME, else cargo's
# target directory's criterion/).
criterion_dir() {
    if [ -n "${CRITERION_HOME:-}" ]; then
        (cd "$1" && realpath -m "$CRITERION_HOME")
        return
    fi
    printf '%s/criterion\n' "$(target_dir "$1")"
}

# flamegraphs DIR SVG...: each SVG (removed before the profile run) is a flamegraph with frames of
# DIR's crate in it.
flamegraphs() {
    local dir="$1" svg
    shift
    for svg in "$@"; do
        [ -s "$svg" ] || failed "$dir" "no flamegraph at $svg"
        grep -q '<svg' "$svg" || failed "$dir" "$svg is not an SVG"
        grep -q 'riegeli_records::' "$svg" || failed "$dir" "$svg has no riegeli_records frame"
        printf 'flamegraph: %s\n' "$svg" >&2
    done
}

# A scratch directory for this script's files and ledger.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# recorded SUITE FEATURES FILTER NAME...: records a quick run of SUITE's benchmarks matching
# FILTER (a criterion filter) with bench-run and FEATURES (cargo features, space-separated; may be
# empty), in a scratch ledger, and checks that every NAME is a benchmark of the recorded run, as
# the seed prints it.
recorded() {
    local suite="$1" features="$2" filter="$3" name csv
    shift 3
    local with=()
    [ -n "$features" ] && with=(--features "$features")
    printf '\n==> (.) bench-run --suite %s %s --quick -- %s (names as the seed prints them)\n' "$suite" "${with[*]}" "$filter" >&2
    cargo run -q -p bench-run -- --db "$scratch/ledger.sqlite" --suite "$suite" "${with[@]}" --quick -- "$filter" >&2 ||
        failed . "bench-run --suite $suite ${with[*]} --quick -- $filter"
    csv="$(cargo run -q -p bench-run -- --db "$scratch/ledger.sqlite" export latest --format csv)" ||
        failed . "bench-run export latest --format csv"
    for name in "$@"; do
        cut -d, -f2 <<<"$csv" | grep -qxF "$name" ||
            cut -d, -f2 <<<"$csv" | grep -qxF "\"$name\"" ||
            failed . "$name is not a benchmark of the recorded $suite run"
    done
    printf '%s: %d names in the recorded run, as the seed prints them\n' "$suite" "$#" >&2
}

# Seed 000 (the ROOT reader) prints no command, only its benchmark ids: each must be a benchmark
# of a recorded root_branch_read run as the seed wrote it (the bench writes its ROOT files first,
# with the venv's ROOT).
seed000_ids=(
    "single_branch_read/zlib/pt" "single_branch_read/zstd/pt"
    "repeated_branch_read/zlib/3x_same" "repeated_branch_read/zstd/3x_same"
    "parallel_vs_sequential/sequential/zlib" "parallel_vs_sequential/parallel/zlib"
    "parallel_vs_sequential/sequential/zstd" "parallel_vs_sequential/parallel/zstd"
    "multi_branch_read/zlib/3branches" "multi_branch_read/zstd/3branches"
    "jagged_branch_read/vector_tree" "indexed_branch_read/vector_tree/njet_pt[0]"
    "fixed_array_branch_read/fixed_array"
    "lazy_single_entry/zlib/pt" "lazy_single_entry/zstd/pt"
    "lazy_range_read/zlib/25%_range" "lazy_range_read/zstd/25%_range"
    "lazy_range_read/zlib/full_range" "lazy_range_read/zstd/full_range"
    "lazy_vs_eager/eager/zlib" "lazy_vs_eager/lazy_all/zlib"
    "lazy_vs_eager/eager/zstd" "lazy_vs_eager/lazy_all/zstd"
    "chained_slice/sequential_decode_all" "chained_slice/random_access_1000"
)
recorded root_branch_read "" '^(single_branch_read|repeated_branch_read|parallel_vs_sequential|multi_branch_read|jagged_branch_read|indexed_branch_read|fixed_array_branch_read|lazy_single_entry|lazy_range_read|lazy_vs_eager|chained_slice)/' "${seed000_ids[@]}"

# Seed 001 (root-readspeed): its commands as printed, from a directory laid out as the seed's
# build directory (`./src/root-readspeed`; `root-readspeed` on the PATH for the usage lines), on
# its example's two files written by ROOT (tree t, branch x: 80,000,000 uncompressed bytes, as
# the seed's example reads). Not run: the seed's cmake build lines (they build the C++ original;
# this one is built by cargo, above) and `echo 3 > /proc/sys/vm/drop_caches` (the superuser's,
# and it empties the page cache of the whole machine; `--evict-cache` drops the files' pages
# without either, and is run instead).
s1="$scratch/seed001"
printf '\n==> (.) cargo build --release -p root-reader --bin root-readspeed\n' >&2
cargo build --release -p root-reader --bin root-readspeed ||
    failed . "cargo build --release -p root-reader --bin root-readspeed"
mkdir -p "$s1/src"
ln -s "$(target_dir .)/release/root-readspeed" "$s1/src/root-readspeed"
"${BENCH_PYTHON:-tools/.venv/bin/python}" tools/seed001_files.py "$s1" >/dev/null ||
    failed . "tools/seed001_files.py (run tools/venv.sh first)"
export PATH="$s1/src:$PATH"
run "$s1" root-readspeed --help
run "$s1" root-readspeed -h
printf '\n==> (%s) %s\n' "$s1" "./src/root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x" >&2
report="$(cd "$s1" && ./src/root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x)" ||
    failed "$s1" "./src/root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x"
printf '%s\n' "$report" >&2
grep -qx 'Uncompressed data read: *80000000 bytes' <<<"$report" ||
    failed "$s1" "the seed's example reads 80000000 bytes"
for label in "Real time to setup MT run" "CPU time to setup MT run" "Real time" "CPU time" "Throughput"; do
    grep -q "^$label: " <<<"$report" || failed "$s1" "no '$label:' line in the report"
done
run "$s1" ./src/root-readspeed --trees t --files test1.root test2.root --threads 2 --branches x --evict-cache
run "$s1" ./src/root-readspeed --test

# Seed 002 (MATHLDBT): every command its entries print, then the names its tables print, in a
# recorded run of each suite. Not run as printed: `CARGO_TARGET_DIR=/media/Development/tmp/
# cargo-target cargo bench ...` (of 2026-02-19), a directory on the seed author's machine; the
# same command without it runs above, and a target directory elsewhere changes where cargo
# builds, not what runs.
m=readers/mathldbt
z="compression-zstd,compression-gzip"
run $m cargo test --features "compression-zstd compression-gzip"
run $m cargo bench --bench mathldbt_transport
run $m cargo bench --bench mathldbt_transport --features "compression-zstd compression-gzip"
run $m cargo bench --bench json_vs_mathldbt
run $m cargo run --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 2000 --rtt-ms 30 --mbit 100
run $m cargo run --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 100000 --rtt-ms 30 --mbit 100
run $m cargo run --release --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 2000 --rtt-ms 30 --mbit 100
run $m cargo run --release --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 100000 --rtt-ms 30 --mbit 100
seed002_transport=()
for rows in 2000 100000; do
    for op in encode decode; do
        for enc in plain dict_delta zstd gzip; do
            seed002_transport+=("mathldbt_transport/${op}_${enc}_ws/$rows")
        done
    done
done
recorded mathldbt_transport "$z" '^mathldbt_transport/(encode|decode)_(plain|dict_delta|zstd|gzip)_ws/' "${seed002_transport[@]}"
seed002_json=()
for rows in 2000 100000; do
    for name in mathldbt_encode_ws mathldbt_decode_ws json_serialize json_deserialize; do
        seed002_json+=("json_vs_mathldbt/$name/$rows")
    done
done
recorded json_vs_mathldbt "" '^json_vs_mathldbt/(mathldbt_encode_ws|mathldbt_decode_ws|json_serialize|json_deserialize)/' "${seed002_json[@]}"

# Seed 004 (Riegeli).
r=readers/riegeli
run $r cargo bench --bench throughput --features snappy
run $r cargo bench --bench throughput -- simple_none/write
run $r cargo bench --bench throughput -- simple_brotli_6/read
run $r cargo bench --bench throughput -- transpose_zstd_3
run $r cargo bench --bench head_to_head
# As the seed's BENCHMARKS prints it ("Results from `cargo bench -p riegeli --bench head_to_head`"),
# at the workspace root: `-p riegeli` names our package alone (the crates.io `riegeli` crate lives
# in readers/riegeli/crates-io-compare, outside this workspace).
run . cargo bench -p riegeli --bench head_to_head
# "Flamegraph Profiling": pprof at 100 Hz under criterion's --profile-time, one SVG per benchmark
# (the seed's two example paths are checked).
flames="$(criterion_dir $r)"
svgs=("$flames/simple_brotli_6/write/profile/flamegraph.svg"
    "$flames/transpose_zstd_3/read/profile/flamegraph.svg")
rm -f "${svgs[@]}"
run $r cargo bench --bench throughput -- --profile-time 5
flamegraphs $r "${svgs[@]}"
# The names the seed prints (its matrix of 8 configurations, written and read, and the projection
# benchmark it plans for transposed files), in a recorded run.
seed004_names=()
for config in simple_none simple_brotli_6 simple_zstd_3 simple_snappy \
    transpose_none transpose_brotli_6 transpose_zstd_3 transpose_snappy; do
    seed004_names+=("$config/write" "$config/read")
    [[ $config == transpose_* ]] && seed004_names+=("$config/read_projected")
done
recorded throughput snappy '/(write|read|read_projected)$' "${seed004_names[@]}"

printf '\nevery seed command ran\n' >&2

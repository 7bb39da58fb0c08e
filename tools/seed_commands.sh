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

# criterion_dir DIR: where criterion writes for a bench run in DIR ($CRITERION_HOME, else cargo's
# target directory's criterion/).
criterion_dir() {
    if [ -n "${CRITERION_HOME:-}" ]; then
        (cd "$1" && realpath -m "$CRITERION_HOME")
        return
    fi
    local target
    target="$(cd "$1" && cargo metadata --format-version 1 --no-deps |
        grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
    [ -n "$target" ] || failed "$1" "cargo metadata (no target_directory)"
    printf '%s/criterion\n' "$target"
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

# Seed 000 (the ROOT reader) prints no command, only its benchmark ids: each must be an id of
# root_branch_read as the seed wrote it (criterion's --list; the bench writes its ROOT files
# first, with the venv's ROOT).
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
printf '\n==> (.) cargo bench -p root-reader --bench root_branch_read -- --list (seed 000 ids)\n' >&2
listed="$(cargo bench -p root-reader --bench root_branch_read -- --list)" ||
    failed . "cargo bench -p root-reader --bench root_branch_read -- --list"
for id in "${seed000_ids[@]}"; do
    grep -qxF "$id: benchmark" <<<"$listed" || failed . "seed 000 id $id is not a benchmark"
done
printf 'seed 000: %d ids, as the seed prints them\n' "${#seed000_ids[@]}" >&2

# Seed 002 (MATHLDBT).
m=readers/mathldbt
run $m cargo test --features "compression-zstd compression-gzip"
run $m cargo bench --bench mathldbt_transport --features "compression-zstd compression-gzip"
run $m cargo run --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 2000 --rtt-ms 30 --mbit 100
run $m cargo run --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 100000 --rtt-ms 30 --mbit 100
run $m cargo run --release --bin transport_pipeline_estimator --features "tools-json compression-zstd compression-gzip" -- --rows 2000 --rtt-ms 30 --mbit 100

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

printf '\nevery seed command ran\n' >&2

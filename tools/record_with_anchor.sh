#!/usr/bin/env bash
# Records a reader suite and its anchor (the other implementation) in turn, then prints the ratios.
#
# On a shared machine the speed of both sides drifts by a third or more within the hour, so one
# recording of each is not a ratio. Each round records the anchor, then our suite; a final anchor
# closes the last round (A O A O ... A). `bench-run ratio` then pairs every one of our runs with
# every anchor run and reports the median ratio and its range.
#
# Usage: tools/record_with_anchor.sh SUITE [--rounds N] [--sizes LIST] [-- CRITERION ARGS...]
#   SUITE: booklet_ops          (anchor: Python booklet, tools/booklet_python_bench.py)
#          head_to_head | throughput   (anchor: C++ riegeli, tools/riegeli_cpp_bench.py)
#   --rounds N   rounds of (anchor, ours), default 1
#   --sizes LIST booklet_ops only: key counts, default 1000,10000,50000 (e.g. 50000 alone)
# Environment: BENCH_DB (ledger), BENCH_LOCK (a file to hold with flock while recording, so that
# recordings started elsewhere on the machine wait), BENCH_RUN (the bench-run binary; default:
# built from this workspace).
#
# Examples:
#   tools/record_with_anchor.sh booklet_ops --sizes 50000 --rounds 2
#   tools/record_with_anchor.sh head_to_head
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

suite="${1:?usage: record_with_anchor.sh SUITE [--rounds N] [--sizes LIST] [-- CRITERION ARGS...]}"
shift
rounds=1
sizes=1000,10000,50000
criterion_args=(--warm-up-time 1 --measurement-time 3)
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --sizes) sizes="$2"; shift 2 ;;
        --) shift; criterion_args=("$@"); break ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

case "$suite" in
    booklet_ops) package=booklet; pairs=() ;;
    head_to_head | throughput)
        package=riegeli
        # Single-threaded against single-threaded, two threads against the wheel's thread pool.
        pairs=(--pair '*/ours_write=*/cpp_write' --pair '*/ours_read=*/cpp_read'
               --pair '*/ours_read_parallel=*/cpp_read_parallel'
               --pair '*/write=*/cpp_write' --pair '*/read=*/cpp_read'
               --pair '*/read_parallel=*/cpp_read_parallel') ;;
    *) echo "unknown suite: $suite (booklet_ops, head_to_head, throughput)" >&2; exit 2 ;;
esac

if [ -z "${BENCH_RUN:-}" ]; then
    # bench-run itself needs no optimising (the suites it runs are built with the bench
    # profile); its dev build compiles in under half the time (README, "First run").
    cargo build --quiet -p bench-run --bin bench-run --manifest-path "$root/Cargo.toml"
    BENCH_RUN="${CARGO_TARGET_DIR:-$root/target}/debug/bench-run"
fi
py="$("$here/venv.sh")"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Prints the id of the run an import or a suite run just recorded.
latest_id() {
    "$BENCH_RUN" list --suite "$1" --limit 1 --format json | "$py" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])'
}

anchor() {
    local out="$scratch/anchor.json"
    if [ "$suite" = booklet_ops ]; then
        "$py" "$here/booklet_python_bench.py" --sizes "$sizes" --out "$out"
    else
        "$py" "$here/riegeli_cpp_bench.py" "$suite" "$out" --repeats 5
    fi
    "$BENCH_RUN" import bmf --suite "${suite}_anchor" "$out" --direction throughput=higher >/dev/null
    anchors+=(--anchor "$(latest_id "${suite}_anchor")")
}

ours() {
    local filter=()
    if [ "$suite" = booklet_ops ] && [ "$sizes" != 1000,10000,50000 ]; then
        filter=("booklet_ops/.*/(${sizes//,/|})\$")
    fi
    # head_to_head's own C++ summary table is skipped: the anchor runs apart, between our runs.
    (cd "$root" && RIEGELI_H2H_SUMMARY=0 "$BENCH_RUN" --suite "$suite" -p "$package" -- "${criterion_args[@]}" "${filter[@]}")
    ours_runs+=("$(latest_id "$suite")")
}

record() {
    anchors=()
    ours_runs=()
    for _ in $(seq "$rounds"); do
        anchor
        ours
    done
    anchor
    echo
    "$BENCH_RUN" ratio "${ours_runs[@]}" "${anchors[@]}" "${pairs[@]}"
}

if [ -n "${BENCH_LOCK:-}" ]; then
    exec 9>"$BENCH_LOCK"
    flock 9
fi
record

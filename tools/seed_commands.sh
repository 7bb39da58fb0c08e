#!/usr/bin/env bash
# Runs the seeds' own commands as they are printed (../shared/seeds/002 for MATHLDBT, 004 for
# Riegeli), each in the crate that stands for the seed's project.
#
# Usage: tools/seed_commands.sh [--full]
#   default: every command as printed; a `cargo bench` command gets criterion's `--test` after
#            its own arguments (each benchmark runs once: the command resolves its features and
#            targets, builds, and every benchmark runs), so the check takes minutes, not an hour;
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
        # criterion's test mode, after the command's own `--` arguments if it has some.
        local has_sep=0
        for a in "${args[@]}"; do [ "$a" = "--" ] && has_sep=1; done
        if [ "$has_sep" -eq 1 ]; then args+=(--test); else args+=(-- --test); fi
    fi
    printf '\n==> (%s) %s\n' "$dir" "$printed" >&2
    (cd "$dir" && "${args[@]}") || failed "$dir" "$printed"
}

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

printf '\nevery seed command ran\n' >&2

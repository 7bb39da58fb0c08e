#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine, installing what the tests need first.
# Usage: tools/test.sh            (from anywhere; CI calls it through .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*" >&2; }

# Rust components used below (rustup is on the machine; this is a no-op when present).
if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi

log "cargo fmt --check"
cargo fmt --all -- --check

log "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

# The web crate's end-to-end test drives Debian's headless Chromium (it fails under CI=true
# without it).
if [ ! -e /usr/bin/chromium ]; then
    if [ "$(id -u)" -eq 0 ]; then
        log "installing chromium (for the web end-to-end test)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        printf 'warning: /usr/bin/chromium is missing and installing it needs root: %s\n' \
            "sudo apt-get install -y chromium" >&2
    fi
fi

# The store's tests run on SQLite and on a real PostgreSQL server they start themselves
# (initdb and pg_ctl of Debian's postgresql package, on a unix socket in a temp dir); they fail
# under CI=true without it.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ -z "${BENCH_PG_BIN:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        log "installing postgresql (for the store tests on PostgreSQL)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    else
        printf 'warning: PostgreSQL is missing and installing it needs root: %s\n' \
            "sudo apt-get install -y postgresql" >&2
    fi
fi

# Instruction-count suites (gungraun) run under valgrind through `gungraun-runner`, whose version
# must equal that of the gungraun library in Cargo.lock. harness's gungraun test fails under
# CI=true without them.
if ! command -v valgrind >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        log "installing valgrind (for the gungraun instruction-count suites)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
    else
        printf 'warning: valgrind is missing and installing it needs root: %s\n' \
            "sudo apt-get install -y valgrind" >&2
    fi
fi
# Profiles (`bench-run profile`, `ab --profile`) sample with `perf record` (Debian's linux-perf).
if ! command -v perf >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        log "installing linux-perf (for wall-time profiles)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null
    else
        printf 'warning: perf is missing and installing it needs root: %s\n' \
            "sudo apt-get install -y linux-perf" >&2
    fi
fi
gungraun_version="$(awk '/^name = "gungraun"$/ { found = 1; next }
    found && /^version = / { gsub(/"/, "", $3); print $3; exit }' Cargo.lock)"
if [ -z "$gungraun_version" ]; then
    printf 'error: no gungraun package in Cargo.lock\n' >&2
    exit 1
fi
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if [ "$(gungraun-runner --version 2>/dev/null || true)" != "gungraun-runner $gungraun_version" ]; then
    log "installing gungraun-runner $gungraun_version"
    cargo install gungraun-runner --version "$gungraun_version" --locked
fi

# The reader interop tests run the real implementations (ROOT, C++ riegeli, Python booklet)
# from a pinned venv; they fail under CI=true when it is missing.
log "python venv (tools/requirements.txt)"
BENCH_PYTHON="$(tools/venv.sh)"
export BENCH_PYTHON

# CI builds once: incremental state would only take disk.
if [ -n "${CI:-}" ]; then
    export CARGO_INCREMENTAL=0
fi

# The web end-to-end test records through `bench-run`. `cargo test --workspace` builds it (for
# bench-run's own integration tests) before any test runs; pointing the web test at that binary
# spares it a nested `cargo build -p bench-run`, whose different feature set would compile many
# dependencies a second time.
target_dir="$(realpath -m "${CARGO_TARGET_DIR:-target}")"
export BENCH_RUN_BIN="$target_dir/debug/bench-run"

log "cargo test (workspace)"
cargo test --workspace --locked

# The crates.io `riegeli` crate against ours: a workspace of its own (both packages are called
# `riegeli`, which would make `-p riegeli` ambiguous in the main graph), with its own lockfile. It
# shares the main target directory, so the dependencies both use build once.
compare=readers/riegeli/crates-io-compare/Cargo.toml
log "crates-io-compare: fmt, clippy, test ($compare)"
cargo fmt --manifest-path "$compare" -- --check
cargo clippy --manifest-path "$compare" --target-dir "$target_dir" --all-targets --locked -- -D warnings
cargo test --manifest-path "$compare" --target-dir "$target_dir" --locked

# The seeds' own commands, as printed (cargo bench ones once each, in criterion's test mode).
log "seed commands as printed (tools/seed_commands.sh)"
tools/seed_commands.sh

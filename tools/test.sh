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

log "cargo test (workspace)"
cargo test --workspace --locked

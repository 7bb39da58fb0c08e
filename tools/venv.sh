#!/usr/bin/env bash
# Creates (or refreshes) the Python venv of the interop tests and anchor scripts, from
# tools/requirements.txt, and prints the path of its python.
#
# Usage: tools/venv.sh              -> tools/.venv (or $BENCH_VENV)
#        PY=$(tools/venv.sh)        -> use "$PY" in scripts
# Tests find the interpreter through $BENCH_PYTHON, else tools/.venv/bin/python.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${BENCH_VENV:-$here/.venv}"
requirements="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # The wheels pinned here exist for CPython 3.9-3.14; prefer the machine's python3.11.
    base="$(command -v python3.11 || command -v python3)"
    printf '==> creating %s from %s\n' "$venv" "$requirements" >&2
    "$base" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
    printf '%s\n' "$want" >"$stamp"
fi
printf '%s\n' "$venv/bin/python"

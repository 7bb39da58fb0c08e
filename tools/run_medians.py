"""Shared by the ratio scripts (root_ceiling_ratios.py, riegeli_tool_write_ratios.py): a run's
medians as `bench-run show RUN --format json` reports them, its best samples from
`bench-run export RUN --format json`, and the ratio of two of them."""

import json
import subprocess
import sys


def medians(bench_run, run):
    """{benchmark: (median, lower, upper)} of every result of RUN that has a median."""
    shown = subprocess.run(
        [bench_run, "show", run, "--format", "json"], check=True, capture_output=True, text=True
    ).stdout
    out = {}
    for r in json.loads(shown)["results"]:
        m = r["statistics"].get("median") or {}
        if "estimate" in m:
            out[r["benchmark"]] = (m["estimate"], m["lower"], m["upper"])
    return out


def bests(bench_run, run):
    """{benchmark: the fastest sample's time per iteration} of every result of RUN with raw
    samples (criterion's: each sample is a total over its iterations)."""
    exported = subprocess.run(
        [bench_run, "export", run, "--format", "json"], check=True, capture_output=True, text=True
    ).stdout
    out = {}
    for r in json.loads(exported)["results"]:
        raw = r.get("raw_samples") or {}
        per_iter = [t / n for t, n in zip(raw.get("times_ns", []), raw.get("iters", [])) if n > 0]
        if per_iter:
            out[r["benchmark"]] = min(per_iter)
    return out


def ratio(fast, slow):
    """fast / slow for (median, lower, upper) times: the interval pairs the extremes."""
    return {"value": fast[0] / slow[0], "lower_value": fast[1] / slow[2], "upper_value": fast[2] / slow[1]}


def write_bmf(out, missing):
    """Prints `out` as Bencher Metric Format JSON, or exits with `missing` when it is empty."""
    if not out:
        sys.exit(missing)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")

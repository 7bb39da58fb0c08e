"""Shared by the ratio scripts (root_ceiling_ratios.py, riegeli_tool_write_ratios.py): a run's
medians as `bench-run show RUN --format json` reports them, and the ratio of two of them."""

import json
import subprocess


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


def ratio(fast, slow):
    """fast / slow for (median, lower, upper) times: the interval pairs the extremes."""
    return {"value": fast[0] / slow[0], "lower_value": fast[1] / slow[2], "upper_value": fast[2] / slow[1]}

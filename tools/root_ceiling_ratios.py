#!/usr/bin/env python3
"""Ratios of a `root_ceiling` run, as Bencher Metric Format, for `bench-run import bmf`.

Usage:
    tools/root_ceiling_ratios.py RUN [--bench-run target/release/bench-run] > ratios.bmf.json
    bench-run import bmf --suite root_ceiling_ratios --direction ratio=higher ratios.bmf.json

From the medians (and their 95% intervals) of run RUN of suite `root_ceiling`:
  * `<file>/<type>/share_of_decompress`: decompress_only_1t / full_1t, the share of the codec's
    speed the full read reaches on one thread (bar: 0.85); the interval pairs the extremes of the
    two intervals;
  * `<file>/<type>/2t_over_1t`: full_1t / full_2t (bar: 1.8).
"""

import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--bench-run", default="target/release/bench-run")
    args = ap.parse_args()
    shown = subprocess.run(
        [args.bench_run, "show", args.run, "--format", "json"], check=True, capture_output=True, text=True
    ).stdout
    data = json.loads(shown)
    med = {}
    for r in data["results"]:
        m = r["statistics"].get("median") or {}
        if "estimate" in m:
            med[r["benchmark"]] = (m["estimate"], m["lower"], m["upper"])
    groups = sorted({name.rsplit("/", 1)[0] for name in med})
    out = {}
    for g in groups:
        full = med.get(f"{g}/full_1t")
        dec = med.get(f"{g}/decompress_only_1t")
        two = med.get(f"{g}/full_2t")
        if full and dec:
            out[f"{g}/share_of_decompress"] = {
                "ratio": {"value": dec[0] / full[0], "lower_value": dec[1] / full[2], "upper_value": dec[2] / full[1]}
            }
        if full and two:
            out[f"{g}/2t_over_1t"] = {
                "ratio": {"value": full[0] / two[0], "lower_value": full[1] / two[2], "upper_value": full[2] / two[1]}
            }
    if not out:
        sys.exit(f"run {args.run} has no root_ceiling medians")
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Ratios of a `root_ceiling` run, as Bencher Metric Format, for `bench-run import bmf`.

Usage:
    tools/root_ceiling_ratios.py RUN [--bench-run target/release/bench-run] > ratios.bmf.json
    bench-run import bmf --suite root_ceiling_ratios --direction ratio=higher ratios.bmf.json

From the medians (and their 95% intervals) of run RUN of suite `root_ceiling`:
  * `<file>/<type>/share_of_decompress`: decompress_only_1t / full_1t, the share of the codec's
    speed the full read reaches on one thread (bar: 0.85); the interval pairs the extremes of the
    two intervals;
  * `<file>/<type>/floor_share_of_decompress`: decompress_only_1t / decompress_copy_1t, the share
    the floor of any reader reaches (decompress, then copy the payload once): where it is under
    0.85 the bar is above what a reader handing out its values can reach;
  * `<file>/<type>/share_of_floor`: decompress_copy_1t / full_1t, the share of that floor reached;
  * `<file>/<type>/read_floor_share_of_decompress`: decompress_only_1t / read_copy_1t, the same
    for the floor of a reader of the file (read as the full read reads, decompress, copy the
    payload once, one end per entry where entries vary in size; no value decoded);
  * `<file>/<type>/share_of_read_floor`: read_copy_1t / full_1t;
  * `<file>/<type>/find_floor_share_of_decompress`: decompress_only_1t / read_find_1t, what
    finding each string or item plainly costs a reader that lends them where they lie (read,
    decompress, find; nothing checked or copied), one after the other; a measure, not a bound
    on the full read's checks, which find many at a time;
  * `<file>/<type>/share_of_find_floor`: read_find_1t / full_1t;
  * `<file>/<type>/read_share_of_decompress`: decompress_only_1t / read_decompress_1t, the share
    reading the file and decompressing leaves (what reading alone costs);
  * `<file>/<type>/copied_strings_share_of_decompress` (strings): decompress_only_1t /
    full_copied_strings_1t, the full read with the strings copied into a column of their own;
  * `<file>/<type>/2t_over_1t`: full_1t / full_2t (bar: 1.8);
  * `<file>/<type>/decompress_2t_over_1t`: decompress_only_1t / decompress_only_2t, what the
    machine's second core gives the codec alone (where it is under 1.8, so is every reader);
  * `<file>/<type>/2t_share_of_decompress_2t`: 2t_over_1t / decompress_2t_over_1t.
And, as issue 23 states its bars ("best of 3"), from the fastest sample of each cell:
`share_of_decompress_best` and `2t_over_1t_best` (one value each, no interval).
"""

import argparse

from run_medians import bests, medians, ratio, write_bmf


def ratio_of_ratios(a, b):
    """a / b for two ratios with intervals: the interval pairs the extremes."""
    return {
        "value": a["value"] / b["value"],
        "lower_value": a["lower_value"] / b["upper_value"],
        "upper_value": a["upper_value"] / b["lower_value"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--bench-run", default="target/release/bench-run")
    args = ap.parse_args()
    med = medians(args.bench_run, args.run)
    best = bests(args.bench_run, args.run)
    groups = sorted({name.rsplit("/", 1)[0] for name in med})
    out = {}
    for g in groups:
        full = med.get(f"{g}/full_1t")
        dec = med.get(f"{g}/decompress_only_1t")
        copy = med.get(f"{g}/decompress_copy_1t")
        read_copy = med.get(f"{g}/read_copy_1t")
        read_find = med.get(f"{g}/read_find_1t")
        read_dec = med.get(f"{g}/read_decompress_1t")
        copied = med.get(f"{g}/full_copied_strings_1t")
        two = med.get(f"{g}/full_2t")
        dec_two = med.get(f"{g}/decompress_only_2t")
        for name, fast, slow in [
            ("share_of_decompress", dec, full),
            ("floor_share_of_decompress", dec, copy),
            ("share_of_floor", copy, full),
            ("read_floor_share_of_decompress", dec, read_copy),
            ("share_of_read_floor", read_copy, full),
            ("find_floor_share_of_decompress", dec, read_find),
            ("share_of_find_floor", read_find, full),
            ("read_share_of_decompress", dec, read_dec),
            ("copied_strings_share_of_decompress", dec, copied),
            ("2t_over_1t", full, two),
            ("decompress_2t_over_1t", dec, dec_two),
        ]:
            if fast and slow:
                out[f"{g}/{name}"] = {"ratio": ratio(fast, slow)}
        if full and two and dec and dec_two:
            # The full read's two-thread speed-up as a share of the codec's own on this machine.
            out[f"{g}/2t_share_of_decompress_2t"] = {
                "ratio": ratio_of_ratios(ratio(full, two), ratio(dec, dec_two))
            }
        for name, fast, slow in [
            ("share_of_decompress_best", f"{g}/decompress_only_1t", f"{g}/full_1t"),
            ("read_share_of_decompress_best", f"{g}/decompress_only_1t", f"{g}/read_decompress_1t"),
            ("2t_over_1t_best", f"{g}/full_1t", f"{g}/full_2t"),
        ]:
            if fast in best and slow in best:
                out[f"{g}/{name}"] = {"ratio": {"value": best[fast] / best[slow]}}
    write_bmf(out, f"run {args.run} has no root_ceiling medians")


if __name__ == "__main__":
    main()

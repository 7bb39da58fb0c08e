#!/usr/bin/env python3
"""Two threads against one on all four fields of tools/rntuple_read_compare.py's files at once.

Usage: python3 tools/rntuple_all_fields.py ROOT_TOOL OUT.bmf.json
(after rntuple_read_compare.py has written /tmp/rntuple_read/rntuple_read_{zstd,zlib}.root)

Runs `root-tool readspeed --branches pt arr jets n` on 1 and 2 threads, full read and
decompress-only, 9 interleaved repeats each, and writes the medians as BMF:
`rntuple_read/<codec>/all_fields/<T>t/root_tool` (latency) and the ratios `2t_over_1t` and
`2t_over_1t_decompress_only`. A single field of 8 MB is read in 5 ms, where the fixed costs of a
second thread (waking it, the first touch of its buffers) weigh; all four fields (88 MB) show
what two threads gain on more work. Import with `bench-run import bmf --suite rntuple_read
--direction ratio=higher OUT.bmf.json`.
"""
import json, statistics, subprocess, sys
rt = sys.argv[1]; out = sys.argv[2]
bmf = {}
for codec in ["zstd", "zlib"]:
    times = {1: [], 2: [], "c1": [], "c2": []}
    for _ in range(9):
        for t in [1, 2]:
            for mode, key in [([], t), (["--decompress-only"], f"c{t}")]:
                doc = json.loads(subprocess.run([rt, "readspeed", "--files", f"/tmp/rntuple_read/rntuple_read_{codec}.root", "--trees", "events", "--branches", "pt", "arr", "jets", "n", "--threads", str(t), "--format", "json"] + mode, check=True, capture_output=True, text=True).stdout)
                times[key].append(doc["real_time_s"])
    med = {k: statistics.median(v) for k, v in times.items()}
    for t in [1, 2]:
        bmf[f"rntuple_read/{codec}/all_fields/{t}t/root_tool"] = {"latency": {"value": med[t] * 1e9, "lower_value": min(times[t]) * 1e9, "upper_value": max(times[t]) * 1e9}}
    bmf[f"rntuple_read/{codec}/all_fields/2t_over_1t"] = {"ratio": {"value": med[1] / med[2]}}
    bmf[f"rntuple_read/{codec}/all_fields/2t_over_1t_decompress_only"] = {"ratio": {"value": med["c1"] / med["c2"]}}
    print(codec, {k: round(v * 1000, 2) for k, v in med.items()}, "2t/1t", round(med[1] / med[2], 3), "codec", round(med["c1"] / med["c2"], 3))
json.dump(bmf, open(out, "w"), indent=1)

#!/usr/bin/env python3
"""Speedups of a `riegeli_tool_write` run over C++, as Bencher Metric Format, for `bench-run import bmf`.

Usage:
    tools/riegeli_tool_write_ratios.py RUN [--bench-run target/release/bench-run] > ratios.bmf.json
    bench-run import bmf --suite riegeli_tool_write_ratios --direction ratio=higher ratios.bmf.json

From the medians (and their 95% intervals) of run RUN of suite `riegeli_tool_write`
(readers/riegeli/benches/riegeli_tool_write.rs), per codec:
  * `<codec>/tool_over_cpp`: cpp_array_record_write / riegeli_tool_write, how many times faster
    `riegeli-tool write` is end to end than C++ `ArrayRecordWriter` (the bar of issue 24, item 10:
    at least 1.0);
  * `<codec>/tool_stdin_file_over_cpp`: the same with the tool's standard input a file;
  * `<codec>/library_over_cpp`: cpp_array_record_write / library_write_file, the tool's writer in
    process against C++ (the writer alone, without the tool's process and input).
Each interval pairs the extremes of the two intervals. Above 1, ours is faster.
"""

import argparse

from run_medians import medians, ratio, write_bmf

CPP = "cpp_array_record_write"
OURS = [
    ("tool_over_cpp", "riegeli_tool_write"),
    ("tool_stdin_file_over_cpp", "riegeli_tool_write_stdin_file"),
    ("library_over_cpp", "library_write_file"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("--bench-run", default="target/release/bench-run")
    args = ap.parse_args()
    med = medians(args.bench_run, args.run)
    codecs = sorted({name.rsplit("/", 1)[0] for name in med})
    out = {}
    for codec in codecs:
        cpp = med.get(f"{codec}/{CPP}")
        for name, side in OURS:
            ours = med.get(f"{codec}/{side}")
            if cpp and ours:
                out[f"{codec}/{name}"] = {"ratio": ratio(cpp, ours)}
    write_bmf(out, f"run {args.run} has no riegeli_tool_write medians with a {CPP} beside them")


if __name__ == "__main__":
    main()

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
and, once per codec against the run's `limits/pipe_only` (the input piped into a process that only
reads it):
  * `<codec>/pipe_limit_over_cpp`: cpp_array_record_write / pipe_only: under 1, moving the records
    through the pipe alone takes longer than C++'s whole write, so the piped bar is above what any
    tool fed through a pipe can reach;
  * `<codec>/tool_share_of_pipe_limit`: pipe_only / riegeli_tool_write, how close the piped tool
    comes to that limit (1: as fast as the pipe alone).
Each interval pairs the extremes of the two intervals. Above 1, ours is faster.
"""

import argparse

from run_medians import medians, ratio, write_bmf

CPP = "cpp_array_record_write"
PIPE_ONLY = "limits/pipe_only"
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
    codecs = sorted({name.rsplit("/", 1)[0] for name in med} - {"limits"})
    pipe_only = med.get(PIPE_ONLY)
    out = {}
    for codec in codecs:
        cpp = med.get(f"{codec}/{CPP}")
        for name, side in OURS:
            ours = med.get(f"{codec}/{side}")
            if cpp and ours:
                out[f"{codec}/{name}"] = {"ratio": ratio(cpp, ours)}
        piped = med.get(f"{codec}/riegeli_tool_write")
        if pipe_only and cpp:
            out[f"{codec}/pipe_limit_over_cpp"] = {"ratio": ratio(cpp, pipe_only)}
        if pipe_only and piped:
            out[f"{codec}/tool_share_of_pipe_limit"] = {"ratio": ratio(pipe_only, piped)}
    write_bmf(out, f"run {args.run} has no riegeli_tool_write medians with a {CPP} beside them")


if __name__ == "__main__":
    main()

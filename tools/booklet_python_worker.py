#!/usr/bin/env python3
"""Python booklet 0.12.10 as a `bench-run interleave` worker for seed 003's operations.

Usage (the worker is started by bench-run, not by hand; arguments are key counts, default
10000 50000, and `--trial-ms MS` for the length of a trial, default 50):
    bench-run interleave --suite booklet_ops_interleaved \\
        --worker 'target/release/examples/ops_worker 10000 50000' \\
        --worker 'tools/.venv/bin/python tools/booklet_python_worker.py 10000 50000' \\
        --pair '*/ours=*/python' --at-least 20

Speaks `bench-run-worker/1` (tools/bench_worker.py). Offers `booklet_ops/<op>/<n>/python` for the
ops of booklet_python_bench.py, with its workload and timed regions (setup, such as writing the
file an overwrite starts from, is not timed). Read ops time a pass over one read handle opened at
start-up and warmed by the run's warm-up round. A trial runs as many iterations as fill the trial
length (counted on the benchmark's first trial, then fixed).
"""

import os
import random
import sys
import tempfile
import time

import booklet

from bench_worker import serve
from booklet_python_bench import OPS, WRITE_OPS, dataset, mixed_ops, new_path, run_read_pass, timed_write_op, write_file


class Size:
    """One key count's data, and the file its read ops use."""

    def __init__(self, n, tmpdir):
        rng = random.Random(42)
        self.tmpdir = tmpdir
        self.keys, self.values, self.new_values = dataset(n, rng)
        self.shuffled = list(self.keys)
        rng.shuffle(self.shuffled)
        self.misses = ["!" + k for k in self.keys]
        rng.shuffle(self.misses)
        self.both = self.keys + self.misses
        rng.shuffle(self.both)
        self.mixed = mixed_ops(self.keys, self.values, rng)
        self.read_path = new_path(tmpdir)
        write_file(self.read_path, self.keys, self.values).close()
        self.reader = booklet.open(self.read_path, "r")

    def iteration(self, op):
        """One iteration of `op`: the nanoseconds of its timed region."""
        if op in WRITE_OPS:
            path = new_path(self.tmpdir)
            try:
                return timed_write_op(op, path, self.keys, self.values, self.new_values, self.shuffled, self.mixed)
            finally:
                os.remove(path)
        # random_read_cold: the first pass on a freshly opened handle (opening not timed).
        db = booklet.open(self.read_path, "r") if op == "random_read_cold" else self.reader
        t = time.perf_counter_ns()
        run_read_pass(op, db, self.shuffled, self.misses, self.both)
        elapsed = time.perf_counter_ns() - t
        if db is not self.reader:
            db.close()
        return elapsed


def main(args):
    trial_ns = 50_000_000
    if "--trial-ms" in args:
        at = args.index("--trial-ms")
        trial_ns = int(args[at + 1]) * 1_000_000
        args = args[:at] + args[at + 2:]
    counts = [int(a) for a in args] or [10_000, 50_000]
    with tempfile.TemporaryDirectory() as tmpdir:
        sizes = {n: Size(n, tmpdir) for n in counts}
        benchmarks = [
            {"id": "booklet_ops/%s/%d/python" % (op, n),
             "throughput": {"elements": 2 * n if op == "contains" else n}}
            for n in counts for op in OPS
        ]

        def iteration(bid):
            _, op, n, _ = bid.split("/")
            return sizes[int(n)].iteration(op)

        serve(benchmarks, iteration, trial_ns)
        for size in sizes.values():
            size.reader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Python booklet 0.12.10 as a `bench-run interleave` worker for seed 003's operations.

Usage (the worker is started by bench-run, not by hand; arguments are key counts, default
10000 50000, and `--trial-ms MS` for the length of a trial, default 50):
    bench-run interleave --suite booklet_ops_interleaved \\
        --worker 'target/release/examples/ops_worker 10000 50000' \\
        --worker 'tools/.venv/bin/python tools/booklet_python_worker.py 10000 50000' \\
        --pair '*/ours=*/python' --at-least 20

Speaks `bench-run-worker/1` (JSON lines, see `bench-run interleave --help`). Offers
`booklet_ops/<op>/<n>/python` for the ops of booklet_python_bench.py, with the same workload and
timed regions (setup, such as writing the file an overwrite starts from, is not timed). Read ops
time a pass over one read handle opened at start-up and warmed by the run's warm-up round. A trial
runs as many iterations as fill the trial length (counted on the benchmark's first trial, then fixed).
"""

import json
import os
import random
import sys
import tempfile
import time

import booklet

from booklet_python_bench import OPS, dataset, new_path, open_new, run_read_pass, write_file

PROTOCOL = "bench-run-worker/1"
TRIAL_NS = 50_000_000
READ_OPS = ("random_read", "random_read_miss", "contains", "iter_keys", "iter_values", "iter_items")


class Size:
    """One key count's data, and the files its read ops use."""

    def __init__(self, n, tmpdir):
        rng = random.Random(42)
        self.n = n
        self.tmpdir = tmpdir
        self.keys, self.values, self.new_values = dataset(n, rng)
        self.shuffled = list(self.keys)
        rng.shuffle(self.shuffled)
        self.misses = ["!" + k for k in self.keys]
        rng.shuffle(self.misses)
        self.both = self.keys + self.misses
        rng.shuffle(self.both)
        half = n // 2
        self.mixed = []
        nxt = half
        for _ in range(n):
            if rng.random() < 0.8 or nxt >= n:
                self.mixed.append((False, self.keys[rng.randrange(half)], None))
            else:
                self.mixed.append((True, self.keys[nxt], self.values[nxt]))
                nxt += 1
        self.read_path = new_path(tmpdir)
        write_file(self.read_path, self.keys, self.values).close()
        self.reader = booklet.open(self.read_path, "r")

    def iteration(self, op):
        """One iteration of `op`: the nanoseconds of its timed region."""
        if op in READ_OPS:
            t = time.perf_counter_ns()
            run_read_pass(op, self.reader, self.shuffled, self.misses, self.both)
            return time.perf_counter_ns() - t
        if op == "random_read_cold":
            db = booklet.open(self.read_path, "r")
            t = time.perf_counter_ns()
            run_read_pass(op, db, self.shuffled, self.misses, self.both)
            elapsed = time.perf_counter_ns() - t
            db.close()
            return elapsed
        path = new_path(self.tmpdir)
        try:
            return self.write_iteration(op, path)
        finally:
            os.remove(path)

    def write_iteration(self, op, path):
        keys, values, n = self.keys, self.values, self.n
        if op == "seq_write":
            t = time.perf_counter_ns()
            db = open_new(path)
            for k, v in zip(keys, values):
                db[k] = v
            db.sync()
            db.close()
            return time.perf_counter_ns() - t
        if op == "bulk_update":
            data = dict(zip(keys, values))
            t = time.perf_counter_ns()
            db = open_new(path)
            db.update(data)
            db.sync()
            db.close()
            return time.perf_counter_ns() - t
        if op == "overwrite":
            db = write_file(path, keys, values)
            t = time.perf_counter_ns()
            for k, v in zip(keys, self.new_values):
                db[k] = v
            db.sync()
            elapsed = time.perf_counter_ns() - t
        elif op == "delete":
            db = write_file(path, keys, values)
            t = time.perf_counter_ns()
            for k in self.shuffled:
                del db[k]
            elapsed = time.perf_counter_ns() - t
        elif op == "mixed_rw_80r":
            db = open_new(path)
            for k, v in zip(keys[: n // 2], values[: n // 2]):
                db[k] = v
            db.sync()
            t = time.perf_counter_ns()
            for w, k, v in self.mixed:
                if w:
                    db[k] = v
                else:
                    db.get(k)
            db.sync()
            elapsed = time.perf_counter_ns() - t
        elif op == "prune":
            db = write_file(path, keys, values)
            for k, v in zip(keys[: n // 2], self.new_values[: n // 2]):
                db[k] = v
            db.sync()
            for k in keys[: n // 4]:
                del db[k]
            t = time.perf_counter_ns()
            removed = db.prune()
            elapsed = time.perf_counter_ns() - t
            if removed != n // 2 + n // 4:
                raise RuntimeError("prune removed %d blocks" % removed)
        else:
            raise ValueError("no op %s" % op)
        db.close()
        return elapsed


def main(args):
    trial_ns = TRIAL_NS
    if "--trial-ms" in args:
        at = args.index("--trial-ms")
        trial_ns = int(args[at + 1]) * 1_000_000
        args = args[:at] + args[at + 2:]
    counts = [int(a) for a in args] or [10_000, 50_000]
    with tempfile.TemporaryDirectory() as tmpdir:
        sizes = {n: Size(n, tmpdir) for n in counts}
        benchmarks = []
        for n in counts:
            for op in OPS:
                elements = 2 * n if op == "contains" else n
                benchmarks.append({"id": "booklet_ops/%s/%d/python" % (op, n), "throughput": {"elements": elements}})
        print(json.dumps({"protocol": PROTOCOL, "benchmarks": benchmarks}), flush=True)
        iterations = {}
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                bid = json.loads(line)["run"]
            except (ValueError, KeyError, TypeError):
                print(json.dumps({"id": "", "error": "not a request: %s" % line.strip()}), flush=True)
                continue
            parts = str(bid).split("/")
            size = sizes.get(int(parts[2])) if len(parts) == 4 and parts[2].isdigit() else None
            op = parts[1] if len(parts) == 4 else None
            if size is None or op not in OPS or parts[3] != "python":
                print(json.dumps({"id": bid, "error": "no such benchmark in this worker"}), flush=True)
                continue
            try:
                count = iterations.get(bid)
                if count is None:
                    once = max(1, size.iteration(op))
                    count = iterations[bid] = max(1, min(10_000, trial_ns // once))
                ns = sum(size.iteration(op) for _ in range(count))
                reply = {"id": bid, "iters": count, "ns": max(1, ns)}
            except Exception as e:  # reported to bench-run as the trial's failure
                reply = {"id": bid, "error": repr(e)}
            print(json.dumps(reply), flush=True)
        for size in sizes.values():
            size.reader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

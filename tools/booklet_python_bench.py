#!/usr/bin/env python3
"""Seed 003's booklet operations on Python booklet 0.12.10, as BMF JSON (the anchor of booklet_ops).

Usage: tools/.venv/bin/python tools/booklet_python_bench.py [--sizes 1000,10000,50000] [--repeats 5] [--out FILE]

Same workload and timed regions as upstream benchmarks/bench.py and readers/booklet/benches/booklet_ops.rs:
keys are 12 random lowercase letters, values 200 random [A-Za-z0-9] characters, str/str serializers,
init_timestamps=False, default 12007 buckets and 4 MiB buffer, files in the system temp directory.
Read ops time one pass over a handle that has already done the same pass, like criterion's warmed-up
iterations; `random_read_cold` times the first pass on a freshly opened handle (as the Rust benchmark's
variant of that name, whose time includes building its key table).
Every op is run `repeats` times on fresh data; the median time over n operations gives
  latency    = median seconds / n, in ns per operation (lower/upper: fastest/slowest repeat)
  throughput = n / median seconds, in operations per second
named "booklet_ops/<op>/<n>" like the criterion benchmark ids, so ratios read directly.
`contains` counts 2n operations (n hits + n misses).
"""

import argparse
import json
import os
import random
import statistics
import string
import sys
import tempfile
import time

import booklet

LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits


def dataset(n, rng):
    keys = set()
    while len(keys) < n:
        keys.add("".join(rng.choices(LOWER, k=12)))
    keys = list(keys)
    values = ["".join(rng.choices(ALNUM, k=200)) for _ in range(n)]
    new_values = ["".join(rng.choices(ALNUM, k=200)) for _ in range(n)]
    return keys, values, new_values


def new_path(tmpdir):
    fd, path = tempfile.mkstemp(suffix=".blt", dir=tmpdir)
    os.close(fd)
    return path


def open_new(path):
    return booklet.open(path, "n", key_serializer="str", value_serializer="str", init_timestamps=False)


def write_file(path, keys, values):
    db = open_new(path)
    for k, v in zip(keys, values):
        db[k] = v
    db.sync()
    return db


def run_read_pass(op, db, shuffled, misses, both):
    """One pass of a read op over an open handle; returns the operations counted."""
    if op in ("random_read", "random_read_cold"):
        for k in shuffled:
            db[k]
        return len(shuffled)
    if op == "random_read_miss":
        for k in misses:
            db.get(k)
        return len(misses)
    if op == "contains":
        for k in both:
            k in db
        return len(both)
    if op == "iter_keys":
        for _ in db.keys():
            pass
    elif op == "iter_values":
        for _ in db.values():
            pass
    else:
        for _ in db.items():
            pass
    return len(shuffled)


def mixed_ops(keys, values, rng):
    """mixed_rw_80r's operations, (write?, key, value): 80 % reads of the first half of the keys
    (which its setup writes), 20 % writes of new keys."""
    n = len(keys)
    half = n // 2
    ops = []
    nxt = half
    for _ in range(n):
        if rng.random() < 0.8 or nxt >= n:
            ops.append((False, keys[rng.randrange(half)], None))
        else:
            ops.append((True, keys[nxt], values[nxt]))
            nxt += 1
    return ops


WRITE_OPS = ("seq_write", "bulk_update", "overwrite", "delete", "mixed_rw_80r", "prune")


def timed_write_op(op, path, keys, values, new_values, shuffled, mixed):
    """One run of write op `op` on a new file at `path`; returns the nanoseconds of its timed
    region (setup, such as writing the file an overwrite starts from, and closing are not timed)."""
    n = len(keys)
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
        for k, v in zip(keys, new_values):
            db[k] = v
        db.sync()
        elapsed = time.perf_counter_ns() - t
    elif op == "delete":
        db = write_file(path, keys, values)
        t = time.perf_counter_ns()
        for k in shuffled:
            del db[k]
        elapsed = time.perf_counter_ns() - t
    elif op == "mixed_rw_80r":
        db = open_new(path)
        for k, v in zip(keys[: n // 2], values[: n // 2]):
            db[k] = v
        db.sync()
        t = time.perf_counter_ns()
        for w, k, v in mixed:
            if w:
                db[k] = v
            else:
                db.get(k)
        db.sync()
        elapsed = time.perf_counter_ns() - t
    elif op == "prune":
        db = write_file(path, keys, values)
        for k, v in zip(keys[: n // 2], new_values[: n // 2]):
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
        raise ValueError(op)
    db.close()
    return elapsed


def run_op(op, n, rng, tmpdir):
    """Return (elapsed seconds, operations counted) of one run of `op`."""
    if op not in OPS:
        raise ValueError(op)
    keys, values, new_values = dataset(n, rng)
    path = new_path(tmpdir)
    try:
        if op in WRITE_OPS:
            shuffled = list(keys)
            rng.shuffle(shuffled)
            mixed = mixed_ops(keys, values, rng) if op == "mixed_rw_80r" else None
            return timed_write_op(op, path, keys, values, new_values, shuffled, mixed) / 1e9, n
        write_file(path, keys, values).close()
        shuffled = list(keys)
        rng.shuffle(shuffled)
        misses = ["!" + k for k in keys]
        rng.shuffle(misses)
        both = keys + misses
        rng.shuffle(both)
        db = booklet.open(path, "r")
        try:
            if op != "random_read_cold":
                # The criterion benchmark times passes over a handle that has already done the
                # same pass (warm-up): time the second pass here too. `random_read_cold` is
                # the first pass on a freshly opened handle, on both sides.
                run_read_pass(op, db, shuffled, misses, both)
            t = time.perf_counter()
            count = run_read_pass(op, db, shuffled, misses, both)
            return time.perf_counter() - t, count
        finally:
            db.close()
    finally:
        os.remove(path)


OPS = ["seq_write", "bulk_update", "random_read", "random_read_cold", "random_read_miss", "contains", "iter_keys",
       "iter_values", "iter_items", "overwrite", "delete", "mixed_rw_80r", "prune"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    rng = random.Random(42)
    out = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        for n in [int(s) for s in args.sizes.split(",")]:
            for op in args.ops.split(","):
                runs = [run_op(op, n, rng, tmpdir) for _ in range(args.repeats)]
                count = runs[0][1]
                per_op = sorted(t / count for t, _ in runs)
                med = statistics.median(per_op)
                out[f"booklet_ops/{op}/{n}"] = {
                    "latency": {"value": med * 1e9, "lower_value": per_op[0] * 1e9, "upper_value": per_op[-1] * 1e9},
                    "throughput": {"value": 1 / med, "lower_value": 1 / per_op[-1], "upper_value": 1 / per_op[0]},
                }
                print(f"{op:>18} n={n:>6}: {1 / med:>12,.0f} ops/s", file=sys.stderr)
    text = json.dumps(out, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

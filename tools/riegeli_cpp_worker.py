#!/usr/bin/env python3
"""C++ riegeli as a `bench-run interleave` worker for the head_to_head cells.

Usage (the worker is started by bench-run, not by hand; CELL patterns (fnmatch, e.g.
`simple_*_large`) limit the cells it sets up):
    bench-run interleave --suite head_to_head_interleaved \\
        --worker target/release/examples/h2h_worker \\
        --worker 'tools/.venv/bin/python tools/riegeli_cpp_worker.py' \\
        --pair '*/ours_write=*/cpp_write' --pair '*/ours_read=*/cpp_read'
    riegeli_cpp_worker.py [CELL...]

Speaks `bench-run-worker/1` (JSON lines, see `bench-run interleave --help`). Offers
`<config>_<size>/cpp_write` and `<config>_<size>/cpp_read` for seed 004's 12 head_to_head cells, on
the records of riegeli_cpp_bench.py (byte-identical to the Rust suite's), measured as there: a write
is ArrayRecordWriter open, every record, close, into a file in /dev/shm; a read is
ArrayRecordReader("max_parallelism:1").read_all() of a file written at setup. A trial runs as many
iterations as fill 50 ms (counted on the benchmark's first trial, then fixed).
"""

import fnmatch
import os
import sys
import tempfile

from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

from bench_worker import serve, timed
from riegeli_cpp_bench import CHUNK_SIZE, HEAD_TO_HEAD_CONFIGS, HEAD_TO_HEAD_SIZES, NUM_RECORDS, json_record


def cell_ops(name, options, records, tmpdir):
    size = len(records[0])
    group = max(1, CHUNK_SIZE // (size + 8))
    opts = "group_size:%d,%s" % (group, options)
    write_path = os.path.join(tmpdir, name + ".write.array_record")
    read_path = os.path.join(tmpdir, name + ".read.array_record")

    def write_to(path):
        w = ArrayRecordWriter(path, opts)
        for r in records:
            w.write(r)
        w.close()

    def read():
        rd = ArrayRecordReader(read_path, "max_parallelism:1")
        got = rd.read_all()
        rd.close()
        if len(got) != len(records):
            raise RuntimeError("C++ read %d of %d records" % (len(got), len(records)))

    write_to(read_path)
    if list(ArrayRecordReader(read_path, "max_parallelism:1").read_all()) != records:
        raise SystemExit("C++ did not read back %s" % name)
    return {"cpp_write": lambda: write_to(write_path), "cpp_read": read}


def main(patterns):
    ops = {}
    benchmarks = []
    tmp_root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=tmp_root) as tmpdir:
        for size_name, size in HEAD_TO_HEAD_SIZES:
            cells = [("%s_%s" % (name, size_name), options) for name, options in HEAD_TO_HEAD_CONFIGS]
            cells = [c for c in cells if not patterns or any(fnmatch.fnmatchcase(c[0], p) for p in patterns)]
            if not cells:
                continue
            records = [json_record(i, size) for i in range(NUM_RECORDS)]
            nbytes = sum(len(r) for r in records)
            for cell, options in cells:
                for op, fn in cell_ops(cell, options, records, tmpdir).items():
                    bid = "%s/%s" % (cell, op)
                    ops[bid] = fn
                    benchmarks.append({"id": bid, "throughput": {"bytes": nbytes}})
        serve(benchmarks, lambda bid: timed(ops[bid]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

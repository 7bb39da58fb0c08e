#!/usr/bin/env python3
"""C++ riegeli as a `bench-run interleave` worker for the head_to_head cells, and for the
`riegeli_tool_write` suite's C++ side.

Usage (the worker is started by bench-run or by a bench, not by hand; CELL patterns (fnmatch,
e.g. `simple_*_large`) limit the cells it sets up):
    bench-run interleave --suite head_to_head_interleaved \\
        --worker target/release/examples/h2h_worker \\
        --worker 'tools/.venv/bin/python tools/riegeli_cpp_worker.py' \\
        --pair '*/ours_write=*/cpp_write' --pair '*/ours_read=*/cpp_read'
    riegeli_cpp_worker.py [CELL...]
    riegeli_cpp_worker.py --tool-write INPUT DIR [CELL...]

Speaks `bench-run-worker/1` (JSON lines, see `bench-run interleave --help`). Offers
`<config>_<size>/cpp_write` and `<config>_<size>/cpp_read` for seed 004's 12 head_to_head cells, on
the records of riegeli_cpp_bench.py (byte-identical to the Rust suite's), measured as there: a write
is ArrayRecordWriter open, every record, close, into a file in /dev/shm; a read is
ArrayRecordReader("max_parallelism:1").read_all() of a file written at setup. A trial runs as many
iterations as fill 50 ms (counted on the benchmark's first trial, then fixed).

With `--tool-write`, it offers `<codec>/cpp_array_record_write` for each codec of
readers/riegeli/benches/riegeli_tool_write.rs instead: ArrayRecordWriter with the option string
`group_size:64,<codec>` (the one `riegeli-tool write --array-record` is given there) writing the
records of INPUT (`riegeli-tool write`'s input: 8-byte little-endian length, then the bytes) to
`DIR/<codec>.cpp.array_record`, opened, every record written, closed. The file is written once
at setup and read back by C++ (the bench reads it with ours), then rewritten by every iteration.
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


TOOL_WRITE_CODECS = [
    ("uncompressed", "uncompressed"),
    ("zstd_3", "zstd:3"),
    ("brotli_6", "brotli:6"),
    ("snappy", "snappy"),
]
TOOL_WRITE_GROUP_SIZE = 64


def len_prefixed_records(path):
    """The records of a `riegeli-tool write` input file."""
    with open(path, "rb") as f:
        data = f.read()
    records = []
    pos = 0
    while pos < len(data):
        if pos + 8 > len(data):
            raise SystemExit("%s ends inside the length of record %d" % (path, len(records)))
        n = int.from_bytes(data[pos:pos + 8], "little")
        if pos + 8 + n > len(data):
            raise SystemExit("%s ends inside record %d" % (path, len(records)))
        records.append(data[pos + 8:pos + 8 + n])
        pos += 8 + n
    return records


def tool_write_main(input_path, out_dir, patterns):
    records = len_prefixed_records(input_path)
    nbytes = sum(len(r) for r in records)
    ops = {}
    benchmarks = []
    for codec, option in TOOL_WRITE_CODECS:
        if patterns and not any(fnmatch.fnmatchcase(codec, p) for p in patterns):
            continue
        opts = "group_size:%d,%s" % (TOOL_WRITE_GROUP_SIZE, option)
        path = os.path.join(out_dir, codec + ".cpp.array_record")

        def write(opts=opts, path=path):
            w = ArrayRecordWriter(path, opts)
            for r in records:
                w.write(r)
            w.close()

        write()
        if list(ArrayRecordReader(path, "max_parallelism:1").read_all()) != records:
            raise SystemExit("C++ did not read back %s" % path)
        bid = codec + "/cpp_array_record_write"
        ops[bid] = write
        benchmarks.append({"id": bid, "throughput": {"bytes": nbytes}})
    serve(benchmarks, lambda bid: timed(ops[bid]))
    return 0


def main(patterns):
    if patterns[:1] == ["--tool-write"]:
        if len(patterns) < 3:
            sys.stderr.write(__doc__)
            return 2
        return tool_write_main(patterns[1], patterns[2], patterns[3:])
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

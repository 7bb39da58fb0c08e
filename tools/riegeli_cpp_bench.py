#!/usr/bin/env python3
"""C++ riegeli speed anchor for the `throughput` and `head_to_head` suites of readers/riegeli.

Usage:
    riegeli_cpp_bench.py throughput OUT.json [--repeats N] [--cells NAME,...] [--sizes SIZES.json]
    riegeli_cpp_bench.py head_to_head OUT.json [--repeats N] [--cells NAME,...] [--sizes SIZES.json]

`--cells` measures only the named configurations (`simple_zstd_3_small`, ...); `--sizes` also writes
{"<config>": file size in bytes} of each file C++ wrote, for the compression ratios of the Rust
`head_to_head` bench's summary table.

Writes Bencher Metric Format (BMF) JSON for `bench-run import bmf --suite <suite>_anchor OUT.json`:
    {"<config>/cpp_write": {"latency": {...ns...}, "throughput": {...bytes/s...}}, ...}
with the same configuration names and byte-identical records as the Rust benches (benches/common/mod.rs):
`throughput` uses 10,000 proto-like 1 KiB records; `head_to_head` 10,000 JSON-like records of 100 B
(`<config>_small`) and 10 KiB (`<config>_large`).

C++ riegeli is driven through the `array-record` wheel (ArrayRecordWriter / ArrayRecordReader), the only
C++ riegeli build on PyPI. Chunks are made the size of the Rust benches' 1 MiB chunks with
`group_size = 1 MiB // (record size + 8)`. Files go to /dev/shm (memory), like the Rust benches' buffers.
Measured per iteration: write = open, write every record, close; read = open, read_all, close.
`cpp_read` uses `max_parallelism:1` (one thread, like ours); `cpp_read_parallel` uses the wheel's default
read-ahead thread pool. The Python call per record is part of the measured time (about 0.1-0.3 us per
record), which matters for 100 B records only. Latency is the median of N iterations after one warm-up,
with the minimum and maximum as bounds; throughput is record bytes per second at the median.
"""

import json
import os
import sys
import tempfile
import time

from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

NUM_RECORDS = 10_000
CHUNK_SIZE = 1 << 20

THROUGHPUT_CONFIGS = [
    ("simple_none", "uncompressed"),
    ("simple_brotli_6", "brotli:6"),
    ("simple_zstd_3", "zstd:3"),
    ("simple_snappy", "snappy"),
    ("transpose_none", "transpose,uncompressed"),
    ("transpose_brotli_6", "transpose,brotli:6"),
    ("transpose_zstd_3", "transpose,zstd:3"),
    ("transpose_snappy", "transpose,snappy"),
]
HEAD_TO_HEAD_CONFIGS = THROUGHPUT_CONFIGS[:3] + THROUGHPUT_CONFIGS[4:7]
HEAD_TO_HEAD_SIZES = [("small", 100), ("large", 10 * 1024)]

TEXT = b"The quick brown fox jumps over the lazy dog. "


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def proto_record(i, size):
    head = b"\x08" + varint(i) + b"\x12"
    n = size - len(head) - 1
    if n >= 128:
        n = size - len(head) - 2
    pad = bytes(TEXT[(k + i) % len(TEXT)] for k in range(n))
    return head + varint(n) + pad


def json_record(i, size):
    r = bytearray(b'{"id":%d,"name":"record-%d","value":%d}' % (i, i, (i * 7919) % 100003))
    k = 0
    while len(r) < size:
        x = (i * 2654435761 + k * 40503) & 0xFFFFFFFF
        r.append(((x >> 13) & 0x0F) | 0x40)
        k += 1
    return bytes(r[:size])


def measure(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def entry(median, lo, hi, nbytes):
    return {
        "latency": {"value": float(median), "lower_value": float(lo), "upper_value": float(hi), "unit": "ns"},
        "throughput": {
            "value": nbytes * 1e9 / median,
            "lower_value": nbytes * 1e9 / hi,
            "upper_value": nbytes * 1e9 / lo,
            "unit": "bytes/s",
            "direction": "higher_is_better",
        },
    }


def bench_cell(name, options, records, repeats, out, tmpdir, sizes):
    nbytes = sum(len(r) for r in records)
    size = len(records[0])
    group = max(1, CHUNK_SIZE // (size + 8))
    opts = "group_size:%d,%s" % (group, options)
    path = os.path.join(tmpdir, name.replace("/", "_") + ".array_record")

    def write():
        w = ArrayRecordWriter(path, opts)
        for r in records:
            w.write(r)
        w.close()

    def read_with(reader_options):
        def read():
            rd = ArrayRecordReader(path, reader_options)
            got = rd.read_all()
            rd.close()
            if len(got) != len(records):
                raise SystemExit("C++ read %d of %d records" % (len(got), len(records)))
        return read

    out[name + "/cpp_write"] = entry(*measure(write, repeats), nbytes)
    check = ArrayRecordReader(path, "max_parallelism:1").read_all()
    if list(check) != records:
        raise SystemExit("C++ did not read back %s" % name)
    out[name + "/cpp_read"] = entry(*measure(read_with("max_parallelism:1"), repeats), nbytes)
    out[name + "/cpp_read_parallel"] = entry(*measure(read_with(""), repeats), nbytes)
    sizes[name] = os.path.getsize(path)
    os.remove(path)
    sys.stderr.write("%s: write %.0f MB/s, read %.0f MB/s, read_parallel %.0f MB/s\n" % (
        name, out[name + "/cpp_write"]["throughput"]["value"] / 1e6,
        out[name + "/cpp_read"]["throughput"]["value"] / 1e6,
        out[name + "/cpp_read_parallel"]["throughput"]["value"] / 1e6))


def main(argv):
    if len(argv) < 3 or argv[1] not in ("throughput", "head_to_head"):
        sys.stderr.write(__doc__)
        return 2
    repeats, cells, sizes_path = 10, None, None
    rest = argv[3:]
    while rest:
        if len(rest) < 2 or rest[0] not in ("--repeats", "--cells", "--sizes"):
            sys.stderr.write(__doc__)
            return 2
        if rest[0] == "--repeats":
            repeats = int(rest[1])
        elif rest[0] == "--cells":
            cells = set(c for c in rest[1].split(",") if c)
        else:
            sizes_path = rest[1]
        rest = rest[2:]
    wanted = lambda name: cells is None or name in cells
    out, sizes = {}, {}
    tmp_root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=tmp_root) as tmpdir:
        if argv[1] == "throughput":
            records = [proto_record(i, 1024) for i in range(NUM_RECORDS)]
            for name, options in THROUGHPUT_CONFIGS:
                if wanted(name):
                    bench_cell(name, options, records, repeats, out, tmpdir, sizes)
        else:
            for size_name, size in HEAD_TO_HEAD_SIZES:
                names = [("%s_%s" % (name, size_name), options) for name, options in HEAD_TO_HEAD_CONFIGS]
                names = [(n, o) for n, o in names if wanted(n)]
                if not names:
                    continue
                records = [json_record(i, size) for i in range(NUM_RECORDS)]
                for name, options in names:
                    bench_cell(name, options, records, repeats, out, tmpdir, sizes)
    with open(argv[2], "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    if sizes_path:
        with open(sizes_path, "w") as f:
            json.dump(sizes, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

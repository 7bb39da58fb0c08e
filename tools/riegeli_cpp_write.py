#!/usr/bin/env python3
"""C++ `ArrayRecordWriter` timed on the records of a `riegeli-tool write` input file: the C++ side
of readers/riegeli/benches/riegeli_tool_write.rs.

Usage:
    riegeli_cpp_write.py INPUT OUT OPTIONS ITERS [--check]

Reads INPUT (records as `riegeli-tool write` reads them: an 8-byte little-endian length, then the
bytes), then writes them to OUT with C++ `ArrayRecordWriter(OUT, OPTIONS)` (the pinned
`array-record` wheel): once untimed, so that the timed writes find the process warm as a writer
in a long-running program does, then ITERS times, each timed from opening the writer to closing
it (every record written in between). Prints {"ns": [one per timed write]} as JSON. With
--check, reads OUT back with C++ `ArrayRecordReader` after the untimed write and exits 1 unless
it gives exactly the input records.

One process per call: the bench runs one per criterion sample, so that the process ends (and is
counted as the bench's own CPU by bench-run's busy check) within the benchmark it measures.
Python's startup and the reading of INPUT are not timed; the Python call per record is (about
0.3 us a record, 3 ms for 10,000).
"""

import json
import sys
import time

from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter


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


def write(path, options, records):
    w = ArrayRecordWriter(path, options)
    for r in records:
        w.write(r)
    w.close()


def main(argv):
    args = [a for a in argv[1:] if a != "--check"]
    if len(args) != 4 or not args[3].isdigit():
        sys.stderr.write(__doc__)
        return 2
    input_path, out, options, iters = args[0], args[1], args[2], int(args[3])
    records = len_prefixed_records(input_path)
    write(out, options, records)
    if "--check" in argv:
        reader = ArrayRecordReader(out, "max_parallelism:1")
        got = reader.read_all() if reader.num_records() else []
        reader.close()
        if list(got) != records:
            sys.stderr.write("C++ did not read back the %d records of %s\n" % (len(records), out))
            return 1
    ns = []
    for _ in range(iters):
        t0 = time.perf_counter_ns()
        write(out, options, records)
        ns.append(time.perf_counter_ns() - t0)
    json.dump({"ns": ns}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

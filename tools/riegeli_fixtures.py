#!/usr/bin/env python3
"""Golden Riegeli/records files written by C++ riegeli (the `array-record` wheel), and a reader for interop tests.

Usage:
    riegeli_fixtures.py write OUT_DIR     write every fixture (FILE.riegeli.zst) plus expected.json
    riegeli_fixtures.py read FILE [--indices I,J,...]
                                          read FILE with the C++ ArrayRecordReader and print JSON:
                                          {"num_records", "records_b64", "random_b64", "writer_options"}
    riegeli_fixtures.py digest FILE       read FILE with the C++ ArrayRecordReader and print JSON:
                                          {"num_records", "sha256", "writer_options"}, the SHA-256 of
                                          the records as `riegeli-tool cat` prints them (8-byte
                                          little-endian length, then the bytes), for large files

The wheel writes the ArrayRecord layout (signature, data chunks, footer chunk, postscript chunk), which is a
valid Riegeli/records file; plain Riegeli readers see the data records followed by the footer and postscript
records. Each fixture is stored zstd-compressed (`.riegeli.zst`): the files are multiples of 64 KiB and mostly
zero padding, so this keeps the repository small. `expected.json` holds, per fixture, the options string, the
records that C++ `ArrayRecordReader.read_all()` returns (base64; for fixtures holding more than 40 kB of
records, their lengths and SHA-256 digests instead; `same_records_as` names an earlier fixture with the very
same records) and the writer options string C++ reports.

Everything is deterministic (fixed seeds), so re-running the script reproduces the same records; the bytes of
the compressed streams depend only on the pinned wheel (array-record 0.8.6).
"""

import base64
import hashlib
import json
import os
import random
import sys

from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire):
    return varint((field << 3) | wire)


def proto_message(rng, depth, field_base=1, num_fields=None):
    """A random but valid protobuf message: varints, fixed32/64, strings, submessages and groups."""
    out = bytearray()
    n = num_fields if num_fields is not None else rng.randint(0, 6)
    for _ in range(n):
        field = field_base + rng.randint(0, 9)
        kind = rng.randint(0, 9)
        if kind <= 2:
            # Varints of every length: inline candidates (0..3), small, large, the largest.
            value = rng.choice([0, 1, 2, 3, 4, 127, 128, 300, 2**21, 2**35 + 7, 2**63 - 1, 2**64 - 1,
                                rng.getrandbits(rng.randint(1, 64))])
            out += tag(field, 0) + varint(value)
        elif kind == 3:
            out += tag(field, 5) + rng.getrandbits(32).to_bytes(4, "little")
        elif kind == 4:
            out += tag(field, 1) + rng.getrandbits(64).to_bytes(8, "little")
        elif kind <= 6:
            s = bytes(rng.choice(b"abcdefghij \x00\xff\x07") for _ in range(rng.randint(0, 40)))
            out += tag(field, 2) + varint(len(s)) + s
        elif kind <= 8 and depth < 4:
            sub = proto_message(rng, depth + 1)
            out += tag(field, 2) + varint(len(sub)) + sub
        elif depth < 4:
            sub = proto_message(rng, depth + 1)
            out += tag(field, 3) + sub + tag(field, 4)
    return bytes(out)


def mixed_records(seed, count, big=0):
    """Proto-like records mixed with non-proto, empty and almost-proto records."""
    rng = random.Random(seed)
    records = []
    for i in range(count):
        kind = rng.randint(0, 9)
        if kind <= 5:
            rec = proto_message(rng, 0)
        elif kind == 6:
            rec = b""
        elif kind == 7:
            # Not a proto: text, or a non-canonical varint, or a field number 0.
            rec = rng.choice([
                ("record %d: plain text" % i).encode(),
                b"\x08\x80\x00",
                b"\x00\x01",
                bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 30))),
            ])
        elif kind == 8:
            # The example of the reference: a string that happens to parse as a submessage.
            rec = b"\x08\x96\x01\x12\x02\x68\x69\x1a\x03\x08\x01\x07"
        else:
            rec = tag(1, 0) + varint(i) + tag(2, 2) + varint(10) + b"0123456789"
        if big:
            pad = (b"riegeli-%06d|" % i) * (big // 15)
            rec = tag(1, 0) + varint(i) + tag(15, 2) + varint(len(pad)) + pad + rec
        records.append(rec)
    return records


def many_fields_records(seed, count):
    """Records with about 150 distinct field numbers and repetitive order: many states, NoOp trees,
    private lists and implicit transitions in the C++ transpose encoder."""
    rng = random.Random(seed)
    records = []
    for i in range(count):
        out = bytearray()
        base = 1 + (i % 3) * 50
        for f in range(base, base + rng.randint(20, 50)):
            out += tag(f, 0) + varint(rng.choice([1, 200, f * 1000, i]))
        if i % 7 == 0:
            sub = tag(3, 2) + varint(5) + b"hello"
            out += tag(200, 2) + varint(len(sub)) + sub
        records.append(bytes(out))
    return records


def text_records(seed, count, size):
    rng = random.Random(seed)
    words = [b"lorem", b"ipsum", b"dolor", b"sit", b"amet", b"riegeli", b"records", b"chunk", b"block"]
    records = []
    for i in range(count):
        out = bytearray(b"%d:" % i)
        while len(out) < size:
            out += rng.choice(words) + b" "
        records.append(bytes(out[:size]))
    return records


def random_records(seed, count, size):
    rng = random.Random(seed)
    return [bytes(rng.getrandbits(8) for _ in range(size)) for _ in range(count)]


# name -> (options, records)
def fixtures():
    mixed = mixed_records(1, 300)
    return {
        "simple_uncompressed_g1": ("group_size:1,uncompressed", mixed[:60]),
        "simple_uncompressed_g64": ("group_size:64,uncompressed", mixed),
        "simple_brotli6": ("group_size:32,brotli:6", mixed),
        "simple_brotli0_window": ("group_size:100,brotli:0,window_log:18", mixed),
        "simple_zstd3": ("group_size:32,zstd:3", mixed),
        "simple_zstd_neg": ("group_size:50,zstd:-5", mixed),
        "simple_snappy": ("group_size:32,snappy", mixed),
        "simple_default": ("group_size:20", mixed[:100]),
        "transpose_uncompressed": ("group_size:64,transpose,uncompressed", mixed),
        "transpose_brotli6": ("group_size:100,transpose,brotli:6", mixed),
        "transpose_zstd3": ("group_size:100,transpose,zstd:3", mixed),
        "transpose_snappy": ("group_size:100,transpose,snappy", mixed),
        "transpose_bucket_auto": ("group_size:300,transpose,zstd:1,transpose_bucket_size:auto", mixed),
        "transpose_g1": ("group_size:1,transpose,zstd:3", mixed[:40]),
        "transpose_many_fields": ("group_size:400,transpose,zstd:3", many_fields_records(2, 400)),
        "transpose_many_fields_uncompressed": ("group_size:250,transpose,uncompressed",
                                               many_fields_records(3, 250)),
        # Chunks spanning several 64 KiB blocks (chunk headers and data interrupted by block headers).
        "cross_blocks_uncompressed": ("group_size:7,uncompressed", text_records(4, 40, 9000)),
        "cross_blocks_transpose": ("group_size:9,transpose,uncompressed", mixed_records(5, 30, big=8000)),
        "cross_blocks_snappy_random": ("group_size:12,snappy", random_records(6, 10, 7000)),
        "cross_blocks_transpose_zstd_random": ("group_size:6,transpose,zstd:3",
                                               [r[:1] + b"\x0a" + varint(len(r) - 1) + r[1:]
                                                for r in random_records(7, 6, 12000)]),
        "padded_blocks": ("group_size:10,snappy,pad_to_block_boundary:true", mixed[:25]),
        "empty_file": ("group_size:5,zstd:3", []),
        "only_empty_records": ("group_size:1000,transpose,brotli:6", [b""] * 1000),
    }


def write_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    expected = {}
    seen = []
    for name, (options, records) in sorted(fixtures().items()):
        raw_path = os.path.join(out_dir, name + ".riegeli")
        writer = ArrayRecordWriter(raw_path, options)
        for rec in records:
            writer.write(rec)
        writer.close()
        reader = ArrayRecordReader(raw_path)
        got = reader.read_all() if reader.num_records() else []
        if list(got) != records:
            raise SystemExit("C++ did not read back %s" % name)
        expected[name] = {
            "options": options,
            "num_records": reader.num_records(),
            "writer_options": reader.writer_options_string(),
            "file_size": os.path.getsize(raw_path),
        }
        same = [other for other, recs in seen if recs == got]
        seen.append((name, got))
        if same:
            # Identical records (checked above against what C++ read) are stored once.
            expected[name]["same_records_as"] = same[0]
        elif sum(len(r) for r in got) <= 40000:
            expected[name]["records_b64"] = [base64.b64encode(r).decode() for r in got]
        else:
            expected[name]["records_len"] = [len(r) for r in got]
            expected[name]["records_sha256"] = [hashlib.sha256(r).hexdigest() for r in got]
        reader.close()
        # zstd -19 --rm: the stored fixture is NAME.riegeli.zst
        if os.system("zstd -q -19 -f --rm %s -o %s.zst" % (raw_path, raw_path)) != 0:
            raise SystemExit("zstd failed")
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
        f.write("\n")


def read(path, indices):
    reader = ArrayRecordReader(path)
    n = reader.num_records()
    records = reader.read_all() if n else []
    out = {
        "num_records": n,
        "writer_options": reader.writer_options_string(),
        "records_b64": [base64.b64encode(r).decode() for r in records],
    }
    if indices:
        out["random_b64"] = [base64.b64encode(r).decode() for r in reader.read(indices)]
    reader.close()
    json.dump(out, sys.stdout)


def digest(path):
    reader = ArrayRecordReader(path)
    n = reader.num_records()
    h = hashlib.sha256()
    for r in reader.read_all() if n else []:
        h.update(len(r).to_bytes(8, "little"))
        h.update(r)
    out = {"num_records": n, "sha256": h.hexdigest(), "writer_options": reader.writer_options_string()}
    reader.close()
    json.dump(out, sys.stdout)


def main(argv):
    if len(argv) >= 3 and argv[1] == "write":
        write_all(argv[2])
    elif len(argv) >= 3 and argv[1] == "read":
        indices = []
        if len(argv) >= 5 and argv[3] == "--indices" and argv[4]:
            indices = [int(x) for x in argv[4].split(",")]
        read(argv[2], indices)
    elif len(argv) == 3 and argv[1] == "digest":
        digest(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

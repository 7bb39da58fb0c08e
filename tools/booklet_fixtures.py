#!/usr/bin/env python3
"""Write the booklet interop fixtures with the real Python booklet (PyPI booklet==0.12.10).

Usage: tools/.venv/bin/python tools/booklet_fixtures.py [OUT_DIR [NAME...]]
(default OUT_DIR: readers/booklet/tests/fixtures; NAMEs: only these fixture functions, e.g.
`typed_values unsupported_numpy`; the typed fixtures need msgpack and zstandard in the venv)

Every fixture FILE.blt comes with FILE.json: what Python booklet reads back from the file
after it was closed (header facts, every item in iteration order with the stored key and
value bytes in base64, item timestamps, keys that must be missing). The Rust tests read
each .blt and compare against the .json.

Item timestamps are passed explicitly so the files are reproducible apart from the
per-file UUID and the file-creation timestamp (header bytes 42..65).
"""

import base64
import gc
import json
import os
import sys

import booklet

T0 = 1_700_000_000_000_000  # 2023-11-14T22:13:20Z in microseconds


def b64(b):
    return base64.b64encode(b).decode()


def describe(path, fixed=False, flag="r"):
    """Read a closed file back with Python booklet and return the expected-values document."""
    if fixed:
        db = booklet.FixedLengthValue(path, flag)
    else:
        db = booklet.open(path, flag)
    try:
        ks = db._key_serializer
        vs = db._value_serializer
        with open(path, "rb") as f:
            head = f.read(200)
        doc = {
            "file": os.path.basename(path),
            "kind": "fixed" if fixed else "variable",
            "version": int.from_bytes(head[16:18], "little"),
            "n_buckets": int.from_bytes(head[21:25], "little"),
            "value_serializer_code": int.from_bytes(head[29:31], "little"),
            "key_serializer_code": int.from_bytes(head[31:33], "little"),
            "n_keys_header": int.from_bytes(head[33:37], "little"),
            "value_len": int.from_bytes(head[37:41], "little"),
            "timestamps": bool(head[41]),
            "len": len(db),
            "file_size": os.path.getsize(path),
            "items": [],
        }
        ts_by_key = {}
        if not fixed and head[41]:
            for k, ts in db.timestamps():
                ts_by_key[ks.dumps(k)] = ts
        for k, v in db.items():
            kb = ks.dumps(k)
            vb = vs.dumps(v)
            item = {"key_b64": b64(kb), "value_b64": b64(vb)}
            if isinstance(k, str):
                item["key"] = k
            if doc["value_serializer_code"] in (2, 4):
                item["value"] = v
            if kb in ts_by_key:
                item["timestamp"] = ts_by_key[kb]
            doc["items"].append(item)
        if not fixed:
            md = db.get_metadata()
            if md is not None:
                doc["metadata_json"] = md
        return doc
    finally:
        db.close()


def write_doc(out_dir, name, doc, missing=()):
    doc["missing_b64"] = [b64(m) for m in missing]
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def fresh(out_dir, name):
    path = os.path.join(out_dir, name + ".blt")
    if os.path.exists(path):
        os.remove(path)
    return path


def str_edits(out_dir):
    """str/str with timestamps, 7 buckets: overwrites, deletes, an auto-reindex 7 -> 12007, metadata."""
    name = "str_edits"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="str", value_serializer="str", n_buckets=7) as db:
        for i in range(12):
            db.set(f"key{i:02d}", f"value {i} " + "x" * i, timestamp=T0 + i)
        db.sync()
        db.set("key03", "overwritten three", timestamp=T0 + 100)
        db.set("key05", "overwritten five", timestamp=T0 + 101)
        db.set("key05", "overwritten five twice (same buffer)", timestamp=T0 + 102)
        del db["key07"]
        db.set("unicode ключ ✓", "значение ✓ 🎉", timestamp=T0 + 103)
        db.set("", "empty key", timestamp=T0 + 104)
        db.set("empty value", "", timestamp=T0 + 105)
        db.set_metadata({"owner": "fixtures", "n": 3})
    write_doc(out_dir, name, describe(path), missing=[b"key07", b"nope"])


def json_values(out_dir):
    """str keys, json values (stdlib json.dumps: ', ' and ': ' separators, ASCII escapes)."""
    name = "json_values"
    path = fresh(out_dir, name)
    values = {
        "int": 42,
        "neg": -7,
        "big": 12345678901234567890,
        "float": 3.25,
        "tiny": 1e-07,
        "huge": 1.5e16,
        "third": 1 / 3,
        "bool": True,
        "null": None,
        "text": "caf\u00e9 \"quoted\" \\ tab\t newline\n \U0001F600",
        "list": [1, 2.0, "three", [4], {"five": 5}],
        "dict": {"b": 1, "a": [True, False, None], "nested": {"x": -0.5}},
        "empty_list": [],
        "empty_dict": {},
    }
    with booklet.open(path, "n", key_serializer="str", value_serializer="json", n_buckets=31) as db:
        for i, (k, v) in enumerate(values.items()):
            db.set(k, v, timestamp=T0 + i)
        db.set("int", 43, timestamp=T0 + 50)
        del db["neg"]
    write_doc(out_dir, name, describe(path), missing=[b"neg"])


def bytes_no_ts(out_dir):
    """Serializer None (code 1) values and 'bytes' (code 32) keys, no timestamps, binary data."""
    name = "bytes_no_ts"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="bytes", value_serializer=None, n_buckets=13, init_timestamps=False) as db:
        for i in range(40):
            db[bytes([i, 255 - i, 0, i * 3 % 256])] = bytes(range(i % 7, i % 7 + i * 5 % 300 % 256))
        db.sync()
        for i in range(0, 40, 5):
            del db[bytes([i, 255 - i, 0, i * 3 % 256])]
        for i in range(1, 40, 9):
            db[bytes([i, 255 - i, 0, i * 3 % 256])] = b"\x00replaced\xff" * i
    write_doc(out_dir, name, describe(path), missing=[bytes([0, 255, 0, 0]), b"absent"])


def pruned(out_dir):
    """Edits, then prune() (relocated index after compacted data), then writes into region 2,
    then enough keys for an auto-reindex from the relocated index (writes a skip block)."""
    name = "pruned"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="str", value_serializer="str", n_buckets=7) as db:
        for i in range(6):
            db.set(f"k{i}", "v" * (i + 1), timestamp=T0 + i)
        db.sync()
        for i in range(3):
            db.set(f"k{i}", "new" + str(i), timestamp=T0 + 10 + i)
        db.sync()
        del db["k4"]
        removed = db.prune()
        assert removed == 4, removed
        db.set("after1", "written after prune", timestamp=T0 + 20)
        db.set("k5", "k5 after prune", timestamp=T0 + 21)
        db.sync()
        for i in range(6):
            db.set(f"grow{i}", f"g{i}", timestamp=T0 + 30 + i)
    write_doc(out_dir, name, describe(path), missing=[b"k4"])


def pruned_by_timestamp(out_dir):
    """prune(timestamp=..., keep_keys=...) drops live items older than the timestamp."""
    name = "pruned_ts"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="str", value_serializer="str", n_buckets=11) as db:
        for i in range(10):
            db.set(f"t{i}", f"at {i}", timestamp=T0 + i * 1000)
        db.sync()
        removed = db.prune(timestamp=T0 + 5000, keep_keys=["t1"])
        assert removed == 4, removed
    write_doc(out_dir, name, describe(path), missing=[b"t0", b"t2", b"t4"])


def fixed(out_dir):
    """FixedLengthValue, 8-byte values, str keys: overwrites (appended), deletes."""
    name = "fixed"
    path = fresh(out_dir, name)
    with booklet.FixedLengthValue(path, "n", key_serializer="str", value_len=8, n_buckets=5) as db:
        for i in range(9):
            db[f"f{i}"] = i.to_bytes(8, "little")
        db.sync()
        db["f2"] = b"TWOTWO22"
        del db["f6"]
    write_doc(out_dir, name, describe(path, fixed=True), missing=[b"f6", b"zz"])


def fixed_pruned(out_dir):
    name = "fixed_pruned"
    path = fresh(out_dir, name)
    with booklet.FixedLengthValue(path, "n", key_serializer="str", value_len=4, n_buckets=5) as db:
        for i in range(5):
            db[f"p{i}"] = bytes([i]) * 4
        db.sync()
        db["p1"] = b"\xff\xfe\xfd\xfc"
        db.sync()
        del db["p3"]
        assert db.prune() == 2
        db["p9"] = b"nine"
    write_doc(out_dir, name, describe(path, fixed=True), missing=[b"p3"])


def unclean(out_dir):
    """A handle garbage-collected without close(): the finalizer writes n_keys = 0xFFFFFFFF."""
    name = "unclean"
    path = fresh(out_dir, name)
    db = booklet.open(path, "n", key_serializer="str", value_serializer="str", n_buckets=7)
    for i in range(3):
        db.set(f"u{i}", f"val{i}", timestamp=T0 + i)
    db.sync()
    del db
    gc.collect()
    with open(path, "rb") as f:
        f.seek(33)
        assert f.read(4) == b"\xff\xff\xff\xff"
    # Python refuses 'r' on such a file; describe it through a copy reopened with 'w'.
    tmp = path + ".tmp"
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        dst.write(src.read())
    doc = describe(tmp, flag="w")  # 'w' recounts n_keys in memory and leaves the marker on disk
    n = doc["len"]
    os.remove(tmp)
    doc["file"] = name + ".blt"
    doc["n_keys_header"] = 0xFFFFFFFF
    doc["len"] = n
    with open(path, "rb") as f:
        doc["file_size"] = len(f.read())
    write_doc(out_dir, name, doc)


def version4(out_dir):
    """A version-4 header (booklet 0.9.x style: bytes 65..200 padded with ASCII '0').

    0.12 keeps the version at 4 when it writes into such a file, so: write a file, rewrite its
    header the way 0.9.x laid it out, then let 0.12.10 edit it in place and read it back.
    """
    name = "v4"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="str", value_serializer="str", n_buckets=7) as db:
        for i in range(5):
            db.set(f"old{i}", f"from 0.9 era {i}", timestamp=T0 + i)
    with open(path, "r+b") as f:
        f.seek(16)
        f.write((4).to_bytes(2, "little"))
        f.seek(65)
        f.write(b"0" * (200 - 65))
    with booklet.open(path, "w") as db:
        db.set("new0", "written by 0.12.10", timestamp=T0 + 50)
        db.set("old1", "overwritten by 0.12.10", timestamp=T0 + 51)
        del db["old3"]
    with open(path, "rb") as f:
        head = f.read(200)
    assert head[16:18] == b"\x04\x00", head[16:18]
    write_doc(out_dir, name, describe(path), missing=[b"old3"])


def typed_items(ints_64_bit=False, text_len=300):
    """Plain values for the typed fixtures: nested containers, unicode, big ints (within 64 bits
    for msgpack and orjson), a list past pickle's batch of 1000, a long string (past 64 KiB for
    plain pickle, where CPython then writes several frames)."""
    big = [2**64 - 1, -(2**63), 0, -1, 255, 65536] if ints_64_bit else [2**70, -(2**70), 2**63, -(2**63), 0, -1]
    return [
        ("alpha", {"name": "caf\u00e9 \u2713", "n": [1, 2.5, None, True, False], "empty": [], "d": {}}),
        ("big", big),
        ("floats", [0.1, 1e-07, 1.5e16, -0.0, 1 / 3]),
        ("long list", list(range(1001))),
        ("long text", "x" * text_len + "\U0001F600"),
        ("nested", {"a": {"b": {"c": [[], [[]], {"d": "deep"}]}}}),
        ("", "empty key"),
    ]


def typed_values(out_dir):
    """One small file per serializer with a typed codec in the Rust crate: pickle, msgpack,
    json, orjson and their zstd variants (zstd: raw bytes). The .json holds Python's decoded
    items as tagged JSON (booklet_interop.to_tagged) with the stored key and value bytes."""
    import booklet_interop as bi
    pickle_only = [
        (("tuple", 1), ("a", b"\x00\xff", (1, 2.5))),
        (7, "int key"),
        (b"raw key", {"bytes": b"\x00\x01", "tuple": (1,), 3: "int dict key"}),
        (-(2**70), "big int key"),
        (1.5, None),
    ]
    msgpack_extra = [
        (7, "int key"),
        (b"raw key", {"bytes": b"\x00\x01", "list": [1]}),
        (["list", "key"], [True, None]),
        (-5, 2**64 - 1),
    ]
    json_extra = [(7, "int key"), (["list", "key"], {"1": [True, None]}), ({"k": 1}, -2)]
    cases = {
        "pickle": typed_items(text_len=70000) + pickle_only,
        "pickle_zstd": typed_items() + pickle_only,
        "msgpack": typed_items(True) + msgpack_extra,
        "msgpack_zstd": typed_items(True) + msgpack_extra,
        "json": typed_items() + json_extra,
        "orjson": typed_items(True) + json_extra,
        "orjson_zstd": typed_items(True) + json_extra,
    }
    for ser, items in cases.items():
        name = "typed_" + ser
        path = fresh(out_dir, name)
        with booklet.open(path, "n", key_serializer=ser, value_serializer=ser, n_buckets=31) as db:
            for k, v in items:
                db[k] = v
            # An overwrite and a delete, so iteration skips stale blocks.
            db[items[0][0]] = items[0][1]
            del db[items[1][0]]
        doc = bi.typed_read(path)
        doc["serializer"] = ser
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(doc, f)
            f.write("\n")
    name = "typed_zstd"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="zstd", value_serializer="zstd", n_buckets=11) as db:
        db[b"k1"] = b"hello " * 100
        db[b""] = b""
        db[bytes(range(256))] = bytes(range(256)) * 50
    doc = bi.typed_read(path)
    doc["serializer"] = "zstd"
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(doc, f)
        f.write("\n")


def unsupported_numpy(out_dir):
    """Values of the numpy_int4 serializer (named when it had no Rust codec; now read as lists
    of integers): raw int32 bytes stored with encode_value=False, so numpy is not needed to
    write it."""
    name = "unsupported_numpy"
    path = fresh(out_dir, name)
    with booklet.open(path, "n", key_serializer="str", value_serializer="numpy_int4", n_buckets=7) as db:
        for i in range(3):
            db.set(f"row{i}", b"".join(x.to_bytes(4, "little", signed=True) for x in (i, -i, 1000 * i)),
                   timestamp=T0 + i, encode_value=False)
    with open(path, "rb") as f:
        head = f.read(200)
    assert int.from_bytes(head[29:31], "little") == 20


FIXTURES = (str_edits, json_values, bytes_no_ts, pruned, pruned_by_timestamp, fixed, fixed_pruned,
            unclean, version4, typed_values, unsupported_numpy)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "readers", "booklet", "tests", "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    only = set(sys.argv[2:])
    for fn in FIXTURES:
        if only and fn.__name__ not in only:
            continue
        fn(out_dir)
        print("wrote", fn.__name__)


if __name__ == "__main__":
    main()

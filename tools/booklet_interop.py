#!/usr/bin/env python3
"""Python side of the booklet interop tests (readers/booklet/tests/interop.rs).

  booklet_interop.py run-ops SPEC.json OUT.blt   apply an operation list with Python booklet
  booklet_interop.py dump FILE.blt               print what Python booklet reads (JSON)
  booklet_interop.py hold-lock FILE.blt SECONDS  open 'w' (exclusive lock), print "locked", sleep
  booklet_interop.py typed-write SPEC.json OUT.blt  write typed items with Python's serializers,
                                                 then print what typed-read prints
  booklet_interop.py typed-read FILE.blt         print every item decoded by Python (tagged JSON)
  booklet_interop.py typed-dumps SERIALIZER VALUES.json  print base64 of serializer.dumps(v)

SPEC.json: {"key_serializer": "str"|"bytes"|null, "value_serializer": ..., "n_buckets": int,
"buffer_size": int, "timestamps": bool, "value_len": int|null (fixed-length file),
"ops": [["set", key_b64, value_b64, ts|null], ["update", [[key_b64, value_b64], ...]],
["del", key_b64], ["sync"], ["prune", ts|null, [keep_key_b64...]], ["clear"],
["set_timestamp", key_b64, ts]]}
Keys and values are the stored bytes; keys are decoded with the key serializer first so the
stored bytes are exactly the given ones.

Typed commands carry Python values as *tagged JSON* (also read by the Rust tests): null, bools,
strings and lists as themselves; {"$int": "digits"} for every int, {"$float": repr} for every
float, {"$bytes": base64}, {"$tuple": [...]}, {"$dict": [[key, value], ...]} (ordered, any key).
Typed SPEC.json: {"key_serializer": name, "value_serializer": name, "n_buckets": int,
"set": [[key, value], ...], "delete": [key, ...], "prune": bool}.
"""

import base64
import json
import sys
import time

import booklet


def d(s):
    return base64.b64decode(s)


def e(b):
    return base64.b64encode(b).decode()


def to_tagged(v):
    """A Python value as tagged JSON (see the module docs); a 1-D numpy integer array (the
    numpy serializers) as the list of its integers."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if type(v).__module__ == "numpy" and hasattr(v, "tolist"):
        return to_tagged(v.tolist())
    if isinstance(v, int):
        return {"$int": str(v)}
    if isinstance(v, float):
        return {"$float": repr(v)}
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": e(bytes(v))}
    if isinstance(v, list):
        return [to_tagged(x) for x in v]
    if isinstance(v, tuple):
        return {"$tuple": [to_tagged(x) for x in v]}
    if isinstance(v, dict):
        return {"$dict": [[to_tagged(k), to_tagged(x)] for k, x in v.items()]}
    raise TypeError(f"not a plain value: {type(v).__name__}")


def from_tagged(j):
    """Tagged JSON back to a Python value. Strings are built afresh (never shared objects), so
    pickle writes them as separate objects, as a program building them at run time does."""
    if j is None or isinstance(j, bool):
        return j
    if isinstance(j, str):
        return "".join(list(j))
    if isinstance(j, list):
        return [from_tagged(x) for x in j]
    (tag, val), = j.items()
    if tag == "$int":
        return int(val)
    if tag == "$float":
        return float(val)
    if tag == "$bytes":
        return d(val)
    if tag == "$tuple":
        return tuple(from_tagged(x) for x in val)
    if tag == "$dict":
        return {from_tagged(k): from_tagged(x) for k, x in val}
    raise ValueError(tag)


def hashable(k):
    """Decoded keys may be lists or dicts (msgpack, json); booklet hashes their bytes, so they
    are valid keys, but a Python dict of them needs a hashable stand-in."""
    return json.dumps(to_tagged(k), sort_keys=True)


def typed_read(path):
    db = booklet.open(path, "r", timeout=10)
    ks, vs = db._key_serializer, db._value_serializer
    items = []
    lookups_ok = True
    for k, v in db.items():
        kb = ks.dumps(k)
        items.append([to_tagged(k), to_tagged(v), e(kb)])
        # The key Python re-encodes from the decoded key must find the item: its stored bytes
        # are exactly what Python's serializer writes.
        if to_tagged(db.get(k)) != to_tagged(v):
            lookups_ok = False
    doc = {"len": len(db), "items": items, "lookups_ok": lookups_ok}
    db.close()
    return doc


def typed_write(spec_path, out):
    with open(spec_path) as f:
        spec = json.load(f)
    value = from_tagged
    if str(spec["value_serializer"]).startswith("numpy_"):
        # The numpy serializers take arrays (numpy converts the list at its default int64).
        import numpy as np
        value = lambda j: np.array(from_tagged(j), dtype=np.int64)  # noqa: E731
    with booklet.open(out, "n", key_serializer=spec["key_serializer"], value_serializer=spec["value_serializer"],
                      n_buckets=spec.get("n_buckets", 12007)) as db:
        for k, v in spec["set"]:
            db[from_tagged(k)] = value(v)
        for k in spec.get("delete", []):
            del db[from_tagged(k)]
        if spec.get("prune"):
            db.prune()
    print(json.dumps(typed_read(out)))


def typed_dumps(name, values_path):
    from booklet import serializers
    ser = serializers.serial_dict[name]
    with open(values_path) as f:
        values = json.load(f)
    value = from_tagged
    if name.startswith("numpy_"):
        import numpy as np
        value = lambda j: np.array(from_tagged(j), dtype=np.int64)  # noqa: E731
    print(json.dumps([e(ser.dumps(value(v))) for v in values]))


def run_ops(spec_path, out):
    with open(spec_path) as f:
        spec = json.load(f)
    if spec.get("value_len"):
        db = booklet.FixedLengthValue(out, "n", key_serializer=spec["key_serializer"], value_len=spec["value_len"],
                                      n_buckets=spec["n_buckets"], buffer_size=spec["buffer_size"])
    else:
        db = booklet.open(out, "n", key_serializer=spec["key_serializer"], value_serializer=spec["value_serializer"],
                          n_buckets=spec["n_buckets"], buffer_size=spec["buffer_size"],
                          init_timestamps=spec["timestamps"])
    ks = db._key_serializer
    fixed = bool(spec.get("value_len"))
    for op in spec["ops"]:
        kind = op[0]
        if kind == "set":
            if fixed:
                db.set(ks.loads(d(op[1])), d(op[2]), encode_value=False)
            else:
                db.set(ks.loads(d(op[1])), d(op[2]), timestamp=op[3], encode_value=False)
        elif kind == "update":
            # update() serializes values; with a bytes/None value serializer that is the identity.
            db.update({ks.loads(d(k)): d(v) for k, v in op[1]})
        elif kind == "del":
            del db[ks.loads(d(op[1]))]
        elif kind == "sync":
            db.sync()
        elif kind == "prune":
            keep = [ks.loads(d(k)) for k in op[2]]
            if fixed:
                db.prune()
            elif keep:
                db.prune(timestamp=op[1], keep_keys=keep)
            else:
                db.prune(timestamp=op[1])
        elif kind == "clear":
            db.clear()
        elif kind == "set_timestamp":
            db.set_timestamp(ks.loads(d(op[1])), op[2])
        elif kind == "set_metadata":
            db.set_metadata(op[1], timestamp=op[2])
        elif kind == "set_reserved":
            db.set_reserved(op[1], d(op[2]), timestamp=op[3])
        else:
            raise ValueError(kind)
    db.close()


def dump(path):
    with open(path, "rb") as f:
        magic = f.read(16)
    fixed = magic == b"\x04\xd3\xb2\x94\xf2\x10Ab\x95\x8d\x04\x00s\x8c\x9e\n"
    db = booklet.FixedLengthValue(path, "r") if fixed else booklet.open(path, "r")
    ks, vs = db._key_serializer, db._value_serializer
    items = []
    ts = {}
    if not fixed and db._init_timestamps:
        ts = {ks.dumps(k): t for k, t in db.timestamps()}
    for k, v in db.items():
        kb = ks.dumps(k)
        items.append({"key_b64": e(kb), "value_b64": e(vs.dumps(v)), "timestamp": ts.get(kb)})
    doc = {"len": len(db), "items": items}
    if not fixed:
        doc["locations"] = [[e(ks.dumps(k)), t, off, n] for k, t, off, n in db.locations()]
    if not fixed:
        doc["metadata"] = db.get_metadata()
        doc["reserved"] = {str(slot): (None if db.get_reserved(slot) is None else e(db.get_reserved(slot)))
                           for slot in (1, 2)}
    db.close()
    print(json.dumps(doc))


def hold_lock(path, seconds):
    with open(path, "rb") as f:
        magic = f.read(16)
    fixed = magic == b"\x04\xd3\xb2\x94\xf2\x10Ab\x95\x8d\x04\x00s\x8c\x9e\n"
    db = booklet.FixedLengthValue(path, "w") if fixed else booklet.open(path, "w")
    print("locked", flush=True)
    time.sleep(float(seconds))
    db.close()


def main():
    cmd = sys.argv[1]
    if cmd == "run-ops":
        run_ops(sys.argv[2], sys.argv[3])
    elif cmd == "dump":
        dump(sys.argv[2])
    elif cmd == "hold-lock":
        hold_lock(sys.argv[2], sys.argv[3])
    elif cmd == "typed-write":
        typed_write(sys.argv[2], sys.argv[3])
    elif cmd == "typed-read":
        print(json.dumps(typed_read(sys.argv[2])))
    elif cmd == "typed-dumps":
        typed_dumps(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()

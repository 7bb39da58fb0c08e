#!/usr/bin/env python3
"""Surveys root-tool against uproot on a corpus of ROOT files with TTrees and RNTuples.

  readers/root/tools/corpus.py --root-tool target/release/root-tool --out survey.json DIR...

For every `.root` file under the given directories that uproot opens and that holds at least one
TTree: does `root-tool ls` open it (and with what error if not); for every branch uproot reads
(`branch.array(library="np")`), by full path (uproot's key, as `root-tool ls` shows it; before
issue 49 by its own name, the first of each name only), does `root-tool dump` return it, and are its values equal to
uproot's (floats compared as the same binary value, NaNs as equal). Where they differ and the
branch is one leaf of numbers, ROOT itself (PyROOT, TLeaf::GetValue) decides: "equal to ROOT
(uproot differs)" (uproot unpacks ranged Double32_t with another rounding, for one). Prints a summary and writes
every file's and branch's outcome to `--out`, so a change in the reader shows up file by file.

RNTuples are surveyed the same way, apart: for every RNTuple uproot opens, every top-level field
uproot reads (`ntuple[field].array()`, as Python lists) against `root-tool dump FILE NTUPLE
--branches FIELD` (records compared member by member in order, floats as the same binary value
or, where uproot widened an f32, as that f32).

Every line `dump` writes, of trees and RNTuples, is also checked to hold no key twice.

Needs uproot (tools/requirements.txt). Files uproot cannot open are not counted: the measure is
"what uproot reads, do we read it, and the same".
"""

import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np
import uproot

# Branches with more values than this are compared on their first entries only.
MAX_VALUES = 2_000_000
# Entries dumped per tree at most (the rest is compared by count only).
MAX_ENTRIES = 20_000


def objects_of(f, classes):
    """(path without cycle, key) of every object of one of `classes` in the file, the highest
    cycle of each name."""
    out = {}
    for key, classname in f.classnames(recursive=True).items():
        if classname in classes:
            path = key.rsplit(";", 1)[0]
            cycle = int(key.rsplit(";", 1)[1]) if ";" in key else 1
            if path not in out or out[path][0] < cycle:
                out[path] = (cycle, key)
    return [(path, key) for path, (_, key) in sorted(out.items())]


def trees_of(f):
    return objects_of(f, ("TTree", "TNtuple", "TNtupleD"))


def flat(value):
    """A branch value as nested Python lists of floats/ints/bools (None for non-finite)."""
    if isinstance(value, np.ndarray):
        return [flat(v) for v in value.tolist()] if value.dtype == object else flat(value.tolist())
    if isinstance(value, (list, tuple)):
        return [flat(v) for v in value]
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return None if not math.isfinite(v) else v
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.void):  # a record of a leaf list
        return [flat(v) for v in value.tolist()]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    if hasattr(value, "all_members"):  # an object uproot built from its class: its members
        # ("@" members are uproot's bookkeeping or TObject's; root-tool's are left out too)
        return [flat(v) for k, v in value.all_members.items() if not k.startswith("@")]
    if hasattr(value, "tolist"):  # uproot's STLVector and other containers
        return flat(value.tolist())
    return value


def flatten(v):
    return [x for item in v for x in flatten(item)] if isinstance(v, list) else [v]


def same(ours, theirs, is_f32):
    # A leaf list or an object is a record: root-tool writes an object, uproot a tuple or its
    # members in order.
    if isinstance(ours, dict):
        ours = [v for k, v in ours.items() if not k.startswith("@")]
    # A fixed multi-dimensional array (`x[2][3]`) is one flat row in root-tool's output.
    if (
        isinstance(theirs, list)
        and isinstance(ours, list)
        and any(isinstance(t, list) for t in theirs)
        and not any(isinstance(o, (list, dict)) for o in ours)
    ):
        theirs = flatten(theirs)
    if isinstance(theirs, list):
        return isinstance(ours, list) and len(ours) == len(theirs) and all(
            same(a, b, is_f32) for a, b in zip(ours, theirs)
        )
    if theirs is None or ours is None:
        return theirs is None and ours is None
    if isinstance(theirs, float) or isinstance(ours, float):
        a, b = float(ours), float(theirs)
        if is_f32:
            return np.float32(a) == np.float32(b)
        # A float member of an object: uproot widens it to a Python float, root-tool writes the
        # f32's shortest form. Equal when theirs is exactly that f32.
        return a == b or (float(np.float32(b)) == b and np.float32(a) == np.float32(b))
    try:
        return bool(ours == theirs)
    except Exception:  # objects uproot builds that do not compare: not equal
        return False


def full_paths(branches, pyroot=False, prefix=""):
    """(full path, branch) of every branch under `branches` (uproot's, or PyROOT's), depth
    first, as root-tool names them (`ls`'s `path`): uproot's keys (the names of the parents and
    the branch's own, joined by "/"), with "#k" after a name that k - 1 earlier siblings have
    (where uproot repeats the key)."""
    out = []
    seen = {}
    for branch in branches:
        name = branch.GetName() if pyroot else branch.name
        seen[name] = seen.get(name, 0) + 1
        full = prefix + (name if seen[name] == 1 else f"{name}#{seen[name]}")
        out.append((full, branch))
        children = branch.GetListOfBranches() if pyroot else branch.branches
        out.extend(full_paths(children, pyroot, full + "/"))
    return out


def uproot_branches(tree):
    """full path -> (values as lists, is_f32) of every branch uproot reads; full path -> error
    otherwise."""
    read, failed = {}, {}
    # By full path, as root-tool lists it (issue 49: branches of one name under different
    # parents, which root-tool's dump names by full path).
    for name, branch in full_paths(tree.branches):
        if len(branch.branches) > 0 and branch.interpretation is None:
            continue
        try:
            array = branch.array(library="np", entry_stop=MAX_ENTRIES)
        except Exception as e:  # what uproot cannot read does not count
            failed[name] = f"{type(e).__name__}: {e}"[:200]
            continue
        is_f32 = False
        try:
            is_f32 = array.dtype == np.float32 or (
                array.dtype == object and len(array) > 0 and getattr(array[0], "dtype", None) == np.float32
            )
        except Exception:
            pass
        if getattr(array, "size", 0) > MAX_VALUES:
            array = array[: max(1, MAX_VALUES // max(1, array.size // max(1, len(array))))]
        read[name] = (flat(array), is_f32)
    return read, failed


def parse_line(line, repeated):
    """One dumped JSON object; a key it holds twice is counted in `repeated` (a list)."""

    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            repeated.append(sorted({k for k in keys if keys.count(k) > 1}))
        return dict(items)

    return json.loads(line, object_pairs_hook=pairs)


def rntuples_of(f):
    return objects_of(f, ("ROOT::RNTuple",))


def members(record):
    """A record of root-tool's with the members of its base classes (`:_0`, `:_1`, ...) taken
    in, as uproot gives them."""
    out = {}
    for k, v in record.items():
        if k.startswith(":") and isinstance(v, dict):
            out.update(members(v))
        else:
            out[k] = v
    return out


def variant_shaped(ours):
    """Whether `ours` is root-tool's `std::variant`: a record of lists `_0`.. `_{n-1}`, at most
    one item in all."""
    return (
        isinstance(ours, dict)
        and bool(ours)
        and list(ours) == [f"_{i}" for i in range(len(ours))]
        and all(isinstance(v, list) for v in ours.values())
        and sum(len(v) for v in ours.values()) <= 1
    )


def variant_value(ours):
    """The value a variant holds, as uproot gives it (None: no value)."""
    held = [v for v in ours.values() if v]
    return held[0][0] if held else None


def same_members(ours, theirs, variants):
    """Records whose member names differ only as uproot names the members of a base class met
    twice (`Child::x` beside `x`, diamond inheritance): member by member under the bare name,
    in order."""
    def by_name(items):
        out = {}
        for k, v in items:
            out.setdefault(k.split("::")[-1], []).append(v)
        return out

    def leaves(record):
        for k, v in record.items():
            if k.startswith(":") and isinstance(v, dict):
                yield from leaves(v)
            else:
                yield k, v

    a, b = by_name(leaves(ours)), by_name(theirs.items())
    if set(a) != set(b) or any(len(a[k]) != len(b[k]) for k in a):
        return False
    return all(
        any(same_fields(x, y, variants) for y in b[k]) for k in a for x in a[k]
    )


def same_fields(ours, theirs, variants=False):
    """An RNTuple value of root-tool's against uproot's: records by member name, base classes'
    members taken in; `std::pair`/`std::tuple` records against uproot's tuples in order; with
    `variants` (the field's type holds a std::variant), a variant against the value it holds;
    floats as in `same`."""
    if variants and variant_shaped(ours):
        ours = variant_value(ours)
    if isinstance(ours, dict) and isinstance(theirs, dict):
        flat = members(ours)
        if set(flat) == set(theirs):
            return all(same_fields(flat[k], theirs[k], variants) for k in flat)
        return same_members(ours, theirs, variants)
    if isinstance(ours, dict) and isinstance(theirs, tuple):
        # A pair or tuple, or a class without data (base classes of none: uproot's `()`).
        flat = members(ours)
        return len(flat) == len(theirs) and all(
            same_fields(a, b, variants) for a, b in zip(flat.values(), theirs)
        )
    if isinstance(ours, list) and isinstance(theirs, (list, tuple)):
        return len(ours) == len(theirs) and all(same_fields(a, b, variants) for a, b in zip(ours, theirs))
    if isinstance(theirs, (dict, list, tuple)) or isinstance(ours, (dict, list)):
        return False
    if isinstance(theirs, float) and not math.isfinite(theirs):
        return ours is None or (isinstance(ours, float) and math.isnan(ours) and math.isnan(theirs))
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return ours == theirs
    return same(ours, theirs, False)


def survey_rntuples(path, root_tool, repeated):
    """Every top-level field uproot reads of every RNTuple in the file: equal, different, or
    missing (with root-tool's error)."""
    try:
        f = uproot.open(path)
        ntuples = rntuples_of(f)
    except Exception as e:
        return {"file": path, "uproot": f"cannot open: {type(e).__name__}: {e}"[:300]}
    if not ntuples:
        return None
    result = {"file": path, "rntuples": []}
    code, out, err = run([root_tool, "ls", path, "--format", "json"])
    result["opens"] = code == 0
    if code != 0:
        result["error"] = err.strip().splitlines()[-1][:400] if err.strip() else f"exit {code}"
    types = {}
    for n in json.loads(out).get("rntuples", []) if code == 0 else []:
        for field in n.get("fields", []):
            types[(n.get("path", n.get("name")), field["name"])] = field.get("type", "")
    for path_in_file, key in ntuples:
        nt = f[key]
        entry = {"rntuple": path_in_file, "entries": int(nt.num_entries), "fields": {}}
        for name in nt.keys(recursive=False):
            try:
                theirs = nt[name].array().to_list()[:MAX_ENTRIES]
            except Exception as e:
                entry.setdefault("uproot_failed", {})[name] = f"{type(e).__name__}: {e}"[:200]
                continue
            stop = min(MAX_ENTRIES, int(nt.num_entries))
            c2, out2, err2 = run(
                [root_tool, "dump", path, path_in_file, "--branches", name, "--entries", f":{stop}"]
            )
            if c2 != 0:
                reason = err2.strip().splitlines()[-1] if err2.strip() else f"exit {c2}"
                entry["fields"][name] = "missing: " + reason[:300]
                continue
            ours = [parse_line(line, repeated)[name] for line in out2.splitlines() if line.strip()]
            variants = "std::variant<" in types.get((path_in_file, name), "")
            ok = len(ours) == len(theirs) and all(
                same_fields(a, b, variants) for a, b in zip(ours, theirs)
            )
            entry["fields"][name] = "equal" if ok else "DIFFERENT"
        result["rntuples"].append(entry)
    return result


def run(cmd):
    env = dict(os.environ, RUST_BACKTRACE="0")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    return p.returncode, p.stdout, p.stderr


def root_values(path, tree_path, name, n):
    """The first n entries of a branch's single leaf (`name`: its full path) as ROOT reads them
    (TLeaf::GetValue), or None when ROOT (PyROOT) is not there or the branch is not one leaf of
    numbers."""
    try:
        import ROOT  # noqa: PLC0415
    except ImportError:
        return None
    f = ROOT.TFile.Open(path)
    t = f.Get(tree_path) if f else None
    branch = dict(full_paths(t.GetListOfBranches(), pyroot=True)).get(name) if t else None
    if not branch or branch.GetListOfLeaves().GetEntries() != 1:
        return None
    leaf = branch.GetListOfLeaves().At(0)
    if leaf.ClassName() not in ("TLeafElement", "TLeafD32", "TLeafF16", "TLeafF", "TLeafD"):
        return None
    t.SetBranchStatus("*", 0)
    t.SetBranchStatus(branch.GetName(), 1)
    out = []
    for j in range(n):
        branch.GetEntry(j)
        out.append([leaf.GetValue(k) for k in range(leaf.GetLen())])
    f.Close()
    return out


def root_says_equal(path, tree_path, name, ours):
    """Where uproot and root-tool disagree, ROOT decides (numeric single-leaf branches)."""
    def numeric(v):
        return isinstance(v, (int, float)) or (isinstance(v, list) and all(isinstance(x, (int, float)) for x in v))

    if not ours or not all(numeric(o) for o in ours):
        return False
    theirs = root_values(path, tree_path, name, len(ours))
    if theirs is None:
        return False
    ours = [o if isinstance(o, list) else [o] for o in ours]
    return all(same(a, b, False) for a, b in zip(ours, theirs)) and len(ours) == len(theirs)


def survey_file(path, root_tool, repeated):
    try:
        f = uproot.open(path)
        trees = trees_of(f)
    except Exception as e:
        return {"file": path, "uproot": f"cannot open: {type(e).__name__}: {e}"[:300]}
    if not trees:
        return {"file": path, "uproot": "no TTree"}
    result = {"file": path, "trees": []}
    code, out, err = run([root_tool, "ls", path, "--format", "json"])
    result["opens"] = code == 0
    if code != 0:
        result["error"] = err.strip().splitlines()[-1][:400] if err.strip() else f"exit {code}"
    ours_ls = json.loads(out) if code == 0 else {"trees": []}
    # By full path: each branch's type, and the name of its column in `dump`.
    ours_types, ours_columns = {}, {}
    for t in ours_ls["trees"]:
        for b in t["branches"]:
            ours_types[(t["path"], b["path"])] = b["type"]
            ours_columns[(t["path"], b["path"])] = b["column"]
    for path_in_file, key in trees:
        tree = f[key]
        theirs, failed = uproot_branches(tree)
        entry = {"tree": path_in_file, "entries": int(tree.num_entries), "branches": {}}
        ours = {}
        if code == 0:
            stop = min(MAX_ENTRIES, int(tree.num_entries))  # a double in ROOT 4 trees
            if stop == 0:
                c2, out2, err2 = 0, "", ""
            else:
                c2, out2, err2 = run(
                    [root_tool, "dump", path, path_in_file, "--entries", f":{stop}", "--format", "jsonl"]
                )
            if c2 == 0:
                rows = [parse_line(line, repeated) for line in out2.splitlines() if line.strip()]
                for name in theirs:
                    column = ours_columns.get((path_in_file, name))
                    if rows and column in rows[0]:
                        ours[name] = [r[column] for r in rows]
                    elif not rows and not ours_types.get((path_in_file, name), "unsupported").startswith("unsupported"):
                        # An empty tree: a branch root-tool can read has no values to show.
                        ours[name] = []
            else:
                entry["dump_error"] = err2.strip().splitlines()[-1][:400] if err2.strip() else f"exit {c2}"
        for name, (values, is_f32) in theirs.items():
            if name in ours:
                # Floats root-tool reads as f32 (nested in vectors uproot does not say so) are
                # written in their shortest f32 form: compared as f32.
                our_type = ours_types.get((path_in_file, name), "")
                is_f32 = is_f32 or ("f32" in our_type and "f64" not in our_type)
                n = min(len(values), len(ours[name]))
                ok = n == len(values) and all(same(a, b, is_f32) for a, b in zip(ours[name][:n], values[:n]))
                status = "equal" if ok else "DIFFERENT"
                if not ok and root_says_equal(path, path_in_file, name, ours[name]):
                    status = "equal to ROOT (uproot differs)"
            else:
                status = "missing: " + ours_types.get((path_in_file, name), "not listed")
            entry["branches"][name] = status
        entry["uproot_failed"] = failed
        result["trees"].append(entry)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--root-tool", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    files = sorted(
        os.path.join(d, n) for top in args.dirs for d, _, names in os.walk(top) for n in names if n.endswith(".root")
    )
    results, rntuple_results, repeated = [], [], []
    for i, path in enumerate(files, 1):
        print(f"[{i}/{len(files)}] {path}", file=sys.stderr)
        results.append(survey_file(path, args.root_tool, repeated))
        found = survey_rntuples(path, args.root_tool, repeated)
        if found is not None:
            rntuple_results.append(found)
    with_trees = [r for r in results if "trees" in r]
    opened = [r for r in with_trees if r.get("opens")]
    statuses = [s for r in with_trees for t in r["trees"] for s in t["branches"].values()]
    equal = sum(1 for s in statuses if s == "equal")
    equal_root = sum(1 for s in statuses if s.startswith("equal to ROOT"))
    wrong = sum(1 for s in statuses if s == "DIFFERENT")
    summary = {
        "files": len(results),
        "files_with_trees": len(with_trees),
        "files_opened": len(opened),
        "branches_uproot_reads": len(statuses),
        "branches_equal": equal,
        "branches_equal_root_not_uproot": equal_root,
        "branches_different": wrong,
        "branches_missing": len(statuses) - equal - equal_root - wrong,
        "errors": {},
        "missing_kinds": {},
    }
    for r in with_trees:
        if not r.get("opens"):
            reason = r.get("error", "?")
            key = reason.split(":")[0] if len(reason) > 80 else reason
            summary["errors"][key] = summary["errors"].get(key, 0) + 1
    for s in statuses:
        if s.startswith("missing"):
            k = s[:80]
            summary["missing_kinds"][k] = summary["missing_kinds"].get(k, 0) + 1
    summary["dumped_objects_with_a_repeated_key"] = len(repeated)
    summary["repeated_keys"] = repeated[:20]
    # RNTuples: files holding one (and no TTree: the corpus's RNTuple-only files), fields.
    with_ntuples = [r for r in rntuple_results if "rntuples" in r]
    only = [r for r in with_ntuples if not any(x["file"] == r["file"] and "trees" in x for x in results)]
    fields = [(r["file"], s) for r in with_ntuples for n in r["rntuples"] for s in n["fields"].values()]
    def read_equal(r):
        return r.get("opens") and all(s == "equal" for n in r["rntuples"] for s in n["fields"].values())

    fully_read = [r for r in only if read_equal(r)]
    summary["rntuple"] = {
        "files_with_rntuples": len(with_ntuples),
        "rntuple_only_files": len(only),
        "rntuple_only_files_read_equal": len(fully_read),
        "files_with_rntuples_read_equal": sum(1 for r in with_ntuples if read_equal(r)),
        "files_uproot_cannot_open": sum(1 for r in rntuple_results if "uproot" in r),
        "fields_uproot_reads": len(fields),
        "fields_equal": sum(1 for _, s in fields if s == "equal"),
        "fields_different": sum(1 for _, s in fields if s == "DIFFERENT"),
        "fields_missing": {},
    }
    for _, s in fields:
        if s.startswith("missing"):
            # By what is not supported (the type), not by field.
            k = s.split("is not supported: ", 1)[-1][:100]
            summary["rntuple"]["fields_missing"][k] = summary["rntuple"]["fields_missing"].get(k, 0) + 1
    with open(args.out, "w") as out:
        json.dump({"summary": summary, "files": results, "rntuple_files": rntuple_results}, out, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

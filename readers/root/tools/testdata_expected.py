#!/usr/bin/env python3
"""Writes the values uproot reads from the scikit-hep-testdata files committed as fixtures.

  tools/.venv/bin/pip install uproot==5.7.7      # a survey tool, not in tools/requirements.txt
  tools/.venv/bin/python readers/root/tools/testdata_expected.py readers/root/tests/fixtures

For each `NAME.root` of FILES in the directory, writes `NAME.json`: every TTree (highest cycle),
its entry count, and for every branch uproot reads, uproot's interpretation and its values,
entry by entry (a number, a string, or a list for arrays and jagged entries). Floats are
written exactly: an f32 as the double it widens to, every double in its shortest form that
reads back to the same bits; `tests/regression.rs` compares our values with these bit for bit.

The files come from scikit-hep-testdata (BSD-3-Clause), commit f51b8fb,
src/skhep_testdata/data; see tests/fixtures/README.md.
"""

import argparse
import json
import os
import sys

import numpy as np
import uproot

FILES = ["uproot-from-geant4.root", "uproot-issue-250.root", "uproot-issue413.root"]


def plain(value):
    """A branch value as JSON: numbers exactly (ints as ints), strings, lists."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value)  # an f32 widens to the double of the same value
    if isinstance(value, (np.integer, int)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, str):
        return value
    raise TypeError(f"unexpected value {value!r} of {type(value)}")


def trees(f):
    best = {}
    for key, classname in f.classnames(recursive=True).items():
        if classname in ("TTree", "TNtuple", "TNtupleD"):
            name, cycle = key.rsplit(";", 1)
            if name not in best or best[name][0] < int(cycle):
                best[name] = (int(cycle), key)
    return sorted((name, key) for name, (_, key) in best.items())


def expected(path):
    out = {"uproot": uproot.__version__, "trees": {}}
    with uproot.open(path) as f:
        for name, key in trees(f):
            tree = f[key]
            branches = {}
            for branch in tree.itervalues(recursive=True):
                values = branch.array(library="np")
                branches[branch.name] = {
                    "interpretation": str(branch.interpretation),
                    "values": [plain(v) for v in values],
                }
            # fEntries is a double in ROOT 4 trees.
            out["trees"][name] = {"entries": int(tree.num_entries), "branches": branches}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="the fixtures directory holding the files")
    args = ap.parse_args()
    for name in FILES:
        path = os.path.join(args.dir, name)
        out = os.path.join(args.dir, name.removesuffix(".root") + ".json")
        with open(out, "w") as f:
            json.dump(expected(path), f, separators=(",", ":"))
            f.write("\n")
        print(f"{out}: {os.path.getsize(out)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()

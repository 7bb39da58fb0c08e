#!/usr/bin/env python3
"""Writes seed 001's example files with real ROOT: DIR/test1.root and DIR/test2.root, each a TTree
`t` with one branch `x` of 5,000,000 doubles (the seed's example reads 80,000,000 uncompressed
bytes from the two), ROOT's default compression. Kept when present.

Usage: $BENCH_PYTHON tools/seed001_files.py DIR
"""

import os
import sys

ENTRIES = 5_000_000


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    import ROOT  # noqa: PLC0415

    ROOT.gROOT.SetBatch(True)
    for k, name in enumerate(["test1.root", "test2.root"]):
        path = os.path.join(out, name)
        if os.path.exists(path):
            continue
        # Deterministic, not constant: a slow wave, different in each file.
        (
            ROOT.RDataFrame(ENTRIES)
            .Define("x", f"std::sin(0.001 * (rdfentry_ + {k * ENTRIES}))")
            .Snapshot("t", path + ".part", ["x"])
        )
        os.replace(path + ".part", path)
        print(path)


if __name__ == "__main__":
    main()

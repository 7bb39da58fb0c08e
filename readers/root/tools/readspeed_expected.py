#!/usr/bin/env python3
"""What ROOT's own rootreadspeed reports on the fixtures, for `root-tool readspeed --test`.

  tools/.venv/bin/python readers/root/tools/readspeed_expected.py > readers/root/tests/fixtures/readspeed_expected.json

Runs the `rootreadspeed` of the pinned ROOT wheel (tools/requirements.txt) on each case below
(files of readers/root/tests/fixtures, written by tools/root_fixtures.py) and records its
"Uncompressed data read" and "Compressed data read" byte counts. `root-tool readspeed --test`
embeds the fixtures and this file and checks that it reads exactly these bytes, on one thread and
on two, in every mode.
"""

import json
import os
import re
import subprocess
import sys

import ROOT  # noqa: F401  (locates the wheel's bin directory)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")

# (files, trees, how branches are chosen, names or patterns)
CASES = [
    (["types_zstd.root"], ["t"], "branches", ["f"]),
    # `n` before `x`: rootreadspeed reads a jagged branch with the counts its counter branch last
    # read, so `x` alone reads as 0 bytes there (no counter read, every count 0).
    (["types_zstd.root"], ["t"], "branches", ["jets", "arr", "n", "x", "o"]),
    (["types_zstd.root"], ["t"], "all-branches", []),
    (["types_zlib.root"], ["t"], "branches", ["d", "vd", "da"]),
    (["types_zstd.root", "types_zlib.root"], ["t"], "branches", ["f", "jets"]),
    (["types_zlib.root"], ["t"], "branches-regex", ["^v.*"]),
    (["objects.root"], ["t"], "branches", ["cstr", "ss", "vs", "vvf", "d32r", "ll", "obj.name"]),
]


def rootreadspeed():
    import ROOT as root

    base = os.path.dirname(root.__file__)
    path = os.path.join(base, "bin", "rootreadspeed")
    if not os.path.exists(path):
        sys.exit(f"no rootreadspeed in the ROOT wheel ({path})")
    return path


def measure(tool, files, trees, how, names):
    cmd = [tool, "--files", *[os.path.join(FIXTURES, f) for f in files], "--trees", *trees]
    cmd += [f"--{how}", *names]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    got = {}
    for key, label in [("uncompressed_bytes", "Uncompressed data read"), ("compressed_bytes", "Compressed data read")]:
        m = re.search(label + r":\s+(\d+) bytes", out)
        if not m:
            sys.exit(f"no '{label}' in rootreadspeed's output for {cmd}:\n{out}")
        got[key] = int(m.group(1))
    return got


def main():
    tool = rootreadspeed()
    cases = []
    for files, trees, how, names in CASES:
        got = measure(tool, files, trees, how, names)
        cases.append({"files": files, "trees": trees, "select": how, "names": names, **got})
    json.dump({"rootreadspeed": "ROOT 6.40 (tools/requirements.txt)", "cases": cases}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

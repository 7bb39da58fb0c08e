#!/usr/bin/env python3
"""Joins the BMF files of several accuracy experiment runs into one, for one ledger run:

  tools/accuracy/combine.py results/accuracy/accuracy.bmf.json \
      results/accuracy-instructions/accuracy.bmf.json > results/accuracy-all.bmf.json

The experiment is run in parts (the old gate and ab in one output directory, instruction counts
in another, each resumable on its own); their rows have distinct names (`<method>/...`), so the
union is their concatenation. A name present twice is an error, not an overwrite."""

import json
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    joined = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for name, measures in json.load(f).items():
                if name in joined:
                    sys.exit(f"{path}: {name} is already in an earlier file")
                joined[name] = measures
    json.dump(joined, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Regenerates the hyperfine fixtures in this directory from REAL hyperfine runs
# (captured with hyperfine 1.15.0 from Debian: `apt-get install -y hyperfine`).
#
#   basic.json   two commands, the first renamed with --command-name (the name becomes `command`)
#   params.json  a --parameter-list scan: each result carries `parameters`
#   single.json  --runs 1: `stddev` is null
#
# Measured numbers change on every run: the tests in adapters/src/hyperfine.rs pin a few
# values of the committed capture; update them after regenerating.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
hyperfine --version
hyperfine -N --warmup 1 --runs 5 --export-json "$here/basic.json" \
  --command-name 'sleep <10ms>' 'sleep 0.01' 'true'
hyperfine -N --runs 3 --parameter-list n 1,2 --export-json "$here/params.json" 'sleep 0.00{n}'
hyperfine -N --runs 1 --export-json "$here/single.json" 'sleep 0.001'

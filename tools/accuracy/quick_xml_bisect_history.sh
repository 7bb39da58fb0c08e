#!/usr/bin/env bash
# Builds the history of BENCHMARKS.md's "bisect on quick-xml's real history" entry: every
# first-parent commit of quick-xml from 0.38.3 (655691c) to 0.39.0 (6242da0) as a single-parent
# commit with its own tree, with one slowdown put in after #912 (8188346) and carried by every
# later commit: unescape_with finds `&` and `;` without memchr.
#
#   tools/accuracy/quick_xml_bisect_history.sh QUICK_XML_CLONE OUT_DIR
#   cd OUT_DIR && bench-run bisect --suite microbenches --good 655691c --bad trial \
#       --benchmark 'unescape_text/mixed'
set -euo pipefail
src=$1 out=$2
rm -rf "$out"
git clone -q "$src" "$out"
cd "$out"
git checkout -q 8188346
python3 - <<'PY'
p = 'src/escape.rs'
s = open(p).read()
old = "    let mut iter = memchr2_iter(b'&', b';', bytes);\n"
new = ("    // The byte positions of `&` and `;`, without the memchr dependency.\n"
       "    let mut iter = bytes\n        .iter()\n        .enumerate()\n"
       "        .filter_map(|(i, &b)| (b == b'&' || b == b';').then_some(i));\n")
assert old in s
s = s.replace(old, new).replace("use memchr::{memchr, memchr2_iter, memchr3};",
                                "use memchr::{memchr, memchr3};")
open(p, 'w').write(s)
PY
patch=$(mktemp)
git diff > "$patch"
git checkout -q -- .
parent=655691c patched=0
for c in $(git rev-list --first-parent --reverse 655691c..6242da0); do
    git read-tree "$c"
    [ $patched = 1 ] && git apply --cached "$patch"
    tree=$(git write-tree)
    export GIT_AUTHOR_NAME="$(git log -1 --format=%an "$c")" GIT_AUTHOR_EMAIL="$(git log -1 --format=%ae "$c")"
    export GIT_AUTHOR_DATE="$(git log -1 --format=%ad --date=raw "$c")" GIT_COMMITTER_DATE="$(git log -1 --format=%cd --date=raw "$c")"
    export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
    parent=$(git log -1 --format=%B "$c" | git commit-tree "$tree" -p "$parent")
    if [ "$c" = "$(git rev-parse 8188346)" ]; then
        git read-tree "$c"
        git apply --cached "$patch"
        tree=$(git write-tree)
        export GIT_AUTHOR_NAME=Trial GIT_AUTHOR_EMAIL=trial@example.invalid
        export GIT_COMMITTER_NAME=Trial GIT_COMMITTER_EMAIL=trial@example.invalid
        parent=$(printf 'escape: find & and ; without memchr in unescape\n' | git commit-tree "$tree" -p "$parent")
        echo "culprit: $parent"
        patched=1
    fi
done
git branch -f trial "$parent"
git checkout -q -f trial
rm -f "$patch"
echo "$(git rev-list --first-parent --count 655691c..trial) commits from 655691c to trial"

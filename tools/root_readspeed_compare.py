#!/usr/bin/env python3
"""Side-by-side read speed: ROOT's rootreadspeed against `root-tool readspeed`, interleaved.

Usage:
    $BENCH_PYTHON tools/root_readspeed_compare.py [--scratch DIR] [--entries N] [--repeats R]
        [--root-tool PATH] [--threads 1 2] [--out FILE.bmf.json]

1. Writes (once; reused when present) DIR/readspeed_{zlib,zstd}.root with real ROOT 6.40 from the
   pinned venv: TTree `t` with N entries (default 2,000,000) of `pt/F` (exponential),
   `arr[4]/F` (gaussians) and `jets` = std::vector<float> (Poisson(3) values), compression
   settings 101 (zlib-1, ROOT's default) and 505 (zstd-5). Also DIR/readspeed_small_*.root (same
   layout, 1,000 entries) to measure rootreadspeed's fixed cost (process start, TFile::Open,
   library loading), which its "Real time" includes.
2. For every codec, branch (pt, jets, arr) and thread count, runs in turn R times:
   rootreadspeed, `root-tool readspeed`, and (1 thread) `root-tool readspeed --decompress-only`
   (the codec alone on the same baskets, preloaded), so drift on a shared machine hits all alike.
3. Prints the ratios and writes Bencher Metric Format to --out (default DIR/readspeed.bmf.json):
   `readspeed/<codec>/<branch>/<T>t/<tool>` with `latency` (median real time, ns; bounds = min and
   max over the repeats) and `throughput` (MB/s of uncompressed entry data), plus `ratio` entries:
   `readspeed/<codec>/<branch>/<T>t/speedup_vs_rootreadspeed` (ROOT real time / ours),
   `.../speedup_vs_rootreadspeed_minus_fixed` (the same with rootreadspeed's fixed cost, measured
   on the 1,000-entry file, subtracted from its time), `readspeed/<codec>/<branch>/1t/
   fraction_of_decompress` (decompress-only time / full time) and `readspeed/<codec>/<branch>/
   2t_over_1t`. Import with
   `bench-run import bmf --suite root_readspeed_anchor --direction throughput=higher
    --direction ratio=higher FILE`.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(HERE)
CODECS = {"zlib": 101, "zstd": 505}
BRANCHES = ["pt", "jets", "arr"]

MAKER = r"""
#include <TFile.h>
#include <TTree.h>
#include <TRandom3.h>
#include <vector>
void root_readspeed_make(const char* path, int setting, long n) {
    TFile f(path, "RECREATE", "", setting);
    TTree t("t", "readspeed comparison");
    float pt; float arr[4]; std::vector<float> jets;
    t.Branch("pt", &pt, "pt/F");
    t.Branch("arr", arr, "arr[4]/F");
    t.Branch("jets", &jets);
    TRandom3 r(12345);
    for (long i = 0; i < n; ++i) {
        pt = r.Exp(25.0);
        for (int k = 0; k < 4; ++k) arr[k] = r.Gaus(0.0, 1.0);
        jets.clear();
        int m = r.Poisson(3.0);
        for (int k = 0; k < m; ++k) jets.push_back(r.Exp(40.0));
        t.Fill();
    }
    t.Write();
    f.Close();
}
"""


def make_files(scratch, entries):
    import ROOT  # noqa: PLC0415

    ROOT.gROOT.SetBatch(True)
    ROOT.gInterpreter.Declare(MAKER)
    out = {}
    for codec, setting in CODECS.items():
        for kind, n in (("", entries), ("small_", 1000)):
            path = os.path.join(scratch, f"readspeed_{kind}{codec}.root")
            if not os.path.exists(path) or (kind == "" and not check_entries(path, n)):
                print(f"writing {path} ({n} entries, setting {setting})", file=sys.stderr)
                ROOT.root_readspeed_make(path, setting, n)
            out[(kind, codec)] = path
    return out


def check_entries(path, n):
    import ROOT  # noqa: PLC0415

    f = ROOT.TFile.Open(path)
    ok = bool(f) and not f.IsZombie() and f.Get("t") and f.Get("t").GetEntries() == n
    if f:
        f.Close()
    return ok


def rootreadspeed_bin():
    import ROOT  # noqa: PLC0415

    return os.path.join(os.path.dirname(ROOT.__file__), "bin", "rootreadspeed")


def run_rootreadspeed(binary, path, branch, threads):
    cmd = [binary, "--files", path, "--trees", "t", "--branches", branch]
    if threads > 1:
        cmd += ["--threads", str(threads)]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    real = float(re.search(r"Real time:\s+([0-9.e+-]+) s", text).group(1))
    unc = int(re.search(r"Uncompressed data read:\s+(\d+) bytes", text).group(1))
    return real, unc


def run_root_tool(binary, path, branch, threads, decompress_only=False):
    cmd = [binary, "readspeed", "--files", path, "--trees", "t", "--branches", branch,
           "--threads", str(threads), "--format", "json"]
    if decompress_only:
        cmd.append("--decompress-only")
    doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return doc["real_time_s"], doc["uncompressed_bytes"]


def summary(samples, unc):
    med = statistics.median(samples)
    return {
        "latency": {"value": med * 1e9, "lower_value": min(samples) * 1e9, "upper_value": max(samples) * 1e9},
        "throughput": {"value": unc / 1e6 / med, "lower_value": unc / 1e6 / max(samples),
                       "upper_value": unc / 1e6 / min(samples)},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default=os.path.join("/tmp", "root_readspeed"))
    ap.add_argument("--entries", type=int, default=2_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--root-tool", default=None, help="default: build target/release/root-tool")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    os.makedirs(args.scratch, exist_ok=True)
    tool = args.root_tool
    if tool is None:
        subprocess.run(["cargo", "build", "--release", "-p", "root-reader", "--bin", "root-tool"],
                       check=True, cwd=ROOT_DIR)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT_DIR, "target"))
        tool = os.path.join(target, "release", "root-tool")
    files = make_files(args.scratch, args.entries)
    rrs = rootreadspeed_bin()

    bmf = {}
    lines = []
    for codec in CODECS:
        big = files[("", codec)]
        small = files[("small_", codec)]
        for branch in BRANCHES:
            fixed = [run_rootreadspeed(rrs, small, branch, 1)[0] for _ in range(max(3, args.repeats // 2))]
            fixed_cost = statistics.median(fixed)
            times = {}
            for threads in args.threads:
                root_t, ours_t, dec_t = [], [], []
                unc_root = unc_ours = unc_dec = 0
                for _ in range(args.repeats):
                    t, unc_root = run_rootreadspeed(rrs, big, branch, threads)
                    root_t.append(t)
                    t, unc_ours = run_root_tool(tool, big, branch, threads)
                    ours_t.append(t)
                    if threads == 1:
                        t, unc_dec = run_root_tool(tool, big, branch, 1, decompress_only=True)
                        dec_t.append(t)
                key = f"readspeed/{codec}/{branch}/{threads}t"
                bmf[f"{key}/rootreadspeed"] = summary(root_t, unc_root)
                bmf[f"{key}/root-tool"] = summary(ours_t, unc_ours)
                r_med, o_med = statistics.median(root_t), statistics.median(ours_t)
                adj = max(r_med - fixed_cost, 1e-9)
                bmf[f"{key}/speedup_vs_rootreadspeed"] = {"ratio": {"value": r_med / o_med}}
                bmf[f"{key}/speedup_vs_rootreadspeed_minus_fixed"] = {"ratio": {"value": adj / o_med}}
                times[threads] = o_med
                line = (f"{key}: rootreadspeed {r_med:.4f}s (fixed cost {fixed_cost:.4f}s), "
                        f"root-tool {o_med:.4f}s -> {r_med / o_med:.2f}x "
                        f"({adj / o_med:.2f}x without ROOT's fixed cost)")
                if dec_t:
                    d_med = statistics.median(dec_t)
                    bmf[f"{key}/decompress-only"] = summary(dec_t, unc_dec)
                    bmf[f"readspeed/{codec}/{branch}/1t/fraction_of_decompress"] = {
                        "ratio": {"value": d_med / o_med}}
                    line += f"; decompress-only {d_med:.4f}s -> full read at {100 * d_med / o_med:.0f}% of codec speed"
                lines.append(line)
                print(line, file=sys.stderr)
            if 1 in times and 2 in times:
                bmf[f"readspeed/{codec}/{branch}/2t_over_1t"] = {"ratio": {"value": times[1] / times[2]}}
                line = f"readspeed/{codec}/{branch}: 2 threads {times[1] / times[2]:.2f}x 1 thread"
                lines.append(line)
                print(line, file=sys.stderr)
    out = args.out or os.path.join(args.scratch, "readspeed.bmf.json")
    with open(out, "w") as fh:
        json.dump(bmf, fh, indent=1)
    print("\n".join(lines))
    print(f"BMF written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

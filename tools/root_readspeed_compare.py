#!/usr/bin/env python3
"""Side-by-side read speed: ROOT's rootreadspeed against `root-tool readspeed`, interleaved.

Usage:
    $BENCH_PYTHON tools/root_readspeed_compare.py [--scratch DIR] [--entries N] [--repeats R]
        [--root-tool PATH] [--threads 1 2] [--out FILE.bmf.json]

1. Writes (once; reused when present) DIR/readspeed_{zlib,zstd}.root with real ROOT 6.40 from the
   pinned venv: TTree `t` with N entries (default 2,000,000) of `pt/F` (exponential),
   `arr[4]/F` (gaussians) and `jets` = std::vector<float> (Poisson(3) values), compression
   settings 101 (zlib-1, ROOT's default) and 505 (zstd-5). The scratch files are not committed.
2. For every codec, branch (pt, jets, arr) and thread count T, runs in turn R times:
   * `rootreadspeed --threads T`: ROOT's thread pool of T threads. Its "Real time" holds each
     worker opening the file and reading the tree again (ReadSpeed.cxx's ReadTree), but not the
     setup before it (finding the clusters, which opens the file first and loads ROOT's
     libraries). This is the anchor of the ratios.
   * for T = 1 also plain `rootreadspeed` (no pool, "st"), whose real time holds that first
     opening too (about 0.3-0.5 s here): recorded for reference only.
   * `root-tool readspeed --threads T`, timed as ROOT times it: its `root_real_time_s`, from
     opening the file to the last entry read (the reading of the entries alone, `real_time_s`,
     left out the opening before 2026-12-06).
   * for T = 1, `root-tool readspeed --decompress-only`: the codec alone on the same baskets,
     preloaded in memory.
   Interleaving makes drift on the shared machine hit all alike.
3. Prints the ratios and writes Bencher Metric Format to --out (default DIR/readspeed.bmf.json):
   `readspeed/<codec>/<branch>/<T>t/<tool>` with `latency` (median real time, ns; bounds = min
   and max over the repeats) and `throughput` (MB/s of uncompressed entry data, as reported by
   each tool), plus `ratio` measures (higher is better):
   * `.../<T>t/speedup_vs_rootreadspeed`: ROOT median real time / ours; `..._best`: from the
     fastest repeat of each (least disturbed by other processes);
   * `.../1t/fraction_of_decompress`: decompress-only real time / full read real time (medians);
     `..._cpu`: the same from CPU times;
   * `readspeed/<codec>/<branch>/2t_over_1t`: our 1-thread / 2-thread median real time.
   Import with `bench-run import bmf --suite root_branch_read_anchor --direction throughput=higher
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
        path = os.path.join(scratch, f"readspeed_{codec}.root")
        if not os.path.exists(path) or not check_entries(path, entries):
            print(f"writing {path} ({entries} entries, setting {setting})", file=sys.stderr)
            ROOT.root_readspeed_make(path, setting, entries)
        out[("", codec)] = path
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
    """threads=0: no thread pool (ROOT's single-thread mode, file opening inside the timing)."""
    cmd = [binary, "--files", path, "--trees", "t", "--branches", branch]
    if threads > 0:
        cmd += ["--threads", str(threads)]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    real = float(re.search(r"^Real time:\s+([0-9.e+-]+) s", text, re.M).group(1))
    unc = int(re.search(r"Uncompressed data read:\s+(\d+) bytes", text).group(1))
    return real, unc


def run_root_tool(binary, path, branch, threads, decompress_only=False):
    cmd = [binary, "readspeed", "--files", path, "--trees", "t", "--branches", branch,
           "--threads", str(threads), "--format", "json"]
    if decompress_only:
        cmd.append("--decompress-only")
    doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    # Decompress-only times the codec alone: no file is opened inside its timing.
    if decompress_only:
        return doc["real_time_s"], doc["uncompressed_bytes"], doc["cpu_time_s"]
    return doc["root_real_time_s"], doc["uncompressed_bytes"], doc["root_cpu_time_s"]


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
    ap.add_argument("--lazy-scan", default=None,
                    help="path of the lazy_scan example binary (cargo build --release --example "
                         "lazy_scan): also record the peak RSS of a lazy scan with 16, 48 and 64 MiB "
                         "caches (the biggest jets basket needs 40 MiB in flight: record, payload and "
                         "entry table)")
    args = ap.parse_args()

    os.makedirs(args.scratch, exist_ok=True)
    tool = args.root_tool
    if tool is None:
        subprocess.run(["cargo", "build", "--release", "-p", "root-reader", "--bin", "root-tool"],
                       check=True, cwd=ROOT_DIR)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT_DIR, "target"))
        tool = os.path.join(target, "release", "root-tool")
    files = make_files(args.scratch, args.entries)
    load = os.getloadavg()
    rrs = rootreadspeed_bin()

    bmf = {}
    lines = []

    def note(line):
        lines.append(line)
        print(line, file=sys.stderr)

    for codec in CODECS:
        big = files[("", codec)]
        for branch in BRANCHES:
            ours_by_threads = {}
            for threads in args.threads:
                root_t, st_t, ours_t, ours_cpu, dec_t, dec_cpu = [], [], [], [], [], []
                unc_root = unc_st = unc_ours = unc_dec = 0
                for _ in range(args.repeats):
                    t, unc_root = run_rootreadspeed(rrs, big, branch, threads)
                    root_t.append(t)
                    t, unc_ours, cpu = run_root_tool(tool, big, branch, threads)
                    ours_t.append(t)
                    ours_cpu.append(cpu)
                    if threads == 1:
                        t, unc_st = run_rootreadspeed(rrs, big, branch, 0)
                        st_t.append(t)
                        t, unc_dec, cpu = run_root_tool(tool, big, branch, 1, decompress_only=True)
                        dec_t.append(t)
                        dec_cpu.append(cpu)
                key = f"readspeed/{codec}/{branch}/{threads}t"
                bmf[f"{key}/rootreadspeed"] = summary(root_t, unc_root)
                bmf[f"{key}/root-tool"] = summary(ours_t, unc_ours)
                r_med, o_med = statistics.median(root_t), statistics.median(ours_t)
                bmf[f"{key}/speedup_vs_rootreadspeed"] = {"ratio": {"value": r_med / o_med}}
                best = min(root_t) / min(ours_t)
                bmf[f"{key}/speedup_vs_rootreadspeed_best"] = {"ratio": {"value": best}}
                ours_by_threads[threads] = o_med
                line = (f"{key}: rootreadspeed --threads {threads} {r_med:.4f}s, root-tool {o_med:.4f}s"
                        f" -> {r_med / o_med:.2f}x (best of {args.repeats}: {best:.2f}x)")
                if st_t:
                    st_med = statistics.median(st_t)
                    bmf[f"{key}/rootreadspeed-st"] = summary(st_t, unc_st)
                    bmf[f"{key}/speedup_vs_rootreadspeed_st"] = {"ratio": {"value": st_med / o_med}}
                    line += f"; rootreadspeed without pool (times file opening) {st_med:.4f}s -> {st_med / o_med:.2f}x"
                if dec_t:
                    d_med = statistics.median(dec_t)
                    frac = d_med / o_med
                    frac_cpu = statistics.median(dec_cpu) / statistics.median(ours_cpu)
                    bmf[f"{key}/decompress-only"] = summary(dec_t, unc_dec)
                    bmf[f"{key}/fraction_of_decompress"] = {"ratio": {"value": frac}}
                    bmf[f"{key}/fraction_of_decompress_cpu"] = {"ratio": {"value": frac_cpu}}
                    line += (f"; decompress-only {d_med:.4f}s -> full read at {100 * frac:.0f}% of codec"
                             f" speed ({100 * frac_cpu:.0f}% by CPU time)")
                note(line)
            if 1 in ours_by_threads and 2 in ours_by_threads:
                scale = ours_by_threads[1] / ours_by_threads[2]
                bmf[f"readspeed/{codec}/{branch}/2t_over_1t"] = {"ratio": {"value": scale}}
                note(f"readspeed/{codec}/{branch}: 2 threads {scale:.2f}x 1 thread")
    if args.lazy_scan:
        for codec in CODECS:
            for mib in (16, 48, 64):
                doc = json.loads(subprocess.run([args.lazy_scan, files[("", codec)], "t", str(mib)],
                                                check=True, capture_output=True, text=True).stdout)
                peak = doc["peak_rss_kib"] / 1024
                base = doc["peak_rss_kib_before"] / 1024
                largest = doc["largest_basket_bytes"] / 2**20
                bmf[f"lazy_scan/{codec}/cache_{mib}MiB"] = {
                    "peak_rss_mib": {"value": peak},
                    # What the scan added to the process, against the bound it was given.
                    "growth_over_cache_bound": {"value": (peak - base) / mib},
                    "largest_basket_mib": {"value": largest},
                    "scanned_mib": {"value": doc["scanned_bytes"] / 2**20},
                }
                note(f"lazy_scan/{codec}: file {doc['file_bytes'] / 2**20:.0f} MiB, scanned "
                     f"{doc['scanned_bytes'] / 2**20:.0f} MiB decompressed with a {mib} MiB cache: peak RSS "
                     f"{peak:.0f} MiB (start {base:.0f} MiB, growth {peak - base:.1f} MiB = "
                     f"{(peak - base) / mib:.2f}x the bound; largest basket {largest:.1f} MiB)")
    out = args.out or os.path.join(args.scratch, "readspeed.bmf.json")
    with open(out, "w") as fh:
        json.dump(bmf, fh, indent=1)
    print(f"load average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print("\n".join(lines))
    print(f"BMF written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

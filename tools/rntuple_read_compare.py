#!/usr/bin/env python3
"""Side-by-side RNTuple read speed: ROOT's RNTupleReader, uproot and `root-tool readspeed`, interleaved.

Usage:
    $BENCH_PYTHON tools/rntuple_read_compare.py [--scratch DIR] [--entries N] [--repeats R]
        [--root-tool PATH] [--threads 1 2] [--fields pt arr jets n] [--codecs zstd zlib]
        [--cluster-mib M] [--only-anchors] [--out FILE.bmf.json]
    Quick check: --entries 200000 --repeats 1 (--only-anchors while root-tool cannot read
    RNTuples).

1. Writes (once; reused when present) DIR/rntuple_read_{zstd,zlib}.root with real ROOT 6.40 from
   the pinned venv (RNTupleModel / RNTupleWriter, default write options apart from the
   compression): RNTuple `events` with N entries (default 2,000,000) of `pt` (float,
   exponential), `arr` (std::array<float,4>, gaussians), `jets` (std::vector<float>, a Poisson(3)
   count of gaussians), `n` (std::int32_t, the number of jets, as NanoAOD's nJet), `tag`
   (std::string, a trigger-like name of 5 to 9 characters) and `pair` (std::pair<float,
   std::int32_t>, a record), compression
   settings 505 (zstd-5, RNTuple's default) and 101 (zlib-1). The writer cuts the clusters itself
   (the count is printed): about 128 MiB compressed each by default, so the 2,000,000 entries
   (about 55 MB) are one cluster. --cluster-mib M writes clusters of about M MiB compressed
   (RNTupleWriteOptions::SetApproxZippedClusterSize) into DIR/rntuple_read_<codec>-cMMiB.root
   instead, and the codec in the names below becomes `<codec>-cMMiB`. The scratch files are not
   committed.
2. Compiles (once; again when its source changes) DIR/rntuple_anchor, a C++ program against the
   venv's ROOT: `rntuple_anchor FILE NTUPLE FIELD T` opens the RNTuple with
   ROOT::RNTupleReader::Open and makes a typed RNTupleView of the field (float,
   std::array<float,4>, std::vector<float>, std::int32_t, std::string,
   std::pair<float,std::int32_t>), untimed, as rootreadspeed leaves out the setup; then times
   reading every entry through the view, summing the values into a checksum (strings: their
   lengths; the pair: both members). For T > 1 it calls ROOT::EnableImplicitMT(T) before opening: that is how ROOT
   parallelises a single RNTupleReader. Its cluster pool then unzips all the field's pages of a
   cluster as tasks on the implicit-MT thread pool when it loads the cluster, while the reading
   thread walks the entries; without implicit MT the reading thread decompresses each page when
   it first needs it. Either way one extra I/O thread reads the clusters' compressed pages ahead.
   It prints one JSON line: real_time_s, cpu_time_s (getrusage: every thread), entries,
   checksum, and from the descriptor (untimed) the field's pages' compressed_bytes and
   uncompressed_bytes, the cluster count and whether implicit MT was on.
3. For every codec, field and thread count T, runs in turn R times (default 5):
   * `rntuple_anchor ... T`: ROOT's RNTupleReader. This is the anchor of the ratios.
   * for T = 1, uproot: a fresh Python process (nothing cached) opens the file, untimed, and
     times `ntuple[field].array(...)` (NumPy arrays; an awkward array for jets).
   * `root-tool readspeed --files FILE --trees events --branches FIELD --threads T` (setup
     excluded as well).
   * `root-tool readspeed --read-decompress --threads T`: the pages read from the file,
     checksummed and decompressed, not decoded: the floor any reader of the file pays;
     `--read-copy`: the same, each page then copied once.
   * `root-tool readspeed --decompress-only --threads T`: the codec alone on the same pages,
     preloaded in memory: the ceiling.
   Interleaving makes drift on the shared machine hit all alike. The checksums of ROOT and uproot
   must agree (exactly for `n` and `tag`, to a relative 1e-9 for float sums), else the run fails.
4. Prints the timings and ratios and writes Bencher Metric Format to --out (default
   DIR/rntuple_read.bmf.json): `rntuple_read/<codec>/<field>/<T>t/<tool>`, tool one of
   root_rntuplereader, uproot, root_tool, read_decompress, read_copy, decompress_only, with `latency` (median real time, ns;
   bounds = min and max over the repeats) and `throughput` (MB/s of uncompressed page data; every
   tool counted on the bytes root-tool reports for the field, so all share one byte count; with
   --only-anchors, on the anchor's count from ROOT's descriptor), plus `ratio` measures (higher
   is better):
   * `.../<T>t/speedup_vs_rntuplereader`: ROOT median real time / ours;
   * `.../1t/speedup_vs_uproot`: uproot median real time / ours;
   * `.../<T>t/fraction_of_read_decompress`: read+decompress median real time / full read
     median real time (the share of the file reader's floor reached);
   * `.../<T>t/fraction_of_decompress`: decompress-only median real time / full read median
     real time, at the same thread count;
   * `.../<T>t/fraction_of_read_copy`: read+copy (`--read-copy`: pages read, checked,
     decompressed and copied once) median real time / full read median real time: the floor of
     a reader that puts split columns back together in memory of its own;
   * `rntuple_read/<codec>/<field>/2t_over_1t`: our 1-thread / 2-thread median real time, and
     `2t_over_1t_decompress_only`, `2t_over_1t_read_decompress`: the same for the ceiling and
     the floor (what two threads can gain on this machine at all).
   Import with `bench-run import bmf --suite rntuple_read --direction throughput=higher
   --direction ratio=higher FILE`.
"""

import argparse
import importlib.util
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import time
import warnings

warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(HERE)
CODECS = {"zstd": 505, "zlib": 101}
FIELDS = ["pt", "arr", "jets", "n", "tag", "pair"]
NTUPLE = "events"
# Relative tolerance of float checksums: the sums run in different orders (ROOT entry by entry,
# NumPy pairwise), each in double precision.
REL_TOL = 1e-9

MAKER = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TRandom3.h>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// cluster_bytes 0: ROOT's default approximate zipped cluster size (128 MiB).
void rntuple_read_make(const char *path, int setting, long n, long cluster_bytes) {
    auto model = ROOT::RNTupleModel::Create();
    auto pt = model->MakeField<float>("pt");
    auto arr = model->MakeField<std::array<float, 4>>("arr");
    auto jets = model->MakeField<std::vector<float>>("jets");
    auto nj = model->MakeField<std::int32_t>("n");
    auto tag = model->MakeField<std::string>("tag");
    auto pair = model->MakeField<std::pair<float, std::int32_t>>("pair");
    ROOT::RNTupleWriteOptions opts;
    opts.SetCompression(setting);
    if (cluster_bytes > 0) opts.SetApproxZippedClusterSize(cluster_bytes);
    auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "events", path, opts);
    TRandom3 r(12345);
    for (long i = 0; i < n; ++i) {
        *pt = r.Exp(25.0);
        for (int k = 0; k < 4; ++k) (*arr)[k] = r.Gaus(0.0, 1.0);
        jets->clear();
        int m = r.Poisson(3.0);
        for (int k = 0; k < m; ++k) jets->push_back(r.Gaus(50.0, 20.0));
        *nj = m;
        // A trigger-like name of 5 to 9 characters; a record of a float and an int.
        *tag = "HLT_" + std::to_string(r.Integer(100000));
        *pair = {float(r.Gaus(0.0, 3.0)), std::int32_t(r.Integer(1000)) - 500};
        writer->Fill();
    }
}

// "entries clusters" of the RNTuple `events`, or "" if it cannot be opened or lacks a field.
std::string rntuple_read_info(const char *path) {
    try {
        auto reader = ROOT::RNTupleReader::Open("events", path);
        for (const char *f : {"pt", "arr", "jets", "n", "tag", "pair"})
            if (reader->GetDescriptor().FindFieldId(f) == ROOT::kInvalidDescriptorId) return "";
        return std::to_string(reader->GetNEntries()) + " " +
               std::to_string(reader->GetDescriptor().GetNActiveClusters());
    } catch (const std::exception &) {
        return "";
    }
}
"""

ANCHOR = r"""// ROOT's RNTupleReader reading one field whole: the anchor of tools/rntuple_read_compare.py.
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <TROOT.h>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>
#include <sys/resource.h>

static double cpu_seconds() {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The field's pages (every physical column under it), from the descriptor: bytes on storage
// and decompressed.
static void page_bytes(const ROOT::RNTupleDescriptor &desc, ROOT::DescriptorId_t field,
                       std::uint64_t &stored, std::uint64_t &bytes) {
    for (const auto &col : desc.GetColumnIterable(field)) {
        if (col.IsAliasColumn()) continue;
        for (const auto &cluster : desc.GetClusterIterable()) {
            if (!cluster.ContainsColumn(col.GetPhysicalId())) continue;
            for (const auto &page : cluster.GetPageRange(col.GetPhysicalId()).GetPageInfos()) {
                stored += page.GetLocator().GetNBytesOnStorage();
                bytes += (std::uint64_t(page.GetNElements()) * col.GetBitsOnStorage() + 7) / 8;
            }
        }
    }
    for (auto kid : desc.GetFieldDescriptor(field).GetLinkIds()) page_bytes(desc, kid, stored, bytes);
}

struct Result {
    double real = 0, cpu = 0, checksum = 0;
};

template <typename T, typename Add>
static Result scan(ROOT::RNTupleReader &reader, const char *field, Add add) {
    auto view = reader.GetView<T>(field);
    Result res;
    double sum = 0;
    double cpu0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    for (auto i : reader.GetEntryRange()) add(sum, view(i));
    auto t1 = std::chrono::steady_clock::now();
    res.cpu = cpu_seconds() - cpu0;
    res.real = std::chrono::duration<double>(t1 - t0).count();
    res.checksum = sum;
    return res;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s FILE NTUPLE FIELD THREADS\n", argv[0]);
        return 2;
    }
    const std::string field = argv[3];
    const int threads = std::atoi(argv[4]);
    if (threads > 1) ROOT::EnableImplicitMT(threads);
    auto reader = ROOT::RNTupleReader::Open(argv[2], argv[1]);
    const auto &desc = reader->GetDescriptor();
    std::uint64_t stored = 0, bytes = 0;
    page_bytes(desc, desc.FindFieldId(field), stored, bytes);
    Result res;
    if (field == "pt") {
        res = scan<float>(*reader, "pt", [](double &s, float v) { s += v; });
    } else if (field == "arr") {
        res = scan<std::array<float, 4>>(*reader, "arr", [](double &s, const std::array<float, 4> &v) {
            for (float x : v) s += x;
        });
    } else if (field == "jets") {
        res = scan<std::vector<float>>(*reader, "jets", [](double &s, const std::vector<float> &v) {
            for (float x : v) s += x;
        });
    } else if (field == "n") {
        res = scan<std::int32_t>(*reader, "n", [](double &s, std::int32_t v) { s += v; });
    } else if (field == "tag") {
        // Strings: the sum of their lengths.
        res = scan<std::string>(*reader, "tag", [](double &s, const std::string &v) { s += v.size(); });
    } else if (field == "pair") {
        res = scan<std::pair<float, std::int32_t>>(
            *reader, "pair", [](double &s, const std::pair<float, std::int32_t> &v) { s += double(v.first) + double(v.second); });
    } else {
        std::fprintf(stderr, "no typed view for field %s\n", field.c_str());
        return 2;
    }
    std::printf("{\"real_time_s\": %.9g, \"cpu_time_s\": %.9g, \"entries\": %llu, \"checksum\": %.17g, "
                "\"compressed_bytes\": %llu, \"uncompressed_bytes\": %llu, \"clusters\": %zu, "
                "\"implicit_mt\": %s}\n",
                res.real, res.cpu, (unsigned long long)reader->GetNEntries(), res.checksum,
                (unsigned long long)stored, (unsigned long long)bytes, desc.GetNActiveClusters(),
                ROOT::IsImplicitMTEnabled() ? "true" : "false");
    std::fflush(stdout);
    return 0;
}
"""


def root_prefix():
    """The venv's ROOT installation (ROOT/{bin,include,lib}), found without importing ROOT."""
    spec = importlib.util.find_spec("ROOT")
    if spec is None or spec.origin is None:
        sys.exit("ROOT is not importable: run this with tools/.venv/bin/python (tools/venv.sh)")
    return os.path.dirname(spec.origin)


def codec_label(codec, cluster_mib):
    return codec if cluster_mib is None else f"{codec}-c{cluster_mib}MiB"


def make_files(scratch, entries, codecs, cluster_mib):
    import ROOT  # noqa: PLC0415

    ROOT.gROOT.SetBatch(True)
    ROOT.gInterpreter.Declare(MAKER)
    out = {}
    for codec in codecs:
        setting = CODECS[codec]
        label = codec_label(codec, cluster_mib)
        path = os.path.join(scratch, f"rntuple_read_{label}.root")
        info = str(ROOT.rntuple_read_info(path)) if os.path.exists(path) else ""
        if not info or int(info.split()[0]) != entries:
            print(f"writing {path} ({entries} entries, setting {setting})", file=sys.stderr)
            ROOT.rntuple_read_make(path, setting, entries, int((cluster_mib or 0) * 2**20))
            info = str(ROOT.rntuple_read_info(path))
        n, clusters = (int(x) for x in info.split())
        print(f"{path}: {n} entries in {clusters} clusters, {os.path.getsize(path) / 1e6:.1f} MB",
              file=sys.stderr)
        out[codec] = path
    return out


def build_anchor(scratch):
    """Compiles rntuple_anchor into `scratch` unless it is there from the same source."""
    src = os.path.join(scratch, "rntuple_anchor.cxx")
    exe = os.path.join(scratch, "rntuple_anchor")
    if os.path.exists(exe) and os.path.exists(src):
        with open(src) as fh:
            if fh.read() == ANCHOR:
                return exe
    with open(src, "w") as fh:
        fh.write(ANCHOR)
    if os.path.exists(exe):
        os.remove(exe)
    prefix = root_prefix()
    config = os.path.join(prefix, "bin", "root-config")
    # The wheel's root-config reports the prefix it was built in: give it the real one.
    flags = subprocess.run([config, f"--prefix={prefix}", "--cflags", "--libs"], check=True,
                           capture_output=True, text=True).stdout.split()
    flags = [f for f in flags if not f.startswith("-Wl,-rpath,")]
    if "-lROOTNTuple" not in flags:
        flags.append("-lROOTNTuple")
    libdir = os.path.join(prefix, "lib")
    cmd = ["g++", "-O2", *[f for f in flags if not f.startswith("-l")], src, "-o", exe,
           *[f for f in flags if f.startswith("-l")], f"-Wl,-rpath,{libdir}"]
    print(f"compiling {exe}: {shlex.join(cmd)}", file=sys.stderr)
    subprocess.run(cmd, check=True)
    return exe


def run_anchor(exe, path, field, threads):
    text = subprocess.run([exe, path, NTUPLE, field, str(threads)], check=True, capture_output=True,
                          text=True).stdout
    # ROOT may print notices; the result is the last line.
    return json.loads(text.strip().splitlines()[-1])


def uproot_worker(path, field):
    """In a fresh process: open (untimed), then time reading the field whole with uproot."""
    import numpy as np  # noqa: PLC0415
    import resource  # noqa: PLC0415

    import awkward as ak  # noqa: PLC0415
    import uproot  # noqa: PLC0415

    def cpu():
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_utime + u.ru_stime

    f = uproot.open(path, array_cache=None)
    ntuple = f[NTUPLE]
    col = ntuple[field]
    # NumPy arrays where the field has a NumPy form (arr: shape (N, 4)); jets as an awkward array
    # (NumPy would build an object array, one array per entry: minutes).
    # Strings and records as awkward arrays too.
    library = "ak" if field in ("jets", "tag", "pair") else "np"
    cpu0 = cpu()
    t0 = time.perf_counter()
    values = col.array(library=library, array_cache=None)
    real = time.perf_counter() - t0
    cpu_s = cpu() - cpu0
    entries = len(values)
    if field == "tag":
        # As the anchor: the sum of the strings' lengths.
        checksum = float(np.sum(ak.to_numpy(ak.num(values, axis=1)), dtype=np.float64))
    elif field == "pair":
        # uproot reads a std::pair as a tuple: fields "0" and "1".
        checksum = float(np.sum(ak.to_numpy(values["0"]), dtype=np.float64)
                         + np.sum(ak.to_numpy(values["1"]), dtype=np.float64))
    else:
        flat = ak.to_numpy(ak.flatten(values, axis=None)) if library == "ak" else values
        checksum = float(np.sum(flat, dtype=np.float64))
    print(json.dumps({"real_time_s": real, "cpu_time_s": cpu_s, "entries": entries, "checksum": checksum}))
    sys.stdout.flush()


def run_uproot(path, field):
    cmd = [sys.executable, os.path.abspath(__file__), "--uproot-worker", path, field]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(text.strip().splitlines()[-1])


class RootToolFailed(Exception):
    """root-tool failed (NoRNTupleSupport: because it cannot read RNTuples yet)."""


class NoRNTupleSupport(RootToolFailed):
    pass


def run_root_tool(binary, path, field, threads, mode=None):
    """`root-tool readspeed` of one field; `mode` one of its floors (`--decompress-only`,
    `--read-decompress`) or None for the full read."""
    cmd = [binary, "readspeed", "--files", path, "--trees", NTUPLE, "--branches", field,
           "--threads", str(threads), "--format", "json"]
    if mode:
        cmd.append(mode)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        said = [ln.strip() for ln in proc.stderr.splitlines() if "is a ROOT::RNTuple" in ln]
        if said:
            raise NoRNTupleSupport(
                f"{binary} cannot read RNTuples yet: `{shlex.join(cmd)}` says\n  {said[0]}\n"
                "rebuild it once RNTuple readspeed has landed (cargo build --release -p root-reader "
                "--bin root-tool), or run the ROOT and uproot anchors alone with --only-anchors")
        # No backtrace (RUST_BACKTRACE): the error and its causes come first.
        head = proc.stderr.split("Stack backtrace:")[0].strip()
        raise RootToolFailed(f"`{shlex.join(cmd)}` failed (exit {proc.returncode}):\n{head}")
    return json.loads(proc.stdout)


def check_checksums(what, ref, other, exact):
    """ROOT's and uproot's sums of the same field must agree: integer sums exactly, float sums
    to REL_TOL."""
    a, b = ref["checksum"], other["checksum"]
    same = a == b if exact else math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-6)
    if ref["entries"] != other["entries"] or not same:
        sys.exit(f"{what}: checksums disagree: ROOT {ref['entries']} entries, sum {a!r}; "
                 f"uproot {other['entries']} entries, sum {b!r}")


def summary(samples, unc):
    med = statistics.median(samples)
    return {
        "latency": {"value": med * 1e9, "lower_value": min(samples) * 1e9, "upper_value": max(samples) * 1e9},
        "throughput": {"value": unc / 1e6 / med, "lower_value": unc / 1e6 / max(samples),
                       "upper_value": unc / 1e6 / min(samples)},
    }


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--uproot-worker":
        uproot_worker(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default=os.path.join("/tmp", "rntuple_read"))
    ap.add_argument("--entries", type=int, default=2_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--fields", nargs="+", default=FIELDS, choices=FIELDS)
    ap.add_argument("--codecs", nargs="+", default=list(CODECS), choices=list(CODECS))
    ap.add_argument("--root-tool", default=None,
                    help="default: $CARGO_TARGET_DIR or target, /release/root-tool (not built here)")
    ap.add_argument("--only-anchors", action="store_true",
                    help="run ROOT's RNTupleReader and uproot only (not root-tool)")
    ap.add_argument("--cluster-mib", type=int, default=None,
                    help="write clusters of about this many MiB compressed (RNTupleWriteOptions::"
                         "SetApproxZippedClusterSize) instead of ROOT's 128 MiB, into separate files; "
                         "the codec in the names becomes e.g. zstd-c8MiB")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    os.makedirs(args.scratch, exist_ok=True)
    tool = args.root_tool
    if tool is None:
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT_DIR, "target"))
        tool = os.path.join(target, "release", "root-tool")
    if not args.only_anchors and not os.access(tool, os.X_OK):
        sys.exit(f"no root-tool at {tool}: build it (cargo build --release -p root-reader --bin root-tool), "
                 "pass --root-tool PATH, or run the anchors alone with --only-anchors")
    files = make_files(args.scratch, args.entries, args.codecs, args.cluster_mib)
    anchor = build_anchor(args.scratch)
    load = os.getloadavg()

    bmf = {}
    lines = []

    def note(line):
        lines.append(line)
        print(line, file=sys.stderr)

    try:
        for codec in args.codecs:
            path = files[codec]
            label = codec_label(codec, args.cluster_mib)
            for field in args.fields:
                ours_by_threads, ceiling_by_threads, floor_by_threads = {}, {}, {}
                for threads in args.threads:
                    root_t, up_t, ours_t, dec_t, floor_t, copy_t = [], [], [], [], [], []
                    root_cpu, ours_cpu, dec_cpu = [], [], []
                    root_doc = up_doc = ours_doc = None
                    for _ in range(args.repeats):
                        root_doc = run_anchor(anchor, path, field, threads)
                        root_t.append(root_doc["real_time_s"])
                        root_cpu.append(root_doc["cpu_time_s"])
                        if threads == 1:
                            up_doc = run_uproot(path, field)
                            check_checksums(f"{label}/{field}", root_doc, up_doc, exact=field in ("n", "tag"))
                            up_t.append(up_doc["real_time_s"])
                        if not args.only_anchors:
                            ours_doc = run_root_tool(tool, path, field, threads)
                            ours_t.append(ours_doc["real_time_s"])
                            ours_cpu.append(ours_doc["cpu_time_s"])
                            doc = run_root_tool(tool, path, field, threads, "--decompress-only")
                            dec_t.append(doc["real_time_s"])
                            dec_cpu.append(doc["cpu_time_s"])
                            doc = run_root_tool(tool, path, field, threads, "--read-decompress")
                            floor_t.append(doc["real_time_s"])
                            doc = run_root_tool(tool, path, field, threads, "--read-copy")
                            copy_t.append(doc["real_time_s"])
                    key = f"rntuple_read/{label}/{field}/{threads}t"
                    unc = root_doc["uncompressed_bytes"]
                    if ours_doc is not None:
                        if ours_doc["uncompressed_bytes"] != unc:
                            note(f"{key}: root-tool counts {ours_doc['uncompressed_bytes']} uncompressed bytes, "
                                 f"ROOT's descriptor {unc}: throughputs use root-tool's")
                        unc = ours_doc["uncompressed_bytes"]
                    r_med = statistics.median(root_t)
                    bmf[f"{key}/root_rntuplereader"] = summary(root_t, unc)
                    line = (f"{key}: {unc / 1e6:.1f} MB in pages ({root_doc['compressed_bytes'] / 1e6:.1f} MB "
                            f"stored); RNTupleReader {r_med:.4f}s (cpu {statistics.median(root_cpu):.4f}s, "
                            f"{unc / 1e6 / r_med:.0f} MB/s)")
                    if up_t:
                        u_med = statistics.median(up_t)
                        bmf[f"{key}/uproot"] = summary(up_t, unc)
                        line += f", uproot {u_med:.4f}s ({unc / 1e6 / u_med:.0f} MB/s)"
                    if ours_t:
                        o_med = statistics.median(ours_t)
                        d_med = statistics.median(dec_t)
                        bmf[f"{key}/root_tool"] = summary(ours_t, unc)
                        bmf[f"{key}/decompress_only"] = summary(dec_t, unc)
                        bmf[f"{key}/speedup_vs_rntuplereader"] = {"ratio": {"value": r_med / o_med}}
                        frac = d_med / o_med
                        bmf[f"{key}/fraction_of_decompress"] = {"ratio": {"value": frac}}
                        f_med = statistics.median(floor_t)
                        bmf[f"{key}/read_decompress"] = summary(floor_t, unc)
                        bmf[f"{key}/fraction_of_read_decompress"] = {"ratio": {"value": f_med / o_med}}
                        c_med = statistics.median(copy_t)
                        bmf[f"{key}/read_copy"] = summary(copy_t, unc)
                        bmf[f"{key}/fraction_of_read_copy"] = {"ratio": {"value": c_med / o_med}}
                        ours_by_threads[threads] = o_med
                        ceiling_by_threads[threads] = d_med
                        floor_by_threads[threads] = f_med
                        line += (f", root-tool {o_med:.4f}s (cpu {statistics.median(ours_cpu):.4f}s,"
                                 f" {unc / 1e6 / o_med:.0f} MB/s) -> {r_med / o_med:.2f}x RNTupleReader")
                        if up_t:
                            bmf[f"{key}/speedup_vs_uproot"] = {"ratio": {"value": u_med / o_med}}
                            line += f", {u_med / o_med:.2f}x uproot"
                        line += (f"; decompress-only {d_med:.4f}s (cpu {statistics.median(dec_cpu):.4f}s)"
                                 f" -> full read at {100 * frac:.0f}% of codec speed; read+decompress"
                                 f" {f_med:.4f}s -> full read at {100 * f_med / o_med:.0f}% of that floor;"
                                 f" read+copy {c_med:.4f}s -> {100 * c_med / o_med:.0f}%")
                    elif up_t:
                        line += f"; RNTupleReader {u_med / r_med:.2f}x uproot"
                    note(line)
                if 1 in ours_by_threads and 2 in ours_by_threads:
                    scale = ours_by_threads[1] / ours_by_threads[2]
                    bmf[f"rntuple_read/{label}/{field}/2t_over_1t"] = {"ratio": {"value": scale}}
                    c_scale = ceiling_by_threads[1] / ceiling_by_threads[2]
                    f_scale = floor_by_threads[1] / floor_by_threads[2]
                    bmf[f"rntuple_read/{label}/{field}/2t_over_1t_decompress_only"] = {"ratio": {"value": c_scale}}
                    bmf[f"rntuple_read/{label}/{field}/2t_over_1t_read_decompress"] = {"ratio": {"value": f_scale}}
                    note(f"rntuple_read/{label}/{field}: root-tool 2 threads {scale:.2f}x 1 thread"
                         f" (decompress-only {c_scale:.2f}x, read+decompress {f_scale:.2f}x)")
    except RootToolFailed as e:
        sys.exit(str(e))
    out = args.out or os.path.join(args.scratch, "rntuple_read.bmf.json")
    with open(out, "w") as fh:
        json.dump(bmf, fh, indent=1)
    print(f"load average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print("\n".join(lines))
    print(f"BMF written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

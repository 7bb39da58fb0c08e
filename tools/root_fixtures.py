#!/usr/bin/env python3
"""Write the ROOT fixtures of `readers/root` with real ROOT (PyROOT) and record what ROOT reads back.

Usage:
    $BENCH_PYTHON tools/root_fixtures.py [OUT_DIR]     (default: readers/root/tests/fixtures)
    ROOT_FIXTURES=split,embedded $BENCH_PYTHON tools/root_fixtures.py   (only these)

For every fixture `NAME.root` it writes `NAME.json`, produced by reopening the file with ROOT in a
fresh process and reading every entry of every branch of every tree through TTree/TLeaf:

    {"file": NAME.root, "trees": {"path;cycle": {"entries": N, "branches": {
        BRANCH: {"kind": "scalar"|"fixed"|"jagged"|"vector", "type": "f32"|..., "values": [...]}
                 | {"kind": "digest", "type": ..., "len": L, "sha256": HEX, "head": [...], "tail": [...]}}}}}

Branch value encodings: scalars are numbers (bool as true/false), fixed arrays and jagged arrays
and std::vector entries are lists. Huge fixed arrays (the multi-block fixture) are recorded as
the SHA-256 of the values serialised little-endian plus their first and last values.

Fixtures (all written by ROOT 6.40 from the pinned venv, tools/requirements.txt):
  types_{zlib,zstd,lz4,lzma,none}.root  every numeric leaf type, arr[4]/F, da[3]/D, x[n]/F,
                                        xd[n]/D, vector<float|double|int>; small baskets so every
                                        branch has many baskets
  structure.root   tree `t` with two cycles (t;1 10 entries, t;2 25 entries), `sub/inner` and
                   `sub/deeper/t2` in subdirectories, a TNamed next to them
  embedded.root    AutoSave("SaveSelf") without closing: the last basket of every branch lives
                   inside the TTree record (TBranch::fBaskets)
  multiblock.root  one 17,000,000-byte basket per branch (u8 array), one branch per algorithm
                   (zlib, zstd, lz4, lzma): every object is split over two compression blocks
  split.root       a class split into member branches (split level 99): `evt.` of class Event
                   with basic members (`evt.run`, `evt.w`), a member object split further
                   (`evt.lead.e`, ... of class Hit) and a std::vector<Hit> whose elements are split
                   into one branch per member (`evt.hits.e`, ...), and std::vector<float|int>
                   members (`evt.vals`, `evt.ids`: their type is in the file's TStreamerInfo);
                   the parents hold no baskets
  objects.root     what is streamed object by object, every kind in one tree `t` (zstd, small
                   baskets): a char* leaf (`cstr/C`), TString and std::string branches,
                   vector<string>, vector<vector<float|int|string>>, vector<bool>, a bool leaf,
                   Double32_t/Float16_t leaves with and without ranges (`d32r/d[0,100,20]`),
                   leaf lists (`x/F:y/D:n/I:ok/O`, `p[3]/F:q/S`), and split classes whose members
                   are packed reals (ranges in the member comments), std::string, TString,
                   vector<string>, vector<vector<float>>, and a vector<Part> whose elements'
                   std::string, Double32_t and vector<int> members become one branch each;
                   objects written whole (split level 0): `rng0.` (Ranged) and `whole.`
                   (Tagged: a TObject with an int, a float[3], TString, std::string,
                   vector<float> and a Ranged member object), `derived.` (a class with a
                   base class), and `ranges` (a vector<Ranged> written whole: member-wise;
                   not recorded: entry i holds i % 3 copies of `rng0.`'s entry i)
                   Recorded as ROOT reads it back through the classes themselves ("kind":
                   "json": entries as root-tool writes them)
  versions.root    class Evo (a TObject) at version 1 (tree t1: id, x, tag) and at version 2
                   (tree t2, written by another process updating the file: id, y, x, tag, ks),
                   each split (`e.*`) and written whole (`w.`); recorded as ROOT reads them
                   back with version 2 (the members each tree's version wrote)
  paths.root       branches that share a name (issue 49): `a` and `b`, two objects of one class
                   split without a trailing dot, so that their members are named `x`, `y`, `hit`,
                   `hit.e`, `hit.id` under both (uproot's full paths `a/x`, `b/hit/hit.e`, ...);
                   `c.` of the same class with a dot (`c.x`, unique names); a top-level float `x`
                   (`x` is also a member of `a` and `b`); `n`; and two top-level branches both
                   named `dup` (as some Delphes files hold two `Particle`). Recorded by full path,
                   the second `dup` as `dup#2`: ROOT reads each leaf through its own branch object,
                   never by name
  rntuple_{zlib,zstd,lz4,lzma,none}.root
                   an RNTuple `events` (ROOT::RNTuple, format 1.0) of 120 entries in clusters
                   of 40, 40, 20 and 20 entries, tiny pages (several per column and cluster),
                   with every fundamental field type (bool, char, std::[u]int{8,16,32,64}_t,
                   float, double), std::string, std::vector<float|std::int64_t|std::string|bool>,
                   ROOT::RVec<double>, std::vector<std::vector<float>> and a record
                   (std::pair<std::int32_t,double>); empty collections and strings included. The
                   writer's default encodings: split (+zigzag, +delta for offsets) when
                   compressed, plain when not (`none`)
  rntuple_encodings.root
                   the encodings the writer does not choose by default, forced per field:
                   Index32, SplitIndex32 and plain Index64 offsets, Real16 floats, double stored
                   as SplitReal32 (also Double32_t), truncated (Real32Trunc, 13 and 20 bits) and
                   quantised (Real32Quant, 11 and 27 bits) floats and doubles, plain ints and
                   doubles; records (a pair
                   holding a vector, a tuple holding a string); and types this reader does not read (std::array, std::variant:
                   recorded without values)
  rntuple_classes.root
                   user classes (RntEvent: a double, an RntHit member whose base class RntBase
                   holds an int and which holds a float[3], a vector<RntHit>, a string, an enum
                   class RntColor of std::int16_t), std::optional<float>,
                   std::unique_ptr<std::int32_t>, std::set<std::int32_t>,
                   std::map<std::string,float>, and two fields added after 40 entries (`late`,
                   `late_v`: deferred columns in the footer's schema extension, zeros and empty
                   vectors before); clusters of 30 entries
  rntuple_empty.root
                   the fields of rntuple_*.root and no entries
  rntuple_projections.root
                   projected fields of type ROOT::RVec<float> (alias columns) onto the items of
                   a std::vector<float> and onto the member `x` of a std::vector<RntPoint>, as
                   CMS's RNTupleImporter writes NanoAOD; a class without data members
                   (RntEmpty) alone and in a vector; clusters of 30 entries
  RNTuples are recorded as ROOT's RNTupleReader reads them back, one RNTupleView per top-level
  field: {"ntuples": {"events": {"entries": N, "fields": {NAME: {"type": T, "values": [...]}}}}}
  with numbers, strings (UTF-8), lists and records ({"_0": ..., "_1": ...}) as JSON values
"""

import hashlib
import json
import os
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

N_TYPES = 200
N_OBJECTS = 300
BIG = 17_000_000
ALGOS = {"zlib": 101, "zstd": 505, "lz4": 404, "lzma": 207, "none": 0}


def root():
    import ROOT  # noqa: PLC0415

    ROOT.gROOT.SetBatch(True)
    return ROOT


def scalar_specs():
    # (branch name, leaflist code, numpy dtype, value function of entry i)
    return [
        ("o", "O", np.bool_, lambda i: i % 3 == 0),
        ("b", "B", np.int8, lambda i: ((i * 37) % 256) - 128),
        ("ub", "b", np.uint8, lambda i: (i * 53) % 256),
        ("s", "S", np.int16, lambda i: ((i * 4099) % 65536) - 32768),
        ("us", "s", np.uint16, lambda i: (i * 7919) % 65536),
        ("i", "I", np.int32, lambda i: (i * 1_000_003) % (2**32) - 2**31),
        ("ui", "i", np.uint32, lambda i: (i * 2_654_435_761) % (2**32)),
        ("l", "L", np.int64, lambda i: [-(2**63), 2**63 - 1][i % 2] if i < 2 else (i * 0x9E3779B97F4A7C15) % (2**64) - 2**63),
        ("ul", "l", np.uint64, lambda i: 2**64 - 1 if i == 1 else (i * 0x9E3779B97F4A7C15) % (2**64)),
        ("f", "F", np.float32, lambda i: np.float32(i * 0.37 - 20.0)),
        ("d", "D", np.float64, lambda i: i * 1.0e-3 - 0.05 + 1.0 / (i + 3)),
    ]


def write_types(path, setting):
    ROOT = root()
    f = ROOT.TFile(path, "RECREATE", "", setting)
    t = ROOT.TTree("t", "all numeric types")
    bufs = {}
    for name, code, dtype, _ in scalar_specs():
        bufs[name] = np.zeros(1, dtype=dtype)
        t.Branch(name, bufs[name], f"{name}/{code}")
    arr = np.zeros(4, dtype=np.float32)
    t.Branch("arr", arr, "arr[4]/F")
    da = np.zeros(3, dtype=np.float64)
    t.Branch("da", da, "da[3]/D")
    n = np.zeros(1, dtype=np.int32)
    t.Branch("n", n, "n/I")
    x = np.zeros(8, dtype=np.float32)
    t.Branch("x", x, "x[n]/F")
    xd = np.zeros(8, dtype=np.float64)
    t.Branch("xd", xd, "xd[n]/D")
    jets = ROOT.std.vector("float")()
    t.Branch("jets", jets)
    vd = ROOT.std.vector("double")()
    t.Branch("vd", vd)
    vi = ROOT.std.vector("int")()
    t.Branch("vi", vi)
    # Small baskets: every branch gets many of them.
    t.SetBasketSize("*", 256)
    for i in range(N_TYPES):
        for name, _, _, fn in scalar_specs():
            bufs[name][0] = fn(i)
        arr[:] = [i + 0.25 * k for k in range(4)]
        da[:] = [-(i * 1.5) + k * 1e-7 for k in range(3)]
        n[0] = i % 5
        for k in range(n[0]):
            x[k] = i * 0.5 + k
            xd[k] = -i * 0.125 - k * 1e9
        jets.clear()
        for k in range(i % 4):
            jets.push_back(i + k * 0.1)
        vd.clear()
        for k in range((i * 7) % 3):
            vd.push_back(i * 1e-3 - k)
        vi.clear()
        for k in range(i % 6):
            vi.push_back((i * 131 + k) % 1000 - 500)
        t.Fill()
    t.Write()
    f.Close()


def write_structure(path):
    ROOT = root()
    f = ROOT.TFile(path, "RECREATE", "", 101)
    v = np.zeros(1, dtype=np.float64)
    k = np.zeros(1, dtype=np.int32)
    t = ROOT.TTree("t", "two cycles")
    t.Branch("v", v, "v/D")
    t.Branch("k", k, "k/I")
    for i in range(10):
        v[0] = i * 1.5
        k[0] = i
        t.Fill()
    t.Write()  # t;1
    for i in range(10, 25):
        v[0] = i * 1.5
        k[0] = i
        t.Fill()
    t.Write()  # t;2 (keeps t;1)
    ROOT.TNamed("note", "a non-tree object").Write()
    sub = f.mkdir("sub")
    sub.cd()
    w = np.zeros(1, dtype=np.float32)
    inner = ROOT.TTree("inner", "tree in a subdirectory")
    inner.Branch("w", w, "w/F")
    for i in range(7):
        w[0] = -i * 0.75
        inner.Fill()
    inner.Write()
    deeper = sub.mkdir("deeper")
    deeper.cd()
    q = np.zeros(1, dtype=np.int64)
    t2 = ROOT.TTree("t2", "two levels down")
    t2.Branch("q", q, "q/L")
    for i in range(5):
        q[0] = i * 10_000_000_000
        t2.Fill()
    t2.Write()
    f.Close()


def write_embedded(path):
    # Runs in its own process: it ends with os._exit so ROOT never closes the file and the last
    # baskets stay inside the TTree record written by AutoSave("SaveSelf").
    ROOT = root()
    f = ROOT.TFile(path, "RECREATE", "", 101)
    pt = np.zeros(1, dtype=np.float32)
    n = np.zeros(1, dtype=np.int32)
    x = np.zeros(4, dtype=np.float32)
    jets = ROOT.std.vector("float")()
    t = ROOT.TTree("t", "embedded baskets")
    t.Branch("pt", pt, "pt/F")
    t.Branch("n", n, "n/I")
    t.Branch("x", x, "x[n]/F")
    t.Branch("jets", jets)

    def fill(i):
        pt[0] = i + 0.5
        n[0] = i % 4
        for k in range(n[0]):
            x[k] = i + k * 0.25
        jets.clear()
        for k in range(i % 3):
            jets.push_back(-i - k * 0.5)
        t.Fill()

    for i in range(10):
        fill(i)
    t.FlushBaskets()
    for i in range(10, 15):
        fill(i)
    t.AutoSave("SaveSelf")
    f.Flush()
    sys.stdout.flush()
    os._exit(0)


SPLIT_CLASSES = """
struct Hit { float e; int ch; double t; short q; bool ok; unsigned int id; };
struct Event {
  int run; double w; Hit lead; std::vector<Hit> hits; std::vector<float> vals; std::vector<int> ids;
};
"""


def write_split(path):
    ROOT = root()
    ROOT.gInterpreter.Declare(SPLIT_CLASSES)
    f = ROOT.TFile(path, "RECREATE", "", 101)
    t = ROOT.TTree("t", "a split class")
    ev = ROOT.Event()
    t.Branch("evt.", ev, 4000, 99)
    for i in range(300):
        ev.run = i
        ev.w = i * 0.5 - 7.25
        ev.lead.e = i + 0.25
        ev.lead.ch = -i
        ev.lead.t = i * 1e-3
        ev.lead.q = (i % 7) - 3
        ev.lead.ok = i % 2 == 0
        ev.lead.id = 4_000_000_000 + i
        ev.hits.clear()
        for k in range(i % 5):
            h = ROOT.Hit()
            h.e = i + k * 0.5
            h.ch = k * 1000 - i
            h.t = -k * 1.5 + i
            h.q = k - 2
            h.ok = (i + k) % 3 == 0
            h.id = k * 100 + i
            ev.hits.push_back(h)
        ev.vals.clear()
        ev.ids.clear()
        for k in range(i % 3):
            ev.vals.push_back(i * 0.125 - k)
            ev.ids.push_back(i * 10 + k)
        t.Fill()
    t.Write()
    f.Close()


OBJECT_CLASSES = """
struct Part { float pt; Double32_t m; std::string tag; std::vector<int> idx; };
struct Obj {
  int run; Double32_t d; Double32_t dr; Float16_t f; Float16_t fr; std::string name; TString title;
  std::vector<std::string> tags; std::vector<std::vector<float>> vv; std::vector<Part> parts;
};
struct Ranged { Double32_t a; //[0,100,20]
  Float16_t b; //[-1,1,12]
  Double32_t c; //[0,0,14]
  Double32_t p; //[-pi,pi,16]
};
class Tagged : public TObject {
public:
  int id; float w[3]; TString label; std::string note; std::vector<float> vals; Ranged r;
  ClassDef(Tagged, 1)
};
struct Base { int b; std::string name; };
struct Derived : public Base { float d; std::vector<int> ks; };
inline void fill_tagged(Tagged& t, int i, const Ranged& r) {
  t.id = i * 3 - 50;
  for (int k = 0; k < 3; ++k) t.w[k] = i * 0.25f + k;
  t.label = TString::Format("lbl%d", i % 11);
  t.note.clear();
  for (int k = 0; k < i % 3; ++k) t.note += "note";
  t.vals.clear();
  for (int k = 0; k < i % 4; ++k) t.vals.push_back(k * 1.5f - i);
  t.r = r;
}
"""


def object_classes():
    """ROOT with the classes of objects.root compiled by ACLiC, as an experiment's dictionary
    is (ROOT 6.40 misreads a split vector<Part> of interpreted classes once it shrinks to no
    elements: a double free)."""
    import tempfile  # noqa: PLC0415

    ROOT = root()
    build = tempfile.mkdtemp(prefix="root-fixture-classes-")
    header = os.path.join(build, "objclasses.h")
    with open(header, "w") as fh:
        fh.write("#include <string>\n#include <vector>\n#include <TObject.h>\n#include <TString.h>\n" + OBJECT_CLASSES)
    if ROOT.gSystem.CompileMacro(header, "kO", "", build) != 1:
        raise SystemExit("ACLiC could not compile the classes of objects.root (is g++ installed?)")
    return ROOT


def write_objects(path):
    import array  # noqa: PLC0415
    import struct  # noqa: PLC0415

    ROOT = object_classes()
    f = ROOT.TFile(path, "RECREATE", "", 505)
    t = ROOT.TTree("t", "strings, nested vectors, packed reals, leaf lists, split members")
    cstr = array.array("b", b"\0" * 64)
    t.Branch("cstr", cstr, "cstr/C")
    ts = ROOT.TString()
    t.Branch("ts", ts)
    ss = ROOT.std.string()
    t.Branch("ss", ss)
    vs = ROOT.std.vector("std::string")()
    t.Branch("vs", vs)
    vvf = ROOT.std.vector("std::vector<float>")()
    t.Branch("vvf", vvf)
    vvi = ROOT.std.vector("std::vector<int>")()
    t.Branch("vvi", vvi)
    vvs = ROOT.std.vector("std::vector<std::string>")()
    t.Branch("vvs", vvs)
    vb = ROOT.std.vector("bool")()
    t.Branch("vb", vb)
    flag = array.array("b", [0])
    t.Branch("flag", flag, "flag/O")
    d32 = array.array("d", [0])
    t.Branch("d32", d32, "d32/d")
    d32r = array.array("d", [0])
    t.Branch("d32r", d32r, "d32r/d[0,100,20]")
    f16 = array.array("f", [0])
    t.Branch("f16", f16, "f16/f")
    f16r = array.array("f", [0])
    t.Branch("f16r", f16r, "f16r/f[-1,1,12]")
    ll = array.array("b", b"\0" * 64)
    t.Branch("ll", ll, "x/F:y/D:n/I:ok/O")
    lla = array.array("b", b"\0" * 64)
    t.Branch("lla", lla, "p[3]/F:q/S")
    o = ROOT.Obj()
    t.Branch("obj.", o, 4000, 99)
    r = ROOT.Ranged()
    t.Branch("rng.", r, 4000, 99)
    # Objects written whole (split level 0): one branch, member after member.
    r0 = ROOT.Ranged()
    t.Branch("rng0.", r0, 4000, 0)
    tagged = ROOT.Tagged()
    t.Branch("whole.", tagged, 4000, 0)
    derived = ROOT.Derived()
    t.Branch("derived.", derived, 4000, 0)
    # A vector of objects written whole: ROOT streams its elements member-wise (read as objects).
    ranges = ROOT.std.vector("Ranged")()
    t.Branch("ranges", ranges, 4000, 0)
    t.SetAutoFlush(64)  # a cluster, so a basket of every branch, each 64 entries

    def put(buf, data):
        for k in range(len(buf)):
            buf[k] = struct.unpack("b", data[k : k + 1])[0] if k < len(data) else 0

    for i in range(N_OBJECTS):
        s = ("s%d" % i) * (i % 4)
        if i % 50 == 7:
            s = "x" * 63
        put(cstr, s.encode() + b"\0")
        ts.Clear()
        ts.Append(s if i % 50 != 9 else "y" * 260 + str(i))  # a long TString (4-byte length)
        ss.assign(("std%d" % i) if i % 3 else "")
        vs.clear()
        for k in range(i % 3):
            vs.push_back("v%d_%d" % (i, k))
        vvf.clear()
        vvi.clear()
        vvs.clear()
        for k in range(i % 4):
            inner = ROOT.std.vector("float")()
            for m in range(k):
                inner.push_back(i + k * 0.5 + m)
            vvf.push_back(inner)
            ii = ROOT.std.vector("int")()
            for m in range(k + 1):
                ii.push_back(i * 100 - m)
            vvi.push_back(ii)
            sv = ROOT.std.vector("std::string")()
            for m in range(k % 3):
                sv.push_back("w%d" % m)
            vvs.push_back(sv)
        vb.clear()
        for k in range(i % 5):
            vb.push_back((i + k) % 2 == 0)
        flag[0] = i % 2
        d32[0] = i * 1.1
        d32r[0] = (i * 1.7) % 100
        f16[0] = i * 0.3 - 20
        f16r[0] = ((i % 60) - 30) / 31.0
        put(ll, struct.pack("<fdi?", i * 0.5, -i * 0.25, i - 100, i % 3 == 0))
        put(lla, struct.pack("<fffh", i, -i, i * 0.5, i - 7))
        o.run = i
        o.d = i * 2.2
        o.dr = i * 0.1
        o.f = i * 0.7
        o.fr = -i * 0.05
        o.name = "name%d" % i
        o.title = ROOT.TString("title%d" % i)
        o.tags.clear()
        for k in range(i % 3):
            o.tags.push_back("t%d" % k)
        o.vv.clear()
        for k in range(i % 3):
            inner = ROOT.std.vector("float")()
            for m in range(k + 1):
                inner.push_back(k + m * 0.25)
            o.vv.push_back(inner)
        o.parts.clear()
        for k in range(i % 4):
            p = ROOT.Part()
            p.pt = i + k
            p.m = k * 0.3
            p.tag = "p%d" % k
            for m in range(k):
                p.idx.push_back(m)
            o.parts.push_back(p)
        r.a = (i * 1.9) % 100
        r.b = ((i % 50) - 25) / 26.0
        r.c = i * 3.3
        r.p = ((i % 60) - 30) / 10.0
        r0.a, r0.b, r0.c, r0.p = r.a, r.b, r.c, r.p
        ROOT.fill_tagged(tagged, i, r)
        derived.b = -i
        derived.name = "d%d" % (i % 5)
        derived.d = i * 0.125
        derived.ks.clear()
        for k in range(i % 3):
            derived.ks.push_back(k - i)
        ranges.clear()
        for k in range(i % 3):
            ranges.push_back(r0)
        t.Fill()
    t.Write()
    f.Close()


def read_objects(path):
    """Every branch of objects.root as ROOT reads it back: scalars through their leaves, the
    split objects through the classes themselves (ROOT's own streamers unpack the packed
    reals), as JSON values root-tool also writes: strings, lists, records as objects."""
    ROOT = object_classes()
    f = ROOT.TFile.Open(path)
    t = f.Get("t")
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    types = {
        "cstr": "string", "ts": "string", "ss": "string", "vs": "string", "vvf": "f32", "vvi": "i32",
        "vvs": "string", "vb": "bool", "flag": "bool", "d32": "f64", "d32r": "f64", "f16": "f32",
        "f16r": "f32", "ll": "record", "lla": "record", "obj.run": "i32", "obj.d": "f64",
        "obj.dr": "f64", "obj.f": "f32", "obj.fr": "f32", "obj.name": "string",
        "obj.title": "string", "obj.tags": "string", "obj.vv": "f32", "obj.parts.pt": "f32",
        "obj.parts.m": "f64", "obj.parts.tag": "string", "obj.parts.idx": "i32", "rng.a": "f64",
        "rng.b": "f32", "rng.c": "f64", "rng.p": "f64", "rng0.": "record", "whole.": "record",
        "derived.": "record",
    }
    out = {name: {"kind": "json", "type": typ, "values": []} for name, typ in types.items()}
    leaf = lambda b, name: t.GetBranch(b).GetLeaf(name).GetValue()  # noqa: E731

    def ranged(x):
        # TObject's fUniqueID/fBits (written as "@..." members by root-tool) are not compared.
        return {"a": float(x.a), "b": f32(x.b), "c": float(x.c), "p": float(x.p)}

    for i in range(t.GetEntries()):
        t.GetEntry(i)
        o = getattr(t, "obj.")
        r = getattr(t, "rng.")
        w = getattr(t, "whole.")
        d = getattr(t, "derived.")
        row = {
            "cstr": str(t.GetBranch("cstr").GetLeaf("cstr").GetValueString()),
            "ts": str(t.ts),
            "ss": str(t.ss),
            "vs": [str(x) for x in t.vs],
            "vvf": [[f32(x) for x in inner] for inner in t.vvf],
            "vvi": [[int(x) for x in inner] for inner in t.vvi],
            "vvs": [[str(x) for x in inner] for inner in t.vvs],
            "vb": [bool(x) for x in t.vb],
            "flag": bool(leaf("flag", "flag")),
            "d32": leaf("d32", "d32"),
            "d32r": leaf("d32r", "d32r"),
            "f16": f32(leaf("f16", "f16")),
            "f16r": f32(leaf("f16r", "f16r")),
            "ll": {
                "x": f32(leaf("ll", "x")),
                "y": leaf("ll", "y"),
                "n": int(leaf("ll", "n")),
                "ok": bool(leaf("ll", "ok")),
            },
            "lla": {
                "p": [f32(t.GetBranch("lla").GetLeaf("p").GetValue(k)) for k in range(3)],
                "q": int(leaf("lla", "q")),
            },
            "obj.run": int(o.run),
            "obj.d": float(o.d),
            "obj.dr": float(o.dr),
            "obj.f": f32(o.f),
            "obj.fr": f32(o.fr),
            "obj.name": str(o.name),
            "obj.title": str(o.title),
            "obj.tags": [str(x) for x in o.tags],
            "obj.vv": [[f32(x) for x in inner] for inner in o.vv],
            "obj.parts.pt": [f32(p.pt) for p in o.parts],
            "obj.parts.m": [float(p.m) for p in o.parts],
            "obj.parts.tag": [str(p.tag) for p in o.parts],
            "obj.parts.idx": [[int(x) for x in p.idx] for p in o.parts],
            "rng.a": float(r.a),
            "rng.b": f32(r.b),
            "rng.c": float(r.c),
            "rng.p": float(r.p),
            "rng0.": ranged(getattr(t, "rng0.")),
            "derived.": {
                "b": int(d.b),
                "name": str(d.name),
                "d": f32(d.d),
                "ks": [int(x) for x in d.ks],
            },
            "whole.": {
                "id": int(w.id),
                "w": [f32(x) for x in w.w],
                "label": str(w.label),
                "note": str(w.note),
                "vals": [f32(x) for x in w.vals],
                "r": ranged(w.r),
            },
        }
        for name, value in row.items():
            out[name]["values"].append(value)
    trees = {"t;1": {"entries": int(t.GetEntries()), "branches": out}}
    f.Close()
    return {"file": os.path.basename(path), "root_version": ROOT.gROOT.GetVersion(), "trees": trees}


EVO_V1 = """
class Evo : public TObject {
public:
  int id; float x; std::string tag;
  ClassDef(Evo, 1)
};
inline void fill_evo(Evo& e, int i) { e.id = i; e.x = i * 0.5f; e.tag = "v1_" + std::to_string(i % 4); }
"""

EVO_V2 = """
class Evo : public TObject {
public:
  int id; double y; float x; std::string tag; std::vector<int> ks;
  ClassDef(Evo, 2)
};
inline void fill_evo(Evo& e, int i) {
  e.id = 1000 + i; e.y = -i * 0.25; e.x = i * 1.5f; e.tag = "v2_" + std::to_string(i % 3);
  e.ks.clear(); for (int k = 0; k < i % 4; ++k) e.ks.push_back(i * 10 + k);
}
"""

# The members each version streams, in order (what the file's class description of it says).
EVO_MEMBERS = {1: ["id", "x", "tag"], 2: ["id", "y", "x", "tag", "ks"]}


def compiled(source, name):
    """ROOT with `source` compiled by ACLiC into a fresh directory (one class version per
    process: two definitions of one class cannot live in one)."""
    import tempfile  # noqa: PLC0415

    ROOT = root()
    build = tempfile.mkdtemp(prefix="root-fixture-classes-")
    header = os.path.join(build, f"{name}.h")
    with open(header, "w") as fh:
        fh.write("#include <string>\n#include <vector>\n#include <TObject.h>\n" + source)
    if ROOT.gSystem.CompileMacro(header, "kO", "", build) != 1:
        raise SystemExit(f"ACLiC could not compile {name} (is g++ installed?)")
    return ROOT


def write_versions(path, version):
    """Tree `t{version}` of class Evo at that version (version 2 updates the file version 1
    wrote): a split branch `e.` and an object written whole, `w.`."""
    ROOT = compiled(EVO_V1 if version == 1 else EVO_V2, f"evo{version}")
    f = ROOT.TFile(path, "RECREATE" if version == 1 else "UPDATE", "", 101)
    t = ROOT.TTree(f"t{version}", f"class Evo, version {version}")
    e = ROOT.Evo()
    w = ROOT.Evo()
    t.Branch("e.", e, 4000, 99)
    t.Branch("w.", w, 4000, 0)
    for i in range(40):
        ROOT.fill_evo(e, i)
        ROOT.fill_evo(w, i)
        t.Fill()
    t.Write()
    f.Close()


def read_versions(path):
    """Both trees as ROOT reads them with version 2 of the class (schema evolution): the members
    each tree's version wrote, per branch."""
    ROOT = compiled(EVO_V2, "evo2")
    f = ROOT.TFile.Open(path)
    trees = {}
    for version in (1, 2):
        t = f.Get(f"t{version}")
        members = EVO_MEMBERS[version]
        split = {f"e.{m}": {"kind": "json", "type": "f64", "values": []} for m in members}
        whole = {"kind": "json", "type": "record", "values": []}
        for i in range(t.GetEntries()):
            t.GetEntry(i)
            for key, obj in (("e.", getattr(t, "e.")), ("w.", getattr(t, "w."))):
                row = {}
                for m in members:
                    v = getattr(obj, m)
                    row[m] = (
                        str(v) if m == "tag"
                        else [int(x) for x in v] if m == "ks"
                        else float(np.float32(v)) if m == "x"
                        else float(v) if m == "y"
                        else int(v)
                    )
                if key == "w.":
                    whole["values"].append(row)
                else:
                    for m in members:
                        split[f"e.{m}"]["values"].append(row[m])
        branches = dict(split)
        branches["w."] = whole
        trees[f"t{version};1"] = {"entries": int(t.GetEntries()), "branches": branches}
    f.Close()
    return {"file": os.path.basename(path), "root_version": ROOT.gROOT.GetVersion(), "trees": trees}


def write_multiblock(path):
    ROOT = root()
    f = ROOT.TFile(path, "RECREATE", "", 101)
    t = ROOT.TTree("t", "objects larger than one compression block")
    buf = (np.arange(BIG, dtype=np.int64) % 251).astype(np.uint8)
    branches = {}
    for algo in ("zlib", "zstd", "lz4", "lzma"):
        b = t.Branch(f"a_{algo}", buf, f"a_{algo}[{BIG}]/b")
        b.SetCompressionSettings(ALGOS[algo] if algo != "zlib" else 105)
        b.SetBasketSize(BIG + 1000)
        branches[algo] = b
    t.Fill()
    t.Write()
    f.Close()


PATH_CLASSES = """
struct PathHit { float e; int id; };
struct PathPair { int x; float y; PathHit hit; };
"""
N_PATHS = 30


def write_paths(path):
    """Tree `t` whose branches share names under different parents (see the module doc)."""
    ROOT = root()
    ROOT.gInterpreter.Declare(PATH_CLASSES)
    f = ROOT.TFile(path, "RECREATE", "", 101)
    t = ROOT.TTree("t", "branches that share a name")
    a, b, c = ROOT.PathPair(), ROOT.PathPair(), ROOT.PathPair()
    t.Branch("a", a, 32000, 99)
    t.Branch("b", b, 32000, 99)
    t.Branch("c.", c, 32000, 99)
    x = np.zeros(1, dtype=np.float32)
    n = np.zeros(1, dtype=np.int32)
    dup1 = np.zeros(1, dtype=np.int32)
    dup2 = np.zeros(1, dtype=np.int32)
    t.Branch("x", x, "x/F")
    t.Branch("n", n, "n/I")
    t.Branch("dup", dup1, "dup/I")
    t.Branch("dup", dup2, "dup/I")
    # Every branch holds other values at every entry, so that reading one for another shows.
    for i in range(N_PATHS):
        for obj, base in ((a, 0), (b, -1000), (c, 1000)):
            obj.x = base + i
            obj.y = base * 0.5 + i * 0.25
            obj.hit.e = base + i + 0.125
            obj.hit.id = base * 10 - i
        x[0] = i * 1.5 + 0.75
        n[0] = 7 * i + 3
        dup1[0] = i
        dup2[0] = 5000 + i
        t.Fill()
    t.Write()
    f.Close()


def full_paths(branches, prefix=""):
    """(full path, branch) of every branch, depth first: the names of its parents and its own
    joined by `/`, as uproot's `keys()`; a branch with an earlier sibling of its name gets `#k`
    (the k-th of that name among its siblings), as root-reader names it."""
    out = []
    seen = {}
    for br in branches:
        name = br.GetName()
        seen[name] = seen.get(name, 0) + 1
        part = name if seen[name] == 1 else f"{name}#{seen[name]}"
        full = prefix + part
        out.append((full, br))
        out.extend(full_paths(br.GetListOfBranches(), full + "/"))
    return out


def read_paths(path):
    """Every branch with a leaf, by full path, as ROOT reads it: each leaf through its own
    branch object (`TLeaf::GetValue` after `TTree::GetEntry`), never looked up by name."""
    ROOT = root()
    ROOT.gInterpreter.Declare(PATH_CLASSES)
    f = ROOT.TFile.Open(path)
    t = f.Get("t")
    plan = []
    for full, br in full_paths(t.GetListOfBranches()):
        if br.GetListOfBranches().GetEntries() or br.GetListOfLeaves().GetEntries() != 1:
            continue
        leaf = br.GetListOfLeaves().At(0)
        typ = ELEMENT_TYPES[leaf.GetTypeName()] if leaf.ClassName() == "TLeafElement" else leaf_type(leaf)
        plan.append((full, typ, leaf))
    branches = {full: {"kind": "scalar", "type": typ, "values": []} for full, typ, _ in plan}
    for entry in range(t.GetEntries()):
        t.GetEntry(entry)
        for full, typ, leaf in plan:
            branches[full]["values"].append(convert(leaf.GetValue(0), typ))
    trees = {"t;1": {"entries": int(t.GetEntries()), "branches": branches}}
    f.Close()
    return {"file": os.path.basename(path), "root_version": ROOT.gROOT.GetVersion(), "trees": trees}


# ---------------------------------------------------------------------------------------------
# Reading back with ROOT


def leaf_type(leaf):
    cls = leaf.ClassName()
    unsigned = bool(leaf.IsUnsigned())
    table = {
        "TLeafO": "bool",
        "TLeafB": "u8" if unsigned else "i8",
        "TLeafS": "u16" if unsigned else "i16",
        "TLeafI": "u32" if unsigned else "i32",
        "TLeafL": "u64" if unsigned else "i64",
        "TLeafF": "f32",
        "TLeafD": "f64",
    }
    return table.get(cls)


def vector_type(class_name):
    inner = class_name[len("vector<") : -1].strip()
    return {
        "float": "f32",
        "double": "f64",
        "int": "i32",
        "unsigned int": "u32",
        "Long64_t": "i64",
        "long": "i64",
        "short": "i16",
        "char": "i8",
        "bool": "bool",
    }[inner]


def convert(value, typ):
    if typ == "bool":
        return bool(value)
    if typ.startswith("f"):
        return float(value)
    return int(value)


ELEMENT_TYPES = {
    "Bool_t": "bool", "Char_t": "i8", "UChar_t": "u8", "Short_t": "i16", "UShort_t": "u16",
    "Int_t": "i32", "UInt_t": "u32", "Long64_t": "i64", "ULong64_t": "u64", "Float_t": "f32",
    "Double_t": "f64",
}


VECTOR_MEMBERS = {"vector<float>": ("f32", "float"), "vector<int>": ("i32", "int")}


def split_plan(tree):
    """The basic members of split classes: (name, kind, type, leaf) for every TLeafElement whose
    type is a number, `jagged` when it belongs to the elements of a collection; std::vector
    members as `vector`, read through a TTreeReader."""
    plan = []
    for leaf in tree.GetListOfLeaves():
        if leaf.GetTypeName() in VECTOR_MEMBERS and leaf.GetBranch().GetType() == 0:
            typ, cpp = VECTOR_MEMBERS[leaf.GetTypeName()]
            plan.append((leaf.GetName(), "vector_member", typ, cpp))
            continue
        typ = ELEMENT_TYPES.get(leaf.GetTypeName())
        branch = leaf.GetBranch()
        if leaf.ClassName() != "TLeafElement" or typ is None or branch.GetListOfBranches().GetEntries():
            continue
        if branch.GetType() not in (0, 31, 41) or branch.GetID() < 0:
            continue
        kind = "jagged" if branch.GetType() in (31, 41) else "scalar"
        plan.append((leaf.GetName(), kind, typ, leaf))
    return plan


def read_tree(tree):
    out = {"entries": int(tree.GetEntries()), "branches": {}}
    plan = []
    if any(br.ClassName() == "TBranchElement" and br.GetListOfBranches().GetEntries() for br in tree.GetListOfBranches()):
        plan = split_plan(tree)
    for br in ([] if plan else tree.GetListOfBranches()):
        name = br.GetName()
        if br.ClassName() == "TBranchElement":
            typ = vector_type(br.GetClassName())
            plan.append((name, "vector", typ, None))
            continue
        leaf = br.GetLeaf(name)
        typ = leaf_type(leaf)
        if leaf.GetLeafCount():
            plan.append((name, "jagged", typ, leaf))
        elif leaf.GetLenStatic() > 1:
            kind = "digest" if leaf.GetLenStatic() > 100_000 else "fixed"
            plan.append((name, kind, typ, leaf))
        else:
            plan.append((name, "scalar", typ, leaf))
    for name, kind, typ, _ in plan:
        out["branches"][name] = {"kind": "vector" if kind == "vector_member" else kind, "type": typ, "values": []}
    members = [(name, cpp) for name, kind, _, cpp in plan if kind == "vector_member"]
    if members:
        import ROOT  # noqa: PLC0415

        reader = ROOT.TTreeReader(tree)
        values = {name: ROOT.TTreeReaderValue[f"std::vector<{cpp}>"](reader, name) for name, cpp in members}
        while reader.Next():
            for name, _ in members:
                typ = out["branches"][name]["type"]
                out["branches"][name]["values"].append([convert(v, typ) for v in values[name].Get()])
        plan = [p for p in plan if p[1] != "vector_member"]
    for entry in range(tree.GetEntries()):
        tree.GetEntry(entry)
        for name, kind, typ, leaf in plan:
            slot = out["branches"][name]
            if kind == "vector":
                slot["values"].append([convert(v, typ) for v in getattr(tree, name)])
            elif kind == "jagged" and leaf.ClassName() == "TLeafElement":
                slot["values"].append([convert(leaf.GetValue(j), typ) for j in range(leaf.GetLen())])
            elif kind == "scalar" and leaf.ClassName() == "TLeafElement":
                slot["values"].append(convert(leaf.GetValue(0), typ))
            elif kind == "scalar":
                if typ in ("i64", "u64"):
                    slot["values"].append(int(getattr(tree, name)))
                else:
                    slot["values"].append(convert(leaf.GetValue(0), typ))
            elif kind == "digest":
                n = leaf.GetLen()
                vals = np.array(getattr(tree, name), dtype=np.uint8)[:n]
                slot["values"].append({
                    "len": int(n),
                    "sha256": hashlib.sha256(vals.astype("<u1").tobytes()).hexdigest(),
                    "head": [int(v) for v in vals[:8]],
                    "tail": [int(v) for v in vals[-8:]],
                })
            else:
                n = leaf.GetLen()
                slot["values"].append([convert(leaf.GetValue(j), typ) for j in range(n)])
    return out


def walk(directory, prefix, trees):
    seen = {}
    for key in directory.GetListOfKeys():
        seen.setdefault(key.GetName(), []).append(key)
    for name, keys in seen.items():
        for key in keys:
            cls = key.GetClassName()
            if cls in ("TDirectory", "TDirectoryFile"):
                walk(directory.Get(name), f"{prefix}{name}/", trees)
                break
            if cls == "TTree":
                tree = directory.Get(f"{name};{key.GetCycle()}")
                trees[f"{prefix}{name};{key.GetCycle()}"] = read_tree(tree)


def read_back(path):
    ROOT = root()
    f = ROOT.TFile.Open(path)
    trees = {}
    walk(f, "", trees)
    f.Close()
    return {"file": os.path.basename(path), "root_version": ROOT.gROOT.GetVersion(), "trees": trees}


# --- RNTuple fixtures -------------------------------------------------------------------------

RNTUPLE_ENTRIES = 120

RNTUPLE_WRITER = r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TNamed.h>
#include <array>
#include <atomic>
#include <bitset>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace fixtures {

// Adds a field whose columns use `reps` instead of the writer's default encoding.
template <typename T>
void add_with(ROOT::RNTupleModel &model, const char *name, ROOT::ENTupleColumnType a,
              ROOT::ENTupleColumnType b = ROOT::ENTupleColumnType::kUnknown) {
  auto field = std::make_unique<ROOT::RField<T>>(name);
  if (b == ROOT::ENTupleColumnType::kUnknown)
    field->SetColumnRepresentatives({{a}});
  else
    field->SetColumnRepresentatives({{a, b}});
  model.AddField(std::move(field));
}

std::string text(int i) { return std::string(i % 6, char('a' + i % 26)) + (i % 7 == 0 ? "\xc3\xa9" : ""); }

// kind 0: every supported field kind, with the writer's default encodings;
// kind 1: other encodings (Index32, SplitIndex32, non-split Index64, Real16, Double32_t,
//         non-split ints) and field types the reader does not support;
// kind 2: no entries.
void write_rntuple(const char *path, int setting, int kind, int entries) {
  auto model = ROOT::RNTupleModel::Create();
  auto entry = [&]() -> ROOT::REntry & { return model->GetDefaultEntry(); };
  (void)entry;
  if (kind == 1) {
    add_with<std::vector<float>>(*model, "v_i32", ROOT::ENTupleColumnType::kIndex32);
    add_with<std::vector<std::int16_t>>(*model, "v_si32", ROOT::ENTupleColumnType::kSplitIndex32);
    add_with<std::string>(*model, "s_i64", ROOT::ENTupleColumnType::kIndex64, ROOT::ENTupleColumnType::kChar);
    add_with<std::string>(*model, "s_si32", ROOT::ENTupleColumnType::kSplitIndex32, ROOT::ENTupleColumnType::kChar);
    add_with<float>(*model, "half", ROOT::ENTupleColumnType::kReal16);
    add_with<double>(*model, "d_as_f32", ROOT::ENTupleColumnType::kSplitReal32);
    add_with<std::int32_t>(*model, "i_plain", ROOT::ENTupleColumnType::kInt32);
    add_with<std::uint64_t>(*model, "ul_plain", ROOT::ENTupleColumnType::kUInt64);
    add_with<std::int64_t>(*model, "l_plain", ROOT::ENTupleColumnType::kInt64);
    add_with<double>(*model, "d_plain", ROOT::ENTupleColumnType::kReal64);
    model->AddField(ROOT::RFieldBase::Create("d32", "Double32_t").Unwrap());
    {
      auto f = std::make_unique<ROOT::RField<float>>("f_trunc");
      f->SetTruncated(13);
      model->AddField(std::move(f));
      auto d = std::make_unique<ROOT::RField<double>>("d_trunc");
      d->SetTruncated(20);
      model->AddField(std::move(d));
      auto q = std::make_unique<ROOT::RField<float>>("f_quant");
      q->SetQuantized(11, {-10.0, 50.0});
      model->AddField(std::move(q));
      auto dq = std::make_unique<ROOT::RField<double>>("d_quant");
      dq->SetQuantized(27, {0.0, 1.0});
      model->AddField(std::move(dq));
    }
    model->MakeField<std::pair<float, std::vector<std::int32_t>>>("pv");
    model->MakeField<std::tuple<std::int32_t, float, std::string>>("tup");
    model->MakeField<std::array<float, 3>>("arr");
    model->MakeField<std::vector<std::array<std::int16_t, 2>>>("varr");
    model->MakeField<std::bitset<10>>("bits");
    model->MakeField<std::atomic<std::int32_t>>("at");
    model->MakeField<std::variant<std::int32_t, float>>("var");
    // An object written by the ROOT streamer (not read).
    model->AddField(std::make_unique<ROOT::RStreamerField>("named", "TNamed"));
    // A projection (alias columns): the sizes of v_i32.
    model->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RNTupleCardinality<std::uint64_t>>>("n_v"),
                             [](const std::string &) { return std::string("v_i32"); });
  } else {
    model->MakeField<bool>("o");
    model->MakeField<char>("c");
    model->MakeField<std::int8_t>("b");
    model->MakeField<std::uint8_t>("ub");
    model->MakeField<std::int16_t>("s");
    model->MakeField<std::uint16_t>("us");
    model->MakeField<std::int32_t>("i");
    model->MakeField<std::uint32_t>("ui");
    model->MakeField<std::int64_t>("l");
    model->MakeField<std::uint64_t>("ul");
    model->MakeField<float>("f");
    model->MakeField<double>("d");
    model->MakeField<std::string>("str");
    model->MakeField<std::vector<float>>("vf");
    model->MakeField<std::vector<std::int64_t>>("vl");
    model->MakeField<ROOT::RVec<double>>("rv");
    model->MakeField<std::vector<std::vector<float>>>("vvf");
    model->MakeField<std::vector<std::string>>("vs");
    model->MakeField<std::vector<bool>>("vb");
    model->MakeField<std::pair<std::int32_t, double>>("p");
  }
  ROOT::RNTupleWriteOptions opts;
  opts.SetCompression(setting);
  // Tiny pages: every column has several pages per cluster.
  opts.SetInitialUnzippedPageSize(16);
  opts.SetMaxUnzippedPageSize(128);
  auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "events", path, opts);
  auto &e = writer->GetModel().GetDefaultEntry();
  for (int i = 0; i < entries; ++i) {
    if (kind == 1) {
      e.GetPtr<std::vector<float>>("v_i32")->assign(i % 4, i * 0.5f);
      auto vs = e.GetPtr<std::vector<std::int16_t>>("v_si32");
      vs->clear();
      for (int k = 0; k < i % 5; ++k) vs->push_back(std::int16_t(k * 1000 - i * 100));
      *e.GetPtr<std::string>("s_i64") = text(i);
      *e.GetPtr<std::string>("s_si32") = text(i + 3);
      *e.GetPtr<float>("half") = i * 0.125f - 3.0f;
      *e.GetPtr<double>("d_as_f32") = i / 3.0;
      *e.GetPtr<std::int32_t>("i_plain") = -i * 40000;
      *e.GetPtr<std::uint64_t>("ul_plain") = i == 1 ? std::numeric_limits<std::uint64_t>::max() : std::uint64_t(i) * 0x9E3779B97F4A7C15ull;
      *e.GetPtr<std::int64_t>("l_plain") = i == 1 ? std::numeric_limits<std::int64_t>::min() : -std::int64_t(i) * 1234567891011ll;
      *e.GetPtr<double>("d_plain") = i * 1e-3 + 1.0 / (i + 3);
      *e.GetPtr<double>("d32") = i / 7.0;
      *e.GetPtr<float>("f_trunc") = i * 1.37f - 40.0f;
      *e.GetPtr<double>("d_trunc") = i * 1e5 + 1.0 / (i + 1);
      *e.GetPtr<float>("f_quant") = i * 0.37f - 10.0f;
      *e.GetPtr<double>("d_quant") = i / 120.0;
      auto pv = e.GetPtr<std::pair<float, std::vector<std::int32_t>>>("pv");
      pv->first = i * 0.75f;
      pv->second.assign(i % 3, -i);
      *e.GetPtr<std::tuple<std::int32_t, float, std::string>>("tup") = {i * 7, i * -0.5f, text(i + 1)};
      e.GetPtr<TNamed>("named")->SetName(text(i).c_str());
      *e.GetPtr<std::array<float, 3>>("arr") = {float(i), float(i + 1), float(i + 2)};
      e.GetPtr<std::vector<std::array<std::int16_t, 2>>>("varr")->assign(i % 3, {std::int16_t(i), std::int16_t(-2 * i)});
      *e.GetPtr<std::bitset<10>>("bits") = std::bitset<10>(i * 37);
      e.GetPtr<std::atomic<std::int32_t>>("at")->store(i * -5);
      if (i % 2) *e.GetPtr<std::variant<std::int32_t, float>>("var") = i; else *e.GetPtr<std::variant<std::int32_t, float>>("var") = i * 0.5f;
    } else {
      *e.GetPtr<bool>("o") = i % 3 == 0;
      *e.GetPtr<char>("c") = char(i % 2 ? 'A' + i % 26 : -(i % 100));
      *e.GetPtr<std::int8_t>("b") = std::int8_t((i * 37) % 256 - 128);
      *e.GetPtr<std::uint8_t>("ub") = std::uint8_t((i * 53) % 256);
      *e.GetPtr<std::int16_t>("s") = std::int16_t((i * 4099) % 65536 - 32768);
      *e.GetPtr<std::uint16_t>("us") = std::uint16_t((i * 7919) % 65536);
      *e.GetPtr<std::int32_t>("i") = std::int32_t(std::int64_t(i) * 1000003 % 4294967296ll - 2147483648ll);
      *e.GetPtr<std::uint32_t>("ui") = std::uint32_t(std::uint64_t(i) * 2654435761ull);
      *e.GetPtr<std::int64_t>("l") = i == 0 ? std::numeric_limits<std::int64_t>::min() : i == 1 ? std::numeric_limits<std::int64_t>::max() : std::int64_t(std::uint64_t(i) * 0x9E3779B97F4A7C15ull);
      *e.GetPtr<std::uint64_t>("ul") = i == 1 ? std::numeric_limits<std::uint64_t>::max() : std::uint64_t(i) * 0x9E3779B97F4A7C15ull;
      *e.GetPtr<float>("f") = i * 0.37f - 20.0f;
      *e.GetPtr<double>("d") = i * 1.0e-3 - 0.05 + 1.0 / (i + 3);
      *e.GetPtr<std::string>("str") = text(i);
      auto vf = e.GetPtr<std::vector<float>>("vf");
      vf->clear();
      for (int k = 0; k < i % 4; ++k) vf->push_back(i + k * 0.25f);
      auto vl = e.GetPtr<std::vector<std::int64_t>>("vl");
      vl->clear();
      for (int k = 0; k < i % 3; ++k) vl->push_back(-std::int64_t(i) * 1000000007ll + k);
      auto rv = e.GetPtr<ROOT::RVec<double>>("rv");
      rv->clear();
      for (int k = 0; k < i % 5; ++k) rv->push_back(i * 0.1 - k);
      auto vvf = e.GetPtr<std::vector<std::vector<float>>>("vvf");
      vvf->clear();
      for (int k = 0; k < i % 3; ++k) {
        vvf->emplace_back();
        for (int m = 0; m < (i + k) % 3; ++m) vvf->back().push_back(i * 10.0f + k + m * 0.5f);
      }
      auto vs = e.GetPtr<std::vector<std::string>>("vs");
      vs->clear();
      for (int k = 0; k < i % 3; ++k) vs->push_back(text(i + k));
      auto vb = e.GetPtr<std::vector<bool>>("vb");
      vb->clear();
      for (int k = 0; k < i % 11; ++k) vb->push_back((i + k) % 3 == 0);
      auto p = e.GetPtr<std::pair<std::int32_t, double>>("p");
      p->first = -i * 3;
      p->second = i * 0.5;
    }
    writer->Fill();
    // Clusters of 40, 40, 20 and 20 entries.
    if (i == 39 || i == 79 || i == 99) writer->CommitCluster();
  }
}

}  // namespace fixtures
"""

RNTUPLE_CLASSES_WRITER = r"""
namespace fixtures {

// kind 3 (needs RNTUPLE_CLASSES compiled): user classes (a base class, a vector of them),
// std::optional, std::unique_ptr, std::set, std::map, and a field added after 40 entries
// (deferred columns, in the footer's schema extension).
void write_rntuple_classes(const char *path, int entries) {
  auto model = ROOT::RNTupleModel::Create();
  auto ev = model->MakeField<RntEvent>("ev");
  auto opt = model->MakeField<std::optional<float>>("opt");
  auto up = model->MakeField<std::unique_ptr<std::int32_t>>("up");
  auto st = model->MakeField<std::set<std::int32_t>>("st");
  auto mp = model->MakeField<std::map<std::string, float>>("mp");
  ROOT::RNTupleWriteOptions opts;
  opts.SetCompression(505);
  opts.SetInitialUnzippedPageSize(16);
  opts.SetMaxUnzippedPageSize(128);
  auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "events", path, opts);
  float *late = nullptr;
  std::vector<std::int64_t> *late_v = nullptr;
  for (int i = 0; i < entries; ++i) {
    if (i == 40) {
      auto updater = writer->CreateModelUpdater();
      updater->BeginUpdate();
      updater->AddField(std::make_unique<ROOT::RField<float>>("late"));
      updater->AddField(std::make_unique<ROOT::RField<std::vector<std::int64_t>>>("late_v"));
      updater->CommitUpdate();
      late = writer->GetModel().GetDefaultEntry().GetPtr<float>("late").get();
      late_v = writer->GetModel().GetDefaultEntry().GetPtr<std::vector<std::int64_t>>("late_v").get();
    }
    ev->w = i * 0.5;
    ev->lead.tag = -i;
    ev->lead.e = i * 2.0f;
    ev->lead.ids.assign(i % 2, std::int16_t(i));
    ev->hits.clear();
    for (int k = 0; k < i % 4; ++k) {
      RntHit h;
      h.tag = i * 10 + k;
      h.e = k + 0.5f;
      h.ids.assign(k, std::int16_t(-k));
      h.p[0] = k; h.p[1] = -k; h.p[2] = i;
      ev->hits.push_back(h);
    }
    ev->label = text(i);
    ev->color = i % 3 == 0 ? RntColor::kRed : i % 3 == 1 ? RntColor::kGreen : RntColor::kBlue;
    ev->lead.p[0] = i * 0.5f; ev->lead.p[1] = 1; ev->lead.p[2] = -i;
    if (i % 2) *opt = i * 1.5f; else opt->reset();
    if (i % 3) *up = std::make_unique<std::int32_t>(i * 11); else up->reset();
    st->clear();
    for (int k = 0; k < i % 4; ++k) st->insert(i - 3 * k);
    mp->clear();
    for (int k = 0; k < i % 3; ++k) (*mp)[text(i + k + 1)] = k * 0.25f + i;
    if (late) {
      *late = i * 3.0f;
      late_v->assign(i % 3, -std::int64_t(i));
    }
    writer->Fill();
    if (i == 29 || i == 59 || i == 89) writer->CommitCluster();
  }
}

// kind 4 (needs RNTUPLE_CLASSES compiled): projected fields of any type, as CMS's
// RNTupleImporter writes NanoAOD (a RVec<float> projected onto a vector's items and onto a
// member of a vector of records), and classes without data members, alone and in a vector.
void write_rntuple_projections(const char *path, int entries) {
  auto model = ROOT::RNTupleModel::Create();
  auto jets = model->MakeField<std::vector<float>>("jets");
  auto points = model->MakeField<std::vector<RntPoint>>("points");
  model->MakeField<RntEmpty>("nothing");
  auto nothings = model->MakeField<std::vector<RntEmpty>>("nothings");
  model->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RVec<float>>>("jet_pt"),
      [](const std::string &name) { return name == "jet_pt" ? std::string("jets") : std::string("jets._0"); });
  model->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RVec<float>>>("point_x"),
      [](const std::string &name) { return name == "point_x" ? std::string("points") : std::string("points._0.x"); });
  ROOT::RNTupleWriteOptions opts;
  opts.SetCompression(505);
  opts.SetInitialUnzippedPageSize(16);
  opts.SetMaxUnzippedPageSize(128);
  auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "events", path, opts);
  for (int i = 0; i < entries; ++i) {
    jets->clear();
    for (int k = 0; k < i % 4; ++k) jets->push_back(i * 0.5f + k);
    points->clear();
    for (int k = 0; k < i % 3; ++k) { RntPoint p; p.x = i + k * 0.25f; p.y = -k; points->push_back(p); }
    nothings->assign(i % 2, RntEmpty());
    writer->Fill();
    if (i == 29 || i == 59 || i == 89) writer->CommitCluster();
  }
}

}  // namespace fixtures
"""

RNTUPLE_CLASSES = """
#include <cstdint>
#include <string>
#include <vector>
struct RntBase { std::int32_t tag = 0; };
enum class RntColor : std::int16_t { kRed = 1, kGreen = 2, kBlue = 4 };
struct RntHit : public RntBase { float e = 0; std::vector<std::int16_t> ids; float p[3] = {0, 0, 0}; };
struct RntEvent { double w = 0; RntHit lead; std::vector<RntHit> hits; std::string label; RntColor color = RntColor::kRed; };
struct RntPoint { float x = 0; float y = 0; };
struct RntEmpty {};
"""


def write_rntuple(path, setting, kind, entries=RNTUPLE_ENTRIES):
    if kind in (3, 4):
        ROOT = compiled(RNTUPLE_CLASSES, "RntClasses")
        ROOT.gInterpreter.Declare(RNTUPLE_WRITER)
        ROOT.gInterpreter.Declare(RNTUPLE_CLASSES_WRITER)
        if kind == 3:
            ROOT.fixtures.write_rntuple_classes(path, entries)
        else:
            ROOT.fixtures.write_rntuple_projections(path, entries)
        return
    ROOT = root()
    ROOT.gInterpreter.Declare(RNTUPLE_WRITER)
    ROOT.fixtures.write_rntuple(path, setting, kind, entries)


def template_args(typ):
    """The top-level template arguments of `typ` (`std::pair<A,std::vector<B>>` -> [A, ...])."""
    inner = typ[typ.index("<") + 1 : typ.rindex(">")]
    out, depth, start = [], 0, 0
    for k, ch in enumerate(inner):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(inner[start:k].strip())
            start = k + 1
    out.append(inner[start:].strip())
    return out


def rntuple_value(value, typ, desc=None, fid=None):
    """A value read through an RNTupleView, as JSON: numbers, strings, lists, records.
    Collections of zero or one item (std::optional, std::unique_ptr) are lists, sets and maps
    lists (of records for maps); user classes are records of their members, a base class as a
    member `:_0`: as the columns hold them. `desc`/`fid`: the field, for user classes."""
    if desc is not None and fid is not None:
        fdesc = desc.GetFieldDescriptor(fid)
        kids = list(fdesc.GetLinkIds())
        if typ.startswith(("std::vector<", "ROOT::VecOps::RVec<", "std::set<", "std::map<")):
            (kid,) = kids
            inner = str(desc.GetFieldDescriptor(kid).GetTypeName())
            return [rntuple_value(x, inner, desc, kid) for x in value]
        if typ.startswith("std::pair<"):
            types = [str(desc.GetFieldDescriptor(k).GetTypeName()) for k in kids]
            return {"_0": rntuple_value(value.first, types[0], desc, kids[0]), "_1": rntuple_value(value.second, types[1], desc, kids[1])}
        if typ.startswith("std::array<") or typ.endswith("]"):
            (kid,) = kids
            inner = str(desc.GetFieldDescriptor(kid).GetTypeName())
            return [rntuple_value(x, inner, desc, kid) for x in value]
        if typ.startswith("std::atomic<"):
            (kid,) = kids
            return rntuple_value(value.load(), str(desc.GetFieldDescriptor(kid).GetTypeName()))
        if fdesc.GetStructure() == ROOT_LEAF() and len(kids) == 1 and not typ.startswith("std::"):
            # An enum: its underlying integer. cppyy reads an enum member as a 32-bit int
            # whatever its underlying type: keep the underlying type's bytes.
            (kid,) = kids
            under = str(desc.GetFieldDescriptor(kid).GetTypeName())
            bits = {"std::int8_t": 8, "std::uint8_t": 8, "std::int16_t": 16, "std::uint16_t": 16}.get(under)
            v = int(value)
            if bits is not None:
                v &= (1 << bits) - 1
                if not under.startswith("std::u") and v >= 1 << (bits - 1):
                    v -= 1 << bits
            return rntuple_value(v, under)
        if fdesc.GetStructure() == ROOT_RECORD() and not typ.startswith("std::"):
            out = {}
            for k in kids:
                sub = desc.GetFieldDescriptor(k)
                name, subtyp = str(sub.GetFieldName()), str(sub.GetTypeName())
                member = value if name.startswith(":") else getattr(value, name)
                out[name] = rntuple_value(member, subtyp, desc, k)
            return out
    if typ.startswith("ROOT::RNTupleCardinality<"):
        return int(value)
    if typ.startswith("std::variant<"):
        import ROOT  # noqa: PLC0415

        k = int(value.index())
        alternatives = template_args(typ)
        return {f"_{j}": ([rntuple_value(ROOT.std.get[j](value), t)] if j == k else []) for j, t in enumerate(alternatives)}
    if typ.startswith("std::bitset<"):
        return [bool(value.test(k)) for k in range(int(value.size()))]
    if typ.startswith("std::optional<"):
        (inner,) = template_args(typ)
        return [rntuple_value(value.value(), inner)] if value.has_value() else []
    if typ.startswith("std::unique_ptr<"):
        (inner,) = template_args(typ)
        return [rntuple_value(value.get()[0], inner)] if value else []
    if typ.startswith("std::set<"):
        (inner,) = template_args(typ)
        return [rntuple_value(x, inner) for x in value]
    if typ.startswith("std::map<"):
        a, b = template_args(typ)
        return [{"_0": rntuple_value(p.first, a), "_1": rntuple_value(p.second, b)} for p in value]
    if typ == "bool":
        return bool(value)
    if typ in ("float",):
        return float(np.float32(value))
    if typ == "double":
        return float(value)
    if typ == "std::string":
        return bytes(value).decode("utf-8") if not isinstance(value, str) else value
    if typ in ("char", "std::int8_t", "std::uint8_t"):
        v = ord(value) if isinstance(value, (str, bytes)) else int(value)
        if typ != "std::uint8_t" and v > 127:
            v -= 256
        return v
    if typ.startswith("std::") and typ[5:].split("_")[0] in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        return int(value)
    if typ.startswith(("std::vector<", "ROOT::VecOps::RVec<")):
        (inner,) = template_args(typ)
        return [rntuple_value(x, inner) for x in value]
    if typ.startswith("std::pair<"):
        a, b = template_args(typ)
        return {"_0": rntuple_value(value.first, a), "_1": rntuple_value(value.second, b)}
    if typ.startswith("std::tuple<"):
        import ROOT  # noqa: PLC0415

        return {f"_{k}": rntuple_value(ROOT.std.get[k](value), t) for k, t in enumerate(template_args(typ))}
    raise ValueError(f"no JSON form for {typ}")


def ROOT_RECORD():  # noqa: N802
    import ROOT  # noqa: PLC0415

    return ROOT.ENTupleStructure.kRecord


def ROOT_LEAF():  # noqa: N802
    import ROOT  # noqa: PLC0415

    return ROOT.ENTupleStructure.kPlain


def read_rntuple(path):
    """Every top-level field of the RNTuple `events` as ROOT's RNTupleReader reads it back, each
    entry through an RNTupleView of the field's own type; a variant as a record of lists, one
    per alternative, holding the value in the list of the alternative it is. Projected
    fields are read through views as the others; streamer fields are recorded as {"type": T}
    without values."""
    with_classes = path.endswith(("rntuple_classes.root", "rntuple_projections.root"))
    ROOT = compiled(RNTUPLE_CLASSES, "RntClasses") if with_classes else root()
    reader = ROOT.RNTupleReader.Open("events", path)
    desc = reader.GetDescriptor()
    n = int(reader.GetNEntries())
    fields = {}
    zero = desc.GetFieldZeroId()
    for fdesc in desc.GetFieldIterable(zero):
        name, typ = str(fdesc.GetFieldName()), str(fdesc.GetTypeName())
        record = {"type": typ}
        if fdesc.GetStructure() != ROOT.ENTupleStructure.kStreamer:
            view = reader.GetView[typ](name)
            fid = fdesc.GetId()
            record["values"] = [rntuple_value(view(i), typ, desc, fid) for i in range(n)]
            del view
        fields[name] = record
    data = {
        "file": os.path.basename(path),
        "root_version": ROOT.gROOT.GetVersion(),
        "ntuples": {"events": {"entries": n, "fields": fields}},
    }
    return data


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--write-version":
        write_versions(sys.argv[2], int(sys.argv[3]))
        return
    if len(sys.argv) >= 3 and sys.argv[1] in ("--write", "--read"):
        what, path = sys.argv[1], sys.argv[2]
        if what == "--read":
            if os.path.basename(path).startswith("rntuple_"):
                data = read_rntuple(path)
            elif path.endswith("objects.root"):
                data = read_objects(path)
            elif path.endswith("versions.root"):
                data = read_versions(path)
            elif path.endswith("paths.root"):
                data = read_paths(path)
            else:
                data = read_back(path)
            with open(path[: -len(".root")] + ".json", "w") as fh:
                json.dump(data, fh, indent=None, separators=(",", ":"))
                fh.write("\n")
            # PyROOT can crash tearing down RNTuple readers at exit: everything is written.
            sys.stdout.flush()
            os._exit(0)
        kind = os.path.basename(path)[: -len(".root")]
        if kind.startswith("types_"):
            write_types(path, ALGOS[kind[len("types_") :]])
        elif kind == "rntuple_encodings":
            write_rntuple(path, 505, 1)
        elif kind == "rntuple_classes":
            write_rntuple(path, 505, 3)
        elif kind == "rntuple_projections":
            write_rntuple(path, 505, 4)
        elif kind == "rntuple_empty":
            write_rntuple(path, 505, 0, entries=0)
        elif kind.startswith("rntuple_"):
            write_rntuple(path, ALGOS[kind[len("rntuple_") :]], 0)
        elif kind == "structure":
            write_structure(path)
        elif kind == "embedded":
            write_embedded(path)
        elif kind == "multiblock":
            write_multiblock(path)
        elif kind == "split":
            write_split(path)
        elif kind == "objects":
            write_objects(path)
        elif kind == "paths":
            write_paths(path)
        elif kind == "versions":
            # Each version of the class in a process of its own, the second updating the file.
            subprocess.run([sys.executable, __file__, "--write-version", path, "1"], check=True)
            subprocess.run([sys.executable, __file__, "--write-version", path, "2"], check=True)
        else:
            raise SystemExit(f"unknown fixture {kind}")
        return
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "readers", "root", "tests", "fixtures")
    os.makedirs(out, exist_ok=True)
    names = [f"types_{a}" for a in ALGOS] + ["structure", "embedded", "multiblock", "split", "objects", "versions", "paths"]
    names += [f"rntuple_{a}" for a in ALGOS] + ["rntuple_encodings", "rntuple_classes", "rntuple_empty", "rntuple_projections"]
    only = os.environ.get("ROOT_FIXTURES")
    if only:
        names = [n for n in names if n in only.split(",")]
    for name in names:
        path = os.path.join(out, f"{name}.root")
        if os.path.exists(path):
            os.remove(path)
        # Each file is written and read back in its own process (fresh ROOT state; embedded.root
        # needs its writer to die without closing the file).
        subprocess.run([sys.executable, __file__, "--write", path], check=True)
        subprocess.run([sys.executable, __file__, "--read", path], check=True)
        print(f"{path}: {os.path.getsize(path)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Write a NanoAOD-like TTree with real ROOT 6.40, and record what ROOT reads back from it.

Usage:
    $BENCH_PYTHON tools/root_nanoaod.py write PATH [--entries N] [--compression 505]
    $BENCH_PYTHON tools/root_nanoaod.py digest PATH OUT.json

`write`: tree `Events`, shaped like CMS NanoAOD (hundreds of branches, one per column):
  * event ids: run/i, luminosityBlock/i, event/l;
  * collections with an `nX/i` counter and one counter-jagged branch per member
    (`Jet_pt[nJet]/F`, `Jet_jetId[nJet]/b`, `Muon_charge[nMuon]/I`, `Jet_isGood[nJet]/O`, ...):
    Jet, Muon, Electron, Photon, Tau, GenPart, TrigObj;
  * flat event quantities (MET_pt/F, PV_npvs/I, fixedGridRhoFastjetAll/F, ...);
  * trigger and filter decisions: 150 `HLT_*` and 20 `Flag_*` bools;
  * strings: `processName/C` (char*) and `generator` (std::string);
  * and, so that every branch type the reader knows is read in one file: `LHE_scale`
    (vector<vector<float>>), `Jet_tags` (vector<string>), `beamSpot` (leaf list
    `x/F:y/F:z/F`), `vertexZ` (Double32_t with a range, `vertexZ/d[-30,30,16]`).
  Values come from TRandom3(12345): the same file for the same N.

`digest`: reads every branch back through ROOT (TTree::GetEntry, the leaves) and writes, per
branch, the SHA-256 of its values in a canonical binary form the Rust tests rebuild from our
columns: per entry a u32 count (1 for scalars) then each value little-endian (integers and bools
as i64 or u64, f32 as f32, f64 as f64, strings as a u32 length and the bytes).
"""

import argparse
import hashlib
import json
import struct
import sys
import warnings

warnings.filterwarnings("ignore")

COLLECTIONS = {
    # name: (max count, [(member, leaf code)])
    "Jet": (12, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("mass", "F"), ("area", "F"),
                 ("btagDeepB", "F"), ("btagDeepFlavB", "F"), ("chEmEF", "F"), ("chHEF", "F"),
                 ("neEmEF", "F"), ("neHEF", "F"), ("muEF", "F"), ("qgl", "F"), ("rawFactor", "F"),
                 ("bRegCorr", "F"), ("bRegRes", "F"), ("jetId", "b"), ("puId", "b"),
                 ("nConstituents", "b"), ("nElectrons", "b"), ("nMuons", "b"),
                 ("electronIdx1", "I"), ("muonIdx1", "I"), ("hadronFlavour", "I"),
                 ("partonFlavour", "I"), ("isGood", "O")]),
    "Muon": (6, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("mass", "F"), ("dxy", "F"),
                 ("dz", "F"), ("pfRelIso03_all", "F"), ("pfRelIso04_all", "F"), ("ip3d", "F"),
                 ("sip3d", "F"), ("charge", "I"), ("jetIdx", "I"), ("nStations", "I"),
                 ("tightId", "O"), ("mediumId", "O"), ("looseId", "O"), ("isGlobal", "O")]),
    "Electron": (6, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("mass", "F"), ("dxy", "F"),
                     ("dz", "F"), ("pfRelIso03_all", "F"), ("r9", "F"), ("sieie", "F"),
                     ("hoe", "F"), ("charge", "I"), ("jetIdx", "I"), ("cutBased", "I"),
                     ("lostHits", "b"), ("convVeto", "O"), ("mvaFall17V2Iso_WP90", "O")]),
    "Photon": (6, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("mass", "F"), ("r9", "F"),
                   ("sieie", "F"), ("hoe", "F"), ("cutBased", "I"), ("electronIdx", "I"),
                   ("pixelSeed", "O")]),
    "Tau": (4, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("mass", "F"), ("dxy", "F"),
                ("dz", "F"), ("charge", "I"), ("decayMode", "I"), ("idDeepTau2017v2p1VSjet", "b"),
                ("idDecayModeNewDMs", "O")]),
    "GenPart": (40, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("mass", "F"), ("pdgId", "I"),
                     ("status", "I"), ("statusFlags", "I"), ("genPartIdxMother", "I")]),
    "TrigObj": (10, [("pt", "F"), ("eta", "F"), ("phi", "F"), ("l1pt", "F"), ("id", "I"),
                     ("filterBits", "I"), ("l1iso", "I")]),
}
FLAT = [("MET_pt", "F"), ("MET_phi", "F"), ("MET_sumEt", "F"), ("MET_significance", "F"),
        ("PuppiMET_pt", "F"), ("PuppiMET_phi", "F"), ("RawMET_pt", "F"), ("RawMET_phi", "F"),
        ("fixedGridRhoFastjetAll", "F"), ("fixedGridRhoFastjetCentral", "F"),
        ("genWeight", "F"), ("Generator_weight", "F"), ("Generator_x1", "F"),
        ("Generator_x2", "F"), ("Generator_scalePDF", "F"), ("LHE_HT", "F"),
        ("PV_x", "F"), ("PV_y", "F"), ("PV_z", "F"), ("PV_chi2", "F"), ("PV_ndof", "F"),
        ("PV_npvs", "I"), ("PV_npvsGood", "I"), ("Pileup_nPU", "I"), ("Pileup_nTrueInt", "F"),
        ("genTtbarId", "I"), ("SV_n", "I"), ("btagWeight_CSVV2", "F"), ("L1PreFiringWeight_Nom", "F"),
        ("bunchCrossing", "I")]
N_HLT = 150
N_FLAG = 20
CTYPES = {"F": "float", "I": "int", "b": "unsigned char", "O": "bool", "i": "unsigned int"}


def maker_source():
    """C++ that writes the tree: declarations, branches, and the per-event fill."""
    decl, branch, fill = [], [], []
    for name, (cap, members) in COLLECTIONS.items():
        decl.append(f"unsigned int n{name};")
        branch.append(f't.Branch("n{name}", &n{name}, "n{name}/i");')
        fill.append(f"n{name} = std::min<unsigned>({cap}, (unsigned)r.Poisson({cap} / 3.0));")
        for member, code in members:
            var = f"{name}_{member}"
            decl.append(f"{CTYPES[code]} {var}[{cap}];")
            branch.append(f't.Branch("{var}", {var}, "{var}[n{name}]/{code}");')
            gen = {
                "F": "(float)r.Exp(30.0)" if member in ("pt", "mass") else "(float)r.Gaus(0, 2)",
                "I": "(int)r.Integer(41) - 20",
                "b": "(unsigned char)r.Integer(256)",
                "O": "r.Rndm() < 0.5",
            }[code]
            fill.append(f"for (unsigned k = 0; k < n{name}; ++k) {var}[k] = {gen};")
    for var, code in FLAT:
        decl.append(f"{CTYPES[code]} {var};")
        branch.append(f't.Branch("{var}", &{var}, "{var}/{code}");')
        gen = "(float)r.Gaus(10, 3)" if code == "F" else "(int)r.Integer(60)"
        fill.append(f"{var} = {gen};")
    for k in range(N_HLT):
        decl.append(f"bool HLT_{k};")
        branch.append(f't.Branch("HLT_Path{k}", &HLT_{k}, "HLT_Path{k}/O");')
        fill.append(f"HLT_{k} = r.Rndm() < {0.02 + (k % 10) * 0.05};")
    for k in range(N_FLAG):
        decl.append(f"bool Flag_{k};")
        branch.append(f't.Branch("Flag_filter{k}", &Flag_{k}, "Flag_filter{k}/O");')
        fill.append(f"Flag_{k} = r.Rndm() < 0.99;")
    return "\n".join([
        "#include <TFile.h>", "#include <TTree.h>", "#include <TRandom3.h>",
        "#include <string>", "#include <vector>", "#include <algorithm>", "#include <cstdio>",
        "void root_nanoaod_make(const char* path, int setting, long entries) {",
        "  TFile f(path, \"RECREATE\", \"\", setting);",
        "  TTree t(\"Events\", \"NanoAOD-like events\");",
        "  TRandom3 r(12345);",
        "  unsigned int run; unsigned int luminosityBlock; unsigned long long event;",
        "  char processName[32]; std::string generator;",
        "  std::vector<std::vector<float>> LHE_scale; std::vector<std::string> Jet_tags;",
        "  float beamSpot[3]; Double32_t vertexZ;",
        *decl,
        "  t.Branch(\"run\", &run, \"run/i\");",
        "  t.Branch(\"luminosityBlock\", &luminosityBlock, \"luminosityBlock/i\");",
        "  t.Branch(\"event\", &event, \"event/l\");",
        "  t.Branch(\"processName\", processName, \"processName/C\");",
        "  t.Branch(\"generator\", &generator);",
        "  t.Branch(\"LHE_scale\", &LHE_scale);",
        "  t.Branch(\"Jet_tags\", &Jet_tags);",
        "  t.Branch(\"beamSpot\", beamSpot, \"x/F:y/F:z/F\");",
        "  t.Branch(\"vertexZ\", &vertexZ, \"vertexZ/d[-30,30,16]\");",
        *branch,
        "  const char* processes[4] = {\"ttbar\", \"DYJetsToLL_M-50\", \"WJetsToLNu\", \"\"};",
        "  for (long i = 0; i < entries; ++i) {",
        "    run = 1 + i / 100000; luminosityBlock = 1 + i / 1000; event = 1000000000ULL + i;",
        "    snprintf(processName, sizeof processName, \"%s\", processes[i % 4]);",
        "    generator = (i % 7 == 0) ? std::string() : std::string(\"powheg+pythia8 v\") + std::to_string(i % 3);",
        "    LHE_scale.clear();",
        "    for (int k = 0; k < (int)(i % 3); ++k) {",
        "      std::vector<float> w; for (int m = 0; m < 3 + k; ++m) w.push_back((float)r.Gaus(1, 0.1));",
        "      LHE_scale.push_back(w);",
        "    }",
        "    beamSpot[0] = (float)r.Gaus(0, 0.01); beamSpot[1] = (float)r.Gaus(0, 0.01); beamSpot[2] = (float)r.Gaus(0, 3);",
        "    vertexZ = r.Gaus(0, 5);",
        *["    " + line for line in fill],
        "    Jet_tags.clear();",
        "    for (unsigned k = 0; k < nJet; ++k) Jet_tags.push_back(Jet_isGood[k] ? \"good\" : \"pileup\");",
        "    t.Fill();",
        "  }",
        "  t.Write();",
        "}",
    ])


def write(path, entries, compression):
    import ROOT  # noqa: PLC0415

    ROOT.gROOT.SetBatch(True)
    ROOT.gInterpreter.Declare(maker_source())
    ROOT.root_nanoaod_make(path, compression, entries)


def leaf_values(leaf, n):
    return [leaf.GetValue(k) for k in range(n)]


def encode(kind, values):
    """One entry in the canonical binary form (see the module docstring)."""
    out = [struct.pack("<I", len(values))]
    for v in values:
        if kind == "f32":
            out.append(struct.pack("<f", v))
        elif kind == "f64":
            out.append(struct.pack("<d", v))
        elif kind == "u64":
            out.append(struct.pack("<Q", int(v)))
        elif kind == "str":
            b = v.encode() if isinstance(v, str) else bytes(v)
            out.append(struct.pack("<I", len(b)) + b)
        else:
            out.append(struct.pack("<q", int(v)))
    return b"".join(out)


def digest(path, out_path):
    import ROOT  # noqa: PLC0415

    ROOT.gROOT.SetBatch(True)
    f = ROOT.TFile.Open(path)
    t = f.Get("Events")
    plan = []
    for br in t.GetListOfBranches():
        name = br.GetName()
        leaves = list(br.GetListOfLeaves())
        if br.ClassName() == "TBranchElement":
            plan.append((name, "object", None))
        elif len(leaves) > 1:
            plan.append((name, "record", leaves))
        else:
            leaf = leaves[0]
            cls = leaf.ClassName()
            kind = {"TLeafF": "f32", "TLeafD": "f64", "TLeafD32": "f64", "TLeafC": "str"}.get(cls)
            if kind is None:
                kind = "u64" if cls == "TLeafL" and leaf.IsUnsigned() else "int"
            plan.append((name, kind, leaf))
    hashes = {name: hashlib.sha256() for name, _, _ in plan}
    for i in range(t.GetEntries()):
        t.GetEntry(i)
        for name, kind, leaf in plan:
            if kind == "object":
                value = getattr(t, name)
                if name == "generator":
                    data = encode("str", [str(value)])
                elif name == "Jet_tags":
                    data = encode("str", [str(x) for x in value])
                else:  # LHE_scale: the inner lists, each as an entry of its own
                    data = struct.pack("<I", len(value)) + b"".join(
                        encode("f32", [float(x) for x in inner]) for inner in value
                    )
            elif kind == "record":
                data = b"".join(encode("f32", [lf.GetValue(0)]) for lf in leaf)
            elif kind == "str":
                data = encode("str", [str(leaf.GetValueString())])
            elif kind == "u64":
                data = encode("u64", [int(getattr(t, name))])
            else:
                data = encode(kind, leaf_values(leaf, leaf.GetLen()))
            hashes[name].update(data)
    result = {
        "file": path.rsplit("/", 1)[-1],
        "root_version": ROOT.gROOT.GetVersion(),
        "entries": int(t.GetEntries()),
        "branches": {name: hashes[name].hexdigest() for name, _, _ in plan},
    }
    with open(out_path, "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
        fh.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("path")
    w.add_argument("--entries", type=int, default=1000)
    w.add_argument("--compression", type=int, default=505)
    d = sub.add_parser("digest")
    d.add_argument("path")
    d.add_argument("out")
    args = ap.parse_args()
    if args.cmd == "write":
        write(args.path, args.entries, args.compression)
    else:
        digest(args.path, args.out)
    print(f"{args.cmd}: {args.path}", file=sys.stderr)


if __name__ == "__main__":
    main()

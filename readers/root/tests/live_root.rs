//! Live interop with the ROOT of the pinned venv: a file written at test time (TNtuple, TNtupleD,
//! per-branch compression settings that differ from the file's) is read back by ROOT and by us.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use std::process::Command;

use root_reader::RootFile;

const SCRIPT: &str = r#"
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np
import ROOT
ROOT.gROOT.SetBatch(True)
path, out = sys.argv[1], sys.argv[2]
f = ROOT.TFile(path, "RECREATE", "", 404)
nt = ROOT.TNtuple("nt", "ntuple", "a:b:c")
for i in range(300):
    nt.Fill(i * 0.5, -i, i * i * 1e-3)
ntd = ROOT.TNtupleD("ntd", "ntuple of doubles", "p:q")
for i in range(120):
    ntd.Fill(i / 3.0, 1e10 - i)
t = ROOT.TTree("t", "per-branch compression")
v = np.zeros(1, dtype=np.float64); n = np.zeros(1, dtype=np.int32); x = np.zeros(6, dtype=np.float64)
bv = t.Branch("v", v, "v/D"); bn = t.Branch("n", n, "n/I"); bx = t.Branch("x", x, "x[n]/D")
bv.SetCompressionSettings(509); bn.SetCompressionSettings(109); bx.SetCompressionSettings(207)
for i in range(500):
    v[0] = np.sin(i); n[0] = i % 7
    for k in range(n[0]): x[k] = i + k / 8.0
    t.Fill()
f.Write(); f.Close()
f = ROOT.TFile.Open(path)
res = {}
for name in ("nt", "ntd", "t"):
    tree = f.Get(name)
    cols = {b.GetName(): [] for b in tree.GetListOfBranches()}
    for e in range(tree.GetEntries()):
        tree.GetEntry(e)
        for b in cols:
            leaf = tree.GetBranch(b).GetLeaf(b)
            vals = [leaf.GetValue(j) for j in range(leaf.GetLen())]
            cols[b].append(vals if b == "x" else vals[0])
    res[name] = cols
with open(out, "w") as fh:
    json.dump(res, fh)
f.Close()
sys.stdout.flush()
import os
os._exit(0)  # skip PyROOT's interpreter teardown, which can crash after the work is done
"#;

#[test]
fn ntuples_and_per_branch_compression_match_root() {
    let Some(python) = util::python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root_file = dir.path().join("live.root");
    let json_file = dir.path().join("live.json");
    let status = Command::new(python)
        .args(["-c", SCRIPT])
        .arg(&root_file)
        .arg(&json_file)
        .status()
        .unwrap();
    assert!(status.success(), "the ROOT writer failed");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    let file = RootFile::open(&root_file).unwrap();
    for (tree_name, cols) in expected.as_object().unwrap() {
        let tree = file.tree(tree_name).unwrap();
        for (branch, want) in cols.as_object().unwrap() {
            let want = want.as_array().unwrap();
            let b = tree.branch(branch).unwrap();
            assert_eq!(b.entries() as usize, want.len(), "{tree_name}.{branch}");
            if branch == "x" {
                let got = b.reader().read_jagged::<f64>().unwrap();
                for (j, w) in want.iter().enumerate() {
                    let w: Vec<f64> = w
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_f64().unwrap())
                        .collect();
                    assert_eq!(got.get(j).unwrap(), w.as_slice(), "{tree_name}.x entry {j}");
                }
                continue;
            }
            let col = b
                .read_column(0, b.entries(), root_reader::Parallel::Never)
                .unwrap();
            let got: Vec<f64> = match col.values {
                root_reader::Values::F32(v) => v.into_iter().map(f64::from).collect(),
                root_reader::Values::F64(v) => v,
                root_reader::Values::I32(v) => v.into_iter().map(f64::from).collect(),
                other => panic!("{tree_name}.{branch}: unexpected {other:?}"),
            };
            let want: Vec<f64> = want.iter().map(|v| v.as_f64().unwrap()).collect();
            assert_eq!(got, want, "{tree_name}.{branch}");
        }
    }
}

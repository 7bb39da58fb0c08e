//! A NanoAOD-like file (hundreds of branches: flat, counter-jagged, bools, strings, and one of
//! every other branch type), written at test time by `tools/root_nanoaod.py` through the ROOT of
//! the pinned venv: every branch opens, and its values hash to what ROOT read back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::collections::BTreeMap;
use std::process::Command;

use root_reader::{Column, Parallel, RootFile, Values};
use sha2::{Digest, Sha256};

/// Item `i` of `values` in the script's canonical form (without a count).
fn item(values: &Values, i: usize, out: &mut Vec<u8>) {
    match values {
        Values::Bool(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::I8(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::U8(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::I16(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::U16(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::I32(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::U32(v) => out.extend(i64::from(v[i]).to_le_bytes()),
        Values::I64(v) => out.extend(v[i].to_le_bytes()),
        Values::U64(v) => out.extend(v[i].to_le_bytes()),
        Values::F32(v) => out.extend(v[i].to_le_bytes()),
        Values::F64(v) => out.extend(v[i].to_le_bytes()),
        Values::Text(s) => {
            let b = s.get(i).unwrap();
            out.extend((b.len() as u32).to_le_bytes());
            out.extend(b);
        }
        Values::Lists(l) => {
            let (a, b) = (l.offsets[i] as usize, l.offsets[i + 1] as usize);
            out.extend(((b - a) as u32).to_le_bytes());
            (a..b).for_each(|k| item(&l.items, k, out));
        }
        Values::Record(fields) => {
            for f in fields {
                out.extend((f.len as u32).to_le_bytes());
                (i * f.len..(i + 1) * f.len).for_each(|k| item(&f.values, k, out));
            }
        }
    }
}

/// Entry `j` of `col`: a count, then its items.
fn entry(col: &Column, j: usize, out: &mut Vec<u8>) {
    let (a, b) = match &col.offsets {
        Some(o) => (o[j] as usize, o[j + 1] as usize),
        None => {
            let per = col.layout.fixed_len().unwrap();
            (j * per, (j + 1) * per)
        }
    };
    // A leaf list's record and a list-valued item carry their own counts.
    if !matches!(col.values, Values::Record(_)) {
        out.extend(((b - a) as u32).to_le_bytes());
    }
    (a..b).for_each(|i| item(&col.values, i, out));
}

fn digest(col: &Column) -> String {
    let mut bytes = Vec::new();
    for j in 0..col.entries() {
        entry(col, j, &mut bytes);
    }
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn every_branch_of_a_nanoaod_like_file_equals_root() {
    let Some(python) = util::python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nano.root");
    let json = dir.path().join("nano.json");
    let script = util::workspace_root().join("tools/root_nanoaod.py");
    for args in [
        vec!["write", path.to_str().unwrap(), "--entries", "400"],
        vec!["digest", path.to_str().unwrap(), json.to_str().unwrap()],
    ] {
        let status = Command::new(&python)
            .arg(&script)
            .args(&args)
            .status()
            .unwrap();
        assert!(status.success(), "root_nanoaod.py {args:?}");
    }
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let want: BTreeMap<String, String> = want["branches"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    assert!(want.len() > 300, "{} branches", want.len());

    let file = RootFile::open(&path).unwrap();
    let tree = file.tree("Events").unwrap();
    assert_eq!(tree.entries, 400);
    assert_eq!(tree.branches.len(), want.len());
    for (name, hash) in &want {
        let branch = tree.branch(name).unwrap();
        for parallel in [Parallel::Never, Parallel::Always] {
            let col = branch
                .read_column(0, tree.entries, parallel)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&digest(&col), hash, "{name} ({parallel:?})");
        }
        // The lazy reader, entry by entry on a sample, agrees with the eager one.
        let eager = branch
            .read_column(0, tree.entries, Parallel::Never)
            .unwrap();
        let lazy = branch.lazy().unwrap();
        for j in (0..tree.entries).step_by(37) {
            let one = lazy.read_column(j, j + 1).unwrap();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            entry(&one, 0, &mut a);
            entry(&eager, j as usize, &mut b);
            assert_eq!(a, b, "{name} lazy entry {j}");
        }
    }
}

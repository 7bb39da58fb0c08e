//! Every value of every branch of every committed fixture equals what ROOT 6.40 read back
//! (`tests/fixtures/*.json`, written by `tools/root_fixtures.py`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use root_reader::{Column, Layout, Parallel, RootFile, Values};
use serde_json::Value;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq)]
enum V {
    B(bool),
    I(i128),
    F(f64),
}

fn from_json(v: &Value) -> V {
    match v {
        Value::Bool(b) => V::B(*b),
        Value::Number(n) if n.is_i64() => V::I(i128::from(n.as_i64().unwrap())),
        Value::Number(n) if n.is_u64() => V::I(i128::from(n.as_u64().unwrap())),
        Value::Number(n) => V::F(n.as_f64().unwrap()),
        other => panic!("unexpected JSON value {other}"),
    }
}

fn values(col: &Column) -> Vec<V> {
    match &col.values {
        Values::Bool(v) => v.iter().map(|&x| V::B(x)).collect(),
        Values::I8(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::U8(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::I16(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::U16(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::I32(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::U32(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::I64(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::U64(v) => v.iter().map(|&x| V::I(x.into())).collect(),
        Values::F32(v) => v.iter().map(|&x| V::F(x.into())).collect(),
        Values::F64(v) => v.iter().map(|&x| V::F(x)).collect(),
        other => panic!("numeric values expected, got {other:?}"),
    }
}

/// Splits a column into per-entry lists.
fn entries(col: &Column, n: usize) -> Vec<Vec<V>> {
    let vals = values(col);
    match &col.offsets {
        Some(o) => o
            .windows(2)
            .map(|w| vals[w[0] as usize..w[1] as usize].to_vec())
            .collect(),
        None => {
            let per = col.layout.fixed_len().unwrap();
            assert_eq!(vals.len(), n * per);
            vals.chunks(per).map(<[V]>::to_vec).collect()
        }
    }
}

fn check_fixture(name: &str, parallel: Parallel) {
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(util::fixture(&format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let file = RootFile::open(util::fixture(&format!("{name}.root"))).unwrap();
    let trees = json["trees"].as_object().unwrap();
    assert!(!trees.is_empty());
    let listed: Vec<String> = file
        .trees()
        .unwrap()
        .iter()
        .map(|t| format!("{};{}", t.path, t.key.cycle))
        .collect();
    for (spec, expected) in trees {
        assert!(
            listed.contains(spec),
            "{name}: {spec} not listed in {listed:?}"
        );
        let tree = file
            .tree(spec)
            .unwrap_or_else(|e| panic!("{name} {spec}: {e}"));
        let n = expected["entries"].as_u64().unwrap();
        assert_eq!(tree.entries, n, "{name} {spec}");
        for (bname, b) in expected["branches"].as_object().unwrap() {
            let branch = tree.branch(bname).unwrap();
            let col = branch
                .read_column(0, n, parallel)
                .unwrap_or_else(|e| panic!("{name} {spec} {bname}: {e}"));
            let kind = b["kind"].as_str().unwrap();
            assert_eq!(
                col.layout.leaf_type().unwrap().name(),
                b["type"].as_str().unwrap(),
                "{name} {spec} {bname}"
            );
            let got = entries(&col, n as usize);
            let want = b["values"].as_array().unwrap();
            assert_eq!(got.len(), want.len(), "{name} {spec} {bname}");
            for (j, (g, w)) in got.iter().zip(want).enumerate() {
                let ctx = format!("{name} {spec} {bname} entry {j}");
                match kind {
                    "scalar" => {
                        assert!(matches!(col.layout, Layout::Scalar(_)), "{ctx}");
                        assert_eq!(g.as_slice(), &[from_json(w)], "{ctx}");
                    }
                    "fixed" | "jagged" | "vector" => {
                        let w: Vec<V> = w.as_array().unwrap().iter().map(from_json).collect();
                        assert_eq!(g, &w, "{ctx}");
                    }
                    "digest" => {
                        let bytes: Vec<u8> = g
                            .iter()
                            .map(|v| match v {
                                V::I(x) => u8::try_from(*x).unwrap(),
                                _ => panic!("{ctx}"),
                            })
                            .collect();
                        assert_eq!(bytes.len() as u64, w["len"].as_u64().unwrap(), "{ctx}");
                        let hex: String = Sha256::digest(&bytes)
                            .iter()
                            .map(|b| format!("{b:02x}"))
                            .collect();
                        assert_eq!(hex, w["sha256"].as_str().unwrap(), "{ctx}");
                    }
                    other => panic!("unknown kind {other}"),
                }
            }
            // The lazy reader agrees entry by entry with the eager one on a sample.
            if kind != "digest" {
                let lazy = branch.lazy().unwrap();
                for j in (0..n).step_by(7) {
                    let col1 = branch.read_column(j, j + 1, Parallel::Never).unwrap();
                    assert_eq!(
                        entries(&col1, 1)[0],
                        got[j as usize],
                        "{name} {bname} lazy {j}"
                    );
                    assert!(lazy.basket_of(j).is_some());
                }
            }
        }
    }
}

#[test]
fn types_zlib() {
    check_fixture("types_zlib", Parallel::Never);
}
#[test]
fn types_zstd() {
    check_fixture("types_zstd", Parallel::Never);
}
#[test]
fn types_lz4() {
    check_fixture("types_lz4", Parallel::Never);
}
#[test]
fn types_lzma() {
    check_fixture("types_lzma", Parallel::Never);
}
#[test]
fn types_none() {
    check_fixture("types_none", Parallel::Never);
}
#[test]
fn types_zstd_parallel() {
    check_fixture("types_zstd", Parallel::Always);
}
#[test]
fn structure_subdirectories_and_cycles() {
    check_fixture("structure", Parallel::Never);
    let file = RootFile::open(util::fixture("structure.root")).unwrap();
    // Without a cycle the highest one is read.
    assert_eq!(file.tree("t").unwrap().entries, 25);
    assert_eq!(file.tree("t;1").unwrap().entries, 10);
    assert_eq!(file.tree("/sub/deeper/t2").unwrap().entries, 5);
    assert!(file.tree("t;3").is_err());
    assert!(
        file.tree("note")
            .unwrap_err()
            .to_string()
            .contains("TNamed")
    );
    assert!(file.tree("sub/missing").is_err());
}
#[test]
fn embedded_baskets() {
    check_fixture("embedded", Parallel::Never);
    let file = RootFile::open(util::fixture("embedded.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let pt = tree.branch("pt").unwrap();
    assert!(
        pt.baskets()
            .iter()
            .any(|b| matches!(b.location, root_reader::BasketLocation::Embedded(_))),
        "the fixture must keep its last basket inside the TTree record"
    );
}

/// Issue 49 item 3: branches that share a name (members of two objects split without a dot,
/// a top-level branch of a member's name, two top-level branches of one name) are read by their
/// full paths, each with its own values as ROOT reads them through the branch object.
#[test]
fn branches_sharing_a_name_are_read_by_full_path() {
    check_fixture("paths", Parallel::Never);
    let file = RootFile::open(util::fixture("paths.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let named = tree.named_branches();
    assert_eq!(named.len(), tree.all_branches().len());
    // The second `dup` is the last top-level branch, not the first one.
    let last = tree.branches.last().unwrap();
    let dup2 = tree.find_branch("dup#2").unwrap();
    assert!(std::sync::Arc::ptr_eq(&dup2.meta, last));
    assert!(!std::sync::Arc::ptr_eq(
        &tree.find_branch("dup").unwrap().meta,
        last
    ));
    // A column name and a full path select the same branch; a shared name selects none.
    for n in named {
        let by_path = tree.find_branch(&n.path).unwrap();
        assert!(std::sync::Arc::ptr_eq(&by_path.meta, &n.meta), "{}", n.path);
    }
    match tree.branch("hit.id") {
        Err(root_reader::Error::AmbiguousBranch { branch, paths, .. }) => {
            assert_eq!(branch, "hit.id");
            assert_eq!(paths, ["a/hit/hit.id", "b/hit/hit.id"]);
        }
        other => panic!("hit.id: {other:?}"),
    }
    assert!(tree.branch_meta("hit.id").is_none());
    assert_eq!(tree.branch_meta("c.hit.id").unwrap().name, "c.hit.id");
    // A chain resolves full paths in each file.
    let chain = root_reader::Chain::open(
        &[util::fixture("paths.root"), util::fixture("paths.root")],
        "t",
        1 << 20,
    )
    .unwrap();
    let col = chain.read_column("b/x", 29, 31, Parallel::Never).unwrap();
    assert_eq!(values(&col), [V::I(-1000 + 29), V::I(-1000)]);
}

#[test]
fn split_class_members() {
    check_fixture("split", Parallel::Never);
    check_fixture("split", Parallel::Always);
    let file = RootFile::open(util::fixture("split.root")).unwrap();
    let tree = file.tree("t").unwrap();
    // The parents hold no data of their own and say where the data is.
    for parent in ["evt.", "evt.lead"] {
        let err = tree
            .branch(parent)
            .unwrap()
            .read_column(0, 1, Parallel::Never);
        let err = err.unwrap_err().to_string();
        assert!(err.contains("read its sub-branches"), "{parent}: {err}");
    }
}

#[test]
fn multiblock_objects() {
    check_fixture("multiblock", Parallel::Never);
    // Baskets of several MiB: decoded by several tasks each (blocks, then entry ranges).
    check_fixture("multiblock", Parallel::Always);
    // Every branch's basket really is split over several compression blocks, one per algorithm.
    let raw = std::fs::read(util::fixture("multiblock.root")).unwrap();
    let file = RootFile::open(util::fixture("multiblock.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let mut algorithms = Vec::new();
    for meta in tree.all_branches() {
        let root_reader::BasketLocation::OnDisk { seek, bytes } = meta.baskets[0].location else {
            panic!("{} basket not on disk", meta.name);
        };
        let rec = &raw[seek as usize..(seek + u64::from(bytes)) as usize];
        let keylen = u16::from_be_bytes([rec[14], rec[15]]) as usize;
        let objlen = u32::from_be_bytes([rec[6], rec[7], rec[8], rec[9]]) as usize;
        let blocks = root_reader::compression::blocks(&rec[keylen..], objlen).unwrap();
        assert!(
            blocks.len() >= 2,
            "{}: {} block(s)",
            meta.name,
            blocks.len()
        );
        algorithms.push(blocks[0].algorithm);
        // The blocks are independent streams: decompressed in parallel, the same bytes.
        let serial = root_reader::compression::decompress(&rec[keylen..], objlen).unwrap();
        let mut parallel = vec![0xa5; objlen];
        root_reader::compression::decompress_into_par(&rec[keylen..], &mut parallel).unwrap();
        assert!(serial == parallel, "{}: parallel blocks differ", meta.name);
    }
    use root_reader::compression::Algorithm;
    for a in [
        Algorithm::Zlib,
        Algorithm::Zstd,
        Algorithm::Lz4,
        Algorithm::Lzma,
    ] {
        assert!(algorithms.contains(&a), "{a:?} missing from {algorithms:?}");
    }
}

/// Three files read as one tree (`Chain`): every branch equals the concatenation of what ROOT
/// read from each file, over the whole chain and over ranges that cross file boundaries, with
/// one cache bound for all files.
#[test]
fn chains_read_several_files_as_one_tree() {
    let names = ["types_zlib", "types_zstd", "types_none"];
    let paths: Vec<_> = names
        .iter()
        .map(|n| util::fixture(&format!("{n}.root")))
        .collect();
    let bound = 64 * 1024;
    let chain = root_reader::Chain::open(&paths, "t", bound).unwrap();
    assert_eq!(chain.entries(), 600);
    let expected: Vec<Value> = names
        .iter()
        .map(|n| {
            serde_json::from_str(
                &std::fs::read_to_string(util::fixture(&format!("{n}.json"))).unwrap(),
            )
            .unwrap()
        })
        .collect();
    let branches: Vec<String> = expected[0]["trees"]["t;1"]["branches"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for bname in &branches {
        let want: Vec<Value> = expected
            .iter()
            .flat_map(|e| {
                e["trees"]["t;1"]["branches"][bname]["values"]
                    .as_array()
                    .unwrap()
                    .clone()
            })
            .collect();
        let as_lists = |w: &Value| -> Vec<V> {
            match w.as_array() {
                Some(a) => a.iter().map(from_json).collect(),
                None => vec![from_json(w)],
            }
        };
        for (start, stop) in [
            (0u64, 600u64),
            (150, 450),
            (199, 201),
            (400, 400),
            (599, 600),
        ] {
            let col = chain
                .read_column(bname, start, stop, Parallel::Auto)
                .unwrap_or_else(|e| panic!("{bname} {start}..{stop}: {e}"));
            let got = entries(&col, (stop - start) as usize);
            assert_eq!(got.len() as u64, stop - start, "{bname} {start}..{stop}");
            for (j, g) in got.iter().enumerate() {
                let w = &want[start as usize + j];
                assert_eq!(
                    g,
                    &as_lists(w),
                    "{bname} chain entry {}",
                    start as usize + j
                );
            }
        }
    }
    // One bound for the three files.
    assert!(chain.cache().stats().bytes <= bound as u64);
    assert!(chain.read_column("f", 0, 601, Parallel::Never).is_err());
    assert!(chain.read_column("no_such", 0, 1, Parallel::Never).is_err());
    let missing = root_reader::Chain::open(&[util::fixture("structure.root")], "nope", bound);
    assert!(missing.is_err());
}

//! Files found in the wild that did not open, named after their issue; each one read eagerly,
//! in parallel and lazily, every branch equal bit for bit to the values uproot 5.7.7 reads
//! (`tests/fixtures/NAME.json`, written by `tools/testdata_expected.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use root_reader::{Column, Parallel, RootFile, Values};
use serde_json::Value;

/// One value as compared: a number by the exact value it holds (every `f32` widens to one
/// `f64`), a string by its bytes.
#[derive(Debug, PartialEq)]
enum Item {
    Int(i64),
    Float(u64),
    Text(Vec<u8>),
}

fn ours(values: &Values, i: usize) -> Item {
    match values {
        Values::Bool(v) => Item::Int(i64::from(v[i])),
        Values::I8(v) => Item::Int(i64::from(v[i])),
        Values::U8(v) => Item::Int(i64::from(v[i])),
        Values::I16(v) => Item::Int(i64::from(v[i])),
        Values::U16(v) => Item::Int(i64::from(v[i])),
        Values::I32(v) => Item::Int(i64::from(v[i])),
        Values::U32(v) => Item::Int(i64::from(v[i])),
        Values::I64(v) => Item::Int(v[i]),
        Values::F32(v) => Item::Float(f64::from(v[i]).to_bits()),
        Values::F64(v) => Item::Float(v[i].to_bits()),
        Values::Text(s) => Item::Text(s.get(i).unwrap().to_vec()),
        other => panic!("no such values in these files: {other:?}"),
    }
}

fn theirs(value: &Value) -> Item {
    match value {
        Value::Number(n) if n.is_f64() => Item::Float(n.as_f64().unwrap().to_bits()),
        Value::Number(n) => Item::Int(n.as_i64().unwrap()),
        Value::String(s) => Item::Text(s.as_bytes().to_vec()),
        other => panic!("no such value in the expected file: {other}"),
    }
}

/// Entry `j` of `col`: whether it is a list (an array or a jagged entry), and its items.
fn entry(col: &Column, j: usize) -> (bool, Vec<Item>) {
    let (list, range) = match &col.offsets {
        Some(o) => (true, o[j] as usize..o[j + 1] as usize),
        None => {
            let n = col.layout.fixed_len().unwrap();
            (n != 1, j * n..(j + 1) * n)
        }
    };
    (list, range.map(|i| ours(&col.values, i)).collect())
}

fn expected_entry(value: &Value) -> (bool, Vec<Item>) {
    match value {
        Value::Array(items) => (true, items.iter().map(theirs).collect()),
        one => (false, vec![theirs(one)]),
    }
}

/// `col` holds entries `first..` of `want`.
fn check(what: &str, col: &Column, want: &[Value], first: usize) {
    for j in 0..col.entries() {
        assert_eq!(
            entry(col, j),
            expected_entry(&want[first + j]),
            "{what}: entry {}",
            first + j
        );
    }
}

/// Every tree and branch of fixture `name` against uproot's values.
fn every_branch_equals_uproot(name: &str) {
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(util::fixture(&format!("{name}.json"))).unwrap(),
    )
    .unwrap();
    let file = RootFile::open(util::fixture(&format!("{name}.root"))).unwrap();
    let trees = json["trees"].as_object().unwrap();
    assert!(!trees.is_empty());
    for (tree_name, want) in trees {
        let tree = file
            .tree(tree_name)
            .unwrap_or_else(|e| panic!("{name} {tree_name}: {e}"));
        let n = want["entries"].as_u64().unwrap();
        assert_eq!(tree.entries, n, "{name} {tree_name}");
        let branches = want["branches"].as_object().unwrap();
        assert!(!branches.is_empty());
        for (branch_name, want) in branches {
            let what = format!("{name} {tree_name} {branch_name}");
            let want = want["values"].as_array().unwrap();
            assert_eq!(want.len() as u64, n, "{what}");
            let branch = tree
                .branch(branch_name)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            for parallel in [Parallel::Never, Parallel::Always] {
                let col = branch
                    .read_column(0, n, parallel)
                    .unwrap_or_else(|e| panic!("{what} {parallel:?}: {e}"));
                assert_eq!(col.entries() as u64, n, "{what} {parallel:?}");
                check(&format!("{what} {parallel:?}"), &col, want, 0);
            }
            // Single entries and ranges that start and end inside baskets.
            let lazy = branch.lazy().unwrap();
            for (a, b) in [(0, 1), (n / 3, 2 * n / 3), (n - 1, n), (0, n)] {
                let col = lazy
                    .read_column(a, b)
                    .unwrap_or_else(|e| panic!("{what} lazy {a}..{b}: {e}"));
                assert_eq!(col.entries() as u64, b - a, "{what} lazy {a}..{b}");
                check(&format!("{what} lazy {a}..{b}"), &col, want, a as usize);
            }
        }
    }
}

/// ROOT 4 trees (TTree v5, TBranch v8, counts stored as doubles), written by Geant4's g4tools:
/// four trees whose data is in baskets embedded in the tree records, strings in `char*` leaves.
#[test]
fn issue23_root4_trees_from_geant4() {
    every_branch_equals_uproot("uproot-from-geant4");
}

/// A ROOT 4 tree whose branches have baskets on disk and one embedded each.
#[test]
fn issue23_root4_tree_with_baskets_on_disk() {
    every_branch_equals_uproot("uproot-issue-250");
}

/// fBaskets holds header-only copies (flag 0) of the baskets on disk, and the `char*` branch's
/// basket has no entry-offset table: entries of one size, as ROOT reads them.
#[test]
fn issue23_header_only_baskets_and_strings_without_offsets() {
    every_branch_equals_uproot("uproot-issue413");
    // The typed readers too.
    let file = RootFile::open(util::fixture("uproot-issue413.root")).unwrap();
    let tree = file.tree("mytree").unwrap();
    let jagged = tree.branch("SliF64").unwrap().reader().read_jagged::<f64>();
    let jagged = jagged.unwrap();
    assert_eq!(jagged.offsets, [0, 0, 1, 3, 6, 10]);
    let lazy = tree.branch("I32").unwrap().lazy().unwrap();
    assert_eq!(lazy.read_at::<i32>(4).unwrap(), 4);
}

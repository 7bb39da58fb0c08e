//! Branches streamed object by object (strings, nested vectors, packed reals, leaf lists,
//! members of split objects and collections) read from `objects.root` equal what ROOT 6.40
//! read back through the classes themselves (`objects.json`, written by
//! `tools/root_fixtures.py`), eagerly, in parallel, lazily and through a chain.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use root_reader::{Chain, Column, Layout, Parallel, RootFile, Shape};
use serde_json::Value;

/// Entry `j` of `col` as root-tool writes it, parsed back.
fn entry(col: &Column, j: usize) -> Value {
    let mut text = String::new();
    root_reader::json::write_entry(&mut text, col, j, ',');
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Equal as ROOT's values: floats of an `f32` branch as the same `f32`; other floats exactly,
/// or, when ROOT's value is exactly an `f32` (a float member of a record), as that `f32`.
/// Members root-tool writes with a leading `@` (a TObject's fUniqueID and fBits) are not in
/// ROOT's record: ROOT's in-memory fBits are not what the file holds.
fn same(ours: &Value, root: &Value, f32_values: bool) -> bool {
    match (ours, root) {
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, f32_values))
        }
        (Value::Object(a), Value::Object(b)) => {
            let ours: Vec<_> = a.iter().filter(|(k, _)| !k.starts_with('@')).collect();
            ours.len() == b.len()
                && ours
                    .iter()
                    .zip(b)
                    .all(|((ka, x), (kb, y))| *ka == kb && same(x, y, f32_values))
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            let y_is_f32 = f64::from(y as f32) == y;
            x == y || ((f32_values || y_is_f32) && x as f32 == y as f32)
        }
        (a, b) => a == b,
    }
}

fn expected() -> (u64, serde_json::Map<String, Value>) {
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(util::fixture("objects.json")).unwrap())
            .unwrap();
    let tree = &json["trees"]["t;1"];
    (
        tree["entries"].as_u64().unwrap(),
        tree["branches"].as_object().unwrap().clone(),
    )
}

fn check(name: &str, col: &Column, want: &Value, first: usize, how: &str) {
    let f32_values = want["type"] == "f32";
    let want = want["values"].as_array().unwrap();
    for j in 0..col.entries() {
        let got = entry(col, j);
        assert!(
            same(&got, &want[first + j], f32_values),
            "{name} entry {} ({how}): ours {got}, ROOT {}",
            first + j,
            want[first + j]
        );
    }
}

#[test]
fn every_object_branch_equals_root_eager_and_parallel() {
    let (n, branches) = expected();
    let file = RootFile::open(util::fixture("objects.root")).unwrap();
    let tree = file.tree("t").unwrap();
    assert_eq!(tree.entries, n);
    for (name, want) in &branches {
        let branch = tree.branch(name).unwrap();
        assert!(
            branch.baskets().len() > 1,
            "{name}: the fixture should spread every branch over several baskets"
        );
        for parallel in [Parallel::Never, Parallel::Always] {
            let col = branch
                .read_column(0, n, parallel)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(col.entries() as u64, n, "{name}");
            check(name, &col, want, 0, &format!("{parallel:?}"));
        }
    }
}

#[test]
fn entry_ranges_and_the_lazy_reader_agree_with_root() {
    let (n, branches) = expected();
    let file = RootFile::open(util::fixture("objects.root")).unwrap();
    let tree = file.tree("t").unwrap();
    for (name, want) in &branches {
        let lazy = tree.branch(name).unwrap().lazy().unwrap();
        // Ranges that start and end inside baskets, and single entries.
        for (a, b) in [(0, 1), (7, 8), (13, 150), (149, n), (n - 1, n), (5, 5)] {
            let col = lazy
                .read_column(a, b)
                .unwrap_or_else(|e| panic!("{name} {a}..{b}: {e}"));
            assert_eq!(col.entries() as u64, b - a, "{name} {a}..{b}");
            check(name, &col, want, a as usize, &format!("lazy {a}..{b}"));
        }
    }
}

#[test]
fn packed_reals_read_as_numbers() {
    let (n, branches) = expected();
    let file = RootFile::open(util::fixture("objects.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let root_f64 = |name: &str| -> Vec<f64> {
        branches[name]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    // Double32_t with a range, eager and lazy, typed.
    let d32r = tree.branch("d32r").unwrap();
    assert_eq!(d32r.reader().read::<f64>().unwrap(), root_f64("d32r"));
    assert_eq!(
        d32r.lazy().unwrap().read_at::<f64>(17).unwrap(),
        root_f64("d32r")[17]
    );
    // Float16_t reads as f32, and asking for f64 is a type error, not a conversion.
    let f16 = tree.branch("rng.b").unwrap();
    assert_eq!(f16.reader().read::<f32>().unwrap().len() as u64, n);
    assert!(f16.reader().read::<f64>().is_err());
    // A Double32_t member of a collection's elements: jagged f64.
    let m = tree
        .branch("obj.parts.m")
        .unwrap()
        .reader()
        .read_jagged::<f64>();
    let m = m.unwrap();
    assert_eq!(m.len() as u64, n);
    assert_eq!(
        m.get(3).unwrap(),
        &[0.0, 0.30000001192092896, 0.6000000238418579]
    );
    // Strings are not numbers.
    assert!(tree.branch("ts").unwrap().reader().read::<u8>().is_err());
}

#[test]
fn layouts_say_what_each_branch_is() {
    let file = RootFile::open(util::fixture("objects.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let describe = |name: &str| tree.branch(name).unwrap().layout().unwrap().describe();
    assert_eq!(describe("cstr"), "string");
    assert_eq!(describe("vvs"), "vector<vector<string>>");
    assert_eq!(describe("obj.parts.idx"), "vector<i32>[]");
    assert_eq!(describe("lla"), "{p: f32[3], q: i16}");
    assert_eq!(describe("whole."), "Tagged");
    assert_eq!(describe("derived."), "Derived");
    assert_eq!(describe("ranges"), "vector<Ranged>");
    assert!(
        describe("d32r").starts_with("f64 (Double32_t"),
        "{}",
        describe("d32r")
    );
    assert!(matches!(
        tree.branch("obj.tags").unwrap().layout().unwrap(),
        Layout::Object(Shape::Headed(_))
    ));
}

/// `ranges`, a `vector<Ranged>` written whole, is streamed member-wise (every element's `a`,
/// then every `b`, ...): entry `i` holds `i % 3` copies of the `Ranged` that `rng0.` holds
/// whole in entry `i`, whose values ROOT read back. Eager, parallel and lazy.
#[test]
fn a_collection_streamed_member_wise_reads_as_its_objects() {
    let (n, branches) = expected();
    let want = branches["rng0."]["values"].as_array().unwrap();
    let file = RootFile::open(util::fixture("objects.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let branch = tree.branch("ranges").unwrap();
    for parallel in [Parallel::Never, Parallel::Always] {
        let col = branch.read_column(0, n, parallel).unwrap();
        assert_eq!(col.entries(), n as usize);
        for (i, one) in want.iter().enumerate() {
            let copies = Value::Array(vec![one.clone(); i % 3]);
            assert!(
                same(&entry(&col, i), &copies, false),
                "entry {i}: {}",
                entry(&col, i)
            );
        }
    }
    let lazy = branch.lazy().unwrap();
    for i in [0usize, 1, 2, 151, n as usize - 1] {
        let col = lazy.read_column(i as u64, i as u64 + 1).unwrap();
        let copies = Value::Array(vec![want[i].clone(); i % 3]);
        assert!(same(&entry(&col, 0), &copies, false), "lazy entry {i}");
    }
}

#[test]
fn a_chain_joins_object_branches_across_files() {
    let (n, branches) = expected();
    let path = util::fixture("objects.root");
    let chain = Chain::open(&[&path, &path], "t", 1 << 20).unwrap();
    for name in ["vs", "vvi", "ll", "obj.parts.tag", "ts", "rng.a", "whole."] {
        let col = chain.read_column(name, 0, 2 * n, Parallel::Auto).unwrap();
        assert_eq!(col.entries() as u64, 2 * n, "{name}");
        let want = &branches[name];
        let f32_values = want["type"] == "f32";
        let values = want["values"].as_array().unwrap();
        for j in 0..(2 * n) as usize {
            assert!(
                same(&entry(&col, j), &values[j % n as usize], f32_values),
                "{name} chain entry {j}"
            );
        }
        // A range across the boundary between the files.
        let part = chain
            .read_column(name, n - 3, n + 3, Parallel::Never)
            .unwrap();
        assert_eq!(part.entries(), 6, "{name}");
        assert_eq!(entry(&part, 3), entry(&col, 0), "{name}");
    }
}

/// `versions.root`: class `Evo` at version 1 (tree `t1`) and at version 2 (tree `t2`, members
/// added and moved) in one file, each split (`e.*`) and written whole (`w.`): each tree is read
/// with the description of the version it was written with, and equals what ROOT read back.
#[test]
fn two_versions_of_a_class_each_read_by_its_own_description() {
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(util::fixture("versions.json")).unwrap())
            .unwrap();
    let file = RootFile::open(util::fixture("versions.root")).unwrap();
    let trees = json["trees"].as_object().unwrap();
    assert_eq!(trees.len(), 2);
    for (spec, expected) in trees {
        let tree = file.tree(spec).unwrap();
        let n = expected["entries"].as_u64().unwrap();
        for (name, want) in expected["branches"].as_object().unwrap() {
            let col = tree
                .branch(name)
                .unwrap()
                .read_column(0, n, Parallel::Auto)
                .unwrap_or_else(|e| panic!("{spec} {name}: {e}"));
            check(&format!("{spec} {name}"), &col, want, 0, "eager");
        }
    }
    // The two descriptions differ: version 2's whole object has the added members.
    let w2 = file.tree("t2").unwrap().branch("w.").unwrap();
    let w1 = file.tree("t1").unwrap().branch("w.").unwrap();
    assert_ne!(w1.layout().unwrap(), w2.layout().unwrap());
}

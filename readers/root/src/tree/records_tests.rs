//! Whole tree records parsed and their branches read: here rather than in the parsers' files
//! because reading a branch goes through the reader, which imports them.

#![allow(clippy::unwrap_used)]

/// The decompressed tree records of the ROOT 4 fixtures (and of the one with header-only
/// baskets), cut at every length and with a bit flipped in every byte (every 16th byte of
/// the big ones): an error or a tree whose branches read or fail, never a panic.
#[test]
fn damaged_tree_records_are_errors_or_trees_never_panics() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let cases = [
        ("uproot-issue-250.root", "B4"),
        ("uproot-issue413.root", "mytree"),
        ("uproot-from-geant4.root", "Details"),
        ("uproot-from-geant4.root", "TrackedRays"),
    ];
    for (name, tree) in cases {
        let file = crate::RootFile::open(dir.join(name)).unwrap();
        let key = file.find_key(tree).unwrap();
        let good = file.read_payload(&key).unwrap();
        let parse = |payload: &[u8]| crate::Tree::parse(file.clone(), &key, payload);
        let whole = parse(&good).unwrap();
        assert!(!whole.branches.is_empty(), "{name} {tree}");
        let step = if good.len() > 8_000 { 16 } else { 1 };
        for cut in (0..good.len()).step_by(step) {
            assert!(parse(&good[..cut]).is_err(), "{name} {tree} cut at {cut}");
        }
        for i in (0..good.len()).step_by(step) {
            let mut damaged = good.clone();
            damaged[i] ^= 1 << (i % 8);
            if let Ok(t) = parse(&damaged) {
                for named in t.named_branches() {
                    if let Ok(branch) = t.branch(&named.column) {
                        let n = branch.entries();
                        let _ = branch.read_column(0, n, crate::Parallel::Never);
                    }
                }
            }
        }
    }
}

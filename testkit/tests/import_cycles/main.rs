//! Issue 47, item 5: no file imports another that imports it back.
//!
//! Every target of every workspace crate (libraries, binaries, tests, benches, examples) is read
//! from its root through its `mod` declarations, and the imports between its files are resolved
//! (the rule is spelled out in `graph.rs` beside this file). Every import that closes a cycle
//! fails the test with the shortest cycle through it and the line of each import in it, e.g.
//! `analysis/src/noise.rs -> analysis/src/compare/mod.rs -> analysis/src/noise.rs`.
//! Cut one by moving the shared piece down into the lower file, or into a new small file that
//! imports neither. `IMPORT_EDGES=PREFIX cargo test -p testkit --test import_cycles --
//! --nocapture` prints the imports of the files under PREFIX.
//!
//! `known.txt` beside this file lists the cycles that were there when the check came and are not
//! cut yet. It may only shrink: a cycle missing from it fails the test, and so does a line whose
//! cycle is gone (delete the line).

mod graph;
mod lex;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use graph::{Crate, Edge, cycles};

/// The root file of every target of every workspace member, relative to the workspace root.
fn target_roots(workspace: &Path) -> Vec<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace)
        .output()
        .unwrap_or_else(|e| panic!("running cargo metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("reading cargo metadata: {e}"));
    let mut roots = BTreeSet::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        for target in package["targets"].as_array().into_iter().flatten() {
            let Some(src) = target["src_path"].as_str() else {
                panic!("a target without a src_path: {target}");
            };
            let rel = Path::new(src)
                .strip_prefix(workspace)
                .unwrap_or(Path::new(src));
            roots.insert(rel.to_path_buf());
        }
    }
    roots.into_iter().collect()
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let workspace = testkit::workspace_root();
    let read = |p: &Path| std::fs::read_to_string(workspace.join(p)).ok();
    let mut files = BTreeSet::new();
    let mut edge_count = 0;
    // A file shared by several targets (`#[path]`) shows the same cycle in each: report it once.
    let mut found: BTreeMap<String, Vec<Edge>> = BTreeMap::new();
    for root in target_roots(&workspace) {
        let krate = Crate::load(&root, &read);
        files.extend(krate.files().map(Path::to_path_buf));
        let edges = krate.edges();
        edge_count += edges.len();
        print_edges(&edges);
        for cycle in cycles(&edges) {
            let hops = cycle.0.iter().zip(cycle.0.iter().cycle().skip(1));
            let proof = hops
                .filter_map(|(from, to)| edges.iter().find(|e| &e.from == from && &e.to == to))
                .cloned()
                .collect();
            found.entry(cycle.to_string()).or_insert(proof);
        }
    }
    // Guard against a checker that silently reads nothing.
    assert!(files.len() > 200, "only {} files were read", files.len());
    assert!(edge_count > 200, "only {edge_count} imports were found");
    let known = known_cycles();
    let mut report = String::new();
    for (cycle, proof) in found.iter().filter(|(c, _)| !known.contains(c.as_str())) {
        let _ = writeln!(report, "\n{cycle}");
        for e in proof {
            let _ = writeln!(
                report,
                "    {}:{} uses {} (defined in {})",
                e.from.display(),
                e.line,
                e.path,
                e.to.display()
            );
        }
    }
    assert!(report.is_empty(), "import cycle(s) between files:{report}");
    let gone: Vec<&str> = known
        .iter()
        .copied()
        .filter(|c| !found.contains_key(*c))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer cycles, delete these lines from testkit/tests/import_cycles/known.txt:\n{}",
        gone.join("\n")
    );
}

/// With `IMPORT_EDGES=PREFIX` (and `--nocapture`), prints the imports of the files under PREFIX:
/// what to look at when cutting a cycle.
fn print_edges(edges: &[Edge]) {
    let Ok(prefix) = std::env::var("IMPORT_EDGES") else {
        return;
    };
    for e in edges.iter().filter(|e| e.from.starts_with(&prefix)) {
        println!(
            "{} -> {} ({}:{} {})",
            e.from.display(),
            e.to.display(),
            e.from.display(),
            e.line,
            e.path
        );
    }
}

/// The lines of `known.txt`, without comments and blank lines.
fn known_cycles() -> BTreeSet<&'static str> {
    include_str!("known.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

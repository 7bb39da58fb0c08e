//! The crates' layers, read from `cargo metadata`: what `bench-web` and the pure crates compile
//! is checked here, so a dependency that crosses a layer cannot come back silently.
//!
//! - `web` serves the ledger: it never compiles the runner (git2, building and running code)
//!   or the command line's crates (progress bars, the HTTP client of `push`).
//! - `bench-verdicts` is what both front ends call: no runner under it either.
//! - The pure crates (`bench-model`, `bench-analysis`, `bench-report`) do no I/O of this kind.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The packages each package depends on at run time (normal and build dependencies, not dev),
/// by name, for the workspace's resolved graph.
fn runtime_graph() -> BTreeMap<String, Vec<String>> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(workspace)
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata");
    let name_of: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let name = name_of[node["id"].as_str().unwrap()].to_owned();
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build")
            })
            .map(|d| name_of[d["pkg"].as_str().unwrap()].to_owned())
            .collect();
        graph.insert(name, deps);
    }
    graph
}

/// Every package `root` compiles at run time, itself included.
fn closure(graph: &BTreeMap<String, Vec<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(name) = stack.pop() {
        if seen.insert(name.clone()) {
            stack.extend(graph.get(&name).into_iter().flatten().cloned());
        }
    }
    seen
}

fn assert_none(graph: &BTreeMap<String, Vec<String>>, root: &str, banned: &[&str]) {
    let compiled = closure(graph, root);
    assert!(compiled.len() > 1, "{root} not found in the graph");
    let found: Vec<&&str> = banned.iter().filter(|b| compiled.contains(**b)).collect();
    assert!(found.is_empty(), "{root} compiles {found:?}");
}

#[test]
fn the_web_app_compiles_no_runner_and_no_command_line_crates() {
    let graph = runtime_graph();
    assert_none(
        &graph,
        "web",
        &[
            "git2",
            "indicatif",
            "ctrlc",
            "ureq",
            "bench-runner",
            "bench-usecases",
            "bench-client",
        ],
    );
    // What it does compile: the use cases both front ends share; and the graph does see the
    // banned crates where they belong.
    assert!(closure(&graph, "web").contains("bench-verdicts"));
    let cli = closure(&graph, "bench-run");
    assert!(
        ["git2", "indicatif", "ureq"]
            .iter()
            .all(|c| cli.contains(*c))
    );
}

#[test]
fn the_shared_use_cases_and_the_pure_crates_stay_below_the_runner() {
    let graph = runtime_graph();
    assert_none(
        &graph,
        "bench-verdicts",
        &["git2", "bench-runner", "bench-usecases", "ureq"],
    );
    for pure in ["bench-model", "bench-analysis", "bench-report"] {
        assert_none(
            &graph,
            pure,
            &[
                "git2",
                "sqlx",
                "bench-store",
                "bench-runner",
                "ureq",
                "tokio",
            ],
        );
    }
}

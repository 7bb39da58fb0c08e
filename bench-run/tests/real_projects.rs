//! `bench-run --suite` on the layouts met in real projects (issue 24): a suite in a separate
//! workspace below the root (rand's `benches/`, jiff's `bench/`, or a directory the root
//! workspace excludes), a suite linking criterion 0.3 (aHash), a bench that requires a feature
//! (image-png), and a misspelt suite, which must leave no ledger behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::{Path, PathBuf};
use util::{Sandbox, assert_exit, copy_dir, json, stderr, stdout};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A library package at `dir` with nothing to benchmark, as the root of rand is.
fn library(dir: &Path, name: &str, extra: &str) {
    write(
        &dir.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             publish = false\n{extra}"
        ),
    );
    write(&dir.join("src/lib.rs"), "//! Nothing to measure.\n");
}

/// `<sandbox>/project`: a root library and the fixture suite in `benches/`, its own workspace.
fn nested_project(sandbox: &Sandbox) -> PathBuf {
    let root = sandbox.dir.path().join("project");
    library(&root, "outer", "");
    copy_dir(&util::fixture_source(), &root.join("benches"));
    root
}

fn show_latest(sandbox: &Sandbox, dir: &Path) -> serde_json::Value {
    let show = sandbox
        .bench_run()
        .current_dir(dir)
        .args(["show", "latest", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    json(&show)
}

fn words(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_suite_in_a_separate_workspace_below_the_root_runs_from_the_root() {
    let sandbox = Sandbox::empty();
    let root = nested_project(&sandbox);
    let output = {
        let _guard = util::bench_lock();
        sandbox
            .bench_run()
            .current_dir(&root)
            .args(["--suite", "tiny_suite", "--quick"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    let err = stderr(&output);
    assert!(err.contains("separate cargo workspace benches/"), "{err}");
    let run = &show_latest(&sandbox, &root)["run"];
    let cargo = words(&run["cargo_command"]);
    assert!(
        cargo
            .windows(2)
            .any(|w| w == ["--manifest-path", "benches/Cargo.toml"]),
        "{cargo:?}"
    );
    assert_eq!(run["suite"], "tiny_suite");

    // A misspelt name lists the suites of the separate workspace and how to select it.
    let output = sandbox
        .bench_run()
        .current_dir(&root)
        .args(["--suite", "tiny_suit"])
        .output()
        .unwrap();
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("benches/ (`bench-run -C benches`): own_settings (package tiny), tiny_suite (package tiny)"),
        "{err}"
    );
}

#[test]
fn an_excluded_package_is_searched_and_an_unreadable_one_is_named() {
    let sandbox = Sandbox::empty();
    let root = sandbox.dir.path().join("project");
    write(
        &root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"core\"]\nexclude = [\"benches\"]\nresolver = \"2\"\n",
    );
    library(&root.join("core"), "core-lib", "");
    // Excluded from the root workspace, without a [workspace] of its own.
    let benches = root.join("benches");
    copy_dir(&util::fixture_source(), &benches);
    let manifest = std::fs::read_to_string(benches.join("Cargo.toml")).unwrap();
    std::fs::write(
        benches.join("Cargo.toml"),
        manifest.replace("\n[workspace]\n", "\n"),
    )
    .unwrap();
    // Neither member nor excluded: cargo refuses to read it.
    library(
        &root.join("stray"),
        "stray",
        "\n[[bench]]\nname = \"s\"\nharness = false\n",
    );

    let output = sandbox
        .bench_run()
        .current_dir(&root)
        .args(["--suite", "nope"])
        .output()
        .unwrap();
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("benches/ (`bench-run -C benches`): own_settings (package tiny)"),
        "{err}"
    );
    assert!(
        err.contains("not searched") && err.contains("stray/Cargo.toml: "),
        "{err}"
    );
    assert!(
        !Path::new(&sandbox.db()).exists(),
        "a failed lookup made a ledger"
    );
}

#[test]
fn a_failed_lookup_creates_no_ledger() {
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace();
    util::git(&ws, &["init", "-q", "-b", "main"]);
    util::git(&ws, &["add", "."]);
    util::git(&ws, &["commit", "-q", "-m", "fixture"]);
    for args in [
        &["--suite", "nope"][..],
        &["--suite", "nope", "--quick"],
        &["calibrate", "--suite", "nope", "--runs", "2"],
        &["ab", "--suite", "nope", "--base", "main"],
    ] {
        // The default ledger (results/ledger.sqlite at the workspace root) and --db's.
        let default = sandbox.command().args(args).output().unwrap();
        assert_exit(&default, 2);
        assert!(
            stderr(&default).contains("no bench target named `nope`"),
            "{args:?}: {}",
            stderr(&default)
        );
        assert!(!ws.join("results").exists(), "{args:?} made results/");
        let named = sandbox.bench_run().args(args).output().unwrap();
        assert_exit(&named, 2);
        assert!(!Path::new(&sandbox.db()).exists(), "{args:?} made --db");
    }
}

#[test]
fn a_bench_that_requires_a_feature_says_to_pass_it_and_the_features_are_recorded() {
    let sandbox = Sandbox::new();
    let manifest = sandbox.workspace().join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(
        "\n[[bench]]\nname = \"needs_extra\"\npath = \"benches/tiny_suite.rs\"\n\
         harness = false\nrequired-features = [\"extra\"]\n",
    );
    std::fs::write(&manifest, text).unwrap();

    let output = sandbox
        .bench_run()
        .args(["--suite", "needs_extra", "--quick"])
        .output()
        .unwrap();
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(err.contains("failed (exit status: 101)"), "{err}");
    assert!(!err.contains("exit status exit status"), "{err}");
    assert!(
        err.contains("requires the feature extra")
            && err.contains("try `bench-run --suite needs_extra -F extra`"),
        "{err}"
    );

    // Rustflags from the workspace's cargo config are recorded as those from RUSTFLAGS are.
    let config = sandbox.workspace().join(".cargo");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[build]\nrustflags = [\"--cfg\", \"recorded_flag\"]\n",
    )
    .unwrap();
    let output = {
        let _guard = util::bench_lock();
        sandbox
            .bench_run()
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .args(["--suite", "needs_extra", "--quick", "-F", "extra"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    let build = &show_latest(&sandbox, &sandbox.workspace())["run"]["build"];
    assert_eq!(words(&build["features"]), ["extra"]);
    assert_eq!(words(&build["feature_flags"]), ["--features", "extra"]);
    assert_eq!(build["rustflags"], "--cfg recorded_flag");
    let show = sandbox
        .bench_run()
        .args(["show", "latest"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    let text = stdout(&show);
    assert!(
        text.contains("features: extra; cargo flags: --features extra (default features on)"),
        "{text}"
    );
}

#[test]
fn quick_on_a_criterion_0_3_suite_passes_whole_seconds_and_a_rejection_is_explained() {
    let sandbox = Sandbox::empty();
    let ws = sandbox.dir.path().join("criterion03");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion03"),
        &ws,
    );
    let output = {
        let _guard = util::bench_lock();
        sandbox
            .bench_run()
            .current_dir(&ws)
            .args(["--suite", "old_criterion", "--quick"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    let run = &show_latest(&sandbox, &ws)["run"];
    let cargo = words(&run["cargo_command"]);
    assert!(
        cargo.windows(2).any(|w| w == ["--warm-up-time", "1"])
            && cargo.windows(2).any(|w| w == ["--measurement-time", "1"]),
        "{cargo:?}"
    );
    assert_eq!(run["quick"], true, "{run}");

    // A fraction the user passes is still the bench's to refuse; the error says who passed
    // what, and why it cannot work with this criterion.
    let output = {
        let _guard = util::bench_lock();
        sandbox
            .bench_run()
            .current_dir(&ws)
            .args([
                "--suite",
                "old_criterion",
                "--quick",
                "--",
                "--warm-up-time",
                "0.5",
            ])
            .output()
            .unwrap()
    };
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("the bench rejected an argument")
            && err.contains("you passed after `--`: `--warm-up-time 0.5`")
            && err.contains("criterion 0.3.6")
            && err.contains("whole seconds"),
        "{err}"
    );
    assert!(!err.contains("exited with exit status"), "{err}");
}

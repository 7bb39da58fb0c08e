//! `bench-run ab` on a git repository holding the fixture workspace: a slowdown in the working
//! tree is caught from paired rounds and both sides are recorded as a pairing; a change that
//! leaves the bench executable identical is not measured; the same commit on both sides is
//! refused, also when `--base merge-base:REV` names it; ab builds nothing into the user's
//! target/ and leaves nothing in the repository.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::Path;
use std::process::Command;
use util::{Sandbox, assert_exit, bench_lock, git, json, run_count, stderr, stdout};

fn repository() -> Sandbox {
    Sandbox::repository()
}

/// Makes `fnv` hash 30% more bytes, in the bench's code.
fn slow_down_fnv(dir: &Path) {
    let path = dir.join("benches/tiny_suite.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let slower = text.replace("scaled(4096, \"fnv\")", "scaled(5325, \"fnv\")");
    assert_ne!(text, slower, "the fixture's fnv benchmark has moved");
    std::fs::write(&path, slower).unwrap();
}

#[test]
fn a_slowdown_in_the_working_tree_is_caught_from_paired_rounds() {
    let sandbox = repository();
    slow_down_fnv(&sandbox.workspace());
    let summary = sandbox.dir.path().join("summary.md");
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .args([
                "ab",
                "--suite",
                "tiny_suite",
                "--base",
                "HEAD",
                "--seed",
                "7",
            ])
            .arg("--summary")
            .arg(&summary)
            .args(["--format", "json", "--", "fnv|sum/1000"])
            .output()
            .unwrap()
    };
    assert_exit(&output, 1);
    let err = stderr(&output);
    assert!(err.contains("ab: FAIL"), "{err}");
    assert!(err.contains("1 regression(s): fnv"), "{err}");
    // Two benchmarks need 10 rounds for Holm to be reachable with one round out of line;
    // rounded up to 12, three per layout of the default four.
    assert!(err.contains("2 benchmark(s) x 12 rounds"), "{err}");
    assert!(err.contains("4 layouts in turn"), "{err}");

    let doc = json(&output);
    let rows = doc["rows"].as_array().unwrap();
    let fnv = rows.iter().find(|r| r["benchmark"] == "fnv").unwrap();
    assert_eq!(fnv["verdict"], "regression", "{doc:#}");
    assert_eq!(fnv["evidence"]["kind"], "paired", "{doc:#}");
    assert_eq!(fnv["evidence"]["rounds"], 12);
    // Measured under four layouts, its spread is far below the 30% change.
    let spread = &fnv["layout"];
    assert_eq!(
        spread["base"]["medians"].as_array().unwrap().len(),
        4,
        "{doc:#}"
    );
    assert_eq!(fnv["layout_sensitive"], false, "{doc:#}");
    let change = fnv["change_pct"].as_f64().unwrap();
    assert!((20.0..40.0).contains(&change), "fnv +30% read {change}%");
    let sum = rows.iter().find(|r| r["benchmark"] == "sum/1000").unwrap();
    assert_eq!(sum["verdict"], "unchanged", "{doc:#}");

    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("**1 regression(s):** `fnv`"), "{text}");
    assert!(text.contains("the working tree against `HEAD`"), "{text}");

    // Both sides are ordinary runs; compare on them repeats the paired verdict.
    assert_eq!(run_count(&sandbox), 2);
    let show = sandbox
        .bench_run()
        .args(["show", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    let head = &json(&show)["run"];
    assert_eq!(head["source"], "ab-head", "{head:#}");
    assert_eq!(head["git_dirty"], true, "{head:#}");
    let again = sandbox
        .bench_run()
        .args(["compare", "1", "2", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&again, 0);
    assert_eq!(json(&again)["rows"], doc["rows"]);
    // So does the log entry of the head run: its baseline is its own base side.
    let entry = sandbox
        .bench_run()
        .args(["log", "2", "--dry-run"])
        .output()
        .unwrap();
    assert_exit(&entry, 0);
    let entry = stdout(&entry);
    assert!(entry.contains("Baseline for deltas: run #1"), "{entry}");
    // The table's row, not the busy-machine note, which names the benchmark too when the
    // hypervisor stole time during it.
    let fnv_row = entry.lines().find(|l| l.starts_with("| `fnv`")).unwrap();
    assert!(fnv_row.contains("regression"), "{entry}");
    // The checkouts are gone.
    assert_eq!(worktrees(&sandbox).len(), 1, "{:?}", worktrees(&sandbox));
}

#[test]
fn an_identical_executable_is_not_measured() {
    let sandbox = repository();
    let dir = sandbox.workspace();
    std::fs::write(dir.join("NOTES.md"), "nothing that is compiled\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "docs only"]);
    let output = {
        let _guard = bench_lock();
        sandbox
            .bench_run()
            .args([
                "ab",
                "--suite",
                "tiny_suite",
                "--base",
                "HEAD~1",
                "--head",
                "HEAD",
            ])
            .output()
            .unwrap()
    };
    assert_exit(&output, 0);
    assert!(
        stderr(&output).contains("built the same bench executable"),
        "{}",
        stderr(&output)
    );
    assert_eq!(run_count(&sandbox), 0, "nothing is recorded");
}

/// `bench-run ab --suite tiny_suite ARGS` in `sandbox` exits 2 saying `message`.
fn refused(sandbox: &Sandbox, args: &[&str], message: &str) -> std::process::Output {
    let out = sandbox
        .bench_run()
        .args(["ab", "--suite", "tiny_suite"])
        .args(args)
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(stderr(&out).contains(message), "{}", stderr(&out));
    out
}

#[test]
fn bad_revisions_are_refused_before_building() {
    let sandbox = repository();
    refused(
        &sandbox,
        &["--base", "HEAD", "--head", "HEAD"],
        "are the same commit",
    );
    refused(
        &sandbox,
        &["--base", "no-such-branch"],
        "`no-such-branch` names no commit",
    );
    // merge-base:REV resolves before anything is built: HEAD is main's only commit, so
    // merge-base:HEAD is the head itself, and an unknown REV is named.
    refused(
        &sandbox,
        &["--base", "merge-base:HEAD", "--head", "HEAD"],
        "are the same commit",
    );
    refused(
        &sandbox,
        &["--base", "merge-base:no-such-branch"],
        "`merge-base:no-such-branch`: `no-such-branch` names no commit",
    );
    let no_git = refused(
        &Sandbox::new(),
        &["--base", "main"],
        "is not in a git repository",
    );
    assert!(stdout(&no_git).is_empty());
}

/// The worktrees git lists for the sandbox's repository (the main one included).
fn worktrees(sandbox: &Sandbox) -> Vec<String> {
    let out = Command::new("git")
        .args(["worktree", "list", "--porcelain"])
        .current_dir(sandbox.workspace())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree ").map(str::to_owned))
        .collect()
}

/// Issue 45, as met in bincode: `ab --base HEAD --head HEAD~1` left HEAD~1's executable in the
/// user's target/, where cargo called it fresh for HEAD, and the next `bench-run --suite`
/// recorded HEAD~1's speed under HEAD. Now ab builds elsewhere and leaves nothing there.
#[test]
fn ab_leaves_the_users_target_alone_and_the_next_run_is_its_own_commit() {
    let sandbox = repository();
    let dir = sandbox.workspace();
    slow_down_fnv(&dir);
    git(&dir, &["commit", "-q", "-am", "slower fnv"]);
    let user_target = sandbox.dir.path().join("user-target");
    let built_exe = |output: &std::process::Output| -> String {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|m| m["executable"].as_str().map(str::to_owned))
            .unwrap()
    };
    let _guard = bench_lock();
    // The user has built HEAD.
    let cargo_build = || {
        Command::new(env!("CARGO"))
            .args([
                "bench",
                "--bench",
                "tiny_suite",
                "--no-run",
                "--message-format=json",
            ])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &user_target)
            .output()
            .unwrap()
    };
    let first = cargo_build();
    assert!(first.status.success(), "{}", stderr(&first));
    let exe = built_exe(&first);
    let modified = || std::fs::metadata(&exe).unwrap().modified().unwrap();
    let before = modified();
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(user_target.join("release/deps"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let files_before = listing();

    let ab = sandbox
        .bench_run()
        .env("CARGO_TARGET_DIR", &user_target)
        .args([
            "ab",
            "--suite",
            "tiny_suite",
            "--base",
            "HEAD",
            "--head",
            "HEAD~1",
        ])
        .args(["--rounds", "2", "--layouts", "2", "--", "fnv"])
        .output()
        .unwrap();
    assert!(ab.status.code().is_some_and(|c| c <= 1), "{}", stderr(&ab));
    assert!(
        stderr(&ab).contains(&sandbox.build_home().display().to_string()),
        "{}",
        stderr(&ab)
    );
    assert_eq!(modified(), before, "ab rewrote the user's executable");
    assert_eq!(listing(), files_before, "ab wrote into the user's target/");
    assert!(!user_target.join("bench-run").exists());
    assert!(!dir.join("target").exists());
    assert_eq!(worktrees(&sandbox).len(), 1, "{:?}", worktrees(&sandbox));

    // cargo still has HEAD's own build, and the next run records it under HEAD.
    let again = cargo_build();
    assert_eq!(built_exe(&again), exe);
    let run = sandbox
        .bench_run()
        .env("CARGO_TARGET_DIR", &user_target)
        .args(["--suite", "tiny_suite", "--quick", "--", "fnv"])
        .output()
        .unwrap();
    assert_exit(&run, 0);
    let show = |id: &str| {
        let out = sandbox
            .bench_run()
            .args(["show", id, "--format", "json"])
            .output()
            .unwrap();
        assert_exit(&out, 0);
        json(&out)["run"].clone()
    };
    let (ab_base, ab_head, recorded) = (show("1"), show("2"), show("3"));
    let head_commit = util::git_output(&dir, &["rev-parse", "HEAD"]);
    assert_eq!(recorded["git_commit"], head_commit.as_str(), "{recorded:#}");
    assert_eq!(ab_base["git_commit"], head_commit.as_str(), "{ab_base:#}");
    assert_ne!(
        recorded["bench_exe"]["sha256"], ab_head["bench_exe"]["sha256"],
        "run #3 measured HEAD~1's executable"
    );
}

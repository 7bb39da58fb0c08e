//! `bench-run ab` on a git repository holding the fixture workspace: a slowdown in the working
//! tree is caught from paired rounds and both sides are recorded as a pairing; a change that
//! leaves the bench executable identical is not measured; the same commit on both sides is
//! refused, also when `--base merge-base:REV` names it; an interrupted run removes its
//! checkouts, and the next run removes those of a run that was killed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use util::{Sandbox, assert_exit, bench_lock, git, json, run_count, stderr, stdout};

/// A sandbox whose fixture workspace is a git repository with one commit.
fn repository() -> Sandbox {
    let sandbox = Sandbox::new();
    let dir = sandbox.workspace();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    sandbox
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
    // Two benchmarks need 10 rounds for Holm to be reachable with one round out of line.
    assert!(err.contains("2 benchmark(s) x 10 rounds"), "{err}");

    let doc = json(&output);
    let rows = doc["rows"].as_array().unwrap();
    let fnv = rows.iter().find(|r| r["benchmark"] == "fnv").unwrap();
    assert_eq!(fnv["verdict"], "regression", "{doc:#}");
    assert_eq!(fnv["evidence"]["kind"], "paired", "{doc:#}");
    assert_eq!(fnv["evidence"]["rounds"], 10);
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

/// `bench-run ab` of the working tree against `HEAD`, started and left running once it has
/// built the base side (its checkout then exists); returns the process and what it printed.
fn ab_building_head(sandbox: &Sandbox) -> (Child, mpsc::Receiver<String>) {
    let mut child = sandbox
        .bench_run()
        .args(["ab", "--suite", "tiny_suite", "--base", "HEAD"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(600)) {
            Ok(line) if line.contains("building tiny_suite at head") => break,
            Ok(line) => seen.push(line),
            Err(e) => {
                let _ = child.kill();
                panic!("no head build ({e}):\n{}", seen.join("\n"));
            }
        }
    }
    (child, rx)
}

#[test]
fn an_interrupted_run_removes_its_checkouts() {
    let sandbox = repository();
    slow_down_fnv(&sandbox.workspace());
    let _guard = bench_lock();
    let (mut child, rx) = ab_building_head(&sandbox);
    // The base checkout exists, and the head one may be being made.
    assert!(worktrees(&sandbox).len() >= 2, "{:?}", worktrees(&sandbox));
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let status = child.wait().unwrap();
    let said: Vec<String> = rx.iter().collect();
    assert_eq!(status.code(), Some(130), "{}", said.join("\n"));
    assert!(
        said.iter()
            .any(|l| l.contains("interrupted; removing its checkouts")),
        "{}",
        said.join("\n")
    );
    assert_eq!(worktrees(&sandbox).len(), 1, "{:?}", worktrees(&sandbox));
}

#[test]
fn the_checkouts_of_a_killed_run_are_removed_by_the_next() {
    let sandbox = repository();
    slow_down_fnv(&sandbox.workspace());
    let _guard = bench_lock();
    let (mut child, _rx) = ab_building_head(&sandbox);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = worktrees(&sandbox);
    assert!(
        left.len() >= 2,
        "SIGKILL leaves the base checkout: {left:?}"
    );
    // The next run, even one refused at once, removes it first.
    refused(
        &sandbox,
        &["--base", "HEAD", "--head", "HEAD"],
        "a checkout left by a bench-run ab that was killed",
    );
    assert_eq!(worktrees(&sandbox), left[..1], "{:?}", worktrees(&sandbox));
    assert!(left[1..].iter().all(|dir| !Path::new(dir).exists()));
}

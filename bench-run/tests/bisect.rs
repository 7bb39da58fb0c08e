//! `bench-run bisect` on generated git histories of the fixture workspace: one commit slows
//! `fnv` among commits that change nothing in the bench executable (docs) and commits that
//! change it without slowing `fnv` (the `sum` benchmarks' padding). The culprit is named; two
//! slowdowns are reported as more than one change; an unbuildable commit is skipped and named;
//! good not faster than bad exits 2; nothing is left in the user's repository.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// The bench lock serialises the tests that build and time benchmarks; a use case awaits under it.
#![allow(clippy::await_holding_lock)]

mod util;

use std::path::Path;
use util::{Sandbox, assert_exit, bench_lock, git, git_output, json, stderr};

/// What one generated commit does.
#[derive(Clone, Copy)]
enum Change {
    /// Edits README.md: the bench executable stays byte-identical.
    Docs,
    /// Changes the `sum` benchmarks' buffer padding: another executable, `fnv` as fast.
    Padding,
    /// Makes `fnv` hash this many bytes (4096 at first).
    FnvBytes(usize),
    /// Breaks the bench's code (the next commit repairs it with the one after).
    Break,
}

/// Commits `changes` on top of the fixture repository; returns every commit, oldest first,
/// starting with the fixture's own.
fn history(dir: &Path, changes: &[Change]) -> Vec<String> {
    let bench = dir.join("benches/tiny_suite.rs");
    let original = std::fs::read_to_string(&bench).unwrap();
    assert!(original.contains("scaled(4096, \"fnv\")") && original.contains("4 * n + 512"));
    let mut fnv_bytes = 4096;
    let mut padding = 512;
    let mut commits = vec![git_output(dir, &["rev-parse", "HEAD"])];
    for (i, change) in changes.iter().enumerate() {
        let mut broken = false;
        let message = match *change {
            Change::Docs => {
                let readme = dir.join("README.md");
                let mut text = std::fs::read_to_string(&readme).unwrap_or_default();
                text.push_str(&format!("Note {i}.\n"));
                std::fs::write(&readme, text).unwrap();
                format!("docs: note {i}")
            }
            Change::Padding => {
                padding += 8;
                format!("sum: pad buffers to {padding}")
            }
            Change::FnvBytes(n) => {
                fnv_bytes = n;
                format!("fnv: hash {n} bytes")
            }
            Change::Break => {
                broken = true;
                format!("wip {i}: does not compile")
            }
        };
        if !matches!(change, Change::Docs) {
            let mut text = original
                .replace(
                    "scaled(4096, \"fnv\")",
                    &format!("scaled({fnv_bytes}, \"fnv\")"),
                )
                .replace("4 * n + 512", &format!("4 * n + {padding}"));
            if broken {
                text.push_str("\nfn broken() -> u32 { \"not a number\" }\n");
            }
            std::fs::write(&bench, text).unwrap();
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &message]);
        commits.push(git_output(dir, &["rev-parse", "HEAD"]));
    }
    commits
}

fn bisect(sandbox: &Sandbox, good: &str, bad: &str, extra: &[&str]) -> std::process::Output {
    let _guard = bench_lock();
    let output = sandbox
        .bench_run()
        .args([
            "bisect",
            "--suite",
            "tiny_suite",
            "--good",
            good,
            "--bad",
            bad,
        ])
        .args(["--benchmark", "^fnv$", "--seed", "11", "--format", "json"])
        .args(extra)
        // A shorter budget than ab's: fnv takes microseconds, and four tests bisect.
        .args(["--", "--warm-up-time", "0.1", "--measurement-time", "0.25"])
        .output()
        .unwrap();
    eprintln!("{}", stderr(&output));
    output
}

/// The user's repository holds one worktree, a clean status, and no bench-run files.
fn assert_repository_untouched(dir: &Path) {
    assert_eq!(
        git_output(dir, &["worktree", "list"]).lines().count(),
        1,
        "a worktree was left registered"
    );
    assert_eq!(git_output(dir, &["status", "--porcelain"]), "");
    assert!(!dir.join("target/bench-run").exists());
}

#[test]
fn one_slowdown_among_sixteen_commits_is_named_and_same_binary_commits_are_free() {
    use Change::{Docs, FnvBytes, Padding};
    let sandbox = Sandbox::repository();
    let dir = sandbox.workspace();
    // 16 commits; the 11th makes fnv hash 35% more bytes.
    let commits = history(
        &dir,
        &[
            Docs,
            Padding,
            Docs,
            Docs,
            Padding,
            Docs,
            Docs,
            Padding,
            Docs,
            Docs,
            FnvBytes(5530),
            Docs,
            Padding,
            Docs,
            Docs,
            Docs,
        ],
    );
    let summary = sandbox.dir.path().join("bisect.md");
    let output = bisect(
        &sandbox,
        &commits[0],
        "HEAD",
        &["--summary", summary.to_str().unwrap()],
    );
    assert_exit(&output, 0);
    let err = stderr(&output);
    let report = json(&output);
    assert_eq!(report["culprit"]["hash"], commits[11], "{report:#}\n{err}");
    assert_eq!(report["culprit"]["summary"], "fnv: hash 5530 bytes");
    assert_eq!(report["found"]["kind"], "culprit");
    assert_eq!(report["targets"], serde_json::json!(["fnv"]));
    assert_eq!(report["commits_in_range"], 16);
    let effect = &report["culprit_effect"];
    assert_eq!(effect["more_than_one_change"], false, "{report:#}");
    let share = effect["share_of_range"].as_f64().unwrap();
    assert!((0.7..1.4).contains(&share), "share {share}");
    // At most 2 ends + ceil(log2(16)) probes of new executables, and some probes free.
    let measured = report["executables_measured"].as_u64().unwrap();
    assert!(measured <= 2 + 4, "{measured} executables measured");
    let steps = report["steps"].as_array().unwrap();
    assert!(steps.len() <= 2 + 5, "{} steps", steps.len());
    // Progress names the step, the commits left and the time so far.
    assert!(err.contains("step 1: testing"), "{err}");
    assert!(err.contains("commit(s) left"), "{err}");
    // Every measured step was recorded as a pairing of its own.
    for step in steps.iter().filter(|s| !s["runs"].is_null()) {
        let head = step["runs"][1].as_i64().unwrap();
        let show = sandbox
            .bench_run()
            .args(["show", &head.to_string(), "--format", "json"])
            .output()
            .unwrap();
        assert_exit(&show, 0);
        assert_eq!(json(&show)["run"]["source"], "bisect-head");
    }
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.contains("first bad commit"), "{text}");
    assert!(text.contains(&commits[11]), "{text}");
    assert_repository_untouched(&dir);
}

#[test]
fn two_slowdowns_are_reported_as_more_than_one_change() {
    use Change::{Docs, FnvBytes, Padding};
    let sandbox = Sandbox::repository();
    let dir = sandbox.workspace();
    // Two slowdowns of about 40% each; a commit is bad above 20%, so the first is found and
    // explains about half of the range.
    let commits = history(
        &dir,
        &[Docs, FnvBytes(5734), Padding, Docs, FnvBytes(8028), Docs],
    );
    let output = bisect(&sandbox, &commits[0], "HEAD", &["--threshold", "20"]);
    assert_exit(&output, 0);
    let report = json(&output);
    assert_eq!(report["culprit"]["hash"], commits[2], "{report:#}");
    assert_eq!(
        report["culprit_effect"]["more_than_one_change"], true,
        "{report:#}"
    );
    let notes = stderr(&output);
    assert!(notes.contains("first bad commit"), "{notes}");
}

#[test]
fn an_unbuildable_commit_is_skipped_and_named_and_no_slowdown_exits_2() {
    use Change::{Break, Docs, FnvBytes, Padding};
    let sandbox = Sandbox::repository();
    let dir = sandbox.workspace();
    // Commit 2 does not compile (3 repairs it); the slowdown comes at 4.
    let commits = history(&dir, &[Padding, Break, Padding, FnvBytes(5530), Docs]);
    let output = bisect(&sandbox, &commits[0], "HEAD", &["--layouts", "2"]);
    assert_exit(&output, 0);
    let report = json(&output);
    assert_eq!(report["culprit"]["hash"], commits[4], "{report:#}");
    let unbuildable = report["unbuildable"].as_array().unwrap();
    assert_eq!(unbuildable.len(), 1, "{report:#}");
    assert_eq!(unbuildable[0][0], commits[2]);
    assert!(stderr(&output).contains("skipped: it does not build"));
    assert_repository_untouched(&dir);

    // Killed while it measures: the repository is untouched, and the scratch it left in the
    // build home goes with the next run.
    interrupt_while_measuring(&sandbox, &commits[0]);
    assert_repository_untouched(&dir);
    let runs_dirs = || -> usize {
        std::fs::read_dir(sandbox.build_home())
            .unwrap()
            .map(|home| {
                std::fs::read_dir(home.unwrap().path().join("runs")).map_or(0, Iterator::count)
            })
            .sum()
    };
    assert_eq!(runs_dirs(), 1, "the interrupted run's scratch");

    // Good not faster than bad (commit 3 only pads the sum benchmarks): nothing to bisect.
    let output = bisect(&sandbox, &commits[0], &commits[3], &["--layouts", "2"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert_eq!(runs_dirs(), 0, "scratch left behind");
    assert!(err.contains("is not slower than good"), "{err}");
    assert!(err.contains("nothing to bisect"), "{err}");
    // The same commit on both ends, and ends the wrong way round, are refused before building.
    let same = bisect(&sandbox, "HEAD", "HEAD", &[]);
    assert_exit(&same, 2);
    assert!(stderr(&same).contains("same commit"), "{}", stderr(&same));
    let reversed = bisect(&sandbox, "HEAD", &commits[0], &[]);
    assert_exit(&reversed, 2);
    assert!(
        stderr(&reversed).contains("is not an ancestor"),
        "{}",
        stderr(&reversed)
    );
    assert_repository_untouched(&dir);
}

/// Starts a bisection and kills it with SIGTERM once it measures (the first round is done):
/// bench-run handles no signal, so SIGTERM ends it as Ctrl-C's SIGINT does, and unlike SIGINT
/// it is not ignored in a job a non-interactive shell started in the background (as a CI
/// runner may start this test).
fn interrupt_while_measuring(sandbox: &Sandbox, good: &str) {
    use std::io::{BufRead, BufReader};
    let _guard = bench_lock();
    let mut child = sandbox
        .bench_run()
        .args([
            "bisect",
            "--suite",
            "tiny_suite",
            "--good",
            good,
            "--bad",
            "HEAD",
        ])
        .args(["--benchmark", "^fnv$", "--layouts", "2"])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let mut killed = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("round 1/") {
            let status = std::process::Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
            killed = true;
            break;
        }
    }
    // Keep reading until it is gone: a closed pipe would fail its next line instead.
    for line in lines.map_while(Result::ok) {
        seen.push_str(&line);
        seen.push('\n');
    }
    let status = child.wait().unwrap();
    eprintln!("{seen}");
    assert!(killed, "bisect never reached its first round:\n{seen}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15), "bisect was not killed:\n{seen}");
}

#[tokio::test]
async fn the_bisect_use_case_returns_the_culprit_and_every_pair_it_recorded() {
    use Change::{Docs, FnvBytes};
    use bench_usecases::bisect::search::{Decision, Found, Status};
    use bench_usecases::bisect::{BisectFailure, BisectOutcome, BisectRequest, bisect};
    let sandbox = Sandbox::repository();
    let dir = sandbox.workspace();
    // good, docs (good's executable), fnv twice as slow, docs (the culprit's executable).
    let commits = history(&dir, &[Docs, FnvBytes(8192), Docs]);
    let ledger = bench_store::Ledger::open(bench_store::Location::parse(&sandbox.db()).unwrap())
        .await
        .unwrap();
    let _guard = bench_lock();
    let build_home = sandbox.build_home();
    let config = bench_analysis::compare::CompareConfig::default();
    let build = bench_runner::suite::BuildOptions::default();
    let criterion_args = ["--warm-up-time", "0.1", "--measurement-time", "0.25"].map(String::from);
    let command = ["bisect-use-case-test".to_owned()];
    let relinker = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bench-run"));
    let request = |good: &'static str, bad: &'static str, threshold_pct| BisectRequest {
        workspace_root: &dir,
        suite: "tiny_suite",
        package: None,
        good,
        bad,
        benchmark: Some("^fnv$"),
        threshold_pct,
        rounds: None,
        layouts: Some(1),
        seed: 11,
        build: &build,
        record_env: &[],
        criterion_args: &criterion_args,
        config: &config,
        command: &command,
        cwd: &dir,
        build_home: Some(&build_home),
        relinker: &relinker,
    };

    // Refused before anything is built or recorded.
    let refused = bisect(
        &ledger,
        &request("HEAD~3", "HEAD", Some(-5.0)),
        &mut util::AbEvents::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, BisectFailure::BadThreshold(_)),
        "{refused}"
    );
    let same = bisect(
        &ledger,
        &request("HEAD", "HEAD", None),
        &mut util::AbEvents::default(),
    )
    .await
    .unwrap();
    assert!(matches!(same, BisectOutcome::SameCommit { .. }), "{same:?}");
    assert!(
        ledger.latest_run(None).await.unwrap().is_none(),
        "nothing recorded"
    );

    let mut events = util::AbEvents::default();
    let outcome = bisect(&ledger, &request("HEAD~3", "HEAD", None), &mut events)
        .await
        .unwrap();
    let BisectOutcome::Searched(bisected) = outcome else {
        panic!("not searched: {outcome:?}\n{:#?}", events.0);
    };
    let report = &bisected.report;
    assert_eq!(report.found, Found::Culprit { index: 2 }, "{:#?}", events.0);
    assert_eq!(report.culprit.as_ref().unwrap().hash, commits[2]);
    // Both probes share an executable with a judged commit: neither is measured.
    assert_eq!(
        report.same_binary,
        vec![commits[1].clone(), commits[2].clone()]
    );
    assert!(report.steps.iter().skip(2).all(|s| matches!(
        s.status,
        Status::Good {
            by: Decision::SameBinary
        } | Status::Bad {
            by: Decision::SameBinary
        }
    )));
    // Two pairs recorded: the ends, then the culprit against its parent.
    assert_eq!(bisected.pairs.len(), 2, "{:?}", bisected.pairs);
    assert_eq!(
        report.culprit_effect.as_ref().unwrap().runs,
        bisected.pairs[1]
    );
    for &(base, head) in &bisected.pairs {
        assert_eq!(
            ledger.require_run(base).await.unwrap().source,
            bench_model::RunSource::BisectBase
        );
        assert_eq!(
            ledger.require_run(head).await.unwrap().source,
            bench_model::RunSource::BisectHead
        );
    }
    assert!(
        events
            .0
            .iter()
            .any(|e| e.starts_with("step: step 1: testing")),
        "{:#?}",
        events.0
    );
    assert!(
        events
            .0
            .iter()
            .any(|e| e.contains("the same bench executable as a good commit")),
        "{:#?}",
        events.0
    );
    ledger.close().await;
    assert_repository_untouched(&dir);
}

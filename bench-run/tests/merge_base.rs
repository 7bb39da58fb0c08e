//! `merge-base:REV` references on a real repository built with git2: a base commit, a branch
//! `feature` with a commit of its own (HEAD), main moved on with another commit, and an
//! orphan branch sharing no history. From the feature branch, `merge-base:main` is the base
//! commit: for git (`bench_git::merge_base_with_head`), for `ab` (`ab::resolve_commit`), for
//! the ledger (`baseline::resolve_*`: the newest run at that commit), and for `compare`,
//! `gate` and `log` on the command line. Each way it can fail has its own error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use bench_git::{MergeBaseError, merge_base_with_head};
use bench_model::{Measurement, NewRun, RunId, RunProvenance, RunSource};
use bench_store::Ledger;
use bench_verdicts::baseline::{resolve_baseline, resolve_pair, resolve_run};
use bench_verdicts::refs::{RefError, resolve_merge_base};
use std::path::{Path, PathBuf};
use util::{Sandbox, assert_exit, json, stderr, stdout};

/// The commits of [`branching_repository`], as full hashes.
struct Branching {
    /// Where it is.
    dir: PathBuf,
    /// Where main and feature part.
    base: String,
    /// main's tip, after the base.
    main: String,
    /// feature's tip, after the base; HEAD.
    feature: String,
    /// A root commit of its own.
    orphan: String,
}

/// Commits `file` (holding the message) on top of `parents` and moves `reference` there.
fn commit(
    repo: &git2::Repository,
    reference: &str,
    file: &str,
    message: &str,
    parents: &[&git2::Commit<'_>],
) -> git2::Oid {
    let parent_tree = parents.first().map(|p| p.tree().unwrap());
    let mut tree = repo.treebuilder(parent_tree.as_ref()).unwrap();
    let blob = repo.blob(message.as_bytes()).unwrap();
    tree.insert(file, blob, 0o100_644).unwrap();
    let tree = repo.find_tree(tree.write().unwrap()).unwrap();
    let signature = git2::Signature::now("bench-run test", "test@example.invalid").unwrap();
    repo.commit(
        Some(reference),
        &signature,
        &signature,
        message,
        &tree,
        parents,
    )
    .unwrap()
}

/// ```text
/// base ── main moved on        main
///    └─── feature work         feature (HEAD, checked out)
/// orphan                       orphan
/// ```
fn branching_repository(dir: &Path) -> Branching {
    let repo =
        git2::Repository::init_opts(dir, git2::RepositoryInitOptions::new().initial_head("main"))
            .unwrap();
    let base = commit(&repo, "HEAD", "a.txt", "base", &[]);
    let base_commit = repo.find_commit(base).unwrap();
    let feature = commit(
        &repo,
        "refs/heads/feature",
        "feature.txt",
        "feature work",
        &[&base_commit],
    );
    let main = commit(
        &repo,
        "refs/heads/main",
        "main.txt",
        "main moved on",
        &[&base_commit],
    );
    let orphan = commit(&repo, "refs/heads/orphan", "orphan.txt", "orphan", &[]);
    repo.set_head("refs/heads/feature").unwrap();
    repo.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .unwrap();
    Branching {
        dir: dir.to_owned(),
        base: base.to_string(),
        main: main.to_string(),
        feature: feature.to_string(),
        orphan: orphan.to_string(),
    }
}

#[test]
fn merge_base_of_main_from_the_feature_branch_is_the_branch_point() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = branching_repository(tmp.path());
    assert_ne!(repo.base, repo.main);
    assert_ne!(repo.base, repo.feature);

    let found = merge_base_with_head(&repo.dir, "main").unwrap();
    assert_eq!(found.commit, repo.base);
    assert_eq!(found.summary.as_deref(), Some("base"));
    // From anywhere in the work tree, by any spelling of main's commit.
    let sub = repo.dir.join("sub/dir");
    std::fs::create_dir_all(&sub).unwrap();
    assert_eq!(
        merge_base_with_head(&sub, " main ").unwrap().commit,
        repo.base
    );
    assert_eq!(
        merge_base_with_head(&repo.dir, &repo.main[..10])
            .unwrap()
            .commit,
        repo.base
    );
    assert_eq!(
        merge_base_with_head(&repo.dir, "refs/heads/main")
            .unwrap()
            .commit,
        repo.base
    );
    // HEAD's own history: the merge base with an ancestor is the ancestor, with HEAD is HEAD.
    assert_eq!(
        merge_base_with_head(&repo.dir, "HEAD~1").unwrap().commit,
        repo.base
    );
    assert_eq!(
        merge_base_with_head(&repo.dir, "feature").unwrap().commit,
        repo.feature
    );

    // `ab --base merge-base:main` checks out and builds the same commit.
    assert_eq!(
        bench_runner::ab::resolve_commit(&repo.dir, "merge-base:main").unwrap(),
        repo.base
    );
    assert_eq!(
        bench_runner::ab::resolve_commit(&repo.dir, "main").unwrap(),
        repo.main,
        "a plain revision is still itself"
    );
    assert!(matches!(
        bench_runner::ab::resolve_commit(&repo.dir, "merge-base:no-such-branch"),
        Err(bench_runner::sides::AbError::MergeBase(
            MergeBaseError::UnknownRevision { .. }
        ))
    ));
}

#[test]
fn merge_base_failures_are_typed_and_say_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = branching_repository(&tmp.path().join("repo"));

    let unknown = merge_base_with_head(&repo.dir, "no-such-branch").unwrap_err();
    assert!(
        matches!(&unknown, MergeBaseError::UnknownRevision { rev, .. } if rev == "no-such-branch"),
        "{unknown:?}"
    );
    assert!(
        unknown
            .to_string()
            .contains("`merge-base:no-such-branch`: `no-such-branch` names no commit"),
        "{unknown}"
    );
    // A revision that names a file, not a commit.
    let blob = merge_base_with_head(&repo.dir, "main:a.txt").unwrap_err();
    assert!(
        matches!(&blob, MergeBaseError::UnknownRevision { .. }),
        "{blob:?}"
    );

    let unrelated = merge_base_with_head(&repo.dir, "orphan").unwrap_err();
    match &unrelated {
        MergeBaseError::NoCommonAncestor { rev, commit, head } => {
            assert_eq!(rev, "orphan");
            assert_eq!(commit, &repo.orphan);
            assert_eq!(head, &repo.feature);
        }
        other => panic!("expected NoCommonAncestor, got {other:?}"),
    }
    assert!(
        unrelated.to_string().contains("have no common ancestor")
            && unrelated.to_string().contains(&repo.orphan[..12]),
        "{unrelated}"
    );

    let outside = tmp.path().join("not-a-repository");
    std::fs::create_dir_all(&outside).unwrap();
    let no_repo = merge_base_with_head(&outside, "main").unwrap_err();
    assert!(
        matches!(&no_repo, MergeBaseError::NotARepository { dir, .. } if dir == &outside),
        "{no_repo:?}"
    );
    assert!(
        no_repo.to_string().contains("is not in a git repository"),
        "{no_repo}"
    );
    // Without a directory in context (a server started outside any repository).
    assert!(matches!(
        resolve_merge_base("main", None),
        Err(MergeBaseError::NoRepository { rev }) if rev == "main"
    ));

    assert!(matches!(
        merge_base_with_head(&repo.dir, " "),
        Err(MergeBaseError::MissingRevision)
    ));

    // HEAD on a branch without commits.
    git2::Repository::open(&repo.dir)
        .unwrap()
        .set_head("refs/heads/unborn")
        .unwrap();
    let unborn = merge_base_with_head(&repo.dir, "main").unwrap_err();
    assert!(
        matches!(&unborn, MergeBaseError::NoHead { .. }),
        "{unborn:?}"
    );
}

fn run_at(suite: &str, commit: &str) -> NewRun {
    let mut provenance = RunProvenance {
        suite: suite.to_owned(),
        ..RunProvenance::default()
    };
    provenance.git.commit = Some(commit.to_owned());
    NewRun {
        source: RunSource::ImportBmf,
        provenance,
        measurements: vec![Measurement::time_ns("b", 1.0)],
    }
}

async fn record(ledger: &Ledger, suite: &str, commit: &str) -> RunId {
    ledger.record_run(&run_at(suite, commit)).await.unwrap()
}

#[tokio::test]
async fn merge_base_names_the_newest_run_at_the_branch_point() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = branching_repository(tmp.path());
    let git_dir = Some(repo.dir.as_path());
    let ledger = Ledger::in_memory().await.unwrap();

    // No run at the base commit yet: the error names the commit.
    record(&ledger, "s", &repo.main).await;
    let feature_run = record(&ledger, "s", &repo.feature).await;
    let missing = resolve_run(&ledger, "merge-base:main", Some("s"), git_dir)
        .await
        .unwrap_err();
    match &missing {
        RefError::NoRunAtMergeBase {
            rev,
            commit,
            summary,
            suite,
        } => {
            assert_eq!(rev, "main");
            assert_eq!(commit, &repo.base);
            assert_eq!(summary.as_deref(), Some("base"));
            assert_eq!(suite.as_deref(), Some("s"));
        }
        other => panic!("expected NoRunAtMergeBase, got {other:?}"),
    }
    let message = missing.to_string();
    assert!(
        message.contains(&repo.base) && message.contains("merge-base:main"),
        "{message}"
    );

    // The newest run of the suite at the base commit.
    let older = record(&ledger, "s", &repo.base).await;
    let newer = record(&ledger, "s", &repo.base).await;
    let other_suite = record(&ledger, "t", &repo.base).await;
    assert!(older < newer && newer < other_suite);
    let found = resolve_run(&ledger, "merge-base:main", Some("s"), git_dir)
        .await
        .unwrap();
    assert_eq!(found.id, newer);
    assert_eq!(
        found.provenance.git.commit.as_deref(),
        Some(repo.base.as_str())
    );
    let any_suite = resolve_run(&ledger, "merge-base:main", None, git_dir)
        .await
        .unwrap();
    assert_eq!(any_suite.id, other_suite);

    // As a baseline: the head's suite narrows it.
    let head = ledger.require_run(feature_run).await.unwrap();
    let base = resolve_baseline(&ledger, &head, Some("merge-base:main"), git_dir)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(base.id, newer);
    let (base, head) = resolve_pair(&ledger, "merge-base:main", "feature", None, git_dir)
        .await
        .unwrap();
    assert_eq!((base.id, head.id), (newer, feature_run));

    // Errors of git pass through, typed.
    let unknown = resolve_run(&ledger, "merge-base:no-such-branch", None, git_dir)
        .await
        .unwrap_err();
    assert!(
        matches!(
            unknown,
            RefError::MergeBase(MergeBaseError::UnknownRevision { .. })
        ),
        "{unknown:?}"
    );
    let unrelated = resolve_run(&ledger, "merge-base:orphan", None, git_dir)
        .await
        .unwrap_err();
    assert!(
        matches!(
            unrelated,
            RefError::MergeBase(MergeBaseError::NoCommonAncestor { .. })
        ),
        "{unrelated:?}"
    );
    let outside = tempfile::tempdir().unwrap();
    let no_repo = resolve_run(&ledger, "merge-base:main", None, Some(outside.path()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            no_repo,
            RefError::MergeBase(MergeBaseError::NotARepository { .. })
        ),
        "{no_repo:?}"
    );
    let no_git_dir = resolve_run(&ledger, "merge-base:main", None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            no_git_dir,
            RefError::MergeBase(MergeBaseError::NoRepository { .. })
        ),
        "{no_git_dir:?}"
    );
}

/// Imports a one-benchmark BMF run of suite `wire` at the repository's HEAD.
fn import(sandbox: &Sandbox, repo: &Path, latency: f64) -> i64 {
    let file = sandbox.write(
        "run.json",
        format!(
            r#"{{"decode": {{"latency": {{"value": {latency}, "lower_value": {l}, "upper_value": {u}}}}}}}"#,
            l = latency * 0.99,
            u = latency * 1.01
        )
        .as_bytes(),
    );
    let out = sandbox
        .bench_run()
        .current_dir(repo)
        .args(["import", "bmf"])
        .arg(&file)
        .args(["--suite", "wire"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    stdout(&out).trim().parse().unwrap()
}

/// Points HEAD at `reference` (a branch) or, when it is a hash, at that commit, detached.
fn switch(repo: &Path, target: &str) {
    let repository = git2::Repository::open(repo).unwrap();
    match git2::Oid::from_str(target) {
        Ok(oid) if target.len() == 40 => repository.set_head_detached(oid).unwrap(),
        _ => repository.set_head(target).unwrap(),
    }
    repository
        .checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
        .unwrap();
}

#[test]
fn compare_gate_and_log_take_merge_base_from_the_command_line() {
    let sandbox = Sandbox::empty();
    let repo = branching_repository(&sandbox.dir.path().join("repo"));
    let bench_run = |args: &[&str]| {
        sandbox
            .bench_run()
            .current_dir(&repo.dir)
            .args(args)
            .output()
            .unwrap()
    };

    // Only the feature branch has runs: no run at the merge base, and the error names it.
    let feature_run = import(&sandbox, &repo.dir, 100.0);
    for args in [
        &["compare", "merge-base:main", "latest"][..],
        &["gate", "--base", "merge-base:main"],
        &["log", "--base", "merge-base:main", "--dry-run"],
    ] {
        let out = bench_run(args);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains(&format!("no run of suite wire at commit {}", repo.base)),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }

    // A run at the branch point, then a slower one on the branch.
    switch(&repo.dir, &repo.base);
    let base_run = import(&sandbox, &repo.dir, 100.0);
    switch(&repo.dir, "refs/heads/feature");
    let slower = import(&sandbox, &repo.dir, 150.0);
    assert!(feature_run < base_run && base_run < slower);

    let compared = bench_run(&["compare", "merge-base:main", "latest", "--format", "json"]);
    assert_exit(&compared, 0);
    let compared = json(&compared);
    assert_eq!(compared["base"]["id"], base_run, "{compared:#}");
    assert_eq!(compared["base"]["git_commit"], repo.base.as_str());
    assert_eq!(compared["head"]["id"], slower);

    let gated = bench_run(&["gate", "--base", "merge-base:main", "--head", "latest"]);
    assert_exit(&gated, 1);
    assert!(
        stderr(&gated).contains(&format!("run #{slower} vs base run #{base_run}")),
        "{}",
        stderr(&gated)
    );

    let logged = bench_run(&["log", "--base", "merge-base:main", "--dry-run"]);
    assert_exit(&logged, 0);
    assert!(
        stdout(&logged).contains(&format!("Baseline for deltas: run #{base_run} ")),
        "{}",
        stdout(&logged)
    );

    // Git's failures, each in its own words, with exit 2.
    for (rev, words) in [
        (
            "no-such-branch",
            "`no-such-branch` names no commit".to_owned(),
        ),
        ("orphan", "have no common ancestor".to_owned()),
        ("", "needs a revision".to_owned()),
    ] {
        let reference = format!("merge-base:{rev}");
        let out = bench_run(&["compare", &reference, "latest"]);
        assert_exit(&out, 2);
        assert!(stderr(&out).contains(&words), "{rev}: {}", stderr(&out));
    }
    let outside = sandbox
        .bench_run()
        .current_dir(sandbox.dir.path())
        .args(["gate", "--base", "merge-base:main"])
        .output()
        .unwrap();
    assert_exit(&outside, 2);
    assert!(
        stderr(&outside).contains("is not in a git repository"),
        "{}",
        stderr(&outside)
    );
}

#[test]
fn help_shows_the_merge_base_syntax_with_an_example() {
    let sandbox = Sandbox::empty();
    for command in ["compare", "gate", "log", "ab"] {
        let out = sandbox
            .command()
            .args([command, "--help"])
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert!(
            text.contains("merge-base:REV"),
            "{command} --help lacks the syntax:\n{text}"
        );
        let example = text.lines().any(|l| {
            l.trim_start().starts_with("bench-run") && l.contains("merge-base:origin/main")
        });
        assert!(example, "{command} --help lacks an example:\n{text}");
    }
}

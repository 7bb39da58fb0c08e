//! # bench-git
//!
//! The git queries both front ends need, through the `git` command: which commit a revision
//! names, and which commit `merge-base:REV` names. `bench-web` resolves `?base=main` with them
//! and links no git library; `bench-run ab` and `bisect` resolve their revisions with the same
//! functions, so a revision means the same commit on the command line and in a URL.
//!
//! Reading a repository's state for a recording (commit, dirty, tracked changes) is the
//! runner's job (`bench_runner::provenance`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The prefix of a merge-base reference: `merge-base:REV`.
pub const MERGE_BASE_PREFIX: &str = "merge-base:";

/// The REV of `merge-base:REV` (trimmed; empty when nothing follows the colon), or `None` when
/// `text` is not a merge-base reference. Git would read that spelling as a path in a tree
/// (`TREE-ISH:PATH`), never as a commit, so the prefix shadows no git revision of a run; like
/// `latest`, it takes precedence over a tag of the same spelling.
#[must_use]
pub fn merge_base_rev(text: &str) -> Option<&str> {
    text.trim().strip_prefix(MERGE_BASE_PREFIX).map(str::trim)
}

/// What one `git` command printed, or why it failed.
#[derive(Debug)]
enum GitOutcome {
    /// Exit 0: standard output, trimmed.
    Printed(String),
    /// A non-zero exit: its code (`None` when killed) and standard error, trimmed.
    Failed(Option<i32>, String),
}

/// Runs `git args` in `dir`. Git's own environment variables are cleared so that the repository
/// holding `dir` is the one asked, as when a person runs the command there.
fn run_git(dir: &Path, args: &[&str]) -> std::io::Result<GitOutcome> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(Stdio::null())
        .output()?;
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
    Ok(if output.status.success() {
        GitOutcome::Printed(text(&output.stdout))
    } else {
        GitOutcome::Failed(output.status.code(), text(&output.stderr))
    })
}

/// Whether `dir` lies inside a git repository (and git can be run).
#[must_use]
pub fn is_repository(dir: &Path) -> bool {
    matches!(
        run_git(dir, &["rev-parse", "--git-dir"]),
        Ok(GitOutcome::Printed(_))
    )
}

/// The top directory of the work tree holding `dir`, or `None` outside one.
#[must_use]
pub fn work_tree_root(dir: &Path) -> Option<PathBuf> {
    match run_git(dir, &["rev-parse", "--show-toplevel"]) {
        Ok(GitOutcome::Printed(top)) if !top.is_empty() => Some(PathBuf::from(top)),
        _ => None,
    }
}

/// The URL of the `origin` remote of the repository holding `dir`, when it has one.
#[must_use]
pub fn origin_url(dir: &Path) -> Option<String> {
    match run_git(dir, &["config", "--get", "remote.origin.url"]) {
        Ok(GitOutcome::Printed(url)) if !url.is_empty() => Some(url),
        _ => None,
    }
}

/// The full hash of the commit `rev` names (`HEAD~1`, a branch, a tag, a hash prefix) in the
/// repository holding `dir`; `None` when there is no repository or no such commit.
#[must_use]
pub fn commit_of(dir: &Path, rev: &str) -> Option<String> {
    match verify_commit(dir, rev) {
        Ok(GitOutcome::Printed(hash)) if !hash.is_empty() => Some(hash),
        _ => None,
    }
}

fn verify_commit(dir: &Path, rev: &str) -> std::io::Result<GitOutcome> {
    let spec = format!("{rev}^{{commit}}");
    run_git(dir, &["rev-parse", "--verify", "--end-of-options", &spec])
}

/// The commit `merge-base:REV` names: the merge base of REV and `HEAD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeBase {
    /// The full commit hash.
    pub commit: String,
    /// The first line of its message, when it has one.
    pub summary: Option<String>,
}

/// Why `merge-base:REV` names no commit. Every message starts with the reference as given.
#[derive(Debug, thiserror::Error)]
pub enum MergeBaseError {
    /// Nothing after the colon.
    #[error("`merge-base:` needs a revision after the colon, e.g. `merge-base:origin/main`")]
    MissingRevision,
    /// No repository to resolve it in (the caller has none in context).
    #[error("`merge-base:{rev}` is resolved in a git repository, and there is none here")]
    NoRepository {
        /// REV.
        rev: String,
    },
    /// The directory is not inside a git repository.
    #[error("`merge-base:{rev}`: {} is not in a git repository", dir.display())]
    NotARepository {
        /// REV.
        rev: String,
        /// Where the repository was looked for.
        dir: PathBuf,
    },
    /// REV names no commit.
    #[error("`merge-base:{rev}`: `{rev}` names no commit ({reason})")]
    UnknownRevision {
        /// REV.
        rev: String,
        /// Git's message.
        reason: String,
    },
    /// HEAD names no commit (a repository without commits).
    #[error("`merge-base:{rev}`: HEAD names no commit yet ({reason})")]
    NoHead {
        /// REV.
        rev: String,
        /// Git's message.
        reason: String,
    },
    /// REV and HEAD share no history.
    #[error(
        "`merge-base:{rev}`: `{rev}` ({}) and HEAD ({}) have no common ancestor",
        short_hash(commit),
        short_hash(head)
    )]
    NoCommonAncestor {
        /// REV.
        rev: String,
        /// The commit REV names.
        commit: String,
        /// The commit HEAD names.
        head: String,
    },
    /// Git failed otherwise (not installed, an unreadable repository).
    #[error("`merge-base:{rev}`: git failed: {reason}")]
    Git {
        /// REV.
        rev: String,
        /// Git's message, or why it could not be run.
        reason: String,
    },
}

fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

/// Resolves `merge-base:REV` (given as `rev`, without the prefix) in the repository
/// containing `dir`: the best common ancestor of the commit REV names and the commit `HEAD`
/// names (what `git merge-base REV HEAD` prints).
///
/// # Errors
/// A [`MergeBaseError`]: REV is empty or names no commit, HEAD names no commit, the two share
/// no history, `dir` is not in a git repository, or git fails.
pub fn merge_base_with_head(dir: &Path, rev: &str) -> Result<MergeBase, MergeBaseError> {
    let rev = rev.trim();
    if rev.is_empty() {
        return Err(MergeBaseError::MissingRevision);
    }
    let git_failed = |reason: String| MergeBaseError::Git {
        rev: rev.to_owned(),
        reason,
    };
    let run =
        |args: &[&str]| run_git(dir, args).map_err(|e| git_failed(format!("cannot run git: {e}")));
    if let GitOutcome::Failed(..) = run(&["rev-parse", "--git-dir"])? {
        return Err(MergeBaseError::NotARepository {
            rev: rev.to_owned(),
            dir: dir.to_owned(),
        });
    }
    let commit = match verify_commit(dir, rev).map_err(|e| git_failed(e.to_string()))? {
        GitOutcome::Printed(hash) => hash,
        GitOutcome::Failed(_, reason) => {
            return Err(MergeBaseError::UnknownRevision {
                rev: rev.to_owned(),
                reason,
            });
        }
    };
    let head = match verify_commit(dir, "HEAD").map_err(|e| git_failed(e.to_string()))? {
        GitOutcome::Printed(hash) => hash,
        GitOutcome::Failed(_, reason) => {
            return Err(MergeBaseError::NoHead {
                rev: rev.to_owned(),
                reason,
            });
        }
    };
    // `git merge-base` exits 1, printing nothing, when the two share no history.
    let base = match run(&["merge-base", &commit, &head])? {
        GitOutcome::Printed(base) if !base.is_empty() => base,
        GitOutcome::Printed(_) | GitOutcome::Failed(Some(1), _) => {
            return Err(MergeBaseError::NoCommonAncestor {
                rev: rev.to_owned(),
                commit,
                head,
            });
        }
        GitOutcome::Failed(_, reason) => return Err(git_failed(reason)),
    };
    let summary = match run(&["log", "-1", "--format=%s", &base])? {
        GitOutcome::Printed(line) => Some(line).filter(|l| !l.is_empty()),
        GitOutcome::Failed(_, reason) => return Err(git_failed(reason)),
    };
    Ok(MergeBase {
        commit: base,
        summary,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn reads_merge_base_references() {
        assert_eq!(
            merge_base_rev("merge-base:origin/main"),
            Some("origin/main")
        );
        assert_eq!(merge_base_rev(" merge-base: main "), Some("main"));
        assert_eq!(merge_base_rev("merge-base:"), Some(""));
        assert_eq!(merge_base_rev("main"), None);
    }

    #[test]
    fn resolves_revisions_and_says_none_outside_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_repository(dir.path()));
        assert_eq!(commit_of(dir.path(), "HEAD"), None);
        git(dir.path(), &["init", "-q", "-b", "main"]);
        assert!(is_repository(dir.path()));
        assert_eq!(commit_of(dir.path(), "HEAD"), None, "no commit yet");
        git(
            dir.path(),
            &["commit", "-q", "--allow-empty", "-m", "first"],
        );
        git(
            dir.path(),
            &["commit", "-q", "--allow-empty", "-m", "second"],
        );
        let head = commit_of(dir.path(), "HEAD").unwrap();
        assert_eq!(head.len(), 40);
        assert_eq!(commit_of(dir.path(), &head[..8]), Some(head.clone()));
        let first = commit_of(dir.path(), "HEAD~1").unwrap();
        assert_ne!(first, head);
        // An option-like revision is a revision, never an option of git.
        assert_eq!(commit_of(dir.path(), "--all"), None);
        let base = merge_base_with_head(dir.path(), "HEAD~1").unwrap();
        assert_eq!(base.commit, first);
        assert_eq!(base.summary.as_deref(), Some("first"));
        assert!(
            work_tree_root(&dir.path().join(".git")).is_none(),
            "inside .git there is no work tree"
        );
    }
}

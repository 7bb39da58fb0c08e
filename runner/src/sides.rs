//! What the A/B mechanics share at the bottom: their error, and running git and file operations
//! with a message that names what was being done. [`crate::ab`] and [`crate::build_home`] both
//! build on it.

use crate::suite::SuiteError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Errors of the A/B mechanics.
#[derive(Debug, thiserror::Error)]
pub enum AbError {
    /// A git command failed.
    #[error("`git {command}` failed: {reason}")]
    Git {
        /// The arguments.
        command: String,
        /// Git's message.
        reason: String,
    },
    /// `merge-base:REV` names no commit.
    #[error(transparent)]
    MergeBase(#[from] bench_git::MergeBaseError),
    /// Finding, building or running the suite failed.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// A file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A gungraun suite cannot run (its runner or valgrind is missing, or of another version).
    #[error(transparent)]
    Gungraun(#[from] crate::gungraun::GungraunError),
    /// The workspace is not in a git repository: there are no revisions to build.
    #[error(
        "{} is not in a git repository: bench-run builds revisions (and layouts) from a checkout of one",
        workspace.display()
    )]
    NotInGit {
        /// The workspace's root.
        workspace: PathBuf,
    },
    /// Layout randomization cannot be set up.
    #[error("layout randomization: {0}")]
    Layouts(String),
    /// Criterion's output of one process could not be read.
    #[error("cannot read the output of {side} process {round}: {reason}")]
    Output {
        /// Which side.
        side: &'static str,
        /// Which round (1-based).
        round: usize,
        /// Why.
        reason: String,
    },
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> AbError {
    let what = what.into();
    move |source| AbError::Io { what, source }
}

/// Runs `git args` in `dir` and returns its standard output.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, AbError> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(io("cannot run git"))?;
    if !output.status.success() {
        return Err(AbError::Git {
            command: args.join(" "),
            reason: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(output.stdout)
}

pub(crate) fn git_text(dir: &Path, args: &[&str]) -> Result<String, AbError> {
    Ok(String::from_utf8_lossy(&git(dir, args)?).trim().to_owned())
}

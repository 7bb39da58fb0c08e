//! The checkouts of `bench-run ab`: git worktrees of the two revisions, made in a directory of
//! their own and removed when done, also when the run is interrupted ([`remove_live_and_exit`],
//! from a signal handler) or killed outright ([`sweep_stale`], by the next run).

use crate::ab::{AbError, git, io};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// A git worktree made for one side; removed (with its registration) when dropped, or by
/// [`remove_live_and_exit`] when the process is interrupted.
#[derive(Debug)]
pub struct Checkout {
    repo: PathBuf,
    dir: PathBuf,
}

impl Checkout {
    /// The checkout's top directory (the repository's root in it).
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A detached worktree of `commit` at `dir` (which must not exist).
    ///
    /// # Errors
    /// When git refuses.
    pub fn of_commit(repo: &Path, commit: &str, dir: &Path) -> Result<Self, AbError> {
        let dir_text = dir.to_string_lossy();
        // Made and listed under the lock, so that an interruption meanwhile waits for it and
        // then removes it too.
        let mut live = live();
        git(
            repo,
            &["worktree", "add", "--detach", "--force", &dir_text, commit],
        )?;
        live.push((repo.to_owned(), dir.to_owned()));
        Ok(Self {
            repo: repo.to_owned(),
            dir: dir.to_owned(),
        })
    }

    /// A worktree of `HEAD` at `dir` with the working tree's uncommitted changes laid over it:
    /// every file that differs from `HEAD` (staged or not) and every untracked file that is not
    /// ignored is copied, every file deleted since `HEAD` is removed.
    ///
    /// # Errors
    /// When git refuses or a file cannot be copied.
    pub fn of_working_tree(repo: &Path, dir: &Path) -> Result<Self, AbError> {
        let checkout = Self::of_commit(repo, "HEAD", dir)?;
        overlay_working_tree(repo, dir)?;
        Ok(checkout)
    }
}

/// Lays the working tree's uncommitted changes of `repo` over `dir`, a checkout of its `HEAD`:
/// every file that differs from `HEAD` (staged or not) and every untracked file that is not
/// ignored is copied, every file deleted since `HEAD` is removed.
///
/// # Errors
/// When git refuses or a file cannot be copied.
pub fn overlay_working_tree(repo: &Path, dir: &Path) -> Result<(), AbError> {
    let split = |bytes: Vec<u8>| -> Vec<String> {
        bytes
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    };
    let changed = split(git(repo, &["diff", "--name-only", "-z", "HEAD"])?);
    let untracked = split(git(
        repo,
        &["ls-files", "-z", "--others", "--exclude-standard"],
    )?);
    for path in changed.iter().chain(&untracked) {
        let from = repo.join(path);
        let to = dir.join(path);
        if from.is_file() {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(io(format!("cannot create {}", parent.display())))?;
            }
            std::fs::copy(&from, &to).map_err(io(format!(
                "cannot copy {} into the head checkout",
                from.display()
            )))?;
        } else if !from.exists() && to.exists() {
            std::fs::remove_file(&to).map_err(io(format!("cannot remove {}", to.display())))?;
        }
    }
    Ok(())
}

impl Drop for Checkout {
    fn drop(&mut self) {
        live().retain(|(_, dir)| *dir != self.dir);
        remove(&self.repo, &self.dir);
    }
}

/// Removes the worktree at `dir` of `repo`: its files and its registration. Best effort: a
/// checkout left behind is pruned by the next `git worktree prune`, or swept by
/// [`sweep_stale`].
fn remove(repo: &Path, dir: &Path) {
    let text = dir.to_string_lossy().into_owned();
    let _ = git(repo, &["worktree", "remove", "--force", &text]);
    let _ = std::fs::remove_dir_all(dir);
    let _ = git(repo, &["worktree", "prune"]);
}

/// The checkouts of this process that exist now.
fn live() -> MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    static LIVE: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes every checkout of this process, with the directory holding them when it is one
/// that [`claim`] marked, and exits with `code` (for a signal handler: the process would exit
/// without dropping them). No checkout is made meanwhile: one being made is waited for and
/// removed too.
pub fn remove_live_and_exit(code: i32) -> ! {
    let mut live = live();
    for (repo, dir) in live.drain(..) {
        remove(&repo, &dir);
        if let Some(holder) = dir.parent().filter(|p| p.join(OWNER).is_file()) {
            let _ = std::fs::remove_dir_all(holder);
        }
    }
    std::process::exit(code)
}

/// The file naming the process that made a directory of checkouts.
const OWNER: &str = "bench-run-owner";

/// The prefix of the directories holding a run's checkouts.
pub const HOLDER_PREFIX: &str = "bench-run-ab-";

/// Marks `holder` (a directory named `bench-run-ab-*` that will hold this process's checkouts)
/// as this process's, so that [`sweep_stale`] can tell when it was left behind.
///
/// # Errors
/// When the mark cannot be written.
pub fn claim(holder: &Path) -> Result<(), AbError> {
    std::fs::write(holder.join(OWNER), std::process::id().to_string())
        .map_err(io(format!("cannot write into {}", holder.display())))
}

/// Removes the checkouts of `repo` that a `bench-run ab` left behind when it was killed: those
/// in a `bench-run-ab-*` directory whose owner process is gone. Returns the directories
/// removed. Where processes cannot be looked up (no `/proc`), nothing is removed.
pub fn sweep_stale(repo: &Path) -> Vec<PathBuf> {
    let Ok(list) = git(repo, &["worktree", "list", "--porcelain"]) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for line in String::from_utf8_lossy(&list).lines() {
        let Some(dir) = line.strip_prefix("worktree ").map(PathBuf::from) else {
            continue;
        };
        let Some(holder) = dir.parent() else {
            continue;
        };
        let ours = holder
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(HOLDER_PREFIX));
        let owner = std::fs::read_to_string(holder.join(OWNER)).ok();
        if ours && owner.is_some_and(|pid| !running(pid.trim())) {
            remove(repo, &dir);
            let _ = std::fs::remove_dir_all(holder);
            removed.push(dir);
        }
    }
    removed
}

/// Whether process `pid` is a running `bench-run` (a pid reused by another program is not).
/// Without `/proc`, every process counts as running.
fn running(pid: &str) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    std::fs::read_to_string(Path::new("/proc").join(pid).join("comm"))
        .is_ok_and(|comm| comm.trim() == "bench-run")
}

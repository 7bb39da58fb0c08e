//! Where `bench-run ab` builds: one directory per repository, outside the user's tree and
//! target directory, holding one checkout at a fixed path and its own target directory.
//!
//! ```text
//! <root>/<repo name>-<hash of the repo's path>/
//!     lock        held while an ab of this repository builds or measures
//!     src/        a shared clone of the repository (git objects borrowed, not copied),
//!                 switched to each side's commit in turn
//!     target/     its CARGO_TARGET_DIR: dependencies compile once, across runs
//!     bin/linker  the linker shim of layout randomization (crate::relink)
//!     runs/       scratch of each run: executables copied out, criterion's output (a run
//!                 that was killed leaves its own; the next one removes it)
//! ```
//!
//! Why one path for both sides: cargo hashes a package's path into nothing when it is a
//! workspace member (it hashes the path relative to the workspace), but rustc writes the paths
//! it compiled into the executable (debug info, panic locations). Two checkouts at two paths
//! therefore give two executables from identical source, and the rule "identical executables:
//! nothing to measure" never fires (issue 45: quick-xml, bincode). Built one after the other
//! from one path, identical source gives byte-identical executables.
//!
//! Why not the user's `target/`: cargo decides freshness by comparing source mtimes with its
//! outputs, resolving the paths of a member's sources against the package it builds now. An
//! executable built from another checkout of the same workspace, newer than the user's files,
//! is then "fresh" for the user's tree, and the next `bench-run --suite S` records it under the
//! user's commit (issue 45: bincode run #35). Nothing of ab's goes into the user's target.
//! For the same reason no two repositories share one target directory here.

use crate::sides::{AbError, git, io};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::path::{Path, PathBuf};

/// Environment variable naming the root of the build homes.
pub const ROOT_ENV: &str = "BENCH_RUN_BUILD_HOME";

/// The root holding every repository's build home: `$BENCH_RUN_BUILD_HOME`, else
/// `$XDG_CACHE_HOME/bench-run`, else `~/.cache/bench-run`, else the system's temp directory.
#[must_use]
pub fn default_root() -> PathBuf {
    if let Some(dir) = std::env::var_os(ROOT_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("bench-run");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".cache").join("bench-run");
    }
    std::env::temp_dir().join("bench-run")
}

/// The name of `repo`'s build home under a root: its directory name and a hash of its path.
#[must_use]
pub fn home_name(repo: &Path) -> String {
    let name = repo
        .file_name()
        .map_or_else(|| "repo".to_owned(), |n| n.to_string_lossy().into_owned());
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let digest = Sha256::digest(repo.as_os_str().as_encoded_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{safe}-{hash}")
}

/// One repository's build home, locked for this process while it lives.
#[derive(Debug)]
pub struct BuildHome {
    repo: PathBuf,
    dir: PathBuf,
    _lock: File,
}

impl BuildHome {
    /// Opens (creating it when needed) the build home of `repo` under `root`, waiting while
    /// another `bench-run` holds it (`on_wait` is told once).
    ///
    /// # Errors
    /// When the directory or its lock cannot be made.
    pub fn open(repo: &Path, root: &Path, on_wait: impl FnOnce(&Path)) -> Result<Self, AbError> {
        let repo = repo.canonicalize().unwrap_or_else(|_| repo.to_owned());
        let dir = root.join(home_name(&repo));
        std::fs::create_dir_all(&dir).map_err(io(format!("cannot create {}", dir.display())))?;
        let lock_path = dir.join("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(format!("cannot open {}", lock_path.display())))?;
        if lock.try_lock().is_err() {
            on_wait(&dir);
            lock.lock()
                .map_err(io(format!("cannot lock {}", lock_path.display())))?;
        }
        // Holding the lock, no other run uses the scratch: what is there was left by a run
        // that was killed.
        let _ = std::fs::remove_dir_all(dir.join("runs"));
        Ok(Self {
            repo,
            dir,
            _lock: lock,
        })
    }

    /// The build home's directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The checkout every side is built from.
    #[must_use]
    pub fn src(&self) -> PathBuf {
        self.dir.join("src")
    }

    /// The target directory of its builds.
    #[must_use]
    pub fn target_dir(&self) -> PathBuf {
        self.dir.join("target")
    }

    /// The linker shim's path.
    #[must_use]
    pub fn linker_shim(&self) -> PathBuf {
        self.dir.join("bin").join("linker")
    }

    /// A fresh scratch directory for one run (removed when dropped).
    ///
    /// # Errors
    /// When it cannot be made.
    pub fn scratch(&self) -> Result<tempfile::TempDir, AbError> {
        let runs = self.dir.join("runs");
        std::fs::create_dir_all(&runs).map_err(io(format!("cannot create {}", runs.display())))?;
        tempfile::Builder::new()
            .prefix("ab-")
            .tempdir_in(&runs)
            .map_err(io("cannot create a scratch directory"))
    }

    /// Makes the checkout hold `commit` exactly: tracked files as committed, no other file.
    /// Git rewrites only the files that differ, so cargo recompiles only what changed.
    ///
    /// # Errors
    /// When git fails.
    pub fn switch_to(&self, commit: &str) -> Result<(), AbError> {
        let src = self.src();
        if !self.is_clone_of_repo(&src) {
            if src.exists() {
                std::fs::remove_dir_all(&src)
                    .map_err(io(format!("cannot remove {}", src.display())))?;
            }
            let repo_text = self.repo.to_string_lossy().into_owned();
            let src_text = src.to_string_lossy().into_owned();
            // --shared borrows the repository's objects (no copy); --no-checkout: the
            // checkout below writes the files.
            git(
                &self.dir,
                &[
                    "clone",
                    "--quiet",
                    "--shared",
                    "--no-checkout",
                    &repo_text,
                    &src_text,
                ],
            )?;
        }
        git(
            &src,
            &["checkout", "--quiet", "--detach", "--force", commit],
        )?;
        git(&src, &["clean", "-ffdxq"])?;
        Ok(())
    }

    /// Makes the checkout hold the repository's working tree: its `HEAD` commit with every
    /// uncommitted change laid over it ([`overlay_working_tree`]).
    ///
    /// # Errors
    /// When git fails or a file cannot be copied.
    pub fn switch_to_working_tree(&self, head_commit: &str) -> Result<(), AbError> {
        self.switch_to(head_commit)?;
        overlay_working_tree(&self.repo, &self.src())
    }

    /// Whether `src` is a clone of this home's repository made by [`Self::switch_to`].
    fn is_clone_of_repo(&self, src: &Path) -> bool {
        let Ok(alternates) = std::fs::read_to_string(src.join(".git/objects/info/alternates"))
        else {
            return false;
        };
        let objects = self.repo.join(".git").join("objects");
        let common = git(&self.repo, &["rev-parse", "--git-common-dir"])
            .ok()
            .map(|o| {
                let text = String::from_utf8_lossy(&o).trim().to_owned();
                let path = PathBuf::from(&text);
                if path.is_absolute() {
                    path.join("objects")
                } else {
                    self.repo.join(path).join("objects")
                }
            });
        alternates.lines().any(|line| {
            let line = Path::new(line.trim());
            let same = |p: &Path| {
                line == p || line.canonicalize().ok() == p.canonicalize().ok() && line.exists()
            };
            same(&objects) || common.as_deref().is_some_and(same)
        })
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn repo_with_commits() -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("my repo");
        std::fs::create_dir_all(&repo).unwrap();
        let run = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(&repo)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        run(&["init", "-q"]);
        std::fs::write(repo.join("a.txt"), "one\n").unwrap();
        run(&["add", "-A"]);
        run(&["commit", "-q", "-m", "one"]);
        let first = run(&["rev-parse", "HEAD"]);
        std::fs::write(repo.join("a.txt"), "two\n").unwrap();
        run(&["commit", "-q", "-am", "two"]);
        let second = run(&["rev-parse", "HEAD"]);
        (dir, vec![first, second])
    }

    #[test]
    fn names_are_per_repository_and_safe() {
        let a = home_name(Path::new("/x/my repo"));
        assert!(a.starts_with("my_repo-"), "{a}");
        assert_eq!(a.len(), "my_repo-".len() + 12);
        assert_ne!(a, home_name(Path::new("/y/my repo")));
    }

    #[test]
    fn the_checkout_follows_commits_and_the_working_tree() {
        let (dir, commits) = repo_with_commits();
        let repo = dir.path().join("my repo");
        let root = dir.path().join("homes");
        // A killed run's scratch is removed by the next opener.
        let stale = root
            .join(home_name(&repo.canonicalize().unwrap()))
            .join("runs/ab-killed");
        std::fs::create_dir_all(&stale).unwrap();
        let home = BuildHome::open(&repo, &root, |_| {}).unwrap();
        assert!(!stale.exists());
        home.switch_to(&commits[0]).unwrap();
        let src = home.src();
        assert_eq!(std::fs::read_to_string(src.join("a.txt")).unwrap(), "one\n");
        std::fs::write(src.join("stray.txt"), "left by a build").unwrap();
        home.switch_to(&commits[1]).unwrap();
        assert_eq!(std::fs::read_to_string(src.join("a.txt")).unwrap(), "two\n");
        assert!(
            !src.join("stray.txt").exists(),
            "untracked files are cleaned"
        );
        std::fs::write(repo.join("a.txt"), "three\n").unwrap();
        std::fs::write(repo.join("new.txt"), "new\n").unwrap();
        home.switch_to_working_tree(&commits[1]).unwrap();
        assert_eq!(
            std::fs::read_to_string(src.join("a.txt")).unwrap(),
            "three\n"
        );
        assert!(src.join("new.txt").is_file());
        // The repository has no worktree of ours registered.
        let list = git(&repo, &["worktree", "list", "--porcelain"]).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&list).matches("worktree ").count(),
            1
        );
        // A second opener waits for the first.
        let (tx, rx) = std::sync::mpsc::channel();
        let (repo2, root2) = (repo.clone(), root.clone());
        let waiter = std::thread::spawn(move || {
            let _second = BuildHome::open(&repo2, &root2, |_| tx.send(()).unwrap()).unwrap();
        });
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        drop(home);
        waiter.join().unwrap();
    }
}

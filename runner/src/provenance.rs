//! Provenance: the machine, toolchain, git state and environment behind a run.
//!
//! Reading is split from parsing: `parse_*` functions are pure and tested on captured text;
//! the thin readers around them touch `/proc`, `/sys`, `rustc`, `cargo` and git.
//!
//! ## Machine fingerprint
//!
//! Runs are only comparable on the same machine, so machines are deduplicated by a fingerprint:
//! a SHA-256 over CPU model, physical and logical core counts, memory (rounded to GiB),
//! architecture and OS. Host name and kernel release are recorded but left out, so that
//! ephemeral CI runners of one hardware class share a history, and a kernel update does not
//! orphan it. Set `BENCH_MACHINE=name` to pin a fingerprint by hand (it then hashes only the name).

use bench_model::{BenchExe, GitInfo, Machine, Toolchain};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Errors raised while reading provenance.
#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    /// A toolchain command could not be run or failed.
    #[error("could not run `{command}`: {reason}")]
    Command {
        /// The command line.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// A toolchain command printed something we cannot read.
    #[error("unexpected output of `{command}`: {reason}")]
    Parse {
        /// The command line.
        command: String,
        /// What was missing.
        reason: String,
    },
}

/// Environment variables recorded with every run (when set), because they change performance
/// or identify the CI job.
pub const ENV_ALLOW_LIST: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "CARGO_BUILD_TARGET",
    "CARGO_INCREMENTAL",
    "CARGO_PROFILE_BENCH_LTO",
    "CARGO_PROFILE_BENCH_CODEGEN_UNITS",
    "CARGO_PROFILE_BENCH_OPT_LEVEL",
    "CARGO_PROFILE_BENCH_DEBUG",
    "CARGO_PROFILE_RELEASE_LTO",
    "CARGO_PROFILE_RELEASE_CODEGEN_UNITS",
    "CARGO_PROFILE_RELEASE_OPT_LEVEL",
    "RAYON_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MALLOC_CONF",
    "BENCH_MACHINE",
    "CI",
    "GITHUB_SHA",
    "GITHUB_REF",
    "GITHUB_RUN_ID",
    "GITHUB_WORKFLOW",
    "GITHUB_REPOSITORY",
];

/// Reads the allow-listed variables plus `extra` names from the process environment.
#[must_use]
pub fn environment(extra: &[String]) -> BTreeMap<String, String> {
    let names: BTreeSet<&str> = ENV_ALLOW_LIST
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
        .collect();
    names
        .into_iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (name.to_owned(), v)))
        .collect()
}

/// CPU facts parsed from `/proc/cpuinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuInfo {
    /// `model name` of the first processor.
    pub model: String,
    /// Number of `processor` entries.
    pub logical: u32,
    /// Distinct (`physical id`, `core id`) pairs, when the kernel reports them.
    pub physical: Option<u32>,
}

/// Parses `/proc/cpuinfo`.
#[must_use]
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut cores = BTreeSet::new();
    let mut physical_id = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => info.logical += 1,
            "model name" | "Model" | "cpu model" if info.model.is_empty() => {
                info.model = value.to_owned();
            }
            "physical id" => physical_id = Some(value.to_owned()),
            "core id" => {
                cores.insert((physical_id.clone(), value.to_owned()));
            }
            _ => {}
        }
    }
    if !cores.is_empty() {
        info.physical = u32::try_from(cores.len()).ok();
    }
    info
}

/// Parses `MemTotal` of `/proc/meminfo` into bytes.
#[must_use]
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Parses `PRETTY_NAME` (or `NAME` + `VERSION`) of `/etc/os-release`.
#[must_use]
pub fn parse_os_release(text: &str) -> Option<String> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_owned())
    };
    field("PRETTY_NAME").or_else(|| {
        let name = field("NAME")?;
        Some(match field("VERSION") {
            Some(version) => format!("{name} {version}"),
            None => name,
        })
    })
}

/// SHA-256 and size of the bench executable at `path`, read in 64 KiB blocks. Two runs whose
/// executables hash alike measured the same code (see `compare::same_binary`).
///
/// # Errors
/// When the file cannot be opened or read.
pub fn hash_executable(path: &Path) -> std::io::Result<BenchExe> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut bytes: u64 = 0;
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(buffer.get(..n).unwrap_or_default());
        bytes = bytes.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
    }
    Ok(BenchExe {
        sha256: hex(&hasher.finalize()),
        bytes,
    })
}

/// The machine fingerprint (see the module docs).
#[must_use]
pub fn fingerprint(machine: &Machine, pinned_name: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    match pinned_name {
        Some(name) => hasher.update(format!("pinned\0{name}")),
        None => {
            let gib = machine
                .memory_bytes
                .map(|b| (b + (1 << 29)) >> 30)
                .unwrap_or_default();
            hasher.update(format!(
                "{}\0{:?}\0{}\0{}\0{}\0{}",
                machine.cpu_model,
                machine.physical_cores,
                machine.logical_cores,
                gib,
                machine.arch,
                machine.os
            ));
        }
    }
    hex(&hasher.finalize()[..8])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Reads the machine this process runs on.
#[must_use]
pub fn machine() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    let logical_fallback = std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok())
        .unwrap_or(1);
    let mut machine = Machine {
        fingerprint: String::new(),
        hostname: read_trimmed("/proc/sys/kernel/hostname")
            .or_else(|| read_trimmed("/etc/hostname"))
            .unwrap_or_default(),
        cpu_model: if cpu.model.is_empty() {
            "unknown".to_owned()
        } else {
            cpu.model
        },
        physical_cores: cpu.physical,
        logical_cores: if cpu.logical == 0 {
            logical_fallback
        } else {
            cpu.logical
        },
        memory_bytes: std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| parse_meminfo(&t)),
        os: std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| parse_os_release(&t))
            .unwrap_or_else(|| std::env::consts::OS.to_owned()),
        kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        arch: std::env::consts::ARCH.to_owned(),
        testbed: None,
    };
    let pinned = std::env::var("BENCH_MACHINE")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    machine.fingerprint = fingerprint(&machine, pinned.as_deref());
    machine.testbed = pinned;
    machine
}

/// The CPU frequency governor of CPU 0, where the kernel exposes it.
#[must_use]
pub fn cpu_governor() -> Option<String> {
    read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
}

/// Turbo/boost state (`on` or `off`), where the kernel exposes it.
#[must_use]
pub fn turbo() -> Option<String> {
    if let Some(no_turbo) = read_trimmed("/sys/devices/system/cpu/intel_pstate/no_turbo") {
        return Some(if no_turbo == "0" { "on" } else { "off" }.to_owned());
    }
    read_trimmed("/sys/devices/system/cpu/cpufreq/boost")
        .map(|boost| if boost == "1" { "on" } else { "off" }.to_owned())
}

/// Parses `rustc -vV` and `cargo -V` output into a [`Toolchain`].
///
/// # Errors
/// When `rustc -vV` lacks its `release:` or `host:` line.
pub fn parse_toolchain(
    rustc_verbose: &str,
    cargo_version: &str,
) -> Result<Toolchain, ProvenanceError> {
    let field = |name: &str| {
        rustc_verbose
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty() && v != "unknown")
    };
    let missing = |what: &str| ProvenanceError::Parse {
        command: "rustc -vV".to_owned(),
        reason: format!("no `{what}:` line"),
    };
    let rustc_version = field("release").ok_or_else(|| missing("release"))?;
    let host = field("host").ok_or_else(|| missing("host"))?;
    let rustc_verbose = rustc_verbose.trim().to_owned();
    let cargo_version = cargo_version.trim().to_owned();
    let mut hasher = Sha256::new();
    hasher.update(format!("{rustc_verbose}\0{cargo_version}"));
    Ok(Toolchain {
        fingerprint: hex(&hasher.finalize()[..8]),
        rustc_version,
        rustc_commit: field("commit-hash"),
        host,
        llvm_version: field("LLVM version"),
        rustc_verbose,
        cargo_version,
    })
}

fn run_capture(program: &str, args: &[&str], dir: &Path) -> Result<String, ProvenanceError> {
    let command = format!("{program} {}", args.join(" "));
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| ProvenanceError::Command {
            command: command.clone(),
            reason: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(ProvenanceError::Command {
            command,
            reason: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs `rustc -vV` and `cargo -V` as cargo would in `dir` (honouring `RUSTC` and `CARGO`, and
/// rustup toolchain files in `dir`).
///
/// # Errors
/// When either command cannot be run or prints something unexpected.
pub fn toolchain(dir: &Path) -> Result<Toolchain, ProvenanceError> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let rustc_verbose = run_capture(&rustc, &["-vV"], dir)?;
    let cargo_version = run_capture(&cargo, &["-V"], dir)?;
    parse_toolchain(&rustc_verbose, &cargo_version)
}

/// Reads git state of the repository containing `dir`.
///
/// A directory outside any repository gives an empty [`GitInfo`]; so does a repository
/// without commits. Other git failures are returned so the caller can warn and go on.
///
/// # Errors
/// When the repository exists but cannot be read.
pub fn git(dir: &Path) -> Result<GitInfo, git2::Error> {
    let repo = match git2::Repository::discover(dir) {
        Ok(repo) => repo,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(GitInfo::default()),
        Err(e) => return Err(e),
    };
    let head = match repo.head() {
        Ok(head) => head,
        Err(e)
            if matches!(
                e.code(),
                git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
            ) =>
        {
            return Ok(GitInfo::default());
        }
        Err(e) => return Err(e),
    };
    let commit = head.peel_to_commit()?;
    let branch = head
        .is_branch()
        .then(|| String::from_utf8_lossy(head.shorthand_bytes()).into_owned());
    let dirty = match tracked_changes(&repo) {
        Ok(dirty) => dirty,
        // libgit2 cannot read a sparse index (`git sparse-checkout --sparse-index`, index
        // extension `sdir`); git itself, which wrote it, can.
        Err(e) => match repo.workdir().and_then(tracked_changes_by_git_cli) {
            Some(dirty) => dirty,
            None => return Err(e),
        },
    };
    Ok(GitInfo {
        commit: Some(commit.id().to_string()),
        branch,
        dirty,
        commit_time: Some(commit.time().seconds()),
        summary: commit.summary().ok().flatten().map(str::to_owned),
    })
}

/// Whether tracked files differ from HEAD (untracked and ignored files, submodules aside).
fn tracked_changes(repo: &git2::Repository) -> Result<bool, git2::Error> {
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(false)
        .include_ignored(false)
        .exclude_submodules(true);
    // libgit2 knows nothing of sparse checkouts: a file that `git sparse-checkout` left out
    // of the working tree (skip-worktree in the index) shows as deleted. Git counts it as
    // unchanged, and so does this.
    let skipped = skip_worktree_paths(repo)?;
    Ok(repo.statuses(Some(&mut options))?.iter().any(|entry| {
        let status = entry.status();
        let left_out = status == git2::Status::WT_DELETED && skipped.contains(entry.path_bytes());
        status != git2::Status::CURRENT && !left_out
    }))
}

/// [`tracked_changes`] asked of the git command line; `None` when git is missing or fails.
fn tracked_changes_by_git_cli(workdir: &Path) -> Option<bool> {
    let output = std::process::Command::new("git")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--ignore-submodules",
        ])
        .current_dir(workdir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| !output.stdout.iter().all(u8::is_ascii_whitespace))
}

/// Paths of the index entries marked skip-worktree (the files a sparse checkout left out).
fn skip_worktree_paths(
    repo: &git2::Repository,
) -> Result<std::collections::HashSet<Vec<u8>>, git2::Error> {
    Ok(repo
        .index()?
        .iter()
        .filter(|entry| {
            git2::IndexEntryExtendedFlag::from_bits_truncate(entry.flags_extended)
                .is_skip_worktree()
        })
        .map(|entry| entry.path)
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 2\nmodel name\t: Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz\nphysical id\t: 0\ncore id\t\t: 1\n";

    #[test]
    fn cpuinfo_counts_logical_and_physical_cores() {
        let info = parse_cpuinfo(CPUINFO);
        assert_eq!(info.model, "Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz");
        assert_eq!(info.logical, 3);
        assert_eq!(info.physical, Some(2));
        assert_eq!(parse_cpuinfo("processor : 0\n").physical, None);
    }

    #[test]
    fn meminfo_and_os_release() {
        assert_eq!(
            parse_meminfo("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000 * 1024)
        );
        assert_eq!(parse_meminfo("garbage"), None);
        assert_eq!(
            parse_os_release(
                "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
            ),
            Some("Debian GNU/Linux 12 (bookworm)".to_owned())
        );
        assert_eq!(
            parse_os_release("NAME=Foo\nVERSION=\"1.2\"\n"),
            Some("Foo 1.2".to_owned())
        );
    }

    #[test]
    fn toolchain_parses_rustc_vv() {
        let rustc = "rustc 1.95.0 (59807616e 2026-04-14)\nbinary: rustc\ncommit-hash: 59807616e1\ncommit-date: 2026-04-14\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\nLLVM version: 20.1.8\n";
        let t = parse_toolchain(rustc, "cargo 1.95.0 (f2d3ce0bd 2026-03-21)\n").unwrap();
        assert_eq!(t.rustc_version, "1.95.0");
        assert_eq!(t.rustc_commit.as_deref(), Some("59807616e1"));
        assert_eq!(t.host, "x86_64-unknown-linux-gnu");
        assert_eq!(t.llvm_version.as_deref(), Some("20.1.8"));
        assert_eq!(t.fingerprint.len(), 16);
        assert!(parse_toolchain("nothing useful", "").is_err());
    }

    #[test]
    fn fingerprint_ignores_hostname_and_kernel_but_not_hardware() {
        let a = Machine {
            cpu_model: "cpu".into(),
            logical_cores: 2,
            hostname: "a".into(),
            kernel: "6.1".into(),
            ..Machine::default()
        };
        let b = Machine {
            hostname: "b".into(),
            kernel: "6.2".into(),
            ..a.clone()
        };
        let c = Machine {
            logical_cores: 4,
            ..a.clone()
        };
        assert_eq!(fingerprint(&a, None), fingerprint(&b, None));
        assert_ne!(fingerprint(&a, None), fingerprint(&c, None));
        assert_ne!(fingerprint(&a, Some("ci-large")), fingerprint(&a, None));
    }

    #[test]
    fn executables_hash_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, b"abc").unwrap();
        let exe = hash_executable(&a).unwrap();
        // The SHA-256 test vector of "abc" (FIPS 180-2).
        assert_eq!(
            exe.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(exe.bytes, 3);
        let big = dir.path().join("big");
        std::fs::write(&big, vec![7u8; 200_000]).unwrap();
        let copy = dir.path().join("copy");
        std::fs::copy(&big, &copy).unwrap();
        assert_eq!(
            hash_executable(&big).unwrap(),
            hash_executable(&copy).unwrap()
        );
        assert_eq!(hash_executable(&big).unwrap().bytes, 200_000);
        assert!(hash_executable(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn git_outside_a_repository_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git(dir.path()).unwrap(), GitInfo::default());
    }

    #[test]
    fn git_reads_commit_branch_and_dirty_flag() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "one").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let oid = repo
            .commit(Some("HEAD"), &sig, &sig, "first commit\n\nbody", &tree, &[])
            .unwrap();
        let info = git(dir.path()).unwrap();
        assert_eq!(info.commit, Some(oid.to_string()));
        assert_eq!(info.summary.as_deref(), Some("first commit"));
        assert!(info.branch.is_some());
        assert!(!info.dirty);
        std::fs::write(dir.path().join("a.txt"), "two").unwrap();
        assert!(git(dir.path()).unwrap().dirty);
        assert_eq!(
            bench_git::commit_of(dir.path(), "HEAD"),
            Some(oid.to_string())
        );
        assert_eq!(bench_git::commit_of(dir.path(), "no-such-ref"), None);
    }

    /// Runs the git CLI in `dir` (sparse checkout has no libgit2 API to set it up).
    fn git_cli(dir: &Path, args: &[&str]) {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// A committed repository of three files in two directories, then checked out sparsely
    /// (only `kept/`) with `sparse_args` given to `git sparse-checkout init`.
    fn sparse_repo(sparse_args: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git_cli(root, &["init", "-q", "-b", "main"]);
        for file in ["kept/a.txt", "left-out/b.txt", "top.txt"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, file).unwrap();
        }
        git_cli(root, &["add", "."]);
        git_cli(root, &["commit", "-q", "-m", "first"]);
        git_cli(root, &[&["sparse-checkout", "init"], sparse_args].concat());
        git_cli(root, &["sparse-checkout", "set", "kept"]);
        assert!(!root.join("left-out/b.txt").exists(), "git left the file");
        dir
    }

    #[test]
    fn git_sparse_checkout_is_clean_until_a_checked_out_file_changes() {
        for sparse_args in [&[][..], &["--no-cone"], &["--cone", "--sparse-index"]] {
            let dir = sparse_repo(sparse_args);
            let info = git(dir.path()).unwrap();
            assert!(info.commit.is_some(), "{sparse_args:?}");
            assert!(
                !info.dirty,
                "{sparse_args:?}: a sparse checkout is not a change"
            );
            std::fs::write(dir.path().join("kept/a.txt"), "changed").unwrap();
            assert!(
                git(dir.path()).unwrap().dirty,
                "{sparse_args:?}: a change inside the checkout is"
            );
        }
    }
}

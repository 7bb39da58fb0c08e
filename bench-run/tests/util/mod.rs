//! Helpers shared by the integration tests: a copy of the fixture workspace, a `bench-run`
//! command builder, and assertions on its output.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Benchmarks measure time: tests that run a suite take this lock so they do not load the
/// machine for each other (tests of one binary run in parallel threads).
static BENCH_LOCK: Mutex<()> = Mutex::new(());

/// Serialises suite runs within a test binary.
pub fn bench_lock() -> MutexGuard<'static, ()> {
    BENCH_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The committed fixture workspace.
pub fn fixture_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny")
}

/// Where fixture builds go: shared by every test so criterion is compiled once.
pub fn fixture_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixture-target")
}

/// A scratch directory holding a copy of the fixture workspace (outside any git repository)
/// and a ledger path.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    /// A PostgreSQL ledger's URL, when the sandbox records there instead of in its file.
    postgres: Option<String>,
}

impl Sandbox {
    /// A fresh sandbox with the fixture copied in.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&fixture_source(), &dir.path().join("tiny"));
        Self {
            dir,
            postgres: None,
        }
    }

    /// A sandbox whose fixture workspace is a git repository with one commit (`base`).
    pub fn repository() -> Self {
        let sandbox = Self::new();
        let dir = sandbox.workspace();
        git(&dir, &["init", "-q"]);
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "base"]);
        sandbox
    }

    /// A sandbox without the fixture (for import-only tests).
    pub fn empty() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            postgres: None,
        }
    }

    /// An empty sandbox whose ledger is a fresh database on the test PostgreSQL server
    /// (`None` when skipped: no PostgreSQL outside CI).
    #[allow(dead_code)]
    pub fn empty_on_postgres(what: &str) -> Option<Self> {
        let server = testkit::postgres::server(what)?;
        Some(Self {
            dir: tempfile::tempdir().unwrap(),
            postgres: Some(server.create_database()),
        })
    }

    /// A sandbox with the fixture copied in whose ledger is a fresh database on the test
    /// PostgreSQL server (`None` when skipped: no PostgreSQL outside CI).
    #[allow(dead_code)]
    pub fn new_on_postgres(what: &str) -> Option<Self> {
        let server = testkit::postgres::server(what)?;
        let mut sandbox = Self::new();
        sandbox.postgres = Some(server.create_database());
        Some(sandbox)
    }

    /// The fixture workspace.
    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("tiny")
    }

    /// The ledger used by [`Sandbox::bench_run`]: a file in the sandbox, or a PostgreSQL URL.
    pub fn db(&self) -> String {
        self.postgres.clone().unwrap_or_else(|| {
            self.dir
                .path()
                .join("ledger.sqlite")
                .to_string_lossy()
                .into_owned()
        })
    }

    /// `bench-run --db <sandbox ledger>` run in the fixture workspace.
    pub fn bench_run(&self) -> Command {
        let mut command = self.command();
        command.arg("--db").arg(self.db());
        command
    }

    /// Where `bench-run ab` builds in this sandbox (its own, so a test never reuses another's
    /// builds and nothing lands in the user's cache).
    pub fn build_home(&self) -> PathBuf {
        self.dir.path().join("build-home")
    }

    /// `bench-run` run in the fixture workspace, without `--db`.
    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bench-run"));
        let cwd = if self.workspace().exists() {
            self.workspace()
        } else {
            self.dir.path().to_owned()
        };
        command
            .current_dir(cwd)
            .env("CARGO_TARGET_DIR", fixture_target_dir())
            .env("BENCH_RUN_BUILD_HOME", self.build_home())
            .env_remove("BENCH_DB")
            .env_remove("BENCH_PROJECT")
            .env_remove("FIXTURE_SLOWDOWN")
            .env_remove("FIXTURE_CLOCK")
            .env_remove("BENCH_RUN_FAILPOINT");
        command
    }

    /// Runs `bench-run --suite tiny_suite --quick` with extra arguments and environment.
    pub fn quick_run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let _guard = bench_lock();
        let mut command = self.bench_run();
        command
            .args(["--suite", "tiny_suite", "--quick"])
            .args(args);
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    }

    /// Writes a file in the sandbox and returns its path.
    pub fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// Copies a directory tree, leaving out `target/` directories.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the exit code, printing both streams when it differs, and that nothing panicked.
#[track_caller]
pub fn assert_exit(output: &Output, code: i32) {
    let err = stderr(output);
    assert!(!err.contains("panicked"), "bench-run panicked:\n{err}");
    assert_eq!(
        output.status.code(),
        Some(code),
        "expected exit {code}\n--- stdout ---\n{}\n--- stderr ---\n{err}",
        stdout(output)
    );
}

/// Parses standard output as JSON.
#[track_caller]
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", stdout(output)))
}

/// Number of runs in the ledger, via `list --format json`.
pub fn run_count(sandbox: &Sandbox) -> usize {
    let output = sandbox
        .bench_run()
        .args(["list", "--limit", "100000", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    json(&output).as_array().unwrap().len()
}

/// A small BMF document with `n` benchmarks.
pub fn bmf(n: usize, scale: f64) -> String {
    let entries: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""bench_{i}": {{"latency": {{"value": {v}, "lower_value": {l}, "upper_value": {u}}}, "file-size": {{"value": {s}}}}}"#,
                v = 100.0 * scale + i as f64,
                l = 95.0 * scale + i as f64,
                u = 105.0 * scale + i as f64,
                s = 4096 + i
            )
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// Runs `git` in `dir` with a throwaway identity and asserts that it succeeded.
pub fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=bench-run test",
            "-c",
            "user.email=test@example.invalid",
        ])
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

/// Busy-spinning threads on every core until dropped: a CPU load beside a measurement.
pub struct CpuHog {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CpuHog {
    /// Starts one spinning thread per core.
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let threads = (0..cores)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005) ^ 1);
                        }
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The trimmed standard output of `git args` in `dir`.
pub fn git_output(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// The kinds of the artifacts a profile's JSON lists (`"artifacts": [[id, kind], ...]`).
pub fn artifact_kinds(profile: &serde_json::Value) -> Vec<&str> {
    profile["artifacts"]
        .as_array()
        .expect("a profile lists its artifacts")
        .iter()
        .map(|a| a[1].as_str().expect("an artifact's kind"))
        .collect()
}

/// What an A/B or bisect use case reported, in order (`step: `, `note: `, `warning: `).
#[derive(Default)]
pub struct AbEvents(pub Vec<String>);

impl bench_usecases::ab::AbProgress for AbEvents {
    fn step(&mut self, text: &str) {
        self.0.push(format!("step: {text}"));
    }
    fn note(&mut self, text: &str) {
        self.0.push(format!("note: {text}"));
    }
    fn warning(&mut self, text: &str) {
        self.0.push(format!("warning: {text}"));
    }
}

//! A run's identity and where it ran: its source, machine, toolchain, build, commit and the
//! conditions it was measured under. Below the rest of the model (stored runs, artifacts, the
//! results), which names these; lib.rs re-exports them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run's id in the ledger.
pub type RunId = i64;

/// Where a run's results came from. Persisted: codes are permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunSource {
    /// `bench-run --suite` ran criterion itself.
    BenchRun,
    /// `bench-run calibrate` ran the suite repeatedly to learn its noise.
    Calibration,
    /// `import criterion DIR`.
    ImportCriterion,
    /// `import bmf FILE`.
    ImportBmf,
    /// `import hyperfine FILE`.
    ImportHyperfine,
    /// `import cargo-criterion FILE`.
    ImportCargoCriterion,
    /// `interleave`: worker processes ran our benchmarks and an anchor's in alternation.
    Interleaved,
    /// `gate --confirm`: a re-run of only the benchmarks a gate flagged.
    Confirmation,
    /// `ab`: the base side of paired A/B rounds (one value per process and round).
    AbBase,
    /// `ab`: the head side of paired A/B rounds.
    AbHead,
    /// `import libtest FILE`: `cargo +nightly bench` output of `#[bench]` functions.
    ImportLibtest,
    /// `import markdown-log FILE`: an entry of a hand-kept markdown log (BENCHMARKS.md); the
    /// run's recording time is the entry's date.
    ImportMarkdownLog,
    /// `bisect`: the good end of one step's paired rounds (one value per process and round).
    BisectBase,
    /// `bisect`: the commit one step tested, paired with [`RunSource::BisectBase`].
    BisectHead,
    /// `profile`: a build profiled, not timed; its results are the profiles' totals (samples
    /// or instructions) and its artifacts the profiles.
    Profile,
}

impl RunSource {
    /// Permanent storage code.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::BenchRun => 1,
            Self::Calibration => 2,
            Self::ImportCriterion => 3,
            Self::ImportBmf => 4,
            Self::ImportHyperfine => 5,
            Self::ImportCargoCriterion => 6,
            Self::Interleaved => 7,
            Self::Confirmation => 8,
            Self::AbBase => 9,
            Self::AbHead => 10,
            Self::ImportLibtest => 11,
            Self::ImportMarkdownLog => 12,
            Self::BisectBase => 13,
            Self::BisectHead => 14,
            Self::Profile => 15,
        }
    }

    /// Inverse of [`RunSource::code`].
    #[must_use]
    pub const fn from_code(code: i64) -> Option<Self> {
        match code {
            1 => Some(Self::BenchRun),
            2 => Some(Self::Calibration),
            3 => Some(Self::ImportCriterion),
            4 => Some(Self::ImportBmf),
            5 => Some(Self::ImportHyperfine),
            6 => Some(Self::ImportCargoCriterion),
            7 => Some(Self::Interleaved),
            8 => Some(Self::Confirmation),
            9 => Some(Self::AbBase),
            10 => Some(Self::AbHead),
            11 => Some(Self::ImportLibtest),
            12 => Some(Self::ImportMarkdownLog),
            13 => Some(Self::BisectBase),
            14 => Some(Self::BisectHead),
            15 => Some(Self::Profile),
            _ => None,
        }
    }

    /// Stable name used in output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::BenchRun => "bench-run",
            Self::Calibration => "calibration",
            Self::ImportCriterion => "import-criterion",
            Self::ImportBmf => "import-bmf",
            Self::ImportHyperfine => "import-hyperfine",
            Self::ImportCargoCriterion => "import-cargo-criterion",
            Self::Interleaved => "interleaved",
            Self::Confirmation => "confirmation",
            Self::AbBase => "ab-base",
            Self::AbHead => "ab-head",
            Self::ImportLibtest => "import-libtest",
            Self::ImportMarkdownLog => "import-markdown-log",
            Self::BisectBase => "bisect-base",
            Self::BisectHead => "bisect-head",
            Self::Profile => "profile",
        }
    }

    /// Whether the run is one side of paired rounds (`ab`, `bisect`): its values are one per
    /// process and round, measured at another budget, so it is never a run's history.
    #[must_use]
    pub const fn is_paired_side(self) -> bool {
        matches!(
            self,
            Self::AbBase | Self::AbHead | Self::BisectBase | Self::BisectHead
        )
    }

    /// Whether the run's values were measured otherwise than a suite's run (per process and
    /// round, or under a profiler): such a run is never another run's history or baseline.
    #[must_use]
    pub const fn kept_out_of_history(self) -> bool {
        self.is_paired_side() || matches!(self, Self::Profile)
    }

    /// Whether the run is a point of its suite's line, the history a trend draws: not a paired
    /// side (a pull request's `ab` pair belongs to its compare page), a profile or a
    /// confirmation (a re-run of a point already drawn). Quick runs are a flag of their own.
    #[must_use]
    pub const fn is_on_the_line(self) -> bool {
        !self.kept_out_of_history() && !matches!(self, Self::Confirmation)
    }
}

/// The machine a run was measured on. Deduplicated in the ledger by `fingerprint`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Machine {
    /// Stable hash of the hardware identity (see `provenance`).
    pub fingerprint: String,
    /// Host name.
    pub hostname: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Physical cores, where readable.
    pub physical_cores: Option<u32>,
    /// Logical CPUs.
    pub logical_cores: u32,
    /// Installed memory in bytes, where readable.
    pub memory_bytes: Option<u64>,
    /// Operating system name and version.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// The testbed: the machine class a run named with `BENCH_MACHINE` (its fingerprint is
    /// then a hash of this name); `None` for a machine known by its hardware.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testbed: Option<String>,
}

/// The toolchain that built the benchmarks. Deduplicated in the ledger by `fingerprint`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Toolchain {
    /// Hash of `rustc_verbose` and `cargo_version`.
    pub fingerprint: String,
    /// `release:` line of `rustc -vV`, e.g. `1.95.0`.
    pub rustc_version: String,
    /// `commit-hash:` of `rustc -vV`.
    pub rustc_commit: Option<String>,
    /// `host:` of `rustc -vV`.
    pub host: String,
    /// `LLVM version:` of `rustc -vV`.
    pub llvm_version: Option<String>,
    /// Full output of `rustc -vV`.
    pub rustc_verbose: String,
    /// Output of `cargo -V`.
    pub cargo_version: String,
}

/// Git state of the measured workspace. All empty outside a repository.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GitInfo {
    /// Full commit hash of HEAD.
    pub commit: Option<String>,
    /// Branch name, if HEAD is on a branch.
    pub branch: Option<String>,
    /// Whether tracked files differ from HEAD.
    pub dirty: bool,
    /// Commit time of HEAD, seconds since the Unix epoch.
    pub commit_time: Option<i64>,
    /// First line of the commit message.
    pub summary: Option<String>,
}

/// How the benchmarks were built.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BuildConfig {
    /// Cargo profile (`bench` for `cargo bench`).
    pub profile: String,
    /// Features enabled on the command line, sorted (`[]`: none named; the package's default
    /// features apply unless `--no-default-features`).
    pub features: Vec<String>,
    /// The cargo arguments that chose features, as passed: `--features a,b` (two words),
    /// `--all-features`, `--no-default-features`. Runs recorded before bench-run wrote
    /// `--features` here hold only the last two.
    pub feature_flags: Vec<String>,
    /// `RUSTFLAGS`, if set.
    pub rustflags: Option<String>,
}

impl BuildConfig {
    /// The flags that change which features a build gets beyond those named in
    /// [`Self::features`]: `--all-features` and `--no-default-features`, sorted.
    #[must_use]
    pub fn feature_switches(&self) -> Vec<&str> {
        let mut switches: Vec<&str> = self
            .feature_flags
            .iter()
            .map(String::as_str)
            .filter(|f| matches!(*f, "--all-features" | "--no-default-features"))
            .collect();
        switches.sort_unstable();
        switches.dedup();
        switches
    }
}

/// Everything recorded about where a run's numbers came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunProvenance {
    /// Suite (bench target) name.
    pub suite: String,
    /// Cargo package of the suite, when known.
    pub package: Option<String>,
    /// The exact command line of this invocation.
    pub command: Vec<String>,
    /// The cargo command that built and ran the benchmarks, when bench-run ran them.
    pub cargo_command: Option<Vec<String>>,
    /// Working directory of the invocation.
    pub cwd: String,
    /// The machine.
    pub machine: Machine,
    /// The toolchain, when known.
    pub toolchain: Option<Toolchain>,
    /// The build configuration.
    pub build: BuildConfig,
    /// Allow-listed environment variables.
    pub env: BTreeMap<String, String>,
    /// Git state.
    pub git: GitInfo,
    /// CPU frequency governor, where readable.
    pub cpu_governor: Option<String>,
    /// Turbo/boost state, where readable (`on`/`off`).
    pub turbo: Option<String>,
    /// Whether `--quick` shortened the measurement.
    pub quick: bool,
    /// How long the benchmarks ran, in milliseconds.
    pub duration_ms: Option<i64>,
    /// The bench executable that ran, when bench-run built and ran it (imports and
    /// interleaved runs record none).
    #[serde(default)]
    pub bench_exe: Option<BenchExe>,
    /// How busy the machine was while the benchmarks ran (Linux only; see
    /// `bench_runner::conditions`).
    #[serde(default)]
    pub conditions: Option<RunConditions>,
}

/// The bench executable behind a run: two runs of one executable measured the same code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchExe {
    /// SHA-256 of the file, 64 lowercase hex digits.
    pub sha256: String,
    /// Size of the file in bytes.
    pub bytes: u64,
}

impl BenchExe {
    /// Checks the invariants the ledger relies on: 64 lowercase hex digits.
    ///
    /// # Errors
    /// A sentence naming the problem.
    pub fn check(&self) -> Result<(), String> {
        if self.sha256.len() == 64
            && self
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            Ok(())
        } else {
            Err(format!(
                "bench_exe.sha256 must be 64 lowercase hex digits, got {:?}",
                self.sha256.chars().take(80).collect::<String>()
            ))
        }
    }
}

/// The load averages of `/proc/loadavg`: runnable and uninterruptible tasks, averaged
/// exponentially over 1, 5 and 15 minutes (the benchmark itself counts about 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadAverage {
    /// Over the last minute.
    pub one: f64,
    /// Over the last 5 minutes.
    pub five: f64,
    /// Over the last 15 minutes.
    pub fifteen: f64,
}

/// How busy the machine was during one benchmark of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkConditions {
    /// Benchmark full id.
    pub benchmark: String,
    /// Wall time from the start of this benchmark (warm-up included) to the start of the next
    /// or the end of the run, in milliseconds.
    pub wall_ms: u64,
    /// Average number of CPUs that other processes kept busy over that time.
    pub others_cpus: f64,
    /// Share of the machine's CPU time stolen by the hypervisor over that time, in percent.
    pub steal_pct: f64,
}

/// How busy the machine was while a run's benchmarks ran, from `/proc/stat` and the CPU times of
/// bench-run and the benchmark process. "Others" are every process but those two (and their
/// children): compile jobs, other benchmarks, daemons.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConditions {
    /// CPUs the kernel accounts for (`cpuN` lines of `/proc/stat`).
    pub cpus: u32,
    /// Wall time of the benchmark process, in milliseconds.
    pub wall_ms: u64,
    /// Load averages when the benchmark process started.
    pub load_start: Option<LoadAverage>,
    /// Load averages when it ended.
    pub load_end: Option<LoadAverage>,
    /// Average number of CPUs that bench-run and the benchmark process used.
    pub own_cpus: f64,
    /// Average number of CPUs that other processes kept busy over the run.
    pub others_cpus: f64,
    /// Share of the machine's CPU time stolen by the hypervisor over the run, in percent.
    pub steal_pct: f64,
    /// The same per benchmark, in the order they ran.
    #[serde(default)]
    pub per_benchmark: Vec<BenchmarkConditions>,
}

impl RunConditions {
    /// Most benchmarks one run's conditions may list.
    pub const MAX_BENCHMARKS: usize = 100_000;

    /// Checks the invariants the ledger relies on: every figure finite and non-negative, at
    /// most [`RunConditions::MAX_BENCHMARKS`] benchmarks, none with an empty name.
    ///
    /// # Errors
    /// A sentence naming the first problem.
    pub fn check(&self) -> Result<(), String> {
        let figure = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!(
                    "conditions.{name} must be a finite non-negative number, got {v}"
                ))
            }
        };
        figure("own_cpus", self.own_cpus)?;
        figure("others_cpus", self.others_cpus)?;
        figure("steal_pct", self.steal_pct)?;
        for (name, load) in [("load_start", self.load_start), ("load_end", self.load_end)] {
            if let Some(l) = load {
                figure(&format!("{name}.one"), l.one)?;
                figure(&format!("{name}.five"), l.five)?;
                figure(&format!("{name}.fifteen"), l.fifteen)?;
            }
        }
        if self.per_benchmark.len() > Self::MAX_BENCHMARKS {
            return Err(format!(
                "conditions.per_benchmark lists {} benchmarks, more than {}",
                self.per_benchmark.len(),
                Self::MAX_BENCHMARKS
            ));
        }
        for (i, b) in self.per_benchmark.iter().enumerate() {
            if b.benchmark.trim().is_empty() {
                return Err(format!("conditions.per_benchmark[{i}].benchmark is empty"));
            }
            figure(&format!("per_benchmark[{i}].others_cpus"), b.others_cpus)?;
            figure(&format!("per_benchmark[{i}].steal_pct"), b.steal_pct)?;
        }
        Ok(())
    }
}

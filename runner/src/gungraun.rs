//! Instruction-count suites: bench targets written with gungraun (formerly iai-callgrind).
//!
//! A gungraun bench executable does not measure anything itself: its `main` hands the benchmark
//! list to `gungraun-runner`, which runs every benchmark once under valgrind (Callgrind by
//! default) and counts instructions, cache hits and estimated cycles. The counts of one binary are
//! deterministic, so such a suite needs no repetition and no noise model.
//!
//! `bench-run --suite S` takes this path when [`detect`] says the target is a gungraun suite:
//!
//! 1. build the target as for criterion (`cargo bench --no-run`);
//! 2. [`check_tools`]: `gungraun-runner` must be on `PATH` (or at `$GUNGRAUN_RUNNER`) with the
//!    version of the gungraun library in `Cargo.lock`, and valgrind must be installed (or at
//!    `$GUNGRAUN_VALGRIND_BIN`); otherwise a [`GungraunError`] says what to install;
//! 3. `<exe> --bench --list` names the benchmarks (`file::group::function::id: benchmark`);
//! 4. [`run_bench`] runs `<exe> --bench [args]` with `GUNGRAUN_HOME` in a scratch directory,
//!    `GUNGRAUN_SAVE_SUMMARY=json` (one `summary.json` per benchmark) and
//!    `GUNGRAUN_OUTPUT_FORMAT=json` (one JSON line per finished benchmark on standard output,
//!    which drives the progress);
//! 5. [`bench_adapters::gungraun::read_dir`] turns the summaries into measurements
//!    (`instructions`, `estimated_cycles`, `l1_hits`, ...), recorded as an ordinary run.
//!
//! Benchmark ids are `group/function` or `group/function/id` ([`list_id`]); arguments after `--`
//! go to gungraun unchanged (its positional filter, `--callgrind-args=...`), and criterion's
//! `--quick` settings do not apply.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use crate::process::{self, RunOutput, Stream, bench_command};
use crate::suite::{SuiteError, SuiteTarget};

/// The dependency name that marks a package as a possible gungraun suite.
pub const LIBRARY: &str = "gungraun";

/// The runner's program name, used unless `$GUNGRAUN_RUNNER` names another.
pub const RUNNER: &str = "gungraun-runner";

/// Largest bench source file [`detect`] reads (1 MiB).
pub const MAX_SOURCE_BYTES: u64 = 1024 * 1024;

/// What is missing or wrong before a gungraun suite can run. Each message says what to install.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GungraunError {
    /// `gungraun-runner` could not be started.
    #[error(
        "suite {suite} is a gungraun suite, but `{program}` cannot be run ({source}); install it \
         with `cargo install gungraun-runner --version {} --locked` (the version of the gungraun \
         library in Cargo.lock) and make sure it is on PATH, or set GUNGRAUN_RUNNER to its path",
        .library.as_deref().unwrap_or("<gungraun's version>")
    )]
    RunnerMissing {
        /// The suite.
        suite: String,
        /// The program that was tried.
        program: String,
        /// The library version from `Cargo.lock`, when known.
        library: Option<String>,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// `gungraun-runner --version` failed or printed something unexpected.
    #[error("`{program} --version` did not print a version: {output}")]
    RunnerVersionUnreadable {
        /// The program.
        program: String,
        /// What it printed (or its exit status).
        output: String,
    },
    /// The runner's version differs from the library's: gungraun refuses to run.
    #[error(
        "suite {suite} uses gungraun {library} but `{program}` is version {runner}; gungraun \
         needs both at the same version: `cargo install gungraun-runner --version {library} \
         --locked`"
    )]
    VersionMismatch {
        /// The suite.
        suite: String,
        /// The runner program.
        program: String,
        /// Its version.
        runner: String,
        /// The library version in `Cargo.lock`.
        library: String,
    },
    /// valgrind could not be started.
    #[error(
        "suite {suite} is a gungraun suite, which runs under valgrind, but `{program}` cannot be \
         run ({source}); install valgrind (Debian/Ubuntu: `apt-get install valgrind`) or set \
         GUNGRAUN_VALGRIND_BIN to its path"
    )]
    ValgrindMissing {
        /// The suite.
        suite: String,
        /// The program that was tried.
        program: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// A file needed for detection or the version check could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Whether `target` is a gungraun suite: its package depends on `gungraun` and its main source
/// file calls gungraun's `main!` ([`is_gungraun_main`]). A package may hold both criterion and
/// gungraun bench targets, so the package's dependency alone does not decide.
///
/// # Errors
/// [`GungraunError::Io`] when the package depends on gungraun but the source cannot be read.
pub fn detect(target: &SuiteTarget) -> Result<bool, GungraunError> {
    if !target.dependencies.iter().any(|d| d == LIBRARY) {
        return Ok(false);
    }
    let Some(path) = &target.src_path else {
        return Ok(false);
    };
    let io = |source| GungraunError::Io {
        path: path.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_SOURCE_BYTES), &mut text)
        .map_err(io)?;
    Ok(is_gungraun_main(&text))
}

/// Whether a bench source calls gungraun's `main!`: it names one of the macro's two mandatory
/// arguments, `library_benchmark_groups` or `binary_benchmark_groups`.
#[must_use]
pub fn is_gungraun_main(source: &str) -> bool {
    source.contains("library_benchmark_groups") || source.contains("binary_benchmark_groups")
}

/// Versions of package `name` in a `Cargo.lock`, in file order.
#[must_use]
pub fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    let mut versions = Vec::new();
    let mut in_package = false;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            in_package = false;
        } else if let Some(value) = toml_string(line, "name") {
            in_package = value == name;
        } else if in_package && let Some(value) = toml_string(line, "version") {
            versions.push(value.to_owned());
            in_package = false;
        }
    }
    versions
}

/// The value of a `key = "value"` line.
fn toml_string<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.strip_prefix(key)?
        .trim_start()
        .strip_prefix('=')?
        .trim()
        .strip_prefix('"')?
        .strip_suffix('"')
}

/// The version in `gungraun-runner --version` output (`gungraun-runner 0.20.0`).
#[must_use]
pub fn parse_runner_version(output: &str) -> Option<String> {
    let line = output.lines().next()?.trim();
    let (name, version) = line.rsplit_once(' ')?;
    (name.ends_with(RUNNER) && version.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .then(|| version.to_owned())
}

/// The tools a gungraun suite was run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    /// The runner program.
    pub runner: String,
    /// Its version.
    pub runner_version: String,
    /// The valgrind program.
    pub valgrind: String,
}

/// Checks that `gungraun-runner` and valgrind can run and that the runner's version equals the
/// gungraun version in `<workspace_root>/Cargo.lock` (when the lock names exactly one; with
/// several, the runner must match one of them).
///
/// # Errors
/// See [`GungraunError`]: each names the suite and what to install.
pub fn check_tools(suite: &str, workspace_root: &Path) -> Result<Tools, GungraunError> {
    let lock_path = workspace_root.join("Cargo.lock");
    let library = match std::fs::read_to_string(&lock_path) {
        Ok(lock) => locked_versions(&lock, LIBRARY),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(GungraunError::Io {
                path: lock_path,
                source,
            });
        }
    };
    let runner = std::env::var("GUNGRAUN_RUNNER")
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| RUNNER.to_owned());
    let output = Command::new(&runner)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| GungraunError::RunnerMissing {
            suite: suite.to_owned(),
            program: runner.clone(),
            library: library.first().cloned(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    let runner_version = parse_runner_version(&text)
        .filter(|_| output.status.success())
        .ok_or_else(|| GungraunError::RunnerVersionUnreadable {
            program: runner.clone(),
            output: format!("{} ({})", text.trim(), output.status),
        })?;
    if !library.is_empty() && !library.contains(&runner_version) {
        return Err(GungraunError::VersionMismatch {
            suite: suite.to_owned(),
            program: runner,
            runner: runner_version,
            library: library.join(" or "),
        });
    }
    let valgrind = std::env::var("GUNGRAUN_VALGRIND_BIN")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "valgrind".to_owned());
    Command::new(&valgrind)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|source| GungraunError::ValgrindMissing {
            suite: suite.to_owned(),
            program: valgrind.clone(),
            source,
        })?;
    Ok(Tools {
        runner,
        runner_version,
        valgrind,
    })
}

/// Our benchmark id for a `--list` name: `file::group::function[::id]` becomes
/// `group/function[/id]`, the form [`bench_adapters::gungraun`] gives measurements.
#[must_use]
pub fn list_id(listed: &str) -> String {
    let parts: Vec<&str> = listed.split("::").collect();
    match parts.split_first() {
        Some((_, rest)) if rest.len() >= 2 => rest.join("/"),
        _ => listed.to_owned(),
    }
}

/// The ids ([`list_id`]) of the benchmarks `--list` printed, kept when they match `pattern`, a
/// regular expression searched in the id as criterion searches its filter (gungraun's own
/// filter is a glob on the module path, which a criterion-style pattern would not match).
///
/// # Errors
/// When `pattern` is not a regular expression.
pub fn matching_ids(listed: &[String], pattern: Option<&str>) -> Result<Vec<String>, regex::Error> {
    let pattern = pattern.map(regex::Regex::new).transpose()?;
    Ok(listed
        .iter()
        .map(|l| list_id(l))
        .filter(|id| pattern.as_ref().is_none_or(|p| p.is_match(id)))
        .collect())
}

#[derive(Deserialize)]
struct ProgressLine {
    group: String,
    function_name: String,
    #[serde(default)]
    id: Option<String>,
}

/// The benchmark id of one line of `--output-format=json` output, when it is a summary.
#[must_use]
pub fn finished_id(line: &str) -> Option<String> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    let p: ProgressLine = serde_json::from_str(line).ok()?;
    Some(match p.id {
        Some(id) => format!("{}/{}/{id}", p.group, p.function_name),
        None => format!("{}/{}", p.group, p.function_name),
    })
}

/// Runs a gungraun bench executable with its output in `home` (see the module docs), calling
/// `on_progress(n, total, id)` when benchmark `n` of `listed` starts. gungraun reports a
/// benchmark only when it finishes; it runs them in list order, so the next one in `listed` is
/// the one that starts.
///
/// # Errors
/// When the executable cannot be started or exits unsuccessfully (the error holds its last
/// lines of output, where gungraun explains itself).
pub fn run_bench(
    exe: &Path,
    suite: &SuiteTarget,
    args: &[String],
    home: &Path,
    workspace_root: &Path,
    listed: &[String],
    mut on_progress: impl FnMut(usize, usize, &str),
) -> Result<RunOutput, SuiteError> {
    let expected: Vec<String> = listed.iter().map(|l| list_id(l)).collect();
    let total = expected.len();
    let mut command = bench_command(exe, suite, home);
    command
        .env("GUNGRAUN_HOME", home)
        .env("GUNGRAUN_SAVE_SUMMARY", "json")
        .env("GUNGRAUN_OUTPUT_FORMAT", "json")
        .env("GUNGRAUN_WORKSPACE_ROOT", workspace_root)
        .arg("--bench")
        .args(args);
    if let Some(first) = expected.first() {
        on_progress(1, total, first);
    }
    let mut finished = 0usize;
    let elapsed = process::follow(command, exe, &suite.name, |_, stream, line| {
        let finished_now = if stream == Stream::Stdout {
            finished_id(&line)
        } else {
            None
        };
        match finished_now {
            Some(id) => {
                finished += 1;
                if let Some(next) = expected.get(finished) {
                    on_progress(finished + 1, total, next);
                }
                // A summary line is kilobytes of JSON: the tail keeps only its id.
                format!("finished {id}")
            }
            None => line,
        }
    })?;
    Ok(RunOutput {
        elapsed,
        // Counts do not depend on how busy the machine was: nothing is sampled, and the gate
        // never refuses an instruction-count run as busy.
        conditions: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn gungraun_main_is_recognised() {
        let cases = [
            ("main!(library_benchmark_groups = codec);", true),
            (
                "gungraun::main!(\n    config = c;\n    binary_benchmark_groups = cli\n);",
                true,
            ),
            (
                "criterion_group!(benches, bench);\ncriterion_main!(benches);",
                false,
            ),
            ("", false),
        ];
        for (i, (source, want)) in cases.into_iter().enumerate() {
            assert_eq!(is_gungraun_main(source), want, "case {i}");
        }
    }

    #[test]
    fn detect_needs_the_dependency_and_the_main() {
        let dir = tempfile::tempdir().unwrap();
        let bench = dir.path().join("b.rs");
        std::fs::write(&bench, "main!(library_benchmark_groups = g);").unwrap();
        let mut target = SuiteTarget {
            name: "b".into(),
            package: "p".into(),
            package_version: "0.1.0".into(),
            package_id: "p#0.1.0".into(),
            manifest_path: dir.path().join("Cargo.toml"),
            required_features: Vec::new(),
            src_path: Some(bench.clone()),
            dependencies: vec!["criterion".into()],
        };
        assert!(!detect(&target).unwrap(), "no gungraun dependency");
        target.dependencies.push("gungraun".into());
        assert!(detect(&target).unwrap());
        std::fs::write(&bench, "criterion_main!(benches);").unwrap();
        assert!(
            !detect(&target).unwrap(),
            "a criterion target of the package"
        );
        target.src_path = Some(dir.path().join("missing.rs"));
        let err = detect(&target).unwrap_err();
        assert!(err.to_string().contains("missing.rs"), "{err}");
        target.src_path = None;
        assert!(!detect(&target).unwrap());
    }

    #[test]
    fn lock_versions_and_runner_version() {
        let lock = r#"
version = 4

[[package]]
name = "gungraun"
version = "0.20.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "gungraun-runner",
]

[[package]]
name = "gungraun-runner"
version = "0.20.0"

[[package]]
name = "gungraun"
version = "0.19.1"
"#;
        assert_eq!(locked_versions(lock, "gungraun"), ["0.20.0", "0.19.1"]);
        assert_eq!(locked_versions(lock, "gungraun-runner"), ["0.20.0"]);
        assert!(locked_versions(lock, "criterion").is_empty());
        assert!(locked_versions("", "gungraun").is_empty());
        let cases = [
            ("gungraun-runner 0.20.0\n", Some("0.20.0")),
            ("gungraun-runner 0.21.0-rc.1", Some("0.21.0-rc.1")),
            ("/opt/bin/gungraun-runner 1.0.0", Some("1.0.0")),
            ("error: unexpected argument", None),
            ("gungraun-runner", None),
            ("", None),
        ];
        for (i, (text, want)) in cases.into_iter().enumerate() {
            assert_eq!(parse_runner_version(text).as_deref(), want, "case {i}");
        }
    }

    #[test]
    fn errors_say_what_to_install() {
        let missing = GungraunError::RunnerMissing {
            suite: "s".into(),
            program: "gungraun-runner".into(),
            library: Some("0.20.0".into()),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .to_string();
        assert!(
            missing.contains("cargo install gungraun-runner --version 0.20.0 --locked"),
            "{missing}"
        );
        let valgrind = GungraunError::ValgrindMissing {
            suite: "s".into(),
            program: "valgrind".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .to_string();
        assert!(valgrind.contains("apt-get install valgrind"), "{valgrind}");
        let mismatch = GungraunError::VersionMismatch {
            suite: "s".into(),
            program: "gungraun-runner".into(),
            runner: "0.19.1".into(),
            library: "0.20.0".into(),
        }
        .to_string();
        assert!(
            mismatch.contains("0.19.1") && mismatch.contains("--version 0.20.0"),
            "{mismatch}"
        );
    }

    #[test]
    fn ids_from_list_and_output_lines() {
        assert_eq!(
            list_id("mathldbt_instructions::codec::encode::plain"),
            "codec/encode/plain"
        );
        assert_eq!(list_id("file::group::function"), "group/function");
        assert_eq!(list_id("odd"), "odd");
        let listed = [
            "suite::tiny::checksum::n10000".to_owned(),
            "suite::tiny::fnv::kib4".to_owned(),
        ];
        assert_eq!(
            matching_ids(&listed, Some("fnv")).unwrap(),
            ["tiny/fnv/kib4"]
        );
        assert_eq!(matching_ids(&listed, None).unwrap().len(), 2);
        assert_eq!(
            matching_ids(&listed, Some("^tiny/checksum/n1")).unwrap(),
            ["tiny/checksum/n10000"]
        );
        assert!(matching_ids(&listed, Some("fnv(")).is_err());
        let line = r#"{"group":"codec","function_name":"encode","id":"plain","profiles":[]}"#;
        assert_eq!(finished_id(line).as_deref(), Some("codec/encode/plain"));
        let line = r#"  {"group":"g","function_name":"f","version":"7"}"#;
        assert_eq!(finished_id(line).as_deref(), Some("g/f"));
        for other in [
            "",
            "gungraun: Warn: something",
            "{not json",
            r#"{"group":1}"#,
        ] {
            assert_eq!(finished_id(other), None, "{other}");
        }
        // The captured output of a real run gives the adapter's ids.
        let captured = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/testdata/gungraun/first.jsonl"),
        )
        .unwrap();
        let ids: Vec<String> = captured.lines().filter_map(finished_id).collect();
        assert_eq!(ids.len(), 7);
        assert!(ids.contains(&"checksum/fold/small".to_owned()), "{ids:?}");
    }
}

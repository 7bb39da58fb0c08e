//! Instruction profiles of one gungraun benchmark.
//!
//! A gungraun bench executable hands its benchmarks to `gungraun-runner`, which runs each once
//! under callgrind with collection switched on only inside the benchmark function, and leaves
//! callgrind's output in `$GUNGRAUN_HOME/<bench file>/<group>/<function>[.<id>]/`
//! (`callgrind.<function>[.<id>].out`, beside a `.log`; the previous run's files get `.old`).
//! [`capture_gungraun`] runs one benchmark with `GUNGRAUN_HOME` in a scratch directory and reads
//! every current callgrind file there (one per thread when the benchmark starts threads).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::callgrind;
use crate::error::{ProfileError, tail};
use crate::model::{Profile, sorted_costs};
use crate::unit::Unit;

/// Most callgrind files one benchmark may leave (one per thread and dump).
pub const MAX_FILES: usize = 256;

/// Settings of a gungraun capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GungraunOptions {
    /// The runner the bench executable starts (passed as `GUNGRAUN_RUNNER`); `None`: the
    /// executable's own choice, `gungraun-runner` on `PATH`.
    pub runner: Option<String>,
    /// valgrind (passed as `GUNGRAUN_VALGRIND_BIN` when not `valgrind`).
    pub valgrind: String,
    /// Where the bench executable runs; `None`: the current directory.
    pub current_dir: Option<PathBuf>,
}

impl Default for GungraunOptions {
    fn default() -> Self {
        Self {
            runner: None,
            valgrind: "valgrind".to_owned(),
            current_dir: None,
        }
    }
}

/// gungraun's filter (a wildcard over `file::group::function::id`) for a benchmark id
/// `group/function[/id]`, the form the harness records.
#[must_use]
pub fn filter_for(benchmark_id: &str) -> String {
    format!("*::{}", benchmark_id.replace('/', "::"))
}

/// Profiles gungraun benchmark `benchmark_id` (`group/function[/id]`) of bench executable
/// `exe`. `scratch` is an existing, empty directory; the caller removes it.
///
/// # Errors
/// [`ProfileError::ValgrindMissing`], [`ProfileError::RunnerMissing`],
/// [`ProfileError::CommandFailed`] when the benchmark fails, [`ProfileError::BenchmarkNotFound`]
/// when the id matched nothing, [`ProfileError::BenchmarkAmbiguous`] when it matched several,
/// and the errors of [`callgrind::read`].
pub fn capture_gungraun(
    exe: &Path,
    benchmark_id: &str,
    scratch: &Path,
    options: &GungraunOptions,
) -> Result<Profile, ProfileError> {
    check_tool(&options.valgrind, |program, source| {
        ProfileError::ValgrindMissing { program, source }
    })?;
    let runner = options.runner.as_deref().unwrap_or("gungraun-runner");
    check_tool(runner, |program, source| ProfileError::RunnerMissing {
        program,
        source,
    })?;
    let home = scratch.join("gungraun");
    let mut run = Command::new(exe);
    run.arg("--bench")
        .arg(filter_for(benchmark_id))
        .env("GUNGRAUN_HOME", &home)
        .stdin(Stdio::null());
    if let Some(runner) = &options.runner {
        run.env("GUNGRAUN_RUNNER", runner);
    }
    if options.valgrind != "valgrind" {
        run.env("GUNGRAUN_VALGRIND_BIN", &options.valgrind);
    }
    if let Some(dir) = &options.current_dir {
        run.current_dir(dir);
    }
    let output = run
        .output()
        .map_err(ProfileError::io(format!("cannot start {}", exe.display())))?;
    if !output.status.success() {
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        return Err(ProfileError::CommandFailed {
            command: format!("{} --bench {}", exe.display(), filter_for(benchmark_id)),
            status: output.status.to_string(),
            tail: tail(&text, 20),
        });
    }
    let files = callgrind_files(&home)?;
    let mut dirs: Vec<PathBuf> = files
        .iter()
        .filter_map(|f| f.parent().map(Path::to_owned))
        .collect();
    dirs.dedup();
    match dirs.len() {
        0 => Err(ProfileError::BenchmarkNotFound {
            benchmark: benchmark_id.to_owned(),
            exe: exe.to_owned(),
            available: list_benchmarks(exe, options.current_dir.as_deref()),
        }),
        1 => {
            let parts = files
                .iter()
                .map(|f| callgrind::read(f)?.to_profile(&f.display().to_string()))
                .collect::<Result<Vec<_>, _>>()?;
            merge(parts)
        }
        _ => Err(ProfileError::BenchmarkAmbiguous {
            benchmark: benchmark_id.to_owned(),
            matches: dirs
                .iter()
                .map(|d| {
                    d.strip_prefix(&home)
                        .unwrap_or(d)
                        .to_string_lossy()
                        .into_owned()
                })
                .collect(),
        }),
    }
}

/// Runs `program --version`; `missing` builds the error when it cannot start.
fn check_tool(
    program: &str,
    missing: impl FnOnce(String, std::io::Error) -> ProfileError,
) -> Result<(), ProfileError> {
    Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(drop)
        .map_err(|source| missing(program.to_owned(), source))
}

/// The current callgrind files under `home` (`callgrind.*.out`, with an optional numeric
/// part suffix such as `.out.2`; not `.old`, `.log` or flamegraphs), sorted.
///
/// # Errors
/// [`ProfileError::Io`] when a directory cannot be read, [`ProfileError::TooLarge`] past
/// [`MAX_FILES`].
pub fn callgrind_files(home: &Path) -> Result<Vec<PathBuf>, ProfileError> {
    let mut found = Vec::new();
    let mut pending = vec![home.to_owned()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // Nothing ran: gungraun made no directory at all.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir == home => continue,
            Err(e) => {
                return Err(ProfileError::io(format!("cannot list {}", dir.display()))(
                    e,
                ));
            }
        };
        for entry in entries {
            let entry =
                entry.map_err(ProfileError::io(format!("cannot list {}", dir.display())))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(ProfileError::io(format!("cannot stat {}", path.display())))?;
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && is_callgrind_output(&entry.file_name().to_string_lossy()) {
                found.push(path);
                if found.len() > MAX_FILES {
                    return Err(ProfileError::TooLarge {
                        what: format!("the callgrind files under {}", home.display()),
                        limit: MAX_FILES as u64,
                    });
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Whether a file name is a current callgrind output file.
#[must_use]
pub fn is_callgrind_output(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("callgrind.") else {
        return false;
    };
    if rest.ends_with(".out") {
        return true;
    }
    // Parts of one run: `.out.1`, `.out.2`, ...
    rest.rsplit_once(".out.")
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// One profile of several callgrind files of one benchmark (threads, parts): self counts and
/// totals add, folded stacks are concatenated (the flamegraph merges equal stacks).
///
/// # Errors
/// [`ProfileError::NoSamples`] for no parts, [`ProfileError::Corrupt`] when totals overflow.
pub fn merge(parts: Vec<Profile>) -> Result<Profile, ProfileError> {
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Err(ProfileError::NoSamples {
            what: "the benchmark's callgrind files".to_owned(),
        });
    };
    let mut counts: std::collections::HashMap<String, u64> = first
        .functions
        .into_iter()
        .map(|f| (f.name, f.self_count))
        .collect();
    let mut total = first.total;
    let mut folded = first.folded;
    for part in parts {
        let overflow = || ProfileError::Corrupt {
            what: "the benchmark's callgrind files".to_owned(),
            line: 0,
            reason: "instruction counts overflow 64 bits".to_owned(),
        };
        total = total.checked_add(part.total).ok_or_else(overflow)?;
        for f in part.functions {
            let slot = counts.entry(f.name).or_default();
            *slot = slot.checked_add(f.self_count).ok_or_else(overflow)?;
        }
        folded.push_str(&part.folded);
    }
    Ok(Profile {
        unit: Unit::Instructions,
        total,
        functions: sorted_costs(counts.into_iter()),
        folded,
    })
}

/// The benchmarks of `EXE --bench --list` (`file::group::function::id: benchmark`) as
/// `group/function[/id]`, at most 20; empty when it cannot run.
fn list_benchmarks(exe: &Path, dir: Option<&Path>) -> Vec<String> {
    let mut list = Command::new(exe);
    list.args(["--bench", "--list"]).stdin(Stdio::null());
    if let Some(dir) = dir {
        list.current_dir(dir);
    }
    list.output()
        .map(|o| parse_list(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default()
}

/// The ids in gungraun's `--list` output, at most 20.
#[must_use]
pub fn parse_list(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_suffix(": benchmark"))
        .filter_map(|path| {
            path.split_once("::")
                .map(|(_, rest)| rest.replace("::", "/"))
        })
        .take(20)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_file_names() {
        assert_eq!(filter_for("g/digest/kib16"), "*::g::digest::kib16");
        assert_eq!(filter_for("g/digest"), "*::g::digest");
        for (name, want) in [
            ("callgrind.digest.kib16.out", true),
            ("callgrind.digest.kib16.out.2", true),
            ("callgrind.digest.kib16.out.old", false),
            ("callgrind.digest.kib16.log", false),
            ("callgrind.digest.kib16.out.flamegraph.svg", false),
            ("summary.json", false),
        ] {
            assert_eq!(is_callgrind_output(name), want, "{name}");
        }
        let list = "instructions::profiled_group::digest::kib16: benchmark\n\n1 benchmark\n";
        assert_eq!(parse_list(list), ["profiled_group/digest/kib16"]);
    }

    #[test]
    fn files_are_found_and_merged() {
        let home = tempfile::tempdir().unwrap();
        assert!(
            callgrind_files(&home.path().join("none"))
                .unwrap()
                .is_empty()
        );
        let dir = home.path().join("b/g/f.id");
        std::fs::create_dir_all(&dir).unwrap();
        let text = "events: Ir\nfn=a\n1 5\ntotals: 5\n";
        for name in [
            "callgrind.f.id.out",
            "callgrind.f.id.out.2",
            "callgrind.f.id.out.old",
        ] {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let files = callgrind_files(home.path()).unwrap();
        assert_eq!(files.len(), 2);
        let parts = files
            .iter()
            .map(|f| callgrind::read(f).unwrap().to_profile("t").unwrap())
            .collect();
        let merged = merge(parts).unwrap();
        assert_eq!(merged.total, 10);
        assert_eq!(merged.self_count("a"), 10);
        assert!(merge(Vec::new()).is_err());
    }
}

//! What can go wrong while capturing, reading or comparing profiles. Each message says what to
//! do about it.

use std::path::PathBuf;

use crate::unit::Unit;

/// The error of every fallible function of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// `perf` could not be started.
    #[error(
        "cannot run `{program}` ({source}): a wall-time profile needs Linux perf; install it \
         (Debian: `apt-get install linux-perf`, Ubuntu: `linux-tools-generic`) or name its path"
    )]
    PerfMissing {
        /// The program that was tried.
        program: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// The kernel refused perf events to this user.
    #[error(
        "perf may not profile here: kernel.perf_event_paranoid is {}; allow user-space \
         profiling of your own processes with `sysctl kernel.perf_event_paranoid=1` (or 2), or \
         run with CAP_PERFMON. perf said: {detail}",
        paranoid.map_or_else(|| "unreadable".to_owned(), |p| p.to_string())
    )]
    PerfNotPermitted {
        /// `/proc/sys/kernel/perf_event_paranoid`, when it could be read.
        paranoid: Option<i32>,
        /// perf's own explanation (its first lines).
        detail: String,
    },
    /// valgrind could not be started.
    #[error(
        "cannot run `{program}` ({source}): an instruction profile runs under valgrind; install \
         it (Debian/Ubuntu: `apt-get install valgrind`) or set GUNGRAUN_VALGRIND_BIN to its path"
    )]
    ValgrindMissing {
        /// The program that was tried.
        program: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// `gungraun-runner` could not be started.
    #[error(
        "cannot run `{program}` ({source}): a gungraun suite needs `gungraun-runner` at the \
         version of the gungraun library (`cargo install gungraun-runner --version <it> \
         --locked`), on PATH or named by GUNGRAUN_RUNNER"
    )]
    RunnerMissing {
        /// The program that was tried.
        program: String,
        /// Why it could not be started.
        source: std::io::Error,
    },
    /// No benchmark of the executable has this id.
    #[error(
        "no benchmark of {} is called `{benchmark}`{}",
        exe.display(),
        list_hint(available)
    )]
    BenchmarkNotFound {
        /// The id asked for.
        benchmark: String,
        /// The bench executable.
        exe: PathBuf,
        /// The ids the executable lists (possibly cut short).
        available: Vec<String>,
    },
    /// The id names more than one benchmark.
    #[error("`{benchmark}` names {} benchmarks, not one: {}", matches.len(), matches.join(", "))]
    BenchmarkAmbiguous {
        /// The id asked for.
        benchmark: String,
        /// What it matched.
        matches: Vec<String>,
    },
    /// A tool or the bench executable exited unsuccessfully.
    #[error("`{command}` failed ({status}):\n{tail}")]
    CommandFailed {
        /// The command line, for the reader.
        command: String,
        /// Its exit status.
        status: String,
        /// The last lines of its output.
        tail: String,
    },
    /// A profile file or tool output is malformed.
    #[error("{what}, line {line}: {reason}")]
    Corrupt {
        /// The file or stream.
        what: String,
        /// 1-based line number (0: the file as a whole).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A profile file or tool output is larger than this crate reads.
    #[error("{what} is larger than {limit} bytes; not read")]
    TooLarge {
        /// The file or stream.
        what: String,
        /// The cap.
        limit: u64,
    },
    /// A profile counted nothing.
    #[error("{what} holds no samples")]
    NoSamples {
        /// The file or stream.
        what: String,
    },
    /// Two profiles of different units cannot be compared.
    #[error("cannot compare a profile of {base} with one of {head}")]
    UnitMismatch {
        /// The base profile's unit.
        base: Unit,
        /// The head profile's unit.
        head: Unit,
    },
    /// Reading, writing or running something failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The last `n` non-empty lines of `text`: where a failing tool explains itself.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .get(lines.len().saturating_sub(n)..)
        .unwrap_or_default()
        .join("\n")
}

fn list_hint(available: &[String]) -> String {
    if available.is_empty() {
        String::new()
    } else {
        format!("; it has: {}", available.join(", "))
    }
}

impl ProfileError {
    /// An [`ProfileError::Io`] with context.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_do() {
        let missing = ProfileError::PerfMissing {
            program: "perf".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .to_string();
        assert!(missing.contains("linux-perf"), "{missing}");
        let denied = ProfileError::PerfNotPermitted {
            paranoid: Some(3),
            detail: "Access to performance monitoring is limited".into(),
        }
        .to_string();
        assert!(
            denied.contains("is 3") && denied.contains("sysctl kernel.perf_event_paranoid=1"),
            "{denied}"
        );
        assert!(denied.contains("CAP_PERFMON"), "{denied}");
        let valgrind = ProfileError::ValgrindMissing {
            program: "valgrind".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .to_string();
        assert!(valgrind.contains("apt-get install valgrind"), "{valgrind}");
        let none = ProfileError::BenchmarkNotFound {
            benchmark: "dgest".into(),
            exe: PathBuf::from("/t/wall-1"),
            available: vec!["digest".into()],
        }
        .to_string();
        assert!(
            none.contains("`dgest`") && none.contains("it has: digest"),
            "{none}"
        );
    }
}

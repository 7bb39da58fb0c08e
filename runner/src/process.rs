//! The one way a benchmark process is started and followed, whatever tool it was written with:
//! the environment cargo would give it, both output streams read line by line as they come,
//! the last lines kept for the error when it fails.

use crate::suite::{SuiteError, SuiteTarget};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How many of its last output lines a failed benchmark process's error holds.
pub const TAIL_LINES: usize = 40;

/// What a finished suite run produced.
#[derive(Debug)]
pub struct RunOutput {
    /// Wall time of the benchmark executable.
    pub elapsed: Duration,
    /// How busy the machine was meanwhile, over the run and per benchmark (Linux only).
    pub conditions: Option<bench_model::RunConditions>,
}

/// Which stream a line came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A bench executable as cargo would start it for `cargo bench`: in its package's directory,
/// with the `CARGO_*` variables a bench reads, and its tool's output under `home`.
#[must_use]
pub fn bench_command(exe: &Path, suite: &SuiteTarget, home: &Path) -> Command {
    let mut command = Command::new(exe);
    command
        .current_dir(suite.package_dir())
        .env("CRITERION_HOME", home)
        .env("CARGO_MANIFEST_DIR", suite.package_dir())
        .env("CARGO_PKG_NAME", &suite.package)
        .env("CARGO_PKG_VERSION", &suite.package_version)
        .env("CARGO_CRATE_NAME", suite.name.replace('-', "_"));
    command
}

/// Starts `command` (the executable `exe` of suite `suite`) with no input, hands each line of
/// its output to `on_line(pid, stream, line)` as it arrives, and waits for it. `on_line`
/// returns the text to keep for the error tail (a long line may be kept short). Lines are
/// split at `\r` too: criterion redraws its progress in place on terminals.
///
/// # Errors
/// When the process cannot be started or exits unsuccessfully ([`SuiteError::BenchFailed`]
/// with its last [`TAIL_LINES`] lines).
pub fn follow(
    mut command: Command,
    exe: &Path,
    suite: &str,
    mut on_line: impl FnMut(u32, Stream, String) -> String,
) -> Result<Duration, SuiteError> {
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| SuiteError::Io {
            what: format!("cannot start {}", exe.display()),
            source,
        })?;
    let pid = child.id();
    let (sender, receiver) = std::sync::mpsc::channel::<(Stream, String)>();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(spawn_line_reader(out, Stream::Stdout, sender.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(spawn_line_reader(err, Stream::Stderr, sender.clone()));
    }
    drop(sender);
    let mut tail = VecDeque::with_capacity(TAIL_LINES);
    for (stream, line) in receiver {
        let kept = on_line(pid, stream, line);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(kept);
    }
    for reader in readers {
        let _ = reader.join();
    }
    let status = child.wait().map_err(|source| SuiteError::Io {
        what: format!("waiting for {}", exe.display()),
        source,
    })?;
    if !status.success() {
        return Err(SuiteError::BenchFailed {
            suite: suite.to_owned(),
            status: status.to_string(),
            tail: tail.into_iter().collect::<Vec<_>>().join("\n"),
            hint: None,
        });
    }
    Ok(start.elapsed())
}

fn spawn_line_reader(
    stream: impl std::io::Read + Send + 'static,
    tag: Stream,
    sender: std::sync::mpsc::Sender<(Stream, String)>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).split(b'\n') {
            let Ok(line) = line else { break };
            for part in String::from_utf8_lossy(&line).split('\r') {
                if !part.trim().is_empty() && sender.send((tag, part.to_owned())).is_err() {
                    return;
                }
            }
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn follows_both_streams_and_keeps_the_tail_of_a_failure() {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "i=0; while [ $i -lt 50 ]; do echo out$i; i=$((i+1)); done; printf 'a\\rb\\n' >&2; exit 3",
        ]);
        let mut seen = Vec::new();
        let err = follow(command, Path::new("sh"), "demo", |_, stream, line| {
            seen.push((stream, line.clone()));
            line
        })
        .unwrap_err();
        assert_eq!(
            seen.iter().filter(|(s, _)| *s == Stream::Stdout).count(),
            50
        );
        let stderr: Vec<&str> = seen
            .iter()
            .filter(|(s, _)| *s == Stream::Stderr)
            .map(|(_, l)| l.as_str())
            .collect();
        assert_eq!(stderr, ["a", "b"], "split at \\r");
        match err {
            SuiteError::BenchFailed { suite, tail, .. } => {
                assert_eq!(suite, "demo");
                assert_eq!(tail.lines().count(), TAIL_LINES);
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_missing_executable_is_an_error_not_a_panic() {
        let err = follow(
            Command::new("/nonexistent/bench"),
            Path::new("/nonexistent/bench"),
            "demo",
            |_, _, line| line,
        )
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/bench"), "{err}");
    }
}

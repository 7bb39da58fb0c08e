//! The driver side of `bench-run-worker/1` (see the crate docs): a running worker
//! process, its greeting and its trials, with a timeout on every answer.
//!
//! `bench-run interleave` drives its workers through this; a project's tests can use it to
//! check that their own workers speak the protocol.
//!
//! ```no_run
//! use bench_worker::process::WorkerProcess;
//! use std::time::Duration;
//!
//! let mut worker = WorkerProcess::shell("target/release/examples/h2h_worker", ".".as_ref())?;
//! let benchmarks = worker.hello(Duration::from_secs(600))?;
//! let trial = worker.trial(&benchmarks[0].id, Duration::from_secs(60))?;
//! println!("{} ns an iteration", trial.per_iteration_ns());
//! worker.finish(Duration::from_secs(10));
//! # Ok::<(), bench_worker::process::WorkerProcessError>(())
//! ```

use crate::protocol::{InterleaveError, Trial, WorkerBenchmark};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Longest line a worker may send (a bound on what a broken worker can make us hold).
const MAX_LINE: u64 = 1 << 20;

/// What went wrong with a worker; every variant names the worker by its command. The
/// underlying error, where there is one, is the [`std::error::Error::source`] (print the chain,
/// as `{:#}` of an `anyhow::Error` does, to see it).
#[derive(Debug, thiserror::Error)]
pub enum WorkerProcessError {
    /// The process could not be started.
    #[error("cannot start worker `{command}`")]
    Spawn {
        /// The worker's command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// A request could not be written to the worker's stdin.
    #[error("cannot send a request to worker `{command}`")]
    Send {
        /// The worker's command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The worker's output could not be read as protocol lines.
    #[error("worker `{command}` sent {why}")]
    BadOutput {
        /// The worker's command.
        command: String,
        /// What was wrong with it.
        why: String,
    },
    /// The worker said nothing within the timeout.
    #[error("worker `{command}` said nothing for {} s (raise --timeout for slow setups)", .waited.as_secs())]
    Silent {
        /// The worker's command.
        command: String,
        /// How long we waited.
        waited: Duration,
    },
    /// The worker closed its output (it exited, or is about to).
    #[error("worker `{command}` {status}")]
    Gone {
        /// The worker's command.
        command: String,
        /// "exited (...)" or "closed its output".
        status: String,
    },
    /// A trial of a benchmark this worker does not serve under its label.
    #[error("worker `{command}` serves only `{label}/...` benchmarks, not `{id}`")]
    NotLabeled {
        /// The worker's command.
        command: String,
        /// The worker's label.
        label: String,
        /// The benchmark asked for.
        id: String,
    },
    /// A request after [`WorkerProcess::finish`].
    #[error("worker `{command}` is closed")]
    Closed {
        /// The worker's command.
        command: String,
    },
    /// A line that breaks the protocol, or a trial the worker reported as failed.
    #[error("worker `{command}`")]
    Protocol {
        /// The worker's command.
        command: String,
        /// The protocol error.
        source: InterleaveError,
    },
}

/// One running worker: its stdin, and its stdout's lines from a reader thread (so that a silent
/// worker meets a timeout instead of blocking us). Dropped before [`WorkerProcess::finish`], it
/// kills the worker and everything the worker started.
pub struct WorkerProcess {
    command: String,
    /// Put in front of every benchmark name (`label/name`), see [`WorkerProcess::labeled`].
    label: Option<String>,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<String, String>>,
}

impl WorkerProcess {
    /// Starts `sh -c command` in `cwd`, its stderr shared with ours.
    ///
    /// # Errors
    ///
    /// [`WorkerProcessError::Spawn`] when the shell cannot be started.
    pub fn shell(command: &str, cwd: &Path) -> Result<Self, WorkerProcessError> {
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(command).current_dir(cwd);
        Self::start(shell, command)
    }

    /// Starts `cmd` (its stdin and stdout become the protocol's; its stderr is ours), called
    /// `name` in errors.
    ///
    /// # Errors
    ///
    /// [`WorkerProcessError::Spawn`] when the process cannot be started.
    pub fn start(mut cmd: Command, name: &str) -> Result<Self, WorkerProcessError> {
        // Its own process group, so that ending it also ends what it started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let spawn_error = |source| WorkerProcessError::Spawn {
            command: name.to_owned(),
            source,
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(spawn_error)?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| spawn_error(std::io::Error::other("no stdout pipe")))?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            // Until the output ends, the first bad line (sent, then no more), or we hang up.
            while let Some(line) = read_line(&mut reader).transpose() {
                let bad = line.is_err();
                if tx.send(line).is_err() || bad {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Ok(Self {
            command: name.to_owned(),
            label: None,
            child,
            stdin,
            lines,
        })
    }

    /// Names this worker's benchmarks `label/<name>` in [`WorkerProcess::hello`] and
    /// [`WorkerProcess::trial`] (the worker itself still sees its own names), so that two builds
    /// of one worker can run side by side.
    #[must_use]
    pub fn labeled(mut self, label: &str) -> Self {
        self.label = Some(label.to_owned());
        self
    }

    /// Waits up to `timeout` for the worker's greeting: the benchmarks it serves.
    ///
    /// # Errors
    ///
    /// The worker was silent, exited, or greeted in another protocol.
    pub fn hello(&mut self, timeout: Duration) -> Result<Vec<WorkerBenchmark>, WorkerProcessError> {
        let line = self.next_line(timeout)?;
        let mut benchmarks =
            crate::protocol::parse_hello(&line).map_err(|source| self.protocol(source))?;
        if let Some(label) = &self.label {
            for b in &mut benchmarks {
                b.id = format!("{label}/{}", b.id);
            }
        }
        Ok(benchmarks)
    }

    /// Runs one trial of `id`, waiting up to `timeout` for its answer.
    ///
    /// # Errors
    ///
    /// The worker could not be asked, was silent or exited, answered out of protocol, or
    /// reported the trial as failed ([`InterleaveError::TrialFailed`] in
    /// [`WorkerProcessError::Protocol`]).
    pub fn trial(&mut self, id: &str, timeout: Duration) -> Result<Trial, WorkerProcessError> {
        let id = match &self.label {
            None => id,
            Some(label) => id
                .strip_prefix(label.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                .ok_or_else(|| WorkerProcessError::NotLabeled {
                    command: self.command.clone(),
                    label: label.clone(),
                    id: id.to_owned(),
                })?,
        };
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(WorkerProcessError::Closed {
                command: self.command.clone(),
            });
        };
        writeln!(stdin, "{}", crate::protocol::request(id))
            .and_then(|()| stdin.flush())
            .map_err(|source| WorkerProcessError::Send {
                command: self.command.clone(),
                source,
            })?;
        let line = self.next_line(timeout)?;
        crate::protocol::parse_reply(&line, id).map_err(|source| self.protocol(source))
    }

    /// Closes the worker's stdin and waits up to `timeout` for it to exit, then kills it.
    /// Returns whether it exited successfully on its own.
    pub fn finish(&mut self, timeout: Duration) -> bool {
        drop(self.stdin.take());
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.success(),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => break,
            }
        }
        self.kill();
        false
    }

    /// The worker's next non-empty line, within `timeout`.
    fn next_line(&mut self, timeout: Duration) -> Result<String, WorkerProcessError> {
        loop {
            match self.lines.recv_timeout(timeout) {
                Ok(Ok(line)) if line.trim().is_empty() => {}
                Ok(Ok(line)) => return Ok(line),
                Ok(Err(why)) => {
                    return Err(WorkerProcessError::BadOutput {
                        command: self.command.clone(),
                        why,
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(WorkerProcessError::Silent {
                        command: self.command.clone(),
                        waited: timeout,
                    });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.try_wait().ok().flatten().map_or_else(
                        || "closed its output".to_owned(),
                        |s| format!("exited ({s})"),
                    );
                    return Err(WorkerProcessError::Gone {
                        command: self.command.clone(),
                        status,
                    });
                }
            }
        }
    }

    fn protocol(&self, source: InterleaveError) -> WorkerProcessError {
        WorkerProcessError::Protocol {
            command: self.command.clone(),
            source,
        }
    }

    /// Kills the worker's process group (or the worker alone where there are none).
    fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(group) = i32::try_from(self.child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ignored =
                rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ignored = self.child.kill();
        let _ignored = self.child.wait();
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            // An error path: do not leave the worker, or what it started, running.
            self.kill();
        }
    }
}

/// One line of a worker's output, without its line ending: `Ok(None)` at the end of the
/// output, an error for an over-long line, a line that is not UTF-8 or a failed read.
fn read_line(reader: &mut impl BufRead) -> Result<Option<String>, String> {
    let mut buf = Vec::new();
    match reader
        .by_ref()
        .take(MAX_LINE + 1)
        .read_until(b'\n', &mut buf)
    {
        Ok(0) => Ok(None),
        Ok(_) if buf.last() != Some(&b'\n') && buf.len() as u64 > MAX_LINE => {
            Err(format!("a line longer than {MAX_LINE} bytes"))
        }
        Ok(_) => String::from_utf8(buf)
            .map(|l| Some(l.trim_end().to_owned()))
            .map_err(|_| "a line that is not UTF-8".to_owned()),
        Err(e) => Err(format!("cannot read its output: {e}")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{MAX_LINE, read_line};

    #[test]
    fn lines_are_bounded_and_checked() {
        let mut input: &[u8] = b"{\"a\":1}\r\nlast";
        assert_eq!(read_line(&mut input), Ok(Some("{\"a\":1}".to_owned())));
        assert_eq!(read_line(&mut input), Ok(Some("last".to_owned())));
        assert_eq!(read_line(&mut input), Ok(None));

        let long = vec![b'x'; MAX_LINE as usize + 10];
        let err = read_line(&mut long.as_slice()).unwrap_err();
        assert!(err.contains("longer than"), "{err}");

        let mut bad: &[u8] = b"\xff\xfe\n";
        assert_eq!(
            read_line(&mut bad),
            Err("a line that is not UTF-8".to_owned())
        );
    }
}

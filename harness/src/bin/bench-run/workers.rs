//! `bench-run interleave`: worker processes and the trial loop around `harness::interleave`.

use anyhow::{Context, Result, anyhow, bail};
use harness::interleave::{self, Observations, Plan, Step, WorkerBenchmark};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// Longest line a worker may send (a bound on what a broken worker can make us hold).
const MAX_LINE: u64 = 1 << 20;

/// One running worker: its stdin, and its stdout's lines from a reader thread (so that a silent
/// worker meets a timeout instead of blocking us).
pub struct Worker {
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<String, String>>,
}

impl Worker {
    /// Starts `sh -c command` in `cwd`, its stderr shared with ours.
    pub fn spawn(command: &str, cwd: &Path) -> Result<Self> {
        let mut shell = Command::new("sh");
        // Its own process group, so that ending it also ends what it started.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut shell, 0);
        let mut child = shell
            .arg("-c")
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start worker `{command}`"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("worker `{command}` has no stdout"))?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                let line = match reader
                    .by_ref()
                    .take(MAX_LINE + 1)
                    .read_until(b'\n', &mut buf)
                {
                    Ok(0) => break,
                    Ok(_) if buf.last() != Some(&b'\n') && buf.len() as u64 > MAX_LINE => {
                        Err(format!("a line longer than {MAX_LINE} bytes"))
                    }
                    Ok(_) => String::from_utf8(buf)
                        .map(|l| l.trim_end().to_owned())
                        .map_err(|_| "a line that is not UTF-8".to_owned()),
                    Err(e) => Err(format!("cannot read its output: {e}")),
                };
                let stop = line.is_err();
                if tx.send(line).is_err() || stop {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Ok(Self {
            command: command.to_owned(),
            child,
            stdin,
            lines,
        })
    }

    /// The worker's next non-empty line, within `timeout`.
    fn next_line(&mut self, timeout: Duration) -> Result<String> {
        loop {
            match self.lines.recv_timeout(timeout) {
                Ok(Ok(line)) if line.trim().is_empty() => {}
                Ok(Ok(line)) => return Ok(line),
                Ok(Err(why)) => bail!("worker `{}` sent {why}", self.command),
                Err(RecvTimeoutError::Timeout) => {
                    bail!(
                        "worker `{}` said nothing for {} s (raise --timeout for slow setups)",
                        self.command,
                        timeout.as_secs()
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.try_wait().ok().flatten().map_or_else(
                        || "closed its output".to_owned(),
                        |s| format!("exited ({s})"),
                    );
                    bail!("worker `{}` {status}", self.command)
                }
            }
        }
    }

    /// Waits for the worker's greeting.
    pub fn hello(&mut self, timeout: Duration) -> Result<Vec<WorkerBenchmark>> {
        let line = self.next_line(timeout)?;
        interleave::parse_hello(&line).with_context(|| format!("worker `{}`", self.command))
    }

    /// Runs one trial of `id`.
    fn trial(&mut self, id: &str, timeout: Duration) -> Result<interleave::Trial> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("worker `{}` is closed", self.command))?;
        writeln!(stdin, "{}", interleave::request(id))
            .and_then(|()| stdin.flush())
            .with_context(|| format!("cannot send a request to worker `{}`", self.command))?;
        let line = self.next_line(timeout)?;
        interleave::parse_reply(&line, id).with_context(|| format!("worker `{}`", self.command))
    }

    /// Closes the worker's stdin and waits up to `timeout` for it to exit, then kills it.
    fn finish(&mut self, timeout: Duration) {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + timeout;
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
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

impl Drop for Worker {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            // An error path: do not leave the worker, or what it started, running.
            self.kill();
        }
    }
}

/// Runs every step of `steps` on its worker, calling `progress` after each trial.
pub fn run_trials(
    workers: &mut [Worker],
    plan: &Plan,
    steps: &[Step],
    timeout: Duration,
    mut progress: impl FnMut(&str),
) -> Result<Observations> {
    let mut observations = Observations::new();
    for &step in steps {
        let located = plan
            .benchmarks
            .get(step.benchmark)
            .ok_or_else(|| anyhow!("schedule names an unknown benchmark"))?;
        let worker = workers
            .get_mut(located.worker)
            .ok_or_else(|| anyhow!("plan names an unknown worker"))?;
        let trial = worker.trial(&located.benchmark.id, timeout)?;
        interleave::observe(&mut observations, step, trial);
        progress(&located.benchmark.id);
    }
    for worker in workers.iter_mut() {
        worker.finish(Duration::from_secs(10));
    }
    Ok(observations)
}

//! Wall-time profiles of one criterion benchmark with Linux perf.
//!
//! ```text
//! perf record -e cpu-clock -F 997 --call-graph dwarf,8192 --no-buildid --no-bpf-event \
//!     -o S/perf.data \
//!     -- EXE --bench --profile-time T --exact ID        (CRITERION_HOME=S/criterion)
//! perf script [--no-inline] -F comm,tid,time,event,ip,sym,dso -i S/perf.data
//!     | inferno collapse-perf  ->  folded stacks  ->  Profile
//! ```
//!
//! * **`cpu-clock`** is a software event driven by the kernel's high-resolution timer: it
//!   exists on every machine, virtual ones included (hardware `cycles` often does not), and a
//!   sample lands wherever the thread is running, so samples are wall time on the CPU.
//! * **997 Hz**, a prime, so sampling does not fall into step with periodic work; five seconds
//!   give about 5000 samples, and a function's share is known to about ±0.85 points (two
//!   standard errors at a 10% share).
//! * **DWARF unwinding, not frame pointers.** Measured on this workspace's fixture, built by a
//!   default `cargo bench` (release, `debug = false`, so no `.debug_*` sections, but with the
//!   `.eh_frame` unwind tables Rust always emits for panics): with `--call-graph fp`, 0 of
//!   1969 samples in the benchmarked code unwound past the leaf (release builds omit frame
//!   pointers, so the second frame is garbage); with `--call-graph dwarf`, 1798 of 1798
//!   unwound to `std::rt::lang_start_internal`. perf's DWARF unwinder reads `.eh_frame`, so it
//!   needs no debug info. The price is a copy of 8 KiB of stack per sample (about 7 MB of
//!   `perf.data` per second at 997 Hz), kept in the scratch directory.
//! * **No build ids, no BPF events, and inlined frames only where there is debug info.** Each
//!   is a fixed cost of every capture that buys a benchmark's profile nothing. The profile
//!   is read back at once, while the executables it names are still in place, so perf need
//!   not collect build ids: that pass reads every sample again at the end of `perf record`.
//!   BPF events describe the kernel's loaded BPF programs, which perf otherwise reads at
//!   start: `perf record -- /bin/true` took 1.30 s with them and 0.15 s without, on this
//!   machine (perf 6.1; the option exists since perf 5.1).
//!   Inlined frames come from DWARF debug info through addr2line, which is most of the cost
//!   of `perf script` (measured on `decode_zstd_ws`, 5 s: 4.0 s with them, 0.3 s without). A
//!   default `cargo bench` build carries no debug info, so there is nothing inlined to find in
//!   the benchmark's own code and `--no-inline` loses only libc's inlined frames; a build
//!   with `debug = true` in its bench profile gets them (BENCHMARKS.md has the cost).
//! * **criterion's `--profile-time`** iterates one benchmark for T seconds with no analysis and
//!   nothing saved, so the profile holds the routine and little of criterion itself;
//!   `--exact` makes the id a literal name instead of a regular expression (`digest` would
//!   otherwise also run `digest_twice`).
//!
//! * **Kernel frames** appear when the user may profile the kernel (root, or
//!   `perf_event_paranoid` ≤ 1): time in page faults and system calls is then attributed to
//!   kernel functions under the Rust frame that entered them. At the common default of 2,
//!   perf counts user space only and time in the kernel is not sampled.
//!
//! The root frame perf gives a stack is the thread's command name, which for a bench
//! executable carries cargo's hash (`wall-13b9ef424b`); it is renamed to the benchmark id so
//! that base and head flamegraphs line up.

use std::ffi::OsString;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use inferno::collapse::Collapse as _;

use crate::error::{ProfileError, tail};
use crate::model::Profile;
use crate::unit::Unit;

/// Largest `perf script` output read (1 GiB): about three minutes of DWARF samples.
pub const MAX_SCRIPT_BYTES: u64 = 1024 * 1024 * 1024;

/// The fields of `perf script` output: what inferno's perf collapser reads, less the period.
pub const SCRIPT_FIELDS: &str = "comm,tid,time,event,ip,sym,dso";

/// The kernel's limit on a thread's command name, less its terminating NUL (`TASK_COMM_LEN`).
const COMM_LEN: usize = 15;

/// How perf walks the stack at each sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    /// Copy `stack_bytes` of the user stack and unwind it afterwards with `.eh_frame`: works
    /// on release builds without debug info or frame pointers (the default).
    Dwarf {
        /// How much stack to copy per sample; deeper stacks are cut at their outer end.
        stack_bytes: u32,
    },
    /// Follow frame pointers: cheap, but only builds with `-C force-frame-pointers=yes` give
    /// more than the leaf frame.
    FramePointers,
}

impl CallGraph {
    fn arg(self) -> String {
        match self {
            Self::Dwarf { stack_bytes } => format!("dwarf,{stack_bytes}"),
            Self::FramePointers => "fp".to_owned(),
        }
    }
}

/// Settings of a perf capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfOptions {
    /// The perf program.
    pub perf: String,
    /// criterion's `--profile-time`, in whole seconds (criterion needs at least 1).
    pub seconds: u32,
    /// Samples per second.
    pub frequency_hz: u32,
    /// How stacks are walked.
    pub call_graph: CallGraph,
    /// Where the bench executable runs (cargo runs benches in their package's directory);
    /// `None`: the current directory.
    pub current_dir: Option<PathBuf>,
}

impl Default for PerfOptions {
    fn default() -> Self {
        Self {
            perf: "perf".to_owned(),
            seconds: 5,
            frequency_hz: 997,
            call_graph: CallGraph::Dwarf { stack_bytes: 8192 },
            current_dir: None,
        }
    }
}

/// How the benchmark id is handed to criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// `--exact ID` (criterion 0.4 and later).
    Exact,
    /// `^ID$` with the id's regex metacharacters escaped: criterion 0.3 has no `--exact`, and
    /// its filter is a regular expression.
    AnchoredRegex,
}

/// `^id$` matching `id` literally as a regular expression.
#[must_use]
pub fn anchored_regex(id: &str) -> String {
    let mut out = String::with_capacity(id.len() + 2);
    out.push('^');
    for c in id.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('$');
    out
}

/// Whether criterion's output says it does not know `--exact` (clap's complaint in criterion
/// 0.3: "Found argument '--exact' which wasn't expected").
#[must_use]
pub fn rejects_exact(output: &str) -> bool {
    output.contains("'--exact'") && output.contains("wasn't expected")
}

/// The arguments of `perf record` for one benchmark of a criterion executable.
#[must_use]
pub fn record_args(
    options: &PerfOptions,
    data: &Path,
    exe: &Path,
    benchmark_id: &str,
    filter: Filter,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "record",
        "--event",
        "cpu-clock",
        "--freq",
        &options.frequency_hz.to_string(),
        "--call-graph",
        &options.call_graph.arg(),
        "--no-buildid",
        "--no-bpf-event",
        "--output",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    args.push(data.into());
    args.push("--".into());
    args.push(exe.into());
    args.extend(
        ["--bench", "--profile-time", &options.seconds.to_string()]
            .into_iter()
            .map(OsString::from),
    );
    match filter {
        Filter::Exact => args.extend(["--exact".into(), benchmark_id.into()]),
        Filter::AnchoredRegex => args.push(anchored_regex(benchmark_id).into()),
    }
    args
}

/// Profiles benchmark `benchmark_id` of the criterion bench executable `exe` (see the module
/// docs). `scratch` is an existing directory for `perf.data` and criterion's output; the
/// caller removes it.
///
/// # Errors
/// [`ProfileError::PerfMissing`], [`ProfileError::PerfNotPermitted`],
/// [`ProfileError::BenchmarkNotFound`] when no benchmark has that exact id,
/// [`ProfileError::CommandFailed`] when perf or the benchmark fails otherwise, and the errors
/// of [`fold_perf_script`].
pub fn capture_criterion(
    exe: &Path,
    benchmark_id: &str,
    scratch: &Path,
    options: &PerfOptions,
) -> Result<Profile, ProfileError> {
    check_perf(&options.perf)?;
    let data = scratch.join("perf.data");
    let mut output = record(exe, benchmark_id, &data, scratch, options, Filter::Exact)?;
    if !output.status.success() && rejects_exact(&String::from_utf8_lossy(&output.stderr)) {
        output = record(
            exe,
            benchmark_id,
            &data,
            scratch,
            options,
            Filter::AnchoredRegex,
        )?;
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(record_failure(
            &stderr,
            &stdout,
            &output.status.to_string(),
            read_paranoid(),
        ));
    }
    if !profiled(&stdout, benchmark_id) {
        return Err(ProfileError::BenchmarkNotFound {
            benchmark: benchmark_id.to_owned(),
            exe: exe.to_owned(),
            available: list_benchmarks(exe, options.current_dir.as_deref()),
        });
    }
    let folded = run_perf_script(&options.perf, &data, scratch, has_debug_info(exe))?;
    let folded = rename_root(&folded, &comm_of(exe), benchmark_id);
    Profile::from_folded(Unit::Samples, folded, "perf script output")
}

/// Runs `perf record` on the benchmark and collects its output.
fn record(
    exe: &Path,
    benchmark_id: &str,
    data: &Path,
    scratch: &Path,
    options: &PerfOptions,
    filter: Filter,
) -> Result<std::process::Output, ProfileError> {
    let mut record = Command::new(&options.perf);
    record
        .args(record_args(options, data, exe, benchmark_id, filter))
        // criterion's `target/criterion` stays untouched.
        .env("CRITERION_HOME", scratch.join("criterion"))
        .stdin(Stdio::null());
    if let Some(dir) = &options.current_dir {
        record.current_dir(dir);
    }
    record
        .output()
        .map_err(ProfileError::io(format!("cannot start {}", options.perf)))
}

/// Fails with [`ProfileError::PerfMissing`] when `perf --version` cannot run.
fn check_perf(perf: &str) -> Result<(), ProfileError> {
    let missing = |source| ProfileError::PerfMissing {
        program: perf.to_owned(),
        source,
    };
    let status = Command::new(perf)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(missing)?;
    if status.success() {
        Ok(())
    } else {
        // Debian's `perf` wrapper exits non-zero when no perf matches the running kernel.
        Err(missing(std::io::Error::other(format!(
            "`{perf} --version` exited with {status}"
        ))))
    }
}

/// `/proc/sys/kernel/perf_event_paranoid`, when readable.
#[must_use]
pub fn read_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The error for a failed `perf record`: the kernel's refusal when perf says so, else the
/// command's failure with its last lines.
#[must_use]
pub fn record_failure(
    stderr: &str,
    stdout: &str,
    status: &str,
    paranoid: Option<i32>,
) -> ProfileError {
    let refused = [
        "perf_event_paranoid",
        "Access to performance monitoring",
        "No permission to enable",
        "Permission denied",
    ]
    .iter()
    .any(|needle| stderr.contains(needle));
    if refused {
        let detail = stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && *l != "Error:")
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        return ProfileError::PerfNotPermitted { paranoid, detail };
    }
    ProfileError::CommandFailed {
        command: "perf record".to_owned(),
        status: status.to_owned(),
        tail: tail(&format!("{stdout}\n{stderr}"), 20),
    }
}

/// Whether criterion's output says it profiled `id` (`Benchmarking ID: Complete (Analysis
/// Disabled)`). With a filter that matches nothing criterion prints nothing and exits 0.
#[must_use]
pub fn profiled(stdout: &str, id: &str) -> bool {
    let done = format!("Benchmarking {id}: Complete (Analysis Disabled)");
    // criterion rewrites its progress line with carriage returns.
    stdout
        .split(['\n', '\r'])
        .any(|line| line.trim_end() == done)
}

/// The benchmark ids `EXE --bench --list` prints (`id: benchmark`), at most 20; empty when it
/// cannot run (the list only decorates an error).
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

/// The ids of criterion's `--list` output, at most 20.
#[must_use]
pub fn parse_list(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        // criterion 0.4 and later print `id: benchmark`, 0.3 `id: bench`.
        .filter_map(|l| {
            l.strip_suffix(": benchmark")
                .or_else(|| l.strip_suffix(": bench"))
        })
        .take(20)
        .map(str::to_owned)
        .collect()
}

/// Whether the ELF file `exe` carries DWARF debug info, where inlined frames are found; false
/// when it cannot be read as an object file (perf then says what is wrong with it).
#[must_use]
pub fn has_debug_info(exe: &Path) -> bool {
    use object::{Object as _, ObjectSection as _};
    let Ok(file) = std::fs::File::open(exe) else {
        return false;
    };
    // Reads the headers and section table only, not the whole executable.
    let cache = object::ReadCache::new(file);
    let Ok(parsed) = object::File::parse(&cache) else {
        return false;
    };
    [".debug_info", ".zdebug_info"].iter().any(|name| {
        parsed
            .section_by_name(name)
            .is_some_and(|section| section.size() > 0)
    })
}

/// Runs `perf script` on `data` and folds its output, read as it is produced; `inline`:
/// whether to resolve inlined frames (see the module docs).
fn run_perf_script(
    perf: &str,
    data: &Path,
    scratch: &Path,
    inline: bool,
) -> Result<String, ProfileError> {
    let stderr_path = scratch.join("perf-script.stderr");
    let stderr = std::fs::File::create(&stderr_path).map_err(ProfileError::io(format!(
        "cannot create {}",
        stderr_path.display()
    )))?;
    let mut child = Command::new(perf)
        .arg("script")
        // No `period`: inferno would weight each sample by it (nanoseconds for cpu-clock);
        // each sample counts once. No `symoff`: offsets would split a function's frames.
        .args((!inline).then_some("--no-inline"))
        .args(["--fields", SCRIPT_FIELDS, "--input"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(ProfileError::io(format!("cannot start {perf} script")))?;
    let folded = match child.stdout.take() {
        Some(out) => fold_perf_script(out, "perf script output"),
        None => Ok(String::new()),
    };
    if folded.is_err() {
        // Stop it rather than wait for output nobody reads; it may have exited already.
        let _ = child.kill();
    }
    let status = child
        .wait()
        .map_err(ProfileError::io(format!("waiting for {perf} script")))?;
    let folded = folded?;
    if !status.success() {
        let text = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        return Err(ProfileError::CommandFailed {
            command: format!("{perf} script"),
            status: status.to_string(),
            tail: tail(&text, 20),
        });
    }
    Ok(folded)
}

/// Folds `perf script` output into stacks with inferno's perf collapser (frame offsets and
/// addresses dropped, identical stacks summed). At most [`MAX_SCRIPT_BYTES`] are read.
///
/// # Errors
/// [`ProfileError::TooLarge`] past the cap, [`ProfileError::Io`] when reading fails.
pub fn fold_perf_script(reader: impl Read, what: &str) -> Result<String, ProfileError> {
    fold_capped(reader, what, MAX_SCRIPT_BYTES)
}

fn fold_capped(reader: impl Read, what: &str, limit: u64) -> Result<String, ProfileError> {
    let mut capped = Capped {
        inner: reader,
        left: limit,
        exceeded: false,
    };
    let mut options = inferno::collapse::perf::Options::default();
    // One thread: the machine is shared with builders, and folding takes well under a second.
    options.nthreads = 1;
    let mut folder = inferno::collapse::perf::Folder::from(options);
    let mut out = Vec::new();
    let result = folder.collapse(BufReader::new(&mut capped), &mut out);
    if capped.exceeded {
        return Err(ProfileError::TooLarge {
            what: what.to_owned(),
            limit,
        });
    }
    result.map_err(ProfileError::io(format!("reading {what}")))?;
    String::from_utf8(out).map_err(|_| ProfileError::Corrupt {
        what: what.to_owned(),
        line: 0,
        reason: "folded stacks are not UTF-8".to_owned(),
    })
}

/// A reader that fails once more than `left` bytes were asked of it.
struct Capped<R> {
    inner: R,
    left: u64,
    exceeded: bool,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(n)
            }
            None => {
                self.exceeded = true;
                Err(std::io::Error::other("input larger than the cap"))
            }
        }
    }
}

/// The command name the kernel gives a process started from `exe`: its file name, cut to
/// 15 bytes.
#[must_use]
pub fn comm_of(exe: &Path) -> String {
    let name = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut end = name.len().min(COMM_LEN);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name.get(..end).unwrap_or_default().to_owned()
}

/// `folded` with root frame `comm` renamed to `name` (other threads' roots stay as they are).
#[must_use]
pub fn rename_root(folded: &str, comm: &str, name: &str) -> String {
    let name = crate::model::folded_frame_name(name);
    let mut out = String::with_capacity(folded.len());
    for line in folded.lines() {
        match line.strip_prefix(comm) {
            Some(rest) if rest.starts_with(';') || rest.starts_with(' ') => {
                out.push_str(&name);
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn testdata(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/perf")
            .join(name)
    }

    #[test]
    fn record_arguments() {
        let args = record_args(
            &PerfOptions::default(),
            Path::new("/s/perf.data"),
            Path::new("/t/wall-1"),
            "group/digest 16",
            Filter::Exact,
        );
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "record --event cpu-clock --freq 997 --call-graph dwarf,8192 --no-buildid \
             --no-bpf-event --output /s/perf.data \
             -- /t/wall-1 --bench --profile-time 5 --exact group/digest 16"
        );
        let fp = PerfOptions {
            call_graph: CallGraph::FramePointers,
            ..PerfOptions::default()
        };
        let args = record_args(&fp, Path::new("d"), Path::new("e"), "x", Filter::Exact);
        assert!(args.iter().any(|a| a == "fp"));
        let args = record_args(
            &fp,
            Path::new("d"),
            Path::new("e"),
            "g/f(1.5)",
            Filter::AnchoredRegex,
        );
        assert_eq!(args.last().unwrap(), r"^g/f\(1\.5\)$");
        assert!(!args.iter().any(|a| a == "--exact"));
    }

    #[test]
    fn debug_info_is_found_in_the_section_table() {
        // This test executable is built by the test profile, which carries debug info.
        let me = std::env::current_exe().unwrap();
        assert!(has_debug_info(&me), "{}", me.display());
        // Not an object file, empty, missing: no debug info, and no panic.
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("text");
        std::fs::write(&text, b"#!/bin/sh\necho not an ELF file\n").unwrap();
        assert!(!has_debug_info(&text));
        let truncated = dir.path().join("truncated");
        let head = std::fs::read(&me).unwrap();
        std::fs::write(&truncated, &head[..200.min(head.len())]).unwrap();
        assert!(!has_debug_info(&truncated));
        assert!(!has_debug_info(&dir.path().join("missing")));
    }

    #[test]
    fn criterion_03_has_no_exact() {
        // What criterion 0.3.6 (clap 2) prints for `--exact`.
        let clap2 = "error: Found argument '--exact' which wasn't expected, or isn't valid in \
                     this context\n\nUSAGE:\n    wall-1 [FLAGS] [OPTIONS] [FILTER]\n";
        assert!(rejects_exact(clap2));
        assert!(!rejects_exact("error: unexpected argument '--foo' found"));
        assert_eq!(anchored_regex("a.b"), r"^a\.b$");
        assert_eq!(anchored_regex(r"x\y|z"), r"^x\\y\|z$");
    }

    #[test]
    fn criterion_output_says_what_was_profiled() {
        let out = "Benchmarking digest\rBenchmarking digest: Profiling for 5.0000 s\r\
                   Benchmarking digest: Complete (Analysis Disabled)\n";
        assert!(profiled(out, "digest"));
        assert!(!profiled(out, "dig"));
        assert!(!profiled("", "digest"));
        let list = "digest: benchmark\n\ndigest_twice: benchmark\n\n";
        assert_eq!(parse_list(list), ["digest", "digest_twice"]);
        let list_03 = "WARNING: HTML report generation will become ...\n\
                       Gnuplot not found, using plotters backend\nhash/fnv1a: bench\n";
        assert_eq!(parse_list(list_03), ["hash/fnv1a"]);
    }

    #[test]
    fn refusal_is_told_apart_from_failure() {
        let stderr = std::fs::read_to_string(testdata("not_permitted.stderr")).unwrap();
        match record_failure(&stderr, "", "exit status: 255", Some(2)) {
            ProfileError::PerfNotPermitted { paranoid, detail } => {
                assert_eq!(paranoid, Some(2));
                assert!(
                    detail.starts_with("Access to performance monitoring"),
                    "{detail}"
                );
            }
            other => panic!("{other}"),
        }
        match record_failure("bench panicked\n", "out", "exit status: 101", Some(2)) {
            ProfileError::CommandFailed { tail, .. } => assert!(tail.contains("panicked")),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn command_names_and_roots() {
        assert_eq!(
            comm_of(Path::new("/t/release/deps/wall-13b9ef424b158b47")),
            "wall-13b9ef424b"
        );
        assert_eq!(comm_of(Path::new("short")), "short");
        assert_eq!(comm_of(Path::new("ééééééééé")), "ééééééé");
        let folded = "wall-13b9ef424b;main;f 3\nwall-13b9ef424bx;g 1\nother;h 2\n";
        assert_eq!(
            rename_root(folded, "wall-13b9ef424b", "digest"),
            "digest;main;f 3\nwall-13b9ef424bx;g 1\nother;h 2\n"
        );
    }

    #[test]
    fn captured_script_folds_to_full_stacks() {
        let file = std::fs::File::open(testdata("digest.script")).unwrap();
        let folded = fold_perf_script(file, "digest.script").unwrap();
        let folded = rename_root(&folded, "wall-13b9ef424b", "digest");
        let profile = Profile::from_folded(Unit::Samples, folded, "digest.script").unwrap();
        // One count per sample (the fields leave out the period).
        assert_eq!(profile.total, 16);
        assert!(profile.self_count("profiled::fnv1a") > 0, "{profile:?}");
        assert!(profile.self_count("profiled::rotate_sum") > 0);
        // Addresses are gone; every stack starts at the benchmark id.
        assert!(!profile.folded.contains("+0x"));
        assert!(profile.folded.lines().all(|l| l.starts_with("digest;")));
        let deep = profile
            .folded
            .lines()
            .find(|l| l.ends_with(|c: char| c.is_ascii_digit()) && l.contains("profiled::fnv1a"))
            .unwrap();
        assert!(
            deep.contains("main;") && deep.contains("profiled::digest;"),
            "{deep}"
        );
    }

    #[test]
    fn hostile_scripts_are_errors_not_panics() {
        let full = std::fs::read(testdata("digest.script")).unwrap();
        let cut = full.get(..full.len() / 2 + 17).unwrap().to_vec();
        let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 256) as u8).collect();
        let cases: [(&str, Vec<u8>); 4] = [
            ("truncated", cut),
            ("garbage", garbage),
            ("empty", Vec::new()),
            ("header only", b"wall 1 2.0: 1 cpu-clock:\n".to_vec()),
        ];
        for (name, bytes) in cases {
            let folded = fold_perf_script(bytes.as_slice(), name);
            let profile = folded.and_then(|f| Profile::from_folded(Unit::Samples, f, name));
            match (name, profile) {
                ("truncated", Ok(p)) => assert!(p.total > 0),
                (_, Err(ProfileError::NoSamples { .. } | ProfileError::Corrupt { .. })) => {}
                (_, other) => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn oversized_input_is_refused() {
        struct Endless;
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                buf.fill(b'x');
                Ok(buf.len())
            }
        }
        // A small cap: the real one would have the test read a GiB.
        let err = fold_capped(Endless, "endless", 1 << 20).unwrap_err();
        assert!(matches!(err, ProfileError::TooLarge { .. }), "{err}");
    }
}

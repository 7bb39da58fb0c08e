//! Machine conditions during a run: was something else using the CPUs while we measured?
//!
//! A benchmark that shares its cores with a compile job runs slower, and the slowdown is the
//! machine's, not the code's. So while a suite runs, bench-run reads the kernel's counters at
//! the start, at every benchmark boundary and at the end (Linux `/proc`; nothing elsewhere) and
//! records a [`RunConditions`] with the run:
//!
//! ```text
//! /proc/stat "cpu" line     machine-wide ticks: user nice system idle iowait irq softirq steal
//! /proc/self/stat           bench-run's own ticks (utime stime) and its reaped children's
//!                           (cutime cstime; the benchmark process lands there when it exits)
//! /proc/<bench pid>/stat    the running benchmark process's ticks, threads and reaped children
//! /proc/loadavg             load averages at the start and the end (shown, not judged)
//!
//! over a window [a, b]:
//!   total      = Δ(user + nice + system + idle + iowait + irq + softirq + steal)
//!   non-idle   = total - Δ(idle + iowait) - Δ steal
//!   own        = Δ(bench-run + benchmark process ticks)
//!   others     = max(0, non-idle - own)
//!   others_cpus = others / total * cpus        (average CPUs other processes kept busy)
//!   own_cpus    = own / total * cpus
//!   steal_pct   = 100 * Δ steal / total
//! ```
//!
//! Ratios of ticks need neither the tick rate nor a clock: `total / cpus` is the window's wall
//! time in ticks. A window in which no tick elapsed (shorter than about 10 ms) has no figures and
//! is left out.
//!
//! # Busy
//!
//! Whether those figures make a run busy is a verdict, a pure function of the recorded
//! conditions: `assess` and its limits live in `bench-analysis` (`contention`). `/proc/stat`
//! covers the whole machine (in a container, every tenant of the host).
//!
//! The parsers are pure and never panic on malformed text; [`Sampler`] is the thin edge that
//! reads the files.

use bench_model::{BenchmarkConditions, LoadAverage, RunConditions};
use std::time::Instant;

/// Text from `/proc` that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {file}: {reason}")]
pub struct ProcParseError {
    /// Which file (`/proc/stat`, `/proc/<pid>/stat`, `/proc/loadavg`).
    pub file: &'static str,
    /// What was wrong.
    pub reason: String,
}

fn parse_error(file: &'static str, reason: impl Into<String>) -> ProcParseError {
    ProcParseError {
        file,
        reason: reason.into(),
    }
}

/// The machine-wide CPU counters of `/proc/stat`, in clock ticks, summed over every CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// Normal processes in user mode.
    pub user: u64,
    /// Niced processes in user mode.
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while waiting for I/O.
    pub iowait: u64,
    /// Servicing interrupts.
    pub irq: u64,
    /// Servicing soft interrupts.
    pub softirq: u64,
    /// Taken by the hypervisor for other guests.
    pub steal: u64,
    /// Number of `cpuN` lines.
    pub cpus: u32,
}

impl CpuTimes {
    /// Every tick (guest time is already part of `user` and `nice`).
    #[must_use]
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |acc, v| acc.saturating_add(*v))
    }

    /// Idle ticks, waiting for I/O included.
    #[must_use]
    pub fn idle_all(&self) -> u64 {
        self.idle.saturating_add(self.iowait)
    }
}

/// Parses `/proc/stat`: the aggregate `cpu` line and the number of `cpuN` lines.
///
/// Kernels before 2.6.11 print fewer columns; missing ones count as 0. At least user, nice,
/// system and idle must be there.
///
/// # Errors
/// When the `cpu` line is missing or holds something other than counters, or there is no
/// `cpuN` line.
pub fn parse_proc_stat(text: &str) -> Result<CpuTimes, ProcParseError> {
    const FILE: &str = "/proc/stat";
    let mut aggregate = None;
    let mut cpus: u32 = 0;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("cpu") => aggregate = Some(fields.collect::<Vec<_>>()),
            Some(name)
                if name
                    .strip_prefix("cpu")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
            {
                cpus = cpus.saturating_add(1);
            }
            _ => {}
        }
    }
    let fields = aggregate.ok_or_else(|| parse_error(FILE, "no `cpu` line"))?;
    if fields.len() < 4 {
        return Err(parse_error(
            FILE,
            format!("the `cpu` line has {} counters, fewer than 4", fields.len()),
        ));
    }
    let values = fields
        .iter()
        .map(|f| {
            f.parse::<u64>()
                .map_err(|_| parse_error(FILE, format!("`{f}` is not a counter")))
        })
        .collect::<Result<Vec<u64>, _>>()?;
    if cpus == 0 {
        return Err(parse_error(FILE, "no `cpuN` line"));
    }
    let at = |i: usize| values.get(i).copied().unwrap_or(0);
    Ok(CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
        cpus,
    })
}

/// Parses `/proc/<pid>/stat` into the process's CPU ticks: `utime + stime` of all its threads
/// plus `cutime + cstime` of its reaped children.
///
/// # Errors
/// When the line is cut short or a time is not a non-negative integer.
pub fn parse_pid_stat(text: &str) -> Result<u64, ProcParseError> {
    const FILE: &str = "/proc/<pid>/stat";
    // The command name (field 2) is in parentheses and may hold spaces and parentheses itself:
    // the fields after it start after the last ')'.
    let close = text
        .rfind(')')
        .ok_or_else(|| parse_error(FILE, "no `)` after the command name"))?;
    let rest = text.get(close + 1..).unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is fields[0]; utime, stime, cutime, cstime are fields 14 to 17.
    let mut ticks: u64 = 0;
    for (index, name) in [(11, "utime"), (12, "stime"), (13, "cutime"), (14, "cstime")] {
        let field = fields
            .get(index)
            .ok_or_else(|| parse_error(FILE, format!("no `{name}` field")))?;
        let value: u64 = field
            .parse()
            .map_err(|_| parse_error(FILE, format!("`{name}` = `{field}` is not a tick count")))?;
        ticks = ticks.saturating_add(value);
    }
    Ok(ticks)
}

/// Parses `/proc/loadavg` (`0.52 0.58 0.59 1/467 12345`).
///
/// # Errors
/// When one of the first three fields is missing, not a number, negative or not finite.
pub fn parse_loadavg(text: &str) -> Result<LoadAverage, ProcParseError> {
    const FILE: &str = "/proc/loadavg";
    let mut fields = text.split_whitespace();
    let mut next = |name: &str| {
        let field = fields
            .next()
            .ok_or_else(|| parse_error(FILE, format!("no {name}-minute average")))?;
        match field.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(parse_error(
                FILE,
                format!("`{field}` is not a load average"),
            )),
        }
    };
    Ok(LoadAverage {
        one: next("1")?,
        five: next("5")?,
        fifteen: next("15")?,
    })
}

/// One reading of the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Milliseconds since the first reading.
    pub at_ms: u64,
    /// Machine-wide counters.
    pub cpu: CpuTimes,
    /// Ticks of bench-run and the benchmark process so far (see the module docs).
    pub own_ticks: u64,
}

/// What one window `[a, b]` between two readings shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Wall time, milliseconds.
    pub wall_ms: u64,
    /// Average CPUs used by bench-run and the benchmark process.
    pub own_cpus: f64,
    /// Average CPUs other processes kept busy.
    pub others_cpus: f64,
    /// Share of CPU time stolen, percent.
    pub steal_pct: f64,
}

/// The window between readings `a` and `b` (module docs). `None` when no tick elapsed, the
/// counters went backwards (a CPU went offline), or `b` is not after `a`.
#[must_use]
pub fn window(a: &Reading, b: &Reading) -> Option<Window> {
    let total = b.cpu.total().checked_sub(a.cpu.total())?;
    if total == 0 {
        return None;
    }
    let idle = b.cpu.idle_all().checked_sub(a.cpu.idle_all())?;
    let steal = b.cpu.steal.checked_sub(a.cpu.steal)?;
    let non_idle = total.saturating_sub(idle).saturating_sub(steal);
    // Process and machine accounting round differently: own may exceed non-idle by a tick.
    let own = b.own_ticks.saturating_sub(a.own_ticks).min(non_idle);
    let others = non_idle - own;
    let cpus = f64::from(b.cpu.cpus.max(1));
    #[expect(
        clippy::cast_precision_loss,
        reason = "tick counts of one run are far below 2^52"
    )]
    let share = |ticks: u64| ticks as f64 / total as f64;
    Some(Window {
        wall_ms: b.at_ms.checked_sub(a.at_ms)?,
        own_cpus: share(own) * cpus,
        others_cpus: share(others) * cpus,
        steal_pct: share(steal) * 100.0,
    })
}

/// Summarises the readings of one run: `start` before the benchmark process started, one
/// reading at the start of each benchmark (`marks`, in order), `end` after it exited.
/// `None` when the run as a whole shows no tick.
#[must_use]
pub fn summarise(
    start: &Reading,
    marks: &[(String, Reading)],
    end: &Reading,
    load_start: Option<LoadAverage>,
    load_end: Option<LoadAverage>,
) -> Option<RunConditions> {
    let run = window(start, end)?;
    let per_benchmark = marks
        .iter()
        .enumerate()
        .filter_map(|(i, (benchmark, from))| {
            let to = marks.get(i + 1).map_or(end, |(_, r)| r);
            let w = window(from, to)?;
            Some(BenchmarkConditions {
                benchmark: benchmark.clone(),
                wall_ms: w.wall_ms,
                others_cpus: w.others_cpus,
                steal_pct: w.steal_pct,
            })
        })
        .collect();
    Some(RunConditions {
        cpus: end.cpu.cpus,
        wall_ms: run.wall_ms,
        load_start,
        load_end,
        own_cpus: run.own_cpus,
        others_cpus: run.others_cpus,
        steal_pct: run.steal_pct,
        per_benchmark,
    })
}

/// The conditions of several processes as one (the processes of one side of `bench-run ab`):
/// wall times add up, averages are weighted by wall time, the load averages are the first
/// process's at its start and the last one's at its end, and each benchmark's windows merge
/// the same way (in the order benchmarks first appeared). `None` for no process.
#[must_use]
pub fn merge(processes: &[RunConditions]) -> Option<RunConditions> {
    let first = processes.first()?;
    let weighted = |pairs: &mut dyn Iterator<Item = (u64, f64)>| -> (u64, f64) {
        let (mut wall, mut sum) = (0u64, 0.0);
        for (ms, value) in pairs {
            wall = wall.saturating_add(ms);
            #[expect(
                clippy::cast_precision_loss,
                reason = "wall times in ms are far below 2^52"
            )]
            let ms = ms as f64;
            sum += ms * value;
        }
        #[expect(
            clippy::cast_precision_loss,
            reason = "wall times in ms are far below 2^52"
        )]
        let mean = if wall > 0 { sum / wall as f64 } else { 0.0 };
        (wall, mean)
    };
    let (wall_ms, others_cpus) =
        weighted(&mut processes.iter().map(|c| (c.wall_ms, c.others_cpus)));
    let (_, own_cpus) = weighted(&mut processes.iter().map(|c| (c.wall_ms, c.own_cpus)));
    let (_, steal_pct) = weighted(&mut processes.iter().map(|c| (c.wall_ms, c.steal_pct)));
    let mut names: Vec<&str> = Vec::new();
    for c in processes {
        for b in &c.per_benchmark {
            if !names.contains(&b.benchmark.as_str()) {
                names.push(&b.benchmark);
            }
        }
    }
    let per_benchmark = names
        .iter()
        .map(|name| {
            let windows: Vec<&BenchmarkConditions> = processes
                .iter()
                .flat_map(|c| &c.per_benchmark)
                .filter(|b| b.benchmark == *name)
                .collect();
            let (wall_ms, others_cpus) =
                weighted(&mut windows.iter().map(|b| (b.wall_ms, b.others_cpus)));
            let (_, steal_pct) = weighted(&mut windows.iter().map(|b| (b.wall_ms, b.steal_pct)));
            BenchmarkConditions {
                benchmark: (*name).to_owned(),
                wall_ms,
                others_cpus,
                steal_pct,
            }
        })
        .collect();
    Some(RunConditions {
        cpus: first.cpus,
        wall_ms,
        load_start: first.load_start,
        load_end: processes.last().and_then(|c| c.load_end),
        own_cpus,
        others_cpus,
        steal_pct,
        per_benchmark,
    })
}

// ---------------------------------------------------------------------------------------------
// The sampler (I/O)
// ---------------------------------------------------------------------------------------------

/// Reads the counters while a benchmark process runs (Linux; [`Sampler::start`] gives `None`
/// where `/proc` cannot be read). Each reading costs three small file reads.
#[derive(Debug)]
pub struct Sampler {
    started: Instant,
    start: Reading,
    load_start: Option<LoadAverage>,
    marks: Vec<(String, Reading)>,
}

fn read_own_ticks(child: Option<u32>) -> Option<u64> {
    let own = parse_pid_stat(&std::fs::read_to_string("/proc/self/stat").ok()?).ok()?;
    // A child that cannot be read any more has exited; once reaped its ticks are in ours.
    let child = child
        .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .and_then(|text| parse_pid_stat(&text).ok())
        .unwrap_or(0);
    Some(own.saturating_add(child))
}

fn read_loadavg() -> Option<LoadAverage> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?).ok()
}

fn read_at(started: Instant, child: Option<u32>) -> Option<Reading> {
    let cpu = parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?).ok()?;
    Some(Reading {
        at_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        cpu,
        own_ticks: read_own_ticks(child)?,
    })
}

impl Sampler {
    /// Takes the first reading; call it just before starting the benchmark process.
    #[must_use]
    pub fn start() -> Option<Self> {
        let started = Instant::now();
        let load_start = read_loadavg();
        let start = read_at(started, None)?;
        Some(Self {
            started,
            start,
            load_start,
            marks: Vec::new(),
        })
    }

    /// A reading at the start of `benchmark`, with the running benchmark process `child`. A
    /// failed reading is skipped (the previous benchmark's window then runs on).
    pub fn mark(&mut self, benchmark: &str, child: u32) {
        if let Some(reading) = read_at(self.started, Some(child)) {
            self.marks.push((benchmark.to_owned(), reading));
        }
    }

    /// The last reading and the summary; call it after the benchmark process was reaped.
    #[must_use]
    pub fn finish(self) -> Option<RunConditions> {
        let end = read_at(self.started, None)?;
        summarise(
            &self.start,
            &self.marks,
            &end,
            self.load_start,
            read_loadavg(),
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Captured on a 2-CPU VM (kernel 6.x): ten counters per line.
    const STAT: &str = "cpu  49497 0 15392 74545 969 0 80 44 0 0\n\
        cpu0 23702 0 7369 38868 326 0 6 20 0 0\n\
        cpu1 25795 0 8022 35677 643 0 73 23 0 0\n\
        intr 431199 0 0 0 0\n\
        ctxt 1234567\nbtime 1767323045\nprocesses 24580\nprocs_running 3\nprocs_blocked 0\n\
        softirq 1 2 3\n";

    /// Captured `/proc/<pid>/stat` of `cat`.
    const PID_STAT: &str = "24574 (cat) R 24568 24568 17634 0 -1 4194304 102 0 0 0 7 3 2 1 20 0 1 0 70740 3133440 387 18446744073709551615 94884097236992 94884097256873 140723718619760 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94884097272880 94884097274496 94885103562752 140723718625985 140723718626005 140723718626005 140723718627307 0\n";

    #[test]
    fn proc_stat_reads_the_aggregate_line_and_counts_cpus() {
        let t = parse_proc_stat(STAT).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                user: 49497,
                nice: 0,
                system: 15392,
                idle: 74545,
                iowait: 969,
                irq: 0,
                softirq: 80,
                steal: 44,
                cpus: 2,
            }
        );
        assert_eq!(t.total(), 49497 + 15392 + 74545 + 969 + 80 + 44);
        // An old kernel's four columns.
        let old = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((old.idle, old.steal, old.cpus), (4, 0, 1));
    }

    #[test]
    fn malformed_proc_stat_is_an_error() {
        for (i, text) in [
            "",
            "intr 1 2 3\n",
            "cpu 1 2 3\ncpu0 1 2 3\n",
            "cpu 1 2 x 4\ncpu0 1 2 3 4\n",
            "cpu 1 2 -3 4\ncpu0 1 2 3 4\n",
            "cpu 1 2 3 4\n",
            "cpu 1 2 3 4 99999999999999999999999\ncpu0 1\n",
            "\u{0}\u{ff}cpu",
        ]
        .iter()
        .enumerate()
        {
            assert!(parse_proc_stat(text).is_err(), "case {i}: {text:?}");
        }
        let err = parse_proc_stat("cpu 1 2 x 4\ncpu0\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read /proc/stat: `x` is not a counter"
        );
    }

    #[test]
    fn pid_stat_sums_own_and_children_ticks() {
        assert_eq!(parse_pid_stat(PID_STAT).unwrap(), 7 + 3 + 2 + 1);
        // A command name with spaces and parentheses.
        let odd = PID_STAT.replace("(cat)", "(a) b (c))");
        assert_eq!(parse_pid_stat(&odd).unwrap(), 13);
        for (i, text) in [
            "",
            "24574 cat R 1 2",
            "24574 (cat) R 24568 24568",
            &PID_STAT.replace(" 7 3 2 1 ", " 7 3 -2 1 "),
            &PID_STAT.replace(" 7 3 2 1 ", " 7 x 2 1 "),
        ]
        .iter()
        .enumerate()
        {
            assert!(parse_pid_stat(text).is_err(), "case {i}: {text:?}");
        }
    }

    #[test]
    fn loadavg() {
        assert_eq!(
            parse_loadavg("3.27 1.66 0.81 5/124 24573\n").unwrap(),
            LoadAverage {
                one: 3.27,
                five: 1.66,
                fifteen: 0.81
            }
        );
        for text in ["", "1.0 2.0", "1.0 nan 2.0", "-1 0 0", "a b c"] {
            assert!(parse_loadavg(text).is_err(), "{text:?}");
        }
    }

    fn reading(at_ms: u64, busy: u64, idle: u64, steal: u64, own: u64) -> Reading {
        Reading {
            at_ms,
            cpu: CpuTimes {
                user: busy,
                idle,
                steal,
                cpus: 2,
                ..CpuTimes::default()
            },
            own_ticks: own,
        }
    }

    #[test]
    fn window_splits_busy_time_between_us_and_others() {
        // 2 CPUs for 1 s at 100 Hz: 200 ticks. We used 100 (one CPU), others 50, idle 46,
        // steal 4.
        let a = reading(0, 1000, 5000, 10, 300);
        let b = reading(1000, 1150, 5046, 14, 400);
        let w = window(&a, &b).unwrap();
        assert_eq!(w.wall_ms, 1000);
        assert!((w.own_cpus - 1.0).abs() < 1e-12, "{w:?}");
        assert!((w.others_cpus - 0.5).abs() < 1e-12, "{w:?}");
        assert!((w.steal_pct - 2.0).abs() < 1e-12, "{w:?}");
        // Own ticks above the machine's busy ticks (accounting rounding): others are 0.
        let c = reading(1000, 1100, 5100, 10, 500);
        assert!(window(&a, &c).unwrap().others_cpus.abs() < 1e-12);
        // No tick elapsed, or the counters went backwards: no window.
        assert_eq!(window(&a, &a), None);
        assert_eq!(window(&b, &a), None);
    }

    #[test]
    fn summarise_gives_one_window_per_benchmark() {
        let start = reading(0, 0, 0, 0, 0);
        let marks = vec![
            ("a".to_owned(), reading(100, 20, 0, 0, 20)),
            // Same counters as the next mark: a window without ticks is left out.
            ("b".to_owned(), reading(1100, 120, 100, 0, 120)),
            ("c".to_owned(), reading(1100, 120, 100, 0, 120)),
        ];
        let end = reading(2100, 320, 100, 0, 220);
        let c = summarise(&start, &marks, &end, None, None).unwrap();
        assert_eq!(c.wall_ms, 2100);
        assert_eq!(c.cpus, 2);
        let names: Vec<&str> = c
            .per_benchmark
            .iter()
            .map(|b| b.benchmark.as_str())
            .collect();
        assert_eq!(names, ["a", "c"]);
        let last = &c.per_benchmark[1];
        assert_eq!(last.wall_ms, 1000);
        // 200 busy ticks of 200, 100 of them ours: others kept one CPU busy.
        assert!((last.others_cpus - 1.0).abs() < 1e-12, "{last:?}");
        assert_eq!(summarise(&start, &[], &start, None, None), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_sampler_reads_this_machine() {
        let sampler = Sampler::start().unwrap();
        // Burn some CPU so at least one tick passes.
        let mut x = 0u64;
        let until = Instant::now() + std::time::Duration::from_millis(60);
        while Instant::now() < until {
            x = x.wrapping_mul(31).wrapping_add(1);
        }
        std::hint::black_box(x);
        let c = sampler.finish().unwrap();
        assert!(c.cpus >= 1);
        assert!(c.others_cpus >= 0.0 && c.others_cpus <= f64::from(c.cpus));
        assert!(c.load_start.is_some() && c.load_end.is_some());
    }

    #[test]
    fn merging_processes_weights_by_wall_time() {
        let process = |wall_ms: u64, others: f64, bench: &[(&str, u64, f64)]| RunConditions {
            cpus: 2,
            wall_ms,
            load_start: Some(LoadAverage {
                one: wall_ms as f64,
                five: 0.0,
                fifteen: 0.0,
            }),
            load_end: Some(LoadAverage {
                one: others,
                five: 0.0,
                fifteen: 0.0,
            }),
            own_cpus: 1.0,
            others_cpus: others,
            steal_pct: 0.0,
            per_benchmark: bench
                .iter()
                .map(|(b, ms, o)| BenchmarkConditions {
                    benchmark: (*b).to_owned(),
                    wall_ms: *ms,
                    others_cpus: *o,
                    steal_pct: 0.0,
                })
                .collect(),
        };
        let merged = merge(&[
            process(1000, 0.0, &[("a", 600, 0.0), ("b", 400, 0.0)]),
            process(3000, 1.0, &[("b", 1000, 2.0), ("a", 2000, 0.5)]),
        ])
        .unwrap();
        assert_eq!(merged.wall_ms, 4000);
        assert!((merged.others_cpus - 0.75).abs() < 1e-12);
        assert!((merged.own_cpus - 1.0).abs() < 1e-12);
        assert!((merged.load_start.unwrap().one - 1000.0).abs() < 1e-12);
        assert!((merged.load_end.unwrap().one - 1.0).abs() < 1e-12);
        let names: Vec<&str> = merged
            .per_benchmark
            .iter()
            .map(|b| b.benchmark.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        let a = &merged.per_benchmark[0];
        assert_eq!(a.wall_ms, 2600);
        assert!((a.others_cpus - 1000.0 / 2600.0).abs() < 1e-12);
        let b = &merged.per_benchmark[1];
        assert!((b.others_cpus - 2000.0 / 1400.0).abs() < 1e-12);
        assert!(merge(&[]).is_none());
        assert!(merged.check().is_ok());
    }
}

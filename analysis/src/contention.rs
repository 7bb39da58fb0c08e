//! Was the machine busy while a run measured? A verdict on the [`RunConditions`] that
//! bench-run records with every run (how it reads them: `bench_runner::conditions`).
//!
//! A run is **busy** ([`assess`]) when, over the whole run, other processes kept more than
//! [`BUSY_OTHERS_CPUS`] CPUs busy on average or steal exceeded [`BUSY_STEAL_PCT`], or the same
//! held over any one benchmark that lasted at least [`MIN_JUDGED_WINDOW_MS`] (shorter windows
//! hold too few ticks: one 10 ms tick of a daemon in a 40 ms window reads as 0.25 CPUs). Load
//! averages are recorded and shown but not judged: they lag by a minute and count the benchmark
//! itself.

use bench_model::RunConditions;
use serde::Serialize;
use std::fmt;

/// A run is busy when other processes kept more than this many CPUs busy on average, over the
/// run or over one benchmark.
pub const BUSY_OTHERS_CPUS: f64 = 0.25;
/// A run is busy when the hypervisor stole more than this share of the CPU time (percent), over
/// the run or over one benchmark.
pub const BUSY_STEAL_PCT: f64 = 2.0;
/// Benchmarks shorter than this (milliseconds, warm-up included) are recorded but not judged.
pub const MIN_JUDGED_WINDOW_MS: u64 = 1000;

/// Which figure was over its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Average CPUs kept busy by other processes (limit [`BUSY_OTHERS_CPUS`]).
    OthersCpus,
    /// Percent of CPU time stolen (limit [`BUSY_STEAL_PCT`]).
    StealPct,
}

/// One figure over its limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The benchmark whose window it was; `None` for the whole run.
    pub benchmark: Option<String>,
    /// What was measured.
    pub measure: Measure,
    /// The measured value.
    pub value: f64,
    /// Its limit.
    pub limit: f64,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let over = match &self.benchmark {
            Some(b) => format!("during benchmark `{b}`"),
            None => "over the run".to_owned(),
        };
        match self.measure {
            Measure::OthersCpus => write!(
                f,
                "other processes kept {:.2} CPUs busy on average {over} (limit {:.2})",
                self.value, self.limit
            ),
            Measure::StealPct => write!(
                f,
                "the hypervisor stole {:.1}% of the CPU time {over} (limit {:.1}%)",
                self.value, self.limit
            ),
        }
    }
}

/// Every figure of `conditions` over its limit (module docs): the run's first, then each
/// judged benchmark's. Empty when the run was not busy.
#[must_use]
pub fn assess(conditions: &RunConditions) -> Vec<Finding> {
    let check = |benchmark: Option<&str>, others: f64, steal: f64| {
        let mut found = Vec::new();
        if others > BUSY_OTHERS_CPUS {
            found.push(Finding {
                benchmark: benchmark.map(str::to_owned),
                measure: Measure::OthersCpus,
                value: others,
                limit: BUSY_OTHERS_CPUS,
            });
        }
        if steal > BUSY_STEAL_PCT {
            found.push(Finding {
                benchmark: benchmark.map(str::to_owned),
                measure: Measure::StealPct,
                value: steal,
                limit: BUSY_STEAL_PCT,
            });
        }
        found
    };
    let mut findings = check(None, conditions.others_cpus, conditions.steal_pct);
    for b in &conditions.per_benchmark {
        if b.wall_ms >= MIN_JUDGED_WINDOW_MS {
            findings.extend(check(Some(&b.benchmark), b.others_cpus, b.steal_pct));
        }
    }
    findings
}

/// Whether the run was busy ([`assess`] found something). `None` when nothing was recorded.
#[must_use]
pub fn is_busy(conditions: Option<&RunConditions>) -> Option<bool> {
    conditions.map(|c| !assess(c).is_empty())
}

/// The findings in one sentence: the whole-run ones, then the worst benchmark for each measure
/// with how many benchmarks were over, e.g. `other processes kept 1.62 CPUs busy on average over
/// the run (limit 0.25); over the limit during 3 of 3 benchmarks, worst: other processes kept
/// 1.90 CPUs busy on average during benchmark `fnv` (limit 0.25)`.
#[must_use]
pub fn describe(findings: &[Finding]) -> String {
    let mut parts: Vec<String> = findings
        .iter()
        .filter(|f| f.benchmark.is_none())
        .map(ToString::to_string)
        .collect();
    for measure in [Measure::OthersCpus, Measure::StealPct] {
        let over: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.benchmark.is_some() && f.measure == measure)
            .collect();
        let worst = over.iter().max_by(|a, b| a.value.total_cmp(&b.value));
        if let Some(worst) = worst {
            parts.push(if over.len() == 1 {
                worst.to_string()
            } else {
                format!(
                    "over the limit during {} benchmarks, worst: {worst}",
                    over.len()
                )
            });
        }
    }
    parts.join("; ")
}

/// The conditions in one line for `show` and the web run page, e.g. `others 0.03 CPUs, steal
/// 0.0%, ours 1.01 CPUs over 12.3 s on 2 CPUs; load (1 min) 0.41 -> 1.12` ("ours": bench-run and
/// the benchmark process).
#[must_use]
pub fn summary_line(c: &RunConditions) -> String {
    #[expect(clippy::cast_precision_loss, reason = "display only")]
    let seconds = c.wall_ms as f64 / 1000.0;
    let mut line = format!(
        "others {:.2} CPUs, steal {:.1}%, ours {:.2} CPUs over {seconds:.1} s on {} CPUs",
        c.others_cpus, c.steal_pct, c.own_cpus, c.cpus
    );
    if let (Some(a), Some(b)) = (c.load_start, c.load_end) {
        line.push_str(&format!("; load (1 min) {:.2} -> {:.2}", a.one, b.one));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_model::{BenchmarkConditions, LoadAverage};

    fn conditions(others: f64, steal: f64, per: &[(u64, f64, f64)]) -> RunConditions {
        RunConditions {
            cpus: 2,
            wall_ms: 10_000,
            load_start: None,
            load_end: None,
            own_cpus: 1.0,
            others_cpus: others,
            steal_pct: steal,
            per_benchmark: per
                .iter()
                .enumerate()
                .map(
                    |(i, &(wall_ms, others_cpus, steal_pct))| BenchmarkConditions {
                        benchmark: format!("b{i}"),
                        wall_ms,
                        others_cpus,
                        steal_pct,
                    },
                )
                .collect(),
        }
    }

    #[test]
    fn busy_rule_and_its_limits() {
        assert!(assess(&conditions(0.25, 2.0, &[(5000, 0.25, 2.0)])).is_empty());
        let run = assess(&conditions(0.26, 0.0, &[]));
        assert_eq!(run.len(), 1);
        assert_eq!(run[0].measure, Measure::OthersCpus);
        assert_eq!(run[0].benchmark, None);
        let steal = assess(&conditions(0.0, 2.5, &[]));
        assert_eq!(steal[0].measure, Measure::StealPct);
        // One long benchmark over the limit makes the run busy; a short one does not count.
        let one = assess(&conditions(0.1, 0.0, &[(1000, 0.9, 0.0), (999, 3.0, 50.0)]));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].benchmark.as_deref(), Some("b0"));
        assert_eq!(is_busy(Some(&conditions(0.0, 0.0, &[]))), Some(false));
        assert_eq!(is_busy(None), None);
    }

    #[test]
    fn descriptions_name_the_figure_and_its_limit() {
        let findings = assess(&conditions(
            1.62,
            0.0,
            &[(2000, 1.2, 0.0), (2000, 1.9, 0.0), (2000, 0.0, 3.0)],
        ));
        assert_eq!(
            describe(&findings),
            "other processes kept 1.62 CPUs busy on average over the run (limit 0.25); \
             over the limit during 2 benchmarks, worst: other processes kept 1.90 CPUs busy \
             on average during benchmark `b1` (limit 0.25); the hypervisor stole 3.0% of the \
             CPU time during benchmark `b2` (limit 2.0%)"
        );
        let mut c = conditions(0.03, 0.0, &[]);
        c.load_start = Some(LoadAverage {
            one: 0.41,
            five: 0.0,
            fifteen: 0.0,
        });
        c.load_end = Some(LoadAverage {
            one: 1.12,
            five: 0.0,
            fifteen: 0.0,
        });
        assert_eq!(
            summary_line(&c),
            "others 0.03 CPUs, steal 0.0%, ours 1.00 CPUs over 10.0 s on 2 CPUs; load (1 min) 0.41 -> 1.12"
        );
    }
}

//! Synthetic ledgers of a known shape, for the trend benchmark and the load test: big enough to
//! measure the server on, deterministic so that runs compare, and with real features (a step
//! in a third of the series, an annotation) so that change-point detection and annotations do
//! their full work.

use bench_model::{
    BenchmarkId, Direction, Estimate, GitInfo, Machine, Measurement, NewRun, RunProvenance,
    RunSource, Samples, SamplingMode,
};
use bench_store::{Ledger, LedgerError};
use std::collections::BTreeMap;

/// The shape of a synthetic suite: `benchmarks` series over `runs` runs on one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntheticSuite {
    /// Suite name.
    pub suite: String,
    /// Benchmarks per run (named `group_{b/10}/bench_{b:02}`).
    pub benchmarks: usize,
    /// Runs, one commit an hour apart.
    pub runs: usize,
}

impl SyntheticSuite {
    /// The run from which every third benchmark is 15% slower (and which is annotated).
    #[must_use]
    pub fn step_run(&self) -> usize {
        self.runs * 3 / 5
    }

    /// Run `i` (0-based): every benchmark at its own level, ±1% deterministic noise, and a 15%
    /// step at [`Self::step_run`] for every third benchmark.
    #[must_use]
    pub fn run(&self, i: usize) -> NewRun {
        let measurements = (0..self.benchmarks)
            .map(|b| {
                let stepped = b % 3 == 0 && i >= self.step_run();
                let level = 1_000.0 * (1.0 + b as f64) * if stepped { 1.15 } else { 1.0 };
                let v = level * (1.0 + 0.01 * noise(i, b));
                Measurement {
                    benchmark: BenchmarkId::named(format!("group_{}/bench_{b:02}", b / 10)),
                    metric: "time".to_owned(),
                    unit: "ns".to_owned(),
                    direction: Direction::LowerIsBetter,
                    estimate: Estimate {
                        point: v,
                        lower: Some(v * 0.99),
                        upper: Some(v * 1.01),
                        confidence_level: Some(0.95),
                        standard_error: None,
                    },
                    statistics: BTreeMap::new(),
                    throughput: None,
                    samples: None,
                }
            })
            .collect();
        let hour = i64::try_from(i).unwrap_or(i64::MAX / 7_200) * 3_600;
        NewRun {
            source: RunSource::BenchRun,
            provenance: RunProvenance {
                suite: self.suite.clone(),
                command: vec![
                    "bench-run".to_owned(),
                    "--suite".to_owned(),
                    self.suite.clone(),
                ],
                cwd: "/synthetic".to_owned(),
                machine: machine(),
                git: GitInfo {
                    commit: Some(format!("{i:040x}")),
                    branch: Some("main".to_owned()),
                    dirty: false,
                    commit_time: Some(1_700_000_000 + hour),
                    summary: Some(format!("commit {i}")),
                },
                ..RunProvenance::default()
            },
            measurements,
        }
    }

    /// Records every run into `ledger` and annotates the step run.
    ///
    /// # Errors
    /// Whatever recording fails with.
    pub async fn record(&self, ledger: &Ledger) -> Result<(), LedgerError> {
        let mut step_id = None;
        for i in 0..self.runs {
            let id = ledger.record_run(&self.run(i)).await?;
            if i == self.step_run() {
                step_id = Some(id);
            }
        }
        if let Some(id) = step_id {
            ledger.annotate(id, "compiler upgrade").await?;
        }
        Ok(())
    }
}

/// An organisation's ledger: `projects` projects, each with the same suite `benches` (so that
/// names collide across projects, as they do in an organisation) on `testbeds` machine classes;
/// `runs` runs in all, spread round-robin over (project, testbed) lines, each of `benchmarks`
/// results with `samples` raw samples. What the team server's scale is measured on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Organisation {
    /// Projects (`project-0`, `project-1`, ...).
    pub projects: usize,
    /// Machine classes per project (`testbed-0`, ...).
    pub testbeds: usize,
    /// Results per run.
    pub benchmarks: usize,
    /// Runs in all.
    pub runs: usize,
    /// Raw samples per result.
    pub samples: usize,
}

impl Organisation {
    /// The (project, testbed) lines.
    #[must_use]
    pub fn lines(&self) -> usize {
        (self.projects * self.testbeds).max(1)
    }

    /// Runs of one line.
    #[must_use]
    pub fn runs_per_line(&self) -> usize {
        self.runs.div_ceil(self.lines())
    }

    /// The name of project `p`.
    #[must_use]
    pub fn project(p: usize) -> String {
        format!("project-{p}")
    }

    /// Run `i` (0-based) of the whole ledger: its project's name and the run. Runs of a line
    /// are consecutive commits; the lines take turns, as many CI runners pushing at once do.
    #[must_use]
    pub fn run(&self, i: usize) -> (String, NewRun) {
        let line = i % self.lines();
        let (project, testbed) = (line / self.testbeds.max(1), line % self.testbeds.max(1));
        let k = i / self.lines();
        let suite = SyntheticSuite {
            suite: "benches".to_owned(),
            benchmarks: self.benchmarks,
            runs: self.runs_per_line(),
        };
        let mut run = suite.run(k);
        run.provenance.machine.fingerprint = format!("synthetic-testbed-{testbed}");
        run.provenance.machine.testbed = Some(format!("testbed-{testbed}"));
        for m in &mut run.measurements {
            let point = m.estimate.point;
            let iters: Vec<f64> = (1..=self.samples).map(|n| n as f64).collect();
            let times: Vec<f64> = iters
                .iter()
                .enumerate()
                .map(|(n, &it)| point * it * (1.0 + 0.005 * noise(k * 131 + n, line)))
                .collect();
            m.samples = (self.samples > 0)
                .then(|| Samples::new(SamplingMode::Linear, iters, times).ok())
                .flatten();
        }
        (Self::project(project), run)
    }

    /// Records runs `from..to` into `ledger` (each into its project), calling `done(n)` after
    /// each.
    ///
    /// # Errors
    /// Whatever recording fails with.
    pub async fn record_range(
        &self,
        ledger: &Ledger,
        from: usize,
        to: usize,
        mut done: impl FnMut(usize),
    ) -> Result<(), LedgerError> {
        let mut handles: BTreeMap<String, Ledger> = BTreeMap::new();
        for i in from..to.min(self.runs) {
            let (project, run) = self.run(i);
            let handle = match handles.get(&project) {
                Some(h) => h.clone(),
                None => {
                    let name = bench_model::Project::new(&project)
                        .map_err(|e| LedgerError::Invalid(e.to_string()))?;
                    let h = ledger.in_project(&name);
                    handles.insert(project, h.clone());
                    h
                }
            };
            handle.record_run(&run).await?;
            done(i);
        }
        Ok(())
    }
}

fn machine() -> Machine {
    Machine {
        fingerprint: "synthetic-machine".to_owned(),
        hostname: "synthetic".to_owned(),
        cpu_model: "Synthetic CPU".to_owned(),
        physical_cores: Some(2),
        logical_cores: 2,
        memory_bytes: Some(24 << 30),
        os: "Debian GNU/Linux 12".to_owned(),
        kernel: "6.1".to_owned(),
        arch: "x86_64".to_owned(),
        testbed: None,
    }
}

/// Deterministic noise in [-1, 1] for run `a`, benchmark `b` (a hash, not a generator, so any
/// run can be made alone).
fn noise(a: usize, b: usize) -> f64 {
    let mut x = (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (b as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    (x % 2001) as f64 / 1000.0 - 1.0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn runs_are_deterministic_and_step_where_promised() {
        let s = SyntheticSuite {
            suite: "s".to_owned(),
            benchmarks: 4,
            runs: 10,
        };
        assert_eq!(s.step_run(), 6);
        assert_eq!(s.run(3), s.run(3));
        let before = s.run(5).measurements[0].estimate.point;
        let after = s.run(6).measurements[0].estimate.point;
        assert!(
            after / before > 1.12 && after / before < 1.18,
            "{before} -> {after}"
        );
        let unstepped =
            s.run(6).measurements[1].estimate.point / s.run(5).measurements[1].estimate.point;
        assert!((unstepped - 1.0).abs() < 0.021, "{unstepped}");
        assert!((0..100).all(|i| (-1.0..=1.0).contains(&noise(i, 7))));
    }

    #[test]
    fn an_organisation_spreads_its_runs_over_projects_and_testbeds() {
        let org = Organisation {
            projects: 3,
            testbeds: 2,
            benchmarks: 5,
            runs: 12,
            samples: 4,
        };
        assert_eq!((org.lines(), org.runs_per_line()), (6, 2));
        let (p0, r0) = org.run(0);
        let (p1, r1) = org.run(1);
        let (p2, _) = org.run(2);
        assert_eq!(
            (p0.as_str(), p1.as_str(), p2.as_str()),
            ("project-0", "project-0", "project-1")
        );
        assert_ne!(
            r0.provenance.machine.fingerprint,
            r1.provenance.machine.fingerprint
        );
        assert_eq!(r0.provenance.suite, "benches");
        assert_eq!(r0.measurements.len(), 5);
        assert_eq!(
            r0.measurements[0]
                .samples
                .as_ref()
                .unwrap()
                .times_ns()
                .len(),
            4
        );
        // Run 6 is line 0's second commit.
        assert_ne!(org.run(6).1.provenance.git.commit, r0.provenance.git.commit);
        assert_eq!(org.run(6).0, "project-0");
    }
}

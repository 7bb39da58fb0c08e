//! Read-only ledger queries shaped for the web app (`bench-web`).
//!
//! These sit beside the core operations of [`crate::ledger`] as a second `impl Ledger` block:
//! the dashboard needs the newest run of every suite and machine, the run filters need the
//! machines, and a trend page needs every headline estimate of a suite on one machine in commit
//! order. Nothing here writes.

use crate::ledger::{Ledger, LedgerError, RunId};
use crate::model::Direction;
use serde::Serialize;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use std::collections::HashMap;

/// A machine seen in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineSummary {
    /// Machine row id.
    pub id: i64,
    /// Fingerprint (see `provenance`).
    pub fingerprint: String,
    /// CPU model.
    pub cpu_model: String,
    /// Operating system.
    pub os: String,
    /// Number of runs (of the suite asked about, if any).
    pub runs: i64,
    /// Newest of those runs.
    pub latest_run: RunId,
}

/// A run of a trend, in commit order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrendRun {
    /// Run id.
    pub id: RunId,
    /// Git commit.
    pub git_commit: Option<String>,
    /// Commit time, seconds since the epoch.
    pub git_commit_time: Option<i64>,
    /// When the run was recorded (RFC 3339, UTC).
    pub created_at: String,
}

/// One headline estimate of a trend series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrendValue {
    /// Index of the run in [`TrendData::runs`].
    #[serde(skip)]
    pub run: usize,
    /// Run id.
    pub run_id: RunId,
    /// Headline estimate.
    pub estimate: f64,
    /// Lower confidence bound.
    pub lower: Option<f64>,
    /// Upper confidence bound.
    pub upper: Option<f64>,
}

/// The headline estimates of one benchmark and metric, in commit order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendSeries {
    /// Benchmark full id.
    pub benchmark: String,
    /// Metric.
    pub metric: String,
    /// Unit (of the first run that has the series).
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// The values, in commit order.
    pub values: Vec<TrendValue>,
}

/// What [`Ledger::trend`] returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendData {
    /// The runs, in commit order.
    pub runs: Vec<TrendRun>,
    /// One series per benchmark and metric, by benchmark then metric.
    pub series: Vec<TrendSeries>,
}

/// An annotation together with the run it is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAnnotation {
    /// The annotated run.
    pub run_id: RunId,
    /// When it was written.
    pub created_at: String,
    /// What it says.
    pub text: String,
}

impl Ledger {
    /// Machines with runs (of `suite`, if given), by row id.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn machines(&self, suite: Option<&str>) -> Result<Vec<MachineSummary>, LedgerError> {
        let rows = sqlx::query(
            "SELECT m.id, m.fingerprint, m.cpu_model, m.os, COUNT(r.id) AS runs, MAX(r.id) AS latest
             FROM machines m JOIN runs r ON r.machine_id = m.id
             WHERE (? IS NULL OR r.suite = ?)
             GROUP BY m.id ORDER BY m.id",
        )
        .bind(suite)
        .bind(suite)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(MachineSummary {
                    id: r.try_get("id")?,
                    fingerprint: r.try_get("fingerprint")?,
                    cpu_model: r.try_get("cpu_model")?,
                    os: r.try_get("os")?,
                    runs: r.try_get("runs")?,
                    latest_run: r.try_get("latest")?,
                })
            })
            .collect()
    }

    /// The newest run of every (suite, machine) pair, ordered by suite, then newest first.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn latest_runs_per_machine(&self) -> Result<Vec<RunId>, LedgerError> {
        Ok(sqlx::query_scalar(
            "SELECT MAX(id) AS latest FROM runs GROUP BY suite, machine_id
             ORDER BY suite, latest DESC",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// Whether the ledger holds any run of `suite`.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn has_suite(&self, suite: &str) -> Result<bool, LedgerError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM runs WHERE suite = ? LIMIT 1")
            .bind(suite)
            .fetch_optional(self.pool())
            .await?;
        Ok(found.is_some())
    }

    /// Every headline estimate of `suite` (on machine `machine_id`, if given): the runs in
    /// commit order (git commit time, falling back to the recording time for runs outside git,
    /// then run id) and one series per benchmark and metric (sorted by both) whose values
    /// follow that order. The input of the trend charts.
    ///
    /// Run-level fields are read once per run and series names once per series rather than
    /// once per result, and rows are grouped and ordered in memory: a suite of 50 benchmarks x
    /// 1,000 runs is two concurrent index lookups of narrow rows, not a 50,000-row sort of wide
    /// ones.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    pub async fn trend(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<TrendData, LedgerError> {
        let run_rows = sqlx::query(
            "SELECT id, git_commit, git_commit_time, created_at FROM runs
             WHERE suite = ? AND (? IS NULL OR machine_id = ?)
             ORDER BY COALESCE(git_commit_time, CAST(strftime('%s', created_at) AS INTEGER)), id",
        )
        .bind(suite)
        .bind(machine_id)
        .bind(machine_id)
        .fetch_all(self.pool())
        .await?;
        let runs = run_rows
            .iter()
            .map(|r| {
                Ok(TrendRun {
                    id: r.try_get(0)?,
                    git_commit: r.try_get(1)?,
                    git_commit_time: r.try_get(2)?,
                    created_at: r.try_get(3)?,
                })
            })
            .collect::<Result<Vec<_>, LedgerError>>()?;
        let position: HashMap<RunId, usize> =
            runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();

        // The results of the runs listed above, in two halves read concurrently (each pool
        // connection decodes rows on its own thread).
        let ids: Vec<RunId> = runs.iter().map(|r| r.id).collect();
        let (older, newer) = ids.split_at(ids.len() / 2);
        let (older, newer) = tokio::try_join!(self.trend_rows(older), self.trend_rows(newer))?;
        let mut index: HashMap<String, usize> = HashMap::new();
        // Per series: its key and a run that has it.
        let mut keys: Vec<(String, RunId)> = Vec::new();
        let mut values: Vec<Vec<TrendValue>> = Vec::new();
        for r in older.iter().chain(&newer) {
            let run_id: RunId = r.try_get(0)?;
            let Some(&run) = position.get(&run_id) else {
                continue;
            };
            let key: &str = r.try_get(1)?;
            let i = if let Some(&i) = index.get(key) {
                i
            } else {
                index.insert(key.to_owned(), keys.len());
                keys.push((key.to_owned(), run_id));
                values.push(Vec::new());
                keys.len() - 1
            };
            if let Some(v) = values.get_mut(i) {
                v.push(TrendValue {
                    run,
                    run_id,
                    estimate: r.try_get(2)?,
                    lower: r.try_get(3)?,
                    upper: r.try_get(4)?,
                });
            }
        }
        // Names, unit and direction of every series, from the first run that has it: one
        // query over the (usually very few) distinct first runs.
        let mut first_runs: Vec<RunId> = keys.iter().map(|(_, run)| *run).collect();
        first_runs.sort_unstable();
        first_runs.dedup();
        let first_runs =
            serde_json::to_string(&first_runs).map_err(|e| LedgerError::Corrupt(e.to_string()))?;
        let meta_rows = sqlx::query(
            "SELECT run_id, length(benchmark) || ':' || benchmark || metric, benchmark, metric,
                    unit, direction
             FROM results WHERE run_id IN (SELECT value FROM json_each(?))",
        )
        .bind(first_runs)
        .fetch_all(self.pool())
        .await?;
        let mut meta: HashMap<(RunId, &str), &SqliteRow> = HashMap::new();
        for r in &meta_rows {
            meta.insert((r.try_get(0)?, r.try_get(1)?), r);
        }
        let mut series = Vec::with_capacity(keys.len());
        for ((key, run_id), values) in keys.iter().zip(values) {
            let row = meta.get(&(*run_id, key.as_str())).ok_or_else(|| {
                LedgerError::Corrupt(format!("result {key:?} of run {run_id} vanished"))
            })?;
            let code: i64 = row.try_get(5)?;
            series.push(TrendSeries {
                benchmark: row.try_get(2)?,
                metric: row.try_get(3)?,
                unit: row.try_get(4)?,
                direction: Direction::from_code(code).ok_or_else(|| {
                    LedgerError::Corrupt(format!("unknown direction code {code}"))
                })?,
                values,
            });
        }
        for s in &mut series {
            s.values.sort_unstable_by_key(|v| v.run);
        }
        series.sort_unstable_by(|a, b| (&a.benchmark, &a.metric).cmp(&(&b.benchmark, &b.metric)));
        Ok(TrendData { runs, series })
    }

    /// The results of `runs` as narrow rows: run id, an unambiguous series key
    /// (`<length of benchmark>:<benchmark><metric>`, one column instead of two because the
    /// cost of a row is per column), estimate, lower, upper.
    async fn trend_rows(&self, runs: &[RunId]) -> Result<Vec<SqliteRow>, LedgerError> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let ids = serde_json::to_string(runs).map_err(|e| LedgerError::Corrupt(e.to_string()))?;
        Ok(sqlx::query(
            "SELECT run_id, length(benchmark) || ':' || benchmark || metric, estimate, lower,
                    upper
             FROM results WHERE run_id IN (SELECT value FROM json_each(?))",
        )
        .bind(ids)
        .fetch_all(self.pool())
        .await?)
    }

    /// Annotations on runs of `suite` (on machine `machine_id`, if given), oldest first.
    ///
    /// # Errors
    /// When the query fails.
    pub async fn suite_annotations(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<Vec<RunAnnotation>, LedgerError> {
        let rows = sqlx::query(
            "SELECT a.run_id, a.created_at, a.text FROM annotations a JOIN runs r ON r.id = a.run_id
             WHERE r.suite = ? AND (? IS NULL OR r.machine_id = ?) ORDER BY a.id",
        )
        .bind(suite)
        .bind(machine_id)
        .bind(machine_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(RunAnnotation {
                    run_id: r.try_get("run_id")?,
                    created_at: r.try_get("created_at")?,
                    text: r.try_get("text")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BenchmarkId, Estimate, Machine, NewRun, RunProvenance, RunSource};

    fn run(suite: &str, machine: &str, commit_time: Option<i64>, value: f64) -> NewRun {
        let mut provenance = RunProvenance {
            suite: suite.to_owned(),
            machine: Machine {
                fingerprint: machine.to_owned(),
                cpu_model: format!("cpu {machine}"),
                logical_cores: 2,
                ..Machine::default()
            },
            ..RunProvenance::default()
        };
        provenance.git.commit_time = commit_time;
        NewRun {
            source: RunSource::ImportBmf,
            provenance,
            measurements: vec![crate::model::test_time_ns(value)],
        }
    }

    #[tokio::test]
    async fn web_queries() -> Result<(), LedgerError> {
        let ledger = Ledger::in_memory().await?;
        let a = ledger.record_run(&run("s", "m1", Some(300), 3.0)).await?;
        let b = ledger.record_run(&run("s", "m1", Some(100), 1.0)).await?;
        let c = ledger.record_run(&run("s", "m2", Some(200), 2.0)).await?;
        let d = ledger.record_run(&run("t", "m1", None, 4.0)).await?;
        ledger.annotate(b, "slow disk").await?;

        let machines = ledger.machines(Some("s")).await?;
        assert_eq!(machines.len(), 2);
        assert_eq!((machines[0].runs, machines[0].latest_run), (2, b));
        assert_eq!(ledger.machines(None).await?[0].runs, 3);

        assert_eq!(ledger.latest_runs_per_machine().await?, vec![c, b, d]);
        assert!(ledger.has_suite("t").await?);
        assert!(!ledger.has_suite("u").await?);

        let all = ledger.trend("s", None).await?;
        let order: Vec<RunId> = all.runs.iter().map(|r| r.id).collect();
        assert_eq!(order, vec![b, c, a], "commit order, not recording order");
        assert_eq!(all.series.len(), 1);
        let values = &all.series[0].values;
        assert_eq!(values.iter().map(|v| v.run_id).collect::<Vec<_>>(), order);
        assert_eq!(
            values.iter().map(|v| v.run).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert_eq!(
            values.iter().map(|v| v.estimate).collect::<Vec<_>>(),
            vec![1.0, 2.0, 3.0]
        );
        let m1 = ledger.trend("s", Some(machines[0].id)).await?;
        assert_eq!(m1.runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
        assert_eq!(m1.series[0].values.len(), 2);
        assert!(ledger.trend("nope", None).await?.series.is_empty());

        // Series are told apart exactly, whatever the names contain, and sorted.
        let mut odd = run("u", "m1", Some(1), 1.0);
        let template = odd.measurements[0].clone();
        odd.measurements.clear();
        for (bench, metric, value) in [("ab", "c", 1.0), ("a", "bc", 2.0), ("a:b", "c", 3.0)] {
            let mut m = template.clone();
            m.benchmark = BenchmarkId::named(bench);
            m.metric = metric.to_owned();
            m.estimate = Estimate::point(value);
            odd.measurements.push(m);
        }
        ledger.record_run(&odd).await?;
        let mut later = run("u", "m1", Some(2), 4.0);
        later.measurements[0].benchmark = BenchmarkId::named("ab");
        later.measurements[0].metric = "c".to_owned();
        ledger.record_run(&later).await?;
        let u = ledger.trend("u", None).await?;
        let names: Vec<(&str, &str, usize)> = u
            .series
            .iter()
            .map(|s| (s.benchmark.as_str(), s.metric.as_str(), s.values.len()))
            .collect();
        assert_eq!(names, vec![("a", "bc", 1), ("a:b", "c", 1), ("ab", "c", 2)]);

        let notes = ledger.suite_annotations("s", None).await?;
        assert_eq!(notes.len(), 1);
        assert_eq!((notes[0].run_id, notes[0].text.as_str()), (b, "slow disk"));
        assert!(ledger.suite_annotations("t", None).await?.is_empty());
        Ok(())
    }
}

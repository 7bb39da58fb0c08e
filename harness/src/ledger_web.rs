//! Read-only ledger queries shaped for the web app (`bench-web`).
//!
//! These sit beside the core operations of [`crate::ledger`] as a second `impl Ledger` block:
//! the dashboard needs the newest run of every suite and machine, the run filters need the
//! machines, and a trend page needs every headline estimate of a suite on one machine in commit
//! order. Nothing here writes.

use crate::ledger::{Ledger, LedgerError, RunId, SeriesPoint};
use crate::model::Direction;
use serde::Serialize;
use sqlx::Row;

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

    /// Every headline estimate of `suite` (on machine `machine_id`, if given), grouped by
    /// benchmark and metric, each group in commit order: by git commit time, falling back to
    /// the recording time for runs outside git, then by run id. The input of the trend charts.
    ///
    /// # Errors
    /// When the query fails or a row is corrupt.
    pub async fn trend_points(
        &self,
        suite: &str,
        machine_id: Option<i64>,
    ) -> Result<Vec<SeriesPoint>, LedgerError> {
        let rows = sqlx::query(
            "SELECT x.run_id, x.benchmark, x.metric, x.unit, x.direction, x.estimate, x.lower,
                    x.upper, r.git_commit, r.git_commit_time, r.created_at, r.machine_id
             FROM runs r JOIN results x ON x.run_id = r.id
             WHERE r.suite = ? AND (? IS NULL OR r.machine_id = ?)
             ORDER BY x.benchmark, x.metric,
                      COALESCE(r.git_commit_time, CAST(strftime('%s', r.created_at) AS INTEGER)),
                      r.id",
        )
        .bind(suite)
        .bind(machine_id)
        .bind(machine_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let code: i64 = r.try_get(4)?;
                Ok(SeriesPoint {
                    run_id: r.try_get(0)?,
                    benchmark: r.try_get(1)?,
                    metric: r.try_get(2)?,
                    unit: r.try_get(3)?,
                    direction: Direction::from_code(code).ok_or_else(|| {
                        LedgerError::Corrupt(format!("unknown direction code {code}"))
                    })?,
                    estimate: r.try_get(5)?,
                    lower: r.try_get(6)?,
                    upper: r.try_get(7)?,
                    git_commit: r.try_get(8)?,
                    git_commit_time: r.try_get(9)?,
                    created_at: r.try_get(10)?,
                    machine_id: r.try_get(11)?,
                })
            })
            .collect()
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
    use crate::model::{
        BenchmarkId, Estimate, Machine, Measurement, NewRun, RunProvenance, RunSource,
    };
    use std::collections::BTreeMap;

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
            measurements: vec![Measurement {
                benchmark: BenchmarkId::named("b"),
                metric: "time".to_owned(),
                unit: "ns".to_owned(),
                direction: Direction::LowerIsBetter,
                estimate: Estimate::point(value),
                statistics: BTreeMap::new(),
                throughput: None,
                samples: None,
            }],
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

        let all = ledger.trend_points("s", None).await?;
        let order: Vec<RunId> = all.iter().map(|p| p.run_id).collect();
        assert_eq!(order, vec![b, c, a], "commit order, not recording order");
        let m1 = ledger.trend_points("s", Some(machines[0].id)).await?;
        assert_eq!(m1.iter().map(|p| p.run_id).collect::<Vec<_>>(), vec![b, a]);

        let notes = ledger.suite_annotations("s", None).await?;
        assert_eq!(notes.len(), 1);
        assert_eq!((notes[0].run_id, notes[0].text.as_str()), (b, "slow disk"));
        assert!(ledger.suite_annotations("t", None).await?.is_empty());
        Ok(())
    }
}

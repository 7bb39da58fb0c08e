//! Paired A/B runs in the ledger: the two sides of a `bench-run ab` and how their rounds pair up.
//!
//! Both sides are ordinary runs; a `pairings` row links them with the order of the rounds. The
//! three rows are written in one transaction, so a pairing is never half recorded.

use crate::ledger::{Ledger, LedgerError, RunId, insert_run, now_rfc3339};
use crate::model::NewRun;
use serde::Serialize;
use sqlx::Row;

/// How the rounds of a paired A/B run were laid out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairingPlan {
    /// Seed of the side order.
    pub seed: u64,
    /// Per round, whether the base ran first.
    pub base_first: Vec<bool>,
    /// The base revision as given (`main`, a hash, a tag).
    pub base_rev: String,
    /// The head revision as given; `None` for the working tree.
    pub head_rev: Option<String>,
}

/// A stored pairing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pairing {
    /// Row id.
    pub id: i64,
    /// When it was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// The base side's run.
    pub base_run: RunId,
    /// The head side's run.
    pub head_run: RunId,
    /// The layout of the rounds.
    pub plan: PairingPlan,
}

impl Pairing {
    /// Number of rounds.
    #[must_use]
    pub fn rounds(&self) -> usize {
        self.plan.base_first.len()
    }
}

fn order_text(base_first: &[bool]) -> String {
    base_first
        .iter()
        .map(|b| if *b { 'B' } else { 'H' })
        .collect()
}

fn parse_order(text: &str) -> Result<Vec<bool>, LedgerError> {
    text.chars()
        .map(|c| match c {
            'B' => Ok(true),
            'H' => Ok(false),
            other => Err(LedgerError::Corrupt(format!(
                "pairing side order holds {other:?}; only B and H are valid"
            ))),
        })
        .collect()
}

impl Ledger {
    /// Records both sides of a paired A/B run and the pairing that links them, in one
    /// transaction. Returns `(base run, head run)`.
    ///
    /// # Errors
    /// When either run is invalid, the sides' round counts disagree with the plan, or the
    /// database refuses the write. Nothing is stored on error.
    pub async fn record_pair(
        &self,
        base: &NewRun,
        head: &NewRun,
        plan: &PairingPlan,
    ) -> Result<(RunId, RunId), LedgerError> {
        let rounds = plan.base_first.len();
        if rounds == 0 {
            return Err(LedgerError::Invalid(
                "a pairing needs at least one round".to_owned(),
            ));
        }
        for (side, run) in [("base", base), ("head", head)] {
            if let Some(m) = run
                .measurements
                .iter()
                .find(|m| m.samples.as_ref().is_some_and(|s| s.len() != rounds))
            {
                return Err(LedgerError::Invalid(format!(
                    "{side} result `{}` has {} per-round values for {rounds} rounds",
                    m.benchmark.full,
                    m.samples.as_ref().map_or(0, crate::model::Samples::len)
                )));
            }
        }
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let base_id = insert_run(&mut tx, base).await?;
        let head_id = insert_run(&mut tx, head).await?;
        sqlx::query(
            "INSERT INTO pairings (created_at, base_run_id, head_run_id, rounds, seed, side_order,
                base_rev, head_rev)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(now_rfc3339())
        .bind(base_id)
        .bind(head_id)
        .bind(i64::try_from(rounds).unwrap_or(i64::MAX))
        .bind(plan.seed.to_string())
        .bind(order_text(&plan.base_first))
        .bind(&plan.base_rev)
        .bind(&plan.head_rev)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((base_id, head_id))
    }

    /// The pairing that holds `run` on either side, if any.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    pub async fn pairing_of(&self, run: RunId) -> Result<Option<Pairing>, LedgerError> {
        let row = sqlx::query(
            "SELECT id, created_at, base_run_id, head_run_id, seed, side_order, base_rev, head_rev
             FROM pairings WHERE base_run_id = ? OR head_run_id = ?",
        )
        .bind(run)
        .bind(run)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let seed_text: String = row.try_get("seed")?;
        let seed = seed_text
            .parse()
            .map_err(|_| LedgerError::Corrupt(format!("pairing seed {seed_text:?}")))?;
        Ok(Some(Pairing {
            id: row.try_get("id")?,
            created_at: row.try_get("created_at")?,
            base_run: row.try_get("base_run_id")?,
            head_run: row.try_get("head_run_id")?,
            plan: PairingPlan {
                seed,
                base_first: parse_order(&row.try_get::<String, _>("side_order")?)?,
                base_rev: row.try_get("base_rev")?,
                head_rev: row.try_get("head_rev")?,
            },
        }))
    }

    /// The pairing of exactly these two runs (base and head in this order), if they form one.
    ///
    /// # Errors
    /// When the query fails or the row is corrupt.
    pub async fn pairing_between(
        &self,
        base: RunId,
        head: RunId,
    ) -> Result<Option<Pairing>, LedgerError> {
        Ok(self
            .pairing_of(base)
            .await?
            .filter(|p| p.base_run == base && p.head_run == head))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::model::{
        BenchmarkId, Direction, Estimate, Measurement, RunProvenance, RunSource, Samples,
        SamplingMode,
    };
    use std::collections::BTreeMap;

    fn side(source: RunSource, values: &[f64]) -> NewRun {
        let samples = Samples::new(
            SamplingMode::PerProcess,
            vec![1.0; values.len()],
            values.to_vec(),
        )
        .ok();
        NewRun {
            source,
            provenance: RunProvenance {
                suite: "s".to_owned(),
                ..RunProvenance::default()
            },
            measurements: vec![Measurement {
                benchmark: BenchmarkId::named("b"),
                metric: "time".to_owned(),
                unit: "ns".to_owned(),
                direction: Direction::LowerIsBetter,
                estimate: Estimate::point(values.first().copied().unwrap_or(1.0)),
                statistics: BTreeMap::new(),
                throughput: None,
                samples,
            }],
        }
    }

    fn plan(rounds: usize) -> PairingPlan {
        PairingPlan {
            seed: u64::MAX,
            base_first: crate::paired::side_order(rounds, 3),
            base_rev: "main".to_owned(),
            head_rev: None,
        }
    }

    #[tokio::test]
    async fn a_pair_round_trips_and_is_append_only() {
        let ledger = Ledger::in_memory().await.unwrap();
        let base = side(RunSource::AbBase, &[10.0, 11.0, 10.5]);
        let head = side(RunSource::AbHead, &[12.0, 12.5, 12.2]);
        let (b, h) = ledger.record_pair(&base, &head, &plan(3)).await.unwrap();
        let pairing = ledger.pairing_of(h).await.unwrap().unwrap();
        assert_eq!((pairing.base_run, pairing.head_run), (b, h));
        assert_eq!(pairing.plan, plan(3));
        assert_eq!(pairing.rounds(), 3);
        assert_eq!(ledger.pairing_between(b, h).await.unwrap(), Some(pairing));
        assert_eq!(ledger.pairing_between(h, b).await.unwrap(), None);
        let stored = ledger.measurements(h).await.unwrap();
        let samples = stored[0].samples.as_ref().unwrap();
        assert_eq!(samples.mode(), SamplingMode::PerProcess);
        assert_eq!(samples.times_ns(), &[12.0, 12.5, 12.2]);

        let update = sqlx::query("UPDATE pairings SET rounds = 4")
            .execute(ledger.pool())
            .await;
        assert!(update.unwrap_err().to_string().contains("append-only"));
        let delete = sqlx::query("DELETE FROM pairings")
            .execute(ledger.pool())
            .await;
        assert!(delete.unwrap_err().to_string().contains("append-only"));
        // A run belongs to at most one pairing.
        let again = sqlx::query(
            "INSERT INTO pairings (created_at, base_run_id, head_run_id, rounds, seed, side_order,
                base_rev) VALUES ('x', ?, ?, 1, '1', 'B', 'main')",
        )
        .bind(b)
        .bind(b + 100)
        .execute(ledger.pool())
        .await;
        assert!(again.is_err());
    }

    #[tokio::test]
    async fn a_bad_pair_records_nothing() {
        let ledger = Ledger::in_memory().await.unwrap();
        let base = side(RunSource::AbBase, &[10.0, 11.0]);
        let head = side(RunSource::AbHead, &[12.0, 12.5, 12.2]);
        let err = ledger
            .record_pair(&base, &head, &plan(3))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("2 per-round values for 3 rounds"),
            "{err}"
        );
        let empty = NewRun {
            measurements: Vec::new(),
            ..side(RunSource::AbHead, &[1.0])
        };
        let base = side(RunSource::AbBase, &[1.0]);
        assert!(ledger.record_pair(&base, &empty, &plan(1)).await.is_err());
        assert!(ledger.record_pair(&base, &base, &plan(0)).await.is_err());
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM runs")
            .fetch_one(ledger.pool())
            .await
            .unwrap();
        assert_eq!(count, 0, "a failed pair leaves no run behind");
    }

    #[tokio::test]
    async fn ab_sides_are_never_a_default_baseline_history_or_a_revision() {
        let ledger = Ledger::in_memory().await.unwrap();
        let at = |mut run: NewRun, commit: &str| {
            run.provenance.git.commit = Some(commit.to_owned());
            run
        };
        let plain = |values: &[f64]| {
            let mut run = side(RunSource::BenchRun, values);
            for m in &mut run.measurements {
                m.samples = None;
            }
            run
        };
        let first = ledger
            .record_run(&at(plain(&[10.0]), "aaaa"))
            .await
            .unwrap();
        let (b, h) = ledger
            .record_pair(
                &at(side(RunSource::AbBase, &[10.0]), "aaaa"),
                &at(side(RunSource::AbHead, &[50.0]), "bbbb"),
                &plan(1),
            )
            .await
            .unwrap();
        let last = ledger
            .record_run(&at(plain(&[10.0]), "bbbb"))
            .await
            .unwrap();
        assert_eq!(ledger.previous_run(last).await.unwrap(), Some(first));
        let history = ledger.history("s", 1, last + 1, 10).await.unwrap();
        let runs: Vec<RunId> = history.values().flatten().map(|p| p.run).collect();
        assert_eq!(runs, [first, last], "history leaves out runs {b} and {h}");
        assert_eq!(
            ledger.run_at_commit("aaaa", None).await.unwrap(),
            Some(first)
        );
        assert_eq!(
            ledger.run_at_commit("bbbb", None).await.unwrap(),
            Some(last)
        );
    }
}

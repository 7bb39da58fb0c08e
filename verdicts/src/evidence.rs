//! Verdicts on stored runs, in two steps: [`gather`] reads what a comparison needs (both runs'
//! results, the head's history, whether the two are the sides of one `bench-run ab`) from a
//! ledger, and [`decide`] hands it to the pure [`bench_analysis::compare`]. The store only stores; this
//! is where the two meet. The [`Evidence`] between the steps is also what a team server sends
//! (`GET /api/evidence`), so `gate --server` decides on exactly what a local ledger would give.

use bench_analysis::calibration::AaOutcome;
use bench_analysis::compare::{self, CompareConfig, Comparison};
use bench_model::{History, HistoryPoint, Measurement, MetricKey, RunId, StoredRun};
use bench_store::{Ledger, LedgerError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything a verdict on two stored runs depends on besides the settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The base run.
    pub base: StoredRun,
    /// The head run.
    pub head: StoredRun,
    /// The base run's results.
    pub base_results: Vec<Measurement>,
    /// The head run's results.
    pub head_results: Vec<Measurement>,
    /// The head's history: earlier runs of its suite on its machine (empty for the two sides of
    /// one `bench-run ab`, which are judged on their rounds).
    #[serde(with = "history_as_list")]
    pub history: History,
    /// Whether base and head are the two sides of one `bench-run ab`.
    pub paired: bool,
    /// The layout seed of each round of that `bench-run ab` (empty: one layout, or not paired).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_layouts: Vec<u64>,
}

/// Reads the evidence on `base` and `head` from `ledger`, with `history_runs` runs of history.
///
/// # Errors
/// When a query fails.
pub async fn gather(
    ledger: &Ledger,
    base: &StoredRun,
    head: &StoredRun,
    history_runs: usize,
) -> Result<Evidence, LedgerError> {
    let pairing = ledger.pairing_between(base.id, head.id).await?;
    let paired = pairing.is_some();
    let history = if paired {
        History::new()
    } else {
        ledger
            .history(
                &head.provenance.suite,
                head.machine_id,
                head.id,
                history_runs,
            )
            .await?
    };
    Ok(Evidence {
        base: base.clone(),
        head: head.clone(),
        base_results: ledger.measurements(base.id).await?,
        head_results: ledger.measurements(head.id).await?,
        history,
        paired,
        round_layouts: pairing.map(|p| p.plan.round_layouts).unwrap_or_default(),
    })
}

/// The comparison of the evidence's two runs: on their rounds when they are the sides of one
/// `bench-run ab` ([`compare::compare_paired_layouts`], with the layouts of its rounds); else their results under the noise floor learnt
/// from the history, with the same-binary rule when both ran one executable
/// ([`compare::mark_same_binary`]).
#[must_use]
pub fn decide(evidence: &Evidence, config: &CompareConfig) -> Comparison {
    if evidence.paired {
        return compare::compare_paired_layouts(
            &evidence.base_results,
            &evidence.head_results,
            &evidence.round_layouts,
            config,
        );
    }
    let mut comparison = compare::compare(
        &evidence.base_results,
        &evidence.head_results,
        &evidence.history,
        config,
    );
    if let Some(sha256) = compare::same_binary(&evidence.base.provenance, &evidence.head.provenance)
    {
        compare::mark_same_binary(&mut comparison, &sha256);
    }
    comparison
}

/// Compares two stored runs: [`gather`], then [`decide`].
///
/// # Errors
/// When a query fails.
pub async fn compare_runs(
    ledger: &Ledger,
    base: &StoredRun,
    head: &StoredRun,
    config: &CompareConfig,
) -> Result<Comparison, LedgerError> {
    let evidence = gather(ledger, base, head, config.history_runs()).await?;
    Ok(decide(&evidence, config))
}

/// Compares run `base` with `head` under the history of `head`'s suite and machine before it:
/// the rule for two stored runs, without the pairing and same-binary rules (`calibrate` asks
/// what the rule alone does when code changed and its speed did not).
///
/// # Errors
/// When a query fails.
pub async fn compare_on_history(
    ledger: &Ledger,
    base: RunId,
    head: &StoredRun,
    config: &CompareConfig,
) -> Result<Comparison, LedgerError> {
    let history = ledger
        .history(
            &head.provenance.suite,
            head.machine_id,
            head.id,
            config.history_runs(),
        )
        .await?;
    Ok(compare::compare(
        &ledger.measurements(base).await?,
        &ledger.measurements(head.id).await?,
        &history,
        config,
    ))
}

/// The A/A comparisons of `calibrate`: each run of `runs` (ids in recording order) against the
/// one before it, with the gate's rule and the history the gate would have had (the
/// same-binary rule left out: the question is what the rule does when code changed and its
/// speed did not), summed per benchmark.
///
/// # Errors
/// When a query fails.
pub async fn aa_outcomes(
    ledger: &Ledger,
    runs: &[RunId],
    config: &CompareConfig,
) -> Result<BTreeMap<MetricKey, AaOutcome>, LedgerError> {
    let mut comparisons = Vec::new();
    for pair in runs.windows(2) {
        let [before, after] = *pair else { continue };
        let head = ledger.require_run(after).await?;
        comparisons.push(compare_on_history(ledger, before, &head, config).await?);
    }
    Ok(bench_analysis::calibration::aa_outcomes(&comparisons))
}

/// A history in JSON: a list of `{"benchmark", "metric", "points": [{"run", "value"}]}` (its
/// keys are not strings, so it cannot be a JSON object).
mod history_as_list {
    use super::{History, HistoryPoint, MetricKey};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Series {
        benchmark: String,
        metric: String,
        points: Vec<HistoryPoint>,
    }

    pub fn serialize<S: Serializer>(history: &History, s: S) -> Result<S::Ok, S::Error> {
        let list: Vec<Series> = history
            .iter()
            .map(|(k, points)| Series {
                benchmark: k.benchmark.clone(),
                metric: k.metric.clone(),
                points: points.clone(),
            })
            .collect();
        list.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<History, D::Error> {
        let list = Vec::<Series>::deserialize(d)?;
        Ok(list
            .into_iter()
            .map(|s| (MetricKey::new(&s.benchmark, &s.metric), s.points))
            .collect())
    }
}

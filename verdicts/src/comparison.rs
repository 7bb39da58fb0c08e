//! The `compare` use case: two stored runs judged side by side, with everything that must be
//! said before their table. `bench-run compare` and the web app's `/compare` and `/api/compare`
//! all call [`compare_pair`], so a refusal or a warning of one holds in the others.

use crate::evidence::{Evidence, decide};
use crate::gate::{Refusal, suite_refusal};
use bench_analysis::compare::{CompareConfig, Comparison, Mismatch, check_comparable};

/// Two runs judged, with what to say about them.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The verdicts.
    pub comparison: Comparison,
    /// The runs are of different suites and the caller allowed it: said first.
    pub suite_differs: Option<Refusal>,
    /// How the two runs were built or measured differently (warnings, not refusals).
    pub mismatches: Vec<Mismatch>,
    /// A side that ran on a busy machine: `("base" | "head", what was busy)`.
    pub busy: Vec<(&'static str, String)>,
    /// One run is a `--quick` run and the other is not.
    pub quick_warning: Option<String>,
}

impl Compared {
    /// Every warning, one line each, in the order `bench-run compare` prints them.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(Refusal::SuiteDiffers { base, head }) = &self.suite_differs {
            lines.push(format!(
                "runs differ: suite differs: base {:?} (run #{}), head {:?} (run #{})",
                base.1, base.0, head.1, head.0
            ));
        }
        lines.extend(self.mismatches.iter().map(|m| format!("runs differ: {m}")));
        lines.extend(
            self.busy
                .iter()
                .map(|(side, text)| format!("{side} {text}")),
        );
        lines.extend(self.quick_warning.clone());
        lines
    }
}

/// What [`compare_pair`] decided.
#[derive(Debug, Clone)]
pub enum CompareOutcome {
    /// Not compared: the runs are of different suites (only refused unless allowed).
    Refused(Refusal),
    /// Compared.
    Compared(Box<Compared>),
}

/// Judges the runs of `evidence` under `config`: refused when they are of different suites
/// unless `allow_mismatch`, else their verdicts with the warnings that go with them.
#[must_use]
pub fn compare_pair(
    evidence: &Evidence,
    config: &CompareConfig,
    allow_mismatch: bool,
) -> CompareOutcome {
    let (base, head) = (&evidence.base, &evidence.head);
    let suite_differs = suite_refusal(base, head);
    if let Some(refusal) = suite_differs.clone().filter(|_| !allow_mismatch) {
        return CompareOutcome::Refused(refusal);
    }
    let busy = [("base", base), ("head", head)]
        .into_iter()
        .filter_map(|(side, run)| bench_report::busy_text(run).map(|text| (side, text)))
        .collect();
    CompareOutcome::Compared(Box::new(Compared {
        comparison: decide(evidence, config),
        suite_differs,
        mismatches: check_comparable(&base.provenance, &head.provenance),
        busy,
        quick_warning: crate::quick::mixing_warning(base, head),
    }))
}

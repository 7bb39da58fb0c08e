//! The gate use case: whether two stored runs may be judged at all, and the verdict when they
//! may. `bench-run gate` prints what this returns; the tests call it directly.
//!
//! Refusals come first, in the order a user can act on them: the same run twice, two suites,
//! runs measured differently (machine, toolchain, build; [`Allow::mismatch`] judges anyway), a
//! busy machine ([`Allow::busy`] judges anyway). A busy machine is not a refusal when both runs
//! ran one executable (no verdict can come from the timings) or are the two sides of one
//! `bench-run ab` (their rounds met the same load).

use crate::evidence;
use crate::evidence::Evidence;
use crate::quick;
use bench_analysis::compare::{self, CompareConfig, Comparison, GateOutcome, Mismatch};
use bench_model::{RunId, StoredRun};
use bench_store::{Ledger, LedgerError};
use std::fmt;

/// What the gate may judge instead of refusing (`--allow-*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allow {
    /// Runs measured differently (machine, toolchain, profile, features).
    pub mismatch: bool,
    /// Runs recorded on a busy machine.
    pub busy: bool,
}

/// Why the gate gives no verdict (exit 2).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Base and head are one run.
    SameRun(RunId),
    /// The runs are of different suites.
    SuiteDiffers {
        /// Base run and its suite.
        base: (RunId, String),
        /// Head run and its suite.
        head: (RunId, String),
    },
    /// The runs were measured differently.
    NotComparable {
        /// Base run.
        base: RunId,
        /// Head run.
        head: RunId,
        /// How they differ.
        mismatches: Vec<Mismatch>,
    },
    /// A side ran on a busy machine: one sentence per busy side.
    Busy(Vec<String>),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SameRun(id) => write!(
                f,
                "base and head are the same run #{id}: nothing to compare; on main, gate against \
                 the previous commit or use bench-run ab"
            ),
            Self::SuiteDiffers { base, head } => write!(
                f,
                "refusing to compare suite {:?} (run #{}) with suite {:?} (run #{})",
                base.1, base.0, head.1, head.0
            ),
            Self::NotComparable {
                base,
                head,
                mismatches,
            } => {
                writeln!(
                    f,
                    "refusing to compare: run #{base} and run #{head} are not comparable:"
                )?;
                for m in mismatches {
                    writeln!(f, "  - {m}")?;
                }
                write!(f, "(pass --allow-mismatch to compare anyway)")
            }
            Self::Busy(sides) => {
                for side in sides {
                    writeln!(f, "refusing to judge: the {side}")?;
                }
                write!(
                    f,
                    "(rerun it on a quiet machine, gate with bench-run ab, whose paired rounds \
                     hold on a busy machine, or pass --allow-busy to judge it anyway)"
                )
            }
        }
    }
}

/// A verdict: the comparison, the gate's outcome, and what was judged despite a doubt.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Every benchmark's row.
    pub comparison: Comparison,
    /// Pass, regression or unusable input.
    pub outcome: GateOutcome,
    /// Differences in how the runs were measured, judged anyway ([`Allow::mismatch`]).
    pub mismatches: Vec<Mismatch>,
    /// Doubts to show beside the verdict (allowed mismatches, a busy machine, `--quick` runs).
    pub warnings: Vec<String>,
}

/// What the gate says about two runs.
#[derive(Debug, Clone)]
pub enum GateVerdict {
    /// No verdict (exit 2), and why.
    Refused(Refusal),
    /// A verdict.
    Judged(Box<Judged>),
}

/// The suites of `base` and `head` differ: the refusal `compare` and `gate` share.
#[must_use]
pub fn suite_refusal(base: &StoredRun, head: &StoredRun) -> Option<Refusal> {
    (base.provenance.suite != head.provenance.suite).then(|| Refusal::SuiteDiffers {
        base: (base.id, base.provenance.suite.clone()),
        head: (head.id, head.provenance.suite.clone()),
    })
}

/// The refusals that need only the two runs: one run twice, two suites.
fn identity_refusal(base: &StoredRun, head: &StoredRun) -> Option<Refusal> {
    if base.id == head.id {
        return Some(Refusal::SameRun(head.id));
    }
    suite_refusal(base, head)
}

/// The gate on `base` and `head` of `ledger` (module docs): a refusal, or the verdict of
/// [`evidence::decide`] under `config` with [`compare::gate_outcome`]'s outcome.
///
/// # Errors
/// When a query fails.
pub async fn gate(
    ledger: &Ledger,
    base: &StoredRun,
    head: &StoredRun,
    config: &CompareConfig,
    allow: Allow,
) -> Result<GateVerdict, LedgerError> {
    if let Some(refusal) = identity_refusal(base, head) {
        return Ok(GateVerdict::Refused(refusal));
    }
    let evidence = evidence::gather(ledger, base, head, config.history_runs()).await?;
    Ok(gate_on(&evidence, config, allow))
}

/// The gate on the evidence about two runs, wherever it was read (a ledger, or a team server's
/// `GET /api/evidence`): pure.
#[must_use]
pub fn gate_on(evidence: &Evidence, config: &CompareConfig, allow: Allow) -> GateVerdict {
    let (base, head) = (&evidence.base, &evidence.head);
    if let Some(refusal) = identity_refusal(base, head) {
        return GateVerdict::Refused(refusal);
    }
    let mut warnings = Vec::new();
    let mismatches = compare::check_comparable(&base.provenance, &head.provenance);
    if !mismatches.is_empty() {
        if !allow.mismatch {
            return GateVerdict::Refused(Refusal::NotComparable {
                base: base.id,
                head: head.id,
                mismatches,
            });
        }
        let list: Vec<String> = mismatches.iter().map(|m| format!("  - {m}")).collect();
        warnings.push(format!(
            "run #{} and run #{} are not comparable:\n{}",
            base.id,
            head.id,
            list.join("\n")
        ));
    }
    let same_binary = compare::same_binary(&base.provenance, &head.provenance);
    let busy: Vec<String> = [("base", base), ("head", head)]
        .into_iter()
        .filter_map(|(side, run)| bench_report::busy_text(run).map(|text| format!("{side} {text}")))
        .collect();
    if !busy.is_empty() && same_binary.is_none() && !evidence.paired {
        if !allow.busy {
            return GateVerdict::Refused(Refusal::Busy(busy));
        }
        warnings.extend(
            busy.iter()
                .map(|text| format!("the {text} (judged anyway: --allow-busy)")),
        );
    } else if !busy.is_empty() {
        // Not refused, and the user is told why: the busy machine cannot change the verdict.
        let why = if evidence.paired {
            "the two are the sides of one `bench-run ab`, whose rounds ran both under the same load"
        } else {
            "both ran the same executable, so no row can be a regression and the load cannot \
             change the verdict"
        };
        warnings.extend(
            busy.iter()
                .map(|text| format!("the {text}; not refused: {why}")),
        );
    }
    if let Some(warning) = quick::mixing_warning(base, head) {
        warnings.push(warning);
    } else if head.provenance.quick {
        warnings.push(
            "both runs are --quick runs; their short measurement is meant for smoke tests"
                .to_owned(),
        );
    }
    let comparison = evidence::decide(evidence, config);
    let outcome = compare::gate_outcome(&comparison, &mismatches, allow.mismatch);
    GateVerdict::Judged(Box::new(Judged {
        comparison,
        outcome,
        mismatches,
        warnings,
    }))
}

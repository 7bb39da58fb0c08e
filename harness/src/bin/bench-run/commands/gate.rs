//! `bench-run gate`: the CI verdict, exit 0/1/2.

use super::{compare_config, print_comparison, resolve_run};
use crate::Outcome;
use crate::cli::VerdictArgs;
use anyhow::Result;
use harness::compare;
use harness::ledger::Ledger;
use harness::report::OutputFormat;
use std::path::Path;

#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the gate's command-line flags"
)]
pub(super) async fn gate(
    ledger: &Ledger,
    cwd: &Path,
    base: &str,
    head: &str,
    suite: Option<&str>,
    allow_mismatch: bool,
    format: OutputFormat,
    verdict: &VerdictArgs,
) -> Result<Outcome> {
    let config = compare_config(verdict, cwd)?;
    let head = resolve_run(ledger, head, suite, cwd).await?;
    let base = resolve_run(
        ledger,
        base,
        Some(suite.unwrap_or(&head.provenance.suite)),
        cwd,
    )
    .await?;
    if base.provenance.suite != head.provenance.suite {
        eprintln!(
            "gate: refusing to compare suite {:?} (run #{}) with suite {:?} (run #{})",
            base.provenance.suite, base.id, head.provenance.suite, head.id
        );
        return Ok(Outcome::Incomparable);
    }
    let mismatches = compare::check_comparable(&base.provenance, &head.provenance);
    if !mismatches.is_empty() {
        let verb = if allow_mismatch {
            "warning"
        } else {
            "gate: refusing to compare"
        };
        eprintln!(
            "{verb}: run #{} and run #{} are not comparable:",
            base.id, head.id
        );
        for m in &mismatches {
            eprintln!("  - {m}");
        }
        if !allow_mismatch {
            eprintln!("(pass --allow-mismatch to compare anyway)");
            return Ok(Outcome::Incomparable);
        }
    }
    if head.provenance.quick || base.provenance.quick {
        eprintln!(
            "warning: a --quick run takes part; its short measurement is meant for smoke tests"
        );
    }
    let comparison = ledger.compare_runs(&base, &head, &config).await?;
    print_comparison(&comparison, &base, &head, format, verdict.explain);
    let verdict_line = format!("run #{} vs base run #{}", head.id, base.id);
    let quarantined: Vec<String> = comparison
        .quarantined()
        .map(|r| format!("{} ({})", r.benchmark, r.verdict))
        .collect();
    if !quarantined.is_empty() {
        eprintln!(
            "gate: {} quarantined benchmark(s), shown but never failing the gate: {}",
            quarantined.len(),
            quarantined.join(", ")
        );
    }
    match compare::gate(&comparison, &mismatches, allow_mismatch) {
        compare::GateOutcome::Pass => {
            eprintln!("gate: pass ({verdict_line}): no regression");
            Ok(Outcome::Ok)
        }
        compare::GateOutcome::Regression => {
            let names: Vec<&str> = comparison
                .gating_regressions()
                .map(|r| r.benchmark.as_str())
                .collect();
            eprintln!(
                "gate: FAIL ({verdict_line}): {} regression(s): {}",
                names.len(),
                names.join(", ")
            );
            Ok(Outcome::Regression)
        }
        compare::GateOutcome::Unusable => {
            let unusable: Vec<&str> = comparison
                .unusable()
                .filter(|r| r.quarantined_by.is_none())
                .map(|r| r.benchmark.as_str())
                .collect();
            if unusable.is_empty() {
                eprintln!(
                    "gate: no benchmark of {verdict_line} can be compared (nothing in common)"
                );
            } else {
                eprintln!(
                    "gate: unusable input ({verdict_line}): {}",
                    unusable.join(", ")
                );
            }
            Ok(Outcome::Incomparable)
        }
    }
}

//! `bench-run gate`: the CI verdict, exit 0/1/2.

use super::{compare_config, confirm, print_comparison, resolve_run};
use crate::Outcome;
use crate::cli::VerdictArgs;
use anyhow::Result;
use harness::ledger::Ledger;
use harness::report::{self, OutputFormat};
use harness::{compare, quick};
use std::path::Path;

/// What the gate may judge instead of refusing (`--allow-*`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Allow {
    /// Runs measured differently (machine, toolchain, profile, features).
    pub mismatch: bool,
    /// Runs recorded on a busy machine.
    pub busy: bool,
}

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
    allow: Allow,
    format: OutputFormat,
    verdict: &VerdictArgs,
    confirm_runs: u32,
) -> Result<Outcome> {
    let allow_mismatch = allow.mismatch;
    let config = compare_config(verdict, cwd)?;
    let head = resolve_run(ledger, head, suite, cwd).await?;
    let base = resolve_run(
        ledger,
        base,
        Some(suite.unwrap_or(&head.provenance.suite)),
        cwd,
    )
    .await?;
    if base.id == head.id {
        eprintln!(
            "gate: base and head are the same run #{}: nothing to compare; on main, gate against \
             the previous commit or use bench-run ab",
            head.id
        );
        return Ok(Outcome::Incomparable);
    }
    if base.provenance.suite != head.provenance.suite {
        eprintln!(
            "gate: refusing to compare suite {:?} (run #{}) with suite {:?} (run #{})",
            base.provenance.suite, base.id, head.provenance.suite, head.id
        );
        return Ok(Outcome::Incomparable);
    }
    if confirm_runs > 0 {
        confirm::check_head(&head, cwd)?;
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
    // One executable on both sides: no verdict can come from the timings, so how busy the
    // machine was cannot mislead it (the report still says so). The two sides of one
    // `bench-run ab` met the same load in every round: pairing is what makes them usable.
    let same_binary = compare::same_binary(&base.provenance, &head.provenance);
    let paired = ledger.pairing_between(base.id, head.id).await?.is_some();
    let busy: Vec<String> = [("base", &base), ("head", &head)]
        .into_iter()
        .filter_map(|(side, run)| report::busy_text(run).map(|text| format!("{side} {text}")))
        .collect();
    if !busy.is_empty() && same_binary.is_none() && !paired {
        if !allow.busy {
            for text in &busy {
                eprintln!("gate: refusing to judge: the {text}");
            }
            eprintln!(
                "(rerun it on a quiet machine, gate with bench-run ab, whose paired rounds hold on \
                 a busy machine, or pass --allow-busy to judge it anyway)"
            );
            return Ok(Outcome::Incomparable);
        }
        for text in &busy {
            eprintln!("warning: the {text} (judged anyway: --allow-busy)");
        }
    }
    if let Some(warning) = quick::mixing_warning(&base, &head) {
        eprintln!("warning: {warning}");
    } else if head.provenance.quick {
        eprintln!(
            "warning: both runs are --quick runs; their short measurement is meant for smoke tests"
        );
    }
    let comparison = harness::judge::compare_runs(ledger, &base, &head, &config).await?;
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
            match &comparison.same_binary {
                Some(sha256) => eprintln!(
                    "gate: pass ({verdict_line}): {}",
                    compare::same_binary_sentence(sha256)
                ),
                None => eprintln!("gate: pass ({verdict_line}): no regression"),
            }
            Ok(Outcome::Ok)
        }
        compare::GateOutcome::Regression if confirm_runs > 0 => {
            let request = confirm::Request {
                base: &base,
                head: &head,
                flagged: &comparison,
                config: &config,
                runs: confirm_runs,
                allow_mismatch,
                format,
            };
            let outcome = confirm::confirm(ledger, cwd, &request).await?;
            eprintln!(
                "gate: {} ({verdict_line}): {}",
                outcome.word, outcome.summary
            );
            Ok(outcome.outcome)
        }
        compare::GateOutcome::Regression => {
            let names: Vec<String> = comparison
                .gating_regressions()
                .map(compare::Row::name)
                .collect();
            eprintln!(
                "gate: FAIL ({verdict_line}): {} regression(s): {}",
                names.len(),
                names.join(", ")
            );
            Ok(Outcome::Regression)
        }
        compare::GateOutcome::Unusable => {
            let unusable: Vec<String> = comparison
                .unusable()
                .filter(|r| r.quarantined_by.is_none())
                .map(compare::Row::name)
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

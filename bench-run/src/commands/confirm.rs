//! `gate --confirm N`: re-run only the benchmarks the gate flagged, N times, and fail only on
//! the regressions that hold (the rule is `bench_usecases::confirm`).

use super::run::TerminalProgress;
use crate::outcome::Outcome;
use anyhow::Result;
use bench_report::OutputFormat;
use bench_store::Ledger;
use bench_usecases::confirm as rule;
use bench_usecases::confirm_runs::{
    ConfirmRequest, Confirmation, confirm_regressions, flagged_benchmarks,
};

/// The gate's final word after the confirmation runs.
pub(crate) struct Verdict {
    pub outcome: Outcome,
    /// `FAIL` or `pass`.
    pub word: &'static str,
    pub summary: String,
}

/// Runs the confirmation and returns the gate's verdict.
pub(crate) async fn confirm(
    ledger: &Ledger,
    request: &ConfirmRequest<'_>,
    format: OutputFormat,
) -> Result<Verdict> {
    let head = request.head;
    let ids = flagged_benchmarks(request.flagged);
    eprintln!(
        "gate: {} regression(s) flagged ({}); confirming with {} re-run(s) of only those \
         benchmarks (suite {})",
        ids.len(),
        ids.join(", "),
        request.runs,
        head.provenance.suite
    );
    let confirmation =
        confirm_regressions(ledger, request, &mut TerminalProgress::default()).await?;
    let confirmed = match confirmation {
        Confirmation::Decided { confirmed, .. } => confirmed,
        Confirmation::Refused { run, mismatches } => {
            eprintln!(
                "gate: refusing to confirm: confirmation run #{run} was not measured like head run #{}:",
                head.id
            );
            for m in &mismatches {
                eprintln!("  - {m}");
            }
            eprintln!("(pass --allow-mismatch to confirm anyway)");
            return Ok(Verdict {
                outcome: Outcome::Incomparable,
                word: "unusable",
                summary: format!("confirmation run #{run} is not comparable"),
            });
        }
    };
    let report = rule::render(&confirmed);
    if format == OutputFormat::Json {
        eprint!("{report}");
    } else {
        print!("\n{report}");
    }
    let held: Vec<String> = confirmed
        .iter()
        .filter(|c| c.holds())
        .map(|c| c.key.benchmark.clone())
        .collect();
    let cleared: Vec<String> = confirmed
        .iter()
        .filter(|c| !c.holds())
        .map(|c| c.key.benchmark.clone())
        .collect();
    let runs = request.runs;
    Ok(if held.is_empty() {
        Verdict {
            outcome: Outcome::Ok,
            word: "pass",
            summary: format!(
                "{} flagged regression(s) did not hold in {runs} re-run(s): {}",
                cleared.len(),
                cleared.join(", ")
            ),
        }
    } else {
        Verdict {
            outcome: Outcome::Regression,
            word: "FAIL",
            summary: format!(
                "{} regression(s) held in {runs} re-run(s): {}{}",
                held.len(),
                held.join(", "),
                if cleared.is_empty() {
                    String::new()
                } else {
                    format!(" (not confirmed: {})", cleared.join(", "))
                }
            ),
        }
    })
}

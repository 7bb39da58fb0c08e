//! `bench-run gate`: the CI verdict, exit 0/1/2.

use super::confirm;
use super::support::{compare_config, invocation, print_comparison};
use crate::cli::VerdictArgs;
use crate::outcome::Outcome;
use anyhow::{Result, bail};
use bench_analysis::compare;
use bench_client::remote::Server;
use bench_report::OutputFormat;
use bench_store::Ledger;
use bench_usecases::confirm_runs::ConfirmRequest;
use bench_verdicts::baseline;
use bench_verdicts::gate::{Allow, GateVerdict, Judged, Refusal};
use std::path::Path;

/// The command line of `gate`.
pub(crate) struct Request<'a> {
    pub base: &'a str,
    pub head: &'a str,
    pub suite: Option<&'a str>,
    pub allow: Allow,
    pub format: OutputFormat,
    pub verdict: &'a VerdictArgs,
    pub confirm_runs: u32,
}

/// Where the runs are: the local ledger, or a team server's.
pub(crate) enum Source<'a> {
    Local(&'a Ledger),
    Server(Server),
}

/// The read token for a server: `BENCH_READ_TOKEN`, when set.
pub(crate) fn read_token() -> Option<String> {
    std::env::var("BENCH_READ_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
}

pub(crate) async fn gate(source: Source<'_>, cwd: &Path, request: &Request<'_>) -> Result<Outcome> {
    let Request {
        allow,
        format,
        verdict,
        confirm_runs,
        ..
    } = *request;
    let config = compare_config(verdict, cwd)?;
    let (gated, base, head) = match &source {
        Source::Local(ledger) => {
            let (base, head) = baseline::resolve_pair(
                ledger,
                request.base,
                request.head,
                request.suite,
                Some(cwd),
            )
            .await?;
            let gated = bench_verdicts::gate::gate(ledger, &base, &head, &config, allow).await?;
            (gated, base, head)
        }
        Source::Server(server) => {
            if confirm_runs > 0 {
                bail!(
                    "--confirm re-runs benchmarks into the local ledger; it cannot be combined with --server"
                );
            }
            let evidence = server
                .evidence(
                    &super::support::server_ref(request.base, cwd)?,
                    &super::support::server_ref(request.head, cwd)?,
                    request.suite,
                    config.history_runs(),
                )
                .await?;
            let gated = bench_verdicts::gate::gate_on(&evidence, &config, allow);
            (gated, evidence.base, evidence.head)
        }
    };
    // --confirm's precondition (the head can be re-run here) comes before any judgement of the
    // two runs themselves, once they are two runs of one suite.
    let two_runs_of_one_suite = !matches!(
        gated,
        GateVerdict::Refused(Refusal::SameRun(_) | Refusal::SuiteDiffers { .. })
    );
    if confirm_runs > 0 && two_runs_of_one_suite {
        bench_usecases::confirm_runs::check_head(&head, cwd)?;
    }
    let judged = match gated {
        GateVerdict::Refused(refusal) => {
            eprintln!("gate: {refusal}");
            return Ok(Outcome::Incomparable);
        }
        GateVerdict::Judged(judged) => judged,
    };
    for warning in &judged.warnings {
        eprintln!("warning: {warning}");
    }
    let Judged {
        comparison,
        outcome,
        ..
    } = *judged;
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
    match outcome {
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
            let command = invocation();
            let request = ConfirmRequest {
                base: &base,
                head: &head,
                flagged: &comparison,
                config: &config,
                runs: confirm_runs,
                allow_mismatch: allow.mismatch,
                cwd,
                command: &command,
            };
            let Source::Local(ledger) = source else {
                bail!("--confirm needs the local ledger");
            };
            let outcome = confirm::confirm(ledger, &request, format).await?;
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

//! `bench-run compare`: two stored runs side by side, with a verdict per benchmark; always exit
//! 0 unless the runs are of different suites (then 2, or a warning with `--allow-mismatch`).

use super::{compare_config, print_comparison};
use crate::Outcome;
use crate::cli::VerdictArgs;
use anyhow::Result;
use harness::baseline;
use harness::compare::CompareConfig;
use harness::comparison::{CompareOutcome, compare_pair};
use harness::judge::Evidence;
use harness::ledger::Ledger;
use harness::remote::Server;
use harness::report::OutputFormat;
use std::path::Path;

/// The command line of `compare`.
pub(super) struct Request<'a> {
    pub base: &'a str,
    pub head: &'a str,
    pub suite: Option<&'a str>,
    pub allow_mismatch: bool,
    pub format: OutputFormat,
    pub verdict: &'a VerdictArgs,
}

pub(super) async fn compare(ledger: &Ledger, cwd: &Path, request: &Request<'_>) -> Result<Outcome> {
    let (base, head) =
        baseline::resolve_pair(ledger, request.base, request.head, request.suite, Some(cwd))
            .await?;
    let config = compare_config(request.verdict, cwd)?;
    let evidence = harness::judge::gather(ledger, &base, &head, config.history_runs()).await?;
    judge_and_print(&evidence, &config, request)
}

/// `compare --server URL`: the same, on the server's ledger.
pub(super) async fn compare_on_server(
    url: &str,
    cwd: &Path,
    request: &Request<'_>,
) -> Result<Outcome> {
    let config = compare_config(request.verdict, cwd)?;
    let server = Server::new(url, super::gate::read_token());
    let evidence = server
        .evidence(
            &super::server_ref(request.base, cwd)?,
            &super::server_ref(request.head, cwd)?,
            request.suite,
            config.history_runs(),
        )
        .await?;
    judge_and_print(&evidence, &config, request)
}

fn judge_and_print(
    evidence: &Evidence,
    config: &CompareConfig,
    request: &Request<'_>,
) -> Result<Outcome> {
    let compared = match compare_pair(evidence, config, request.allow_mismatch) {
        CompareOutcome::Refused(refusal) => {
            eprintln!("compare: {refusal}; pass --allow-mismatch to compare anyway");
            return Ok(Outcome::Incomparable);
        }
        CompareOutcome::Compared(compared) => compared,
    };
    for warning in compared.warnings() {
        eprintln!("warning: {warning}");
    }
    print_comparison(
        &compared.comparison,
        &evidence.base,
        &evidence.head,
        request.format,
        request.verdict.explain,
    );
    Ok(Outcome::Ok)
}

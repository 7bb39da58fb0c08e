//! `bench-run compare`: two stored runs side by side, with a verdict per benchmark; always exit
//! 0 unless the runs are of different suites (then 2, or a warning with `--allow-mismatch`).

use super::support::{compare_config, print_comparison};
use crate::cli::VerdictArgs;
use crate::outcome::Outcome;
use anyhow::Result;
use bench_analysis::compare::CompareConfig;
use bench_client::remote::Server;
use bench_report::OutputFormat;
use bench_store::Ledger;
use bench_verdicts::baseline;
use bench_verdicts::comparison::{CompareOutcome, compare_pair};
use bench_verdicts::evidence::Evidence;
use std::path::Path;

/// The command line of `compare`.
pub(crate) struct Request<'a> {
    pub base: &'a str,
    pub head: &'a str,
    pub suite: Option<&'a str>,
    pub allow_mismatch: bool,
    pub format: OutputFormat,
    pub verdict: &'a VerdictArgs,
}

pub(crate) async fn compare(ledger: &Ledger, cwd: &Path, request: &Request<'_>) -> Result<Outcome> {
    let (base, head) =
        baseline::resolve_pair(ledger, request.base, request.head, request.suite, Some(cwd))
            .await?;
    let config = compare_config(request.verdict, cwd)?;
    let evidence =
        bench_verdicts::evidence::gather(ledger, &base, &head, config.history_runs()).await?;
    decide_and_print(&evidence, &config, request)
}

/// `compare --server URL`: the same, on the server's ledger.
pub(crate) async fn compare_on_server(
    url: &str,
    cwd: &Path,
    request: &Request<'_>,
) -> Result<Outcome> {
    let config = compare_config(request.verdict, cwd)?;
    let server = Server::new(&super::support::server_url(url), super::gate::read_token());
    let evidence = server
        .evidence(
            &super::support::server_ref(request.base, cwd)?,
            &super::support::server_ref(request.head, cwd)?,
            request.suite,
            config.history_runs(),
        )
        .await?;
    decide_and_print(&evidence, &config, request)
}

fn decide_and_print(
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

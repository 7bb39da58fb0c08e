//! `bench-run log`: append a run's entry to BENCHMARKS.md.

use super::support::resolve_run;
use crate::outcome::Outcome;
use anyhow::{Context, Result, bail};
use bench_analysis::compare::CompareConfig;
use bench_report::log;
use bench_store::Ledger;
use bench_verdicts::location::workspace_root;
use bench_verdicts::quick;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The command line of `log`.
pub(crate) struct Request<'a> {
    pub run: &'a str,
    pub title: Option<&'a str>,
    pub claim: Option<&'a str>,
    pub file: Option<PathBuf>,
    pub notes: Vec<String>,
    pub base: Option<&'a str>,
    pub only: &'a [String],
    pub rows: usize,
    pub dry_run: bool,
}

pub(crate) async fn log_run(ledger: &Ledger, cwd: &Path, request: Request<'_>) -> Result<Outcome> {
    let Request {
        run,
        title,
        claim,
        file,
        notes,
        base,
        only,
        rows,
        dry_run,
    } = request;
    // clap requires both unless --dry-run; a preview shows where they go.
    let (title, claim) = match (title, claim, dry_run) {
        (Some(title), Some(claim), _) => (title, claim),
        (title, claim, true) => (
            title.unwrap_or("TITLE (--title)"),
            claim.unwrap_or("CLAIM (--claim): what the run shows, in one line."),
        ),
        _ => bail!("an entry needs --title and --claim"),
    };
    let run = resolve_run(ledger, run, None, cwd).await?;
    let all = ledger.measurements(run.id).await?;
    let base = bench_verdicts::baseline::resolve_baseline(ledger, &run, base, Some(cwd)).await?;
    let mut notes = notes;
    if let Some(warning) = base.as_ref().and_then(|b| quick::mixing_warning(b, &run)) {
        eprintln!("warning: {warning}");
        notes.push(format!("Warning: {warning}."));
    }
    let mut deltas = BTreeMap::new();
    if let Some(base) = &base {
        let comparison =
            bench_verdicts::evidence::compare_runs(ledger, base, &run, &CompareConfig::default())
                .await?;
        for row in &comparison.rows {
            if let Some(change) = &row.change {
                deltas.insert(
                    (row.benchmark.clone(), row.metric.clone()),
                    log::Delta {
                        change_pct: change.point_pct,
                        verdict: row.verdict,
                    },
                );
            }
        }
    }
    let path = file.unwrap_or_else(|| workspace_root(cwd).join("BENCHMARKS.md"));
    let existing = read_log(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let chosen = log::select_rows(&all, &deltas, only, rows);
    let citation = bench_verdicts::refs::citation(&ledger.ledger_id().await?, run.id);
    let text = log::render(&log::Entry {
        run: &run,
        citation: &citation,
        title,
        claim,
        rows: &chosen,
        total_results: all.len(),
        baseline: base.as_ref(),
        deltas: &deltas,
        notes: &notes,
        machine_described: log::describes_machine(&existing, &run.provenance.machine.fingerprint),
    });
    if dry_run {
        print!("{text}");
        return Ok(Outcome::Ok);
    }
    append(&path, &text).with_context(|| format!("cannot append to {}", path.display()))?;
    eprintln!("bench-run: appended run #{} to {}", run.id, path.display());
    Ok(Outcome::Ok)
}

/// The log's current text (empty when there is no log yet), to see which machines it already
/// describes. Bytes that are not UTF-8 are replaced; only fingerprints are looked up in it.
fn read_log(path: &Path) -> std::io::Result<String> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e),
    }
}

/// Appends `text` to the log at `path`, creating it with a header if missing. Existing bytes
/// are never rewritten.
fn append(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let exists = path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if !exists {
        file.write_all(log::NEW_LOG_HEADER.as_bytes())?;
    }
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

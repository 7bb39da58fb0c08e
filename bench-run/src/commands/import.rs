//! `bench-run import`: record results produced by another tool.

use super::push::push_run;
use super::support::{external_provenance, invocation, open_ledger, record};
use crate::cli::{ImportArgs, ImportSource};
use crate::outcome::Outcome;
use anyhow::{Context, Result, anyhow, bail};
use bench_adapters::mdlog;
use bench_model::{Direction, RunId, RunSource};
use bench_report::OutputFormat;
use bench_report::table::{Align, Table};
use bench_store::Ledger;
use bench_usecases::markdown_log::{ImportedRun, LogImportRequest, import_markdown_log};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Reads an import file, or standard input for `-`, with the adapters' size limit.
pub(crate) fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(bench_adapters::MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        if bytes.len() as u64 > bench_adapters::MAX_FILE_BYTES {
            bail!(
                "standard input exceeds {} bytes",
                bench_adapters::MAX_FILE_BYTES
            );
        }
        return Ok(bytes);
    }
    Ok(bench_adapters::read_input(path)?)
}

pub(crate) fn parse_directions(specs: &[String]) -> Result<BTreeMap<String, Direction>> {
    specs
        .iter()
        .map(|spec| {
            let (measure, dir) = spec
                .rsplit_once('=')
                .ok_or_else(|| anyhow!("--direction expects MEASURE=lower|higher, got {spec:?}"))?;
            let direction = match dir.trim() {
                "lower" | "lower_is_better" => Direction::LowerIsBetter,
                "higher" | "higher_is_better" => Direction::HigherIsBetter,
                other => bail!("--direction {spec:?}: expected lower or higher, got {other:?}"),
            };
            Ok((measure.trim().to_owned(), direction))
        })
        .collect()
}

pub(crate) async fn import(source: ImportSource, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    let (kind, args, measurements) = match &source {
        ImportSource::Criterion { dir, args } => (
            RunSource::ImportCriterion,
            args,
            bench_adapters::criterion::read_dir(dir)
                .with_context(|| format!("cannot import {}", dir.display()))?,
        ),
        ImportSource::Bmf {
            file,
            direction,
            args,
        } => {
            let directions = parse_directions(direction)?;
            let bytes = read_input(file)?;
            (
                RunSource::ImportBmf,
                args,
                bench_adapters::bmf::parse(&bytes, &directions)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::Hyperfine { file, args } => {
            let bytes = read_input(file)?;
            (
                RunSource::ImportHyperfine,
                args,
                bench_adapters::hyperfine::parse(&bytes)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::CargoCriterion { file, args } => {
            let bytes = read_input(file)?;
            let text = String::from_utf8(bytes)
                .with_context(|| format!("{} is not UTF-8", file.display()))?;
            (
                RunSource::ImportCargoCriterion,
                args,
                bench_adapters::cargo_criterion::parse_messages(&text)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::MarkdownLog {
            file,
            skip_unreadable,
            format,
        } => return markdown_log(file, *skip_unreadable, *format, db, cwd).await,
        ImportSource::Libtest { file, args } => {
            let bytes = read_input(file)?;
            (
                RunSource::ImportLibtest,
                args,
                bench_adapters::libtest::parse(&bytes)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
    };
    let ledger = open_ledger(db, cwd).await?;
    let id = record_import(&ledger, cwd, kind, args, measurements).await?;
    push_run(&ledger, id, args.push.as_deref()).await;
    println!("{id}");
    Ok(Outcome::Ok)
}

pub(crate) async fn record_import(
    ledger: &Ledger,
    cwd: &Path,
    source: RunSource,
    args: &ImportArgs,
    measurements: Vec<bench_model::Measurement>,
) -> Result<RunId> {
    let provenance = external_provenance(cwd, args, invocation(), None)?;
    record(ledger, source, provenance, measurements).await
}

/// `import markdown-log`: every readable entry's runs, each recorded once at its entry's date.
async fn markdown_log(
    file: &Path,
    skip_unreadable: bool,
    format: OutputFormat,
    db: Option<&str>,
    cwd: &Path,
) -> Result<Outcome> {
    let bytes = read_input(file)?;
    let log = if skip_unreadable {
        mdlog::parse_lenient(&bytes)
    } else {
        mdlog::parse(&bytes)
    }
    .with_context(|| {
        format!(
            "cannot import {}{}",
            file.display(),
            if skip_unreadable {
                ""
            } else {
                " (--skip-unreadable records the entries that can be read)"
            }
        )
    })?;
    let source = if file == Path::new("-") {
        "standard input".to_owned()
    } else {
        file.display().to_string()
    };
    for s in &log.skipped {
        eprintln!(
            "bench-run: skipped line {} ({:?}): {}",
            s.line, s.title, s.reason
        );
    }
    for u in &log.unreadable {
        eprintln!(
            "bench-run: NOT imported: line {} ({:?}), which cannot be read:",
            u.line, u.title
        );
        for p in &u.problems {
            eprintln!("  {p}");
        }
    }
    if log.unreadable_not_listed > 0 {
        eprintln!(
            "bench-run: NOT imported: {} more entries that cannot be read",
            log.unreadable_not_listed
        );
    }
    if log.runs.is_empty() {
        // Said before a ledger is opened (or created) for nothing.
        bail!("{source} holds no entry that can be imported");
    }
    let ledger = open_ledger(db, cwd).await?;
    let recorded = import_markdown_log(
        &ledger,
        &LogImportRequest {
            log: &log,
            source: &source,
            command: invocation(),
            cwd: cwd.display().to_string(),
        },
    )
    .await?;
    let new = recorded.iter().filter(|r| r.created).count();
    eprintln!(
        "bench-run: {} runs of {} entries of {source}: {new} recorded, {} already in {}",
        recorded.len(),
        log.entries,
        recorded.len() - new,
        ledger.location()
    );
    print!("{}", imported_runs(&recorded, &log, format));
    Ok(Outcome::Ok)
}

/// The runs an import recorded or found, and what it left out.
fn imported_runs(recorded: &[ImportedRun<'_>], log: &mdlog::Log, format: OutputFormat) -> String {
    let status = |r: &ImportedRun<'_>| {
        if r.created {
            "recorded"
        } else {
            "already recorded"
        }
    };
    match format {
        OutputFormat::Json => {
            let runs: Vec<_> = recorded
                .iter()
                .map(|r| {
                    json!({
                        "run": r.id,
                        "created": r.created,
                        "recorded_at": r.run.recorded_at,
                        "suite": r.run.provenance.suite,
                        "results": r.run.measurements.len(),
                        "line": r.run.line,
                        "title": r.run.title,
                    })
                })
                .collect();
            let skipped: Vec<_> = log
                .skipped
                .iter()
                .map(|s| json!({"line": s.line, "title": s.title, "reason": s.reason}))
                .collect();
            let unreadable: Vec<_> = log
                .unreadable
                .iter()
                .map(|u| {
                    json!({
                        "line": u.line,
                        "title": u.title,
                        "problems": u.problems.iter()
                            .map(|p| json!({"line": p.line, "problem": p.problem}))
                            .collect::<Vec<_>>(),
                    })
                })
                .collect();
            let out = json!({
                "entries": log.entries,
                "runs": runs,
                "skipped": skipped,
                "unreadable": unreadable,
                "unreadable_not_listed": log.unreadable_not_listed,
            });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&out).unwrap_or_default()
            )
        }
        OutputFormat::Table | OutputFormat::Markdown => {
            let mut table = Table::new(&[
                ("run", Align::Right),
                ("status", Align::Left),
                ("date (UTC)", Align::Left),
                ("suite", Align::Left),
                ("results", Align::Right),
                ("entry", Align::Left),
            ]);
            for r in recorded {
                table.push(vec![
                    r.id.to_string(),
                    status(r).to_owned(),
                    r.run
                        .recorded_at
                        .chars()
                        .take(19)
                        .collect::<String>()
                        .replace('T', " "),
                    r.run.provenance.suite.clone(),
                    r.run.measurements.len().to_string(),
                    format!("line {}: {}", r.run.line, r.run.title),
                ]);
            }
            if format == OutputFormat::Markdown {
                table.to_markdown()
            } else {
                table.to_terminal()
            }
        }
    }
}

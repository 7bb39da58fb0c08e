//! `bench-run ledger copy`: one ledger into another, on any engines.

use crate::outcome::Outcome;
use anyhow::{Context, Result};
use bench_report::OutputFormat;
use bench_store::Ledger;
use bench_store::copy::{CopyProgress, copy_ledger, copy_project};
use bench_verdicts::location::default_location;
use std::io::IsTerminal;
use std::path::Path;

/// `ledger copy`: every project, or only `project` (`--project`).
pub(crate) async fn copy(
    from: &str,
    to: &str,
    project: Option<&str>,
    format: OutputFormat,
    cwd: &Path,
) -> Result<Outcome> {
    let project = project.map(bench_model::Project::new).transpose()?;
    let from = default_location(Some(from), cwd)?;
    let to = default_location(Some(to), cwd)?;
    let source = Ledger::open_read_only(&from)
        .await
        .with_context(|| format!("cannot open the source ledger {from}"))?;
    let destination = Ledger::open(&to)
        .await
        .with_context(|| format!("cannot open the destination ledger {to}"))?;
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("copying runs {bar:30} {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let show = |p: CopyProgress| {
        if let Some(bar) = &bar {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
        }
    };
    let report = match &project {
        Some(project) => {
            copy_project(
                &*source.in_project(project),
                &*destination.in_project(project),
                show,
            )
            .await
        }
        None => copy_ledger(&*source, &*destination, show).await,
    }
    .with_context(|| {
        format!(
            "cannot copy {from} into {to} (runs copied so far are kept; run it again to resume)"
        )
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match format {
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "from": from.to_string(),
                "to": to.to_string(),
                "runs_copied": report.runs_copied,
                "runs_already_there": report.runs_already_there,
                "annotations_added": report.annotations_added,
                "pairings_copied": report.pairings_copied,
                "artifacts_copied": report.artifacts_copied,
                "tags_set": report.tags_set,
                "tag_conflicts": report.tag_conflicts,
                "run_ids": report.run_ids.iter().map(|(a, b)| (a.to_string(), *b)).collect::<std::collections::BTreeMap<_, _>>(),
            }))?
        ),
        OutputFormat::Table | OutputFormat::Markdown => {
            println!(
                "copied {} runs from {from} into {to} ({} were already there); {} annotations added, \
                 {} pairings, {} artifacts, {} tags set",
                report.runs_copied,
                report.runs_already_there,
                report.annotations_added,
                report.pairings_copied,
                report.artifacts_copied,
                report.tags_set,
            );
            for name in &report.tag_conflicts {
                println!("tag `{name}` left as it is: {to} uses it for a run of its own");
            }
        }
    }
    source.close().await;
    destination.close().await;
    Ok(Outcome::Ok)
}

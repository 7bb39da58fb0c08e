//! `bench-run import`: record results produced by another tool.

use super::{external_provenance, invocation, open_ledger, push::push_run, record};
use crate::Outcome;
use crate::cli::{ImportArgs, ImportSource};
use anyhow::{Context, Result, anyhow, bail};
use harness::adapter;
use harness::ledger::{Ledger, RunId};
use harness::model::{Direction, RunSource};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// Reads an import file, or standard input for `-`, with the adapters' size limit.
pub(super) fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(adapter::MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        if bytes.len() as u64 > adapter::MAX_FILE_BYTES {
            bail!("standard input exceeds {} bytes", adapter::MAX_FILE_BYTES);
        }
        return Ok(bytes);
    }
    Ok(adapter::read_input(path)?)
}

pub(super) fn parse_directions(specs: &[String]) -> Result<BTreeMap<String, Direction>> {
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

pub(super) async fn import(source: ImportSource, db: Option<&str>, cwd: &Path) -> Result<Outcome> {
    let (kind, args, measurements) = match &source {
        ImportSource::Criterion { dir, args } => (
            RunSource::ImportCriterion,
            args,
            adapter::criterion::read_dir(dir)
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
                adapter::bmf::parse(&bytes, &directions)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::Hyperfine { file, args } => {
            let bytes = read_input(file)?;
            (
                RunSource::ImportHyperfine,
                args,
                adapter::hyperfine::parse(&bytes)
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
                adapter::cargo_criterion::parse_messages(&text)
                    .with_context(|| format!("cannot import {}", file.display()))?,
            )
        }
        ImportSource::Libtest { file, args } => {
            let bytes = read_input(file)?;
            (
                RunSource::ImportLibtest,
                args,
                adapter::libtest::parse(&bytes)
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

pub(super) async fn record_import(
    ledger: &Ledger,
    cwd: &Path,
    source: RunSource,
    args: &ImportArgs,
    measurements: Vec<harness::model::Measurement>,
) -> Result<RunId> {
    let provenance = external_provenance(cwd, args, invocation(), None)?;
    record(ledger, source, provenance, measurements).await
}

//! What `root-tool dump` takes, for TTrees and RNTuples alike: its formats and entry ranges.

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

/// One JSON object per entry, or CSV with a header line.
#[derive(Clone, Copy, ValueEnum)]
pub enum DumpFormat {
    Jsonl,
    Csv,
}

/// `--entries START:STOP` (either side may be empty) within `entries`; every entry without it.
pub fn parse_range(spec: Option<&str>, entries: u64) -> Result<(u64, u64)> {
    let Some(spec) = spec else {
        return Ok((0, entries));
    };
    let (a, b) = spec
        .split_once(':')
        .context("--entries must look like START:STOP")?;
    let start = if a.is_empty() {
        0
    } else {
        a.parse().context("bad START in --entries")?
    };
    let stop = if b.is_empty() {
        entries
    } else {
        b.parse().context("bad STOP in --entries")?
    };
    if start > stop || stop > entries {
        bail!("--entries {start}:{stop} is outside the tree's {entries} entries");
    }
    Ok((start, stop))
}

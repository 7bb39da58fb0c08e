//! What one entry of a log reads into (a run, a skipped section, an unreadable entry) and the
//! helpers every part of the reader uses: the entries' parsers and the log's driver both build
//! on this file, which imports neither.

use crate::LineProblem;
use crate::model::{Measurement, RunProvenance};

/// Most problems kept per unreadable entry: a garbage file has a problem on every line.
pub(super) const MAX_PROBLEMS: usize = 20;
/// Longest piece of input a problem quotes, in characters.
const QUOTED_CHARS: usize = 120;

/// `text`, shortened to [`QUOTED_CHARS`] for a message.
pub(super) fn quoted(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

/// One run of a log entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRun {
    /// Line of the entry's heading.
    pub line: usize,
    /// The entry's heading text.
    pub title: String,
    /// When it was measured, in the ledger's form (`2026-02-14T17:26:18.000Z`).
    pub recorded_at: String,
    /// Suite, machine, toolchain, cargo command, profile, features and git commit; `command`
    /// and `cwd` are left empty for the importer (its own invocation).
    pub provenance: RunProvenance,
    /// The results, in the order of the entry.
    pub measurements: Vec<Measurement>,
    /// Everything else the entry says, verbatim (may be empty).
    pub notes: String,
    /// SHA-256 of the entry's text and the suite, 64 lowercase hex digits: the run's identity
    /// across imports.
    pub content_sha256: String,
}

/// A section skipped on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedEntry {
    /// Line of its heading.
    pub line: usize,
    /// Its heading text.
    pub title: String,
    /// Why.
    pub reason: String,
}

/// An entry that cannot be read, or text outside any entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableEntry {
    /// Line of its heading (or of the stray text).
    pub line: usize,
    /// Its heading text.
    pub title: String,
    /// What cannot be read (at most 20, then a count).
    pub problems: Vec<LineProblem>,
}

/// The level and text of an ATX heading (`## text`), or `None`.
pub(super) fn heading_level(line: &str) -> Option<(usize, &str)> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    let rest = line.get(hashes..)?;
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
        .then(|| (hashes, rest.trim().trim_end_matches('#').trim()))
}

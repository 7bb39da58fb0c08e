//! `bench-run import markdown-log`: the runs of a hand-kept markdown log (parsed by
//! `bench_adapters::mdlog`), each recorded once at its entry's date. Importing the same log
//! again finds its runs instead of copying them: each is keyed by its entry's own text.

use bench_adapters::mdlog::{Log, LogRun};
use bench_model::{NewRun, RunId, RunProvenance, RunSource};
use bench_store::{DatedRun, IngestKey, Ledger, LedgerError};

/// What to record, and how to describe where it came from.
#[derive(Debug)]
pub struct LogImportRequest<'a> {
    /// The parsed log.
    pub log: &'a Log,
    /// Where it was read from, for each run's note (`BENCHMARKS.md`, `standard input`).
    pub source: &'a str,
    /// The importing command line, recorded as each run's command.
    pub command: Vec<String>,
    /// Where it ran.
    pub cwd: String,
}

/// One run of the log, as recorded.
#[derive(Debug)]
pub struct ImportedRun<'a> {
    /// The run as the log holds it.
    pub run: &'a LogRun,
    /// Its id in the ledger.
    pub id: RunId,
    /// Whether this import recorded it (`false`: an earlier import had).
    pub created: bool,
}

/// Why a log could not be recorded; the runs recorded before it stay recorded.
#[derive(Debug, thiserror::Error)]
pub enum LogImportError {
    /// The log holds nothing to import.
    #[error("{origin} holds no entry that can be imported")]
    Empty {
        /// Where it was read from.
        origin: String,
    },
    /// The ledger refused a run.
    #[error("cannot record the entry on line {line} of {origin} in {location}")]
    Record {
        /// The entry's line.
        line: usize,
        /// Where the log was read from.
        origin: String,
        /// The ledger.
        location: String,
        /// Why.
        #[source]
        error: LedgerError,
    },
}

/// Records every run of `request.log` once, at its entry's date, with a note naming the entry.
///
/// # Errors
/// [`LogImportError::Empty`] when the log has no run; [`LogImportError::Record`] when the
/// ledger refuses one (those before it are kept).
pub async fn import_markdown_log<'a>(
    ledger: &Ledger,
    request: &LogImportRequest<'a>,
) -> Result<Vec<ImportedRun<'a>>, LogImportError> {
    let log = request.log;
    if log.runs.is_empty() {
        return Err(LogImportError::Empty {
            origin: request.source.to_owned(),
        });
    }
    let mut recorded = Vec::with_capacity(log.runs.len());
    for run in &log.runs {
        let dated = DatedRun {
            run: NewRun {
                source: RunSource::ImportMarkdownLog,
                provenance: RunProvenance {
                    command: request.command.clone(),
                    cwd: request.cwd.clone(),
                    ..run.provenance.clone()
                },
                measurements: run.measurements.clone(),
            },
            recorded_at: run.recorded_at.clone(),
            notes: vec![note(request.source, run)],
        };
        // Keyed by the entry's own text: the same entry imported again is found, not copied.
        let key = IngestKey {
            key: format!("markdown-log/{}", run.content_sha256),
            content_sha256: run.content_sha256.clone(),
        };
        let done = ledger
            .record_dated_run_once(&dated, &key)
            .await
            .map_err(|error| LogImportError::Record {
                line: run.line,
                origin: request.source.to_owned(),
                location: ledger.location().to_string(),
                error,
            })?;
        recorded.push(ImportedRun {
            run,
            id: done.id,
            created: done.created,
        });
    }
    Ok(recorded)
}

/// The annotation of an imported run: where it came from, then what else its entry says.
fn note(source: &str, run: &LogRun) -> String {
    let mut text = format!(
        "Imported from the markdown log {source}, entry on line {}: {}",
        run.line, run.title
    );
    if !run.notes.is_empty() {
        text.push_str("\n\n");
        text.push_str(&run.notes);
    }
    text
}

//! The markdown-log import as a library function: every readable run recorded once at its
//! entry's date, found (not copied) when the same log is imported again.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use bench_store::{Ledger, Location};
use bench_usecases::markdown_log::{LogImportError, LogImportRequest, import_markdown_log};

/// The committed seed log the adapters' tests read (`adapters/testdata/mdlog/`).
fn seed_log() -> bench_adapters::mdlog::Log {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../adapters/testdata/mdlog/seed-002.md"
    );
    bench_adapters::mdlog::parse_lenient(&std::fs::read(path).unwrap()).unwrap()
}

#[tokio::test]
async fn records_each_run_once_at_its_date_and_finds_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(Location::Sqlite(dir.path().join("ledger.sqlite")))
        .await
        .unwrap();
    let log = seed_log();
    assert!(!log.runs.is_empty(), "the seed log has runs");
    let request = LogImportRequest {
        log: &log,
        source: "seed-002.md",
        command: vec!["bench-run".into(), "import".into()],
        cwd: "/somewhere".into(),
    };
    let first = import_markdown_log(&ledger, &request).await.unwrap();
    assert_eq!(first.len(), log.runs.len());
    assert!(first.iter().all(|r| r.created));
    for imported in &first {
        let stored = ledger.run(imported.id).await.unwrap().expect("stored");
        assert_eq!(
            stored.created_at, imported.run.recorded_at,
            "dated as its entry"
        );
        assert_eq!(stored.provenance.suite, imported.run.provenance.suite);
        assert_eq!(stored.provenance.cwd, "/somewhere");
        assert_eq!(stored.source, bench_model::RunSource::ImportMarkdownLog);
        assert!(
            stored.annotations[0]
                .text
                .starts_with("Imported from the markdown log seed-002.md, entry on line"),
            "{:?}",
            stored.annotations
        );
    }
    let again = import_markdown_log(&ledger, &request).await.unwrap();
    assert!(again.iter().all(|r| !r.created), "found, not copied");
    let ids = |runs: &[bench_usecases::markdown_log::ImportedRun<'_>]| {
        runs.iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(ids(&first), ids(&again));
}

#[tokio::test]
async fn a_log_without_runs_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(Location::Sqlite(dir.path().join("ledger.sqlite")))
        .await
        .unwrap();
    // Entries were read, and none of them measured anything bench-run can record.
    let mut log = seed_log();
    log.runs.clear();
    let err = import_markdown_log(
        &ledger,
        &LogImportRequest {
            log: &log,
            source: "empty.md",
            command: Vec::new(),
            cwd: String::new(),
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LogImportError::Empty { .. }), "{err}");
    assert!(ledger.latest_run(None).await.unwrap().is_none());
}

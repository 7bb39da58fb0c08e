//! Ingest through idempotency keys (what the team server's pushes use): once per key, for
//! runs, dated runs and A/B pairs, also under concurrent pushes.

use super::*;

/// A push is recorded once per idempotency key: a retry answers the run the first push
/// recorded and stores nothing; the key with other content is refused and stores nothing; a bad
/// key is refused before anything is written.
pub async fn pushes_are_recorded_once_per_key(f: &Fixture) {
    let l = &f.ledger;
    let run = small_run("s", "m", 1.0);
    let first = l
        .record_run_once(&run, &key("ci/1", 'a'))
        .await
        .expect("push");
    assert!(first.created);
    let retry = l
        .record_run_once(&run, &key("ci/1", 'a'))
        .await
        .expect("retry");
    assert_eq!(
        retry,
        Ingested {
            id: first.id,
            created: false
        }
    );
    let other = l
        .record_run_once(&small_run("s", "m", 2.0), &key("ci/1", 'b'))
        .await
        .expect_err("same key, other content");
    assert!(
        matches!(other, LedgerError::KeyReused { run, .. } if run == first.id),
        "{other}"
    );
    for bad in [
        key("", 'a'),
        key("has space", 'a'),
        key(&"k".repeat(201), 'a'),
        key("k", 'G'),
    ] {
        let err = l.record_run_once(&run, &bad).await.expect_err("bad key");
        assert!(matches!(err, LedgerError::Invalid(_)), "{err}");
    }
    let second = l
        .record_run_once(&run, &key("ci/2", 'a'))
        .await
        .expect("another key");
    assert!(second.created && second.id != first.id);
    assert_eq!(f.count("runs").await, 2);
    assert_eq!(f.count("ingest_keys").await, 2);
}

/// A run measured in the past (an entry of a hand-kept log) keeps its own time, as the
/// recording time and in the trend's order, and its notes, written at that time; it is recorded
/// once per key; a time not in the ledger's form or an empty note stores nothing.
pub async fn dated_runs_keep_their_time_and_notes_once_per_key(f: &Fixture) {
    let l = &f.ledger;
    let now = l.record_run(&small_run("s", "m", 2.0)).await.expect("now");
    let mut run = small_run("s", "m", 1.0);
    run.source = RunSource::ImportMarkdownLog;
    run.measurements[0]
        .statistics
        .insert(Statistic::ApproximateMedian, Estimate::point(1.0));
    let dated = DatedRun {
        run,
        recorded_at: "2026-02-14T17:26:18.000Z".to_owned(),
        notes: vec![
            "Imported from BENCHMARKS.md".to_owned(),
            "second".to_owned(),
        ],
    };
    let first = l
        .record_dated_run_once(&dated, &key("markdown-log/1", 'f'))
        .await
        .expect("record");
    assert!(first.created);
    let stored = l.require_run(first.id).await.expect("read");
    assert_eq!(stored.created_at, "2026-02-14T17:26:18.000Z");
    assert_eq!(stored.source, RunSource::ImportMarkdownLog);
    let notes: Vec<(&str, &str)> = stored
        .annotations
        .iter()
        .map(|a| (a.created_at.as_str(), a.text.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            ("2026-02-14T17:26:18.000Z", "Imported from BENCHMARKS.md"),
            ("2026-02-14T17:26:18.000Z", "second")
        ]
    );
    assert_eq!(
        l.measurements(first.id).await.expect("results"),
        dated.run.measurements
    );
    // Recorded second, but measured first: the trend (outside git, by time) puts it first.
    let trend = l.trend("s", None, TrendRuns::Line).await.expect("trend");
    let order: Vec<RunId> = trend.runs.iter().map(|r| r.id).collect();
    assert_eq!(order, [first.id, now]);
    assert_eq!(trend.series[0].values[0].estimate, 1.0);

    let retry = l
        .record_dated_run_once(&dated, &key("markdown-log/1", 'f'))
        .await
        .expect("retry");
    assert_eq!(
        retry,
        Ingested {
            id: first.id,
            created: false
        }
    );
    for bad in [
        "2026-02-14T17:26:18Z",
        "2026-02-14 17:26:18.000Z",
        "2026-13-01T00:00:00.000Z",
        "2026-02-30T00:00:00.000Z",
        "yesterday",
        "",
    ] {
        let wrong = DatedRun {
            recorded_at: bad.to_owned(),
            ..dated.clone()
        };
        let err = l
            .record_dated_run_once(&wrong, &key("markdown-log/2", 'f'))
            .await
            .expect_err(bad);
        assert!(matches!(err, LedgerError::Invalid(_)), "{bad:?}: {err}");
    }
    let empty_note = DatedRun {
        notes: vec![" ".to_owned()],
        ..dated.clone()
    };
    let err = l
        .record_dated_run_once(&empty_note, &key("markdown-log/2", 'f'))
        .await
        .expect_err("empty note");
    assert!(matches!(err, LedgerError::Invalid(_)), "{err}");
    assert_eq!(f.count("runs").await, 2);
    assert_eq!(f.count("annotations").await, 2);
    assert_eq!(f.count("ingest_keys").await, 1);
}

/// 16 pushes of one run with one key at once (a client retrying while its first push is still
/// in flight): one run is recorded, and every push answers its id.
pub async fn concurrent_pushes_with_one_key_record_one_run(f: &Fixture) {
    let pushes: Vec<_> = (0..16)
        .map(|_| {
            let ledger = f.ledger.clone();
            tokio::spawn(async move {
                ledger
                    .record_run_once(&full_run("s", "m"), &key("runner-7/run-3", 'c'))
                    .await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for p in pushes {
        answers.push(p.await.expect("join").expect("push"));
    }
    let created = answers.iter().filter(|a| a.created).count();
    assert_eq!(created, 1, "{answers:?}");
    assert!(answers.iter().all(|a| a.id == answers[0].id), "{answers:?}");
    assert_eq!(f.count("runs").await, 1);
    assert_eq!(f.count("results").await, 2);
}

/// The pushed sides of an A/B run are recorded once per key, paired; a retry answers both
/// runs; the key of a single run is not a pair's.
pub async fn pair_pushes_are_recorded_once_per_key(f: &Fixture) {
    let l = &f.ledger;
    let values = [12.0, 12.5, 13.0];
    let (base, head) = (
        side(RunSource::AbBase, &values),
        side(RunSource::AbHead, &values),
    );
    let first = l
        .record_pair_once(&base, &head, &plan(3), &key("ci/ab/1", 'd'))
        .await
        .expect("push");
    assert!(first.created);
    assert_eq!(
        l.pairing_between(first.base, first.head)
            .await
            .expect("pairing")
            .map(|p| p.rounds()),
        Some(3)
    );
    let retry = l
        .record_pair_once(&base, &head, &plan(3), &key("ci/ab/1", 'd'))
        .await
        .expect("retry");
    assert_eq!(
        retry,
        PairIngested {
            created: false,
            ..first
        }
    );
    l.record_run_once(&small_run("s", "m", 1.0), &key("ci/run/1", 'e'))
        .await
        .expect("a run");
    let err = l
        .record_pair_once(&base, &head, &plan(3), &key("ci/run/1", 'e'))
        .await
        .expect_err("a run's key");
    assert!(matches!(err, LedgerError::KeyReused { .. }), "{err}");
    assert_eq!(f.count("runs").await, 3);
    assert_eq!(f.count("pairings").await, 1);
}

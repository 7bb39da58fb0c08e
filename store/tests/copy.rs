//! `copy_ledger` between engines: whole, ids mapped, idempotent, never changing what the
//! destination holds. Run SQLite -> SQLite always, and SQLite <-> PostgreSQL when a server is
//! available (testkit::postgres).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod engines;
// The copy tests use the suite's fixtures, not its tests (nor their re-exports).
#[allow(dead_code, unused_imports)]
mod suite;

use bench_model::ArtifactKind;
use bench_store::copy::copy_ledger;
use bench_store::{LedgerError, LedgerStore, PairingPlan, RunFilter};
use engines::Fixture;

async fn fill(source: &Fixture) {
    let l = &source.ledger;
    let a = l.record_run(&suite::full_run("s", "m1")).await.expect("a");
    let b = l
        .record_run(&suite::small_run("s", "m2", 2.0))
        .await
        .expect("b");
    l.tag(a, "base").await.expect("tag");
    l.tag(b, "head").await.expect("tag");
    l.annotate(a, "first note").await.expect("note");
    let mut base = suite::small_run("s", "m1", 1.0);
    base.source = bench_model::RunSource::AbBase;
    let mut head = base.clone();
    head.source = bench_model::RunSource::AbHead;
    let plan = PairingPlan {
        seed: 7,
        base_first: vec![true],
        base_rev: "main".into(),
        head_rev: Some("feature".into()),
        round_layouts: Vec::new(),
    };
    let (base, head) = l.record_pair(&base, &head, &plan).await.expect("pair");
    // Profiles: of a run alone, and a diff of the head against the base (mapped in the copy).
    for artifact in [
        suite::artifact(a, ArtifactKind::Flamegraph, None, suite::SVG),
        suite::artifact(b, ArtifactKind::FoldedStacks, None, b"main;f 1\n"),
        suite::artifact(head, ArtifactKind::DiffFlamegraph, Some(base), suite::SVG),
    ] {
        l.record_artifact(&artifact).await.expect("artifact");
    }
}

/// Every run of `from` reads back from `to` as it was stored there.
async fn assert_same(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
    ids: &std::collections::BTreeMap<i64, i64>,
) {
    let runs = from.runs(&RunFilter::default()).await.expect("runs");
    assert_eq!(runs.len(), ids.len());
    for summary in runs {
        let copy = ids[&summary.id];
        let (a, b) = (
            from.require_run(summary.id).await.expect("source run"),
            to.require_run(copy).await.expect("copied run"),
        );
        assert_eq!(a.created_at, b.created_at, "run {}", a.id);
        assert_eq!(a.source, b.source, "run {}", a.id);
        assert_eq!(a.provenance, b.provenance, "run {}", a.id);
        assert_eq!(a.tags, b.tags, "run {}", a.id);
        assert_eq!(a.annotations, b.annotations, "run {}", a.id);
        assert_eq!(
            from.measurements(a.id).await.expect("m"),
            to.measurements(copy).await.expect("m"),
            "run {}",
            a.id
        );
        assert_same_artifacts(from, to, a.id, ids).await;
    }
}

/// The artifacts of source run `run` are those of its copy: same bytes, kind, time, and their
/// base mapped to its copy.
async fn assert_same_artifacts(
    from: &dyn LedgerStore,
    to: &dyn LedgerStore,
    run: i64,
    ids: &std::collections::BTreeMap<i64, i64>,
) {
    let (source, copied) = (
        from.artifacts(run).await.expect("source artifacts"),
        to.artifacts(ids[&run]).await.expect("copied artifacts"),
    );
    assert_eq!(source.len(), copied.len(), "run {run}");
    for (a, b) in source.iter().zip(&copied) {
        assert_eq!(b.run, ids[&run]);
        assert_eq!(b.against, a.against.map(|base| ids[&base]), "run {run}");
        assert_eq!(
            (&a.benchmark, a.kind, &a.profiler, &a.media_type, a.size),
            (&b.benchmark, b.kind, &b.profiler, &b.media_type, b.size)
        );
        assert_eq!((&a.sha256, &a.created_at), (&b.sha256, &b.created_at));
        let (x, y) = (
            from.artifact(a.id).await.expect("read").expect("source"),
            to.artifact(b.id).await.expect("read").expect("copy"),
        );
        assert_eq!(x.bytes, y.bytes);
    }
}

async fn copy_between(source: Fixture, destination: Fixture) {
    fill(&source).await;
    let (from, to) = (&*source.ledger, &*destination.ledger);
    // The destination has a history of its own, which the copy leaves alone.
    let own = to
        .record_run(&suite::small_run("local", "m9", 9.0))
        .await
        .expect("own");
    to.tag(own, "head").await.expect("own tag");

    let mut seen = Vec::new();
    let first = copy_ledger(from, to, |p| seen.push((p.done, p.total)))
        .await
        .expect("copy");
    assert_eq!(first.runs_copied, 4);
    assert_eq!(seen.last(), Some(&(4, 4)));
    assert_eq!(first.pairings_copied, 1);
    assert_eq!(first.artifacts_copied, 3);
    assert_eq!(first.tags_set, 1, "base is new there");
    assert_eq!(
        first.tag_conflicts,
        ["head"],
        "head names a run of the destination's own"
    );
    assert_eq!(to.run_by_tag("head").await.expect("tag"), Some(own));
    let ids = first.run_ids.clone();
    let pairing = to.pairings().await.expect("pairings");
    assert_eq!(pairing.len(), 1);
    let source_pairing = &from.pairings().await.expect("pairings")[0];
    assert_eq!(pairing[0].plan, source_pairing.plan);
    assert_eq!(pairing[0].created_at, source_pairing.created_at);
    assert_eq!(pairing[0].base_run, ids[&source_pairing.base_run]);
    let diff = &to
        .artifacts(ids[&source_pairing.head_run])
        .await
        .expect("artifacts")[0];
    assert_eq!(diff.kind, ArtifactKind::DiffFlamegraph);
    assert_eq!(diff.against, Some(ids[&source_pairing.base_run]));
    // A citation `LEDGER#RUN` of a source run finds its copy by the source's identity.
    let origin = from.ledger_id().await.expect("ledger id");
    for (source_run, copy) in &ids {
        let found = to
            .copies_of(&origin[..8], *source_run)
            .await
            .expect("copies");
        assert_eq!(found, [*copy], "run {source_run}");
    }
    assert!(
        to.copies_of(&origin[..8], 999)
            .await
            .expect("none")
            .is_empty()
    );
    let own_id = to.ledger_id().await.expect("own id");
    assert!(
        to.copies_of(&own_id[..8], own)
            .await
            .expect("own")
            .is_empty()
    );

    // Again: nothing new, nothing doubled.
    let again = copy_ledger(from, to, |_| {}).await.expect("copy again");
    assert_eq!((again.runs_copied, again.runs_already_there), (0, 4));
    assert_eq!(
        (
            again.annotations_added,
            again.artifacts_copied,
            again.pairings_copied,
            again.tags_set
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(destination.count("artifacts").await, 3);
    assert_eq!(to.runs(&RunFilter::default()).await.expect("runs").len(), 5);

    // What the source gained since is what the next copy brings.
    let later = from
        .record_run(&suite::small_run("s", "m1", 3.0))
        .await
        .expect("later");
    from.tag(later, "base").await.expect("move tag");
    let a = from.run_by_tag("head").await.expect("head").expect("some");
    from.annotate(a, "second note").await.expect("note");
    // A profile recorded later for a run copied before, against a run copied now.
    from.record_artifact(&suite::artifact(
        a,
        ArtifactKind::DiffFlamegraph,
        Some(later),
        suite::SVG,
    ))
    .await
    .expect("later artifact");
    let third = copy_ledger(from, to, |_| {}).await.expect("third copy");
    assert_eq!(
        (
            third.runs_copied,
            third.annotations_added,
            third.artifacts_copied,
            third.tags_set
        ),
        (1, 1, 1, 1)
    );
    assert_same_artifacts(from, to, a, &third.run_ids).await;
    assert_eq!(
        to.run_by_tag("base").await.expect("tag"),
        Some(third.run_ids[&later]),
        "a copied name follows the source"
    );
    for (source_run, copy) in &third.run_ids {
        let a = from.require_run(*source_run).await.expect("source");
        let b = to.require_run(*copy).await.expect("copy");
        assert_eq!(
            (&a.annotations, &a.provenance),
            (&b.annotations, &b.provenance)
        );
    }
    assert_eq!(third.run_ids.len(), 5);

    // A ledger is never copied into itself.
    let err = copy_ledger(from, from, |_| {})
        .await
        .expect_err("same ledger");
    assert!(matches!(err, LedgerError::Invalid(_)), "{err}");
}

#[tokio::test]
async fn sqlite_to_sqlite() {
    copy_between(Fixture::sqlite().await, Fixture::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_to_postgres() {
    let Some(to) = Fixture::postgres("sqlite_to_postgres").await else {
        return;
    };
    copy_between(Fixture::sqlite().await, to).await;
}

#[tokio::test]
async fn postgres_to_sqlite() {
    let Some(from) = Fixture::postgres("postgres_to_sqlite").await else {
        return;
    };
    copy_between(from, Fixture::sqlite().await).await;
}

#[tokio::test]
async fn a_whole_copy_reads_back_the_same() {
    let source = Fixture::sqlite().await;
    fill(&source).await;
    let Some(to) = Fixture::postgres("a_whole_copy_reads_back_the_same").await else {
        return;
    };
    let report = copy_ledger(&*source.ledger, &*to.ledger, |_| {})
        .await
        .expect("copy");
    assert_same(&*source.ledger, &*to.ledger, &report.run_ids).await;
}

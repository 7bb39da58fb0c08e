//! The ledger's stamp: what the web server keeps answers by.

use super::artifacts::artifact;
use super::*;

/// The ledger's stamp stays while only reads happen and changes with every kind of write, in
/// any project: what the web server keeps by it is never kept past a change.
pub async fn the_stamp_changes_with_every_write(f: &Fixture) {
    let l = &f.ledger;
    let stamp = || async { l.stamp().await.expect("stamp") };
    let mut before = stamp().await;
    let mut changed = |after: String, what: &str| {
        assert_ne!(after, before, "the stamp did not change with {what}");
        before = after;
    };
    let run = l.record_run(&small_run("s", "m", 1.0)).await.expect("run");
    changed(stamp().await, "a run");
    l.tag(run, "v1").await.expect("tag");
    changed(stamp().await, "a tag");
    l.annotate(run, "kernel upgraded").await.expect("note");
    changed(stamp().await, "a note");
    l.record_artifact(&artifact(
        run,
        bench_model::ArtifactKind::FoldedStacks,
        None,
        b"main;f 3\n",
    ))
    .await
    .expect("artifact");
    changed(stamp().await, "an artifact");
    record_pair(f, 3).await;
    changed(stamp().await, "an ab pair");
    let other = l.in_project(&Project::new("other").expect("project"));
    other
        .record_run(&small_run("s", "m", 2.0))
        .await
        .expect("run in another project");
    changed(stamp().await, "a run of another project");
    // Reads change nothing. (On PostgreSQL the stamp also lists the server's write
    // transactions in flight, those of other databases included: the other tests' writes
    // on the shared test server may come and go between two readings, so only the ledger's
    // own part is compared.)
    l.runs(&RunFilter::default()).await.expect("runs");
    l.trend("s", None, TrendRuns::Line).await.expect("trend");
    l.measurements(run).await.expect("measurements");
    let own = |stamp: &str| stamp.split('/').next().unwrap_or_default().to_owned();
    assert_eq!(
        own(&stamp().await),
        own(&before),
        "a read changed the stamp"
    );
}

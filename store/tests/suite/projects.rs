//! Projects: two histories in one ledger that use the same suite, machine, benchmark, tag and
//! commit never see each other through a handle scoped to either.

use super::*;
use bench_store::copy::copy_ledger;

fn project(name: &str) -> Project {
    Project::new(name).expect("name")
}

/// A run of suite `s` on machine `m` at `commit`, as both projects record them.
fn run_at(value: f64, commit: &str) -> NewRun {
    let mut run = small_run("s", "m", value);
    run.source = RunSource::BenchRun;
    run.provenance.git.commit = Some(commit.to_owned());
    run
}

pub async fn two_projects_with_the_same_names_never_mix(f: &Fixture) {
    let (a, b) = (
        f.ledger.in_project(&project("alpha")),
        f.ledger.in_project(&project("beta")),
    );
    assert_eq!(a.project().as_str(), "alpha");
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let a1 = a.record_run(&run_at(10.0, commit)).await.expect("a1");
    let b1 = b.record_run(&run_at(99.0, commit)).await.expect("b1");
    let a2 = a.record_run(&run_at(11.0, commit)).await.expect("a2");
    let b2 = b.record_run(&run_at(98.0, commit)).await.expect("b2");
    a.tag(a1, "baseline").await.expect("tag a");
    b.tag(b1, "baseline").await.expect("tag b");
    a.annotate(a2, "alpha's note").await.expect("note");

    // Runs, suites, a run by id, its results.
    assert_eq!(
        ids(&a.runs(&RunFilter::default()).await.expect("runs")),
        [a2, a1]
    );
    assert_eq!(
        ids(&b.runs(&RunFilter::default()).await.expect("runs")),
        [b2, b1]
    );
    assert!(
        a.run(b1).await.expect("run").is_none(),
        "another project's run is not there"
    );
    assert!(a.measurements(b1).await.expect("results").is_empty());
    assert_eq!(
        a.measurements(a1).await.expect("results")[0].estimate.point,
        10.0
    );
    let suites = a.suites().await.expect("suites");
    assert_eq!(
        (suites.len(), suites[0].runs, suites[0].latest_run),
        (1, 2, a2)
    );
    assert!(
        f.ledger.run(a1).await.expect("run").is_none(),
        "nor in the default project"
    );
    assert!(
        f.ledger
            .runs(&RunFilter::default())
            .await
            .expect("runs")
            .is_empty()
    );

    // Baselines, references and history.
    assert_eq!(a.previous_run(a2).await.expect("previous"), Some(a1));
    assert_eq!(b.previous_run(b2).await.expect("previous"), Some(b1));
    assert_eq!(a.previous_run(b2).await.expect("previous"), None);
    assert_eq!(a.latest_run(Some("s")).await.expect("latest"), Some(a2));
    assert_eq!(
        a.run_at_commit(&commit[..8], None).await.expect("at"),
        Some(a2)
    );
    assert_eq!(
        b.run_at_commit(&commit[..8], None).await.expect("at"),
        Some(b2)
    );
    assert_eq!(a.run_by_tag("baseline").await.expect("tag"), Some(a1));
    assert_eq!(b.run_by_tag("baseline").await.expect("tag"), Some(b1));
    assert_eq!(a.require_run(a1).await.expect("a1").tags, ["baseline"]);
    let machine = a.require_run(a2).await.expect("a2").machine_id;
    let history = a
        .history("s", machine, a2 + 100, 10)
        .await
        .expect("history");
    let seen: BTreeSet<RunId> = history.values().flatten().map(|p| p.run).collect();
    assert_eq!(seen, BTreeSet::from([a1, a2]));

    // What the pages read: machines, trend, latest per machine, notes.
    assert_eq!(a.machines(Some("s")).await.expect("machines")[0].runs, 2);
    let trend = a.trend("s", None, TrendRuns::Line).await.expect("trend");
    assert_eq!(
        trend.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        [a1, a2]
    );
    assert_eq!(a.latest_runs_per_machine().await.expect("latest"), [a2]);
    assert!(
        b.suite_annotations("s", None)
            .await
            .expect("notes")
            .is_empty()
    );
    assert_eq!(
        a.suite_annotations("s", None).await.expect("notes").len(),
        1
    );
    assert!(a.has_suite("s").await.expect("has") && !f.ledger.has_suite("s").await.expect("has"));

    // Writing through one project to another's run is refused.
    assert!(matches!(
        a.tag(b1, "x").await,
        Err(LedgerError::NoSuchRun(_))
    ));
    assert!(matches!(
        a.annotate(b1, "x").await,
        Err(LedgerError::NoSuchRun(_))
    ));

    // The ledger knows both; a copy keeps them apart.
    let projects = f.ledger.projects().await.expect("projects");
    let names: Vec<(&str, i64)> = projects.iter().map(|p| (p.name.as_str(), p.runs)).collect();
    assert_eq!(names, [("alpha", 2), ("beta", 2)]);
    let copy = bench_store::Ledger::in_memory().await.expect("copy");
    let report = copy_ledger(&*f.ledger, &*copy, |_| {})
        .await
        .expect("copied");
    assert_eq!(report.runs_copied, 4);
    let copied_a = copy.in_project(&project("alpha"));
    let runs = copied_a.runs(&RunFilter::default()).await.expect("runs");
    assert_eq!(runs.len(), 2);
    let baseline = copied_a
        .run_by_tag("baseline")
        .await
        .expect("tag")
        .expect("some");
    assert_eq!(
        copied_a.measurements(baseline).await.expect("results")[0]
            .estimate
            .point,
        10.0
    );
    assert!(
        copy.runs(&RunFilter::default())
            .await
            .expect("runs")
            .is_empty()
    );
}

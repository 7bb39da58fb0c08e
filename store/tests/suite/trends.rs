//! What the web server reads of a suite: its line's trend apart from `ab` pairs, quick runs and
//! confirmations, its machines with their runs, and the notes between two runs.

use super::*;

/// As the CI recipe pushes them: each pull request's `ab` pair, a quick run and a confirmation
/// land between the main line's runs. The trend draws the line; every run on request.
pub async fn a_trend_draws_the_line_and_leaves_ab_pairs_to_their_compare_page(f: &Fixture) {
    let l = &f.ledger;
    let mut line = Vec::new();
    let mut off_line = Vec::new();
    for i in 0..4 {
        line.push(
            l.record_run(&small_run("s", "m", 10.0 + f64::from(i)))
                .await
                .expect("line"),
        );
        let (b, h) = record_pair(f, 3).await;
        off_line.extend([b, h]);
    }
    let mut quick = small_run("s", "m", 99.0);
    quick.provenance.quick = true;
    off_line.push(l.record_run(&quick).await.expect("quick"));
    let mut confirmation = small_run("s", "m", 98.0);
    confirmation.source = RunSource::Confirmation;
    off_line.push(l.record_run(&confirmation).await.expect("confirmation"));
    let mut profile = small_run("s", "m", 97.0);
    profile.source = RunSource::Profile;
    off_line.push(l.record_run(&profile).await.expect("profile"));

    let ids = |t: &bench_store::TrendData| {
        let mut ids: Vec<RunId> = t.runs.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids
    };
    let drawn = l.trend("s", None, TrendRuns::Line).await.expect("line");
    assert_eq!(ids(&drawn), line, "only the line's runs");
    assert_eq!(
        drawn.series[0]
            .values
            .iter()
            .map(|v| v.estimate)
            .collect::<Vec<_>>(),
        [10.0, 11.0, 12.0, 13.0]
    );
    let everything = l
        .trend("s", None, TrendRuns::Everything)
        .await
        .expect("all");
    let mut all: Vec<RunId> = line.iter().chain(&off_line).copied().collect();
    all.sort_unstable();
    assert_eq!(ids(&everything), all);
    let machine = &l.machines(Some("s")).await.expect("machines")[0];
    assert_eq!(
        (machine.line_runs, machine.runs),
        (4, i64::try_from(all.len()).expect("count")),
        "the machine list counts the line's runs apart"
    );
    // The dashboard's newest run of the suite is the line's, not the last push.
    assert_eq!(
        l.latest_runs_per_machine().await.expect("latest"),
        [line[3]]
    );
    // A suite with only quick runs still has a newest run.
    let mut only_quick = small_run("q", "m", 1.0);
    only_quick.provenance.quick = true;
    let q = l.record_run(&only_quick).await.expect("q");
    assert_eq!(
        l.latest_runs_per_machine().await.expect("latest"),
        [q, line[3]]
    );
}

pub async fn machines_trend_and_annotations_for_the_web(f: &Fixture) {
    let l = &f.ledger;
    let with_time = |suite: &str, machine: &str, time: Option<i64>, value: f64| {
        let mut run = small_run(suite, machine, value);
        run.provenance.git.commit_time = time;
        run
    };
    let a = l
        .record_run(&with_time("s", "m1", Some(300), 3.0))
        .await
        .expect("a");
    let b = l
        .record_run(&with_time("s", "m1", Some(100), 1.0))
        .await
        .expect("b");
    let mut on_testbed = with_time("s", "m2", Some(200), 2.0);
    on_testbed.provenance.machine.testbed = Some("ci-small".to_owned());
    let c = l.record_run(&on_testbed).await.expect("c");
    let d = l
        .record_run(&with_time("t", "m1", None, 4.0))
        .await
        .expect("d");
    l.annotate(b, "slow disk").await.expect("note");

    let machines = l.machines(Some("s")).await.expect("machines");
    assert_eq!(machines.len(), 2);
    assert_eq!((machines[0].runs, machines[0].latest_run), (2, b));
    assert_eq!(machines[0].fingerprint, "m1");
    assert_eq!(machines[0].testbed, None);
    assert_eq!(machines[1].testbed.as_deref(), Some("ci-small"));
    assert_eq!(l.machines(None).await.expect("machines")[0].runs, 3);
    assert_eq!(
        l.latest_runs_per_machine().await.expect("latest"),
        [c, b, d]
    );

    let all = l.trend("s", None, TrendRuns::Line).await.expect("trend");
    let order: Vec<RunId> = all.runs.iter().map(|r| r.id).collect();
    assert_eq!(order, [b, c, a], "commit order, not recording order");
    assert_eq!(all.series.len(), 1);
    let values = &all.series[0].values;
    assert_eq!(values.iter().map(|v| v.run_id).collect::<Vec<_>>(), order);
    assert_eq!(values.iter().map(|v| v.run).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        values.iter().map(|v| v.estimate).collect::<Vec<_>>(),
        [1.0, 2.0, 3.0]
    );
    let m1 = l
        .trend("s", Some(machines[0].id), TrendRuns::Line)
        .await
        .expect("trend m1");
    assert_eq!(m1.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [b, a]);
    assert_eq!(m1.series[0].values.len(), 2);
    assert!(
        l.trend("nope", None, TrendRuns::Line)
            .await
            .expect("empty")
            .series
            .is_empty()
    );
    // Since a run: only the runs recorded after it (larger ids), in commit order.
    let since = l
        .trend_since("s", None, TrendRuns::Line, a)
        .await
        .expect("since a");
    assert_eq!(since.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [b, c]);
    assert_eq!(
        since.series[0]
            .values
            .iter()
            .map(|v| (v.run, v.run_id))
            .collect::<Vec<_>>(),
        [(0, b), (1, c)]
    );
    assert!(
        l.trend_since("s", None, TrendRuns::Line, c)
            .await
            .expect("since c")
            .runs
            .is_empty()
    );
    // A run outside git sorts by when it was recorded.
    assert_eq!(
        l.trend("t", None, TrendRuns::Line).await.expect("t").runs[0].id,
        d
    );

    // Series are told apart exactly, whatever the names contain, and sorted bytewise.
    let mut odd = with_time("u", "m1", Some(1), 1.0);
    let template = odd.measurements[0].clone();
    odd.measurements.clear();
    for (bench, metric, value) in [
        ("ab", "c", 1.0),
        ("a", "bc", 2.0),
        ("a:b", "c", 3.0),
        ("B", "c", 4.0),
    ] {
        let mut m = template.clone();
        m.benchmark = BenchmarkId::named(bench);
        m.metric = metric.to_owned();
        m.estimate = Estimate::point(value);
        odd.measurements.push(m);
    }
    l.record_run(&odd).await.expect("odd");
    let mut later = with_time("u", "m1", Some(2), 4.0);
    later.measurements[0].benchmark = BenchmarkId::named("ab");
    later.measurements[0].metric = "c".to_owned();
    l.record_run(&later).await.expect("later");
    let u = l.trend("u", None, TrendRuns::Line).await.expect("u");
    let names: Vec<(&str, &str, usize)> = u
        .series
        .iter()
        .map(|s| (s.benchmark.as_str(), s.metric.as_str(), s.values.len()))
        .collect();
    assert_eq!(
        names,
        [
            ("B", "c", 1),
            ("a", "bc", 1),
            ("a:b", "c", 1),
            ("ab", "c", 2)
        ]
    );

    let notes = l.suite_annotations("s", None).await.expect("notes");
    assert_eq!(notes.len(), 1);
    assert_eq!((notes[0].run_id, notes[0].text.as_str()), (b, "slow disk"));
    assert!(
        l.suite_annotations("s", Some(machines[1].id))
            .await
            .expect("m2")
            .is_empty()
    );
    assert!(l.suite_annotations("t", None).await.expect("t").is_empty());
}

/// The notes a comparison spans: annotations on the runs of one suite and machine from one run
/// to another in commit order (the trend's order: commit time, recording time outside git,
/// then id), whichever end comes first, and nothing from other suites or machines.
pub async fn annotations_between_runs_follow_commit_order(f: &Fixture) {
    let l = &f.ledger;
    let record = |suite: &'static str, machine: &'static str, time: Option<i64>| {
        let mut run = small_run(suite, machine, 1.0);
        run.provenance.git.commit_time = time;
        async move { l.record_run(&run).await.expect("record") }
    };
    let r1 = record("s", "m1", Some(100)).await;
    let r2 = record("s", "m1", Some(200)).await;
    let r3 = record("s", "m1", Some(300)).await;
    // Recorded later, committed between r1 and r2.
    let backfill = record("s", "m1", Some(150)).await;
    // The same commit time as r2, recorded after it: after r2 in commit order.
    let tie = record("s", "m1", Some(200)).await;
    let other_machine = record("s", "m2", Some(250)).await;
    let other_suite = record("t", "m1", Some(200)).await;
    // Outside git: ordered by when it was recorded (now), after every commit above.
    let no_git = record("s", "m1", None).await;
    for (run, text) in [
        (r2, "two a"),
        (r1, "one"),
        (r3, "three"),
        (backfill, "backfill"),
        (tie, "tie"),
        (other_machine, "other machine"),
        (other_suite, "other suite"),
        (no_git, "no git"),
        (r2, "two b"),
    ] {
        l.annotate(run, text).await.expect("annotate");
    }
    let machines = l.machines(Some("s")).await.expect("machines");
    let (m1, m2) = (machines[0].id, machines[1].id);
    let between = |suite: &'static str, machine: i64, from: RunId, to: RunId| async move {
        l.annotations_between(suite, machine, from, to)
            .await
            .expect("annotations between")
            .into_iter()
            .map(|a| (a.run_id, a.text))
            .collect::<Vec<_>>()
    };
    let notes = |pairs: &[(RunId, &str)]| {
        pairs
            .iter()
            .map(|&(run, text)| (run, text.to_owned()))
            .collect::<Vec<_>>()
    };
    let r1_to_r2 = notes(&[
        (r1, "one"),
        (backfill, "backfill"),
        (r2, "two a"),
        (r2, "two b"),
    ]);
    assert_eq!(between("s", m1, r1, r2).await, r1_to_r2);
    assert_eq!(between("s", m1, r2, r1).await, r1_to_r2, "either order");
    assert_eq!(
        between("s", m1, r2, r3).await,
        notes(&[(r2, "two a"), (r2, "two b"), (tie, "tie"), (r3, "three")])
    );
    assert_eq!(
        between("s", m1, r3, no_git).await,
        notes(&[(r3, "three"), (no_git, "no git")])
    );
    assert_eq!(
        between("s", m1, r2, 9_999).await,
        notes(&[(r2, "two a"), (r2, "two b")]),
        "a missing end counts as the other"
    );
    assert!(between("s", m1, 9_998, 9_999).await.is_empty());
    // The ends place the span; the notes come from the machine and suite asked for.
    assert_eq!(
        between("s", m2, r1, r3).await,
        notes(&[(other_machine, "other machine")])
    );
    assert_eq!(
        between("t", m1, r1, r3).await,
        notes(&[(other_suite, "other suite")])
    );
    assert!(between("s", m2, r1, r2).await.is_empty());
}

//! Line summaries: the counts that the dashboard, the run lists and the project and testbed
//! menus read are kept as runs are recorded, by every way a run is written, in every project,
//! under concurrent writers; and they only ever count up.

use super::*;
use bench_store::{Ledger, ProjectSummary, SuiteSummary};

/// What a project's summaries must say, counted from its runs as the store lists them.
#[derive(Debug, Default)]
struct Counted {
    suites: BTreeMap<String, (i64, RunId)>,
    /// Per machine row id: runs, runs on the line, newest run.
    machines: BTreeMap<i64, (i64, i64, RunId)>,
    /// Per (suite, machine): newest run, newest run on the line.
    lines: BTreeMap<(String, i64), (RunId, Option<RunId>)>,
}

async fn counted(ledger: &Ledger) -> Counted {
    let mut c = Counted::default();
    for r in ledger.runs(&RunFilter::default()).await.expect("runs") {
        let on_line = r.source.is_on_the_line() && !r.quick;
        let suite = c.suites.entry(r.suite.clone()).or_insert((0, r.id));
        suite.0 += 1;
        suite.1 = suite.1.max(r.id);
        let machine = c.machines.entry(r.machine_id).or_insert((0, 0, r.id));
        machine.0 += 1;
        machine.1 += i64::from(on_line);
        machine.2 = machine.2.max(r.id);
        let line = c
            .lines
            .entry((r.suite, r.machine_id))
            .or_insert((r.id, None));
        line.0 = line.0.max(r.id);
        if on_line {
            line.1 = line.1.max(Some(r.id));
        }
    }
    c
}

/// Every summary `ledger` reads equals what its runs count.
async fn summaries_match_the_runs(ledger: &Ledger, what: &str) -> ProjectSummary {
    let c = counted(ledger).await;
    let suites: Vec<SuiteSummary> = c
        .suites
        .iter()
        .map(|(suite, &(runs, latest_run))| SuiteSummary {
            suite: suite.clone(),
            runs,
            latest_run,
        })
        .collect();
    assert_eq!(ledger.suites().await.expect("suites"), suites, "{what}");
    let machines: Vec<(i64, i64, i64, RunId)> = ledger
        .machines(None)
        .await
        .expect("machines")
        .into_iter()
        .map(|m| (m.id, m.runs, m.line_runs, m.latest_run))
        .collect();
    let want: Vec<_> = c
        .machines
        .iter()
        .map(|(&id, &(runs, line, latest))| (id, runs, line, latest))
        .collect();
    assert_eq!(machines, want, "{what}: machines");
    for suite in c.suites.keys() {
        assert_eq!(
            ledger.latest_run(Some(suite)).await.expect("latest"),
            Some(c.suites[suite].1),
            "{what}: newest run of {suite}"
        );
        let runs_of_suite: i64 = ledger
            .machines(Some(suite))
            .await
            .expect("machines of a suite")
            .iter()
            .map(|m| m.runs)
            .sum();
        assert_eq!(
            runs_of_suite, c.suites[suite].0,
            "{what}: machines of {suite}"
        );
    }
    // The newest run of each line, on the line when it has one; by suite, newest first.
    let mut newest: Vec<(&String, RunId)> = c
        .lines
        .iter()
        .map(|((suite, _), &(latest, on_line))| (suite, on_line.unwrap_or(latest)))
        .collect();
    newest.sort_by(|a, b| a.0.cmp(b.0).then(b.1.cmp(&a.1)));
    assert_eq!(
        ledger.latest_runs_per_machine().await.expect("per line"),
        newest.iter().map(|(_, id)| *id).collect::<Vec<_>>(),
        "{what}: the newest run of each line"
    );
    let latest = c.suites.values().map(|s| s.1).max().expect("a run");
    assert_eq!(
        ledger.latest_run(None).await.expect("latest"),
        Some(latest),
        "{what}"
    );
    ProjectSummary {
        name: ledger.project().as_str().to_owned(),
        runs: c.suites.values().map(|s| s.0).sum(),
        suites: i64::try_from(c.suites.len()).expect("count"),
        latest_run: latest,
    }
}

pub async fn line_summaries_count_every_run_as_recorded(f: &Fixture) {
    let l = &f.ledger;
    let other = l.in_project(&Project::new("other").expect("project"));

    // Every way a run is written: recorded, quick, a confirmation, an A/B pair, a push, a
    // dated import; the same names in another project.
    l.record_run(&small_run("s", "m", 1.0)).await.expect("run");
    let mut quick = small_run("s", "m", 2.0);
    quick.provenance.quick = true;
    l.record_run(&quick).await.expect("quick");
    let mut confirmation = small_run("s", "m2", 3.0);
    confirmation.source = RunSource::Confirmation;
    l.record_run(&confirmation).await.expect("confirmation");
    record_pair(f, 2).await;
    l.record_run_once(&small_run("t", "m", 4.0), &key("k", 'a'))
        .await
        .expect("push");
    other
        .record_run(&small_run("s", "m", 5.0))
        .await
        .expect("another project's run");
    summaries_match_the_runs(l, "after each kind of write").await;

    // Concurrent writers on a few lines of both projects.
    let writers: Vec<_> = (0..16)
        .map(|i| {
            let ledger = if i % 4 == 0 { other.clone() } else { l.clone() };
            tokio::spawn(async move {
                let mut run = small_run(["s", "t"][i % 2], ["m", "m2"][i / 8], 1.0);
                run.provenance.quick = i % 3 == 0;
                ledger.record_run(&run).await
            })
        })
        .collect();
    for w in writers {
        w.await.expect("join").expect("record");
    }
    let projects = vec![
        summaries_match_the_runs(l, "after concurrent writers").await,
        summaries_match_the_runs(&other, "another project").await,
    ];
    assert_eq!(l.projects().await.expect("projects"), projects);

    // Counts only go up: removing or lowering a summary is refused by the database.
    let mut refused = vec![
        "DELETE FROM line_summaries",
        "UPDATE line_summaries SET runs = runs - 1",
        "UPDATE line_summaries SET latest_run = 1",
        "UPDATE line_summaries SET suite = 'x'",
    ];
    if f.is_postgres() {
        refused.push("TRUNCATE line_summaries");
    }
    for sql in refused {
        let err = f.execute(sql).await.expect_err(sql);
        assert!(err.is_append_only_refusal(), "{sql}: {err}");
    }
    summaries_match_the_runs(l, "after the refused changes").await;
}

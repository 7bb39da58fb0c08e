//! Robustness: a kill mid-ingest leaves no partial run, concurrent writers all land (both on
//! SQLite and on PostgreSQL), and bad input gives a clear message and exit 2 without losing
//! what is stored.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use util::{Sandbox, assert_exit, bmf, run_count, stderr};

fn import_bmf(sandbox: &Sandbox, name: &str, contents: &str) -> std::process::Output {
    let file = sandbox.write(name, contents.as_bytes());
    sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(file)
        .args(["--suite", "imported"])
        .output()
        .unwrap()
}

/// kill -9 of a `bench-run import` stopped inside its transaction, after 40 of 100 results.
fn kill_during_ingest(sandbox: &Sandbox) {
    assert_exit(&import_bmf(sandbox, "one.json", &bmf(3, 1.0)), 0);
    let file = sandbox.write("big.json", bmf(50, 1.0).as_bytes());
    let mut child = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(&file)
        .args(["--suite", "imported"])
        .env("BENCH_RUN_FAILPOINT", "record-run:40")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the transaction holds 40 results, then kill -9.
    let reader = BufReader::new(child.stderr.take().unwrap());
    let mut reached = false;
    for line in reader.lines() {
        if line.unwrap().contains("failpoint record-run:40 reached") {
            reached = true;
            break;
        }
    }
    assert!(reached, "the failpoint was not reached");
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(run_count(sandbox), 1, "the killed import left a run behind");
    let show = sandbox
        .bench_run()
        .args(["show", "latest", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&show, 0);
    assert_eq!(util::json(&show)["results"].as_array().unwrap().len(), 6);
    // The ledger still takes writes.
    assert_exit(&import_bmf(sandbox, "two.json", &bmf(2, 1.0)), 0);
    assert_eq!(run_count(sandbox), 2);
}

#[test]
fn a_kill_during_ingest_leaves_no_partial_run() {
    kill_during_ingest(&Sandbox::empty());
}

#[test]
fn a_kill_during_ingest_leaves_no_partial_run_on_postgres() {
    if let Some(sandbox) = Sandbox::empty_on_postgres("kill during ingest on postgres") {
        kill_during_ingest(&sandbox);
    }
}

/// Writers of the concurrency tests.
const WRITERS: u32 = 16;

/// Sixteen `bench-run import`s at once into a fresh ledger (they also race to create and
/// migrate it): every run lands whole, with all of its results.
fn concurrent_imports(sandbox: &Sandbox) {
    let files: Vec<_> = (0..WRITERS)
        .map(|i| {
            sandbox.write(
                &format!("r{i}.json"),
                bmf(20, 1.0 + f64::from(i)).as_bytes(),
            )
        })
        .collect();
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            sandbox
                .bench_run()
                .args(["import", "bmf"])
                .arg(f)
                .args(["--suite", "imported"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        assert_exit(&child.wait_with_output().unwrap(), 0);
    }
    let output = sandbox
        .bench_run()
        .args(["list", "--limit", "1000", "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let runs = util::json(&output);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), WRITERS as usize);
    // 20 benchmarks of two measures each.
    assert!(runs.iter().all(|r| r["results"] == 40), "{runs:?}");
}

#[test]
fn sixteen_concurrent_imports_all_land() {
    concurrent_imports(&Sandbox::empty());
}

#[test]
fn sixteen_concurrent_imports_all_land_on_postgres() {
    if let Some(sandbox) = Sandbox::empty_on_postgres("concurrent imports on postgres") {
        concurrent_imports(&sandbox);
    }
}

#[test]
fn bad_input_is_refused_with_exit_2_and_nothing_is_lost() {
    let sandbox = Sandbox::empty();
    assert_exit(&import_bmf(&sandbox, "good.json", &bmf(2, 1.0)), 0);

    // Garbage and truncated criterion JSON.
    let good_estimates = r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1.5,"standard_error":0.1}"#;
    for (i, estimates) in ["\u{0}\u{1}garbage{{{", good_estimates].iter().enumerate() {
        let dir = sandbox.dir.path().join(format!("criterion-{i}"));
        let new = dir.join("g/f/new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(new.join("benchmark.json"), r#"{"group_id":"g","function_id":"f","value_str":null,"throughput":null,"full_id":"g/f","directory_name":"g/f","title":"g/f"}"#).unwrap();
        std::fs::write(new.join("estimates.json"), estimates).unwrap();
        std::fs::write(
            new.join("sample.json"),
            r#"{"sampling_mode":"Linear","iters":[1.0,2.0],"times":[1.0,2.0]}"#,
        )
        .unwrap();
        let out = sandbox
            .bench_run()
            .args(["import", "criterion"])
            .arg(&dir)
            .args(["--suite", "c"])
            .output()
            .unwrap();
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("estimates.json"),
            "case {i}: the message names the file: {}",
            stderr(&out)
        );
    }

    // Truncated BMF, wrong shapes, non-finite values.
    for (i, doc) in [
        &bmf(3, 1.0)[..40],
        "[]",
        r#"{"a": {"latency": {"value": "x"}}}"#,
        r#"{"a": {"latency": {"value": 1e999}}}"#,
        "",
    ]
    .iter()
    .enumerate()
    {
        let out = import_bmf(&sandbox, &format!("bad{i}.json"), doc);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).starts_with("error: "),
            "case {i}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        run_count(&sandbox),
        1,
        "failed imports must not record anything"
    );

    // A ledger path that cannot be created.
    let blocker = sandbox.write("not-a-dir", b"file");
    let out = sandbox
        .command()
        .arg("--db")
        .arg(blocker.join("ledger.sqlite"))
        .arg("list")
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("not-a-dir"), "{}", stderr(&out));

    // A file that is not a ledger at all.
    let junk = sandbox.write("junk.sqlite", &[0x42; 4096]);
    let out = sandbox
        .command()
        .arg("--db")
        .arg(&junk)
        .arg("list")
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert_eq!(
        std::fs::read(&junk).unwrap(),
        vec![0x42; 4096],
        "a foreign file must not be modified"
    );

    // Unknown run references.
    let out = sandbox.bench_run().args(["show", "999"]).output().unwrap();
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("999"), "{}", stderr(&out));

    assert_eq!(run_count(&sandbox), 1);
}

#[test]
fn a_ledger_from_a_newer_schema_is_refused_untouched() {
    let sandbox = Sandbox::empty();
    assert_exit(&import_bmf(&sandbox, "good.json", &bmf(2, 1.0)), 0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Past the store (it has no door for this): a connection of the test's own.
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(sandbox.db());
        let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             VALUES (99990101000000, 'from the future', 1, x'00', 0)",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
    });
    for args in [
        &["list"][..],
        &["import", "bmf", "good.json", "--suite", "s"],
    ] {
        let out = sandbox.bench_run().args(args).output().unwrap();
        assert_exit(&out, 2);
        assert!(stderr(&out).contains("newer"), "{}", stderr(&out));
    }
}

#[test]
fn an_unknown_suite_lists_the_available_ones() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .bench_run()
        .args(["--suite", "no_such_suite"])
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("no_such_suite") && err.contains("tiny_suite"),
        "{err}"
    );
}

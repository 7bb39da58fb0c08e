//! Backups and restores, as README.md's "Backups and upgrades" gives them: `bench-run ledger
//! copy` of a ledger (SQLite or PostgreSQL) into a new SQLite file and of that file into a new
//! ledger, and `pg_dump -Fc` / `pg_restore` of a PostgreSQL ledger. What is restored lists,
//! shows, exports (raw samples included) and compares exactly as the original did, byte for
//! byte, and takes new runs.
//!
//! The ledger is filled through the binary: two runs of the fixture suite (everything a real
//! run records: provenance, machine load, statistics, raw samples), the four criterion
//! captures of adapters/testdata imported as a second suite's history, a BMF import, tags (one
//! moved to another run) and notes. PostgreSQL runs through testkit::postgres (skipped outside
//! CI without it, failed under CI).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;
use util::{Sandbox, assert_exit, json, stderr, stdout};

/// The runs `fill` records.
const RUNS: usize = 7;

#[test]
fn a_ledger_copied_to_a_file_reads_back_as_the_original() {
    let sandbox = Sandbox::new();
    fill(&sandbox);
    let restored = sandbox.dir.path().join("restored.sqlite");
    copy_to_a_file_and_back(&sandbox, &restored.to_string_lossy());
}

#[test]
fn a_postgres_ledger_copied_to_a_file_reads_back_as_the_original() {
    let what = "a_postgres_ledger_copied_to_a_file_reads_back_as_the_original";
    let Some(sandbox) = Sandbox::new_on_postgres(what) else {
        return;
    };
    fill(&sandbox);
    // Restored into a new database of the server, as a team's server would be.
    let restored = testkit::postgres::server(what)
        .expect("the sandbox's server")
        .create_database();
    copy_to_a_file_and_back(&sandbox, &restored);
}

#[test]
fn a_postgres_ledger_restored_from_pg_dump_reads_back_as_the_original() {
    let what = "a_postgres_ledger_restored_from_pg_dump_reads_back_as_the_original";
    let Some(sandbox) = Sandbox::new_on_postgres(what) else {
        return;
    };
    let server = testkit::postgres::server(what).expect("the sandbox's server");
    fill(&sandbox);
    let original = sandbox.db();

    let dump = sandbox.dir.path().join("ledger.dump");
    run(Command::new(server.program("pg_dump"))
        .args(["-Fc", "-f"])
        .arg(&dump)
        .args(["-d", &original]));
    let restored = server.create_database();
    run(Command::new(server.program("pg_restore"))
        .args(["--no-owner", "--exit-on-error", "-d", &restored])
        .arg(&dump));

    assert_same_outputs(&sandbox, &original, &restored);
    // The same ledger, not a copy: its identity, so its citations, are the original's.
    assert_eq!(ledger_id(&restored), ledger_id(&original));
    // Still append-only: the triggers came back with the tables.
    let update = Command::new(server.program("psql"))
        .args(["-X", "-v", "ON_ERROR_STOP=1", "-d", &restored, "-c"])
        .arg("UPDATE runs SET suite = 'rewritten' WHERE id = 1")
        .output()
        .unwrap();
    assert!(!update.status.success(), "{}", stdout(&update));
    assert!(
        String::from_utf8_lossy(&update.stderr).contains("append-only"),
        "{}",
        String::from_utf8_lossy(&update.stderr)
    );
    takes_a_new_run(&sandbox, &restored);
}

/// `ledger copy` of the sandbox's ledger into a new file, and of that file into the empty
/// ledger `restore_to`: both read back as the original; the file names the original's runs by
/// their citations and takes new runs.
fn copy_to_a_file_and_back(sandbox: &Sandbox, restore_to: &str) {
    let original = sandbox.db();
    let backup = sandbox.dir.path().join("backup").join("ledger.sqlite");
    let backup = backup.to_string_lossy().into_owned();
    ledger_copy(sandbox, &original, &backup);
    assert_same_outputs(sandbox, &original, &backup);
    ledger_copy(sandbox, &backup, restore_to);
    assert_same_outputs(sandbox, &original, restore_to);

    // A run cited in the original ledger (`LEDGER#RUN`, as `bench-run log` writes) is found in
    // the backup.
    let origin = ledger_id(&original);
    for id in 1..=RUNS {
        let cited = format!("{}#{id}", &origin[..8]);
        assert_eq!(
            output(sandbox, &backup, &["show", &cited, "--format", "json"]),
            output(
                sandbox,
                &original,
                &["show", &id.to_string(), "--format", "json"]
            ),
            "{cited}"
        );
    }
    takes_a_new_run(sandbox, &backup);
    takes_a_new_run(sandbox, restore_to);
}

/// `bench-run ledger copy --from FROM --to TO`, TO empty: every run copied under its own
/// number, every tag set.
fn ledger_copy(sandbox: &Sandbox, from: &str, to: &str) {
    let copy = sandbox
        .command()
        .args([
            "ledger", "copy", "--from", from, "--to", to, "--format", "json",
        ])
        .output()
        .unwrap();
    assert_exit(&copy, 0);
    let report = json(&copy);
    assert_eq!(report["runs_copied"], RUNS, "{report:#}");
    assert_eq!(report["tag_conflicts"], serde_json::json!([]), "{report:#}");
    // Copied into an empty ledger, oldest first: every run keeps its number.
    for id in 1..=RUNS {
        assert_eq!(report["run_ids"][id.to_string()], id, "{report:#}");
    }
}

/// Records into the sandbox's ledger what a few weeks of use would.
fn fill(sandbox: &Sandbox) {
    for _ in 0..2 {
        assert_exit(&sandbox.quick_run(&[], &[]), 0);
    }
    for version in ["0.5", "0.6", "0.7", "0.8"] {
        let out = sandbox
            .bench_run()
            .args(["import", "criterion"])
            .arg(testdata(&format!("criterion/{version}")))
            .args(["--suite", "capture"])
            .output()
            .unwrap();
        assert_exit(&out, 0);
    }
    let out = sandbox
        .bench_run()
        .args(["import", "bmf"])
        .arg(testdata("bmf/example.json"))
        .args(["--suite", "bmf"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    for args in [
        &["tag", "1", "base"][..],
        &["tag", "2", "head"],
        &["tag", "5", "base"],
        &[
            "annotate",
            "2",
            "measured while the fixture's build was warm",
        ],
        &["annotate", "6", "criterion 0.8 — ratios \"as printed\""],
        &["annotate", "6", "second note, same run"],
    ] {
        assert_exit(&sandbox.bench_run().args(args).output().unwrap(), 0);
    }
    assert_eq!(util::run_count(sandbox), RUNS);
}

/// Every listing, run, export and comparison of `original` and `restored`, side by side.
fn assert_same_outputs(sandbox: &Sandbox, original: &str, restored: &str) {
    let mut commands: Vec<Vec<String>> = vec![
        vec!["list".into(), "--limit".into(), "100".into()],
        vec!["list".into(), "--format".into(), "json".into()],
    ];
    for id in 1..=RUNS {
        for args in [
            ["show", "--format", "json"],
            ["export", "--format", "json"],
            ["show", "--format", "table"],
        ] {
            commands.push(vec![
                args[0].into(),
                id.to_string(),
                args[1].into(),
                args[2].into(),
            ]);
        }
    }
    // The fixture suite's two runs; the capture suite's by tag, id and `previous`/`latest`
    // (with their history); and two suites compared anyway.
    for args in [
        &["compare", "1", "2"][..],
        &["compare", "base", "6"],
        &["compare", "3", "6", "--explain"],
        &["compare", "previous", "latest", "--suite", "capture"],
        &["compare", "base", "head", "--allow-mismatch"],
    ] {
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.extend(["--format".into(), "json".into()]);
        commands.push(args);
    }
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let want = output(sandbox, original, &args);
        assert!(!want.trim().is_empty(), "{args:?} printed nothing");
        let got = output(sandbox, restored, &args);
        if got != want {
            let line = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
            panic!(
                "{args:?} differs from line {}:\n  {original}: {:?}\n  {restored}: {:?}",
                line + 1,
                want.lines().nth(line),
                got.lines().nth(line)
            );
        }
    }
    // The exports hold the raw samples themselves, not only their counts.
    let export = output(sandbox, restored, &["export", "1", "--format", "json"]);
    let export: serde_json::Value = serde_json::from_str(&export).unwrap();
    let samples = &export["results"][0]["raw_samples"]["times_ns"];
    assert!(
        samples.as_array().is_some_and(|s| !s.is_empty()),
        "{export:#}"
    );
}

/// The restored ledger records a new run after the old ones.
fn takes_a_new_run(sandbox: &Sandbox, db: &str) {
    let out = sandbox
        .command()
        .args(["--db", db, "import", "bmf"])
        .arg(testdata("bmf/example.json"))
        .args(["--suite", "bmf"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out).trim(),
        (RUNS + 1).to_string(),
        "{}",
        stderr(&out)
    );
    let listed = output(sandbox, db, &["list", "--format", "json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(RUNS + 1));
}

/// Standard output of `bench-run --db DB ARGS`, which must succeed.
fn output(sandbox: &Sandbox, db: &str, args: &[&str]) -> String {
    let out = sandbox
        .command()
        .args(["--db", db])
        .args(args)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    stdout(&out)
}

/// The identity of the ledger at `db`.
fn ledger_id(db: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let location = bench_store::Location::parse(db).unwrap();
        let ledger = bench_store::Ledger::open_read_only(location).await.unwrap();
        let id = ledger.ledger_id().await.unwrap();
        ledger.close().await;
        id
    })
}

fn run(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/testdata")
        .join(path)
}

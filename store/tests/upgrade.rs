//! Upgrades: a ledger of every schema version of each engine opens with this build, is
//! migrated in place, and loses nothing.
//!
//! The fixtures (`tests/fixtures/upgrades/`, see the README there) are ledgers at exactly one
//! migration each, SQLite files and PostgreSQL dumps, holding the data of `upgrades::plan`:
//! runs with results, statistics and raw samples, tags, notes, and as the schema grew, run
//! conditions, pairings and their layouts, a copied run, pushed runs' keys, a testbed,
//! artifacts. For each fixture the test checks that
//!
//! - it is at exactly its migration, and every table has a row and every column a value
//!   (so each migration step is exercised with data);
//! - a read-only open refuses it when it is older than this build, and changes nothing;
//! - `Ledger::open` migrates it to the newest schema, and that schema is a new ledger's;
//! - every row is still there with every value it had, and through the store every run,
//!   result, statistic, sample, tag, note, pairing, copy origin, idempotency key, machine and
//!   artifact reads back as the plan wrote it;
//! - it then takes new runs, tags, notes, a pair and an artifact, and the old runs are the new
//!   run's baseline and history;
//!
//! and a ledger marked with a migration newer than this build is refused, untouched, even
//! when it has older migrations still to run. PostgreSQL runs through testkit::postgres
//! (skipped outside CI without it, failed under CI), as in store.rs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod upgrades;

use bench_model::{ArtifactKind, ArtifactSummary, NewArtifact, Project, RunSource};
use bench_store::{
    Ingested, Ledger, LedgerError, Location, MachineSummary, PairIngested, ProjectSummary,
    RunFilter,
};
use std::collections::BTreeMap;
use std::process::Command;
use testkit::postgres::PgServer;
use upgrades::plan::{Plan, Schema};
use upgrades::{Db, Engine, Migration, Value};

/// The largest fixture kept in the repository.
const MAX_FIXTURE_BYTES: u64 = 200_000;

/// The page size of the SQLite fixtures: a quarter of SQLite's default, for files a quarter
/// the size (most of a small ledger's pages are the first of a table or an index).
const FIXTURE_PAGE_SIZE: u32 = 1024;

/// A migration that no build has: a ledger marked with it is from a newer bench-run.
const FUTURE_MIGRATION: i64 = 99_991_231_000_000;

#[test]
fn every_migration_has_an_upgrade_fixture() {
    for engine in Engine::ALL {
        let migrations = engine.migrations();
        let versions: Vec<i64> = migrations.iter().map(|m| m.version).collect();
        let embedded: Vec<i64> = engine.migrator().iter().map(|m| m.version).collect();
        assert_eq!(
            versions,
            embedded,
            "migrations/{} differs from the migrations the store embeds",
            engine.name()
        );
        let missing: Vec<String> = migrations
            .iter()
            .filter(|m| !m.fixture().exists())
            .map(ToString::to_string)
            .collect();
        assert!(
            missing.is_empty(),
            "no upgrade fixture for {missing:?}: write it with `cargo test -p bench-store --test \
             upgrade -- --ignored write_missing_upgrade_fixtures` and extend \
             store/tests/upgrades/plan.rs for what the migration adds (see \
             store/tests/fixtures/upgrades/README.md)"
        );
        let expected: Vec<_> = migrations.iter().map(Migration::fixture).collect();
        for entry in std::fs::read_dir(engine.fixtures_dir()).expect("fixtures") {
            let path = entry.expect("entry").path();
            assert!(
                expected.contains(&path),
                "{}: a fixture of no migration in migrations/{}",
                path.display(),
                engine.name()
            );
            let size = path.metadata().expect("size").len();
            assert!(
                size <= MAX_FIXTURE_BYTES,
                "{}: {size} bytes; keep fixtures under {MAX_FIXTURE_BYTES}",
                path.display()
            );
        }
    }
}

#[tokio::test]
async fn every_sqlite_fixture_upgrades_in_place_losing_nothing() {
    let fresh = fresh_schema(None).await;
    for m in Engine::Sqlite.migrations() {
        let fixture = Fixture::open(&m, None).await;
        upgrade_and_check(&m, &fixture, &fresh).await;
    }
}

#[tokio::test]
async fn every_postgres_fixture_upgrades_in_place_losing_nothing() {
    let Some(server) =
        testkit::postgres::server("every_postgres_fixture_upgrades_in_place_losing_nothing")
    else {
        return;
    };
    let fresh = fresh_schema(Some(server)).await;
    for m in Engine::Postgres.migrations() {
        let fixture = Fixture::open(&m, Some(server)).await;
        upgrade_and_check(&m, &fixture, &fresh).await;
    }
}

#[tokio::test]
async fn a_newer_schema_is_refused_before_any_upgrade_on_sqlite() {
    let oldest = Engine::Sqlite.migrations().remove(0);
    newer_schema_is_refused_untouched(&oldest, &Fixture::open(&oldest, None).await).await;
}

#[tokio::test]
async fn a_newer_schema_is_refused_before_any_upgrade_on_postgres() {
    let Some(server) =
        testkit::postgres::server("a_newer_schema_is_refused_before_any_upgrade_on_postgres")
    else {
        return;
    };
    let oldest = Engine::Postgres.migrations().remove(0);
    let fixture = Fixture::open(&oldest, Some(server)).await;
    newer_schema_is_refused_untouched(&oldest, &fixture).await;
}

/// Writes the fixture of every migration that has none (never rewriting one: delete it first
/// to write it again). PostgreSQL's need a server (testkit::postgres) and its `pg_dump`.
#[tokio::test]
#[ignore = "writes the fixtures of new migrations; see tests/fixtures/upgrades/README.md"]
async fn write_missing_upgrade_fixtures() {
    for m in Engine::Sqlite.migrations() {
        if !m.fixture().exists() {
            write_sqlite_fixture(&m).await;
        }
    }
    let missing: Vec<Migration> = Engine::Postgres
        .migrations()
        .into_iter()
        .filter(|m| !m.fixture().exists())
        .collect();
    if !missing.is_empty() {
        let server = testkit::postgres::server("write_missing_upgrade_fixtures")
            .expect("PostgreSQL writes the PostgreSQL fixtures");
        for m in &missing {
            write_postgres_fixture(server, m).await;
        }
    }
}

/// A fixture opened for a test: a fresh copy of it, the test's own connection to it, and
/// where the store finds it.
struct Fixture {
    db: Db,
    location: Location,
    // Keeps the SQLite copy's directory alive.
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// A copy of `m`'s fixture: the file copied, or the dump loaded into a new database.
    async fn open(m: &Migration, server: Option<&PgServer>) -> Self {
        match server {
            None => {
                let dir = tempfile::tempdir().expect("tempdir");
                let path = dir.path().join("ledger.sqlite");
                std::fs::copy(m.fixture(), &path)
                    .unwrap_or_else(|e| panic!("{}: {e}", m.fixture().display()));
                Self {
                    db: Db::sqlite(&path).await,
                    location: Location::Sqlite(path),
                    _dir: Some(dir),
                }
            }
            Some(server) => {
                let url = server.create_database();
                let out = Command::new(server.program("psql"))
                    .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "--single-transaction"])
                    .args(["-d", &url, "-f"])
                    .arg(m.fixture())
                    .output()
                    .expect("run psql");
                assert!(
                    out.status.success(),
                    "{m}: psql -f {}: {}",
                    m.fixture().display(),
                    String::from_utf8_lossy(&out.stderr)
                );
                Self {
                    db: Db::postgres(&url).await,
                    location: Location::parse(&url).expect("url"),
                    _dir: None,
                }
            }
        }
    }
}

/// The schema of a new ledger: a file, or a database on `server`.
async fn fresh_schema(server: Option<&PgServer>) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("new.sqlite");
    let url = server.map(PgServer::create_database);
    let location = match &url {
        Some(url) => Location::parse(url).expect("url"),
        None => Location::Sqlite(path.clone()),
    };
    Ledger::open(&location)
        .await
        .expect("a new ledger")
        .close()
        .await;
    let db = match &url {
        Some(url) => Db::postgres(url).await,
        None => Db::sqlite(&path).await,
    };
    let schema = db.schema_text().await;
    db.close().await;
    schema
}

async fn upgrade_and_check(m: &Migration, fixture: &Fixture, fresh_schema: &[String]) {
    let db = &fixture.db;
    let all: Vec<i64> = m.engine.migrations().iter().map(|x| x.version).collect();
    let upto: Vec<i64> = all.iter().copied().filter(|v| *v <= m.version).collect();
    assert_eq!(
        db.applied_migrations().await,
        upto,
        "{m}: the fixture is not at its migration"
    );
    let schema = Schema::of(db).await;
    let plan = Plan::for_schema(schema);
    let before = db.snapshot().await;
    assert_eq!(
        before.empty_tables(),
        Vec::<&str>::new(),
        "{m}: every table of a fixture holds a row; extend upgrades/plan.rs"
    );
    for (table, (columns, _)) in &before.tables {
        for column in columns {
            assert!(
                db.non_null(table, column).await > 0,
                "{m}: no row has a value in {table}.{column}; extend upgrades/plan.rs"
            );
        }
    }
    let identity = if schema.origins {
        db.texts("SELECT ledger_id FROM ledger_identity")
            .await
            .pop()
    } else {
        None
    };

    // A read-only open cannot migrate: an older ledger is refused, and left as it was.
    let newest = upto.len() == all.len();
    match Ledger::open_read_only(&fixture.location).await {
        Ok(ledger) => {
            assert!(newest, "{m}: an older schema opened read-only");
            ledger.close().await;
        }
        Err(LedgerError::Invalid(message)) if !newest => {
            // Said as it is, with what to do.
            assert!(
                message.contains("older than this bench-run's")
                    && message.contains("to upgrade it in place"),
                "{m}: {message}"
            );
        }
        Err(e) => panic!("{m}: read-only open: {e}"),
    }
    assert!(
        db.snapshot().await == before,
        "{m}: a read-only open changed the ledger"
    );

    let ledger = Ledger::open(&fixture.location)
        .await
        .unwrap_or_else(|e| panic!("{m}: upgrade: {e}"));
    assert_eq!(
        db.applied_migrations().await,
        all,
        "{m}: not fully migrated"
    );
    before.assert_kept_in(db, &m.to_string()).await;
    let upgraded = db.schema_text().await;
    let only_upgraded: Vec<&String> = upgraded
        .iter()
        .filter(|l| !fresh_schema.contains(l))
        .collect();
    let only_fresh: Vec<&String> = fresh_schema
        .iter()
        .filter(|l| !upgraded.contains(l))
        .collect();
    assert!(
        only_upgraded.is_empty() && only_fresh.is_empty(),
        "{m}: the upgraded schema is not a new ledger's:\nonly upgraded: {only_upgraded:#?}\n\
         only new: {only_fresh:#?}"
    );

    reads_back(m, &ledger, &plan, identity).await;
    takes_new_writes(m, &ledger, &plan).await;
    ledger.close().await;

    // Migrated once and for all: a read-only open takes it as it is.
    let again = Ledger::open_read_only(&fixture.location)
        .await
        .unwrap_or_else(|e| panic!("{m}: read-only after the upgrade: {e}"));
    let runs = again.runs(&RunFilter::default()).await.expect("runs");
    assert_eq!(runs.len(), plan.runs_in(Project::DEFAULT).len() + 3, "{m}");
    again.close().await;
}

/// Everything the plan wrote reads back through the store as written.
async fn reads_back(m: &Migration, ledger: &Ledger, plan: &Plan, identity: Option<String>) {
    // Each project's runs, and only its own: the same suite on the same machine in another
    // project is another line.
    let mut projects = Vec::new();
    for project in plan.projects() {
        let in_project = ledger.in_project(&Project::new(project).expect("a project name"));
        runs_read_back(m, &in_project, plan, project).await;
        let runs = plan.runs_in(project);
        projects.push(ProjectSummary {
            name: project.to_owned(),
            runs: i64::try_from(runs.len()).expect("count"),
            suites: i64::try_from(
                runs.iter()
                    .map(|r| &r.run.provenance.suite)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len(),
            )
            .expect("count"),
            latest_run: runs.iter().map(|r| r.id).max().expect("a run"),
        });
    }
    assert_eq!(ledger.projects().await.expect("projects"), projects, "{m}");

    assert_eq!(
        ledger.pairings().await.expect("pairings"),
        plan.pairings,
        "{m}"
    );
    for a in &plan.artifacts {
        let stored = ledger
            .artifact(a.id)
            .await
            .expect("artifact")
            .unwrap_or_else(|| panic!("{m}: artifact {}", a.id));
        assert_eq!(stored.summary, artifact_summary(a), "{m}");
        assert_eq!(stored.bytes, a.artifact.bytes, "{m}: artifact {}", a.id);
    }

    let history: Vec<(i64, String)> = plan
        .tags
        .iter()
        .map(|t| (t.run, t.name.to_owned()))
        .collect();
    assert_eq!(ledger.tag_history().await.expect("tags"), history, "{m}");
    for t in &plan.tags {
        let newest = plan
            .tags
            .iter()
            .rev()
            .find(|x| x.name == t.name)
            .map(|x| x.run);
        assert_eq!(
            ledger.run_by_tag(t.name).await.expect("tag"),
            newest,
            "{m}: tag {}",
            t.name
        );
    }

    let id = ledger.ledger_id().await.expect("identity");
    match identity {
        Some(kept) => assert_eq!(id, kept, "{m}: the ledger's identity changed"),
        None => assert!(
            id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{m}: identity {id:?}"
        ),
    }
    for o in &plan.origins {
        assert_eq!(
            ledger.copied_runs(o.origin_ledger).await.expect("copies"),
            BTreeMap::from([(o.origin_run, o.run)]),
            "{m}"
        );
        assert_eq!(
            ledger
                .copies_of(&o.origin_ledger[..8], o.origin_run)
                .await
                .expect("citation"),
            vec![o.run],
            "{m}"
        );
    }

    // A push retried with its key answers the run it recorded, and stores nothing; the key
    // with other content is refused.
    for k in &plan.keys {
        let planned = plan.run_by_id(k.run);
        if let Some(pairing) = plan.pairings.iter().find(|x| x.head_run == k.run) {
            let base = plan.run_by_id(pairing.base_run);
            assert_eq!(
                ledger
                    .record_pair_once(&base.run, &planned.run, &pairing.plan, &k.key)
                    .await
                    .expect("retried pair push"),
                PairIngested {
                    base: pairing.base_run,
                    head: k.run,
                    created: false
                },
                "{m}: key {}",
                k.key.key
            );
        } else {
            assert_eq!(
                ledger
                    .record_run_once(&planned.run, &k.key)
                    .await
                    .expect("retried push"),
                Ingested {
                    id: k.run,
                    created: false
                },
                "{m}: key {}",
                k.key.key
            );
        }
        let mut other = k.key.clone();
        other.content_sha256 = "0".repeat(64);
        match ledger.record_run_once(&planned.run, &other).await {
            Err(LedgerError::KeyReused { run, .. }) => assert_eq!(run, k.run, "{m}"),
            other => panic!("{m}: key {} reused: {other:?}", k.key.key),
        }
    }
    let count = ledger
        .runs(&RunFilter::default())
        .await
        .expect("runs")
        .len();
    assert_eq!(
        count,
        plan.runs_in(Project::DEFAULT).len(),
        "{m}: a retried push stored a run"
    );
}

/// The runs of `project` read back through `ledger` (in that project) as the plan wrote them.
async fn runs_read_back(m: &Migration, ledger: &Ledger, plan: &Plan, project: &str) {
    let planned = plan.runs_in(project);
    let listed = ledger.runs(&RunFilter::default()).await.expect("runs");
    let newest_first: Vec<i64> = planned.iter().rev().map(|r| r.id).collect();
    assert_eq!(
        listed.iter().map(|r| r.id).collect::<Vec<_>>(),
        newest_first,
        "{m}: runs of {project}"
    );
    let machine_ids = plan.machine_ids();
    for (p, summary) in planned.iter().rev().zip(&listed) {
        let what = format!("{m}: run {}", p.id);
        let stored = ledger.require_run(p.id).await.expect("run");
        assert_eq!(stored.created_at, p.created_at, "{what}");
        assert_eq!(stored.source, p.run.source, "{what}");
        assert_eq!(
            stored.machine_id, machine_ids[&p.run.provenance.machine.fingerprint],
            "{what}"
        );
        assert_eq!(stored.provenance, p.run.provenance, "{what}");
        assert_eq!(stored.tags, plan.tags_of(p.id), "{what}");
        assert_eq!(stored.annotations, plan.annotations_of(p.id), "{what}");
        let mut measurements = p.run.measurements.clone();
        measurements
            .sort_by(|a, b| (&a.benchmark.full, &a.metric).cmp(&(&b.benchmark.full, &b.metric)));
        assert_eq!(
            ledger.measurements(p.id).await.expect("measurements"),
            measurements,
            "{what}"
        );
        assert_eq!(
            (summary.results, &summary.tags, summary.quick),
            (
                i64::try_from(measurements.len()).expect("count"),
                &plan.tags_of(p.id),
                p.run.provenance.quick
            ),
            "{what}"
        );
        assert_eq!(summary.conditions, p.run.provenance.conditions, "{what}");
        let pairing = plan
            .pairings
            .iter()
            .find(|x| x.base_run == p.id || x.head_run == p.id);
        assert_eq!(
            ledger.pairing_of(p.id).await.expect("pairing"),
            pairing.cloned(),
            "{what}"
        );
        let mut artifacts: Vec<ArtifactSummary> = plan
            .artifacts
            .iter()
            .filter(|a| a.artifact.run == p.id)
            .map(artifact_summary)
            .collect();
        artifacts.sort_by(|a, b| (&a.benchmark, a.kind, a.id).cmp(&(&b.benchmark, b.kind, b.id)));
        assert_eq!(
            ledger.artifacts(p.id).await.expect("artifacts"),
            artifacts,
            "{what}"
        );
    }
    assert_eq!(
        ledger.machines(None).await.expect("machines"),
        machine_summaries(plan, project),
        "{m}: machines of {project}"
    );
}

/// The upgraded ledger records new runs after its old ones, and its old runs are their
/// baseline and history.
async fn takes_new_writes(m: &Migration, ledger: &Ledger, plan: &Plan) {
    let next = i64::try_from(plan.runs.len()).expect("count") + 1;
    let run = upgrades::plan::run_after_upgrade();
    let id = ledger.record_run(&run).await.expect("a new run");
    assert_eq!(id, next, "{m}: the new run's id");
    let stored = ledger.require_run(id).await.expect("new run");
    assert_eq!(stored.provenance, run.provenance, "{m}");
    assert_eq!(
        ledger.measurements(id).await.expect("measurements").len(),
        run.measurements.len(),
        "{m}"
    );
    ledger.tag(id, "baseline").await.expect("tag");
    assert_eq!(ledger.run_by_tag("baseline").await.expect("tag"), Some(id));
    ledger
        .annotate(id, "recorded after the upgrade")
        .await
        .expect("note");
    assert_eq!(
        ledger.require_run(id).await.expect("run").annotations.len(),
        1,
        "{m}"
    );

    // Its baseline and history are the old runs of its suite on its machine.
    let line: Vec<i64> = plan
        .runs
        .iter()
        .filter(|r| {
            r.project == Project::DEFAULT
                && r.run.source == RunSource::BenchRun
                && !r.run.provenance.quick
                && r.run.provenance.suite == run.provenance.suite
                && r.run.provenance.machine.fingerprint == run.provenance.machine.fingerprint
        })
        .map(|r| r.id)
        .collect();
    assert_eq!(
        ledger.previous_run(id).await.expect("baseline"),
        line.last().copied(),
        "{m}"
    );
    let machine = stored.machine_id;
    let history = ledger
        .history(&run.provenance.suite, machine, id, 50)
        .await
        .expect("history");
    let key = bench_model::MetricKey::new("parse/small/64", "time");
    let points: Vec<(i64, f64)> = history[&key].iter().map(|p| (p.run, p.value)).collect();
    let expected: Vec<(i64, f64)> = line
        .iter()
        .map(|&r| {
            let m = plan.run_by_id(r).run.measurements.iter();
            let value = m
                .clone()
                .find(|x| x.benchmark.full == "parse/small/64")
                .expect("measured")
                .estimate
                .point;
            (r, value)
        })
        .collect();
    assert_eq!(points, expected, "{m}: the new run's history");

    // A paired A/B run with its layouts, and a profile of the new run.
    let (base, head, pairing) = upgrades::plan::pair_after_upgrade();
    let (b, h) = ledger
        .record_pair(&base, &head, &pairing)
        .await
        .expect("a new pair");
    assert_eq!((b, h), (next + 1, next + 2), "{m}");
    let stored = ledger
        .pairing_of(h)
        .await
        .expect("pairing")
        .expect("paired");
    assert_eq!(stored.plan, pairing, "{m}");
    assert_eq!(
        stored.id,
        i64::try_from(plan.pairings.len()).expect("count") + 1,
        "{m}"
    );
    let artifact = NewArtifact::new(
        id,
        "parse/small/64",
        ArtifactKind::FoldedStacks,
        "perf",
        None,
        b"json_parse;jsonp::lex_number 97\n".to_vec(),
    );
    let recorded = ledger.record_artifact(&artifact).await.expect("artifact");
    assert_eq!(
        recorded,
        i64::try_from(plan.artifacts.len()).expect("count") + 1,
        "{m}"
    );
    assert_eq!(
        ledger
            .artifact(recorded)
            .await
            .expect("read")
            .expect("there")
            .bytes,
        artifact.bytes
    );
}

/// A ledger of the oldest schema, marked as migrated by a newer build: refused, read-write and
/// read-only, before any of its pending migrations runs.
async fn newer_schema_is_refused_untouched(m: &Migration, fixture: &Fixture) {
    let db = &fixture.db;
    let row: Vec<(&str, Value)> = vec![
        ("version", FUTURE_MIGRATION.into()),
        ("description", "from the future".into()),
        ("success", true.into()),
        ("checksum", vec![0u8].into()),
        ("execution_time", 0.into()),
    ];
    db.insert("_sqlx_migrations", &row, false).await;
    let before = db.snapshot().await;
    let supported = m.engine.migrations().last().expect("migrations").version;
    for read_only in [false, true] {
        let opened = if read_only {
            Ledger::open_read_only(&fixture.location).await
        } else {
            Ledger::open(&fixture.location).await
        };
        match opened {
            Err(LedgerError::NewerSchema {
                found,
                supported: known,
                ..
            }) => assert_eq!((found, known), (FUTURE_MIGRATION, supported), "{m}"),
            other => panic!("{m}: read_only={read_only}: {other:?}"),
        }
    }
    assert!(
        db.snapshot().await == before,
        "{m}: a refused ledger was changed"
    );
}

fn artifact_summary(a: &upgrades::plan::PlannedArtifact) -> ArtifactSummary {
    let x = &a.artifact;
    ArtifactSummary {
        id: a.id,
        run: x.run,
        benchmark: x.benchmark.clone(),
        kind: x.kind,
        profiler: x.profiler.clone(),
        against: x.against,
        media_type: x.media_type.clone(),
        size: u64::try_from(x.bytes.len()).expect("size"),
        sha256: upgrades::sha256_hex(&x.bytes),
        created_at: a.created_at.to_owned(),
    }
}

/// The machines of the plan's runs in `project`, by row id, each with its number of runs and newest run.
fn machine_summaries(plan: &Plan, project: &str) -> Vec<MachineSummary> {
    let ids = plan.machine_ids();
    let mut machines: Vec<MachineSummary> = Vec::new();
    for r in plan.runs_in(project) {
        let machine = &r.run.provenance.machine;
        let id = ids[&machine.fingerprint];
        let on_the_line = i64::from(r.run.source.is_on_the_line() && !r.run.provenance.quick);
        match machines.iter_mut().find(|s| s.id == id) {
            Some(s) => {
                s.runs += 1;
                s.line_runs += on_the_line;
                s.latest_run = s.latest_run.max(r.id);
            }
            None => machines.push(MachineSummary {
                id,
                fingerprint: machine.fingerprint.clone(),
                cpu_model: machine.cpu_model.clone(),
                os: machine.os.clone(),
                testbed: machine.testbed.clone(),
                runs: 1,
                line_runs: on_the_line,
                latest_run: r.id,
            }),
        }
    }
    machines.sort_by_key(|s| s.id);
    machines
}

async fn write_sqlite_fixture(m: &Migration) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ledger.sqlite");
    let db = Db::new_sqlite(&path, FIXTURE_PAGE_SIZE).await;
    db.migrate_to(m.version).await;
    let schema = Schema::of(&db).await;
    upgrades::write::write(&db, schema, &Plan::for_schema(schema)).await;
    db.execute("VACUUM").await;
    db.close().await;
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .filter(|n| n != "ledger.sqlite")
        .collect();
    assert!(left.is_empty(), "{m}: the ledger is not one file: {left:?}");
    std::fs::create_dir_all(m.engine.fixtures_dir()).expect("fixtures dir");
    std::fs::copy(&path, m.fixture()).expect("write the fixture");
    eprintln!("wrote {}", m.fixture().display());
}

async fn write_postgres_fixture(server: &PgServer, m: &Migration) {
    let url = server.create_database();
    let db = Db::postgres(&url).await;
    db.migrate_to(m.version).await;
    let schema = Schema::of(&db).await;
    upgrades::write::write(&db, schema, &Plan::for_schema(schema)).await;
    db.close().await;
    let pg_dump = server.program("pg_dump");
    let version = Command::new(&pg_dump)
        .arg("--version")
        .output()
        .expect("pg_dump --version");
    let out = Command::new(&pg_dump)
        .args([
            "--column-inserts",
            "--no-owner",
            "--no-privileges",
            "-d",
            &url,
        ])
        .output()
        .expect("run pg_dump");
    assert!(
        out.status.success(),
        "{m}: pg_dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Only SQL, loadable by any psql and server of PostgreSQL 13 or later: psql's
    // `\restrict` guard (pg_dump 13.22, 14.19, 15.14, 16.10, 17.6 and later; an older psql
    // refuses it, and its key is random) and a setting older servers lack are left out.
    let dump = String::from_utf8(out.stdout).expect("a UTF-8 dump");
    let kept: Vec<&str> = dump
        .lines()
        .filter(|l| {
            !l.starts_with("\\restrict")
                && !l.starts_with("\\unrestrict")
                && !l.starts_with("SET transaction_timeout")
        })
        .collect();
    let header = format!(
        "-- A bench-run ledger on PostgreSQL at migration {}, holding the data of\n\
         -- store/tests/upgrades/plan.rs for its schema. Written by\n\
         -- `cargo test -p bench-store --test upgrade -- --ignored write_missing_upgrade_fixtures`\n\
         -- with {};\n\
         -- load it with `psql -v ON_ERROR_STOP=1 -f` into an empty database.\n",
        m.stem,
        String::from_utf8_lossy(&version.stdout).trim()
    );
    std::fs::create_dir_all(m.engine.fixtures_dir()).expect("fixtures dir");
    std::fs::write(m.fixture(), header + &kept.join("\n") + "\n").expect("write the fixture");
    eprintln!("wrote {}", m.fixture().display());
}

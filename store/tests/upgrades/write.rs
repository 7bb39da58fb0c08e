//! Writes a [`Plan`] into a ledger whose schema is an older one, with that schema's SQL: what
//! bench-run of that time stored. Independent of the store's own writes, which know only the
//! current schema; the encodings are the ledger's permanent ones (JSON arrays and objects as
//! text, raw samples as little-endian f64 arrays, side orders as `B`/`H` letters, u64 seeds in
//! decimal, the model's integer codes).

use super::plan::{Plan, Schema};
use super::{Db, Value, sha256_hex};
use bench_model::{Machine, Measurement, Project, RunProvenance, Toolchain};
use std::collections::BTreeMap;

/// Writes `plan` into `db`, whose schema is `schema`. Panics when the plan holds what the
/// schema cannot, or when a row id is not the one the plan gave it.
pub async fn write(db: &Db, schema: Schema, plan: &Plan) {
    let mut machines = BTreeMap::new();
    let mut toolchains = BTreeMap::new();
    for planned in &plan.runs {
        let p = &planned.run.provenance;
        let machine = machine_id(db, schema, &mut machines, &p.machine).await;
        let toolchain = match &p.toolchain {
            Some(t) => Some(toolchain_id(db, &mut toolchains, t).await),
            None => None,
        };
        let mut row: Vec<(&str, Value)> = vec![
            ("created_at", (&planned.created_at).into()),
            ("source", planned.run.source.code().into()),
            ("suite", (&p.suite).into()),
            ("package", (&p.package).into()),
            ("command", json(&p.command).into()),
            ("cargo_command", p.cargo_command.as_ref().map(json).into()),
            ("cwd", (&p.cwd).into()),
            ("machine_id", machine.into()),
            ("hostname", (&p.machine.hostname).into()),
            ("kernel", (&p.machine.kernel).into()),
            ("toolchain_id", toolchain.into()),
            ("profile", (&p.build.profile).into()),
            ("features", json(&p.build.features).into()),
            ("feature_flags", json(&p.build.feature_flags).into()),
            ("rustflags", (&p.build.rustflags).into()),
            ("env", json(&p.env).into()),
            ("cpu_governor", (&p.cpu_governor).into()),
            ("turbo", (&p.turbo).into()),
            ("git_commit", (&p.git.commit).into()),
            ("git_branch", (&p.git.branch).into()),
            ("git_dirty", p.git.dirty.into()),
            ("git_commit_time", p.git.commit_time.into()),
            ("git_summary", (&p.git.summary).into()),
            ("quick", p.quick.into()),
            ("duration_ms", p.duration_ms.into()),
        ];
        if schema.projects {
            row.push(("project", planned.project.into()));
        } else {
            assert_eq!(
                planned.project,
                Project::DEFAULT,
                "projects before their column"
            );
        }
        let id = db.insert("runs", &row, true).await;
        assert_eq!(id, planned.id, "run ids follow the plan");
        write_conditions(db, schema, id, p).await;
        for m in &planned.run.measurements {
            write_measurement(db, id, m).await;
        }
    }
    for t in &plan.tags {
        let row: Vec<(&str, Value)> = vec![
            ("run_id", t.run.into()),
            ("name", t.name.into()),
            ("created_at", t.created_at.into()),
        ];
        db.insert("tags", &row, true).await;
    }
    for (run, a) in &plan.annotations {
        let row: Vec<(&str, Value)> = vec![
            ("run_id", (*run).into()),
            ("created_at", (&a.created_at).into()),
            ("text", (&a.text).into()),
        ];
        db.insert("annotations", &row, true).await;
    }
    for pairing in &plan.pairings {
        assert!(schema.pairings, "pairings before their table");
        let p = &pairing.plan;
        let order: String = p
            .base_first
            .iter()
            .map(|b| if *b { 'B' } else { 'H' })
            .collect();
        let id = db
            .insert(
                "pairings",
                &[
                    ("created_at", (&pairing.created_at).into()),
                    ("base_run_id", pairing.base_run.into()),
                    ("head_run_id", pairing.head_run.into()),
                    ("rounds", count(p.base_first.len()).into()),
                    ("seed", p.seed.to_string().into()),
                    ("side_order", order.into()),
                    ("base_rev", (&p.base_rev).into()),
                    ("head_rev", (&p.head_rev).into()),
                ],
                true,
            )
            .await;
        assert_eq!(id, pairing.id, "pairing ids follow the plan");
        if !p.round_layouts.is_empty() {
            assert!(schema.layouts, "layouts before their table");
            let seeds: Vec<String> = p.round_layouts.iter().map(u64::to_string).collect();
            let row: Vec<(&str, Value)> = vec![
                ("pairing_id", id.into()),
                ("round_seeds", seeds.join(",").into()),
            ];
            db.insert("pairing_layouts", &row, false).await;
        }
    }
    for o in &plan.origins {
        assert!(schema.origins, "run origins before their table");
        let row: Vec<(&str, Value)> = vec![
            ("run_id", o.run.into()),
            ("origin_ledger", o.origin_ledger.into()),
            ("origin_run", o.origin_run.into()),
        ];
        db.insert("run_origins", &row, false).await;
    }
    for k in &plan.keys {
        assert!(schema.ingest_keys, "ingest keys before their table");
        let row: Vec<(&str, Value)> = vec![
            ("idempotency_key", (&k.key.key).into()),
            ("run_id", k.run.into()),
            ("content_sha256", (&k.key.content_sha256).into()),
        ];
        db.insert("ingest_keys", &row, false).await;
    }
    for planned in &plan.artifacts {
        assert!(schema.artifacts, "artifacts before their table");
        let a = &planned.artifact;
        let id = db
            .insert(
                "artifacts",
                &[
                    ("run_id", a.run.into()),
                    ("benchmark", (&a.benchmark).into()),
                    ("kind", a.kind.code().into()),
                    ("profiler", (&a.profiler).into()),
                    ("against_run_id", a.against.into()),
                    ("media_type", (&a.media_type).into()),
                    ("size", count(a.bytes.len()).into()),
                    ("sha256", sha256_hex(&a.bytes).into()),
                    ("created_at", planned.created_at.into()),
                    ("bytes", a.bytes.clone().into()),
                ],
                true,
            )
            .await;
        assert_eq!(id, planned.id, "artifact ids follow the plan");
    }
    if schema.summaries {
        write_line_summaries(db, plan, &machines).await;
    }
}

/// The summary of each project's suite on each machine, as bench-run keeps it while recording.
async fn write_line_summaries(db: &Db, plan: &Plan, machines: &BTreeMap<String, i64>) {
    // Per (project, suite, machine): runs, runs on the line, newest run, newest on the line.
    type Line = (i64, i64, i64, Option<i64>);
    let mut lines: BTreeMap<(&str, &str, i64), Line> = BTreeMap::new();
    for r in &plan.runs {
        let p = &r.run.provenance;
        let key = (
            r.project,
            p.suite.as_str(),
            machines[&p.machine.fingerprint],
        );
        let line = lines.entry(key).or_insert((0, 0, r.id, None));
        line.0 += 1;
        line.2 = line.2.max(r.id);
        if r.run.source.is_on_the_line() && !p.quick {
            line.1 += 1;
            line.3 = Some(r.id);
        }
    }
    for ((project, suite, machine), (runs, line_runs, latest, latest_on_line)) in lines {
        let row: Vec<(&str, Value)> = vec![
            ("project", project.into()),
            ("suite", suite.into()),
            ("machine_id", machine.into()),
            ("runs", runs.into()),
            ("line_runs", line_runs.into()),
            ("latest_run", latest.into()),
            ("latest_line_run", latest_on_line.into()),
        ];
        db.insert("line_summaries", &row, false).await;
    }
}

async fn machine_id(db: &Db, schema: Schema, ids: &mut BTreeMap<String, i64>, m: &Machine) -> i64 {
    if let Some(&id) = ids.get(&m.fingerprint) {
        return id;
    }
    let mut row: Vec<(&str, Value)> = vec![
        ("fingerprint", (&m.fingerprint).into()),
        ("cpu_model", (&m.cpu_model).into()),
        ("physical_cores", m.physical_cores.map(i64::from).into()),
        ("logical_cores", i64::from(m.logical_cores).into()),
        (
            "memory_bytes",
            m.memory_bytes
                .map(|b| i64::try_from(b).expect("memory"))
                .into(),
        ),
        ("os", (&m.os).into()),
        ("arch", (&m.arch).into()),
    ];
    if schema.testbeds {
        row.push(("testbed", (&m.testbed).into()));
    } else {
        assert_eq!(m.testbed, None, "a testbed before the column");
    }
    let id = db.insert("machines", &row, true).await;
    ids.insert(m.fingerprint.clone(), id);
    id
}

async fn toolchain_id(db: &Db, ids: &mut BTreeMap<String, i64>, t: &Toolchain) -> i64 {
    if let Some(&id) = ids.get(&t.fingerprint) {
        return id;
    }
    let row: Vec<(&str, Value)> = vec![
        ("fingerprint", (&t.fingerprint).into()),
        ("rustc_version", (&t.rustc_version).into()),
        ("rustc_commit", (&t.rustc_commit).into()),
        ("host", (&t.host).into()),
        ("llvm_version", (&t.llvm_version).into()),
        ("rustc_verbose", (&t.rustc_verbose).into()),
        ("cargo_version", (&t.cargo_version).into()),
    ];
    let id = db.insert("toolchains", &row, true).await;
    ids.insert(t.fingerprint.clone(), id);
    id
}

async fn write_conditions(db: &Db, schema: Schema, run: i64, p: &RunProvenance) {
    if p.bench_exe.is_none() && p.conditions.is_none() {
        return;
    }
    assert!(schema.conditions, "run conditions before their table");
    let c = p.conditions.as_ref();
    let load = |start: bool, pick: fn(&bench_model::LoadAverage) -> f64| -> Value {
        c.and_then(|c| if start { c.load_start } else { c.load_end })
            .as_ref()
            .map(pick)
            .into()
    };
    let row: Vec<(&str, Value)> = vec![
        ("run_id", run.into()),
        (
            "bench_exe_sha256",
            p.bench_exe.as_ref().map(|e| e.sha256.clone()).into(),
        ),
        (
            "bench_exe_bytes",
            p.bench_exe
                .as_ref()
                .map(|e| i64::try_from(e.bytes).expect("size"))
                .into(),
        ),
        ("cpus", c.map(|c| i64::from(c.cpus)).into()),
        (
            "wall_ms",
            c.map(|c| i64::try_from(c.wall_ms).expect("wall")).into(),
        ),
        ("load_start_1", load(true, |l| l.one)),
        ("load_start_5", load(true, |l| l.five)),
        ("load_start_15", load(true, |l| l.fifteen)),
        ("load_end_1", load(false, |l| l.one)),
        ("load_end_5", load(false, |l| l.five)),
        ("load_end_15", load(false, |l| l.fifteen)),
        ("own_cpus", c.map(|c| c.own_cpus).into()),
        ("others_cpus", c.map(|c| c.others_cpus).into()),
        ("steal_pct", c.map(|c| c.steal_pct).into()),
        ("per_benchmark", c.map(|c| json(&c.per_benchmark)).into()),
    ];
    db.insert("run_conditions", &row, false).await;
}

async fn write_measurement(db: &Db, run: i64, m: &Measurement) {
    let e = &m.estimate;
    let result = db
        .insert(
            "results",
            &[
                ("run_id", run.into()),
                ("benchmark", (&m.benchmark.full).into()),
                ("group_id", (&m.benchmark.group).into()),
                ("function_id", (&m.benchmark.function).into()),
                ("value_str", (&m.benchmark.value).into()),
                ("metric", (&m.metric).into()),
                ("unit", (&m.unit).into()),
                ("direction", m.direction.code().into()),
                ("estimate", e.point.into()),
                ("lower", e.lower.into()),
                ("upper", e.upper.into()),
                ("confidence_level", e.confidence_level.into()),
                ("standard_error", e.standard_error.into()),
                (
                    "throughput_kind",
                    m.throughput.map(|t| t.kind.code()).into(),
                ),
                (
                    "throughput_per_iter",
                    m.throughput
                        .map(|t| i64::try_from(t.per_iteration).expect("throughput"))
                        .into(),
                ),
                (
                    "sample_count",
                    count(m.samples.as_ref().map_or(0, bench_model::Samples::len)).into(),
                ),
            ],
            true,
        )
        .await;
    for (statistic, s) in &m.statistics {
        let row: Vec<(&str, Value)> = vec![
            ("result_id", result.into()),
            ("statistic", statistic.code().into()),
            ("point", s.point.into()),
            ("lower", s.lower.into()),
            ("upper", s.upper.into()),
            ("confidence_level", s.confidence_level.into()),
            ("standard_error", s.standard_error.into()),
        ];
        db.insert("statistics", &row, false).await;
    }
    if let Some(samples) = &m.samples {
        let row: Vec<(&str, Value)> = vec![
            ("result_id", result.into()),
            ("sampling_mode", samples.mode().code().into()),
            ("iters", f64s(samples.iters()).into()),
            ("times_ns", f64s(samples.times_ns()).into()),
        ];
        db.insert("samples", &row, false).await;
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("json")
}

fn f64s(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn count(n: usize) -> i64 {
    i64::try_from(n).expect("count")
}

//! The data of the upgrade fixtures: what a ledger of each schema holds, as the model's values.
//!
//! [`Plan::for_schema`] is a few weeks of one project's history as bench-run of that time
//! recorded it: criterion runs with raw samples and every statistic, a quick run, imports
//! (BMF, hyperfine), tags moved between runs, notes; and as soon as the schema has them, the
//! bench executable and machine load of a run, paired A/B runs (with their layouts), a run
//! copied from another ledger, pushed runs with their idempotency keys, a testbed's run, and
//! profiles. The writer of the fixtures (`write.rs`) stores it with the SQL of that schema;
//! the upgrade tests read it back through the current store and expect exactly these values.
//!
//! A fixture, once committed, is never rewritten: what this plan gives for an older schema
//! must stay what that fixture holds. Extend it only for what a new migration adds, behind
//! that migration's [`Schema`] flag.

use super::Db;
use bench_model::{
    Annotation, ArtifactKind, BenchExe, BenchmarkConditions, BenchmarkId, BuildConfig, CountUnit,
    Direction, Estimate, FunctionCountRow, FunctionCounts, GitInfo, LoadAverage, Machine,
    Measurement, NewArtifact, NewRun, Project, RunConditions, RunId, RunProvenance, RunSource,
    Samples, SamplingMode, Statistic, Throughput, ThroughputKind, Toolchain,
};
use bench_store::{IngestKey, Pairing, PairingPlan};
use std::collections::BTreeMap;

/// What a ledger's schema can hold, read from its tables and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    /// `run_conditions`: a run's bench executable and the machine's load.
    pub conditions: bool,
    /// `pairings`: the two sides of a paired A/B run.
    pub pairings: bool,
    /// `ledger_identity` and `run_origins`: runs copied from another ledger.
    pub origins: bool,
    /// `ingest_keys`: pushed runs recorded once per idempotency key.
    pub ingest_keys: bool,
    /// `machines.testbed`: a machine class named by `BENCH_MACHINE`.
    pub testbeds: bool,
    /// `pairing_layouts`: the link layouts of a paired A/B run's rounds.
    pub layouts: bool,
    /// `artifacts`: profiles of a run's benchmarks.
    pub artifacts: bool,
    /// `runs.project`: runs of named histories.
    pub projects: bool,
    /// `line_summaries`: the runs of each project, suite and machine counted as recorded.
    pub summaries: bool,
}

impl Schema {
    /// The schema of the ledger `db` holds.
    pub async fn of(db: &Db) -> Self {
        let tables = db.tables().await;
        let has = |table: &str| tables.contains(table);
        Self {
            conditions: has("run_conditions"),
            pairings: has("pairings"),
            origins: has("run_origins") && has("ledger_identity"),
            ingest_keys: has("ingest_keys"),
            testbeds: db.columns("machines").await.iter().any(|c| c == "testbed"),
            layouts: has("pairing_layouts"),
            artifacts: has("artifacts"),
            projects: db.columns("runs").await.iter().any(|c| c == "project"),
            summaries: has("line_summaries"),
        }
    }
}

/// A run of the plan: its id (runs are numbered in the order they are written) and its
/// recording time.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    pub id: RunId,
    pub project: &'static str,
    pub created_at: String,
    pub run: NewRun,
}

/// A tag row: `name` given to `run` at `created_at`.
#[derive(Debug, Clone)]
pub struct PlannedTag {
    pub run: RunId,
    pub name: &'static str,
    pub created_at: &'static str,
}

/// A run copied from another ledger.
#[derive(Debug, Clone)]
pub struct PlannedOrigin {
    pub run: RunId,
    pub origin_ledger: &'static str,
    pub origin_run: RunId,
}

/// A pushed run (or the head of a pushed pair) and the key it was pushed with.
#[derive(Debug, Clone)]
pub struct PlannedKey {
    pub run: RunId,
    pub key: IngestKey,
}

/// An artifact, numbered in the order written.
#[derive(Debug, Clone)]
pub struct PlannedArtifact {
    pub id: i64,
    pub created_at: &'static str,
    pub artifact: NewArtifact,
}

/// Everything a fixture holds, in the order it is written.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub runs: Vec<PlannedRun>,
    pub tags: Vec<PlannedTag>,
    /// Per run, oldest first.
    pub annotations: Vec<(RunId, Annotation)>,
    pub pairings: Vec<Pairing>,
    pub origins: Vec<PlannedOrigin>,
    pub keys: Vec<PlannedKey>,
    pub artifacts: Vec<PlannedArtifact>,
}

/// The project of the plan's run of another team (the rest are in the default project).
pub const OTHER_PROJECT: &str = "other-team";

/// The identity of the ledger the copied run comes from.
pub const ORIGIN_LEDGER: &str = "5f3a9c1e0b7d4a2f8e6c1d3b9a0f7e25";

impl Plan {
    /// What a ledger of `schema` holds.
    pub fn for_schema(schema: Schema) -> Self {
        let mut plan = Self::default();
        let conditions = |c: RunConditions| schema.conditions.then_some(c);
        let exe = |sha256: &str, bytes: u64| {
            schema.conditions.then(|| BenchExe {
                sha256: sha256.to_owned(),
                bytes,
            })
        };

        // The first full run of the suite, with everything a bench-run run records.
        let mut first = bench_run(workstation(), &COMMITS[0], false);
        first.provenance.bench_exe = exe(
            "4f2b8c1d9e0a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c",
            3_581_016,
        );
        first.provenance.conditions = conditions(RunConditions {
            cpus: 32,
            wall_ms: 48_210,
            load_start: Some(LoadAverage {
                one: 0.41,
                five: 0.37,
                fifteen: 0.52,
            }),
            load_end: Some(LoadAverage {
                one: 1.08,
                five: 0.63,
                fifteen: 0.58,
            }),
            own_cpus: 1.02,
            others_cpus: 0.07,
            steal_pct: 0.0,
            per_benchmark: vec![
                BenchmarkConditions {
                    benchmark: "parse/small/64".into(),
                    wall_ms: 15_840,
                    others_cpus: 0.05,
                    steal_pct: 0.0,
                },
                BenchmarkConditions {
                    benchmark: "parse/large/4096".into(),
                    wall_ms: 16_310,
                    others_cpus: 0.11,
                    steal_pct: 0.0,
                },
            ],
        });
        first.measurements = suite_results(1.0, 11);
        let r1 = plan.run("2026-11-17T08:02:11.482Z", first);

        // The next commit: its executable recorded, its machine load not (not Linux /proc).
        let mut second = bench_run(workstation(), &COMMITS[1], false);
        second.provenance.bench_exe = exe(
            "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
            3_582_440,
        );
        second.measurements = suite_results(0.93, 23);
        let r2 = plan.run("2026-11-18T08:01:57.109Z", second);

        // A quick run on a laptop, uncommitted changes, flat sampling.
        let mut quick = bench_run(laptop(), &COMMITS[1], true);
        quick.provenance.quick = true;
        quick.provenance.git.branch = Some("wip/number-fast-path".into());
        quick.provenance.command.push("--quick".into());
        quick.provenance.cpu_governor = Some("powersave".into());
        quick.provenance.turbo = None;
        quick.provenance.duration_ms = Some(6_377);
        quick.measurements = vec![
            flat("parse/small/64", 301.7, 5),
            flat("parse/large/4096", 14_912.0, 6),
        ];
        let r3 = plan.run("2026-11-18T13:44:02.730Z", quick);

        // Imports: a BMF file with bounds and a second metric, and hyperfine's whole-process
        // timings of commands with spaces and quotes.
        let r4 = plan.run("2026-11-19T10:15:00.000Z", bmf_import());
        let r5 = plan.run("2026-11-19T16:20:41.955Z", hyperfine_import());
        let _ = r5;

        plan.tag(r1, "v0.3.0", "2026-11-17T08:03:00.112Z");
        plan.tag(r1, "baseline", "2026-11-17T08:03:20.540Z");
        plan.tag(r2, "baseline", "2026-11-18T08:05:41.007Z");
        plan.tag(r3, "laptop-check", "2026-11-18T13:45:10.000Z");
        plan.note(
            r1,
            "2026-11-17T09:30:00.000Z",
            "first run after the arena allocator landed",
        );
        plan.note(
            r1,
            "2026-11-18T08:10:12.345Z",
            "parse/large is ~7% slower than on v0.2 — see issue #48; it's the allocator",
        );
        plan.note(
            r3,
            "2026-11-18T13:46:00.000Z",
            "quick run, ignore: \"on battery\"",
        );
        plan.note(
            r4,
            "2026-11-19T10:16:30.250Z",
            "imported from the old CI's BMF files",
        );

        if schema.pairings {
            // `bench-run ab`: two sides of per-process medians, 8 rounds, a seed past i64.
            let (base, head) = ab_sides(workstation(), &COMMITS[1], 8, 1.0, 0.96, 31);
            let b = plan.run("2026-11-20T09:30:12.001Z", base);
            let h = plan.run("2026-11-20T09:30:12.377Z", head);
            plan.pair(
                b,
                h,
                "2026-11-20T09:41:55.903Z",
                PairingPlan {
                    seed: 18_446_744_073_709_551_557,
                    base_first: order("BHHBHBBH"),
                    base_rev: "main".into(),
                    head_rev: Some("feature/lexer".into()),
                    round_layouts: Vec::new(),
                },
            );
            plan.tag(h, "pr-1234", "2026-11-20T09:42:00.000Z");
            if schema.ingest_keys {
                plan.key(h, "0c4e8a2b6d1f3a5c7e9b0d2f4a6c8e1b/7");
            }
        }

        if schema.origins {
            // A run copied from another ledger, with its note, keeping its own time.
            let mut copied = bench_run(laptop(), &COMMITS[0], false);
            copied.provenance.cwd = "/home/ana/src/jsonp".into();
            copied.measurements = suite_results(1.04, 41);
            let c = plan.run("2026-10-30T17:05:09.250Z", copied);
            plan.origins.push(PlannedOrigin {
                run: c,
                origin_ledger: ORIGIN_LEDGER,
                origin_run: 42,
            });
            plan.note(
                c,
                "2026-10-30T17:06:00.000Z",
                "measured before the move to perf-ws-01",
            );
        }

        if schema.ingest_keys {
            // A run pushed to the server, recorded once under its key.
            let mut pushed = bench_run(workstation(), &COMMITS[2], false);
            pushed.provenance.bench_exe = exe(
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                3_590_112,
            );
            pushed.measurements = suite_results(0.91, 53);
            let p = plan.run("2026-11-21T07:59:30.664Z", pushed);
            plan.key(p, "0c4e8a2b6d1f3a5c7e9b0d2f4a6c8e1b/9");
        }

        if schema.testbeds {
            // A CI runner named by its class, busy while it measured.
            let mut ci = bench_run(ci_runner(), &COMMITS[2], false);
            ci.provenance.cwd = "/home/runner/work/jsonp/jsonp".into();
            ci.provenance
                .env
                .insert("BENCH_MACHINE".into(), "ci-small".into());
            ci.provenance.cpu_governor = None;
            ci.provenance.turbo = None;
            ci.provenance.bench_exe = exe(
                "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
                3_601_884,
            );
            ci.provenance.conditions = conditions(RunConditions {
                cpus: 4,
                wall_ms: 61_020,
                load_start: Some(LoadAverage {
                    one: 2.31,
                    five: 2.05,
                    fifteen: 1.77,
                }),
                load_end: None,
                own_cpus: 0.98,
                others_cpus: 1.83,
                steal_pct: 4.5,
                per_benchmark: Vec::new(),
            });
            ci.measurements = suite_results(1.71, 67);
            let c = plan.run("2026-11-22T03:12:45.018Z", ci);
            plan.note(
                c,
                "2026-11-22T03:20:00.000Z",
                "noisy neighbour on the runner",
            );
        }

        if schema.layouts {
            // `bench-run ab --layouts 3`: each round under one of three link layouts.
            let (base, head) = ab_sides(workstation(), &COMMITS[2], 6, 0.91, 0.92, 79);
            let b = plan.run("2026-11-23T11:47:03.512Z", base);
            let h = plan.run("2026-11-23T11:47:03.840Z", head);
            plan.pair(
                b,
                h,
                "2026-11-23T12:02:19.071Z",
                PairingPlan {
                    seed: 7,
                    base_first: order("HBBHHB"),
                    base_rev: "v0.3.0".into(),
                    head_rev: None,
                    round_layouts: vec![
                        12_605_230_617_334_117_391,
                        3,
                        9_223_372_036_854_775_808,
                        12_605_230_617_334_117_391,
                        3,
                        9_223_372_036_854_775_808,
                    ],
                },
            );
        }

        if schema.artifacts {
            // Profiles: of a run alone, and of an A/B head against its base.
            let pair = plan
                .pairings
                .first()
                .map(|p| (p.base_run, p.head_run))
                .expect("artifacts came after pairings");
            plan.artifact(
                "2026-11-17T08:20:40.000Z",
                NewArtifact::new(
                    r1,
                    "parse/large/4096",
                    ArtifactKind::Flamegraph,
                    "perf",
                    None,
                    flamegraph("parse_object 612 samples").into_bytes(),
                ),
            );
            plan.artifact(
                "2026-11-18T08:22:03.500Z",
                NewArtifact::new(
                    r2,
                    "parse/large/4096",
                    ArtifactKind::FoldedStacks,
                    "perf",
                    None,
                    FOLDED.as_bytes().to_vec(),
                ),
            );
            plan.artifact(
                "2026-11-20T09:44:10.250Z",
                NewArtifact::new(
                    pair.1,
                    "parse/small/64",
                    ArtifactKind::DiffFlamegraph,
                    "perf",
                    Some(pair.0),
                    flamegraph("lex_number -4.1%").into_bytes(),
                ),
            );
            plan.artifact(
                "2026-11-20T09:44:10.251Z",
                NewArtifact::new(
                    pair.1,
                    "parse/small/64",
                    ArtifactKind::FunctionCounts,
                    "callgrind",
                    Some(pair.0),
                    function_counts(),
                ),
            );
        }
        if schema.summaries {
            // Another team's project on the same server: the same suite and benchmark names,
            // measured on the same machine, and never part of the first project's lines.
            let mut theirs = bench_run(workstation(), &COMMITS[2], false);
            theirs.measurements = suite_results(2.4, 89);
            plan.run_in(OTHER_PROJECT, "2026-11-24T10:15:31.904Z", theirs);
        }
        plan
    }

    fn run(&mut self, created_at: &str, run: NewRun) -> RunId {
        self.run_in(Project::DEFAULT, created_at, run)
    }

    fn run_in(&mut self, project: &'static str, created_at: &str, run: NewRun) -> RunId {
        let id = RunId::try_from(self.runs.len() + 1).expect("few runs");
        self.runs.push(PlannedRun {
            id,
            project,
            created_at: created_at.to_owned(),
            run,
        });
        id
    }

    /// The projects of the plan's runs, the default first.
    pub fn projects(&self) -> Vec<&'static str> {
        let mut projects: Vec<&'static str> = Vec::new();
        for r in &self.runs {
            if !projects.contains(&r.project) {
                projects.push(r.project);
            }
        }
        projects
    }

    /// The runs of `project`, oldest first.
    pub fn runs_in(&self, project: &str) -> Vec<&PlannedRun> {
        self.runs.iter().filter(|r| r.project == project).collect()
    }

    fn tag(&mut self, run: RunId, name: &'static str, created_at: &'static str) {
        self.tags.push(PlannedTag {
            run,
            name,
            created_at,
        });
    }

    fn note(&mut self, run: RunId, created_at: &str, text: &str) {
        self.annotations.push((
            run,
            Annotation {
                created_at: created_at.to_owned(),
                text: text.to_owned(),
            },
        ));
    }

    fn pair(&mut self, base: RunId, head: RunId, created_at: &str, plan: PairingPlan) {
        self.pairings.push(Pairing {
            id: i64::try_from(self.pairings.len() + 1).expect("few pairings"),
            created_at: created_at.to_owned(),
            base_run: base,
            head_run: head,
            plan,
        });
    }

    fn key(&mut self, run: RunId, key: &str) {
        // A digest of what was pushed, as the client sends it (SHA-256, lowercase hex).
        let content_sha256 = super::sha256_hex(format!("the push of run {run}").as_bytes());
        self.keys.push(PlannedKey {
            run,
            key: IngestKey {
                key: key.to_owned(),
                content_sha256,
            },
        });
    }

    fn artifact(&mut self, created_at: &'static str, artifact: NewArtifact) {
        artifact.check().expect("a valid artifact");
        self.artifacts.push(PlannedArtifact {
            id: i64::try_from(self.artifacts.len() + 1).expect("few artifacts"),
            created_at,
            artifact,
        });
    }

    /// The run with id `id`.
    pub fn run_by_id(&self, id: RunId) -> &PlannedRun {
        self.runs
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("no planned run {id}"))
    }

    /// The annotations of `run`, oldest first.
    pub fn annotations_of(&self, run: RunId) -> Vec<Annotation> {
        self.annotations
            .iter()
            .filter(|(r, _)| *r == run)
            .map(|(_, a)| a.clone())
            .collect()
    }

    /// The tags naming `run` now (the newest row of a name wins), by name.
    pub fn tags_of(&self, run: RunId) -> Vec<String> {
        let mut newest: BTreeMap<&str, RunId> = BTreeMap::new();
        for t in &self.tags {
            newest.insert(t.name, t.run);
        }
        newest
            .into_iter()
            .filter(|(_, r)| *r == run)
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    /// Machine row ids in the order machines were first seen.
    pub fn machine_ids(&self) -> BTreeMap<String, i64> {
        let mut ids = BTreeMap::new();
        for r in &self.runs {
            let next = i64::try_from(ids.len() + 1).expect("few machines");
            ids.entry(r.run.provenance.machine.fingerprint.clone())
                .or_insert(next);
        }
        ids
    }
}

/// A run recorded by this build into an upgraded ledger: the suite's next commit on the
/// workstation, with everything recorded.
pub fn run_after_upgrade() -> NewRun {
    let mut run = bench_run(workstation(), &COMMITS[2], false);
    run.provenance.bench_exe = Some(BenchExe {
        sha256: "5a".repeat(32),
        bytes: 3_602_500,
    });
    run.provenance.conditions = Some(RunConditions {
        cpus: 32,
        wall_ms: 47_003,
        load_start: None,
        load_end: None,
        own_cpus: 1.01,
        others_cpus: 0.02,
        steal_pct: 0.0,
        per_benchmark: Vec::new(),
    });
    run.measurements = suite_results(0.9, 97);
    run
}

/// A paired A/B run with its layouts, recorded by this build into an upgraded ledger.
pub fn pair_after_upgrade() -> (NewRun, NewRun, PairingPlan) {
    let (base, head) = ab_sides(workstation(), &COMMITS[2], 4, 0.9, 0.88, 113);
    let plan = PairingPlan {
        seed: 11,
        base_first: order("BHHB"),
        base_rev: "main".into(),
        head_rev: None,
        round_layouts: vec![1, 2, 2, 1],
    };
    (base, head, plan)
}

/// The commits the runs measured: hash, time, summary.
struct Commit {
    hash: &'static str,
    time: i64,
    summary: &'static str,
}

const COMMITS: [Commit; 3] = [
    Commit {
        hash: "8d2e61f0a4b97c35e1d08f6a2b49c73e5d10fa86",
        time: 1_763_364_912,
        summary: "Parse into an arena instead of boxed nodes",
    },
    Commit {
        hash: "c47a09e3b5d21f86a0e97c4d3b28f15e6a90d7c2",
        time: 1_763_451_533,
        summary: "lexer: fast path for integers that fit in an i64",
    },
    Commit {
        hash: "1e9b3f5d7a2c4e6081f3a5c7e9b1d3f5a7c9e1b3",
        time: 1_763_708_010,
        summary: "Merge pull request #1234 from ana/feature/lexer",
    },
];

fn workstation() -> Machine {
    Machine {
        fingerprint: "9c1f4e2a7b3d8e60".into(),
        hostname: "perf-ws-01".into(),
        cpu_model: "AMD Ryzen 9 7950X 16-Core Processor".into(),
        physical_cores: Some(16),
        logical_cores: 32,
        memory_bytes: Some(66_571_993_088),
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        kernel: "6.1.0-28-amd64".into(),
        arch: "x86_64".into(),
        testbed: None,
    }
}

fn laptop() -> Machine {
    Machine {
        fingerprint: "4b7e0d19c2a65f38".into(),
        hostname: "ana-thinkpad".into(),
        cpu_model: "11th Gen Intel(R) Core(TM) i7-1185G7 @ 3.00GHz".into(),
        physical_cores: None,
        logical_cores: 8,
        memory_bytes: None,
        os: "Ubuntu 24.04.1 LTS".into(),
        kernel: "6.8.0-45-generic".into(),
        arch: "x86_64".into(),
        testbed: None,
    }
}

fn ci_runner() -> Machine {
    Machine {
        fingerprint: "e07c5a3f1d9b8264".into(),
        hostname: "fv-az1207-381".into(),
        cpu_model: "AMD EPYC 7763 64-Core Processor".into(),
        physical_cores: Some(2),
        logical_cores: 4,
        memory_bytes: Some(16_772_579_328),
        os: "Ubuntu 22.04.5 LTS".into(),
        kernel: "6.5.0-1025-azure".into(),
        arch: "x86_64".into(),
        testbed: Some("ci-small".into()),
    }
}

fn toolchain() -> Toolchain {
    Toolchain {
        fingerprint: "7d9e2c41a0b85f36".into(),
        rustc_version: "1.89.0".into(),
        rustc_commit: Some("29483883eed69d5fb4db01964cdf2af4d86e9cb2".into()),
        host: "x86_64-unknown-linux-gnu".into(),
        llvm_version: Some("20.1.7".into()),
        rustc_verbose: "rustc 1.89.0 (29483883e 2025-08-04)\nbinary: rustc\n\
                        commit-hash: 29483883eed69d5fb4db01964cdf2af4d86e9cb2\n\
                        commit-date: 2025-08-04\nhost: x86_64-unknown-linux-gnu\n\
                        release: 1.89.0\nLLVM version: 20.1.7"
            .into(),
        cargo_version: "cargo 1.89.0 (c24e10642 2025-06-23)".into(),
    }
}

/// A `bench-run --suite json_parse` run of `commit` on `machine`, without results.
fn bench_run(machine: Machine, commit: &Commit, dirty: bool) -> NewRun {
    let mut env = BTreeMap::new();
    env.insert("CARGO_PROFILE_BENCH_DEBUG".into(), "true".into());
    env.insert("RUSTFLAGS".into(), "-C target-cpu=x86-64-v2".into());
    NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: "json_parse".into(),
            package: Some("jsonp".into()),
            command: vec![
                "bench-run".into(),
                "--suite".into(),
                "json_parse".into(),
                "-F".into(),
                "simd".into(),
            ],
            cargo_command: Some(vec![
                "cargo".into(),
                "bench".into(),
                "-p".into(),
                "jsonp".into(),
                "--bench".into(),
                "json_parse".into(),
                "--features".into(),
                "simd".into(),
            ]),
            cwd: "/srv/bench/jsonp".into(),
            machine,
            toolchain: Some(toolchain()),
            build: BuildConfig {
                profile: "bench".into(),
                features: vec!["simd".into()],
                feature_flags: vec!["--features".into(), "simd".into()],
                rustflags: Some("-C target-cpu=x86-64-v2".into()),
            },
            env,
            git: GitInfo {
                commit: Some(commit.hash.into()),
                branch: Some("main".into()),
                dirty,
                commit_time: Some(commit.time),
                summary: Some(commit.summary.into()),
            },
            cpu_governor: Some("performance".into()),
            turbo: Some("off".into()),
            quick: false,
            duration_ms: Some(48_210),
            bench_exe: None,
            conditions: None,
        },
        measurements: Vec::new(),
    }
}

/// The suite's three criterion benchmarks, `scale` times their usual time.
fn suite_results(scale: f64, seed: u64) -> Vec<Measurement> {
    vec![
        criterion(
            "parse/small/64",
            287.4 * scale,
            seed,
            Some(Throughput {
                kind: ThroughputKind::Bytes,
                per_iteration: 64,
            }),
        ),
        criterion(
            "parse/large/4096",
            14_306.0 * scale,
            seed + 1,
            Some(Throughput {
                kind: ThroughputKind::Bytes,
                per_iteration: 4096,
            }),
        ),
        criterion(
            "tokenize",
            0.8913 * scale,
            seed + 2,
            Some(Throughput {
                kind: ThroughputKind::Elements,
                per_iteration: 1,
            }),
        ),
    ]
}

/// Samples of a generator seeded with `seed`: the `i`-th value, in [-1, 1).
fn noise(seed: u64, i: usize) -> f64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (i as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 29;
    (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// A benchmark id `group/function/value` split as criterion names it.
fn benchmark_id(full: &str) -> BenchmarkId {
    let parts: Vec<&str> = full.split('/').collect();
    let part = |i: usize| parts.get(i).map(|s| (*s).to_owned());
    BenchmarkId {
        full: full.to_owned(),
        group: (parts.len() > 1).then(|| part(0)).flatten(),
        function: (parts.len() > 1).then(|| part(1)).flatten(),
        value: part(2),
    }
}

/// A 95% interval around `point` of `se` standard errors.
fn interval(point: f64, se: f64) -> Estimate {
    Estimate {
        point,
        lower: Some(point - 1.96 * se),
        upper: Some(point + 1.96 * se),
        confidence_level: Some(0.95),
        standard_error: Some(se),
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n.is_multiple_of(2) {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    } else {
        sorted[n / 2]
    }
}

/// What criterion records of a benchmark of about `ns` per iteration: 20 linearly sampled
/// timings (whole nanoseconds), mean, median, slope, standard deviation and MAD with their
/// bounds; the slope is the headline.
fn criterion(full: &str, ns: f64, seed: u64, throughput: Option<Throughput>) -> Measurement {
    const N: usize = 20;
    let step = (1.0e6 / ns / N as f64).ceil();
    let iters: Vec<f64> = (1..=N).map(|i| step * i as f64).collect();
    let times: Vec<f64> = iters
        .iter()
        .enumerate()
        .map(|(i, n)| (n * ns * (1.0 + 0.02 * noise(seed, i))).round())
        .collect();
    let per: Vec<f64> = iters.iter().zip(&times).map(|(n, t)| t / n).collect();
    let mean = per.iter().sum::<f64>() / N as f64;
    let sd = (per.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (N - 1) as f64).sqrt();
    let se = sd / (N as f64).sqrt();
    let mid = median(&per);
    let deviations: Vec<f64> = per.iter().map(|p| (p - mid).abs()).collect();
    let mad = median(&deviations) * 1.4826;
    let slope = iters.iter().zip(&times).map(|(x, y)| x * y).sum::<f64>()
        / iters.iter().map(|x| x * x).sum::<f64>();
    let mut statistics = BTreeMap::new();
    statistics.insert(Statistic::Mean, interval(mean, se));
    statistics.insert(Statistic::Median, interval(mid, se * 1.25));
    statistics.insert(Statistic::Slope, interval(slope, se * 0.9));
    statistics.insert(Statistic::StdDev, interval(sd, sd * 0.16));
    statistics.insert(Statistic::MedianAbsDev, interval(mad, mad * 0.21));
    Measurement {
        benchmark: benchmark_id(full),
        metric: bench_model::metric::TIME.into(),
        unit: "ns".into(),
        direction: Direction::LowerIsBetter,
        estimate: interval(slope, se * 0.9),
        statistics,
        throughput,
        samples: Some(Samples::new(SamplingMode::Linear, iters, times).expect("samples")),
    }
}

/// A `--quick` criterion benchmark: flat sampling, 10 samples, mean as the headline.
fn flat(full: &str, ns: f64, seed: u64) -> Measurement {
    let iters = vec![(2.0e5 / ns).ceil(); 10];
    let times: Vec<f64> = iters
        .iter()
        .enumerate()
        .map(|(i, n)| (n * ns * (1.0 + 0.05 * noise(seed, i))).round())
        .collect();
    let per: Vec<f64> = iters.iter().zip(&times).map(|(n, t)| t / n).collect();
    let mean = per.iter().sum::<f64>() / per.len() as f64;
    let mut statistics = BTreeMap::new();
    statistics.insert(Statistic::Mean, interval(mean, mean * 0.01));
    statistics.insert(Statistic::Median, Estimate::point(median(&per)));
    Measurement {
        estimate: interval(mean, mean * 0.01),
        statistics,
        samples: Some(Samples::new(SamplingMode::Flat, iters, times).expect("samples")),
        ..criterion(full, ns, seed, None)
    }
}

fn bmf_import() -> NewRun {
    let mut provenance = bench_run(laptop(), &COMMITS[0], false).provenance;
    provenance.package = None;
    provenance.command = vec![
        "bench-run".into(),
        "import".into(),
        "bmf".into(),
        "ci/bmf/2026-11-19.json".into(),
        "--suite".into(),
        "json_parse".into(),
    ];
    provenance.cargo_command = None;
    provenance.toolchain = None;
    provenance.build = BuildConfig::default();
    provenance.env = BTreeMap::new();
    provenance.git = GitInfo::default();
    provenance.cpu_governor = None;
    provenance.turbo = None;
    provenance.duration_ms = None;
    let latency = |full: &str, v: f64| Measurement {
        estimate: Estimate {
            point: v,
            lower: Some(v * 0.97),
            upper: Some(v * 1.04),
            confidence_level: None,
            standard_error: None,
        },
        ..Measurement::time_ns(full, v)
    };
    NewRun {
        source: RunSource::ImportBmf,
        provenance,
        measurements: vec![
            latency("parse/small/64", 311.25),
            latency("parse/large/4096", 15_022.5),
            Measurement {
                metric: "file-size".into(),
                unit: "bytes".into(),
                ..Measurement::time_ns("parse/large/4096", 1_204_736.0)
            },
        ],
    }
}

fn hyperfine_import() -> NewRun {
    let mut provenance = bench_run(workstation(), &COMMITS[1], false).provenance;
    provenance.suite = "cli".into();
    provenance.command = vec![
        "bench-run".into(),
        "import".into(),
        "hyperfine".into(),
        "hyperfine.json".into(),
        "--suite".into(),
        "cli".into(),
    ];
    provenance.cargo_command = None;
    provenance.toolchain = None;
    provenance.duration_ms = None;
    let command = |full: &str, ms: f64, seed: u64| {
        let times: Vec<f64> = (0..10)
            .map(|i| (ms * 1e6 * (1.0 + 0.03 * noise(seed, i))).round())
            .collect();
        let mean = times.iter().sum::<f64>() / 10.0;
        let sd = (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / 9.0).sqrt();
        let lo = times.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = times.iter().copied().fold(0.0, f64::max);
        let mut statistics = BTreeMap::new();
        statistics.insert(Statistic::Mean, Estimate::point(mean));
        statistics.insert(Statistic::Median, Estimate::point(median(&times)));
        statistics.insert(Statistic::StdDev, Estimate::point(sd));
        statistics.insert(Statistic::Range, Estimate::point(hi - lo));
        Measurement {
            estimate: Estimate {
                point: mean,
                lower: Some(lo),
                upper: Some(hi),
                confidence_level: None,
                standard_error: None,
            },
            statistics,
            samples: Some(
                Samples::new(SamplingMode::Single, vec![1.0; times.len()], times).expect("samples"),
            ),
            ..Measurement::time_ns(full, mean)
        }
    };
    NewRun {
        source: RunSource::ImportHyperfine,
        provenance,
        measurements: vec![
            command("jsonp check \"big file.json\"", 41.7, 3),
            command("jsonp fmt --indent=2 'twitter.json' > /dev/null", 118.2, 4),
        ],
    }
}

/// The two sides of a `bench-run ab` of `rounds` rounds: per benchmark, one per-process median
/// per round, their median and its interval as the headline.
fn ab_sides(
    machine: Machine,
    commit: &Commit,
    rounds: usize,
    base_scale: f64,
    head_scale: f64,
    seed: u64,
) -> (NewRun, NewRun) {
    let side = |source: RunSource, scale: f64, seed: u64| {
        let mut run = bench_run(machine.clone(), commit, source == RunSource::AbHead);
        run.source = source;
        run.provenance.command = vec![
            "bench-run".into(),
            "ab".into(),
            "--suite".into(),
            "json_parse".into(),
            "--base".into(),
            "main".into(),
            "--rounds".into(),
            rounds.to_string(),
        ];
        run.measurements = [("parse/small/64", 287.4), ("parse/large/4096", 14_306.0)]
            .iter()
            .enumerate()
            .map(|(b, (full, ns))| {
                let values: Vec<f64> = (0..rounds)
                    .map(|r| {
                        (ns * scale * (1.0 + 0.01 * noise(seed + b as u64, r)) * 100.0).round()
                            / 100.0
                    })
                    .collect();
                let mut sorted = values.clone();
                sorted.sort_by(f64::total_cmp);
                Measurement {
                    benchmark: benchmark_id(full),
                    metric: bench_model::metric::TIME.into(),
                    unit: "ns".into(),
                    direction: Direction::LowerIsBetter,
                    estimate: Estimate {
                        point: median(&values),
                        lower: sorted.get(1).copied(),
                        upper: sorted.get(rounds - 2).copied(),
                        confidence_level: Some(0.9297),
                        standard_error: None,
                    },
                    statistics: BTreeMap::new(),
                    throughput: None,
                    samples: Some(
                        Samples::new(SamplingMode::PerProcess, vec![1.0; rounds], values)
                            .expect("samples"),
                    ),
                }
            })
            .collect();
        run
    };
    (
        side(RunSource::AbBase, base_scale, seed),
        side(RunSource::AbHead, head_scale, seed + 100),
    )
}

/// A side order as stored: `B` base first, `H` head first.
fn order(text: &str) -> Vec<bool> {
    text.chars().map(|c| c == 'B').collect()
}

/// A flamegraph as inferno writes it, cut down to a few frames.
fn flamegraph(title: &str) -> String {
    format!(
        r#"<?xml version="1.0" standalone="no"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg version="1.1" width="1200" height="86" onload="init(evt)" viewBox="0 0 1200 86" xmlns="http://www.w3.org/2000/svg"><text x="600" y="24">{title}</text><g><title>json_parse (1,204 samples, 100.00%)</title><rect x="10" y="53" width="1180" height="15" fill="rgb(227,101,40)"/></g><g><title>jsonp::parse_object (612 samples, 50.83%)</title><rect x="10" y="37" width="599" height="15" fill="rgb(240,145,25)"/></g></svg>
"#
    )
}

const FOLDED: &str = "json_parse;jsonp::parse_value;jsonp::parse_object;jsonp::parse_string 412\n\
json_parse;jsonp::parse_value;jsonp::parse_object;jsonp::lex_number 263\n\
json_parse;jsonp::parse_value;jsonp::parse_array 187\n\
json_parse;alloc::raw_vec::RawVec<T,A>::grow_one 58\n";

fn function_counts() -> Vec<u8> {
    let counts = FunctionCounts {
        unit: CountUnit::Instructions,
        rows: vec![
            FunctionCountRow {
                function: "jsonp::lex_number".into(),
                base_share: 0.25,
                head_share: 0.1875,
                base: 1_048_576,
                head: 786_432,
                change: -262_144.0,
            },
            FunctionCountRow {
                function: "jsonp::parse_string".into(),
                base_share: 0.5,
                head_share: 0.53125,
                base: 2_097_152,
                head: 2_228_224,
                change: 131_072.0,
            },
        ],
    };
    serde_json::to_vec(&counts).expect("json")
}

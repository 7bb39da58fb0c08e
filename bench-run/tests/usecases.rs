//! The library's use cases, called as the binary and the web app call them: `record_suite` on
//! the fixture suite, `resolve_baseline`/`resolve_pair`, and `gate` with each of its refusals
//! and verdicts. The binary's tests (cli.rs, gate.rs) check what it prints around them.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// Each test has its own single-threaded runtime; the lock only keeps benchmark processes of
// different tests from running at once.
#![allow(clippy::await_holding_lock)]

mod util;

use bench_analysis::compare::{CompareConfig, GateOutcome};
use bench_model::{
    BenchExe, Machine, Measurement, NewRun, RunConditions, RunProvenance, RunSource, Samples,
    SamplingMode, StoredRun,
};
use bench_runner::suite::BuildOptions;
use bench_store::{Ledger, RunFilter};
use bench_usecases::record::{Progress, RecordError, SuiteRequest, record_suite};
use bench_verdicts::baseline::{resolve_baseline, resolve_pair};
use bench_verdicts::gate::{Allow, GateVerdict, Judged, Refusal, gate};
use util::Sandbox;

/// Every event a recording reported, in order.
#[derive(Default)]
struct Events(Vec<String>);

impl Progress for Events {
    fn note(&mut self, text: &str) {
        self.0.push(format!("note: {text}"));
    }
    fn warning(&mut self, text: &str) {
        self.0.push(format!("warning: {text}"));
    }
    fn started(&mut self, total: usize) {
        self.0.push(format!("started {total}"));
    }
    fn benchmark(&mut self, n: usize, total: usize, id: &str) {
        self.0.push(format!("[{n}/{total}] {id}"));
    }
    fn finished(&mut self) {
        self.0.push("finished".to_owned());
    }
}

impl Events {
    fn any(&self, prefix: &str) -> bool {
        self.0.iter().any(|e| e.starts_with(prefix))
    }
}

fn request(sandbox: &Sandbox, suite: &str, criterion_args: &[&str]) -> SuiteRequest {
    SuiteRequest {
        suite: suite.to_owned(),
        package: None,
        start_dir: sandbox.workspace(),
        cwd: sandbox.workspace(),
        build: BuildOptions::default(),
        target_dir: Some(util::fixture_target_dir()),
        quick: true,
        criterion_args: criterion_args.iter().map(|&a| a.to_owned()).collect(),
        record_env: Vec::new(),
        command: vec!["usecases-test".to_owned()],
        source: RunSource::BenchRun,
    }
}

async fn sandbox_ledger(sandbox: &Sandbox) -> Ledger {
    let location = bench_store::Location::parse(&sandbox.db()).unwrap();
    Ledger::open(location).await.unwrap()
}

#[tokio::test]
async fn record_suite_builds_runs_and_records_in_one_pass() {
    let sandbox = Sandbox::new();
    let ledger = sandbox_ledger(&sandbox).await;
    let _guard = util::bench_lock();

    let mut first = Events::default();
    let request = request(&sandbox, "tiny_suite", &[]);
    let recorded = record_suite(&ledger, &request, None, &mut first)
        .await
        .unwrap();
    assert!(first.any("note: building tiny_suite"), "{:?}", first.0);
    let started = first.0.iter().position(|e| e == "started 3").unwrap();
    assert_eq!(first.0[started + 1].split(']').next(), Some("[1/3"));
    assert!(first.any("[3/3] "), "{:?}", first.0);
    assert!(first.0.contains(&"finished".to_owned()));
    assert!(
        first
            .0
            .last()
            .unwrap()
            .starts_with(&format!("note: recorded run #{} (3 results)", recorded.id)),
        "{:?}",
        first.0
    );

    let run = ledger.require_run(recorded.id).await.unwrap();
    assert_eq!(run.provenance.suite, "tiny_suite");
    assert_eq!(run.provenance.command, ["usecases-test"]);
    assert!(run.provenance.quick, "--quick took effect");
    assert_eq!(run.provenance.build.profile, "bench");
    let exe = run.provenance.bench_exe.clone().expect("executable hashed");
    let results = ledger.measurements(recorded.id).await.unwrap();
    assert_eq!(results.len(), recorded.results);
    assert!(
        results.iter().all(|m| m.samples.is_some()),
        "raw samples kept"
    );

    // Run again without building: the same executable, measured again.
    let mut second = Events::default();
    let again = record_suite(&ledger, &request, Some(&recorded.executable), &mut second)
        .await
        .unwrap();
    assert!(!second.any("note: building"), "{:?}", second.0);
    let run2 = ledger.require_run(again.id).await.unwrap();
    assert_eq!(run2.provenance.bench_exe, Some(exe));
}

#[tokio::test]
async fn a_recording_that_fails_leaves_the_ledger_empty() {
    let sandbox = Sandbox::new();
    let ledger = sandbox_ledger(&sandbox).await;
    let _guard = util::bench_lock();

    let err = record_suite(
        &ledger,
        &request(&sandbox, "no_such_suite", &[]),
        None,
        &mut Events::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, RecordError::Suite(_)), "{err:?}");
    assert!(err.to_string().contains("no_such_suite"), "{err}");

    let err = record_suite(
        &ledger,
        &request(&sandbox, "tiny_suite", &["matches_no_benchmark"]),
        None,
        &mut Events::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, RecordError::NoBenchmarks { suite, .. } if suite == "tiny_suite"),
        "{err:?}"
    );
    let runs = ledger.runs(&RunFilter::default()).await.unwrap();
    assert!(runs.is_empty(), "{runs:?}");
}

// ---------------------------------------------------------------------------------------------
// Baselines and the gate, on runs made here
// ---------------------------------------------------------------------------------------------

/// One benchmark `b` whose 30 samples sit within 1.5% of `center` ns.
fn timed(center: f64) -> Measurement {
    let times: Vec<f64> = (0..30)
        .map(|i| center * (1.0 + (f64::from(i) - 15.0) * 0.001))
        .collect();
    Measurement {
        samples: Some(Samples::new(SamplingMode::Flat, vec![1.0; 30], times).unwrap()),
        ..Measurement::time_ns("b", center)
    }
}

struct Spec {
    suite: &'static str,
    machine: &'static str,
    center: f64,
    quick: bool,
    busy: bool,
    exe: &'static str,
}

const BASE: Spec = Spec {
    suite: "s",
    machine: "m",
    center: 100.0,
    quick: false,
    busy: false,
    exe: "a",
};

async fn record(ledger: &Ledger, spec: Spec) -> StoredRun {
    let run = NewRun {
        source: RunSource::BenchRun,
        provenance: RunProvenance {
            suite: spec.suite.into(),
            machine: Machine {
                fingerprint: spec.machine.into(),
                cpu_model: "cpu".into(),
                logical_cores: 2,
                ..Machine::default()
            },
            quick: spec.quick,
            bench_exe: Some(BenchExe {
                sha256: spec.exe.repeat(64),
                bytes: 1,
            }),
            conditions: spec.busy.then(|| RunConditions {
                cpus: 2,
                wall_ms: 10_000,
                load_start: None,
                load_end: None,
                own_cpus: 1.0,
                others_cpus: 1.5,
                steal_pct: 0.0,
                per_benchmark: Vec::new(),
            }),
            ..RunProvenance::default()
        },
        measurements: vec![timed(spec.center)],
    };
    let id = ledger.record_run(&run).await.unwrap();
    ledger.require_run(id).await.unwrap()
}

async fn verdict(ledger: &Ledger, base: &StoredRun, head: &StoredRun, allow: Allow) -> GateVerdict {
    gate(ledger, base, head, &CompareConfig::default(), allow)
        .await
        .unwrap()
}

fn judged(v: GateVerdict) -> Judged {
    match v {
        GateVerdict::Judged(j) => *j,
        GateVerdict::Refused(r) => panic!("refused: {r}"),
    }
}

fn refused(v: GateVerdict) -> Refusal {
    match v {
        GateVerdict::Refused(r) => r,
        GateVerdict::Judged(j) => panic!("judged: {:?}", j.outcome),
    }
}

#[tokio::test]
async fn the_baseline_is_the_previous_full_run_unless_named() {
    let ledger = Ledger::in_memory().await.unwrap();
    let first = record(&ledger, BASE).await;
    assert!(
        resolve_baseline(&ledger, &first, None, None)
            .await
            .unwrap()
            .is_none()
    );
    let _other_suite = record(&ledger, Spec { suite: "t", ..BASE }).await;
    let _quick = record(
        &ledger,
        Spec {
            quick: true,
            ..BASE
        },
    )
    .await;
    let head = record(&ledger, BASE).await;
    let base = resolve_baseline(&ledger, &head, None, None).await.unwrap();
    assert_eq!(
        base.map(|b| b.id),
        Some(first.id),
        "quick runs and other suites skipped"
    );

    let named = resolve_baseline(&ledger, &head, Some("3"), None)
        .await
        .unwrap();
    assert_eq!(named.map(|b| b.id), Some(3));
    assert!(
        resolve_baseline(&ledger, &head, Some("no-such-tag"), None)
            .await
            .is_err()
    );

    // `latest` as the base means the newest run of the head's suite, not of the ledger.
    let _newest_other = record(&ledger, Spec { suite: "t", ..BASE }).await;
    let (base, head2) = resolve_pair(&ledger, "latest", "1", None, None)
        .await
        .unwrap();
    assert_eq!((base.id, head2.id), (head.id, first.id));
}

#[tokio::test]
async fn the_gate_refuses_what_it_cannot_judge() {
    let ledger = Ledger::in_memory().await.unwrap();
    let base = record(&ledger, BASE).await;
    let allow = Allow::default();

    assert_eq!(
        refused(verdict(&ledger, &base, &base, allow).await),
        Refusal::SameRun(base.id)
    );
    let other_suite = record(
        &ledger,
        Spec {
            suite: "t",
            exe: "b",
            ..BASE
        },
    )
    .await;
    assert!(matches!(
        refused(verdict(&ledger, &base, &other_suite, allow).await),
        Refusal::SuiteDiffers { .. }
    ));

    let other_machine = record(
        &ledger,
        Spec {
            machine: "n",
            exe: "b",
            ..BASE
        },
    )
    .await;
    let refusal = refused(verdict(&ledger, &base, &other_machine, allow).await);
    assert!(
        matches!(&refusal, Refusal::NotComparable { mismatches, .. } if !mismatches.is_empty())
    );
    assert!(
        refusal.to_string().contains("--allow-mismatch"),
        "{refusal}"
    );
    let anyway = Allow {
        mismatch: true,
        ..allow
    };
    let j = judged(verdict(&ledger, &base, &other_machine, anyway).await);
    assert!(j.warnings[0].contains("not comparable"), "{:?}", j.warnings);

    let busy = record(
        &ledger,
        Spec {
            busy: true,
            exe: "b",
            ..BASE
        },
    )
    .await;
    let refusal = refused(verdict(&ledger, &base, &busy, allow).await);
    assert!(matches!(&refusal, Refusal::Busy(sides) if sides[0].starts_with("head run #")));
    let anyway = Allow {
        busy: true,
        ..allow
    };
    let j = judged(verdict(&ledger, &base, &busy, anyway).await);
    assert!(
        j.warnings.iter().any(|w| w.contains("--allow-busy")),
        "{:?}",
        j.warnings
    );

    // One executable on both sides: the timings cannot carry a verdict, so load cannot mislead.
    let busy_same_exe = record(&ledger, Spec { busy: true, ..BASE }).await;
    let j = judged(verdict(&ledger, &base, &busy_same_exe, allow).await);
    assert_eq!(j.outcome, GateOutcome::Pass);
    assert!(j.comparison.same_binary.is_some());
}

#[tokio::test]
async fn the_gate_fails_a_slowdown_and_passes_unchanged_code() {
    let ledger = Ledger::in_memory().await.unwrap();
    let base = record(&ledger, BASE).await;
    let same_speed = record(
        &ledger,
        Spec {
            center: 100.2,
            exe: "b",
            ..BASE
        },
    )
    .await;
    let j = judged(verdict(&ledger, &base, &same_speed, Allow::default()).await);
    assert_eq!(j.outcome, GateOutcome::Pass);
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);

    let slower = record(
        &ledger,
        Spec {
            center: 130.0,
            exe: "c",
            ..BASE
        },
    )
    .await;
    let j = judged(verdict(&ledger, &base, &slower, Allow::default()).await);
    assert_eq!(j.outcome, GateOutcome::Regression);
    let names: Vec<String> = j
        .comparison
        .gating_regressions()
        .map(|r| r.name())
        .collect();
    assert_eq!(names, ["b"]);
}

#[tokio::test]
async fn calibrate_builds_once_runs_n_times_and_reads_back_the_noise() {
    use bench_usecases::calibrate::{CalibrateError, CalibrationRequest, calibrate};
    let sandbox = Sandbox::new();
    let ledger = sandbox_ledger(&sandbox).await;
    let _guard = util::bench_lock();
    let mut suite = request(&sandbox, "tiny_suite", &[]);
    suite.source = RunSource::Calibration;
    let located = bench_usecases::record::locate(&suite).unwrap();
    let config = CompareConfig::default();
    let calibration_of = |runs| CalibrationRequest {
        suite: &suite,
        located: &located,
        runs,
        config: &config,
    };

    let mut events = Events::default();
    let too_few = calibrate(&ledger, &calibration_of(1), &mut events)
        .await
        .unwrap_err();
    assert!(
        matches!(too_few, CalibrateError::TooFewRuns(1)),
        "{too_few}"
    );
    assert!(events.0.is_empty(), "nothing ran: {:?}", events.0);

    let calibration = calibrate(&ledger, &calibration_of(2), &mut events)
        .await
        .unwrap();
    assert_eq!(calibration.suite, "tiny_suite");
    assert_eq!(calibration.runs.len(), 2);
    let builds = events
        .0
        .iter()
        .filter(|e| e.starts_with("note: building"))
        .count();
    assert_eq!(builds, 1, "built once, run twice: {:?}", events.0);
    // Quick runs: the history is these two runs alone, and the warning says so.
    assert!(calibration.quick);
    assert!(
        events.any("warning: --quick runs are not history"),
        "{:?}",
        events.0
    );
    assert_eq!(calibration.history.len(), 3, "three benchmarks");
    assert!(calibration.history.values().all(|points| points.len() == 2));
    assert_eq!(calibration.aa.len(), 3, "one A/A outcome per benchmark");
    for run in &calibration.runs {
        let stored = ledger.require_run(run.id).await.unwrap();
        assert_eq!(stored.source, RunSource::Calibration);
    }
}

#[tokio::test]
async fn confirm_refuses_a_rerun_measured_unlike_the_head_unless_allowed() {
    use bench_usecases::confirm_runs::{ConfirmRequest, Confirmation, confirm_regressions};
    let sandbox = Sandbox::new();
    let ledger = sandbox_ledger(&sandbox).await;
    let _guard = util::bench_lock();
    let base_request = request(&sandbox, "tiny_suite", &["sum/1000"]);
    let recorded = record_suite(&ledger, &base_request, None, &mut Events::default())
        .await
        .unwrap();
    let base = ledger.require_run(recorded.id).await.unwrap();
    // The head claims another compiler than the re-runs will have.
    let mut head = base.clone();
    if let Some(toolchain) = head.provenance.toolchain.as_mut() {
        toolchain.rustc_version = "1.0.0-claimed".to_owned();
    }
    // The gate flagged sum/1000: its head value twice the base's.
    let results: Vec<Measurement> = ledger
        .measurements(base.id)
        .await
        .unwrap()
        .into_iter()
        .map(|mut m| {
            m.samples = None;
            m
        })
        .collect();
    let slower: Vec<Measurement> = results
        .iter()
        .cloned()
        .map(|mut m| {
            m.estimate.point *= 2.0;
            m.estimate.lower = m.estimate.lower.map(|v| v * 2.0);
            m.estimate.upper = m.estimate.upper.map(|v| v * 2.0);
            m
        })
        .collect();
    let config = CompareConfig::default();
    let flagged = bench_analysis::compare::compare(&results, &slower, &Default::default(), &config);
    assert_eq!(
        flagged
            .regressions()
            .map(|r| r.benchmark.as_str())
            .collect::<Vec<_>>(),
        ["sum/1000"]
    );
    let (workspace, command) = (sandbox.workspace(), ["usecases-test".to_owned()]);
    let confirm_request = |allow_mismatch| ConfirmRequest {
        cwd: &workspace,
        command: &command,
        base: &base,
        head: &head,
        flagged: &flagged,
        config: &config,
        runs: 2,
        allow_mismatch,
    };

    let mut events = Events::default();
    let refused = confirm_regressions(&ledger, &confirm_request(false), &mut events)
        .await
        .unwrap();
    let Confirmation::Refused { run, mismatches } = refused else {
        panic!("not refused: {refused:?}");
    };
    assert!(!mismatches.is_empty());
    assert!(
        mismatches
            .iter()
            .any(|m| m.to_string().contains("1.0.0-claimed")),
        "{mismatches:?}"
    );
    let stored = ledger.require_run(run).await.unwrap();
    assert_eq!(stored.source, RunSource::Confirmation, "the re-run is kept");
    assert_eq!(
        events
            .0
            .iter()
            .filter(|e| e.starts_with("note: confirmation run"))
            .count(),
        1,
        "refused after the first re-run: {:?}",
        events.0
    );

    let mut events = Events::default();
    let allowed = confirm_regressions(&ledger, &confirm_request(true), &mut events)
        .await
        .unwrap();
    let Confirmation::Decided { runs, confirmed } = allowed else {
        panic!("refused although allowed: {allowed:?}");
    };
    assert_eq!(runs.len(), 2);
    // The re-runs measured only the flagged benchmark, at its usual speed: it does not hold.
    for run in &runs {
        let measured = ledger.measurements(*run).await.unwrap();
        let names: Vec<&str> = measured.iter().map(|m| m.benchmark.full.as_str()).collect();
        assert_eq!(names, ["sum/1000"], "re-run #{run}");
    }
    assert_eq!(confirmed.len(), 1, "{confirmed:?}");
    assert!(!confirmed[0].holds(), "{confirmed:?}");
    assert!(
        events.any("warning: confirmation run #"),
        "the mismatch is a warning: {:?}",
        events.0
    );
    let builds = events
        .0
        .iter()
        .filter(|e| e.starts_with("note: building"))
        .count();
    assert!(
        builds <= 1,
        "built at most once for both re-runs: {:?}",
        events.0
    );
}

#[tokio::test]
async fn ab_builds_both_sides_once_and_finds_the_slowdown_the_working_tree_adds() {
    use bench_usecases::ab::{AbOutcome, AbRequest, ab};
    let sandbox = Sandbox::repository();
    let ledger = sandbox_ledger(&sandbox).await;
    let _guard = util::bench_lock();
    let workspace = sandbox.workspace();
    let build_home = sandbox.build_home();
    let config = CompareConfig::default();
    let build = BuildOptions::default();
    let filter = ["fnv|sum/1000".to_owned()];
    let command = ["usecases-test".to_owned()];
    let relinker = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bench-run"));
    let request = |head: Option<&'static str>| AbRequest {
        workspace_root: &workspace,
        suite: "tiny_suite",
        package: None,
        base: "HEAD",
        head,
        build: &build,
        record_env: &[],
        criterion_args: &filter,
        layouts: Some(1),
        rounds: None,
        seed: 7,
        config: &config,
        command: &command,
        cwd: &workspace,
        build_home: Some(&build_home),
        relinker: &relinker,
    };

    // The same commit on both sides: nothing is built.
    let same = ab(
        &ledger,
        &request(Some("HEAD")),
        &mut util::AbEvents::default(),
    )
    .await
    .unwrap();
    assert!(matches!(same, AbOutcome::SameCommit { .. }), "{same:?}");

    // An unchanged working tree builds the same executable: nothing is measured.
    let mut events = util::AbEvents::default();
    let unchanged = ab(&ledger, &request(None), &mut events).await.unwrap();
    assert!(
        matches!(unchanged, AbOutcome::IdenticalExecutables { .. }),
        "{unchanged:?}"
    );
    assert!(
        ledger.latest_run(None).await.unwrap().is_none(),
        "nothing recorded"
    );

    // fnv hashes 30% more bytes in the working tree: a regression, from paired rounds.
    let bench = workspace.join("benches/tiny_suite.rs");
    let text = std::fs::read_to_string(&bench).unwrap();
    let slower = text.replace("scaled(4096, \"fnv\")", "scaled(5325, \"fnv\")");
    assert_ne!(text, slower, "the fixture's fnv benchmark has moved");
    std::fs::write(&bench, slower).unwrap();
    let mut events = util::AbEvents::default();
    let outcome = ab(&ledger, &request(None), &mut events).await.unwrap();
    let AbOutcome::Measured(measured) = outcome else {
        panic!("not measured: {outcome:?}; {:?}", events.0);
    };
    assert_eq!(measured.benchmarks.len(), 2, "{:?}", measured.benchmarks);
    assert_eq!(measured.base_run.source, RunSource::AbBase);
    assert_eq!(measured.head_run.source, RunSource::AbHead);
    let regressions: Vec<String> = measured
        .comparison
        .regressions()
        .map(|r| r.benchmark.clone())
        .collect();
    assert_eq!(regressions, ["fnv"], "{:?}", events.0);
    let rounds_done = events.0.iter().filter(|e| e.contains(" done (")).count();
    assert_eq!(rounds_done, measured.rounds, "{:?}", events.0);
    assert!(
        measured.base.exe.exists(),
        "the scratch keeps the executables"
    );
}

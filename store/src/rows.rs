//! What every engine shares: checking a run before it is written, encoding the values SQL has
//! no type for (sample arrays, JSON fields, side orders), and decoding rows into the model.
//! Decoding reads columns by name through [`Cols`], which each engine's row type implements,
//! so a stored run means the same thing whichever engine holds it.

use crate::{LedgerError, Pairing, PairingPlan};
use bench_model::{
    Annotation, BenchExe, BenchmarkId, BuildConfig, Direction, Estimate, GitInfo, LoadAverage,
    Machine, Measurement, NewRun, RunConditions, RunId, RunProvenance, RunSource, RunSummary,
    Samples, SamplingMode, Statistic, Throughput, ThroughputKind, Toolchain,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// Named column access over one engine's row type.
pub trait Cols {
    fn int(&self, column: &str) -> Result<i64, LedgerError>;
    fn opt_int(&self, column: &str) -> Result<Option<i64>, LedgerError>;
    fn real(&self, column: &str) -> Result<f64, LedgerError>;
    fn opt_real(&self, column: &str) -> Result<Option<f64>, LedgerError>;
    fn text(&self, column: &str) -> Result<String, LedgerError>;
    fn opt_text(&self, column: &str) -> Result<Option<String>, LedgerError>;
    fn flag(&self, column: &str) -> Result<bool, LedgerError>;
    fn bytes(&self, column: &str) -> Result<Vec<u8>, LedgerError>;
}

/// Implements [`Cols`] for a sqlx row type: every accessor is `try_get` of its type.
macro_rules! impl_cols {
    ($row:ty) => {
        impl $crate::rows::Cols for $row {
            fn int(&self, c: &str) -> Result<i64, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn opt_int(&self, c: &str) -> Result<Option<i64>, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn real(&self, c: &str) -> Result<f64, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn opt_real(&self, c: &str) -> Result<Option<f64>, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn text(&self, c: &str) -> Result<String, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn opt_text(&self, c: &str) -> Result<Option<String>, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn flag(&self, c: &str) -> Result<bool, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
            fn bytes(&self, c: &str) -> Result<Vec<u8>, $crate::LedgerError> {
                Ok(sqlx::Row::try_get(self, c)?)
            }
        }
    };
}
pub(crate) use impl_cols;

// ---------------------------------------------------------------------------------------------
// Before a write
// ---------------------------------------------------------------------------------------------

/// Refuses a run that must not be stored: no results, a bad executable hash or conditions.
pub(crate) fn check_new_run(run: &NewRun) -> Result<(), LedgerError> {
    check_run_parts(&run.provenance, &run.measurements)
}

/// [`check_new_run`] of a run given in parts (a copy from another ledger).
pub(crate) fn check_run_parts(
    provenance: &RunProvenance,
    measurements: &[Measurement],
) -> Result<(), LedgerError> {
    if measurements.is_empty() {
        return Err(LedgerError::Invalid(format!(
            "run of suite {} has no results; nothing recorded",
            provenance.suite
        )));
    }
    if let Some(exe) = &provenance.bench_exe {
        exe.check().map_err(LedgerError::Invalid)?;
    }
    if let Some(c) = &provenance.conditions {
        c.check().map_err(LedgerError::Invalid)?;
    }
    let mut seen = std::collections::BTreeSet::new();
    for m in measurements {
        if !seen.insert((m.benchmark.full.as_str(), m.metric.as_str())) {
            return Err(LedgerError::Invalid(format!(
                "duplicate result for benchmark {:?} metric {:?} in one run",
                m.benchmark.full, m.metric
            )));
        }
    }
    Ok(())
}

/// The answer to a push whose key was found stored as `(run, content digest)`: that run when
/// the content is the same, [`LedgerError::KeyReused`] when not; `None` when the key is new.
pub(crate) fn earlier_push(
    key: &crate::IngestKey,
    found: Option<(RunId, String)>,
) -> Result<Option<crate::Ingested>, LedgerError> {
    match found {
        None => Ok(None),
        Some((id, digest)) if digest == key.content_sha256 => {
            Ok(Some(crate::Ingested { id, created: false }))
        }
        Some((run, _)) => Err(LedgerError::KeyReused {
            key: key.key.clone(),
            run,
        }),
    }
}

/// Refuses a pairing whose sides do not hold one value per round.
/// The answer to a pair push whose key recorded `earlier` (the head run), whose base is
/// `base`: a key that recorded a single run is another push's.
pub(crate) fn earlier_pair(
    key: &crate::IngestKey,
    earlier: crate::Ingested,
    base: Option<RunId>,
) -> Result<crate::PairIngested, LedgerError> {
    match base {
        Some(base) => Ok(crate::PairIngested {
            base,
            head: earlier.id,
            created: false,
        }),
        None => Err(LedgerError::KeyReused {
            key: key.key.clone(),
            run: earlier.id,
        }),
    }
}

pub(crate) fn check_pair(
    base: &NewRun,
    head: &NewRun,
    plan: &PairingPlan,
) -> Result<(), LedgerError> {
    let rounds = plan.base_first.len();
    if rounds == 0 {
        return Err(LedgerError::Invalid(
            "a pairing needs at least one round".to_owned(),
        ));
    }
    if !plan.round_layouts.is_empty() && plan.round_layouts.len() != rounds {
        return Err(LedgerError::Invalid(format!(
            "a pairing of {rounds} rounds names the layouts of {}",
            plan.round_layouts.len()
        )));
    }
    for (side, run) in [("base", base), ("head", head)] {
        check_new_run(run)?;
        if let Some(m) = run
            .measurements
            .iter()
            .find(|m| m.samples.as_ref().is_some_and(|s| s.len() != rounds))
        {
            return Err(LedgerError::Invalid(format!(
                "{side} result `{}` has {} per-round values for {rounds} rounds",
                m.benchmark.full,
                m.samples.as_ref().map_or(0, Samples::len)
            )));
        }
    }
    Ok(())
}

/// A tag name, trimmed; refused when empty or all digits (numbers name runs by id).
pub(crate) fn check_tag_name(name: &str) -> Result<&str, LedgerError> {
    let name = name.trim();
    if name.is_empty() || name.chars().all(|c| c.is_ascii_digit()) {
        return Err(LedgerError::Invalid(format!(
            "invalid tag name {name:?}: it must be non-empty and not a number (numbers are run ids)"
        )));
    }
    Ok(name)
}

/// Refuses an empty annotation.
pub(crate) fn check_annotation(text: &str) -> Result<(), LedgerError> {
    if text.trim().is_empty() {
        return Err(LedgerError::Invalid(
            "an annotation needs some text".to_owned(),
        ));
    }
    Ok(())
}

/// The error of a results row the database refused as a duplicate of one in the same run.
pub(crate) fn duplicate_result(e: sqlx::Error, m: &Measurement) -> LedgerError {
    if crate::error::refused_as_append_only(&e) {
        LedgerError::Invalid(format!(
            "duplicate result for benchmark {:?} metric {:?} in one run",
            m.benchmark.full, m.metric
        ))
    } else {
        LedgerError::from(e)
    }
}

/// `value` as an `i64` column, refused when it does not fit.
pub(crate) fn to_i64(what: &str, value: u64) -> Result<i64, LedgerError> {
    i64::try_from(value).map_err(|_| LedgerError::Invalid(format!("{what} {value} is too large")))
}

/// Test hook of the kill -9 tests: with the `failpoints` feature and
/// `BENCH_RUN_FAILPOINT=record-run:<index>` set, the process stops (sleeps) before writing
/// result `index`, inside the run's transaction, so a test can kill it there. Compiled out of
/// builds without the feature.
pub(crate) fn failpoint(name: &str, index: usize) {
    #[cfg(feature = "failpoints")]
    {
        static SPEC: std::sync::OnceLock<Option<(String, usize)>> = std::sync::OnceLock::new();
        let spec = SPEC.get_or_init(|| {
            let value = std::env::var("BENCH_RUN_FAILPOINT").ok()?;
            let (n, i) = value.rsplit_once(':')?;
            Some((n.to_owned(), i.parse().ok()?))
        });
        if let Some((n, i)) = spec
            && n == name
            && *i == index
        {
            eprintln!("failpoint {name}:{index} reached");
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = (name, index);
}

// ---------------------------------------------------------------------------------------------
// Encodings
// ---------------------------------------------------------------------------------------------

pub(crate) fn f64s_to_blob(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub(crate) fn blob_to_f64s(blob: &[u8]) -> Result<Vec<f64>, LedgerError> {
    let chunks = blob.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return Err(LedgerError::Corrupt(format!(
            "sample blob of {} bytes is not a whole number of f64",
            blob.len()
        )));
    }
    Ok(chunks
        .map(|c| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(c);
            f64::from_le_bytes(bytes)
        })
        .collect())
}

pub(crate) fn json_text<T: Serialize>(value: &T) -> Result<String, LedgerError> {
    serde_json::to_string(value).map_err(|e| LedgerError::Corrupt(e.to_string()))
}

fn from_json_text<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &str,
) -> Result<T, LedgerError> {
    serde_json::from_str(text).map_err(|e| LedgerError::Corrupt(format!("{what}: {e}")))
}

/// A pairing's side order as stored: one letter per round, `B` base first, `H` head first.
pub(crate) fn order_text(base_first: &[bool]) -> String {
    base_first
        .iter()
        .map(|b| if *b { 'B' } else { 'H' })
        .collect()
}

/// A pairing's round layouts as stored: the seeds in decimal, comma-separated.
pub(crate) fn layouts_text(seeds: &[u64]) -> String {
    seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_layouts(text: &str) -> Result<Vec<u64>, LedgerError> {
    text.split(',')
        .map(|s| {
            s.parse()
                .map_err(|_| LedgerError::Corrupt(format!("pairing layout seed {s:?}")))
        })
        .collect()
}

fn parse_order(text: &str) -> Result<Vec<bool>, LedgerError> {
    text.chars()
        .map(|c| match c {
            'B' => Ok(true),
            'H' => Ok(false),
            other => Err(LedgerError::Corrupt(format!(
                "pairing side order holds {other:?}; only B and H are valid"
            ))),
        })
        .collect()
}

/// The load averages of `conditions` at the start and at the end, as six nullable columns.
pub(crate) type LoadColumns = [Option<f64>; 6];

pub(crate) fn load_columns(c: Option<&RunConditions>) -> LoadColumns {
    let split =
        |l: Option<LoadAverage>| (l.map(|l| l.one), l.map(|l| l.five), l.map(|l| l.fifteen));
    let (s1, s5, s15) = split(c.and_then(|c| c.load_start));
    let (e1, e5, e15) = split(c.and_then(|c| c.load_end));
    [s1, s5, s15, e1, e5, e15]
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

fn source_of(code: i64, what: &str) -> Result<RunSource, LedgerError> {
    RunSource::from_code(code)
        .ok_or_else(|| LedgerError::Corrupt(format!("{what}: unknown run source {code}")))
}

pub(crate) fn direction_of(code: i64) -> Result<Direction, LedgerError> {
    Direction::from_code(code)
        .ok_or_else(|| LedgerError::Corrupt(format!("unknown direction code {code}")))
}

/// The provenance of a `runs` row joined with its machine (`m.*`), toolchain (`t.*` with
/// `t.fingerprint AS t_fingerprint`) and conditions (`c.*`).
pub(crate) fn provenance_from_row(row: &impl Cols) -> Result<RunProvenance, LedgerError> {
    let toolchain = match row.opt_text("t_fingerprint")? {
        Some(fingerprint) => Some(Toolchain {
            fingerprint,
            rustc_version: row.text("rustc_version")?,
            rustc_commit: row.opt_text("rustc_commit")?,
            host: row.text("host")?,
            llvm_version: row.opt_text("llvm_version")?,
            rustc_verbose: row.text("rustc_verbose")?,
            cargo_version: row.text("cargo_version")?,
        }),
        None => None,
    };
    Ok(RunProvenance {
        suite: row.text("suite")?,
        package: row.opt_text("package")?,
        command: from_json_text(&row.text("command")?, "command")?,
        cargo_command: row
            .opt_text("cargo_command")?
            .map(|c| from_json_text(&c, "cargo_command"))
            .transpose()?,
        cwd: row.text("cwd")?,
        machine: Machine {
            fingerprint: row.text("fingerprint")?,
            hostname: row.text("hostname")?,
            cpu_model: row.text("cpu_model")?,
            physical_cores: row
                .opt_int("physical_cores")?
                .and_then(|v| u32::try_from(v).ok()),
            logical_cores: u32::try_from(row.int("logical_cores")?).unwrap_or(0),
            memory_bytes: row
                .opt_int("memory_bytes")?
                .and_then(|v| u64::try_from(v).ok()),
            os: row.text("os")?,
            kernel: row.text("kernel")?,
            arch: row.text("arch")?,
            testbed: row.opt_text("testbed")?,
        },
        toolchain,
        build: BuildConfig {
            profile: row.text("profile")?,
            features: from_json_text(&row.text("features")?, "features")?,
            feature_flags: from_json_text(&row.text("feature_flags")?, "feature_flags")?,
            rustflags: row.opt_text("rustflags")?,
        },
        env: from_json_text(&row.text("env")?, "env")?,
        git: GitInfo {
            commit: row.opt_text("git_commit")?,
            branch: row.opt_text("git_branch")?,
            dirty: row.flag("git_dirty")?,
            commit_time: row.opt_int("git_commit_time")?,
            summary: row.opt_text("git_summary")?,
        },
        cpu_governor: row.opt_text("cpu_governor")?,
        turbo: row.opt_text("turbo")?,
        quick: row.flag("quick")?,
        duration_ms: row.opt_int("duration_ms")?,
        bench_exe: bench_exe_from_row(row)?,
        conditions: conditions_from_row(row)?,
    })
}

/// The source, creation time and machine id of a `runs` row.
pub(crate) fn run_header(
    row: &impl Cols,
    id: RunId,
) -> Result<(RunSource, String, i64), LedgerError> {
    Ok((
        source_of(row.int("source")?, &format!("run {id}"))?,
        row.text("created_at")?,
        row.int("machine_id")?,
    ))
}

pub(crate) fn annotation_from_row(row: &impl Cols) -> Result<Annotation, LedgerError> {
    Ok(Annotation {
        created_at: row.text("created_at")?,
        text: row.text("text")?,
    })
}

fn estimate_from_row(row: &impl Cols, point: &str) -> Result<Estimate, LedgerError> {
    Ok(Estimate {
        point: row.real(point)?,
        lower: row.opt_real("lower")?,
        upper: row.opt_real("upper")?,
        confidence_level: row.opt_real("confidence_level")?,
        standard_error: row.opt_real("standard_error")?,
    })
}

/// A `statistics` row: the result it belongs to, which statistic, its estimate.
pub(crate) fn statistic_from_row(
    row: &impl Cols,
) -> Result<(i64, Statistic, Estimate), LedgerError> {
    let code = row.int("statistic")?;
    let statistic = Statistic::from_code(code)
        .ok_or_else(|| LedgerError::Corrupt(format!("unknown statistic code {code}")))?;
    Ok((
        row.int("result_id")?,
        statistic,
        estimate_from_row(row, "point")?,
    ))
}

/// A `results` row joined with its `samples` row (`s.sampling_mode, s.iters, s.times_ns`).
pub(crate) fn measurement_from_row(
    row: &impl Cols,
    statistics: BTreeMap<Statistic, Estimate>,
) -> Result<Measurement, LedgerError> {
    let throughput = match (
        row.opt_int("throughput_kind")?,
        row.opt_int("throughput_per_iter")?,
    ) {
        (Some(kind), Some(per_iteration)) => Some(Throughput {
            kind: ThroughputKind::from_code(kind)
                .ok_or_else(|| LedgerError::Corrupt(format!("unknown throughput kind {kind}")))?,
            per_iteration: u64::try_from(per_iteration).unwrap_or(0),
        }),
        _ => None,
    };
    let samples = match row.opt_int("sampling_mode")? {
        Some(code) => {
            let mode = SamplingMode::from_code(code)
                .ok_or_else(|| LedgerError::Corrupt(format!("unknown sampling mode {code}")))?;
            let iters = blob_to_f64s(&row.bytes("iters")?)?;
            let times = blob_to_f64s(&row.bytes("times_ns")?)?;
            Some(
                Samples::new(mode, iters, times)
                    .map_err(|e| LedgerError::Corrupt(e.to_string()))?,
            )
        }
        None => None,
    };
    Ok(Measurement {
        benchmark: BenchmarkId {
            full: row.text("benchmark")?,
            group: row.opt_text("group_id")?,
            function: row.opt_text("function_id")?,
            value: row.opt_text("value_str")?,
        },
        metric: row.text("metric")?,
        unit: row.text("unit")?,
        direction: direction_of(row.int("direction")?)?,
        estimate: estimate_from_row(row, "estimate")?,
        statistics,
        throughput,
        samples,
    })
}

/// A run listing row: `runs` joined with its machine (`fingerprint`, `cpu_model`), its conditions
/// (`c.*`), a count `n_results` and its tag names in `tag_names`, separated by U+001F.
pub(crate) fn summary_from_row(row: &impl Cols) -> Result<RunSummary, LedgerError> {
    let id = row.int("id")?;
    Ok(RunSummary {
        id,
        suite: row.text("suite")?,
        created_at: row.text("created_at")?,
        source: source_of(row.int("source")?, &format!("run {id}"))?,
        git_commit: row.opt_text("git_commit")?,
        git_branch: row.opt_text("git_branch")?,
        git_dirty: row.flag("git_dirty")?,
        git_summary: row.opt_text("git_summary")?,
        machine_id: row.int("machine_id")?,
        machine: row.text("fingerprint")?,
        cpu_model: row.text("cpu_model")?,
        quick: row.flag("quick")?,
        results: row.int("n_results")?,
        tags: row
            .opt_text("tag_names")?
            .map(|t| t.split('\u{1f}').map(str::to_owned).collect())
            .unwrap_or_default(),
        conditions: conditions_from_row(row)?,
    })
}

/// A `pairings` row.
pub(crate) fn pairing_from_row(row: &impl Cols) -> Result<Pairing, LedgerError> {
    let seed_text = row.text("seed")?;
    let seed = seed_text
        .parse()
        .map_err(|_| LedgerError::Corrupt(format!("pairing seed {seed_text:?}")))?;
    Ok(Pairing {
        id: row.int("id")?,
        created_at: row.text("created_at")?,
        base_run: row.int("base_run_id")?,
        head_run: row.int("head_run_id")?,
        plan: PairingPlan {
            seed,
            base_first: parse_order(&row.text("side_order")?)?,
            base_rev: row.text("base_rev")?,
            head_rev: row.opt_text("head_rev")?,
            round_layouts: row
                .opt_text("round_seeds")?
                .map(|t| parse_layouts(&t))
                .transpose()?
                .unwrap_or_default(),
        },
    })
}

/// The bench executable of a row joined with `run_conditions` (`None` without a row or hash).
fn bench_exe_from_row(row: &impl Cols) -> Result<Option<BenchExe>, LedgerError> {
    let Some(sha256) = row.opt_text("bench_exe_sha256")? else {
        return Ok(None);
    };
    let bytes = row
        .opt_int("bench_exe_bytes")?
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| LedgerError::Corrupt(format!("bench executable {sha256} has no size")))?;
    Ok(Some(BenchExe { sha256, bytes }))
}

/// The conditions of a row joined with `run_conditions` (`None` without a row or figures).
fn conditions_from_row(row: &impl Cols) -> Result<Option<RunConditions>, LedgerError> {
    let Some(cpus) = row.opt_int("cpus")? else {
        return Ok(None);
    };
    let corrupt = |what: &str| LedgerError::Corrupt(format!("run conditions: {what}"));
    let figure = |name: &str| -> Result<f64, LedgerError> {
        row.opt_real(name)?
            .ok_or_else(|| corrupt(&format!("{name} is missing")))
    };
    let load = |prefix: &str| -> Result<Option<LoadAverage>, LedgerError> {
        let get = |m: &str| row.opt_real(&format!("{prefix}_{m}"));
        Ok(match (get("1")?, get("5")?, get("15")?) {
            (Some(one), Some(five), Some(fifteen)) => Some(LoadAverage { one, five, fifteen }),
            _ => None,
        })
    };
    Ok(Some(RunConditions {
        cpus: u32::try_from(cpus).map_err(|_| corrupt(&format!("cpus = {cpus}")))?,
        wall_ms: row
            .opt_int("wall_ms")?
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| corrupt("wall_ms is missing"))?,
        load_start: load("load_start")?,
        load_end: load("load_end")?,
        own_cpus: figure("own_cpus")?,
        others_cpus: figure("others_cpus")?,
        steal_pct: figure("steal_pct")?,
        per_benchmark: row
            .opt_text("per_benchmark")?
            .map(|t| from_json_text(&t, "run_conditions.per_benchmark"))
            .transpose()?
            .unwrap_or_default(),
    }))
}

pub(crate) fn machine_from_row(r: &impl Cols) -> Result<crate::MachineSummary, LedgerError> {
    Ok(crate::MachineSummary {
        id: r.int("id")?,
        fingerprint: r.text("fingerprint")?,
        cpu_model: r.text("cpu_model")?,
        os: r.text("os")?,
        testbed: r.opt_text("testbed")?,
        runs: r.int("runs")?,
        line_runs: r.int("line_runs")?,
        latest_run: r.int("latest")?,
    })
}

pub(crate) fn trend_run_from_row(r: &impl Cols) -> Result<crate::TrendRun, LedgerError> {
    Ok(crate::TrendRun {
        id: r.int("id")?,
        git_commit: r.opt_text("git_commit")?,
        git_commit_time: r.opt_int("git_commit_time")?,
        created_at: r.text("created_at")?,
    })
}

pub(crate) fn run_annotation_from_row(r: &impl Cols) -> Result<crate::RunAnnotation, LedgerError> {
    Ok(crate::RunAnnotation {
        run_id: r.int("run_id")?,
        created_at: r.text("created_at")?,
        text: r.text("text")?,
    })
}

/// Builds the measurements of a run from its result rows (sorted) and statistic rows.
pub(crate) fn assemble_measurements<R: Cols>(
    results: &[R],
    statistics: &[R],
) -> Result<Vec<Measurement>, LedgerError> {
    let mut by_result: BTreeMap<i64, BTreeMap<Statistic, Estimate>> = BTreeMap::new();
    for row in statistics {
        let (result, statistic, estimate) = statistic_from_row(row)?;
        by_result
            .entry(result)
            .or_default()
            .insert(statistic, estimate);
    }
    results
        .iter()
        .map(|row| {
            let id = row.int("id")?;
            measurement_from_row(row, by_result.remove(&id).unwrap_or_default())
        })
        .collect()
}

/// Builds a history from rows of `run_id, benchmark, metric, estimate`, oldest run first.
pub(crate) fn assemble_history<R: Cols>(rows: &[R]) -> Result<bench_model::History, LedgerError> {
    let mut history = bench_model::History::new();
    for row in rows {
        let key = bench_model::MetricKey {
            benchmark: row.text("benchmark")?,
            metric: row.text("metric")?,
        };
        history
            .entry(key)
            .or_default()
            .push(bench_model::HistoryPoint::new(
                row.int("run_id")?,
                row.real("estimate")?,
            ));
    }
    Ok(history)
}

/// Builds a trend from its runs in commit order, rows of their values (`run_id`, `series`,
/// `estimate`, `lower`, `upper`) and rows naming each series (`run_id`, `series`, `benchmark`,
/// `metric`, `unit`, `direction`) from the first run that has it. `series` is one column that
/// tells benchmark and metric apart unambiguously: `<length of benchmark>:<benchmark><metric>`.
pub(crate) fn assemble_trend<R: Cols>(
    runs: Vec<crate::TrendRun>,
    values: &[R],
) -> Result<(crate::TrendData, Vec<(RunId, String)>), LedgerError> {
    use std::collections::HashMap;
    let position: HashMap<RunId, usize> = runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut index: HashMap<String, usize> = HashMap::new();
    // Per series: its key and a run that has it.
    let mut keys: Vec<(RunId, String)> = Vec::new();
    let mut series_values: Vec<Vec<crate::TrendValue>> = Vec::new();
    for r in values {
        let run_id = r.int("run_id")?;
        let Some(&run) = position.get(&run_id) else {
            continue;
        };
        let key = r.text("series")?;
        let i = if let Some(&i) = index.get(&key) {
            i
        } else {
            index.insert(key.clone(), keys.len());
            keys.push((run_id, key));
            series_values.push(Vec::new());
            keys.len() - 1
        };
        if let Some(v) = series_values.get_mut(i) {
            v.push(crate::TrendValue {
                run,
                run_id,
                estimate: r.real("estimate")?,
                lower: r.opt_real("lower")?,
                upper: r.opt_real("upper")?,
            });
        }
    }
    let series = series_values
        .into_iter()
        .map(|mut values| {
            values.sort_unstable_by_key(|v| v.run);
            crate::TrendSeries {
                benchmark: String::new(),
                metric: String::new(),
                unit: String::new(),
                direction: Direction::LowerIsBetter,
                values,
            }
        })
        .collect();
    Ok((crate::TrendData { runs, series }, keys))
}

/// Names the series of `trend` (in the order of `keys`, as [`assemble_trend`] returned them)
/// from rows of `run_id`, `series`, `benchmark`, `metric`, `unit`, `direction`, then sorts
/// them by benchmark and metric.
pub(crate) fn name_trend_series<R: Cols>(
    trend: &mut crate::TrendData,
    keys: &[(RunId, String)],
    meta: &[R],
) -> Result<(), LedgerError> {
    use std::collections::HashMap;
    let mut by_key: HashMap<(RunId, String), &R> = HashMap::new();
    for r in meta {
        by_key.insert((r.int("run_id")?, r.text("series")?), r);
    }
    for (series, key) in trend.series.iter_mut().zip(keys) {
        let row = by_key.get(key).ok_or_else(|| {
            LedgerError::Corrupt(format!("result {:?} of run {} vanished", key.1, key.0))
        })?;
        series.benchmark = row.text("benchmark")?;
        series.metric = row.text("metric")?;
        series.unit = row.text("unit")?;
        series.direction = direction_of(row.int("direction")?)?;
    }
    trend
        .series
        .sort_unstable_by(|a, b| (&a.benchmark, &a.metric).cmp(&(&b.benchmark, &b.metric)));
    Ok(())
}

/// The distinct runs that name the series of `keys`, ascending.
pub(crate) fn first_runs(keys: &[(RunId, String)]) -> Vec<RunId> {
    let mut runs: Vec<RunId> = keys.iter().map(|(run, _)| *run).collect();
    runs.sort_unstable();
    runs.dedup();
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_that_do_not_decode_are_corrupt_not_panics() {
        assert_eq!(
            blob_to_f64s(&f64s_to_blob(&[1.5, -2.0])).ok(),
            Some(vec![1.5, -2.0])
        );
        for (i, blob) in [&[0u8; 7][..], &[0u8; 9][..], &[1u8; 15][..]]
            .iter()
            .enumerate()
        {
            assert!(
                matches!(blob_to_f64s(blob), Err(LedgerError::Corrupt(_))),
                "case {i}: {} bytes",
                blob.len()
            );
        }
        assert_eq!(parse_order("BHB").ok(), Some(vec![true, false, true]));
        for (i, order) in ["BX", "b", "H H", "é"].iter().enumerate() {
            assert!(
                matches!(parse_order(order), Err(LedgerError::Corrupt(_))),
                "case {i}: {order:?}"
            );
        }
        assert!(matches!(direction_of(0), Err(LedgerError::Corrupt(_))));
        assert!(matches!(
            source_of(99, "run 1"),
            Err(LedgerError::Corrupt(_))
        ));
        assert!(from_json_text::<Vec<String>>("[1, ", "command").is_err());
    }
}

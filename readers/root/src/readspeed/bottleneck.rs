//! Seed 001's "Where is the bottleneck?": its three cases, each with its condition worked out on
//! a measurement, and which of them holds.
//!
//! The first case needs the application's own run time on the same data, the third the storage's
//! read-out rate: neither is in the measurement, so each is given, or its row says what is
//! missing instead of guessing.

use super::report::Report;

/// How far apart two times must be to be "significantly" or "much" different (the seed gives no
/// number): half as much again.
pub const SIGNIFICANT: f64 = 1.5;

/// What the measurement alone does not know.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    /// The application's wall-clock run time on the same data, in seconds.
    pub app_real_time_s: Option<f64>,
    /// What the storage can deliver, in MB/s (MB of 2^20 bytes, as the throughput).
    pub storage_mb_s: Option<f64>,
    /// Cores the machine has; the run used the smaller of these and its threads (the seed's
    /// footnote: more threads than cores do not make more cores).
    pub cores_available: usize,
    /// Share of the files' bytes the page cache held before the run (0 to 1), when known.
    pub resident_before: Option<f64>,
}

/// Files at least this much in the page cache were read from memory, not from the storage.
pub const IN_MEMORY: f64 = 0.9;

/// The seed's three cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// The analysis' own logic takes the time.
    ApplicationLogic,
    /// The storage or the network does not keep up with decompression.
    RawIo,
    /// Decompression does not keep up with the storage.
    Decompression,
}

impl Case {
    /// The seed's name of the case.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::ApplicationLogic => "Application logic is the bottleneck",
            Self::RawIo => "Raw I/O is the bottleneck",
            Self::Decompression => "Decompression is the bottleneck",
        }
    }

    /// The seed's advice for the case, shortened.
    #[must_use]
    pub fn advice(self) -> &'static str {
        match self {
            Self::ApplicationLogic => {
                "optimise the analysis' own code (perf and flamegraphs show where its CPU time \
                 goes), or parallelise its slow parts"
            }
            Self::RawIo => {
                "copy the entries and branches you need to faster local storage, or recompress \
                 with a slower, denser algorithm; more threads will likely not help"
            }
            Self::Decompression => {
                "recompress with a faster algorithm (at the cost of size), or add cores: \
                 scaling should be almost ideal"
            }
        }
    }
}

/// One row of the table: the case, its condition with this run's figures, and whether it holds
/// (`None`: the evidence it needs was not given).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The case.
    pub case: Case,
    /// The condition, with the figures it compares.
    pub condition: String,
    /// Whether it holds.
    pub holds: Option<bool>,
}

/// The seed's table worked out on `report`.
#[must_use]
pub fn table(report: &Report, evidence: &Evidence) -> Vec<Row> {
    let real = report.root_real_time_s();
    let cores = report.threads.min(evidence.cores_available.max(1)).max(1);
    let cpu_per_core = report.root_cpu_time_s() / cores as f64;
    let io_bound = real > SIGNIFICANT * cpu_per_core;
    let cpu_part = format!(
        "CPU time / cores = {:.6} s / {cores} = {cpu_per_core:.6} s",
        report.root_cpu_time_s()
    );
    let app = match evidence.app_real_time_s {
        Some(app) => Row {
            case: Case::ApplicationLogic,
            condition: format!(
                "Real time {real:.6} s is significantly lower (x{SIGNIFICANT}) than the \
                 application's {app:.6} s"
            ),
            holds: Some(app > SIGNIFICANT * real),
        },
        None => Row {
            case: Case::ApplicationLogic,
            condition: format!(
                "Real time {real:.6} s is significantly lower than the application's run time \
                 on the same data (give it: --app-real-time SECONDS)"
            ),
            holds: None,
        },
    };
    // Waiting with the files in memory is waiting for cores other processes hold (the seed's
    // footnote: fewer effective cores than threads), not for the storage.
    let in_memory = evidence.resident_before.filter(|&f| f >= IN_MEMORY);
    let raw_io = match in_memory {
        Some(f) if io_bound => Row {
            case: Case::RawIo,
            condition: format!(
                "Real time {real:.6} s is much higher (x{SIGNIFICANT}) than {cpu_part}; but \
                 {:.1} % of the files were in memory before the run: the threads waited for \
                 cores other processes held, not for the storage",
                100.0 * f
            ),
            holds: Some(false),
        },
        _ => Row {
            case: Case::RawIo,
            condition: format!(
                "Real time {real:.6} s is much higher (x{SIGNIFICANT}) than {cpu_part}"
            ),
            holds: Some(io_bound),
        },
    };
    let on_disk = report.root_compressed_throughput_mb_s();
    let decompression = match evidence.storage_mb_s {
        Some(storage) => Row {
            case: Case::Decompression,
            condition: format!(
                "Real time {real:.6} s is around {cpu_part}, and {on_disk:.3} MB/s read from \
                 the files is lower than the storage's {storage:.3} MB/s"
            ),
            holds: Some(!io_bound && on_disk < storage),
        },
        None => Row {
            case: Case::Decompression,
            condition: format!(
                "Real time {real:.6} s is around {cpu_part}, and {on_disk:.3} MB/s read from \
                 the files is lower than the storage can deliver (give it: --storage-mb-s MBPS)"
            ),
            // Without the storage's rate, a run that is not I/O bound may still be.
            holds: if io_bound { Some(false) } else { None },
        },
    };
    vec![app, raw_io, decompression]
}

/// The cases that hold.
#[must_use]
pub fn holding(rows: &[Row]) -> Vec<Case> {
    rows.iter()
        .filter(|r| r.holds == Some(true))
        .map(|r| r.case)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readspeed::Mode;

    fn report(setup: f64, real: f64, cpu: f64, threads: usize) -> Report {
        Report {
            setup_real_time_s: setup,
            setup_cpu_time_s: setup,
            real_time_s: real,
            cpu_time_s: cpu,
            uncompressed_bytes: 80_000_000,
            compressed_bytes: 20_000_000,
            threads,
            baskets: 1,
            branches: 1,
            mode: Mode::Full,
            stages: None,
        }
    }

    fn evidence(app: Option<f64>, storage: Option<f64>) -> Evidence {
        Evidence {
            app_real_time_s: app,
            storage_mb_s: storage,
            cores_available: 2,
            resident_before: None,
        }
    }

    #[test]
    fn seed_example_is_decompression_bound_on_fast_storage() {
        // The seed's example: 0.172 s real, 0.34 s CPU on 2 threads.
        let r = report(0.0, 0.172477, 0.34, 2);
        assert!((r.root_throughput_mb_s() - 442.343).abs() < 0.01);
        let rows = table(&r, &evidence(None, Some(1000.0)));
        assert_eq!(holding(&rows), [Case::Decompression]);
        assert_eq!(rows[0].holds, None);
        assert!(rows[0].condition.contains("--app-real-time"));
    }

    #[test]
    fn waiting_on_storage_is_raw_io() {
        let rows = table(&report(0.1, 1.0, 0.4, 2), &evidence(Some(1.2), None));
        assert_eq!(holding(&rows), [Case::RawIo]);
        // Not I/O bound is ruled out for the decompression case even without a storage rate.
        assert_eq!(rows[2].holds, Some(false));
        assert_eq!(rows[0].holds, Some(false), "1.2 s is not 1.5 x 1.1 s");
    }

    #[test]
    fn a_slow_application_is_its_own_bottleneck() {
        let rows = table(&report(0.0, 1.0, 2.0, 2), &evidence(Some(10.0), None));
        assert_eq!(holding(&rows), [Case::ApplicationLogic]);
        assert_eq!(rows[2].holds, None, "the storage's rate decides");
    }

    #[test]
    fn waiting_with_the_files_in_memory_is_not_raw_io() {
        let mut e = evidence(None, Some(1000.0));
        e.resident_before = Some(0.996);
        let rows = table(&report(0.0, 1.0, 0.6, 2), &e);
        assert!(holding(&rows).is_empty());
        assert!(
            rows[1].condition.contains("in memory"),
            "{}",
            rows[1].condition
        );
        // Read from the storage, the same figures are raw I/O.
        e.resident_before = Some(0.0);
        assert_eq!(
            holding(&table(&report(0.0, 1.0, 0.6, 2), &e)),
            [Case::RawIo]
        );
    }

    #[test]
    fn more_threads_than_cores_count_the_cores() {
        // 4 threads on 2 cores: 2 s of CPU over 2 cores is 1 s, about the real time.
        let rows = table(&report(0.0, 1.0, 2.0, 4), &evidence(None, Some(10.0)));
        assert_eq!(rows[1].holds, Some(false));
        assert!(rows[1].condition.contains("/ 2 ="), "{}", rows[1].condition);
    }
}

//! # harness
//!
//! The library behind `bench-run`: it finds and runs criterion suites, records every result with
//! its provenance in an append-only ledger (a SQLite file, or a PostgreSQL server for a team),
//! and compares runs with a verdict that is statistically sound, reproducible and explainable.
//!
//! Layers, from the outside in:
//!
//! - [`suite`] finds bench targets through `cargo metadata` and runs them (I/O); [`locate`]
//!   looks for a suite in separate workspaces nested below the root too (I/O);
//!   [`criterion_cli`] says what a bench's criterion version accepts (pure); [`gungraun`]
//!   runs the instruction-count suites among them under valgrind (I/O).
//! - [`provenance`] reads the machine, toolchain and git state and hashes bench executables (I/O).
//! - [`conditions`] reads how busy the machine was while a suite ran (`/proc`; pure parsers and a
//!   small sampler).
//! - [`adapter`] parses tool output (criterion, cargo-criterion, BMF, hyperfine, gungraun,
//!   libtest) and hand-kept markdown logs into the [`model`] (pure; the `bench-adapters` crate).
//! - [`ledger`] is the append-only store ([`bench_store`]: SQLite or PostgreSQL behind one
//!   trait) and where it lives by default (I/O); [`judge`] reads two stored runs and their
//!   history and hands them to [`compare`].
//! - [`stats`] and [`compare`] turn stored samples into verdicts (pure); [`noise`] learns each
//!   benchmark's noise floor from its history, using the change points of [`changepoint`], and
//!   [`quarantine`] reads the list of benchmarks that never fail the gate (pure); [`ratio`]
//!   turns stored speeds into ratios against an anchor implementation (pure). These live in the
//!   `bench-analysis` crate and are re-exported here.
//! - [`quick`] tells whether `--quick` took effect; [`confirm`] decides whether a flagged
//!   regression holds in re-runs (pure).
//! - [`report`] renders runs and comparisons as terminal tables, markdown and JSON (pure; the
//!   `bench-report` crate).

pub mod ab;
pub mod baseline;
pub mod bisect;
pub mod build_home;
pub mod cargo_config;
pub mod comparison;
pub mod conditions;
pub mod confirm;
pub mod criterion_cli;
pub mod gate;
pub mod gungraun;
pub mod interleave;
pub mod judge;
pub mod ledger;
pub mod locate;
pub mod profile;
pub mod provenance;
pub mod push;
pub mod quick;
pub mod record;
pub mod refs;
pub mod relink;
pub mod remote;
pub mod suite;

/// Verdicts as pure functions of data, their own crate ([`bench_analysis`]).
pub use bench_analysis::{
    calibration, changepoint, compare, contention, layout, noise, paired, quarantine, ratio, stats,
};

/// The worker protocol, its own crate so that reader crates can serve it without the harness.
pub use bench_worker as worker;
/// Driving worker processes (re-exported from `bench-worker`).
pub use bench_worker::process as worker_process;

/// Tool output parsed into the model, its own crate ([`bench_adapters`]).
pub use bench_adapters as adapter;
/// Pure rendering of runs and comparisons, its own crate ([`bench_report`]).
pub use bench_report as report;

/// The result model, its own crate so that storage and tools can share it without the harness.
pub use bench_model as model;

//! # harness
//!
//! The library behind `bench-run`: it finds and runs criterion suites, records every result with
//! its provenance in an append-only SQLite ledger, and compares runs with a verdict that is
//! statistically sound, reproducible and explainable.
//!
//! Layers, from the outside in:
//!
//! - [`suite`] finds bench targets through `cargo metadata` and runs them (I/O); [`gungraun`]
//!   runs the instruction-count suites among them under valgrind (I/O).
//! - [`provenance`] reads the machine, toolchain and git state (I/O).
//! - [`adapter`] parses tool output (criterion, cargo-criterion, BMF, hyperfine, gungraun) into the
//!   [`model`] (pure).
//! - [`ledger`] stores runs, results and raw samples in SQLite (I/O).
//! - [`stats`] and [`compare`] turn stored samples into verdicts (pure); [`ratio`] turns stored
//!   speeds into ratios against an anchor implementation (pure).
//! - [`report`] renders runs and comparisons as terminal tables, markdown and JSON (pure).

pub mod adapter;
pub mod compare;
pub mod gungraun;
pub mod interleave;
pub mod ledger;
pub mod ledger_web;
pub mod model;
pub mod provenance;
pub mod ratio;
pub mod refs;
pub mod report;
pub mod stats;
pub mod suite;
pub mod worker;
pub mod worker_process;

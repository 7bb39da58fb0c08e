//! # bench-analysis
//!
//! How bench-run decides, as pure functions of data: no I/O except reading a quarantine list.
//! docs/gating.md is the specification these modules implement.
//!
//! - [`stats`]: numerics (quantiles, bootstrap, Mann-Whitney, Hodges-Lehmann, Holm, BH).
//! - [`compare`]: pairs two runs' results and gives each row a verdict; [`paired`] judges the
//!   rounds of a paired A/B run; [`noise`] learns a benchmark's noise floor from its history,
//!   using the change points of [`changepoint`]; [`quarantine`] reads the list of benchmarks
//!   that never fail the gate.
//! - [`config`]: the settings of a comparison and the benchmark patterns.
//! - [`comparable`]: whether a difference can be the code's (same executable, provenance).
//! - [`layout`]: how far a benchmark moves between links of the same code (layout sensitivity).
//! - [`calibration`]: what `bench-run calibrate`'s A/A comparisons say about the rule.
//! - [`ratio`]: speeds against an anchor implementation.

pub mod calibration;
pub mod changepoint;
pub mod comparable;
pub mod compare;
pub mod config;
pub mod contention;
mod format;
pub mod layout;
pub mod noise;
pub mod paired;
pub mod quarantine;
pub mod ratio;
pub mod stats;

pub(crate) use bench_model as model;

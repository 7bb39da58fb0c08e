//! # bench-verdicts
//!
//! What a ledger says about two runs, as use cases both front ends call: `bench-run` and
//! `bench-web` resolve the same references, gather the same evidence and refuse the same
//! comparisons. Nothing here builds or runs code, so `bench-web` depends on this crate and
//! never compiles the runner.
//!
//! - [`location`]: where the ledger lives by default.
//! - [`refs`] parses and resolves run references (`42`, `latest`, `main`, `merge-base:REV`,
//!   `LEDGER#RUN`); [`baseline`] picks the runs a command compares.
//! - [`evidence`] reads two stored runs and the head's history; [`comparison`] compares them
//!   under the suite rule (the CLI's `compare`, the web's `/compare`); [`gate`] decides
//!   whether a pair passes CI; [`quick`] tells whether `--quick` took effect.

pub mod baseline;
pub mod comparison;
pub mod evidence;
pub mod gate;
pub mod location;
pub mod quick;
pub mod refs;

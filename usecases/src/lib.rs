//! # bench-usecases
//!
//! The use cases of `bench-run` that run code, each a library function the binary calls:
//! [`ab`] builds two revisions and compares them in paired rounds;
//! [`record`] measures a suite and stores it with its provenance; [`calibrate`] runs it N times
//! unchanged and reads back its noise; [`confirm_runs`] re-runs flagged regressions and
//! [`confirm`] decides which hold; [`bisect`] searches a history for the commit that
//! made a benchmark slower; [`interleave`] runs workers' benchmarks in shuffled alternation;
//! [`markdown_log`] records a hand-kept markdown log's runs once each.
//!
//! The mechanics they drive live in `bench-runner`, the ledger in `bench-store`, and the
//! use cases that only read a ledger in `bench-verdicts`.

pub mod ab;
pub mod bisect;
pub mod calibrate;
pub mod confirm;
pub mod confirm_runs;
pub mod interleave;
pub mod markdown_log;
pub mod record;

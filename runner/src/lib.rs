//! # bench-runner
//!
//! The mechanics of measuring: everything `bench-run` does to a workspace and its benchmark
//! processes, and nothing about the ledger.
//!
//! - [`suite`] finds bench targets through `cargo metadata`, builds them and runs criterion
//!   executables; [`locate`] looks for a suite in nested workspaces too; [`criterion_cli`]
//!   says what a bench's criterion version accepts (pure); [`gungraun`] runs instruction-count
//!   suites under valgrind; [`tool`] puts the two behind one trait, and both start and follow
//!   their processes through [`process`];
//!   [`cargo_config`] reads the `rustflags` a build would use.
//! - [`provenance`] reads the machine, toolchain and git state and hashes bench executables;
//!   [`conditions`] samples how busy the machine was while a suite ran (`/proc`).
//! - [`ab`], [`build_home`] and [`relink`] build two revisions the same way and run them in
//!   paired rounds, in several link layouts; [`interleave`] runs two workers' operations in
//!   alternation; [`profile`] captures where the time went in a built side.
//!
//! The verdicts over what these produce live in `bench-analysis`; the use cases that record
//! and judge runs in `bench-usecases` and `bench-verdicts`.

pub mod ab;
pub mod build_home;
pub mod cargo_config;
pub mod conditions;
pub mod criterion_cli;
pub mod gungraun;
pub mod interleave;
pub mod locate;
pub mod process;
pub mod profile;
pub mod provenance;
pub mod relink;
pub mod sides;
pub mod suite;
pub mod tool;

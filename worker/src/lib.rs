//! The worker protocol `bench-run-worker/1`, alone: what a long-lived benchmark worker process
//! says and hears, a server for Rust workers ([`serve`]), and a driver for worker processes of
//! any language ([`process::WorkerProcess`]). Reader crates depend on this, not on the
//! runner; `bench-run interleave` (`bench_runner::interleave`) plans, schedules and summarises.
//!
//! One JSON object per line:
//!
//! ```text
//! worker    -> {"protocol":"bench-run-worker/1","benchmarks":[{"id":"x/ours_write","throughput":{"bytes":1024}}, ...]}
//!              (once, when its setup is done; "throughput" is optional: {"bytes":N} or {"elements":N})
//! bench-run -> {"run":"x/ours_write"}
//! worker    -> {"id":"x/ours_write","iters":1,"ns":123456}      or {"id":"x/ours_write","error":"why"}
//!              (the worker times `iters` iterations itself; setup it does not time is not counted)
//! bench-run closes the worker's stdin at the end; the worker exits.
//! ```

pub mod process;
mod protocol;
mod serve;

pub use protocol::{
    DeclaredThroughput, InterleaveError, MAX_BENCHMARKS, PROTOCOL, Trial, WorkerBenchmark,
    parse_hello, parse_reply, request,
};
pub use serve::{TrialLength, serve, serve_on};

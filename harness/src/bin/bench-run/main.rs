//! `bench-run`: a thin command-line layer over the `harness` library.
//!
//! Exit codes: 0 success (no regression), 1 regression found by `gate` or a ratio below the
//! bar of `ratio`, 2 any error,
//! unusable input or incomparable runs.

mod cli;
mod commands;
mod workers;

use clap::Parser;
use std::process::ExitCode;

/// What a command concluded, beyond success or error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done; nothing to report through the exit code.
    Ok,
    /// `gate` found a regression.
    Regression,
    /// The runs cannot be compared (machine, toolchain, profile or features differ).
    Incomparable,
    /// `ratio` found a median ratio below the bar.
    BelowBar,
    /// `push` could not deliver every run.
    PushFailed,
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(commands::dispatch(cli)) {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Regression | Outcome::BelowBar | Outcome::PushFailed) => ExitCode::from(1),
        Ok(Outcome::Incomparable) => ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

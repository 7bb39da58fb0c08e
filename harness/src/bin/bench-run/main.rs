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
    // Started by `bench-run ab`'s linker shim while cargo builds a side: link, then relink the
    // suite's executable once per layout seed (harness::relink).
    if let Some(plan) = harness::relink::LinkPlan::from_env() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let code = harness::relink::act_as_linker(&plan, &args);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
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

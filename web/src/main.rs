//! `bench-web`: serves the bench-run ledger as web pages and JSON.
//!
//! ```text
//! bench-web [--db PATH] [--addr 127.0.0.1:8080] [--ingest-token TOKEN]
//! ```
//!
//! The ledger is opened read-only unless ingest is enabled (a token is given), in which case
//! it is opened (and created) writable so pushed runs can be recorded. The bound address is
//! printed on standard output once the server listens (`--addr 127.0.0.1:0` picks a free port).

use anyhow::{Context, Result, anyhow};
use clap::Parser;
use harness::ledger::{Ledger, Location};
use std::io::Write;
use std::net::SocketAddr;
use web::AppState;

/// Serve the bench-run ledger: dashboard, runs, before/after comparisons and trend charts.
#[derive(Debug, Parser)]
#[command(name = "bench-web", version, about)]
struct Cli {
    /// The ledger: a SQLite file path (default: results/ledger.sqlite at the workspace root, as
    /// for bench-run) or a PostgreSQL URL (postgres://user@host/db).
    #[arg(long, env = "BENCH_DB", value_name = "PATH|URL")]
    db: Option<String>,

    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    addr: SocketAddr,

    /// Enable `POST /api/runs` for clients sending this bearer token (opens the ledger writable).
    #[arg(
        long,
        env = "BENCH_INGEST_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    ingest_token: Option<String>,
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}

async fn serve(cli: Cli) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let location = harness::ledger::default_location(cli.db.as_deref(), &cwd)?;
    let token = cli.ingest_token.as_deref().filter(|t| !t.is_empty());
    let ledger = if token.is_some() {
        Ledger::open(&location).await
    } else {
        if let Location::Sqlite(path) = &location
            && !path.exists()
        {
            return Err(anyhow!(
                "no ledger at {}; record a run with bench-run first, pass --db PATH, or enable \
                 ingest with --ingest-token to start an empty one",
                path.display()
            ));
        }
        Ledger::open_read_only(&location).await
    }
    .with_context(|| format!("cannot open the ledger {location}"))?;
    let mut state = AppState::new(ledger).with_git_dir(harness::ledger::workspace_root(&cwd));
    if let Some(token) = token {
        state = state.with_ingest_token(token);
    }
    let listener = tokio::net::TcpListener::bind(cli.addr)
        .await
        .with_context(|| format!("cannot listen on {}", cli.addr))?;
    let bound = listener.local_addr().context("no local address")?;
    tracing::info!(
        ledger = %location,
        ingest = token.is_some(),
        "bench-web listening on http://{bound}"
    );
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "bench-web: listening on http://{bound}").context("stdout")?;
        out.flush().context("stdout")?;
    }
    axum::serve(listener, web::app(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("server error")
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match runtime.block_on(serve(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

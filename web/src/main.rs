//! `bench-web`: serves the bench-run ledger as web pages and JSON.
//!
//! ```text
//! bench-web [--db PATH|URL] [--addr 127.0.0.1:8080] [--token SCOPE:SECRET]... [--tokens-file F]
//!           [--private]
//! ```
//!
//! The ledger is opened read-only unless ingest is enabled (a push token is given), in which
//! case it is opened (and created) writable so pushed runs can be recorded. The bound address is
//! printed on standard output once the server listens (`--addr 127.0.0.1:0` picks a free port).

use anyhow::{Context, Result, anyhow};
use bench_store::{Ledger, Location};
use clap::Parser;
use std::io::Write;
use std::net::SocketAddr;
use web::AppState;
use web::access::{self, Access, Scope};

/// Serve the bench-run ledger: dashboard, runs, before/after comparisons and trend charts.
#[derive(Debug, Parser)]
#[command(
    name = "bench-web",
    version,
    about,
    after_help = "Examples:
  bench-web                                   # results/ledger.sqlite, read-only, on :8080
  bench-web --db postgres://bench@db.internal/bench --tokens-file /etc/bench-web/tokens
  bench-web --db 'postgres://bench@localhost/bench?host=/run/postgresql' \\
            --token push:$RUNNER_TOKEN --token read:$DASHBOARD_TOKEN --private

A tokens file holds one SCOPE:SECRET per line (push: may POST runs; read: may read a
--private server); blank lines and lines starting with # are skipped. Secrets are at least
16 characters. Without --private anyone who can reach the server can read it."
)]
struct Cli {
    /// The ledger: a SQLite file path (default: results/ledger.sqlite at the workspace root, as
    /// for bench-run) or a PostgreSQL URL (postgres://user@host/db).
    #[arg(long, env = "BENCH_DB", value_name = "PATH|URL")]
    db: Option<String>,

    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    addr: SocketAddr,

    /// A token: `push:SECRET` may push runs (opens the ledger writable), `read:SECRET` may
    /// read a --private server (repeatable; BENCH_TOKENS takes several, space-separated).
    #[arg(
        long = "token",
        env = "BENCH_TOKENS",
        hide_env_values = true,
        value_delimiter = ' ',
        value_name = "SCOPE:SECRET"
    )]
    tokens: Vec<String>,

    /// Read tokens from this file: one SCOPE:SECRET per line (keeps secrets out of `ps`).
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<std::path::PathBuf>,

    /// Pages and GET /api need a read token (Bearer, or the password of Basic auth).
    #[arg(long)]
    private: bool,

    /// A push token (older spelling of `--token push:SECRET`).
    #[arg(
        long,
        env = "BENCH_INGEST_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    ingest_token: Option<String>,
}

/// The tokens and privacy the command line asks for.
fn access(cli: &Cli) -> Result<Access> {
    let mut specs: Vec<String> = cli
        .tokens
        .iter()
        .filter(|t| !t.is_empty())
        .cloned()
        .collect();
    if let Some(path) = &cli.tokens_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the tokens file {}", path.display()))?;
        specs.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    let mut access = Access::open().private(cli.private);
    for spec in &specs {
        let (scope, secret) = access::parse_spec(spec)?;
        access = access.with_token(scope, &secret);
    }
    if let Some(secret) = cli.ingest_token.as_deref().filter(|t| !t.is_empty()) {
        access::check_secret(Scope::Push, secret)?;
        access = access.with_token(Scope::Push, secret);
    }
    if cli.private && !access.has_read_token() {
        return Err(anyhow!(
            "--private needs a read token (--token read:SECRET), or nobody could read the server"
        ));
    }
    Ok(access)
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
    let location = bench_verdicts::location::default_location(cli.db.as_deref(), &cwd)?;
    let access = access(&cli)?;
    let ingest = access.ingest_enabled();
    let ledger = if ingest {
        Ledger::open(&location).await
    } else {
        if let Location::Sqlite(path) = &location
            && !path.exists()
        {
            return Err(anyhow!(
                "no ledger at {}; record a run with bench-run first, pass --db PATH, or enable \
                 ingest with --token push:SECRET to start an empty one",
                path.display()
            ));
        }
        Ledger::open_read_only(&location).await
    }
    .with_context(|| format!("cannot open the ledger {location}"))?;
    let private = access.is_private();
    let state = AppState::new(ledger)
        .with_git_dir(bench_verdicts::location::workspace_root(&cwd))
        .with_access(access);
    let listener = tokio::net::TcpListener::bind(cli.addr)
        .await
        .with_context(|| format!("cannot listen on {}", cli.addr))?;
    let bound = listener.local_addr().context("no local address")?;
    tracing::info!(
        ledger = %location,
        ingest,
        private,
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
        // Colours only on a terminal: a server log is usually a file or a journal.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
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

//! A real PostgreSQL server for the store tests: one per test process, started on first use
//! from Debian's `postgresql` package (`initdb` and `pg_ctl` from /usr/lib/postgresql/*/bin, or
//! `$BENCH_PG_BIN`) in a temporary directory, listening on a unix socket only, and stopped by a
//! watcher when the test process ends. Each test gets a database of its own
//! ([`PgServer::create_database`]).
//!
//! `initdb` refuses to run as root: as root, the server runs as the `postgres` user (through
//! `runuser`), in a directory under /tmp that user owns. Outside CI a missing PostgreSQL skips
//! the test with a note; under CI it fails it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The socket port (it only names the socket file: the server listens on no TCP port).
const PORT: u16 = 5432;

/// A running test server.
#[derive(Debug)]
pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    root: bool,
    next_db: AtomicUsize,
    /// Stopped and removed on drop (a server of one test; the shared one lives as long as the
    /// process, and its watcher removes it).
    owned: bool,
}

/// The test process's server, started on first use; `None` (after printing `SKIPPED: {what}`)
/// when PostgreSQL is not installed outside CI.
///
/// # Panics
/// Under CI when PostgreSQL is missing, and whenever a present server fails to start.
pub fn server(what: &str) -> Option<&'static PgServer> {
    static SERVER: OnceLock<Option<PgServer>> = OnceLock::new();
    SERVER
        .get_or_init(|| bin_dir().map(|bin| start(bin).unwrap_or_else(|e| panic!("{what}: {e}"))))
        .as_ref()
        .or_else(|| {
            assert!(
                !crate::under_ci(),
                "{what}: PostgreSQL is not installed and CI=true; tools/test.sh installs \
                 Debian's postgresql package (or set BENCH_PG_BIN to its bin directory)"
            );
            eprintln!("SKIPPED: {what}: no PostgreSQL (install postgresql or set BENCH_PG_BIN)");
            None
        })
}

/// A server of the calling test's own, for tests that stop and restart it; stopped and removed
/// when dropped. `None` (after printing `SKIPPED: {what}`) when PostgreSQL is not installed
/// outside CI.
///
/// # Panics
/// As [`server`].
#[must_use]
pub fn private_server(what: &str) -> Option<PgServer> {
    let Some(bin) = bin_dir() else {
        assert!(
            !crate::under_ci(),
            "{what}: PostgreSQL is not installed and CI=true; tools/test.sh installs Debian's \
             postgresql package (or set BENCH_PG_BIN to its bin directory)"
        );
        eprintln!("SKIPPED: {what}: no PostgreSQL (install postgresql or set BENCH_PG_BIN)");
        return None;
    };
    let mut server = start(bin).unwrap_or_else(|e| panic!("{what}: {e}"));
    server.owned = true;
    Some(server)
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if self.owned {
            let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl PgServer {
    /// Stops the server the way a crash would (`pg_ctl stop -m immediate`: no checkpoint,
    /// clients cut off); [`PgServer::start_again`] recovers it from its write-ahead log.
    ///
    /// # Panics
    /// When `pg_ctl` fails.
    pub fn stop_immediately(&self) {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"])
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Starts a stopped server again.
    ///
    /// # Panics
    /// When `pg_ctl` fails.
    pub fn start_again(&self) {
        self.pg_ctl(&["start", "-w", "-t", "60"])
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), String> {
        let mut c = as_server_user(self.root, &self.bin.join("pg_ctl"));
        c.arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .arg("-o")
            .arg(server_options(&self.dir))
            .args(args);
        run(c, &format!("pg_ctl {}", args.join(" ")))
    }

    /// Creates a fresh, empty database and returns its URL
    /// (`postgres://postgres@localhost/<name>?host=<socket dir>&port=5432`).
    ///
    /// # Panics
    /// When the server refuses.
    #[must_use]
    pub fn create_database(&self) -> String {
        let name = format!(
            "test_{}_{}",
            std::process::id(),
            self.next_db.fetch_add(1, Ordering::Relaxed)
        );
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                &self.socket_dir(),
                "-p",
                &PORT.to_string(),
                "-U",
                "postgres",
            ])
            .arg(&name)
            .output()
            .unwrap_or_else(|e| panic!("cannot run createdb: {e}"));
        assert!(
            out.status.success(),
            "createdb {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(&name)
    }

    /// The URL of database `name` on this server.
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres://postgres@localhost/{name}?host={}&port={PORT}",
            self.socket_dir()
        )
    }

    /// A client program of the server's installation, such as `psql`, `pg_dump` or
    /// `pg_restore`, to run as any user: give it a database URL of [`PgServer::url`] with `-d`.
    #[must_use]
    pub fn program(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    fn socket_dir(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }
}

/// `$BENCH_PG_BIN`, else the newest /usr/lib/postgresql/<version>/bin holding `initdb`.
fn bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("BENCH_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// `program args...`, as the `postgres` user when we are root.
fn as_server_user(root: bool, program: &Path) -> Command {
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn run(mut command: Command, what: &str) -> Result<(), String> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn start(bin: PathBuf) -> Result<PgServer, String> {
    let root = running_as_root();
    // Under /tmp, not the (root-only) home: the postgres user must be able to enter it.
    let dir = tempfile_dir()?;
    if root {
        run(
            {
                let mut c = Command::new("chown");
                c.args(["postgres:postgres"]).arg(&dir);
                c
            },
            "chown",
        )?;
    }
    let data = dir.join("data");
    let mut initdb = as_server_user(root, &bin.join("initdb"));
    initdb.arg("-D").arg(&data).args([
        "-U",
        "postgres",
        "--auth=trust",
        "--no-sync",
        "-E",
        "UTF8",
        "--locale=C",
    ]);
    run(initdb, "initdb")?;
    // Stop the server and remove its files once this process is gone, however it ends.
    let watcher = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} -D '{data}' stop -m immediate >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        stop = if root {
            format!("runuser -u postgres -- '{}'", bin.join("pg_ctl").display())
        } else {
            format!("'{}'", bin.join("pg_ctl").display())
        },
        data = data.display(),
        dir = dir.display(),
    );
    Command::new("sh")
        .args(["-c", &watcher])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the server's watcher: {e}"))?;
    let mut pg_ctl = as_server_user(root, &bin.join("pg_ctl"));
    pg_ctl
        .arg("-D")
        .arg(&data)
        .arg("-l")
        .arg(dir.join("server.log"))
        .arg("-o")
        .arg(server_options(&dir))
        .args(["-w", "-t", "60", "start"]);
    run(pg_ctl, "pg_ctl start").map_err(|e| {
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        format!("{e}\nserver log:\n{log}")
    })?;
    Ok(PgServer {
        dir,
        bin,
        root,
        next_db: AtomicUsize::new(0),
        owned: false,
    })
}

/// The server's options: a unix socket in `dir` only, no TCP port.
fn server_options(dir: &Path) -> String {
    format!(
        "-k {} -p {PORT} -c listen_addresses='' -c fsync=off -c max_connections=200",
        dir.display()
    )
}

/// A new directory under /tmp, open to the server user.
fn tempfile_dir() -> Result<PathBuf, String> {
    for attempt in 0..100u32 {
        let dir = PathBuf::from(format!("/tmp/bench-pg-{}-{attempt}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    }
    Err("cannot create a directory for the test server under /tmp".to_owned())
}

//! Helpers shared by the integration tests: building the fixture crate's bench executables
//! (base and head) and a lock that keeps profiling runs from overlapping.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The committed fixture crate (its own workspace).
pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profiled")
}

/// Where fixture builds go: shared by every test, so criterion and gungraun compile once.
pub fn fixture_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("profile-fixture-target")
}

/// The bench executables of one build of the fixture.
#[derive(Debug, Clone)]
pub struct Build {
    /// The criterion bench `wall`.
    pub wall: PathBuf,
    /// The gungraun bench `instructions`.
    pub instructions: PathBuf,
}

/// Which side of the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Without `slow_checksum_added_in_head`.
    Base,
    /// With it (`--features head`).
    Head,
}

/// The fixture built for `side` (once per test binary), as a default `cargo bench` would:
/// the release-based bench profile, no extra debug info, no frame pointers.
pub fn build(side: Side) -> Build {
    static BASE: OnceLock<Build> = OnceLock::new();
    static HEAD: OnceLock<Build> = OnceLock::new();
    let cell = match side {
        Side::Base => &BASE,
        Side::Head => &HEAD,
    };
    cell.get_or_init(|| cargo_bench_no_run(side, false)).clone()
}

/// The base fixture built with DWARF debug info (`debug = true` in the bench profile), in a
/// target directory of its own.
pub fn build_with_debug_info() -> Build {
    static BASE: OnceLock<Build> = OnceLock::new();
    BASE.get_or_init(|| cargo_bench_no_run(Side::Base, true))
        .clone()
}

fn cargo_bench_no_run(side: Side, debug_info: bool) -> Build {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(fixture())
        .args(["bench", "--no-run", "--locked", "--message-format=json"])
        // What the user's build has: nothing from the environment of this test run.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_PROFILE_BENCH_DEBUG");
    if debug_info {
        let target = fixture_target_dir().with_file_name("profile-fixture-target-debuginfo");
        command
            .env("CARGO_TARGET_DIR", target)
            .env("CARGO_PROFILE_BENCH_DEBUG", "true");
    } else {
        command.env("CARGO_TARGET_DIR", fixture_target_dir());
    }
    if side == Side::Head {
        command.args(["--features", "head"]);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "building the fixture failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut wall = None;
    let mut instructions = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(name), Some(exe)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) else {
            continue;
        };
        match name {
            "wall" => wall = Some(PathBuf::from(exe)),
            "instructions" => instructions = Some(PathBuf::from(exe)),
            _ => {}
        }
    }
    Build {
        wall: wall.expect("cargo named no `wall` executable"),
        instructions: instructions.expect("cargo named no `instructions` executable"),
    }
}

/// Profiling runs take this lock: two at once would share the machine's two cores.
pub fn run_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The name the head build adds.
pub const ADDED: &str = "profiled::slow_checksum_added_in_head";

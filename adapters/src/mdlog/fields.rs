//! The fields of a log entry that are not results: its date, machine, toolchain, git commit and
//! commands. Each reader takes the text after the field's label and returns the value or a
//! sentence saying what is wrong with it.

use sha2::{Digest, Sha256};
use time::format_description::well_known::Rfc3339;

use super::records::quoted;
use crate::model::{Machine, Toolchain};

/// Earliest and latest year a log entry may carry: anything else is a typo.
const YEARS: std::ops::RangeInclusive<i32> = 1970..=9999;

/// The ledger's form of a time: RFC 3339, UTC, milliseconds.
const LEDGER_TIME: &[time::format_description::BorrowedFormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
);

/// Architectures `uname -m` prints, to tell `Linux 5.15.0 x86_64 GNU/Linux` apart from an OS
/// line of another shape.
const ARCHES: [&str; 10] = [
    "x86_64", "amd64", "aarch64", "arm64", "armv7l", "i686", "i386", "riscv64", "ppc64le", "s390x",
];

/// Removes one pair of surrounding backticks.
pub(super) fn unticked(text: &str) -> &str {
    let text = text.trim();
    text.strip_prefix('`')
        .and_then(|t| t.strip_suffix('`'))
        .map_or(text, str::trim)
}

/// The `Date (UTC):` value in the ledger's form (`2026-02-14T17:26:18.000Z`).
///
/// Read: RFC 3339 with any offset (converted to UTC) or a space instead of the `T`; a bare
/// `YYYY-MM-DD` is midnight UTC.
pub(super) fn date(text: &str) -> Result<String, String> {
    let text = unticked(text);
    if text.is_empty() {
        return Err("the date is empty".to_owned());
    }
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.replacen(' ', "T", 1)
    };
    let when = time::OffsetDateTime::parse(&full, &Rfc3339).map_err(|_| {
        format!(
            "cannot read the date {:?}: expected RFC 3339 in UTC, like 2026-02-14T17:26:18Z",
            quoted(text)
        )
    })?;
    let utc = when.to_offset(time::UtcOffset::UTC);
    if !YEARS.contains(&utc.year()) {
        return Err(format!(
            "the date {:?} is not between {} and {}",
            quoted(text),
            YEARS.start(),
            YEARS.end()
        ));
    }
    utc.format(LEDGER_TIME)
        .map_err(|e| format!("cannot write the date {:?}: {e}", quoted(text)))
}

/// A git commit: 7 to 40 hex digits, optionally in backticks and followed by `(dirty)`.
pub(super) fn commit(text: &str) -> Result<(String, bool), String> {
    let mut words = text.split_whitespace();
    let hash = words.next().map(|w| unticked(w).to_ascii_lowercase());
    let dirty = words.any(|w| w.to_ascii_lowercase().contains("dirty"));
    match hash {
        Some(h) if (7..=40).contains(&h.len()) && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok((h, dirty))
        }
        _ => Err(format!(
            "cannot read the commit {:?}: expected 7 to 40 hex digits",
            quoted(text.trim())
        )),
    }
}

/// What the `Machine:` block says, before it becomes a [`Machine`].
#[derive(Debug, Default)]
pub(super) struct MachineLines {
    pub cpu: Option<String>,
    pub os: Option<String>,
    pub rust: Option<String>,
}

impl MachineLines {
    /// Reads one `- Key: value` bullet of the block.
    pub(super) fn read(&mut self, bullet: &str) -> Result<(), String> {
        let Some((key, value)) = bullet.split_once(':') else {
            return Err(format!(
                "a machine line reads `- CPU: ...`, `- OS: ...` or `- Rust: ...`, got {:?}",
                quoted(bullet)
            ));
        };
        let value = value.trim().to_owned();
        let slot = match key.trim().to_ascii_lowercase().as_str() {
            "cpu" => &mut self.cpu,
            "os" => &mut self.os,
            "rust" | "toolchain" => &mut self.rust,
            other => {
                return Err(format!(
                    "unknown machine line `{}` (known: CPU, OS, Rust)",
                    quoted(other)
                ));
            }
        };
        if value.is_empty() {
            return Err(format!("the machine's {} is empty", key.trim()));
        }
        if slot.is_some() {
            return Err(format!("the machine's {} is given twice", key.trim()));
        }
        *slot = Some(value);
        Ok(())
    }
}

/// The machine of a `- CPU:` and an `- OS:` line.
///
/// `CPU: Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz (18c/36t)` gives the model and the core counts
/// (logical cores are 0 when the line does not say); `OS: Linux 5.15.0-156-generic x86_64
/// GNU/Linux` (`uname -srmo`) gives the kernel release, the architecture and the OS (`GNU/Linux`,
/// else the kernel's name); an OS line of another shape is kept whole as the OS. A log names its machine loosely (the core counts and the OS line's last word come
/// and go between entries of one machine), so the fingerprint hashes only the CPU model, the
/// architecture and the kernel's name, under a prefix that no machine bench-run measured
/// hashes.
pub(super) fn machine(cpu: &str, os: &str) -> Machine {
    let (model, cores) = match cpu.trim().rsplit_once(" (") {
        Some((model, rest)) => match core_counts(rest.strip_suffix(')').unwrap_or(rest)) {
            Some(cores) => (model.trim(), Some(cores)),
            None => (cpu.trim(), None),
        },
        None => (cpu.trim(), None),
    };
    let words: Vec<&str> = os.split_whitespace().collect();
    let (os_name, kernel, arch) = match words.as_slice() {
        [name, release, arch, rest @ ..] if ARCHES.contains(arch) => (
            if rest.is_empty() {
                (*name).to_owned()
            } else {
                rest.join(" ")
            },
            (*release).to_owned(),
            *arch,
        ),
        _ => (os.trim().to_owned(), String::new(), ""),
    };
    let kernel_name = words.first().copied().unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(format!("markdown-log\0{model}\0{arch}\0{kernel_name}"));
    Machine {
        fingerprint: hex(&hasher.finalize()[..8]),
        hostname: String::new(),
        cpu_model: model.to_owned(),
        physical_cores: cores.map(|(physical, _)| physical),
        logical_cores: cores.map_or(0, |(_, logical)| logical),
        memory_bytes: None,
        os: os_name,
        kernel,
        arch: arch.to_owned(),
        testbed: None,
    }
}

/// `18c/36t`: physical and logical cores.
fn core_counts(text: &str) -> Option<(u32, u32)> {
    let (physical, logical) = text.split_once('/')?;
    let physical = physical.trim().strip_suffix('c')?.parse().ok()?;
    let logical = logical.trim().strip_suffix('t')?.parse().ok()?;
    Some((physical, logical))
}

/// The toolchain of a `- Rust:` line such as `rustc 1.90.0, cargo 1.90.0` or `rustc 1.90.0
/// (1159e78c4 2025-09-14)`.
///
/// The line without its cargo part is kept as `rustc_verbose`; the fingerprint hashes it with
/// the cargo part as bench-run hashes `rustc -vV` and `cargo -V`, so two entries that name their
/// toolchain alike share it (and never match a toolchain bench-run read, whose `rustc -vV` is
/// several lines). The host is not known.
pub(super) fn toolchain(text: &str) -> Result<Toolchain, String> {
    let text = text.trim();
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let rustc = parts
        .iter()
        .find(|p| p.starts_with("rustc"))
        .or_else(|| parts.first())
        .copied()
        .unwrap_or_default();
    let version = rustc
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .ok_or_else(|| {
            format!(
                "cannot read the Rust version in {:?}: expected `rustc 1.90.0, cargo 1.90.0`",
                quoted(text)
            )
        })?;
    let rustc_commit = rustc
        .split_once('(')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .filter(|h| h.len() >= 7 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned);
    let cargo_version = parts
        .iter()
        .find(|p| p.starts_with("cargo"))
        .map(|p| (*p).to_owned())
        .unwrap_or_default();
    let rustc_verbose = parts
        .iter()
        .filter(|p| !p.starts_with("cargo"))
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let mut hasher = Sha256::new();
    hasher.update(format!("{rustc_verbose}\0{cargo_version}"));
    Ok(Toolchain {
        fingerprint: hex(&hasher.finalize()[..8]),
        rustc_version: version.to_owned(),
        rustc_commit,
        host: String::new(),
        llvm_version: None,
        rustc_verbose,
        cargo_version,
    })
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A command of the `Command(s):` block, split into words as a POSIX shell would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LoggedCommand {
    /// The line as written (between the backticks).
    pub text: String,
    /// Its words.
    pub argv: Vec<String>,
    /// What it measured: the value of `--bench` or `--bin` (or `--example`), if any.
    pub target: Option<String>,
}

/// Reads a `- \`cargo bench --bench NAME ...\`` bullet.
pub(super) fn command(bullet: &str) -> Result<LoggedCommand, String> {
    let text = bullet
        .trim()
        .strip_prefix('`')
        .and_then(|rest| rest.split_once('`'))
        .map(|(inside, _)| inside.trim())
        .filter(|inside| !inside.is_empty())
        .ok_or_else(|| {
            format!(
                "a command is written in backticks (- `cargo bench --bench NAME`), got {:?}",
                quoted(bullet.trim())
            )
        })?;
    let argv = shell_words(text)?;
    let target = argv.iter().enumerate().find_map(|(i, word)| {
        ["--bench", "--bin", "--example"].iter().find_map(|flag| {
            word.strip_prefix(flag)
                .and_then(|rest| rest.strip_prefix('='))
                .map(str::to_owned)
                .or_else(|| (word == flag).then(|| argv.get(i + 1).cloned()).flatten())
        })
    });
    Ok(LoggedCommand {
        text: text.to_owned(),
        argv,
        target: target.filter(|t| !t.is_empty() && !t.starts_with('-')),
    })
}

/// Splits a command line into words: blanks separate words, `'...'` is literal, `"..."` and a
/// bare backslash escape as in a POSIX shell (no expansions).
pub(super) fn shell_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(unterminated(text, "'")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(unterminated(text, "\"")),
                        },
                        Some(c) => word.push(c),
                        None => return Err(unterminated(text, "\"")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    word.push(c);
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err("the command is empty".to_owned());
    }
    Ok(words)
}

fn unterminated(text: &str, quote: &str) -> String {
    format!(
        "unterminated {quote} quote in the command {:?}",
        quoted(text)
    )
}

/// The features a cargo command line enables (`--features "a b"`, `--features=a,b`, `-F a`),
/// sorted, and its `--all-features` / `--no-default-features` flags.
pub(super) fn features(argv: &[String]) -> (Vec<String>, Vec<String>) {
    let mut features = Vec::new();
    let mut flags = Vec::new();
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        // Arguments after `--` belong to the benchmark, not to cargo.
        if word == "--" {
            break;
        }
        let list = match word.as_str() {
            "--features" | "-F" => words.next().map(String::as_str),
            "--all-features" | "--no-default-features" => {
                flags.push(word.clone());
                None
            }
            w => w
                .strip_prefix("--features=")
                .or_else(|| w.strip_prefix("-F")),
        };
        if let Some(list) = list {
            features.extend(
                list.split([' ', ','])
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned),
            );
        }
    }
    features.sort();
    features.dedup();
    flags.sort();
    flags.dedup();
    (features, flags)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let cases: [(&str, Option<&str>); 12] = [
            ("2026-02-14T17:26:18Z", Some("2026-02-14T17:26:18.000Z")),
            ("`2026-02-14T17:26:18Z`", Some("2026-02-14T17:26:18.000Z")),
            ("2026-02-14 17:26:18Z", Some("2026-02-14T17:26:18.000Z")),
            ("2026-02-14T17:26:18.5Z", Some("2026-02-14T17:26:18.500Z")),
            (
                "2026-02-14T18:26:18+01:00",
                Some("2026-02-14T17:26:18.000Z"),
            ),
            ("2026-02-14", Some("2026-02-14T00:00:00.000Z")),
            ("", None),
            ("2026-02-30T00:00:00Z", None),
            ("2026-02-14T25:00:00Z", None),
            ("1969-12-31T23:59:59Z", None),
            ("yesterday", None),
            ("2026-02-14T17:26:18", None),
        ];
        for (text, want) in cases {
            assert_eq!(date(text).ok().as_deref(), want, "{text:?}");
        }
    }

    #[test]
    fn machines_and_toolchains() {
        let a = machine(
            "Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz (18c/36t)",
            "Linux 5.15.0-156-generic x86_64 GNU/Linux",
        );
        assert_eq!(a.cpu_model, "Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz");
        assert_eq!((a.physical_cores, a.logical_cores), (Some(18), 36));
        assert_eq!(
            (a.kernel.as_str(), a.arch.as_str()),
            ("5.15.0-156-generic", "x86_64")
        );
        assert_eq!(a.os, "GNU/Linux");
        // The same machine described without core counts and `GNU/Linux`: the same fingerprint.
        let b = machine(
            "Intel(R) Xeon(R) W-2295 CPU @ 3.00GHz",
            "Linux 5.15.0-156-generic x86_64",
        );
        assert_eq!((b.physical_cores, b.logical_cores), (None, 0));
        assert_eq!(b.os, "Linux");
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_eq!(a.fingerprint.len(), 16);
        let other = machine("AMD EPYC 7763 (64c/128t)", "Linux 6.1 x86_64");
        assert_ne!(a.fingerprint, other.fingerprint);
        let odd = machine("Apple M2 (fast)", "macOS 14");
        assert_eq!(odd.cpu_model, "Apple M2 (fast)");
        assert_eq!((odd.kernel.as_str(), odd.arch.as_str()), ("", ""));
        assert_eq!(odd.os, "macOS 14");

        let t = toolchain("rustc 1.90.0, cargo 1.90.0").unwrap();
        assert_eq!(t.rustc_version, "1.90.0");
        assert_eq!(t.cargo_version, "cargo 1.90.0");
        assert_eq!(t.rustc_verbose, "rustc 1.90.0");
        assert_eq!(t.rustc_commit, None);
        let c = toolchain("rustc 1.91.0-nightly (1159e78c4 2025-09-14)").unwrap();
        assert_eq!(c.rustc_version, "1.91.0-nightly");
        assert_eq!(c.rustc_commit.as_deref(), Some("1159e78c4"));
        assert_ne!(t.fingerprint, c.fingerprint);
        assert!(toolchain("stable").is_err());
        assert!(toolchain("").is_err());
    }

    #[test]
    fn commands_words_targets_and_features() {
        let c = command(
            "`cargo bench --bench mathldbt_transport --features \"compression-zstd compression-gzip\"`",
        )
        .unwrap();
        assert_eq!(
            c.argv,
            [
                "cargo",
                "bench",
                "--bench",
                "mathldbt_transport",
                "--features",
                "compression-zstd compression-gzip"
            ]
        );
        assert_eq!(c.target.as_deref(), Some("mathldbt_transport"));
        assert_eq!(
            features(&c.argv),
            (
                vec!["compression-gzip".to_owned(), "compression-zstd".to_owned()],
                vec![]
            )
        );
        let run = command("`CARGO_TARGET_DIR=/tmp/t cargo run --release --bin=tool -F a,b --all-features -- --rows 2000 --features x`").unwrap();
        assert_eq!(run.argv[0], "CARGO_TARGET_DIR=/tmp/t");
        assert_eq!(run.target.as_deref(), Some("tool"));
        assert_eq!(
            features(&run.argv),
            (
                vec!["a".to_owned(), "b".to_owned()],
                vec!["--all-features".to_owned()]
            )
        );
        assert_eq!(command("`cargo test`").unwrap().target, None);
        assert_eq!(command("`cargo bench --bench`").unwrap().target, None);
        assert_eq!(
            shell_words(r#"a 'b c' "d \"e\" \n" f\ g"#).unwrap(),
            ["a", "b c", "d \"e\" \\n", "f g"]
        );
        for bad in [
            "cargo bench",
            "``",
            "`cargo bench 'x`",
            "`cargo \"x`",
            "-",
            "`   `",
        ] {
            assert!(command(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            commit("`0123abc` (dirty)").unwrap(),
            ("0123abc".to_owned(), true)
        );
        assert_eq!(
            commit("0123456789ABCDEF0123456789abcdef01234567")
                .unwrap()
                .0,
            "0123456789abcdef0123456789abcdef01234567"
        );
        for bad in ["", "abc", "xyz1234", &"a".repeat(41)] {
            assert!(commit(bad).is_err(), "{bad:?}");
        }
    }
}

//! Whether a difference between two runs can be the code's at all (pure): two runs of the same
//! bench executable measured the same code ([`same_binary`], and [`mark_same_binary`] turns
//! their regressions and improvements into `Unchanged`), and two runs measured on another
//! machine, toolchain, profile or feature set are not comparable for a gate
//! ([`check_comparable`]). [`crate::compare`] re-exports all of it.

use crate::model::RunProvenance;
use serde::Serialize;
use std::fmt;

// ---------------------------------------------------------------------------------------------
// Same binary
// ---------------------------------------------------------------------------------------------

/// Hex digits of an executable hash shown in messages.
pub const SHORT_HASH_LEN: usize = 12;

/// The executable hash `base` and `head` share: `Some` when both recorded a bench executable
/// and the SHA-256 digests (and sizes) are equal. Then the two runs measured the same code.
#[must_use]
pub fn same_binary(base: &RunProvenance, head: &RunProvenance) -> Option<String> {
    match (&base.bench_exe, &head.bench_exe) {
        (Some(b), Some(h)) if !b.sha256.is_empty() && b == h => Some(b.sha256.clone()),
        _ => None,
    }
}

/// `ab12cd34ef56` for a long hash.
#[must_use]
pub fn short_hash(sha256: &str) -> &str {
    sha256.get(..SHORT_HASH_LEN).unwrap_or(sha256)
}

/// The sentence every report prints above the table of a same-binary comparison.
#[must_use]
pub fn same_binary_sentence(sha256: &str) -> String {
    format!(
        "base and head ran the same executable (sha256 {}): differences are the environment's, \
         not the code's",
        short_hash(sha256)
    )
}

// ---------------------------------------------------------------------------------------------
// Comparability
// ---------------------------------------------------------------------------------------------

/// A part of the provenance that must agree for a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchField {
    /// The machine fingerprint.
    Machine,
    /// rustc release and commit hash.
    Toolchain,
    /// The cargo profile.
    Profile,
    /// Enabled features.
    Features,
    /// `--all-features` / `--no-default-features`.
    FeatureFlags,
    /// `RUSTFLAGS`.
    Rustflags,
}

impl MismatchField {
    /// Stable name used in output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Machine => "machine",
            Self::Toolchain => "toolchain",
            Self::Profile => "profile",
            Self::Features => "features",
            Self::FeatureFlags => "feature flags",
            Self::Rustflags => "RUSTFLAGS",
        }
    }
}

/// One way in which two runs differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// What differs.
    pub field: MismatchField,
    /// The base run's value.
    pub base: String,
    /// The head run's value.
    pub head: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} differs: base {}, head {}",
            self.field.name(),
            self.base,
            self.head
        )
    }
}

/// Ways in which `base` and `head` were measured differently, in [`MismatchField`] order; empty
/// when they may be gated against each other.
///
/// Compared: the machine fingerprint; the toolchain as rustc release plus commit hash (a run
/// without toolchain information differs from one with it); the build profile; the sorted, deduplicated
/// features and feature flags; `RUSTFLAGS` with whitespace normalised (unset = empty).
#[must_use]
pub fn check_comparable(base: &RunProvenance, head: &RunProvenance) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut check = |field: MismatchField, b: String, h: String| {
        if b != h {
            out.push(Mismatch {
                field,
                base: b,
                head: h,
            });
        }
    };

    let machine = |p: &RunProvenance| {
        if p.machine.fingerprint.is_empty() {
            "unknown".to_owned()
        } else {
            format!("`{}`", p.machine.fingerprint)
        }
    };
    if base.machine.fingerprint != head.machine.fingerprint {
        let describe = |p: &RunProvenance| {
            format!(
                "{} ({}, {})",
                machine(p),
                p.machine.hostname,
                p.machine.cpu_model
            )
        };
        check(MismatchField::Machine, describe(base), describe(head));
    }

    let toolchain = |p: &RunProvenance| match &p.toolchain {
        None => "unknown".to_owned(),
        Some(t) => format!(
            "rustc {} ({})",
            t.rustc_version,
            t.rustc_commit.as_deref().unwrap_or("no commit hash")
        ),
    };
    check(MismatchField::Toolchain, toolchain(base), toolchain(head));

    let quoted = |s: &str| format!("`{s}`");
    check(
        MismatchField::Profile,
        quoted(&base.build.profile),
        quoted(&head.build.profile),
    );

    let set = |items: &[String]| {
        let mut v: Vec<&str> = items.iter().map(String::as_str).collect();
        v.sort_unstable();
        v.dedup();
        if v.is_empty() {
            "(none)".to_owned()
        } else {
            format!("[{}]", v.join(", "))
        }
    };
    check(
        MismatchField::Features,
        set(&base.build.features),
        set(&head.build.features),
    );
    // The named features are compared above; of the flags, only the switches add anything
    // (and runs recorded before `--features` went into the flags would differ otherwise).
    let switches = |p: &RunProvenance| {
        let switches = p.build.feature_switches();
        if switches.is_empty() {
            "(none)".to_owned()
        } else {
            format!("[{}]", switches.join(", "))
        }
    };
    check(MismatchField::FeatureFlags, switches(base), switches(head));

    let flags = |p: &RunProvenance| {
        let joined = p
            .build
            .rustflags
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if joined.is_empty() {
            "(unset)".to_owned()
        } else {
            format!("`{joined}`")
        }
    };
    check(MismatchField::Rustflags, flags(base), flags(head));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::compare::fixtures::provenance;

    #[test]
    fn mismatch_detection() {
        let base = provenance();
        assert!(check_comparable(&base, &base).is_empty());
        // Feature order, RUSTFLAGS whitespace and the `--features` words among the flags
        // (recorded since issue 24, absent from older runs) do not matter; the rest does.
        let mut head = provenance();
        head.build.features = vec!["lz4".to_owned(), "zstd".to_owned()];
        head.build.feature_flags = vec!["--features".to_owned(), "lz4,zstd".to_owned()];
        head.build.rustflags = Some("  -C   target-cpu=native ".to_owned());
        head.cwd = "/elsewhere".to_owned();
        assert!(check_comparable(&base, &head).is_empty());

        head.machine.fingerprint = "m2".to_owned();
        head.machine.hostname = "ci-2".to_owned();
        head.toolchain = None;
        head.build.profile = "release".to_owned();
        head.build.features.pop();
        head.build.feature_flags = vec!["--no-default-features".to_owned()];
        head.build.rustflags = None;
        let found = check_comparable(&base, &head);
        let fields: Vec<MismatchField> = found.iter().map(|m| m.field).collect();
        assert_eq!(
            fields,
            [
                MismatchField::Machine,
                MismatchField::Toolchain,
                MismatchField::Profile,
                MismatchField::Features,
                MismatchField::FeatureFlags,
                MismatchField::Rustflags,
            ]
        );
        let text: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            text[0],
            "machine differs: base `m1` (ci-1, EPYC), head `m2` (ci-2, EPYC)"
        );
        assert_eq!(
            text[1],
            "toolchain differs: base rustc 1.95.0 (59807616e), head unknown"
        );
        assert_eq!(text[2], "profile differs: base `bench`, head `release`");
        assert_eq!(text[3], "features differs: base [lz4, zstd], head [lz4]");
        assert_eq!(
            text[5],
            "RUSTFLAGS differs: base `-C target-cpu=native`, head (unset)"
        );

        // Same toolchain release, other commit.
        let mut nightly = provenance();
        if let Some(t) = nightly.toolchain.as_mut() {
            t.rustc_commit = Some("abc".to_owned());
        }
        assert_eq!(check_comparable(&base, &nightly).len(), 1);
    }
}

//! A run's provenance in one line each: machine, features, toolchain, commit, a busy machine,
//! the command line. Below the run, comparison and log reports, which all print them.

use crate::model::{self, RunProvenance, StoredRun};

/// `run #5 ran on a busy machine: <what was over which limit>`, or `None` when the run was not
/// busy or recorded no conditions.
#[must_use]
pub fn busy_text(run: &StoredRun) -> Option<String> {
    let findings = crate::contention::assess(run.provenance.conditions.as_ref()?);
    (!findings.is_empty()).then(|| {
        format!(
            "run #{} ran on a busy machine: {}",
            run.id,
            crate::contention::describe(&findings)
        )
    })
}

/// `abc1234` or `abc1234+` (dirty), empty outside git.
#[must_use]
pub fn short_commit(commit: Option<&str>, dirty: bool) -> String {
    commit.map_or_else(String::new, |c| {
        format!(
            "{}{}",
            c.chars().take(10).collect::<String>(),
            if dirty { "+" } else { "" }
        )
    })
}

/// Machine and toolchain in one line each, as in the seed log.
#[must_use]
pub fn machine_line(p: &RunProvenance) -> String {
    let m = &p.machine;
    let cores = match m.physical_cores {
        Some(physical) => format!("{physical}c/{}t", m.logical_cores),
        None => format!("{}t", m.logical_cores),
    };
    #[expect(clippy::cast_precision_loss, reason = "display only")]
    let memory = m
        .memory_bytes
        .map(|b| format!(", {:.1} GiB", b as f64 / f64::from(1u32 << 30)))
        .unwrap_or_default();
    format!("{} ({cores}{memory})", m.cpu_model)
}

/// The features of a build as the JSON records them: the named features, the cargo flags that
/// chose them, and what that means for the package's default features.
/// `features: lz4,zstd; cargo flags: --features lz4,zstd (default features on)`.
#[must_use]
pub fn features_text(build: &model::BuildConfig) -> String {
    let or_none = |items: &[String], sep: &str| {
        if items.is_empty() {
            "none".to_owned()
        } else {
            items.join(sep)
        }
    };
    let switches = build.feature_switches();
    let defaults = if switches.contains(&"--all-features") {
        "all features on"
    } else if switches.contains(&"--no-default-features") {
        "default features off"
    } else {
        "default features on"
    };
    format!(
        "features: {}; cargo flags: {} ({defaults})",
        or_none(&build.features, ","),
        or_none(&build.feature_flags, " ")
    )
}

/// The toolchain in one line.
#[must_use]
pub fn toolchain_line(p: &RunProvenance) -> String {
    p.toolchain.as_ref().map_or_else(
        || "unknown".to_owned(),
        |t| {
            let rustc = t.rustc_verbose.lines().next().unwrap_or(&t.rustc_version);
            format!("{rustc}, {}", t.cargo_version)
        },
    )
}

/// Characters the `regex` crate (criterion's filter syntax) treats as meta characters.
const REGEX_META: &str = "\\.+*?()|[]{}^$#&-~";

/// Escapes `text` so that criterion's regex filter matches it literally.
#[must_use]
pub fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if REGEX_META.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A criterion filter that selects exactly the benchmarks `ids` (full ids), and nothing whose id
/// merely contains one of them: `^(?:id1|id2|...)$`, each id escaped.
#[must_use]
pub fn exact_filter(ids: &[String]) -> String {
    let alternatives: Vec<String> = ids.iter().map(|id| escape_regex(id)).collect();
    format!("^(?:{})$", alternatives.join("|"))
}

/// Joins argv for display, quoting arguments that need it.
#[must_use]
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_select_exactly_the_flagged_ids() {
        assert_eq!(escape_regex("sum/4000"), "sum/4000");
        assert_eq!(
            escape_regex("a.b+c*d?(e)|[f]{g}^$#&-~\\ h"),
            "a\\.b\\+c\\*d\\?\\(e\\)\\|\\[f\\]\\{g\\}\\^\\$\\#\\&\\-\\~\\\\ h"
        );
        assert_eq!(
            exact_filter(&["sum/4000".to_owned(), "fnv (x.1)".to_owned()]),
            "^(?:sum/4000|fnv \\(x\\.1\\))$"
        );
    }
}

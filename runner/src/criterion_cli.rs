//! What a criterion bench executable accepts on its command line, which depends on the version
//! of criterion it links, and the arguments `bench-run` adds for `--quick` and `ab`.
//!
//! From criterion's own sources (`Criterion::configure_from_args` at each release tag):
//!
//! | criterion     | `--warm-up-time`, `--measurement-time`  | `--sample-size`, `--nresamples` | `CRITERION_HOME` |
//! |---------------|-----------------------------------------|---------------------------------|------------------|
//! | 0.2           | not accepted                            | not accepted                    | ignored          |
//! | 0.3.0 – 0.3.2 | whole seconds (parsed as `u64`)         | accepted                        | ignored          |
//! | 0.3.3 – 0.3.6 | whole seconds (parsed as `u64`)         | accepted                        | read             |
//! | 0.4 and later | seconds with a fraction (`f64`)         | accepted                        | read             |
//!
//! So criterion 0.3 answers `--warm-up-time 0.3` with `error: Invalid value: The argument '0.3'
//! isn't a valid value`, naming neither the flag nor who passed it. The version a suite links
//! is read from the workspace's `Cargo.lock` (the suite's package's own `criterion`
//! dependency, [`version_in_lock`]); budgets are rounded up to whole seconds where it needs
//! them ([`budget_args`]); and when a bench still rejects an argument, [`explain_rejection`]
//! says which one bench-run passed and why.

use crate::suite::SuiteError;
use std::fmt;
use std::path::Path;

/// A criterion release, as `Cargo.lock` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CriterionVersion {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch version.
    pub patch: u64,
}

impl CriterionVersion {
    /// Parses `MAJOR.MINOR.PATCH`, ignoring a pre-release or build suffix; `None` otherwise.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let core = text.split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        let version = Self {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next()??,
        };
        parts.next().is_none().then_some(version)
    }

    /// How its command line takes measurement times.
    #[must_use]
    pub fn time_flags(self) -> TimeFlags {
        match (self.major, self.minor) {
            (0, 0..=2) => TimeFlags::NotAccepted,
            (0, 3) => TimeFlags::WholeSeconds,
            _ => TimeFlags::Fractional,
        }
    }

    /// Whether it writes its output under `$CRITERION_HOME` (0.3.3 and later), where
    /// bench-run reads it.
    #[must_use]
    pub fn reads_criterion_home(self) -> bool {
        (self.major, self.minor, self.patch) >= (0, 3, 3)
    }
}

impl fmt::Display for CriterionVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// How a criterion version takes `--warm-up-time` and `--measurement-time` (and whether it
/// takes the other measurement settings at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFlags {
    /// Criterion 0.2: no measurement settings on the command line.
    NotAccepted,
    /// Criterion 0.3: whole seconds.
    WholeSeconds,
    /// Criterion 0.4 and later: any positive number of seconds.
    Fractional,
}

/// The criterion version package `package` (version `version`, a workspace member, so without
/// a `source`) depends on, from the text of a `Cargo.lock`. `None` when the lock has no such
/// package, the package does not depend on a crate named `criterion`, or the text is not a lock
/// file.
#[must_use]
pub fn version_in_lock(lock: &str, package: &str, version: &str) -> Option<CriterionVersion> {
    let packages = parse_lock(lock);
    let member = packages
        .iter()
        .filter(|p| p.name == package && p.version == version)
        .min_by_key(|p| p.source.is_some())?;
    let dependency = member
        .dependencies
        .iter()
        .find(|d| d.split(' ').next() == Some("criterion"))?;
    // A lock names a dependency's version only when it holds several versions of that crate.
    match dependency.split(' ').nth(1) {
        Some(pinned) => CriterionVersion::parse(pinned),
        None => {
            let mut criteria = packages.iter().filter(|p| p.name == "criterion");
            let only = criteria.next()?;
            if criteria.next().is_some() {
                return None;
            }
            CriterionVersion::parse(&only.version)
        }
    }
}

/// [`version_in_lock`] of `<workspace_root>/Cargo.lock`; `None` also when the file cannot be
/// read.
#[must_use]
pub fn detect(workspace_root: &Path, package: &str, version: &str) -> Option<CriterionVersion> {
    let lock = std::fs::read_to_string(workspace_root.join("Cargo.lock")).ok()?;
    version_in_lock(&lock, package, version)
}

/// One `[[package]]` of a `Cargo.lock`.
#[derive(Debug, Default)]
struct LockedPackage {
    name: String,
    version: String,
    source: Option<String>,
    dependencies: Vec<String>,
}

/// The `[[package]]` tables of a `Cargo.lock` (every format version writes them alike: one
/// `key = "value"` a line, `dependencies` as an array of strings over one or several lines).
/// Anything else is skipped, so any text gives some list, possibly empty.
fn parse_lock(text: &str) -> Vec<LockedPackage> {
    let mut packages = Vec::new();
    let mut current: Option<LockedPackage> = None;
    let mut in_dependencies = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') && !in_dependencies {
            packages.extend(current.take());
            if line == "[[package]]" {
                current = Some(LockedPackage::default());
            }
            continue;
        }
        let Some(package) = current.as_mut() else {
            continue;
        };
        if in_dependencies {
            in_dependencies = !line.starts_with(']');
            package.dependencies.extend(quoted_strings(line));
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "name" => package.name = unquote(value),
            "version" => package.version = unquote(value),
            "source" => package.source = Some(unquote(value)),
            "dependencies" => {
                package.dependencies.extend(quoted_strings(value));
                in_dependencies = value.starts_with('[') && !value.ends_with(']');
            }
            _ => {}
        }
    }
    packages.extend(current);
    packages
}

fn unquote(value: &str) -> String {
    value.trim_matches('"').to_owned()
}

/// The `"..."` strings of one line of a TOML array.
fn quoted_strings(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split('"').skip(1).step_by(2).map(str::to_owned)
}

/// A measurement budget: what `--quick` or one `ab` process asks criterion for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// What the budget is for, as the user named it (`--quick`, `bench-run ab`).
    pub purpose: &'static str,
    /// Warm-up time, seconds.
    pub warm_up_s: f64,
    /// Measurement time, seconds.
    pub measurement_s: f64,
    /// Samples per benchmark.
    pub sample_size: u32,
    /// Bootstrap resamples, when the default is not wanted.
    pub nresamples: Option<u32>,
}

/// `--quick`: a short warm-up and measurement, few samples; a smoke run.
pub const QUICK: Budget = Budget {
    purpose: "--quick",
    warm_up_s: 0.3,
    measurement_s: 1.0,
    sample_size: 20,
    nresamples: None,
};

/// One process of `bench-run ab` (per benchmark: 0.2 s warm-up, 0.5 s of 100 short samples,
/// whose fast tail is the process's value; a light bootstrap, since only the raw samples are
/// used). Many short processes replace one long one: a round of two processes costs about a
/// sixth of a default criterion run (3 s + 5 s), so the default 12 to 14 rounds stay within 3
/// times one plain run.
pub const AB: Budget = Budget {
    purpose: "bench-run ab",
    warm_up_s: 0.2,
    measurement_s: 0.5,
    sample_size: 100,
    nresamples: Some(1000),
};

/// An argument bench-run passes to a bench executable of its own accord, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedArg {
    /// The flag and its value, if any (`["--warm-up-time", "1"]`).
    pub words: Vec<String>,
    /// Why bench-run passes it.
    pub why: String,
}

impl AddedArg {
    fn new(words: &[&str], why: String) -> Self {
        Self {
            words: words.iter().map(|w| (*w).to_owned()).collect(),
            why,
        }
    }

    /// The argument as typed: `--warm-up-time 1`.
    #[must_use]
    pub fn display(&self) -> String {
        self.words.join(" ")
    }
}

/// The criterion arguments of `budget` for a bench linking `version` (`None`: unknown, taken to
/// be current), leaving out every flag the user passed (criterion rejects a flag given twice).
/// Whole-second versions get each time rounded up to a whole second; criterion 0.2 gets none.
#[must_use]
pub fn budget_args(
    budget: &Budget,
    version: Option<CriterionVersion>,
    user_args: &[String],
) -> Vec<AddedArg> {
    let flags = version.map_or(TimeFlags::Fractional, CriterionVersion::time_flags);
    if flags == TimeFlags::NotAccepted {
        return Vec::new();
    }
    let seconds = |s: f64| -> (String, String) {
        match flags {
            TimeFlags::WholeSeconds if s.fract() != 0.0 => {
                let whole = s.ceil().max(1.0);
                (
                    format!("{whole}"),
                    format!(
                        " (criterion {} takes whole seconds, so {whole} s for {s} s)",
                        version.map(|v| v.to_string()).unwrap_or_default()
                    ),
                )
            }
            _ => (format!("{s}"), String::new()),
        }
    };
    let (warm_up, warm_up_note) = seconds(budget.warm_up_s);
    let (measurement, measurement_note) = seconds(budget.measurement_s);
    let sample_size = budget.sample_size.to_string();
    let nresamples = budget.nresamples.map(|n| n.to_string());
    let purpose = budget.purpose;
    let mut args = vec![
        AddedArg::new(
            &["--warm-up-time", &warm_up],
            format!("{purpose}'s warm-up{warm_up_note}"),
        ),
        AddedArg::new(
            &["--measurement-time", &measurement],
            format!("{purpose}'s measurement time{measurement_note}"),
        ),
        AddedArg::new(
            &["--sample-size", &sample_size],
            format!("{purpose}'s sample count"),
        ),
    ];
    if let Some(n) = &nresamples {
        args.push(AddedArg::new(
            &["--nresamples", n],
            format!("{purpose}'s light bootstrap (only the raw samples are used)"),
        ));
    }
    args.retain(|arg| !user_gave(user_args, &arg.words[0]));
    args
}

/// `--noplot`, unless the user asked for plots' absence already: criterion's plots would land
/// in the scratch directory and be thrown away.
#[must_use]
pub fn noplot_arg(user_args: &[String]) -> Option<AddedArg> {
    (!user_args.iter().any(|a| a == "--noplot" || a == "-n")).then(|| {
        AddedArg::new(
            &["--noplot"],
            "bench-run reads criterion's numbers, not its plots, and throws its output \
             directory away"
                .to_owned(),
        )
    })
}

fn user_gave(user_args: &[String], flag: &str) -> bool {
    user_args
        .iter()
        .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
}

/// The command line of a bench process: bench-run's own arguments, then the user's.
#[must_use]
pub fn command_line(added: &[AddedArg], user_args: &[String]) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    // The user's arguments come before `--noplot` as they always have; the budget first.
    let (noplot, budget): (Vec<&AddedArg>, Vec<&AddedArg>) =
        added.iter().partition(|a| a.words[0] == "--noplot");
    args.extend(budget.iter().flat_map(|a| a.words.iter().cloned()));
    args.extend(user_args.iter().cloned());
    args.extend(noplot.iter().flat_map(|a| a.words.iter().cloned()));
    args
}

/// Words of criterion's (clap's) answers to an argument it does not take, lower-cased:
/// clap 2 (criterion 0.2, 0.3) and clap 3/4 (0.4 and later).
const REJECTION_MARKS: &[&str] = &[
    "isn't a valid value",
    "invalid value",
    "wasn't expected",
    "unexpected argument",
    "unrecognized option",
    "found argument",
];

/// When a bench's last output (`tail`) says it rejected an argument, a paragraph naming the
/// arguments bench-run passed that it may have meant (those its message quotes, else all of
/// them), why bench-run passed each, what the suite links, and how to override. `None` when
/// the output is not an argument rejection.
#[must_use]
pub fn explain_rejection(
    tail: &str,
    added: &[AddedArg],
    user_args: &[String],
    version: Option<CriterionVersion>,
) -> Option<String> {
    let rejection = tail.lines().find(|line| {
        let lower = line.to_lowercase();
        REJECTION_MARKS.iter().any(|mark| lower.contains(mark))
    })?;
    let quoted: Vec<&str> = rejection
        .split(['\'', '`', '"'])
        .skip(1)
        .step_by(2)
        .map(|q| q.split_whitespace().next().unwrap_or(q))
        .collect();
    let named = |words: &[String]| words.iter().any(|w| quoted.contains(&w.as_str()));
    let culprits: Vec<&AddedArg> = added.iter().filter(|a| named(&a.words)).collect();
    let user_named = user_args.iter().any(|a| quoted.contains(&a.as_str()));
    // Unless the message names an argument, any of them may be the one.
    let (shown, show_user) = if culprits.is_empty() && !user_named {
        (added.iter().collect(), !user_args.is_empty())
    } else {
        (culprits, user_named)
    };
    let mut out = format!("the bench rejected an argument ({})", rejection.trim());
    let any_of_ours = !shown.is_empty();
    for arg in shown {
        out.push_str(&format!(
            "\n  bench-run passed `{}`: {}",
            arg.display(),
            arg.why
        ));
    }
    if show_user {
        out.push_str(&format!(
            "\n  you passed after `--`: `{}`",
            user_args.join(" ")
        ));
    }
    out.push_str(&match version {
        Some(v) => match v.time_flags() {
            TimeFlags::NotAccepted => format!(
                "\n  the suite links criterion {v} (Cargo.lock), which takes no measurement \
                 settings on its command line"
            ),
            TimeFlags::WholeSeconds => format!(
                "\n  the suite links criterion {v} (Cargo.lock), whose --warm-up-time and \
                 --measurement-time take whole seconds"
            ),
            TimeFlags::Fractional => format!("\n  the suite links criterion {v} (Cargo.lock)"),
        },
        None => "\n  bench-run could not tell which criterion version the suite links (no \
                 `criterion` dependency of its package in Cargo.lock) and passed what \
                 criterion 0.4 and later take"
            .to_owned(),
    });
    if any_of_ours {
        out.push_str(
            "\n  a flag you pass after `--` replaces bench-run's own (e.g. `-- --warm-up-time 1`)",
        );
    }
    Some(out)
}

/// `error` with what [`explain_rejection`] can tell when it is a bench's failure that says it
/// rejected an argument; any other error as it is.
#[must_use]
pub fn explain_failure(
    error: SuiteError,
    added: &[AddedArg],
    user_args: &[String],
    version: Option<CriterionVersion>,
) -> SuiteError {
    match error {
        SuiteError::BenchFailed {
            suite,
            status,
            tail,
            hint: None,
        } => SuiteError::BenchFailed {
            hint: explain_rejection(&tail, added, user_args, version),
            suite,
            status,
            tail,
        },
        other => other,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const LOCK: &str = r#"# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 3

[[package]]
name = "ahash"
version = "0.8.12"
dependencies = [
 "cfg-if",
 "criterion",
 "fnv",
]

[[package]]
name = "cfg-if"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "baf1de4339761588bc0619e3cbc0120ee582ebb74b53b4efbf79117bd2da40fd"

[[package]]
name = "criterion"
version = "0.3.6"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = ["cast", "clap 2.34.0"]
"#;

    fn v(text: &str) -> CriterionVersion {
        CriterionVersion::parse(text).unwrap()
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn flat(args: &[AddedArg]) -> Vec<String> {
        args.iter().flat_map(|a| a.words.clone()).collect()
    }

    #[test]
    fn versions_parse_and_say_what_their_command_line_takes() {
        assert_eq!(v("0.3.6").to_string(), "0.3.6");
        assert_eq!(v("0.5.1-alpha.1+build"), v("0.5.1"));
        for bad in ["", "0.3", "0.3.6.1", "x.y.z", "0..1", "-1.0.0"] {
            assert_eq!(CriterionVersion::parse(bad), None, "{bad:?}");
        }
        assert_eq!(v("0.2.11").time_flags(), TimeFlags::NotAccepted);
        assert_eq!(v("0.3.0").time_flags(), TimeFlags::WholeSeconds);
        assert_eq!(v("0.3.6").time_flags(), TimeFlags::WholeSeconds);
        assert_eq!(v("0.4.0").time_flags(), TimeFlags::Fractional);
        assert_eq!(v("0.8.2").time_flags(), TimeFlags::Fractional);
        assert_eq!(v("1.0.0").time_flags(), TimeFlags::Fractional);
        assert!(!v("0.3.2").reads_criterion_home());
        assert!(v("0.3.3").reads_criterion_home() && v("0.8.0").reads_criterion_home());
    }

    #[test]
    fn the_lock_names_the_criterion_of_the_suites_package() {
        assert_eq!(version_in_lock(LOCK, "ahash", "0.8.12"), Some(v("0.3.6")));
        assert_eq!(version_in_lock(LOCK, "ahash", "0.8.11"), None);
        assert_eq!(version_in_lock(LOCK, "cfg-if", "1.0.0"), None);
        // Two criteria in one lock: the package's entry names its own.
        let two = format!(
            "{}\n[[package]]\nname = \"criterion\"\nversion = \"0.5.1\"\n\n\
             [[package]]\nname = \"other\"\nversion = \"0.1.0\"\ndependencies = [\"criterion 0.5.1\"]\n",
            LOCK.replace("\"criterion\",", "\"criterion 0.3.6\",")
        );
        assert_eq!(version_in_lock(&two, "ahash", "0.8.12"), Some(v("0.3.6")));
        assert_eq!(version_in_lock(&two, "other", "0.1.0"), Some(v("0.5.1")));
        // An unpinned name with two versions in the lock is not a lock cargo writes: no guess.
        let ambiguous = two.replace("\"criterion 0.3.6\",", "\"criterion\",");
        assert_eq!(version_in_lock(&ambiguous, "ahash", "0.8.12"), None);
        // A workspace member wins over a registry package of the same name and version.
        let shadowed = format!(
            "{LOCK}\n[[package]]\nname = \"ahash\"\nversion = \"0.8.12\"\n\
             source = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        );
        assert_eq!(
            version_in_lock(&shadowed, "ahash", "0.8.12"),
            Some(v("0.3.6"))
        );
    }

    #[test]
    fn hostile_lock_text_gives_no_version_and_no_panic() {
        // Cut inside the member's dependency array: criterion's own entry is gone.
        let cut = &LOCK[..LOCK.find("fnv").unwrap()];
        assert_eq!(version_in_lock(cut, "ahash", "0.8.12"), None);
        // Cut inside criterion's entry, after its version.
        let cut = &LOCK[..LOCK.find("dependencies = [\"cast\"").unwrap() + 20];
        assert_eq!(version_in_lock(cut, "ahash", "0.8.12"), Some(v("0.3.6")));
        for text in [
            "",
            "[[package]]",
            "[[package]]\nname = \"ahash\"\nversion = \"0.8.12\"\ndependencies = [\n",
            "[[package]]\nname\nversion\n= \ndependencies = \"criterion\"",
            "\u{0}\u{ffff}[[[[\"\"\"",
        ] {
            assert_eq!(version_in_lock(text, "ahash", "0.8.12"), None, "{text:?}");
        }
        let bad_version = LOCK.replace("0.3.6", "zero");
        assert_eq!(version_in_lock(&bad_version, "ahash", "0.8.12"), None);
    }

    #[test]
    fn quick_args_follow_the_criterion_version() {
        let modern = budget_args(&QUICK, Some(v("0.5.1")), &[]);
        assert_eq!(
            flat(&modern),
            strings(&[
                "--warm-up-time",
                "0.3",
                "--measurement-time",
                "1",
                "--sample-size",
                "20"
            ])
        );
        assert_eq!(flat(&budget_args(&QUICK, None, &[])), flat(&modern));
        let old = budget_args(&QUICK, Some(v("0.3.6")), &[]);
        assert_eq!(
            flat(&old),
            strings(&[
                "--warm-up-time",
                "1",
                "--measurement-time",
                "1",
                "--sample-size",
                "20"
            ])
        );
        assert!(old[0].why.contains("whole seconds"), "{:?}", old[0]);
        assert!(budget_args(&QUICK, Some(v("0.2.11")), &[]).is_empty());
        let ab = budget_args(&AB, Some(v("0.3.2")), &[]);
        assert_eq!(
            flat(&ab),
            strings(&[
                "--warm-up-time",
                "1",
                "--measurement-time",
                "1",
                "--sample-size",
                "100",
                "--nresamples",
                "1000"
            ])
        );
    }

    #[test]
    fn the_users_flags_win_and_come_before_noplot() {
        let user = strings(&["--sample-size", "50", "--warm-up-time=2", "encode"]);
        let mut added = budget_args(&QUICK, Some(v("0.8.2")), &user);
        assert_eq!(flat(&added), strings(&["--measurement-time", "1"]));
        added.extend(noplot_arg(&user));
        assert_eq!(
            command_line(&added, &user),
            strings(&[
                "--measurement-time",
                "1",
                "--sample-size",
                "50",
                "--warm-up-time=2",
                "encode",
                "--noplot"
            ])
        );
        assert_eq!(noplot_arg(&strings(&["-n"])), None);
    }

    #[test]
    fn a_rejected_argument_is_named_with_its_reason() {
        let added = budget_args(&QUICK, None, &[]);
        // criterion 0.3 (clap 2) quotes only the value.
        let tail = "Gnuplot not found, using plotters backend\n\
                    error: Invalid value: The argument '0.3' isn't a valid value\n";
        let text = explain_rejection(tail, &added, &[], Some(v("0.3.6"))).unwrap();
        assert!(text.contains("`--warm-up-time 0.3`"), "{text}");
        assert!(text.contains("--quick's warm-up"), "{text}");
        assert!(
            text.contains("criterion 0.3.6") && text.contains("whole seconds"),
            "{text}"
        );
        assert!(text.contains("-- --warm-up-time 1"), "{text}");
        assert!(!text.contains("--sample-size"), "{text}");
        // clap 4 quotes the flag; an unknown version says so.
        let tail = "error: invalid value 'abc' for '--sample-size <SAMPLE_SIZE>': invalid digit";
        let text = explain_rejection(tail, &added, &[], None).unwrap();
        assert!(text.contains("`--sample-size 20`"), "{text}");
        assert!(text.contains("could not tell which criterion"), "{text}");
        // The user's own argument.
        let user = strings(&["--bogus"]);
        let tail = "error: Found argument '--bogus' which wasn't expected, or isn't valid";
        let text = explain_rejection(tail, &added, &user, Some(v("0.3.6"))).unwrap();
        assert!(text.contains("you passed after `--`: `--bogus`"), "{text}");
        assert!(
            !text.contains("bench-run passed") && !text.contains("replaces"),
            "{text}"
        );
        // Nothing quoted that we know: every argument is listed.
        let tail = "error: unexpected argument found";
        let text = explain_rejection(tail, &added, &[], Some(v("0.8.2"))).unwrap();
        assert_eq!(text.matches("bench-run passed").count(), 3, "{text}");
        // Not a rejection.
        assert_eq!(
            explain_rejection("thread 'main' panicked at src/x.rs", &added, &[], None),
            None
        );
    }
}

//! Suites: finding criterion bench targets in any cargo workspace and building them; running
//! their executables is the job of the `run` submodule (re-exported here).
//!
//! The flow for one suite:
//!
//! 1. `cargo metadata --no-deps` lists the bench targets of every workspace member
//!    ([`parse_metadata`], [`Workspace::find`]).
//! 2. `cargo bench --no-run --message-format=json` builds the target and names its executable
//!    ([`parse_build_messages`]).
//! 3. `<exe> --bench --list` names the benchmarks this run will execute, so progress can say
//!    "n of m" ([`run::parse_list`]).
//! 4. `<exe> --bench <criterion args>` runs them with `CRITERION_HOME` pointing at a fresh
//!    directory, so this run's output is read in isolation and the user's own
//!    `target/criterion` reports are left intact. Criterion's progress lines drive the
//!    progress bar ([`run::ProgressTracker`]).
//!
//! A bench target written with gungraun (instruction counts under valgrind) takes its own run
//! and output path after step 2: see [`crate::gungraun`].
//!
//! Running the executable directly (as cargo-criterion does) instead of a second `cargo bench`
//! keeps cargo's freshness check out of the measured overhead; the environment cargo would set
//! for a bench (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, working directory) is set the same way.

pub mod run;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Errors raised while finding, building or running a suite.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// `cargo metadata` or `cargo bench` could not be started or failed.
    #[error("`{command}` failed: {reason}")]
    Cargo {
        /// The command line.
        command: String,
        /// What went wrong (cargo's own message when there is one).
        reason: String,
    },
    /// `cargo metadata` printed something unexpected.
    #[error("cannot read `cargo metadata` output: {0}")]
    Metadata(String),
    /// No bench target of that name.
    #[error(
        "no bench target named `{name}` in workspace {root}\n{}{}",
        list_suites(.available),
        list_elsewhere(.nested, .unreadable)
    )]
    Unknown {
        /// The name asked for.
        name: String,
        /// The workspace root (or the directory searched, when it is in no workspace).
        root: PathBuf,
        /// Every bench target, as `suite (package p)`.
        available: Vec<String>,
        /// The suites of each separate workspace found below the root ([`crate::locate`]):
        /// `benches/ (`bench-run -C benches`): a (package p), ...`.
        nested: Vec<String>,
        /// Manifests below the root that cargo could not read, with its error.
        unreadable: Vec<String>,
    },
    /// Separate workspaces below the root each have a bench target of that name.
    #[error(
        "bench target `{name}` exists in several workspaces: {}; choose one with -C DIR",
        .dirs.join(", ")
    )]
    InSeveralWorkspaces {
        /// The name asked for.
        name: String,
        /// Their directories, relative to the root.
        dirs: Vec<String>,
    },
    /// More than one package has a bench target of that name.
    #[error(
        "bench target `{name}` exists in several packages: {}; choose one with -p PACKAGE",
        .packages.join(", ")
    )]
    Ambiguous {
        /// The name asked for.
        name: String,
        /// Packages that have it.
        packages: Vec<String>,
    },
    /// The build succeeded but named no executable for the suite.
    #[error("cargo built no executable for bench target `{0}`")]
    NoExecutable(String),
    /// `cargo bench --no-run` failed; cargo printed why on stderr.
    #[error("`{command}` failed ({status}); cargo's messages are above{}", hint_lines(.hint))]
    BuildFailed {
        /// The command line.
        command: String,
        /// Its exit status (`exit status: 101`).
        status: String,
        /// What to try, when bench-run has an idea.
        hint: Option<String>,
    },
    /// The benchmark executable failed.
    #[error("benchmark `{suite}` failed ({status}); last output:\n{tail}{}", hint_lines(.hint))]
    BenchFailed {
        /// Suite name.
        suite: String,
        /// Exit status (`exit status: 1`).
        status: String,
        /// The last lines it printed.
        tail: String,
        /// What went wrong as far as bench-run can tell (e.g. which argument it passed was
        /// rejected, and why it passed it).
        hint: Option<String>,
    },
    /// The directory to work in does not exist (a mistyped `-C`).
    #[error("{} is not a directory (check the path given to -C)", .0.display())]
    NoDirectory(PathBuf),
    /// An I/O error around a child process.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A benchmark filter that is not a regular expression.
    #[error("`{pattern}` is not a regular expression: {reason}")]
    Filter {
        /// The filter as given.
        pattern: String,
        /// What the regex parser said.
        reason: String,
    },
}

fn hint_lines(hint: &Option<String>) -> String {
    hint.as_deref()
        .map(|h| format!("\n{h}"))
        .unwrap_or_default()
}

fn list_suites(available: &[String]) -> String {
    if available.is_empty() {
        "the workspace has no bench targets".to_owned()
    } else {
        format!("available suites:\n  {}", available.join("\n  "))
    }
}

fn list_elsewhere(nested: &[String], unreadable: &[String]) -> String {
    let mut out = String::new();
    if !nested.is_empty() {
        out.push_str(&format!(
            "\nsuites of separate cargo workspaces below it:\n  {}",
            nested.join("\n  ")
        ));
    }
    if !unreadable.is_empty() {
        out.push_str(&format!(
            "\nnot searched (`cargo metadata` failed there):\n  {}",
            unreadable.join("\n  ")
        ));
    }
    out
}

/// A bench target of a workspace member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteTarget {
    /// Bench target name (the suite name).
    pub name: String,
    /// Package name.
    pub package: String,
    /// Package version.
    pub package_version: String,
    /// Cargo's package id.
    pub package_id: String,
    /// The package's `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// Features the target requires.
    pub required_features: Vec<String>,
    /// The target's main source file, when `cargo metadata` names it.
    pub src_path: Option<PathBuf>,
    /// Names of the packages the package depends on (every kind: normal, dev, build), sorted.
    /// [`crate::gungraun::detect`] looks for `gungraun` here.
    pub dependencies: Vec<String>,
}

impl SuiteTarget {
    /// The package directory (where cargo runs benches).
    #[must_use]
    pub fn package_dir(&self) -> &Path {
        self.manifest_path
            .parent()
            .unwrap_or_else(|| Path::new("."))
    }
}

/// A cargo workspace and its bench targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Workspace root directory.
    pub root: PathBuf,
    /// Target directory.
    pub target_dir: PathBuf,
    /// Every bench target of every member, sorted by package then name.
    pub suites: Vec<SuiteTarget>,
    /// The `Cargo.toml` of every member, with or without bench targets.
    pub manifests: Vec<PathBuf>,
}

#[derive(Deserialize)]
struct RawMetadata {
    packages: Vec<RawPackage>,
    workspace_root: PathBuf,
    target_directory: PathBuf,
    #[serde(default)]
    workspace_members: Vec<String>,
}

#[derive(Deserialize)]
struct RawPackage {
    name: String,
    version: String,
    id: String,
    manifest_path: PathBuf,
    targets: Vec<RawTarget>,
    #[serde(default)]
    dependencies: Vec<RawDependency>,
}

#[derive(Deserialize)]
struct RawDependency {
    name: String,
}

#[derive(Deserialize)]
struct RawTarget {
    name: String,
    kind: Vec<String>,
    #[serde(default, rename = "required-features")]
    required_features: Vec<String>,
    #[serde(default)]
    src_path: Option<PathBuf>,
}

/// Parses `cargo metadata --format-version 1` output.
///
/// # Errors
/// When the JSON does not have the documented shape.
pub fn parse_metadata(json: &[u8]) -> Result<Workspace, SuiteError> {
    let raw: RawMetadata =
        serde_json::from_slice(json).map_err(|e| SuiteError::Metadata(e.to_string()))?;
    let mut suites: Vec<SuiteTarget> = raw
        .packages
        .iter()
        .filter(|p| raw.workspace_members.is_empty() || raw.workspace_members.contains(&p.id))
        .flat_map(|p| {
            let mut dependencies: Vec<String> =
                p.dependencies.iter().map(|d| d.name.clone()).collect();
            dependencies.sort();
            dependencies.dedup();
            p.targets
                .iter()
                .filter(|t| t.kind.iter().any(|k| k == "bench"))
                .map(move |t| SuiteTarget {
                    name: t.name.clone(),
                    package: p.name.clone(),
                    package_version: p.version.clone(),
                    package_id: p.id.clone(),
                    manifest_path: p.manifest_path.clone(),
                    required_features: t.required_features.clone(),
                    src_path: t.src_path.clone(),
                    dependencies: dependencies.clone(),
                })
        })
        .collect();
    suites.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
    let manifests = raw
        .packages
        .iter()
        .filter(|p| raw.workspace_members.is_empty() || raw.workspace_members.contains(&p.id))
        .map(|p| p.manifest_path.clone())
        .collect();
    Ok(Workspace {
        root: raw.workspace_root,
        target_dir: raw.target_directory,
        suites,
        manifests,
    })
}

impl Workspace {
    /// Reads the workspace containing `dir` with `cargo metadata`.
    ///
    /// # Errors
    /// When cargo fails (e.g. `dir` is not in a cargo project) or prints unexpected output.
    pub fn discover(dir: &Path) -> Result<Self, SuiteError> {
        let cargo = cargo_program();
        let args = ["metadata", "--format-version", "1", "--no-deps"];
        let output = Command::new(&cargo)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| SuiteError::Io {
                what: format!("cannot run {cargo}"),
                source,
            })?;
        if !output.status.success() {
            return Err(SuiteError::Cargo {
                command: format!("cargo {}", args.join(" ")),
                reason: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        parse_metadata(&output.stdout)
    }

    /// Finds suite `name`, optionally in `package`.
    ///
    /// # Errors
    /// [`SuiteError::Unknown`] listing the suites, or [`SuiteError::Ambiguous`].
    pub fn find(&self, name: &str, package: Option<&str>) -> Result<&SuiteTarget, SuiteError> {
        let matches: Vec<&SuiteTarget> = self
            .suites
            .iter()
            .filter(|s| s.name == name && package.is_none_or(|p| s.package == p))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(SuiteError::Unknown {
                name: match package {
                    Some(p) => format!("{name}` in package `{p}"),
                    None => name.to_owned(),
                },
                root: self.root.clone(),
                available: self
                    .suites
                    .iter()
                    .map(|s| format!("{} (package {})", s.name, s.package))
                    .collect(),
                nested: Vec::new(),
                unreadable: Vec::new(),
            }),
            many => Err(SuiteError::Ambiguous {
                name: name.to_owned(),
                packages: many.iter().map(|s| s.package.clone()).collect(),
            }),
        }
    }
}

/// The cargo program: `$CARGO` when set (as inside `cargo run`), else `cargo`.
#[must_use]
pub fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// How to build a suite.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// `--features`.
    pub features: Vec<String>,
    /// `--all-features`.
    pub all_features: bool,
    /// `--no-default-features`.
    pub no_default_features: bool,
    /// `--profile`, when not the default `bench`.
    pub profile: Option<String>,
}

impl BuildOptions {
    /// Cargo arguments selecting features and profile.
    #[must_use]
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if !self.features.is_empty() {
            args.push("--features".to_owned());
            args.push(self.features.join(","));
        }
        if self.all_features {
            args.push("--all-features".to_owned());
        }
        if self.no_default_features {
            args.push("--no-default-features".to_owned());
        }
        if let Some(profile) = &self.profile {
            args.push("--profile".to_owned());
            args.push(profile.clone());
        }
        args
    }

    /// Cargo profile name that `cargo bench` will use.
    #[must_use]
    pub fn profile_name(&self) -> String {
        self.profile.clone().unwrap_or_else(|| "bench".to_owned())
    }

    /// How a run built with these options is recorded: the profile, the features sorted and
    /// split as cargo splits them (`-F a,b` and `-F "a b"`), the cargo arguments that chose
    /// features (`--features a,b`, `--all-features`, `--no-default-features`), and `RUSTFLAGS`
    /// from the environment.
    #[must_use]
    pub fn build_config(&self) -> bench_model::BuildConfig {
        let mut features: Vec<String> = self
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect();
        features.sort();
        features.dedup();
        let mut feature_flags = Vec::new();
        if !features.is_empty() {
            feature_flags.push("--features".to_owned());
            feature_flags.push(features.join(","));
        }
        if self.all_features {
            feature_flags.push("--all-features".to_owned());
        }
        if self.no_default_features {
            feature_flags.push("--no-default-features".to_owned());
        }
        bench_model::BuildConfig {
            profile: self.profile_name(),
            features,
            feature_flags,
            rustflags: std::env::var("RUSTFLAGS").ok().filter(|f| !f.is_empty()),
        }
    }

    /// [`Self::build_config`] as a build in `dir` for `host` gets it: with the rustflags of
    /// cargo's config files when the environment sets none ([`crate::cargo_config`]).
    #[must_use]
    pub fn recorded_build_config(
        &self,
        dir: &std::path::Path,
        host: Option<&str>,
    ) -> bench_model::BuildConfig {
        let mut config = self.build_config();
        if let Some(host) = host {
            config.rustflags = crate::cargo_config::effective_rustflags(dir, host);
        }
        config
    }
}

/// The `cargo bench` command equivalent to running `suite` with `criterion_args`;
/// `manifest_path`, when given, names the workspace (a separate one below the directory the
/// command is run from).
#[must_use]
pub fn cargo_bench_command(
    suite: &SuiteTarget,
    build: &BuildOptions,
    criterion_args: &[String],
    manifest_path: Option<PathBuf>,
) -> Vec<String> {
    let mut command = vec!["cargo".to_owned(), "bench".to_owned()];
    if let Some(manifest) = manifest_path {
        command.push("--manifest-path".to_owned());
        command.push(manifest.display().to_string());
    }
    command.extend([
        "-p".to_owned(),
        suite.package.clone(),
        "--bench".to_owned(),
        suite.name.clone(),
    ]);
    command.extend(build.cargo_args());
    if !criterion_args.is_empty() {
        command.push("--".to_owned());
        command.extend(criterion_args.iter().cloned());
    }
    command
}

#[derive(Deserialize)]
struct BuildMessage {
    reason: String,
    #[serde(default)]
    package_id: Option<String>,
    #[serde(default)]
    target: Option<RawTarget>,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    fresh: bool,
}

/// A built bench executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The executable.
    pub exe: PathBuf,
    /// Whether cargo reused an earlier build instead of compiling (its `fresh` flag).
    pub fresh: bool,
}

/// Finds the executable of bench target `suite` of `package_id` in cargo's JSON messages.
#[must_use]
pub fn parse_build_messages(text: &str, package_id: &str, suite: &str) -> Option<PathBuf> {
    parse_built(text, package_id, suite).map(|b| b.exe)
}

/// Like [`parse_build_messages`], with cargo's `fresh` flag.
#[must_use]
pub fn parse_built(text: &str, package_id: &str, suite: &str) -> Option<Built> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<BuildMessage>(line).ok())
        .filter(|m| m.reason == "compiler-artifact" && m.package_id.as_deref() == Some(package_id))
        .filter(|m| {
            m.target
                .as_ref()
                .is_some_and(|t| t.name == suite && t.kind.iter().any(|k| k == "bench"))
        })
        .find_map(|m| {
            m.executable.map(|exe| Built {
                exe,
                fresh: m.fresh,
            })
        })
}

/// Builds the suite and returns its executable. Cargo's own progress goes to stderr.
///
/// # Errors
/// When cargo fails or names no executable.
pub fn build(
    suite: &SuiteTarget,
    options: &BuildOptions,
    workspace_root: &Path,
) -> Result<PathBuf, SuiteError> {
    build_in(suite, options, workspace_root, None).map(|b| b.exe)
}

/// Builds the suite into `target_dir` (`CARGO_TARGET_DIR`; `None`: cargo's default) and returns
/// its executable with cargo's `fresh` flag. Cargo's own progress goes to stderr.
///
/// # Errors
/// When cargo fails or names no executable.
pub fn build_in(
    suite: &SuiteTarget,
    options: &BuildOptions,
    workspace_root: &Path,
    target_dir: Option<&Path>,
) -> Result<Built, SuiteError> {
    build_with_env(suite, options, workspace_root, target_dir, &[])
}

/// [`build_in`] with more environment variables for cargo (`bench-run ab`'s linker shim).
///
/// # Errors
/// When cargo fails or names no executable.
pub fn build_with_env(
    suite: &SuiteTarget,
    options: &BuildOptions,
    workspace_root: &Path,
    target_dir: Option<&Path>,
    env: &[(String, std::ffi::OsString)],
) -> Result<Built, SuiteError> {
    let cargo = cargo_program();
    let mut args = vec![
        "bench".to_owned(),
        "--no-run".to_owned(),
        "--message-format=json-render-diagnostics".to_owned(),
        "-p".to_owned(),
        format!("{}@{}", suite.package, suite.package_version),
        "--bench".to_owned(),
        suite.name.clone(),
    ];
    args.extend(options.cargo_args());
    let mut command = Command::new(&cargo);
    if let Some(dir) = target_dir {
        command.env("CARGO_TARGET_DIR", dir);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    let output = command
        .args(&args)
        .current_dir(workspace_root)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| SuiteError::Io {
            what: format!("cannot run {cargo}"),
            source,
        })?;
    if !output.status.success() {
        return Err(SuiteError::BuildFailed {
            command: format!("cargo {}", args.join(" ")),
            status: output.status.to_string(),
            hint: Some(feature_hint(suite, options)),
        });
    }
    let text = String::from_utf8_lossy(&output.stdout);
    parse_built(&text, &suite.package_id, &suite.name)
        .ok_or_else(|| SuiteError::NoExecutable(suite.name.clone()))
}

/// What to try when a suite's build failed: the features its `[[bench]]` requires that the
/// build did not name, or else how features are passed.
#[must_use]
pub fn feature_hint(suite: &SuiteTarget, options: &BuildOptions) -> String {
    let named = options.build_config().features;
    let missing: Vec<&str> = suite
        .required_features
        .iter()
        .filter(|f| !options.all_features && !named.contains(f))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        format!(
            "if the bench needs a cargo feature of package {}, enable it: `bench-run --suite {} \
             -F FEATURE` (or --all-features)",
            suite.package, suite.name
        )
    } else {
        let mut features = named.clone();
        features.extend(missing.iter().map(|f| (*f).to_owned()));
        format!(
            "bench target `{}` requires the feature{} {} (`required-features` in {}): try \
             `bench-run --suite {} -F {}`",
            suite.name,
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            suite.manifest_path.display(),
            suite.name,
            features.join(",")
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const METADATA: &str = r#"{"packages":[
      {"name":"a","version":"0.1.0","id":"path+file:///w/a#0.1.0","manifest_path":"/w/a/Cargo.toml",
       "targets":[{"name":"a","kind":["lib"]},{"name":"speed","kind":["bench"],"required-features":["x"]}]},
      {"name":"b","version":"0.2.0","id":"path+file:///w/b#0.2.0","manifest_path":"/w/b/Cargo.toml",
       "dependencies":[{"name":"gungraun","kind":"dev"},{"name":"anyhow","kind":null},{"name":"gungraun","kind":null}],
       "targets":[{"name":"speed","kind":["bench"],"src_path":"/w/b/benches/speed.rs"},{"name":"other","kind":["bench"]},{"name":"t","kind":["test"]}]}],
      "workspace_members":["path+file:///w/a#0.1.0","path+file:///w/b#0.2.0"],
      "workspace_root":"/w","target_directory":"/w/target","version":1}"#;

    #[test]
    fn metadata_lists_bench_targets_of_members() {
        let ws = parse_metadata(METADATA.as_bytes()).unwrap();
        let names: Vec<_> = ws
            .suites
            .iter()
            .map(|s| format!("{}/{}", s.package, s.name))
            .collect();
        assert_eq!(names, ["a/speed", "b/other", "b/speed"]);
        assert_eq!(ws.suites[0].required_features, ["x"]);
        assert!(ws.suites[0].dependencies.is_empty() && ws.suites[0].src_path.is_none());
        assert_eq!(ws.suites[2].dependencies, ["anyhow", "gungraun"]);
        assert_eq!(
            ws.suites[2].src_path.as_deref(),
            Some(Path::new("/w/b/benches/speed.rs"))
        );
        assert_eq!(ws.suites[0].package_dir(), Path::new("/w/a"));
    }

    #[test]
    fn find_reports_unknown_and_ambiguous_names() {
        let ws = parse_metadata(METADATA.as_bytes()).unwrap();
        assert_eq!(ws.find("other", None).unwrap().package, "b");
        assert_eq!(ws.find("speed", Some("a")).unwrap().package, "a");
        let ambiguous = ws.find("speed", None).unwrap_err().to_string();
        assert!(
            ambiguous.contains("a, b") && ambiguous.contains("-p"),
            "{ambiguous}"
        );
        let unknown = ws.find("nope", None).unwrap_err().to_string();
        assert!(
            unknown.contains("nope") && unknown.contains("other (package b)"),
            "{unknown}"
        );
        assert!(parse_metadata(b"{}").is_err());
        assert!(parse_metadata(b"\x00garbage").is_err());
    }

    #[test]
    fn build_messages_name_the_executable() {
        let text = concat!(
            r#"{"reason":"compiler-artifact","package_id":"p#1","target":{"name":"speed","kind":["lib"]},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","package_id":"p#1","target":{"name":"speed","kind":["bench"]},"executable":"/t/speed-abc"}"#,
            "\nnot json\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(
            parse_build_messages(text, "p#1", "speed"),
            Some(PathBuf::from("/t/speed-abc"))
        );
        assert_eq!(parse_build_messages(text, "p#2", "speed"), None);
    }

    #[test]
    fn cargo_command_is_reproducible() {
        let ws = parse_metadata(METADATA.as_bytes()).unwrap();
        let suite = ws.find("other", None).unwrap();
        let build = BuildOptions {
            features: vec!["x".into(), "y".into()],
            ..BuildOptions::default()
        };
        assert_eq!(
            cargo_bench_command(suite, &build, &["--quick".into()], None).join(" "),
            "cargo bench -p b --bench other --features x,y -- --quick"
        );
        assert_eq!(
            cargo_bench_command(suite, &build, &[], Some("benches/Cargo.toml".into())).join(" "),
            "cargo bench --manifest-path benches/Cargo.toml -p b --bench other --features x,y"
        );
    }
}

//! Finding a suite by name: in the cargo workspace of the start directory, else in a separate
//! workspace nested below it.
//!
//! Many projects keep their benchmarks in a package of their own that is no member of the root
//! workspace, so that criterion and the comparison crates stay out of the library's lock file:
//! rand's `benches/` and jiff's `bench/` declare their own `[workspace]`; other projects list
//! the directory in the root's `workspace.exclude`. `cargo metadata` at the root never lists
//! their bench targets. When the name is not found in the start directory's workspace,
//! [`locate`] therefore walks the tree below it:
//!
//! 1. every directory down to [`MAX_DEPTH`] levels (at most [`MAX_DIRS`] of them), skipping
//!    hidden directories, `target` and the workspace's target directory;
//! 2. keeps each `Cargo.toml` that belongs to no workspace read so far and shows bench targets
//!    (a `[[bench]]` table or a `benches/` directory beside it);
//! 3. reads each with `cargo metadata --no-deps` run in its directory (at most [`MAX_NESTED`]),
//!    shallowest first, so a nested workspace's own members are not read twice.
//!
//! One nested workspace with the suite: the suite runs there (cargo in that directory, as
//! `bench-run -C DIR` would). Several: an error names them and `-C DIR`. None: the error lists
//! the suites of every workspace read, with the `-C DIR` that selects it.

use crate::suite::{SuiteError, SuiteTarget, Workspace};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// How deep below the root the search looks for nested workspaces.
pub const MAX_DEPTH: usize = 4;
/// How many directories the search visits at most (a bound on huge trees).
pub const MAX_DIRS: usize = 5000;
/// How many nested workspaces are read with `cargo metadata` at most.
pub const MAX_NESTED: usize = 16;

/// Where a suite was found.
#[derive(Debug, Clone)]
pub struct Located {
    /// The workspace the suite belongs to (where cargo builds it).
    pub workspace: Workspace,
    /// The suite.
    pub target: SuiteTarget,
    /// When the suite is in a workspace nested below the start directory's: that workspace's
    /// directory relative to where the search started (`benches`).
    pub nested: Option<PathBuf>,
}

/// Finds suite `name` (in `package`, when given) from `start_dir`.
///
/// # Errors
/// [`SuiteError::Unknown`] listing the suites of every workspace read,
/// [`SuiteError::Ambiguous`] for several packages of one workspace,
/// [`SuiteError::InSeveralWorkspaces`], or cargo's failure when `start_dir` is in a cargo
/// project `cargo metadata` cannot read.
pub fn locate(start_dir: &Path, name: &str, package: Option<&str>) -> Result<Located, SuiteError> {
    if !start_dir.is_dir() {
        return Err(SuiteError::NoDirectory(start_dir.to_owned()));
    }
    let start = match Workspace::discover(start_dir) {
        Ok(workspace) => Some(workspace),
        // Not in a cargo project at all (a repository whose root has no Cargo.toml): search
        // below it.
        Err(SuiteError::Cargo { .. }) if !in_cargo_project(start_dir) => None,
        Err(e) => return Err(e),
    };
    if let Some(workspace) = &start {
        match workspace.find(name, package) {
            Ok(target) => {
                return Ok(Located {
                    target: target.clone(),
                    workspace: workspace.clone(),
                    nested: None,
                });
            }
            Err(SuiteError::Unknown { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let search_root = start
        .as_ref()
        .map_or_else(|| start_dir.to_owned(), |w| w.root.clone());
    let nested = read_nested(&search_root, start.as_ref());
    let mut found: Vec<Located> = Vec::new();
    for workspace in &nested.workspaces {
        match workspace.find(name, package) {
            Ok(target) => found.push(Located {
                target: target.clone(),
                workspace: workspace.clone(),
                nested: Some(relative_to(&workspace.root, &search_root)),
            }),
            Err(SuiteError::Unknown { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    if found.len() > 1 {
        return Err(SuiteError::InSeveralWorkspaces {
            name: name.to_owned(),
            dirs: found
                .iter()
                .filter_map(|l| l.nested.as_ref())
                .map(|d| d.display().to_string())
                .collect(),
        });
    }
    if let Some(one) = found.pop() {
        return Ok(one);
    }
    Err(SuiteError::Unknown {
        name: match package {
            Some(p) => format!("{name}` in package `{p}"),
            None => name.to_owned(),
        },
        root: search_root.clone(),
        available: start.as_ref().map(suite_names).unwrap_or_default(),
        nested: nested
            .workspaces
            .iter()
            .map(|w| {
                // Relative to where the command ran, as the user would type it there.
                let dir = relative_path(&w.root, start_dir);
                let names = suite_names(w);
                format!(
                    "{}/ (`bench-run -C {}`): {}",
                    dir.display(),
                    dir.display(),
                    if names.is_empty() {
                        "no bench targets".to_owned()
                    } else {
                        names.join(", ")
                    }
                )
            })
            .collect(),
        unreadable: nested.unreadable,
    })
}

fn suite_names(workspace: &Workspace) -> Vec<String> {
    workspace
        .suites
        .iter()
        .map(|s| format!("{} (package {})", s.name, s.package))
        .collect()
}

/// `path` as seen from `base`: `compare` from the root for `<root>/compare`, `../compare` from
/// `<root>/src`; `path` itself when the two share nothing.
fn relative_path(path: &Path, base: &Path) -> PathBuf {
    let path_parts: Vec<_> = path.components().collect();
    let base_parts: Vec<_> = base.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return path.to_owned();
    }
    let mut out = PathBuf::new();
    for _ in common..base_parts.len() {
        out.push("..");
    }
    for part in &path_parts[common..] {
        out.push(part);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

fn relative_to(path: &Path, base: &Path) -> PathBuf {
    path.strip_prefix(base)
        .map_or_else(|_| path.to_owned(), Path::to_owned)
}

/// Whether `dir` or a directory above it has a `Cargo.toml`.
fn in_cargo_project(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join("Cargo.toml").is_file())
}

/// The nested workspaces read below a root.
#[derive(Debug, Default)]
struct Nested {
    workspaces: Vec<Workspace>,
    /// `dir/Cargo.toml: cargo's first line of error` for each that cargo could not read.
    unreadable: Vec<String>,
}

fn read_nested(root: &Path, start: Option<&Workspace>) -> Nested {
    let mut known: HashSet<PathBuf> = HashSet::new();
    let mut skip_dirs: Vec<PathBuf> = Vec::new();
    if let Some(workspace) = start {
        known.extend(workspace.manifests.iter().map(|m| canonical(m)));
        known.insert(canonical(&workspace.root.join("Cargo.toml")));
        skip_dirs.push(canonical(&workspace.target_dir));
    }
    let mut nested = Nested::default();
    for manifest in candidate_manifests(root, &skip_dirs) {
        if nested.workspaces.len() + nested.unreadable.len() >= MAX_NESTED {
            break;
        }
        if known.contains(&canonical(&manifest)) {
            continue;
        }
        let dir = manifest.parent().unwrap_or(root);
        match Workspace::discover(dir) {
            Ok(workspace) => {
                known.extend(workspace.manifests.iter().map(|m| canonical(m)));
                known.insert(canonical(&workspace.root.join("Cargo.toml")));
                // A member of a workspace above `dir` that was not read yet: the same
                // workspace may be met again from another member.
                if nested.workspaces.iter().all(|w| w.root != workspace.root) {
                    nested.workspaces.push(workspace);
                }
            }
            Err(e) => {
                let first = e.to_string();
                let reason = first
                    .lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or_else(|| first.lines().next().unwrap_or_default())
                    .trim()
                    .to_owned();
                nested.unreadable.push(format!(
                    "{}: {reason}",
                    relative_to(&manifest, root).display()
                ));
            }
        }
    }
    nested
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

/// `Cargo.toml` files below `root` (not `root`'s own) that show bench targets, shallowest
/// first, within [`MAX_DEPTH`] and [`MAX_DIRS`].
fn candidate_manifests(root: &Path, skip_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![root.to_owned()];
    let mut visited = 0;
    for depth in 0..=MAX_DEPTH {
        let mut next = Vec::new();
        for dir in level {
            visited += 1;
            if visited > MAX_DIRS {
                return found;
            }
            let manifest = dir.join("Cargo.toml");
            if depth > 0 && manifest.is_file() && shows_benches(&dir, &manifest) {
                found.push(manifest);
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut children: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                // Symbolic links are not followed: no cycles, no trees outside the root.
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    !name.starts_with('.') && name != "target" && name != "node_modules"
                })
                .map(|e| e.path())
                .filter(|p| !skip_dirs.contains(&canonical(p)))
                .collect();
            children.sort();
            next.extend(children);
        }
        level = next;
    }
    found
}

/// Whether the package of `manifest` looks like it has bench targets: a `[[bench]]` table, or
/// a `benches/` directory (cargo's automatic bench targets).
fn shows_benches(dir: &Path, manifest: &Path) -> bool {
    dir.join("benches").is_dir()
        || std::fs::read_to_string(manifest)
            .is_ok_and(|text| text.lines().any(|l| l.trim() == "[[bench]]"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_directories_as_seen_from_where_the_command_ran() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(relative_path(&p("/r/compare"), &p("/r")), p("compare"));
        assert_eq!(
            relative_path(&p("/r/compare"), &p("/r/src")),
            p("../compare")
        );
        assert_eq!(relative_path(&p("/r"), &p("/r")), p("."));
    }

    #[test]
    fn a_missing_directory_is_named() {
        let err = locate(Path::new("/no/such/dir"), "s", None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/no/such/dir is not a directory (check the path given to -C)"
        );
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn candidates_are_manifests_with_benches_below_the_root_shallowest_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("Cargo.toml"), "[[bench]]\n");
        write(
            &root.join("a/b/c/Cargo.toml"),
            "[[bench]]\nname = \"deep\"\n",
        );
        write(&root.join("benches/Cargo.toml"), "[package]\n\n[[bench]]\n");
        write(&root.join("lib/Cargo.toml"), "[package]\n");
        write(&root.join("auto/Cargo.toml"), "[package]\n");
        std::fs::create_dir_all(root.join("auto/benches")).unwrap();
        write(&root.join("target/x/Cargo.toml"), "[[bench]]\n");
        write(&root.join(".hidden/Cargo.toml"), "[[bench]]\n");
        write(&root.join("a/b/c/d/e/Cargo.toml"), "[[bench]]\n");
        write(&root.join("out/Cargo.toml"), "[[bench]]\n");
        let found: Vec<PathBuf> = candidate_manifests(root, &[canonical(&root.join("out"))])
            .iter()
            .map(|m| relative_to(m, root))
            .collect();
        assert_eq!(
            found,
            [
                PathBuf::from("auto/Cargo.toml"),
                PathBuf::from("benches/Cargo.toml"),
                PathBuf::from("a/b/c/Cargo.toml"),
            ]
        );
    }

    #[test]
    fn relative_paths_fall_back_to_the_path_itself() {
        assert_eq!(
            relative_to(Path::new("/r/benches"), Path::new("/r")),
            PathBuf::from("benches")
        );
        assert_eq!(
            relative_to(Path::new("/elsewhere"), Path::new("/r")),
            PathBuf::from("/elsewhere")
        );
    }
}

//! The `rustflags` cargo takes from `.cargo/config.toml` when neither `CARGO_ENCODED_RUSTFLAGS`
//! nor `RUSTFLAGS` is set: recorded with a run, because they change the code measured (a
//! workspace that builds for `target-cpu=x86-64-v2` says so in the config, not the environment).
//!
//! Cargo reads `.cargo/config.toml` (or `.cargo/config`) in the directory it runs in and every
//! ancestor, then `$CARGO_HOME/config.toml`; the first source that sets them wins here, with
//! `[target.<host>] rustflags` before `[build] rustflags`, as cargo prefers them. (Cargo also
//! joins `[target.'cfg(..)']` tables, which are not evaluated here.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
struct Config {
    #[serde(default)]
    build: Option<Section>,
    #[serde(default)]
    target: BTreeMap<String, Section>,
}

#[derive(Debug, Default, Deserialize)]
struct Section {
    #[serde(default)]
    rustflags: Option<Flags>,
    #[serde(default)]
    linker: Option<String>,
}

/// Cargo accepts a string (split on whitespace) or an array.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Flags {
    Text(String),
    List(Vec<String>),
}

impl Flags {
    fn joined(self) -> String {
        match self {
            Self::Text(t) => t.split_whitespace().collect::<Vec<_>>().join(" "),
            Self::List(l) => l.join(" "),
        }
    }
}

/// The rustflags one config file sets for `host`, if any (an unreadable file sets none).
#[must_use]
pub fn rustflags_of(config: &str, host: &str) -> Option<String> {
    let mut config: Config = basic_toml::from_str(config).ok()?;
    config
        .target
        .remove(host)
        .and_then(|s| s.rustflags)
        .or_else(|| config.build.and_then(|b| b.rustflags))
        .map(Flags::joined)
        .filter(|f| !f.is_empty())
}

/// The linker one config file sets for `host` (`[target.<host>] linker`), if any.
#[must_use]
pub fn linker_of(config: &str, host: &str) -> Option<String> {
    let mut config: Config = basic_toml::from_str(config).ok()?;
    config
        .target
        .remove(host)
        .and_then(|s| s.linker)
        .filter(|l| !l.is_empty())
}

/// The linker a build in `dir` for `host` runs: `CARGO_TARGET_<HOST>_LINKER` if set, else the
/// nearest config file's, else `None` (rustc's default, `cc`). A relative path in a config
/// file is taken relative to the directory holding its `.cargo`, as cargo takes it.
#[must_use]
pub fn effective_linker(dir: &Path, host: &str) -> Option<String> {
    let var = format!(
        "CARGO_TARGET_{}_LINKER",
        host.to_ascii_uppercase().replace(['-', '.'], "_")
    );
    if let Some(env) = std::env::var(var).ok().filter(|l| !l.is_empty()) {
        return Some(env);
    }
    config_files(dir).iter().find_map(|f| {
        let linker = linker_of(&std::fs::read_to_string(f).ok()?, host)?;
        let relative = linker.contains('/') && !linker.starts_with('/');
        match f.parent().and_then(Path::parent) {
            Some(root) if relative => Some(root.join(&linker).display().to_string()),
            _ => Some(linker),
        }
    })
}

/// The config files cargo reads running in `dir`, nearest first.
fn config_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in dir.ancestors() {
        for name in ["config.toml", "config"] {
            let f = d.join(".cargo").join(name);
            if f.is_file() {
                files.push(f);
                break;
            }
        }
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(f) = home.map(|h| h.join("config.toml")).filter(|f| f.is_file())
        && !files.contains(&f)
    {
        files.push(f);
    }
    files
}

/// The rustflags a build in `dir` for `host` gets: the environment's if set, else the nearest
/// config file's.
#[must_use]
pub fn effective_rustflags(dir: &Path, host: &str) -> Option<String> {
    if let Some(encoded) = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .ok()
        .filter(|f| !f.is_empty())
    {
        return Some(encoded.split('\x1f').collect::<Vec<_>>().join(" "));
    }
    if let Some(env) = std::env::var("RUSTFLAGS").ok().filter(|f| !f.is_empty()) {
        return Some(env);
    }
    config_files(dir).iter().find_map(|f| {
        let text = std::fs::read_to_string(f).ok()?;
        rustflags_of(&text, host)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "x86_64-unknown-linux-gnu";

    #[test]
    fn the_hosts_linker_is_read() {
        let text = "[target.x86_64-unknown-linux-gnu]\nlinker = \"clang\"\n";
        assert_eq!(linker_of(text, HOST).as_deref(), Some("clang"));
        assert_eq!(linker_of(text, "aarch64-unknown-linux-gnu"), None);
        assert_eq!(linker_of("[build]\nrustflags = []\n", HOST), None);
    }

    #[test]
    fn target_flags_before_build_flags_as_cargo_takes_them() {
        let both = r#"
[build]
rustflags = "-C  opt-level=2"
[target.x86_64-unknown-linux-gnu]
rustflags = ["-C", "target-cpu=x86-64-v2"]
"#;
        assert_eq!(
            rustflags_of(both, HOST).as_deref(),
            Some("-C target-cpu=x86-64-v2")
        );
        assert_eq!(
            rustflags_of(both, "aarch64-unknown-linux-gnu").as_deref(),
            Some("-C opt-level=2")
        );
    }

    #[test]
    fn files_without_flags_or_unreadable_set_none() {
        for text in [
            "",
            "[alias]\nb = \"build\"\n",
            "[build]\njobs = 2\n",
            "[build]\nrustflags = []\n",
            "not toml [",
        ] {
            assert_eq!(rustflags_of(text, HOST), None, "{text:?}");
        }
    }

    #[test]
    fn the_nearest_config_file_wins() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let inner = root.path().join("ws/crate");
        std::fs::create_dir_all(inner.join(".cargo")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.path().join(".cargo")).unwrap_or_else(|e| panic!("{e}"));
        let write = |p: PathBuf, t: &str| std::fs::write(p, t).unwrap_or_else(|e| panic!("{e}"));
        write(
            root.path().join(".cargo/config.toml"),
            "[build]\nrustflags = \"-C outer\"\n",
        );
        write(
            inner.join(".cargo/config"),
            "[build]\nrustflags = \"-C inner\"\n",
        );
        let files = config_files(&inner);
        assert_eq!(files[0], inner.join(".cargo/config"));
        assert_eq!(files[1], root.path().join(".cargo/config.toml"));
        let nearest = files
            .iter()
            .find_map(|f| rustflags_of(&std::fs::read_to_string(f).ok()?, HOST));
        assert_eq!(nearest.as_deref(), Some("-C inner"));
    }
}

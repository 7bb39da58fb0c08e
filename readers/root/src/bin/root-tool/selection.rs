//! Which branches a command reads: the names matching `--branches-regex`, shared by `readspeed`
//! and the self-test (a module of its own so that neither imports the other for it).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use root_reader::RootFile;

/// The column names of the readable branches of the first file's `trees` whose own name or
/// full path matches one of `patterns`.
pub(crate) fn resolve_regex(
    files: &[PathBuf],
    trees: &[String],
    patterns: &[String],
) -> Result<Vec<String>> {
    let res: Vec<regex::Regex> = patterns
        .iter()
        .map(|p| regex::Regex::new(p).with_context(|| format!("bad regex {p:?}")))
        .collect::<Result<_>>()?;
    let path = files.first().context("no files")?;
    let file = RootFile::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut names = Vec::new();
    for t in trees {
        let tree = file
            .tree(t)
            .with_context(|| format!("cannot read tree {t}"))?;
        for b in tree.named_branches() {
            if b.meta.layout.is_ok()
                && res
                    .iter()
                    .any(|r| r.is_match(&b.meta.name) || r.is_match(&b.path))
                && !names.contains(&b.column)
            {
                names.push(b.column.clone());
            }
        }
    }
    if names.is_empty() {
        bail!("no readable branch matches {patterns:?}");
    }
    Ok(names)
}

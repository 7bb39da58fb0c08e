//! A tree spread over several files, read as one (ROOT's `TChain`): entry `i` of the chain is
//! entry `i - start` of the file whose range holds it, and every file's baskets go through one
//! [`BasketCache`], so a scan of the chain stays within one bound however many files it has.
//!
//! ```no_run
//! use root_reader::{Chain, Parallel};
//!
//! # fn main() -> Result<(), root_reader::Error> {
//! let chain = Chain::open(&["run1.root", "run2.root", "run3.root"], "events", 256 << 20)?;
//! let pt = chain.read_column("pt", 0, chain.entries(), Parallel::Auto)?; // all three files
//! # let _ = pt;
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;

use crate::cache::BasketCache;
use crate::column::Column;
use crate::error::{Error, Result};
use crate::file::RootFile;
use crate::reader::Parallel;
use crate::tree::Tree;

/// Several files' trees of one name, read as one tree.
#[derive(Debug, Clone)]
pub struct Chain {
    trees: Vec<Tree>,
    /// First chain entry of each tree; `starts[i + 1] - starts[i]` is tree `i`'s entries.
    starts: Vec<u64>,
    cache: Arc<BasketCache>,
}

impl Chain {
    /// Opens tree `tree` (`name`, `dir/name`, `name;cycle`) in each of `paths`, in order, with
    /// one basket cache of `cache_bytes` for all of them.
    ///
    /// # Errors
    /// No file, or a file that cannot be opened or has no such tree (the error names it).
    pub fn open<P: AsRef<Path>>(paths: &[P], tree: &str, cache_bytes: usize) -> Result<Self> {
        if paths.is_empty() {
            return Err(Error::NotFound {
                name: tree.to_string(),
                file: "an empty chain".to_string(),
            });
        }
        let cache = Arc::new(BasketCache::new(cache_bytes));
        let mut trees = Vec::with_capacity(paths.len());
        for path in paths {
            let file = RootFile::open_sharing(path, Arc::clone(&cache))?;
            trees.push(file.tree(tree)?);
        }
        let mut starts = Vec::with_capacity(trees.len() + 1);
        let mut total = 0u64;
        for t in &trees {
            starts.push(total);
            total = total.checked_add(t.entries).ok_or_else(|| {
                Error::corrupt("TChain", 0, "entries of the files overflow a u64")
            })?;
        }
        starts.push(total);
        Ok(Self {
            trees,
            starts,
            cache,
        })
    }

    /// Entries of all files together.
    #[must_use]
    pub fn entries(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0)
    }

    /// The trees, one per file, in chain order.
    #[must_use]
    pub fn trees(&self) -> &[Tree] {
        &self.trees
    }

    /// The cache all files share.
    #[must_use]
    pub fn cache(&self) -> &BasketCache {
        &self.cache
    }

    /// Reads chain entries `start..stop` of branch `name`: each file's part, joined. The branch
    /// must have one layout in every file it is read from.
    ///
    /// # Errors
    /// A missing or unsupported branch in a file, layouts that differ between files, entries
    /// outside the chain, and everything [`crate::Branch::read_column`] can fail with.
    pub fn read_column(
        &self,
        name: &str,
        start: u64,
        stop: u64,
        parallel: Parallel,
    ) -> Result<Column> {
        let entries = self.entries();
        if start > stop || stop > entries {
            return Err(Error::EntryOutOfRange {
                start,
                stop,
                entries,
            });
        }
        let mut joined: Option<Column> = None;
        for (i, tree) in self.trees.iter().enumerate() {
            let (first, end) = (self.starts[i], self.starts[i + 1]);
            let (a, b) = (start.max(first), stop.min(end));
            // Files outside the range are not read, except the first when the range is empty
            // (an empty column of the branch's layout).
            if a >= b && !(start == stop && i == 0) {
                continue;
            }
            let (a, b) = if a >= b {
                (0, 0)
            } else {
                (a - first, b - first)
            };
            let branch = tree.branch(name).map_err(|e| match e {
                // Which file of the chain lacks it.
                Error::NoSuchBranch { tree: t, branch } => Error::NoSuchBranch {
                    tree: format!("{t} of {}", tree.file().name()),
                    branch,
                },
                other => other,
            })?;
            let part = branch.read_column(a, b, parallel)?;
            joined = Some(match joined {
                None => part,
                Some(mut acc) => {
                    if acc.layout != part.layout {
                        return Err(Error::UnsupportedBranch {
                            branch: name.to_string(),
                            detail: format!(
                                "it holds {} in one file of the chain and {} in file {}",
                                acc.layout.describe(),
                                part.layout.describe(),
                                i + 1
                            ),
                        });
                    }
                    acc.append(part)?;
                    acc
                }
            });
        }
        joined.ok_or_else(|| Error::NoSuchBranch {
            tree: self
                .trees
                .first()
                .map(|t| t.name.clone())
                .unwrap_or_default(),
            branch: name.to_string(),
        })
    }
}

//! The names a tree's branches go by: full paths, column names, and what a name given by a user
//! selects.
//!
//! ROOT calls a branch by its own name (`TBranch::fName`) alone, and several branches of one
//! tree can share it: the members of two objects of one class split without a trailing dot
//! (`a` and `b` of a class with a member `x` each have a sub-branch named `x`; mu2e's `trkana`,
//! ATLAS's `MetaData`), and even two top-level branches (two `Particle` in a Delphes tree of
//! the uproot corpus). So a branch also goes by
//!
//! * its **full path**: the names of its parent branches and its own, joined by `/`, as uproot's
//!   `TTree.keys()` gives them (`a/x`, `a/hit/hit.e`, `c./c.x`); a branch with earlier siblings
//!   of its name (same parent, or both top-level) gets `#k` after its name, the k-th of that
//!   name among them (`dup`, `dup#2`; uproot gives both the same key);
//! * its **column name**: its own name when no other branch of the tree has that name, its full
//!   path otherwise (`x` stays `x` in a tree with one `x`). Column names are unique in a tree:
//!   in the one case where the rule would repeat one (a name holding `/` or `#` equal to
//!   another branch's full path: never written by ROOT), the later branch gets `#k` after it,
//!   the first `k` from 2 not taken.
//!
//! A name given by a user ([`Tree::find_branch`]) selects, in this order: the branch whose
//! column name it is; the branch whose full path it is; the one branch of that name. A name two
//! branches have, and that is neither a column name nor a full path, is refused
//! ([`crate::error::Error::AmbiguousBranch`], listing the column names of the branches it could mean).
//!
//! ```text
//! branch (fName)   full path      column name
//! a                a              a
//!   x              a/x            a/x          (b and the top level have an x too)
//!   hit            a/hit          a/hit
//!     hit.e        a/hit/hit.e    a/hit/hit.e
//! b                b              b
//!   x              b/x            b/x
//! c.               c.             c.
//!   c.x            c./c.x         c.x          (no other branch is named c.x)
//! x                x              x
//! dup              dup            dup
//! dup              dup#2          dup#2
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::meta::BranchMeta;

/// A branch of a tree and the names it goes by (see [`crate::tree::paths`]).
#[derive(Debug, Clone)]
pub struct NamedBranch {
    /// The names of its parent branches and its own, joined by `/` (uproot's `keys()`), with
    /// `#k` after a name that earlier siblings have.
    pub path: String,
    /// Its own name when no other branch of the tree has it, else its full path; unique in the
    /// tree. `root-tool dump` names its column so.
    pub column: String,
    /// Its metadata.
    pub meta: Arc<BranchMeta>,
}

/// Every branch of a tree under its names, and the lookups [`Tree::find_branch`] makes.
#[derive(Debug, Clone)]
pub(crate) struct BranchNames {
    /// Depth first, nested branches after their parent ([`Tree::all_branches`]'s order).
    named: Vec<NamedBranch>,
    by_column: HashMap<String, usize>,
    by_path: HashMap<String, Vec<usize>>,
    by_name: HashMap<String, Vec<usize>>,
}

impl BranchNames {
    /// Names every branch under `top` (a tree's top-level branches).
    pub(crate) fn new(top: &[Arc<BranchMeta>]) -> Self {
        /// One level of the walk: siblings, their parent's full path, the next sibling to name,
        /// and how many of each name came before it among them.
        struct Level {
            siblings: Vec<Arc<BranchMeta>>,
            parent: Option<String>,
            next: usize,
            seen: HashMap<String, usize>,
        }
        let mut named = Vec::new();
        // An explicit stack: the depth of nesting a file claims costs no call stack.
        let mut levels = vec![Level {
            siblings: top.to_vec(),
            parent: None,
            next: 0,
            seen: HashMap::new(),
        }];
        while let Some(level) = levels.last_mut() {
            let Some(b) = level.siblings.get(level.next).cloned() else {
                levels.pop();
                continue;
            };
            level.next += 1;
            let k = level.seen.entry(b.name.clone()).or_insert(0);
            *k += 1;
            let own = if *k == 1 {
                b.name.clone()
            } else {
                format!("{}#{k}", b.name)
            };
            let path = match &level.parent {
                Some(p) => format!("{p}/{own}"),
                None => own,
            };
            let children = (!b.branches.is_empty()).then(|| Level {
                siblings: b.branches.clone(),
                parent: Some(path.clone()),
                next: 0,
                seen: HashMap::new(),
            });
            named.push(NamedBranch {
                path,
                column: String::new(),
                meta: b,
            });
            levels.extend(children);
        }
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_path: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, n) in named.iter().enumerate() {
            by_name.entry(n.meta.name.clone()).or_default().push(i);
            by_path.entry(n.path.clone()).or_default().push(i);
        }
        let mut taken = HashSet::new();
        // The next suffix to try after a column name, so that many collisions on one name cost
        // one try each.
        let mut next_suffix: HashMap<String, usize> = HashMap::new();
        let mut by_column = HashMap::with_capacity(named.len());
        for (i, n) in named.iter_mut().enumerate() {
            let unique = by_name.get(&n.meta.name).is_some_and(|v| v.len() == 1);
            let wanted = if unique {
                n.meta.name.clone()
            } else {
                n.path.clone()
            };
            let column = if taken.contains(&wanted) {
                let k = next_suffix.entry(wanted.clone()).or_insert(2);
                loop {
                    let candidate = format!("{wanted}#{k}");
                    *k += 1;
                    if !taken.contains(&candidate) {
                        break candidate;
                    }
                }
            } else {
                wanted
            };
            taken.insert(column.clone());
            by_column.insert(column.clone(), i);
            n.column = column;
        }
        Self {
            named,
            by_column,
            by_path,
            by_name,
        }
    }

    /// Every branch, depth first.
    pub(crate) fn all(&self) -> &[NamedBranch] {
        &self.named
    }

    /// What `name` selects: see the module doc. `Ok(None)` when no branch goes by it.
    pub(crate) fn find(
        &self,
        name: &str,
    ) -> std::result::Result<Option<&NamedBranch>, Vec<String>> {
        if let Some(&i) = self.by_column.get(name) {
            return Ok(self.named.get(i));
        }
        for index in [&self.by_path, &self.by_name] {
            match index.get(name).map(Vec::as_slice) {
                None | Some([]) => {}
                Some([i]) => return Ok(self.named.get(*i)),
                Some(many) => {
                    return Err(many
                        .iter()
                        .filter_map(|&i| self.named.get(i))
                        .map(|n| n.column.clone())
                        .collect());
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    fn meta(name: &str, branches: Vec<Arc<BranchMeta>>) -> Arc<BranchMeta> {
        Arc::new(BranchMeta {
            class: "TBranchElement".to_string(),
            name: name.to_string(),
            title: String::new(),
            compress: 0,
            entries: 0,
            tot_bytes: 0,
            zip_bytes: 0,
            element_class: String::new(),
            leaves: Vec::new(),
            branches,
            baskets: Vec::new(),
            layout: Err(String::new()),
        })
    }

    fn leaf(name: &str) -> Arc<BranchMeta> {
        meta(name, Vec::new())
    }

    /// (own name, full path, column name) of every branch.
    fn names(top: &[Arc<BranchMeta>]) -> Vec<(String, String, String)> {
        BranchNames::new(top)
            .all()
            .iter()
            .map(|n| (n.meta.name.clone(), n.path.clone(), n.column.clone()))
            .collect()
    }

    /// The tree of the module doc (`tests/fixtures/paths.root` has this shape).
    fn doc_tree() -> Vec<Arc<BranchMeta>> {
        let pair = |p: &str| {
            let hit = meta(
                &format!("{p}hit"),
                vec![leaf(&format!("{p}hit.e")), leaf(&format!("{p}hit.id"))],
            );
            vec![leaf(&format!("{p}x")), leaf(&format!("{p}y")), hit]
        };
        vec![
            meta("a", pair("")),
            meta("b", pair("")),
            meta("c.", pair("c.")),
            leaf("x"),
            leaf("n"),
            leaf("dup"),
            leaf("dup"),
        ]
    }

    #[test]
    fn shared_names_become_full_paths_and_the_others_stay() {
        let want = [
            ("a", "a", "a"),
            ("x", "a/x", "a/x"),
            ("y", "a/y", "a/y"),
            ("hit", "a/hit", "a/hit"),
            ("hit.e", "a/hit/hit.e", "a/hit/hit.e"),
            ("hit.id", "a/hit/hit.id", "a/hit/hit.id"),
            ("b", "b", "b"),
            ("x", "b/x", "b/x"),
            ("y", "b/y", "b/y"),
            ("hit", "b/hit", "b/hit"),
            ("hit.e", "b/hit/hit.e", "b/hit/hit.e"),
            ("hit.id", "b/hit/hit.id", "b/hit/hit.id"),
            ("c.", "c.", "c."),
            ("c.x", "c./c.x", "c.x"),
            ("c.y", "c./c.y", "c.y"),
            ("c.hit", "c./c.hit", "c.hit"),
            ("c.hit.e", "c./c.hit/c.hit.e", "c.hit.e"),
            ("c.hit.id", "c./c.hit/c.hit.id", "c.hit.id"),
            ("x", "x", "x"),
            ("n", "n", "n"),
            ("dup", "dup", "dup"),
            ("dup", "dup#2", "dup#2"),
        ];
        let got = names(&doc_tree());
        assert_eq!(got.len(), want.len());
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!((g.0.as_str(), g.1.as_str(), g.2.as_str()), w, "branch {k}");
        }
    }

    #[test]
    fn column_names_are_unique_whatever_the_names() {
        // Names a file may hold though ROOT never writes them: ones with `/` and `#` equal to
        // full paths and suffixed names, empty names, many siblings of one name.
        let cases: Vec<Vec<Arc<BranchMeta>>> = vec![
            vec![meta("a", vec![leaf("x")]), leaf("a/x"), leaf("x")],
            vec![
                leaf("d"),
                leaf("d"),
                leaf("d#2"),
                leaf("d#2"),
                leaf("d#2#2"),
            ],
            vec![leaf(""), leaf(""), meta("", vec![leaf(""), leaf("")])],
            (0..500).map(|_| leaf("p")).collect(),
            vec![
                meta("a", vec![meta("b", vec![leaf("c")])]),
                leaf("a/b/c"),
                leaf("c"),
                leaf("a/b/c#2"),
            ],
        ];
        for (k, top) in cases.iter().enumerate() {
            let all = names(top);
            let columns: HashSet<&str> = all.iter().map(|n| n.2.as_str()).collect();
            assert_eq!(columns.len(), all.len(), "case {k}: {all:?}");
            // Every column name selects its own branch.
            let index = BranchNames::new(top);
            for (i, n) in index.all().iter().enumerate() {
                let found = index.find(&n.column).unwrap().unwrap();
                assert!(Arc::ptr_eq(&found.meta, &n.meta), "case {k} branch {i}");
            }
        }
        // 500 siblings of one name: p, p#2, ..., p#500.
        let all = names(&cases[3]);
        assert_eq!(all[499].1, "p#500");
    }

    #[test]
    fn a_name_selects_by_column_then_path_then_unique_name() {
        let top = doc_tree();
        let index = BranchNames::new(&top);
        let path_of = |name: &str| index.find(name).unwrap().map(|n| n.path.clone());
        // Full paths and column names.
        assert_eq!(path_of("b/hit/hit.e").as_deref(), Some("b/hit/hit.e"));
        assert_eq!(path_of("dup#2").as_deref(), Some("dup#2"));
        // `x` is the top-level branch's full path (uproot's `tree["x"]` is that one too).
        assert_eq!(path_of("x").as_deref(), Some("x"));
        assert_eq!(path_of("dup").as_deref(), Some("dup"));
        // A unique name and the full path of the same branch.
        assert_eq!(path_of("c.x").as_deref(), Some("c./c.x"));
        assert_eq!(path_of("c./c.x").as_deref(), Some("c./c.x"));
        assert_eq!(path_of("nope"), None);
        assert_eq!(path_of("a/nope"), None);
        // Names of several branches that are no full path: refused, with the candidates.
        assert_eq!(
            index.find("hit.e").unwrap_err(),
            ["a/hit/hit.e", "b/hit/hit.e"]
        );
        assert_eq!(index.find("y").unwrap_err(), ["a/y", "b/y"]);
    }
}

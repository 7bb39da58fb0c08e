//! The file import graph of one crate, and its cycles.
//!
//! The rule: file A imports file B when A holds a `use` path, or a path in its code (`crate::x`,
//! `super::y::Z`, `child::f()`, a name brought in by a glob), that resolves to an item *defined*
//! in B, in the same crate. Re-exports are followed to the file that defines the item, so a
//! parent `mod.rs` that only re-exports a child's item is not the item's home. A `mod`
//! declaration is not an import. A file's inline modules (`#[cfg(test)] mod tests { use
//! super::*; ... }`) are part of it, so their imports of the file itself are no edge.
//!
//! Resolution is by name, like rustc's but simpler:
//! - a path starts at `crate`, `self`, `super`, or a name in scope in the module: a child module,
//!   an item defined there, a name bound by a `use` there (fn-local `use`s included), or a name
//!   reached through a glob import there; any other first name is another crate and ignored;
//! - each further segment is looked up the same way in the module reached so far; the first
//!   segment that names an item ends the walk (`Enum::Variant` and `Type::method` resolve to
//!   the file defining `Enum` and `Type`);
//! - a name that cannot be found in a module of this crate is blamed on that module's file, so
//!   an unknown form makes the check stricter, never blind;
//! - a `name!` call of a `macro_rules!` macro defined in an enclosing module's file is an import
//!   of that file (textual macro scope);
//! - types, values and macros share one namespace, except that a name that is both a module and
//!   an item is the module when more segments follow;
//! - a glob import counts only for the names used through it, and a `use` that renames another
//!   crate (`use bench_model as model`) makes the paths through it that crate's.
//!
//! Identifiers after `.` (fields, methods) or before a single `:` (field and parameter names)
//! are not paths. Attributes are skipped, except `#[path = "..."]` on a `mod` declaration.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::lex::{Kind, Token, tokenize};

/// Keywords that never start a path.
const KEYWORDS: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "const",
    "continue",
    "dyn",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "static",
    "struct",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "Self",
    "macro_rules",
];

/// One file of the crate.
#[derive(Debug)]
struct File {
    path: PathBuf,
    tokens: Vec<Token>,
}

/// A `use` leaf: the path and the name it binds (`None` for `as _` and globs).
#[derive(Clone, Debug)]
struct Use {
    segs: Vec<String>,
    name: Option<String>,
}

/// A path to resolve for edges, and where it was written.
#[derive(Clone, Debug)]
struct Ref {
    segs: Vec<String>,
    line: usize,
    macro_call: bool,
}

/// A module: a file, or an inline `mod name { ... }` inside one.
#[derive(Debug, Default)]
struct Module {
    file: usize,
    parent: Option<usize>,
    /// Where the files of its `mod name;` children live.
    child_dir: PathBuf,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    macros: BTreeSet<String>,
    uses: Vec<Use>,
    globs: Vec<Vec<String>>,
    refs: Vec<Ref>,
}

/// What a path resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Module(usize),
    /// An item defined in this module.
    Item(usize),
    /// Something of another crate, maybe through an alias (`use bench_model as model`).
    External,
}

/// One import of file `to` by file `from`, with the first place it was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: PathBuf,
    pub to: PathBuf,
    pub line: usize,
    pub path: String,
}

/// The files and modules of one crate.
#[derive(Debug, Default)]
pub struct Crate {
    files: Vec<File>,
    modules: Vec<Module>,
}

impl Crate {
    /// Reads a crate from its root file, following `mod` declarations through `read`
    /// (`None`: no such file, e.g. a module compiled only under a feature we cannot see).
    pub fn load(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Crate {
        let mut krate = Crate::default();
        if let Some(src) = read(root) {
            let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
            krate.add_file(root.to_path_buf(), &src, None, dir, read);
        }
        krate
    }

    fn add_file(
        &mut self,
        path: PathBuf,
        src: &str,
        parent: Option<usize>,
        child_dir: PathBuf,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> usize {
        let file = self.files.len();
        self.files.push(File {
            path,
            tokens: tokenize(src),
        });
        let module = self.modules.len();
        self.modules.push(Module {
            file,
            parent,
            child_dir,
            ..Module::default()
        });
        let end = self.files[file].tokens.len();
        self.parse_body(module, 0, end, read);
        module
    }

    /// Reads the items, `use`s, paths and child modules in `tokens[from..to]` of a module's file.
    #[expect(
        clippy::too_many_lines,
        reason = "one pass over the tokens; split it reads worse"
    )]
    fn parse_body(
        &mut self,
        module: usize,
        from: usize,
        to: usize,
        read: &dyn Fn(&Path) -> Option<String>,
    ) {
        let file = self.modules[module].file;
        let mut depth = 0usize;
        let mut path_attr: Option<String> = None;
        let mut i = from;
        while i < to {
            let toks = &self.files[file].tokens;
            let tok = &toks[i];
            let next = |k: usize| toks.get(i + k).filter(|_| i + k < to);
            // Attributes: skipped, but `#[path = "..."]` is kept for the next `mod`.
            if tok.is("#") {
                let mut j = i + 1;
                if next(1).is_some_and(|t| t.is("!")) {
                    j += 1;
                }
                if toks.get(j).is_some_and(|t| t.is("[")) {
                    let close = matching(toks, j, to);
                    if toks.get(j + 1).is_some_and(|t| t.is("path"))
                        && toks.get(j + 2).is_some_and(|t| t.is("="))
                        && toks.get(j + 3).is_some_and(|t| t.kind == Kind::Str)
                    {
                        path_attr = Some(toks[j + 3].text.clone());
                    }
                    i = close + 1;
                    continue;
                }
            }
            if tok.is("{") {
                depth += 1;
            } else if tok.is("}") {
                depth = depth.saturating_sub(1);
            }
            // Nothing but attributes and visibility stands between `#[path]` and its `mod`.
            if tok.is(";") || tok.is("{") || tok.is("}") {
                path_attr = None;
            }
            if tok.is("use") {
                let mut j = i + 1;
                let mut leaves = Vec::new();
                let line = tok.line;
                parse_use_tree(toks, &mut j, to, Vec::new(), &mut leaves);
                let m = &mut self.modules[module];
                for (segs, name, glob) in leaves {
                    if glob {
                        m.globs.push(segs.clone());
                    } else {
                        m.uses.push(Use {
                            segs: segs.clone(),
                            name,
                        });
                    }
                    if !glob {
                        m.refs.push(Ref {
                            segs,
                            line,
                            macro_call: false,
                        });
                    }
                }
                while j < to && !toks[j].is(";") {
                    j += 1;
                }
                i = j + 1;
                continue;
            }
            if depth == 0
                && tok.is("mod")
                && let Some(name) = next(1).and_then(Token::ident).map(str::to_owned)
            {
                if next(2).is_some_and(|t| t.is("{")) {
                    let open = i + 2;
                    let close = matching(toks, open, to);
                    let dir = self.modules[module].child_dir.join(&name);
                    let child = self.modules.len();
                    self.modules.push(Module {
                        file,
                        parent: Some(module),
                        child_dir: dir,
                        ..Module::default()
                    });
                    self.modules[module].children.insert(name, child);
                    self.parse_body(child, open + 1, close, read);
                    path_attr = None;
                    i = close + 1;
                    continue;
                }
                if next(2).is_some_and(|t| t.is(";")) {
                    self.add_child_file(module, &name, path_attr.take(), read);
                    i += 3;
                    continue;
                }
            }
            let toks = &self.files[file].tokens;
            if depth == 0
                && let Some(name) = item_name(toks, i, to)
            {
                let m = &mut self.modules[module];
                if toks[i].is("macro_rules") {
                    m.macros.insert(name.clone());
                }
                m.items.insert(name);
            }
            if let Some((reference, end)) = path_at(toks, i, to) {
                self.modules[module].refs.push(reference);
                i = end;
                continue;
            }
            i += 1;
        }
    }

    fn add_child_file(
        &mut self,
        module: usize,
        name: &str,
        path_attr: Option<String>,
        read: &dyn Fn(&Path) -> Option<String>,
    ) {
        let m = &self.modules[module];
        let here = &self.files[m.file].path;
        let candidates = match path_attr {
            // `#[path]` is relative to the directory of the file holding the declaration.
            Some(p) => vec![
                here.parent()
                    .map(|d| d.join(&p))
                    .unwrap_or_else(|| PathBuf::from(p)),
            ],
            None => vec![
                m.child_dir.join(format!("{name}.rs")),
                m.child_dir.join(name).join("mod.rs"),
            ],
        };
        for path in candidates {
            let path = normalize(&path);
            if let Some(src) = read(&path) {
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                // A `mod.rs` keeps its children beside it; `x.rs` keeps them in `x/`.
                let child_dir = if path.file_name().is_some_and(|f| f == "mod.rs") {
                    dir
                } else {
                    dir.join(path.file_stem().unwrap_or_default())
                };
                let child = self.add_file(path, &src, Some(module), child_dir, read);
                self.modules[module].children.insert(name.to_owned(), child);
                return;
            }
        }
    }

    fn file_of(&self, module: usize) -> usize {
        self.modules[module].file
    }

    /// Resolves `segs` as written in `module`; `None` for other crates' paths.
    fn resolve(
        &self,
        module: usize,
        segs: &[String],
        visiting: &mut Vec<(usize, String)>,
    ) -> Option<Target> {
        let (first, rest) = segs.split_first()?;
        let mut cur = match first.as_str() {
            "crate" => 0,
            "self" => module,
            "super" => self.modules[module].parent?,
            "::" => return None,
            // A first name not in scope is another crate's.
            name => match self.lookup(module, name, !rest.is_empty(), visiting) {
                Some(Target::Module(m)) => m,
                Some(other) => return Some(other),
                None => return Some(Target::External),
            },
        };
        for (k, seg) in rest.iter().enumerate() {
            let more = k + 1 < rest.len();
            cur = match seg.as_str() {
                "self" => cur,
                "super" => self.modules[cur].parent?,
                name => match self.lookup(cur, name, more, visiting) {
                    Some(Target::Module(m)) => m,
                    Some(other) => return Some(other),
                    // Unknown here: blame the module's own file (stricter, never blind).
                    None => return Some(Target::Item(cur)),
                },
            };
        }
        Some(Target::Module(cur))
    }

    /// What `name` means inside `module`.
    fn lookup(
        &self,
        module: usize,
        name: &str,
        want_module: bool,
        visiting: &mut Vec<(usize, String)>,
    ) -> Option<Target> {
        let key = (module, name.to_owned());
        if visiting.contains(&key) {
            return None;
        }
        let m = &self.modules[module];
        let child = m.children.get(name).copied().map(Target::Module);
        let item = m.items.contains(name).then_some(Target::Item(module));
        let own = if want_module {
            child.or(item)
        } else {
            item.or(child)
        };
        if own.is_some() {
            return own;
        }
        visiting.push(key);
        let found = m
            .uses
            .iter()
            .filter(|u| u.name.as_deref() == Some(name))
            .find_map(|u| self.resolve(module, &u.segs, visiting))
            .or_else(|| {
                m.globs
                    .iter()
                    .find_map(|g| match self.resolve(module, g, visiting)? {
                        Target::Module(from) if from != module => {
                            self.lookup(from, name, want_module, visiting)
                        }
                        _ => None,
                    })
            });
        visiting.pop();
        found
    }

    /// The imports between different files of this crate, first occurrence per pair.
    pub fn edges(&self) -> Vec<Edge> {
        let mut seen = BTreeMap::new();
        for (index, m) in self.modules.iter().enumerate() {
            for r in &m.refs {
                let target = match self.resolve(index, &r.segs, &mut Vec::new()) {
                    Some(Target::Item(t)) => Some(t),
                    Some(Target::External) | None if r.macro_call && r.segs.len() == 1 => {
                        self.macro_home(index, &r.segs[0])
                    }
                    _ => None,
                };
                let Some(target) = target else { continue };
                let (from, to) = (m.file, self.file_of(target));
                if from != to {
                    seen.entry((from, to)).or_insert_with(|| Edge {
                        from: self.files[from].path.clone(),
                        to: self.files[to].path.clone(),
                        line: r.line,
                        path: r.segs.join("::"),
                    });
                }
            }
        }
        seen.into_values().collect()
    }

    /// The enclosing module whose file defines `macro_rules! name`, if any.
    fn macro_home(&self, mut module: usize, name: &str) -> Option<usize> {
        loop {
            if self.modules[module].macros.contains(name) {
                return Some(module);
            }
            module = self.modules[module].parent?;
        }
    }

    /// Every file of the crate.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|f| f.path.as_path())
    }
}

/// The index of the bracket closing the one at `open`, or `to` when unbalanced.
fn matching(toks: &[Token], open: usize, to: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().take(to).skip(open) {
        if t.is("{") || t.is("[") || t.is("(") {
            depth += 1;
        } else if t.is("}") || t.is("]") || t.is(")") {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    to
}

/// Parses a `use` tree at `*i` (after `use` or inside braces), appending `(path, bound name,
/// glob)` leaves.
fn parse_use_tree(
    toks: &[Token],
    i: &mut usize,
    to: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, bool)>,
) {
    let mut segs = prefix;
    if segs.is_empty() && toks.get(*i).is_some_and(|t| t.is("::")) {
        // `use ::name`: always another crate.
        segs.push("::".to_owned());
        *i += 1;
    }
    while *i < to {
        let t = &toks[*i];
        if t.is("*") {
            out.push((segs, None, true));
            *i += 1;
            return;
        }
        if t.is("{") {
            *i += 1;
            while *i < to && !toks[*i].is("}") {
                parse_use_tree(toks, i, to, segs.clone(), out);
                if toks.get(*i).is_some_and(|t| t.is(",")) {
                    *i += 1;
                }
            }
            *i += 1;
            return;
        }
        let Some(name) = t.ident() else { break };
        segs.push(name.to_owned());
        *i += 1;
        if toks.get(*i).is_some_and(|t| t.is("::")) {
            *i += 1;
        } else {
            break;
        }
    }
    if segs.last().is_some_and(|s| s == "self") {
        segs.pop();
    }
    let mut name = segs.last().cloned();
    if toks.get(*i).is_some_and(|t| t.is("as")) {
        name = toks
            .get(*i + 1)
            .and_then(Token::ident)
            .filter(|n| *n != "_")
            .map(str::to_owned);
        *i += 2;
    }
    if !segs.is_empty() {
        out.push((segs, name, false));
    }
}

/// The name an item defined at `toks[i]` binds in its module, if `toks[i]` starts one.
fn item_name(toks: &[Token], i: usize, to: usize) -> Option<String> {
    let get = |k: usize| toks.get(k).filter(|_| k < to);
    let kw = toks[i].ident()?;
    let mut k = i + 1;
    match kw {
        "fn" | "struct" | "enum" | "trait" | "type" | "union" => {}
        "const" | "static" => {
            if get(k).is_some_and(|t| t.is("mut")) {
                k += 1;
            }
        }
        "macro_rules" if get(k).is_some_and(|t| t.is("!")) => k += 1,
        _ => return None,
    }
    let name = get(k)?.ident()?;
    // `const fn`, `const unsafe fn`, `union` used as a plain name: not item names here.
    if KEYWORDS.contains(&name) || name == "_" {
        return None;
    }
    if kw == "union" && !get(k + 1).is_some_and(|t| t.is("{") || t.is("<")) {
        return None;
    }
    Some(name.to_owned())
}

/// A path starting at `toks[i]` and the index just past it.
fn path_at(toks: &[Token], i: usize, to: usize) -> Option<(Ref, usize)> {
    let first = toks[i].ident()?;
    if KEYWORDS.contains(&first) {
        return None;
    }
    let before = i.checked_sub(1).map(|k| &toks[k]);
    if before.is_some_and(|t| t.is("::") || t.is(".")) {
        return None;
    }
    let mut segs = vec![first.to_owned()];
    let mut j = i + 1;
    while j + 1 < to && toks[j].is("::") {
        match toks[j + 1].ident() {
            Some(name) => {
                segs.push(name.to_owned());
                j += 2;
            }
            None => break,
        }
    }
    let after = toks.get(j).filter(|_| j < to);
    // `name: T` (a field or parameter), not a path.
    if segs.len() == 1 && after.is_some_and(|t| t.is(":")) {
        return None;
    }
    let macro_call = after.is_some_and(|t| t.is("!"));
    Some((
        Ref {
            segs,
            line: toks[i].line,
            macro_call,
        },
        j,
    ))
}

/// `a/./b/../c` as `a/c` (no file system access).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A cycle of files, shortest through its first file, as `a -> b -> a`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cycle(pub Vec<PathBuf>);

impl std::fmt::Display for Cycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in &self.0 {
            write!(f, "{} -> ", p.display())?;
        }
        match self.0.first() {
            Some(p) => write!(f, "{}", p.display()),
            None => Ok(()),
        }
    }
}

/// Every import that closes a cycle, as the shortest cycle through it: so each import that has
/// to go is named at least once (deduplicated; each cycle starts at its smallest path).
pub fn cycles(edges: &[Edge]) -> Vec<Cycle> {
    let mut next: BTreeMap<&Path, BTreeSet<&Path>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
    }
    let mut found = BTreeSet::new();
    for e in edges {
        // The path runs from e.to back to e.from; the import e.from -> e.to closes it.
        if let Some(cycle) = shortest_path(&next, &e.to, &e.from) {
            let min = cycle
                .iter()
                .enumerate()
                .min_by_key(|(_, p)| **p)
                .map_or(0, |(k, _)| k);
            let mut rotated: Vec<PathBuf> = cycle.iter().map(|p| p.to_path_buf()).collect();
            rotated.rotate_left(min);
            found.insert(Cycle(rotated));
        }
    }
    found.into_iter().collect()
}

/// The shortest path from `from` to `to` (breadth first), both ends included.
fn shortest_path<'a>(
    next: &BTreeMap<&'a Path, BTreeSet<&'a Path>>,
    from: &'a Path,
    to: &'a Path,
) -> Option<Vec<&'a Path>> {
    let mut came_from: BTreeMap<&Path, &Path> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        if at == to {
            let mut path = vec![at];
            let mut cur = at;
            while cur != from {
                cur = came_from[cur];
                path.push(cur);
            }
            path.reverse();
            return Some(path);
        }
        for &n in next.get(at).into_iter().flatten() {
            if n != from && !came_from.contains_key(n) {
                came_from.insert(n, at);
                queue.push_back(n);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cycles of an in-memory crate rooted at `src/lib.rs`, as strings.
    fn cycles_of(files: &[(&str, &str)]) -> Vec<String> {
        let files: BTreeMap<PathBuf, String> = files
            .iter()
            .map(|(p, s)| (PathBuf::from(p), (*s).to_owned()))
            .collect();
        let krate = Crate::load(Path::new("src/lib.rs"), &|p| files.get(p).cloned());
        assert_eq!(
            krate.files().count(),
            files.len(),
            "every file is reached: {krate:#?}"
        );
        cycles(&krate.edges())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn edges_of(files: &[(&str, &str)]) -> Vec<(String, String)> {
        let files: BTreeMap<PathBuf, String> = files
            .iter()
            .map(|(p, s)| (PathBuf::from(p), (*s).to_owned()))
            .collect();
        let krate = Crate::load(Path::new("src/lib.rs"), &|p| files.get(p).cloned());
        krate
            .edges()
            .into_iter()
            .map(|e| (e.from.display().to_string(), e.to.display().to_string()))
            .collect()
    }

    #[test]
    fn two_files_using_each_other_are_a_cycle() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            ("src/b.rs", "use crate::a::A;\npub struct B;\n"),
        ]);
        assert_eq!(found, ["src/a.rs -> src/b.rs -> src/a.rs"]);
    }

    #[test]
    fn every_import_in_a_cycle_is_named() {
        // a <-> b and a <-> c: the shortest cycle through a is only one of them.
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::{b::B, c::C};\npub struct A;\n"),
            ("src/b.rs", "use crate::a::A;\npub struct B;\n"),
            ("src/c.rs", "use crate::a::A;\npub struct C;\n"),
        ]);
        assert_eq!(
            found,
            [
                "src/a.rs -> src/b.rs -> src/a.rs",
                "src/a.rs -> src/c.rs -> src/a.rs"
            ]
        );
    }

    #[test]
    fn an_alias_of_another_crate_is_not_the_aliasing_file() {
        let edges = edges_of(&[
            (
                "src/lib.rs",
                "pub(crate) use bench_model as model;\nmod a;\npub use a::A;\n",
            ),
            (
                "src/a.rs",
                "use crate::model::Machine;\npub struct A(crate::model::Run);\n",
            ),
        ]);
        assert_eq!(edges, [("src/lib.rs".into(), "src/a.rs".into())]);
    }

    #[test]
    fn one_way_imports_are_no_cycle() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
            ("src/b.rs", "pub struct B;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn qualified_paths_in_code_are_imports() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "pub fn f() -> u8 { crate::b::g() + 1 }\n"),
            (
                "src/b.rs",
                "pub fn g() -> u8 { 1 }\nfn h() { super::a::f(); }\n",
            ),
        ]);
        assert_eq!(found, ["src/a.rs -> src/b.rs -> src/a.rs"]);
    }

    #[test]
    fn a_three_file_cycle_is_named_in_order() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            ("src/b.rs", "use crate::c::C;\npub struct B;\n"),
            ("src/c.rs", "pub struct C;\nfn f(_: crate::a::A) {}\n"),
        ]);
        assert_eq!(found, ["src/a.rs -> src/b.rs -> src/c.rs -> src/a.rs"]);
    }

    #[test]
    fn a_re_export_leads_to_the_defining_file() {
        // mod.rs re-exports a child's item; the sibling that imports it through `super` imports
        // the child, not mod.rs.
        let files = [
            ("src/lib.rs", "mod compare;\n"),
            (
                "src/compare/mod.rs",
                "mod format;\nmod judge;\npub use format::pct;\npub use judge::Judge;\n",
            ),
            (
                "src/compare/format.rs",
                "pub fn pct(x: f64) -> String { x.to_string() }\n",
            ),
            (
                "src/compare/judge.rs",
                "use super::pct;\npub struct Judge;\n",
            ),
        ];
        assert!(cycles_of(&files).is_empty());
        let edges = edges_of(&files);
        assert!(
            edges.contains(&(
                "src/compare/judge.rs".into(),
                "src/compare/format.rs".into()
            )),
            "{edges:?}"
        );
    }

    #[test]
    fn a_child_using_an_item_defined_in_its_re_exporting_parent_is_a_cycle() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod compare;\n"),
            (
                "src/compare/mod.rs",
                "mod judge;\npub use judge::Judge;\npub fn pct() {}\n",
            ),
            (
                "src/compare/judge.rs",
                "pub struct Judge;\nfn f() { super::pct() }\n",
            ),
        ]);
        assert_eq!(
            found,
            ["src/compare/judge.rs -> src/compare/mod.rs -> src/compare/judge.rs"]
        );
    }

    #[test]
    fn a_mod_declaration_is_no_import() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\npub struct Root;\n"),
            ("src/a.rs", "use crate::Root;\npub fn f(_: Root) {}\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_test_module_is_part_of_its_file() {
        let files = [
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "pub fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::b::B;\n    #[test]\n    fn t() { f(); let _ = B; }\n}\n",
            ),
            ("src/b.rs", "pub struct B;\nfn g() { crate::a::f() }\n"),
        ];
        // `use super::*` is the file itself; the test's import of b is the file's import of b.
        assert_eq!(cycles_of(&files), ["src/a.rs -> src/b.rs -> src/a.rs"]);
        let edges = edges_of(&files);
        assert!(!edges.iter().any(|(from, to)| from == to), "{edges:?}");
    }

    #[test]
    fn use_groups_renames_and_self_are_followed() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "use crate::{b::{self as other}, a as _};\npub struct A;\nfn f() { other::g(); }\n",
            ),
            (
                "src/b.rs",
                "pub fn g() {}\npub(crate) use crate::a::A as Renamed;\n",
            ),
        ]);
        assert_eq!(found, ["src/a.rs -> src/b.rs -> src/a.rs"]);
    }

    #[test]
    fn names_brought_in_by_a_glob_are_imports() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "use crate::b::*;\npub struct A;\nfn f() { g(); }\n",
            ),
            ("src/b.rs", "pub fn g() {}\nfn h(_: crate::a::A) {}\n"),
        ]);
        assert_eq!(found, ["src/a.rs -> src/b.rs -> src/a.rs"]);
    }

    #[test]
    fn fn_local_uses_and_imported_modules_are_followed() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "pub struct A;\nfn f() {\n    use crate::b;\n    b::g();\n}\n",
            ),
            (
                "src/b.rs",
                "use super::a;\npub fn g() {}\nfn h(_: a::A) {}\n",
            ),
        ]);
        assert_eq!(found, ["src/a.rs -> src/b.rs -> src/a.rs"]);
    }

    #[test]
    fn other_crates_and_methods_and_fields_are_not_imports() {
        let found = cycles_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "use std::fmt;\nuse serde::Serialize;\npub fn g() {}\npub struct A { b: u8 }\n",
            ),
            (
                "src/b.rs",
                "use crate::a::A;\nfn f(a: A) -> u8 { a.b; let x = A { b: 1 }; x.g(); a.b }\n",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
        let edges = edges_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "pub fn b() {}\n"),
            ("src/b.rs", "fn f(s: &S) { s.b(); }\n"),
        ]);
        assert!(edges.is_empty(), "{edges:?}");
    }

    #[test]
    fn macros_are_imports_by_path_and_by_textual_scope() {
        let edges = edges_of(&[
            (
                "src/lib.rs",
                "macro_rules! m { () => {} }\nmod a;\nmod b;\n",
            ),
            ("src/a.rs", "fn f() { m!(); }\n"),
            (
                "src/b.rs",
                "macro_rules! n { () => {} }\npub(crate) use n;\n",
            ),
        ]);
        assert_eq!(edges, [("src/a.rs".into(), "src/lib.rs".into())]);
        let edges = edges_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "crate::b::n!();\n"),
            (
                "src/b.rs",
                "macro_rules! n { () => {} }\npub(crate) use n;\n",
            ),
        ]);
        assert_eq!(edges, [("src/a.rs".into(), "src/b.rs".into())]);
    }

    #[test]
    fn module_files_are_found_in_both_layouts_and_by_path_attribute() {
        let found = cycles_of(&[
            (
                "src/lib.rs",
                "mod tree;\nmod decode;\n#[path = \"other/place.rs\"]\nmod moved;\n",
            ),
            ("src/tree.rs", "mod legacy;\npub struct T;\n"),
            ("src/tree/legacy.rs", "pub struct L(crate::decode::D);\n"),
            (
                "src/decode/mod.rs",
                "pub struct D;\nfn f(_: crate::tree::legacy::L) {}\n",
            ),
            ("src/other/place.rs", "pub struct M;\n"),
        ]);
        assert_eq!(
            found,
            ["src/decode/mod.rs -> src/tree/legacy.rs -> src/decode/mod.rs"]
        );
    }

    #[test]
    fn enum_variants_and_associated_items_resolve_to_their_type() {
        let edges = edges_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "pub enum E { X }\nimpl E { pub fn new() -> E { E::X } }\n",
            ),
            (
                "src/b.rs",
                "use crate::a::E::X;\nfn f() { crate::a::E::new(); }\n",
            ),
        ]);
        assert_eq!(edges, [("src/b.rs".into(), "src/a.rs".into())]);
    }

    #[test]
    fn a_name_missing_from_a_module_is_blamed_on_its_file() {
        let edges = edges_of(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "generated!();\n"),
            ("src/b.rs", "use crate::a::Generated;\n"),
        ]);
        assert_eq!(edges, [("src/b.rs".into(), "src/a.rs".into())]);
    }
}

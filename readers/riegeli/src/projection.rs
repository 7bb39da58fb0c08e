//! Field projection: reading only some fields of proto records, as C++ riegeli's `FieldProjection`.
//!
//! A [`Field`] is a path of field numbers from the record's top-level message: `[1, 2]` is field 2
//! inside the submessage in field 1. A path ending in [`Field::EXISTENCE_ONLY`] (0) keeps only the
//! presence of the field before it: a varint becomes 0, a fixed32/64 zeros, a string or submessage
//! empty. The projection of a record keeps the fields on its paths: a field named whole is kept
//! whole, a submessage on the way to a named field is kept with only the named fields inside, and
//! every other field is dropped.
//!
//! Like C++, the projection is a hint that only transposed chunks act on: their decoder skips the
//! columns of excluded fields and decompresses only the buckets that hold included ones, which is
//! where the speed comes from. Records of simple chunks are returned whole (C++ does the same: it
//! leaves them for the proto parser), and so are non-proto records in transposed chunks.
//!
//! Text form (`riegeli-tool cat --fields`): paths separated by commas, numbers by dots, e.g.
//! `1,3.2,4.0` (field 1, field 2 of submessage 3, the existence of field 4).

use std::collections::HashMap;

/// Largest proto field number.
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// Deepest path accepted (protobuf's default recursion limit).
pub const MAX_DEPTH: usize = 100;

/// Most paths in one projection (each costs a table entry per level).
pub const MAX_FIELDS: usize = 10_000;

/// Why a projection is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectionError {
    /// A field number outside 1..=2^29-1 (0 is allowed only last, as existence-only).
    #[error("field path {path}: field number {number} is outside 1..={MAX_FIELD_NUMBER}")]
    FieldNumber {
        /// The path, as text.
        path: String,
        /// The offending number.
        number: u64,
    },
    /// The existence-only marker not at the end, or alone.
    #[error("field path {path}: 0 (existence only) must follow a field number, at the end")]
    ExistenceOnly {
        /// The path, as text.
        path: String,
    },
    /// A path deeper than [`MAX_DEPTH`].
    #[error("field path {path}: {depth} levels, at most {MAX_DEPTH}")]
    TooDeep {
        /// The path, as text (truncated).
        path: String,
        /// Its depth.
        depth: usize,
    },
    /// More than [`MAX_FIELDS`] paths.
    #[error("{count} field paths, at most {MAX_FIELDS}")]
    TooMany {
        /// How many were given.
        count: usize,
    },
    /// Text that is not a list of dotted numbers.
    #[error("field projection {text:?}: {why}")]
    Syntax {
        /// The text (truncated).
        text: String,
        /// What is wrong.
        why: String,
    },
}

/// One field path (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field(Vec<u32>);

impl Field {
    /// Marks the end of a path whose last field is kept for its presence only.
    pub const EXISTENCE_ONLY: u32 = 0;

    /// The path `numbers`; an empty path stands for the whole record.
    ///
    /// # Errors
    /// [`ProjectionError`] for numbers out of range, a misplaced existence marker or a path deeper
    /// than [`MAX_DEPTH`].
    pub fn new(numbers: impl Into<Vec<u32>>) -> Result<Self, ProjectionError> {
        let numbers = numbers.into();
        let text = || path_text(&numbers);
        if numbers.len() > MAX_DEPTH + 1 {
            return Err(ProjectionError::TooDeep {
                path: text(),
                depth: numbers.len(),
            });
        }
        let last = numbers.len().saturating_sub(1);
        for (i, &n) in numbers.iter().enumerate() {
            if n > MAX_FIELD_NUMBER {
                return Err(ProjectionError::FieldNumber {
                    path: text(),
                    number: n.into(),
                });
            }
            if n == Self::EXISTENCE_ONLY && (i != last || i == 0) {
                return Err(ProjectionError::ExistenceOnly { path: text() });
            }
        }
        let depth = numbers.len() - usize::from(numbers.last() == Some(&Self::EXISTENCE_ONLY));
        if depth > MAX_DEPTH {
            return Err(ProjectionError::TooDeep {
                path: text(),
                depth,
            });
        }
        Ok(Self(numbers))
    }

    /// The field numbers of the path.
    #[must_use]
    pub fn numbers(&self) -> &[u32] {
        &self.0
    }
}

fn path_text(numbers: &[u32]) -> String {
    let shown: Vec<String> = numbers.iter().take(8).map(u32::to_string).collect();
    let more = if numbers.len() > 8 { ".…" } else { "" };
    format!("{}{more}", shown.join("."))
}

/// How a field is kept, in the projection's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Include {
    /// Only its presence (the weakest).
    ExistenceOnly,
    /// Some fields inside it.
    Child,
    /// All of it.
    Fully,
}

/// Whether the decoder emits a field it meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inclusion {
    /// With its value.
    Yes,
    /// Not at all.
    No,
    /// With a zero or empty value.
    Existence,
}

/// Id of the top-level message in the tree.
const ROOT: u32 = u32::MAX;

/// The fields to read (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldProjection {
    /// Every field when set (an empty path was given, or no projection at all).
    all: bool,
    /// `(parent id, field number)` to `(id, how)`: a tree rooted at [`ROOT`].
    tree: HashMap<(u32, u32), (u32, Include)>,
}

impl FieldProjection {
    /// The projection that keeps every field.
    #[must_use]
    pub fn all() -> Self {
        Self {
            all: true,
            tree: HashMap::new(),
        }
    }

    /// The projection keeping `fields` (none: no field at all).
    ///
    /// # Errors
    /// [`ProjectionError::TooMany`] past [`MAX_FIELDS`] paths.
    pub fn new(fields: impl IntoIterator<Item = Field>) -> Result<Self, ProjectionError> {
        let mut p = Self::default();
        let mut count = 0;
        for field in fields {
            count += 1;
            if count > MAX_FIELDS {
                return Err(ProjectionError::TooMany { count });
            }
            p.add(&field);
        }
        Ok(p)
    }

    /// Parses the text form (`1,3.2,4.0`; see the module docs).
    ///
    /// # Errors
    /// [`ProjectionError`] for bad syntax or paths.
    pub fn parse(text: &str) -> Result<Self, ProjectionError> {
        let syntax = |why: &str| ProjectionError::Syntax {
            text: text.chars().take(64).collect(),
            why: why.to_owned(),
        };
        if text.trim().is_empty() {
            return Err(syntax("no field paths"));
        }
        let paths = text.split(',');
        if paths.clone().count() > MAX_FIELDS {
            return Err(ProjectionError::TooMany {
                count: paths.count(),
            });
        }
        let mut fields = Vec::new();
        for path in paths {
            let path = path.trim();
            if path.is_empty() {
                return Err(syntax("an empty field path"));
            }
            if path.split('.').count() > MAX_DEPTH + 1 {
                return Err(ProjectionError::TooDeep {
                    path: path.chars().take(64).collect(),
                    depth: path.split('.').count(),
                });
            }
            let mut numbers = Vec::new();
            for part in path.split('.') {
                let n: u64 = part
                    .parse()
                    .map_err(|_| syntax(&format!("{part:?} is not a field number")))?;
                let n = u32::try_from(n).map_err(|_| ProjectionError::FieldNumber {
                    path: path.chars().take(64).collect(),
                    number: n,
                })?;
                numbers.push(n);
            }
            fields.push(Field::new(numbers)?);
        }
        Self::new(fields)
    }

    /// Whether every field is kept (nothing to skip).
    #[must_use]
    pub fn includes_all(&self) -> bool {
        self.all
    }

    fn add(&mut self, field: &Field) {
        if self.all {
            return;
        }
        let numbers = field.numbers();
        let (path, last) = match numbers {
            [] => {
                self.all = true;
                self.tree.clear();
                return;
            }
            [path @ .., f, Field::EXISTENCE_ONLY] => ((path, *f), Include::ExistenceOnly),
            [path @ .., f] => ((path, *f), Include::Fully),
        };
        let (parents, leaf) = path;
        let mut parent = ROOT;
        for &f in parents {
            match self.node(parent, f, Include::Child) {
                Some(id) => parent = id,
                // Kept fully already: everything below is too.
                None => return,
            }
        }
        self.node(parent, leaf, last);
    }

    /// The node of field `f` under `parent`, raised to at least `how`; `None` when it is kept
    /// fully (nothing below it needs a node).
    fn node(&mut self, parent: u32, f: u32, how: Include) -> Option<u32> {
        let next_id = self.tree.len() as u32;
        let entry = self.tree.entry((parent, f)).or_insert((next_id, how));
        entry.1 = entry.1.max(how);
        (entry.1 != Include::Fully).then_some(entry.0)
    }

    /// How to emit field `field` inside the open submessages `parents` (outermost first). A group
    /// start is resolved on the group's own entry, which `parents` ends with.
    pub(crate) fn resolve(&self, parents: &[u32], field: u32, group_start: bool) -> Inclusion {
        if self.all {
            return Inclusion::Yes;
        }
        let mut parent = ROOT;
        for &f in parents {
            match self.tree.get(&(parent, f)) {
                None => return Inclusion::No,
                Some(&(_, Include::Fully)) => return Inclusion::Yes,
                Some(&(id, _)) => parent = id,
            }
        }
        if group_start {
            return Inclusion::Yes;
        }
        match self.tree.get(&(parent, field)) {
            None => Inclusion::No,
            Some(&(_, Include::Fully | Include::Child)) => Inclusion::Yes,
            Some(&(_, Include::ExistenceOnly)) => Inclusion::Existence,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_as_cpp_does() {
        let p = FieldProjection::parse("1, 3.2, 4.0, 5.6.0").unwrap();
        assert!(!p.includes_all());
        assert_eq!(p.resolve(&[], 1, false), Inclusion::Yes);
        assert_eq!(
            p.resolve(&[1], 9, false),
            Inclusion::Yes,
            "inside a whole field"
        );
        assert_eq!(p.resolve(&[], 2, false), Inclusion::No);
        assert_eq!(
            p.resolve(&[], 3, false),
            Inclusion::Yes,
            "on the way to 3.2"
        );
        assert_eq!(p.resolve(&[3], 2, false), Inclusion::Yes);
        assert_eq!(p.resolve(&[3], 1, false), Inclusion::No);
        assert_eq!(p.resolve(&[], 4, false), Inclusion::Existence);
        assert_eq!(p.resolve(&[4], 1, false), Inclusion::No);
        assert_eq!(p.resolve(&[5], 6, false), Inclusion::Existence);
        assert_eq!(p.resolve(&[2], 1, false), Inclusion::No);
        assert_eq!(p.resolve(&[2, 7], 1, false), Inclusion::No);
    }

    #[test]
    fn stronger_inclusion_wins() {
        let p = FieldProjection::parse("3.0,3.2").unwrap();
        assert_eq!(p.resolve(&[], 3, false), Inclusion::Yes);
        let p = FieldProjection::parse("3.2,3").unwrap();
        assert_eq!(p.resolve(&[3], 7, false), Inclusion::Yes);
        let p = FieldProjection::new([Field::new([]).unwrap()]).unwrap();
        assert!(p.includes_all());
        assert!(FieldProjection::all().includes_all());
    }

    #[test]
    fn bad_paths_are_errors() {
        let cases = [
            "",
            "1,,2",
            "x",
            "1.-2",
            "0",
            "0.1",
            "1.0.2",
            "536870912",
            "99999999999999999999",
            "4294967296",
        ];
        for (i, text) in cases.iter().enumerate() {
            assert!(FieldProjection::parse(text).is_err(), "case {i}: {text:?}");
        }
        let deep = vec!["1"; MAX_DEPTH + 2].join(".");
        assert!(matches!(
            FieldProjection::parse(&deep),
            Err(ProjectionError::TooDeep { .. })
        ));
        let many = vec!["1"; MAX_FIELDS + 1].join(",");
        assert!(matches!(
            FieldProjection::parse(&many),
            Err(ProjectionError::TooMany { .. })
        ));
        assert!(Field::new(vec![1; MAX_DEPTH]).is_ok());
        assert!(Field::new([u32::MAX]).is_err());
    }
}

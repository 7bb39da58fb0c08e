//! Columns: what a read returns, for every layout a branch can have.

use std::any::Any;

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::types::{Element, LeafType};

/// A variable-length column: entry `j` is `values[offsets[j]..offsets[j + 1]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jagged<T> {
    /// `entries + 1` offsets into `values`, starting at 0.
    pub offsets: Vec<u64>,
    /// All values, concatenated.
    pub values: Vec<T>,
}

impl<T> Jagged<T> {
    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of entry `j`.
    #[must_use]
    pub fn get(&self, j: usize) -> Option<&[T]> {
        item(&self.offsets, &self.values, j)
    }
}

/// Item `i` of a column of offsets (`len + 1`, from 0) into `values`.
fn item<'a, T>(offsets: &[u64], values: &'a [T], i: usize) -> Option<&'a [T]> {
    let a = usize::try_from(*offsets.get(i)?).ok()?;
    let b = usize::try_from(*offsets.get(i + 1)?).ok()?;
    values.get(a..b)
}

/// Values of any element type (for tools that do not know the type in advance), or of the
/// items of object branches: strings, lists of items, the fields of a leaf list.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Values {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// One string per item.
    Text(Strings),
    /// One list per item (the inner level of `vector<vector<T>>`).
    Lists(Box<Lists>),
    /// One record per item: the fields of a leaf list.
    Record(Vec<FieldValues>),
}

/// Strings: string `i` is `bytes[offsets[i]..offsets[i + 1]]`, as written (ROOT does not
/// promise UTF-8).
#[derive(Debug, Clone, PartialEq)]
pub struct Strings {
    /// `len + 1` offsets into `bytes`, starting at 0.
    pub offsets: Vec<u64>,
    /// All strings, concatenated.
    pub bytes: Vec<u8>,
}

impl Default for Strings {
    fn default() -> Self {
        Self {
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }
}

impl Strings {
    /// Number of strings.
    #[must_use]
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of string `i`.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        item(&self.offsets, &self.bytes, i)
    }

    /// String `i`, invalid UTF-8 replaced.
    #[must_use]
    pub fn get_str(&self, i: usize) -> Option<std::borrow::Cow<'_, str>> {
        self.get(i).map(String::from_utf8_lossy)
    }

    /// Appends a string.
    pub fn push(&mut self, s: &[u8]) {
        self.bytes.extend_from_slice(s);
        self.offsets.push(self.bytes.len() as u64);
    }
}

/// Lists of items: list `i` is `items[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lists {
    /// `len + 1` offsets into `items`, starting at 0.
    pub offsets: Vec<u64>,
    /// All items, concatenated.
    pub items: Values,
}

/// The values of one field of a leaf list: `len` per entry.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldValues {
    /// The leaf's name.
    pub name: String,
    /// Values per entry.
    pub len: usize,
    /// `entries * len` values.
    pub values: Values,
}

impl Values {
    /// Number of items.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Bool(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::U8(v) => v.len(),
            Self::I16(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::Text(s) => s.len(),
            Self::Lists(l) => l.offsets.len().saturating_sub(1),
            // A member of no data (a class without data members) has no length of its own.
            Self::Record(fields) => fields
                .iter()
                .find(|f| !f.values.is_lengthless())
                .map_or(0, |f| f.values.len() / f.len.max(1)),
        }
    }

    /// Whether these are records with no data at all (of a class without data members, or
    /// whose members are all such records): they hold no length of their own, and count as
    /// many entries or items as their context says.
    #[must_use]
    pub fn is_lengthless(&self) -> bool {
        matches!(self, Self::Record(fields) if fields.iter().all(|f| f.values.is_lengthless()))
    }

    /// Whether there are no items.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type of numeric values (`None` for strings, lists and records).
    #[must_use]
    pub fn leaf_type(&self) -> Option<LeafType> {
        Some(match self {
            Self::Bool(_) => LeafType::Bool,
            Self::I8(_) => LeafType::I8,
            Self::U8(_) => LeafType::U8,
            Self::I16(_) => LeafType::I16,
            Self::U16(_) => LeafType::U16,
            Self::I32(_) => LeafType::I32,
            Self::U32(_) => LeafType::U32,
            Self::I64(_) => LeafType::I64,
            Self::U64(_) => LeafType::U64,
            Self::F32(_) => LeafType::F32,
            Self::F64(_) => LeafType::F64,
            Self::Text(_) | Self::Lists(_) | Self::Record(_) => return None,
        })
    }

    /// The values as `Vec<T>` when they are numbers of type `T`.
    #[must_use]
    pub fn into_vec<T: Element>(self) -> Option<Vec<T>> {
        let any: Box<dyn Any> = match self {
            Self::Bool(v) => Box::new(v),
            Self::I8(v) => Box::new(v),
            Self::U8(v) => Box::new(v),
            Self::I16(v) => Box::new(v),
            Self::U16(v) => Box::new(v),
            Self::I32(v) => Box::new(v),
            Self::U32(v) => Box::new(v),
            Self::I64(v) => Box::new(v),
            Self::U64(v) => Box::new(v),
            Self::F32(v) => Box::new(v),
            Self::F64(v) => Box::new(v),
            Self::Text(_) | Self::Lists(_) | Self::Record(_) => return None,
        };
        any.downcast::<Vec<T>>().ok().map(|b| *b)
    }

    /// Removes every item, keeping the memory (and the fields of a record).
    pub fn clear(&mut self) {
        match self {
            Self::Bool(v) => v.clear(),
            Self::I8(v) => v.clear(),
            Self::U8(v) => v.clear(),
            Self::I16(v) => v.clear(),
            Self::U16(v) => v.clear(),
            Self::I32(v) => v.clear(),
            Self::U32(v) => v.clear(),
            Self::I64(v) => v.clear(),
            Self::U64(v) => v.clear(),
            Self::F32(v) => v.clear(),
            Self::F64(v) => v.clear(),
            Self::Text(s) => {
                s.offsets.truncate(1);
                s.bytes.clear();
            }
            Self::Lists(l) => {
                l.offsets.truncate(1);
                l.items.clear();
            }
            Self::Record(fields) => fields.iter_mut().for_each(|f| f.values.clear()),
        }
    }

    /// No values of numeric type `t`.
    #[must_use]
    pub fn empty(t: LeafType) -> Self {
        match t {
            LeafType::Bool => Self::Bool(Vec::new()),
            LeafType::I8 => Self::I8(Vec::new()),
            LeafType::U8 => Self::U8(Vec::new()),
            LeafType::I16 => Self::I16(Vec::new()),
            LeafType::U16 => Self::U16(Vec::new()),
            LeafType::I32 => Self::I32(Vec::new()),
            LeafType::U32 => Self::U32(Vec::new()),
            LeafType::I64 => Self::I64(Vec::new()),
            LeafType::U64 => Self::U64(Vec::new()),
            LeafType::F32 => Self::F32(Vec::new()),
            LeafType::F64 => Self::F64(Vec::new()),
        }
    }

    /// Appends `other`'s items (of the same kind; offsets shifted): reads of several baskets
    /// or files joined.
    ///
    /// # Errors
    /// Values of different kinds.
    pub fn append(&mut self, other: Values) -> Result<()> {
        fn shifted(a: &mut Vec<u64>, b: &[u64]) {
            let shift = a.last().copied().unwrap_or(0);
            a.extend(b.iter().skip(1).map(|o| o + shift));
        }
        macro_rules! join {
            ($($v:ident),*) => {
                match (self, other) {
                    $((Values::$v(a), Values::$v(b)) => a.extend(b),)*
                    (Values::Text(a), Values::Text(b)) => {
                        shifted(&mut a.offsets, &b.offsets);
                        a.bytes.extend(b.bytes);
                    }
                    (Values::Lists(a), Values::Lists(b)) => {
                        shifted(&mut a.offsets, &b.offsets);
                        a.items.append(b.items)?;
                    }
                    (Values::Record(a), Values::Record(b)) if a.len() == b.len() => {
                        for (x, y) in a.iter_mut().zip(b) {
                            x.values.append(y.values)?;
                        }
                    }
                    _ => return Err(Error::corrupt("column", 0, "values of different kinds cannot be joined")),
                }
            };
        }
        join!(Bool, I8, U8, I16, U16, I32, U32, I64, U64, F32, F64);
        Ok(())
    }
}

/// A column of a branch over an entry range, of whatever type the branch holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The branch layout.
    pub layout: Layout,
    /// For jagged, vector and list-valued object layouts: `entries + 1` offsets into
    /// `values`.
    pub offsets: Option<Vec<u64>>,
    /// The values (for leaf lists, one [`Values::Record`] of `entries` records).
    pub values: Values,
}

impl Column {
    /// Number of entries.
    #[must_use]
    pub fn entries(&self) -> usize {
        match &self.offsets {
            Some(o) => o.len().saturating_sub(1),
            None => self.values.len() / self.layout.fixed_len().unwrap_or(1),
        }
    }

    /// Appends `part` (same layout): values joined, offsets shifted by this column's values.
    ///
    /// # Errors
    /// Offsets in one part only, or values of different kinds.
    pub fn append(&mut self, part: Column) -> Result<()> {
        let shift = self.values.len() as u64;
        match (&mut self.offsets, part.offsets) {
            (Some(a), Some(b)) => a.extend(b.iter().skip(1).map(|o| o + shift)),
            (None, None) => {}
            _ => {
                return Err(Error::corrupt(
                    "column",
                    0,
                    "offsets present in one part only",
                ));
            }
        }
        self.values.append(part.values)
    }
}

//! What a branch's entries are: [`Layout`], and for entries streamed object by object the
//! [`Shape`] that says how to walk their bytes.
//!
//! Pure descriptions, built from the branch metadata and the file's class descriptions
//! (`tree.rs`) and followed by the decoders (`decode/`).

use crate::types::LeafType;

/// How a branch's entries are laid out.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// One value per entry.
    Scalar(LeafType),
    /// A fixed number of values per entry (`x[4]/F`).
    Fixed(LeafType, usize),
    /// A variable number of values per entry given by a counter leaf (`x[n]/F`).
    Jagged(LeafType),
    /// `std::vector<T>`: a variable number of values, each entry with a 10-byte header.
    Vector(LeafType),
    /// Several fixed-size leaves in one branch (`x/F:y/D:n/I`), one field each; the fields
    /// are the branch's leaves ([`crate::BranchMeta::leaves`]).
    LeafList(Vec<Field>),
    /// Entries streamed object by object: strings, nested vectors, packed reals, members of
    /// split collections.
    Object(Shape),
}

/// One field of a leaf list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The leaf's name.
    pub name: String,
    /// Its element type.
    pub leaf_type: LeafType,
    /// Values per entry.
    pub len: usize,
}

impl Layout {
    /// The element type of numeric layouts (`None` for leaf lists and objects).
    #[must_use]
    pub fn leaf_type(&self) -> Option<LeafType> {
        match self {
            Self::Scalar(t) | Self::Fixed(t, _) | Self::Jagged(t) | Self::Vector(t) => Some(*t),
            Self::LeafList(_) | Self::Object(_) => None,
        }
    }

    /// Whether entries can differ in size (baskets then locate them with an entry-offset
    /// table).
    #[must_use]
    pub fn variable_size(&self) -> bool {
        match self {
            Self::Scalar(_) | Self::Fixed(..) | Self::LeafList(_) => false,
            Self::Jagged(_) | Self::Vector(_) => true,
            Self::Object(shape) => shape.fixed_size().is_none(),
        }
    }

    /// A short description, e.g. `f32[4]`, `vector<f64>`, `vector<vector<f32>>`, `string`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Scalar(t) => t.name().to_string(),
            Self::Fixed(t, n) => format!("{}[{n}]", t.name()),
            Self::Jagged(t) => format!("{}[]", t.name()),
            Self::Vector(t) => format!("vector<{}>", t.name()),
            Self::LeafList(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|f| match f.len {
                        1 => format!("{}: {}", f.name, f.leaf_type.name()),
                        n => format!("{}: {}[{n}]", f.name, f.leaf_type.name()),
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Self::Object(shape) => shape.describe(),
        }
    }

    /// Items per entry when every entry has the same number: values of scalars and fixed
    /// arrays, one record of a leaf list, one string or packed real of an object branch.
    /// `None` when an entry is a list.
    #[must_use]
    pub fn fixed_len(&self) -> Option<usize> {
        match self {
            Self::Scalar(_) | Self::LeafList(_) => Some(1),
            Self::Fixed(_, n) => Some(*n),
            Self::Jagged(_) | Self::Vector(_) => None,
            Self::Object(shape) => (!shape.is_list()).then_some(1),
        }
    }
}

/// How the bytes of one item are walked.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A big-endian number.
    Num(LeafType),
    /// A `Double32_t` or `Float16_t`, packed as its range says.
    Real(Real),
    /// A string: a length byte (255: a 4-byte length follows), then the bytes (`TString`,
    /// `std::string`, `char*` leaves).
    Text,
    /// A 4-byte count, then that many items (a `std::vector` inside another object).
    List(Box<Shape>),
    /// A 6-byte header (byte count and class version) before the item.
    Headed(Box<Shape>),
    /// Items until the entry ends: one member of every element of a split collection.
    Repeated(Box<Shape>),
    /// `n` items (a fixed-size array member).
    Array(usize, Box<Shape>),
    /// An object of a class, member after member (each an item of its own field).
    Record {
        /// The class.
        class: String,
        /// Its members in streaming order.
        members: Vec<(String, Shape)>,
    },
    /// A base class: a header, then its members, which are the record's own fields.
    Base(Vec<(String, Shape)>),
    /// The start of a streamed `TObject`: its version (2 bytes) and `fUniqueID`.
    ObjectId,
    /// `TObject::fBits`, followed by a process id when the object is referenced.
    ObjectBits,
}

impl Shape {
    /// `List` of `inner`.
    #[must_use]
    pub fn list(inner: Shape) -> Self {
        Self::List(Box::new(inner))
    }

    /// `Headed` `inner`.
    #[must_use]
    pub fn headed(inner: Shape) -> Self {
        Self::Headed(Box::new(inner))
    }

    /// Whether the item is one string: a `char*` leaf's (`Text`) or, behind an object header,
    /// a `std::string`'s or `TString`'s.
    #[must_use]
    pub fn is_string(&self) -> bool {
        match self {
            Self::Text => true,
            Self::Headed(inner) => **inner == Self::Text,
            _ => false,
        }
    }

    /// Whether the item is a `vector<string>`: an object header, then a list of strings.
    #[must_use]
    pub fn is_string_list(&self) -> bool {
        matches!(self, Self::Headed(list) if matches!(&**list, Self::List(item) if **item == Self::Text))
    }

    /// `Repeated` `inner`.
    #[must_use]
    pub fn repeated(inner: Shape) -> Self {
        Self::Repeated(Box::new(inner))
    }

    /// Whether an item is a list of items (a vector, or one member of every element of a
    /// collection).
    #[must_use]
    pub fn is_list(&self) -> bool {
        match self {
            Self::List(_) | Self::Repeated(_) => true,
            Self::Headed(inner) => inner.is_list(),
            _ => false,
        }
    }

    /// A short description: `string`, `vector<vector<f32>>`, `f64 (Double32_t[0,1,20])`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Num(t) => t.name().to_string(),
            Self::Real(r) => r.describe(),
            Self::Text => "string".to_string(),
            Self::List(inner) => format!("vector<{}>", inner.describe()),
            Self::Headed(inner) => inner.describe(),
            Self::Repeated(inner) => format!("{}[]", inner.describe()),
            Self::Array(n, inner) => format!("{}[{n}]", inner.describe()),
            Self::Record { class, .. } => class.clone(),
            Self::Base(_) => "base".to_string(),
            Self::ObjectId | Self::ObjectBits => "u32".to_string(),
        }
    }

    /// Bytes of every item when they are all the same size (entries of such shapes are
    /// written without an entry-offset table).
    #[must_use]
    pub fn fixed_size(&self) -> Option<usize> {
        match self {
            Self::Num(t) => Some(t.size()),
            Self::Real(r) => Some(r.size()),
            Self::Array(n, inner) => inner.fixed_size().map(|s| s * n),
            Self::Record { members, .. } => members.iter().map(|(_, m)| m.fixed_size()).sum(),
            Self::ObjectId => Some(6),
            _ => None,
        }
    }

    /// The fewest bytes an item can take (so a count read from the file can be checked
    /// against the bytes left before anything is allocated for it).
    #[must_use]
    pub fn min_size(&self) -> usize {
        match self {
            Self::Num(t) => t.size(),
            Self::Real(r) => r.size(),
            Self::Text => 1,
            Self::List(_) => 4,
            Self::Headed(inner) => 6 + inner.min_size(),
            Self::Repeated(_) => 0,
            Self::Array(n, inner) => n.saturating_mul(inner.min_size()),
            Self::Record { members, .. } => members.iter().map(|(_, m)| m.min_size()).sum(),
            Self::Base(members) => 6 + members.iter().map(|(_, m)| m.min_size()).sum::<usize>(),
            Self::ObjectId => 6,
            Self::ObjectBits => 4,
        }
    }

    /// The shape of the C++ type `name` streamed inside an object (no header of its own for
    /// nested `std::vector`s), or `None` for types not read.
    #[must_use]
    pub fn of_cpp(name: &str) -> Option<Self> {
        Self::of_cpp_with(name, &|_| None)
    }

    /// As [`Self::of_cpp`], with `class` giving the shape of a class name (an object inside a
    /// container).
    pub fn of_cpp_with(name: &str, class: &dyn Fn(&str) -> Option<Shape>) -> Option<Self> {
        let name = name.trim();
        let name = name.strip_prefix("std::").unwrap_or(name);
        if matches!(name, "string" | "TString") {
            return Some(Self::Text);
        }
        if let Some(inner) = name
            .strip_prefix("vector<")
            .and_then(|r| r.strip_suffix('>'))
        {
            return Self::of_cpp_with(inner, class).map(Self::list);
        }
        LeafType::from_cpp(name)
            .map(Self::Num)
            .or_else(|| class(name))
    }
}

/// A `Double32_t` (read as `f64`) or `Float16_t` (read as `f32`) and how it is packed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Real {
    /// `true` for `Double32_t`, `false` for `Float16_t`.
    pub double: bool,
    /// How the value is stored.
    pub packing: Packing,
}

/// How a `Double32_t` or `Float16_t` is stored (ROOT's `TBufferFile::ReadDouble32` and
/// `ReadFloat16`, with the range of `TStreamerElement::GetRange`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Packing {
    /// A 4-byte float (`Double32_t` without a range).
    Float,
    /// An exponent byte and a 2-byte mantissa of `bits` bits, sign above it.
    Truncated {
        /// Mantissa bits.
        bits: u32,
    },
    /// A 4-byte unsigned integer: value = `min + int / factor`.
    Scaled {
        /// Lower end of the range.
        min: f64,
        /// Steps per unit.
        factor: f64,
    },
}

impl Real {
    /// The packing ROOT derives from a title holding `[min,max]` or `[min,max,bits]`
    /// (`Double32_t x; //[0,100,20]`, a leaf title `x/d[0,100,20]`); no range: a float for
    /// `Double32_t`, 12 mantissa bits for `Float16_t`.
    #[must_use]
    pub fn from_title(title: &str, double: bool) -> Self {
        let (xmin, factor) = root_range(title);
        // ROOT reads the bit count of `[a,b,bits]` without a usable range from xmin.
        let bits = xmin as i64;
        let packing = if factor != 0.0 {
            Packing::Scaled { min: xmin, factor }
        } else if (1..=22).contains(&bits) {
            Packing::Truncated { bits: bits as u32 }
        } else if double {
            Packing::Float
        } else {
            Packing::Truncated { bits: 12 }
        };
        Self { double, packing }
    }

    /// Bytes per value.
    #[must_use]
    pub fn size(self) -> usize {
        match self.packing {
            Packing::Truncated { .. } => 3,
            Packing::Float | Packing::Scaled { .. } => 4,
        }
    }

    /// The element type read.
    #[must_use]
    pub fn leaf_type(self) -> LeafType {
        if self.double {
            LeafType::F64
        } else {
            LeafType::F32
        }
    }

    /// E.g. `f64 (Double32_t, 20 bits in [0, 100])`.
    #[must_use]
    pub fn describe(self) -> String {
        let class = if self.double {
            "Double32_t"
        } else {
            "Float16_t"
        };
        let how = match self.packing {
            Packing::Float => "as f32".to_string(),
            Packing::Truncated { bits } => format!("{bits} mantissa bits"),
            Packing::Scaled { min, factor } => format!("scaled from {min} by {factor}"),
        };
        format!("{} ({class}, {how})", self.leaf_type().name())
    }

    /// Decodes one value from exactly [`Self::size`] bytes.
    #[must_use]
    pub fn decode(self, b: &[u8]) -> f64 {
        match (self.packing, b) {
            (Packing::Float, &[a, b, c, d]) => f64::from(f32::from_be_bytes([a, b, c, d])),
            (Packing::Scaled { min, factor }, &[a, b, c, d]) => {
                let int = u32::from_be_bytes([a, b, c, d]);
                let v = f64::from(int) / factor + min;
                if self.double { v } else { f64::from(v as f32) }
            }
            (Packing::Truncated { bits }, &[exp, m0, m1]) => {
                let mantissa = u32::from(u16::from_be_bytes([m0, m1]));
                let bits = bits.min(22);
                let mut int = u32::from(exp) << 23;
                int |= (mantissa & ((1 << (bits + 1)) - 1)) << (23 - bits);
                let mut v = f32::from_bits(int);
                if (1 << (bits + 1)) & mantissa != 0 {
                    v = -v;
                }
                f64::from(v)
            }
            _ => f64::NAN,
        }
    }
}

/// `TStreamerElement::GetRange`: `(xmin, factor)` from the first bracket of `title` holding a
/// comma (an earlier bracket may be a dimension); without a range (`xmin >= xmax`) and with
/// fewer than 15 bits, xmin is `bits + 0.1`.
fn root_range(title: &str) -> (f64, f64) {
    let Some(inside) = title
        .split('[')
        .skip(1)
        .filter_map(|part| part.split_once(']').map(|(inside, _)| inside))
        .find(|inside| inside.contains(','))
    else {
        return (0.0, 0.0);
    };
    let parts: Vec<&str> = inside.split(',').collect();
    let mut bits = 32u32;
    if let Some(b) = parts.get(2) {
        bits = match b.trim().parse::<i64>() {
            Ok(b) if (2..=32).contains(&b) => b as u32,
            _ => 32,
        };
    }
    let mut xmin = range_number(parts[0]);
    let xmax = range_number(parts.get(1).copied().unwrap_or(""));
    let big = if bits < 32 {
        f64::from(1u32 << bits)
    } else {
        f64::from(u32::MAX)
    };
    let factor = if xmin < xmax {
        big / (xmax - xmin)
    } else {
        0.0
    };
    if xmin >= xmax && bits < 15 {
        xmin = f64::from(bits) + 0.1;
    }
    (xmin, factor)
}

/// A range bound as `GetRange` reads it: a number, or a multiple of pi.
fn range_number(text: &str) -> f64 {
    let s: String = text.to_lowercase().chars().filter(|c| *c != ' ').collect();
    if s.contains("pi") {
        let pi = std::f64::consts::PI;
        let v = if s.contains("2pi") || s.contains("2*pi") || s.contains("twopi") {
            2.0 * pi
        } else if s.contains("pi/2") {
            pi / 2.0
        } else if s.contains("pi/4") {
            pi / 4.0
        } else {
            pi
        };
        return if s.contains('-') { -v } else { v };
    }
    // sscanf("%lg"): the longest leading number.
    (1..=s.len())
        .rev()
        .find_map(|n| s.get(..n).and_then(|p| p.parse::<f64>().ok()))
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::float_cmp)]
    use super::*;

    #[test]
    fn ranges_follow_get_range() {
        let r = Real::from_title("d32r/d[0,100,20]", true);
        assert_eq!(
            r.packing,
            Packing::Scaled {
                min: 0.0,
                factor: f64::from(1u32 << 20) / 100.0
            }
        );
        // 0x45a2 = 17826 steps of 100 / 2^20 (ROOT wrote 1.7).
        assert_eq!(r.decode(&[0, 0, 0x45, 0xa2]), 17826.0 * 100.0 / 1_048_576.0);
        assert_eq!(
            Real::from_title("[0,0,14] energy", true).packing,
            Packing::Truncated { bits: 14 }
        );
        // Bits of 15 or more without a range: a plain float again.
        assert_eq!(Real::from_title("[0,0,20]", true).packing, Packing::Float);
        assert_eq!(
            Real::from_title("f16", false).packing,
            Packing::Truncated { bits: 12 }
        );
        assert_eq!(Real::from_title("x", true).packing, Packing::Float);
        // A dimension first, the range second.
        let r = Real::from_title("x[3][-pi,pi,16]", true);
        let Packing::Scaled { min, factor } = r.packing else {
            panic!("{r:?}")
        };
        assert_eq!(min, -std::f64::consts::PI);
        assert_eq!(factor, 65536.0 / (2.0 * std::f64::consts::PI));
        // Bits out of 2..=32 are 32.
        assert_eq!(root_range("[0,1,40]").1, f64::from(u32::MAX));
    }

    #[test]
    fn truncated_floats_decode_like_read_with_nbits() {
        let r = Real::from_title("f16", false);
        // ROOT wrote 0.3 as exponent 0x7d, mantissa 0x0333.
        assert_eq!(r.decode(&[0x7d, 0x03, 0x33]), f64::from(0.299_987_8_f32));
        // The sign sits above the mantissa bits.
        assert_eq!(r.decode(&[0x7d, 0x23, 0x33]), -f64::from(0.299_987_8_f32));
        assert!(r.decode(&[0x7d]).is_nan());
    }

    #[test]
    fn cpp_names_become_shapes() {
        assert_eq!(
            Shape::of_cpp("vector<vector<float> >"),
            Some(Shape::list(Shape::list(Shape::Num(LeafType::F32))))
        );
        assert_eq!(
            Shape::of_cpp("std::vector<std::string>"),
            Some(Shape::list(Shape::Text))
        );
        assert_eq!(Shape::of_cpp("map<int,int>"), None);
        assert_eq!(
            Shape::headed(Shape::list(Shape::Text)).describe(),
            "vector<string>"
        );
    }
}

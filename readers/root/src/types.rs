//! Element types and the bulk big-endian decoding of basket bytes.

use crate::error::{Error, Result};

/// The numeric type of a leaf's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeafType {
    /// `bool` (`/O`, TLeafO).
    Bool,
    /// `i8` (`/B`).
    I8,
    /// `u8` (`/b`).
    U8,
    /// `i16` (`/S`).
    I16,
    /// `u16` (`/s`).
    U16,
    /// `i32` (`/I`).
    I32,
    /// `u32` (`/i`).
    U32,
    /// `i64` (`/L`, `/G`).
    I64,
    /// `u64` (`/l`, `/g`).
    U64,
    /// `f32` (`/F`).
    F32,
    /// `f64` (`/D`).
    F64,
}

impl LeafType {
    /// The type of a basic streamer element code (`TStreamerElement::fType`, ROOT's
    /// `TVirtualStreamerInfo::EReadWrite`): 1 char, 2 short, 3 int, 4 long, 5 float, 6 counter
    /// (int), 8 double, 11 unsigned char, 12 unsigned short, 13 unsigned int, 14 unsigned long,
    /// 16 long long, 17 unsigned long long, 18 bool. `None` for everything else, including
    /// Double32_t (9) and Float16_t (19), whose bytes depend on a range in the class's streamer
    /// information.
    #[must_use]
    pub fn from_streamer_type(code: i32) -> Option<Self> {
        Some(match code {
            1 => Self::I8,
            2 => Self::I16,
            3 | 6 => Self::I32,
            4 | 16 => Self::I64,
            5 => Self::F32,
            8 => Self::F64,
            11 => Self::U8,
            12 => Self::U16,
            13 => Self::U32,
            14 | 17 => Self::U64,
            18 => Self::Bool,
            _ => return None,
        })
    }

    /// Bytes per element on disk.
    #[must_use]
    pub fn size(self) -> usize {
        match self {
            Self::Bool | Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::I64 | Self::U64 | Self::F64 => 8,
        }
    }

    /// Rust name of the type.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::I8 => "i8",
            Self::U8 => "u8",
            Self::I16 => "i16",
            Self::U16 => "u16",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::I64 => "i64",
            Self::U64 => "u64",
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    /// From a leaf class and its `fIsUnsigned` flag.
    #[must_use]
    pub fn from_leaf_class(class: &str, unsigned: bool) -> Option<Self> {
        Some(match (class, unsigned) {
            ("TLeafO", _) => Self::Bool,
            ("TLeafB", false) => Self::I8,
            ("TLeafB", true) => Self::U8,
            ("TLeafS", false) => Self::I16,
            ("TLeafS", true) => Self::U16,
            ("TLeafI", false) => Self::I32,
            ("TLeafI", true) => Self::U32,
            ("TLeafL" | "TLeafG", false) => Self::I64,
            ("TLeafL" | "TLeafG", true) => Self::U64,
            ("TLeafF", _) => Self::F32,
            ("TLeafD", _) => Self::F64,
            _ => return None,
        })
    }

    /// From the element type of a `vector<T>` class name.
    #[must_use]
    pub fn from_cpp(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "bool" | "Bool_t" => Self::Bool,
            "char" | "Char_t" | "signed char" | "int8_t" => Self::I8,
            "unsigned char" | "UChar_t" | "uint8_t" => Self::U8,
            "short" | "Short_t" | "int16_t" => Self::I16,
            "unsigned short" | "UShort_t" | "uint16_t" => Self::U16,
            "int" | "Int_t" | "int32_t" => Self::I32,
            "unsigned int" | "UInt_t" | "uint32_t" => Self::U32,
            "long" | "Long_t" | "Long64_t" | "long long" | "int64_t" => Self::I64,
            "unsigned long" | "ULong_t" | "ULong64_t" | "unsigned long long" | "uint64_t" => {
                Self::U64
            }
            "float" | "Float_t" => Self::F32,
            "double" | "Double_t" => Self::F64,
            _ => return None,
        })
    }
}

/// A numeric type a branch can be decoded into.
pub trait Element: Copy + Default + Send + Sync + std::fmt::Debug + 'static {
    /// The leaf type this Rust type reads.
    const TYPE: LeafType;

    /// Bytes per element on disk (`TYPE.size()`, as a constant so that hot loops divide by a
    /// known number instead of issuing a division).
    const SIZE: usize;

    /// Decodes `dst.len()` big-endian elements from `src` (exactly `dst.len() * size` bytes).
    fn decode_into(src: &[u8], dst: &mut [Self]);

    /// Appends the elements encoded in `src` (a multiple of the element size) to `dst`.
    fn extend_from_be(src: &[u8], dst: &mut Vec<Self>);

    /// Decodes exactly the first [`SHORT_RUN`] bytes of `src` into the first
    /// `SHORT_RUN / size` elements of `dst`, or returns `false` (doing nothing) when either
    /// is shorter. A fixed-length copy has no data-dependent loop to mispredict: decoders of
    /// short entries copy a whole run and let the next entry overwrite the excess.
    fn decode_short_run(src: &[u8], dst: &mut [Self]) -> bool;
}

/// Bytes decoded by [`Element::decode_short_run`].
pub const SHORT_RUN: usize = 32;

macro_rules! element {
    ($t:ty, $lt:ident, $n:literal) => {
        impl Element for $t {
            const TYPE: LeafType = LeafType::$lt;
            const SIZE: usize = $n;
            #[inline]
            fn decode_into(src: &[u8], dst: &mut [Self]) {
                let (chunks, _) = src.as_chunks::<$n>();
                for (d, c) in dst.iter_mut().zip(chunks) {
                    *d = <$t>::from_be_bytes(*c);
                }
            }
            #[inline]
            fn extend_from_be(src: &[u8], dst: &mut Vec<Self>) {
                let (chunks, _) = src.as_chunks::<$n>();
                dst.extend(chunks.iter().map(|c| <$t>::from_be_bytes(*c)));
            }
            #[inline]
            fn decode_short_run(src: &[u8], dst: &mut [Self]) -> bool {
                const K: usize = SHORT_RUN / $n;
                match (src.first_chunk::<SHORT_RUN>(), dst.first_chunk_mut::<K>()) {
                    (Some(s), Some(d)) => {
                        for (d, c) in d.iter_mut().zip(s.as_chunks::<$n>().0) {
                            *d = <$t>::from_be_bytes(*c);
                        }
                        true
                    }
                    _ => false,
                }
            }
        }
    };
}

element!(i8, I8, 1);
element!(u8, U8, 1);
element!(i16, I16, 2);
element!(u16, U16, 2);
element!(i32, I32, 4);
element!(u32, U32, 4);
element!(i64, I64, 8);
element!(u64, U64, 8);
element!(f32, F32, 4);
element!(f64, F64, 8);

impl Element for bool {
    const TYPE: LeafType = LeafType::Bool;
    const SIZE: usize = 1;
    fn decode_into(src: &[u8], dst: &mut [Self]) {
        for (d, &c) in dst.iter_mut().zip(src) {
            *d = c != 0;
        }
    }
    fn extend_from_be(src: &[u8], dst: &mut Vec<Self>) {
        dst.extend(src.iter().map(|&c| c != 0));
    }
    fn decode_short_run(src: &[u8], dst: &mut [Self]) -> bool {
        match (
            src.first_chunk::<SHORT_RUN>(),
            dst.first_chunk_mut::<SHORT_RUN>(),
        ) {
            (Some(s), Some(d)) => {
                for (d, &c) in d.iter_mut().zip(s) {
                    *d = c != 0;
                }
                true
            }
            _ => false,
        }
    }
}

pub(crate) fn check_type<T: Element>(branch: &str, actual: Option<LeafType>) -> Result<()> {
    let Some(actual) = actual else {
        return Err(Error::TypeMismatch {
            branch: branch.to_string(),
            actual: "objects",
            requested: T::TYPE.name(),
        });
    };
    if T::TYPE == actual {
        Ok(())
    } else {
        Err(Error::TypeMismatch {
            branch: branch.to_string(),
            actual: actual.name(),
            requested: T::TYPE.name(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;

    #[test]
    fn element_sizes_match_leaf_types() {
        fn check<T: Element>() {
            assert_eq!(T::SIZE, T::TYPE.size(), "{}", T::TYPE.name());
        }
        check::<bool>();
        check::<i8>();
        check::<u8>();
        check::<i16>();
        check::<u16>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u64>();
        check::<f32>();
        check::<f64>();
    }

    #[test]
    fn decodes_big_endian_in_bulk() {
        let src = [0x3f, 0xc0, 0, 0, 0x40, 0x20, 0, 0];
        let mut out = Vec::new();
        f32::extend_from_be(&src, &mut out);
        assert_eq!(out, vec![1.5, 2.5]);
        let mut v = vec![0i16; 2];
        i16::decode_into(&[0xff, 0xfe, 0x00, 0x07], &mut v);
        assert_eq!(v, vec![-2, 7]);
        let mut b = Vec::new();
        bool::extend_from_be(&[0, 1, 2], &mut b);
        assert_eq!(b, vec![false, true, true]);
    }
}

//! Logical data types and column encodings, with their permanent wire codes.
//!
//! The integer codes below are written into every MATHLDBT message. They are
//! part of the format and must never change; `tests/codes.rs` pins them.

use std::fmt;

/// The logical type of a column.
///
/// The discriminant is the type's permanent wire code (`type_id` in
/// `SPEC.md`). Code `0` is reserved and never valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DataType {
    /// Boolean, bit-packed on the wire.
    Bool = 1,
    /// Signed 32-bit integer.
    I32 = 2,
    /// Signed 64-bit integer.
    I64 = 3,
    /// IEEE 754 binary32, carried bit-exactly.
    F32 = 4,
    /// IEEE 754 binary64, carried bit-exactly.
    F64 = 5,
    /// UTF-8 text.
    Utf8 = 6,
    /// Arbitrary bytes.
    Binary = 7,
    /// JSON document stored as UTF-8 text (as PostgreSQL `jsonb::text`).
    /// The codec checks UTF-8 only, not JSON syntax.
    JsonbText = 8,
    /// Microseconds since 1970-01-01T00:00:00Z, as a signed 64-bit integer.
    TimestampTzMicros = 9,
    /// Days since 1970-01-01, as a signed 32-bit integer.
    Date32 = 10,
}

impl DataType {
    /// Every data type, in code order.
    pub const ALL: [DataType; 10] = [
        DataType::Bool,
        DataType::I32,
        DataType::I64,
        DataType::F32,
        DataType::F64,
        DataType::Utf8,
        DataType::Binary,
        DataType::JsonbText,
        DataType::TimestampTzMicros,
        DataType::Date32,
    ];

    /// The permanent wire code of this type.
    #[must_use]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The type with wire code `code`, if any.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            1 => DataType::Bool,
            2 => DataType::I32,
            3 => DataType::I64,
            4 => DataType::F32,
            5 => DataType::F64,
            6 => DataType::Utf8,
            7 => DataType::Binary,
            8 => DataType::JsonbText,
            9 => DataType::TimestampTzMicros,
            10 => DataType::Date32,
            _ => return None,
        })
    }

    /// Width in bytes of one value for fixed-width types (`Bool` excluded:
    /// it is bit-packed), `None` for `Bool` and the variable-length types.
    #[must_use]
    pub const fn fixed_width(self) -> Option<usize> {
        match self {
            DataType::I32 | DataType::F32 | DataType::Date32 => Some(4),
            DataType::I64 | DataType::F64 | DataType::TimestampTzMicros => Some(8),
            DataType::Bool | DataType::Utf8 | DataType::Binary | DataType::JsonbText => None,
        }
    }

    /// Whether values are variable-length (offsets + bytes).
    #[must_use]
    pub const fn is_var_len(self) -> bool {
        matches!(
            self,
            DataType::Utf8 | DataType::Binary | DataType::JsonbText
        )
    }

    /// Whether values must be valid UTF-8.
    #[must_use]
    pub const fn is_text(self) -> bool {
        matches!(self, DataType::Utf8 | DataType::JsonbText)
    }

    /// The stable lower-case name used in SPEC.md and tool output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::I32 => "i32",
            DataType::I64 => "i64",
            DataType::F32 => "f32",
            DataType::F64 => "f64",
            DataType::Utf8 => "utf8",
            DataType::Binary => "binary",
            DataType::JsonbText => "jsonb_text",
            DataType::TimestampTzMicros => "timestamptz_micros",
            DataType::Date32 => "date32",
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// How one column's values are laid out on the wire.
///
/// The discriminant is the encoding's permanent wire code (`encoding_id` in
/// `SPEC.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Encoding {
    /// Fixed-width little-endian values, bit-packed booleans, or
    /// offsets + bytes for variable-length types. Valid for every type.
    Plain = 0,
    /// A dictionary of distinct strings in first-appearance order plus one
    /// little-endian index per row. Valid for `Utf8` and `JsonbText`.
    DictUtf8 = 1,
    /// Zigzag LEB128 varints of successive differences. Valid for `I64` and
    /// `TimestampTzMicros` columns without nulls.
    DeltaVarintI64 = 2,
}

impl Encoding {
    /// Every encoding, in code order.
    pub const ALL: [Encoding; 3] = [
        Encoding::Plain,
        Encoding::DictUtf8,
        Encoding::DeltaVarintI64,
    ];

    /// The permanent wire code of this encoding.
    #[must_use]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The encoding with wire code `code`, if any.
    #[must_use]
    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Encoding::Plain,
            1 => Encoding::DictUtf8,
            2 => Encoding::DeltaVarintI64,
            _ => return None,
        })
    }

    /// Whether this encoding may be used for a column of type `data_type`
    /// (ignoring the no-nulls rule of [`Encoding::DeltaVarintI64`]).
    #[must_use]
    pub const fn supports(self, data_type: DataType) -> bool {
        match self {
            Encoding::Plain => true,
            Encoding::DictUtf8 => data_type.is_text(),
            Encoding::DeltaVarintI64 => {
                matches!(data_type, DataType::I64 | DataType::TimestampTzMicros)
            }
        }
    }

    /// The stable name used in SPEC.md and tool output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Plain => "plain",
            Encoding::DictUtf8 => "dict_utf8",
            Encoding::DeltaVarintI64 => "delta_varint_i64",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

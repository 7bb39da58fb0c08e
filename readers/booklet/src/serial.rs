//! Serializer codes (header offsets 29 and 31) and the codecs this crate implements exactly.
//!
//! The code is the 1-based position of the serializer in Python booklet's `serial_dict`; it is a
//! permanent format constant. `bytes`, `None` and `str` are exact; `json` reproduces Python's
//! `json.dumps(obj).encode()` byte for byte (separators `", "` and `": "`, ASCII escapes, Python
//! float repr) through [`JsonValue`]; the integer codes decode to integers. Everything else
//! (pickle, zstd, numpy, pandas, ...) is surfaced as opaque bytes.

use std::fmt::Write as _;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::{Error, Result};

/// A serializer code of the header. Discriminants are the permanent on-disk codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
#[non_exhaustive]
pub enum Serializer {
    /// 0: a custom Python class whose identity is not stored.
    Custom = 0,
    /// 1: Python `None`: raw bytes.
    None = 1,
    /// 2: UTF-8 text.
    Str = 2,
    /// 3: pickle protocol 5 (opaque here).
    Pickle = 3,
    /// 4: stdlib `json.dumps` then UTF-8.
    Json = 4,
    /// 5: orjson (compact JSON).
    Orjson = 5,
    /// 6: 1-byte unsigned.
    Uint1 = 6,
    /// 7: 1-byte signed.
    Int1 = 7,
    /// 8: 2-byte unsigned.
    Uint2 = 8,
    /// 9: 2-byte signed.
    Int2 = 9,
    /// 10: 4-byte unsigned.
    Uint4 = 10,
    /// 11: 4-byte signed.
    Int4 = 11,
    /// 12: 5-byte unsigned.
    Uint5 = 12,
    /// 13: 5-byte signed.
    Int5 = 13,
    /// 14: 8-byte unsigned.
    Uint8 = 14,
    /// 15: 8-byte signed.
    Int8 = 15,
    /// 16..=31: zstd, numpy, pandas, geo, msgpack variants (opaque here).
    PickleZstd = 16,
    /// 17
    OrjsonZstd = 17,
    /// 18
    NumpyInt1 = 18,
    /// 19
    NumpyInt2 = 19,
    /// 20
    NumpyInt4 = 20,
    /// 21
    NumpyInt8 = 21,
    /// 22
    NumpyInt2Zstd = 22,
    /// 23
    NumpyInt4Zstd = 23,
    /// 24
    NumpyInt8Zstd = 24,
    /// 25
    PdZstd = 25,
    /// 26
    GpdZstd = 26,
    /// 27
    Zstd = 27,
    /// 28
    Wkb = 28,
    /// 29
    WkbZstd = 29,
    /// 30
    Msgpack = 30,
    /// 31
    MsgpackZstd = 31,
    /// 32: raw bytes (same codec as 1).
    Bytes = 32,
}

const ALL: [Serializer; 33] = {
    use Serializer as S;
    [
        S::Custom,
        S::None,
        S::Str,
        S::Pickle,
        S::Json,
        S::Orjson,
        S::Uint1,
        S::Int1,
        S::Uint2,
        S::Int2,
        S::Uint4,
        S::Int4,
        S::Uint5,
        S::Int5,
        S::Uint8,
        S::Int8,
        S::PickleZstd,
        S::OrjsonZstd,
        S::NumpyInt1,
        S::NumpyInt2,
        S::NumpyInt4,
        S::NumpyInt8,
        S::NumpyInt2Zstd,
        S::NumpyInt4Zstd,
        S::NumpyInt8Zstd,
        S::PdZstd,
        S::GpdZstd,
        S::Zstd,
        S::Wkb,
        S::WkbZstd,
        S::Msgpack,
        S::MsgpackZstd,
        S::Bytes,
    ]
};

const NAMES: [&str; 33] = [
    "custom",
    "None",
    "str",
    "pickle",
    "json",
    "orjson",
    "uint1",
    "int1",
    "uint2",
    "int2",
    "uint4",
    "int4",
    "uint5",
    "int5",
    "uint8",
    "int8",
    "pickle_zstd",
    "orjson_zstd",
    "numpy_int1",
    "numpy_int2",
    "numpy_int4",
    "numpy_int8",
    "numpy_int2_zstd",
    "numpy_int4_zstd",
    "numpy_int8_zstd",
    "pd_zstd",
    "gpd_zstd",
    "zstd",
    "wkb",
    "wkb_zstd",
    "msgpack",
    "msgpack_zstd",
    "bytes",
];

/// A decoded key or value.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// Raw bytes (serializers `None` and `bytes`).
    Bytes(Vec<u8>),
    /// Text (serializer `str`).
    Str(String),
    /// JSON (serializers `json` and `orjson`).
    Json(JsonValue),
    /// An integer serializer.
    Int(i64),
    /// A serializer this crate cannot decode; the stored bytes.
    Opaque(Vec<u8>),
}

impl Serializer {
    /// All serializers, in code order (index == code).
    pub const ALL: [Serializer; 33] = ALL;

    /// The permanent on-disk code.
    #[must_use]
    pub fn code(self) -> u16 {
        self as u16
    }

    /// The serializer with this code.
    #[must_use]
    pub fn from_code(code: u16) -> Option<Self> {
        ALL.get(usize::from(code)).copied()
    }

    /// Python booklet's name for it (`None` for code 1).
    #[must_use]
    pub fn name(self) -> &'static str {
        NAMES.get(usize::from(self.code())).copied().unwrap_or("?")
    }

    /// The serializer with Python booklet's name (`"None"` or `""` for code 1).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        if name.is_empty() {
            return Some(Serializer::None);
        }
        NAMES
            .iter()
            .position(|n| *n == name)
            .and_then(|i| ALL.get(i).copied())
    }

    /// Whether [`Serializer::decode`] gives a real value rather than [`Decoded::Opaque`].
    #[must_use]
    pub fn is_decodable(self) -> bool {
        matches!(
            self,
            Serializer::None
                | Serializer::Bytes
                | Serializer::Str
                | Serializer::Json
                | Serializer::Orjson
        ) || self.int_width().is_some()
    }

    fn int_width(self) -> Option<(usize, bool)> {
        use Serializer as S;
        Some(match self {
            S::Uint1 => (1, false),
            S::Int1 => (1, true),
            S::Uint2 => (2, false),
            S::Int2 => (2, true),
            S::Uint4 => (4, false),
            S::Int4 => (4, true),
            S::Uint5 => (5, false),
            S::Int5 => (5, true),
            S::Uint8 => (8, false),
            S::Int8 => (8, true),
            _ => return None,
        })
    }

    /// Decode stored bytes.
    pub fn decode(self, bytes: &[u8]) -> Result<Decoded> {
        let err = |reason: String| Error::Decode {
            serializer: self.name(),
            reason,
        };
        match self {
            Serializer::None | Serializer::Bytes => Ok(Decoded::Bytes(bytes.to_vec())),
            Serializer::Str => decode_str(bytes).map(|s| Decoded::Str(s.to_owned())),
            Serializer::Json | Serializer::Orjson => {
                JsonValue::parse(bytes).map(Decoded::Json).map_err(err)
            }
            s => match s.int_width() {
                Some((w, signed)) => {
                    if bytes.len() != w {
                        return Err(err(format!("{} bytes, expected {w}", bytes.len())));
                    }
                    let mut b = [0u8; 8];
                    b[..w].copy_from_slice(bytes);
                    let mut v = i64::from_le_bytes(b);
                    if signed && w < 8 {
                        let shift = 64 - 8 * w as u32;
                        v = (v << shift) >> shift;
                    }
                    Ok(Decoded::Int(v))
                }
                None => Ok(Decoded::Opaque(bytes.to_vec())),
            },
        }
    }
}

/// Stored bytes of the `str` serializer as text: a UTF-8 check, as Python's `bytes.decode()`.
///
/// ASCII text, the common case, takes a vector OR-fold check ([`crate::text::ascii_str`]);
/// anything else a SIMD UTF-8 validation (`simdutf8`). Random lookups are bound by cache
/// misses, and the fewer instructions the check costs, the sooner the CPU can start the next
/// lookup's loads. Invalid text is reported with the standard library's message.
#[inline]
pub fn decode_str(bytes: &[u8]) -> Result<&str> {
    match crate::text::ascii_str(bytes) {
        Some(text) => Ok(text),
        None => decode_utf8(bytes),
    }
}

/// [`decode_str`] for text that is not all ASCII, out of line.
#[inline(never)]
fn decode_utf8(bytes: &[u8]) -> Result<&str> {
    simdutf8::basic::from_utf8(bytes).or_else(|_| {
        std::str::from_utf8(bytes).map_err(|e| Error::Decode {
            serializer: Serializer::Str.name(),
            reason: e.to_string(),
        })
    })
}

/// A JSON value that keeps object key order, so it can be re-encoded exactly as Python does.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object, in stored key order.
    Object(Vec<(String, JsonValue)>),
}

impl JsonValue {
    /// Parse JSON text.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }

    /// Encode as Python's `json.dumps(obj)` (default arguments) does.
    #[must_use]
    pub fn to_python_json(&self) -> String {
        let mut s = String::new();
        self.write_py(&mut s, ", ", ": ");
        s
    }

    /// Encode compactly (`,` and `:` separators, ASCII escapes).
    #[must_use]
    pub fn to_compact_json(&self) -> String {
        let mut s = String::new();
        self.write_py(&mut s, ",", ":");
        s
    }

    fn write_py(&self, out: &mut String, item_sep: &str, key_sep: &str) {
        match self {
            JsonValue::Null => out.push_str("null"),
            JsonValue::Bool(true) => out.push_str("true"),
            JsonValue::Bool(false) => out.push_str("false"),
            JsonValue::Int(i) => {
                let _ = write!(out, "{i}");
            }
            JsonValue::Float(f) => python_float_repr(*f, out),
            JsonValue::Str(s) => write_py_str(s, out),
            JsonValue::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(item_sep);
                    }
                    v.write_py(out, item_sep, key_sep);
                }
                out.push(']');
            }
            JsonValue::Object(o) => {
                out.push('{');
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push_str(item_sep);
                    }
                    write_py_str(k, out);
                    out.push_str(key_sep);
                    v.write_py(out, item_sep, key_sep);
                }
                out.push('}');
            }
        }
    }
}

/// Python's `json` string encoding with `ensure_ascii=True`.
fn write_py_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// Python's `float.__repr__`: shortest round-trip digits, scientific notation when the
/// decimal exponent is below -4 or at least 16, at least two exponent digits.
fn python_float_repr(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde[-]x".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if f.is_sign_negative() {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else if exp + 1 >= n {
            out.push_str(&digits);
            for _ in 0..(exp + 1 - n) {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            let (a, b) = digits.split_at((exp + 1) as usize);
            out.push_str(a);
            out.push('.');
            out.push_str(b);
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsonValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Null)
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Int(i128::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Int(i128::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<JsonValue, E> {
                Ok(JsonValue::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<JsonValue, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(JsonValue::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<JsonValue, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, JsonValue>()? {
                    v.push((k, x));
                }
                Ok(JsonValue::Object(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn codes_are_pinned() {
        let pinned = [
            (Serializer::None, 1),
            (Serializer::Str, 2),
            (Serializer::Json, 4),
            (Serializer::Orjson, 5),
            (Serializer::Uint8, 14),
            (Serializer::Zstd, 27),
            (Serializer::Msgpack, 30),
            (Serializer::Bytes, 32),
        ];
        for (i, (s, c)) in pinned.into_iter().enumerate() {
            assert_eq!(s.code(), c, "case {i}");
            assert_eq!(Serializer::from_code(c), Some(s), "case {i}");
        }
        for (i, s) in Serializer::ALL.iter().enumerate() {
            assert_eq!(usize::from(s.code()), i);
            assert_eq!(Serializer::from_name(s.name()), Some(*s));
        }
        assert_eq!(Serializer::from_code(33), None);
    }

    #[test]
    fn python_float_repr_cases() {
        let cases = [
            (3.25, "3.25"),
            (1e-7, "1e-07"),
            (1.5e16, "1.5e+16"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0, "2.0"),
            (-0.5, "-0.5"),
            (0.0001, "0.0001"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123.456, "123.456"),
            (-0.0, "-0.0"),
            (1e100, "1e+100"),
            (5e-324, "5e-324"),
        ];
        for (i, (f, want)) in cases.into_iter().enumerate() {
            let mut s = String::new();
            python_float_repr(f, &mut s);
            assert_eq!(s, want, "case {i}");
        }
    }

    #[test]
    fn python_json_layout() {
        let v = JsonValue::parse(br#"{"b": 1, "a": [true, null, "\u00e9\ud83d\ude00\u007f"]}"#)
            .unwrap();
        assert_eq!(
            v.to_python_json(),
            r#"{"b": 1, "a": [true, null, "\u00e9\ud83d\ude00\u007f"]}"#
        );
        assert_eq!(
            v.to_compact_json(),
            r#"{"b":1,"a":[true,null,"\u00e9\ud83d\ude00\u007f"]}"#
        );
    }

    #[test]
    fn int_codecs() {
        assert_eq!(
            Serializer::Int2.decode(&[0xfe, 0xff]).unwrap(),
            Decoded::Int(-2)
        );
        assert_eq!(
            Serializer::Uint2.decode(&[0xfe, 0xff]).unwrap(),
            Decoded::Int(65534)
        );
        assert!(Serializer::Int4.decode(&[1]).is_err());
    }
}

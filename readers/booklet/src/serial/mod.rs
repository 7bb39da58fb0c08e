//! Serializers: the codes of header offsets 29 and 31, and typed codecs between stored bytes
//! and plain Python [`Value`]s.
//!
//! The code is the 1-based position of the serializer in Python booklet's `serial_dict`; it is a
//! permanent format constant. [`Serializer::decode`] and [`Serializer::encode`] cover:
//!
//! | serializer | stored bytes | [`Value`] |
//! |---|---|---|
//! | `None`, `bytes` | as given | `Bytes` |
//! | `str` | UTF-8 | `Str` |
//! | `json` | `json.dumps(v).encode()`, byte for byte ([`JsonValue::to_python_json`]) | JSON values, dicts with str keys |
//! | `orjson` | `orjson.dumps(v, OPT_NON_STR_KEYS)`, byte for byte | as `json` |
//! | `uint1` .. `int8` | little-endian integers | `Int` |
//! | `numpy_int1` .. `numpy_int8` | `array.astype('iN').tobytes()`: little-endian signed integers one after the other | `List` of `Int` (a 1-D array; what `np.frombuffer` returns) |
//! | `numpy_int2_zstd` .. `numpy_int8_zstd` | zstd level 1 of the same | as above |
//! | `pickle` | protocol 5 as CPython writes it (module `pickle`) | plain values: None, bool, int, float, str, bytes, list, tuple, dict |
//! | `msgpack` | `msgpack.dumps(v)` (module `msgpack`, through `rmpv`) | as pickle, arrays as lists, str/bytes map keys |
//! | `zstd` | zstd level 1 of raw bytes | `Bytes` |
//! | `pickle_zstd`, `orjson_zstd`, `msgpack_zstd` | zstd level 1 of the inner serializer | as the inner one |
//!
//! Encoding a numpy serializer takes a `List` or `Tuple` of `Int`s, each within the width (numpy's
//! `astype` would wrap an integer out of range silently: here it is an [`Error::Encode`]).
//!
//! Not supported, with [`Error::UnsupportedSerializer`]: `pd_zstd`,
//! `gpd_zstd`, `wkb`, `wkb_zstd`, and code 0 (a custom class, whose identity the file does not
//! store). Their stored bytes are still readable through the byte API.
//!
//! Decoding is bounded ([`Limits`]): a value may not expand beyond `max_bytes` or 40 times its
//! stored length, whichever is larger (zstd output and pickle memo copies count); nesting is
//! capped per format; lengths are checked before anything is copied.

mod budget;
mod float_repr;
mod json;
mod json_parse;
mod msgpack;
mod pickle;
mod value;

use std::io::Read as _;

pub use json_parse::JsonValue;
pub use value::Value;

use crate::error::{Error, Result};
pub(crate) use budget::Budget;

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
    /// 3: pickle protocol 5 (plain values).
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
    /// 16: zstd (level 1) of pickle.
    PickleZstd = 16,
    /// 17: zstd (level 1) of orjson.
    OrjsonZstd = 17,
    /// 18..=24: numpy integer arrays (1-D, native little-endian), optionally zstd.
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
    /// 25: pandas DataFrame as Feather (not supported here).
    PdZstd = 25,
    /// 26: geopandas GeoDataFrame as Feather (not supported here).
    GpdZstd = 26,
    /// 27: zstd (level 1) of raw bytes.
    Zstd = 27,
    /// 28: shapely geometry as WKB (not supported here).
    Wkb = 28,
    /// 29: zstd of WKB (not supported here).
    WkbZstd = 29,
    /// 30: msgpack.
    Msgpack = 30,
    /// 31: zstd (level 1) of msgpack.
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

    /// Whether [`Serializer::decode`] and [`Serializer::encode`] handle it (see the module
    /// docs); the others give [`Error::UnsupportedSerializer`].
    #[must_use]
    pub fn is_supported(self) -> bool {
        use Serializer as S;
        matches!(
            self,
            S::None
                | S::Bytes
                | S::Str
                | S::Json
                | S::Orjson
                | S::Pickle
                | S::PickleZstd
                | S::OrjsonZstd
                | S::Zstd
                | S::Msgpack
                | S::MsgpackZstd
        ) || self.int_width().is_some()
            || self.numpy_width().is_some()
    }

    /// The element width of a numpy serializer, and whether it is zstd-compressed.
    fn numpy_width(self) -> Option<(usize, bool)> {
        use Serializer as S;
        Some(match self {
            S::NumpyInt1 => (1, false),
            S::NumpyInt2 => (2, false),
            S::NumpyInt4 => (4, false),
            S::NumpyInt8 => (8, false),
            S::NumpyInt2Zstd => (2, true),
            S::NumpyInt4Zstd => (4, true),
            S::NumpyInt8Zstd => (8, true),
            _ => return None,
        })
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

    /// The error for a serializer without a typed codec, in the role `role` ("key" or
    /// "value").
    pub(crate) fn unsupported(self, role: &'static str) -> Error {
        Error::UnsupportedSerializer {
            role,
            code: self.code(),
            name: self.name().to_owned(),
        }
    }

    /// Decode stored bytes with the default [`Limits`].
    pub fn decode(self, bytes: &[u8]) -> Result<Value> {
        self.decode_with(bytes, &Limits::default())
    }

    /// Decode stored bytes; the decoded value may not cost more than `limits` allows
    /// ([`Error::DecodeLimit`]). Corrupt bytes give [`Error::Decode`], a serializer without a
    /// codec [`Error::UnsupportedSerializer`].
    pub fn decode_with(self, bytes: &[u8], limits: &Limits) -> Result<Value> {
        use Serializer as S;
        let mut budget = limits.budget(bytes.len());
        match self {
            S::None | S::Bytes => {
                budget.charge(self.name(), bytes.len())?;
                Ok(Value::Bytes(bytes.to_vec()))
            }
            S::Str => decode_str(bytes).map(|s| Value::Str(s.to_owned())),
            S::Json | S::Orjson => decode_json(self.name(), bytes, &mut budget),
            S::Pickle => pickle::decode(bytes, &mut budget),
            S::Msgpack => msgpack::decode(bytes, &mut budget),
            S::Zstd => unzstd(self.name(), bytes, &mut budget).map(Value::Bytes),
            S::PickleZstd => pickle::decode(&unzstd(self.name(), bytes, &mut budget)?, &mut budget),
            S::OrjsonZstd => decode_json(
                self.name(),
                &unzstd(self.name(), bytes, &mut budget)?,
                &mut budget,
            ),
            S::MsgpackZstd => {
                msgpack::decode(&unzstd(self.name(), bytes, &mut budget)?, &mut budget)
            }
            s => match (s.int_width(), s.numpy_width()) {
                (Some((w, signed)), _) => decode_int(s, bytes, w, signed),
                (_, Some((w, false))) => decode_numpy(s, bytes, w, &mut budget),
                (_, Some((w, true))) => {
                    decode_numpy(s, &unzstd(s.name(), bytes, &mut budget)?, w, &mut budget)
                }
                _ => Err(s.unsupported("")),
            },
        }
    }

    /// Encode a value into the bytes Python booklet stores for it (byte for byte what Python
    /// writes for keys: see the module docs). A value the serializer cannot hold (bytes in
    /// JSON, an int beyond msgpack's range, a `str` for the `bytes` serializer, ...) gives
    /// [`Error::Encode`].
    pub fn encode(self, v: &Value) -> Result<Vec<u8>> {
        use Serializer as S;
        let wrong = |want: &str| Error::Encode {
            serializer: self.name(),
            reason: format!("expects {want}, got {}", v.type_name()),
        };
        let json = |enc: json::Encoder| {
            v.to_json(enc).map_err(|reason| Error::Encode {
                serializer: self.name(),
                reason,
            })
        };
        match self {
            S::None | S::Bytes => v
                .as_bytes()
                .map(<[u8]>::to_vec)
                .ok_or_else(|| wrong("bytes")),
            S::Str => v
                .as_str()
                .map(|s| s.as_bytes().to_vec())
                .ok_or_else(|| wrong("str")),
            S::Json => Ok(json(json::Encoder::Json)?.to_python_json().into_bytes()),
            S::Orjson => Ok(json(json::Encoder::Orjson)?.to_orjson().into_bytes()),
            S::Pickle => pickle::encode(v),
            S::Msgpack => msgpack::encode(v),
            S::Zstd => zstd_level1(self.name(), v.as_bytes().ok_or_else(|| wrong("bytes"))?),
            S::PickleZstd => zstd_level1(self.name(), &pickle::encode(v)?),
            S::OrjsonZstd => zstd_level1(
                self.name(),
                json(json::Encoder::Orjson)?.to_orjson().as_bytes(),
            ),
            S::MsgpackZstd => zstd_level1(self.name(), &msgpack::encode(v)?),
            s => match (s.int_width(), s.numpy_width()) {
                (Some((w, signed)), _) => {
                    let i = v.as_int().ok_or_else(|| wrong("int"))?;
                    encode_int(s, i, w, signed)
                }
                (_, Some((w, zstd))) => {
                    let raw = encode_numpy(s, v, w)?;
                    if zstd {
                        zstd_level1(s.name(), &raw)
                    } else {
                        Ok(raw)
                    }
                }
                _ => Err(s.unsupported("")),
            },
        }
    }
}

/// How much a decoded value may cost: at least `max_bytes`, and 40 times the stored length for
/// larger values (a tree of plain values takes up to about 32 bytes per stored byte). The cost
/// counts every decoded node at `size_of::<Value>()` plus its text or bytes, and the output of
/// zstd; a pickle whose memo references repeat one object many times is charged for every copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The floor of the budget in bytes (default [`Limits::DEFAULT_MAX_BYTES`]).
    pub max_bytes: usize,
}

impl Limits {
    /// 256 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 256 << 20;
    /// The budget per stored byte, for values whose stored bytes are large.
    pub const PER_STORED_BYTE: usize = 40;

    /// The budget of one value of `stored_len` bytes.
    #[must_use]
    pub fn budget_bytes(&self, stored_len: usize) -> usize {
        self.max_bytes
            .max(stored_len.saturating_mul(Self::PER_STORED_BYTE))
    }

    fn budget(&self, stored_len: usize) -> Budget {
        let limit = self.budget_bytes(stored_len);
        Budget { left: limit, limit }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: Self::DEFAULT_MAX_BYTES,
        }
    }
}

fn decode_json(name: &'static str, bytes: &[u8], budget: &mut Budget) -> Result<Value> {
    // The parsed tree is linear in its input (and nests at most 128 deep).
    budget.charge(name, bytes.len().saturating_mul(2))?;
    JsonValue::parse(bytes)
        .map(JsonValue::into_value)
        .map_err(|reason| Error::Decode {
            serializer: name,
            reason,
        })
}

fn decode_int(s: Serializer, bytes: &[u8], w: usize, signed: bool) -> Result<Value> {
    if bytes.len() != w {
        return Err(Error::Decode {
            serializer: s.name(),
            reason: format!("{} bytes, expected {w}", bytes.len()),
        });
    }
    let mut b = [0u8; 16];
    let fill = if signed && bytes.last().is_some_and(|&x| x & 0x80 != 0) {
        0xff
    } else {
        0
    };
    b.fill(fill);
    if let Some(dst) = b.get_mut(..w) {
        dst.copy_from_slice(bytes);
    }
    Ok(Value::Int(i128::from_le_bytes(b)))
}

fn encode_int(s: Serializer, i: i128, w: usize, signed: bool) -> Result<Vec<u8>> {
    let bits = 8 * w as u32;
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if i < lo || i > hi {
        return Err(Error::Encode {
            serializer: s.name(),
            reason: format!("{i} is outside {lo}..={hi}"),
        });
    }
    Ok(i.to_le_bytes().get(..w).unwrap_or_default().to_vec())
}

/// A numpy array's bytes (`np.frombuffer(bytes, 'iW')`) as a list of its integers.
fn decode_numpy(s: Serializer, bytes: &[u8], w: usize, budget: &mut Budget) -> Result<Value> {
    let (items, rest) = (bytes.len() / w, bytes.len() % w);
    if rest != 0 {
        return Err(Error::Decode {
            serializer: s.name(),
            reason: format!("{} bytes are not whole {w}-byte integers", bytes.len()),
        });
    }
    budget.charge(s.name(), items.saturating_mul(std::mem::size_of::<Value>()))?;
    bytes
        .chunks_exact(w)
        .map(|c| decode_int(s, c, w, true))
        .collect::<Result<Vec<_>>>()
        .map(Value::List)
}

/// A list (or tuple) of integers as the bytes of `np.array(v).astype('iW').tobytes()`.
fn encode_numpy(s: Serializer, v: &Value, w: usize) -> Result<Vec<u8>> {
    let (Value::List(items) | Value::Tuple(items)) = v else {
        return Err(Error::Encode {
            serializer: s.name(),
            reason: format!("expects a list of int (a 1-D array), got {}", v.type_name()),
        });
    };
    let mut out = Vec::with_capacity(items.len().saturating_mul(w));
    for item in items {
        let i = item.as_int().ok_or_else(|| Error::Encode {
            serializer: s.name(),
            reason: format!("expects a list of int, holds a {}", item.type_name()),
        })?;
        out.extend(encode_int(s, i, w, true)?);
    }
    Ok(out)
}

/// zstd level 1, as Python booklet's `zstd.compress(data, 1)`: one frame with its content size
/// (which Python's `zstd.decompress` needs).
fn zstd_level1(name: &'static str, data: &[u8]) -> Result<Vec<u8>> {
    zstd::bulk::compress(data, 1).map_err(|e| Error::Encode {
        serializer: name,
        reason: e.to_string(),
    })
}

/// Decompress zstd frames within the budget: a frame that declares more content than the
/// budget is refused before anything is allocated, and the output is cut off one byte past it
/// otherwise (frames need not declare their size).
fn unzstd(name: &'static str, data: &[u8], budget: &mut Budget) -> Result<Vec<u8>> {
    let bad = |reason: String| Error::Decode {
        serializer: name,
        reason,
    };
    let room = budget.left;
    if let Ok(Some(declared)) = zstd::zstd_safe::get_frame_content_size(data)
        && declared > room as u64
    {
        return Err(Error::DecodeLimit {
            serializer: name,
            limit: budget.limit,
        });
    }
    let mut dec = zstd::stream::read::Decoder::with_buffer(data).map_err(|e| bad(e.to_string()))?;
    // A frame's window is allocated up front: keep it within the budget (and zstd's default).
    let window_log = usize::BITS - room.max(1 << 10).leading_zeros();
    dec.window_log_max(window_log.min(27))
        .map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    dec.take(room as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| bad(format!("zstd: {e}")))?;
    budget.charge(name, out.len())?;
    Ok(out)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests;

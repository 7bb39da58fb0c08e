//! MessagePack (the `msgpack` and `msgpack_zstd` serializers) through `rmpv`.
//!
//! Python booklet calls `msgpack.dumps(obj)` and `msgpack.loads(data)` with their defaults:
//! `str` as the str family and `bytes` as bin (`use_bin_type`), the smallest integer format
//! (unsigned formats for non-negative ints), floats as float 64, tuples as arrays, arrays
//! decoded as lists, map keys restricted to `str` and `bytes` on load (`strict_map_key`), and
//! trailing bytes refused. `rmpv` writes the same bytes as the Python packer for every value
//! that round-trips, so msgpack keys are found by their hash.
//!
//! Decoding is bounded: `rmpv` never preallocates from a length field (arrays and maps grow as
//! items are read, binary buffers start at 64 KiB at most), nesting is capped at [`MAX_DEPTH`],
//! and the converted tree is charged to the decode budget.

use rmpv::{Integer, Value as Mp};

use super::Value;
use super::budget::Budget;
use crate::error::{Error, Result};

/// Deepest nesting decoded or encoded (Python's packer allows 511 levels; 256 keeps the
/// recursive walks over a decoded value within a 2 MiB thread stack, as for pickle).
pub const MAX_DEPTH: usize = 256;

const NAME: &str = "msgpack";

fn err(reason: impl Into<String>) -> Error {
    Error::Decode {
        serializer: NAME,
        reason: reason.into(),
    }
}

fn encode_err(reason: impl Into<String>) -> Error {
    Error::Encode {
        serializer: NAME,
        reason: reason.into(),
    }
}

/// Decode one msgpack object that spans all of `data`.
pub(super) fn decode(data: &[u8], budget: &mut Budget) -> Result<Value> {
    // The input itself bounds what rmpv allocates (no length field is trusted up front), but
    // its tree costs a multiple of the input: charge that before building it.
    budget.charge(NAME, data.len())?;
    let mut rest = data;
    let mp = rmpv::decode::read_value_with_max_depth(&mut rest, MAX_DEPTH)
        .map_err(|e| err(e.to_string()))?;
    if !rest.is_empty() {
        return Err(err(format!(
            "{} bytes of extra data after the object (Python's msgpack.loads refuses them)",
            rest.len()
        )));
    }
    from_mp(mp, budget)
}

fn from_mp(mp: Mp, budget: &mut Budget) -> Result<Value> {
    budget.charge(NAME, std::mem::size_of::<Value>())?;
    Ok(match mp {
        Mp::Nil => Value::None,
        Mp::Boolean(b) => Value::Bool(b),
        Mp::Integer(i) => Value::Int(
            i.as_i64()
                .map(i128::from)
                .or_else(|| i.as_u64().map(i128::from))
                .ok_or_else(|| err("integer out of range"))?,
        ),
        Mp::F32(f) => Value::Float(f64::from(f)),
        Mp::F64(f) => Value::Float(f),
        Mp::String(s) => match s.into_str() {
            Some(s) => Value::Str(s),
            None => return Err(err("a str object is not valid UTF-8")),
        },
        Mp::Binary(b) => Value::Bytes(b),
        Mp::Array(items) => Value::List(
            items
                .into_iter()
                .map(|v| from_mp(v, budget))
                .collect::<Result<_>>()?,
        ),
        Mp::Map(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                if !matches!(k, Mp::String(_) | Mp::Binary(_)) {
                    return Err(err(
                        "a map key that is neither str nor bytes (Python's msgpack.loads refuses it)",
                    ));
                }
                out.push((from_mp(k, budget)?, from_mp(v, budget)?));
            }
            Value::Dict(out)
        }
        Mp::Ext(kind, _) => {
            return Err(err(format!(
                "extension type {kind} (e.g. a msgpack Timestamp) is not a plain value"
            )));
        }
    })
}

/// Encode as `msgpack.dumps(v)` does.
pub(super) fn encode(v: &Value) -> Result<Vec<u8>> {
    let mp = to_mp(v, 0)?;
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, &mp).map_err(|e| encode_err(e.to_string()))?;
    Ok(out)
}

fn to_mp(v: &Value, depth: usize) -> Result<Mp> {
    if depth > MAX_DEPTH {
        return Err(encode_err(format!(
            "containers nested deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(match v {
        Value::None => Mp::Nil,
        Value::Bool(b) => Mp::Boolean(*b),
        Value::Int(i) => {
            if let Ok(u) = u64::try_from(*i) {
                Mp::Integer(Integer::from(u))
            } else if let Ok(s) = i64::try_from(*i) {
                Mp::Integer(Integer::from(s))
            } else {
                return Err(encode_err(format!(
                    "integer {i} is outside msgpack's range (-2^63 to 2^64 - 1)"
                )));
            }
        }
        Value::Float(f) => Mp::F64(*f),
        Value::Str(s) => Mp::String(s.as_str().into()),
        Value::Bytes(b) => Mp::Binary(b.clone()),
        Value::List(items) | Value::Tuple(items) => Mp::Array(
            items
                .iter()
                .map(|x| to_mp(x, depth + 1))
                .collect::<Result<_>>()?,
        ),
        Value::Dict(entries) => Mp::Map(
            entries
                .iter()
                .map(|(k, x)| {
                    if !matches!(k, Value::Str(_) | Value::Bytes(_)) {
                        return Err(encode_err(format!(
                            "a map key of type {} would not load in Python (msgpack.loads \
                             accepts only str and bytes keys)",
                            k.type_name()
                        )));
                    }
                    Ok((to_mp(k, depth + 1)?, to_mp(x, depth + 1)?))
                })
                .collect::<Result<_>>()?,
        ),
    })
}

//! Hand-written loops for the commonest object shapes (strings, `vector<string>`,
//! `vector<vector<T>>`, packed reals): the generic walk of [`super::object`] dispatches on the
//! shape for every item, which costs more than the bytes themselves. Each loop returns exactly
//! what the generic walk returns, and refuses what it refuses (tests in `object.rs` compare
//! them on ROOT's own baskets).

use super::framing::{
    BYTE_COUNT_FLAG, EntryError, body, count, entry, plain_list_head, plain_version, string,
};
use super::scaled::scaled_into;
use crate::basket::BasketData;
use crate::column::{Lists, Strings, Values};
use crate::layout::{Packing, Real, Shape};
use crate::types::{Element, LeafType};

/// Decodes entries `a..b` when `shape` has a loop of its own here; `None` otherwise.
pub(crate) fn decode(
    basket: &BasketData,
    shape: &Shape,
    a: usize,
    b: usize,
    out: &mut Values,
) -> Option<Result<(), EntryError>> {
    match (shape, out) {
        (Shape::Real(real), out) if basket.offsets().is_none() => {
            Some(reals(basket, *real, a, b, out))
        }
        (Shape::Text, Values::Text(s)) => Some(strings(basket, a, b, false, s)),
        (Shape::Headed(inner), out) => match (&**inner, out) {
            (Shape::Text, Values::Text(s)) => Some(strings(basket, a, b, true, s)),
            (Shape::List(item), Values::Lists(lists)) => match &**item {
                Shape::Text => Some(vector_of_strings(basket, a, b, lists)),
                Shape::List(num) => match **num {
                    Shape::Num(t) => Some(vector_of_vectors(basket, t, a, b, lists)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Strings up to this length are copied as one fixed-size move.
const SHORT: usize = 32;

/// Appends one string to `out`.
fn push_string(out: &mut Strings, text: &[u8]) {
    out.bytes.extend_from_slice(text);
    out.offsets.push(out.bytes.len() as u64);
}

/// Appends `len` bytes of `data` from `start` as a string; `false`, with nothing written, when
/// they are not all in `data`. A short string followed by at least [`SHORT`] bytes of the basket
/// is copied as one fixed-size move, then cut to its length (the bytes past it are overwritten
/// by the next string or cut off), instead of a `memcpy` call per string.
#[inline(always)]
fn push_at(
    data: &[u8],
    start: usize,
    len: usize,
    bytes: &mut Vec<u8>,
    offsets: &mut Vec<u64>,
) -> bool {
    let end = bytes.len() + len;
    match data.get(start..).and_then(<[u8]>::first_chunk::<SHORT>) {
        Some(src) if len <= SHORT => {
            bytes.extend_from_slice(src);
            bytes.truncate(end);
        }
        _ => match data.get(start..start + len) {
            Some(src) => bytes.extend_from_slice(src),
            None => return false,
        },
    }
    offsets.push(end as u64);
    true
}

/// Where the common-case loops write strings: the tails of `bytes` and `offsets`, grown before
/// the loop and cut to what it wrote after, so the loop keeps its positions in registers. (A
/// `Vec` push stores and reloads its length through memory on every string: a chain of
/// store-to-load forwards longer than the rest of the loop.)
struct Sink<'a> {
    bytes: &'a mut [u8],
    written: usize,
    ends: &'a mut [u64],
    count: usize,
    /// Where `bytes` starts in the whole buffer (the ends are offsets into that).
    base: u64,
}

impl Sink<'_> {
    /// Appends `len` bytes of `data` from `start` as a string; `false`, with nothing written,
    /// when they are not all in `data` or there is no room left. A short string followed by at
    /// least [`SHORT`] bytes of the basket is copied as one fixed-size move (the bytes past it
    /// are overwritten by the next string or cut off), instead of a `memcpy` call per string.
    #[inline(always)]
    fn push(&mut self, data: &[u8], start: usize, len: usize) -> bool {
        let Some(end) = self.ends.get_mut(self.count) else {
            return false;
        };
        let w = self.written;
        let short = data.get(start..).and_then(<[u8]>::first_chunk::<SHORT>);
        let room = self
            .bytes
            .get_mut(w..)
            .and_then(<[u8]>::first_chunk_mut::<SHORT>);
        match (short, room) {
            (Some(src), Some(dst)) if len <= SHORT => *dst = *src,
            _ => match (data.get(start..start + len), self.bytes.get_mut(w..w + len)) {
                (Some(src), Some(dst)) => dst.copy_from_slice(src),
                _ => return false,
            },
        }
        self.written = w + len;
        *end = self.base + self.written as u64;
        self.count += 1;
        true
    }
}

/// Runs `fill` on a [`Sink`] with room for `room` bytes and `count` strings at the ends of
/// `out`, then cuts `out` to what it wrote.
fn with_sink<R>(
    out: (&mut Vec<u8>, &mut Vec<u64>),
    room: usize,
    count: usize,
    fill: impl FnOnce(&mut Sink) -> R,
) -> R {
    let (bytes, offsets) = out;
    let (b0, o0) = (bytes.len(), offsets.len());
    bytes.resize(b0 + room + SHORT, 0);
    offsets.resize(o0 + count, 0);
    let mut sink = Sink {
        bytes: &mut bytes[b0..],
        written: 0,
        ends: &mut offsets[o0..],
        count: 0,
        base: b0 as u64,
    };
    let result = fill(&mut sink);
    let (written, count) = (sink.written, sink.count);
    bytes.truncate(b0 + written);
    offsets.truncate(o0 + count);
    result
}

/// The entry offsets of entries `a..=b` (the basket has an offset table).
fn entry_bounds(basket: &BasketData, a: usize, b: usize) -> Result<&[u32], EntryError> {
    basket
        .offsets()
        .and_then(|o| o.get(a..=b))
        .ok_or_else(|| (a, "no offsets for the entries".to_string()))
}

/// Bytes `a..b` of the entries, as a room for what they hold.
fn room(bounds: &[u32]) -> usize {
    match (bounds.first(), bounds.last()) {
        (Some(&s), Some(&e)) => e.saturating_sub(s) as usize,
        _ => 0,
    }
}

/// Where the string filling entry `s..e` starts, when it is the common case: a length byte
/// under 255 that matches the entry, behind an object header (`headed`: byte count and a
/// class version, as ROOT writes a `std::string` or `TString` entry) or not (a `char*` leaf).
/// `None` for everything else, which [`strings`] leaves to the general rules.
#[inline(always)]
pub(super) fn short_string(data: &[u8], s: usize, e: usize, headed: bool) -> Option<usize> {
    let at = if headed { s + 6 } else { s };
    let len = e.checked_sub(at + 1)?;
    if len >= 255 || *data.get(at)? as usize != len {
        return None;
    }
    if headed {
        let header = data.get(s..s + 6)?;
        let count = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        // The byte count covers what follows it; a version of 0 or with the member-wise bit
        // takes the general rules.
        let version = u16::from_be_bytes([header[4], header[5]]);
        if count != (e - s - 4) as u32 | BYTE_COUNT_FLAG || !plain_version(version) {
            return None;
        }
    }
    Some(at + 1)
}

fn strings(
    basket: &BasketData,
    a: usize,
    b: usize,
    headed: bool,
    out: &mut Strings,
) -> Result<(), EntryError> {
    let data = basket.data();
    let bounds = entry_bounds(basket, a, b)?;
    out.bytes.reserve(room(bounds) + SHORT);
    out.offsets.reserve(b - a);
    let mut j = a;
    loop {
        j += short_string_entries(data, &bounds[j - a..], headed, out);
        if j >= b {
            return Ok(());
        }
        // Long strings and anything unusual: the general rules (which say what is wrong, if
        // anything).
        let e = entry(basket, j)?;
        let e = if headed { body(j, e)? } else { e };
        let (text, rest) = string(j, e)?;
        if !rest.is_empty() {
            return Err((j, format!("{} bytes left after the string", rest.len())));
        }
        push_string(out, text);
        j += 1;
    }
}

/// The strings filling the entries between `bounds` (entry offsets) while each is the common
/// case ([`short_string`]). Returns how many entries it appended; the entry it stopped at has
/// nothing written. Out of line: measured faster than the same loop inside its caller.
#[inline(never)]
fn short_string_entries(data: &[u8], bounds: &[u32], headed: bool, out: &mut Strings) -> usize {
    let entries = bounds.len().saturating_sub(1);
    let out = (&mut out.bytes, &mut out.offsets);
    with_sink(out, room(bounds), entries, |sink| {
        for (k, pair) in bounds.windows(2).enumerate() {
            let (s, e) = (pair[0] as usize, pair[1] as usize);
            // A char* leaf writes nothing at all for an empty string.
            let start = if s == e && !headed {
                Some(s)
            } else {
                short_string(data, s, e, headed)
            };
            match start {
                Some(start) if sink.push(data, start, e - start) => {}
                _ => return k,
            }
        }
        entries
    })
}

fn vector_of_strings(
    basket: &BasketData,
    a: usize,
    b: usize,
    lists: &mut Lists,
) -> Result<(), EntryError> {
    let Values::Text(out) = &mut lists.items else {
        return Err((a, "values of another kind than strings".to_string()));
    };
    let data = basket.data();
    let bounds = entry_bounds(basket, a, b)?;
    lists.offsets.reserve(b - a);
    out.bytes.reserve(room(bounds) + SHORT);
    out.offsets.reserve(b - a);
    let mut j = a;
    while j < b {
        j += short_string_lists(
            data,
            &bounds[j - a..],
            &mut out.bytes,
            &mut out.offsets,
            &mut lists.offsets,
        );
        if j == b {
            break;
        }
        // Long strings and anything unusual: the general rules (which say what is wrong, if
        // anything).
        let e = entry(basket, j)?;
        let (n, mut rest) = count(j, body(j, e)?, 1)?;
        for _ in 0..n {
            let (text, r) = string(j, rest)?;
            push_string(out, text);
            rest = r;
        }
        if !rest.is_empty() {
            return Err((j, format!("{} bytes left after the strings", rest.len())));
        }
        lists.offsets.push((out.offsets.len() - 1) as u64);
        j += 1;
    }
    Ok(())
}

/// The `vector<string>` entries between `bounds` (entry offsets) while they are the common
/// case: a plain object header (byte count and a class version), the count, then strings of
/// under 255 bytes that fill the entry exactly. Returns how many entries it appended (their
/// strings to `bytes` and `offsets`, each list's end to `lists`); the entry it stopped at has
/// nothing written. Out of line, with the buffers as arguments of their own (which cannot alias
/// each other): measured faster than the same loop inside its caller.
#[inline(never)]
fn short_string_lists(
    data: &[u8],
    bounds: &[u32],
    bytes: &mut Vec<u8>,
    offsets: &mut Vec<u64>,
    lists: &mut Vec<u64>,
) -> usize {
    for (k, pair) in bounds.windows(2).enumerate() {
        let (s, e) = (pair[0] as usize, pair[1] as usize);
        // Each string takes at least its length byte.
        let Some((n, mut p)) = plain_list_head(data, s, e, 1) else {
            return k;
        };
        let mark = (offsets.len(), bytes.len());
        for _ in 0..n {
            let len = data.get(p).map_or(255, |&l| usize::from(l));
            // 255: a long string (its length follows).
            if len == 255 || p + 1 + len > e || !push_at(data, p + 1, len, bytes, offsets) {
                offsets.truncate(mark.0);
                bytes.truncate(mark.1);
                return k;
            }
            p += 1 + len;
        }
        if p != e {
            offsets.truncate(mark.0);
            bytes.truncate(mark.1);
            return k;
        }
        lists.push((offsets.len() - 1) as u64);
    }
    bounds.len().saturating_sub(1)
}

fn vector_of_vectors(
    basket: &BasketData,
    t: LeafType,
    a: usize,
    b: usize,
    lists: &mut Lists,
) -> Result<(), EntryError> {
    let Values::Lists(inner) = &mut lists.items else {
        return Err((a, "values of another kind than lists".to_string()));
    };
    macro_rules! typed {
        ($($v:ident => $ty:ty),*) => {
            match (t, &mut inner.items) {
                $((LeafType::$v, Values::$v(values)) => {
                    nested::<$ty>(basket, a, b, &mut lists.offsets, &mut inner.offsets, values)
                })*
                _ => Err((a, "values of another kind than the vector's".to_string())),
            }
        };
    }
    typed!(Bool => bool, I8 => i8, U8 => u8, I16 => i16, U16 => u16, I32 => i32, U32 => u32,
        I64 => i64, U64 => u64, F32 => f32, F64 => f64)
}

fn nested<T: Element>(
    basket: &BasketData,
    a: usize,
    b: usize,
    outer: &mut Vec<u64>,
    inner: &mut Vec<u64>,
    values: &mut Vec<T>,
) -> Result<(), EntryError> {
    // The common case makes its own room, for every entry left, each time it runs.
    let bounds = entry_bounds(basket, a, b)?;
    let mut j = a;
    while j < b {
        j += super::nested::short_nested_lists(
            basket.data(),
            &bounds[j - a..],
            outer,
            inner,
            values,
        );
        if j == b {
            break;
        }
        // Anything unusual: the general rules (which say what is wrong, if anything).
        let e = entry(basket, j)?;
        let (n, mut rest) = count(j, body(j, e)?, 4)?;
        for _ in 0..n {
            let (m, r) = count(j, rest, T::SIZE)?;
            let (vals, r) = r.split_at(m * T::SIZE);
            T::extend_from_be(vals, values);
            inner.push(values.len() as u64);
            rest = r;
        }
        if !rest.is_empty() {
            return Err((j, format!("{} bytes left after the lists", rest.len())));
        }
        outer.push((inner.len() - 1) as u64);
        j += 1;
    }
    Ok(())
}

fn reals(
    basket: &BasketData,
    real: Real,
    a: usize,
    b: usize,
    out: &mut Values,
) -> Result<(), EntryError> {
    let size = real.size();
    let data = basket.data();
    if data.len() != basket.entries() * size {
        return Err((
            a,
            format!(
                "{} bytes for {} entries of {size}",
                data.len(),
                basket.entries()
            ),
        ));
    }
    let src = data.get(a * size..b * size).unwrap_or_default();
    match out {
        Values::F64(v) if real.double => {
            v.reserve(b - a);
            match real.packing {
                // The packing decided once, not per value.
                Packing::Float => v.extend(
                    src.as_chunks::<4>()
                        .0
                        .iter()
                        .map(|c| f64::from(f32::from_be_bytes(*c))),
                ),
                Packing::Scaled { min, factor } => {
                    scaled_into(src.as_chunks::<4>().0, min, factor, v);
                }
                Packing::Truncated { .. } => {
                    v.extend(src.chunks_exact(size).map(|c| real.decode(c)));
                }
            }
        }
        Values::F32(v) if !real.double => {
            v.reserve(b - a);
            v.extend(src.chunks_exact(size).map(|c| real.decode(c) as f32));
        }
        _ => return Err((a, "values of another kind than the real's".to_string())),
    }
    Ok(())
}

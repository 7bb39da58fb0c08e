//! Hand-written loops for the commonest object shapes (strings, `vector<string>`,
//! `vector<vector<T>>`, packed reals): the generic walk of [`super::object`] dispatches on the
//! shape for every item, which costs more than the bytes themselves. Each loop returns exactly
//! what the generic walk returns, and refuses what it refuses (tests in `object.rs` compare
//! them on ROOT's own baskets).

use super::object::{split_headed, split_string};
use crate::basket::BasketData;
use crate::column::{Lists, Strings, Values};
use crate::layout::{Packing, Real, Shape};
use crate::types::{Element, LeafType};

/// An entry's error: its index and what is wrong.
pub(crate) type EntryError = (usize, String);

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

/// The bytes of entry `j` (the basket has an offset table).
#[inline]
fn entry(basket: &BasketData, j: usize) -> Result<&[u8], EntryError> {
    let offsets = basket.offsets().unwrap_or_default();
    match (offsets.get(j), offsets.get(j + 1)) {
        (Some(&s), Some(&e)) => basket
            .data()
            .get(s as usize..e as usize)
            .ok_or_else(|| (j, format!("bytes {s}..{e} outside the basket"))),
        _ => Err((j, "no offsets for the entry".to_string())),
    }
}

fn too_short(j: usize) -> EntryError {
    (j, "the entry ends inside an item".to_string())
}

/// The body of a streamed object filling entry `j` (the generic walk's own header rules).
#[inline]
fn body(j: usize, e: &[u8]) -> Result<&[u8], EntryError> {
    match split_headed(e) {
        Ok((body, [])) => Ok(body),
        Ok((_, rest)) => Err((j, format!("{} bytes left after the object", rest.len()))),
        Err(d) => Err((j, d)),
    }
}

/// One string at the start of `e`: its bytes and the rest.
#[inline(always)]
fn string(j: usize, e: &[u8]) -> Result<(&[u8], &[u8]), EntryError> {
    split_string(e).map_err(|d| (j, d))
}

fn strings(
    basket: &BasketData,
    a: usize,
    b: usize,
    headed: bool,
    out: &mut Strings,
) -> Result<(), EntryError> {
    for j in a..b {
        let e = entry(basket, j)?;
        // A char* leaf writes nothing at all for an empty string.
        if e.is_empty() && !headed {
            out.push(b"");
            continue;
        }
        let e = if headed { body(j, e)? } else { e };
        let (s, rest) = string(j, e)?;
        if !rest.is_empty() {
            return Err((j, format!("{} bytes left after the string", rest.len())));
        }
        out.push(s);
    }
    Ok(())
}

fn count(j: usize, e: &[u8], min_item: usize) -> Result<(usize, &[u8]), EntryError> {
    let (n, rest) = e.split_first_chunk::<4>().ok_or_else(|| too_short(j))?;
    let n = u32::from_be_bytes(*n) as usize;
    if n.saturating_mul(min_item) > rest.len() {
        return Err((j, format!("a list of {n} items in {} bytes", rest.len())));
    }
    Ok((n, rest))
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
    out.bytes.reserve(basket.data().len());
    lists.offsets.reserve(b - a);
    for j in a..b {
        let e = entry(basket, j)?;
        let (n, mut rest) = count(j, body(j, e)?, 1)?;
        for _ in 0..n {
            let (s, r) = string(j, rest)?;
            out.push(s);
            rest = r;
        }
        if !rest.is_empty() {
            return Err((j, format!("{} bytes left after the strings", rest.len())));
        }
        lists.offsets.push(out.len() as u64);
    }
    Ok(())
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
    for j in a..b {
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
                Packing::Scaled { min, factor } => v.extend(
                    src.as_chunks::<4>()
                        .0
                        .iter()
                        .map(|c| f64::from(u32::from_be_bytes(*c)) / factor + min),
                ),
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

//! Leaf lists (`x/F:y/D:n/I` in one branch): fixed-size entries holding every leaf's values
//! one after the other, with no padding; each leaf becomes a field.

use crate::basket::BasketData;
use crate::column::{FieldValues, Values};
use crate::error::{Error, Result};
use crate::layout::Field;
use crate::types::Element;

/// Bytes of one entry.
pub(crate) fn entry_bytes(fields: &[Field]) -> usize {
    fields.iter().map(|f| f.leaf_type.size() * f.len).sum()
}

/// No values of any field.
pub(crate) fn empty(fields: &[Field]) -> Values {
    Values::Record(
        fields
            .iter()
            .map(|f| FieldValues {
                name: f.name.clone(),
                len: f.len,
                values: Values::empty(f.leaf_type),
            })
            .collect(),
    )
}

/// Appends entries `a..b` of `basket` to `out` (made by [`empty`]).
pub(crate) fn decode_entries(
    basket: &BasketData,
    branch: &str,
    fields: &[Field],
    a: usize,
    b: usize,
    out: &mut Values,
) -> Result<()> {
    let bad = |d: String| Error::corrupt("basket", 0, format!("branch {branch:?}: {d}"));
    let size = entry_bytes(fields);
    let data = basket.data();
    if data.len() != basket.entries() * size {
        return Err(bad(format!(
            "{} data bytes for {} entries of {size} bytes",
            data.len(),
            basket.entries()
        )));
    }
    if a > b || b > basket.entries() {
        return Err(bad(format!("entries {a}..{b} outside the basket")));
    }
    let Values::Record(columns) = out else {
        return Err(bad("a leaf list read into values of another kind".into()));
    };
    let mut at = 0;
    for (field, column) in fields.iter().zip(columns.iter_mut()) {
        let rows = data.get(a * size..b * size).unwrap_or_default();
        let cut = Cut {
            size,
            at,
            len: field.len,
        };
        macro_rules! gather {
            ($($v:ident),*) => {
                match &mut column.values {
                    $(Values::$v(v) => gather(rows, cut, v),)*
                    _ => return Err(bad(format!("field {} of another kind", field.name))),
                }
            };
        }
        gather!(Bool, I8, U8, I16, U16, I32, U32, I64, U64, F32, F64);
        at += field.leaf_type.size() * field.len;
    }
    Ok(())
}

/// Where a field sits in each entry of a leaf list: entries of `size` bytes, the field's `len`
/// elements starting at byte `at`.
#[derive(Clone, Copy)]
struct Cut {
    size: usize,
    at: usize,
    len: usize,
}

/// Appends the field `cut` of every entry in `rows` to `out`, decoding each entry's elements
/// straight into their place (one pass, no per-entry growth of `out`).
fn gather<T: Element>(rows: &[u8], cut: Cut, out: &mut Vec<T>) {
    let Cut { size, at, len } = cut;
    let width = len * T::SIZE;
    if len == 1 {
        // The common field (`x/F`): one value per entry, appended as it is decoded, without
        // zero-filling the room first; common entry sizes get a loop of their own.
        macro_rules! sized {
            ($($row:literal),*) => {
                match size {
                    $($row => return gather_rows::<T, $row>(rows, at, out),)*
                    _ => {}
                }
            };
        }
        sized!(4, 8, 12, 16, 20, 24, 28, 32);
        let end = at + width;
        out.extend(
            rows.chunks_exact(size.max(1))
                .map(move |row| value_at::<T>(row, at, end)),
        );
        return;
    }
    let start = out.len();
    out.resize(start + rows.len() / size.max(1) * len, T::default());
    let dst = out.get_mut(start..).unwrap_or_default();
    for (row, d) in rows
        .chunks_exact(size.max(1))
        .zip(dst.chunks_exact_mut(len.max(1)))
    {
        if let Some(src) = row.get(at..at + width) {
            T::decode_into(src, d);
        }
    }
}

/// [`gather`]'s one-value field, for entries of `ROW` bytes: with the entry size known when
/// compiled, the loop loads each entry at a fixed stride and is vectorised (leaf list of three
/// floats: full read -8.8%, paired A/B, BENCHMARKS.md run #46).
fn gather_rows<T: Element, const ROW: usize>(rows: &[u8], at: usize, out: &mut Vec<T>) {
    let Some(end) = at.checked_add(T::SIZE).filter(|&end| end <= ROW) else {
        return;
    };
    let (rows, _) = rows.as_chunks::<ROW>();
    out.extend(rows.iter().map(move |row| value_at::<T>(row, at, end)));
}

/// The one value at `at..end` of an entry (the default where the entry is shorter, which the
/// size checks before a gather rule out). Callers pass `at` and `end` into `move` closures: a
/// place captured by reference is loaded again for every entry and keeps the loop scalar.
#[inline(always)]
fn value_at<T: Element>(row: &[u8], at: usize, end: usize) -> T {
    let mut v = [T::default()];
    if let Some(src) = row.get(at..end) {
        T::decode_into(src, &mut v);
    }
    v[0]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;
    use crate::types::LeafType;

    #[test]
    fn fields_are_cut_from_each_entry() {
        let fields = vec![
            Field {
                name: "x".into(),
                leaf_type: LeafType::F32,
                len: 1,
            },
            Field {
                name: "p".into(),
                leaf_type: LeafType::I16,
                len: 2,
            },
            Field {
                name: "ok".into(),
                leaf_type: LeafType::Bool,
                len: 1,
            },
        ];
        let mut payload = Vec::new();
        for j in 0..3i16 {
            payload.extend(f32::from(j).to_be_bytes());
            payload.extend(j.to_be_bytes());
            payload.extend((-j).to_be_bytes());
            payload.push(u8::from(j == 1));
        }
        let basket = BasketData::flat_for_test(payload, 3);
        let mut out = empty(&fields);
        decode_entries(&basket, "ll", &fields, 1, 3, &mut out).unwrap();
        let Values::Record(cols) = &out else { panic!() };
        assert_eq!(cols[0].values, Values::F32(vec![1.0, 2.0]));
        assert_eq!(cols[1].values, Values::I16(vec![1, -1, 2, -2]));
        assert_eq!(cols[2].values, Values::Bool(vec![true, false]));
        assert_eq!(out.len(), 2);
        // A basket whose size is not a whole number of entries.
        let short = BasketData::flat_for_test(vec![0; 20], 3);
        assert!(decode_entries(&short, "ll", &fields, 0, 3, &mut empty(&fields)).is_err());
    }

    #[test]
    fn entries_of_a_common_size_take_their_own_loop_and_agree() {
        // 12-byte entries (`x/F:n/I:y/F`): the sized loop, against the general one.
        let field = |name: &str, leaf_type| Field {
            name: name.into(),
            leaf_type,
            len: 1,
        };
        let fields = vec![
            field("x", LeafType::F32),
            field("n", LeafType::I32),
            field("y", LeafType::F32),
        ];
        let mut payload = Vec::new();
        for j in 0..5i32 {
            payload.extend((j as f32 + 0.5).to_be_bytes());
            payload.extend((-j).to_be_bytes());
            payload.extend((j as f32 * 2.0).to_be_bytes());
        }
        let basket = BasketData::flat_for_test(payload.clone(), 5);
        let mut out = empty(&fields);
        decode_entries(&basket, "ll", &fields, 1, 4, &mut out).unwrap();
        let Values::Record(cols) = &out else { panic!() };
        assert_eq!(cols[0].values, Values::F32(vec![1.5, 2.5, 3.5]));
        assert_eq!(cols[1].values, Values::I32(vec![-1, -2, -3]));
        assert_eq!(cols[2].values, Values::F32(vec![2.0, 4.0, 6.0]));
        let mut general: Vec<f32> = Vec::new();
        gather(
            &payload,
            Cut {
                size: 12,
                at: 8,
                len: 1,
            },
            &mut general,
        );
        let mut sized = Vec::new();
        gather_rows::<f32, 12>(&payload, 8, &mut sized);
        assert_eq!(general, sized);
        // A field that would end past the entry is refused by the sized loop, not read.
        let mut none: Vec<f32> = Vec::new();
        gather_rows::<f32, 12>(&payload, 10, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn damaged_baskets_of_a_common_size_are_errors_or_reads_never_panics() {
        // The sized loops' input (12-byte entries) cut at every length and with every bit
        // flipped: a length that is not whole entries is an error; flipped bits are values.
        let fields: Vec<Field> = ["x", "y", "z"]
            .iter()
            .map(|name| Field {
                name: (*name).into(),
                leaf_type: LeafType::F32,
                len: 1,
            })
            .collect();
        let payload: Vec<u8> = (0..60u8).collect();
        for cut in 0..payload.len() {
            let basket = BasketData::flat_for_test(payload[..cut].to_vec(), 5);
            let read = decode_entries(&basket, "ll", &fields, 0, 5, &mut empty(&fields));
            assert!(read.is_err(), "{cut} bytes for 5 entries of 12");
        }
        for bit in 0..payload.len() * 8 {
            let mut flipped = payload.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let basket = BasketData::flat_for_test(flipped, 5);
            let mut out = empty(&fields);
            decode_entries(&basket, "ll", &fields, 0, 5, &mut out).unwrap();
            assert_eq!(out.len(), 5);
        }
    }
}

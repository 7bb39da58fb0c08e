//! The numeric kernels: basket bytes to typed values, fixed-size entries and variable-size
//! ones (counter-based arrays and `std::vector<T>`), sequentially or split over the rayon pool.

use rayon::prelude::*;

use crate::basket::BasketData;
use crate::error::{Error, Result};
use crate::types::{Element, SHORT_RUN};

/// Bytes of the per-entry header of a streamed `std::vector<T>`: byte count, version, size.
pub const VECTOR_HEADER: usize = 10;

/// Decodes entries `a..b` of a fixed-size basket (`per` values per entry) into `dst`.
pub(crate) fn decode_flat<T: Element>(
    basket: &BasketData,
    branch: &str,
    per: usize,
    a: usize,
    b: usize,
    dst: &mut [T],
) -> Result<()> {
    let size = T::SIZE * per;
    let data = flat_data(basket, branch, size)?;
    if b > basket.entries() {
        return Err(Error::corrupt(
            "basket",
            0,
            format!("branch {branch:?}: entries {a}..{b} outside the basket"),
        ));
    }
    let src = data.get(a * size..b * size).unwrap_or_default();
    T::decode_into(src, dst);
    Ok(())
}

/// The entry bytes of a fixed-size basket, checked to hold exactly `entries` entries of
/// `entry_bytes` each.
pub(crate) fn flat_data<'a>(
    basket: &'a BasketData,
    branch: &str,
    entry_bytes: usize,
) -> Result<&'a [u8]> {
    let data = basket.data();
    if data.len() != basket.entries() * entry_bytes {
        return Err(Error::corrupt(
            "basket",
            0,
            format!(
                "branch {branch:?}: {} data bytes for {} entries of {entry_bytes} bytes",
                data.len(),
                basket.entries()
            ),
        ));
    }
    Ok(data)
}

/// Decoded bytes from which one basket is split into several decode tasks when the caller runs
/// on a multi-threaded pool (below it a task's fork/join costs more than the split saves).
pub const PARALLEL_BASKET_BYTES: usize = 2 << 20;

/// Entries per decode task when one basket is split.
pub(crate) const ENTRIES_PER_TASK: usize = 1 << 16;

/// As [`decode_flat`] for a whole basket, split into tasks on the rayon pool.
pub(crate) fn decode_flat_par<T: Element>(
    basket: &BasketData,
    branch: &str,
    per: usize,
    dst: &mut [T],
) -> Result<()> {
    let n = basket.entries();
    // Sizes checked: every task's source and destination chunks then match.
    let src = flat_data(basket, branch, T::SIZE * per)?;
    let values = dst.len().min(n * per);
    let chunk = ENTRIES_PER_TASK * per;
    src.par_chunks(chunk * T::SIZE)
        .zip(dst[..values].par_chunks_mut(chunk))
        .for_each(|(s, d)| T::decode_into(s, d));
    Ok(())
}

/// As [`decode_var_into`] for a whole basket, split into tasks on the rayon pool (each task's
/// share of `values` follows from the entry offsets alone).
pub(crate) fn decode_var_par<T: Element>(
    basket: &BasketData,
    branch: &str,
    vector: bool,
    values: &mut [T],
    ends: &mut [u64],
    base: u64,
) -> Result<()> {
    let n = basket.entries();
    let mut jobs = Vec::with_capacity(n.div_ceil(ENTRIES_PER_TASK));
    let (mut v_rest, mut e_rest) = (values, ends);
    let mut base = base;
    for a in (0..n).step_by(ENTRIES_PER_TASK) {
        let b = (a + ENTRIES_PER_TASK).min(n);
        let count = var_value_count(basket, branch, T::SIZE, vector, a, b)?;
        let too_short = || Error::corrupt("basket", 0, format!("branch {branch:?}: entry sizes"));
        let (v, v_tail) = v_rest.split_at_mut_checked(count).ok_or_else(too_short)?;
        let (e, e_tail) = e_rest.split_at_mut_checked(b - a).ok_or_else(too_short)?;
        jobs.push((a, b, v, e, base));
        base += count as u64;
        (v_rest, e_rest) = (v_tail, e_tail);
    }
    jobs.into_par_iter()
        .with_max_len(1)
        .try_for_each(|(a, b, v, e, base)| {
            decode_var_into(basket, branch, vector, a, b, v, e, base)
        })
}

/// Number of values in entries `a..b` of a variable-size basket, from its entry offsets alone
/// (`std::vector` entries carry a [`VECTOR_HEADER`] each). [`decode_var_into`] checks that the
/// entries agree.
pub(crate) fn var_value_count(
    basket: &BasketData,
    branch: &str,
    size: usize,
    vector: bool,
    a: usize,
    b: usize,
) -> Result<usize> {
    let bounds = var_bounds(basket, branch, a, b)?;
    let span = (bounds[bounds.len() - 1] - bounds[0]) as usize;
    let header = if vector { VECTOR_HEADER * (b - a) } else { 0 };
    Ok(span.saturating_sub(header) / size)
}

pub(crate) fn var_bounds<'a>(
    basket: &'a BasketData,
    branch: &str,
    a: usize,
    b: usize,
) -> Result<&'a [u32]> {
    let bad = |d: String| Error::corrupt("basket", 0, format!("branch {branch:?}: {d}"));
    basket
        .offsets()
        .ok_or_else(|| bad("variable-size entries without offsets".into()))?
        .get(a..=b)
        .ok_or_else(|| bad(format!("entries {a}..{b} outside the basket")))
}

/// Decodes entries `a..b` of a variable-size basket into `values`, which must hold exactly
/// [`var_value_count`] elements, and writes each entry's end (in values, plus `base`) to
/// `ends` (`b - a` elements).
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_var_into<T: Element>(
    basket: &BasketData,
    branch: &str,
    vector: bool,
    a: usize,
    b: usize,
    values: &mut [T],
    ends: &mut [u64],
    base: u64,
) -> Result<()> {
    let bad = |d: String| Error::corrupt("basket", 0, format!("branch {branch:?}: {d}"));
    let bounds = var_bounds(basket, branch, a, b)?;
    let size = T::SIZE;
    let data = basket.data();
    if ends.len() != b - a {
        return Err(bad(format!(
            "{} end slots for {} entries",
            ends.len(),
            b - a
        )));
    }
    if !vector {
        // Counter-based arrays are contiguous: an entry's end in values is its end in bytes past
        // the first entry's start over the value size, and every entry is whole values exactly
        // when every such end falls on a value. No running sum, so the loop vectorises (the
        // bounds are ordered: the basket checked them).
        let first = bounds[0];
        let mut stray = 0u32;
        for (&bound, slot) in bounds[1..].iter().zip(ends.iter_mut()) {
            let bytes = bound.wrapping_sub(first);
            stray |= bytes % size as u32;
            *slot = base + u64::from(bytes / size as u32);
        }
        if stray != 0 {
            let len = bounds
                .windows(2)
                .map(|w| w[1].wrapping_sub(w[0]))
                .find(|len| len % size as u32 != 0)
                .unwrap_or(stray);
            return Err(bad(format!(
                "entry of {len} bytes is not a multiple of {size}"
            )));
        }
        let (first, last) = (bounds[0] as usize, bounds[bounds.len() - 1] as usize);
        let src = data.get(first..last).unwrap_or_default();
        if src.len() != values.len() * size {
            return Err(bad(format!(
                "{} bytes for {} values",
                src.len(),
                values.len()
            )));
        }
        T::decode_into(src, values);
        return Ok(());
    }
    // One pass: each entry is a 10-byte header (byte count, version, i32 size) then `size`
    // values; the declared size must account for exactly the entry's remaining bytes, so the
    // values land exactly in the slice sized from the offsets.
    // Entries are short (a few values): most are decoded with one fixed-length run
    // (`decode_short_run`), reading into the next entry and writing into the next entry's
    // slots, which that entry then overwrites; the ones that do not fit take the exact path.
    let mut pos = 0usize;
    for (w, slot) in bounds.windows(2).zip(ends.iter_mut()) {
        let (start, end) = (w[0] as usize, w[1] as usize);
        let entry = data.get(start..end).unwrap_or_default();
        let Some((head, body)) = entry.split_first_chunk::<VECTOR_HEADER>() else {
            return Err(bad(format!("vector entry of {} bytes", entry.len())));
        };
        let declared = u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize;
        let short = body.len() <= SHORT_RUN
            && T::decode_short_run(
                data.get(start + VECTOR_HEADER..).unwrap_or_default(),
                values.get_mut(pos..).unwrap_or_default(),
            );
        let fits = body.len() == declared.wrapping_mul(size);
        match values.get_mut(pos..pos + body.len() / size) {
            Some(_) if short && fits => {}
            Some(dst) if fits => T::decode_into(body, dst),
            _ => {
                return Err(bad(format!(
                    "vector entry declares {declared} values in {} bytes",
                    body.len()
                )));
            }
        }
        pos += declared;
        *slot = base + pos as u64;
    }
    if pos != values.len() {
        return Err(bad(format!(
            "{pos} values decoded, {} expected",
            values.len()
        )));
    }
    Ok(())
}

/// Appends entries `a..b` of a variable-size basket to `values`, and their end offsets (in
/// values, continuing from the last one) to `offsets`.
pub(crate) fn decode_var<T: Element>(
    basket: &BasketData,
    branch: &str,
    vector: bool,
    a: usize,
    b: usize,
    values: &mut Vec<T>,
    offsets: &mut Vec<u64>,
) -> Result<()> {
    let count = var_value_count(basket, branch, T::SIZE, vector, a, b)?;
    let base = offsets.last().copied().unwrap_or(0);
    let (v0, o0) = (values.len(), offsets.len());
    values.resize(v0 + count, T::default());
    offsets.resize(o0 + (b - a), 0);
    decode_var_into(
        basket,
        branch,
        vector,
        a,
        b,
        &mut values[v0..],
        &mut offsets[o0..],
        base,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;

    /// Entries of 0 to 20 values (most shorter than a short run, some longer), enough of them
    /// to be split into several parallel tasks.
    fn entries(n: usize) -> Vec<Vec<f32>> {
        (0..n)
            .map(|j| {
                (0..(j * 7 + j / 3) % 21)
                    .map(|k| (j * 31 + k) as f32 * 0.5)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn vector_entries_decode_alike_sequential_parallel_and_in_ranges() {
        let want = entries(3 * ENTRIES_PER_TASK + 17);
        let basket = BasketData::vector_f32_for_test(&want, None).unwrap();
        let flat: Vec<f32> = want.iter().flatten().copied().collect();
        let mut ends = Vec::new();
        let mut end = 0u64;
        for e in &want {
            end += e.len() as u64;
            ends.push(end);
        }

        let (mut values, mut offsets) = (Vec::<f32>::new(), vec![0u64]);
        decode_var(
            &basket,
            "jets",
            true,
            0,
            want.len(),
            &mut values,
            &mut offsets,
        )
        .unwrap();
        assert_eq!(values, flat);
        assert_eq!(offsets[1..], ends[..]);

        let mut par_values = vec![-1.0f32; flat.len()];
        let mut par_ends = vec![0u64; want.len()];
        decode_var_par(&basket, "jets", true, &mut par_values, &mut par_ends, 0).unwrap();
        assert_eq!(par_values, flat);
        assert_eq!(par_ends, ends);

        // A middle range, appended after earlier values.
        let (a, b) = (1000, 1000 + ENTRIES_PER_TASK + 5);
        let (mut values, mut offsets) = (vec![7.0f32], vec![0u64, 1]);
        decode_var(&basket, "jets", true, a, b, &mut values, &mut offsets).unwrap();
        let want_range: Vec<f32> = want[a..b].iter().flatten().copied().collect();
        assert_eq!(values[1..], want_range[..]);
        assert_eq!(*offsets.last().unwrap(), 1 + want_range.len() as u64);
    }

    #[test]
    fn a_vector_entry_that_lies_about_its_size_is_an_error() {
        let mut want = entries(2 * ENTRIES_PER_TASK);
        want[20] = vec![1.0; 3];
        let good = BasketData::vector_f32_for_test(&want, None).unwrap();
        let count = var_value_count(&good, "jets", 4, true, 0, want.len()).unwrap();
        let mut values = vec![0f32; count];
        let mut ends = vec![0u64; want.len()];
        assert!(decode_var_par(&good, "jets", true, &mut values, &mut ends, 0).is_ok());
        // Too few slots for the values the offsets imply.
        let short = &mut values[..count - 1];
        assert!(decode_var_into(&good, "jets", true, 0, want.len(), short, &mut ends, 0).is_err());
        assert!(decode_var_par(&good, "jets", true, short, &mut ends, 0).is_err());
        // An entry whose declared size disagrees with its bytes, on every path.
        let liar = BasketData::vector_f32_for_test(&want, Some(20)).unwrap();
        let err = decode_var_par(&liar, "jets", true, &mut values, &mut ends, 0).unwrap_err();
        assert!(
            err.to_string().contains("declares 2 values in 12 bytes"),
            "{err}"
        );
        let (mut v, mut o) = (Vec::new(), vec![0u64]);
        assert!(decode_var::<f32>(&liar, "jets", true, 0, 40, &mut v, &mut o).is_err());
    }

    #[test]
    fn counter_jagged_entries_end_where_their_bytes_say() {
        let want = entries(3000);
        let bytes: Vec<Vec<u8>> = want
            .iter()
            .map(|e| e.iter().flat_map(|v| v.to_be_bytes()).collect())
            .collect();
        let slices: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
        let basket = BasketData::entries_for_test(&slices);
        // A range from the middle, after 7 values already held.
        let (a, b) = (1234, 2999);
        let count = var_value_count(&basket, "pt", 4, false, a, b).unwrap();
        let mut values = vec![0f32; count];
        let mut ends = vec![0u64; b - a];
        decode_var_into(&basket, "pt", false, a, b, &mut values, &mut ends, 7).unwrap();
        let want_values: Vec<f32> = want[a..b].iter().flatten().copied().collect();
        assert_eq!(values, want_values);
        let mut end = 7u64;
        for (e, got) in want[a..b].iter().zip(&ends) {
            end += e.len() as u64;
            assert_eq!(*got, end);
        }
        // Entries of 4, 3 and 1 bytes: 8 bytes in all, but the second is not whole values.
        let ragged = BasketData::entries_for_test(&[&[0; 4], &[0; 3], &[0; 1]]);
        let mut values = vec![0f32; 2];
        let err = decode_var_into(&ragged, "pt", false, 0, 3, &mut values, &mut [0; 3], 0);
        let err = err.unwrap_err().to_string();
        assert!(
            err.contains("entry of 3 bytes is not a multiple of 4"),
            "{err}"
        );
    }

    #[test]
    fn fixed_arrays_decode_alike_sequential_and_parallel() {
        let n = 2 * ENTRIES_PER_TASK + 3;
        let want: Vec<f64> = (0..n * 4).map(|k| k as f64 * 0.25 - 7.0).collect();
        let payload: Vec<u8> = want.iter().flat_map(|v| v.to_be_bytes()).collect();
        let basket = BasketData::flat_for_test(payload, n);
        let mut seq = vec![0f64; n * 4];
        decode_flat(&basket, "arr", 4, 0, n, &mut seq).unwrap();
        let mut par = vec![0f64; n * 4];
        decode_flat_par(&basket, "arr", 4, &mut par).unwrap();
        assert_eq!(seq, want);
        assert_eq!(par, want);
        // A basket whose bytes do not match its entry count is refused on both paths.
        let short = BasketData::flat_for_test(vec![0; 31], n);
        assert!(decode_flat_par(&short, "arr", 4, &mut par).is_err());
    }
}

//! `vector<vector<T>>` entries in the common case, written straight into the columns' spare
//! capacity. In safe code the loop held about 130 instructions an entry of the NanoAOD
//! `LHE_scale` branch (one list of 3.3 floats on average; callgrind), most of them bounds and
//! growth checks and the spills of the lengths they need, and the full read at 0.68 of
//! decompression alone (BENCHMARKS.md run #32).
//!
//! Here the room the entries can fill is made once, from the bytes they span (each value takes
//! its size, each list its count), so writes need no check; every read is of bytes inside the
//! basket, which each entry's bounds are checked against once. The decoders' third unsafe
//! module (with [`super::gather`] and [`super::jump`]): every bound it relies on is checked in
//! this file, not assumed from the basket's own checks.
#![allow(unsafe_code)]

use super::specialized::plain_list_head;
use crate::types::{Element, SHORT_RUN};

/// The big-endian `u32` at `p`.
///
/// # Safety
/// `p..p + 4` is inside one allocation.
#[inline(always)]
unsafe fn be32(p: *const u8) -> u32 {
    // SAFETY: the caller's bound; unaligned reads are allowed for `[u8; 4]`.
    u32::from_be_bytes(unsafe { p.cast::<[u8; 4]>().read_unaligned() })
}

/// Appends the `vector<vector<T>>` entries between `bounds` (entry offsets into `data`) while
/// they are the common case: a plain object header and count (as
/// [`super::specialized::plain_list_head`] states it), then lists that fill the entry exactly.
/// Returns how many entries it appended; the entry it stopped at has nothing written. `inner`
/// gets the end of each list in `values`, `outer` the index in `inner` of each entry's last
/// list end (as the general rules write them).
pub(super) fn short_nested_lists<T: Element>(
    data: &[u8],
    bounds: &[u32],
    outer: &mut Vec<u64>,
    inner: &mut Vec<u64>,
    values: &mut Vec<T>,
) -> usize {
    let Some((&first, ends)) = bounds.split_first() else {
        return 0;
    };
    let run = SHORT_RUN / T::SIZE;
    // Entries are taken only inside `first..limit`: the room below is made for those bytes.
    let (first, last) = (first as usize, ends.last().map_or(0, |&e| e as usize));
    let limit = last.min(data.len());
    let room = limit.saturating_sub(first);
    // Every list takes at least its 4-byte count and every value its size, inside
    // `first..limit`; a short list writes a whole run past its own values.
    super::reserve(outer, ends.len());
    super::reserve(inner, room / 4);
    super::reserve(values, room / T::SIZE + run);
    let (o_cap, i_cap, v_cap) = (
        outer.len() + ends.len(),
        inner.len() + room / 4,
        values.len() + room / T::SIZE + run,
    );
    let (op, ip, vp) = (outer.as_mut_ptr(), inner.as_mut_ptr(), values.as_mut_ptr());
    let dp = data.as_ptr();
    let (o0, mut o, mut i, mut v) = (outer.len(), outer.len(), inner.len(), values.len());
    let mut s = first;
    for &end in ends {
        let e = end as usize;
        // Inside the basket and the room (the header rule refuses `e < s + 10`, so entries
        // taken are in order and apart).
        if e > limit {
            break;
        }
        // Each list takes at least its count.
        let Some((n, mut p)) = plain_list_head(data, s, e, 4) else {
            break;
        };
        let (mark_i, mark_v) = (i, v);
        let mut left = n;
        while left > 0 && p + 4 <= e {
            // SAFETY: `p + 4 <= e <= data.len()`.
            let m = unsafe { be32(dp.add(p)) } as usize;
            let start = p + 4;
            // No overflow: `m` is under 2^32 and the size at most 8.
            let stop = start + m * T::SIZE;
            if stop > e {
                break;
            }
            // The values `v..v + m` lie in `start..stop`, inside `first..limit` and apart
            // from every other value's bytes: `v + m <= v_cap - run`.
            debug_assert!(v + m.max(run) <= v_cap && i < i_cap);
            if m <= run && start + SHORT_RUN <= data.len() {
                // A short list: a whole run decoded, its excess overwritten by what follows.
                let mut chunk = [T::default(); SHORT_RUN];
                // SAFETY: `start + SHORT_RUN <= data.len()`; `v + run <= v_cap` (above).
                unsafe {
                    let src = dp.add(start).cast::<[u8; SHORT_RUN]>().read_unaligned();
                    T::decode_short_run(&src, &mut chunk);
                    std::ptr::copy_nonoverlapping(chunk.as_ptr(), vp.add(v), run);
                }
            } else {
                // SAFETY: `v + m <= v_cap` (above).
                unsafe { long_list(data.get(start..stop).unwrap_or_default(), vp.add(v)) };
            }
            v += m;
            // SAFETY: `i < i_cap`: this list's count lies in `first..limit`, apart from every
            // other list's.
            unsafe { ip.add(i).write(v as u64) };
            i += 1;
            p = stop;
            left -= 1;
        }
        if left != 0 || p != e {
            (i, v) = (mark_i, mark_v);
            break;
        }
        debug_assert!(o < o_cap);
        // SAFETY: `o < o_cap`: one per entry of `ends`. (List ends start with a 0, so `i` is
        // at least 1; wrapping, not a panic, were a caller to pass them empty.)
        unsafe { op.add(o).write((i as u64).wrapping_sub(1)) };
        o += 1;
        s = e;
    }
    // SAFETY: every index below the new lengths was written above (a short run writes past
    // `v`, but `v` only counts values decoded from their own bytes), within the room made.
    unsafe {
        outer.set_len(o);
        inner.set_len(i);
        values.set_len(v);
    }
    o - o0
}

/// Decodes the values of `src` to `out`: a list too long for one run, or too near the basket's
/// end to read a whole one. Out of line, so the common case keeps its registers.
///
/// # Safety
/// `out` has room for `src.len() / T::SIZE` values.
#[cold]
#[inline(never)]
unsafe fn long_list<T: Element>(src: &[u8], out: *mut T) {
    let run = SHORT_RUN / T::SIZE;
    let mut chunk = [T::default(); SHORT_RUN];
    for (k, piece) in src.chunks(run * T::SIZE).enumerate() {
        let got = piece.len() / T::SIZE;
        T::decode_into(piece, &mut chunk[..got]);
        // SAFETY: `k * run + got <= src.len() / T::SIZE`, the caller's room.
        unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), out.add(k * run), got) };
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use crate::decode::specialized::{body, count};

    /// An entry as ROOT streams a `vector<vector<T>>`: byte count, version 9, the lists.
    fn entry<T: Copy>(lists: &[Vec<T>], be: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
        let mut body = (lists.len() as u32).to_be_bytes().to_vec();
        for list in lists {
            body.extend((list.len() as u32).to_be_bytes());
            list.iter().for_each(|&x| body.extend(be(x)));
        }
        let mut e = ((body.len() as u32 + 2) | 0x4000_0000)
            .to_be_bytes()
            .to_vec();
        e.extend([0, 9]);
        e.extend(body);
        e
    }

    /// The general rules' lists of one entry (printed: a damaged float may be a NaN), or
    /// `None` where they refuse it.
    fn general<T: Element>(ent: &[u8]) -> Option<Vec<String>> {
        let (n, mut rest) = count(0, body(0, ent).ok()?, 4).ok()?;
        let mut lists = Vec::new();
        for _ in 0..n {
            let (m, r) = count(0, rest, T::SIZE).ok()?;
            let (vals, r) = r.split_at(m * T::SIZE);
            let mut list = Vec::new();
            T::extend_from_be(vals, &mut list);
            lists.push(format!("{list:?}"));
            rest = r;
        }
        rest.is_empty().then_some(lists)
    }

    /// The kernel's entries, each as its lists printed, with its columns' invariants checked.
    fn kernel<T: Element>(data: &[u8], bounds: &[u32]) -> Vec<Vec<String>> {
        // Columns that already hold an entry of one list of one value, as when a basket
        // follows another.
        let (mut outer, mut inner, mut values) = (vec![0u64, 1], vec![0u64, 1], vec![T::default()]);
        let taken = short_nested_lists::<T>(data, bounds, &mut outer, &mut inner, &mut values);
        assert_eq!(outer.len(), taken + 2);
        assert_eq!(*inner.last().unwrap() as usize, values.len());
        assert_eq!(*outer.last().unwrap() as usize, inner.len() - 1);
        outer[1..]
            .windows(2)
            .map(|w| {
                (w[0] as usize..w[1] as usize)
                    .map(|k| format!("{:?}", &values[inner[k] as usize..inner[k + 1] as usize]))
                    .collect()
            })
            .collect()
    }

    /// Entries `bounds` of `data` the kernel takes: each as the general rules read it, and
    /// none past the first entry they refuse.
    fn agree<T: Element>(data: &[u8], bounds: &[u32]) -> usize {
        let taken = kernel::<T>(data, bounds);
        for (k, lists) in taken.iter().enumerate() {
            let ent = &data[bounds[k] as usize..bounds[k + 1] as usize];
            assert_eq!(
                Some(lists),
                general::<T>(ent).as_ref(),
                "entry {k} of {bounds:?}"
            );
        }
        taken.len()
    }

    /// Lists of every length around a run's (`run - 1` to `run + 1`, and long), zero to three
    /// per entry, the last ones within a run of the basket's end.
    fn basket<T: Copy>(
        make: impl Fn(usize) -> T,
        be: impl Fn(T) -> Vec<u8>,
    ) -> (Vec<u8>, Vec<u32>) {
        let (mut data, mut bounds) = (Vec::new(), vec![0u32]);
        for k in 0..60 {
            let lists: Vec<Vec<T>> = (0..k % 4)
                .map(|l| (0..(k * 7 + l * 3) % 19).map(|x| make(k + x)).collect())
                .collect();
            data.extend(entry(&lists, &be));
            bounds.push(data.len() as u32);
        }
        (data, bounds)
    }

    #[test]
    fn takes_every_plain_entry_as_the_general_rules_read_it() {
        let (data, bounds) = basket(|x| x as f32 * 0.25, |x| x.to_be_bytes().to_vec());
        assert_eq!(agree::<f32>(&data, &bounds), 60);
        let (data, bounds) = basket(|x| x as f64 - 3.5, |x| x.to_be_bytes().to_vec());
        assert_eq!(agree::<f64>(&data, &bounds), 60);
        let (data, bounds) = basket(|x| x as u8, |x| vec![x]);
        assert_eq!(agree::<u8>(&data, &bounds), 60);
        let (data, bounds) = basket(|x| x as i16 - 9, |x| x.to_be_bytes().to_vec());
        assert_eq!(agree::<i16>(&data, &bounds), 60);
    }

    /// Every byte of a basket flipped, and the basket cut everywhere: the entries taken are
    /// the general rules' (the kernel stops at what it does not take; the general rules then
    /// say what is wrong).
    #[test]
    fn damaged_entries_are_taken_only_as_the_general_rules_read_them() {
        let (good, bounds) = basket(|x| x as f32 * 0.25, |x| x.to_be_bytes().to_vec());
        for i in 0..good.len() {
            for bit in [0, 3, 6, 7] {
                let mut data = good.clone();
                data[i] ^= 1 << bit;
                agree::<f32>(&data, &bounds);
            }
            // Cut: entries past the end are refused, those before taken.
            let taken = agree::<f32>(&good[..i], &bounds);
            assert!(bounds[taken] as usize <= i);
        }
    }

    /// Entry bounds out of order, past the data or absurd: never a read outside the data or a
    /// write outside the room (checked by the debug assertions and the columns' invariants).
    #[test]
    fn bounds_out_of_order_or_outside_the_data_are_refused() {
        let (data, bounds) = basket(|x| x as f32, |x| x.to_be_bytes().to_vec());
        let end = data.len() as u32;
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![0],
            vec![bounds[3], bounds[1]],
            vec![0, bounds[1], bounds[1] - 3, bounds[2]],
            vec![0, bounds[5], bounds[2], bounds[9]],
            vec![0, end + 1],
            vec![0, u32::MAX],
            vec![u32::MAX, u32::MAX],
            vec![bounds[2], bounds[3], u32::MAX, end],
            vec![0, bounds[1], bounds[2], 5],
        ];
        for b in &cases {
            agree::<f32>(&data, b);
        }
        assert_eq!(agree::<f32>(&data, &cases[4]), 0);
        // The room is made for the bytes up to the last bound: entries past it are not taken.
        assert_eq!(agree::<f32>(&data, &cases[9]), 0);
        assert_eq!(agree::<f32>(&data, &cases[3]), 1);
    }
}

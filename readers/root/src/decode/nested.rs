//! `vector<vector<T>>` entries in the common case, written straight into the columns' spare
//! capacity. In safe code the loop held about 130 instructions an entry of the NanoAOD
//! `LHE_scale` branch (one list of 3.3 floats on average; callgrind), most of them bounds and
//! growth checks and the spills of the lengths they need, and the full read at 0.68 of
//! decompression alone (BENCHMARKS.md run #32).
//!
//! Here the room the entries can fill is made once, from the bytes they span (each value takes
//! its size, each list its count), so writes need no check; every read is of bytes inside the
//! basket, which each entry's bounds are checked against once. Entries a run and a count or
//! more before the basket's end (nearly all) are walked with fewer checks still: no read can
//! leave the basket, the byte count and class version are one compare, and a short list that
//! overruns its entry is caught where the entry ends. That took the walk from 84 to 55
//! instructions an entry (callgrind, `LHE_scale`), and 52 with MOVBE and BMI2; the full read
//! 1.069x faster (BENCHMARKS.md run #43).
//!
//! One of the decoders' three unsafe modules (with [`super::jump`] and [`super::scaled`]; the
//! basket's entry-offset table holds the reader's other SIMD kernel): every bound it relies on
//! is checked in this file, not assumed from the basket's own checks.
#![allow(unsafe_code)]

use super::framing::{BYTE_COUNT_FLAG, plain_list_head, plain_version, reserve};
use crate::types::{Element, SHORT_RUN};

/// The big-endian `u64` at `p`.
///
/// # Safety
/// `p..p + 8` is inside one allocation.
#[inline(always)]
unsafe fn be64(p: *const u8) -> u64 {
    // SAFETY: the caller's bound; unaligned reads are allowed for `[u8; 8]`.
    u64::from_be_bytes(unsafe { p.cast::<[u8; 8]>().read_unaligned() })
}

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
    reserve(outer, ends.len());
    reserve(inner, room / 4);
    reserve(values, room / T::SIZE + run);
    let columns = Columns {
        outer: outer.as_mut_ptr(),
        inner: inner.as_mut_ptr(),
        values: values.as_mut_ptr(),
        #[cfg(debug_assertions)]
        caps: [
            outer.len() + ends.len(),
            inner.len() + room / 4,
            values.len() + room / T::SIZE + run,
        ],
    };
    let o0 = outer.len();
    let mut at = Walk {
        s: first,
        o: o0,
        i: inner.len(),
        v: values.len(),
    };
    // Entries of the first entry's class version that end a run and a count or more before
    // the basket's end are walked with fewer checks: a run read past any of their values, or
    // a count read anywhere in them, stays in `data`, and their byte counts are under the flag.
    let version = data
        .get(first + 4..)
        .and_then(|h| h.first_chunk().copied())
        .map(u16::from_be_bytes)
        .filter(|&v| plain_version(v));
    let far = version.map_or(0, |_| {
        let count_and_run = data.len().saturating_sub(SHORT_RUN + 4);
        limit.min(count_and_run).min(BYTE_COUNT_FLAG as usize - 1)
    });
    // SAFETY: the columns have the room `walk` relies on (made above for the bytes of
    // `first..limit`, and `far <= limit`), and `far` is a run and a count or more before
    // `data`'s end.
    unsafe {
        let k = walk_far::<T>(data, ends, far, version.unwrap_or(0), &mut at, &columns);
        walk::<T, true>(data, &ends[k..], limit, 0, &mut at, &columns);
    }
    // SAFETY: every index below the new lengths was written by `walk` (a short run writes past
    // `v`, but `v` only counts values decoded from their own bytes), within the room made.
    unsafe {
        outer.set_len(at.o);
        inner.set_len(at.i);
        values.set_len(at.v);
    }
    at.o - o0
}

/// [`walk`] without `NEAR_END`, with x86-64-v3's AVX2, BMI2 and MOVBE where the machine has
/// them (a run is one 32-byte shuffle instead of two 16-byte ones, and a big-endian count one
/// load instead of a load and a swap; callgrind on `LHE_scale`: 10.4 million instructions
/// against 11.0).
///
/// # Safety
/// As [`walk`]'s.
unsafe fn walk_far<T: Element>(
    data: &[u8],
    ends: &[u32],
    limit: usize,
    version: u16,
    at: &mut Walk,
    cols: &Columns<T>,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("movbe")
    {
        // The parameters one by one, as `walk` takes them: passed bundled in a struct, the
        // walk kept fewer of them in registers (callgrind: 10.8 million instructions, not 10.4).
        #[target_feature(enable = "avx2,bmi2,movbe")]
        unsafe fn avx2<T: Element>(
            data: &[u8],
            ends: &[u32],
            limit: usize,
            version: u16,
            at: &mut Walk,
            cols: &Columns<T>,
        ) -> usize {
            // SAFETY: the caller's.
            unsafe { walk::<T, false>(data, ends, limit, version, at, cols) }
        }
        // SAFETY: the machine has AVX2, BMI2 and MOVBE (asked above); the rest is the caller's.
        return unsafe { avx2(data, ends, limit, version, at, cols) };
    }
    // SAFETY: the caller's.
    unsafe { walk::<T, false>(data, ends, limit, version, at, cols) }
}

/// Where a walk stands: the next entry's start, and the columns' lengths.
#[derive(Clone, Copy)]
struct Walk {
    s: usize,
    o: usize,
    i: usize,
    v: usize,
}

/// The columns' buffers, with room made for the entries a walk may take.
struct Columns<T> {
    outer: *mut u64,
    inner: *mut u64,
    values: *mut T,
    /// The room made in each, checked by debug assertions.
    #[cfg(debug_assertions)]
    caps: [usize; 3],
}

/// Walks the entries ending at `ends` from `at`, writing them to `cols`, until one ends past
/// `limit` or is not the common case; returns how many it took and leaves `at` after them.
/// With `NEAR_END`, every read is checked against `data`'s end and every header by the
/// general rule; without, the entries are walked only up to a `limit` a run and a count or
/// more before it, which need no such checks, and only entries of class version `version`
/// are taken (a plain version, or the walk takes what the rules refuse; `limit` under the
/// byte-count flag, so that the count and version are one compare).
///
/// # Safety
/// `cols` has room for every entry, list and value in `at.s..limit` as
/// [`short_nested_lists`] makes it (and a run past the last value); without `NEAR_END`,
/// `limit + SHORT_RUN + 4 <= data.len()`.
#[inline(always)]
unsafe fn walk<T: Element, const NEAR_END: bool>(
    data: &[u8],
    ends: &[u32],
    limit: usize,
    version: u16,
    at: &mut Walk,
    cols: &Columns<T>,
) -> usize {
    let run = SHORT_RUN / T::SIZE;
    let dp = data.as_ptr();
    let head_key = (u64::from(BYTE_COUNT_FLAG) << 16) | u64::from(version);
    let Walk {
        mut s,
        mut o,
        mut i,
        mut v,
    } = *at;
    let o0 = o;
    for &end in ends {
        let e = end as usize;
        // Inside the basket and the room (the header rule refuses `e < s + 10`, so entries
        // taken are in order and apart).
        if e > limit {
            break;
        }
        // Each list takes at least its count.
        let head = if NEAR_END {
            plain_list_head(data, s, e, 4)
        } else {
            e.checked_sub(s + 10).and_then(|body| {
                // The byte count and the version, in one compare: with `body + 6` under the
                // flag (`limit` is), the count is the flag plus `body + 6`.
                let want = ((body as u64 + 6) << 16) + head_key;
                // SAFETY: `s + 10 <= e <= limit`, inside `data` (the caller's bound).
                let (head, n) = unsafe { (be64(dp.add(s)) >> 16, be32(dp.add(s + 6))) };
                (head == want).then_some((n as usize, s + 10))
            })
        };
        let Some((n, mut p)) = head else {
            break;
        };
        let mut left = n;
        // Lists are read until they reach the entry's end, and then must be `n`. A count at
        // `p` is in `first..limit`, and so is every value before it (each list takes at least
        // its count's 4 bytes, each value its size): `i < i_cap` and `v + run <= v_cap`.
        // A count is read inside `data`: `p + 4 <= e` with `NEAR_END`, and without it
        // `p < e <= limit` and `limit + SHORT_RUN + 4 <= data.len()` (the caller's bound).
        while p < e && (!NEAR_END || p + 4 <= e) {
            // SAFETY: `p + 4 <= data.len()` (above).
            let m = unsafe { be32(dp.add(p)) } as usize;
            let start = p + 4;
            // No overflow: `m` is under 2^32 and the size at most 8.
            let stop = start + m * T::SIZE;
            #[cfg(debug_assertions)]
            debug_assert!(v + run <= cols.caps[2] && i < cols.caps[1]);
            if m <= run && (!NEAR_END || start + SHORT_RUN <= data.len()) {
                // A short list: a whole run decoded, its excess overwritten by what follows.
                // One that runs past the entry's end leaves `p` past it, and the entry is not
                // taken (below).
                let mut chunk = [T::default(); SHORT_RUN];
                // SAFETY: `start + SHORT_RUN <= data.len()` (above, or `start <= e + 3`
                // without `NEAR_END`); `v + run <= v_cap` (above).
                unsafe {
                    let src = dp.add(start).cast::<[u8; SHORT_RUN]>().read_unaligned();
                    T::decode_short_run(&src, &mut chunk);
                    std::ptr::copy_nonoverlapping(chunk.as_ptr(), cols.values.add(v), run);
                }
            } else {
                if stop > e {
                    break;
                }
                // SAFETY: `v + m <= v_cap`: the values lie in `start..stop`, before `e`.
                unsafe {
                    long_list(
                        data.get(start..stop).unwrap_or_default(),
                        cols.values.add(v),
                    )
                };
            }
            v += m;
            // SAFETY: `i < i_cap` (above).
            unsafe { cols.inner.add(i).write(v as u64) };
            i += 1;
            p = stop;
            left = left.wrapping_sub(1);
        }
        if p != e || left != 0 {
            // Back to where the entry started: after the walk's last entry, whose last list
            // end is in `inner` (kept out of registers for the loop above).
            (i, v) = if o == o0 {
                (at.i, at.v)
            } else {
                // SAFETY: this walk wrote `o - 1`, the last entry it took, and (when that
                // entry ends past `at.i`) its last list end at `mark - 1`.
                let mark = unsafe { cols.outer.add(o - 1).read() }.wrapping_add(1) as usize;
                let v = match mark == at.i {
                    true => at.v,
                    // SAFETY: as above.
                    false => unsafe { cols.inner.add(mark - 1).read() as usize },
                };
                (mark, v)
            };
            break;
        }
        #[cfg(debug_assertions)]
        debug_assert!(o < cols.caps[0]);
        // SAFETY: `o < o_cap`: one per entry of `ends`. (List ends start with a 0, so `i` is
        // at least 1; wrapping, not a panic, were a caller to pass them empty.)
        unsafe { cols.outer.add(o).write((i as u64).wrapping_sub(1)) };
        o += 1;
        s = e;
    }
    *at = Walk { s, o, i, v };
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
    use crate::decode::framing::{body, count};

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

    /// Entries of other class versions than the first's: the plain ones taken all the same (by
    /// the checked walk, which the quick one hands over to), the member-wise ones refused.
    #[test]
    fn entries_of_another_version_are_taken_as_the_general_rules_read_them() {
        let (good, bounds) = basket(|x| x as f32 * 0.5, |x| x.to_be_bytes().to_vec());
        for (k, version, taken) in [
            (10, [0, 8], 60),
            (0, [0, 8], 60),
            (10, [0x80, 9], 60),
            (10, [0x40, 9], 10),
            (10, [0, 0], 10),
            (59, [1, 9], 60),
        ] {
            let mut data = good.clone();
            let at = bounds[k] as usize + 4;
            data[at..at + 2].copy_from_slice(&version);
            assert_eq!(agree::<f32>(&data, &bounds), taken, "{k} {version:?}");
        }
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

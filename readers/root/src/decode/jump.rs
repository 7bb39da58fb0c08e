//! The check of `vector<string>` entries without walking their strings one by one. Each
//! string's place is where the one before it ends, so a walk is a chain of dependent loads, and
//! a branch where each list ends. That walk alone held the NanoAOD `vector<string>` full read
//! at 0.57-0.59 of decompression alone (BENCHMARKS.md run #19), under the 0.85 bar; without it
//! the full read is at 0.73-0.74 (runs #31 and #32).
//!
//! Here the "next string" step is computed at once for every byte of an entry (byte `i` with
//! length byte `b` leads to `i + 1 + b`), then composed with itself by byte permutations
//! (AVX-512 VBMI): 2, 4 and 8 steps in three permutations, and the places after 0 to 15 steps,
//! every count at once, in four more. No branch depends on the strings. One of the decoders'
//! three unsafe modules (with [`super::nested`] and [`super::scaled`]); every bound it relies
//! on is checked in safe code in this file.
#![allow(unsafe_code)]

use super::framing::plain_list_head;

/// Most bytes of strings an entry may hold to be checked here: the step table has a place for
/// each of the window's 64 bytes, and a walk that runs past the strings stops at the last one,
/// which then must not be one of theirs.
pub(super) const MAX_BYTES: usize = 62;

/// Most strings an entry may hold to be checked here (four bits of steps).
pub(super) const MAX_STRINGS: usize = 16;

/// Bytes read from where an entry's strings start: its strings and whatever follows them.
const WINDOW: usize = 64;

/// Proof that this machine has AVX-512 with byte permutations (made only after asking it once).
#[derive(Debug, Clone, Copy)]
pub(super) struct Vbmi(());

impl Vbmi {
    /// The proof, when the machine has AVX-512 F, BW and VBMI.
    pub(super) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi")
        {
            return Some(Self(()));
        }
        None
    }

    /// How many of the `vector<string>` entries between `bounds` (entry offsets into `data`),
    /// from the first, are the common case: a plain object header and count, then strings of
    /// under 255 bytes that fill the entry exactly ([`super::text_lists`]'s rule). Entries of
    /// over [`MAX_BYTES`] bytes of strings or over [`MAX_STRINGS`] strings, and those within 64
    /// bytes of the end of `data`, are walked.
    pub(super) fn plain_string_lists(self, data: &[u8], bounds: &[u32]) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `self` proves AVX-512 F, BW and VBMI are present.
            unsafe { vbmi::plain_string_lists(data, bounds) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (data, bounds);
            0
        }
    }
}

/// Whether `strings` is `n` strings of under 255 bytes that fill it exactly, walked one after the
/// other.
#[inline(always)]
pub(super) fn strings_walk(strings: &[u8], n: usize) -> bool {
    let mut p = 0;
    for _ in 0..n {
        match strings.get(p) {
            Some(&len) if len != 255 => p += 1 + usize::from(len),
            _ => return false,
        }
    }
    p == strings.len()
}

/// The window of [`WINDOW`] bytes from `start`, when the strings of `start..end` may be
/// checked in it: at most [`MAX_BYTES`] of them, 1 to [`MAX_STRINGS`] strings.
#[inline(always)]
fn window(data: &[u8], start: usize, end: usize, n: usize) -> Option<&[u8; WINDOW]> {
    let fits = end.checked_sub(start).is_some_and(|len| len <= MAX_BYTES)
        && (1..=MAX_STRINGS).contains(&n);
    data.get(start..)?.first_chunk::<WINDOW>().filter(|_| fits)
}

#[cfg(target_arch = "x86_64")]
mod vbmi {
    use std::arch::x86_64::{
        __m512i, _mm512_adds_epu8, _mm512_loadu_si512, _mm512_mask_permutexvar_epi8,
        _mm512_min_epu8, _mm512_permutexvar_epi8, _mm512_set1_epi8, _mm512_setzero_si512,
    };

    use super::{MAX_BYTES, MAX_STRINGS, WINDOW, strings_walk, window};
    use crate::decode::framing::plain_list_head;

    /// Place `i`, 0..64.
    const PLACES: [u8; WINDOW] = {
        let mut p = [0u8; WINDOW];
        let mut i = 0;
        while i < WINDOW {
            p[i] = i as u8;
            i += 1;
        }
        p
    };

    /// See [`super::Vbmi::plain_string_lists`].
    ///
    /// # Safety
    /// AVX-512 F, BW and VBMI must be present.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn plain_string_lists(data: &[u8], bounds: &[u32]) -> usize {
        for (k, pair) in bounds.windows(2).enumerate() {
            let (s, e) = (pair[0] as usize, pair[1] as usize);
            // Each string takes at least its length byte.
            let Some((n, p)) = plain_list_head(data, s, e, 1) else {
                return k;
            };
            let fill = match window(data, p, e, n) {
                Some(w) => strings_fill(w, e - p, n),
                None => strings_walk(data.get(p..e).unwrap_or_default(), n),
            };
            if !fill {
                return k;
            }
        }
        bounds.len().saturating_sub(1)
    }

    /// Lanes whose index has bit 0, 1, 2 or 3 set.
    const LANE_BITS: [u64; 4] = [
        0xaaaa_aaaa_aaaa_aaaa,
        0xcccc_cccc_cccc_cccc,
        0xf0f0_f0f0_f0f0_f0f0,
        0xff00_ff00_ff00_ff00,
    ];

    /// Whether the first `len` bytes of `window` are exactly `n` strings of under 255 bytes
    /// (what follows them does not matter). `len` must be at most [`MAX_BYTES`] and `n` 1 to
    /// [`super::MAX_STRINGS`] (else the answer is wrong, never unsafe).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    #[inline]
    pub(super) fn strings_fill(window: &[u8; WINDOW], len: usize, n: usize) -> bool {
        // SAFETY: both arrays are 64 bytes, read unaligned.
        let (bytes, places) = unsafe {
            (
                _mm512_loadu_si512(window.as_ptr().cast::<__m512i>()),
                _mm512_loadu_si512(PLACES.as_ptr().cast::<__m512i>()),
            )
        };
        // One step from every place i: to i + 1 + b, b its byte, or to place 63 where that is
        // further, where the walk then stays (a length byte of 255, the long form, always
        // goes there). Nothing here depends on the entry: past `len`, places only grow, so a
        // walk that leaves the strings never comes back to their end.
        let past = _mm512_set1_epi8(63);
        let step1 = _mm512_min_epu8(
            _mm512_adds_epu8(_mm512_adds_epu8(places, _mm512_set1_epi8(1)), bytes),
            past,
        );
        let step2 = _mm512_permutexvar_epi8(step1, step1);
        let step4 = _mm512_permutexvar_epi8(step2, step2);
        let step8 = _mm512_permutexvar_epi8(step4, step4);
        // Lane k: where k steps from place 0 lead, one power of two per bit of k (masks that
        // are the same for every entry: no mask built from the count, no branch).
        let mut walk = _mm512_setzero_si512();
        for (lanes, power) in LANE_BITS.into_iter().zip([step1, step2, step4, step8]) {
            walk = _mm512_mask_permutexvar_epi8(walk, lanes, walk, power);
        }
        // SAFETY: a 64-byte vector read as 64 bytes.
        let walk: [u8; WINDOW] = unsafe { std::mem::transmute(walk) };
        // The n-th string starts n - 1 steps on, and ends exactly at `len`.
        let last = usize::from(walk[(n - 1) % MAX_STRINGS]) % WINDOW;
        last + 1 + usize::from(window[last]) == len.min(MAX_BYTES)
    }
}

/// How many of the entries between `bounds`, from the first, are the common case: a plain
/// header and count, then strings of under 255 bytes that fill the entry exactly. The walk
/// without VBMI, and what [`Vbmi::plain_string_lists`] must agree with.
pub(super) fn plain_string_lists(data: &[u8], bounds: &[u32]) -> usize {
    for (k, pair) in bounds.windows(2).enumerate() {
        let (s, e) = (pair[0] as usize, pair[1] as usize);
        // Each string takes at least its length byte.
        let plain = plain_list_head(data, s, e, 1)
            .is_some_and(|(n, p)| strings_walk(data.get(p..e).unwrap_or_default(), n));
        if !plain {
            return k;
        }
    }
    bounds.len().saturating_sub(1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    /// The kernel on `strings` followed by `after` (repeated to a full window); `None` where
    /// [`window`] does not take it or the machine has no VBMI.
    fn kernel(strings: &[u8], n: usize, after: &[u8]) -> Option<bool> {
        let _present = Vbmi::detect()?;
        let mut data = strings.to_vec();
        data.extend(after.iter().cycle().take(WINDOW));
        let w = window(&data, 0, strings.len(), n)?;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `_present` proves AVX-512 F, BW and VBMI are present.
        return Some(unsafe { vbmi::strings_fill(w, strings.len(), n) });
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    fn strings_of(lengths: &[usize]) -> Vec<u8> {
        lengths
            .iter()
            .flat_map(|&l| std::iter::once(l as u8).chain(std::iter::repeat_n(b'x', l)))
            .collect()
    }

    /// Whatever follows the strings in the window.
    const AFTER: [&[u8]; 4] = [&[0], &[255], &[1, 0, 2], b"good"];

    /// Every way to damage one byte of lists of many shapes, every count, every cut, whatever
    /// follows: the walk's answer.
    #[test]
    fn agrees_with_the_walk_on_lists_and_every_damage() {
        if Vbmi::detect().is_none() {
            return;
        }
        let shapes: [&[usize]; 8] = [
            &[0],
            &[4, 6, 4, 4],
            &[0; 16],
            &[61],
            &[60, 0],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
            &[6; 8],
            &[2; 15],
        ];
        let mut checked = 0;
        for lengths in shapes {
            let good = strings_of(lengths);
            for after in AFTER {
                assert!(strings_walk(&good, lengths.len()), "{lengths:?}");
                assert_eq!(kernel(&good, lengths.len(), after), Some(true));
                for n in 1..=MAX_STRINGS {
                    for at in 0..good.len() {
                        for value in [0, 1, 2, 5, 60, 61, 62, 63, 64, 200, 254, 255] {
                            let mut bad = good.clone();
                            bad[at] = value;
                            let answer = kernel(&bad, n, after);
                            assert_eq!(answer, Some(strings_walk(&bad, n)), "{lengths:?} {at}");
                            checked += 1;
                        }
                    }
                    for cut in 0..good.len() {
                        let answer = kernel(&good[..cut], n, after);
                        assert_eq!(answer, Some(strings_walk(&good[..cut], n)), "cut {cut}");
                    }
                }
            }
        }
        assert!(checked > 40_000, "{checked}");
    }

    /// Random bytes of every length the kernel takes, mostly small (so that some are lists):
    /// the walk's answer, true often enough to mean something.
    #[test]
    fn agrees_with_the_walk_on_random_bytes() {
        if Vbmi::detect().is_none() {
            return;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut lists = 0;
        for _ in 0..200_000 {
            let len = (next() % (MAX_BYTES as u64 + 1)) as usize;
            let small = 1 + next() % 8;
            let bytes: Vec<u8> = (0..len).map(|_| (next() % small) as u8).collect();
            let after: Vec<u8> = (0..4).map(|_| next() as u8).collect();
            let n = 1 + (next() % MAX_STRINGS as u64) as usize;
            let walked = strings_walk(&bytes, n);
            assert_eq!(kernel(&bytes, n, &after), Some(walked), "{bytes:?} {n}");
            lists += usize::from(walked);
        }
        assert!(lists > 1_000, "{lists} lists");
    }

    /// Entries in ROOT's layout, 0 to 20 strings of 0 to 40 bytes, with one byte of one header
    /// or string damaged at a time (every byte of the first entries, every value that matters):
    /// as many entries taken as by the check machines without VBMI run (the header rule and the
    /// walk).
    #[test]
    fn whole_entries_agree_with_the_header_rule_and_the_walk() {
        let Some(vbmi) = Vbmi::detect() else {
            return;
        };
        let mut data = Vec::new();
        let mut bounds = vec![0u32];
        for k in 0..40usize {
            let lengths: Vec<usize> = (0..(k * 7) % 21).map(|i| (i * k + 3) % 41).collect();
            let mut body = (lengths.len() as u32).to_be_bytes().to_vec();
            body.extend(strings_of(&lengths));
            data.extend(crate::decode::framing::headed_for_test(&body, [0, 9]));
            bounds.push(data.len() as u32);
        }
        let plainly = |data: &[u8]| plain_string_lists(data, &bounds);
        assert_eq!(vbmi.plain_string_lists(&data, &bounds), bounds.len() - 1);
        let mut checked = 0;
        for at in 0..bounds[6] as usize {
            for value in [0, 1, 4, 9, 0x40, 0x80, 254, 255] {
                let mut bad = data.clone();
                bad[at] = value;
                assert_eq!(
                    vbmi.plain_string_lists(&bad, &bounds),
                    plainly(&bad),
                    "{at}"
                );
                checked += 1;
            }
        }
        assert!(checked > 1_000, "{checked}");
        // Bounds out of order or past the data: refused where the rule refuses them.
        let mut wrong = bounds.clone();
        wrong[3] = u32::MAX;
        assert_eq!(vbmi.plain_string_lists(&data, &wrong), 2);
        wrong[3] = wrong[2] - 1;
        assert_eq!(vbmi.plain_string_lists(&data, &wrong), 2);
    }

    #[test]
    fn leaves_long_entries_and_counts_to_the_walk() {
        if Vbmi::detect().is_none() {
            return;
        }
        let long = strings_of(&[61, 0]);
        assert_eq!(long.len(), MAX_BYTES + 1);
        assert_eq!(kernel(&long, 2, &[0]), None);
        let many = strings_of(&[0; MAX_STRINGS + 1]);
        assert_eq!(kernel(&many, MAX_STRINGS + 1, &[0]), None);
        assert_eq!(kernel(&[], 0, &[0]), None);
        // Too close to the end of the data for a window: walked.
        let data = strings_of(&[3, 4]);
        assert_eq!(window(&data, 0, data.len(), 2), None);
    }
}

//! The check of a `vector<string>` entry's strings without walking them one by one. Each
//! string's place is where the one before it ends, so a walk is a chain of dependent loads:
//! about six cycles a string, plus a mispredicted branch where each list ends. That walk alone
//! held the NanoAOD `vector<string>` full read at 0.57-0.59 of decompression alone (BENCHMARKS.md
//! run #19), under the 0.85 bar.
//!
//! Here the "next string" step is computed at once for every byte of the entry (byte `i` with
//! length byte `b` leads to `i + 1 + b`), then composed with itself by byte permutations
//! (AVX-512 VBMI): 2, 4 and 8 steps in three permutations, any count up to 16 in four more. No
//! branch depends on the strings. The second unsafe module of the decoders (with
//! [`super::gather`]); every bound it relies on is checked in safe code here.
#![allow(unsafe_code)]

/// Most bytes of strings an entry may hold to be checked here: the step table has 64 places,
/// one for each byte, one for the end of the strings and one for "ran past the end".
pub(super) const MAX_BYTES: usize = 62;

/// Most strings an entry may hold to be checked here (four bits of steps).
pub(super) const MAX_STRINGS: usize = 16;

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

    /// Whether `strings` is exactly `n` strings of under 255 bytes, each a length byte and
    /// that many bytes (the common case of [`super::specialized::string`]), as a walk from its
    /// start would find; `None` when it holds more than [`MAX_BYTES`] bytes or `n` is 0 or more
    /// than [`MAX_STRINGS`] (the caller then walks it).
    #[inline]
    pub(super) fn strings_fill(self, strings: &[u8], n: usize) -> Option<bool> {
        if strings.len() > MAX_BYTES || n == 0 || n > MAX_STRINGS {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `self` proves AVX-512 F, BW and VBMI are present; `strings` holds at most
            // 62 bytes and `n` is 1..=16 (checked above).
            Some(unsafe { vbmi::strings_fill(strings, n) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod vbmi {
    use std::arch::x86_64::{
        __m512i, _mm_cvtsi128_si32, _mm512_adds_epu8, _mm512_castsi512_si128,
        _mm512_cmple_epu8_mask, _mm512_loadu_si512, _mm512_mask_mov_epi8, _mm512_maskz_loadu_epi8,
        _mm512_permutexvar_epi8, _mm512_set1_epi8,
    };

    use super::MAX_BYTES;

    /// Place `i`, 0..64.
    const PLACES: [u8; 64] = {
        let mut p = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            p[i] = i as u8;
            i += 1;
        }
        p
    };

    /// Where a walk that ran past the end of the strings stays.
    const PAST: i8 = 63;

    /// # Safety
    /// AVX-512 F, BW and VBMI must be present, `strings.len() <= 62` and `1 <= n <= 16`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn strings_fill(strings: &[u8], n: usize) -> bool {
        let len = strings.len().min(MAX_BYTES);
        let inside = (1u64 << len) - 1;
        // SAFETY: only the `len` bytes of `strings` are loaded (masked lanes read nothing) and
        // `PLACES` is 64 bytes, read unaligned.
        let (bytes, places) = unsafe {
            (
                _mm512_maskz_loadu_epi8(inside, strings.as_ptr().cast::<i8>()),
                _mm512_loadu_si512(PLACES.as_ptr().cast::<__m512i>()),
            )
        };
        let end = _mm512_set1_epi8(len as i8);
        // From place i, a string of length byte b ends at i + 1 + b (saturating: a length byte
        // of 255, the long form, never fits, as it must not).
        let ends = _mm512_adds_epu8(_mm512_adds_epu8(places, _mm512_set1_epi8(1)), bytes);
        let fits = _mm512_cmple_epu8_mask(ends, end) & inside;
        // One step from every place: to the string's end where it fits; the end stays the end;
        // everything else (past the end, and place 63) goes to and stays at `PAST`.
        let step = _mm512_mask_mov_epi8(_mm512_set1_epi8(PAST), fits, ends);
        let step1 = _mm512_mask_mov_epi8(step, 1u64 << len, end);
        let step2 = _mm512_permutexvar_epi8(step1, step1);
        let step4 = _mm512_permutexvar_epi8(step2, step2);
        let step8 = _mm512_permutexvar_epi8(step4, step4);
        // n - 1 steps from place 0, one power of two at a time, each applied where its bit of
        // n - 1 is set (a mask of all lanes or none, not a branch).
        let m = (n - 1) as u64;
        let all = |bit: u64| 0u64.wrapping_sub((m >> bit) & 1);
        let mut at = _mm512_mask_mov_epi8(places, all(0), step1);
        for (bit, power) in [(1, step2), (2, step4), (3, step8)] {
            at = _mm512_mask_mov_epi8(at, all(bit), _mm512_permutexvar_epi8(at, power));
        }
        let last = _mm512_permutexvar_epi8(at, step1);
        let lane0 = |v: __m512i| (_mm_cvtsi128_si32(_mm512_castsi512_si128(v)) & 0xff) as usize;
        // The n-th string ends at the end, and the one before it does not.
        lane0(at) != len && lane0(last) == len
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    /// The walk, one string after the other, written out plainly.
    fn walked(strings: &[u8], n: usize) -> bool {
        let mut p = 0;
        for _ in 0..n {
            match strings.get(p) {
                Some(&b) if b != 255 => p += 1 + usize::from(b),
                _ => return false,
            }
        }
        p == strings.len()
    }

    fn strings_of(lengths: &[usize]) -> Vec<u8> {
        lengths
            .iter()
            .flat_map(|&l| std::iter::once(l as u8).chain(std::iter::repeat_n(b'x', l)))
            .collect()
    }

    /// Every way to damage one byte of lists of many shapes, every count near the true one,
    /// every cut: the same answer as the walk.
    #[test]
    fn agrees_with_the_walk_on_lists_and_every_damage() {
        let Some(vbmi) = Vbmi::detect() else {
            return;
        };
        let shapes: [&[usize]; 8] = [
            &[0],
            &[4, 6, 4, 4],
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            &[61],
            &[60, 0],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
            &[6; 8],
            &[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
        ];
        let mut checked = 0;
        for lengths in shapes {
            let good = strings_of(lengths);
            assert!(walked(&good, lengths.len()), "{lengths:?}");
            assert_eq!(vbmi.strings_fill(&good, lengths.len()), Some(true));
            for at in 0..good.len() {
                for value in [0, 1, 2, 5, 60, 61, 62, 63, 64, 200, 254, 255] {
                    let mut bad = good.clone();
                    bad[at] = value;
                    for n in 1..=MAX_STRINGS {
                        assert_eq!(
                            vbmi.strings_fill(&bad, n),
                            Some(walked(&bad, n)),
                            "{lengths:?} byte {at} = {value}, {n} strings"
                        );
                        checked += 1;
                    }
                }
            }
            for cut in 0..good.len() {
                for n in 1..=MAX_STRINGS {
                    let answer = vbmi.strings_fill(&good[..cut], n);
                    assert_eq!(answer, Some(walked(&good[..cut], n)), "cut {cut}, {n}");
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn leaves_long_entries_and_counts_to_the_walk() {
        let Some(vbmi) = Vbmi::detect() else {
            return;
        };
        let long = strings_of(&[61, 0]);
        assert_eq!(long.len(), MAX_BYTES + 1);
        assert_eq!(vbmi.strings_fill(&long, 2), None);
        let many = strings_of(&[0; MAX_STRINGS + 1]);
        assert_eq!(vbmi.strings_fill(&many, MAX_STRINGS + 1), None);
        assert_eq!(vbmi.strings_fill(&[], 0), None);
    }
}

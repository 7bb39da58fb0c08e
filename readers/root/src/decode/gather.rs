//! The one check of [`super::text`] that safe code cannot make fast: sixteen `char*` entries'
//! length bytes, each at its entry's start, compared with the entries' sizes. Gathered one by
//! one, the loads cost more than the codec leaves for the whole check (the full read of a
//! NanoAOD `char*` branch reached 0.80 of decompression alone, under the 0.85 bar); AVX2 gathers
//! eight at once (0.87-0.88: BENCHMARKS.md runs #17 and #19). One of the decoders' three unsafe
//! modules (with [`super::jump`] and [`super::nested`]), with every bound it relies on checked
//! in this file.
#![allow(unsafe_code)]

/// Entries per call of [`Avx2::short_texts_agree`].
pub(super) const GROUP: usize = 16;

/// Proof that this machine has AVX2 (made only after asking it once).
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx2(());

impl Avx2 {
    /// The proof, when the machine has AVX2.
    pub(super) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            return Some(Self(()));
        }
        None
    }

    /// For the `char*` entries between the 17 offsets `bounds` into `data`, whether each is
    /// empty or a length byte under 255 followed by exactly that many bytes (the common case of
    /// [`super::specialized::short_string`]); `None` when an entry starts within 4 bytes of the
    /// end of `data` (the caller then checks them one by one).
    #[inline]
    pub(super) fn short_texts_agree(self, data: &[u8], bounds: &[u32; GROUP + 1]) -> Option<bool> {
        // Every start is read as a 4-byte word: each must leave 4 bytes in `data`, and be a
        // non-negative 32-bit index (the gather's offsets are signed). Folded, not
        // short-circuited, so that the bound is one vector maximum.
        let limit = data.len().checked_sub(4)?.min(i32::MAX as usize);
        let last = bounds[..GROUP].iter().fold(0, |m, &s| m.max(s));
        if last as usize > limit {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `self` proves AVX2 is present, and every start `s` satisfies
            // `s + 4 <= data.len()` and `s <= i32::MAX` (checked above), so each 4-byte load
            // the gather makes at `data + s` lies inside `data`.
            Some(unsafe { avx2::short_texts_agree(data, bounds) })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi32, _mm256_i32gather_epi32, _mm256_loadu_si256,
        _mm256_min_epu32, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi32,
        _mm256_setzero_si256, _mm256_sub_epi32,
    };

    use super::GROUP;

    /// # Safety
    /// AVX2 must be present, and every one of the first 16 `bounds` must be at most
    /// `data.len() - 4` and at most `i32::MAX`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn short_texts_agree(data: &[u8], bounds: &[u32; GROUP + 1]) -> bool {
        let (starts, ends) = (
            bounds.first_chunk::<GROUP>().unwrap_or(&[0; GROUP]),
            bounds.last_chunk::<GROUP>().unwrap_or(&[0; GROUP]),
        );
        let mut all = _mm256_set1_epi32(-1);
        for half in 0..2 {
            let (s, e) = (&starts[half * 8..][..8], &ends[half * 8..][..8]);
            // SAFETY: `s` and `e` are 8 u32s each, read unaligned.
            let (s, e) = unsafe {
                (
                    _mm256_loadu_si256(s.as_ptr().cast::<__m256i>()),
                    _mm256_loadu_si256(e.as_ptr().cast::<__m256i>()),
                )
            };
            // SAFETY: the caller's bounds: each lane's 4 bytes at `data + s` lie in `data`.
            let word = unsafe { _mm256_i32gather_epi32::<1>(data.as_ptr().cast::<i32>(), s) };
            let byte = _mm256_and_si256(word, _mm256_set1_epi32(0xff));
            let size = _mm256_sub_epi32(e, s);
            let text = _mm256_sub_epi32(size, _mm256_set1_epi32(1));
            let empty = _mm256_cmpeq_epi32(size, _mm256_setzero_si256());
            // text < 255, unsigned: the smaller of text and 254 is text.
            let short = _mm256_cmpeq_epi32(_mm256_min_epu32(text, _mm256_set1_epi32(254)), text);
            let agree = _mm256_and_si256(_mm256_cmpeq_epi32(byte, text), short);
            all = _mm256_and_si256(all, _mm256_or_si256(empty, agree));
        }
        _mm256_movemask_epi8(all) == -1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same answer as one entry at a time, by the rule written out plainly.
    fn plainly(data: &[u8], bounds: &[u32; GROUP + 1]) -> bool {
        bounds.windows(2).all(|p| {
            let (s, e) = (p[0] as usize, p[1] as usize);
            s == e || (e - s - 1 < 255 && usize::from(data[s]) == e - s - 1)
        })
    }

    #[test]
    fn agrees_with_the_plain_rule_and_refuses_the_last_bytes() {
        // Entries of 0..=20 bytes of text, one empty every 5, then damage at each entry.
        let mut data = Vec::new();
        let mut bounds = [0u32; GROUP + 1];
        for (i, b) in bounds.iter_mut().enumerate().skip(1) {
            if i % 5 != 0 {
                data.push(i as u8);
                data.extend(std::iter::repeat_n(b'x', i));
            }
            *b = data.len() as u32;
        }
        data.extend([0; 4]);
        let Some(avx2) = Avx2::detect() else {
            return;
        };
        assert_eq!(avx2.short_texts_agree(&data, &bounds), Some(true));
        for i in 0..GROUP {
            let s = bounds[i] as usize;
            if bounds[i + 1] as usize == s {
                continue;
            }
            let mut bad = data.clone();
            for wrong in [bad[s].wrapping_add(1), 255, 0] {
                bad[s] = wrong;
                assert_eq!(
                    avx2.short_texts_agree(&bad, &bounds),
                    Some(plainly(&bad, &bounds))
                );
                assert!(!plainly(&bad, &bounds), "entry {i}, byte {wrong}");
            }
        }
        // A start within 4 bytes of the end, or past it: not gathered.
        let short = &data[..bounds[GROUP - 1] as usize + 3];
        assert_eq!(avx2.short_texts_agree(short, &bounds), None);
        let mut past = bounds;
        past[3] = u32::MAX;
        assert_eq!(avx2.short_texts_agree(&data, &past), None);
    }
}

//! Byte-split pages put back together, sixteen elements at a time.
//!
//! A split page of `n` elements of `N` bytes holds `N` streams of `n` bytes (byte `k` of
//! element `i` at `k * n + i`). [`interleave`] turns sixteen bytes of each stream into sixteen
//! little-endian elements: on x86_64 with SSE2's byte, word and double-word unpacks (every
//! x86_64 has SSE2: no detection needed), elsewhere byte by byte. Element by element, a
//! 4-byte element costs four loads and three shifts; unpacked, sixteen cost twelve
//! instructions.
//!
//! The one unsafe module of the RNTuple reader: unaligned 16-byte loads and stores, each
//! from or into a reference to exactly 16 bytes.
#![allow(unsafe_code)]

/// Elements per block.
pub(super) const BLOCK: usize = 16;

/// Writes the `BLOCK` elements whose bytes are `lanes` (lane `k` holds byte `k` of every
/// element) into `out`, element by element. `N` is 2, 4 or 8 on the vector path; any `N`
/// works.
#[inline(always)]
pub(super) fn interleave<const N: usize>(lanes: &[&[u8; BLOCK]; N], out: &mut [[u8; N]; BLOCK]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        let flat = out.as_flattened_mut();
        let (chunks, _) = flat.as_chunks_mut::<16>();
        match (&lanes[..], chunks) {
            // SAFETY (the three calls): this build's target has SSE2 (the cfg above).
            ([a, b], [o0, o1]) => return unsafe { sse2::two([a, b], [o0, o1]) },
            ([a, b, c, d], [o0, o1, o2, o3]) => {
                return unsafe { sse2::four([a, b, c, d], [o0, o1, o2, o3]) };
            }
            ([s0, s1, s2, s3, s4, s5, s6, s7], [o0, o1, o2, o3, o4, o5, o6, o7]) => {
                return unsafe {
                    sse2::eight(
                        [s0, s1, s2, s3, s4, s5, s6, s7],
                        [o0, o1, o2, o3, o4, o5, o6, o7],
                    )
                };
            }
            _ => {}
        }
    }
    bytewise(lanes, out);
}

/// The portable path (and the reference the vector path is tested against).
fn bytewise<const N: usize>(lanes: &[&[u8; BLOCK]; N], out: &mut [[u8; N]; BLOCK]) {
    for (i, element) in out.iter_mut().enumerate() {
        for (byte, lane) in element.iter_mut().zip(lanes) {
            *byte = lane[i];
        }
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpackhi_epi16,
        _mm_unpackhi_epi32, _mm_unpacklo_epi8, _mm_unpacklo_epi16, _mm_unpacklo_epi32,
    };

    type Out<'a> = &'a mut [u8; 16];

    #[inline]
    #[target_feature(enable = "sse2")]
    fn load(bytes: &[u8; 16]) -> __m128i {
        // SAFETY: `bytes` is 16 readable bytes; the load has no alignment requirement.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    fn store(out: Out<'_>, v: __m128i) {
        // SAFETY: `out` is 16 writable bytes; the store has no alignment requirement.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), v) }
    }

    /// Elements of 2 bytes: one byte unpack gives eight.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn two([a, b]: [&&[u8; 16]; 2], [o0, o1]: [Out<'_>; 2]) {
        let (a, b) = (load(a), load(b));
        store(o0, _mm_unpacklo_epi8(a, b));
        store(o1, _mm_unpackhi_epi8(a, b));
    }

    /// Elements of 4 bytes: bytes 0 and 1, 2 and 3 paired, then the pairs.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn four([a, b, c, d]: [&&[u8; 16]; 4], [o0, o1, o2, o3]: [Out<'_>; 4]) {
        let (a, b, c, d) = (load(a), load(b), load(c), load(d));
        let (ab_lo, ab_hi) = (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b));
        let (cd_lo, cd_hi) = (_mm_unpacklo_epi8(c, d), _mm_unpackhi_epi8(c, d));
        store(o0, _mm_unpacklo_epi16(ab_lo, cd_lo));
        store(o1, _mm_unpackhi_epi16(ab_lo, cd_lo));
        store(o2, _mm_unpacklo_epi16(ab_hi, cd_hi));
        store(o3, _mm_unpackhi_epi16(ab_hi, cd_hi));
    }

    /// Elements of 8 bytes: the 4-byte halves as in [`four`], then the halves paired.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn eight(s: [&&[u8; 16]; 8], [o0, o1, o2, o3, o4, o5, o6, o7]: [Out<'_>; 8]) {
        let [s0, s1, s2, s3, s4, s5, s6, s7] = s.map(|l| load(l));
        let (p01_lo, p01_hi) = (_mm_unpacklo_epi8(s0, s1), _mm_unpackhi_epi8(s0, s1));
        let (p23_lo, p23_hi) = (_mm_unpacklo_epi8(s2, s3), _mm_unpackhi_epi8(s2, s3));
        let (p45_lo, p45_hi) = (_mm_unpacklo_epi8(s4, s5), _mm_unpackhi_epi8(s4, s5));
        let (p67_lo, p67_hi) = (_mm_unpacklo_epi8(s6, s7), _mm_unpackhi_epi8(s6, s7));
        // Low halves (bytes 0-3) and high halves (4-7) of elements 0-3, 4-7, 8-11, 12-15.
        let low = [
            _mm_unpacklo_epi16(p01_lo, p23_lo),
            _mm_unpackhi_epi16(p01_lo, p23_lo),
            _mm_unpacklo_epi16(p01_hi, p23_hi),
            _mm_unpackhi_epi16(p01_hi, p23_hi),
        ];
        let high = [
            _mm_unpacklo_epi16(p45_lo, p67_lo),
            _mm_unpackhi_epi16(p45_lo, p67_lo),
            _mm_unpacklo_epi16(p45_hi, p67_hi),
            _mm_unpackhi_epi16(p45_hi, p67_hi),
        ];
        let [l0, l1, l2, l3] = low;
        let [h0, h1, h2, h3] = high;
        store(o0, _mm_unpacklo_epi32(l0, h0));
        store(o1, _mm_unpackhi_epi32(l0, h0));
        store(o2, _mm_unpacklo_epi32(l1, h1));
        store(o3, _mm_unpackhi_epi32(l1, h1));
        store(o4, _mm_unpacklo_epi32(l2, h2));
        store(o5, _mm_unpackhi_epi32(l2, h2));
        store(o6, _mm_unpacklo_epi32(l3, h3));
        store(o7, _mm_unpackhi_epi32(l3, h3));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes<const N: usize>(seed: u8) -> [[u8; BLOCK]; N] {
        std::array::from_fn(|k| {
            std::array::from_fn(|i| {
                seed.wrapping_mul(31)
                    .wrapping_add((k * 17 + i * 5) as u8)
                    .rotate_left(k as u32)
            })
        })
    }

    fn check<const N: usize>() {
        for seed in 0..8 {
            let data = lanes::<N>(seed);
            let refs: [&[u8; BLOCK]; N] = std::array::from_fn(|k| &data[k]);
            let (mut fast, mut slow) = ([[0u8; N]; BLOCK], [[0u8; N]; BLOCK]);
            interleave(&refs, &mut fast);
            bytewise(&refs, &mut slow);
            assert_eq!(fast, slow, "{N}-byte elements");
            for (i, element) in fast.iter().enumerate() {
                for (k, byte) in element.iter().enumerate() {
                    assert_eq!(*byte, data[k][i]);
                }
            }
        }
    }

    #[test]
    fn the_vector_path_equals_the_bytewise_one() {
        check::<2>();
        check::<4>();
        check::<8>();
        check::<3>();
    }
}

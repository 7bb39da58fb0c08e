//! Text decoding for the `str` serializer.

#![allow(
    unsafe_code,
    reason = "bytes checked to be ASCII are turned into &str without a second scan"
)]

/// Bytes the ASCII check folds per step: two SSE2 registers, so the loop compiles to vector
/// loads and ORs on any x86-64 (and NEON on aarch64) without runtime feature detection.
const LANES: usize = 32;

/// `bytes` as text when every byte is ASCII, with no second scan to turn them into `&str`.
///
/// # Why not `<[u8]>::is_ascii`
///
/// A random `get` is bound by its cache misses, and the CPU overlaps one lookup's misses with
/// the next only while the work waiting on the missed value fits its out-of-order window. The
/// standard check is a word-at-a-time loop with an early exit (about 100 instructions for a
/// 200-byte value, each waiting on the miss); this one ORs every byte into a 32-byte
/// accumulator and tests the high bits once (about 35), so a lookup's wait leaves room for the
/// next lookup's loads: random reads of 50,000 keys ran 1.37x faster for it in the paired
/// run #86 (BENCHMARKS.md). An early exit buys nothing here: non-ASCII text is the rare case.
/// (An AVX2 variant measured no faster.)
#[inline]
pub(crate) fn ascii_str(bytes: &[u8]) -> Option<&str> {
    let ascii = if bytes.len() < LANES {
        bytes.is_ascii()
    } else {
        let mut acc = [0u8; LANES];
        let mut fold = |chunk: &[u8]| {
            for (a, b) in acc.iter_mut().zip(chunk) {
                *a |= b;
            }
        };
        let mut chunks = bytes.chunks_exact(LANES);
        chunks.by_ref().for_each(&mut fold);
        // The tail, as the last whole 32 bytes (overlapping the chunks already folded).
        if !chunks.remainder().is_empty() {
            fold(&bytes[bytes.len() - LANES..]);
        }
        acc.iter().fold(0, |all, &b| all | b) < 0x80
    };
    // SAFETY: every byte is below 0x80, and a sequence of ASCII bytes is valid UTF-8.
    ascii.then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

#[cfg(test)]
mod tests {
    use super::ascii_str;

    #[test]
    fn only_all_ascii_bytes_pass() {
        assert_eq!(ascii_str(b""), Some(""));
        assert_eq!(
            ascii_str(b"plain text, 0-9 \x7f"),
            Some("plain text, 0-9 \x7f")
        );
        // Below, at and around the fold width and its multiples, with a high bit at every
        // position (whole chunks, the overlapping tail, the short scalar path).
        for len in [1, 7, 31, 32, 33, 63, 64, 65, 200, 203] {
            let text = "a".repeat(len);
            assert_eq!(ascii_str(text.as_bytes()), Some(text.as_str()), "len {len}");
            for at in 0..len {
                let mut b = text.clone().into_bytes();
                b[at] = 0xC3;
                assert_eq!(ascii_str(&b), None, "len {len}, high bit at {at}");
            }
        }
        assert_eq!(ascii_str("é".as_bytes()), None);
    }
}

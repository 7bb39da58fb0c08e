//! Text decoding for the `str` serializer.

#![allow(
    unsafe_code,
    reason = "bytes checked to be ASCII are turned into &str without a second scan"
)]

/// `bytes` as text when every byte is ASCII.
///
/// One pass that ORs eight bytes at a time and tests the high bits: a few instructions per
/// 64 bytes, with no branch per byte. Lookups are bound by cache misses, and a lean check
/// leaves the out-of-order window room to start the next lookup's loads early.
#[inline]
pub(crate) fn ascii_str(bytes: &[u8]) -> Option<&str> {
    let (words, tail) = bytes.as_chunks::<8>();
    let mut high = 0u64;
    for word in words {
        high |= u64::from_ne_bytes(*word);
    }
    for &b in tail {
        high |= u64::from(b);
    }
    if high & 0x8080_8080_8080_8080 != 0 {
        return None;
    }
    // SAFETY: every byte is below 0x80, and a sequence of ASCII bytes is valid UTF-8.
    Some(unsafe { std::str::from_utf8_unchecked(bytes) })
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
        let long = "a".repeat(203);
        assert_eq!(ascii_str(long.as_bytes()), Some(long.as_str()));
        // A high bit anywhere (in a whole word or in the tail) sends the bytes to full validation.
        for at in [0, 7, 8, 15, 200, 202] {
            let mut b = long.clone().into_bytes();
            b[at] = 0xC3;
            assert_eq!(ascii_str(&b), None, "high bit at {at}");
        }
        assert_eq!(ascii_str("é".as_bytes()), None);
    }
}

//! Text decoding for the `str` serializer.

#![allow(
    unsafe_code,
    reason = "bytes checked to be ASCII are turned into &str without a second scan"
)]

/// `bytes` as text when every byte is ASCII: the standard library's word-at-a-time check, and
/// no second scan to turn the bytes into `&str`.
#[inline]
pub(crate) fn ascii_str(bytes: &[u8]) -> Option<&str> {
    // SAFETY: every byte is below 0x80, and a sequence of ASCII bytes is valid UTF-8.
    bytes
        .is_ascii()
        .then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
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

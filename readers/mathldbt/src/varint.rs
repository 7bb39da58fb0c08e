//! LEB128 varints and zigzag, with word-at-a-time fast paths.
//!
//! Canonical form (SPEC.md §6.3): at most 10 bytes, no bits beyond 64, no
//! redundant trailing zero byte. The fast paths handle varints of up to 8
//! bytes (values below 2^56) with one 8-byte load or store and a handful of
//! shifts; anything else takes the byte-by-byte path.

/// `zigzag(d) = (d << 1) ^ (d >> 63)`.
#[inline]
pub(crate) const fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub(crate) const fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Encoded length of `v` in bytes (1..=10).
#[inline]
pub(crate) const fn encoded_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Spreads the low 56 bits of `v` into 7-bit groups, one per byte.
#[inline]
const fn spread7(v: u64) -> u64 {
    (v & 0x7F)
        | ((v << 1) & (0x7F << 8))
        | ((v << 2) & (0x7F << 16))
        | ((v << 3) & (0x7F << 24))
        | ((v << 4) & (0x7F << 32))
        | ((v << 5) & (0x7F << 40))
        | ((v << 6) & (0x7F << 48))
        | ((v << 7) & (0x7F << 56))
}

/// Gathers the low 7 bits of each byte of `w` (inverse of [`spread7`]).
#[inline]
const fn gather7(w: u64) -> u64 {
    (w & 0x7F)
        | ((w >> 1) & (0x7F << 7))
        | ((w >> 2) & (0x7F << 14))
        | ((w >> 3) & (0x7F << 21))
        | ((w >> 4) & (0x7F << 28))
        | ((w >> 5) & (0x7F << 35))
        | ((w >> 6) & (0x7F << 42))
        | ((w >> 7) & (0x7F << 49))
}

/// Appends `v` to `out` byte by byte (the reference for the fast path).
#[cfg(test)]
fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Writes `v` at `buf[pos..]`, returning the new position, where `buf` has
/// at least 10 bytes of room after `pos` (callers size it so). Bytes past
/// the varint may be overwritten with garbage that the next write or the
/// final truncation removes.
#[inline]
pub(crate) fn write_at(buf: &mut [u8], pos: usize, v: u64) -> usize {
    let len = encoded_len(v);
    if len <= 8
        && let Some(dst) = buf.get_mut(pos..pos + 8)
    {
        // Continuation bits on every byte but the last.
        let cont = 0x8080_8080_8080_8080u64 & ((1u64 << (8 * (len - 1))) - 1);
        dst.copy_from_slice(&(spread7(v) | cont).to_le_bytes());
        return pos + len;
    }
    let mut v = v;
    let mut p = pos;
    while v >= 0x80 {
        if let Some(b) = buf.get_mut(p) {
            *b = (v as u8) | 0x80;
        }
        v >>= 7;
        p += 1;
    }
    if let Some(b) = buf.get_mut(p) {
        *b = v as u8;
    }
    p + 1
}

/// Reads one canonical varint from the start of `buf`; returns the value
/// and its length.
///
/// # Errors
/// A short description when the varint is truncated, overflows 64 bits or
/// has a redundant trailing zero byte.
#[inline]
pub(crate) fn read(buf: &[u8]) -> Result<(u64, usize), &'static str> {
    match buf.first() {
        Some(&b) if b < 0x80 => return Ok((u64::from(b), 1)),
        None => return Err("truncated varint"),
        Some(_) => {}
    }
    if let Some(chunk) = buf.first_chunk::<8>() {
        let w = u64::from_le_bytes(*chunk);
        let stop = !w & 0x8080_8080_8080_8080;
        if stop != 0 {
            let len = (stop.trailing_zeros() / 8 + 1) as usize; // 2..=8 here
            let last = (w >> (8 * (len - 1))) as u8;
            if last == 0 {
                return Err("overlong varint (redundant zero byte)");
            }
            let mask = if len == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * len)) - 1
            };
            return Ok((gather7(w & mask), len));
        }
    }
    read_slow(buf)
}

fn read_slow(buf: &[u8]) -> Result<(u64, usize), &'static str> {
    let mut v = 0u64;
    for (i, &b) in buf.iter().take(10).enumerate() {
        if i == 9 && b > 1 {
            return Err("varint overflows 64 bits");
        }
        v |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            if b == 0 && i > 0 {
                return Err("overlong varint (redundant zero byte)");
            }
            return Ok((v, i + 1));
        }
    }
    Err(if buf.len() < 10 {
        "truncated varint"
    } else {
        "varint overflows 64 bits"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 127, 128, 129, 255, 256, 300, 16_383, 16_384];
        for shift in 0..64 {
            let p = 1u64 << shift;
            v.extend([p - 1, p, p + 1, p.wrapping_mul(3)]);
        }
        v.extend([u64::MAX - 1, u64::MAX]);
        v
    }

    #[test]
    fn put_and_write_at_agree_and_read_back() {
        for v in samples() {
            let mut a = Vec::new();
            put(&mut a, v);
            assert_eq!(a.len(), encoded_len(v), "v={v}");
            let mut b = vec![0xAA; 32];
            let end = write_at(&mut b, 3, v);
            assert_eq!(&b[3..end], a.as_slice(), "v={v}");
            assert_eq!(read(&a), Ok((v, a.len())), "short buffer v={v}");
            let mut padded = a.clone();
            padded.extend_from_slice(&[0xFF; 12]);
            assert_eq!(read(&padded), Ok((v, a.len())), "padded v={v}");
            assert_eq!(read_slow(&padded), Ok((v, a.len())), "slow v={v}");
        }
    }

    #[test]
    fn rejects_malformed() {
        assert!(read(&[]).is_err());
        assert!(read(&[0x80]).is_err());
        assert!(read(&[0x80, 0x00]).is_err());
        assert!(read(&[0x80, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).is_err());
        assert!(read(&[0xFF, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00]).is_err());
        assert!(read(&[0xFF; 9]).is_err());
        let mut over = vec![0xFF; 9];
        over.push(0x02);
        assert!(read(&over).is_err());
        over[9] = 0x01;
        assert_eq!(read(&over), Ok((u64::MAX, 10)));
        over[9] = 0x00;
        assert!(read(&over).is_err(), "overlong 10th byte");
        assert!(read(&[0xFF; 11]).is_err());
    }

    #[test]
    fn zigzag_round_trip() {
        for v in [0i64, -1, 1, -2, i64::MIN, i64::MAX, 1_700_000_000_000_000] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}

//! Protobuf LEB128 varints.

/// Appends `value` as a shortest-form varint.
#[inline]
pub fn write_varint64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // Truncation is the point: the low 7 bits with the continuation bit.
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Length of the shortest varint of `value`.
#[inline]
#[must_use]
pub fn varint_len(value: u64) -> usize {
    // 1 + floor(log2(value | 1) / 7)
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Writes `value` as a varint into `buf`, returning the number of bytes (at most 10).
#[inline]
pub fn encode_varint64(buf: &mut [u8; 10], mut value: u64) -> usize {
    let mut n = 0;
    for slot in buf.iter_mut() {
        n += 1;
        if value < 0x80 {
            *slot = value as u8;
            return n;
        }
        *slot = (value as u8) | 0x80;
        value >>= 7;
    }
    n
}

/// Reads a varint64 (at most 10 bytes, no bits beyond 64) from `data[*pos..]`, advancing `pos`.
/// Non-shortest forms are accepted, as C++ does.
#[inline]
pub fn read_varint64(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut result = 0u64;
    let mut shift = 0u32;
    loop {
        let byte = *data.get(*pos)?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        result |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(result);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Reads a varint32 (at most 5 bytes, no bits beyond 32) from `data[*pos..]`, advancing `pos`.
#[inline]
pub fn read_varint32(data: &[u8], pos: &mut usize) -> Option<u32> {
    let mut result = 0u32;
    let mut shift = 0u32;
    loop {
        let byte = *data.get(*pos)?;
        *pos += 1;
        if shift == 28 && byte > 0x0f {
            return None;
        }
        result |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(result);
        }
        shift += 7;
        if shift > 28 {
            return None;
        }
    }
}

/// Reads a shortest-form ("canonical") varint64; `None` if malformed or not canonical.
#[inline]
pub fn read_canonical_varint64(data: &[u8], pos: &mut usize) -> Option<u64> {
    // One byte (the usual tag or small value) is always canonical.
    if let Some(&byte) = data.get(*pos)
        && byte < 0x80
    {
        *pos += 1;
        return Some(u64::from(byte));
    }
    read_canonical_multibyte(data, pos)
}

fn read_canonical_multibyte(data: &[u8], pos: &mut usize) -> Option<u64> {
    let start = *pos;
    let value = read_varint64(data, pos)?;
    if *pos - start != varint_len(value) {
        return None;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn roundtrip_and_limits() {
        for v in [0u64, 1, 127, 128, 300, 1 << 32, u64::MAX] {
            let mut out = Vec::new();
            write_varint64(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            let mut buf = [0u8; 10];
            let n = encode_varint64(&mut buf, v);
            assert_eq!(&buf[..n], &out[..]);
            let mut pos = 0;
            assert_eq!(read_varint64(&out, &mut pos), Some(v));
            assert_eq!(pos, out.len());
        }
        let mut pos = 0;
        assert_eq!(read_varint64(&[0xff; 10], &mut pos), None);
        let mut pos = 0;
        assert_eq!(
            read_varint32(&[0xff, 0xff, 0xff, 0xff, 0x1f], &mut pos),
            None
        );
        let mut pos = 0;
        assert_eq!(
            read_varint32(&[0xff, 0xff, 0xff, 0xff, 0x0f], &mut pos),
            Some(u32::MAX)
        );
        let mut pos = 0;
        assert_eq!(read_varint64(&[0x80, 0x00], &mut pos), Some(0));
        let mut pos = 0;
        assert_eq!(read_canonical_varint64(&[0x80, 0x00], &mut pos), None);
    }
}

//! Bit-packing helpers shared by validity bitmaps and boolean columns.
//!
//! Bit `i` of a packed buffer is bit `i % 8` (least significant first) of
//! byte `i / 8`. Bits past the logical length in the last byte are
//! "padding bits".

/// Number of bytes needed to hold `bits` bits.
#[inline]
pub(crate) const fn bytes_for_bits(bits: usize) -> usize {
    bits.div_ceil(8)
}

/// Mask of the valid bits in the last byte of a buffer of `bits` bits
/// (`0xFF` when `bits` is a multiple of 8).
#[inline]
pub(crate) const fn last_byte_mask(bits: usize) -> u8 {
    match bits % 8 {
        0 => 0xFF,
        r => (1u8 << r) - 1,
    }
}

/// Number of set bits among the first `bits` bits of `bytes`.
///
/// `bytes` must hold at least [`bytes_for_bits`]`(bits)` bytes; extra bytes
/// and padding bits are ignored.
pub(crate) fn count_set(bytes: &[u8], bits: usize) -> usize {
    let full = bits / 8;
    let (head, tail) = bytes.split_at(full.min(bytes.len()));
    let (words, rest) = head.as_chunks::<8>();
    let mut n: usize = words
        .iter()
        .map(|w| u64::from_le_bytes(*w).count_ones() as usize)
        .sum();
    n += rest.iter().map(|b| b.count_ones() as usize).sum::<usize>();
    if !bits.is_multiple_of(8)
        && let Some(last) = tail.first()
    {
        n += (last & last_byte_mask(bits)).count_ones() as usize;
    }
    n
}

/// Whether bit `i` of `bytes` is set (`false` when out of range).
#[inline]
pub(crate) fn get_bit(bytes: &[u8], i: usize) -> bool {
    bytes.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// Appends `bools` to `out` bit-packed, padding bits zero.
pub(crate) fn pack_bools(bools: &[bool], out: &mut Vec<u8>) {
    out.reserve(bytes_for_bits(bools.len()));
    let (chunks, rest) = bools.as_chunks::<8>();
    out.extend(chunks.iter().map(|c| {
        c.iter()
            .enumerate()
            .fold(0u8, |acc, (i, &b)| acc | (u8::from(b) << i))
    }));
    if !rest.is_empty() {
        out.push(
            rest.iter()
                .enumerate()
                .fold(0u8, |acc, (i, &b)| acc | (u8::from(b) << i)),
        );
    }
}

/// Replaces `out` with the first `bits` bits of `bytes` unpacked.
pub(crate) fn unpack_bools(bytes: &[u8], bits: usize, out: &mut Vec<bool>) {
    out.clear();
    out.reserve(bits);
    let full = bits / 8;
    let (head, tail) = bytes.split_at(full.min(bytes.len()));
    for &b in head {
        out.extend((0..8).map(|i| b & (1 << i) != 0));
    }
    if let Some(&b) = tail.first() {
        out.extend((0..bits % 8).map(|i| b & (1 << i) != 0));
    }
}

/// Whether the padding bits of a packed buffer of `bits` bits are all zero.
/// `bytes` must be exactly [`bytes_for_bits`]`(bits)` long.
pub(crate) fn padding_is_zero(bytes: &[u8], bits: usize) -> bool {
    match bytes.last() {
        Some(last) if !bits.is_multiple_of(8) => last & !last_byte_mask(bits) == 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_unpack_round_trip() {
        for n in 0..40 {
            let bools: Vec<bool> = (0..n).map(|i| i % 3 == 0 || i % 7 == 1).collect();
            let mut packed = Vec::new();
            pack_bools(&bools, &mut packed);
            assert_eq!(packed.len(), bytes_for_bits(n), "n={n}");
            assert!(padding_is_zero(&packed, n), "n={n}");
            assert_eq!(
                count_set(&packed, n),
                bools.iter().filter(|b| **b).count(),
                "n={n}"
            );
            let mut back = Vec::new();
            unpack_bools(&packed, n, &mut back);
            assert_eq!(back, bools, "n={n}");
            for (i, b) in bools.iter().enumerate() {
                assert_eq!(get_bit(&packed, i), *b, "n={n} i={i}");
            }
        }
    }

    #[test]
    fn count_set_ignores_padding() {
        assert_eq!(count_set(&[0xFF], 3), 3);
        assert_eq!(count_set(&[0xFF, 0xFF], 9), 9);
        assert_eq!(count_set(&[0xFF; 20], 150), 150);
        assert!(!padding_is_zero(&[0b1000], 3));
        assert!(padding_is_zero(&[0b100], 3));
    }
}

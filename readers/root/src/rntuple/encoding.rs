//! Column types and the decoding of their pages.
//!
//! A page holds the elements of one column, little-endian. The *split* types store all first
//! bytes of the page's elements, then all second bytes, and so on; split signed integers are
//! also zigzag-encoded (`x -> 2x` for `x >= 0`, `-(2x + 1)` otherwise) and split offsets
//! (`SplitIndex32/64`) delta-encoded (the first element as is, then differences). Every
//! transformation applies within one page. `Bit` columns pack eight booleans per byte, least
//! significant bit first.
//!
//! ```text
//! elements a b c of 4 bytes:  plain  a0 a1 a2 a3 b0 b1 b2 b3 c0 c1 c2 c3
//!                             split  a0 b0 c0 a1 b1 c1 a2 b2 c2 a3 b3 c3
//! ```

use super::unsplit;
use crate::error::{Error, Result};

/// The column types of the format, with their permanent on-disk codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
#[allow(missing_docs)]
pub enum ColumnType {
    Bit = 0x00,
    Byte = 0x01,
    Char = 0x02,
    Int8 = 0x03,
    UInt8 = 0x04,
    Int16 = 0x05,
    UInt16 = 0x06,
    Int32 = 0x07,
    UInt32 = 0x08,
    Int64 = 0x09,
    UInt64 = 0x0A,
    Real16 = 0x0B,
    Real32 = 0x0C,
    Real64 = 0x0D,
    Index32 = 0x0E,
    Index64 = 0x0F,
    Switch = 0x10,
    SplitInt16 = 0x11,
    SplitUInt16 = 0x12,
    SplitInt32 = 0x13,
    SplitUInt32 = 0x14,
    SplitInt64 = 0x15,
    SplitUInt64 = 0x16,
    SplitReal16 = 0x17,
    SplitReal32 = 0x18,
    SplitReal64 = 0x19,
    SplitIndex32 = 0x1A,
    SplitIndex64 = 0x1B,
    Real32Trunc = 0x1C,
    Real32Quant = 0x1D,
}

/// Every known column type, in code order.
const ALL: [ColumnType; 30] = {
    use ColumnType::*;
    [
        Bit,
        Byte,
        Char,
        Int8,
        UInt8,
        Int16,
        UInt16,
        Int32,
        UInt32,
        Int64,
        UInt64,
        Real16,
        Real32,
        Real64,
        Index32,
        Index64,
        Switch,
        SplitInt16,
        SplitUInt16,
        SplitInt32,
        SplitUInt32,
        SplitInt64,
        SplitUInt64,
        SplitReal16,
        SplitReal32,
        SplitReal64,
        SplitIndex32,
        SplitIndex64,
        Real32Trunc,
        Real32Quant,
    ]
};

/// How a page's bytes are laid out, for types with fixed-width elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Little-endian elements one after the other.
    Plain,
    /// Byte-split.
    Split,
    /// Byte-split, zigzag-encoded.
    SplitZigzag,
    /// Byte-split, delta-encoded.
    SplitDelta,
}

impl ColumnType {
    /// The type of an on-disk code (`None` for codes newer than this reader).
    #[must_use]
    pub fn from_code(code: u16) -> Option<Self> {
        ALL.get(usize::from(code)).copied()
    }

    /// The on-disk code.
    #[must_use]
    pub fn code(self) -> u16 {
        self as u16
    }

    /// The name used by the specification.
    #[must_use]
    pub fn name(self) -> &'static str {
        use ColumnType::*;
        match self {
            Bit => "Bit",
            Byte => "Byte",
            Char => "Char",
            Int8 => "Int8",
            UInt8 => "UInt8",
            Int16 => "Int16",
            UInt16 => "UInt16",
            Int32 => "Int32",
            UInt32 => "UInt32",
            Int64 => "Int64",
            UInt64 => "UInt64",
            Real16 => "Real16",
            Real32 => "Real32",
            Real64 => "Real64",
            Index32 => "Index32",
            Index64 => "Index64",
            Switch => "Switch",
            SplitInt16 => "SplitInt16",
            SplitUInt16 => "SplitUInt16",
            SplitInt32 => "SplitInt32",
            SplitUInt32 => "SplitUInt32",
            SplitInt64 => "SplitInt64",
            SplitUInt64 => "SplitUInt64",
            SplitReal16 => "SplitReal16",
            SplitReal32 => "SplitReal32",
            SplitReal64 => "SplitReal64",
            SplitIndex32 => "SplitIndex32",
            SplitIndex64 => "SplitIndex64",
            Real32Trunc => "Real32Trunc",
            Real32Quant => "Real32Quant",
        }
    }

    /// Bits per element on storage, for types whose width is fixed (`None` for the
    /// variable-width `Real32Trunc` and `Real32Quant`).
    #[must_use]
    pub fn bits(self) -> Option<u16> {
        use ColumnType::*;
        Some(match self {
            Bit => 1,
            Byte | Char | Int8 | UInt8 => 8,
            Int16 | UInt16 | Real16 | SplitInt16 | SplitUInt16 | SplitReal16 => 16,
            Int32 | UInt32 | Real32 | Index32 | SplitInt32 | SplitUInt32 | SplitReal32
            | SplitIndex32 => 32,
            Int64 | UInt64 | Real64 | Index64 | SplitInt64 | SplitUInt64 | SplitReal64
            | SplitIndex64 => 64,
            Switch => 96,
            Real32Trunc | Real32Quant => return None,
        })
    }

    pub(crate) fn layout(self) -> Layout {
        use ColumnType::*;
        match self {
            SplitUInt16 | SplitUInt32 | SplitUInt64 | SplitReal16 | SplitReal32 | SplitReal64 => {
                Layout::Split
            }
            SplitInt16 | SplitInt32 | SplitInt64 => Layout::SplitZigzag,
            SplitIndex32 | SplitIndex64 => Layout::SplitDelta,
            _ => Layout::Plain,
        }
    }

    /// Bytes a page of `elements` elements takes once decompressed (saturating: a hostile
    /// count gives a size no file holds).
    pub(crate) fn page_bytes(self, elements: u64, bits: u16) -> u64 {
        elements.saturating_mul(u64::from(bits)).div_ceil(8)
    }
}

/// Fixed-width little-endian unsigned integers that pages are decoded through.
pub(crate) trait Word: Copy + Default {
    const SIZE: usize;
    fn from_le(b: &[u8]) -> Self;
    fn zigzag(self) -> Self;
    fn wrapping_add(self, other: Self) -> Self;
}

macro_rules! word {
    ($t:ty, $n:literal) => {
        impl Word for $t {
            const SIZE: usize = $n;
            #[inline]
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; $n];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            #[inline]
            fn zigzag(self) -> Self {
                // The decoded value's bits: (x >> 1) ^ -(x & 1).
                (self >> 1) ^ (0 as $t).wrapping_sub(self & 1)
            }
            #[inline]
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
        }
    };
}
word!(u16, 2);
word!(u32, 4);
word!(u64, 8);

/// Decodes the `n` fixed-width elements of a page (exactly `n * W::SIZE` bytes) as words,
/// undoing split, zigzag and delta encoding, and appends them to `out` through `map`.
pub(crate) fn decode_words<W: Word, T>(
    page: &[u8],
    n: usize,
    layout: Layout,
    out: &mut Vec<T>,
    map: impl Fn(W) -> T,
) -> Result<()> {
    if Some(page.len()) != n.checked_mul(W::SIZE) {
        return Err(Error::corrupt(
            "RNTuple page",
            0,
            format!("{} bytes for {n} elements of {} bytes", page.len(), W::SIZE),
        ));
    }
    out.reserve(n);
    match layout {
        Layout::Plain => out.extend(page.chunks_exact(W::SIZE).map(|c| map(W::from_le(c)))),
        Layout::Split => unsplit(page, n, out, map)?,
        Layout::SplitZigzag => unsplit(page, n, out, |w: W| map(w.zigzag()))?,
        Layout::SplitDelta => {
            let mut prev = W::default();
            unsplit(page, n, out, |w: W| {
                prev = prev.wrapping_add(w);
                map(prev)
            })?;
        }
    }
    Ok(())
}

/// Appends the `n` words of a split page (byte k of word i at `k * n + i`), each through
/// `f`: sixteen words at a time put back together by [`unsplit::interleave`], the rest byte
/// by byte.
fn unsplit<W: Word, T>(
    page: &[u8],
    n: usize,
    out: &mut Vec<T>,
    f: impl FnMut(W) -> T,
) -> Result<()> {
    match W::SIZE {
        2 => unsplit_words::<2, W, T>(page, n, out, f),
        4 => unsplit_words::<4, W, T>(page, n, out, f),
        8 => unsplit_words::<8, W, T>(page, n, out, f),
        _ => Err(bad_split(page)),
    }
}

fn unsplit_words<const N: usize, W: Word, T>(
    page: &[u8],
    n: usize,
    out: &mut Vec<T>,
    mut f: impl FnMut(W) -> T,
) -> Result<()> {
    let mut streams = [&page[..0]; N];
    let mut rest = page;
    for stream in &mut streams {
        let (this, after) = rest.split_at_checked(n).ok_or_else(|| bad_split(page))?;
        (*stream, rest) = (this, after);
    }
    let blocks = streams.map(|s| s.as_chunks::<{ unsplit::BLOCK }>().0);
    // Words put together a run of blocks at a time, then handed to `f` in one extend.
    const RUN: usize = 16;
    let mut words = [[[0u8; N]; unsplit::BLOCK]; RUN];
    let mut lanes = [&[0u8; unsplit::BLOCK]; N];
    for first in (0..n / unsplit::BLOCK).step_by(RUN) {
        let run = RUN.min(n / unsplit::BLOCK - first);
        for (i, block) in (first..first + run).zip(&mut words) {
            for (lane, stream) in lanes.iter_mut().zip(&blocks) {
                *lane = stream.get(i).ok_or_else(|| bad_split(page))?;
            }
            unsplit::interleave(&lanes, block);
        }
        let done = words.get(..run).unwrap_or_default().as_flattened();
        out.extend(done.iter().map(|w| f(W::from_le(w))));
    }
    for i in n / unsplit::BLOCK * unsplit::BLOCK..n {
        let mut word = [0u8; N];
        for (byte, stream) in word.iter_mut().zip(&streams) {
            *byte = *stream.get(i).ok_or_else(|| bad_split(page))?;
        }
        out.push(f(W::from_le(&word)));
    }
    Ok(())
}

fn bad_split(page: &[u8]) -> Error {
    Error::corrupt(
        "RNTuple page",
        0,
        format!("split page of {} bytes", page.len()),
    )
}

/// Appends the `n` booleans of a `Bit` page (`ceil(n / 8)` bytes, least significant bit first).
pub(crate) fn decode_bits(page: &[u8], n: usize, out: &mut Vec<bool>) -> Result<()> {
    if page.len() as u64 != (n as u64).div_ceil(8) {
        return Err(Error::corrupt(
            "RNTuple page",
            0,
            format!("{} bytes for {n} bits", page.len()),
        ));
    }
    out.extend((0..n).map(|i| page.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)));
    Ok(())
}

/// Calls `f` with each of the `n` values of `bits` bits (1 to 32) packed in `page`: a
/// little-endian bit stream, value `k` in bits `k * bits .. (k + 1) * bits` (`ceil(n * bits
/// / 8)` bytes), as ROOT's `BitPacking` writes `Real32Trunc` and `Real32Quant` pages.
pub(crate) fn unpack_bits(page: &[u8], n: usize, bits: u16, mut f: impl FnMut(u32)) -> Result<()> {
    let b = u64::from(bits);
    if !(1..=32).contains(&bits) || page.len() as u64 != (n as u64).saturating_mul(b).div_ceil(8) {
        return Err(Error::corrupt(
            "RNTuple page",
            0,
            format!("{} bytes for {n} values of {bits} bits", page.len()),
        ));
    }
    let mask = (1u64 << b) - 1;
    for k in 0..n as u64 {
        let at = k * b;
        let byte = usize::try_from(at / 8).unwrap_or(usize::MAX);
        // A value of at most 32 bits starting anywhere in a byte spans at most 5 bytes.
        let mut word = [0u8; 8];
        let tail = page.get(byte..).unwrap_or_default();
        let take = tail.len().min(5);
        word[..take].copy_from_slice(tail.get(..take).unwrap_or_default());
        let v = (u64::from_le_bytes(word) >> (at % 8)) & mask;
        f(u32::try_from(v).unwrap_or_default());
    }
    Ok(())
}

/// A `Real32Trunc` value of `bits` bits: the leading bits of an `f32` (sign, exponent and the
/// first mantissa bits), the rest zero.
#[must_use]
pub fn untruncate(v: u32, bits: u16) -> f32 {
    f32::from_bits(v << (32 - u32::from(bits.clamp(1, 32))))
}

/// A `Real32Quant` value: `q` of `bits` bits mapped linearly onto `[min, max]` as ROOT
/// computes it (in `f64`: `q * ((max - min) / (2^bits - 1)) + min`, at most `max`).
#[must_use]
pub fn unquantize(q: u32, bits: u16, min: f64, max: f64) -> f64 {
    let steps = ((1u64 << bits.clamp(1, 32)) - 1) as f64;
    let scale = (max - min) / steps;
    (f64::from(q) * scale + min).min(max)
}

/// An IEEE-754 half-precision value as `f32` (exact: every half is a float).
#[must_use]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise.
            let shift = man.leading_zeros() - 21;
            let man = (man << shift) & 0x3ff;
            sign | ((113 - shift) << 23) | (man << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::float_cmp)]
    use super::*;

    #[test]
    fn column_type_codes_are_permanent() {
        for (code, t) in ALL.iter().enumerate() {
            assert_eq!(usize::from(t.code()), code, "{}", t.name());
            assert_eq!(ColumnType::from_code(t.code()), Some(*t));
        }
        assert_eq!(ColumnType::SplitIndex64.code(), 0x1B);
        assert_eq!(ColumnType::Real32Quant.code(), 0x1D);
        assert_eq!(ColumnType::from_code(0x1E), None);
    }

    /// Splits words as a writer does: byte `k` of word `i` at `k * n + i`.
    fn split<const N: usize>(words: &[[u8; N]]) -> Vec<u8> {
        (0..N)
            .flat_map(|k| words.iter().map(move |w| w[k]))
            .collect()
    }

    #[test]
    fn split_pages_of_any_length_unsplit_as_written() {
        // Lengths around the 16-word blocks and the runs of 16 blocks, every word size.
        for n in [0, 1, 15, 16, 17, 255, 256, 257, 300, 4099] {
            let words: Vec<u64> = (0..n as u64)
                .map(|i| {
                    i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        .rotate_left(i as u32 % 64)
                })
                .collect();
            let w8: Vec<[u8; 8]> = words.iter().map(|w| w.to_le_bytes()).collect();
            let mut out = Vec::new();
            decode_words::<u64, u64>(&split(&w8), n, Layout::Split, &mut out, |w| w).unwrap();
            assert_eq!(out, words, "{n} words of 8 bytes");
            let w4: Vec<[u8; 4]> = words.iter().map(|&w| (w as u32).to_le_bytes()).collect();
            let mut out = Vec::new();
            decode_words::<u32, u32>(&split(&w4), n, Layout::Split, &mut out, |w| w).unwrap();
            assert_eq!(out, words.iter().map(|&w| w as u32).collect::<Vec<_>>());
            let w2: Vec<[u8; 2]> = words.iter().map(|&w| (w as u16).to_le_bytes()).collect();
            let mut out = Vec::new();
            decode_words::<u16, u16>(&split(&w2), n, Layout::Split, &mut out, |w| w).unwrap();
            assert_eq!(out, words.iter().map(|&w| w as u16).collect::<Vec<_>>());
            // Deltas add up across blocks.
            let mut out = Vec::new();
            decode_words::<u64, u64>(&split(&w8), n, Layout::SplitDelta, &mut out, |w| w).unwrap();
            let mut sum = 0u64;
            let sums: Vec<u64> = words
                .iter()
                .map(|&w| {
                    sum = sum.wrapping_add(w);
                    sum
                })
                .collect();
            assert_eq!(out, sums);
        }
    }

    #[test]
    fn split_zigzag_and_delta() {
        // -1, 2, -3 as i16 zigzag: 1, 4, 5; split: low bytes then high bytes.
        let page = [1, 4, 5, 0, 0, 0];
        let mut out = Vec::new();
        decode_words::<u16, i16>(&page, 3, Layout::SplitZigzag, &mut out, |w| {
            i16::from_le_bytes(w.to_le_bytes())
        })
        .unwrap();
        assert_eq!(out, vec![-1, 2, -3]);
        // Offsets 3, 3, 300 as deltas 3, 0, 297 (0x129), split u32.
        let page = [3, 0, 0x29, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        let mut out = Vec::new();
        decode_words::<u32, u64>(&page, 3, Layout::SplitDelta, &mut out, u64::from).unwrap();
        assert_eq!(out, vec![3, 3, 300]);
        // Plain and split f32.
        let a = 1.5f32.to_le_bytes();
        let b = (-2.0f32).to_le_bytes();
        let plain: Vec<u8> = a.iter().chain(&b).copied().collect();
        let split: Vec<u8> = (0..4).flat_map(|k| [a[k], b[k]]).collect();
        for (bytes, layout) in [(plain, Layout::Plain), (split, Layout::Split)] {
            let mut out = Vec::new();
            decode_words::<u32, f32>(&bytes, 2, layout, &mut out, f32::from_bits).unwrap();
            assert_eq!(out, vec![1.5, -2.0]);
        }
        let mut out: Vec<u64> = Vec::new();
        assert!(decode_words::<u64, u64>(&[0; 7], 1, Layout::Plain, &mut out, |w| w).is_err());
        assert!(
            decode_words::<u64, u64>(&[0; 8], usize::MAX, Layout::Split, &mut out, |w| w).is_err()
        );
    }

    #[test]
    fn packed_bits() {
        // 3-bit values 5, 1, 7, 2: stream bits 101 100 111 010 (LSB first).
        let page = [0b1100_1101, 0b0000_0101];
        let mut out = Vec::new();
        unpack_bits(&page, 4, 3, |v| out.push(v)).unwrap();
        assert_eq!(out, vec![5, 1, 7, 2]);
        assert!(unpack_bits(&page, 6, 3, |_| ()).is_err());
        assert!(unpack_bits(&page, 0, 33, |_| ()).is_err());
        // 32-bit values straddling bytes.
        let mut out = Vec::new();
        unpack_bits(&[1, 0, 0, 0x80, 2, 0, 0, 0], 2, 32, |v| out.push(v)).unwrap();
        assert_eq!(out, vec![0x8000_0001, 2]);
        // -40.0 = 0xc2200000 kept in its 13 leading bits.
        assert_eq!(untruncate(0xc220_0000 >> 19, 13), -40.0);
        assert_eq!(unquantize(0, 11, -10.0, 50.0), -10.0);
        assert_eq!(unquantize(2047, 11, -10.0, 50.0), 50.0);
    }

    #[test]
    fn bits_and_halves() {
        let mut out = Vec::new();
        decode_bits(&[0b1000_0101, 0b1], 9, &mut out).unwrap();
        assert_eq!(
            out,
            vec![true, false, true, false, false, false, false, true, true]
        );
        assert!(decode_bits(&[0], 9, &mut out).is_err());
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc200), -3.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }
}

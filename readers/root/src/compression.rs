//! ROOT compression framing and the codecs behind it.
//!
//! A compressed payload is a sequence of blocks, each with a 9-byte header:
//!
//! ```text
//! +-----+-----+--------+---------------------+---------------------+----------------+
//! | tag (2)   | method | compressed size c   | uncompressed size u | c data bytes   |
//! | "ZL" "XZ" | (1)    | u24 little-endian   | u24 little-endian   |                |
//! | "L4" "ZS" |        |                     |                     |                |
//! +-----+-----+--------+---------------------+---------------------+----------------+
//! ```
//!
//! The outputs of the blocks are concatenated. A block holds at most 16 MiB - 1 of output, so
//! bigger objects span several blocks. `L4` blocks start with the big-endian XXH64 (seed 0) of
//! the LZ4 block that follows; it is verified. Every block names its own algorithm: the file's or
//! branch's compression setting is never trusted.
//!
//! Allocation bound: before any output is allocated all block headers are walked; their sizes
//! must add up to the expected length, and each block may claim at most [`max_ratio`] times its
//! compressed size, so a few hostile bytes cannot make the reader allocate gigabytes.

use std::cell::RefCell;

use crate::error::{Error, Result};

/// Size of a block header.
pub const BLOCK_HEADER: usize = 9;

/// The algorithms a block can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// zlib stream (`ZL`).
    Zlib,
    /// xz container holding LZMA2 (`XZ`).
    Lzma,
    /// Raw LZ4 block preceded by an XXH64 checksum (`L4`).
    Lz4,
    /// Zstandard frame (`ZS`).
    Zstd,
}

impl Algorithm {
    /// The name used in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Zlib => "zlib",
            Self::Lzma => "lzma",
            Self::Lz4 => "lz4",
            Self::Zstd => "zstd",
        }
    }

    fn from_tag(tag: [u8; 2]) -> Option<Self> {
        match &tag {
            b"ZL" => Some(Self::Zlib),
            b"XZ" => Some(Self::Lzma),
            b"L4" => Some(Self::Lz4),
            b"ZS" => Some(Self::Zstd),
            _ => None,
        }
    }

    /// From a ROOT compression setting (`algorithm * 100 + level`).
    #[must_use]
    pub fn from_setting(setting: i32) -> Option<Self> {
        match setting / 100 {
            0 if setting > 0 => Some(Self::Zlib),
            1 => Some(Self::Zlib),
            2 => Some(Self::Lzma),
            4 => Some(Self::Lz4),
            5 => Some(Self::Zstd),
            _ => None,
        }
    }
}

/// Largest output a block of `compressed` bytes may claim.
///
/// Deflate cannot exceed about 1032:1 and LZ4 255:1; zstd and xz can reach tens of thousands to
/// one on constant data, so they get 2^17:1.
#[must_use]
pub fn max_ratio(algorithm: Algorithm) -> u64 {
    match algorithm {
        Algorithm::Zlib => 1100,
        Algorithm::Lz4 => 256,
        Algorithm::Zstd | Algorithm::Lzma => 1 << 17,
    }
}

/// One block header, validated.
#[derive(Debug, Clone, Copy)]
pub struct Block {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Offset of the header inside the compressed payload.
    pub offset: usize,
    /// Compressed bytes after the header.
    pub compressed: usize,
    /// Uncompressed bytes.
    pub uncompressed: usize,
}

fn u24(b: &[u8]) -> usize {
    b.iter()
        .rev()
        .fold(0usize, |acc, &x| (acc << 8) | usize::from(x))
}

/// Walks and validates the block headers of a compressed payload whose output must be
/// `expected` bytes long.
///
/// # Errors
/// Truncated or inconsistent headers, unknown tags, impossible ratios, or block outputs that do
/// not add up to `expected`.
pub fn blocks(src: &[u8], expected: usize) -> Result<Vec<Block>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut total = 0usize;
    while pos < src.len() {
        let header = src.get(pos..pos + BLOCK_HEADER).ok_or(Error::Truncated {
            what: "compression block header",
            offset: pos as u64,
            need: BLOCK_HEADER as u64,
            have: (src.len() - pos) as u64,
        })?;
        let tag = [header[0], header[1]];
        let algorithm = Algorithm::from_tag(tag).ok_or(Error::UnsupportedCompression {
            tag,
            offset: pos as u64,
        })?;
        let compressed = u24(&header[3..6]);
        let uncompressed = u24(&header[6..9]);
        let start = pos + BLOCK_HEADER;
        if compressed > src.len() - start {
            return Err(Error::Truncated {
                what: "compression block",
                offset: pos as u64,
                need: compressed as u64,
                have: (src.len() - start) as u64,
            });
        }
        if uncompressed as u64 > (compressed as u64).max(1) * max_ratio(algorithm) {
            return Err(Error::corrupt(
                "compression block header",
                pos as u64,
                format!("{compressed} compressed bytes cannot expand to {uncompressed}"),
            ));
        }
        total += uncompressed;
        if total > expected {
            return Err(Error::corrupt(
                "compression block header",
                pos as u64,
                format!("blocks expand past the object's {expected} bytes"),
            ));
        }
        out.push(Block {
            algorithm,
            offset: pos,
            compressed,
            uncompressed,
        });
        pos = start + compressed;
    }
    if total != expected {
        return Err(Error::corrupt(
            "compressed object",
            0,
            format!("blocks expand to {total} bytes, the key says {expected}"),
        ));
    }
    Ok(out)
}

thread_local! {
    static ZSTD: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    static ZLIB: RefCell<Option<flate2::Decompress>> = const { RefCell::new(None) };
}

/// Decompresses a whole payload into `dst`, which must be exactly as long as the expected
/// output (its previous content is overwritten).
///
/// # Errors
/// See [`blocks`]; plus codec failures, LZ4 checksum mismatches and short outputs.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let blocks = blocks(src, dst.len())?;
    let mut out_pos = 0usize;
    for b in blocks {
        let data = src
            .get(b.offset + BLOCK_HEADER..b.offset + BLOCK_HEADER + b.compressed)
            .unwrap_or_default();
        let out = dst
            .get_mut(out_pos..out_pos + b.uncompressed)
            .unwrap_or_default();
        decompress_block(b, data, out)?;
        out_pos += b.uncompressed;
    }
    Ok(())
}

/// As [`decompress_into`], with the blocks of a multi-block payload (objects over 16 MiB)
/// decompressed in parallel on the rayon pool: each block is an independent stream.
///
/// # Errors
/// As [`decompress_into`].
pub fn decompress_into_par(src: &[u8], dst: &mut [u8]) -> Result<()> {
    use rayon::prelude::*;
    let blocks = blocks(src, dst.len())?;
    if blocks.len() < 2 {
        return decompress_into(src, dst);
    }
    let mut jobs = Vec::with_capacity(blocks.len());
    let mut rest = dst;
    for b in blocks {
        let (out, tail) = rest.split_at_mut(b.uncompressed.min(rest.len()));
        let data = src
            .get(b.offset + BLOCK_HEADER..b.offset + BLOCK_HEADER + b.compressed)
            .unwrap_or_default();
        jobs.push((b, data, out));
        rest = tail;
    }
    // Largest first, so the longest block starts at once.
    jobs.sort_by_key(|(b, _, _)| std::cmp::Reverse(b.uncompressed));
    jobs.into_par_iter()
        .with_max_len(1)
        .try_for_each(|(b, data, out)| decompress_block(b, data, out))
}

/// Decompresses a payload of `expected` bytes into `out[..expected]`, growing `out` only if it
/// is too short. The block headers are validated before anything is allocated, and the codecs
/// overwrite every output byte (they fail unless they fill it exactly), so a reused buffer is
/// never cleared first. `parallel`: as [`decompress_into_par`].
///
/// # Errors
/// As [`decompress_into`].
pub fn decompress_reusing(
    src: &[u8],
    expected: usize,
    out: &mut Vec<u8>,
    parallel: bool,
) -> Result<()> {
    blocks(src, expected)?;
    if out.len() < expected {
        out.resize(expected, 0);
    }
    let dst = &mut out[..expected];
    if parallel {
        decompress_into_par(src, dst)
    } else {
        decompress_into(src, dst)
    }
}

/// Decompresses a payload into a new buffer of `expected` bytes.
///
/// # Errors
/// As [`decompress_into`].
pub fn decompress(src: &[u8], expected: usize) -> Result<Vec<u8>> {
    // Validate the headers before allocating anything.
    blocks(src, expected)?;
    let mut dst = vec![0u8; expected];
    decompress_into(src, &mut dst)?;
    Ok(dst)
}

fn fail(b: Block, detail: impl Into<String>) -> Error {
    Error::Decompress {
        algorithm: b.algorithm.name(),
        offset: b.offset as u64,
        detail: detail.into(),
    }
}

fn decompress_block(b: Block, data: &[u8], out: &mut [u8]) -> Result<()> {
    let n = match b.algorithm {
        Algorithm::Zstd => ZSTD.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| fail(b, e.to_string()))?);
            }
            match slot.as_mut() {
                Some(d) => d
                    .decompress_to_buffer(data, out)
                    .map_err(|e| fail(b, e.to_string())),
                None => Err(fail(b, "no zstd context")),
            }
        })?,
        Algorithm::Zlib => ZLIB.with(|cell| {
            let mut slot = cell.borrow_mut();
            let d = slot.get_or_insert_with(|| flate2::Decompress::new(true));
            d.reset(true);
            let status = d
                .decompress(data, out, flate2::FlushDecompress::Finish)
                .map_err(|e| fail(b, e.to_string()))?;
            if status != flate2::Status::StreamEnd {
                return Err(fail(b, "zlib stream does not end where the block says"));
            }
            usize::try_from(d.total_out()).map_err(|e| fail(b, e.to_string()))
        })?,
        Algorithm::Lz4 => {
            let (sum, block) = data
                .split_first_chunk::<8>()
                .ok_or_else(|| fail(b, "block shorter than its checksum"))?;
            let want = u64::from_be_bytes(*sum);
            let got = xxhash_rust::xxh64::xxh64(block, 0);
            if want != got {
                return Err(fail(
                    b,
                    format!("checksum {got:016x} != stored {want:016x}"),
                ));
            }
            lz4_flex::block::decompress_into(block, out).map_err(|e| fail(b, e.to_string()))?
        }
        Algorithm::Lzma => {
            let mut stream = xz2::stream::Stream::new_stream_decoder(u64::MAX, 0)
                .map_err(|e| fail(b, e.to_string()))?;
            let status = stream
                .process(data, out, xz2::stream::Action::Finish)
                .map_err(|e| fail(b, e.to_string()))?;
            if status != xz2::stream::Status::StreamEnd {
                return Err(fail(b, "xz stream does not end where the block says"));
            }
            usize::try_from(stream.total_out()).map_err(|e| fail(b, e.to_string()))?
        }
    };
    if n != out.len() {
        return Err(fail(
            b,
            format!("produced {n} bytes, the header says {}", out.len()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn header(tag: &[u8; 2], c: usize, u: usize) -> Vec<u8> {
        let mut h = vec![tag[0], tag[1], 1];
        h.extend_from_slice(&(c as u32).to_le_bytes()[..3]);
        h.extend_from_slice(&(u as u32).to_le_bytes()[..3]);
        h
    }

    #[test]
    fn zstd_and_zlib_blocks_round_trip() {
        let raw: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 97).to_be_bytes())
            .collect();
        let z = zstd::bulk::compress(&raw, 3).unwrap();
        let mut src = header(b"ZS", z.len(), raw.len());
        src.extend_from_slice(&z);
        assert_eq!(decompress(&src, raw.len()).unwrap(), raw);
        // Wrong expected size is an error, not a panic.
        assert!(decompress(&src, raw.len() + 1).is_err());
    }

    #[test]
    fn absurd_ratio_is_rejected_before_allocating() {
        let src = header(b"ZL", 1, 0xFF_FFFF);
        let mut src = src;
        src.push(0);
        let err = decompress(&src, 0xFF_FFFF).unwrap_err();
        assert!(err.to_string().contains("cannot expand"), "{err}");
    }

    #[test]
    fn lz4_checksum_is_verified() {
        let raw = vec![7u8; 1000];
        let block = lz4_flex::block::compress(&raw);
        let sum = xxhash_rust::xxh64::xxh64(&block, 0).to_be_bytes();
        let mut src = header(b"L4", block.len() + 8, raw.len());
        src.extend_from_slice(&sum);
        src.extend_from_slice(&block);
        assert_eq!(decompress(&src, raw.len()).unwrap(), raw);
        let last = src.len() - 1;
        src[last] ^= 0x40;
        assert!(
            decompress(&src, raw.len())
                .unwrap_err()
                .to_string()
                .contains("checksum")
        );
    }
}

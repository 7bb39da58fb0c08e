//! Blocks, block headers and the position arithmetic of the format.
//!
//! A file is a sequence of 64 KiB blocks. At every offset that is a multiple of [`BLOCK_SIZE`] (and where the
//! file continues) there is a 24-byte block header:
//!
//! ```text
//! offset  size  field
//!  0      8     header_hash     HighwayHash64 of bytes 8..24
//!  8      8     previous_chunk  block_begin - begin of the chunk this header interrupts (0: a chunk starts here)
//! 16      8     next_chunk      end of that chunk - block_begin
//! ```
//!
//! Chunks are laid out as if the block headers were not there; the headers interrupt them anywhere, even in
//! the middle of a chunk header. All positions are u64 file offsets.

use crate::hash::highway_hash64;

/// Size of a block.
pub const BLOCK_SIZE: u64 = 1 << 16;
/// Size of a block header.
pub const BLOCK_HEADER_SIZE: u64 = 24;
/// Bytes of a block available to chunks.
pub const USABLE_BLOCK_SIZE: u64 = BLOCK_SIZE - BLOCK_HEADER_SIZE;

/// Bytes from `pos` to the next block boundary (0 at a boundary).
#[inline]
#[must_use]
pub fn remaining_in_block(pos: u64) -> u64 {
    pos.wrapping_neg() % BLOCK_SIZE
}

/// Whether a chunk may begin at `pos` (not inside or right after a block header, except at the boundary).
#[inline]
#[must_use]
pub fn is_possible_chunk_boundary(pos: u64) -> bool {
    remaining_in_block(pos) < USABLE_BLOCK_SIZE
}

/// The smallest possible chunk boundary at or after `pos`.
#[inline]
#[must_use]
pub fn round_up_to_possible_chunk_boundary(pos: u64) -> u64 {
    pos.saturating_add(remaining_in_block(pos).saturating_sub(USABLE_BLOCK_SIZE - 1))
}

/// Position reached from `begin` after `len` chunk bytes, counting the block headers in between.
#[inline]
#[must_use]
pub fn add_with_overhead(begin: u64, len: u64) -> u64 {
    let blocks =
        (len.saturating_add((begin + USABLE_BLOCK_SIZE - 1) % BLOCK_SIZE)) / USABLE_BLOCK_SIZE;
    begin
        .saturating_add(len)
        .saturating_add(blocks.saturating_mul(BLOCK_HEADER_SIZE))
}

/// Chunk bytes between `a` and `b` (`a <= b`), not counting block headers.
#[inline]
#[must_use]
pub fn distance_without_overhead(a: u64, b: u64) -> u64 {
    let a_adj = a - (a % BLOCK_SIZE).min(BLOCK_HEADER_SIZE);
    let b_adj = b - (b % BLOCK_SIZE).min(BLOCK_HEADER_SIZE);
    (b_adj - a_adj) - BLOCK_HEADER_SIZE * (b / BLOCK_SIZE - a / BLOCK_SIZE)
}

/// A parsed block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// Distance back from the block begin to the begin of the interrupted chunk.
    pub previous_chunk: u64,
    /// Distance from the block begin to the end of the interrupted chunk.
    pub next_chunk: u64,
}

impl BlockHeader {
    /// Serializes the header with its hash.
    #[must_use]
    pub fn encode(&self) -> [u8; 24] {
        let mut out = [0u8; 24];
        out[8..16].copy_from_slice(&self.previous_chunk.to_le_bytes());
        out[16..24].copy_from_slice(&self.next_chunk.to_le_bytes());
        let hash = highway_hash64(&out[8..24]);
        out[0..8].copy_from_slice(&hash.to_le_bytes());
        out
    }

    /// Parses and verifies a header; `None` if the hash does not match or the fields are impossible.
    #[must_use]
    pub fn decode(bytes: &[u8; 24]) -> Option<Self> {
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        if highway_hash64(&bytes[8..24]) != word(0) {
            return None;
        }
        let header = Self {
            previous_chunk: word(8),
            next_chunk: word(16),
        };
        if header.previous_chunk % BLOCK_SIZE >= USABLE_BLOCK_SIZE
            || header.next_chunk == 0
            || (header.next_chunk - 1) % BLOCK_SIZE < BLOCK_HEADER_SIZE
        {
            return None;
        }
        Some(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas() {
        assert_eq!(round_up_to_possible_chunk_boundary(0), 0);
        assert_eq!(round_up_to_possible_chunk_boundary(1), 25);
        assert_eq!(round_up_to_possible_chunk_boundary(25), 25);
        assert_eq!(round_up_to_possible_chunk_boundary(26), 26);
        assert_eq!(round_up_to_possible_chunk_boundary(65_536), 65_536);
        assert_eq!(round_up_to_possible_chunk_boundary(65_537), 65_561);
        // The worked example of the reference: a chunk at 227 613 with 219 745 data bytes ends at 447 470.
        assert_eq!(add_with_overhead(227_613, 40 + 219_745), 447_470);
        assert_eq!(distance_without_overhead(227_613, 447_470), 40 + 219_745);
        assert_eq!(add_with_overhead(0, 40), 64);
        assert_eq!(add_with_overhead(65_536, 1), 65_561);
        assert!(is_possible_chunk_boundary(0));
        assert!(!is_possible_chunk_boundary(24));
        assert!(is_possible_chunk_boundary(65_535));
    }

    #[test]
    fn first_block_header_bytes() {
        let h = BlockHeader {
            previous_chunk: 0,
            next_chunk: 64,
        }
        .encode();
        assert_eq!(&h[..8], &[0x83, 0xaf, 0x70, 0xd1, 0x0d, 0x88, 0x4a, 0x3f]);
        assert_eq!(
            BlockHeader::decode(&h),
            Some(BlockHeader {
                previous_chunk: 0,
                next_chunk: 64
            })
        );
    }
}

//! Chunk headers and chunk types.
//!
//! ```text
//! offset  size  field
//!  0      8     header_hash        HighwayHash64 of bytes 8..40
//!  8      8     data_size          bytes of data (block headers excluded)
//! 16      8     data_hash          HighwayHash64 of data
//! 24      1     chunk_type         's' signature, 'm' metadata, 'p' padding, 'r' simple, 't' transposed
//! 25      7     num_records        at most 2^56 - 1
//! 32      8     decoded_data_size  sum of the record sizes
//! ```

use crate::block::{add_with_overhead, round_up_to_possible_chunk_boundary};
use crate::hash::highway_hash64;

/// Size of a chunk header.
pub const CHUNK_HEADER_SIZE: u64 = 40;
/// Largest `num_records` of a chunk.
pub const MAX_NUM_RECORDS: u64 = (1 << 56) - 1;

/// The type byte of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkType {
    /// `'s'`: file signature, at offset 0.
    FileSignature,
    /// `'m'`: file metadata (a transposed chunk holding one serialized `RecordsMetadata`).
    FileMetadata,
    /// `'p'`: padding.
    Padding,
    /// `'r'`: simple records.
    Simple,
    /// `'t'`: transposed records.
    Transposed,
    /// Any other byte (ignored when the chunk holds no records).
    Unknown(u8),
}

impl ChunkType {
    /// The byte stored in the header.
    #[must_use]
    pub fn to_byte(self) -> u8 {
        match self {
            Self::FileSignature => b's',
            Self::FileMetadata => b'm',
            Self::Padding => b'p',
            Self::Simple => b'r',
            Self::Transposed => b't',
            Self::Unknown(b) => b,
        }
    }

    /// The type of a stored byte.
    #[must_use]
    pub fn from_byte(b: u8) -> Self {
        match b {
            b's' => Self::FileSignature,
            b'm' => Self::FileMetadata,
            b'p' => Self::Padding,
            b'r' => Self::Simple,
            b't' => Self::Transposed,
            other => Self::Unknown(other),
        }
    }

    /// A short name for reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::FileSignature => "signature",
            Self::FileMetadata => "metadata",
            Self::Padding => "padding",
            Self::Simple => "simple",
            Self::Transposed => "transposed",
            Self::Unknown(_) => "unknown",
        }
    }
}

/// A chunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Bytes of chunk data.
    pub data_size: u64,
    /// HighwayHash64 of the data.
    pub data_hash: u64,
    /// Chunk type.
    pub chunk_type: ChunkType,
    /// Records in the chunk.
    pub num_records: u64,
    /// Sum of the record sizes (type-specific for metadata).
    pub decoded_data_size: u64,
}

impl ChunkHeader {
    /// A header for `data`.
    #[must_use]
    pub fn new(
        chunk_type: ChunkType,
        data: &[u8],
        num_records: u64,
        decoded_data_size: u64,
    ) -> Self {
        Self {
            data_size: data.len() as u64,
            data_hash: highway_hash64(data),
            chunk_type,
            num_records,
            decoded_data_size,
        }
    }

    /// Serializes the header with its hash.
    #[must_use]
    pub fn encode(&self) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[8..16].copy_from_slice(&self.data_size.to_le_bytes());
        out[16..24].copy_from_slice(&self.data_hash.to_le_bytes());
        let type_and_records = u64::from(self.chunk_type.to_byte()) | (self.num_records << 8);
        out[24..32].copy_from_slice(&type_and_records.to_le_bytes());
        out[32..40].copy_from_slice(&self.decoded_data_size.to_le_bytes());
        let hash = highway_hash64(&out[8..40]);
        out[0..8].copy_from_slice(&hash.to_le_bytes());
        out
    }

    /// Parses a header; `None` if its hash does not match.
    #[must_use]
    pub fn decode(bytes: &[u8; 40]) -> Option<Self> {
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        if highway_hash64(&bytes[8..40]) != word(0) {
            return None;
        }
        let type_and_records = word(24);
        Some(Self {
            data_size: word(8),
            data_hash: word(16),
            chunk_type: ChunkType::from_byte(type_and_records as u8),
            num_records: type_and_records >> 8,
            decoded_data_size: word(32),
        })
    }

    /// End of a chunk beginning at `begin`: after its header, data and block headers, and at least
    /// `num_records` bytes past `begin` so that every record has a distinct numeric position.
    #[must_use]
    pub fn chunk_end(&self, begin: u64) -> u64 {
        add_with_overhead(begin, CHUNK_HEADER_SIZE.saturating_add(self.data_size)).max(
            round_up_to_possible_chunk_boundary(begin.saturating_add(self.num_records)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_header_bytes() {
        let h = ChunkHeader::new(ChunkType::FileSignature, b"", 0, 0).encode();
        assert_eq!(&h[..8], &[0x91, 0xba, 0xc2, 0x3c, 0x92, 0x87, 0xe1, 0xa9]);
        assert_eq!(
            ChunkHeader::decode(&h).map(|h| h.chunk_type),
            Some(ChunkType::FileSignature)
        );
    }

    #[test]
    fn num_records_padding() {
        // A chunk at 64 holding 65 473 empty records in 34 data bytes ends at 65 561.
        let h = ChunkHeader {
            data_size: 34,
            data_hash: 0,
            chunk_type: ChunkType::Simple,
            num_records: 65_473,
            decoded_data_size: 0,
        };
        assert_eq!(h.chunk_end(64), 65_561);
    }
}

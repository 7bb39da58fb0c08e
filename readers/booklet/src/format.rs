//! On-disk constants, the 200-byte header, key hashing and bucket selection.
//!
//! ```text
//! [0,200)                     header (see `Header`)
//! [index_offset, +6*n)        bucket index: n 6-byte pointers to the first block of each chain (<= 1: empty)
//! data blocks, append-only:   hash(13) next(6) key_len(2) value_len(4) [timestamp(7)] key value
//!                             fixed-length files: hash(13) next(6) key_len(2) key value
//! next pointer:               0 = deleted, 1 = end of chain, > 1 = offset of the next block in the bucket
//! ```
//!
//! All integers are unsigned little-endian. Keys are identified by `BLAKE2s(key, digest_size = 13)`
//! (the output-length parameter, not a truncated 32-byte digest); the bucket is that hash read as
//! a 104-bit little-endian integer modulo the bucket count.

use crate::error::{Error, Result};

/// Length of the header.
pub const HEADER_LEN: u64 = 200;
/// Where the first bucket index of a fresh file starts (same as the header length).
pub const SUB_INDEX_INIT_POS: u64 = 200;
/// Width of a file offset / pointer.
pub const N_BYTES_FILE: u64 = 6;
/// Width of the key length field.
pub const N_BYTES_KEY: u64 = 2;
/// Width of the value length field.
pub const N_BYTES_VALUE: u64 = 4;
/// Length of a key hash.
pub const KEY_HASH_LEN: usize = 13;
/// Width of an item timestamp (microseconds since the Unix epoch).
pub const TIMESTAMP_LEN: u64 = 7;
/// The format version this crate writes into new files.
pub const CURRENT_VERSION: u16 = 5;
/// Default number of buckets of a new file.
pub const DEFAULT_N_BUCKETS: u32 = 12007;
/// Default write buffer capacity (4 MiB), as in Python booklet.
pub const DEFAULT_BUFFER_SIZE: usize = 1 << 22;
/// `n_keys` value that marks a file whose handle was dropped without close.
pub const N_KEYS_CRASH: u32 = u32::MAX;
/// The bucket counts auto-reindex steps through.
pub const N_BUCKETS_CHAIN: [u64; 4] = [12007, 144_013, 1_728_017, 20_736_017];

/// Magic of a variable-length-value file (`booklet.open`, `VariableLengthValue`).
pub const MAGIC_VARIABLE: [u8; 16] = [
    0x4f, 0x7e, 0x8a, 0x3f, 0xe7, 0x5c, 0x47, 0x50, 0xad, 0x43, 0x0a, 0x72, 0x8f, 0xe3, 0x1c, 0xfe,
];
/// Magic of a fixed-length-value file (`FixedLengthValue`).
pub const MAGIC_FIXED: [u8; 16] = [
    0x04, 0xd3, 0xb2, 0x94, 0xf2, 0x10, 0x41, 0x62, 0x95, 0x8d, 0x04, 0x00, 0x73, 0x8c, 0x9e, 0x0a,
];

/// Key of the metadata block (hidden from iteration, not counted).
pub const METADATA_KEY: &[u8] = b"adb01ebc1ba3433eb043527";
/// Keys of the two reserved slots (hidden from iteration, not counted).
pub const RESERVED_SLOT_KEYS: [&[u8]; 2] = [b"7c40d2ea915b4f3a8e6d201", b"f19a5c3d7e2b48069ab34c5"];

pub(crate) const POS_N_BUCKETS: u64 = 21;
pub(crate) const POS_N_KEYS: u64 = 33;
pub(crate) const POS_INDEX_OFFSET: u64 = 65;
pub(crate) const POS_FIRST_DATA: u64 = 71;
/// ASCII "000000": the layout fields of a version-4 header, meaning "default".
pub(crate) const LAYOUT_V4_DEFAULT: u64 = 0x3030_3030_3030;

/// A key hash.
pub type KeyHash = [u8; KEY_HASH_LEN];

/// The `BLAKE2s` parameters of key hashes (13-byte output), with the SIMD implementation
/// detected once.
static KEY_HASH_PARAMS: std::sync::LazyLock<blake2s_simd::Params> =
    std::sync::LazyLock::new(|| {
        let mut p = blake2s_simd::Params::new();
        p.hash_length(KEY_HASH_LEN);
        p
    });

/// `BLAKE2s` with a 13-byte output length, as Python's `blake2s(key, digest_size=13)`.
#[inline]
#[must_use]
pub fn hash_key(key: &[u8]) -> KeyHash {
    // blake2s_simd picks an SSE4.1/AVX2 compression at run time: about 30 % faster than a
    // scalar BLAKE2s on a 12-byte key.
    let out = KEY_HASH_PARAMS.hash(key);
    let mut h = [0u8; KEY_HASH_LEN];
    h.copy_from_slice(out.as_bytes());
    h
}

/// [`hash_key`] of many keys at once: `out[i] = hash_key(keys[i])`. Keys are hashed in
/// parallel SIMD lanes (8 with AVX2, 4 with SSE4.1), which costs about half of hashing them
/// one by one on short keys.
///
/// # Panics
///
/// If `out` is shorter than `keys`.
pub fn hash_keys(keys: &[&[u8]], out: &mut [KeyHash]) {
    use blake2s_simd::many::{HashManyJob, hash_many};
    const BATCH: usize = 64;
    let params = &*KEY_HASH_PARAMS;
    let mut jobs: Vec<HashManyJob<'_>> = Vec::with_capacity(BATCH.min(keys.len()));
    for (ks, os) in keys.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        jobs.clear();
        jobs.extend(ks.iter().map(|k| HashManyJob::new(params, k)));
        hash_many(jobs.iter_mut());
        for (j, o) in jobs.iter().zip(os.iter_mut()) {
            o.copy_from_slice(j.to_hash().as_bytes());
        }
    }
}

/// The bucket of a key hash: the hash as a 104-bit little-endian integer modulo `n_buckets`.
///
/// Returns 0 when `n_buckets` is 0 (headers with 0 buckets are rejected on open).
#[inline]
#[must_use]
pub fn bucket_of(hash: &KeyHash, n_buckets: u64) -> u64 {
    if n_buckets == 0 {
        return 0;
    }
    if n_buckets <= u64::from(u32::MAX) {
        // Horner over 32-bit limbs, most significant first: every intermediate value is below
        // n_buckets * 2^32 <= 2^64, so plain 64-bit remainders suffice (no 128-bit division).
        let limb = |i: usize| {
            let mut b = [0u8; 4];
            let end = (i + 4).min(KEY_HASH_LEN);
            b[..end - i].copy_from_slice(&hash[i..end]);
            u64::from(u32::from_le_bytes(b))
        };
        let mut r = limb(12) % n_buckets;
        for i in [8, 4, 0] {
            r = ((r << 32) | limb(i)) % n_buckets;
        }
        return r;
    }
    let mut b = [0u8; 16];
    b[..KEY_HASH_LEN].copy_from_slice(hash);
    let v = u128::from_le_bytes(b);
    (v % u128::from(n_buckets)) as u64
}

/// Whether stored key bytes are one of the hidden reserved keys.
#[inline]
#[must_use]
pub fn is_reserved_key(key: &[u8]) -> bool {
    key.len() == 23 && (key == METADATA_KEY || RESERVED_SLOT_KEYS.contains(&key))
}

/// The next bucket count in the auto-reindex chain (None at the end of the chain).
#[must_use]
pub fn next_n_buckets(n: u64) -> Option<u64> {
    N_BUCKETS_CHAIN.iter().copied().find(|&c| c > n)
}

/// Which of the two file types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Variable-length values (`booklet.open`).
    Variable,
    /// Every value has the same length (`booklet.FixedLengthValue`).
    Fixed {
        /// The value length.
        value_len: u32,
    },
}

/// The parsed 200-byte header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// File type.
    pub kind: Kind,
    /// Format version (3, 4 or 5).
    pub version: u16,
    /// Current bucket count.
    pub n_buckets: u64,
    /// Value serializer code (0 for fixed-length files).
    pub value_serializer: u16,
    /// Key serializer code.
    pub key_serializer: u16,
    /// Stored `n_keys` (may be [`N_KEYS_CRASH`]).
    pub n_keys: u32,
    /// Whether items carry a 7-byte timestamp.
    pub timestamps: bool,
    /// File creation time, microseconds since the Unix epoch.
    pub file_timestamp: u64,
    /// Per-file UUID bytes.
    pub uuid: [u8; 16],
    /// Where the bucket index starts (200 unless relocated).
    pub index_offset: u64,
    /// Where the first data region starts.
    pub first_data_block_pos: u64,
}

fn le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = bytes.len().min(8);
    b[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(b)
}

impl Header {
    /// Parse and validate a header. `file_len` is the file's length, used to check that the
    /// bucket index lies inside the file.
    pub fn parse(h: &[u8; 200], file_len: u64) -> Result<Self> {
        let mut magic = [0u8; 16];
        magic.copy_from_slice(&h[..16]);
        let fixed = if magic == MAGIC_VARIABLE {
            false
        } else if magic == MAGIC_FIXED {
            true
        } else {
            return Err(Error::BadMagic { magic });
        };
        let version = u16::from_le_bytes([h[16], h[17]]);
        if !(3..=5).contains(&version) {
            return Err(Error::UnsupportedVersion(version));
        }
        let widths = (h[18], h[19], h[20]);
        let want = if fixed { (6, 2, 0) } else { (6, 2, 4) };
        if widths != want {
            return Err(Error::corrupt(
                18,
                format!("byte widths {widths:?}, expected {want:?}"),
            ));
        }
        let n_buckets = le(&h[21..25]);
        if n_buckets == 0 {
            return Err(Error::corrupt(21, "n_buckets is 0"));
        }
        let value_serializer = u16::from_le_bytes([h[29], h[30]]);
        let key_serializer = u16::from_le_bytes([h[31], h[32]]);
        let n_keys = u32::from_le_bytes([h[33], h[34], h[35], h[36]]);
        let value_len = u32::from_le_bytes([h[37], h[38], h[39], h[40]]);
        let timestamps = !fixed && version >= 4 && h[41] != 0;
        let file_timestamp = le(&h[42..49]);
        let mut uuid = [0u8; 16];
        uuid.copy_from_slice(&h[49..65]);
        let raw_index = le(&h[65..71]);
        let raw_first = le(&h[71..77]);
        let index_offset = if raw_index == 0 || raw_index == LAYOUT_V4_DEFAULT {
            SUB_INDEX_INIT_POS
        } else {
            raw_index
        };
        let index_end = n_buckets
            .checked_mul(N_BYTES_FILE)
            .and_then(|l| l.checked_add(index_offset))
            .ok_or_else(|| Error::corrupt(21, "bucket index size overflows"))?;
        if index_offset < SUB_INDEX_INIT_POS || index_end > file_len {
            return Err(Error::corrupt(
                POS_INDEX_OFFSET,
                format!(
                    "bucket index [{index_offset}, {index_end}) does not fit in the {file_len}-byte file"
                ),
            ));
        }
        let first_data_block_pos = if raw_first == 0 || raw_first == LAYOUT_V4_DEFAULT {
            SUB_INDEX_INIT_POS + n_buckets * N_BYTES_FILE
        } else {
            raw_first
        };
        if first_data_block_pos < SUB_INDEX_INIT_POS || first_data_block_pos > file_len {
            return Err(Error::corrupt(
                POS_FIRST_DATA,
                format!("first data block {first_data_block_pos} outside the file"),
            ));
        }
        if index_offset != SUB_INDEX_INIT_POS && first_data_block_pos > index_offset {
            return Err(Error::corrupt(
                POS_FIRST_DATA,
                "first data block lies after the relocated index",
            ));
        }
        let kind = if fixed {
            if value_len == 0 {
                return Err(Error::corrupt(37, "fixed-length file with value length 0"));
            }
            Kind::Fixed { value_len }
        } else {
            Kind::Variable
        };
        Ok(Header {
            kind,
            version,
            n_buckets,
            value_serializer: if fixed { 0 } else { value_serializer },
            key_serializer,
            n_keys,
            timestamps,
            file_timestamp,
            uuid,
            index_offset,
            first_data_block_pos,
        })
    }

    /// Encode a header for a new file (layout fields 0, as Python writes them).
    #[must_use]
    pub fn encode_new(&self) -> [u8; 200] {
        let mut h = [0u8; 200];
        h[..16].copy_from_slice(match self.kind {
            Kind::Variable => &MAGIC_VARIABLE,
            Kind::Fixed { .. } => &MAGIC_FIXED,
        });
        h[16..18].copy_from_slice(&self.version.to_le_bytes());
        h[18] = 6;
        h[19] = 2;
        h[20] = if matches!(self.kind, Kind::Fixed { .. }) {
            0
        } else {
            4
        };
        h[21..25].copy_from_slice(&(self.n_buckets as u32).to_le_bytes());
        h[29..31].copy_from_slice(&self.value_serializer.to_le_bytes());
        h[31..33].copy_from_slice(&self.key_serializer.to_le_bytes());
        h[33..37].copy_from_slice(&self.n_keys.to_le_bytes());
        if let Kind::Fixed { value_len } = self.kind {
            h[37..41].copy_from_slice(&value_len.to_le_bytes());
        }
        h[41] = u8::from(self.timestamps);
        h[42..49].copy_from_slice(&self.file_timestamp.to_le_bytes()[..7]);
        h[49..65].copy_from_slice(&self.uuid);
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_vector_from_python() {
        // blake2s(b"a", digest_size=13) in Python.
        let h = hash_key(b"a");
        let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "98bffdaaf3946389080dd51a12");
        assert_eq!(bucket_of(&h, 7), 6);
        let m = hash_key(METADATA_KEY);
        let hex: String = m.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "427ef509e6ef2cbf166e6e8201");
    }

    #[test]
    fn hash_matches_reference_blake2s_13_for_all_lengths() {
        use blake2::Digest as _;
        for n in 0..300usize {
            let key: Vec<u8> = (0..n).map(|i| (i * 31 + n) as u8).collect();
            let want = blake2::Blake2s::<blake2::digest::consts::U13>::digest(&key);
            assert_eq!(&hash_key(&key)[..], &want[..], "key length {n}");
        }
    }

    #[test]
    fn batched_hashes_and_buckets_match_the_reference() {
        let keys: Vec<Vec<u8>> = (0..200usize)
            .map(|n| (0..n % 90).map(|i| (i * 7 + n) as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut out = vec![[0u8; KEY_HASH_LEN]; refs.len()];
        hash_keys(&refs, &mut out);
        for (k, h) in refs.iter().zip(&out) {
            assert_eq!(*h, hash_key(k));
            for n in [
                1u64,
                7,
                12007,
                144_013,
                20_736_017,
                u64::from(u32::MAX),
                1 << 40,
            ] {
                let mut b = [0u8; 16];
                b[..KEY_HASH_LEN].copy_from_slice(h);
                let want = (u128::from_le_bytes(b) % u128::from(n)) as u64;
                assert_eq!(bucket_of(h, n), want, "n_buckets {n}");
            }
        }
    }

    #[test]
    fn reindex_chain() {
        assert_eq!(next_n_buckets(7), Some(12007));
        assert_eq!(next_n_buckets(1), Some(12007));
        assert_eq!(next_n_buckets(12007), Some(144_013));
        assert_eq!(next_n_buckets(144_013), Some(1_728_017));
        assert_eq!(next_n_buckets(1_728_017), Some(20_736_017));
        assert_eq!(next_n_buckets(20_736_017), None);
    }
}

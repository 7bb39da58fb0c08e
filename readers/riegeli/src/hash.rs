//! HighwayHash-64 with the Riegeli key.
//!
//! Every block header, chunk header and chunk data in a Riegeli/records file carries a 64-bit HighwayHash
//! whose 256-bit key is the 32 ASCII bytes `"Riegeli/records\nRiegeli/records\n"` read as four little-endian
//! u64 words. The `highway` crate picks the AVX2 / SSE4.1 / portable implementation at run time (the same
//! algorithm C++ riegeli uses through google/highwayhash).

use highway::{HighwayHash, HighwayHasher, Key};

/// The Riegeli key: `"Riegeli/records\n"` twice, as little-endian u64 words.
pub const RIEGELI_KEY: [u64; 4] = [
    0x2f69_6c65_6765_6952,
    0x0a73_6472_6f63_6572,
    0x2f69_6c65_6765_6952,
    0x0a73_6472_6f63_6572,
];

/// HighwayHash-64 of `data` with the Riegeli key.
#[must_use]
pub fn highway_hash64(data: &[u8]) -> u64 {
    HighwayHasher::new(Key(RIEGELI_KEY)).hash64(data)
}

/// HighwayHash-64 of the concatenation of `parts`.
#[must_use]
pub fn highway_hash64_parts(parts: &[&[u8]]) -> u64 {
    let mut h = HighwayHasher::new(Key(RIEGELI_KEY));
    for p in parts {
        h.append(p);
    }
    h.finalize64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_vectors() {
        let seq33: Vec<u8> = (0u8..=0x20).collect();
        let seq64: Vec<u8> = (0u8..=0x3f).collect();
        let mut block_header_body = Vec::new();
        block_header_body.extend_from_slice(&0u64.to_le_bytes());
        block_header_body.extend_from_slice(&64u64.to_le_bytes());
        let cases: [(&[u8], u64); 8] = [
            (b"", 0x72c3_b1e9_c013_9fe1),
            (b"a", 0x2479_3c7d_a388_949f),
            (b"abc", 0x672f_e946_c18d_0ed9),
            (&seq33, 0xec2f_9200_14ea_a741),
            (&seq64, 0xe34b_1e10_0f13_22af),
            (
                b"Riegeli/records\nRiegeli/records\nRiegeli/records\n",
                0x2dcc_f80d_8379_8774,
            ),
            (&block_header_body, 0x3f4a_880d_d170_af83),
            (&[0u8; 65_472], 0xd994_ed38_16cb_64ce),
        ];
        for (i, (input, want)) in cases.iter().enumerate() {
            assert_eq!(highway_hash64(input), *want, "case {i}");
            let mid = input.len() / 3;
            assert_eq!(
                highway_hash64_parts(&[&input[..mid], &input[mid..]]),
                *want,
                "case {i} in parts"
            );
        }
    }
}

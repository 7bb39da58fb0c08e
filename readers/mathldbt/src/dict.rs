//! A string interner without lifetimes, so it can live in a reusable
//! workspace: entries are stored as offsets into one byte buffer, and an
//! open-addressing table (linear probing, load factor at most 1/2) maps a
//! hash to an entry.
//!
//! Used by the encoder to build `DictUtf8` dictionaries (entries in
//! first-appearance order, exactly the order the format requires) and by the
//! decoder to check that dictionary entries are distinct.

use std::hash::Hasher;

/// Interns byte strings; entry `i` is the `i`-th distinct string seen.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    /// Entry boundaries: `len() + 1` offsets into `data`, starting at 0.
    offsets: Vec<u32>,
    data: Vec<u8>,
    hashes: Vec<u64>,
    /// Per entry: its [`short_key`], or 0 for entries longer than 8 bytes.
    keys: Vec<u128>,
    /// Slot -> entry index + 1; 0 marks an empty slot. Length is a power of
    /// two, or zero before first use.
    table: Vec<u32>,
}

/// Initial table size: small dictionaries (the common case) get a sparse
/// table, so probes rarely collide.
const MIN_TABLE: usize = 256;

/// The entry data would exceed `u32::MAX` bytes.
#[derive(Debug)]
pub(crate) struct InternerFull;

/// An injective key for strings of at most 8 bytes, never 0: the length
/// (plus one) in the high half and the bytes, gathered with fixed-size
/// loads, in the low half. Comparing two keys replaces a byte loop (whose
/// varying trip count costs branch mispredictions) with one comparison.
#[inline]
fn short_key(s: &[u8]) -> Option<u128> {
    let content: u64 = match s.len() {
        0 => 0,
        len @ 1..=3 => {
            // s[0], s[len / 2], s[len - 1] cover every byte of 1..=3.
            let at = |i: usize| u64::from(s.get(i).copied().unwrap_or(0));
            at(0) | (at(len / 2) << 8) | (at(len - 1) << 16)
        }
        4..=8 => {
            // The first and last four bytes (overlapping below 8) cover all.
            let lo = s.first_chunk::<4>().map_or(0, |c| u32::from_le_bytes(*c));
            let hi = s.last_chunk::<4>().map_or(0, |c| u32::from_le_bytes(*c));
            u64::from(lo) | (u64::from(hi) << 32)
        }
        _ => return None,
    };
    Some(u128::from(content) | ((s.len() as u128 + 1) << 64))
}

#[inline]
fn hash_short(key: u128) -> u64 {
    let x = (key as u64) ^ ((key >> 64) as u64).wrapping_mul(0xA076_1D64_78BD_642F);
    let m = u128::from(x).wrapping_mul(0xE703_7ED1_A0B4_28DB);
    ((m >> 64) as u64) ^ (m as u64)
}

#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    // Fold the high bits down: the table indexes with the low bits.
    let x = h.finish();
    (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (x >> 17)
}

impl Interner {
    /// Empties the interner, keeping its allocations.
    pub(crate) fn clear(&mut self) {
        if !self.hashes.is_empty() {
            self.table.fill(0);
        }
        self.offsets.clear();
        self.offsets.push(0);
        self.data.clear();
        self.hashes.clear();
        self.keys.clear();
    }

    /// Number of distinct entries.
    pub(crate) fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Entry boundaries (`len() + 1` offsets).
    pub(crate) fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// Concatenated entry bytes.
    pub(crate) fn data(&self) -> &[u8] {
        &self.data
    }

    fn entry(&self, i: usize) -> &[u8] {
        let start = self.offsets.get(i).copied().unwrap_or(0) as usize;
        let end = self.offsets.get(i + 1).copied().unwrap_or(0) as usize;
        self.data.get(start..end).unwrap_or_default()
    }

    fn grow(&mut self) {
        let new_len = (self.table.len() * 2).max(MIN_TABLE);
        self.table.clear();
        self.table.resize(new_len, 0);
        let mask = new_len - 1;
        for (i, &h) in self.hashes.iter().enumerate() {
            let mut slot = (h as usize) & mask;
            // The table is at most half full, so an empty slot is found
            // within `new_len` probes.
            for _ in 0..new_len {
                match self.table.get_mut(slot) {
                    Some(s) if *s == 0 => {
                        *s = (i + 1) as u32;
                        break;
                    }
                    _ => slot = (slot + 1) & mask,
                }
            }
        }
    }

    /// Returns the index of `s`, adding it if new, and whether it was new.
    #[inline]
    pub(crate) fn intern(&mut self, s: &[u8]) -> Result<(u32, bool), InternerFull> {
        // Fast path, small enough to inline into the per-row loop: a short
        // string already present in its home slot (the common case for
        // low-cardinality columns, given the sparse table).
        if let Some(k) = short_key(s)
            && let Some(mask) = self.table.len().checked_sub(1)
            && let Some(&e) = self.table.get((hash_short(k) as usize) & mask)
            && e != 0
            && self.keys.get((e - 1) as usize) == Some(&k)
        {
            return Ok((e - 1, false));
        }
        self.intern_slow(s)
    }

    /// Probing past the home slot, long strings, and insertion.
    #[inline(never)]
    fn intern_slow(&mut self, s: &[u8]) -> Result<(u32, bool), InternerFull> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if (self.hashes.len() + 1) * 2 > self.table.len() {
            self.grow();
        }
        let key = short_key(s);
        let h = match key {
            Some(k) => hash_short(k),
            None => hash_bytes(s),
        };
        let mask = self.table.len() - 1;
        let mut slot = (h as usize) & mask;
        for _ in 0..self.table.len() {
            let e = self.table.get(slot).copied().unwrap_or(0);
            if e == 0 {
                break;
            }
            let idx = (e - 1) as usize;
            let hit = match key {
                Some(k) => self.keys.get(idx) == Some(&k),
                None => {
                    self.keys.get(idx) == Some(&0)
                        && self.hashes.get(idx) == Some(&h)
                        && self.entry(idx) == s
                }
            };
            if hit {
                return Ok((e - 1, false));
            }
            slot = (slot + 1) & mask;
        }
        let end = self
            .data
            .len()
            .checked_add(s.len())
            .and_then(|e| u32::try_from(e).ok())
            .ok_or(InternerFull)?;
        let idx = u32::try_from(self.hashes.len()).map_err(|_| InternerFull)?;
        self.data.extend_from_slice(s);
        self.offsets.push(end);
        self.hashes.push(h);
        self.keys.push(key.unwrap_or(0));
        if let Some(t) = self.table.get_mut(slot) {
            *t = idx + 1;
        }
        Ok((idx, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_in_first_appearance_order() {
        let mut i = Interner::default();
        i.clear();
        let words = ["b", "a", "b", "", "c", "a", ""];
        let got: Vec<(u32, bool)> = words
            .iter()
            .map(|w| i.intern(w.as_bytes()).unwrap())
            .collect();
        assert_eq!(
            got,
            vec![
                (0, true),
                (1, true),
                (0, false),
                (2, true),
                (3, true),
                (1, false),
                (2, false)
            ]
        );
        assert_eq!(i.offsets(), &[0, 1, 2, 2, 3]);
        assert_eq!(i.data(), b"bac");
        i.clear();
        assert_eq!(i.len(), 0);
        assert_eq!(i.intern(b"a").unwrap(), (0, true));
    }

    #[test]
    fn short_keys_are_injective_per_length() {
        let mut seen = std::collections::HashMap::new();
        let alphabet = [0u8, 1, b'a', b'b', 0xFF];
        let mut words: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..4 {
            let next: Vec<Vec<u8>> = words
                .iter()
                .flat_map(|w| alphabet.iter().map(move |&c| [w.as_slice(), &[c]].concat()))
                .collect();
            words.extend(next.into_iter().filter(|w| w.len() <= 4));
            words.sort();
            words.dedup();
        }
        for w in &words {
            let k = short_key(w).unwrap();
            assert_ne!(k, 0);
            if let Some(prev) = seen.insert(k, w.clone()) {
                assert_eq!(&prev, w, "collision");
            }
        }
        for len in 4..=8 {
            let a: Vec<u8> = (0..len as u8).collect();
            let mut b = a.clone();
            for i in 0..len {
                b[i] ^= 1;
                assert_ne!(short_key(&a), short_key(&b), "len {len} byte {i}");
                b[i] ^= 1;
            }
        }
        assert_eq!(short_key(&[0; 9]), None);
    }

    #[test]
    fn mixes_short_and_long_entries() {
        let mut i = Interner::default();
        i.clear();
        let words = [
            "",
            "abcdefgh",
            "abcdefghi",
            "a",
            "abcdefghi",
            "abcdefgh",
            "xxxxxxxxxxxxxxxxxxx",
        ];
        let got: Vec<u32> = words
            .iter()
            .map(|w| i.intern(w.as_bytes()).unwrap().0)
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 2, 1, 4]);
    }

    #[test]
    fn survives_growth() {
        let mut i = Interner::default();
        i.clear();
        for n in 0..10_000u32 {
            assert_eq!(i.intern(n.to_string().as_bytes()).unwrap(), (n, true));
        }
        for n in 0..10_000u32 {
            assert_eq!(i.intern(n.to_string().as_bytes()).unwrap(), (n, false));
        }
    }
}

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
    /// Slot -> entry index + 1; 0 marks an empty slot. Length is a power of
    /// two, or zero before first use.
    table: Vec<u32>,
}

/// The entry data would exceed `u32::MAX` bytes.
#[derive(Debug)]
pub(crate) struct InternerFull;

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
        let new_len = (self.table.len() * 2).max(16);
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
    pub(crate) fn intern(&mut self, s: &[u8]) -> Result<(u32, bool), InternerFull> {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if (self.hashes.len() + 1) * 2 > self.table.len() {
            self.grow();
        }
        let h = hash_bytes(s);
        let mask = self.table.len() - 1;
        let mut slot = (h as usize) & mask;
        for _ in 0..self.table.len() {
            let e = self.table.get(slot).copied().unwrap_or(0);
            if e == 0 {
                break;
            }
            let idx = (e - 1) as usize;
            if self.hashes.get(idx) == Some(&h) && self.entry(idx) == s {
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

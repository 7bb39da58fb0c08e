//! How the full read and the floors walk a basket: its decompressed record and the steps its
//! entries are taken in. Both import this; it imports neither.

/// What `decompress_only` (the parent module) found in a basket record.
pub(super) struct Decompressed {
    /// The bytes of its entries (the payload without its entry-offset table, as the full read
    /// counts them and as rootreadspeed does): where the table starts, if there is one.
    pub(super) entry_bytes: u64,
    /// The key's length, which the table's starts count from.
    pub(super) keylen: u32,
    /// Its entries.
    pub(super) entries: usize,
}

/// Entries decoded per step on one thread: the typed output of a step stays in the core's
/// cache and the reused buffers stay small, whatever the basket size (an analysis consumes
/// entries as they are decoded; it does not keep a whole basket's worth of typed values).
/// Against 32,768: `std::string` -17%, `vector<string>` -15%, `vector<vector<f32>>` -12%
/// (paired A/B, BENCHMARKS.md run #38); 256 and 4,096 were slower back to back.
pub(super) const ENTRIES_PER_STEP: usize = 1 << 10;

/// Entries `a..b` in steps of [`ENTRIES_PER_STEP`].
// Inline: the full read's and the floors' loops call it from other files.
#[inline]
pub(super) fn steps(a: usize, b: usize) -> impl Iterator<Item = (usize, usize)> {
    (a..b)
        .step_by(ENTRIES_PER_STEP)
        .map(move |a| (a, (a + ENTRIES_PER_STEP).min(b)))
}

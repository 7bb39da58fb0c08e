//! The TTree and TBranch layouts of ROOT 3 and 4 (TTree v5, TBranch v6-9).
//!
//! ROOT reads a TTree of version 5 to 15 through the class description recorded in the file
//! (`TTree::Streamer` hands it to `ReadClassBuffer`). ROOT 4 wrote version 5, described in
//! its files as:
//!
//! ```text
//! TTree v5     bcv; TNamed; TAttLine; TAttFill; TAttMarker;
//!              f64 fEntries, fTotBytes, fZipBytes, fSavedBytes;
//!              i32 fTimerInterval, fScanField, fUpdate, fMaxEntryLoop, fMaxVirtualSize,
//!                  fAutoSave, fEstimate;
//!              TObjArray fBranches, fLeaves; TArrayD fIndexValues; TArrayI fIndex
//! ```
//!
//! A TBranch below version 10 is read by hand-written code in `TBranch::Streamer`, whatever
//! the description says:
//!
//! ```text
//! TBranch v6-9 bcv; TNamed; TAttFill (v8+);
//!              i32 fCompress, fBasketSize, fEntryOffsetLen, fWriteBasket, fEntryNumber,
//!                  fOffset, fMaxBaskets; i32 fSplitLevel (v7+);
//!              f64 fEntries, fTotBytes, fZipBytes;
//!              TObjArray fBranches, fLeaves, fBaskets;
//!              u8 + i32[fMaxBaskets] fBasketBytes;
//!              u8 + i32[fMaxBaskets] fBasketEntry;
//!              u8 width + fMaxBaskets x (i64 when width is 2, else i32) fBasketSeek;
//!              TString fFileName
//! ```
//!
//! Unlike in later versions, the byte before each array does not mark a null pointer: the
//! values always follow. Counts stored as doubles become integers as ROOT's casts make them.

use super::meta::BranchHead;
use crate::cursor::Cursor;
use crate::error::Result;
use crate::streamer::Streamer;

/// The members of a TTree v5 between its TAttMarker and fBranches: (fEntries, fAutoFlush).
/// Version 5 predates fAutoFlush: 0, as for a tree that never flushed by entries.
pub(super) fn tree_counts(s: &mut Streamer<'_>) -> Result<(i64, i64)> {
    let c = &mut s.cur;
    let entries = c.f64()?;
    c.skip(3 * 8)?; // fTotBytes, fZipBytes, fSavedBytes
    c.skip(7 * 4)?; // fTimerInterval .. fEstimate
    Ok((count(c, entries, "fEntries")?, 0))
}

/// The head of a TBranch v6-9.
pub(super) fn branch_head(s: &mut Streamer<'_>, v: u16) -> Result<BranchHead> {
    let (name, title) = s.tnamed()?;
    if v >= 8 {
        s.skip_object()?; // TAttFill
    }
    let c = &mut s.cur;
    let compress = c.i32()?;
    let _basket_size = c.i32()?;
    let _entry_offset_len = c.i32()?;
    let write_basket = c.i32()?;
    let _entry_number = c.i32()?;
    let _offset = c.i32()?;
    let max_baskets = c.i32()?;
    if v >= 7 {
        let _split = c.i32()?;
    }
    let entries = c.f64()?;
    let tot_bytes = c.f64()?;
    let zip_bytes = c.f64()?;
    Ok(BranchHead {
        name,
        title,
        compress,
        write_basket,
        max_baskets,
        entries: count(c, entries, "fEntries")?,
        tot_bytes: count(c, tot_bytes, "fTotBytes")?,
        zip_bytes: count(c, zip_bytes, "fZipBytes")?,
    })
}

/// fBasketBytes, fBasketEntry and fBasketSeek of a TBranch v6-9, `n` (fMaxBaskets) each.
pub(super) fn basket_arrays(
    s: &mut Streamer<'_>,
    n: usize,
) -> Result<(Vec<i32>, Vec<i64>, Vec<i64>)> {
    let c = &mut s.cur;
    let n = i64::try_from(n).map_err(|_| c.corrupt(format!("fMaxBaskets {n}")))?;
    let narrow = |c: &mut Cursor<'_>| c.i32().map(i64::from);
    let _present = c.u8()?;
    let bytes = c.counted(n, 4, Cursor::i32)?;
    let _present = c.u8()?;
    let first = c.counted(n, 4, narrow)?;
    let seeks = if c.u8()? == 2 {
        c.counted(n, 8, Cursor::i64)?
    } else {
        c.counted(n, 4, narrow)?
    };
    Ok((bytes, first, seeks))
}

/// A count stored as a double (`Stat_t`), made an integer as ROOT's `(Long64_t)` cast does
/// (towards zero); a negative, infinite or not-a-number value is an error.
fn count(c: &Cursor<'_>, value: f64, what: &str) -> Result<i64> {
    // 2^63, the first double past `i64::MAX`.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if (0.0..LIMIT).contains(&value) {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "in range, and truncation towards zero is ROOT's cast"
        )]
        Ok(value as i64)
    } else {
        Err(c.corrupt(format!("{what} {value}")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    fn cursor(bytes: &[u8]) -> Cursor<'_> {
        Cursor::new(bytes, 0, "test")
    }

    #[test]
    fn counts_stored_as_doubles_are_cast_as_root_casts_them() {
        let c = cursor(&[]);
        assert_eq!(count(&c, 4808.0, "fEntries").unwrap(), 4808);
        assert_eq!(count(&c, 0.0, "fEntries").unwrap(), 0);
        assert_eq!(count(&c, 2.9, "fEntries").unwrap(), 2);
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e19] {
            let err = count(&c, bad, "fEntries").unwrap_err().to_string();
            assert!(err.contains("fEntries"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_seek_width_byte_selects_four_or_eight_byte_seeks() {
        // Two baskets: bytes [10, 0], first entries [0, 5], seeks [300, 0].
        let mut four = vec![1, 0, 0, 0, 10, 0, 0, 0, 0];
        four.extend([1, 0, 0, 0, 0, 0, 0, 0, 5]);
        let mut eight = four.clone();
        four.extend([1, 0, 0, 1, 44, 0, 0, 0, 0]);
        eight.extend([2, 0, 0, 0, 0, 0, 0, 1, 44]);
        eight.extend([0; 8]);
        for (bytes, what) in [(four, "four"), (eight, "eight")] {
            let mut s = Streamer::new(cursor(&bytes));
            let arrays = basket_arrays(&mut s, 2).unwrap();
            assert_eq!(arrays, (vec![10, 0], vec![0, 5], vec![300, 0]), "{what}");
            assert_eq!(s.cur.remaining(), 0, "{what}");
        }
        // A count that the bytes left cannot hold is an error, not an allocation.
        let mut s = Streamer::new(cursor(&[1, 0, 0, 0, 10]));
        assert!(basket_arrays(&mut s, 1 << 40).is_err());
    }
}

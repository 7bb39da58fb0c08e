//! The strings of a basket where they lie: the entries of a `char*`, `std::string` or `TString`
//! branch, checked once by the same rules as [`super::object`]'s walk, then handed out as
//! slices of the decompressed basket. Nothing is copied: for short strings that compress well,
//! a copy into a column of their own costs about half as much as decompressing them
//! (`std::string`, BENCHMARKS.md run #6).

use super::framing::{BYTE_COUNT_FLAG, EntryError, body, entry, entry_error, string};
use super::specialized::short_string;
use crate::basket::BasketData;
use crate::error::{Error, Result};
use crate::layout::{Layout, Shape};

/// The checked strings of one basket's entries, borrowed from it.
///
/// ```no_run
/// # fn main() -> Result<(), root_reader::Error> {
/// let file = root_reader::RootFile::open("events.root")?;
/// let branch = file.tree("Events")?.branch("generator")?;
/// let layout = branch.layout()?;
/// let mut bytes = 0;
/// branch.lazy()?.for_each_basket(0, branch.entries(), |_, basket| {
///     let strings = root_reader::TextView::new(basket, branch.name(), &layout)?;
///     bytes += strings.iter().map(<[u8]>::len).sum::<usize>();
///     Ok(())
/// })?;
/// # let _ = bytes;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TextView<'a> {
    data: &'a [u8],
    /// `len + 1` entry offsets into `data`.
    bounds: &'a [u32],
    /// Each entry is an object header (byte count, version) before its string, as ROOT writes
    /// a `std::string` or `TString` entry; a `char*` leaf has none.
    headed: bool,
}

impl<'a> TextView<'a> {
    /// Checks every entry of `basket`, a basket of the string branch `branch` laid out as
    /// `layout`: a string and nothing else in each, as [`crate::BranchReader::read_column`]
    /// reads them.
    ///
    /// # Errors
    /// A layout other than one string per entry; an entry that is not one string (which entry
    /// and what is wrong, as the column read says it).
    pub fn new(basket: &'a BasketData, branch: &str, layout: &Layout) -> Result<Self> {
        let (shape, bounds) = lent(basket, branch, layout, Shape::is_string, "string")?;
        let headed = *shape != Shape::Text;
        let data = basket.data();
        // Checked as the offsets were read, where the basket was read for this layout.
        let n = if !headed && basket.entries_are_short_texts() {
            0
        } else {
            bounds.len().saturating_sub(1)
        };
        for a in (0..n).step_by(CHUNK) {
            let part = &bounds[a..=(a + CHUNK).min(n)];
            let plain = if headed {
                all_plain::<true>(data, part)
            } else {
                all_plain::<false>(data, part)
            };
            if plain {
                continue;
            }
            // Something unusual in this part: entry by entry, by the general rules, which say
            // what is wrong (a long string is not wrong, only less common).
            for (k, pair) in part.windows(2).enumerate() {
                let (s, e) = (pair[0] as usize, pair[1] as usize);
                if (s == e && !headed) || short_string(data, s, e, headed).is_some() {
                    continue;
                }
                check_entry(basket, a + k, headed).map_err(|(j, d)| entry_error(branch, j, d))?;
            }
        }
        Ok(Self {
            data,
            bounds,
            headed,
        })
    }

    /// Number of strings (entries).
    #[must_use]
    pub fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of string `i` (ROOT does not promise UTF-8).
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let (s, e) = (
            *self.bounds.get(i)? as usize,
            *self.bounds.get(i + 1)? as usize,
        );
        if s == e {
            return Some(&[]);
        }
        // Checked in `new`: the header, the length form and the end agree.
        self.data.get(text_start(self.data, s, self.headed)?..e)
    }

    /// The strings in entry order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }
}

/// Where the string of the entry at `s` starts: past the object header when `headed` (and,
/// after a version of 0, the class checksum), then past the length byte (or 255 and the 4-byte
/// length). Read, not checked: for entries [`TextView::new`] has checked, or to find them
/// plainly (`readspeed --read-find`).
#[inline]
pub(crate) fn text_start(data: &[u8], s: usize, headed: bool) -> Option<usize> {
    let at = match headed {
        false => s,
        true if data.get(s + 4..s + 6)? == [0, 0] => s + 10,
        true => s + 6,
    };
    Some(at + if *data.get(at)? == 255 { 5 } else { 1 })
}

/// The shape of `layout` when it is of the `kind` (`is_kind`) a view lends, and the basket's
/// entry offsets.
pub(super) fn lent<'a, 'l>(
    basket: &'a BasketData,
    branch: &str,
    layout: &'l Layout,
    is_kind: fn(&Shape) -> bool,
    kind: &str,
) -> Result<(&'l Shape, &'a [u32])> {
    let shape = match layout {
        Layout::Object(shape) if is_kind(shape) => shape,
        other => {
            return Err(Error::UnsupportedBranch {
                branch: branch.to_string(),
                detail: format!("{other:?} is not one {kind} per entry"),
            });
        }
    };
    let bounds = basket.offsets().ok_or_else(|| {
        entry_error(
            branch,
            0,
            "variable-size entries without offsets".to_string(),
        )
    })?;
    Ok((shape, bounds))
}

/// Entries checked per pass of [`all_plain`].
const CHUNK: usize = 256;

/// Entries whose length bytes [`all_plain`] loads before it checks them.
const GROUP: usize = 16;

/// Whether every entry between `bounds` is the common case of [`short_string`] (or an empty
/// `char*` entry), checked without a branch per entry: the checks of each entry are and-ed
/// together, and a part that fails is checked again entry by entry. A `std::string` entry's
/// first 8 bytes are read as one word (byte count, version, length byte, one more byte);
/// without 8 bytes left in the basket (an empty string last), the part takes the slow way.
#[inline(never)]
fn all_plain<const HEADED: bool>(data: &[u8], bounds: &[u32]) -> bool {
    let Some(&last) = bounds.last() else {
        return true;
    };
    // The offsets are in order (checked when the basket was read): the last bounds them all.
    if last as usize > data.len() {
        return false;
    }
    let mut ok = true;
    let mut bounds = bounds;
    if !HEADED {
        // Sixteen entries at a time: their length bytes loaded first, then checked together
        // (the checks vectorise; one by one they cost more than the loads). Where the machine
        // has AVX2, a basket read for its layout comes checked (`basket/table.rs`).
        while let Some(group) = bounds.first_chunk::<{ GROUP + 1 }>() {
            let mut bytes = [0u32; GROUP];
            for (byte, &s) in bytes.iter_mut().zip(group) {
                *byte = data.get(s as usize).map_or(0, |&b| u32::from(b));
            }
            for (pair, &byte) in group.windows(2).zip(&bytes) {
                let n = pair[1].wrapping_sub(pair[0]);
                let text = n.wrapping_sub(1);
                ok &= (n == 0) | ((byte == text) & (text < 255));
            }
            bounds = &bounds[GROUP..];
        }
    }
    let mut s = bounds[0] as usize;
    for &e in &bounds[1..] {
        let e = e as usize;
        let n = e.wrapping_sub(s);
        // The string's length: under 255 (the one-byte form), and the rest of the entry.
        let text = n.wrapping_sub(if HEADED { 7 } else { 1 });
        if HEADED {
            let Some(word) = data.get(s..).and_then(<[u8]>::first_chunk::<8>) else {
                return false;
            };
            let word = u64::from_be_bytes(*word);
            // Byte count, version, length byte, one byte of the string: the version and that
            // byte masked out.
            let expected = (u64::from((n as u32).wrapping_sub(4) | BYTE_COUNT_FLAG) << 32)
                | ((text as u64 & 0xff) << 8);
            let version = (word >> 16) as u16;
            ok &= (word & 0xffff_ffff_0000_ff00 == expected)
                & (text < 255)
                & (version & 0x4000 == 0)
                & (version != 0);
        } else {
            // A char* leaf writes nothing at all for an empty string.
            let byte = data.get(s).map_or(0, |&b| usize::from(b));
            ok &= (n == 0) | ((byte == text) & (text < 255));
        }
        s = e;
    }
    ok
}

/// Entry `j` holds one string and nothing else (behind an object header when `headed`), by
/// the rules the column read's own fallback applies.
fn check_entry(basket: &BasketData, j: usize, headed: bool) -> std::result::Result<(), EntryError> {
    let mut e = entry(basket, j)?;
    if headed {
        e = body(j, e)?;
    }
    match string(j, e)? {
        (_, []) => Ok(()),
        (_, rest) => Err((j, format!("{} bytes left after the string", rest.len()))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use crate::column::Values;
    use crate::decode::framing::{headed_for_test as headed, streamed_string as string};
    use crate::decode::object::{decode_entries, empty};
    use crate::decode::roots_baskets::on_roots_baskets_whole_and_flipped;

    /// What the column read returns for the basket: its strings, or that it failed.
    fn column_read(basket: &BasketData, shape: &Shape) -> Option<Vec<Vec<u8>>> {
        let mut out = empty(shape);
        decode_entries(basket, "b", shape, 0, basket.entries(), &mut out).ok()?;
        let Values::Text(strings) = out else {
            panic!("{shape:?} read as {out:?}");
        };
        Some(
            (0..strings.len())
                .map(|i| strings.get(i).unwrap().to_vec())
                .collect(),
        )
    }

    fn view(basket: &BasketData, shape: &Shape) -> Option<Vec<Vec<u8>>> {
        let layout = Layout::Object(shape.clone());
        let strings = TextView::new(basket, "b", &layout).ok()?;
        assert_eq!(strings.iter().len(), basket.entries());
        Some(strings.iter().map(<[u8]>::to_vec).collect())
    }

    /// Both length forms, empty `char*` entries and a version-0 header (with its checksum):
    /// the column read's strings, and its refusals.
    #[test]
    fn equals_the_column_read_at_every_length_and_header() {
        let lengths = [0, 1, 16, 33, 254, 255, 256, 300];
        let char_star: Vec<Vec<u8>> = lengths
            .iter()
            .map(|&n| if n == 0 { vec![] } else { string(n) })
            .collect();
        let std_string: Vec<Vec<u8>> = lengths
            .iter()
            .enumerate()
            .map(|(k, &n)| headed(&string(n), if k % 3 == 0 { [0, 0] } else { [0, 2] }))
            .collect();
        for (shape, entries) in [
            (Shape::Text, char_star),
            (Shape::headed(Shape::Text), std_string),
        ] {
            let entries: Vec<&[u8]> = entries.iter().map(Vec::as_slice).collect();
            let basket = BasketData::entries_for_test(&entries);
            let strings = view(&basket, &shape).expect("good entries");
            assert_eq!(Some(strings.clone()), column_read(&basket, &shape));
            let lens: Vec<usize> = strings.iter().map(Vec::len).collect();
            assert_eq!(lens, lengths);
            // Every cut of every entry: refused by both.
            for (k, e) in entries.iter().enumerate() {
                for cut in 1..e.len() {
                    let mut cut_entries = entries.clone();
                    cut_entries[k] = &e[..cut];
                    let basket = BasketData::entries_for_test(&cut_entries);
                    assert_eq!(view(&basket, &shape), column_read(&basket, &shape));
                }
            }
        }
    }

    /// A 4-byte length (after a length byte of 255) that disagrees with the entry's size, in
    /// an entry just the size a one-byte length of 255 would give: refused, as by the column
    /// read, not taken for a short string.
    #[test]
    fn long_lengths_that_disagree_with_the_entry_are_refused() {
        for (declared, shape) in [
            (9_999u32, Shape::Text),
            (3, Shape::Text),
            (9_999, Shape::headed(Shape::Text)),
        ] {
            let mut text = vec![255];
            text.extend(declared.to_be_bytes());
            text.resize(256, b'x');
            let (first, entry) = if shape == Shape::Text {
                (vec![1, b'a'], text)
            } else {
                (headed(&[1, b'a'], [0, 2]), headed(&text, [0, 2]))
            };
            let basket = BasketData::entries_for_test(&[&first, &entry]);
            assert!(view(&BasketData::entries_for_test(&[&first]), &shape).is_some());
            assert_eq!(column_read(&basket, &shape), None, "{declared} {shape:?}");
            assert_eq!(view(&basket, &shape), None, "{declared} {shape:?}");
        }
    }

    #[test]
    fn other_layouts_are_refused() {
        let basket = BasketData::entries_for_test(&[&[1, b'x']]);
        let list = Layout::Object(Shape::headed(Shape::list(Shape::Text)));
        let err = TextView::new(&basket, "tags", &list).unwrap_err();
        assert!(err.to_string().contains("tags"), "{err}");
    }

    /// Every string branch of the ROOT-written fixture: the column read's values on every
    /// basket; its first basket flipped one bit at a time, the column read's answer (the same
    /// strings, or both an error) and never a panic.
    #[test]
    fn equals_the_column_read_on_roots_baskets_whole_and_damaged() {
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        let mut checked_as_read = 0;
        let (branches, flips) =
            on_roots_baskets_whole_and_flipped(Shape::is_string, |name, shape, basket, flip| {
                let strings = view(basket, shape);
                assert!(flip.is_some() || strings.is_some(), "{name}");
                // Whole, the baskets of strings without headers come checked as they were
                // read (where the machine has AVX2) unless one string is long, and the view
                // takes them as they are.
                if let (None, Shape::Text, true) = (flip, shape, avx2) {
                    let long = strings.iter().flatten().any(|s| s.len() >= 255);
                    assert_eq!(basket.entries_are_short_texts(), !long, "{name}");
                    checked_as_read += usize::from(!long);
                }
                assert_eq!(strings, column_read(basket, shape), "{name} {flip:?}");
            });
        assert!(branches >= 3, "{branches} string branches");
        assert!(flips >= 100, "{flips} flips");
        assert!(
            !avx2 || checked_as_read >= 2,
            "{checked_as_read} baskets checked as read"
        );
    }
}

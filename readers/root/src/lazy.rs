//! The lazy reader and [`ChainedSlice`].
//!
//! [`LazyBranchReader`] keeps only the basket table: an entry is mapped to its basket by a
//! binary search over the baskets' first entries (O(log baskets)), and only the baskets a call
//! touches are loaded, through the file's [`crate::BasketCache`]. So a scan of a file larger
//! than the cache holds at most the cache bound of decompressed data.
//!
//! [`ChainedSlice`] is a zero-copy view of several baskets' entry bytes as one byte sequence:
//! `Arc` segments plus cumulative starts; locating a position is a binary search, and a typed
//! value that straddles two segments is assembled from both.

use std::sync::Arc;

use crate::basket::BasketData;
use crate::column::{Column, Jagged};
use crate::decode::VECTOR_HEADER;
use crate::decode::numeric::{decode_flat, decode_var};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::reader::{Branch, Parallel};
use crate::types::{Element, check_type};

impl Branch {
    /// A lazy reader.
    ///
    /// # Errors
    /// Branches this reader cannot decode.
    pub fn lazy(&self) -> Result<LazyBranchReader> {
        LazyBranchReader::new(self.clone())
    }
}

/// Reads entries of one branch on demand.
#[derive(Debug, Clone)]
pub struct LazyBranchReader {
    branch: Branch,
    layout: Layout,
    firsts: Vec<u64>,
}

impl LazyBranchReader {
    pub(crate) fn new(branch: Branch) -> Result<Self> {
        let layout = branch.layout()?;
        let firsts = branch.baskets().iter().map(|b| b.first).collect();
        Ok(Self {
            branch,
            layout,
            firsts,
        })
    }

    /// The branch.
    #[must_use]
    pub fn branch(&self) -> &Branch {
        &self.branch
    }

    /// Number of entries.
    #[must_use]
    pub fn entries(&self) -> u64 {
        self.branch.entries()
    }

    /// Index of the basket holding `entry` (binary search).
    #[must_use]
    pub fn basket_of(&self, entry: u64) -> Option<usize> {
        if entry >= self.entries() {
            return None;
        }
        self.firsts.partition_point(|&f| f <= entry).checked_sub(1)
    }

    fn locate(&self, entry: u64) -> Result<(Arc<BasketData>, usize)> {
        let out = || Error::EntryOutOfRange {
            start: entry,
            stop: entry.saturating_add(1),
            entries: self.entries(),
        };
        let i = self.basket_of(entry).ok_or_else(out)?;
        let info = self.branch.baskets().get(i).ok_or_else(out)?;
        let basket = self.branch.load(info)?;
        self.branch.check_entries(info, &basket)?;
        Ok((basket, (entry - info.first) as usize))
    }

    /// The value of a scalar branch at `entry`.
    ///
    /// # Errors
    /// Non-scalar branches, type mismatch, out-of-range entry, I/O and decoding errors.
    pub fn read_at<T: Element>(&self, entry: u64) -> Result<T> {
        if let Layout::Object(shape) = &self.layout
            && !shape.is_list()
        {
            // A packed real: one value per entry.
            let (values, _) =
                self.branch
                    .read_range::<T>(entry, entry.saturating_add(1), Parallel::Never)?;
            return values.first().copied().ok_or(Error::EntryOutOfRange {
                start: entry,
                stop: entry.saturating_add(1),
                entries: self.entries(),
            });
        }
        check_type::<T>(self.branch.name(), self.layout.leaf_type())?;
        let Layout::Scalar(_) = self.layout else {
            return Err(Error::UnsupportedBranch {
                branch: self.branch.name().to_string(),
                detail: format!("{} is not a scalar: use read_entry", self.layout.describe()),
            });
        };
        let (basket, j) = self.locate(entry)?;
        let mut out = [T::default()];
        decode_flat(&basket, self.branch.name(), 1, j, j + 1, &mut out)?;
        Ok(out[0])
    }

    /// The values of `entry` (one for scalars, `n` for fixed arrays, any number otherwise).
    ///
    /// # Errors
    /// Type mismatch, out-of-range entry, I/O and decoding errors.
    pub fn read_entry<T: Element>(&self, entry: u64) -> Result<Vec<T>> {
        if let Layout::Object(_) | Layout::LeafList(_) = self.layout {
            let end = entry.saturating_add(1);
            return Ok(self.branch.read_range::<T>(entry, end, Parallel::Never)?.0);
        }
        check_type::<T>(self.branch.name(), self.layout.leaf_type())?;
        let (basket, j) = self.locate(entry)?;
        let name = self.branch.name();
        match self.layout.fixed_len() {
            Some(per) => {
                let mut out = vec![T::default(); per];
                decode_flat(&basket, name, per, j, j + 1, &mut out)?;
                Ok(out)
            }
            None => {
                let vector = matches!(self.layout, Layout::Vector(_));
                let mut values = Vec::new();
                let mut offsets = vec![0];
                decode_var(&basket, name, vector, j, j + 1, &mut values, &mut offsets)?;
                Ok(values)
            }
        }
    }

    /// Values of entries `start..stop` of a scalar or fixed-array branch, loading only the
    /// baskets that overlap the range.
    ///
    /// # Errors
    /// Variable-size layouts (use [`Self::read_range_jagged`]), type mismatch, range, I/O.
    pub fn read_range<T: Element>(&self, start: u64, stop: u64) -> Result<Vec<T>> {
        if self.layout.fixed_len().is_none() {
            return Err(Error::UnsupportedBranch {
                branch: self.branch.name().to_string(),
                detail: format!(
                    "{} is variable-size: use read_range_jagged",
                    self.layout.describe()
                ),
            });
        }
        Ok(self.branch.read_range::<T>(start, stop, Parallel::Never)?.0)
    }

    /// Entries `start..stop` as offsets + values (any layout).
    ///
    /// # Errors
    /// Type mismatch, range, I/O and decoding errors.
    pub fn read_range_jagged<T: Element>(&self, start: u64, stop: u64) -> Result<Jagged<T>> {
        let (values, offsets) = self.branch.read_range::<T>(start, stop, Parallel::Never)?;
        let offsets = match offsets {
            Some(o) => o,
            None => {
                let per = self.layout.fixed_len().unwrap_or(1) as u64;
                (0..=stop - start).map(|j| j * per).collect()
            }
        };
        Ok(Jagged { offsets, values })
    }

    /// Entries `start..stop` as a [`Column`] of the branch's own type (any layout, strings and
    /// nested vectors included), loading only the baskets that overlap the range.
    ///
    /// # Errors
    /// Unsupported branches, range, I/O and decoding errors.
    pub fn read_column(&self, start: u64, stop: u64) -> Result<Column> {
        self.branch.read_column(start, stop, Parallel::Never)
    }

    /// All values of a scalar or fixed-array branch.
    ///
    /// # Errors
    /// As [`Self::read_range`].
    pub fn read_all<T: Element>(&self) -> Result<Vec<T>> {
        self.read_range(0, self.entries())
    }

    /// Visits the baskets overlapping `start..stop` one at a time; memory stays bounded by the
    /// cache (plus one basket), whatever the size of the branch.
    ///
    /// # Errors
    /// Whatever `f` or loading returns.
    pub fn for_each_basket(
        &self,
        start: u64,
        stop: u64,
        mut f: impl FnMut(u64, &BasketData) -> Result<()>,
    ) -> Result<()> {
        self.branch.check_range(start, stop)?;
        for i in self.branch.basket_span(start, stop) {
            let Some(info) = self.branch.baskets().get(i) else {
                break;
            };
            let basket = self.branch.load(info)?;
            f(info.first, &basket)?;
        }
        Ok(())
    }

    /// The entry bytes of every basket as one [`ChainedSlice`] (no copy).
    ///
    /// # Errors
    /// I/O and decoding errors.
    pub fn load_all_chained(&self) -> Result<ChainedSlice> {
        let mut segments = Vec::with_capacity(self.firsts.len());
        for info in self.branch.baskets() {
            segments.push(self.branch.load(info)?);
        }
        Ok(ChainedSlice::new(segments))
    }

    /// Bytes per entry for fixed layouts (what [`ChainedSlice`] positions are multiples of).
    #[must_use]
    pub fn entry_size(&self) -> Option<usize> {
        Some(self.layout.fixed_len()? * self.layout.leaf_type()?.size())
    }

    /// The per-entry header size of the layout (10 for `std::vector`).
    #[must_use]
    pub fn entry_header(&self) -> usize {
        if matches!(self.layout, Layout::Vector(_)) {
            VECTOR_HEADER
        } else {
            0
        }
    }
}

/// A zero-copy view over the entry bytes of several baskets.
#[derive(Debug, Clone, Default)]
pub struct ChainedSlice {
    segments: Vec<Arc<BasketData>>,
    /// `starts[i]` = position of segment `i`'s first byte; one extra element = total length.
    starts: Vec<u64>,
}

impl ChainedSlice {
    /// Chains the entry bytes of `segments`.
    #[must_use]
    pub fn new(segments: Vec<Arc<BasketData>>) -> Self {
        let mut starts = Vec::with_capacity(segments.len() + 1);
        let mut pos = 0u64;
        for s in &segments {
            starts.push(pos);
            pos += s.data().len() as u64;
        }
        starts.push(pos);
        Self { segments, starts }
    }

    /// Total length in bytes.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0)
    }

    /// Whether the view is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of segments.
    #[must_use]
    pub fn segments(&self) -> usize {
        self.segments.len()
    }

    /// The segment holding byte `pos` and the offset inside it (binary search).
    #[must_use]
    pub fn locate(&self, pos: u64) -> Option<(usize, usize)> {
        if pos >= self.len() {
            return None;
        }
        let i = self.starts.partition_point(|&s| s <= pos).checked_sub(1)?;
        // Skip empty segments that share the start.
        let mut i = i;
        while self.segments.get(i).is_some_and(|s| s.data().is_empty()) {
            i += 1;
        }
        Some((i, (pos - self.starts.get(i)?) as usize))
    }

    /// `N` bytes starting at `pos`, copied out even when they straddle segments.
    #[must_use]
    pub fn read_array<const N: usize>(&self, pos: u64) -> Option<[u8; N]> {
        let (mut seg, mut off) = self.locate(pos)?;
        if let Some(fast) = self.segments.get(seg)?.data().get(off..off + N) {
            return <[u8; N]>::try_from(fast).ok();
        }
        let mut out = [0u8; N];
        let mut filled = 0;
        while filled < N {
            let data = self.segments.get(seg)?.data();
            let take = (N - filled).min(data.len().saturating_sub(off));
            out.get_mut(filled..filled + take)?
                .copy_from_slice(data.get(off..off + take)?);
            filled += take;
            seg += 1;
            off = 0;
        }
        Some(out)
    }

    /// Decodes the element at byte `pos`.
    #[must_use]
    pub fn decode_at<T: Element>(&self, pos: u64) -> Option<T> {
        let mut out = [T::default()];
        let size = T::SIZE;
        macro_rules! go {
            ($n:literal) => {{
                let b = self.read_array::<$n>(pos)?;
                T::decode_into(&b, &mut out);
            }};
        }
        match size {
            1 => go!(1),
            2 => go!(2),
            4 => go!(4),
            _ => go!(8),
        }
        Some(out[0])
    }

    /// Decodes every element of the view (its length must be a multiple of the element size),
    /// segment by segment in bulk.
    ///
    /// # Errors
    /// A length that is not a multiple of the element size.
    pub fn decode_all<T: Element>(&self) -> Result<Vec<T>> {
        let size = T::SIZE as u64;
        if !self.len().is_multiple_of(size) {
            return Err(Error::corrupt(
                "chained slice",
                self.len(),
                format!("length not a multiple of {size}"),
            ));
        }
        let mut out = Vec::with_capacity((self.len() / size) as usize);
        let mut carry: Vec<u8> = Vec::new();
        for s in &self.segments {
            let mut data = s.data();
            if !carry.is_empty() {
                let need = size as usize - carry.len();
                let take = need.min(data.len());
                carry.extend_from_slice(data.get(..take).unwrap_or_default());
                data = data.get(take..).unwrap_or_default();
                if carry.len() == size as usize {
                    T::extend_from_be(&carry, &mut out);
                    carry.clear();
                }
            }
            let whole = data.len() - data.len() % size as usize;
            T::extend_from_be(data.get(..whole).unwrap_or_default(), &mut out);
            carry.extend_from_slice(data.get(whole..).unwrap_or_default());
        }
        Ok(out)
    }
}

//! Reading a field's columns: its pages cluster by cluster (decompressed, checksummed, in the
//! representation each cluster uses), decoded into values; the zeros of a column added after
//! the first entries; offsets and strings.

use std::sync::Arc;

use super::descriptor::{ColumnDesc, PageDesc, Role};
use super::encoding::{
    ColumnType, Layout, decode_bits, decode_words, f16_to_f32, unpack_bits, unquantize, untruncate,
};
use super::{RNTuple, Span, at_offset};
use crate::basket::BasketData;
use crate::column::{Strings, Values};
use crate::compression;
use crate::error::{Error, Result};
use crate::types::LeafType;

/// A page as a read of its field finds it: where its bytes lie, their size in the file
/// (without the checksum that may follow) and decompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredPage {
    /// Offset in the file.
    pub offset: u64,
    /// Bytes in the file, the checksum left out.
    pub stored: u64,
    /// Bytes once decompressed.
    pub bytes: u64,
}

/// One page of a field's column as `readspeed` reads it on its own: read, checked,
/// decompressed and decoded into reused buffers ([`RNTuple::read_unit`]).
#[derive(Debug, Clone)]
pub struct PageUnit {
    col: ColumnDesc,
    page: PageDesc,
    /// The type the values decode into (that of the column's field), `None` for offsets,
    /// characters and switches.
    leaf: Option<LeafType>,
}

impl PageUnit {
    /// Where the page lies and its sizes.
    #[must_use]
    pub fn stored(&self) -> StoredPage {
        let bits = self
            .col
            .kind
            .and_then(ColumnType::bits)
            .unwrap_or(self.col.bits);
        StoredPage {
            offset: self.page.locator.offset,
            stored: self.page.locator.size,
            bytes: self
                .col
                .kind
                .map_or(0, |k| k.page_bytes(u64::from(self.page.elements), bits)),
        }
    }
}

/// The buffers [`RNTuple::read_unit`] reuses from page to page (one set per thread).
#[derive(Debug, Default)]
pub struct UnitScratch {
    raw: Vec<u8>,
    page: Vec<u8>,
    offsets: Vec<u64>,
    bytes: Vec<u8>,
    values: Option<Values>,
}

impl UnitScratch {
    /// The last page read, decompressed.
    #[must_use]
    pub fn page(&self) -> &[u8] {
        &self.page
    }
}

impl RNTuple {
    /// Every page of every column of field `path` and the fields below it, in the
    /// representation each cluster uses (projections: their source's pages).
    ///
    /// # Errors
    /// Unknown fields.
    pub fn page_units(&self, path: &str) -> Result<Vec<PageUnit>> {
        let mut fields = vec![self.field_id(path)?];
        let mut next = 0;
        // Parents come before their subfields; a corrupt tree of fields cannot loop here.
        while let Some(&id) = fields.get(next) {
            if fields.len() <= self.fields.len() {
                fields.extend_from_slice(self.subfields(id));
            }
            next += 1;
        }
        let mut units = Vec::new();
        for id in fields {
            for &c in self.columns_of(id).iter().flatten() {
                let Some(col) = self.columns.get(c as usize) else {
                    continue;
                };
                let leaf = self
                    .fields
                    .get(col.field as usize)
                    .and_then(|f| super::leaf_type(&f.type_name));
                for cluster in &self.clusters {
                    let Some(range) = cluster.columns.get(c as usize) else {
                        continue;
                    };
                    if range.suppressed {
                        continue;
                    }
                    units.extend(range.pages.iter().map(|p| PageUnit {
                        col: col.clone(),
                        page: *p,
                        leaf,
                    }));
                }
            }
        }
        Ok(units)
    }

    /// Every page a read of field `path` reads ([`RNTuple::page_units`]): what `root-tool
    /// readspeed` counts and, for its decompress-only ceiling, loads.
    ///
    /// # Errors
    /// Unknown fields.
    pub fn stored_pages(&self, path: &str) -> Result<Vec<StoredPage>> {
        Ok(self
            .page_units(path)?
            .iter()
            .map(PageUnit::stored)
            .collect())
    }

    /// Where a unit's page lies in the file: its offset and the bytes to read, its checksum
    /// included (what [`RNTuple::unpack_unit`] takes).
    ///
    /// # Errors
    /// Columns this reader cannot read, sizes beyond memory.
    pub fn unit_extent(&self, unit: &PageUnit) -> Result<(u64, usize)> {
        let len = self.page_extent(&unit.col, &unit.page, "")?;
        Ok((unit.page.locator.offset, len))
    }

    /// Reads one page's bytes, checks its checksum and decompresses it into `scratch`, without
    /// decoding it: the floor of [`RNTuple::read_unit`] that any reader of the page pays.
    ///
    /// # Errors
    /// Truncated or corrupt pages, checksum mismatches.
    pub fn read_unit_bytes(&self, unit: &PageUnit, scratch: &mut UnitScratch) -> Result<()> {
        self.read_page(
            &unit.col,
            &unit.page,
            "",
            &mut scratch.raw,
            &mut scratch.page,
        )
    }

    /// Checks and decompresses one page from its bytes as they lie in the file (`stored`, at
    /// [`RNTuple::unit_extent`]: a memory map of the file), without decoding it.
    ///
    /// # Errors
    /// As [`RNTuple::read_unit_bytes`]; `stored` of another length than the page's.
    pub fn unpack_unit_bytes(
        &self,
        unit: &PageUnit,
        stored: &[u8],
        scratch: &mut UnitScratch,
    ) -> Result<()> {
        self.unpack_page(&unit.col, &unit.page, "", stored, &mut scratch.page)
    }

    /// Reads one page: its bytes, checksum, decompression, and its elements decoded into
    /// typed values in `scratch` (numbers into the field's type, offsets as 64-bit integers,
    /// characters and switches copied); nothing is kept past the next page. What an analysis
    /// reading the field page by page pays.
    ///
    /// # Errors
    /// As [`RNTuple::read_field`].
    pub fn read_unit(&self, unit: &PageUnit, scratch: &mut UnitScratch) -> Result<()> {
        self.read_unit_bytes(unit, scratch)?;
        self.decode_unit(unit, scratch)
    }

    /// [`RNTuple::read_unit`] on the page's bytes as they lie in the file (see
    /// [`RNTuple::unpack_unit_bytes`]).
    ///
    /// # Errors
    /// As [`RNTuple::read_unit`].
    pub fn unpack_unit(
        &self,
        unit: &PageUnit,
        stored: &[u8],
        scratch: &mut UnitScratch,
    ) -> Result<()> {
        self.unpack_unit_bytes(unit, stored, scratch)?;
        self.decode_unit(unit, scratch)
    }

    /// Decodes the page decompressed in `scratch`.
    fn decode_unit(&self, unit: &PageUnit, scratch: &mut UnitScratch) -> Result<()> {
        let (col, n) = (&unit.col, unit.page.elements as usize);
        let page = &scratch.page[..];
        let layout = col.kind.map(ColumnType::layout);
        match (col.kind, unit.leaf, layout) {
            (Some(ColumnType::Index32 | ColumnType::SplitIndex32), _, Some(layout)) => {
                scratch.offsets.clear();
                decode_words::<u32, u64>(page, n, layout, &mut scratch.offsets, u64::from)
            }
            (Some(ColumnType::Index64 | ColumnType::SplitIndex64), _, Some(layout)) => {
                scratch.offsets.clear();
                decode_words::<u64, u64>(page, n, layout, &mut scratch.offsets, |w| w)
            }
            (_, Some(t), _) => {
                let values = scratch.values.get_or_insert_with(|| Values::empty(t));
                if values.leaf_type() != Some(t) {
                    *values = Values::empty(t);
                }
                values.clear();
                decode_page(values, col, page, n)
                    .ok_or_else(|| self.unsupported("", cannot_read(col, t)))?
            }
            _ => {
                scratch.bytes.clear();
                scratch.bytes.extend_from_slice(page);
                Ok(())
            }
        }
    }

    /// Calls `f(cluster, column, page bytes, elements)` for every page of the field's column
    /// `position` (0: principal), cluster by cluster, in the representation each cluster uses.
    pub(super) fn for_each_page(
        &self,
        id: u32,
        position: usize,
        path: &str,
        span: &Span,
        mut f: impl FnMut(usize, &ColumnDesc, &[u8], usize) -> Result<()>,
    ) -> Result<()> {
        let reps = self.columns_of(id);
        if reps.is_empty() {
            return Err(Error::corrupt(
                "RNTuple header",
                0,
                format!("field {path:?} has no columns"),
            ));
        }
        // The columns of a field added after the first entries (in the footer's schema
        // extension) are absent from the page lists of the clusters written before it; a
        // deferred one's first listed range starts past element 0, the elements before are
        // zeros (synthetic pages of 0x00 bytes).
        let extension = |rep: &Vec<u32>| {
            rep.iter()
                .all(|&c| c as usize >= self.header.schema.columns.len())
        };
        // Reused for every page: the stored bytes, and the page decompressed (when the file's
        // cache keeps no pages).
        let (mut raw, mut buf) = (Vec::new(), Vec::new());
        let mut next = None;
        let mut synthetic = 0u64;
        let clusters = self.clusters.get(span.clone()).unwrap_or_default();
        for (ci, cluster) in (span.start..).zip(clusters) {
            // The representation not suppressed in this cluster.
            let mut chosen = None;
            for rep in reps {
                let principal = rep.first().and_then(|&c| cluster.columns.get(c as usize));
                if principal.is_some_and(|r| !r.suppressed) {
                    chosen = Some(rep);
                    break;
                }
            }
            let Some(rep) = chosen else {
                let absent = reps.iter().all(|rep| {
                    rep.first()
                        .is_some_and(|&c| cluster.columns.get(c as usize).is_none())
                });
                if absent && reps.iter().all(extension) {
                    continue;
                }
                return Err(Error::corrupt(
                    "RNTuple page list",
                    0,
                    format!("cluster {ci} has no pages for field {path:?}"),
                ));
            };
            let col_id = *rep.get(position).ok_or_else(|| {
                Error::corrupt(
                    "RNTuple header",
                    0,
                    format!("field {path:?} lacks column {position}"),
                )
            })?;
            let col = self.columns.get(col_id as usize).ok_or_else(|| {
                Error::corrupt("RNTuple header", 0, format!("no column {col_id}"))
            })?;
            if col.first_element.is_some_and(|e| e < 0) {
                return Err(self.unsupported(path, "a deferred and suppressed column"));
            }
            let range = cluster.columns.get(col_id as usize).ok_or_else(|| {
                Error::corrupt(
                    "RNTuple page list",
                    0,
                    format!("cluster {ci} lists no pages for column {col_id}"),
                )
            })?;
            if range.suppressed {
                return Err(Error::corrupt(
                    "RNTuple page list",
                    0,
                    format!("column {col_id} is suppressed, its representation is not"),
                ));
            }
            // A read from a later cluster starts where the column's first range does (fields
            // with late columns are read from cluster 0, see `read_field_range`).
            let next_element = *next.get_or_insert(if span.start == 0 {
                0
            } else {
                range.first_element
            });
            if range.first_element != next_element {
                let first = col.first_element.and_then(|e| u64::try_from(e).ok());
                let gap = range.first_element.checked_sub(next_element);
                match (gap, first) {
                    (Some(gap), Some(first)) if range.first_element <= first => {
                        synthetic = synthetic.saturating_add(gap);
                        self.zeros(col, gap, synthetic, path, &mut buf)?;
                        f(ci, col, &buf, usize::try_from(gap).unwrap_or(usize::MAX))?;
                    }
                    _ => {
                        return Err(Error::corrupt(
                            "RNTuple page list",
                            0,
                            format!(
                                "column {col_id} resumes at element {} after {next_element} in cluster {ci}",
                                range.first_element
                            ),
                        ));
                    }
                }
            }
            for page in &range.pages {
                match self.cached_page(col, page, path, &mut raw)? {
                    Some(kept) => f(ci, col, kept.data(), page.elements as usize)?,
                    None => {
                        self.read_page(col, page, path, &mut raw, &mut buf)?;
                        f(ci, col, &buf, page.elements as usize)?;
                    }
                }
            }
            next = Some(range.first_element.saturating_add(range.elements()));
        }
        Ok(())
    }

    /// A synthetic page of `n` zero elements of `col` in `out`, the `total` of a read staying
    /// within what the file can justify (64 bytes per byte of file, plus 64 MiB).
    pub(super) fn zeros(
        &self,
        col: &ColumnDesc,
        n: u64,
        total: u64,
        path: &str,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let bits = col.kind.and_then(ColumnType::bits).unwrap_or(col.bits);
        let limit = self.file.len().saturating_mul(64).saturating_add(64 << 20);
        let total_bytes = col.kind.map_or(u64::MAX, |k| k.page_bytes(total, bits));
        let bytes = col.kind.map_or(u64::MAX, |k| k.page_bytes(n, bits));
        if total_bytes > limit {
            return Err(Error::corrupt(
                "RNTuple column",
                0,
                format!("deferred column of {path:?} claims {total} leading zero elements"),
            ));
        }
        out.clear();
        out.resize(usize::try_from(bytes).unwrap_or(usize::MAX), 0);
        Ok(())
    }

    /// A page through the file's basket cache (the LRU the TTree reader's baskets share, keyed
    /// by file and offset): kept from an earlier read, or read, decompressed and kept. `None`
    /// when the cache keeps nothing (a bound of 0: the caller reads into its reused buffer).
    fn cached_page(
        &self,
        col: &ColumnDesc,
        page: &PageDesc,
        path: &str,
        raw: &mut Vec<u8>,
    ) -> Result<Option<Arc<BasketData>>> {
        let cache = self.file.cache();
        if cache.capacity() == 0 {
            return Ok(None);
        }
        let key = (self.file.inner.id, page.locator.offset);
        if let Some(hit) = cache.get(key) {
            return Ok(Some(hit));
        }
        // The stored and the decompressed bytes count against the bound while in flight.
        let (kind, bits) = self.readable_width(col, path)?;
        let expected = kind.page_bytes(u64::from(page.elements), bits);
        cache.make_room(
            usize::try_from(page.locator.size.saturating_add(expected)).unwrap_or(usize::MAX),
        );
        let mut out = Vec::new();
        self.read_page(col, page, path, raw, &mut out)?;
        let kept = Arc::new(BasketData::page(out, page.elements as usize));
        cache.insert(key, Arc::clone(&kept));
        Ok(Some(kept))
    }

    /// Reads one page's stored bytes into `raw`, checks them and decompresses them into `out`.
    pub(super) fn read_page(
        &self,
        col: &ColumnDesc,
        page: &PageDesc,
        path: &str,
        raw: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let len = self.page_extent(col, page, path)?;
        self.file
            .source()
            .read_into("RNTuple page", page.locator.offset, len, raw)?;
        self.unpack_page(col, page, path, raw, out)
    }

    /// The bytes to read for a page (its checksum included), once its column is known to be
    /// readable.
    fn page_extent(&self, col: &ColumnDesc, page: &PageDesc, path: &str) -> Result<usize> {
        self.readable_width(col, path)?;
        let loc = page.locator;
        let truncated = || Error::Truncated {
            what: "RNTuple page",
            offset: loc.offset,
            need: loc.size,
            have: self.file.len(),
        };
        usize::try_from(loc.size)
            .map_err(|_| truncated())?
            .checked_add(if page.checksum { 8 } else { 0 })
            .ok_or_else(truncated)
    }

    /// The bits per element of a column this reader can read.
    fn readable_width(&self, col: &ColumnDesc, path: &str) -> Result<(ColumnType, u16)> {
        let kind = col
            .kind
            .ok_or_else(|| self.unsupported(path, format!("column type code {:#x}", col.code)))?;
        let bits = match kind {
            // Variable width: 10 to 31 bits (truncated), 1 to 32 (quantised).
            ColumnType::Real32Trunc if (10..=31).contains(&col.bits) => col.bits,
            ColumnType::Real32Quant if (1..=32).contains(&col.bits) && col.range.is_some() => {
                col.bits
            }
            _ => kind
                .bits()
                .ok_or_else(|| self.unsupported(path, format!("{} columns", kind.name())))?,
        };
        if col.bits != bits {
            return Err(Error::corrupt(
                "RNTuple header",
                0,
                format!("a {} column of {} bits", kind.name(), col.bits),
            ));
        }
        Ok((kind, bits))
    }

    /// Checks a page's stored bytes (`stored`: as they lie in the file, checksum included) and
    /// decompresses them into `out`.
    fn unpack_page(
        &self,
        col: &ColumnDesc,
        page: &PageDesc,
        path: &str,
        stored: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let (kind, bits) = self.readable_width(col, path)?;
        let expected = kind.page_bytes(u64::from(page.elements), bits);
        let loc = page.locator;
        let sum_len = if page.checksum { 8 } else { 0 };
        if Some(stored.len() as u64) != loc.size.checked_add(sum_len) {
            return Err(Error::corrupt(
                "RNTuple page",
                loc.offset,
                format!("{} bytes for a page of {} bytes", stored.len(), loc.size),
            ));
        }
        let (data, tail) = stored.split_at(stored.len() - sum_len as usize);
        if page.checksum {
            let mut a = [0u8; 8];
            a.copy_from_slice(tail);
            let stored_sum = u64::from_le_bytes(a);
            let computed = xxhash_rust::xxh3::xxh3_64(data);
            if stored_sum != computed {
                return Err(Error::Checksum {
                    what: "RNTuple page",
                    offset: loc.offset,
                    stored: stored_sum,
                    computed,
                });
            }
        }
        let expected_len = usize::try_from(expected)
            .map_err(|_| Error::corrupt("RNTuple page", loc.offset, "page larger than memory"))?;
        if loc.size == expected {
            out.clear();
            out.extend_from_slice(data);
        } else {
            // Not cleared first: the decompressor overwrites every byte, only growth is filled.
            compression::decompress_reusing(data, expected_len, out, false)
                .map_err(|e| at_offset(e, loc.offset))?;
            out.truncate(expected_len);
        }
        Ok(())
    }

    pub(super) fn read_leaf(
        &self,
        id: u32,
        path: &str,
        span: &Span,
        t: LeafType,
    ) -> Result<Values> {
        let mut out = Values::empty(t);
        self.for_each_page(id, 0, path, span, |_, col, page, n| {
            decode_page(&mut out, col, page, n)
                .ok_or_else(|| self.unsupported(path, cannot_read(col, t)))?
        })?;
        Ok(out)
    }

    /// The offsets of a collection or string field, from 0, over the whole ntuple: each
    /// cluster's offsets count from the cluster's first item.
    pub(super) fn read_offsets(&self, id: u32, path: &str, span: &Span) -> Result<Vec<u64>> {
        let mut out = vec![0u64];
        let mut current = None;
        let mut base = 0u64;
        let mut prev = 0u64;
        let mut rel = Vec::new();
        self.for_each_page(id, 0, path, span, |ci, col, page, n| {
            if current != Some(ci) {
                current = Some(ci);
                base = out.last().copied().unwrap_or_default();
                prev = 0;
            }
            rel.clear();
            let layout = col.kind.map_or(Layout::Plain, ColumnType::layout);
            match col.kind {
                Some(ColumnType::Index32 | ColumnType::SplitIndex32) => {
                    decode_words::<u32, u64>(page, n, layout, &mut rel, u64::from)?;
                }
                Some(ColumnType::Index64 | ColumnType::SplitIndex64) => {
                    decode_words::<u64, u64>(page, n, layout, &mut rel, |w| w)?;
                }
                _ => {
                    return Err(
                        self.unsupported(path, format!("offsets in a {} column", col.type_name()))
                    );
                }
            }
            out.reserve(rel.len());
            for &r in &rel {
                if r < prev {
                    return Err(Error::corrupt(
                        "RNTuple page",
                        0,
                        format!("offsets of {path:?} decrease ({prev} then {r})"),
                    ));
                }
                prev = r;
                let v = base
                    .checked_add(r)
                    .ok_or_else(|| Error::corrupt("RNTuple page", 0, "offset overflows"))?;
                out.push(v);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with every string of the `std::string` field `path` in entry order, lent where
    /// it lies in its decompressed page (kept by the file's basket cache, or in a buffer reused
    /// from page to page): only a string that runs across a page boundary is put together in a
    /// buffer first. What [`RNTuple::read_field`] copies into one [`Strings`] column, this hands
    /// out in place. Returns the number of strings.
    ///
    /// # Errors
    /// Fields that are not `std::string`; as [`RNTuple::read_field`]; offsets that do not fit
    /// the characters; errors of `f`, which stop the walk.
    pub fn for_each_string(
        &self,
        path: &str,
        mut f: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        let id = self.field_id(path)?;
        let is_string = self
            .fields
            .get(id as usize)
            .is_some_and(|field| field.type_name == "std::string" && field.role == Role::Leaf)
            && self.subfields(id).is_empty();
        if !is_string {
            return Err(self.unsupported(path, "strings lent by a field that is not a std::string"));
        }
        let span = 0..self.clusters.len();
        let offsets = self.read_offsets(id, path, &span)?;
        let mut walk = StringWalk::new(&offsets, path);
        self.for_each_page(id, 1, path, &span, |_, col, page, n| {
            if col.kind != Some(ColumnType::Char) || page.len() != n {
                return Err(self.unsupported(
                    path,
                    format!("string characters in a {} column", col.type_name()),
                ));
            }
            walk.page(page, &mut f)
        })?;
        walk.finish(&mut f)
    }

    pub(super) fn read_string(&self, id: u32, path: &str, span: &Span) -> Result<Values> {
        let offsets = self.read_offsets(id, path, span)?;
        let mut bytes = Vec::new();
        self.for_each_page(id, 1, path, span, |_, col, page, n| {
            if col.kind != Some(ColumnType::Char) || page.len() != n {
                return Err(self.unsupported(
                    path,
                    format!("string characters in a {} column", col.type_name()),
                ));
            }
            bytes.extend_from_slice(page);
            Ok(())
        })?;
        if offsets.last().copied() != Some(bytes.len() as u64) {
            return Err(Error::corrupt(
                "RNTuple column",
                0,
                format!(
                    "string field {path:?} indexes {:?} bytes, its characters are {}",
                    offsets.last(),
                    bytes.len()
                ),
            ));
        }
        Ok(Values::Text(Strings { offsets, bytes }))
    }
}

/// The strings of a field handed out page by page of its characters: in place where a string
/// lies within one page, put together in `carry` where it runs across pages.
struct StringWalk<'a> {
    /// `strings + 1` ends, from 0.
    offsets: &'a [u64],
    path: &'a str,
    /// The index in `offsets` of the next string's end.
    next: usize,
    /// Characters in the pages before this one.
    at: u64,
    /// The beginning of a string that runs on into the next page.
    carry: Vec<u8>,
}

impl<'a> StringWalk<'a> {
    fn new(offsets: &'a [u64], path: &'a str) -> Self {
        Self {
            offsets,
            path,
            next: 1,
            at: 0,
            carry: Vec::new(),
        }
    }

    fn bad(&self, detail: String) -> Error {
        Error::corrupt(
            "RNTuple column",
            0,
            format!("string field {:?}: {detail}", self.path),
        )
    }

    /// Hands out every string that ends in `page`, the next page of characters.
    fn page(&mut self, page: &[u8], f: &mut impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let (at, end_of_page) = (self.at, self.at.saturating_add(page.len() as u64));
        let within = |from: u64, to: u64| {
            let (a, b) = (from.saturating_sub(at), to.saturating_sub(at));
            page.get(usize::try_from(a).ok()?..usize::try_from(b).ok()?)
        };
        while let (Some(&start), Some(&end)) =
            (self.offsets.get(self.next - 1), self.offsets.get(self.next))
        {
            let broken = || self.bad(format!("string {} ends before it starts", self.next));
            if start > end {
                return Err(broken());
            }
            if end > end_of_page {
                // Its part in this page (if it starts before the page ends) waits for the rest.
                if start < end_of_page {
                    let part = within(start.max(at), end_of_page).ok_or_else(broken)?;
                    self.carry.extend_from_slice(part);
                }
                break;
            }
            let part = within(start.max(at), end).ok_or_else(broken)?;
            if start >= at {
                f(part)?;
            } else {
                self.carry.extend_from_slice(part);
                f(&self.carry)?;
                self.carry.clear();
            }
            self.next += 1;
        }
        self.at = end_of_page;
        Ok(())
    }

    /// Hands out the empty strings after the last character (which no page holds) and checks
    /// that the offsets end where the characters do; the number of strings.
    fn finish(mut self, f: &mut impl FnMut(&[u8]) -> Result<()>) -> Result<u64> {
        while let (Some(&start), Some(&end)) =
            (self.offsets.get(self.next - 1), self.offsets.get(self.next))
        {
            if start != self.at || end != self.at {
                break;
            }
            f(&[])?;
            self.next += 1;
        }
        if self.next != self.offsets.len() || self.offsets.last() != Some(&self.at) {
            return Err(self.bad(format!(
                "{} strings index {:?} bytes, the characters are {}",
                self.offsets.len().saturating_sub(1),
                self.offsets.last(),
                self.at
            )));
        }
        Ok(self.offsets.len() as u64 - 1)
    }
}

fn cannot_read(col: &ColumnDesc, t: LeafType) -> String {
    format!("a {} column read as {}", col.type_name(), t.name())
}

/// Decodes one page of `col` into `out`; `None` when the column type cannot be read as the
/// values' type.
fn decode_page(out: &mut Values, col: &ColumnDesc, page: &[u8], n: usize) -> Option<Result<()>> {
    use ColumnType as C;
    let kind = col.kind?;
    let layout = kind.layout();
    Some(match (out, kind) {
        (Values::Bool(v), C::Bit) => decode_bits(page, n, v),
        (Values::I8(v), C::Int8 | C::Char) => {
            if page.len() == n {
                v.extend(page.iter().map(|&b| i8::from_le_bytes([b])));
                Ok(())
            } else {
                Err(short_page(page.len(), n))
            }
        }
        (Values::U8(v), C::UInt8) => {
            if page.len() == n {
                v.extend_from_slice(page);
                Ok(())
            } else {
                Err(short_page(page.len(), n))
            }
        }
        (Values::I16(v), C::Int16 | C::SplitInt16) => {
            decode_words::<u16, i16>(page, n, layout, v, |w| i16::from_le_bytes(w.to_le_bytes()))
        }
        (Values::U16(v), C::UInt16 | C::SplitUInt16) => {
            decode_words::<u16, u16>(page, n, layout, v, |w| w)
        }
        (Values::I32(v), C::Int32 | C::SplitInt32) => {
            decode_words::<u32, i32>(page, n, layout, v, |w| i32::from_le_bytes(w.to_le_bytes()))
        }
        (Values::U32(v), C::UInt32 | C::SplitUInt32) => {
            decode_words::<u32, u32>(page, n, layout, v, |w| w)
        }
        (Values::I64(v), C::Int64 | C::SplitInt64) => {
            decode_words::<u64, i64>(page, n, layout, v, |w| i64::from_le_bytes(w.to_le_bytes()))
        }
        (Values::U64(v), C::UInt64 | C::SplitUInt64) => {
            decode_words::<u64, u64>(page, n, layout, v, |w| w)
        }
        (Values::F32(v), C::Real32 | C::SplitReal32) => {
            decode_words::<u32, f32>(page, n, layout, v, f32::from_bits)
        }
        (Values::F32(v), C::Real16 | C::SplitReal16) => {
            decode_words::<u16, f32>(page, n, layout, v, f16_to_f32)
        }
        (Values::F64(v), C::Real64 | C::SplitReal64) => {
            decode_words::<u64, f64>(page, n, layout, v, f64::from_bits)
        }
        (Values::F64(v), C::Real32 | C::SplitReal32) => {
            decode_words::<u32, f64>(page, n, layout, v, |w| f64::from(f32::from_bits(w)))
        }
        (Values::F64(v), C::Real16 | C::SplitReal16) => {
            decode_words::<u16, f64>(page, n, layout, v, |w| f64::from(f16_to_f32(w)))
        }
        (Values::F32(v), C::Real32Trunc) => {
            unpack_bits(page, n, col.bits, |w| v.push(untruncate(w, col.bits)))
        }
        (Values::F64(v), C::Real32Trunc) => unpack_bits(page, n, col.bits, |w| {
            v.push(f64::from(untruncate(w, col.bits)));
        }),
        (Values::F32(v), C::Real32Quant) => {
            let (min, max) = col.range?;
            #[expect(clippy::cast_possible_truncation, reason = "ROOT narrows to float")]
            unpack_bits(page, n, col.bits, |q| {
                v.push(unquantize(q, col.bits, min, max) as f32);
            })
        }
        (Values::F64(v), C::Real32Quant) => {
            let (min, max) = col.range?;
            unpack_bits(page, n, col.bits, |q| {
                v.push(unquantize(q, col.bits, min, max))
            })
        }
        _ => return None,
    })
}

fn short_page(len: usize, n: usize) -> Error {
    Error::corrupt(
        "RNTuple page",
        0,
        format!("{len} bytes for {n} one-byte elements"),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn strings_run_across_any_page_boundary() {
        // "ab", "", "cdef", "g", "" and "hij" over every way of cutting the characters into
        // three pages (empty pages included).
        let chars = b"abcdefghij";
        let offsets = [0, 2, 2, 6, 7, 7, 10];
        let expected: Vec<&[u8]> = vec![b"ab", b"", b"cdef", b"g", b"", b"hij"];
        for i in 0..=chars.len() {
            for j in i..=chars.len() {
                let mut walk = StringWalk::new(&offsets, "s");
                let mut out: Vec<Vec<u8>> = Vec::new();
                let mut f = |s: &[u8]| {
                    out.push(s.to_vec());
                    Ok(())
                };
                for page in [&chars[..i], &chars[i..j], &chars[j..]] {
                    walk.page(page, &mut f).unwrap();
                }
                assert_eq!(walk.finish(&mut f).unwrap(), 6);
                assert_eq!(out, expected, "pages cut at {i} and {j}");
            }
        }
        // Empty strings and no characters at all; offsets past the characters; backwards.
        let mut none = |_: &[u8]| Ok(());
        assert_eq!(
            StringWalk::new(&[0, 0, 0], "s").finish(&mut none).unwrap(),
            2
        );
        let mut walk = StringWalk::new(&[0, 2, 12], "s");
        walk.page(chars, &mut none).unwrap();
        assert!(walk.finish(&mut none).is_err());
        let mut walk = StringWalk::new(&[0, 5, 3, 10], "s");
        assert!(walk.page(chars, &mut none).is_err());
    }

    #[test]
    fn pages_decode_into_the_field_type() {
        let col = |kind: ColumnType| ColumnDesc {
            code: kind.code(),
            kind: Some(kind),
            bits: kind.bits().unwrap(),
            field: 0,
            flags: 0,
            representation: 0,
            first_element: None,
            range: None,
        };
        let mut v = Values::I8(Vec::new());
        decode_page(&mut v, &col(ColumnType::Char), &[0xff, 65], 2)
            .unwrap()
            .unwrap();
        assert_eq!(v, Values::I8(vec![-1, 65]));
        assert!(
            decode_page(&mut v, &col(ColumnType::Char), &[1], 2)
                .unwrap()
                .is_err()
        );
        let mut d = Values::F64(Vec::new());
        decode_page(
            &mut d,
            &col(ColumnType::SplitReal32),
            &[0, 0, 0xc0, 0x3f],
            1,
        )
        .unwrap()
        .unwrap();
        assert_eq!(d, Values::F64(vec![1.5]));
        // An int64 column is never read as a float, nor a float column as an int.
        assert!(decode_page(&mut d, &col(ColumnType::Int64), &[0; 8], 1).is_none());
        let mut i = Values::I32(Vec::new());
        assert!(decode_page(&mut i, &col(ColumnType::Real32), &[0; 4], 1).is_none());
    }
}

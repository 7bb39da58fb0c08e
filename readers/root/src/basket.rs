//! Baskets: the compressed chunks of entries of one branch.
//!
//! ```text
//! key header (TKey, 64-bit form) | TBasket: u16 version, i32 fBufferSize, i32 fNevBufSize,
//!                                |          i32 fNevBuf, i32 fLast, u8 flag
//! payload (fObjlen bytes once decompressed):
//!   [0, border)          entry data            border = fLast - fKeylen
//!   [border, fObjlen)    entry-offset table    i32 count, i32 starts[fNevBuf] (key-relative), i32 0
//! ```
//!
//! The table exists only for variable-size entries. [`BasketData`] keeps the decompressed
//! payload and the entry starts converted to payload offsets, with `border` appended as the end
//! of the last entry.

use crate::compression;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::layout::{Layout, Shape};

mod table;

pub(crate) use table::sum_first_bytes;
use table::{EntryCheck, offsets_in_order, read_offsets, to_payload_offsets};

/// Whether each entry of a branch of this layout is one string behind its length byte (`char*`,
/// and `std::string` or `TString` written without object headers), whose strings are checked as
/// the entry-offset table is read.
pub(crate) fn strings_checked_with_table(layout: &Layout) -> bool {
    *layout == Layout::Object(Shape::Text)
}

/// A decoded basket: entry bytes plus, for variable-size entries, where each entry starts.
#[derive(Debug, Clone)]
pub struct BasketData {
    /// The payload is `payload[..len]`; a reused buffer may be longer (never re-zeroed).
    payload: Vec<u8>,
    len: usize,
    border: usize,
    /// `entries + 1` payload offsets (entry `j` is `offsets[j]..offsets[j+1]`), if variable-size.
    offsets: Option<Vec<u32>>,
    entries: usize,
    /// Every entry was found, as the offsets were read, to be one string of under 255 bytes
    /// behind its length byte, or empty: [`crate::TextView`] need not check them again.
    short_texts: bool,
}

/// Equal when the payloads (not the spare bytes of a reused buffer) and the entries agree.
impl PartialEq for BasketData {
    fn eq(&self, other: &Self) -> bool {
        self.payload.get(..self.len) == other.payload.get(..other.len)
            && self.border == other.border
            && self.offsets == other.offsets
            && self.entries == other.entries
    }
}

impl Eq for BasketData {}

/// The buffers of a basket, handed back for the next one ([`BasketData::into_buffers`]): reading
/// many baskets then allocates (and first touches) its payload and entry offsets once.
#[derive(Debug, Default)]
pub struct BasketBuffers {
    payload: Vec<u8>,
    offsets: Vec<u32>,
}

/// Where a basket's entry-offset table is, for [`BasketData::build`].
#[derive(Debug, Clone, Copy)]
enum Table {
    /// Read apart from the payload, with `fNevBuf` entries (an embedded basket:
    /// [`BasketData::from_embedded`]).
    Apart,
    /// After the entries, in the payload: read, and the entries checked as it says.
    After(EntryCheck),
}

/// The TBasket fields after the key header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BasketHeader {
    pub(crate) nev_buf: i32,
    pub(crate) last: i32,
    pub(crate) flag: u8,
}

impl BasketHeader {
    pub(crate) fn parse(cur: &mut Cursor<'_>) -> Result<Self> {
        let _version = cur.u16()?;
        let _buffer_size = cur.i32()?;
        let _nev_buf_size = cur.i32()?;
        let nev_buf = cur.i32()?;
        let last = cur.i32()?;
        let flag = cur.u8()?;
        if nev_buf < 0 || last < 0 {
            return Err(cur.corrupt(format!("negative fNevBuf {nev_buf} or fLast {last}")));
        }
        Ok(Self {
            nev_buf,
            last,
            flag,
        })
    }
}

impl BasketData {
    /// Decodes a free-standing basket record (`raw` = the `fBasketBytes` bytes at its seek).
    ///
    /// # Errors
    /// Malformed key or basket header, corrupt compressed data, inconsistent offsets.
    pub fn from_record(raw: &[u8], seek: u64) -> Result<Self> {
        Self::from_record_reusing(raw, seek, BasketBuffers::default(), false)
    }

    /// As [`Self::from_record`], in the buffers of an earlier basket; `split`: the blocks of a
    /// multi-block payload are decompressed in parallel on the rayon pool.
    ///
    /// # Errors
    /// As [`Self::from_record`].
    pub fn from_record_reusing(
        raw: &[u8],
        seek: u64,
        reuse: BasketBuffers,
        split: bool,
    ) -> Result<Self> {
        Self::from_record_staged(raw, seek, reuse, split, None, || {})
    }

    /// As [`Self::from_record_reusing`], for entries laid out as `layout` where it is known
    /// (entry bounds made for a basket of variable-size entries stored without them, and the
    /// entries of a string branch without object headers checked as the offsets are read),
    /// calling `decompressed` once the payload is decompressed and before its entry-offset
    /// table is read (so that a caller can time the two apart: `root-tool readspeed --stages`).
    ///
    /// # Errors
    /// As [`Self::from_record`]; variable-size entries without offsets that do not divide the
    /// data into equal parts.
    pub fn from_record_staged(
        raw: &[u8],
        seek: u64,
        reuse: BasketBuffers,
        split: bool,
        layout: Option<&Layout>,
        decompressed: impl FnOnce(),
    ) -> Result<Self> {
        let mut cur = Cursor::new(raw, seek, "basket key");
        let key = Key::parse(&mut cur)?;
        let header = BasketHeader::parse(&mut cur)?;
        let keylen = usize::from(key.keylen);
        let nbytes = key.nbytes as usize;
        if nbytes != raw.len() || keylen > nbytes || keylen < cur.pos() {
            return Err(Error::corrupt(
                "basket key",
                seek,
                format!(
                    "fNbytes {nbytes}, fKeylen {keylen}, record of {} bytes",
                    raw.len()
                ),
            ));
        }
        let stored = raw.get(keylen..).unwrap_or_default();
        let objlen = key.objlen as usize;
        let BasketBuffers {
            payload: mut out,
            offsets,
        } = reuse;
        let len = if key.is_compressed() {
            compression::decompress_reusing(stored, objlen, &mut out, split)?;
            objlen
        } else {
            out.clear();
            out.extend_from_slice(stored);
            out.len()
        };
        decompressed();
        let check = match layout {
            Some(layout) if strings_checked_with_table(layout) => EntryCheck::ShortTexts,
            _ => EntryCheck::Ordered,
        };
        let basket = Self::build(out, len, keylen, header, seek, Table::After(check), offsets)?;
        match layout {
            Some(layout) => basket.located_for(layout),
            None => Ok(basket),
        }
    }

    /// Gives back the buffers (for reuse; they may be longer than this basket's).
    #[must_use]
    pub fn into_buffers(self) -> BasketBuffers {
        BasketBuffers {
            payload: self.payload,
            offsets: self.offsets.unwrap_or_default(),
        }
    }

    /// Builds from a payload (entry data + the offset table where it follows them).
    /// `reuse`: a buffer for the entry offsets.
    fn build(
        payload: Vec<u8>,
        len: usize,
        keylen: usize,
        header: BasketHeader,
        seek: u64,
        table: Table,
        reuse: Vec<u32>,
    ) -> Result<Self> {
        let entries = header.nev_buf as usize;
        let border = (header.last as usize)
            .checked_sub(keylen)
            .filter(|&b| b <= len);
        let Some(border) = border else {
            return Err(Error::corrupt(
                "basket",
                seek,
                format!("fLast {} outside the {}-byte payload", header.last, len),
            ));
        };
        let (offsets, short_texts) = match table {
            Table::After(check) if border != len => {
                let table = payload.get(border..len).unwrap_or_default();
                let mut cur = Cursor::new(table, seek, "basket entry offsets");
                let count = cur.i32()?;
                if i64::from(count) < header.nev_buf as i64 {
                    return Err(cur.corrupt(format!("{count} offsets for {entries} entries")));
                }
                let table = cur.bytes(entries.saturating_mul(4))?.as_chunks::<4>().0;
                let whole = payload.get(..len).unwrap_or_default();
                let (offsets, short_texts) =
                    read_offsets(table, keylen, border, whole, check, reuse, seek)?;
                (Some(offsets), short_texts)
            }
            // Entries of one size (no table), or a table read apart.
            _ => (None, false),
        };
        Ok(Self {
            payload,
            len,
            border,
            offsets,
            entries,
            short_texts,
        })
    }

    /// Builds an embedded basket (stored inside the TTree record) from its streamed parts.
    pub(crate) fn from_embedded(
        buffer: &[u8],
        keylen: usize,
        header: BasketHeader,
        starts: Option<&[i32]>,
        at: u64,
    ) -> Result<Self> {
        let last = header.last as usize;
        let data = buffer.get(keylen..last).ok_or_else(|| {
            Error::corrupt(
                "embedded basket",
                at,
                format!("fLast {last} outside the buffer"),
            )
        })?;
        let mut basket = Self::build(
            data.to_vec(),
            data.len(),
            0,
            BasketHeader {
                last: (last - keylen) as i32,
                ..header
            },
            at,
            Table::Apart,
            Vec::new(),
        )?;
        if let Some(starts) = starts {
            let n = header.nev_buf as usize;
            let starts = starts.get(..n).ok_or_else(|| {
                Error::corrupt("embedded basket", at, "fewer entry offsets than entries")
            })?;
            let mut out = Vec::new();
            let ordered =
                offsets_in_order(starts.iter().map(|&s| s as u32), keylen as u32, &mut out);
            basket.offsets = Some(to_payload_offsets(out, ordered, keylen, basket.border, at)?);
        }
        Ok(basket)
    }

    /// The entry data (without the offset table).
    #[must_use]
    pub fn data(&self) -> &[u8] {
        self.payload.get(..self.border).unwrap_or_default()
    }

    /// Number of entries.
    #[must_use]
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Entry boundaries for variable-size entries (`entries + 1` offsets into [`Self::data`]).
    #[must_use]
    pub fn offsets(&self) -> Option<&[u32]> {
        self.offsets.as_deref()
    }

    /// Whether every entry was found, as the offsets were read, to be one string of under 255
    /// bytes behind its length byte, or empty (the plain case of a string branch without
    /// object headers, checked where the layout was known: [`Self::from_record_staged`]).
    pub(crate) fn entries_are_short_texts(&self) -> bool {
        self.short_texts
    }

    /// This basket, with entry boundaries if `layout`'s entries vary in size and the basket has
    /// no entry-offset table ([`Self::with_uniform_entries`]).
    ///
    /// # Errors
    /// As [`Self::with_uniform_entries`].
    pub(crate) fn located_for(self, layout: &Layout) -> Result<Self> {
        if layout.variable_size() && self.offsets.is_none() {
            self.with_uniform_entries()
        } else {
            Ok(self)
        }
    }

    /// This basket with entry boundaries for entries of one size, when its entries are of a
    /// variable-size kind but it has no entry-offset table (as some writers other than ROOT
    /// write `char*` leaves, e.g. scikit-hep-testdata's `uproot-issue413.root`). ROOT reads
    /// entry `j` of such a basket at `j * fNevBufSize`; the entries fill the data, so that size
    /// is the data's length over the entries.
    ///
    /// # Errors
    /// Data that the entries do not divide into equal parts.
    fn with_uniform_entries(mut self) -> Result<Self> {
        if self.offsets.is_some() {
            return Ok(self);
        }
        let len = self.border;
        let size = match self.entries {
            0 => 0,
            n if len.is_multiple_of(n) => len / n,
            n => {
                return Err(Error::corrupt(
                    "basket",
                    0,
                    format!(
                        "{len} bytes of entries without offsets do not divide into {n} entries"
                    ),
                ));
            }
        };
        let offsets = (0..=self.entries)
            .map(|j| u32::try_from(j * size))
            .collect::<std::result::Result<Vec<u32>, _>>()
            .map_err(|_| Error::corrupt("basket", 0, format!("{len} bytes of entries")))?;
        self.offsets = Some(offsets);
        Ok(self)
    }

    /// An RNTuple page, decompressed, as the basket cache keeps it: its bytes and the number of
    /// elements they hold.
    pub(crate) fn page(payload: Vec<u8>, elements: usize) -> Self {
        Self {
            len: payload.len(),
            border: payload.len(),
            payload,
            offsets: None,
            short_texts: false,
            entries: elements,
        }
    }

    /// Bytes held on the heap (what the cache charges for it).
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.payload.capacity() + self.offsets.as_ref().map_or(0, |o| o.capacity() * 4)
    }

    #[cfg(test)]
    pub(crate) fn for_test(payload: Vec<u8>) -> Self {
        let border = payload.len();
        Self {
            len: payload.len(),
            payload,
            border,
            offsets: None,
            short_texts: false,
            entries: 0,
        }
    }

    /// A basket of `entries` fixed-size entries.
    #[cfg(test)]
    pub(crate) fn flat_for_test(payload: Vec<u8>, entries: usize) -> Self {
        Self {
            entries,
            ..Self::for_test(payload)
        }
    }

    /// A copy of this basket's entries with other bytes (same entry boundaries).
    #[cfg(test)]
    pub(crate) fn with_data_for_test(&self, data: Vec<u8>) -> Self {
        Self {
            entries: self.entries,
            offsets: self.offsets.clone(),
            short_texts: false,
            ..Self::for_test(data)
        }
    }

    /// A basket of variable-size entries with these bytes (offsets in memory, as after parsing).
    #[cfg(test)]
    pub(crate) fn entries_for_test(entries: &[&[u8]]) -> Self {
        let mut payload = Vec::new();
        let mut offsets = vec![0u32];
        for e in entries {
            payload.extend_from_slice(e);
            offsets.push(payload.len() as u32);
        }
        Self {
            entries: entries.len(),
            offsets: Some(offsets),
            short_texts: false,
            ..Self::for_test(payload)
        }
    }

    /// A basket of `std::vector<f32>` entries as ROOT streams them (header, values, then the
    /// entry-offset table), with a zero key length; entry `lie_at` declares one value too few.
    #[cfg(test)]
    pub(crate) fn vector_f32_for_test(entries: &[Vec<f32>], lie_at: Option<usize>) -> Result<Self> {
        let mut payload = Vec::new();
        let mut starts = Vec::new();
        for (j, e) in entries.iter().enumerate() {
            starts.push(payload.len() as i32);
            let bytes = 6 + 4 * e.len() as u32;
            let declared = e.len() as u32 - u32::from(lie_at == Some(j));
            payload.extend_from_slice(&(bytes | 0x4000_0000).to_be_bytes());
            payload.extend_from_slice(&9u16.to_be_bytes());
            payload.extend_from_slice(&declared.to_be_bytes());
            for v in e {
                payload.extend_from_slice(&v.to_be_bytes());
            }
        }
        let border = payload.len();
        payload.extend_from_slice(&(entries.len() as i32 + 1).to_be_bytes());
        for s in starts {
            payload.extend_from_slice(&s.to_be_bytes());
        }
        payload.extend_from_slice(&0i32.to_be_bytes());
        let header = BasketHeader {
            nev_buf: entries.len() as i32,
            last: border as i32,
            flag: 0,
        };
        let len = payload.len();
        let table = Table::After(EntryCheck::Ordered);
        Self::build(payload, len, 0, header, 0, table, Vec::new())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn entries_without_offsets_are_cut_into_equal_parts() {
        // Three `char*` entries of six bytes each (length byte + five characters).
        let data = b"\x05evt-0\x05evt-1\x05evt-2".to_vec();
        let basket = BasketData::flat_for_test(data, 3)
            .with_uniform_entries()
            .unwrap();
        assert_eq!(basket.offsets(), Some(&[0, 6, 12, 18][..]));
        // A table the basket has stays.
        let table = BasketData::entries_for_test(&[b"ab", b"c"]);
        let kept = table.clone().with_uniform_entries().unwrap();
        assert_eq!(kept.offsets(), table.offsets());
        // Bytes that do not divide into the entries are an error.
        let err = BasketData::flat_for_test(vec![0; 7], 3)
            .with_uniform_entries()
            .unwrap_err();
        assert!(err.to_string().contains("7 bytes"), "{err}");
        let empty = BasketData::flat_for_test(Vec::new(), 0);
        assert_eq!(
            empty.with_uniform_entries().unwrap().offsets(),
            Some(&[0][..])
        );
    }
}

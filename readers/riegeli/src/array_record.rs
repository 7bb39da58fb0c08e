//! The ArrayRecord layout (google/array_record) on top of Riegeli/records.
//!
//! ```text
//! [0, 64)                signature chunk
//! data chunks            exactly group_size records each (the last may hold fewer)
//! footer chunk           simple, the file's codec: RiegeliFooterMetadata, then one ArrayRecordFooter per
//!                        data chunk; followed by padding to a 64 KiB boundary
//! postscript chunk       at file_size - 65536, uncompressed: three RiegeliPostscript records; padding to 64 KiB
//! ```
//!
//! Protos (all fields optional, proto2):
//! - `RiegeliFooterMetadata { ArrayRecordMetadata array_record_metadata = 1; }` with
//!   `ArrayRecordMetadata { version = 1 (always 1), num_chunks = 2, num_records = 3, writer_options = 4 }`;
//! - `ArrayRecordFooter { chunk_offset = 1, decoded_data_size = 2, num_records = 3 }`;
//! - `RiegeliPostscript { footer_offset = 1, magic = 2 (0x71930e704fdae05e) }`.
//!
//! [`ArrayRecordReader`] reads the postscript, then the footer, and finds record `i` in chunk
//! `i / group_size` at index `i % group_size`, where the group size is the first chunk's record count.

use std::io::{Read, Seek};

use crate::block::BLOCK_SIZE;
use crate::error::{Error, Result};
use crate::reader::RecordReader;
use crate::varint::{read_varint64, write_varint64};

/// Magic number of the postscript.
pub const POSTSCRIPT_MAGIC: u64 = 0x7193_0e70_4fda_e05e;

/// One data chunk of an ArrayRecord file, for the footer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FooterEntry {
    pub(crate) chunk_offset: u64,
    pub(crate) decoded_data_size: u64,
    pub(crate) num_records: u64,
}

fn put_varint_field(out: &mut Vec<u8>, field: u64, value: u64) {
    write_varint64(out, field << 3);
    write_varint64(out, value);
}

pub(crate) fn encode_footer_metadata(
    out: &mut Vec<u8>,
    num_chunks: u64,
    num_records: u64,
    writer_options: &str,
) {
    let mut inner = Vec::new();
    put_varint_field(&mut inner, 1, 1);
    put_varint_field(&mut inner, 2, num_chunks);
    put_varint_field(&mut inner, 3, num_records);
    write_varint64(&mut inner, (4 << 3) | 2);
    write_varint64(&mut inner, writer_options.len() as u64);
    inner.extend_from_slice(writer_options.as_bytes());
    write_varint64(out, (1 << 3) | 2);
    write_varint64(out, inner.len() as u64);
    out.extend_from_slice(&inner);
}

pub(crate) fn encode_footer_entry(out: &mut Vec<u8>, e: &FooterEntry) {
    put_varint_field(out, 1, e.chunk_offset);
    put_varint_field(out, 2, e.decoded_data_size);
    put_varint_field(out, 3, e.num_records);
}

pub(crate) fn encode_postscript(out: &mut Vec<u8>, footer_offset: u64) {
    put_varint_field(out, 1, footer_offset);
    put_varint_field(out, 2, POSTSCRIPT_MAGIC);
}

/// A field of a proto message: varint value or length-delimited bytes.
enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// Parses the varint and length-delimited fields of a message (fixed fields are skipped).
fn fields(data: &[u8]) -> Result<Vec<(u64, Field<'_>)>> {
    let bad = || Error::ArrayRecord("malformed footer or postscript proto".into());
    let mut out = Vec::new();
    let mut p = 0;
    while p < data.len() {
        let tag = read_varint64(data, &mut p).ok_or_else(bad)?;
        match tag & 7 {
            0 => out.push((
                tag >> 3,
                Field::Varint(read_varint64(data, &mut p).ok_or_else(bad)?),
            )),
            2 => {
                let len = read_varint64(data, &mut p).ok_or_else(bad)?;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| p.checked_add(l))
                    .filter(|&e| e <= data.len())
                    .ok_or_else(bad)?;
                out.push((tag >> 3, Field::Bytes(&data[p..end])));
                p = end;
            }
            1 => {
                p = p
                    .checked_add(8)
                    .filter(|&e| e <= data.len())
                    .ok_or_else(bad)?
            }
            5 => {
                p = p
                    .checked_add(4)
                    .filter(|&e| e <= data.len())
                    .ok_or_else(bad)?
            }
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

fn varint_field(fields: &[(u64, Field<'_>)], number: u64) -> Option<u64> {
    fields.iter().rev().find_map(|(n, f)| match f {
        Field::Varint(v) if *n == number => Some(*v),
        _ => None,
    })
}

/// Random access by record index into an ArrayRecord file.
#[derive(Debug)]
pub struct ArrayRecordReader<R> {
    reader: RecordReader<R>,
    chunk_offsets: Vec<u64>,
    chunk_records: Vec<u64>,
    group_size: u64,
    num_records: u64,
    footer_offset: u64,
    writer_options: String,
    loaded: Option<usize>,
}

impl<R: Read + Seek> ArrayRecordReader<R> {
    /// Opens an ArrayRecord file: reads and checks its postscript and footer.
    ///
    /// # Errors
    /// [`Error::ArrayRecord`] if the layout is not there, or errors of the underlying chunks.
    pub fn new(src: R) -> Result<Self> {
        let mut reader = RecordReader::new(src)?;
        let size = reader.size();
        if size < BLOCK_SIZE || !size.is_multiple_of(BLOCK_SIZE) {
            return Err(Error::ArrayRecord(format!(
                "file size {size} is not a positive multiple of 65536"
            )));
        }
        let postscript_at = size - BLOCK_SIZE;
        reader.seek(crate::RecordPosition {
            chunk_begin: postscript_at,
            record_index: 0,
        })?;
        let postscript = reader
            .read_record()?
            .ok_or_else(|| Error::ArrayRecord("no postscript record".into()))?
            .to_vec();
        let ps = fields(&postscript)?;
        if varint_field(&ps, 2) != Some(POSTSCRIPT_MAGIC) {
            return Err(Error::ArrayRecord("postscript magic mismatch".into()));
        }
        let footer_offset = varint_field(&ps, 1)
            .ok_or_else(|| Error::ArrayRecord("postscript without footer offset".into()))?;
        if footer_offset >= postscript_at {
            return Err(Error::ArrayRecord(
                "footer offset past the postscript".into(),
            ));
        }
        // Footer records.
        reader.set_limit(postscript_at);
        reader.seek(crate::RecordPosition {
            chunk_begin: footer_offset,
            record_index: 0,
        })?;
        let metadata = reader
            .read_record()?
            .ok_or_else(|| Error::ArrayRecord("empty footer".into()))?
            .to_vec();
        let meta_fields = fields(&metadata)?;
        let inner = meta_fields
            .iter()
            .find_map(|(n, f)| match f {
                Field::Bytes(b) if *n == 1 => Some(*b),
                _ => None,
            })
            .ok_or_else(|| {
                Error::ArrayRecord("footer metadata without array_record_metadata".into())
            })?;
        let inner = fields(inner)?;
        if varint_field(&inner, 1) != Some(1) {
            return Err(Error::ArrayRecord("unsupported footer version".into()));
        }
        let num_chunks = varint_field(&inner, 2).unwrap_or(0);
        let num_records = varint_field(&inner, 3).unwrap_or(0);
        let writer_options = inner
            .iter()
            .find_map(|(n, f)| match f {
                Field::Bytes(b) if *n == 4 => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            })
            .unwrap_or_default();
        let mut chunk_offsets = Vec::new();
        let mut chunk_records = Vec::new();
        while let Some(rec) = reader.read_record()? {
            let f = fields(rec)?;
            chunk_offsets.push(varint_field(&f, 1).unwrap_or(0));
            chunk_records.push(varint_field(&f, 3).unwrap_or(0));
        }
        if chunk_offsets.len() as u64 != num_chunks {
            return Err(Error::ArrayRecord(format!(
                "footer lists {} chunks, its metadata says {num_chunks}",
                chunk_offsets.len()
            )));
        }
        if chunk_offsets.windows(2).any(|w| w[0] >= w[1])
            || chunk_offsets.last().is_some_and(|&o| o >= footer_offset)
        {
            return Err(Error::ArrayRecord("chunk offsets out of order".into()));
        }
        let group_size = chunk_records.first().copied().unwrap_or(1).max(1);
        let total: u64 = chunk_records.iter().sum();
        let n = chunk_records.len();
        if total != num_records
            || chunk_records
                .iter()
                .take(n.saturating_sub(1))
                .any(|&r| r != group_size)
            || chunk_records
                .last()
                .is_some_and(|&r| r == 0 || r > group_size)
        {
            return Err(Error::ArrayRecord(
                "chunk record counts are not equal groups".into(),
            ));
        }
        reader.set_limit(footer_offset);
        Ok(Self {
            reader,
            chunk_offsets,
            chunk_records,
            group_size,
            num_records,
            footer_offset,
            writer_options,
            loaded: None,
        })
    }

    /// Number of records.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.num_records
    }

    /// Whether the file holds no records.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.num_records == 0
    }

    /// Records per chunk.
    #[must_use]
    pub fn group_size(&self) -> u64 {
        self.group_size
    }

    /// The writer options string stored in the footer.
    #[must_use]
    pub fn writer_options(&self) -> &str {
        &self.writer_options
    }

    /// File offset of the footer chunk (end of the data chunks).
    #[must_use]
    pub fn footer_offset(&self) -> u64 {
        self.footer_offset
    }

    /// Record `index`.
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`], or errors of the chunk holding it.
    pub fn get(&mut self, index: u64) -> Result<&[u8]> {
        if index >= self.num_records {
            return Err(Error::IndexOutOfRange {
                index,
                num_records: self.num_records,
            });
        }
        let chunk = (index / self.group_size) as usize;
        let in_chunk = (index % self.group_size) as usize;
        if self.loaded != Some(chunk) {
            self.loaded = None;
            let offset = self.chunk_offsets[chunk];
            self.reader.seek(crate::RecordPosition {
                chunk_begin: offset,
                record_index: 0,
            })?;
            if self.reader.position().chunk_begin != offset
                || self.reader.chunk_len() as u64 != self.chunk_records[chunk]
            {
                return Err(Error::ArrayRecord(format!(
                    "chunk {chunk} at {offset} does not match the footer"
                )));
            }
            self.loaded = Some(chunk);
        }
        Ok(self.reader.record(in_chunk))
    }

    /// Reads every record in order, calling `f` on each.
    ///
    /// # Errors
    /// Errors of the chunks.
    pub fn for_each(&mut self, mut f: impl FnMut(&[u8])) -> Result<()> {
        self.loaded = None;
        self.reader.seek(crate::RecordPosition {
            chunk_begin: 64.min(self.footer_offset),
            record_index: 0,
        })?;
        while let Some(r) = self.reader.read_record()? {
            f(r);
        }
        Ok(())
    }
}

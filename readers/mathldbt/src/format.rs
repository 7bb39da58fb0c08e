//! Wire-format constants and the header/descriptor parser shared by the
//! decoder and [`crate::inspect`]. `SPEC.md` is the normative description;
//! this module follows it section by section.

use crate::error::DecodeError;
use crate::types::{DataType, Encoding};

/// The eight magic bytes every message starts with.
pub const MAGIC: [u8; 8] = *b"MATHLDBT";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 1;
/// Length of the fixed header in bytes.
pub const HEADER_LEN: usize = 20;
/// Length of the checksum trailer in bytes.
pub const TRAILER_LEN: usize = 8;
/// Header flag: the message ends with an 8-byte XXH3-64 checksum trailer.
pub const FLAG_CHECKSUM: u16 = 0x0001;
/// Column flag: the field is nullable.
pub const COLUMN_NULLABLE: u8 = 0x01;
/// Column flag: a validity bitmap buffer is present.
pub const COLUMN_HAS_VALIDITY: u8 = 0x02;
/// Smallest possible descriptor: name length, four single bytes, null
/// count, one buffer length.
pub(crate) const MIN_DESCRIPTOR_LEN: usize = 2 + 4 + 4 + 8;
/// Most buffers a column can have (validity + three for `DictUtf8`).
pub(crate) const MAX_BUFFERS: usize = 4;

/// Names of a column's buffers, in wire order, excluding the validity
/// bitmap (which, when present, comes first).
#[must_use]
pub fn buffer_names(data_type: DataType, encoding: Encoding) -> &'static [&'static str] {
    match encoding {
        Encoding::Plain if data_type.is_var_len() => &["offsets", "data"],
        Encoding::Plain | Encoding::DeltaVarintI64 => &["values"],
        Encoding::DictUtf8 => &["dict_offsets", "dict_data", "indices"],
    }
}

/// The smallest dictionary index width (1, 2 or 4 bytes) that can address
/// `entries` entries.
#[must_use]
pub const fn dict_index_width(entries: usize) -> u8 {
    if entries <= 0x100 {
        1
    } else if entries <= 0x1_0000 {
        2
    } else {
        4
    }
}

/// A bounds-checked little-endian reader over a message.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Self { buf, pos }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let out = self
            .pos
            .checked_add(n)
            .and_then(|end| self.buf.get(self.pos..end))
            .ok_or(DecodeError::Truncated {
                what,
                offset: self.pos,
                needed: n as u64,
                available: self.remaining(),
            })?;
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        self.array(what).map(u16::from_le_bytes)
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        self.array(what).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        self.array(what).map(u64::from_le_bytes)
    }
}

/// The parsed fixed header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub flags: u16,
    pub num_rows: u32,
    pub num_columns: u32,
    /// The trailer's checksum, when the `CHECKSUM` flag is set.
    pub checksum: Option<u64>,
}

/// One parsed and checked column descriptor. Buffer lengths have been
/// checked against the row count where the encoding fixes them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Descriptor {
    /// Byte range of the name in the message (valid UTF-8).
    pub name: (usize, usize),
    pub data_type: DataType,
    pub encoding: Encoding,
    pub flags: u8,
    pub param: u8,
    pub null_count: u32,
    pub buffer_count: usize,
    pub buffer_lens: [u64; MAX_BUFFERS],
}

impl Descriptor {
    pub(crate) fn nullable(&self) -> bool {
        self.flags & COLUMN_NULLABLE != 0
    }

    pub(crate) fn has_validity(&self) -> bool {
        self.flags & COLUMN_HAS_VALIDITY != 0
    }

    /// Lengths of the encoding's buffers (after the validity bitmap).
    pub(crate) fn value_buffer_lens(&self) -> &[u64] {
        let skip = usize::from(self.has_validity());
        self.buffer_lens
            .get(skip..self.buffer_count)
            .unwrap_or_default()
    }

    /// Bytes the decoded column occupies in memory, excluding dictionary
    /// expansion (which is checked as it is computed).
    pub(crate) fn decoded_size(&self, rows: u64) -> u64 {
        let validity = if self.has_validity() {
            rows.div_ceil(8)
        } else {
            0
        };
        let values = match (self.encoding, self.data_type.fixed_width()) {
            (_, Some(w)) => rows.saturating_mul(w as u64),
            (Encoding::Plain, None) if self.data_type == DataType::Bool => rows,
            (Encoding::Plain, None) => {
                let data = self.value_buffer_lens().get(1).copied().unwrap_or(0);
                rows.saturating_add(1)
                    .saturating_mul(4)
                    .saturating_add(data)
            }
            (_, None) => rows.saturating_add(1).saturating_mul(4),
        };
        validity.saturating_add(values)
    }
}

/// Reads and checks the header. Returns the header and the body: the bytes
/// before the trailer (the whole input when there is no checksum). The
/// checksum is not verified here; see [`verify_checksum`].
pub(crate) fn read_header(bytes: &[u8]) -> Result<(Header, &[u8]), DecodeError> {
    let mut r = Reader::new(bytes, 0);
    let magic: [u8; 8] = r.array("magic")?;
    if magic != MAGIC {
        return Err(DecodeError::BadMagic { found: magic });
    }
    let version = r.u16("version")?;
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    let flags = r.u16("flags")?;
    if flags & !FLAG_CHECKSUM != 0 {
        return Err(DecodeError::UnknownFlags { flags });
    }
    let num_rows = r.u32("row count")?;
    let num_columns = r.u32("column count")?;
    let (body, checksum) = if flags & FLAG_CHECKSUM != 0 {
        let body_len = bytes
            .len()
            .checked_sub(TRAILER_LEN)
            .filter(|&l| l >= HEADER_LEN)
            .ok_or(DecodeError::Truncated {
                what: "checksum trailer",
                offset: HEADER_LEN,
                needed: TRAILER_LEN as u64,
                available: bytes.len().saturating_sub(HEADER_LEN),
            })?;
        let (body, trailer) = bytes.split_at(body_len);
        let mut t = [0u8; TRAILER_LEN];
        t.copy_from_slice(trailer);
        (body, Some(u64::from_le_bytes(t)))
    } else {
        (bytes, None)
    };
    Ok((
        Header {
            flags,
            num_rows,
            num_columns,
            checksum,
        },
        body,
    ))
}

/// Checks `body` against the stored checksum.
pub(crate) fn verify_checksum(body: &[u8], stored: u64) -> Result<(), DecodeError> {
    let computed = xxhash_rust::xxh3::xxh3_64(body);
    if computed == stored {
        Ok(())
    } else {
        Err(DecodeError::ChecksumMismatch { stored, computed })
    }
}

fn expect_len(
    column: usize,
    buffer: &'static str,
    actual: u64,
    expected: u64,
) -> Result<(), DecodeError> {
    if actual == expected {
        Ok(())
    } else {
        Err(DecodeError::BufferLength {
            column,
            buffer,
            expected,
            actual,
        })
    }
}

/// Reads descriptor `column` at the reader's position and checks every rule
/// that does not need the buffers' contents.
pub(crate) fn read_descriptor(
    r: &mut Reader<'_>,
    column: usize,
    num_rows: u32,
) -> Result<Descriptor, DecodeError> {
    let name_len = r.u16("column name length")?;
    let name_start = r.pos();
    let name = r.take(usize::from(name_len), "column name")?;
    if std::str::from_utf8(name).is_err() {
        return Err(DecodeError::InvalidName { column });
    }
    let type_code = r.u8("type id")?;
    let data_type = DataType::from_code(type_code).ok_or(DecodeError::UnknownType {
        column,
        code: type_code,
    })?;
    let enc_code = r.u8("encoding id")?;
    let encoding = Encoding::from_code(enc_code).ok_or(DecodeError::UnknownEncoding {
        column,
        code: enc_code,
    })?;
    if !encoding.supports(data_type) {
        return Err(DecodeError::EncodingNotAllowed {
            column,
            encoding,
            data_type,
        });
    }
    let flags = r.u8("column flags")?;
    let param = r.u8("encoding parameter")?;
    let null_count = r.u32("null count")?;
    let invalid = |reason| DecodeError::InvalidDescriptor { column, reason };
    if flags & !(COLUMN_NULLABLE | COLUMN_HAS_VALIDITY) != 0 {
        return Err(invalid("unknown column flag bits"));
    }
    let has_validity = flags & COLUMN_HAS_VALIDITY != 0;
    if has_validity && flags & COLUMN_NULLABLE == 0 {
        return Err(invalid("validity bitmap on a non-nullable column"));
    }
    if null_count > num_rows {
        return Err(DecodeError::NullCount {
            column,
            declared: u64::from(null_count),
            actual: u64::from(num_rows),
        });
    }
    if has_validity != (null_count > 0) {
        return Err(invalid(
            "validity bitmap must be present exactly when the null count is non-zero",
        ));
    }
    if encoding == Encoding::DeltaVarintI64 && has_validity {
        return Err(invalid("delta_varint_i64 columns cannot have nulls"));
    }
    if encoding != Encoding::DictUtf8 && param != 0 {
        return Err(invalid("encoding parameter must be 0"));
    }
    let names = buffer_names(data_type, encoding);
    let buffer_count = names.len() + usize::from(has_validity);
    let mut buffer_lens = [0u64; MAX_BUFFERS];
    for slot in buffer_lens.iter_mut().take(buffer_count) {
        *slot = r.u64("buffer length")?;
    }
    let d = Descriptor {
        name: (name_start, usize::from(name_len)),
        data_type,
        encoding,
        flags,
        param,
        null_count,
        buffer_count,
        buffer_lens,
    };
    check_buffer_lens(&d, column, u64::from(num_rows))?;
    Ok(d)
}

fn check_buffer_lens(d: &Descriptor, column: usize, rows: u64) -> Result<(), DecodeError> {
    let bitmap_len = rows.div_ceil(8);
    if d.has_validity() {
        expect_len(column, "validity", d.buffer_lens[0], bitmap_len)?;
    }
    let lens = d.value_buffer_lens();
    let len = |i: usize| lens.get(i).copied().unwrap_or(0);
    let u32_max = u64::from(u32::MAX);
    match d.encoding {
        Encoding::Plain => match d.data_type.fixed_width() {
            Some(w) => expect_len(column, "values", len(0), rows * w as u64)?,
            None if d.data_type == DataType::Bool => {
                expect_len(column, "values", len(0), bitmap_len)?;
            }
            None => {
                expect_len(column, "offsets", len(0), (rows + 1) * 4)?;
                if len(1) > u32_max {
                    return Err(DecodeError::BufferLength {
                        column,
                        buffer: "data",
                        expected: u32_max,
                        actual: len(1),
                    });
                }
            }
        },
        Encoding::DictUtf8 => {
            let offsets_len = len(0);
            if offsets_len < 4 || offsets_len % 4 != 0 {
                return Err(DecodeError::BufferLength {
                    column,
                    buffer: "dict_offsets",
                    expected: 4 * (offsets_len / 4).max(1),
                    actual: offsets_len,
                });
            }
            let entries = offsets_len / 4 - 1;
            let valid_rows = rows - u64::from(d.null_count);
            if entries > valid_rows {
                return Err(DecodeError::BufferLength {
                    column,
                    buffer: "dict_offsets",
                    expected: (valid_rows + 1) * 4,
                    actual: offsets_len,
                });
            }
            if len(1) > u32_max {
                return Err(DecodeError::BufferLength {
                    column,
                    buffer: "dict_data",
                    expected: u32_max,
                    actual: len(1),
                });
            }
            // entries <= rows <= u32::MAX, so this fits in usize on 32- and
            // 64-bit targets alike.
            let width = dict_index_width(usize::try_from(entries).unwrap_or(usize::MAX));
            if d.param != width {
                return Err(DecodeError::InvalidDescriptor {
                    column,
                    reason: "dictionary index width is not the minimal 1, 2 or 4 bytes",
                });
            }
            expect_len(column, "indices", len(2), rows * u64::from(width))?;
        }
        Encoding::DeltaVarintI64 => {
            let l = len(0);
            if l < rows || l > rows * 10 {
                return Err(DecodeError::BufferLength {
                    column,
                    buffer: "values",
                    expected: if l < rows { rows } else { rows * 10 },
                    actual: l,
                });
            }
        }
    }
    Ok(())
}

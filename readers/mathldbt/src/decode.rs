//! The decoder: [`Decoder`] (reusable workspace, `decode_into`) and
//! [`decode`] (one shot).
//!
//! Decoding runs in three phases, so that nothing is allocated before the
//! input has shown it is large enough to justify it:
//!
//! 1. header: magic, version, flags;
//! 2. descriptors: every field is range-checked, every buffer length is
//!    checked against what the row count and encoding require, the buffer
//!    lengths must add up to exactly the bytes that follow, and the decoded
//!    size is checked against [`DecodeOptions::max_decoded_bytes`];
//! 3. columns: each buffer is validated while it is copied (offsets in one
//!    pass, UTF-8 once per buffer, dictionary indices, varints). The
//!    checksum, when present, is computed over each column's buffers just
//!    before they are copied, so the input is read from memory once, and
//!    compared at the end; nothing is returned before it matches.
//!
//! The only allocation not bounded by the input size is dictionary
//! expansion, which is computed exactly before allocating and charged to
//! `max_decoded_bytes`.

use crate::bits;
use crate::compression::decompress;
use crate::dict::Interner;
use crate::error::DecodeError;
use crate::format::{Descriptor, HEADER_LEN, MAX_BUFFERS, MIN_DESCRIPTOR_LEN, Reader};
use crate::model::{Bitmap, ColumnValues, ColumnarBatch, Field};
use crate::offsets::offset_pairs;
use crate::types::Encoding;
use crate::varint;
use xxhash_rust::xxh3::Xxh3Default;

/// Limits and checks applied while decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// Verify the checksum trailer when the message has one (default on).
    /// Turning it off skips one pass over the input; every structural check
    /// still runs.
    pub verify_checksum: bool,
    /// Upper bound on the memory of the decoded batch: values, offsets,
    /// bitmaps and expanded dictionary text (default 1 GiB).
    pub max_decoded_bytes: u64,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            verify_checksum: true,
            max_decoded_bytes: Self::DEFAULT_MAX_DECODED_BYTES,
        }
    }
}

impl DecodeOptions {
    /// Default [`DecodeOptions::max_decoded_bytes`]: 1 GiB.
    pub const DEFAULT_MAX_DECODED_BYTES: u64 = 1 << 30;

    /// Sets `verify_checksum`.
    #[must_use]
    pub const fn with_verify_checksum(mut self, on: bool) -> Self {
        self.verify_checksum = on;
        self
    }

    /// Sets `max_decoded_bytes`.
    #[must_use]
    pub const fn with_max_decoded_bytes(mut self, limit: u64) -> Self {
        self.max_decoded_bytes = limit;
        self
    }
}

/// Reusable scratch space of a decoder.
#[derive(Debug, Default)]
pub(crate) struct DecodeScratch {
    descs: Vec<Descriptor>,
    interner: Interner,
    indices: Vec<u32>,
    dict_offsets: Vec<u32>,
    dict_padded: Vec<u8>,
}

/// Decodes messages, reusing its scratch space; [`Decoder::decode_into`]
/// also reuses the target batch's buffers, so repeated decoding of
/// similarly shaped messages does not allocate.
#[derive(Debug, Default)]
pub struct Decoder {
    pub(crate) options: DecodeOptions,
    pub(crate) scratch: DecodeScratch,
    pub(crate) decompress_state: crate::compression::DecompressState,
}

impl Decoder {
    /// A decoder with `options`.
    #[must_use]
    pub fn new(options: DecodeOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &DecodeOptions {
        &self.options
    }

    /// Replaces the options.
    pub fn set_options(&mut self, options: DecodeOptions) {
        self.options = options;
    }

    /// Decodes a message into a new batch.
    ///
    /// # Errors
    /// Any [`DecodeError`]: the input is not a valid MATHLDBT v1 message or
    /// breaks a limit.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<ColumnarBatch, DecodeError> {
        let mut batch = ColumnarBatch::default();
        self.decode_into(bytes, &mut batch)?;
        Ok(batch)
    }

    /// Decodes a message into `batch`, reusing its column buffers where the
    /// column types line up.
    ///
    /// # Errors
    /// As [`Decoder::decode`]; on error `batch` is left empty.
    pub fn decode_into(
        &mut self,
        bytes: &[u8],
        batch: &mut ColumnarBatch,
    ) -> Result<(), DecodeError> {
        decode_message(bytes, &self.options, &mut self.scratch, batch)
    }
}

/// Decodes a message with default options into a new batch.
///
/// # Errors
/// As [`Decoder::decode`].
pub fn decode(bytes: &[u8]) -> Result<ColumnarBatch, DecodeError> {
    Decoder::default().decode(bytes)
}

pub(crate) fn decode_message(
    bytes: &[u8],
    options: &DecodeOptions,
    scratch: &mut DecodeScratch,
    batch: &mut ColumnarBatch,
) -> Result<(), DecodeError> {
    let r = decode_inner(bytes, options, scratch, batch);
    if r.is_err() {
        batch.reset();
    }
    r
}

/// Parses the header and all descriptors into `descs`, checking that the
/// buffers exactly fill the rest of the body. Returns the header, the body,
/// and the offset of the first buffer. With `verify_upfront`, a checksum is
/// verified over the whole body first (the decoder instead verifies it
/// while decoding, buffer by buffer).
pub(crate) fn read_layout<'a>(
    bytes: &'a [u8],
    verify_upfront: bool,
    descs: &mut Vec<Descriptor>,
) -> Result<(crate::format::Header, &'a [u8], usize), DecodeError> {
    let layout = read_layout_unverified(bytes, descs);
    match (verify_upfront, &layout) {
        (true, Ok((header, body, _))) => {
            if let Some(stored) = header.checksum {
                crate::format::verify_checksum(body, stored)?;
            }
            layout
        }
        (true, Err(_)) => layout.map_err(|e| explain(e, bytes, true)),
        (false, _) => layout,
    }
}

fn read_layout_unverified<'a>(
    bytes: &'a [u8],
    descs: &mut Vec<Descriptor>,
) -> Result<(crate::format::Header, &'a [u8], usize), DecodeError> {
    let (header, body) = crate::format::read_header(bytes)?;
    let mut r = Reader::new(body, HEADER_LEN);
    let ncols = header.num_columns as usize;
    if ncols > r.remaining() / MIN_DESCRIPTOR_LEN {
        return Err(DecodeError::TooManyColumns {
            columns: header.num_columns,
            available: r.remaining(),
        });
    }
    descs.clear();
    descs.reserve(ncols);
    for c in 0..ncols {
        descs.push(crate::format::read_descriptor(&mut r, c, header.num_rows)?);
    }
    let declared = descs
        .iter()
        .flat_map(|d| d.buffer_lens.iter().take(d.buffer_count))
        .fold(0u64, |acc, &l| acc.saturating_add(l));
    if declared != r.remaining() as u64 {
        return Err(DecodeError::BufferTotal {
            declared,
            available: r.remaining(),
        });
    }
    Ok((header, body, r.pos()))
}

/// Chooses the most useful explanation of a failure: missing bytes are
/// reported as truncation; otherwise, when the message carries a checksum
/// that does not match, corruption (a checksum mismatch) explains the
/// structural error better than the error itself.
fn explain(e: DecodeError, bytes: &[u8], verify: bool) -> DecodeError {
    match e {
        DecodeError::Truncated { .. } | DecodeError::ChecksumMismatch { .. } => e,
        DecodeError::BufferTotal {
            declared,
            available,
        } if declared > available as u64 => DecodeError::Truncated {
            what: "column buffers",
            offset: bytes.len().saturating_sub(available),
            needed: declared,
            available,
        },
        other => {
            if verify
                && let Ok((header, body)) = crate::format::read_header(bytes)
                && let Some(stored) = header.checksum
                && let Err(mismatch) = crate::format::verify_checksum(body, stored)
            {
                return mismatch;
            }
            other
        }
    }
}

fn decode_inner(
    bytes: &[u8],
    options: &DecodeOptions,
    scratch: &mut DecodeScratch,
    batch: &mut ColumnarBatch,
) -> Result<(), DecodeError> {
    let mut descs = std::mem::take(&mut scratch.descs);
    let result = decode_with_descs(bytes, options, scratch, &mut descs, batch);
    scratch.descs = descs;
    result.map_err(|e| explain(e, bytes, options.verify_checksum))
}

fn decode_with_descs(
    bytes: &[u8],
    options: &DecodeOptions,
    scratch: &mut DecodeScratch,
    descs: &mut Vec<Descriptor>,
    batch: &mut ColumnarBatch,
) -> Result<(), DecodeError> {
    let (header, body, buffers_start) = read_layout_unverified(bytes, descs)?;
    let rows = header.num_rows as usize;
    let rows64 = u64::from(header.num_rows);

    // The checksum is computed while decoding, each column's buffers just
    // before they are copied (so they are read from memory once).
    let mut hasher = match header.checksum {
        Some(_) if options.verify_checksum => {
            let mut h = Xxh3Default::new();
            h.update(body.get(..buffers_start).unwrap_or_default());
            Some(h)
        }
        _ => None,
    };

    let mut used = descs
        .iter()
        .fold(0u64, |acc, d| acc.saturating_add(d.decoded_size(rows64)));
    if used > options.max_decoded_bytes {
        return Err(DecodeError::LimitExceeded {
            needed: used,
            limit: options.max_decoded_bytes,
        });
    }

    let (schema, columns, num_rows) = batch.raw_parts_mut();
    *num_rows = 0;
    let fields = schema.fields_mut();
    fields.truncate(descs.len());
    columns.truncate(descs.len());

    let mut r = Reader::new(body, buffers_start);
    for (c, d) in descs.iter().enumerate() {
        let (name_start, name_len) = d.name;
        let name = body
            .get(name_start..name_start + name_len)
            .and_then(|n| std::str::from_utf8(n).ok())
            .ok_or(DecodeError::InvalidName { column: c })?;
        match fields.get_mut(c) {
            Some(f) => f.set(name, d.data_type, d.nullable()),
            None => fields.push(Field::new(name, d.data_type, d.nullable())),
        }

        let mut bufs: [&[u8]; MAX_BUFFERS] = [&[]; MAX_BUFFERS];
        for (slot, &len) in bufs
            .iter_mut()
            .zip(d.buffer_lens.iter())
            .take(d.buffer_count)
        {
            // The lengths add up to the remaining input, so each fits.
            let len = usize::try_from(len).map_err(|_| DecodeError::BufferTotal {
                declared: len,
                available: r.remaining(),
            })?;
            *slot = r.take(len, "column buffer")?;
            if let Some(h) = &mut hasher {
                h.update(slot);
            }
        }

        if columns.len() <= c {
            columns.push(crate::model::Column::new_empty(d.data_type));
        }
        let Some(col) = columns.get_mut(c) else {
            return Err(DecodeError::InvalidDescriptor {
                column: c,
                reason: "internal: column slot missing",
            });
        };
        let (values, validity, null_count) = col.parts_mut();

        let (validity_bytes, value_bufs): (Option<&[u8]>, &[&[u8]]) = match bufs.split_first() {
            Some((v, rest)) if d.has_validity() => (Some(*v), rest),
            _ => (None, bufs.as_slice()),
        };
        match validity_bytes {
            Some(vb) => {
                if !bits::padding_is_zero(vb, rows) {
                    return Err(DecodeError::NonZeroPadding {
                        column: c,
                        buffer: "validity",
                    });
                }
                let nulls = rows - bits::count_set(vb, rows);
                if nulls != d.null_count as usize {
                    return Err(DecodeError::NullCount {
                        column: c,
                        declared: u64::from(d.null_count),
                        actual: nulls as u64,
                    });
                }
                let bm = validity.get_or_insert_with(Bitmap::new);
                bm.bytes_mut().clear();
                bm.bytes_mut().extend_from_slice(vb);
                bm.set_len(rows);
            }
            None => *validity = None,
        }
        *null_count = d.null_count as usize;

        if values.data_type() != d.data_type {
            *values = ColumnValues::new_empty(d.data_type);
        }
        let b = |i: usize| value_bufs.get(i).copied().unwrap_or_default();
        match (d.encoding, values) {
            (Encoding::Plain, ColumnValues::Bool(v)) => {
                if !bits::padding_is_zero(b(0), rows) {
                    return Err(DecodeError::NonZeroPadding {
                        column: c,
                        buffer: "values",
                    });
                }
                bits::unpack_bools(b(0), rows, v);
            }
            (Encoding::Plain, ColumnValues::I32(v) | ColumnValues::Date32(v)) => get_i32s(b(0), v),
            (Encoding::Plain, ColumnValues::I64(v) | ColumnValues::TimestampTzMicros(v)) => {
                get_i64s(b(0), v);
            }
            (Encoding::Plain, ColumnValues::F32(v)) => get_f32s(b(0), v),
            (Encoding::Plain, ColumnValues::F64(v)) => get_f64s(b(0), v),
            (Encoding::Plain, ColumnValues::Utf8(v) | ColumnValues::JsonbText(v)) => {
                let text = utf8(c, "data", b(1))?;
                let (offsets, data) = v.parts_mut();
                read_offsets(c, "offsets", b(0), text.len(), offsets)?;
                check_boundaries(c, "offsets", text, offsets)?;
                data.clear();
                data.push_str(text);
            }
            (Encoding::Plain, ColumnValues::Binary(v)) => {
                let (offsets, data) = v.parts_mut();
                read_offsets(c, "offsets", b(0), b(1).len(), offsets)?;
                data.clear();
                data.extend_from_slice(b(1));
            }
            (Encoding::DictUtf8, ColumnValues::Utf8(v) | ColumnValues::JsonbText(v)) => {
                let dict = DictBuffers {
                    offsets: b(0),
                    data: b(1),
                    indices: b(2),
                    width: d.param,
                };
                decode_dict(
                    c,
                    rows,
                    dict,
                    validity_bytes,
                    v,
                    scratch,
                    &mut used,
                    options,
                )?;
            }
            (
                Encoding::DeltaVarintI64,
                ColumnValues::I64(v) | ColumnValues::TimestampTzMicros(v),
            ) => decode_delta(c, b(0), rows, v)?,
            (encoding, values) => {
                return Err(DecodeError::EncodingNotAllowed {
                    column: c,
                    encoding,
                    data_type: values.data_type(),
                });
            }
        }
    }
    if let (Some(h), Some(stored)) = (hasher, header.checksum) {
        let computed = h.digest();
        if computed != stored {
            return Err(DecodeError::ChecksumMismatch { stored, computed });
        }
    }
    *num_rows = rows;
    Ok(())
}

/// Replaces `out` with the little-endian values in `src` (whose length the
/// descriptor check made a multiple of the width) with one `memcpy`. The
/// destination only needs initializing when its length changes: a fresh
/// vector comes zeroed from the allocator (`calloc`), a reused one of the
/// same length is overwritten in place.
#[cfg(target_endian = "little")]
#[inline]
fn copy_le<T: bytemuck::Pod>(src: &[u8], out: &mut Vec<T>) {
    let n = src.len() / std::mem::size_of::<T>();
    if out.len() != n {
        if out.capacity() < n {
            *out = vec![T::zeroed(); n];
        } else {
            out.resize(n, T::zeroed());
        }
    }
    let dst: &mut [u8] = bytemuck::cast_slice_mut(out.as_mut_slice());
    if let Some(src) = src.get(..dst.len()) {
        dst.copy_from_slice(src);
    }
}

macro_rules! get_le_slice {
    ($name:ident, $t:ty, $n:literal) => {
        /// Replaces `out` with the little-endian values in `src`.
        #[inline]
        fn $name(src: &[u8], out: &mut Vec<$t>) {
            #[cfg(target_endian = "little")]
            copy_le(src, out);
            #[cfg(not(target_endian = "little"))]
            {
                let (chunks, _) = src.as_chunks::<$n>();
                out.clear();
                out.extend(chunks.iter().map(|c| <$t>::from_le_bytes(*c)));
            }
        }
    };
}

get_le_slice!(get_i32s, i32, 4);
get_le_slice!(get_i64s, i64, 8);
get_le_slice!(get_f32s, f32, 4);
get_le_slice!(get_f64s, f64, 8);
get_le_slice!(get_u32s, u32, 4);

fn utf8<'a>(column: usize, buffer: &'static str, b: &'a [u8]) -> Result<&'a str, DecodeError> {
    std::str::from_utf8(b).map_err(|e| DecodeError::InvalidUtf8 {
        column,
        buffer,
        valid_up_to: e.valid_up_to(),
    })
}

/// Reads `(n + 1)` little-endian u32 offsets into `out` and checks them:
/// first 0, non-decreasing, last equal to `data_len`.
fn read_offsets(
    column: usize,
    buffer: &'static str,
    src: &[u8],
    data_len: usize,
    out: &mut Vec<u32>,
) -> Result<(), DecodeError> {
    get_u32s(src, out);
    // Branch-free scan (vectorizes); the slow path below finds the culprit.
    let monotone = out
        .iter()
        .zip(out.iter().skip(1))
        .fold(true, |acc, (a, b)| acc & (a <= b));
    let first_ok = out.first() == Some(&0);
    let last_ok = out.last().is_some_and(|&l| l as usize == data_len);
    if monotone && first_ok && last_ok {
        return Ok(());
    }
    let err = |index, reason| DecodeError::InvalidOffsets {
        column,
        buffer,
        index,
        reason,
    };
    if !first_ok {
        return Err(err(0, "first offset must be 0"));
    }
    if let Some(i) = out.iter().zip(out.iter().skip(1)).position(|(a, b)| a > b) {
        return Err(err(i + 1, "offsets must be non-decreasing"));
    }
    Err(err(
        out.len().saturating_sub(1),
        "last offset must equal the data length",
    ))
}

fn check_boundaries(
    column: usize,
    buffer: &'static str,
    text: &str,
    offsets: &[u32],
) -> Result<(), DecodeError> {
    if text.is_ascii() {
        return Ok(());
    }
    match offsets
        .iter()
        .position(|&o| !text.is_char_boundary(o as usize))
    {
        None => Ok(()),
        Some(index) => Err(DecodeError::InvalidOffsets {
            column,
            buffer,
            index,
            reason: "offset is not on a UTF-8 character boundary",
        }),
    }
}

#[derive(Clone, Copy)]
struct DictBuffers<'a> {
    offsets: &'a [u8],
    data: &'a [u8],
    indices: &'a [u8],
    width: u8,
}

#[expect(
    clippy::too_many_arguments,
    reason = "internal helper of one call site"
)]
fn decode_dict(
    column: usize,
    rows: usize,
    dict: DictBuffers<'_>,
    validity: Option<&[u8]>,
    out: &mut crate::model::Utf8Values,
    scratch: &mut DecodeScratch,
    used: &mut u64,
    options: &DecodeOptions,
) -> Result<(), DecodeError> {
    let text = utf8(column, "dict_data", dict.data)?;
    read_offsets(
        column,
        "dict_offsets",
        dict.offsets,
        text.len(),
        &mut scratch.dict_offsets,
    )?;
    check_boundaries(column, "dict_offsets", text, &scratch.dict_offsets)?;
    let entries = scratch.dict_offsets.len().saturating_sub(1);

    // Entries must be distinct.
    scratch.interner.clear();
    for (entry, (s, e)) in offset_pairs(&scratch.dict_offsets).enumerate() {
        let bytes = dict.data.get(s..e).unwrap_or_default();
        match scratch.interner.intern(bytes) {
            Ok((_, true)) => {}
            Ok((_, false)) => return Err(DecodeError::DictDuplicate { column, entry }),
            Err(_) => return Err(DecodeError::DataTooLarge { column }),
        }
    }

    let indices = &mut scratch.indices;
    indices.clear();
    match dict.width {
        1 => indices.extend(dict.indices.iter().map(|&b| u32::from(b))),
        2 => indices.extend(
            dict.indices
                .as_chunks::<2>()
                .0
                .iter()
                .map(|c| u32::from(u16::from_le_bytes(*c))),
        ),
        _ => get_u32s(dict.indices, indices),
    }

    // Check indices (range, first-appearance order, zero for nulls) and
    // size the expansion exactly before allocating it.
    let offs = &scratch.dict_offsets;
    let entry_range = |idx: u32| {
        let i = idx as usize;
        let s = offs.get(i).copied().unwrap_or(0) as usize;
        let e = offs.get(i + 1).copied().unwrap_or(0) as usize;
        (s, e)
    };
    let mut seen: u32 = 0;
    for (row, &idx) in indices.iter().enumerate() {
        if validity.is_some_and(|v| !bits::get_bit(v, row)) {
            if idx != 0 {
                return Err(DecodeError::DictIndex {
                    column,
                    row,
                    index: idx,
                    reason: "null rows must use index 0",
                });
            }
            continue;
        }
        if idx >= seen {
            if idx == seen && (idx as usize) < entries {
                seen += 1;
            } else {
                return Err(DecodeError::DictIndex {
                    column,
                    row,
                    index: idx,
                    reason: if idx as usize >= entries {
                        "index out of range"
                    } else {
                        "entries are not in first-appearance order"
                    },
                });
            }
        }
    }
    if seen as usize != entries {
        return Err(DecodeError::DictUnused {
            column,
            entries,
            used: seen as usize,
        });
    }
    // Every index is now known to be in range (null rows use 0, which is
    // in range whenever the dictionary is not empty).
    let entry_len = |idx: u32| {
        let (s, e) = entry_range(idx);
        e.saturating_sub(s) as u64
    };
    let total: u64 = match validity {
        None => indices.iter().map(|&i| entry_len(i)).sum(),
        Some(v) => indices
            .iter()
            .enumerate()
            .filter(|&(row, _)| bits::get_bit(v, row))
            .map(|(_, &i)| entry_len(i))
            .sum(),
    };
    if total > u64::from(u32::MAX) {
        return Err(DecodeError::DataTooLarge { column });
    }
    *used = used.saturating_add(total);
    if *used > options.max_decoded_bytes {
        return Err(DecodeError::LimitExceeded {
            needed: *used,
            limit: options.max_decoded_bytes,
        });
    }

    // Expand. Entries of up to 8 bytes are copied with one 8-byte store
    // from a zero-padded copy of the dictionary into an output with 8 bytes
    // of slack, which is truncated at the end.
    let padded = &mut scratch.dict_padded;
    padded.clear();
    padded.extend_from_slice(dict.data);
    padded.extend_from_slice(&[0; 8]);
    let total = total as usize;
    let (out_offsets, out_data) = out.parts_mut();
    let mut bytes = std::mem::take(out_data).into_bytes();
    bytes.clear();
    bytes.resize(total + 8, 0);
    out_offsets.clear();
    out_offsets.reserve(rows + 1);
    out_offsets.push(0);
    let mut pos = 0usize;
    for (row, &idx) in indices.iter().enumerate() {
        if validity.is_none_or(|v| bits::get_bit(v, row)) {
            let (s, e) = entry_range(idx);
            let len = e.saturating_sub(s);
            if len <= 8 {
                // Fixed-size arrays: one 8-byte load and store, no memcpy call.
                if let (Some(dst), Some(src)) = (
                    bytes.get_mut(pos..).and_then(|b| b.first_chunk_mut::<8>()),
                    padded.get(s..).and_then(|b| b.first_chunk::<8>()),
                ) {
                    *dst = *src;
                }
            } else if let (Some(dst), Some(src)) = (bytes.get_mut(pos..pos + len), padded.get(s..e))
            {
                dst.copy_from_slice(src);
            }
            pos += len;
        }
        // pos <= total <= u32::MAX was checked above.
        out_offsets.push(pos as u32);
    }
    bytes.truncate(total);
    // Concatenated whole entries of a valid UTF-8 dictionary are valid UTF-8;
    // checking again is cheap and keeps this free of `unsafe`.
    *out_data = String::from_utf8(bytes).map_err(|e| DecodeError::InvalidUtf8 {
        column,
        buffer: "dict_data",
        valid_up_to: e.utf8_error().valid_up_to(),
    })?;
    Ok(())
}

fn decode_delta(
    column: usize,
    buf: &[u8],
    rows: usize,
    out: &mut Vec<i64>,
) -> Result<(), DecodeError> {
    out.clear();
    out.reserve(rows);
    let mut rest = buf;
    let mut prev = 0i64;
    for _ in 0..rows {
        let (v, n) = varint::read(rest).map_err(|reason| DecodeError::Varint {
            column,
            offset: buf.len() - rest.len(),
            reason,
        })?;
        rest = rest.get(n..).unwrap_or_default();
        prev = prev.wrapping_add(varint::unzigzag(v));
        out.push(prev);
    }
    if !rest.is_empty() {
        return Err(DecodeError::Varint {
            column,
            offset: buf.len() - rest.len(),
            reason: "bytes left after the last value",
        });
    }
    Ok(())
}

// Wire decompression before decoding (the codecs are in compression.rs).
impl Decoder {
    /// Decodes wire bytes (a raw message, a zstd frame or a gzip member)
    /// into a new batch, refusing to inflate past `max_uncompressed_len`.
    ///
    /// # Errors
    /// [`DecodeError::UncompressedTooLarge`], [`DecodeError::Decompress`],
    /// [`DecodeError::CompressionUnavailable`],
    /// [`DecodeError::UnknownWireFormat`], or any error of
    /// [`Decoder::decode`].
    pub fn decode_compressed(
        &mut self,
        wire: &[u8],
        max_uncompressed_len: usize,
    ) -> Result<ColumnarBatch, DecodeError> {
        let mut batch = ColumnarBatch::default();
        self.decode_compressed_into(wire, max_uncompressed_len, &mut batch)?;
        Ok(batch)
    }

    /// As [`Decoder::decode_compressed`], into an existing batch.
    ///
    /// # Errors
    /// As [`Decoder::decode_compressed`]; on error `batch` is left empty.
    pub fn decode_compressed_into(
        &mut self,
        wire: &[u8],
        max_uncompressed_len: usize,
        batch: &mut ColumnarBatch,
    ) -> Result<(), DecodeError> {
        let raw = match decompress(wire, max_uncompressed_len, &mut self.decompress_state) {
            Ok(raw) => raw,
            Err(e) => {
                batch.reset();
                return Err(e);
            }
        };
        decode_message(raw, &self.options, &mut self.scratch, batch)
    }

    /// Decompresses wire bytes into the decoder's buffer and returns the
    /// raw message (not yet validated).
    ///
    /// # Errors
    /// As [`Decoder::decode_compressed`], for the decompression step.
    pub fn decompress<'a>(
        &'a mut self,
        wire: &'a [u8],
        max_uncompressed_len: usize,
    ) -> Result<&'a [u8], DecodeError> {
        decompress(wire, max_uncompressed_len, &mut self.decompress_state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;

    #[test]
    fn fallback_arm_error_names_the_encoding() {
        let e = DecodeError::EncodingNotAllowed {
            column: 0,
            encoding: Encoding::DictUtf8,
            data_type: DataType::I64,
        };
        assert!(e.to_string().contains("dict_utf8"));
    }
}

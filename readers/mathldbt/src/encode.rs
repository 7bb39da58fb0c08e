//! The encoder: [`Encoder`] (reusable workspace) and [`encode`] (one shot).
//!
//! Layout is written in one pass: header, then every column descriptor with
//! zeroed buffer lengths, then every column's buffers, patching each
//! descriptor's lengths (and the dictionary index width) as its buffers are
//! written, then the optional checksum trailer. Fixed-width values are
//! copied in bulk (`bytemuck` casts on little-endian targets).
//!
//! Output is a pure function of the batch and the options: dictionaries are
//! in first-appearance order, index widths are minimal, padding bits are
//! zero, and nothing depends on addresses, hash seeds or time.

use crate::bits;
use crate::compression::{Compression, compress};
use crate::dict::Interner;
use crate::error::EncodeError;
use crate::format::{
    COLUMN_HAS_VALIDITY, COLUMN_NULLABLE, FLAG_CHECKSUM, MAGIC, MAX_BUFFERS, VERSION,
    dict_index_width,
};
use crate::model::ColumnarBatch;
use crate::types::{DataType, Encoding};
use crate::varint;
use crate::view::{BitmapView, ColumnValuesView, ColumnView, ColumnarBatchView, FieldView};
use xxhash_rust::xxh3::Xxh3Default;

/// Which encodings the encoder may choose, and whether to add a checksum.
///
/// Encodings are chosen per column from these switches alone:
///
/// * `Utf8` / `JsonbText` use [`Encoding::DictUtf8`] when `dict_utf8` is on;
/// * `I64` / `TimestampTzMicros` without nulls use
///   [`Encoding::DeltaVarintI64`] when `delta_varint_i64` is on;
/// * everything else uses [`Encoding::Plain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct EncodeOptions {
    /// Dictionary-encode text columns.
    pub dict_utf8: bool,
    /// Delta-varint-encode null-free 64-bit integer and timestamp columns.
    pub delta_varint_i64: bool,
    /// Append an XXH3-64 checksum trailer (default off). Worth it where
    /// messages are stored or cross unreliable links; compressed wire
    /// frames carry their own (zstd content checksum, gzip CRC-32).
    pub checksum: bool,
}

impl Default for EncodeOptions {
    /// Plain encodings, no checksum.
    fn default() -> Self {
        Self::plain()
    }
}

impl EncodeOptions {
    /// Plain encodings everywhere, no checksum.
    #[must_use]
    pub const fn plain() -> Self {
        Self {
            dict_utf8: false,
            delta_varint_i64: false,
            checksum: false,
        }
    }

    /// `DictUtf8` and `DeltaVarintI64` wherever allowed, no checksum.
    #[must_use]
    pub const fn dict_delta() -> Self {
        Self {
            dict_utf8: true,
            delta_varint_i64: true,
            checksum: false,
        }
    }

    /// Sets `dict_utf8`.
    #[must_use]
    pub const fn with_dict_utf8(mut self, on: bool) -> Self {
        self.dict_utf8 = on;
        self
    }

    /// Sets `delta_varint_i64`.
    #[must_use]
    pub const fn with_delta_varint_i64(mut self, on: bool) -> Self {
        self.delta_varint_i64 = on;
        self
    }

    /// Sets `checksum`.
    #[must_use]
    pub const fn with_checksum(mut self, on: bool) -> Self {
        self.checksum = on;
        self
    }

    /// The encoding these options choose for a column.
    #[must_use]
    pub const fn encoding_for(&self, data_type: DataType, null_count: usize) -> Encoding {
        match data_type {
            DataType::Utf8 | DataType::JsonbText if self.dict_utf8 => Encoding::DictUtf8,
            DataType::I64 | DataType::TimestampTzMicros
                if self.delta_varint_i64 && null_count == 0 =>
            {
                Encoding::DeltaVarintI64
            }
            _ => Encoding::Plain,
        }
    }
}

/// Something the encoder can read columns from.
pub(crate) trait Source {
    fn num_rows(&self) -> usize;
    fn num_columns(&self) -> usize;
    fn columns(&self) -> impl Iterator<Item = (FieldView<'_>, ColumnView<'_>)>;
}

impl Source for ColumnarBatch {
    fn num_rows(&self) -> usize {
        ColumnarBatch::num_rows(self)
    }
    fn num_columns(&self) -> usize {
        ColumnarBatch::num_columns(self)
    }
    fn columns(&self) -> impl Iterator<Item = (FieldView<'_>, ColumnView<'_>)> {
        self.schema()
            .fields()
            .iter()
            .map(crate::model::Field::as_view)
            .zip(
                ColumnarBatch::columns(self)
                    .iter()
                    .map(crate::Column::as_view),
            )
    }
}

impl Source for ColumnarBatchView<'_> {
    fn num_rows(&self) -> usize {
        ColumnarBatchView::num_rows(self)
    }
    fn num_columns(&self) -> usize {
        ColumnarBatchView::num_columns(self)
    }
    fn columns(&self) -> impl Iterator<Item = (FieldView<'_>, ColumnView<'_>)> {
        self.fields()
            .iter()
            .copied()
            .zip(ColumnarBatchView::columns(self).iter().copied())
    }
}

/// Reusable scratch space of an encoder.
#[derive(Debug, Default)]
pub(crate) struct EncodeScratch {
    plans: Vec<Plan>,
    /// Pre-encoded `DictUtf8` buffers of all columns.
    arena: Vec<u8>,
    interner: Interner,
    indices: Vec<u32>,
}

/// Encodes batches, reusing its buffers: once warm (after a first call with
/// a batch of similar shape and size) encoding does not allocate.
///
/// ```
/// use mathldbt::{Encoder, EncodeOptions, Decoder, DecodeOptions, fixture};
///
/// let batch = fixture::bars(100);
/// let mut encoder = Encoder::new(EncodeOptions::dict_delta());
/// let mut decoder = Decoder::new(DecodeOptions::default());
/// let bytes = encoder.encode(&batch)?;
/// assert_eq!(decoder.decode(bytes)?, batch);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Encoder {
    options: EncodeOptions,
    out: Vec<u8>,
    scratch: EncodeScratch,
    compress: crate::compression::CompressState,
}

impl Encoder {
    /// An encoder with `options`.
    #[must_use]
    pub fn new(options: EncodeOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &EncodeOptions {
        &self.options
    }

    /// Replaces the options.
    pub fn set_options(&mut self, options: EncodeOptions) {
        self.options = options;
    }

    /// Encodes `batch` into the encoder's buffer and returns the message.
    ///
    /// # Errors
    /// When the batch exceeds a format limit (see [`EncodeError`]).
    pub fn encode(&mut self, batch: &ColumnarBatch) -> Result<&[u8], EncodeError> {
        self.out.clear();
        encode_source(batch, &self.options, &mut self.scratch, &mut self.out)?;
        Ok(&self.out)
    }

    /// Encodes a borrowed view into the encoder's buffer.
    ///
    /// # Errors
    /// As [`Encoder::encode`].
    pub fn encode_view(&mut self, view: &ColumnarBatchView<'_>) -> Result<&[u8], EncodeError> {
        self.out.clear();
        encode_source(view, &self.options, &mut self.scratch, &mut self.out)?;
        Ok(&self.out)
    }

    /// Appends the encoding of `batch` to `out`.
    ///
    /// # Errors
    /// As [`Encoder::encode`]; `out` is restored to its length on entry.
    pub fn encode_to(
        &mut self,
        batch: &ColumnarBatch,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        encode_source(batch, &self.options, &mut self.scratch, out).inspect_err(|_| {
            out.truncate(start);
        })
    }

    /// Appends the encoding of a borrowed view to `out`.
    ///
    /// # Errors
    /// As [`Encoder::encode_to`].
    pub fn encode_view_to(
        &mut self,
        view: &ColumnarBatchView<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        encode_source(view, &self.options, &mut self.scratch, out).inspect_err(|_| {
            out.truncate(start);
        })
    }

    /// Encodes into the internal buffer and returns it along with the
    /// compression state (for `encode_compressed`).
    pub(crate) fn encode_parts<S: Source>(
        &mut self,
        src: &S,
    ) -> Result<(&[u8], &mut crate::compression::CompressState), EncodeError> {
        self.out.clear();
        encode_source(src, &self.options, &mut self.scratch, &mut self.out)?;
        Ok((&self.out, &mut self.compress))
    }
}

/// Encodes `batch` with `options` into a new vector.
///
/// # Errors
/// When the batch exceeds a format limit (see [`EncodeError`]).
pub fn encode(batch: &ColumnarBatch, options: &EncodeOptions) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    encode_source(batch, options, &mut EncodeScratch::default(), &mut out)?;
    Ok(out)
}

#[inline]
fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[inline]
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[inline]
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

macro_rules! put_le_slice {
    ($name:ident, $t:ty) => {
        /// Appends values little-endian.
        #[inline]
        #[cfg_attr(
            target_endian = "little",
            allow(dead_code, reason = "little-endian targets copy the bytes directly")
        )]
        fn $name(out: &mut Vec<u8>, vals: &[$t]) {
            #[cfg(target_endian = "little")]
            out.extend_from_slice(bytemuck::cast_slice::<$t, u8>(vals));
            #[cfg(not(target_endian = "little"))]
            {
                out.reserve(vals.len() * std::mem::size_of::<$t>());
                for v in vals {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    };
}

put_le_slice!(put_i32s, i32);
put_le_slice!(put_i64s, i64);
put_le_slice!(put_f32s, f32);
put_le_slice!(put_f64s, f64);
put_le_slice!(put_u32s, u32);

/// Appends offsets rebased so the first is 0.
fn put_rebased_offsets(out: &mut Vec<u8>, offsets: &[u32]) {
    let base = offsets.first().copied().unwrap_or(0);
    if base == 0 {
        put_u32s(out, offsets);
    } else {
        out.reserve(offsets.len() * 4);
        for &o in offsets {
            out.extend_from_slice(&(o - base).to_le_bytes());
        }
    }
}

/// The successive zigzag deltas of `values` (the first from 0).
fn deltas(values: &[i64]) -> impl Iterator<Item = u64> + '_ {
    let mut prev = 0i64;
    values.iter().map(move |&x| {
        let d = varint::zigzag(x.wrapping_sub(prev));
        prev = x;
        d
    })
}

/// Length of the `delta_varint_i64` encoding of `values`.
fn delta_varints_len(values: &[i64]) -> usize {
    deltas(values).map(varint::encoded_len).sum()
}

/// Appends the `delta_varint_i64` encoding of `values`: sizes the output
/// exactly, then writes each varint with one 8-byte store.
fn put_delta_varints(out: &mut Vec<u8>, values: &[i64]) {
    let total = delta_varints_len(values);
    let start = out.len();
    // 8 bytes of slack for the last 8-byte store; truncated below.
    out.resize(start + total + 8, 0);
    let buf = out.as_mut_slice();
    let mut pos = start;
    for d in deltas(values) {
        pos = varint::write_at(buf, pos, d);
    }
    out.truncate(start + total);
}

fn put_validity(out: &mut Vec<u8>, v: BitmapView<'_>) {
    let bytes = v.as_bytes();
    let Some((&last, head)) = bytes.split_last() else {
        return;
    };
    out.extend_from_slice(head);
    out.push(last & bits::last_byte_mask(v.len()));
}

/// How one column will be written, decided before anything is written so
/// that the descriptors (which precede the buffers) are final and the
/// checksum can be computed in one streaming pass while buffers are hot in
/// cache.
#[derive(Clone, Copy, Debug)]
struct Plan {
    encoding: Encoding,
    /// `DictUtf8` index width, else 0.
    param: u8,
    lens: [u64; MAX_BUFFERS],
    count: usize,
    /// Byte range of this column's pre-encoded buffers in the arena
    /// (`DictUtf8` only).
    arena: (usize, usize),
}

/// Appends to the output and, when a checksum is wanted, feeds every byte
/// to the hasher right after (or, for large copies, right before) it is
/// written, in 64 KiB steps so the data is still in cache.
struct Sink<'a> {
    out: &'a mut Vec<u8>,
    hasher: Option<Xxh3Default>,
}

const HASH_STEP: usize = 64 * 1024;

impl Sink<'_> {
    /// Copies `bytes`.
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        match &mut self.hasher {
            None => self.out.extend_from_slice(bytes),
            Some(h) => {
                for chunk in bytes.chunks(HASH_STEP) {
                    h.update(chunk);
                    self.out.extend_from_slice(chunk);
                }
            }
        }
    }

    /// Lets `f` append, then hashes what it appended.
    #[inline]
    fn write_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let mark = self.out.len();
        f(self.out);
        if let Some(h) = &mut self.hasher {
            h.update(self.out.get(mark..).unwrap_or_default());
        }
    }
}

macro_rules! put_fixed {
    ($sink:expr, $put:ident, $vals:expr) => {{
        #[cfg(target_endian = "little")]
        $sink.put(bytemuck::cast_slice($vals));
        #[cfg(not(target_endian = "little"))]
        $sink.write_with(|out| $put(out, $vals));
    }};
}

fn encode_source<S: Source + ?Sized>(
    src: &S,
    options: &EncodeOptions,
    scratch: &mut EncodeScratch,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let start = out.len();
    let rows = src.num_rows();
    let rows32 = u32::try_from(rows).map_err(|_| EncodeError::TooManyRows { rows })?;
    let ncols = src.num_columns();
    let ncols32 =
        u32::try_from(ncols).map_err(|_| EncodeError::TooManyColumns { columns: ncols })?;
    let rows64 = rows as u64;
    let bitmap_len = rows64.div_ceil(8);

    // Plan every column; pre-encode dictionaries into the arena.
    scratch.plans.clear();
    scratch.arena.clear();
    for (i, (field, col)) in src.columns().enumerate() {
        if u16::try_from(field.name.len()).is_err() {
            return Err(EncodeError::NameTooLong {
                column: i,
                len: field.name.len(),
            });
        }
        let encoding = options.encoding_for(field.data_type, col.null_count());
        let mut plan = Plan {
            encoding,
            param: 0,
            lens: [0; MAX_BUFFERS],
            count: 0,
            arena: (0, 0),
        };
        let mut push = |len: u64| {
            if let Some(slot) = plan.lens.get_mut(plan.count) {
                *slot = len;
            }
            plan.count += 1;
        };
        if col.null_count() > 0 {
            push(bitmap_len);
        }
        match (encoding, col.values()) {
            (Encoding::DictUtf8, ColumnValuesView::Utf8(v) | ColumnValuesView::JsonbText(v)) => {
                let width = encode_dict(i, &col, v, scratch)?;
                let arena = &mut scratch.arena;
                let a0 = arena.len();
                put_u32s(arena, scratch.interner.offsets());
                let a1 = arena.len();
                arena.extend_from_slice(scratch.interner.data());
                let a2 = arena.len();
                put_indices(arena, &scratch.indices, width);
                let a3 = arena.len();
                push((a1 - a0) as u64);
                push((a2 - a1) as u64);
                push((a3 - a2) as u64);
                plan.param = width;
                plan.arena = (a0, a3);
            }
            (
                Encoding::DeltaVarintI64,
                ColumnValuesView::I64(v) | ColumnValuesView::TimestampTzMicros(v),
            ) => push(delta_varints_len(v) as u64),
            (_, ColumnValuesView::Bool(_)) => push(bitmap_len),
            (_, ColumnValuesView::Utf8(v) | ColumnValuesView::JsonbText(v)) => {
                check_u32(i, "data", v.value_data().len())?;
                push((rows64 + 1) * 4);
                push(v.value_data().len() as u64);
            }
            (_, ColumnValuesView::Binary(v)) => {
                check_u32(i, "data", v.value_data().len())?;
                push((rows64 + 1) * 4);
                push(v.value_data().len() as u64);
            }
            (_, values) => {
                let width = values.data_type().fixed_width().unwrap_or(0) as u64;
                push(rows64 * width);
            }
        }
        scratch.plans.push(plan);
    }

    // Header and descriptors, final.
    out.extend_from_slice(&MAGIC);
    put_u16(out, VERSION);
    put_u16(out, if options.checksum { FLAG_CHECKSUM } else { 0 });
    put_u32(out, rows32);
    put_u32(out, ncols32);
    for ((field, col), plan) in src.columns().zip(&scratch.plans) {
        // Checked above.
        put_u16(out, field.name.len() as u16);
        out.extend_from_slice(field.name.as_bytes());
        let mut flags = 0u8;
        if field.nullable {
            flags |= COLUMN_NULLABLE;
        }
        if col.null_count() > 0 {
            flags |= COLUMN_HAS_VALIDITY;
        }
        out.extend_from_slice(&[
            field.data_type.code(),
            plan.encoding.code(),
            flags,
            plan.param,
        ]);
        // null_count <= rows <= u32::MAX.
        put_u32(out, col.null_count() as u32);
        for len in plan.lens.iter().take(plan.count) {
            put_u64(out, *len);
        }
    }

    // Buffers, hashed as they are written.
    let mut sink = Sink {
        out,
        hasher: options.checksum.then(Xxh3Default::new),
    };
    if let Some(h) = &mut sink.hasher {
        h.update(sink.out.get(start..).unwrap_or_default());
    }
    for ((_, col), plan) in src.columns().zip(&scratch.plans) {
        if let Some(v) = col.validity() {
            sink.write_with(|out| put_validity(out, v));
        }
        match (plan.encoding, col.values()) {
            (Encoding::DictUtf8, _) => {
                sink.put(
                    scratch
                        .arena
                        .get(plan.arena.0..plan.arena.1)
                        .unwrap_or_default(),
                );
            }
            (
                Encoding::DeltaVarintI64,
                ColumnValuesView::I64(v) | ColumnValuesView::TimestampTzMicros(v),
            ) => sink.write_with(|out| put_delta_varints(out, v)),
            (_, ColumnValuesView::Bool(v)) => sink.write_with(|out| bits::pack_bools(v, out)),
            (_, ColumnValuesView::I32(v) | ColumnValuesView::Date32(v)) => {
                put_fixed!(sink, put_i32s, v);
            }
            (_, ColumnValuesView::I64(v) | ColumnValuesView::TimestampTzMicros(v)) => {
                put_fixed!(sink, put_i64s, v);
            }
            (_, ColumnValuesView::F32(v)) => put_fixed!(sink, put_f32s, v),
            (_, ColumnValuesView::F64(v)) => put_fixed!(sink, put_f64s, v),
            (_, ColumnValuesView::Utf8(v) | ColumnValuesView::JsonbText(v)) => {
                sink.write_with(|out| put_rebased_offsets(out, v.offsets()));
                sink.put(v.value_data().as_bytes());
            }
            (_, ColumnValuesView::Binary(v)) => {
                sink.write_with(|out| put_rebased_offsets(out, v.offsets()));
                sink.put(v.value_data());
            }
        }
    }
    if let Some(h) = sink.hasher.take() {
        put_u64(sink.out, h.digest());
    }
    Ok(())
}

fn check_u32(column: usize, what: &'static str, len: usize) -> Result<(), EncodeError> {
    if u32::try_from(len).is_ok() {
        Ok(())
    } else {
        Err(EncodeError::DataTooLarge { column, what })
    }
}

/// Builds the dictionary and per-row indices of a text column into the
/// scratch space; returns the index width.
fn encode_dict(
    column: usize,
    col: &ColumnView<'_>,
    values: crate::view::Utf8View<'_>,
    scratch: &mut EncodeScratch,
) -> Result<u8, EncodeError> {
    let full = |_| EncodeError::DataTooLarge {
        column,
        what: "dictionary data",
    };
    scratch.interner.clear();
    scratch.indices.clear();
    scratch.indices.reserve(values.len());
    // Byte slices: the view's offsets are known to be on char boundaries,
    // so there is no need for `str` slicing's boundary checks here.
    let data = values.data().as_bytes();
    let rows = crate::offsets::offset_pairs(values.offsets())
        .map(|(s, e)| data.get(s..e).unwrap_or_default());
    match col.validity() {
        None => {
            for s in rows {
                let (idx, _) = scratch.interner.intern(s).map_err(full)?;
                scratch.indices.push(idx);
            }
        }
        Some(validity) => {
            for (row, s) in rows.enumerate() {
                if validity.is_set(row) {
                    let (idx, _) = scratch.interner.intern(s).map_err(full)?;
                    scratch.indices.push(idx);
                } else {
                    scratch.indices.push(0);
                }
            }
        }
    }
    Ok(dict_index_width(scratch.interner.len()))
}

fn put_indices(out: &mut Vec<u8>, indices: &[u32], width: u8) {
    match width {
        1 => out.extend(indices.iter().map(|&i| i as u8)),
        2 => {
            out.reserve(indices.len() * 2);
            for &i in indices {
                out.extend_from_slice(&(i as u16).to_le_bytes());
            }
        }
        _ => put_u32s(out, indices),
    }
}

// Wire compression of the encoded message (the codecs are in compression.rs).
impl Encoder {
    /// Encodes `batch` and compresses the message as `compression`.
    /// Returns the wire bytes, held in the encoder.
    ///
    /// # Errors
    /// As [`Encoder::encode`], or [`EncodeError::Compress`].
    pub fn encode_compressed(
        &mut self,
        batch: &ColumnarBatch,
        compression: Compression,
    ) -> Result<&[u8], EncodeError> {
        let (raw, state) = self.encode_parts(batch)?;
        compress(raw, compression, state)
    }

    /// Encodes a borrowed view and compresses it as `compression`.
    ///
    /// # Errors
    /// As [`Encoder::encode_compressed`].
    pub fn encode_view_compressed(
        &mut self,
        view: &ColumnarBatchView<'_>,
        compression: Compression,
    ) -> Result<&[u8], EncodeError> {
        let (raw, state) = self.encode_parts(view)?;
        compress(raw, compression, state)
    }
}

//! # MATHLDBT v1: a columnar batch transport codec
//!
//! MATHLDBT ships a batch of rows between processes as one binary message:
//! a fixed header, one descriptor per column (name, type, encoding, null
//! count, buffer lengths), then each column's buffers (validity bitmap,
//! values). The format is specified byte by byte in `SPEC.md`, next to
//! this crate's `Cargo.toml`.
//!
//! * **Lossless and deterministic**: floats are carried bit-exactly, and the
//!   same batch with the same [`EncodeOptions`] always gives the same bytes.
//! * **Fast**: fixed-width columns are bulk little-endian copies; offsets
//!   are validated in one pass and UTF-8 once per buffer; [`Encoder`] and
//!   [`Decoder`] keep their buffers, and [`Decoder::decode_into`] reuses the
//!   target batch's, so warm repeated calls do not allocate.
//! * **Compact when asked**: opt-in [`Encoding::DictUtf8`] for text and
//!   [`Encoding::DeltaVarintI64`] for null-free 64-bit integers and
//!   timestamps; whole-message zstd or gzip ([`Compression`], features
//!   `compression-zstd` and `compression-gzip`).
//! * **Strict**: every length is checked against the input before anything
//!   is allocated; malformed input gives a [`DecodeError`], never a panic, a
//!   hang or an oversized allocation.
//!
//! ## Example
//!
//! ```
//! use mathldbt::{
//!     Bitmap, Column, ColumnValues, ColumnarBatch, DataType, Decoder, DecodeOptions,
//!     EncodeOptions, Encoder, Field, Schema, Utf8Values,
//! };
//!
//! let schema = Schema::new(vec![
//!     Field::new("ts", DataType::TimestampTzMicros, false),
//!     Field::new("symbol", DataType::Utf8, false),
//!     Field::new("close", DataType::F64, true),
//! ]);
//! let batch = ColumnarBatch::try_new(
//!     schema,
//!     vec![
//!         Column::new(ColumnValues::TimestampTzMicros(vec![1_000_000, 2_000_000, 3_000_000])),
//!         Column::new(ColumnValues::Utf8(["AAPL", "MSFT", "AAPL"].into_iter().collect())),
//!         Column::with_validity(
//!             ColumnValues::F64(vec![189.5, 0.0, 190.25]),
//!             Bitmap::from_bools(&[true, false, true]),
//!         )?,
//!     ],
//! )?;
//!
//! let mut encoder = Encoder::new(EncodeOptions::dict_delta());
//! let mut decoder = Decoder::new(DecodeOptions::default());
//! let bytes = encoder.encode(&batch)?.to_vec();
//!
//! let mut out = ColumnarBatch::default();
//! decoder.decode_into(&bytes, &mut out)?; // reuses `out`'s buffers next time
//! assert_eq!(out, batch);
//! assert!(out.column(2).unwrap().is_null(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Glossary
//!
//! * **message**: one encoded batch, starting with the magic `MATHLDBT`.
//! * **wire bytes**: a message, or a message compressed as one zstd frame or
//!   one gzip member.
//! * **descriptor**: the per-column metadata record that precedes the
//!   buffers.
//! * **buffer**: a contiguous byte range holding one part of a column
//!   (validity, values, offsets, data, dictionary, indices).
//! * **null slot**: the value position of a null row; plain encodings carry
//!   whatever placeholder it holds, `DictUtf8` decodes it as `""`.
//! * **warm**: an encoder, decoder or target batch that has already handled
//!   a batch at least as large, so its buffers need not grow.

#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        reason = "unit tests fail loudly"
    )
)]

mod bits;
mod compression;
mod decode;
mod dict;
mod encode;
mod error;
pub mod fixture;
pub mod format;
mod inspect;
mod model;
mod offsets;
mod types;
mod varint;
mod view;

#[cfg(feature = "baselines")]
pub mod baselines;
#[cfg(all(
    feature = "baselines",
    feature = "compression-zstd",
    feature = "compression-gzip"
))]
pub mod pipeline;

pub use compression::{Compression, GZIP_MAGIC, WireFormat, ZSTD_MAGIC, detect_wire_format};
pub use decode::{DecodeOptions, Decoder, decode};
pub use encode::{EncodeOptions, Encoder, encode};
pub use error::{BatchError, DecodeError, EncodeError};
pub use inspect::{BufferInfo, ColumnInfo, MessageInfo, inspect};
pub use model::{
    BinaryValues, Bitmap, Column, ColumnValues, ColumnarBatch, Field, Schema, Utf8Values,
};
pub use types::{DataType, Encoding};
pub use view::{
    BinaryView, BitmapView, ColumnValuesView, ColumnView, ColumnarBatchView, FieldView, Utf8View,
};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

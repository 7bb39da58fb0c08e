//! Error types: one per boundary (building a batch, encoding, decoding).
//!
//! Every variant carries what a caller needs to act on it: the column index,
//! the buffer, the byte offset, the limit that was hit.

use crate::types::{DataType, Encoding};

/// A batch, column or view could not be built because its parts disagree.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The schema and the column list differ in length.
    #[error("schema has {fields} fields but {columns} columns were given")]
    ColumnCount {
        /// Number of fields.
        fields: usize,
        /// Number of columns.
        columns: usize,
    },
    /// A column's type differs from its field's.
    #[error("column {column} ({name:?}): field type {field} but values of type {values}")]
    TypeMismatch {
        /// Column index.
        column: usize,
        /// Field name.
        name: String,
        /// Type declared by the field.
        field: DataType,
        /// Type of the values.
        values: DataType,
    },
    /// A column's length differs from the batch's row count.
    #[error("column {column} ({name:?}) has {actual} rows, expected {expected}")]
    LengthMismatch {
        /// Column index.
        column: usize,
        /// Field name.
        name: String,
        /// Batch row count.
        expected: usize,
        /// Column length.
        actual: usize,
    },
    /// A non-nullable field's column has nulls.
    #[error("column {column} ({name:?}) is not nullable but has {nulls} nulls")]
    NullsInNonNullable {
        /// Column index.
        column: usize,
        /// Field name.
        name: String,
        /// Number of nulls.
        nulls: usize,
    },
    /// A validity bitmap's length differs from the values'.
    #[error("validity bitmap has {bits} bits but there are {values} values")]
    ValidityLength {
        /// Column index, when known.
        column: Option<usize>,
        /// Number of values.
        values: usize,
        /// Number of bits.
        bits: usize,
    },
    /// A packed bitmap buffer has the wrong size.
    #[error("bitmap of {bits} bits needs {needed} bytes, got {actual}")]
    BitmapBytes {
        /// Number of bits.
        bits: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        actual: usize,
    },
    /// Variable-length offsets break a rule.
    #[error("invalid offsets at index {index}: {reason}")]
    InvalidOffsets {
        /// Index of the offending offset.
        index: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// Variable-length data would exceed the format's `u32::MAX` bytes.
    #[error("variable-length data exceeds u32::MAX bytes")]
    DataTooLarge,
}

/// A batch cannot be represented in MATHLDBT v1, or compression failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// More than `u32::MAX` rows.
    #[error("{rows} rows exceed the format limit of u32::MAX")]
    TooManyRows {
        /// Row count.
        rows: usize,
    },
    /// More than `u32::MAX` columns.
    #[error("{columns} columns exceed the format limit of u32::MAX")]
    TooManyColumns {
        /// Column count.
        columns: usize,
    },
    /// A field name longer than 65,535 bytes.
    #[error("column {column}: name of {len} bytes exceeds 65535")]
    NameTooLong {
        /// Column index.
        column: usize,
        /// Name length in bytes.
        len: usize,
    },
    /// A column's variable-length or dictionary data exceeds `u32::MAX` bytes.
    #[error("column {column}: {what} exceeds u32::MAX bytes")]
    DataTooLarge {
        /// Column index.
        column: usize,
        /// Which buffer.
        what: &'static str,
    },
    /// The compressor failed.
    #[error("{codec} compression failed: {message}")]
    Compress {
        /// `"zstd"` or `"gzip"`.
        codec: &'static str,
        /// The codec's message.
        message: String,
    },
}

/// Input is not a valid MATHLDBT v1 message (or wire frame).
///
/// Decoding never panics, never loops without consuming input, and never
/// allocates more than the input's size justifies (or, for dictionary
/// expansion, than [`crate::DecodeOptions::max_decoded_bytes`] allows).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ends before a structure or buffer it declares.
    #[error("truncated input: {what} at offset {offset} needs {needed} bytes, {available} left")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Byte offset in the message.
        offset: usize,
        /// Bytes needed.
        needed: u64,
        /// Bytes left.
        available: usize,
    },
    /// The first eight bytes are not `MATHLDBT`.
    #[error("bad magic {found:02x?}, expected \"MATHLDBT\"")]
    BadMagic {
        /// The bytes found.
        found: [u8; 8],
    },
    /// A version this decoder does not read.
    #[error("unsupported format version {version} (this decoder reads version 1)")]
    UnsupportedVersion {
        /// Version found.
        version: u16,
    },
    /// Reserved header flag bits are set.
    #[error("unknown header flags {flags:#06x}")]
    UnknownFlags {
        /// The flags field.
        flags: u16,
    },
    /// The trailer checksum does not match the message.
    #[error("checksum mismatch: stored {stored:#018x}, computed {computed:#018x}")]
    ChecksumMismatch {
        /// Checksum in the trailer.
        stored: u64,
        /// Checksum of the bytes.
        computed: u64,
    },
    /// More columns declared than the input could describe.
    #[error("{columns} columns declared but only {available} bytes of descriptors follow")]
    TooManyColumns {
        /// Declared column count.
        columns: u32,
        /// Bytes left after the header.
        available: usize,
    },
    /// A column name is not valid UTF-8.
    #[error("column {column}: name is not valid UTF-8")]
    InvalidName {
        /// Column index.
        column: usize,
    },
    /// Unknown type code.
    #[error("column {column}: unknown type code {code}")]
    UnknownType {
        /// Column index.
        column: usize,
        /// The code.
        code: u8,
    },
    /// Unknown encoding code.
    #[error("column {column}: unknown encoding code {code}")]
    UnknownEncoding {
        /// Column index.
        column: usize,
        /// The code.
        code: u8,
    },
    /// The encoding is not allowed for the column's type.
    #[error("column {column}: encoding {encoding} is not valid for type {data_type}")]
    EncodingNotAllowed {
        /// Column index.
        column: usize,
        /// The encoding.
        encoding: Encoding,
        /// The type.
        data_type: DataType,
    },
    /// Column flags or parameter byte break a rule.
    #[error("column {column}: invalid descriptor: {reason}")]
    InvalidDescriptor {
        /// Column index.
        column: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// The declared null count disagrees with the row count or the bitmap.
    #[error("column {column}: declared {declared} nulls, found {actual}")]
    NullCount {
        /// Column index.
        column: usize,
        /// Declared null count.
        declared: u64,
        /// Nulls in the bitmap (or the row-count bound).
        actual: u64,
    },
    /// A buffer's declared length is wrong for its column.
    #[error("column {column}: {buffer} buffer is {actual} bytes, expected {expected}")]
    BufferLength {
        /// Column index.
        column: usize,
        /// Which buffer.
        buffer: &'static str,
        /// Expected length.
        expected: u64,
        /// Declared length.
        actual: u64,
    },
    /// The buffers declared by the descriptors do not exactly fill the rest
    /// of the message.
    #[error("descriptors declare {declared} buffer bytes but {available} bytes follow")]
    BufferTotal {
        /// Sum of declared buffer lengths (saturated).
        declared: u64,
        /// Bytes after the descriptors.
        available: usize,
    },
    /// A bit-packed buffer has non-zero padding bits.
    #[error("column {column}: non-zero padding bits in the {buffer} buffer")]
    NonZeroPadding {
        /// Column index.
        column: usize,
        /// Which buffer.
        buffer: &'static str,
    },
    /// Offsets break a rule.
    #[error("column {column}: invalid {buffer} at index {index}: {reason}")]
    InvalidOffsets {
        /// Column index.
        column: usize,
        /// Which buffer.
        buffer: &'static str,
        /// Offending entry.
        index: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// Text data is not valid UTF-8.
    #[error("column {column}: {buffer} is not valid UTF-8 after byte {valid_up_to}")]
    InvalidUtf8 {
        /// Column index.
        column: usize,
        /// Which buffer.
        buffer: &'static str,
        /// Length of the valid prefix.
        valid_up_to: usize,
    },
    /// A dictionary index breaks a rule.
    #[error("column {column}: row {row}: dictionary index {index}: {reason}")]
    DictIndex {
        /// Column index.
        column: usize,
        /// Row.
        row: usize,
        /// The index.
        index: u32,
        /// The rule broken.
        reason: &'static str,
    },
    /// Dictionary entries are not all referenced.
    #[error("column {column}: dictionary has {entries} entries but rows use {used}")]
    DictUnused {
        /// Column index.
        column: usize,
        /// Entries.
        entries: usize,
        /// Entries used.
        used: usize,
    },
    /// Two dictionary entries are equal.
    #[error("column {column}: dictionary entry {entry} repeats an earlier entry")]
    DictDuplicate {
        /// Column index.
        column: usize,
        /// The later entry.
        entry: usize,
    },
    /// A varint is malformed.
    #[error("column {column}: varint at buffer offset {offset}: {reason}")]
    Varint {
        /// Column index.
        column: usize,
        /// Offset in the buffer.
        offset: usize,
        /// The rule broken.
        reason: &'static str,
    },
    /// Decoding would need more memory than allowed.
    #[error("decoded size {needed} bytes exceeds the limit of {limit}")]
    LimitExceeded {
        /// Bytes needed (saturated).
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// Expanded dictionary data exceeds `u32::MAX` bytes.
    #[error("column {column}: expanded dictionary data exceeds u32::MAX bytes")]
    DataTooLarge {
        /// Column index.
        column: usize,
    },
    /// The wire bytes are neither a MATHLDBT message nor a frame of a
    /// supported compressor.
    #[error("unrecognized wire format (first bytes {prefix:02x?})")]
    UnknownWireFormat {
        /// Up to four leading bytes.
        prefix: Vec<u8>,
    },
    /// The wire bytes use a compressor this build does not include.
    #[error("{codec} frame, but the crate was built without feature compression-{codec}")]
    CompressionUnavailable {
        /// `"zstd"` or `"gzip"`.
        codec: &'static str,
    },
    /// The decompressor rejected the frame.
    #[error("{codec} decompression failed: {message}")]
    Decompress {
        /// `"zstd"` or `"gzip"`.
        codec: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The uncompressed message would exceed `max_uncompressed_len`.
    #[error("uncompressed size exceeds the limit of {limit} bytes")]
    UncompressedTooLarge {
        /// The caller's limit.
        limit: usize,
    },
}

//! Riegeli/records: a reader and writer byte-compatible with C++ riegeli, including the ArrayRecord layout.
//!
//! A Riegeli/records file is a sequence of 64 KiB blocks, each starting with a block header, over which a
//! sequence of chunks is laid out: a file signature, optional metadata and padding, and chunks of records,
//! either *simple* (sizes + concatenated values) or *transposed* (records split into per-field columns),
//! each compressed with none, Brotli, Zstd or Snappy. Every header and all chunk data are protected by
//! HighwayHash-64.
//!
//! ```
//! use riegeli_records::{RecordReader, RecordWriter, WriterOptions};
//!
//! # fn main() -> Result<(), riegeli_records::Error> {
//! let options = WriterOptions::parse("transpose,zstd:3")?;
//! let mut writer = RecordWriter::new(Vec::new(), options)?;
//! writer.write_record(b"\x08\x96\x01")?;
//! writer.write_record(b"not a proto")?;
//! let file = writer.close()?;
//!
//! let mut reader = RecordReader::new(std::io::Cursor::new(file))?;
//! assert_eq!(reader.read_record()?, Some(&b"\x08\x96\x01"[..]));
//! assert_eq!(reader.read_record()?, Some(&b"not a proto"[..]));
//! assert_eq!(reader.read_record()?, None);
//! # Ok(()) }
//! ```
//!
//! Modules: [`block`] (block headers and position arithmetic), [`chunk`] (chunk headers), [`hash`],
//! [`compression`], [`options`] (C++ option syntax), [`reader`], [`writer`], [`array_record`],
//! [`projection`] (reading only some fields of transposed chunks).
//!
//! Glossary: *chunk begin* is the file offset of a chunk's header; a *record position* is a chunk begin
//! plus a record index; its *numeric* form is their sum (unique because a chunk spans at least
//! `num_records` bytes).

pub mod array_record;
pub mod block;
pub mod chunk;
pub mod compression;
mod error;
pub mod group;
pub mod hash;
pub mod metadata;
pub mod options;
pub mod projection;
pub mod reader;
mod simple;
mod transpose;
pub mod varint;
pub mod writer;

pub use array_record::ArrayRecordReader;
pub use chunk::{ChunkHeader, ChunkType};
pub use compression::{CompressionOptions, CompressionType};
pub use error::{Error, Result};
pub use group::RecordGroup;
pub use metadata::RecordsMetadata;
pub use options::WriterOptions;
pub use projection::{Field, FieldProjection, ProjectionError};
pub use reader::{ChunkInfo, RecordPosition, RecordReader, SkippedRegion};
pub use writer::RecordWriter;

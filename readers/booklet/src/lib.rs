//! A key-value file store byte-compatible with Python [booklet] 0.12 (format versions 5 and 4).
//!
//! Files written by Python booklet open here and the reverse; the same sequence of operations
//! produces the same bytes (apart from the per-file UUID, the file creation time and "now" item
//! timestamps). Read-only handles memory-map the file (random-access advice on the bucket
//! index, sequential advice while iterating); [`ReadMode::Buffered`] uses positioned reads
//! instead. Writers buffer new blocks (4 MiB) and append them in one write. Handles hold a
//! `flock` lock for their lifetime (shared for `r`, exclusive otherwise), which interoperates
//! with Python booklet's portalocker locks.
//!
//! ```no_run
//! use booklet::{Flag, OpenOptions, Serializer};
//! # fn main() -> booklet::Result<()> {
//! let mut db = OpenOptions::new()
//!     .key_serializer(Serializer::Str)
//!     .value_serializer(Serializer::Str)
//!     .open("data.blt", Flag::New)?;
//! db.set(b"apple", b"red")?;
//! db.sync()?;
//! assert_eq!(db.get(b"apple")?, Some(b"red".to_vec()));
//! db.delete(b"apple")?;
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! The API works on stored bytes, and on typed [`Value`]s through the serializers the header
//! names ([`Booklet::get_typed`], [`Booklet::set_typed`], [`Booklet::items_typed`]): `str`,
//! bytes, the integer codes, `json` and `orjson`, pickle of plain values, msgpack, numpy
//! integer arrays, and their zstd variants, each writing the bytes Python booklet writes (see
//! [`serial`]). Other serializers (pandas, shapely, custom classes) give
//! [`Error::UnsupportedSerializer`] naming them.
//!
//! ```no_run
//! use booklet::{Flag, OpenOptions, Serializer, Value};
//! # fn main() -> booklet::Result<()> {
//! let mut db = OpenOptions::new()
//!     .key_serializer(Serializer::Str)
//!     .value_serializer(Serializer::Pickle)
//!     .open("typed.blt", Flag::New)?;
//! let v = Value::Dict(vec![("n".into(), Value::Tuple(vec![1i64.into(), 2.5.into()]))]);
//! db.set_typed(&"apple".into(), &v)?;
//! let db = db.reopen(Flag::Read)?; // Python's reopen('r')
//! # let mut db = db;
//! assert_eq!(db.get_typed(&"apple".into())?, Some(v));
//! # Ok(())
//! # }
//! ```
//!
//! Lookups go through a per-handle in-memory *key table* (a fast hash of the key bytes to the
//! block offset, built lazily and kept coherent with every write; see
//! [`OpenOptions::key_table_limit`]) once a handle has done enough of them; [`Booklet::get_ref`]
//! borrows values from the map instead of copying them, and [`Booklet::get_str`] decodes a `str`
//! value where it lies (a SIMD UTF-8 check).
//!
//! Glossary: *block*: one stored item (hash, next pointer, lengths, optional timestamp, key,
//! value); *chain*: the blocks of one bucket linked by next pointers; *tombstone*: a block
//! whose next pointer is 0; *relocated index*: a bucket index that is not at byte 200 (after a
//! reindex or prune); *chain tail*: the last block of a chain, where a new key is linked.
//!
//! [booklet]: https://pypi.org/project/booklet/

mod error;
pub mod format;
mod keytable;
mod map;
pub mod serial;
mod storage;
mod store;
mod text;

pub use error::{Error, Result};
pub use format::{Header, Kind, hash_key, hash_keys};
pub use keytable::DEFAULT_KEY_TABLE_LIMIT;
pub use serial::{JsonValue, Limits, Serializer, Value};
pub use storage::ReadMode;
pub use store::iter::{Entry, Iter, Location};
pub use store::{Booklet, Flag, OpenOptions, open};

//! A fast, defensive reader of ROOT TTree files.
//!
//! Reads flat numeric branches (every leaf type from `bool` to `f64`), fixed arrays
//! (`x[4]/F`), counter-based jagged arrays (`x[n]/F`), `std::vector<T>`, strings, nested
//! vectors, `Double32_t`/`Float16_t`, leaf lists, split objects and objects written whole
//! ([`Layout`], [`Column`]), compressed with zlib, zstd, LZ4, LZMA or not at all, from files written by ROOT 6.x
//! (checked against ROOT 6.40) and the trees of ROOT 4 (TTree v5). Baskets go through a per-file LRU [`BasketCache`] bounded by
//! bytes; [`BranchReader`] reads whole branches (in parallel when it pays),
//! [`LazyBranchReader`] reads entries on demand and [`ChainedSlice`] views several baskets as
//! one byte sequence without copying. A [`Chain`] reads one tree spread over several files as
//! one tree, within one cache bound. [`RNTuple`]s (format 1.0) are read field by field
//! ([`rntuple`]).
//!
//! ```no_run
//! use root_reader::RootFile;
//!
//! # fn main() -> Result<(), root_reader::Error> {
//! let file = RootFile::open("events.root")?;
//! let tree = file.tree("dir/t;2")?; // path and cycle optional
//! let pt: Vec<f32> = tree.branch("pt")?.reader().read()?;
//! let jets = tree.branch("jets")?.reader().read_jagged::<f32>()?; // offsets + values
//! let lazy = tree.branch("pt")?.lazy()?;
//! let one: f32 = lazy.read_at(12_345)?;
//! # let _ = (pt, jets, one);
//! # Ok(())
//! # }
//! ```
//!
//! Every decoder treats the file as hostile: truncation, bad offsets, corrupt compressed data
//! and absurd sizes give an [`Error`], never a panic, and no allocation exceeds what the file
//! size justifies (see [`compression`]).
//!
//! Glossary: a *key* is a record header; a *basket* is a compressed chunk of consecutive
//! entries of one branch; a *cycle* is a version number of an object written several times
//! under one name (`t;1`, `t;2`); *embedded* baskets are stored inside the TTree record.

pub mod basket;
pub mod cache;
pub mod chain;
mod class_shape;
pub mod column;
pub mod compression;
mod cursor;
pub mod decode;
pub mod error;
pub mod file;
pub mod json;
mod key;
pub mod layout;
pub mod lazy;
mod mapped;
mod memory;
pub mod page_cache;
pub mod reader;
pub mod readspeed;
pub mod rntuple;
mod source;
mod streamer;
pub mod streamer_info;
pub mod tree;
pub mod types;

pub use basket::{BasketBuffers, BasketData};
pub use cache::{BasketCache, BasketKey, CacheStats};
pub use chain::Chain;
pub use column::{Column, FieldValues, Jagged, Lists, Strings, Values};
pub use decode::{TextList, TextListView, TextView};
pub use error::{Error, Result};
pub use file::{Directory, FileHeader, Key, RootFile, TreeEntry};
pub use layout::{Field, Layout, Packing, Real, Shape};
pub use lazy::{ChainedSlice, LazyBranchReader};
pub use memory::{malloc_trim, set_memory_release};
pub use reader::{Branch, BranchReader, Parallel};
pub use rntuple::{FieldInfo, RNTuple};
pub use streamer_info::{ClassInfo, StreamerElement, StreamerInfos};
pub use tree::{BasketInfo, BasketLocation, BranchMeta, Leaf, NamedBranch, Tree};
pub use types::{Element, LeafType};

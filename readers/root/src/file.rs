//! File header, keys, directories and cycles.
//!
//! Navigation follows directory key lists only (never a sequential scan, which would trip over
//! free gaps). Whether a record uses 32- or 64-bit offsets is decided per record, from its own
//! version (file header: `fVersion >= 1_000_000`; directory and key: `version > 1000`).

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use crate::cache::BasketCache;
use crate::compression;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
pub use crate::key::Key;
use crate::source::Source;
use crate::streamer_info::StreamerInfos;

/// The fixed header at the start of every ROOT file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// ROOT version that wrote the file (e.g. 64000 for 6.40/00), without the large-file flag.
    pub version: u32,
    /// Whether the header uses 64-bit offsets.
    pub large: bool,
    /// Offset of the first record (100).
    pub begin: u64,
    /// Offset of the first free byte.
    pub end: u64,
    /// Size of the TFile key header plus its name and title.
    pub nbytes_name: u32,
    /// File compression setting (algorithm * 100 + level).
    pub compress: i32,
    /// Offset of the StreamerInfo record.
    pub seek_info: u64,
}

/// A directory: its path and its keys.
#[derive(Debug, Clone)]
pub struct Directory {
    /// Path from the root directory (`""` for the top).
    pub path: String,
    /// The keys listed in the directory.
    pub keys: Vec<Key>,
}

/// A tree (or, from [`RootFile::rntuples`], an RNTuple) found in the file.
#[derive(Debug, Clone)]
pub struct TreeEntry {
    /// Directory path plus name, e.g. `sub/inner`.
    pub path: String,
    /// The tree's key (cycle, sizes, class).
    pub key: Key,
}

pub(crate) struct Inner {
    pub(crate) source: Source,
    pub(crate) header: FileHeader,
    pub(crate) cache: Arc<BasketCache>,
    /// This file's id in a cache that other files may share.
    pub(crate) id: u32,
    /// The class descriptions, read on first use (a failure is kept: it is the file's).
    pub(crate) infos: std::sync::OnceLock<std::result::Result<Arc<StreamerInfos>, String>>,
}

/// An open ROOT file. Cheap to clone: clones share the file handle and the basket cache.
#[derive(Clone)]
pub struct RootFile {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for RootFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootFile")
            .field("name", &self.inner.source.name())
            .field("header", &self.inner.header)
            .finish_non_exhaustive()
    }
}

/// Deepest directory nesting followed (guards against directory loops in hostile files).
const MAX_DEPTH: usize = 64;

impl RootFile {
    /// Opens a file with the default basket cache (256 MiB).
    ///
    /// # Errors
    /// I/O errors and malformed headers.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_cache(path, BasketCache::DEFAULT_CAPACITY)
    }

    /// Opens a file with a basket cache bounded to `cache_bytes` decompressed bytes.
    ///
    /// # Errors
    /// I/O errors and malformed headers.
    pub fn open_with_cache(path: impl AsRef<Path>, cache_bytes: usize) -> Result<Self> {
        Self::from_source(Source::open(path.as_ref())?, cache_bytes)
    }

    /// Reads a file held in memory.
    ///
    /// # Errors
    /// Malformed headers.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        Self::from_source(Source::Memory(bytes), BasketCache::DEFAULT_CAPACITY)
    }

    /// Opens a file whose baskets go to `cache`, which other files may share: the files of a
    /// chain read within one bound.
    ///
    /// # Errors
    /// I/O errors and malformed headers.
    pub fn open_sharing(path: impl AsRef<Path>, cache: Arc<BasketCache>) -> Result<Self> {
        Self::with_cache(Source::open(path.as_ref())?, cache)
    }

    fn from_source(source: Source, cache_bytes: usize) -> Result<Self> {
        Self::with_cache(source, Arc::new(BasketCache::new(cache_bytes)))
    }

    fn with_cache(source: Source, cache: Arc<BasketCache>) -> Result<Self> {
        static NEXT_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let head = source.read_up_to("file header", 0, 100)?;
        let header = parse_header(&head)?;
        Ok(Self {
            inner: Arc::new(Inner {
                source,
                header,
                cache,
                id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                infos: std::sync::OnceLock::new(),
            }),
        })
    }

    /// The file header.
    #[must_use]
    pub fn header(&self) -> &FileHeader {
        &self.inner.header
    }

    /// Size of the file in bytes.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.inner.source.len()
    }

    /// Whether the file is empty (never true for an opened file).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A display name (the path).
    #[must_use]
    pub fn name(&self) -> String {
        self.inner.source.name()
    }

    /// The file's basket cache.
    #[must_use]
    pub fn cache(&self) -> &BasketCache {
        &self.inner.cache
    }

    pub(crate) fn source(&self) -> &Source {
        &self.inner.source
    }

    /// The top directory.
    ///
    /// # Errors
    /// Malformed directory header or keys list.
    pub fn root_directory(&self) -> Result<Directory> {
        let h = &self.inner.header;
        let at = h.begin + u64::from(h.nbytes_name);
        self.directory_at(at, String::new())
    }

    /// Reads a directory whose `TDirectory` header starts at `at`.
    fn directory_at(&self, at: u64, path: String) -> Result<Directory> {
        let buf = self.inner.source.read_up_to("directory header", at, 64)?;
        let mut cur = Cursor::new(&buf, at, "directory header");
        let version = cur.u16()?;
        let _datime_c = cur.u32()?;
        let _datime_m = cur.u32()?;
        let nbytes_keys = cur.i32()?;
        let _nbytes_name = cur.i32()?;
        let large = version > 1000;
        let _seek_dir = cur.seek(large)?;
        let _seek_parent = cur.seek(large)?;
        let seek_keys = cur.seek(large)?;
        if seek_keys == 0 {
            return Ok(Directory {
                path,
                keys: Vec::new(),
            });
        }
        let nbytes_keys = usize::try_from(nbytes_keys)
            .map_err(|_| Error::corrupt("directory header", at, "negative keys-list size"))?;
        let list = self
            .inner
            .source
            .read("keys list", seek_keys, nbytes_keys)?;
        let mut cur = Cursor::new(&list, seek_keys, "keys list");
        let _own = Key::parse(&mut cur)?;
        let nkeys = cur.i32()?;
        // A key header is at least 26 bytes + 3 string lengths.
        let keys = cur.counted(i64::from(nkeys), 29, Key::parse)?;
        Ok(Directory { path, keys })
    }

    /// Opens the subdirectory described by `key` (a `TDirectory` key of `parent`).
    ///
    /// # Errors
    /// Malformed directory records.
    pub fn subdirectory(&self, parent: &Directory, key: &Key) -> Result<Directory> {
        // The payload is the TDirectory header (never compressed): read it in place.
        let at = key.seek_key + u64::from(key.keylen);
        let path = if parent.path.is_empty() {
            key.name.clone()
        } else {
            format!("{}/{}", parent.path, key.name)
        };
        if key.is_compressed() {
            return Err(Error::corrupt(
                "directory key",
                key.seek_key,
                "compressed directory header",
            ));
        }
        self.directory_at(at, path)
    }

    /// Reads (and decompresses) the payload of a key.
    ///
    /// # Errors
    /// Reads past the end, corrupt compressed data.
    pub fn read_payload(&self, key: &Key) -> Result<Vec<u8>> {
        let nbytes = key.nbytes as usize;
        let keylen = usize::from(key.keylen);
        if keylen > nbytes {
            return Err(Error::corrupt(
                "key",
                key.seek_key,
                "key header longer than the record",
            ));
        }
        let raw = self.inner.source.read(
            "object record",
            key.seek_key + keylen as u64,
            nbytes - keylen,
        )?;
        if key.is_compressed() {
            compression::decompress(&raw, key.objlen as usize)
        } else {
            Ok(raw)
        }
    }

    /// The file's class descriptions (the TStreamerInfo list at `fSeekInfo`), read once.
    ///
    /// # Errors
    /// A missing, truncated or malformed list (as text: it is kept for later calls).
    pub fn streamer_infos(&self) -> std::result::Result<Arc<StreamerInfos>, String> {
        self.inner
            .infos
            .get_or_init(|| {
                let seek = self.inner.header.seek_info;
                if seek == 0 {
                    return Err("the file has no class descriptions (fSeekInfo 0)".to_owned());
                }
                let read = || -> Result<StreamerInfos> {
                    let head = self.inner.source.read(
                        "TStreamerInfo key",
                        seek,
                        4096.min(usize::try_from(self.len().saturating_sub(seek)).unwrap_or(4096)),
                    )?;
                    let mut cur = Cursor::new(&head, seek, "TStreamerInfo key");
                    let key = Key::parse(&mut cur)?;
                    let payload = self.read_payload(&key)?;
                    StreamerInfos::parse(&payload, key.keylen)
                };
                read().map(Arc::new).map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Every tree in the file, in every directory, every cycle.
    ///
    /// # Errors
    /// Malformed directories.
    pub fn trees(&self) -> Result<Vec<TreeEntry>> {
        self.objects(Key::is_tree)
    }

    /// Every RNTuple (`ROOT::RNTuple` anchor) in the file, in every directory, every cycle.
    ///
    /// # Errors
    /// Malformed directories.
    pub fn rntuples(&self) -> Result<Vec<TreeEntry>> {
        self.objects(Key::is_rntuple)
    }

    /// Every object `want` selects, in every directory.
    fn objects(&self, want: fn(&Key) -> bool) -> Result<Vec<TreeEntry>> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let root = self.root_directory()?;
        self.walk(&root, 0, want, &mut seen, &mut out)?;
        Ok(out)
    }

    fn walk(
        &self,
        dir: &Directory,
        depth: usize,
        want: fn(&Key) -> bool,
        seen: &mut HashSet<u64>,
        out: &mut Vec<TreeEntry>,
    ) -> Result<()> {
        for key in &dir.keys {
            if want(key) {
                let path = if dir.path.is_empty() {
                    key.name.clone()
                } else {
                    format!("{}/{}", dir.path, key.name)
                };
                out.push(TreeEntry {
                    path,
                    key: key.clone(),
                });
            } else if key.is_directory() && depth < MAX_DEPTH && seen.insert(key.seek_key) {
                let sub = self.subdirectory(dir, key)?;
                self.walk(&sub, depth + 1, want, seen, out)?;
            }
        }
        Ok(())
    }

    /// Finds the key of `spec` = `[dir/...]name[;cycle]`; without a cycle, the highest one.
    ///
    /// # Errors
    /// [`Error::NotFound`] when nothing matches.
    pub fn find_key(&self, spec: &str) -> Result<Key> {
        let not_found = || Error::NotFound {
            name: spec.to_string(),
            file: self.name(),
        };
        let (path, cycle) = match spec.rsplit_once(';') {
            Some((p, c)) => (p, Some(c.trim().parse::<i16>().map_err(|_| not_found())?)),
            None => (spec, None),
        };
        let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let name = parts.pop().ok_or_else(not_found)?;
        let mut dir = self.root_directory()?;
        for (depth, part) in parts.into_iter().enumerate() {
            if depth >= MAX_DEPTH {
                return Err(not_found());
            }
            let key = dir
                .keys
                .iter()
                .filter(|k| k.is_directory() && k.name == part)
                .max_by_key(|k| k.cycle.unsigned_abs())
                .cloned()
                .ok_or_else(not_found)?;
            dir = self.subdirectory(&dir, &key)?;
        }
        let candidates = dir.keys.iter().filter(|k| k.name == name);
        let key = match cycle {
            Some(c) => candidates.into_iter().find(|k| k.cycle == c),
            None => candidates.max_by_key(|k| k.cycle.unsigned_abs()),
        };
        key.cloned().ok_or_else(not_found)
    }
}

/// Parses the file header from the first bytes of the file.
///
/// # Errors
/// Bad magic, truncation, impossible values.
pub fn parse_header(head: &[u8]) -> Result<FileHeader> {
    let mut cur = Cursor::new(head, 0, "file header");
    let magic: [u8; 4] = cur.array()?;
    if &magic != b"root" {
        return Err(Error::BadMagic { found: magic });
    }
    let raw_version = cur.i32()?;
    let begin = cur.i32()?;
    let large = raw_version >= 1_000_000;
    let end = cur.seek(large)?;
    let _seek_free = cur.seek(large)?;
    let _nbytes_free = cur.i32()?;
    let _nfree = cur.i32()?;
    let nbytes_name = cur.i32()?;
    let _units = cur.u8()?;
    let compress = cur.i32()?;
    let seek_info = cur.seek(large)?;
    let (Ok(version), Ok(begin), Ok(nbytes_name)) = (
        u32::try_from(raw_version % 1_000_000),
        u64::try_from(begin),
        u32::try_from(nbytes_name),
    ) else {
        return Err(Error::corrupt(
            "file header",
            4,
            "negative version, fBEGIN or fNbytesName",
        ));
    };
    Ok(FileHeader {
        version,
        large,
        begin,
        end,
        nbytes_name,
        compress,
        seek_info,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn large_file_header_uses_64_bit_offsets() {
        // First 64 bytes of a 2,162,784,584-byte file written by ROOT 6.40 (format reference §1.3).
        let head = hex(
            "726f 6f74 0010 3c40 0000 0064 0000 0000 80e9 7948 0000 0000 0394 30a3 0000 0332
             0000 0048 0000 0034 0800 0000 0000 0000 0001 ca9b c500 0039 3a00 01f8 786a 7e6d",
        );
        let h = parse_header(&head).unwrap();
        assert!(h.large);
        assert_eq!(h.version, 64000);
        assert_eq!(h.begin, 100);
        assert_eq!(h.end, 2_162_784_584);
        assert_eq!(h.nbytes_name, 52);
        assert_eq!(h.compress, 0);
        assert_eq!(h.seek_info, 30_055_365);
    }

    #[test]
    fn small_file_header() {
        // zlib.root of the format reference §1.
        let head = hex(
            "726f 6f74 0000 fa00 0000 0064 0000 1e18 0000 1de3 0000 0035 0000 0001 0000 0036
             0400 0000 6500 0009 1c00 0014 6c00 0112 6f47 b34c db4e 65b2 b933 8acd 7e95 6600",
        );
        let h = parse_header(&head).unwrap();
        assert!(!h.large);
        assert_eq!(
            (h.end, h.nbytes_name, h.compress, h.seek_info),
            (7704, 54, 101, 2332)
        );
    }

    #[test]
    fn key_with_64_bit_seeks() {
        // A basket key header of the large file (§1.3): version 1004, 64-bit fSeekKey.
        let mut raw =
            hex("004f1a41 03ec 004f1a00 7eeb11af 0041 0642 000000008099be22 0000000000000064");
        for s in ["TBasket", "a", "t"] {
            raw.push(s.len() as u8);
            raw.extend_from_slice(s.as_bytes());
        }
        let key = Key::parse(&mut Cursor::new(&raw, 0, "key")).unwrap();
        assert_eq!(key.nbytes, 5_184_065);
        assert_eq!(key.objlen, 5_184_000);
        assert_eq!(key.keylen, 65);
        assert_eq!(key.cycle, 1602);
        assert_eq!(key.seek_key, 2_157_559_330);
        assert_eq!(key.seek_pdir, 100);
        assert!(!key.is_compressed());
    }
}

//! The [`Booklet`] handle: open, lock, lookups, the write buffer, index maintenance,
//! delete, reindex, prune, clear and iteration.
//!
//! The order of every side effect follows Python booklet 0.12.10, so the same sequence of
//! operations produces the same bytes (apart from the per-file UUID, the file creation time and
//! "now" item timestamps):
//!
//! * `set` appends the block to a write buffer (4 MiB by default). When a block does not fit
//!   (`len(block) > capacity - used`), the buffer is appended at EOF first and then
//!   `update_index` runs over the buffered (hash, position) entries in write order.
//! * `update_index`: an empty bucket gets the new block; otherwise walk the chain: a block with
//!   the same hash is tombstoned (next = 0) and the new block is spliced into its place; at the
//!   end of the chain the new block is linked at the tail.
//! * `sync` flushes, runs `update_index`, reindexes when `n_keys > n_buckets`, writes `n_keys`.
//! * Reindex appends a new index at EOF and relinks every live block at the head of its new
//!   bucket, old buckets in order; a relocated old index is overwritten with a skip block.
//! * Prune compacts live blocks to byte 200, puts a fresh index after them and relinks with
//!   `update_index` in file order.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::{File, TryLockError};
use std::hash::{BuildHasherDefault, Hasher};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::format::{
    HEADER_LEN, Header, KEY_HASH_LEN, KeyHash, Kind, N_BYTES_FILE, N_KEYS_CRASH, POS_FIRST_DATA,
    POS_INDEX_OFFSET, POS_N_BUCKETS, POS_N_KEYS, SUB_INDEX_INIT_POS, TIMESTAMP_LEN, bucket_of,
    hash_key, hash_keys, is_reserved_key, next_n_buckets,
};
use crate::keytable::{
    Coherence, DEFAULT_KEY_TABLE_LIMIT, FastHasher, HashKeyed, KeyTable, MAX_TAIL_BUCKETS,
    VLEN_UNKNOWN, empty_tails,
};
use crate::serial::{Serializer, decode_str};
use crate::storage::{ReadMode, Storage, io_err};

/// How to open a file, as Python's `dbm`-style flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `r`: existing file, read-only (shared lock).
    Read,
    /// `w`: existing file, read-write (exclusive lock).
    Write,
    /// `c`: read-write, create the file if it does not exist.
    Create,
    /// `n`: always create a new, empty file (truncated only after the lock is held).
    New,
}

impl Flag {
    /// Parse `"r"`, `"w"`, `"c"` or `"n"`.
    #[must_use]
    pub fn from_str_flag(s: &str) -> Option<Self> {
        match s {
            "r" => Some(Flag::Read),
            "w" => Some(Flag::Write),
            "c" => Some(Flag::Create),
            "n" => Some(Flag::New),
            _ => None,
        }
    }
}

/// Options for opening or creating a booklet file. The creation options (serializers, bucket
/// count, timestamps, fixed value length) only apply when a new file is written.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    read_mode: ReadMode,
    key_serializer: Serializer,
    value_serializer: Serializer,
    n_buckets: u32,
    buffer_size: usize,
    timestamps: bool,
    value_len: Option<u32>,
    lock_timeout: Option<Duration>,
    key_table_limit: u64,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenOptions {
    /// Python booklet's defaults: serializers `None`, 12007 buckets, 4 MiB buffer, timestamps on,
    /// variable-length values, wait for the lock indefinitely, mmap reads.
    #[must_use]
    pub fn new() -> Self {
        OpenOptions {
            read_mode: ReadMode::Mmap,
            key_serializer: Serializer::None,
            value_serializer: Serializer::None,
            n_buckets: crate::format::DEFAULT_N_BUCKETS,
            buffer_size: crate::format::DEFAULT_BUFFER_SIZE,
            timestamps: true,
            value_len: None,
            lock_timeout: None,
            key_table_limit: DEFAULT_KEY_TABLE_LIMIT,
        }
    }
    /// Memory-mapped or buffered (`pread`) reads.
    #[must_use]
    pub fn read_mode(mut self, m: ReadMode) -> Self {
        self.read_mode = m;
        self
    }
    /// Key serializer code stored in a new file.
    #[must_use]
    pub fn key_serializer(mut self, s: Serializer) -> Self {
        self.key_serializer = s;
        self
    }
    /// Value serializer code stored in a new file (ignored for fixed-length files).
    #[must_use]
    pub fn value_serializer(mut self, s: Serializer) -> Self {
        self.value_serializer = s;
        self
    }
    /// Initial bucket count of a new file.
    #[must_use]
    pub fn n_buckets(mut self, n: u32) -> Self {
        self.n_buckets = n;
        self
    }
    /// Write buffer capacity in bytes.
    #[must_use]
    pub fn buffer_size(mut self, n: usize) -> Self {
        self.buffer_size = n;
        self
    }
    /// Whether a new variable-length file stores item timestamps.
    #[must_use]
    pub fn timestamps(mut self, on: bool) -> Self {
        self.timestamps = on;
        self
    }
    /// Create a fixed-length-value file with this value length.
    #[must_use]
    pub fn fixed_value_len(mut self, n: u32) -> Self {
        self.value_len = Some(n);
        self
    }
    /// Give up waiting for the file lock after this long ([`Error::LockTimeout`]).
    #[must_use]
    pub fn lock_timeout(mut self, t: Duration) -> Self {
        self.lock_timeout = Some(t);
        self
    }

    /// Largest number of keys for which the handle keeps an in-memory key table (a fast hash of
    /// the key bytes to the block offset, about 20-40 bytes per key, built lazily once the
    /// handle has done about `len() / 2` lookups; see the crate docs). 0 turns the table off:
    /// every lookup then hashes the key with `BLAKE2s` and walks its bucket chain in the file.
    #[must_use]
    pub fn key_table_limit(mut self, max_keys: u64) -> Self {
        self.key_table_limit = max_keys;
        self
    }

    /// Open `path` with `flag`.
    pub fn open(&self, path: impl AsRef<Path>, flag: Flag) -> Result<Booklet> {
        Booklet::open_with(path.as_ref(), flag, self)
    }
}

/// Open `path` with default options (see [`OpenOptions::new`]).
pub fn open(path: impl AsRef<Path>, flag: Flag) -> Result<Booklet> {
    OpenOptions::new().open(path, flag)
}

/// Hashes are already uniformly random: hash a key hash by its first 8 bytes.
#[derive(Default)]
struct PrefixHasher(u64);

impl Hasher for PrefixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut b = [0u8; 8];
        let n = bytes.len().min(8);
        b[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(b);
    }
    fn write_usize(&mut self, _len: usize) {}
}

type HashSetFast = HashSet<KeyHash, BuildHasherDefault<PrefixHasher>>;

/// One item of an iteration. Keys and values borrow from the memory map when the file is
/// mapped, and are owned copies in buffered mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Stored key bytes.
    pub key: Cow<'a, [u8]>,
    /// Stored value bytes.
    pub value: Cow<'a, [u8]>,
    /// Item timestamp (µs since the Unix epoch) when the file has timestamps.
    pub timestamp: Option<u64>,
    /// Offset of the data block.
    pub offset: u64,
}

/// Where a live value lies in the file (see [`Booklet::locations`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location<'a> {
    /// Stored key bytes.
    pub key: Cow<'a, [u8]>,
    /// Item timestamp (µs since the Unix epoch) when the file has timestamps.
    pub timestamp: Option<u64>,
    /// File offset of the stored value bytes.
    pub value_offset: u64,
    /// Length of the stored value bytes.
    pub value_len: u64,
}

/// An open booklet file. Writers hold an exclusive `flock`, readers a shared one, for the
/// handle's lifetime, which interoperates with Python booklet's portalocker locks.
pub struct Booklet {
    st: Storage,
    header: Header,
    writable: bool,
    n_keys: u64,
    ts_len: u64,
    hdr_len: u64,
    /// Blocks not yet appended, with a zero placeholder where the key hash goes: the hashes
    /// are computed in SIMD batches when the buffer is flushed.
    buf_data: Vec<u8>,
    /// (offset in `buf_data`, fast hash of the key) of each buffered block, in write order.
    buf_index: Vec<(u64, u64)>,
    /// Fast hash of a buffered key → offset in `buf_data` of its latest buffered block.
    buf_keys: HashKeyed<u64>,
    buf_cap: usize,
    fast: FastHasher,
    /// The key table: unset = not built yet; `Some(None)` = not available on this handle.
    table: OnceLock<Option<KeyTable>>,
    /// Lookups answered by hash walks while the table was not built (the build trigger).
    walks: AtomicU64,
    table_limit: u64,
    unclean: bool,
    closed: bool,
}

fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

fn lock_file(file: &File, path: &Path, exclusive: bool, timeout: Option<Duration>) -> Result<()> {
    let try_once = || {
        if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        }
    };
    match try_once() {
        Ok(()) => return Ok(()),
        Err(TryLockError::WouldBlock) => {}
        Err(TryLockError::Error(e)) => return Err(io_err(path, e)),
    }
    let Some(timeout) = timeout else {
        let r = if exclusive {
            file.lock()
        } else {
            file.lock_shared()
        };
        return r.map_err(|e| io_err(path, e));
    };
    let start = Instant::now();
    loop {
        if start.elapsed() >= timeout {
            return Err(Error::LockTimeout {
                path: path.to_path_buf(),
                waited_ms: start.elapsed().as_millis(),
            });
        }
        std::thread::sleep(Duration::from_millis(20).min(timeout));
        match try_once() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(io_err(path, e)),
        }
    }
}

fn empty_index(n: u64) -> Vec<u8> {
    let mut v = vec![0u8; (n * N_BYTES_FILE) as usize];
    for slot in v.chunks_exact_mut(N_BYTES_FILE as usize) {
        slot[0] = 1;
    }
    v
}

impl Booklet {
    fn open_with(path: &Path, flag: Flag, opts: &OpenOptions) -> Result<Self> {
        let exists = path.exists();
        let create = match flag {
            Flag::Read | Flag::Write => {
                if !exists {
                    return Err(Error::NotFound(path.to_path_buf()));
                }
                false
            }
            Flag::Create => !exists,
            Flag::New => true,
        };
        let writable = flag != Flag::Read;
        if create {
            return Self::create(path, opts);
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(writable)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        lock_file(&file, path, writable, opts.lock_timeout)?;
        let len = file.metadata().map_err(|e| io_err(path, e))?.len();
        if len < HEADER_LEN {
            return Err(Error::corrupt(
                0,
                format!("file of {len} bytes is shorter than the 200-byte header"),
            ));
        }
        let mut h = [0u8; 200];
        file.read_exact_at(&mut h, 0).map_err(|e| io_err(path, e))?;
        let header = Header::parse(&h, len)?;
        let st = Storage::new(file, path, writable, opts.read_mode)?;
        let mut bk = Self::from_parts(st, header, writable, opts);
        bk.st.advise(
            true,
            bk.header.index_offset,
            bk.header.n_buckets * N_BYTES_FILE,
        );
        if bk.header.n_keys == N_KEYS_CRASH {
            // Dropped without close by Python: recount (kept in memory only, as Python does).
            bk.unclean = true;
            let mut n = 0u64;
            for e in bk.scan(false) {
                e?;
                n += 1;
            }
            bk.n_keys = n;
        }
        Ok(bk)
    }

    fn from_parts(st: Storage, header: Header, writable: bool, opts: &OpenOptions) -> Self {
        let ts_len = if header.timestamps { TIMESTAMP_LEN } else { 0 };
        let hdr_len = match header.kind {
            Kind::Variable => 25,
            Kind::Fixed { .. } => 21,
        };
        Booklet {
            st,
            n_keys: u64::from(header.n_keys),
            header,
            writable,
            ts_len,
            hdr_len,
            buf_data: Vec::new(),
            buf_index: Vec::new(),
            buf_keys: HashKeyed::default(),
            buf_cap: opts.buffer_size,
            fast: FastHasher::new(),
            table: OnceLock::new(),
            walks: AtomicU64::new(0),
            table_limit: opts.key_table_limit,
            unclean: false,
            closed: false,
        }
    }

    fn create(path: &Path, opts: &OpenOptions) -> Result<Self> {
        if opts.n_buckets == 0 {
            return Err(Error::InvalidOption("n_buckets must be at least 1".into()));
        }
        let kind = match opts.value_len {
            Some(0) => {
                return Err(Error::InvalidOption(
                    "fixed value length must be at least 1".into(),
                ));
            }
            Some(value_len) => Kind::Fixed { value_len },
            None => Kind::Variable,
        };
        let fixed = matches!(kind, Kind::Fixed { .. });
        // Open without truncating, lock, and only then truncate (as Python does for 'n').
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_err(path, e))?;
        lock_file(&file, path, true, opts.lock_timeout)?;
        let n = u64::from(opts.n_buckets);
        let mut uuid = [0u8; 16];
        fill_uuid8(&mut uuid);
        let header = Header {
            kind,
            version: crate::format::CURRENT_VERSION,
            n_buckets: n,
            value_serializer: if fixed {
                0
            } else {
                opts.value_serializer.code()
            },
            key_serializer: opts.key_serializer.code(),
            n_keys: 0,
            timestamps: !fixed && opts.timestamps,
            file_timestamp: now_micros(),
            uuid,
            index_offset: SUB_INDEX_INIT_POS,
            first_data_block_pos: SUB_INDEX_INIT_POS + n * N_BYTES_FILE,
        };
        // Only a file with contents is truncated: on ext4, truncating even an empty file makes
        // its close start writeback of everything written since (the replace-by-truncate
        // heuristic), which a file created here has no use for.
        if file.metadata().map_err(|e| io_err(path, e))?.len() > 0 {
            file.set_len(0).map_err(|e| io_err(path, e))?;
        }
        let mut init = header.encode_new().to_vec();
        init.extend_from_slice(&empty_index(n));
        file.write_all_at(&init, 0).map_err(|e| io_err(path, e))?;
        let st = Storage::new(file, path, true, opts.read_mode)?;
        let mut bk = Self::from_parts(st, header, true, opts);
        bk.reset_table(true);
        Ok(bk)
    }

    // ------------------------------------------------------------------ accessors

    /// The parsed header (as read at open, with the layout fields kept current).
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Number of live keys, as Python's `len()` (keys still in the write buffer are not
    /// counted until a sync).
    #[must_use]
    pub fn len(&self) -> u64 {
        self.n_keys
    }

    /// Whether [`Booklet::len`] is 0.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n_keys == 0
    }

    /// Whether the handle can write.
    #[must_use]
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Whether the file carried the unclean-close marker (`n_keys = 0xFFFFFFFF`) when opened.
    #[must_use]
    pub fn was_unclean(&self) -> bool {
        self.unclean
    }

    /// The key serializer stored in the header (None for an unknown code).
    #[must_use]
    pub fn key_serializer(&self) -> Option<Serializer> {
        Serializer::from_code(self.header.key_serializer)
    }

    /// The value serializer stored in the header (`None` serializer, code 1... for fixed files: code 0).
    #[must_use]
    pub fn value_serializer(&self) -> Option<Serializer> {
        Serializer::from_code(self.header.value_serializer)
    }

    /// Current file length in bytes (excluding unflushed buffered data).
    #[must_use]
    pub fn file_len(&self) -> u64 {
        self.st.len()
    }

    /// Whether reads go through a memory map.
    #[must_use]
    pub fn is_mapped(&self) -> bool {
        self.st.is_mapped()
    }

    // ------------------------------------------------------------------ lookups

    fn max_hops(&self) -> u64 {
        self.st.len() / self.hdr_len + 2
    }

    /// Find the live block of `hash`: (block offset, key_len, value_len).
    fn locate(&self, hash: &KeyHash) -> Result<Option<(u64, u64, u64)>> {
        let n = self.header.n_buckets;
        let slot = self.header.index_offset + bucket_of(hash, n) * N_BYTES_FILE;
        let mut pos = self.st.read_u48(slot)?;
        if pos <= 1 {
            return Ok(None);
        }
        let mut hops = 0u64;
        let mut buf = [0u8; 25];
        loop {
            let head = self.block_head(pos, &mut buf)?;
            let next = u48(&head[13..19]);
            if next == 0 {
                return Ok(None);
            }
            if head[..KEY_HASH_LEN] == hash[..] {
                let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
                return Ok(Some((pos, klen, self.vlen_of(head))));
            }
            if next == 1 {
                return Ok(None);
            }
            hops += 1;
            if hops > self.max_hops() {
                return Err(Error::corrupt(pos, "bucket chain does not end (cycle)"));
            }
            pos = next;
        }
    }

    /// Reset the key table: built and empty for a file without blocks (`empty_file`), else
    /// not built (it is built again lazily).
    fn reset_table(&mut self, empty_file: bool) {
        self.table = OnceLock::new();
        *self.walks.get_mut() = 0;
        if empty_file && self.table_limit > 0 {
            let _ignored = self.table.set(Some(KeyTable::empty(self.header.n_buckets)));
        }
    }

    /// Apply a change of the file to the key table; drop the table when it cannot follow.
    fn table_apply(&mut self, f: impl FnOnce(&mut KeyTable) -> Coherence) {
        let limit = self.table_limit;
        if let Some(slot) = self.table.get_mut()
            && let Some(t) = slot
            && (f(t) == Coherence::Lost || t.len() as u64 > limit)
        {
            *slot = None;
        }
    }

    /// Whether the key table is built and in use (see [`OpenOptions::key_table_limit`]).
    #[must_use]
    pub fn has_key_table(&self) -> bool {
        matches!(self.table.get(), Some(Some(_)))
    }

    /// The key table, built once this handle has answered about `n_keys / 2` lookups by hash
    /// walks (see `keytable`).
    fn key_table(&self) -> Option<&KeyTable> {
        if let Some(t) = self.table.get() {
            return t.as_ref();
        }
        if self.table_limit == 0 || self.n_keys > self.table_limit {
            return None;
        }
        let walks = self.walks.fetch_add(1, Ordering::Relaxed);
        if walks < self.n_keys / 2 + 16 {
            return None;
        }
        self.table.get_or_init(|| self.build_table()).as_ref()
    }

    /// Build the key table by walking every bucket chain as [`Booklet::locate`] does, with
    /// the chain tails. None (no table on this handle; lookups walk and report errors
    /// themselves) when the file has more keys than the limit, two keys collide on the 64-bit
    /// hash, or the index is not what a clean writer leaves: a stored hash that is not
    /// `BLAKE2s` of its key or not of its bucket, a tombstone or a repeated hash inside a chain,
    /// a corrupt chain.
    fn build_table(&self) -> Option<KeyTable> {
        let n = self.header.n_buckets;
        let index = self.header.index_offset;
        let hl = self.hdr_len as usize;
        let kstart = self.hdr_len + self.ts_len;
        let limit = usize::try_from(self.table_limit).ok()?;
        let mut table = KeyTable::with_capacity(usize::try_from(self.n_keys).ok()?.min(limit));
        let mut tails = empty_tails(n);
        let max_hops = self.max_hops();
        // One batch of blocks to check: (pos, bucket, stored hash, key range in `keys`, value
        // length).
        let mut batch: Vec<(u64, u64, KeyHash, std::ops::Range<usize>, u64)> = Vec::new();
        let mut keys: Vec<u8> = Vec::new();
        let mut hashes: Vec<KeyHash> = Vec::new();
        let mut slots = Vec::new();
        let mut head = [0u8; 25];
        const SLOTS_PER_READ: u64 = 8192;
        let mut b0 = 0u64;
        while b0 < n {
            let nb = SLOTS_PER_READ.min(n - b0);
            slots.resize((nb * N_BYTES_FILE) as usize, 0);
            self.st
                .read_into(index + b0 * N_BYTES_FILE, &mut slots)
                .ok()?;
            for (i, slot) in slots.chunks_exact(N_BYTES_FILE as usize).enumerate() {
                let bucket = b0 + i as u64;
                let mut pos = u48(slot);
                let mut hops = 0u64;
                while pos > 1 {
                    self.st.read_into(pos, &mut head[..hl]).ok()?;
                    let next = u48(&head[13..19]);
                    if next == 0 {
                        return None;
                    }
                    let klen = usize::from(u16::from_le_bytes([head[19], head[20]]));
                    let vlen = self.vlen_of(&head);
                    let at = keys.len();
                    keys.resize(at + klen, 0);
                    self.st.read_into(pos + kstart, &mut keys[at..]).ok()?;
                    let mut stored = [0u8; KEY_HASH_LEN];
                    stored.copy_from_slice(&head[..KEY_HASH_LEN]);
                    batch.push((pos, bucket, stored, at..at + klen, vlen));
                    if table.len() + batch.len() > limit {
                        return None;
                    }
                    if let Some(t) = tails.as_mut().and_then(|t| t.get_mut(bucket as usize)) {
                        *t = pos;
                    }
                    pos = next;
                    hops += 1;
                    if hops > max_hops {
                        return None;
                    }
                }
            }
            b0 += nb;
            if batch.len() >= 4096 || b0 >= n {
                let refs: Vec<&[u8]> = batch
                    .iter()
                    .map(|(_, _, _, r, _)| keys.get(r.clone()).unwrap_or_default())
                    .collect();
                hashes.resize(refs.len(), [0u8; KEY_HASH_LEN]);
                hash_keys(&refs, &mut hashes);
                for ((pos, bucket, stored, _, vlen), (key, h)) in
                    batch.iter().zip(refs.iter().zip(&hashes))
                {
                    if h != stored || bucket_of(stored, n) != *bucket {
                        return None;
                    }
                    // A repeated key (or a 64-bit collision) loses the table.
                    if table.insert_new(self.fast.hash(key), *pos, *vlen) == Coherence::Lost {
                        return None;
                    }
                }
                batch.clear();
                keys.clear();
            }
        }
        table.set_tails(tails);
        Some(table)
    }

    /// The value of `key` straight from the memory map through the key table: a short path
    /// with one table probe and one block, for the common case (mapped file, table built,
    /// value length known). [`Probe::Slow`] sends everything else to [`Booklet::find`].
    #[inline]
    fn probe_mapped(&self, table: &KeyTable, key: &[u8], fast: u64) -> Probe<'_> {
        let Some(bytes) = self.st.mapped() else {
            return Probe::Slow;
        };
        let Some((pos, vlen)) = table.get(fast) else {
            return Probe::Absent;
        };
        if vlen == VLEN_UNKNOWN {
            return Probe::Slow;
        }
        let (Ok(pos), Ok(vlen)) = (usize::try_from(pos), usize::try_from(vlen)) else {
            return Probe::Slow;
        };
        let kstart = self.hdr_len as usize + self.ts_len as usize;
        let vstart = kstart + key.len();
        let Some(block) = pos
            .checked_add(vstart + vlen)
            .and_then(|end| bytes.get(pos..end))
        else {
            return Probe::Slow;
        };
        let (head, body) = block.split_at(kstart);
        let next = u48(&head[13..19]);
        let klen = usize::from(u16::from_le_bytes([head[19], head[20]]));
        let (k, v) = body.split_at(key.len());
        if next == 0
            || klen != key.len()
            || self.vlen_of(head) != vlen as u64
            || !same_bytes(k, key)
        {
            return Probe::Slow;
        }
        Probe::Found(v)
    }

    /// The live block of `key` as (offset, key_len, value_len): through the key table when it
    /// is built, else by a hash walk.
    fn find(&self, key: &[u8], fast: u64) -> Result<Option<(u64, u64, u64)>> {
        if let Some(t) = self.key_table() {
            let Some((pos, vlen)) = t.get(fast) else {
                return Ok(None);
            };
            let vlen = (vlen != VLEN_UNKNOWN).then_some(vlen);
            if let Some(found) = self.block_if_key(pos, key, vlen)? {
                return Ok(Some(found));
            }
            // Another key with the same 64-bit hash holds the entry (the table cannot hold
            // both, so `key` is absent): let the hash walk answer.
        }
        self.locate(&hash_key(key))
    }

    /// Value length of a block from its header (`head` holds at least the header's
    /// `hdr_len` bytes): the header field in variable files, the file's length in fixed ones.
    #[inline]
    fn vlen_of(&self, head: &[u8]) -> u64 {
        match self.header.kind {
            Kind::Variable => {
                u64::from(u32::from_le_bytes([head[21], head[22], head[23], head[24]]))
            }
            Kind::Fixed { value_len } => u64::from(value_len),
        }
    }

    /// The header of the block at `pos`: borrowed from the map, or read into `buf`.
    #[inline]
    fn block_head<'a>(&'a self, pos: u64, buf: &'a mut [u8; 25]) -> Result<&'a [u8]> {
        let hl = self.hdr_len as usize;
        Ok(match self.st.slice(pos, hl)? {
            Some(s) => s,
            None => {
                self.st.read_into(pos, &mut buf[..hl])?;
                &buf[..hl]
            }
        })
    }

    /// The block at `pos` as (offset, key_len, value_len) if it is live and holds `key` (and,
    /// when given, has value length `vlen`: the returned length is then the given one, so the
    /// value's address does not wait for the header's load).
    fn block_if_key(
        &self,
        pos: u64,
        key: &[u8],
        vlen: Option<u64>,
    ) -> Result<Option<(u64, u64, u64)>> {
        let mut buf = [0u8; 25];
        let head = self.block_head(pos, &mut buf)?;
        let next = u48(&head[13..19]);
        let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
        let stored_vlen = self.vlen_of(head);
        if next == 0 || klen != key.len() as u64 || vlen.is_some_and(|v| v != stored_vlen) {
            return Ok(None);
        }
        let vlen = vlen.unwrap_or(stored_vlen);
        let kpos = pos + self.hdr_len + self.ts_len;
        let same = match self.st.slice(kpos, key.len())? {
            Some(s) => same_bytes(s, key),
            None => {
                let mut small = [0u8; 64];
                if key.len() <= small.len() {
                    let b = &mut small[..key.len()];
                    self.st.read_into(kpos, b)?;
                    b == key
                } else {
                    self.st.read_vec(kpos, key.len())? == key
                }
            }
        };
        Ok(same.then_some((pos, klen, vlen)))
    }

    fn value_range(&self, pos: u64, klen: u64, vlen: u64) -> Result<(u64, usize)> {
        let start = pos + self.hdr_len + self.ts_len + klen;
        let n = usize::try_from(vlen)
            .map_err(|_| Error::corrupt(pos, "value length overflows usize"))?;
        Ok((start, n))
    }

    /// Key bytes of the buffered block at `off` in `buf_data`.
    fn buf_key_at(&self, off: u64) -> Option<&[u8]> {
        let off = usize::try_from(off).ok()?;
        let hl = self.hdr_len as usize;
        let klen = usize::from(u16::from_le_bytes([
            *self.buf_data.get(off + 19)?,
            *self.buf_data.get(off + 20)?,
        ]));
        let k = off + hl + self.ts_len as usize;
        self.buf_data.get(k..k + klen)
    }

    /// Offset in `buf_data` of the latest buffered block of `key`.
    fn buffered(&self, key: &[u8], fast: u64) -> Option<u64> {
        if self.buf_keys.is_empty() {
            return None;
        }
        let off = *self.buf_keys.get(&fast)?;
        if self.buf_key_at(off) == Some(key) {
            return Some(off);
        }
        // Two buffered keys with the same 64-bit hash: search the buffer.
        self.buf_index
            .iter()
            .rev()
            .map(|&(o, _)| o)
            .find(|&o| self.buf_key_at(o) == Some(key))
    }

    /// Value bytes of the buffered block at `off`.
    fn buf_value_at(&self, off: u64) -> Option<&[u8]> {
        let o = usize::try_from(off).ok()?;
        let key = self.buf_key_at(off)?;
        let head = self.buf_data.get(o..o + self.hdr_len as usize)?;
        let vlen = usize::try_from(self.vlen_of(head)).ok()?;
        let start = o + self.hdr_len as usize + self.ts_len as usize + key.len();
        self.buf_data.get(start..start + vlen)
    }

    /// The stored value bytes of `key`, or None.
    ///
    /// Syncs first if the key is still in the write buffer (as Python does). [`Booklet::get_ref`]
    /// borrows instead of copying and never syncs.
    pub fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        if let Some(t) = self.table.get().and_then(Option::as_ref) {
            match self.probe_mapped(t, key, fast) {
                Probe::Found(v) => return Ok(Some(v.to_vec())),
                Probe::Absent => return Ok(None),
                Probe::Slow => {}
            }
        }
        match self.find(key, fast)? {
            None => Ok(None),
            Some((pos, klen, vlen)) => {
                let (start, n) = self.value_range(pos, klen, vlen)?;
                match self.st.slice(start, n)? {
                    Some(s) => Ok(Some(s.to_vec())),
                    None => self.st.read_vec(start, n).map(Some),
                }
            }
        }
    }

    /// The stored value bytes of `key`, borrowed from the memory map (or from the write buffer
    /// for a key not yet synced), or an owned copy in buffered mode. Unlike [`Booklet::get`]
    /// this takes `&self` and does not sync a buffered key first: the value is the same, only
    /// the moment the buffer reaches the file differs from Python's.
    #[inline]
    pub fn get_ref(&self, key: &[u8]) -> Result<Option<Cow<'_, [u8]>>> {
        let fast = self.fast.hash(key);
        if !self.buf_keys.is_empty()
            && let Some(v) = self.buffered_value(key, fast)?
        {
            return Ok(Some(Cow::Borrowed(v)));
        }
        // The common case runs without calls: the key table answers, probed inline. A random
        // lookup waits on its cache misses, and the fewer calls and instructions queued behind
        // them, the more of the next lookup the CPU starts meanwhile.
        if let Some(t) = self.table.get().and_then(Option::as_ref) {
            match self.probe_mapped(t, key, fast) {
                Probe::Found(v) => return Ok(Some(Cow::Borrowed(v))),
                Probe::Absent => return Ok(None),
                Probe::Slow => {}
            }
        }
        self.get_ref_by_walk(key, fast)
    }

    /// The value of a key still in the write buffer, or None.
    #[inline(never)]
    fn buffered_value(&self, key: &[u8], fast: u64) -> Result<Option<&[u8]>> {
        self.buffered(key, fast)
            .map(|off| {
                self.buf_value_at(off)
                    .ok_or_else(|| Error::corrupt(off, "write buffer block out of range"))
            })
            .transpose()
    }

    /// [`Booklet::get_ref`] through the file's hash walk: a handle without a key table, or a
    /// block the table's short path does not take.
    #[inline(never)]
    fn get_ref_by_walk(&self, key: &[u8], fast: u64) -> Result<Option<Cow<'_, [u8]>>> {
        match self.find(key, fast)? {
            None => Ok(None),
            Some((pos, klen, vlen)) => {
                let (start, n) = self.value_range(pos, klen, vlen)?;
                match self.st.slice(start, n)? {
                    Some(s) => Ok(Some(Cow::Borrowed(s))),
                    None => self.st.read_vec(start, n).map(|v| Some(Cow::Owned(v))),
                }
            }
        }
    }

    /// The stored value of `key` as text (the `str` serializer's decode), borrowed like
    /// [`Booklet::get_ref`]; a value that is not UTF-8 is [`Error::Decode`].
    #[inline]
    pub fn get_str(&self, key: &[u8]) -> Result<Option<Cow<'_, str>>> {
        Ok(match self.get_ref(key)? {
            None => None,
            Some(Cow::Borrowed(b)) => Some(Cow::Borrowed(decode_str(b)?)),
            Some(Cow::Owned(v)) => Some(Cow::Owned(String::from_utf8(v).map_err(|e| {
                Error::Decode {
                    serializer: Serializer::Str.name(),
                    reason: e.to_string(),
                }
            })?)),
        })
    }

    /// Call `f` with the stored value of `key` without copying it when the file is mapped
    /// (syncs a buffered key first, as [`Booklet::get`]).
    pub fn get_with<R>(&mut self, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        Ok(self.get_ref(key)?.map(|v| f(&v)))
    }

    /// Whether `key` is present (keys in the write buffer count as present).
    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            return Ok(true);
        }
        if let Some(t) = self.table.get().and_then(Option::as_ref) {
            match self.probe_mapped(t, key, fast) {
                Probe::Found(_) => return Ok(true),
                Probe::Absent => return Ok(false),
                Probe::Slow => {}
            }
        }
        Ok(self.find(key, fast)?.is_some())
    }

    /// The item timestamp of `key` (µs since the epoch), or None if the key is missing.
    pub fn get_timestamp(&mut self, key: &[u8]) -> Result<Option<u64>> {
        if self.ts_len == 0 {
            return Err(Error::Unsupported("this file has no item timestamps"));
        }
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        match self.find(key, fast)? {
            None => Ok(None),
            Some((pos, _, _)) => {
                let mut b = [0u8; 8];
                self.st.read_into(pos + self.hdr_len, &mut b[..7])?;
                Ok(Some(u64::from_le_bytes(b)))
            }
        }
    }

    /// Rewrite the timestamp of `key` in place.
    pub fn set_timestamp(&mut self, key: &[u8], timestamp: u64) -> Result<()> {
        self.check_writable()?;
        if self.ts_len == 0 {
            return Err(Error::Unsupported("this file has no item timestamps"));
        }
        let fast = self.fast.hash(key);
        if self.buffered(key, fast).is_some() {
            self.sync()?;
        }
        let (pos, _, _) = self.find(key, fast)?.ok_or(Error::KeyNotFound)?;
        let b = timestamp.to_le_bytes();
        self.st.write_at(pos + self.hdr_len, &b[..7])
    }

    /// The raw metadata value (orjson bytes written by Python's `set_metadata`), if any.
    pub fn get_metadata(&mut self) -> Result<Option<Vec<u8>>> {
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Ok(None);
        }
        self.get(crate::format::METADATA_KEY)
    }

    /// The raw bytes of reserved slot `slot` (1 or 2, Python's `get_reserved`), if written.
    pub fn get_reserved(&mut self, slot: u8) -> Result<Option<Vec<u8>>> {
        let key = reserved_slot_key(slot)?;
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Ok(None);
        }
        self.get(key)
    }

    /// Write the metadata value: the stored bytes, which Python booklet reads with
    /// `orjson.loads` (so write compact JSON, e.g. `{"a":1}`, as `orjson.dumps` produces).
    /// `timestamp` (µs) defaults to now on files with item timestamps. Like Python: syncs first,
    /// writes the block through at once, and does not count it in `len()`; hidden from iteration.
    pub fn set_metadata(&mut self, value: &[u8], timestamp: Option<u64>) -> Result<()> {
        self.write_reserved(crate::format::METADATA_KEY, value, timestamp)
    }

    /// Write reserved slot `slot` (1 or 2; Python's `set_reserved`): raw bytes for libraries
    /// built on booklet, hidden from iteration and `len()`, kept by prune, removed by clear.
    pub fn set_reserved(&mut self, slot: u8, value: &[u8], timestamp: Option<u64>) -> Result<()> {
        let key = reserved_slot_key(slot)?;
        self.write_reserved(key, value, timestamp)
    }

    fn write_reserved(&mut self, key: &[u8], value: &[u8], ts: Option<u64>) -> Result<()> {
        self.check_writable()?;
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Err(Error::Unsupported(
                "fixed-length booklets have no metadata or reserved slots (as in Python)",
            ));
        }
        // As Python: sync, buffer the one block, append it and index it without counting it.
        self.sync()?;
        self.write_block(key, value, ts)?;
        let n_keys = self.n_keys;
        let r = self.flush_buffer();
        self.n_keys = n_keys;
        r
    }

    // ------------------------------------------------------------------ writes

    fn check_writable(&self) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly)
        }
    }

    /// Set `key` to `value` (stored bytes). The item timestamp is "now" on files with timestamps.
    pub fn set(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_block(key, value, None)
    }

    /// Set `key` to `value` with an explicit item timestamp (µs since the Unix epoch).
    pub fn set_with_timestamp(&mut self, key: &[u8], value: &[u8], timestamp: u64) -> Result<()> {
        if matches!(self.header.kind, Kind::Fixed { .. }) {
            return Err(Error::Unsupported(
                "fixed-length booklets have no item timestamps",
            ));
        }
        self.write_block(key, value, Some(timestamp))
    }

    /// Set many items (Python's `update`).
    pub fn update<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        items: impl IntoIterator<Item = (K, V)>,
    ) -> Result<()> {
        for (k, v) in items {
            self.write_block(k.as_ref(), v.as_ref(), None)?;
        }
        Ok(())
    }

    fn write_block(&mut self, key: &[u8], value: &[u8], ts: Option<u64>) -> Result<()> {
        self.check_writable()?;
        if key.len() > usize::from(u16::MAX) {
            return Err(Error::TooLarge {
                what: "key",
                len: key.len(),
                max: u64::from(u16::MAX),
            });
        }
        let vlen = u32::try_from(value.len()).map_err(|_| Error::TooLarge {
            what: "value",
            len: value.len(),
            max: u64::from(u32::MAX),
        })?;
        if let Kind::Fixed { value_len } = self.header.kind
            && value.len() != value_len as usize
        {
            return Err(Error::WrongValueLength {
                expected: value_len,
                got: value.len(),
            });
        }
        let fast = self.fast.hash(key);
        let block_len = self.hdr_len as usize + self.ts_len as usize + key.len() + value.len();
        if block_len > self.buf_cap.saturating_sub(self.buf_data.len()) {
            self.flush_buffer()?;
        }
        let off = self.buf_data.len() as u64;
        let d = &mut self.buf_data;
        d.reserve(block_len);
        // The key hash is filled in when the buffer is flushed (hashed in SIMD batches).
        d.extend_from_slice(&[0u8; KEY_HASH_LEN]);
        d.extend_from_slice(&[1, 0, 0, 0, 0, 0]);
        d.extend_from_slice(&(key.len() as u16).to_le_bytes());
        if matches!(self.header.kind, Kind::Variable) {
            d.extend_from_slice(&vlen.to_le_bytes());
        }
        if self.ts_len > 0 {
            let t = ts.unwrap_or_else(now_micros);
            d.extend_from_slice(&t.to_le_bytes()[..7]);
        }
        d.extend_from_slice(key);
        d.extend_from_slice(value);
        self.buf_index.push((off, fast));
        if self.buf_keys.capacity() == 0 {
            self.buf_keys.reserve(1024);
        }
        self.buf_keys.insert(fast, off);
        Ok(())
    }

    /// Append the data buffer at EOF and index the buffered blocks. On an error the key table
    /// is dropped (it is rebuilt from the file lazily).
    fn flush_buffer(&mut self) -> Result<()> {
        let r = self.flush_buffer_inner();
        if r.is_err() {
            self.reset_table(false);
        }
        r
    }

    fn flush_buffer_inner(&mut self) -> Result<()> {
        let base = self.st.len();
        let hashes = self.hash_buffer()?;
        let mut entries = Vec::with_capacity(self.buf_index.len());
        let mut fasts = Vec::with_capacity(self.buf_index.len());
        for (&(off, fast), h) in self.buf_index.iter().zip(hashes) {
            entries.push((h, base + off));
            let vlen = self
                .buf_value_at(off)
                .map_or(VLEN_UNKNOWN, |v| v.len() as u64);
            fasts.push((fast, vlen));
        }
        self.buf_index.clear();
        self.buf_keys.clear();
        let index_offset = self.header.index_offset;
        let n_buckets = self.header.n_buckets;
        let (linked, deferred) =
            self.link_in_memory(&entries, &fasts, base, index_offset, n_buckets);
        if !self.buf_data.is_empty() {
            let data = std::mem::take(&mut self.buf_data);
            let r = self.st.write_at(base, &data);
            self.buf_data = data;
            self.buf_data.clear();
            r?;
        }
        for (at, v) in deferred {
            self.st.write_u48(at, v)?;
        }
        self.n_keys += linked as u64;
        let rest = entries.get(linked..).unwrap_or_default();
        let rest_fasts = fasts.get(linked..).unwrap_or_default();
        self.n_keys += self.update_index(rest, Some(rest_fasts), index_offset, n_buckets)?;
        self.table_apply(|_| Coherence::Ok);
        Ok(())
    }

    /// Link the leading run of new keys of a flush without reading the file, as
    /// [`Booklet::update_index`] would (a new key goes at the tail of its chain, which the key
    /// table knows). Links into blocks still in the write buffer are patched there; links into
    /// the file (bucket slots, old tails) are returned in order, to be written after the data
    /// as Python does. Returns how many entries were linked; the rest (from the first key
    /// already in the file, or all without a table) go through `update_index`.
    fn link_in_memory(
        &mut self,
        entries: &[(KeyHash, u64)],
        fasts: &[(u64, u64)],
        base: u64,
        index_offset: u64,
        n_buckets: u64,
    ) -> (usize, Vec<(u64, u64)>) {
        let mut deferred = Vec::new();
        let Some(Some(table)) = self.table.get_mut() else {
            return (0, deferred);
        };
        let buf = &mut self.buf_data;
        for (i, (&(hash, pos), &(fast, vlen))) in entries.iter().zip(fasts).enumerate() {
            let bucket = bucket_of(&hash, n_buckets);
            let Some(tail) = table.tail(bucket) else {
                return (i, deferred);
            };
            // Enter the key first: a key already in the file (or a collision) stops here.
            if table.insert_new(fast, pos, vlen) == Coherence::Lost {
                return (i, deferred);
            }
            let at = if tail <= 1 {
                index_offset + bucket * N_BYTES_FILE
            } else {
                tail + 13
            };
            if at >= base {
                let Some(dst) = usize::try_from(at - base)
                    .ok()
                    .and_then(|o| buf.get_mut(o..o + N_BYTES_FILE as usize))
                else {
                    let _undone = table.removed(fast, pos);
                    return (i, deferred);
                };
                dst.copy_from_slice(&pos.to_le_bytes()[..N_BYTES_FILE as usize]);
            } else {
                deferred.push((at, pos));
            }
            table.set_tail(bucket, pos);
        }
        (entries.len(), deferred)
    }

    /// Compute the key hashes of the buffered blocks (in SIMD batches) and write them into
    /// their placeholders; returns them in write order.
    fn hash_buffer(&mut self) -> Result<Vec<KeyHash>> {
        let mut hashes = vec![[0u8; KEY_HASH_LEN]; self.buf_index.len()];
        {
            let mut keys = Vec::with_capacity(self.buf_index.len());
            for &(off, _) in &self.buf_index {
                keys.push(
                    self.buf_key_at(off)
                        .ok_or_else(|| Error::corrupt(off, "write buffer block out of range"))?,
                );
            }
            hash_keys(&keys, &mut hashes);
        }
        for (&(off, _), h) in self.buf_index.iter().zip(&hashes) {
            let o = usize::try_from(off).map_err(|_| Error::corrupt(off, "buffer offset"))?;
            if let Some(dst) = self.buf_data.get_mut(o..o + KEY_HASH_LEN) {
                dst.copy_from_slice(h);
            }
        }
        Ok(hashes)
    }

    /// Link blocks into the index at `index_offset`; returns the number of new keys.
    /// `fasts` (the keys' fast hashes, for flushes) keeps the key table coherent.
    fn update_index(
        &mut self,
        entries: &[(KeyHash, u64)],
        fasts: Option<&[(u64, u64)]>,
        index_offset: u64,
        n_buckets: u64,
    ) -> Result<u64> {
        let mut added = 0u64;
        let max_hops = self.max_hops();
        for (i, (hash, new_pos)) in entries.iter().enumerate() {
            let fv = fasts.and_then(|f| f.get(i).copied());
            let hint = fv.and_then(|(fast, _)| self.table_hint(fast));
            let bucket = bucket_of(hash, n_buckets);
            let slot = index_offset + bucket * N_BYTES_FILE;
            let first = self.st.read_u48(slot)?;
            if first <= 1 {
                self.st.write_u48(slot, *new_pos)?;
                added += 1;
                if let Some((fast, vlen)) = fv {
                    self.table_apply(|t| {
                        t.set_tail(bucket, *new_pos);
                        t.insert_new(fast, *new_pos, vlen)
                    });
                }
                continue;
            }
            let mut prev_ptr = slot;
            let mut pos = first;
            let mut hops = 0u64;
            loop {
                let (h, next) = match hint {
                    Some((p, h, next)) if p == pos => (h, next),
                    _ => self.read_hash_next(pos)?,
                };
                if next != 0 {
                    if h == *hash {
                        self.st.write_u48(pos + 13, 0)?;
                        self.st.write_u48(prev_ptr, *new_pos)?;
                        if next > 1 {
                            self.st.write_u48(*new_pos + 13, next)?;
                        }
                        if let Some((fast, vlen)) = fv {
                            self.table_apply(|t| {
                                if next == 1 {
                                    t.set_tail(bucket, *new_pos);
                                }
                                t.moved(fast, pos, *new_pos, vlen)
                            });
                        }
                        break;
                    } else if next == 1 {
                        self.st.write_u48(pos + 13, *new_pos)?;
                        added += 1;
                        if let Some((fast, vlen)) = fv {
                            self.table_apply(|t| {
                                t.set_tail(bucket, *new_pos);
                                t.insert_new(fast, *new_pos, vlen)
                            });
                        }
                        break;
                    }
                } else {
                    self.st.write_u48(prev_ptr, *new_pos)?;
                    added += 1;
                    if let Some((fast, vlen)) = fv {
                        self.table_apply(|t| {
                            t.set_tail(bucket, *new_pos);
                            t.insert_new(fast, *new_pos, vlen)
                        });
                    }
                    break;
                }
                prev_ptr = pos + 13;
                pos = next;
                hops += 1;
                if hops > max_hops {
                    return Err(Error::corrupt(pos, "bucket chain does not end (cycle)"));
                }
            }
        }
        Ok(added)
    }

    /// `update_index` into a fresh, empty index at `index_offset` (prune), for blocks whose next
    /// pointers are all 1: while the hashes are distinct, every block goes at the tail of its
    /// chain, so the index is built in memory from chain tails, with no reads of the file,
    /// and written once. From the first repeated hash on (only in a file with two live blocks
    /// of one key), the rest goes through `update_index`, which splices as Python does.
    fn relink_fresh(
        &mut self,
        entries: &[(KeyHash, u64)],
        index_offset: u64,
        n_buckets: u64,
    ) -> Result<u64> {
        let index_len = n_buckets * N_BYTES_FILE;
        if n_buckets > MAX_TAIL_BUCKETS || index_len > 64 << 20 {
            return self.update_index(entries, None, index_offset, n_buckets);
        }
        let mut index = empty_index(n_buckets);
        let mut tails = vec![0u64; n_buckets as usize];
        let mut seen = HashSetFast::default();
        seen.reserve(entries.len());
        let mut done = entries.len();
        for (i, (hash, pos)) in entries.iter().enumerate() {
            if !seen.insert(*hash) {
                done = i;
                break;
            }
            let bucket = bucket_of(hash, n_buckets);
            let tail = tails
                .get_mut(bucket as usize)
                .ok_or_else(|| Error::corrupt(*pos, "bucket out of range"))?;
            if *tail == 0 {
                let at = (bucket * N_BYTES_FILE) as usize;
                if let Some(slot) = index.get_mut(at..at + N_BYTES_FILE as usize) {
                    slot.copy_from_slice(&pos.to_le_bytes()[..N_BYTES_FILE as usize]);
                }
            } else {
                self.st.write_u48(*tail + 13, *pos)?;
            }
            *tail = *pos;
        }
        self.st.write_at(index_offset, &index)?;
        let rest = entries.get(done..).unwrap_or_default();
        Ok(done as u64 + self.update_index(rest, None, index_offset, n_buckets)?)
    }

    /// (offset, hash, next pointer) of the block the key table holds for `fast`, read before a
    /// chain walk: the table probe and this read do not depend on the walk's bucket slot read,
    /// so their cache misses overlap it, and the walk then finds the block already read. Only
    /// a hint: the walk still compares hashes (another key may share the fast hash).
    #[inline]
    fn table_hint(&self, fast: u64) -> Option<(u64, KeyHash, u64)> {
        let (pos, _) = self.table.get()?.as_ref()?.get(fast)?;
        let (h, next) = self.read_hash_next(pos).ok()?;
        Some((pos, h, next))
    }

    #[inline]
    fn read_hash_next(&self, pos: u64) -> Result<(KeyHash, u64)> {
        let mut b = [0u8; 19];
        self.st.read_into(pos, &mut b)?;
        let mut h = [0u8; KEY_HASH_LEN];
        h.copy_from_slice(&b[..13]);
        Ok((h, u48(&b[13..19])))
    }

    fn write_n_keys(&mut self) -> Result<()> {
        let n = u32::try_from(self.n_keys).unwrap_or(u32::MAX - 1);
        self.st.write_small(POS_N_KEYS, n.to_le_bytes())
    }

    /// Write buffered items to the file and index them (no fsync, as in Python).
    pub fn sync(&mut self) -> Result<()> {
        if !self.writable || self.closed {
            return Ok(());
        }
        if !self.buf_index.is_empty() {
            self.flush_buffer()?;
            self.check_auto_reindex()?;
            self.write_n_keys()?;
        }
        self.check_auto_reindex()
    }

    fn check_auto_reindex(&mut self) -> Result<()> {
        if self.n_keys > self.header.n_buckets
            && let Some(new_n) = next_n_buckets(self.header.n_buckets)
        {
            self.reindex(new_n)?;
        }
        Ok(())
    }

    /// Move to a bigger bucket index (as Python's auto-reindex does; normally automatic).
    pub fn reindex(&mut self, new_n: u64) -> Result<()> {
        let r = self.reindex_inner(new_n);
        if r.is_err() {
            self.reset_table(false);
        }
        r
    }

    fn reindex_inner(&mut self, new_n: u64) -> Result<()> {
        self.check_writable()?;
        if new_n == 0 || new_n > u64::from(u32::MAX) {
            return Err(Error::InvalidOption(format!(
                "bucket count {new_n} out of range"
            )));
        }
        let old_n = self.header.n_buckets;
        let old_index = self.header.index_offset;
        let new_index = self.st.len();
        // The new index is built in memory up to 64 MiB (every step but the last of the
        // chain) and written once; beyond that, in place in the file.
        let new_len = new_n * N_BYTES_FILE;
        let mut mem_index = (new_len <= 64 << 20).then(|| empty_index(new_n));
        if mem_index.is_none() {
            self.st.write_at(new_index, &empty_index(new_n))?;
        }
        let max_hops = self.max_hops();
        // Chain tails of the new index, when the key table keeps tails.
        let mut tails = match self.table.get() {
            Some(Some(t)) if t.has_tails() && new_n <= MAX_TAIL_BUCKETS => empty_tails(new_n),
            _ => None,
        };
        // Old buckets are taken GROUP at a time: their chains are walked side by side (one
        // step of each per round, so the block reads of different chains overlap in memory),
        // then their blocks are relinked in the original order (bucket by bucket, chain order),
        // which is what fixes the bytes.
        const GROUP: usize = 32;
        let mut slots = vec![0u8; GROUP * N_BYTES_FILE as usize];
        let mut chains: Vec<Vec<(u64, KeyHash)>> = vec![Vec::new(); GROUP];
        let mut b0 = 0u64;
        while b0 < old_n {
            let g = (GROUP as u64).min(old_n - b0) as usize;
            let sl = &mut slots[..g * N_BYTES_FILE as usize];
            self.st.read_into(old_index + b0 * N_BYTES_FILE, sl)?;
            let mut cur = [0u64; GROUP];
            for (c, s) in cur.iter_mut().zip(sl.chunks_exact(N_BYTES_FILE as usize)) {
                *c = u48(s);
            }
            for c in &mut chains {
                c.clear();
            }
            let mut hops = 0u64;
            loop {
                let mut live = false;
                for (c, chain) in cur.iter_mut().zip(chains.iter_mut()).take(g) {
                    if *c <= 1 {
                        continue;
                    }
                    let (h, next) = self.read_hash_next(*c)?;
                    if next == 0 {
                        *c = 0;
                        continue;
                    }
                    chain.push((*c, h));
                    *c = next;
                    live = true;
                }
                if !live {
                    break;
                }
                hops += 1;
                if hops > max_hops {
                    return Err(Error::corrupt(
                        old_index + b0 * N_BYTES_FILE,
                        "bucket chain does not end (cycle)",
                    ));
                }
            }
            for chain in chains.iter().take(g) {
                for &(pos, h) in chain {
                    let new_bucket = bucket_of(&h, new_n);
                    let head = match mem_index.as_mut() {
                        Some(m) => {
                            let at = (new_bucket * N_BYTES_FILE) as usize;
                            let slot = m
                                .get_mut(at..at + N_BYTES_FILE as usize)
                                .ok_or_else(|| Error::corrupt(new_index, "bucket out of range"))?;
                            let head = u48(slot);
                            slot.copy_from_slice(&pos.to_le_bytes()[..N_BYTES_FILE as usize]);
                            head
                        }
                        None => {
                            let slot = new_index + new_bucket * N_BYTES_FILE;
                            let head = self.st.read_u48(slot)?;
                            self.st.write_u48(slot, pos)?;
                            head
                        }
                    };
                    if head <= 1
                        && let Some(t) = tails.as_mut().and_then(|t| t.get_mut(new_bucket as usize))
                    {
                        *t = pos;
                    }
                    self.st
                        .write_u48(pos + 13, if head <= 1 { 1 } else { head })?;
                }
            }
            b0 += g as u64;
        }
        if let Some(m) = mem_index {
            self.st.write_at(new_index, &m)?;
        }
        if old_index != SUB_INDEX_INIT_POS {
            self.write_skip_blocks(old_index, old_n * N_BYTES_FILE)?;
        }
        self.st
            .write_at(POS_N_BUCKETS, &(new_n as u32).to_le_bytes())?;
        self.st
            .write_at(POS_INDEX_OFFSET, &new_index.to_le_bytes()[..6])?;
        let first = self.header.first_data_block_pos;
        self.st
            .write_at(POS_FIRST_DATA, &first.to_le_bytes()[..6])?;
        self.header.n_buckets = new_n;
        self.header.index_offset = new_index;
        self.table_apply(|t| {
            t.set_tails(tails);
            Coherence::Ok
        });
        self.st.advise(true, new_index, new_n * N_BYTES_FILE);
        Ok(())
    }

    /// Overwrite a dead region (an old relocated index) with tombstoned blocks so scans step
    /// over it. Variable files: one block, as Python writes it. Fixed files: blocks whose key
    /// lengths fit the 2-byte field (Python overflows there; its scanner reads both layouts).
    fn write_skip_blocks(&mut self, offset: u64, dead: u64) -> Result<()> {
        match self.header.kind {
            Kind::Variable => {
                let overhead = 25 + self.ts_len;
                if dead < overhead + 1 {
                    return Ok(());
                }
                let vlen = dead - overhead - 1;
                let mut b = vec![0u8; dead as usize];
                b[19..21].copy_from_slice(&1u16.to_le_bytes());
                b[21..25].copy_from_slice(&(vlen as u32).to_le_bytes());
                self.st.write_at(offset, &b)
            }
            Kind::Fixed { value_len } => {
                let vl = u64::from(value_len);
                let overhead = 21u64;
                let min_block = overhead + 1 + vl;
                let end = offset + dead;
                let mut pos = offset;
                while pos < end {
                    let remaining = end - pos;
                    if remaining < min_block {
                        break;
                    }
                    let mut klen = remaining - overhead - vl;
                    if klen > u64::from(u16::MAX) {
                        klen = (remaining - overhead - vl)
                            .saturating_sub(min_block)
                            .clamp(1, u64::from(u16::MAX));
                    }
                    let size = overhead + klen + vl;
                    let mut b = vec![0u8; size as usize];
                    b[19..21].copy_from_slice(&(klen as u16).to_le_bytes());
                    self.st.write_at(pos, &b)?;
                    pos += size;
                }
                Ok(())
            }
        }
    }

    /// Delete `key` ([`Error::KeyNotFound`] if absent). Writes through at once, with `n_keys`.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        let r = self.delete_inner(key);
        if matches!(r, Err(ref e) if !matches!(e, Error::KeyNotFound | Error::ReadOnly)) {
            self.reset_table(false);
        }
        r
    }

    fn delete_inner(&mut self, key: &[u8]) -> Result<()> {
        self.check_writable()?;
        if !self.buf_index.is_empty() {
            self.sync()?;
        }
        let fast = self.fast.hash(key);
        // With the key table, the key's live block comes from the table (key bytes checked)
        // and its stored hash stands in for hashing the key: the table only holds blocks whose
        // stored hash is `BLAKE2s` of their key. That saves the hash's compute, which costs
        // as much as the table probe's cache miss and keeps the next delete's misses from
        // overlapping this one's.
        let (hash, hint) = match self.table.get() {
            Some(Some(t)) => {
                let Some((pos, _)) = t.get(fast) else {
                    return Err(Error::KeyNotFound);
                };
                match self.block_if_key(pos, key, None)? {
                    Some(_) => {
                        let (h, next) = self.read_hash_next(pos)?;
                        (h, Some((pos, h, next)))
                    }
                    // Another key with the same 64-bit hash holds the entry: walk by hash.
                    None => (hash_key(key), None),
                }
            }
            _ => (hash_key(key), None),
        };
        let bucket = bucket_of(&hash, self.header.n_buckets);
        let slot = self.header.index_offset + bucket * N_BYTES_FILE;
        let first = self.st.read_u48(slot)?;
        if first <= 1 {
            return Err(Error::KeyNotFound);
        }
        let mut prev_ptr = slot;
        let mut pos = first;
        let mut hops = 0u64;
        let max_hops = self.max_hops();
        loop {
            let (h, next) = match hint {
                Some((p, h, next)) if p == pos => (h, next),
                _ => self.read_hash_next(pos)?,
            };
            if next == 0 {
                return Err(Error::KeyNotFound);
            }
            if h == hash {
                self.st.write_u48(pos + 13, 0)?;
                self.st.write_u48(prev_ptr, next)?;
                self.table_apply(|t| {
                    if next == 1 {
                        t.set_tail(bucket, if prev_ptr == slot { 0 } else { prev_ptr - 13 });
                    }
                    t.removed(fast, pos)
                });
                if !is_reserved_key(key) {
                    self.n_keys = self.n_keys.saturating_sub(1);
                    self.write_n_keys()?;
                }
                return Ok(());
            }
            if next == 1 {
                return Err(Error::KeyNotFound);
            }
            prev_ptr = pos + 13;
            pos = next;
            hops += 1;
            if hops > max_hops {
                return Err(Error::corrupt(pos, "bucket chain does not end (cycle)"));
            }
        }
    }

    /// Remove every item (and the metadata), keeping the bucket count.
    pub fn clear(&mut self) -> Result<()> {
        self.check_writable()?;
        self.buf_data.clear();
        self.buf_index.clear();
        self.buf_keys.clear();
        self.reset_table(true);
        let n = self.header.n_buckets;
        self.st.set_len(SUB_INDEX_INIT_POS)?;
        self.st.sync_all()?;
        self.st.write_at(POS_N_KEYS, &0u32.to_le_bytes())?;
        self.st.write_at(POS_INDEX_OFFSET, &[0u8; 12])?;
        self.st.write_at(SUB_INDEX_INIT_POS, &empty_index(n))?;
        self.n_keys = 0;
        self.header.index_offset = SUB_INDEX_INIT_POS;
        self.header.first_data_block_pos = SUB_INDEX_INIT_POS + n * N_BYTES_FILE;
        Ok(())
    }

    /// Remove overwritten and deleted blocks, and with `older_than` (µs) also live items whose
    /// timestamp is older, except `keep_keys`. Returns the number of removed blocks.
    pub fn prune(&mut self, older_than: Option<u64>, keep_keys: &[&[u8]]) -> Result<u64> {
        self.sync()?;
        self.check_writable()?;
        self.reset_table(false);
        let keep: HashSetFast = keep_keys.iter().map(|k| hash_key(k)).collect();
        let reserved: Vec<KeyHash> = std::iter::once(crate::format::METADATA_KEY)
            .chain(crate::format::RESERVED_SLOT_KEYS)
            .map(hash_key)
            .collect();
        let fixed_vlen = match self.header.kind {
            Kind::Fixed { value_len } => Some(u64::from(value_len)),
            Kind::Variable => None,
        };
        let hl = self.hdr_len;
        let mut buf = std::mem::take(&mut self.buf_data);
        buf.clear();
        let mut write_pos = SUB_INDEX_INIT_POS;
        let mut removed = 0u64;
        let mut reserved_kept = 0u64;
        for (start, end) in self.regions()? {
            let mut pos = start;
            while pos < end {
                let mut head = [0u8; 25];
                self.st.read_into(pos, &mut head[..hl as usize])?;
                let next = u48(&head[13..19]);
                let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
                let vlen = fixed_vlen.unwrap_or_else(|| {
                    u64::from(u32::from_le_bytes([head[21], head[22], head[23], head[24]]))
                });
                let body_len = self.ts_len + klen + vlen;
                let total = hl + body_len;
                if pos + total > end {
                    return Err(Error::corrupt(
                        pos,
                        format!("data block of {total} bytes runs past its region end {end}"),
                    ));
                }
                if next != 0 {
                    let hash: KeyHash = head[..13]
                        .try_into()
                        .map_err(|_| Error::corrupt(pos, "hash"))?;
                    let mut keep_it = true;
                    if reserved.contains(&hash) {
                        reserved_kept += 1;
                    } else if let Some(t) = older_than
                        && t != 0
                        && self.ts_len > 0
                        && fixed_vlen.is_none()
                        && !keep.contains(&hash)
                    {
                        let mut tb = [0u8; 8];
                        self.st.read_into(pos + hl, &mut tb[..7])?;
                        if u64::from_le_bytes(tb) < t {
                            keep_it = false;
                        }
                    }
                    if keep_it {
                        if total as usize > self.buf_cap.saturating_sub(buf.len())
                            && !buf.is_empty()
                        {
                            self.st.write_at(write_pos, &buf)?;
                            write_pos += buf.len() as u64;
                            buf.clear();
                        }
                        buf.extend_from_slice(&head[..13]);
                        buf.extend_from_slice(&[1, 0, 0, 0, 0, 0]);
                        buf.extend_from_slice(&head[19..hl as usize]);
                        let blen = usize::try_from(body_len)
                            .map_err(|_| Error::corrupt(pos, "block too large"))?;
                        let at = buf.len();
                        buf.resize(at + blen, 0);
                        self.st.read_into(pos + hl, &mut buf[at..])?;
                    } else {
                        removed += 1;
                    }
                } else {
                    removed += 1;
                }
                pos += total;
            }
        }
        if !buf.is_empty() {
            self.st.write_at(write_pos, &buf)?;
            write_pos += buf.len() as u64;
            buf.clear();
        }
        self.buf_data = buf;
        let live_end = write_pos;
        let n = self.header.n_buckets;
        let mut n_keys;
        if live_end > SUB_INDEX_INIT_POS {
            let new_index = live_end;
            self.st.write_at(new_index, &empty_index(n))?;
            let mut entries = Vec::new();
            let mut pos = SUB_INDEX_INIT_POS;
            while pos < live_end {
                let mut head = [0u8; 25];
                self.st.read_into(pos, &mut head[..hl as usize])?;
                let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
                let vlen = fixed_vlen.unwrap_or_else(|| {
                    u64::from(u32::from_le_bytes([head[21], head[22], head[23], head[24]]))
                });
                let mut h = [0u8; KEY_HASH_LEN];
                h.copy_from_slice(&head[..13]);
                entries.push((h, pos));
                pos += hl + self.ts_len + klen + vlen;
            }
            n_keys = self.relink_fresh(&entries, new_index, n)?;
            self.st.set_len(new_index + n * N_BYTES_FILE)?;
            self.st.sync_all()?;
            self.st
                .write_at(POS_INDEX_OFFSET, &new_index.to_le_bytes()[..6])?;
            self.st
                .write_at(POS_FIRST_DATA, &SUB_INDEX_INIT_POS.to_le_bytes()[..6])?;
            self.header.index_offset = new_index;
            self.header.first_data_block_pos = SUB_INDEX_INIT_POS;
        } else {
            self.st.write_at(SUB_INDEX_INIT_POS, &empty_index(n))?;
            self.st.set_len(SUB_INDEX_INIT_POS + n * N_BYTES_FILE)?;
            self.st.sync_all()?;
            self.st.write_at(POS_INDEX_OFFSET, &[0u8; 12])?;
            self.header.index_offset = SUB_INDEX_INIT_POS;
            self.header.first_data_block_pos = SUB_INDEX_INIT_POS + n * N_BYTES_FILE;
            n_keys = 0;
        }
        self.st.sync_all()?;
        // Every block moved: the key table is rebuilt lazily (or starts empty and built).
        self.reset_table(live_end <= SUB_INDEX_INIT_POS);
        n_keys = n_keys.saturating_sub(reserved_kept);
        self.n_keys = n_keys;
        self.write_n_keys()?;
        Ok(removed)
    }

    /// Sync and release the lock. Dropping a handle also syncs (errors ignored).
    pub fn close(mut self) -> Result<()> {
        let r = self.sync();
        self.closed = true;
        r
    }

    // ------------------------------------------------------------------ iteration

    /// The data regions in file order: `[first_data, index_offset)` and
    /// `[index_offset + 6n, EOF)` for a relocated index, else `[first_data, EOF)`.
    fn regions(&self) -> Result<Vec<(u64, u64)>> {
        let end = self.st.len();
        let h = &self.header;
        if h.index_offset != SUB_INDEX_INIT_POS {
            let mut v = vec![(h.first_data_block_pos, h.index_offset)];
            let start2 = h.index_offset + h.n_buckets * N_BYTES_FILE;
            if start2 < end {
                v.push((start2, end));
            }
            Ok(v)
        } else {
            if h.first_data_block_pos > end {
                return Err(Error::corrupt(
                    POS_FIRST_DATA,
                    "first data block past the end of the file",
                ));
            }
            Ok(vec![(h.first_data_block_pos, end)])
        }
    }

    fn scan(&self, want_value: bool) -> Iter<'_> {
        let regions = self.regions();
        let (regions, err) = match regions {
            Ok(r) => (r, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        if want_value {
            for (s, e) in &regions {
                self.st.advise(false, *s, e - s);
            }
        }
        let pos = regions.first().map_or(0, |r| r.0);
        Iter {
            bk: self,
            regions,
            region: 0,
            pos,
            chunk: Vec::new(),
            chunk_start: 0,
            pending_err: err,
            done: false,
        }
    }

    /// Iterate over all items in file order (syncs buffered writes first). Reserved keys
    /// (metadata, slots) and deleted blocks are skipped.
    pub fn iter(&mut self) -> Result<Iter<'_>> {
        self.sync()?;
        Ok(self.scan(true))
    }

    /// Iterate over the stored keys.
    pub fn keys(&mut self) -> Result<impl Iterator<Item = Result<Cow<'_, [u8]>>>> {
        Ok(self.iter()?.map(|e| e.map(|e| e.key)))
    }

    /// Iterate over the stored values.
    pub fn values(&mut self) -> Result<impl Iterator<Item = Result<Cow<'_, [u8]>>>> {
        Ok(self.iter()?.map(|e| e.map(|e| e.value)))
    }

    /// Where every live value lies in the file, in file order (Python's `locations()`): key,
    /// item timestamp, and the offset and length of the stored value bytes, for reading them
    /// through another handle. Syncs first. Offsets stay valid across set, delete and reindex
    /// (blocks are append-only) and are invalidated by prune and clear.
    pub fn locations(&mut self) -> Result<impl Iterator<Item = Result<Location<'_>>>> {
        let skip = self.hdr_len + self.ts_len;
        Ok(self.iter()?.map(move |e| {
            e.map(|e| Location {
                value_offset: e.offset + skip + e.key.len() as u64,
                value_len: e.value.len() as u64,
                timestamp: e.timestamp,
                key: e.key,
            })
        }))
    }
}

impl Drop for Booklet {
    fn drop(&mut self) {
        if !self.closed {
            let _ignored = self.sync();
        }
    }
}

impl std::fmt::Debug for Booklet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Booklet")
            .field("path", &self.st.path())
            .field("header", &self.header)
            .field("writable", &self.writable)
            .field("n_keys", &self.n_keys)
            .finish_non_exhaustive()
    }
}

/// The stored key of reserved slot 1 or 2.
fn reserved_slot_key(slot: u8) -> Result<&'static [u8]> {
    match slot {
        1 | 2 => Ok(crate::format::RESERVED_SLOT_KEYS[usize::from(slot - 1)]),
        _ => Err(Error::InvalidOption(format!(
            "reserved slot must be 1 or 2, not {slot}"
        ))),
    }
}

/// What [`Booklet::probe_mapped`] found.
enum Probe<'a> {
    /// The key's value, borrowed from the map.
    Found(&'a [u8]),
    /// The key is not in the file.
    Absent,
    /// Take the general path.
    Slow,
}

/// Byte equality with two overlapping 8-byte loads for keys of 8 to 16 bytes.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&s[i..i + 8]);
            u64::from_le_bytes(w)
        };
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    a == b
}

#[inline]
fn u48(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x[..6].copy_from_slice(&b[..6]);
    u64::from_le_bytes(x)
}

/// A UUID of RFC 9562 version 8 from OS randomness (Python uses `uuid6.uuid8()`).
fn fill_uuid8(out: &mut [u8; 16]) {
    let mut filled = false;
    if let Ok(f) = File::open("/dev/urandom") {
        filled = f.read_exact_at(out, 0).is_ok();
    }
    if !filled {
        let t = now_micros().to_le_bytes();
        let p = u64::from(std::process::id()).to_le_bytes();
        out[..8].copy_from_slice(&t);
        out[8..].copy_from_slice(&p);
    }
    out[6] = (out[6] & 0x0f) | 0x80;
    out[8] = (out[8] & 0x3f) | 0x80;
}

/// Iterator over the items of a [`Booklet`], in file order.
pub struct Iter<'a> {
    bk: &'a Booklet,
    regions: Vec<(u64, u64)>,
    region: usize,
    pos: u64,
    chunk: Vec<u8>,
    chunk_start: u64,
    pending_err: Option<Error>,
    done: bool,
}

const CHUNK: usize = 256 * 1024;

impl<'a> Iter<'a> {
    /// Bytes [off, off+n) in buffered mode, refilling the read-ahead chunk within `end`.
    fn chunk_bytes(&mut self, off: u64, n: usize, end: u64) -> Result<&[u8]> {
        let have =
            off >= self.chunk_start && off + n as u64 <= self.chunk_start + self.chunk.len() as u64;
        if !have {
            let want = (end - off).min(CHUNK.max(n) as u64) as usize;
            let want = want.max(n);
            self.chunk.resize(want, 0);
            self.bk.st.read_into(off, &mut self.chunk)?;
            self.chunk_start = off;
        }
        let s = (off - self.chunk_start) as usize;
        self.chunk
            .get(s..s + n)
            .ok_or_else(|| Error::corrupt(off, "read-ahead chunk too short"))
    }

    fn step(&mut self) -> Result<Option<Entry<'a>>> {
        let bk = self.bk;
        let hl = bk.hdr_len;
        loop {
            let Some(&(_, end)) = self.regions.get(self.region) else {
                return Ok(None);
            };
            if self.pos >= end {
                self.region += 1;
                if let Some(&(s, _)) = self.regions.get(self.region) {
                    self.pos = s;
                }
                continue;
            }
            let pos = self.pos;
            if pos + hl > end {
                return Err(Error::corrupt(pos, "truncated data block header"));
            }
            let mut head = [0u8; 25];
            match bk.st.slice(pos, hl as usize)? {
                Some(s) => head[..hl as usize].copy_from_slice(s),
                None => {
                    let s = self.chunk_bytes(pos, hl as usize, end)?;
                    head[..hl as usize].copy_from_slice(s);
                }
            }
            let next = u48(&head[13..19]);
            let klen = u64::from(u16::from_le_bytes([head[19], head[20]]));
            let vlen = bk.vlen_of(&head[..hl as usize]);
            let body = bk.ts_len + klen + vlen;
            let total = hl + body;
            if pos + total > end {
                return Err(Error::corrupt(
                    pos,
                    format!("data block of {total} bytes runs past its region end {end}"),
                ));
            }
            self.pos = pos + total;
            if next == 0 {
                continue;
            }
            let body_n = body as usize;
            let (ts, key, value): (Option<u64>, Cow<'a, [u8]>, Cow<'a, [u8]>) =
                match bk.st.slice(pos + hl, body_n)? {
                    Some(b) => {
                        let (t, kv) = b.split_at(bk.ts_len as usize);
                        let (k, v) = kv.split_at(klen as usize);
                        (ts_of(t), Cow::Borrowed(k), Cow::Borrowed(v))
                    }
                    None => {
                        let ts_len = bk.ts_len as usize;
                        let b = self.chunk_bytes(pos + hl, body_n, end)?;
                        let (t, kv) = b.split_at(ts_len);
                        let (k, v) = kv.split_at(klen as usize);
                        (ts_of(t), Cow::Owned(k.to_vec()), Cow::Owned(v.to_vec()))
                    }
                };
            if is_reserved_key(&key) {
                continue;
            }
            return Ok(Some(Entry {
                key,
                value,
                timestamp: ts,
                offset: pos,
            }));
        }
    }
}

fn ts_of(t: &[u8]) -> Option<u64> {
    if t.is_empty() {
        return None;
    }
    let mut b = [0u8; 8];
    b[..t.len().min(8)].copy_from_slice(&t[..t.len().min(8)]);
    Some(u64::from_le_bytes(b))
}

impl<'a> Iterator for Iter<'a> {
    type Item = Result<Entry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.pending_err.take() {
            self.done = true;
            return Some(Err(e));
        }
        match self.step() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl Booklet {
    /// The path this handle was opened with.
    #[must_use]
    pub fn path(&self) -> PathBuf {
        self.st.path().to_path_buf()
    }

    /// The underlying file (for advanced use, e.g. checking locks).
    #[must_use]
    pub fn file(&self) -> &File {
        self.st.file()
    }
}

//! The [`Booklet`] handle: its options, open and create, the file lock, accessors, close and
//! drop. Its other jobs live in the submodules:
//!
//! * `lookup`: reads of one key (key table probe, hash walk, write buffer), `get*`, `contains`;
//! * `table`: the handle's key table (lazy build, reset, coherence with writes);
//! * `write`: the write buffer, `update_index`, `sync`, item timestamps, metadata, reserved slots;
//! * `maintenance`: reindex, delete, clear and prune;
//! * `iter`: the data regions and iteration in file order;
//! * `typed`: keys and values as [`crate::Value`]s through the file's serializers.
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

pub(crate) mod iter;
mod lookup;
mod maintenance;
mod table;
mod typed;
mod write;

use std::fs::{File, TryLockError};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::format::{
    HEADER_LEN, Header, KEY_HASH_LEN, KeyHash, Kind, N_BYTES_FILE, N_KEYS_CRASH,
    SUB_INDEX_INIT_POS, TIMESTAMP_LEN,
};
use crate::keytable::{DEFAULT_KEY_TABLE_LIMIT, FastHasher, HashKeyed, KeyTable};
use crate::serial::{Limits, Serializer};
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
    decode_limits: Limits,
    release_pages: bool,
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
            decode_limits: Limits::default(),
            release_pages: true,
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

    /// How much memory decoding one typed key or value may take (see [`Limits`]).
    #[must_use]
    pub fn decode_limits(mut self, limits: Limits) -> Self {
        self.decode_limits = limits;
        self
    }

    /// Whether a memory-mapped handle gives the pages of the mapping back to the OS
    /// (`madvise(MADV_DONTNEED)`) after a full iteration (over the data regions it read) and
    /// after `prune` (the whole mapping), as seed 003's madvise strategy proposes for large
    /// files. On by default. The file's pages stay in the page cache; the handle's next reads
    /// of them map them again (minor page faults), which a handle that iterates the same
    /// small file over and over may want to avoid by turning this off.
    #[must_use]
    pub fn release_pages(mut self, on: bool) -> Self {
        self.release_pages = on;
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
    /// The options this handle was opened with, for [`Booklet::reopen`].
    opts: OpenOptions,
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
            opts: opts.clone(),
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

    /// Sync and release the lock. Dropping a handle also syncs (errors ignored).
    pub fn close(mut self) -> Result<()> {
        let r = self.sync();
        self.closed = true;
        r
    }

    /// Close the handle and open its file again with `flag`, [`Flag::Read`] or
    /// [`Flag::Write`], keeping the options it was opened with (Python's `reopen(flag)`).
    ///
    /// As in Python, the handle syncs, unmaps and releases its lock first, then opens the file
    /// and takes the lock of the new mode (shared for `r`, exclusive for `w`, waiting up to the
    /// lock timeout), so switching a writer to a reader lets other readers in and switching a
    /// reader to a writer waits for them. Unlike Python, which keeps the state it had in memory,
    /// the header is read again: another process may have written the file in between.
    ///
    /// On error the old handle is gone (closed), as Python's object is left closed.
    pub fn reopen(mut self, flag: Flag) -> Result<Booklet> {
        if !matches!(flag, Flag::Read | Flag::Write) {
            return Err(Error::InvalidOption(
                "reopen takes flag r or w (as Python's reopen)".into(),
            ));
        }
        let path = self.st.path().to_path_buf();
        let opts = self.opts.clone();
        let synced = self.sync();
        self.closed = true;
        // Dropping the handle unmaps the file and closes it, which releases the flock: a
        // shared lock of ours would otherwise block our own exclusive one (flock belongs to
        // the open file description).
        drop(self);
        synced?;
        Booklet::open_with(&path, flag, &opts)
    }

    /// The limits of typed decoding on this handle.
    pub(crate) fn decode_limits(&self) -> &Limits {
        &self.opts.decode_limits
    }

    // ------------------------------------------------------------------ shared by the submodules

    fn check_writable(&self) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(Error::ReadOnly)
        }
    }

    fn max_hops(&self) -> u64 {
        self.st.len() / self.hdr_len + 2
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

    #[inline]
    fn read_hash_next(&self, pos: u64) -> Result<(KeyHash, u64)> {
        let mut b = [0u8; 19];
        self.st.read_into(pos, &mut b)?;
        let mut h = [0u8; KEY_HASH_LEN];
        h.copy_from_slice(&b[..13]);
        Ok((h, u48(&b[13..19])))
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

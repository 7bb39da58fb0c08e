//! Reading Riegeli/records files.
//!
//! [`RecordReader`] reads chunk after chunk, verifying every block header, chunk header and data hash, and
//! yields records without copying them (a record borrows the reader's decoded chunk).
//!
//! Reading a chunk at `begin` (as C++ `DefaultChunkReader`):
//! 1. read 40 header bytes, skipping the block headers met on the way; every block header must carry a
//!    good hash and `previous_chunk == block_begin - begin`;
//! 2. check the header hash, then `next_chunk == chunk_end - block_begin` of those block headers;
//! 3. read `data_size` bytes the same way and check the data hash; continue at `chunk_end`.
//!
//! **Recovery** (optional, [`RecordReader::set_recovery`]): on a damaged block or chunk header the reader
//! looks at the following block headers for the next chunk boundary; on a bad data hash or a chunk that does
//! not decode it skips to the chunk's end; at a truncated last chunk it stops. Every skip is reported as a
//! [`SkippedRegion`] to the callback, which decides whether to go on.
//!
//! Allocations are bounded by the file size (a chunk must fit in the file before its data is read) and,
//! for compressed streams, by what the stream actually decompresses to.

use std::fmt;
use std::io::{ErrorKind, Read, Seek, SeekFrom};

use crate::block::{
    BLOCK_HEADER_SIZE, BLOCK_SIZE, BlockHeader, add_with_overhead, is_possible_chunk_boundary,
};
use crate::chunk::{CHUNK_HEADER_SIZE, ChunkHeader, ChunkType};
use crate::compression::{CompressionType, Decompressor};
use crate::error::{Error, Result};
use crate::simple::{self, Values};
use crate::transpose::decode::TransposeDecoder;

/// A region skipped by recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRegion {
    /// First skipped byte.
    pub begin: u64,
    /// End of the skipped bytes (where reading resumed).
    pub end: u64,
    /// Why.
    pub message: String,
}

impl SkippedRegion {
    /// Skipped bytes.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.begin)
    }

    /// Whether no bytes were skipped.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for SkippedRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skipped [{}, {}): {}",
            self.begin, self.end, self.message
        )
    }
}

/// The position of a record: its chunk's begin and its index in the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RecordPosition {
    /// File offset of the chunk.
    pub chunk_begin: u64,
    /// Index of the record in the chunk.
    pub record_index: u64,
}

impl RecordPosition {
    /// The numeric form `chunk_begin + record_index` (unique per record).
    #[must_use]
    pub fn numeric(&self) -> u64 {
        self.chunk_begin + self.record_index
    }
}

impl fmt::Display for RecordPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.chunk_begin, self.record_index)
    }
}

/// A chunk as seen by [`RecordReader::read_chunk_info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkInfo {
    /// File offset of the chunk.
    pub begin: u64,
    /// File offset after the chunk.
    pub end: u64,
    /// The chunk header.
    pub header: ChunkHeader,
    /// Codec of the chunk data (simple, transposed and metadata chunks).
    pub compression: Option<CompressionType>,
}

/// Where reading can resume after a failure.
#[derive(Debug, Clone, Copy)]
enum Resume {
    /// Look for the next chunk from the block after this position.
    FindChunk(u64),
    /// At this chunk boundary.
    At(u64),
    /// Nowhere: the file ends.
    ToEnd,
}

struct Failure {
    error: Error,
    /// `None`: not recoverable (I/O).
    resume: Option<Resume>,
    begin: u64,
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Self {
            error: Error::Io(e),
            resume: None,
            begin: 0,
        }
    }
}

/// Reads chunks with their block headers.
pub(crate) struct ChunkReader<R> {
    src: R,
    size: u64,
    phys: u64,
    pub(crate) pos: u64,
    checks: Vec<(u64, u64)>,
}

impl<R: Read + Seek> ChunkReader<R> {
    fn new(mut src: R) -> Result<Self> {
        let size = src.seek(SeekFrom::End(0))?;
        src.seek(SeekFrom::Start(0))?;
        Ok(Self {
            src,
            size,
            phys: 0,
            pos: 0,
            checks: Vec::new(),
        })
    }

    fn read_exact_at(&mut self, pos: u64, buf: &mut [u8], chunk_begin: u64) -> Result<(), Failure> {
        if self.phys != pos {
            self.src.seek(SeekFrom::Start(pos))?;
            self.phys = pos;
        }
        match self.src.read_exact(buf) {
            Ok(()) => {
                self.phys += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                self.phys = u64::MAX;
                Err(Failure {
                    error: Error::Truncated {
                        chunk_begin,
                        needed: pos + buf.len() as u64,
                        size: self.size,
                    },
                    resume: Some(Resume::ToEnd),
                    begin: chunk_begin,
                })
            }
            Err(e) => {
                self.phys = u64::MAX;
                Err(e.into())
            }
        }
    }

    /// Reads `out.len()` chunk bytes from `pos`, skipping and checking block headers; returns the position
    /// after them.
    fn read_logical(
        &mut self,
        chunk_begin: u64,
        mut pos: u64,
        out: &mut [u8],
    ) -> Result<u64, Failure> {
        let mut filled = 0;
        while filled < out.len() {
            let in_block = pos % BLOCK_SIZE;
            if in_block < BLOCK_HEADER_SIZE {
                let block_begin = pos - in_block;
                let mut raw = [0u8; 24];
                self.read_exact_at(block_begin, &mut raw, chunk_begin)?;
                let Some(bh) = BlockHeader::decode(&raw) else {
                    return Err(Failure {
                        error: Error::Corrupted {
                            pos: block_begin,
                            message: "block header hash mismatch".into(),
                        },
                        resume: Some(Resume::FindChunk(block_begin)),
                        begin: chunk_begin,
                    });
                };
                if bh.previous_chunk != block_begin - chunk_begin {
                    let resume = if bh.next_chunk <= BLOCK_SIZE {
                        Resume::At(block_begin + bh.next_chunk)
                    } else {
                        Resume::FindChunk(block_begin)
                    };
                    return Err(Failure {
                        error: Error::Corrupted {
                            pos: block_begin,
                            message: format!(
                                "block header says the chunk begins at {}, not {chunk_begin}",
                                block_begin.wrapping_sub(bh.previous_chunk)
                            ),
                        },
                        resume: Some(resume),
                        begin: chunk_begin,
                    });
                }
                self.checks.push((block_begin, bh.next_chunk));
                pos = block_begin + BLOCK_HEADER_SIZE;
                continue;
            }
            let n = (out.len() - filled).min((BLOCK_SIZE - in_block) as usize);
            self.read_exact_at(pos, &mut out[filled..filled + n], chunk_begin)?;
            filled += n;
            pos += n as u64;
        }
        Ok(pos)
    }

    fn check_block_headers(&mut self, begin: u64, end: u64) -> Result<(), Failure> {
        for &(block_begin, next_chunk) in &self.checks {
            if next_chunk != end - block_begin {
                return Err(Failure {
                    error: Error::Corrupted {
                        pos: block_begin,
                        message: format!(
                            "block header says the chunk ends at {}, its header says {end}",
                            block_begin + next_chunk
                        ),
                    },
                    resume: Some(Resume::FindChunk(begin)),
                    begin,
                });
            }
        }
        self.checks.clear();
        Ok(())
    }

    /// Reads and verifies the chunk header at `begin`; returns it and the position after it.
    fn read_header(&mut self, begin: u64) -> Result<(ChunkHeader, u64), Failure> {
        let corrupted = |message: String, resume| Failure {
            error: Error::Corrupted {
                pos: begin,
                message,
            },
            resume: Some(resume),
            begin,
        };
        if !is_possible_chunk_boundary(begin) {
            return Err(corrupted(
                "not a possible chunk boundary".into(),
                Resume::FindChunk(begin),
            ));
        }
        let needed = add_with_overhead(begin, CHUNK_HEADER_SIZE);
        if needed > self.size {
            return Err(Failure {
                error: Error::Truncated {
                    chunk_begin: begin,
                    needed,
                    size: self.size,
                },
                resume: Some(Resume::ToEnd),
                begin,
            });
        }
        self.checks.clear();
        let mut raw = [0u8; 40];
        let after = self.read_logical(begin, begin, &mut raw)?;
        let Some(header) = ChunkHeader::decode(&raw) else {
            return Err(corrupted(
                "chunk header hash mismatch".into(),
                Resume::FindChunk(begin),
            ));
        };
        let end = header.chunk_end(begin);
        self.check_block_headers(begin, end)?;
        if begin == 0
            && (header.chunk_type != ChunkType::FileSignature
                || header.data_size != 0
                || header.num_records != 0
                || header.decoded_data_size != 0)
        {
            return Err(corrupted(
                "missing file signature".into(),
                Resume::FindChunk(0),
            ));
        }
        if header.num_records > crate::chunk::MAX_NUM_RECORDS {
            return Err(corrupted(
                "too many records".into(),
                Resume::FindChunk(begin),
            ));
        }
        Ok((header, after))
    }

    /// Reads the chunk at `self.pos` into `data` (grown, never shrunk; the chunk is `data[..data_size]`).
    fn read_chunk(&mut self, data: &mut Vec<u8>) -> Result<Option<(u64, ChunkHeader)>, Failure> {
        let begin = self.pos;
        if begin >= self.size {
            return Ok(None);
        }
        let (header, after) = self.read_header(begin)?;
        let end = header.chunk_end(begin);
        if end > self.size {
            return Err(Failure {
                error: Error::Truncated {
                    chunk_begin: begin,
                    needed: end,
                    size: self.size,
                },
                resume: Some(Resume::ToEnd),
                begin,
            });
        }
        // Bounded by the file size, checked just above.
        let n = header.data_size as usize;
        if data.len() < n {
            data.resize(n, 0);
        }
        self.read_logical(begin, after, &mut data[..n])?;
        self.check_block_headers(begin, end)?;
        let computed = crate::hash::highway_hash64(&data[..n]);
        if computed != header.data_hash {
            return Err(Failure {
                error: Error::DataHash {
                    chunk_begin: begin,
                    stored: header.data_hash,
                    computed,
                },
                resume: Some(Resume::At(end)),
                begin,
            });
        }
        self.pos = end;
        Ok(Some((begin, header)))
    }

    /// Moves to where reading resumes after a failure at `begin`; returns the skipped region.
    fn recover(&mut self, begin: u64, resume: Resume, message: String) -> SkippedRegion {
        let resume_at = match resume {
            Resume::ToEnd => self.size,
            Resume::At(p) => p.min(self.size),
            Resume::FindChunk(from) => self.find_chunk_after(from),
        };
        let resume_at = resume_at.max(begin);
        self.pos = resume_at;
        SkippedRegion {
            begin,
            end: resume_at,
            message,
        }
    }

    /// The first chunk boundary named by a valid block header after the block of `from`.
    fn find_chunk_after(&mut self, from: u64) -> u64 {
        let mut block_begin = (from / BLOCK_SIZE + 1) * BLOCK_SIZE;
        while block_begin < self.size {
            let mut raw = [0u8; 24];
            if self
                .read_exact_at(block_begin, &mut raw, block_begin)
                .is_err()
            {
                return self.size;
            }
            if let Some(bh) = BlockHeader::decode(&raw) {
                if bh.previous_chunk == 0 {
                    return block_begin;
                }
                let candidate = block_begin.saturating_add(bh.next_chunk);
                if is_possible_chunk_boundary(candidate) {
                    return candidate.min(self.size);
                }
            }
            block_begin += BLOCK_SIZE;
        }
        self.size
    }

    /// The begin of the chunk containing numeric position `target`, or of the first chunk after it.
    fn find_chunk_containing(&mut self, target: u64) -> Result<u64, Failure> {
        if target >= self.size {
            return Ok(self.size);
        }
        let block_begin = target - target % BLOCK_SIZE;
        let mut begin = if block_begin == 0 {
            0
        } else {
            let mut raw = [0u8; 24];
            self.read_exact_at(block_begin, &mut raw, block_begin)?;
            let bh = BlockHeader::decode(&raw).ok_or(Failure {
                error: Error::Corrupted {
                    pos: block_begin,
                    message: "block header hash mismatch".into(),
                },
                resume: Some(Resume::FindChunk(block_begin)),
                begin: block_begin,
            })?;
            block_begin.checked_sub(bh.previous_chunk).ok_or(Failure {
                error: Error::Corrupted {
                    pos: block_begin,
                    message: "previous_chunk before the file".into(),
                },
                resume: Some(Resume::FindChunk(block_begin)),
                begin: block_begin,
            })?
        };
        loop {
            if begin >= self.size {
                return Ok(self.size);
            }
            let (header, _) = self.read_header(begin)?;
            let end = header.chunk_end(begin);
            if end > target {
                return Ok(begin);
            }
            begin = end;
        }
    }
}

type RecoveryFn = Box<dyn FnMut(&SkippedRegion) -> bool + Send>;

/// Whether a chunk of this header is decoded for records (unknown types with records fail to decode).
fn has_records(header: &ChunkHeader) -> bool {
    match header.chunk_type {
        ChunkType::Simple | ChunkType::Transposed => true,
        ChunkType::Unknown(_) => header.num_records > 0,
        _ => false,
    }
}

/// Codec contexts and scratch of one decoding thread.
#[derive(Debug, Default)]
pub(crate) struct Decoders {
    decompressor: Decompressor,
    transpose: TransposeDecoder,
    scratch: Vec<u8>,
}

/// Decodes the records of a simple or transposed chunk into `values` / `ends`.
fn decode_chunk(
    header: &ChunkHeader,
    data: &[u8],
    d: &mut Decoders,
    values: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Result<Values, crate::error::DecodeError> {
    let data = &data[..header.data_size as usize];
    match header.chunk_type {
        ChunkType::Simple => simple::decode(
            data,
            header.num_records,
            header.decoded_data_size,
            &mut d.decompressor,
            &mut d.scratch,
            values,
            ends,
        ),
        ChunkType::Transposed => d
            .transpose
            .decode(
                data,
                header.num_records,
                header.decoded_data_size,
                &mut d.decompressor,
                values,
                ends,
            )
            .map(|()| Values::InBuffer),
        ChunkType::Unknown(t) => {
            ends.clear();
            Err(crate::error::DecodeError::new(format!(
                "unknown chunk type {t:#04x} with records"
            )))
        }
        _ => {
            ends.clear();
            Ok(Values::InBuffer)
        }
    }
}

/// Buffers of one decoded chunk.
#[derive(Debug, Default)]
struct ChunkBufs {
    data: Vec<u8>,
    values: Vec<u8>,
    ends: Vec<usize>,
}

struct Job {
    seq: u64,
    begin: u64,
    end: u64,
    header: ChunkHeader,
    bufs: ChunkBufs,
    result: Result<Values, crate::error::DecodeError>,
}

enum Pending {
    Chunk(u64),
    Failure(Failure),
}

/// Background threads decoding the chunks ahead of the reader (see [`RecordReader::set_parallelism`]).
struct ReadPool {
    jobs: Option<std::sync::mpsc::Sender<Job>>,
    done: std::sync::mpsc::Receiver<Job>,
    workers: Vec<std::thread::JoinHandle<()>>,
    queue: std::collections::VecDeque<Pending>,
    ready: std::collections::BTreeMap<u64, Job>,
    spare: Vec<ChunkBufs>,
    next_seq: u64,
    in_flight: usize,
    depth: usize,
    stopped: bool,
}

impl ReadPool {
    fn new(threads: usize) -> Self {
        let (jobs_tx, jobs_rx) = std::sync::mpsc::channel::<Job>();
        let jobs_rx = std::sync::Arc::new(std::sync::Mutex::new(jobs_rx));
        let (done_tx, done) = std::sync::mpsc::channel::<Job>();
        let workers = (0..threads)
            .map(|_| {
                let jobs_rx = std::sync::Arc::clone(&jobs_rx);
                let done_tx = done_tx.clone();
                std::thread::spawn(move || {
                    let mut decoders = Decoders::default();
                    loop {
                        let job = match jobs_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(mut job) = job else { return };
                        let bufs = &mut job.bufs;
                        job.result = decode_chunk(
                            &job.header,
                            &bufs.data,
                            &mut decoders,
                            &mut bufs.values,
                            &mut bufs.ends,
                        );
                        if done_tx.send(job).is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        Self {
            jobs: Some(jobs_tx),
            done,
            workers,
            queue: std::collections::VecDeque::new(),
            ready: std::collections::BTreeMap::new(),
            spare: Vec::new(),
            next_seq: 0,
            in_flight: 0,
            depth: threads * 2,
            stopped: false,
        }
    }

    /// Waits for every job in flight and forgets the queue (after a seek).
    fn reset(&mut self) {
        while self.in_flight > 0 {
            match self.done.recv() {
                Ok(job) => {
                    self.in_flight -= 1;
                    self.spare.push(job.bufs);
                }
                Err(_) => break,
            }
        }
        for (_, job) in std::mem::take(&mut self.ready) {
            self.spare.push(job.bufs);
        }
        self.queue.clear();
        self.stopped = false;
    }
}

impl Drop for ReadPool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Reads records of a Riegeli/records file.
pub struct RecordReader<R> {
    chunks: ChunkReader<R>,
    data: Vec<u8>,
    values: Vec<u8>,
    values_at: Values,
    ends: Vec<usize>,
    index: usize,
    chunk_begin: u64,
    decoders: Decoders,
    pool: Option<ReadPool>,
    chunk_end: u64,
    recovery: Option<RecoveryFn>,
    limit: u64,
}

impl<R> fmt::Debug for RecordReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordReader")
            .field("size", &self.chunks.size)
            .field("chunk_begin", &self.chunk_begin)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<R: Read + Seek> RecordReader<R> {
    /// A reader of `src` (from its start). For files, wrap them in a `BufReader`.
    ///
    /// # Errors
    /// If `src` cannot be seeked.
    pub fn new(src: R) -> Result<Self> {
        let chunks = ChunkReader::new(src)?;
        let limit = chunks.size;
        Ok(Self {
            chunks,
            data: Vec::new(),
            values: Vec::new(),
            values_at: Values::InBuffer,
            ends: Vec::new(),
            index: 0,
            chunk_begin: 0,
            decoders: Decoders::default(),
            pool: None,
            chunk_end: 0,
            recovery: None,
            limit,
        })
    }

    /// Enables recovery: damaged regions are skipped and reported to `callback`, which returns whether to
    /// continue (`false` turns the failure into an error).
    pub fn set_recovery(&mut self, callback: impl FnMut(&SkippedRegion) -> bool + Send + 'static) {
        self.recovery = Some(Box::new(callback));
    }

    /// Decodes up to `2 * threads` chunks ahead on `threads` background threads (0: on the calling
    /// thread). Records and errors come in the same order either way; with recovery, a chunk that does not
    /// decode is reported when its turn comes.
    pub fn set_parallelism(&mut self, threads: usize) {
        self.pool = (threads > 0).then(|| ReadPool::new(threads.min(256)));
    }

    /// The file size.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.chunks.size
    }

    /// Stops reading chunks that begin at or after `limit` (used for the ArrayRecord data region).
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit.min(self.chunks.size);
    }

    /// Reads the next record; `None` at the end of the file. The record borrows the reader.
    ///
    /// # Errors
    /// On damaged or truncated data (unless recovery skips it) and I/O errors.
    pub fn read_record(&mut self) -> Result<Option<&[u8]>> {
        while self.index >= self.ends.len() {
            if !self.load_next_chunk()? {
                return Ok(None);
            }
        }
        let i = self.index;
        self.index += 1;
        Ok(Some(self.record(i)))
    }

    /// Reads the next record into `out` (replacing its contents); `false` at the end.
    ///
    /// # Errors
    /// As [`RecordReader::read_record`].
    pub fn read_record_into(&mut self, out: &mut Vec<u8>) -> Result<bool> {
        match self.read_record()? {
            Some(r) => {
                out.clear();
                out.extend_from_slice(r);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    pub(crate) fn record(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let end = self.ends[i];
        match self.values_at {
            Values::InData(off) => &self.data[off + start..off + end],
            Values::InBuffer => &self.values[start..end],
        }
    }

    pub(crate) fn chunk_len(&self) -> usize {
        self.ends.len()
    }

    /// Position of the next record to be read.
    #[must_use]
    pub fn position(&self) -> RecordPosition {
        if self.index < self.ends.len() {
            RecordPosition {
                chunk_begin: self.chunk_begin,
                record_index: self.index as u64,
            }
        } else {
            RecordPosition {
                chunk_begin: self.chunks.pos,
                record_index: 0,
            }
        }
    }

    /// Seeks to a record position (as returned by [`RecordReader::position`]).
    ///
    /// # Errors
    /// If the chunk there is damaged (unless recovery skips it).
    pub fn seek(&mut self, pos: RecordPosition) -> Result<()> {
        if let Some(pool) = self.pool.as_mut() {
            pool.reset();
        }
        self.ends.clear();
        self.index = 0;
        self.chunks.pos = pos.chunk_begin;
        if pos.chunk_begin >= self.chunks.size || !self.load_next_chunk()? {
            return Ok(());
        }
        if self.chunk_begin == pos.chunk_begin {
            self.index = usize::try_from(pos.record_index)
                .unwrap_or(usize::MAX)
                .min(self.ends.len());
        }
        Ok(())
    }

    /// Seeks to the record with numeric position `pos` (`chunk_begin + record_index`), or the first record
    /// after it.
    ///
    /// # Errors
    /// If the block or chunk headers on the way are damaged.
    pub fn seek_numeric(&mut self, pos: u64) -> Result<()> {
        let begin = self
            .chunks
            .find_chunk_containing(pos)
            .map_err(|f| f.error)?;
        self.seek(RecordPosition {
            chunk_begin: begin,
            record_index: pos.saturating_sub(begin),
        })
    }

    fn fail(&mut self, failure: Failure) -> Result<()> {
        let Failure {
            error,
            resume,
            begin,
        } = failure;
        match (resume, self.recovery.as_mut()) {
            (Some(resume), Some(_)) => {
                let region = self.chunks.recover(begin, resume, error.to_string());
                let go_on = self.recovery.as_mut().is_some_and(|cb| cb(&region));
                if go_on { Ok(()) } else { Err(error) }
            }
            _ => Err(error),
        }
    }

    /// Loads the next chunk with records; `false` at the end.
    fn load_next_chunk(&mut self) -> Result<bool> {
        self.ends.clear();
        self.index = 0;
        if self.pool.is_some() {
            return self.load_next_chunk_parallel();
        }
        loop {
            if self.chunks.pos >= self.limit {
                return Ok(false);
            }
            let (begin, header) = match self.chunks.read_chunk(&mut self.data) {
                Ok(Some(x)) => x,
                Ok(None) => return Ok(false),
                Err(failure) => {
                    self.fail(failure)?;
                    continue;
                }
            };
            if !has_records(&header) {
                continue;
            }
            let decoded = decode_chunk(
                &header,
                &self.data,
                &mut self.decoders,
                &mut self.values,
                &mut self.ends,
            );
            match decoded {
                Ok(at) => {
                    self.values_at = at;
                    self.chunk_begin = begin;
                    if !self.ends.is_empty() {
                        return Ok(true);
                    }
                }
                Err(e) => {
                    self.ends.clear();
                    let end = self.chunks.pos;
                    self.fail(Failure {
                        error: e.at(begin),
                        resume: Some(Resume::At(end)),
                        begin,
                    })?;
                }
            }
        }
    }

    /// [`RecordReader::load_next_chunk`] with read-ahead: chunks are read (and hash-checked) here, decoded by
    /// the pool, and installed in order. A read failure stops the read-ahead until its turn, so recovery
    /// sees the reader exactly where the sequential path would.
    fn load_next_chunk_parallel(&mut self) -> Result<bool> {
        loop {
            let Some(pool) = self.pool.as_mut() else {
                return Ok(false);
            };
            while pool.queue.len() < pool.depth && !pool.stopped && self.chunks.pos < self.limit {
                let mut bufs = pool.spare.pop().unwrap_or_default();
                match self.chunks.read_chunk(&mut bufs.data) {
                    Ok(Some((begin, header))) => {
                        if !has_records(&header) {
                            pool.spare.push(bufs);
                            continue;
                        }
                        let seq = pool.next_seq;
                        pool.next_seq += 1;
                        let job = Job {
                            seq,
                            begin,
                            end: self.chunks.pos,
                            header,
                            bufs,
                            result: Ok(Values::InBuffer),
                        };
                        let Some(jobs) = pool.jobs.as_ref() else {
                            return Err(Error::WriterClosed);
                        };
                        if jobs.send(job).is_err() {
                            return Err(Error::Io(std::io::Error::other(
                                "decoding thread stopped",
                            )));
                        }
                        pool.in_flight += 1;
                        pool.queue.push_back(Pending::Chunk(seq));
                    }
                    Ok(None) => {
                        pool.spare.push(bufs);
                        break;
                    }
                    Err(failure) => {
                        pool.spare.push(bufs);
                        pool.queue.push_back(Pending::Failure(failure));
                        pool.stopped = true;
                    }
                }
            }
            let Some(front) = pool.queue.pop_front() else {
                return Ok(false);
            };
            let seq = match front {
                Pending::Failure(failure) => {
                    pool.stopped = false;
                    self.fail(failure)?;
                    continue;
                }
                Pending::Chunk(seq) => seq,
            };
            let job = loop {
                if let Some(job) = pool.ready.remove(&seq) {
                    break job;
                }
                let job = pool
                    .done
                    .recv()
                    .map_err(|_| Error::Io(std::io::Error::other("decoding thread stopped")))?;
                pool.in_flight -= 1;
                pool.ready.insert(job.seq, job);
            };
            let Job {
                begin,
                end,
                mut bufs,
                result,
                ..
            } = job;
            std::mem::swap(&mut self.data, &mut bufs.data);
            std::mem::swap(&mut self.values, &mut bufs.values);
            std::mem::swap(&mut self.ends, &mut bufs.ends);
            pool.spare.push(bufs);
            self.index = 0;
            self.chunk_end = end;
            match result {
                Ok(at) => {
                    self.values_at = at;
                    self.chunk_begin = begin;
                    if !self.ends.is_empty() {
                        return Ok(true);
                    }
                }
                Err(e) => {
                    self.ends.clear();
                    // Reading has moved on: report the chunk without moving the position.
                    let error = e.at(begin);
                    let region = SkippedRegion {
                        begin,
                        end,
                        message: error.to_string(),
                    };
                    if !self.recovery.as_mut().is_some_and(|cb| cb(&region)) {
                        return Err(error);
                    }
                }
            }
        }
    }

    /// Reads the next chunk's header without decoding it (for inspection); `None` at the end.
    ///
    /// # Errors
    /// On damaged headers or data (unless recovery skips them).
    pub fn read_chunk_info(&mut self) -> Result<Option<ChunkInfo>> {
        if let Some(pool) = self.pool.as_mut() {
            pool.reset();
        }
        self.ends.clear();
        self.index = 0;
        loop {
            match self.chunks.read_chunk(&mut self.data) {
                Ok(Some((begin, header))) => {
                    let compression = match header.chunk_type {
                        ChunkType::Simple | ChunkType::Transposed | ChunkType::FileMetadata
                            if header.data_size > 0 =>
                        {
                            self.data
                                .first()
                                .and_then(|&b| CompressionType::from_byte(b))
                        }
                        _ => None,
                    };
                    return Ok(Some(ChunkInfo {
                        begin,
                        end: self.chunks.pos,
                        header,
                        compression,
                    }));
                }
                Ok(None) => return Ok(None),
                Err(failure) => self.fail(failure)?,
            }
        }
    }

    /// The serialized `RecordsMetadata` of the file (the `'m'` chunk right after the signature), if any.
    /// Does not move the reading position.
    ///
    /// # Errors
    /// If the metadata chunk is damaged.
    pub fn read_serialized_metadata(&mut self) -> Result<Option<Vec<u8>>> {
        let saved = self.chunks.pos;
        self.chunks.pos = 64;
        let mut data = Vec::new();
        let result = self.chunks.read_chunk(&mut data);
        self.chunks.pos = saved;
        let (begin, header) = match result {
            Ok(Some(x)) => x,
            Ok(None) => return Ok(None),
            Err(f) => return Err(f.error),
        };
        if header.chunk_type != ChunkType::FileMetadata {
            return Ok(None);
        }
        let mut out = Vec::new();
        let mut ends = Vec::new();
        self.decoders
            .transpose
            .decode(
                &data[..header.data_size as usize],
                1,
                header.decoded_data_size,
                &mut self.decoders.decompressor,
                &mut out,
                &mut ends,
            )
            .map_err(|e| e.at(begin))?;
        Ok(Some(out))
    }
}

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
use std::io::{Read, Seek};

use crate::chunk::{ChunkHeader, ChunkType};
use crate::compression::CompressionType;
use crate::error::{Error, Result};
use crate::simple::Values;

mod chunks;
mod decoding;

use crate::projection::FieldProjection;
pub use chunks::SkippedRegion;
use chunks::{ChunkReader, Failure, Resume};
use decoding::{Decoders, Job, Pending, ReadPool, decode_chunk, has_records};

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

type RecoveryFn = Box<dyn FnMut(&SkippedRegion) -> bool + Send>;

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
        self.pool = (threads > 0)
            .then(|| ReadPool::new(threads.min(256), self.decoders.projection.as_ref()));
    }

    /// Reads only the fields of `projection` from transposed chunks (see [`crate::projection`]):
    /// the other fields' columns are skipped and buckets holding none of the kept fields are not
    /// decompressed. Records of simple chunks and non-proto records come whole, as in C++.
    /// Applies from the next record on (a chunk already decoded is decoded again).
    ///
    /// # Errors
    /// If the chunk being read, decoded again, is damaged (unless recovery skips it).
    pub fn set_field_projection(&mut self, projection: FieldProjection) -> Result<()> {
        let projection = (!projection.includes_all()).then(|| std::sync::Arc::new(projection));
        self.decoders.projection = projection;
        if let Some(pool) = &self.pool {
            let threads = pool.workers.len();
            self.pool = Some(ReadPool::new(threads, self.decoders.projection.as_ref()));
        }
        // Chunks decoded (or queued) under the old projection are decoded again.
        if !self.ends.is_empty() || self.pool.is_some() {
            let pos = self.position();
            self.seek(pos)?;
        }
        Ok(())
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

    /// Makes the chunk at `begin`, decoded (its records' ends in `self.ends`), the one records are
    /// read from; whether it has any.
    fn install(&mut self, at: Values, begin: u64) -> bool {
        self.values_at = at;
        self.chunk_begin = begin;
        !self.ends.is_empty()
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
                    if self.install(at, begin) {
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
                    if self.install(at, begin) {
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
                None,
                &mut self.decoders.decompressor,
                &mut out,
                &mut ends,
            )
            .map_err(|e| e.at(begin))?;
        Ok(Some(out))
    }
}

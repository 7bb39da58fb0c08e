//! Chunks read with their block headers, each header's hashes and back-pointers checked, and
//! where to resume when one is damaged.

use std::fmt;
use std::io::{ErrorKind, Read, Seek, SeekFrom};

use crate::block::{
    BLOCK_HEADER_SIZE, BLOCK_SIZE, BlockHeader, add_with_overhead, is_possible_chunk_boundary,
};
use crate::chunk::{CHUNK_HEADER_SIZE, ChunkHeader, ChunkType};
use crate::error::{Error, Result};

// Defined here, where recovery makes it, so that this file need not import the reader above it.

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

/// Where reading can resume after a failure.
#[derive(Debug, Clone, Copy)]
pub(super) enum Resume {
    /// Look for the next chunk from the block after this position.
    FindChunk(u64),
    /// At this chunk boundary.
    At(u64),
    /// Nowhere: the file ends.
    ToEnd,
}

pub(super) struct Failure {
    pub(super) error: Error,
    /// `None`: not recoverable (I/O).
    pub(super) resume: Option<Resume>,
    pub(super) begin: u64,
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
    pub(super) src: R,
    pub(super) size: u64,
    pub(super) phys: u64,
    pub(crate) pos: u64,
    pub(super) checks: Vec<(u64, u64)>,
}

impl<R: Read + Seek> ChunkReader<R> {
    pub(super) fn new(mut src: R) -> Result<Self> {
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

    pub(super) fn read_exact_at(
        &mut self,
        pos: u64,
        buf: &mut [u8],
        chunk_begin: u64,
    ) -> Result<(), Failure> {
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
    pub(super) fn read_logical(
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

    pub(super) fn check_block_headers(&mut self, begin: u64, end: u64) -> Result<(), Failure> {
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
    pub(super) fn read_header(&mut self, begin: u64) -> Result<(ChunkHeader, u64), Failure> {
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
    pub(super) fn read_chunk(
        &mut self,
        data: &mut Vec<u8>,
    ) -> Result<Option<(u64, ChunkHeader)>, Failure> {
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
    pub(super) fn recover(&mut self, begin: u64, resume: Resume, message: String) -> SkippedRegion {
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
    pub(super) fn find_chunk_after(&mut self, from: u64) -> u64 {
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
    pub(super) fn find_chunk_containing(&mut self, target: u64) -> Result<u64, Failure> {
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

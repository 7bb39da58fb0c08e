//! Records as `cat` writes them, each an 8-byte little-endian length, then that many bytes,
//! parsed out of blocks of input.
//!
//! [`LenPrefixed`] hands records out of its block without a copy; one that straddles two blocks
//! is copied into a spill buffer first. A record longer than a block takes blocks as they
//! arrive, so a length that lies makes the spill buffer at most as large as the input given.

use std::io;

use super::blocks::BlockSource;

/// Records, one at a time.
pub trait NextRecord {
    /// The next record, or `None` where the input ends between records.
    fn next_record(&mut self) -> Result<Option<&[u8]>, InputError>;
}

/// What went wrong reading the input.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input ends inside a length.
    #[error("standard input ends inside the length of record {record} ({got} of 8 bytes)")]
    TruncatedLength {
        /// Index of the record.
        record: u64,
        /// Bytes of its length present.
        got: usize,
    },
    /// The input ends inside a record.
    #[error("standard input ends inside record {record} ({got} of {len} bytes)")]
    TruncatedRecord {
        /// Index of the record.
        record: u64,
        /// Bytes of it present.
        got: u64,
        /// Its length.
        len: u64,
    },
    /// Reading failed.
    #[error("reading standard input")]
    Io(#[from] io::Error),
}

/// Records parsed out of blocks of input without a copy (see the module docs).
pub struct LenPrefixed<B> {
    source: B,
    block_size: usize,
    /// `block[pos..len]` is read and not yet handed out.
    block: Vec<u8>,
    pos: usize,
    len: usize,
    /// The source has ended (or failed).
    ended: bool,
    /// Bytes gathered from more than one block.
    spill: Vec<u8>,
    records: u64,
}

/// Where [`LenPrefixed::contiguous`] put the bytes asked for.
enum At {
    Block,
    Spill,
}

impl<B: BlockSource> LenPrefixed<B> {
    /// Parses the input of `source`, in blocks of `block_size` bytes (at least 16).
    pub fn new(source: B, block_size: usize) -> Self {
        Self {
            source,
            block_size: block_size.max(16),
            block: Vec::new(),
            pos: 0,
            len: 0,
            ended: false,
            spill: Vec::new(),
            records: 0,
        }
    }

    fn next(&mut self) -> Result<Option<&[u8]>, InputError> {
        let record = self.records;
        let mut len = [0u8; 8];
        match self.contiguous(8)? {
            Some(At::Block) => len.copy_from_slice(&self.block[self.pos..self.pos + 8]),
            Some(At::Spill) => len.copy_from_slice(&self.spill),
            None if self.spill.is_empty() => return Ok(None),
            None => {
                return Err(InputError::TruncatedLength {
                    record,
                    got: self.spill.len(),
                });
            }
        }
        self.consume(8);
        let len = u64::from_le_bytes(len);
        // A length past the address space cannot be present: the input ends inside the record.
        let at = match usize::try_from(len) {
            Ok(n) => self.contiguous(n)?,
            Err(_) => self.contiguous(usize::MAX)?,
        };
        let truncated = |got: usize| InputError::TruncatedRecord {
            record,
            got: got as u64,
            len,
        };
        let n = len as usize;
        self.records += 1;
        match at {
            Some(At::Block) => {
                self.pos += n;
                Ok(Some(&self.block[self.pos - n..self.pos]))
            }
            Some(At::Spill) => Ok(Some(&self.spill)),
            None => Err(truncated(self.spill.len())),
        }
    }

    /// Drops `n` bytes that [`Self::contiguous`] found in the block (none if it spilled: the
    /// block's position is already past them).
    fn consume(&mut self, n: usize) {
        if self.spill.is_empty() {
            self.pos += n;
        }
    }

    /// Makes the next `n` bytes contiguous: in the block (from `pos`), or copied into the spill
    /// buffer (and the block's position moved past them). `None` where the input ends first,
    /// with what there was in the spill buffer.
    fn contiguous(&mut self, n: usize) -> io::Result<Option<At>> {
        self.spill.clear();
        if self.len - self.pos >= n {
            return Ok(Some(At::Block));
        }
        self.spill
            .extend_from_slice(&self.block[self.pos..self.len]);
        self.pos = self.len;
        while self.spill.len() < n {
            if !self.next_block()? {
                return Ok(None);
            }
            let take = (n - self.spill.len()).min(self.len);
            self.spill.extend_from_slice(&self.block[..take]);
            self.pos = take;
        }
        Ok(Some(At::Spill))
    }

    /// Refills the block from the source (what was left of it is in the spill buffer); `false`
    /// at the end. A block short of the block size is the last one.
    fn next_block(&mut self) -> io::Result<bool> {
        if self.ended {
            return Ok(false);
        }
        let len = self
            .source
            .next_block(&mut self.block, self.block_size)
            .inspect_err(|_| self.ended = true)?;
        self.ended = len < self.block_size;
        self.pos = 0;
        self.len = len;
        Ok(len > 0)
    }
}

impl<B: BlockSource> NextRecord for LenPrefixed<B> {
    fn next_record(&mut self) -> Result<Option<&[u8]>, InputError> {
        self.next()
    }
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

    use std::io::Read;

    use super::super::blocks::{ReadBlocks, ThreadBlocks};
    use super::*;

    /// A source that returns at most `limit` bytes a read (a pipe hands out what it holds).
    pub struct Trickle {
        data: Vec<u8>,
        at: usize,
        limit: usize,
    }

    impl Trickle {
        pub fn new(data: &[u8], limit: usize) -> Self {
            Self {
                data: data.to_vec(),
                at: 0,
                limit,
            }
        }
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.limit).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn reader(input: &[u8], block_size: usize, limit: usize) -> LenPrefixed<ReadBlocks<Trickle>> {
        LenPrefixed::new(ReadBlocks(Trickle::new(input, limit)), block_size)
    }

    pub fn encode(records: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            out.extend_from_slice(&(r.len() as u64).to_le_bytes());
            out.extend_from_slice(r);
        }
        out
    }

    fn collect(mut source: impl NextRecord) -> Result<Vec<Vec<u8>>, InputError> {
        let mut out = Vec::new();
        while let Some(r) = source.next_record()? {
            out.push(r.to_vec());
        }
        Ok(out)
    }

    /// The records of `input` read in blocks of `block_size` from a source that gives at most
    /// `limit` bytes a read; checked to be what blocks read on a thread give.
    fn read_all(input: &[u8], block_size: usize, limit: usize) -> Result<Vec<Vec<u8>>, InputError> {
        let read = collect(reader(input, block_size, limit));
        let threaded = ThreadBlocks::spawn(Trickle::new(input, limit), block_size.max(16));
        let threaded = collect(LenPrefixed::new(threaded, block_size));
        assert_eq!(
            format!("{threaded:?}"),
            format!("{read:?}"),
            "blocks from a thread"
        );
        read
    }

    pub fn records() -> Vec<Vec<u8>> {
        // Empty records, records around the block sizes below, and one much longer.
        [
            0, 1, 0, 7, 8, 9, 15, 16, 17, 100, 1000, 4096, 10_240, 70_000, 3,
        ]
        .iter()
        .enumerate()
        .map(|(i, &n)| (0..n).map(|k| (k * 31 + i) as u8).collect())
        .collect()
    }

    #[test]
    fn every_record_whatever_the_block_and_read_sizes() {
        let records = records();
        let input = encode(&records);
        for block_size in [16, 17, 64, 4096, 1 << 20] {
            for limit in [1, 5, 8, 13, 4096, 65_536, usize::MAX] {
                let got = read_all(&input, block_size, limit).unwrap();
                assert!(got == records, "blocks of {block_size}, reads of {limit}");
            }
        }
    }

    #[test]
    fn input_ending_on_a_block_boundary() {
        // 16 bytes of length and record exactly fill a 16-byte block, twice.
        let records = vec![vec![1u8; 8], vec![2u8; 8]];
        let got = read_all(&encode(&records), 16, usize::MAX).unwrap();
        assert_eq!(got, records);
    }

    #[test]
    fn empty_input_has_no_records() {
        assert!(read_all(&[], 64, 64).unwrap().is_empty());
    }

    #[test]
    fn truncated_input_names_the_record() {
        let records = records();
        let input = encode(&records);
        // Every cut near a record's start (inside its length, and at its first bytes), and
        // one in 97 elsewhere.
        let mut starts = vec![0];
        for r in &records {
            starts.push(starts[starts.len() - 1] + 8 + r.len());
        }
        let cuts = (1..input.len())
            .filter(|&cut| cut % 97 == 0 || starts.iter().any(|&s| (s..s + 10).contains(&cut)));
        let mut cut_in_length = 0;
        let mut cut_in_record = 0;
        for cut in cuts {
            match read_all(&input[..cut], 64, 4096) {
                Ok(got) => {
                    // Only a cut between records reads cleanly, and gives the records before it.
                    assert!(records.starts_with(&got), "cut {cut}");
                    assert_eq!(encode(&got).len(), cut, "cut {cut}");
                }
                Err(InputError::TruncatedLength { record, got }) => {
                    assert!(got < 8, "cut {cut}");
                    assert_eq!(encode(&records[..record as usize]).len() + got, cut);
                    cut_in_length += 1;
                }
                Err(InputError::TruncatedRecord { record, got, len }) => {
                    assert_eq!(len, records[record as usize].len() as u64, "cut {cut}");
                    let before = encode(&records[..record as usize]).len() + 8;
                    assert_eq!(before as u64 + got, cut as u64);
                    cut_in_record += 1;
                }
                Err(e) => panic!("cut {cut}: {e}"),
            }
        }
        assert!(cut_in_length > 0 && cut_in_record > 0);
    }

    #[test]
    fn an_absurd_length_fails_without_allocating_it() {
        for len in [u64::MAX, u64::MAX - 7, 1 << 62, 1 << 40] {
            let mut input = len.to_le_bytes().to_vec();
            input.extend_from_slice(b"only a few bytes");
            let mut reader = reader(&input, 64, usize::MAX);
            match reader.next_record() {
                Err(InputError::TruncatedRecord {
                    record: 0,
                    got,
                    len: l,
                }) => {
                    assert_eq!((got, l), (16, len));
                }
                other => panic!("length {len}: {other:?}"),
            }
            assert!(
                reader.spill.capacity() <= 64,
                "length {len}: spill grew to {}",
                reader.spill.capacity()
            );
        }
    }

    #[test]
    fn read_errors_are_reported() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let mut reader = LenPrefixed::new(ReadBlocks(Broken), 64);
        assert!(matches!(reader.next_record(), Err(InputError::Io(_))));
        // And nothing after.
        assert!(matches!(reader.next_record(), Ok(None)));
    }
}

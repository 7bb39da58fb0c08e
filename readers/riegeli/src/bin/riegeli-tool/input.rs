//! `riegeli-tool write`'s input: records as `cat` writes them, each an 8-byte little-endian
//! length, then that many bytes.
//!
//! Records are handed out from one buffer, read into with large reads, without a copy: a record
//! is passed to the writer from where the read put it. When the buffer's free end is too short
//! for the next record, the part of it already read moves to the front (at most one record per
//! buffer's worth of input); a record longer than the buffer grows it as its bytes arrive, so a
//! length that lies makes the buffer at most twice the input actually given.

use std::io::{self, Read};

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

/// Records read from `src` (see the module docs).
pub struct LenPrefixed<R> {
    src: R,
    buf: Vec<u8>,
    /// `buf[start..end]` is read and not yet handed out.
    start: usize,
    end: usize,
    records: u64,
}

impl<R: Read> LenPrefixed<R> {
    /// Reads `src` through a buffer of `capacity` bytes (at least 16).
    pub fn new(src: R, capacity: usize) -> Self {
        Self {
            src,
            buf: vec![0; capacity.max(16)],
            start: 0,
            end: 0,
            records: 0,
        }
    }

    /// The next record, or `None` where the input ends between records.
    pub fn next_record(&mut self) -> Result<Option<&[u8]>, InputError> {
        if !self.fill(8)? {
            return match self.end - self.start {
                0 => Ok(None),
                got => Err(InputError::TruncatedLength {
                    record: self.records,
                    got,
                }),
            };
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&self.buf[self.start..self.start + 8]);
        let len = u64::from_le_bytes(len);
        let record = self.records;
        let truncated = |got: usize| InputError::TruncatedRecord {
            record,
            got: got as u64 - 8,
            len,
        };
        // A length past the address space cannot be present: it ends inside the record.
        let Some(total) = usize::try_from(len).ok().and_then(|l| l.checked_add(8)) else {
            self.fill(usize::MAX)?;
            return Err(truncated(self.end - self.start));
        };
        if !self.fill(total)? {
            return Err(truncated(self.end - self.start));
        }
        let record = &self.buf[self.start + 8..self.start + total];
        self.start += total;
        self.records += 1;
        Ok(Some(record))
    }

    /// Reads until `need` bytes are buffered; `false` if the input ends first.
    fn fill(&mut self, need: usize) -> io::Result<bool> {
        while self.end - self.start < need {
            if self.buf.len() - self.start < need && self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                // Full of one unfinished record: grow by what is present, not by what it claims.
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

    use super::*;

    /// A source that returns at most `limit` bytes a read (a pipe hands out what it holds).
    struct Trickle<'a> {
        data: &'a [u8],
        limit: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.limit).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn encode(records: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            out.extend_from_slice(&(r.len() as u64).to_le_bytes());
            out.extend_from_slice(r);
        }
        out
    }

    fn read_all(input: &[u8], capacity: usize, limit: usize) -> Result<Vec<Vec<u8>>, InputError> {
        let mut reader = LenPrefixed::new(
            Trickle {
                data: input,
                limit,
            },
            capacity,
        );
        let mut out = Vec::new();
        while let Some(r) = reader.next_record()? {
            out.push(r.to_vec());
        }
        Ok(out)
    }

    fn records() -> Vec<Vec<u8>> {
        // Empty records, records around the buffer sizes below, and one much longer.
        [0, 1, 0, 7, 8, 9, 15, 16, 17, 100, 1000, 4096, 10_240, 70_000, 3]
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|k| (k * 31 + i) as u8).collect())
            .collect()
    }

    #[test]
    fn every_record_whatever_the_buffer_and_read_sizes() {
        let records = records();
        let input = encode(&records);
        for capacity in [16, 17, 64, 4096, 1 << 20] {
            for limit in [1, 5, 8, 13, 4096, 65_536, usize::MAX] {
                let got = read_all(&input, capacity, limit).unwrap();
                assert!(got == records, "capacity {capacity}, reads of {limit}");
            }
        }
    }

    #[test]
    fn empty_input_has_no_records() {
        assert!(read_all(&[], 64, 64).unwrap().is_empty());
    }

    #[test]
    fn truncated_input_names_the_record() {
        let records = records();
        let input = encode(&records);
        let mut cut_in_length = 0;
        let mut cut_in_record = 0;
        for cut in 1..input.len() {
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
            let mut reader = LenPrefixed::new(
                Trickle {
                    data: &input,
                    limit: usize::MAX,
                },
                64,
            );
            match reader.next_record() {
                Err(InputError::TruncatedRecord { record: 0, got, len: l }) => {
                    assert_eq!((got, l), (16, len));
                }
                other => panic!("length {len}: {other:?}"),
            }
            assert!(reader.buf.len() <= 64, "length {len}: grew to {}", reader.buf.len());
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
        let mut reader = LenPrefixed::new(Broken, 64);
        assert!(matches!(reader.next_record(), Err(InputError::Io(_))));
    }
}

//! A regular file on standard input, mapped instead of read: the writer copies each record
//! straight out of the page cache, and no thread spends its time in `read` (which, for the
//! fastest codec, costs about what encoding does). `riegeli-tool write` then gives the second
//! core to encoding, for Snappy and Zstd. A pipe, or anything else that cannot be mapped, is
//! read as before.
//!
//! What is read is the file from standard input's position to its length when the tool starts:
//! bytes appended later are not seen, as if the file had been read at once.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, Seek};
use std::os::fd::AsFd;

use super::parse::{InputError, NextRecord};

/// The records of a mapped file (the same format and errors as [`super::LenPrefixed`]).
pub struct MappedRecords {
    map: memmap2::Mmap,
    /// `map[pos..]` is not yet handed out.
    pos: usize,
    records: u64,
}

impl MappedRecords {
    /// Standard input mapped, when it is a regular file holding something past its position;
    /// `None` (with the position untouched) when it is not, or cannot be mapped.
    pub fn stdin() -> io::Result<Option<Self>> {
        let file = File::from(io::stdin().as_fd().try_clone_to_owned()?);
        Self::from_file(&file)
    }

    fn from_file(file: &File) -> io::Result<Option<Self>> {
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Ok(None);
        }
        let mut position = file;
        let start = position.stream_position()?;
        if start >= metadata.len() {
            return Ok(None);
        }
        // SAFETY: the map is read-only and private to this process. If another process
        // truncates the file while it is mapped, a read past the new end faults (SIGBUS), as
        // in any program that maps its input; the tool's input is not expected to shrink while
        // it is written out.
        let Ok(map) = (unsafe { memmap2::Mmap::map(file) }) else {
            return Ok(None);
        };
        // Records are taken in order: let the kernel read ahead.
        let _ = map.advise(memmap2::Advice::Sequential);
        let pos = usize::try_from(start).unwrap_or(usize::MAX).min(map.len());
        Ok(Some(Self {
            map,
            pos,
            records: 0,
        }))
    }
}

impl NextRecord for MappedRecords {
    fn next_record(&mut self) -> Result<Option<&[u8]>, InputError> {
        let rest = self.map.get(self.pos..).unwrap_or_default();
        if rest.is_empty() {
            return Ok(None);
        }
        let record = self.records;
        let Some((len, body)) = rest.split_first_chunk::<8>() else {
            return Err(InputError::TruncatedLength {
                record,
                got: rest.len(),
            });
        };
        let len = u64::from_le_bytes(*len);
        let Some(bytes) = usize::try_from(len).ok().and_then(|n| body.get(..n)) else {
            return Err(InputError::TruncatedRecord {
                record,
                got: body.len() as u64,
                len,
            });
        };
        self.pos += 8 + bytes.len();
        self.records += 1;
        Ok(Some(bytes))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

    use std::io::{SeekFrom, Write};

    use super::super::blocks::ReadBlocks;
    use super::super::parse::LenPrefixed;
    use super::*;

    fn file_with(bytes: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file
    }

    /// Every record, or the error, as text.
    fn all(records: &mut impl NextRecord) -> Result<Vec<Vec<u8>>, String> {
        let mut out = Vec::new();
        loop {
            match records.next_record() {
                Ok(Some(r)) => out.push(r.to_vec()),
                Ok(None) => return Ok(out),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    fn input() -> Vec<u8> {
        let mut input = Vec::new();
        for (i, len) in [0usize, 1, 7, 8, 300, 70_000, 5].into_iter().enumerate() {
            input.extend_from_slice(&(len as u64).to_le_bytes());
            input.extend((0..len).map(|j| (i * 31 + j) as u8));
        }
        input
    }

    #[test]
    fn records_and_errors_as_the_block_parser_gives_them() {
        let whole = input();
        let mut absurd = whole.clone();
        absurd.extend_from_slice(&u64::MAX.to_le_bytes());
        absurd.extend_from_slice(b"a few bytes");
        // Every cut of the input, and a length no file can hold.
        let mut inputs: Vec<Vec<u8>> = (1..=whole.len()).map(|n| whole[..n].to_vec()).collect();
        inputs.push(absurd);
        for bytes in inputs {
            let mut mapped = MappedRecords::from_file(&file_with(&bytes))
                .unwrap()
                .unwrap();
            let mut read = LenPrefixed::new(ReadBlocks(&bytes[..]), 4096);
            assert_eq!(all(&mut mapped), all(&mut read), "{} bytes", bytes.len());
        }
    }

    #[test]
    fn starts_at_the_input_position_and_skips_what_it_cannot_map() {
        let whole = input();
        let mut file = file_with(&whole);
        // Standard input positioned after the first two records (8 + 0, then 8 + 1 bytes).
        file.seek(SeekFrom::Start(17)).unwrap();
        let mut mapped = MappedRecords::from_file(&file).unwrap().unwrap();
        let mut read = LenPrefixed::new(ReadBlocks(&whole[17..]), 4096);
        assert_eq!(all(&mut mapped), all(&mut read));
        // At the end, empty, or not a regular file: read as before.
        file.seek(SeekFrom::End(0)).unwrap();
        assert!(MappedRecords::from_file(&file).unwrap().is_none());
        assert!(MappedRecords::from_file(&file_with(b"")).unwrap().is_none());
        let dir = tempfile::tempdir().unwrap();
        let directory = File::open(dir.path()).unwrap();
        assert!(MappedRecords::from_file(&directory).unwrap().is_none());
    }
}

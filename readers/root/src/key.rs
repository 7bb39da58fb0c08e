//! Record headers (`TKey`): what precedes every object in a file.

use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// A record header (`TKey`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// Total size of the record on disk (header + payload).
    pub nbytes: u32,
    /// TKey version (> 1000: 64-bit offsets).
    pub version: u16,
    /// Uncompressed payload size.
    pub objlen: u32,
    /// Header size.
    pub keylen: u16,
    /// Cycle number (for baskets: basket index).
    pub cycle: i16,
    /// Offset of this record.
    pub seek_key: u64,
    /// Offset of the owning directory's record.
    pub seek_pdir: u64,
    /// Class of the object.
    pub class_name: String,
    /// Object name.
    pub name: String,
    /// Object title.
    pub title: String,
}

impl Key {
    pub(crate) fn parse(cur: &mut Cursor<'_>) -> Result<Self> {
        let start = cur.abs_pos();
        let nbytes = cur.i32()?;
        let version = cur.u16()?;
        let objlen = cur.i32()?;
        let _datime = cur.u32()?;
        let keylen = cur.i16()?;
        let cycle = cur.i16()?;
        let large = version > 1000;
        let seek_key = cur.seek(large)?;
        let seek_pdir = cur.seek(large)?;
        let class_name = cur.string()?;
        let name = cur.string()?;
        let title = cur.string()?;
        let (Ok(nbytes), Ok(objlen), Ok(keylen)) = (
            u32::try_from(nbytes),
            u32::try_from(objlen),
            u16::try_from(keylen),
        ) else {
            return Err(Error::corrupt("key header", start, "negative size"));
        };
        Ok(Self {
            nbytes,
            version,
            objlen,
            keylen,
            cycle,
            seek_key,
            seek_pdir,
            class_name,
            name,
            title,
        })
    }

    /// Whether the payload is stored compressed.
    #[must_use]
    pub fn is_compressed(&self) -> bool {
        u64::from(self.objlen) != u64::from(self.nbytes).saturating_sub(u64::from(self.keylen))
    }

    /// Whether the object is a directory.
    #[must_use]
    pub fn is_directory(&self) -> bool {
        matches!(self.class_name.as_str(), "TDirectory" | "TDirectoryFile")
    }

    /// Whether the object is a tree (`TTree` or `TNtuple`/`TNtupleD`).
    #[must_use]
    pub fn is_tree(&self) -> bool {
        matches!(self.class_name.as_str(), "TTree" | "TNtuple" | "TNtupleD")
    }

    /// Whether the object is an RNTuple anchor (`ROOT::RNTuple`).
    #[must_use]
    pub fn is_rntuple(&self) -> bool {
        self.class_name == "ROOT::RNTuple"
    }
}

//! The anchor, and what the header, footer and page-list envelopes describe: fields, columns,
//! cluster groups, clusters and page locations. Pure functions over bytes.

use crate::error::{Error, Result};

use super::encoding::ColumnType;
use super::envelope::{EnvelopeLink, Le, Locator};

/// The `ROOT::RNTuple` object of a ROOT file: format version and where the header and footer
/// envelopes are. Stored big-endian, like every TKey payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    /// Format version: epoch, major, minor, patch.
    pub version: [u16; 4],
    /// Header envelope: offset, compressed size, uncompressed length.
    pub header: EnvelopeLink,
    /// Footer envelope: offset, compressed size, uncompressed length.
    pub footer: EnvelopeLink,
    /// Largest key the writer made (larger payloads are chained, which is not read).
    pub max_key_size: u64,
}

impl Anchor {
    /// Parses the key payload of a `ROOT::RNTuple`: byte count and class version (6 bytes),
    /// 4 x u16 version, 7 x u64, then the XXH3 of those 64 bytes, all big-endian.
    ///
    /// # Errors
    /// Truncation, a checksum mismatch, or an epoch other than 1.
    pub fn parse(payload: &[u8]) -> Result<Self> {
        let what = "ROOT::RNTuple anchor";
        let need = 6 + 64 + 8;
        let (fields, sum) = match (payload.get(6..70), payload.get(70..78)) {
            (Some(f), Some(s)) => (f, s),
            _ => {
                return Err(Error::Truncated {
                    what,
                    offset: 0,
                    need,
                    have: payload.len() as u64,
                });
            }
        };
        let be16 = |at: usize| {
            let mut a = [0u8; 2];
            a.copy_from_slice(fields.get(at..at + 2).unwrap_or(&[0, 0]));
            u16::from_be_bytes(a)
        };
        let be64 = |at: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(fields.get(at..at + 8).unwrap_or(&[0; 8]));
            u64::from_be_bytes(a)
        };
        let mut a = [0u8; 8];
        a.copy_from_slice(sum);
        let stored = u64::from_be_bytes(a);
        let computed = xxhash_rust::xxh3::xxh3_64(fields);
        if stored != computed {
            return Err(Error::Checksum {
                what,
                offset: 6,
                stored,
                computed,
            });
        }
        let version = [be16(0), be16(2), be16(4), be16(6)];
        if version[0] != 1 {
            return Err(Error::UnsupportedVersion {
                class: "RNTuple format epoch",
                version: i32::from(version[0]),
            });
        }
        let link = |at: usize| EnvelopeLink {
            locator: Locator {
                offset: be64(at),
                size: be64(at + 8),
            },
            length: be64(at + 16),
        };
        Ok(Self {
            version,
            header: link(8),
            footer: link(32),
            max_key_size: be64(56),
        })
    }
}

/// What a field is to its subfields (the structural role, permanent codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A leaf: its own columns hold its values.
    Leaf,
    /// The parent of a collection (vector, RVec, ...): an offset column.
    Collection,
    /// The parent of a record (struct, pair, tuple): no columns.
    Record,
    /// The parent of a variant: a switch column.
    Variant,
    /// Objects serialized by the ROOT streamer.
    Streamer,
    /// A code newer than this reader.
    Unknown(u16),
}

impl Role {
    fn from_code(code: u16) -> Self {
        match code {
            0 => Self::Leaf,
            1 => Self::Collection,
            2 => Self::Record,
            3 => Self::Variant,
            4 => Self::Streamer,
            c => Self::Unknown(c),
        }
    }
}

/// Field flag: a fixed-size array (`std::array`, `std::bitset`).
pub const FIELD_REPETITIVE: u16 = 0x01;
/// Field flag: a projection of another field (alias columns).
pub const FIELD_PROJECTED: u16 = 0x02;
/// Field flag: the record carries a ROOT type checksum.
pub const FIELD_CHECKSUM: u16 = 0x04;

/// One field record.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDesc {
    /// Field version.
    pub field_version: u32,
    /// Type version.
    pub type_version: u32,
    /// Parent field id (a top-level field is its own parent).
    pub parent: u32,
    /// Structural role.
    pub role: Role,
    /// Flags (`FIELD_*`).
    pub flags: u16,
    /// Field name.
    pub name: String,
    /// Normalised C++ type name (e.g. `std::vector<std::int32_t>`).
    pub type_name: String,
    /// Type alias as written (e.g. `Double32_t`), often empty.
    pub type_alias: String,
    /// Description.
    pub description: String,
    /// Array size of a repetitive field.
    pub array_size: Option<u64>,
    /// Source field of a projected field.
    pub source: Option<u32>,
}

/// Column flag: deferred (first element index not zero).
pub const COLUMN_DEFERRED: u16 = 0x01;
/// Column flag: carries a value range.
pub const COLUMN_RANGE: u16 = 0x02;

/// One (physical) column record.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDesc {
    /// On-disk type code.
    pub code: u16,
    /// The type, when this reader knows the code.
    pub kind: Option<ColumnType>,
    /// Bits per element on storage.
    pub bits: u16,
    /// The field the column belongs to.
    pub field: u32,
    /// Flags (`COLUMN_*`).
    pub flags: u16,
    /// Representation index (alternative encodings of one field).
    pub representation: u16,
    /// First element index of a deferred column.
    pub first_element: Option<i64>,
    /// Value range (`Real32Quant`).
    pub range: Option<(f64, f64)>,
}

impl ColumnDesc {
    /// The type's name, or its code when unknown.
    #[must_use]
    pub fn type_name(&self) -> String {
        self.kind.map_or_else(
            || format!("column type {:#x}", self.code),
            |k| k.name().to_owned(),
        )
    }
}

/// A schema: the header's, or the extension in the footer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// Fields in id order.
    pub fields: Vec<FieldDesc>,
    /// Physical columns in id order.
    pub columns: Vec<ColumnDesc>,
    /// Alias columns: (physical column id, field id).
    pub aliases: Vec<(u32, u32)>,
}

impl Schema {
    /// The four list frames of a schema description (fields, columns, aliases, extra type
    /// information).
    fn parse(le: &mut Le<'_>) -> Result<Self> {
        let fields = le.list(20 + 16, field)?;
        let columns = le.list(20, column)?;
        let aliases = le.list(16, |le| le.record(|r| Ok((r.u32()?, r.u32()?))))?;
        // Extra type information (streamer infos for streamer fields) is not needed.
        le.list(8, |le| le.record(|_| Ok(())))?;
        Ok(Self {
            fields,
            columns,
            aliases,
        })
    }
}

fn field(le: &mut Le<'_>) -> Result<FieldDesc> {
    le.record(|r| {
        let field_version = r.u32()?;
        let type_version = r.u32()?;
        let parent = r.u32()?;
        let role = Role::from_code(r.u16()?);
        let flags = r.u16()?;
        let name = r.string()?;
        let type_name = r.string()?;
        let type_alias = r.string()?;
        let description = r.string()?;
        let array_size = if flags & FIELD_REPETITIVE != 0 {
            Some(r.u64()?)
        } else {
            None
        };
        let source = if flags & FIELD_PROJECTED != 0 {
            Some(r.u32()?)
        } else {
            None
        };
        Ok(FieldDesc {
            field_version,
            type_version,
            parent,
            role,
            flags,
            name,
            type_name,
            type_alias,
            description,
            array_size,
            source,
        })
    })
}

fn column(le: &mut Le<'_>) -> Result<ColumnDesc> {
    le.record(|r| {
        let code = r.u16()?;
        let bits = r.u16()?;
        let field = r.u32()?;
        let flags = r.u16()?;
        let representation = r.u16()?;
        let first_element = if flags & COLUMN_DEFERRED != 0 {
            Some(r.i64()?)
        } else {
            None
        };
        let range = if flags & COLUMN_RANGE != 0 {
            Some((r.f64()?, r.f64()?))
        } else {
            None
        };
        Ok(ColumnDesc {
            code,
            kind: ColumnType::from_code(code),
            bits,
            field,
            flags,
            representation,
            first_element,
            range,
        })
    })
}

fn feature_flags(le: &mut Le<'_>) -> Result<()> {
    // No feature flags are defined by format 1.0: any bit set is a feature this reader lacks.
    loop {
        let at = le.pos();
        let flags = le.i64()?;
        if flags & 0x7fff_ffff_ffff_ffff != 0 {
            return Err(Error::corrupt(
                "RNTuple feature flags",
                at as u64,
                format!("unknown feature flags {flags:#x}: written by a newer ROOT"),
            ));
        }
        if flags >= 0 {
            return Ok(());
        }
    }
}

/// The header envelope's payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The ntuple's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The library or program that wrote it.
    pub writer: String,
    /// The schema.
    pub schema: Schema,
}

impl Header {
    pub(crate) fn parse(le: &mut Le<'_>) -> Result<Self> {
        feature_flags(le)?;
        let name = le.string()?;
        let description = le.string()?;
        let writer = le.string()?;
        let schema = Schema::parse(le)?;
        Ok(Self {
            name,
            description,
            writer,
            schema,
        })
    }
}

/// A cluster group: a range of entries whose clusters one page-list envelope describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterGroup {
    /// First entry.
    pub min_entry: u64,
    /// Entries covered.
    pub entry_span: u64,
    /// Clusters in the group.
    pub clusters: u32,
    /// Its page list.
    pub page_list: EnvelopeLink,
}

/// The footer envelope's payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Footer {
    /// The header checksum it was written with.
    pub header_checksum: u64,
    /// Fields and columns added after the header was written.
    pub extension: Schema,
    /// Cluster groups in order.
    pub groups: Vec<ClusterGroup>,
}

impl Footer {
    pub(crate) fn parse(le: &mut Le<'_>) -> Result<Self> {
        feature_flags(le)?;
        let header_checksum = le.u64()?;
        let extension = le.record(|r| {
            if r.remaining() == 0 {
                Ok(Schema::default())
            } else {
                Schema::parse(r)
            }
        })?;
        let groups = le.list(8 + 20 + 12, |le| {
            le.record(|r| {
                Ok(ClusterGroup {
                    min_entry: r.u64()?,
                    entry_span: r.u64()?,
                    clusters: r.u32()?,
                    page_list: r.envelope_link()?,
                })
            })
        })?;
        Ok(Self {
            header_checksum,
            extension,
            groups,
        })
    }
}

/// One page of a column in a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageDesc {
    /// Elements in the page.
    pub elements: u32,
    /// Whether an XXH3 checksum of the stored bytes follows them.
    pub checksum: bool,
    /// Where the page is.
    pub locator: Locator,
}

/// The pages of one column in one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRange {
    /// Index of the column's first element in the cluster (over the whole ntuple).
    pub first_element: u64,
    /// Whether the column is suppressed in the cluster (another representation is used).
    pub suppressed: bool,
    /// Compression setting (`algorithm * 100 + level`), absent when suppressed.
    pub compression: Option<u32>,
    /// Pages in order.
    pub pages: Vec<PageDesc>,
}

impl ColumnRange {
    /// Elements of the column in the cluster.
    #[must_use]
    pub fn elements(&self) -> u64 {
        self.pages
            .iter()
            .fold(0u64, |n, p| n.saturating_add(u64::from(p.elements)))
    }
}

/// A cluster: an entry range and, per physical column, its pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// First entry.
    pub first_entry: u64,
    /// Entries.
    pub entries: u64,
    /// Per column id (the list may be shorter than the schema's columns).
    pub columns: Vec<ColumnRange>,
}

/// Parses a page-list envelope's payload: `clusters` clusters, written with `header_checksum`.
pub(crate) fn parse_page_list(
    le: &mut Le<'_>,
    header_checksum: u64,
    clusters: u32,
) -> Result<Vec<Cluster>> {
    let at = le.pos();
    let sum = le.u64()?;
    if sum != header_checksum {
        return Err(Error::corrupt(
            "RNTuple page list",
            at as u64,
            format!("written for header {sum:#x}, the header is {header_checksum:#x}"),
        ));
    }
    let summaries = le.list(8 + 16, |le| {
        le.record(|r| {
            let first = r.u64()?;
            let word = r.u64()?;
            let flags = word >> 56;
            if flags & 0x01 != 0 {
                return Err(r.corrupt("sharded cluster (a later format version)"));
            }
            Ok((first, word & 0x00ff_ffff_ffff_ffff))
        })
    })?;
    if summaries.len() != clusters as usize {
        return Err(le.corrupt(format!(
            "{} cluster summaries, the footer says {clusters}",
            summaries.len()
        )));
    }
    let pages = le.list(12, |le| le.list(12 + 8, column_range))?;
    if pages.len() != summaries.len() {
        return Err(le.corrupt(format!(
            "page locations for {} clusters, {} summaries",
            pages.len(),
            summaries.len()
        )));
    }
    Ok(summaries
        .into_iter()
        .zip(pages)
        .map(|((first_entry, entries), columns)| Cluster {
            first_entry,
            entries,
            columns,
        })
        .collect())
}

fn column_range(le: &mut Le<'_>) -> Result<ColumnRange> {
    let (mut inner, items) = le.frame()?;
    let n = items.ok_or_else(|| inner.corrupt("record frame where a page list belongs"))? as usize;
    // A page is at least 4 + 12 bytes.
    if n.saturating_mul(16) > inner.remaining() {
        return Err(inner.corrupt(format!(
            "{n} pages cannot fit in {} bytes",
            inner.remaining()
        )));
    }
    let mut pages = Vec::with_capacity(n);
    for _ in 0..n {
        let count = inner.i32()?;
        let locator = inner.locator()?;
        pages.push(PageDesc {
            elements: count.unsigned_abs(),
            checksum: count < 0,
            locator,
        });
    }
    let offset = inner.i64()?;
    let suppressed = offset < 0;
    let compression = if suppressed { None } else { Some(inner.u32()?) };
    if suppressed && !pages.is_empty() {
        return Err(inner.corrupt("a suppressed column with pages"));
    }
    Ok(ColumnRange {
        first_element: offset.unsigned_abs(),
        suppressed,
        compression,
        pages,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn anchor_bytes() -> Vec<u8> {
        // The anchor of a 10-entry file written by ROOT 6.40 (format 1.0.2.0).
        let mut p = vec![0x40, 0, 0, 0x42, 0, 2];
        for v in [1u16, 0, 2, 0] {
            p.extend_from_slice(&v.to_be_bytes());
        }
        for v in [266u64, 214, 421, 1113, 86, 160, 0x4000_0000] {
            p.extend_from_slice(&v.to_be_bytes());
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&p[6..]);
        p.extend_from_slice(&sum.to_be_bytes());
        p
    }

    #[test]
    fn anchor() {
        let a = Anchor::parse(&anchor_bytes()).unwrap();
        assert_eq!(a.version, [1, 0, 2, 0]);
        assert_eq!(
            a.header,
            EnvelopeLink {
                length: 421,
                locator: Locator {
                    offset: 266,
                    size: 214
                }
            }
        );
        assert_eq!(a.footer.locator.offset, 1113);
        assert_eq!(a.max_key_size, 1 << 30);
        let mut bad = anchor_bytes();
        bad[20] ^= 4;
        assert!(matches!(Anchor::parse(&bad), Err(Error::Checksum { .. })));
        assert!(Anchor::parse(&anchor_bytes()[..77]).is_err());
    }

    #[test]
    fn unknown_feature_flags_are_refused() {
        let b = 4u64.to_le_bytes();
        assert!(feature_flags(&mut Le::new(&b, "t")).is_err());
        let b = 0u64.to_le_bytes();
        assert!(feature_flags(&mut Le::new(&b, "t")).is_ok());
    }
}

//! RNTuple: ROOT's columnar successor to TTree (binary format 1.0, ROOT 6.34 and later).
//!
//! ```text
//! TKey "ROOT::RNTuple" (anchor, big-endian) --> header envelope (schema: fields, columns)
//!                                           \-> footer envelope (schema extension,
//!                                                 cluster groups) --> page-list envelopes
//!                                                 (clusters: per column, page locators)
//! ```
//!
//! A *field* is a node of the schema tree (`vf` of type `std::vector<float>` and its subfield
//! `_0` of type `float`); a *column* is the storage of one field's values, cut per *cluster*
//! (an entry range) into *pages*. Collections and strings have an offset column (end offsets,
//! counted from the start of the cluster) next to their items. Envelopes and pages use ROOT's
//! compression blocks (zlib, LZMA, LZ4, zstd or none: stored as is when the compressed size
//! equals the uncompressed one), and every envelope and page checksum (XXH3) is verified.
//!
//! Read: every fundamental type (`bool`, `char`, `std::[u]int{8,16,32,64}_t`, `float`,
//! `double`, including `double` stored as 32- or 16-bit reals, i.e. `Double32_t`),
//! `std::string`; collections as lists ([`Values::Lists`]): `std::vector<T>` and
//! `ROOT::RVec<T>` of any readable `T` (nested vectors, vectors of strings, of records),
//! sets, maps (lists of `_0`/`_1` records), `std::optional` and `std::unique_ptr` (lists of
//! zero or one item); records ([`Values::Record`]: `std::pair`, `std::tuple`, user classes,
//! a base class as a member `:_0`) of readable members; fields added after the first
//! entries (the footer's schema extension, deferred columns: zeros before). Column
//! encodings: plain, split, split + zigzag, split + delta offsets (`Index32/64` and their
//! split forms), `Bit`, `Char`, `Real16`, `Real32Trunc` and `Real32Quant` (bit-packed
//! truncated and quantised reals). Fixed-size arrays (`std::array<T, N>`, `T[N]`
//! members, `std::bitset<N>`) are lists of N items; `std::atomic<T>` and enums their `T`;
//! `std::variant<T1, ..., Tn>` a record of lists `_0` .. `_{n-1}` of one item (the
//! alternative an entry holds) or none; the projection `ROOT::RNTupleCardinality<T>` the
//! sizes of its collection. Anything else (streamer fields, other projections) is an
//! [`Error::UnsupportedField`] naming the type or encoding, never a wrong value.
//!
//! ```no_run
//! use root_reader::RootFile;
//!
//! # fn main() -> Result<(), root_reader::Error> {
//! let file = RootFile::open("events.root")?;
//! let ntuple = file.rntuple("events")?;
//! for field in ntuple.fields() {
//!     println!("{}: {}", field.name, field.type_name);
//! }
//! let pt: Vec<f32> = ntuple.read("pt")?;
//! let jets = ntuple.read_jagged::<f32>("jet_pt")?; // offsets + values
//! let any = ntuple.read_field("muons")?; // Values of whatever the field holds
//! # let _ = (pt, jets, any);
//! # Ok(())
//! # }
//! ```

use crate::column::{FieldValues, Jagged, Lists, Strings, Values};
use crate::compression;
use crate::error::{Error, Result};
use crate::file::RootFile;
use crate::types::{Element, LeafType};
use rayon::prelude::*;

pub mod columns;
mod composite;
pub mod descriptor;
pub mod encoding;
mod envelope;
mod unsplit;

pub use descriptor::{
    Anchor, Cluster, ClusterGroup, ColumnDesc, ColumnRange, FieldDesc, Footer, Header, PageDesc,
    Role, Schema,
};
pub use encoding::ColumnType;
pub use envelope::{EnvelopeLink, EnvelopeType, Locator};

use descriptor::{FIELD_PROJECTED, FIELD_REPETITIVE};
use envelope::Envelope;

/// Deepest field nesting read (guards the recursion against hostile schemas).
const MAX_DEPTH: usize = 64;

/// The clusters a read covers (indices into [`RNTuple::clusters`]).
type Span = std::ops::Range<usize>;

impl RootFile {
    /// Opens an RNTuple: `name`, `dir/name`, `name;cycle`.
    ///
    /// # Errors
    /// Missing objects, objects of another class, malformed or corrupt metadata (every
    /// envelope's checksum is verified).
    pub fn rntuple(&self, spec: &str) -> Result<RNTuple> {
        let key = self.find_key(spec)?;
        if !key.is_rntuple() {
            return Err(Error::NotAnRNTuple {
                name: spec.to_string(),
                class: key.class_name,
            });
        }
        let payload = self.read_payload(&key)?;
        let anchor = Anchor::parse(&payload)?;
        RNTuple::open(self.clone(), key.name, anchor)
    }
}

/// A top-level field, as listed by [`RNTuple::fields`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    /// Field id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Normalised C++ type name.
    pub type_name: String,
    /// Type alias (e.g. `Double32_t`), often empty.
    pub type_alias: String,
}

/// An opened RNTuple: its metadata, read and checked; values are read on request.
#[derive(Debug, Clone)]
pub struct RNTuple {
    file: RootFile,
    name: String,
    anchor: Anchor,
    header: Header,
    footer: Footer,
    /// Header fields then extension fields: index = field id.
    fields: Vec<FieldDesc>,
    /// Header columns then extension columns: index = physical column id.
    columns: Vec<ColumnDesc>,
    /// Subfield ids of every field, in id order.
    children: Vec<Vec<u32>>,
    /// Per field, per representation index, its column ids in order.
    representations: Vec<Vec<Vec<u32>>>,
    clusters: Vec<Cluster>,
    entries: u64,
}

impl RNTuple {
    fn open(file: RootFile, name: String, anchor: Anchor) -> Result<Self> {
        let header_env = read_envelope(&file, anchor.header, EnvelopeType::Header)?;
        let header = Header::parse(&mut header_env.payload("RNTuple header"))?;
        let footer_env = read_envelope(&file, anchor.footer, EnvelopeType::Footer)?;
        let footer = Footer::parse(&mut footer_env.payload("RNTuple footer"))?;
        if footer.header_checksum != header_env.checksum {
            return Err(Error::corrupt(
                "RNTuple footer",
                anchor.footer.locator.offset,
                "written for another header (header checksum differs)",
            ));
        }
        let mut clusters = Vec::new();
        for group in &footer.groups {
            let env = read_envelope(&file, group.page_list, EnvelopeType::PageList)?;
            clusters.extend(descriptor::parse_page_list(
                &mut env.payload("RNTuple page list"),
                header_env.checksum,
                group.clusters,
            )?);
        }
        let mut entries = 0u64;
        for c in &clusters {
            if c.first_entry != entries {
                return Err(Error::corrupt(
                    "RNTuple page list",
                    0,
                    format!("a cluster starts at entry {}, not {entries}", c.first_entry),
                ));
            }
            entries = entries
                .checked_add(c.entries)
                .ok_or_else(|| Error::corrupt("RNTuple page list", 0, "entry count overflows"))?;
        }
        let mut fields = header.schema.fields.clone();
        fields.extend(footer.extension.fields.iter().cloned());
        let mut columns = header.schema.columns.clone();
        columns.extend(footer.extension.columns.iter().cloned());
        let n = fields.len();
        let mut children = vec![Vec::new(); n];
        for (id, f) in fields.iter().enumerate() {
            let parent = f.parent as usize;
            if parent != id {
                children
                    .get_mut(parent)
                    .ok_or_else(|| {
                        Error::corrupt(
                            "RNTuple header",
                            0,
                            format!("field {id} has parent {parent} of {n} fields"),
                        )
                    })?
                    .push(u32::try_from(id).unwrap_or(u32::MAX));
            }
        }
        let mut representations: Vec<Vec<Vec<u32>>> = vec![Vec::new(); n];
        for (id, c) in columns.iter().enumerate() {
            let reps = representations.get_mut(c.field as usize).ok_or_else(|| {
                Error::corrupt(
                    "RNTuple header",
                    0,
                    format!("column {id} belongs to field {} of {n}", c.field),
                )
            })?;
            let r = usize::from(c.representation);
            if r > reps.len() {
                return Err(Error::corrupt(
                    "RNTuple header",
                    0,
                    format!("column {id} has representation {r} after {}", reps.len()),
                ));
            }
            if r == reps.len() {
                reps.push(Vec::new());
            }
            if let Some(list) = reps.get_mut(r) {
                list.push(u32::try_from(id).unwrap_or(u32::MAX));
            }
        }
        // A projected field reads the physical columns its alias columns name, as if its own:
        // one representation, in the order the aliases are listed.
        for &(physical, field) in header
            .schema
            .aliases
            .iter()
            .chain(&footer.extension.aliases)
        {
            let reps = representations
                .get_mut(field as usize)
                .filter(|_| (physical as usize) < columns.len())
                .ok_or_else(|| {
                    Error::corrupt(
                        "RNTuple header",
                        0,
                        format!("alias column of field {field} names column {physical}"),
                    )
                })?;
            if reps.is_empty() {
                reps.push(Vec::new());
            }
            if let Some(list) = reps.first_mut() {
                list.push(physical);
            }
        }
        Ok(Self {
            file,
            name,
            anchor,
            header,
            footer,
            fields,
            columns,
            children,
            representations,
            clusters,
            entries,
        })
    }

    /// The file the RNTuple is read from.
    #[must_use]
    pub fn file(&self) -> &RootFile {
        &self.file
    }

    /// The key name it was opened under.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of entries.
    #[must_use]
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// The anchor (format version, envelope links).
    #[must_use]
    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }

    /// The header (name, description, writer, schema).
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The footer (schema extension, cluster groups).
    #[must_use]
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// Every cluster, in entry order.
    #[must_use]
    pub fn clusters(&self) -> &[Cluster] {
        &self.clusters
    }

    /// Every field record (header, then schema extension): index = field id.
    #[must_use]
    pub fn field_descs(&self) -> &[FieldDesc] {
        &self.fields
    }

    /// Every physical column record: index = column id.
    #[must_use]
    pub fn column_descs(&self) -> &[ColumnDesc] {
        &self.columns
    }

    /// The subfield ids of field `id`.
    #[must_use]
    pub fn subfields(&self, id: u32) -> &[u32] {
        self.children.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// The top-level fields, in schema order.
    #[must_use]
    pub fn fields(&self) -> Vec<FieldInfo> {
        self.fields
            .iter()
            .enumerate()
            .filter(|(id, f)| f.parent as usize == *id)
            .map(|(id, f)| FieldInfo {
                id: u32::try_from(id).unwrap_or(u32::MAX),
                name: f.name.clone(),
                type_name: f.type_name.clone(),
                type_alias: f.type_alias.clone(),
            })
            .collect()
    }

    /// The id of a field: a top-level name, or a dotted path to a subfield (`p._0`).
    ///
    /// # Errors
    /// [`Error::NoSuchField`].
    pub fn field_id(&self, path: &str) -> Result<u32> {
        let missing = || Error::NoSuchField {
            ntuple: self.name.clone(),
            field: path.to_string(),
        };
        let mut parts = path.split('.');
        let first = parts.next().ok_or_else(missing)?;
        let mut id = self
            .fields()
            .into_iter()
            .find(|f| f.name == first)
            .map(|f| f.id)
            .ok_or_else(missing)?;
        for part in parts {
            id = *self
                .subfields(id)
                .iter()
                .find(|&&c| self.fields.get(c as usize).is_some_and(|f| f.name == part))
                .ok_or_else(missing)?;
        }
        Ok(id)
    }

    /// Whether field `id` has one value per entry: no field above it is a collection (a
    /// subfield of a collection has one value per item).
    #[must_use]
    pub fn is_per_entry(&self, id: u32) -> bool {
        let mut id = id as usize;
        // At most one step per field: a parent loop cannot hang.
        for _ in 0..self.fields.len() {
            let Some(f) = self.fields.get(id) else {
                return false;
            };
            if f.parent as usize == id {
                return true;
            }
            id = f.parent as usize;
            if self
                .fields
                .get(id)
                .is_none_or(|p| p.role == Role::Collection)
            {
                return false;
            }
        }
        false
    }

    /// Reads a whole field (top-level, or a dotted path): one item per entry for fields
    /// [`RNTuple::is_per_entry`], one per collection item below a collection. Numbers as the matching [`Values`] variant, strings as [`Values::Text`],
    /// collections as [`Values::Lists`] (offsets + items), records as [`Values::Record`].
    ///
    /// # Errors
    /// Unknown fields, unsupported types or encodings ([`Error::UnsupportedField`]), corrupt
    /// or truncated pages, checksum mismatches.
    pub fn read_field(&self, path: &str) -> Result<Values> {
        self.read_whole(path, false)
    }

    /// [`RNTuple::read_field`] with runs of neighbouring clusters read at once on the rayon
    /// pool it runs on (the global pool, or one the caller installs), each decompressed and
    /// decoded on its own and joined in order. Pays on files of several large clusters and
    /// idle cores; the joining copies the values once more.
    ///
    /// # Errors
    /// As [`RNTuple::read_field`].
    pub fn read_field_parallel(&self, path: &str) -> Result<Values> {
        self.read_whole(path, true)
    }

    fn read_whole(&self, path: &str, parallel: bool) -> Result<Values> {
        let id = self.field_id(path)?;
        let values = if parallel {
            self.read_clusters(id, path)?
        } else {
            self.read_id(id, path, &(0..self.clusters.len()), 0)?
        };
        if self.is_per_entry(id) && values.len() as u64 != self.entries && !values.is_lengthless() {
            return Err(Error::corrupt(
                "RNTuple column",
                0,
                format!(
                    "field {path:?} has {} values for {} entries",
                    values.len(),
                    self.entries
                ),
            ));
        }
        Ok(values)
    }

    /// Reads entries `start..stop` of a field with one value per entry
    /// ([`RNTuple::is_per_entry`]), reading only the clusters that hold them (all of them when
    /// the field has columns added after the first entries).
    ///
    /// # Errors
    /// As [`RNTuple::read_field`]; [`Error::EntryOutOfRange`]; [`Error::UnsupportedField`] for
    /// fields inside collections.
    pub fn read_field_range(&self, path: &str, start: u64, stop: u64) -> Result<Values> {
        if start > stop || stop > self.entries {
            return Err(Error::EntryOutOfRange {
                start,
                stop,
                entries: self.entries,
            });
        }
        let id = self.field_id(path)?;
        if !self.is_per_entry(id) {
            return Err(self.unsupported(path, "inside a collection: it has items, not entries"));
        }
        let first = self
            .clusters
            .partition_point(|c| c.first_entry.saturating_add(c.entries) <= start);
        let end = self.clusters.partition_point(|c| c.first_entry < stop);
        // A late column's leading zeros are only known from the first cluster that lists it:
        // such fields are read whole.
        let (first, end) = if self.has_late_columns(id, 0) {
            (0, self.clusters.len())
        } else {
            (first.min(end), end)
        };
        let span = first..end;
        let base = self.clusters.get(first).map_or(start, |c| c.first_entry);
        let expected: u64 = self
            .clusters
            .get(span.clone())
            .unwrap_or_default()
            .iter()
            .map(|c| c.entries)
            .sum();
        let values = self.read_id(id, path, &span, 0)?;
        if values.len() as u64 != expected && !values.is_lengthless() {
            return Err(Error::corrupt(
                "RNTuple column",
                0,
                format!(
                    "field {path:?} has {} values for the {expected} entries of its clusters",
                    values.len()
                ),
            ));
        }
        let at = |e: u64| usize::try_from(e.saturating_sub(base)).unwrap_or(usize::MAX);
        slice(&values, at(start), at(stop)).ok_or_else(|| {
            Error::corrupt(
                "RNTuple column",
                0,
                format!("field {path:?}: inconsistent offsets"),
            )
        })
    }

    /// Field `id` over every cluster, runs of neighbouring clusters at once on a rayon pool of
    /// several threads. A field with columns added after the first entries is read in one
    /// pass: its leading zeros are only known from the first cluster that lists it.
    fn read_clusters(&self, id: u32, path: &str) -> Result<Values> {
        let all = 0..self.clusters.len();
        let threads = rayon::current_num_threads();
        if threads < 2 || self.clusters.len() < 2 || self.has_late_columns(id, 0) {
            return self.read_id(id, path, &all, 0);
        }
        let parts: Vec<Result<Values>> = cluster_runs(&self.clusters, threads * 4)
            .into_par_iter()
            .map(|span| self.read_id(id, path, &span, 0))
            .collect();
        let mut parts = parts.into_iter();
        let mut out = parts
            .next()
            .unwrap_or_else(|| self.read_id(id, path, &all, 0))?;
        for part in parts {
            out.append(part?)?;
        }
        Ok(out)
    }

    /// Whether field `id` or a field below it has columns of the schema extension (absent
    /// from early clusters, or deferred).
    fn has_late_columns(&self, id: u32, depth: usize) -> bool {
        let header = self.header.schema.columns.len();
        let late = |c: u32| {
            c as usize >= header
                || self
                    .columns
                    .get(c as usize)
                    .is_some_and(|d| d.first_element.is_some())
        };
        // A projection's columns are the physical columns its alias columns name.
        let projected = self
            .header
            .schema
            .aliases
            .iter()
            .chain(&self.footer.extension.aliases)
            .any(|&(physical, field)| field == id && late(physical));
        let own = projected || self.columns_of(id).iter().flatten().any(|&c| late(c));
        own || (depth < MAX_DEPTH
            && self
                .subfields(id)
                .iter()
                .any(|&k| self.has_late_columns(k, depth + 1)))
    }

    /// Reads a field of a fundamental type as `Vec<T>`.
    ///
    /// # Errors
    /// As [`RNTuple::read_field`]; [`Error::TypeMismatch`] when `T` is not the field's type.
    pub fn read<T: Element>(&self, path: &str) -> Result<Vec<T>> {
        let values = self.read_field(path)?;
        let actual = values.leaf_type();
        crate::types::check_type::<T>(path, actual)?;
        values.into_vec::<T>().ok_or(Error::TypeMismatch {
            branch: path.to_string(),
            actual: actual.map_or("objects", LeafType::name),
            requested: T::TYPE.name(),
        })
    }

    /// Reads a collection of a fundamental type (`std::vector<T>`, `ROOT::RVec<T>`) as
    /// offsets + values.
    ///
    /// # Errors
    /// As [`RNTuple::read_field`]; [`Error::TypeMismatch`] for other fields.
    pub fn read_jagged<T: Element>(&self, path: &str) -> Result<Jagged<T>> {
        let mismatch = |actual| Error::TypeMismatch {
            branch: path.to_string(),
            actual,
            requested: T::TYPE.name(),
        };
        match self.read_field(path)? {
            Values::Lists(lists) => {
                let Lists { offsets, items } = *lists;
                let actual = items.leaf_type();
                crate::types::check_type::<T>(path, actual)?;
                let values = items.into_vec::<T>().ok_or_else(|| mismatch("objects"))?;
                Ok(Jagged { offsets, values })
            }
            _ => Err(mismatch("no collection")),
        }
    }

    fn unsupported(&self, path: &str, detail: impl Into<String>) -> Error {
        Error::UnsupportedField {
            ntuple: self.name.clone(),
            field: path.to_string(),
            detail: detail.into(),
        }
    }

    fn read_id(&self, id: u32, path: &str, span: &Span, depth: usize) -> Result<Values> {
        let f = self
            .fields
            .get(id as usize)
            .ok_or_else(|| Error::corrupt("RNTuple header", 0, format!("no field {id}")))?;
        if depth > MAX_DEPTH {
            return Err(self.unsupported(path, format!("nested deeper than {MAX_DEPTH}")));
        }
        let ty = &f.type_name;
        // A cardinality is computed from the offsets it projects; any other projected field
        // reads its source's columns as its own (`columns_of`).
        if f.flags & FIELD_PROJECTED != 0 && ty.starts_with("ROOT::RNTupleCardinality<") {
            return self.read_projection(id, ty, path, span);
        }
        let kids = self.subfields(id);
        if f.flags & FIELD_REPETITIVE != 0 {
            return self.read_array(f, id, kids, path, span, depth);
        }
        match f.role {
            Role::Leaf if ty == "std::string" && kids.is_empty() => {
                self.read_string(id, path, span)
            }
            Role::Leaf if kids.is_empty() => match leaf_type(ty) {
                Some(t) => self.read_leaf(id, path, span, t),
                None => Err(self.unsupported(path, format!("type {ty}"))),
            },
            // Any collection by its role (std::vector, RVec, sets, maps, optional, unique_ptr,
            // and a class read through its collection proxy, as ATLAS's DataVector): offsets
            // and the items of its one subfield.
            Role::Collection if kids.len() == 1 => {
                let offsets = self.read_offsets(id, path, span)?;
                let child = kids.first().copied().unwrap_or_default();
                let child_path = format!("{path}.{}", self.field_name(child));
                let items = self.read_id(child, &child_path, span, depth + 1)?;
                if offsets.last().copied() != Some(items.len() as u64) && !items.is_lengthless() {
                    return Err(Error::corrupt(
                        "RNTuple column",
                        0,
                        format!(
                            "collection {path:?} indexes {:?} items, its field has {}",
                            offsets.last(),
                            items.len()
                        ),
                    ));
                }
                Ok(Values::Lists(Box::new(Lists { offsets, items })))
            }
            // A class without data members (an interface, an empty struct): a record of no
            // members, of any length.
            Role::Record if kids.is_empty() && self.columns_of(id).is_empty() => {
                Ok(Values::Record(Vec::new()))
            }
            Role::Record if !kids.is_empty() && self.columns_of(id).is_empty() => {
                let mut members = Vec::with_capacity(kids.len());
                for &k in kids {
                    let name = self.field_name(k).to_owned();
                    let values = self.read_id(k, &format!("{path}.{name}"), span, depth + 1)?;
                    members.push(FieldValues {
                        name,
                        len: 1,
                        values,
                    });
                }
                // Members without data (lengthless) take the record's length.
                let sized = || members.iter().filter(|m| !m.values.is_lengthless());
                let n = sized().next().map(|m| m.values.len());
                if sized().any(|m| Some(m.values.len()) != n) {
                    return Err(Error::corrupt(
                        "RNTuple column",
                        0,
                        format!("the members of record {path:?} differ in length"),
                    ));
                }
                Ok(Values::Record(members))
            }
            Role::Variant if !kids.is_empty() && kids.len() < 126 => {
                self.read_variant(id, kids, path, span, depth)
            }
            // std::atomic<T> and enums: a leaf without columns over its subfield `_0`.
            Role::Leaf if kids.len() == 1 && self.columns_of(id).is_empty() => {
                let child = kids.first().copied().unwrap_or_default();
                if self.field_name(child) != "_0" {
                    return Err(self.unsupported(path, format!("type {ty}")));
                }
                self.read_id(child, path, span, depth + 1)
            }
            role => Err(self.unsupported(path, format!("type {ty:?} (role {role:?})"))),
        }
    }

    fn field_name(&self, id: u32) -> &str {
        self.fields.get(id as usize).map_or("", |f| f.name.as_str())
    }

    fn columns_of(&self, id: u32) -> &[Vec<u32>] {
        self.representations
            .get(id as usize)
            .map_or(&[], Vec::as_slice)
    }
}

/// At most `runs` runs of neighbouring clusters, of about equal entries, covering them all.
fn cluster_runs(clusters: &[Cluster], runs: usize) -> Vec<Span> {
    let total: u64 = clusters.iter().map(|c| c.entries).sum();
    let per_run = total.div_ceil(runs.max(1) as u64).max(1);
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0u64);
    for (i, c) in clusters.iter().enumerate() {
        held = held.saturating_add(c.entries);
        if held >= per_run {
            out.push(start..i + 1);
            (start, held) = (i + 1, 0);
        }
    }
    if start < clusters.len() {
        out.push(start..clusters.len());
    }
    out
}

/// Gives a decompression error the page's file offset.
fn at_offset(e: Error, offset: u64) -> Error {
    match e {
        Error::Decompress {
            algorithm, detail, ..
        } => Error::Decompress {
            algorithm,
            offset,
            detail,
        },
        other => other,
    }
}

/// Reads and checks one envelope.
fn read_envelope(file: &RootFile, link: EnvelopeLink, kind: EnvelopeType) -> Result<Envelope> {
    let loc = link.locator;
    let too_big = || Error::Truncated {
        what: "RNTuple envelope",
        offset: loc.offset,
        need: loc.size,
        have: file.len().saturating_sub(loc.offset),
    };
    let size = usize::try_from(loc.size).map_err(|_| too_big())?;
    let raw = file.source().read("RNTuple envelope", loc.offset, size)?;
    let bytes = if link.length == loc.size {
        raw
    } else {
        let len = usize::try_from(link.length).map_err(|_| too_big())?;
        compression::decompress(&raw, len).map_err(|e| at_offset(e, loc.offset))?
    };
    Envelope::parse(bytes, kind)
}

/// Items `a..b` of `values` (offsets rebased to 0); `None` when the offsets do not fit.
fn slice(values: &Values, a: usize, b: usize) -> Option<Values> {
    fn part<T: Clone>(v: &[T], a: usize, b: usize) -> Option<Vec<T>> {
        v.get(a..b).map(<[T]>::to_vec)
    }
    fn rebased(offsets: &[u64], a: usize, b: usize) -> Option<(Vec<u64>, usize, usize)> {
        let o = offsets.get(a..=b)?;
        let first = *o.first()?;
        let last = *o.last()?;
        let out = o.iter().map(|x| x.saturating_sub(first)).collect();
        Some((
            out,
            usize::try_from(first).ok()?,
            usize::try_from(last).ok()?,
        ))
    }
    Some(match values {
        Values::Bool(v) => Values::Bool(part(v, a, b)?),
        Values::I8(v) => Values::I8(part(v, a, b)?),
        Values::U8(v) => Values::U8(part(v, a, b)?),
        Values::I16(v) => Values::I16(part(v, a, b)?),
        Values::U16(v) => Values::U16(part(v, a, b)?),
        Values::I32(v) => Values::I32(part(v, a, b)?),
        Values::U32(v) => Values::U32(part(v, a, b)?),
        Values::I64(v) => Values::I64(part(v, a, b)?),
        Values::U64(v) => Values::U64(part(v, a, b)?),
        Values::F32(v) => Values::F32(part(v, a, b)?),
        Values::F64(v) => Values::F64(part(v, a, b)?),
        Values::Text(s) => {
            let (offsets, x, y) = rebased(&s.offsets, a, b)?;
            Values::Text(Strings {
                offsets,
                bytes: part(&s.bytes, x, y)?,
            })
        }
        Values::Lists(l) => {
            let (offsets, x, y) = rebased(&l.offsets, a, b)?;
            Values::Lists(Box::new(Lists {
                offsets,
                items: slice(&l.items, x, y)?,
            }))
        }
        Values::Record(members) => Values::Record(
            members
                .iter()
                .map(|m| {
                    Some(FieldValues {
                        name: m.name.clone(),
                        len: m.len,
                        values: slice(&m.values, a * m.len, b * m.len)?,
                    })
                })
                .collect::<Option<_>>()?,
        ),
    })
}

/// The fundamental type of a leaf field's type name.
fn leaf_type(name: &str) -> Option<LeafType> {
    Some(match name {
        "bool" => LeafType::Bool,
        "char" | "std::int8_t" => LeafType::I8,
        "std::uint8_t" => LeafType::U8,
        "std::int16_t" => LeafType::I16,
        "std::uint16_t" => LeafType::U16,
        "std::int32_t" => LeafType::I32,
        "std::uint32_t" => LeafType::U32,
        "std::int64_t" => LeafType::I64,
        "std::uint64_t" => LeafType::U64,
        "float" => LeafType::F32,
        "double" => LeafType::F64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn type_names() {
        assert_eq!(leaf_type("std::uint16_t"), Some(LeafType::U16));
        assert_eq!(leaf_type("char"), Some(LeafType::I8));
        assert_eq!(leaf_type("std::byte"), None);
        assert_eq!(leaf_type("Double32_t"), None);
    }
}

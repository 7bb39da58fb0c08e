//! TTree, TBranch, TBranchElement and TLeaf metadata.
//!
//! The layouts are hard-coded for the class versions ROOT 6 writes (TTree 16-20, TBranch
//! 10-13, TBranchElement 8-10, TLeaf 2) and for those of ROOT 4 (TTree 5, TBranch 6-9, see
//! `tree::legacy`); every object is entered through its byte count, so members this reader does
//! not need (TAtt*, fIOFeatures, fAliases, fUserInfo, ...) and newer trailing members are
//! skipped, and the StreamerInfo record is never read for them. A newer TTree or TBranch
//! version is read with the newest known layout and then realigned by its byte count.

use std::sync::Arc;

use crate::basket::{BasketData, BasketHeader};
use crate::class_shape;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::file::{Key, RootFile};
use crate::layout::{Layout, Shape};
use crate::streamer::{Pointer, Streamer};

mod branch_layout;
mod legacy;
mod meta;
pub mod paths;

#[cfg(test)]
mod records_tests;

use branch_layout::{element_layout, layout_of, member_layout};
use meta::BranchHead;
pub use meta::{BasketInfo, BasketLocation, BranchMeta, Leaf};
use paths::BranchNames;
pub use paths::NamedBranch;

impl RootFile {
    /// Opens a tree: `name`, `dir/name`, `name;cycle`.
    ///
    /// # Errors
    /// Missing objects, non-tree objects, malformed tree metadata.
    pub fn tree(&self, spec: &str) -> Result<Tree> {
        let key = self.find_key(spec)?;
        if !key.is_tree() {
            return Err(Error::NotATree {
                name: spec.to_string(),
                class: key.class_name,
            });
        }
        let payload = self.read_payload(&key)?;
        Tree::parse(self.clone(), &key, &payload)
    }
}

/// An opened TTree.
#[derive(Debug, Clone)]
pub struct Tree {
    pub(crate) file: RootFile,
    /// Tree name.
    pub name: String,
    /// Tree title.
    pub title: String,
    /// Cycle of the key it was read from.
    pub cycle: i16,
    /// Number of entries.
    pub entries: u64,
    /// fAutoFlush (entries per cluster when positive).
    pub auto_flush: i64,
    /// Top-level branches.
    pub branches: Vec<Arc<BranchMeta>>,
    /// Every branch under its full path and column name.
    names: BranchNames,
}

impl Tree {
    pub(crate) fn parse(file: RootFile, key: &Key, payload: &[u8]) -> Result<Self> {
        let cur = Cursor::new(payload, u64::from(key.keylen), "TTree");
        let mut s = Streamer::new(cur);
        let ntuple = key.class_name.starts_with("TNtuple");
        let outer = if ntuple { Some(s.bcv()?) } else { None };
        let bcv = s.bcv()?;
        let v = bcv.version;
        if v != 5 && v < 16 {
            return Err(Error::UnsupportedVersion {
                class: "TTree",
                version: i32::from(v),
            });
        }
        let (name, title) = s.tnamed()?;
        s.skip_object()?; // TAttLine
        s.skip_object()?; // TAttFill
        s.skip_object()?; // TAttMarker
        let (entries, auto_flush) = if v == 5 {
            legacy::tree_counts(&mut s)?
        } else {
            tree_counts(&mut s, v)?
        };
        let branches = read_branch_array(&mut s, &file)?;
        // Everything after fBranches (fLeaves, fAliases, indices, friends, ...) is not needed.
        let _ = outer;
        let entries = u64::try_from(entries).map_err(|_| s.cur.corrupt("negative fEntries"))?;
        let names = BranchNames::new(&branches);
        Ok(Self {
            file,
            name,
            title,
            cycle: key.cycle,
            entries,
            auto_flush,
            branches,
            names,
        })
    }

    /// The file the tree lives in.
    #[must_use]
    pub fn file(&self) -> &RootFile {
        &self.file
    }

    /// The metadata of the branch (top-level or nested) a name selects, as
    /// [`Tree::find_branch`] chooses it: `None` when no branch, or several, go by that name.
    #[must_use]
    pub fn branch_meta(&self, name: &str) -> Option<&Arc<BranchMeta>> {
        self.find_branch(name).ok().map(|n| &n.meta)
    }

    /// Every branch, depth first (nested branches after their parent).
    #[must_use]
    pub fn all_branches(&self) -> Vec<Arc<BranchMeta>> {
        fn walk(b: &Arc<BranchMeta>, out: &mut Vec<Arc<BranchMeta>>) {
            out.push(Arc::clone(b));
            for sub in &b.branches {
                walk(sub, out);
            }
        }
        let mut out = Vec::new();
        for b in &self.branches {
            walk(b, &mut out);
        }
        out
    }
}

/// The members of a TTree v16-20 between its TAttMarker and fBranches: (fEntries, fAutoFlush).
fn tree_counts(s: &mut Streamer<'_>, v: u16) -> Result<(i64, i64)> {
    let c = &mut s.cur;
    let entries = c.i64()?;
    let _tot_bytes = c.i64()?;
    let _zip_bytes = c.i64()?;
    let _saved_bytes = c.i64()?;
    if v >= 18 {
        let _flushed = c.i64()?;
    }
    c.skip(8)?; // fWeight
    c.skip(12)?; // fTimerInterval, fScanField, fUpdate
    if v >= 17 {
        c.skip(4)?; // fDefaultEntryOffsetLen
    }
    let n_cluster_range = if v >= 19 { c.i32()? } else { 0 };
    c.skip(32)?; // fMaxEntries, fMaxEntryLoop, fMaxVirtualSize, fAutoSave
    let auto_flush = if v >= 18 { c.i64()? } else { 0 };
    let _estimate = c.i64()?;
    if v >= 19 {
        let n = usize::try_from(n_cluster_range)
            .map_err(|_| s.cur.corrupt("negative fNClusterRange"))?;
        s.i64_array(n)?;
        s.i64_array(n)?;
    }
    if v >= 20 {
        s.skip_object()?; // fIOFeatures
    }
    Ok((entries, auto_flush))
}

fn read_branch_array(s: &mut Streamer<'_>, file: &RootFile) -> Result<Vec<Arc<BranchMeta>>> {
    s.enter()?;
    let (bcv, n) = s.tobjarray_header()?;
    let mut out = Vec::new();
    for _ in 0..n {
        match s.pointer()? {
            Pointer::Object { class, end } => {
                let b = match class.as_str() {
                    "TBranch" => Some(read_tbranch(s, file, "TBranch")?),
                    "TBranchElement" => Some(read_tbranch_element(s, file)?),
                    _ => None,
                };
                if let Some(end) = end {
                    s.cur.seek_abs(end)?;
                } else if b.is_none() {
                    return Err(s
                        .cur
                        .corrupt(format!("cannot skip branch of class {class}")));
                }
                if let Some(mut b) = b {
                    locate_embedded_entries(&mut b)?;
                    out.push(Arc::new(b));
                }
            }
            Pointer::Null | Pointer::Reference | Pointer::Skipped => {}
        }
    }
    s.finish(bcv)?;
    s.leave();
    Ok(out)
}

/// The head of a TBranch v10-13.
fn branch_head(s: &mut Streamer<'_>, v: u16) -> Result<BranchHead> {
    let (name, title) = s.tnamed()?;
    s.skip_object()?; // TAttFill
    let c = &mut s.cur;
    let compress = c.i32()?;
    let _basket_size = c.i32()?;
    let _entry_offset_len = c.i32()?;
    let write_basket = c.i32()?;
    let _entry_number = c.i64()?;
    if v >= 13 {
        s.skip_object()?; // fIOFeatures
    }
    let c = &mut s.cur;
    let _offset = c.i32()?;
    let max_baskets = c.i32()?;
    let _split = c.i32()?;
    let entries = c.i64()?;
    if v >= 11 {
        let _first_entry = c.i64()?;
    }
    let tot_bytes = c.i64()?;
    let zip_bytes = c.i64()?;
    Ok(BranchHead {
        name,
        title,
        compress,
        write_basket,
        max_baskets,
        entries,
        tot_bytes,
        zip_bytes,
    })
}

/// Embedded baskets of variable-size entries stored without entry offsets, as
/// [`BasketData::located_for`] makes them readable (done once the branch's layout is known).
fn locate_embedded_entries(meta: &mut BranchMeta) -> Result<()> {
    let Ok(layout) = &meta.layout else {
        return Ok(());
    };
    for basket in &mut meta.baskets {
        if let BasketLocation::Embedded(data) = &mut basket.location
            && data.offsets().is_none()
            && layout.variable_size()
        {
            *data = Arc::new(BasketData::clone(data).located_for(layout)?);
        }
    }
    Ok(())
}

fn read_tbranch(s: &mut Streamer<'_>, file: &RootFile, class: &str) -> Result<BranchMeta> {
    let file_len = file.len();
    s.enter()?;
    let bcv = s.bcv()?;
    let v = bcv.version;
    let head = match v {
        10.. => branch_head(s, v)?,
        6..=9 => legacy::branch_head(s, v)?,
        _ => {
            return Err(Error::UnsupportedVersion {
                class: "TBranch",
                version: i32::from(v),
            });
        }
    };
    let BranchHead {
        name,
        title,
        compress,
        write_basket,
        max_baskets,
        entries,
        tot_bytes,
        zip_bytes,
    } = head;
    let branches = read_branch_array(s, file)?;
    let leaves = read_leaf_array(s)?;
    let embedded = read_embedded_baskets(s)?;
    let (Ok(max_baskets), Ok(write_basket), Ok(entries)) = (
        usize::try_from(max_baskets),
        usize::try_from(write_basket),
        u64::try_from(entries),
    ) else {
        return Err(s
            .cur
            .corrupt("negative fMaxBaskets, fWriteBasket or fEntries"));
    };
    if write_basket > max_baskets {
        return Err(s.cur.corrupt(format!(
            "fWriteBasket {write_basket} > fMaxBaskets {max_baskets}"
        )));
    }
    let (bytes, first, seeks) = if v >= 10 {
        (
            s.i32_array(max_baskets)?,
            s.i64_array(max_baskets)?,
            s.i64_array(max_baskets)?,
        )
    } else {
        legacy::basket_arrays(s, max_baskets)?
    };
    let file_name = s.cur.string()?;
    s.finish(bcv)?;
    s.leave();
    let at = s.cur.abs_pos();
    if !file_name.is_empty() {
        return Ok(unsupported(
            class,
            name,
            title,
            compress,
            entries,
            "baskets in another file",
        ));
    }
    // The parent branch of a split object holds no data of its own: its members' sub-branches
    // do, and it has no baskets whatever its entry count.
    let container = write_basket == 0 && embedded.is_empty() && !branches.is_empty();
    let baskets = if container {
        Vec::new()
    } else {
        basket_table(
            &bytes,
            &first,
            &seeks,
            write_basket,
            embedded,
            entries,
            file_len,
            at,
        )?
    };
    let mut meta = BranchMeta {
        class: class.to_string(),
        name,
        title,
        compress,
        entries,
        tot_bytes,
        zip_bytes,
        element_class: String::new(),
        leaves,
        branches,
        baskets,
        layout: Err(String::new()),
    };
    meta.layout = layout_of(&meta);
    Ok(meta)
}

fn unsupported(
    class: &str,
    name: String,
    title: String,
    compress: i32,
    entries: u64,
    why: &str,
) -> BranchMeta {
    BranchMeta {
        class: class.to_string(),
        name,
        title,
        compress,
        entries,
        tot_bytes: 0,
        zip_bytes: 0,
        element_class: String::new(),
        leaves: Vec::new(),
        branches: Vec::new(),
        baskets: Vec::new(),
        layout: Err(why.to_string()),
    }
}

#[allow(clippy::too_many_arguments)]
fn basket_table(
    bytes: &[i32],
    first: &[i64],
    seeks: &[i64],
    write_basket: usize,
    embedded: Vec<Arc<BasketData>>,
    entries: u64,
    file_len: u64,
    at: u64,
) -> Result<Vec<BasketInfo>> {
    let bad = |d: String| Error::corrupt("TBranch basket table", at, d);
    // The baskets on disk are the leading ones with a record (ROOT counts a basket still in
    // memory when the tree was saved in fWriteBasket, with no seek: it is among the embedded
    // ones that follow; uproot `_num_normal_baskets` counts the same way).
    let on_disk = (0..write_basket)
        .take_while(|&i| seeks.get(i).is_some_and(|&s| s != 0))
        .count();
    let mut out = Vec::with_capacity(on_disk + embedded.len());
    let mut next = 0u64;
    for i in 0..on_disk {
        let (Some(&b), Some(&f), Some(&s)) = (bytes.get(i), first.get(i), seeks.get(i)) else {
            return Err(bad(format!("basket {i} missing from the arrays")));
        };
        let end = first
            .get(i + 1)
            .copied()
            .unwrap_or(i64::try_from(entries).unwrap_or(i64::MAX));
        let (Ok(f), Ok(end), Ok(s), Ok(b)) = (
            u64::try_from(f),
            u64::try_from(end),
            u64::try_from(s),
            u32::try_from(b),
        ) else {
            return Err(bad(format!("negative value in basket {i}")));
        };
        if f != next || end < f || s.saturating_add(u64::from(b)) > file_len {
            return Err(bad(format!(
                "basket {i}: entries {f}..{end} after {next}, record {s}+{b} in a {file_len}-byte file"
            )));
        }
        next = end;
        out.push(BasketInfo {
            first: f,
            end,
            location: BasketLocation::OnDisk { seek: s, bytes: b },
        });
    }
    for data in embedded {
        let end = next + data.entries() as u64;
        out.push(BasketInfo {
            first: next,
            end,
            location: BasketLocation::Embedded(data),
        });
        next = end;
    }
    if next != entries {
        return Err(bad(format!(
            "baskets hold {next} entries, the branch {entries}"
        )));
    }
    Ok(out)
}

fn read_tbranch_element(s: &mut Streamer<'_>, file: &RootFile) -> Result<BranchMeta> {
    s.enter()?;
    let bcv = s.bcv()?;
    let mut meta = read_tbranch(s, file, "TBranchElement")?;
    let class_name = s.cur.string()?;
    let _parent = s.cur.string()?;
    let _clones = s.cur.string()?;
    let _checksum = s.cur.u32()?;
    let (mut id, mut typ, mut streamer_type, mut class_version) = (0, 0, 0, 0);
    if (8..=10).contains(&bcv.version) {
        class_version = if bcv.version >= 10 {
            i32::from(s.cur.i16()?)
        } else {
            s.cur.i32()?
        };
        id = s.cur.i32()?;
        typ = s.cur.i32()?;
        streamer_type = s.cur.i32()?;
    }
    s.finish(bcv)?;
    s.leave();
    meta.element_class = class_name;
    meta.layout = element_layout(&meta, id, typ, streamer_type, bcv.version);
    // A member of a split object whose bytes depend on its declaration (STL containers and
    // strings, packed reals and their ranges): what it is, is in the class's description.
    // An object written whole (not split), or a container of them: as the class's
    // description says.
    if meta.layout.is_err() && id == -1 && matches!(typ, 0 | -1) && meta.branches.is_empty() {
        let whole = file.streamer_infos().and_then(|infos| {
            if meta.element_class.trim_start().starts_with("vector<") {
                class_shape::cpp(&infos, &meta.element_class, 0).map(Shape::headed)
            } else {
                class_shape::record(&infos, &meta.element_class, Some(class_version), 0)
            }
        });
        match whole {
            Ok(shape) => meta.layout = Ok(Layout::Object(shape)),
            // Why the description did not help, when it is about a member.
            Err(e) if e.contains("member") => meta.layout = Err(e),
            Err(_) => {}
        }
    }
    if meta.layout.is_err() && id >= 0 && meta.branches.is_empty() {
        let member = member_layout(&meta, file, id, typ, class_version);
        // The first error stays when the description does not help either.
        if member.is_ok() || matches!(streamer_type, 9 | 19 | 61 | 62 | 65 | 67 | 300 | 365 | 500) {
            meta.layout = member;
        }
    }
    Ok(meta)
}

fn read_leaf_array(s: &mut Streamer<'_>) -> Result<Vec<Leaf>> {
    s.enter()?;
    let (bcv, n) = s.tobjarray_header()?;
    let mut out = Vec::new();
    for _ in 0..n {
        if let Pointer::Object { class, end } = s.pointer()? {
            let leaf = if class.starts_with("TLeaf") {
                Some(read_leaf(s, &class)?)
            } else {
                None
            };
            if let Some(end) = end {
                s.cur.seek_abs(end)?;
            } else if leaf.is_none() {
                return Err(s.cur.corrupt(format!("cannot skip leaf of class {class}")));
            }
            out.extend(leaf);
        }
    }
    s.finish(bcv)?;
    s.leave();
    Ok(out)
}

fn read_leaf(s: &mut Streamer<'_>, class: &str) -> Result<Leaf> {
    s.enter()?;
    let outer = s.bcv()?; // TLeafX
    let inner = s.bcv()?; // TLeaf
    let (name, title) = s.tnamed()?;
    let len = s.cur.i32()?;
    let len_type = s.cur.i32()?;
    let _offset = s.cur.i32()?;
    let _is_range = s.cur.u8()?;
    let unsigned = s.cur.u8()? != 0;
    let has_count = match s.pointer()? {
        Pointer::Null => false,
        Pointer::Reference | Pointer::Skipped => true,
        Pointer::Object { class, end } => {
            match end {
                Some(end) => s.cur.seek_abs(end)?,
                None => {
                    read_leaf(s, &class)?;
                }
            }
            true
        }
    };
    s.finish(inner)?;
    // The rest of TLeafX (minimum, maximum, ...) is not needed.
    if outer.end.is_none() {
        let extra = match class {
            "TLeafO" | "TLeafB" => 2,
            "TLeafS" => 4,
            "TLeafI" | "TLeafF" | "TLeafElement" => 8,
            "TLeafL" | "TLeafD" | "TLeafG" => 16,
            _ => return Err(s.cur.corrupt(format!("cannot skip leaf of class {class}"))),
        };
        s.cur.skip(extra)?;
    }
    s.finish(outer)?;
    s.leave();
    Ok(Leaf {
        class: class.to_string(),
        name,
        title,
        len,
        len_type,
        unsigned,
        has_count,
    })
}

/// Reads TBranch::fBaskets; returns the non-null (embedded) baskets in order.
fn read_embedded_baskets(s: &mut Streamer<'_>) -> Result<Vec<Arc<BasketData>>> {
    s.enter()?;
    let (bcv, n) = s.tobjarray_header()?;
    let mut out = Vec::new();
    for _ in 0..n {
        if let Pointer::Object { class, end } = s.pointer()? {
            if class == "TBasket" {
                out.extend(read_embedded_basket(s)?.map(Arc::new));
            }
            match end {
                Some(end) => s.cur.seek_abs(end)?,
                None if class == "TBasket" => {}
                None => return Err(s.cur.corrupt(format!("cannot skip {class} in fBaskets"))),
            }
        }
    }
    s.finish(bcv)?;
    s.leave();
    Ok(out)
}

/// Reads one TBasket of fBaskets as `TBasket::Streamer` does. Its flag says what follows the
/// basket header: `flag % 10 != 2` entry offsets (when it has entries; from 21 to 39 their top
/// byte holds a displacement to drop), over 40 a displacement array, 1 or over 10 the basket's
/// buffer. A basket without a buffer (flag 0) is the header of a basket written to the file,
/// which its fBasketSeek already locates: `None`.
fn read_embedded_basket(s: &mut Streamer<'_>) -> Result<Option<BasketData>> {
    let at = s.cur.abs_pos();
    let key = Key::parse(&mut s.cur)?;
    let header = BasketHeader::parse(&mut s.cur)?;
    // 80 more: the entry offsets are not stored, ROOT rebuilds them from the leaves
    // (TIOFeatures kGenerateOffsetMap).
    let generated = header.flag >= 80;
    let flag = if generated {
        header.flag - 80
    } else {
        header.flag
    };
    let mut starts = None;
    if !generated && flag != 0 && flag % 10 != 2 && header.nev_buf > 0 {
        let n = s.cur.i32()?;
        let mut offsets = s.cur.counted(i64::from(n), 4, Cursor::i32)?;
        if 20 < flag && flag < 40 {
            // The top byte held a displacement.
            for offset in &mut offsets {
                *offset &= 0x00FF_FFFF;
            }
        }
        starts = Some(offsets);
    }
    if flag > 40 {
        let n = s.cur.i32()?;
        s.cur.counted(i64::from(n), 4, Cursor::i32)?;
    }
    if !(flag == 1 || flag > 10) {
        return Ok(None);
    }
    if generated {
        return Err(Error::corrupt(
            "embedded basket",
            at,
            format!(
                "flag {}: entry offsets to rebuild are not supported",
                header.flag
            ),
        ));
    }
    let buffer = s.cur.bytes(header.last as usize)?;
    BasketData::from_embedded(
        buffer,
        usize::from(key.keylen),
        header,
        starts.as_deref(),
        at,
    )
    .map(Some)
}

impl Tree {
    /// Every branch under its full path and column name, depth first (nested branches after
    /// their parent, as [`Tree::all_branches`]).
    #[must_use]
    pub fn named_branches(&self) -> &[NamedBranch] {
        self.names.all()
    }

    /// The branch a name selects: its column name, its full path (`parent/child/leaf`, as
    /// uproot's `keys()`), or its own name when no other branch has it (see
    /// [`crate::tree::paths`]).
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`]; [`Error::AmbiguousBranch`] for the name of several branches that
    /// is not a full path, listing theirs.
    pub fn find_branch(&self, name: &str) -> Result<&NamedBranch> {
        match self.names.find(name) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err(Error::NoSuchBranch {
                tree: self.name.clone(),
                branch: name.to_string(),
            }),
            Err(paths) => Err(Error::AmbiguousBranch {
                tree: self.name.clone(),
                branch: name.to_string(),
                paths,
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    fn embedded(entries: usize) -> Arc<BasketData> {
        Arc::new(BasketData::flat_for_test(vec![0; entries * 4], entries))
    }

    fn ranges(baskets: &[BasketInfo]) -> Vec<(u64, u64, bool)> {
        baskets
            .iter()
            .map(|b| {
                let on_disk = matches!(b.location, BasketLocation::OnDisk { .. });
                (b.first, b.end, on_disk)
            })
            .collect()
    }

    #[test]
    fn the_baskets_on_disk_are_the_leading_ones_with_a_record() {
        // One basket on disk, then the one embedded when the tree was saved (AutoSave).
        let t = basket_table(
            &[100, 0],
            &[0, 10, 0],
            &[500, 0],
            1,
            vec![embedded(5)],
            15,
            10_000,
            0,
        )
        .unwrap();
        assert_eq!(ranges(&t), [(0, 10, true), (10, 15, false)]);
        // fWriteBasket counts a basket that has no record: it is among the embedded ones (the
        // layout of older files in the uproot corpus, e.g. uproot-issue187.root).
        let t = basket_table(
            &[0, 0],
            &[0, 7981, 0],
            &[0, 0],
            1,
            vec![embedded(7981), embedded(4249)],
            12_230,
            10_000,
            0,
        )
        .unwrap();
        assert_eq!(ranges(&t), [(0, 7981, false), (7981, 12_230, false)]);
        // Entries that do not add up are still an error.
        let err = basket_table(&[0], &[0, 5], &[0], 1, vec![embedded(3)], 5, 10_000, 0);
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("baskets hold 3 entries")
        );
    }
}

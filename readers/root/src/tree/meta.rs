//! The metadata a tree's records hold: leaves, baskets, branches, and the members every TBranch
//! version starts with. The parsers of tree.rs and its submodules build these; this file imports
//! none of them.

use std::sync::Arc;

use crate::basket::BasketData;
use crate::layout::Layout;

/// A leaf (`TLeaf*`).
#[derive(Debug, Clone)]
pub struct Leaf {
    /// Leaf class (`TLeafF`, `TLeafElement`, ...).
    pub class: String,
    /// Leaf name.
    pub name: String,
    /// Leaf title (`x[n]`, `arr[4]`).
    pub title: String,
    /// Fixed multiplicity.
    pub len: i32,
    /// Element size in bytes (0 for TLeafElement).
    pub len_type: i32,
    /// Unsigned integer type.
    pub unsigned: bool,
    /// Whether a counter leaf gives the entry's length.
    pub has_count: bool,
}

/// Where a basket lives.
#[derive(Debug, Clone)]
pub enum BasketLocation {
    /// A free-standing record in the file.
    OnDisk {
        /// Offset of its key.
        seek: u64,
        /// Record size.
        bytes: u32,
    },
    /// Stored inside the TTree record (the tail of an unclosed or auto-saved tree).
    Embedded(Arc<BasketData>),
}

/// One basket of a branch and the entries it holds.
#[derive(Debug, Clone)]
pub struct BasketInfo {
    /// First entry (inclusive).
    pub first: u64,
    /// Last entry (exclusive).
    pub end: u64,
    /// Where it is.
    pub location: BasketLocation,
}

impl BasketInfo {
    /// Compressed size on disk (0 for embedded baskets).
    #[must_use]
    pub fn compressed_bytes(&self) -> u64 {
        match self.location {
            BasketLocation::OnDisk { bytes, .. } => u64::from(bytes),
            BasketLocation::Embedded(_) => 0,
        }
    }
}

/// A branch's metadata.
#[derive(Debug, Clone)]
pub struct BranchMeta {
    /// Branch class (`TBranch`, `TBranchElement`).
    pub class: String,
    /// Branch name.
    pub name: String,
    /// Title (leaf list, e.g. `pt/F`).
    pub title: String,
    /// Compression setting of the branch.
    pub compress: i32,
    /// Entries in the branch.
    pub entries: u64,
    /// Uncompressed bytes written (fTotBytes).
    pub tot_bytes: i64,
    /// Compressed bytes written (fZipBytes).
    pub zip_bytes: i64,
    /// For TBranchElement: the class name (`vector<float>`).
    pub element_class: String,
    /// Leaves.
    pub leaves: Vec<Leaf>,
    /// Sub-branches.
    pub branches: Vec<Arc<BranchMeta>>,
    /// Baskets in entry order.
    pub baskets: Vec<BasketInfo>,
    /// How entries are laid out, or why they cannot be read.
    pub layout: std::result::Result<Layout, String>,
}

/// The members of a TBranch that come before its sub-branches, in every version.
pub(super) struct BranchHead {
    pub(super) name: String,
    pub(super) title: String,
    pub(super) compress: i32,
    pub(super) write_basket: i32,
    pub(super) max_baskets: i32,
    pub(super) entries: i64,
    pub(super) tot_bytes: i64,
    pub(super) zip_bytes: i64,
}

//! The error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong while reading a ROOT file.
///
/// Variants carry the context needed to act on them: file offsets, object names, sizes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused a read.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file being read.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file does not start with the `root` magic.
    #[error("not a ROOT file: the first four bytes are {found:02x?}, expected \"root\"")]
    BadMagic {
        /// The bytes found at offset 0.
        found: [u8; 4],
    },
    /// A structure extends past the end of the file or of its enclosing buffer.
    #[error("truncated {what}: need {need} bytes at offset {offset}, only {have} available")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Offset (file or buffer relative) of the read.
        offset: u64,
        /// Bytes needed.
        need: u64,
        /// Bytes available.
        have: u64,
    },
    /// A field holds a value that cannot be right (negative size, offset out of range, ...).
    #[error("corrupt {what} at offset {offset}: {detail}")]
    Corrupt {
        /// What was being read.
        what: &'static str,
        /// Offset of the offending structure.
        offset: u64,
        /// What is wrong.
        detail: String,
    },
    /// A compressed block could not be decompressed.
    #[error("{algorithm} block at payload offset {offset} failed to decompress: {detail}")]
    Decompress {
        /// The block's algorithm.
        algorithm: &'static str,
        /// Offset of the block inside the compressed payload.
        offset: u64,
        /// Codec message.
        detail: String,
    },
    /// A compression algorithm this reader does not implement.
    #[error("unsupported compression algorithm tag {tag:?} at payload offset {offset}")]
    UnsupportedCompression {
        /// The two tag bytes.
        tag: [u8; 2],
        /// Offset of the block inside the compressed payload.
        offset: u64,
    },
    /// An object of a class version this reader cannot interpret.
    #[error("unsupported {class} version {version}")]
    UnsupportedVersion {
        /// The class.
        class: &'static str,
        /// The version read.
        version: i32,
    },
    /// No object of that name (and cycle) exists.
    #[error("no object named {name:?} in {file}")]
    NotFound {
        /// The requested name (path and cycle as given).
        name: String,
        /// The file searched.
        file: String,
    },
    /// The object exists but is not a TTree.
    #[error("object {name:?} is a {class}, not a TTree")]
    NotATree {
        /// The object name.
        name: String,
        /// Its class.
        class: String,
    },
    /// The object exists but is not an RNTuple.
    #[error("object {name:?} is a {class}, not a ROOT::RNTuple")]
    NotAnRNTuple {
        /// The object name.
        name: String,
        /// Its class.
        class: String,
    },
    /// The RNTuple has no field of that name.
    #[error("RNTuple {ntuple:?} has no field {field:?}")]
    NoSuchField {
        /// The RNTuple.
        ntuple: String,
        /// The field requested (a dotted path for subfields).
        field: String,
    },
    /// The field holds a type, or uses an encoding, this reader cannot decode.
    #[error("RNTuple {ntuple:?}: field {field:?} is not supported: {detail}")]
    UnsupportedField {
        /// The RNTuple.
        ntuple: String,
        /// The field (a dotted path for subfields).
        field: String,
        /// Why, naming the type or encoding.
        detail: String,
    },
    /// Stored bytes do not match their checksum.
    #[error(
        "checksum mismatch in {what} at offset {offset}: stored {stored:#018x}, computed {computed:#018x}"
    )]
    Checksum {
        /// What was checked.
        what: &'static str,
        /// Offset of the checked bytes.
        offset: u64,
        /// The checksum stored in the file.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },
    /// The tree has no branch of that name.
    #[error("tree {tree:?} has no branch {branch:?}")]
    NoSuchBranch {
        /// The tree.
        tree: String,
        /// The branch requested.
        branch: String,
    },
    /// Several branches of the tree have the name asked for, and it is no branch's full path
    /// or column name ([`crate::tree::paths`]).
    #[error(
        "tree {tree:?} has {} branches named {branch:?}: {}; name one by its full path",
        .paths.len(),
        .paths.join(", ")
    )]
    AmbiguousBranch {
        /// The tree.
        tree: String,
        /// The name asked for.
        branch: String,
        /// The column names of the branches it could mean (their full paths).
        paths: Vec<String>,
    },
    /// The branch holds data this reader cannot decode (objects, strings, multi-leaf, ...).
    #[error("branch {branch:?} is not supported: {detail}")]
    UnsupportedBranch {
        /// The branch.
        branch: String,
        /// Why.
        detail: String,
    },
    /// The caller asked for a type that does not match the branch.
    #[error("branch {branch:?} holds {actual}, not {requested}")]
    TypeMismatch {
        /// The branch.
        branch: String,
        /// Element type of the branch.
        actual: &'static str,
        /// Element type requested.
        requested: &'static str,
    },
    /// An entry index outside the branch.
    #[error("entry range {start}..{stop} is outside the branch's {entries} entries")]
    EntryOutOfRange {
        /// First entry requested.
        start: u64,
        /// One past the last entry requested.
        stop: u64,
        /// Entries in the branch.
        entries: u64,
    },
}

/// Shorthand for `Result<T, root_reader::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn corrupt(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        Self::Corrupt {
            what,
            offset,
            detail: detail.into(),
        }
    }
}

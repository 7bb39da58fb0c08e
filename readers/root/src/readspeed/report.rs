//! What `readspeed` measures and reports: the mode, the selection of branches or fields,
//! the configuration and the report (shared by the TTree and the RNTuple measurements).

use std::path::PathBuf;

use super::stages::Stages;

/// root-readspeed's MB.
const MIB: f64 = 1024.0 * 1024.0;

/// What is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Read, decompress and decode (what an analysis pays). The strings of `char*`,
    /// `std::string`, `TString` and `vector<string>` branches are checked and handed out where
    /// they lie ([`TextView`], [`TextListView`]).
    #[default]
    Full,
    /// As [`Mode::Full`], but strings are copied into columns of their own ([`crate::Strings`]), as
    /// [`crate::BranchReader::read_column`] returns them.
    FullCopiedStrings,
    /// Decompress baskets preloaded in memory (the codec alone).
    DecompressOnly,
    /// Decompress preloaded baskets and copy each payload once, 16 KiB at a time, into a reused
    /// buffer: the least a reader that hands out values in its own memory must do, whatever
    /// the format.
    /// Where this floor is itself under 0.85 of [`Mode::DecompressOnly`], so is every reader.
    DecompressCopy,
    /// Read each basket as the full read does (from the file, decompressed, its entry-offset
    /// table checked), then hand its entries out as the full read does, a step of entries at a
    /// time into reused buffers, but only copied: their bytes once and, where entries vary in
    /// size, one 64-bit end per entry; in `vector<string>` and `vector<vector<T>>` entries, where
    /// each item's length or count says where the next one starts, one end per item, found as
    /// plainly as can be. The least a reader of the file must do to hand out every entry in
    /// memory of its own, before it checks or converts a single value. Where this floor is
    /// under 0.85 of [`Mode::DecompressOnly`], so is the full read of every such reader.
    /// On RNTuples: each page read, checked and decompressed as the full read does, then its
    /// bytes copied once into a reused buffer (the least a reader that puts the values of split
    /// columns back together in memory of its own does).
    ReadCopy,
    /// Read each basket as the full read does (its entry-offset table included), then find
    /// every string where it lies, as plainly as can be and without a copy: in each `char*`,
    /// `std::string` or `TString` entry its length byte (behind the object header), in each
    /// `vector<string>` and `vector<vector<T>>` entry each item's length or count, one after the
    /// other. Nothing is checked beyond staying inside the entry, nothing copied or converted.
    /// What finding the strings costs a reader that lends them where they lie ([`TextView`],
    /// [`TextListView`]), found plainly, one at a time: for lists, the walk a reader makes
    /// when it hands the items out one after the other. A measure, not a bound on checking
    /// them: the full read's checks take eight `char*` starts at a time and find where a
    /// `vector<string>` entry's strings end without walking them, and are faster than it.
    /// Other branches only read their entry-offset table.
    ReadFind,
    /// Read each basket record as the full read does (from the file) and decompress it, as
    /// [`Mode::DecompressOnly`] does: no entry-offset table, nothing handed out. The least any
    /// reader of the file does; what it costs over [`Mode::DecompressOnly`] is reading.
    ReadDecompress,
    /// As [`Mode::ReadDecompress`], then what any reader of every entry must touch: one byte of
    /// every 64-byte line of the entries (where each entry is one string behind its length
    /// byte, each entry's length byte instead, loaded as the full read's check loads them),
    /// and every start of the entry-offset table converted as a reader converts it (from
    /// big-endian, less the key length), all summed, nothing stored, checked or handed out.
    /// What the full read may take over this floor is all that its checks and decoding may
    /// cost. (A reader of entries of varying size could walk them one after the other instead
    /// of reading the table: a chain of dependent loads, slower.)
    ReadTouch,
}

impl Mode {
    /// Every mode, in the order the tools list them.
    pub const ALL: [Self; 8] = [
        Self::Full,
        Self::FullCopiedStrings,
        Self::DecompressOnly,
        Self::DecompressCopy,
        Self::ReadCopy,
        Self::ReadFind,
        Self::ReadDecompress,
        Self::ReadTouch,
    ];

    /// Whether the baskets are preloaded and only decompressed (and copied).
    pub(crate) fn preloads(self) -> bool {
        matches!(self, Self::DecompressOnly | Self::DecompressCopy)
    }
}

/// Which branches to read.
#[derive(Debug, Clone)]
pub enum Selection {
    /// These names (each must exist in every tree): column names, full paths, or names no
    /// other branch has ([`crate::Tree::find_branch`]).
    Names(Vec<String>),
    /// Every branch the reader can decode.
    All,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Files.
    pub files: Vec<PathBuf>,
    /// Trees: one (read from every file) or one per file.
    pub trees: Vec<String>,
    /// Branches.
    pub branches: Selection,
    /// Worker threads (1 = the calling thread only).
    pub threads: usize,
    /// What is timed.
    pub mode: Mode,
    /// Also time each basket's stages apart ([`Report::stages`]).
    pub stages: bool,
}

/// The measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Wall-clock seconds of setup (open files, read metadata).
    pub setup_real_time_s: f64,
    /// Process CPU seconds of setup.
    pub setup_cpu_time_s: f64,
    /// Wall-clock seconds of the timed part.
    pub real_time_s: f64,
    /// Process CPU seconds of the timed part.
    pub cpu_time_s: f64,
    /// Entry bytes decoded (uncompressed).
    pub uncompressed_bytes: u64,
    /// Basket bytes read from the files (compressed, key headers included).
    pub compressed_bytes: u64,
    /// Worker threads.
    pub threads: usize,
    /// Baskets processed.
    pub baskets: u64,
    /// Branches read.
    pub branches: usize,
    /// The mode.
    pub mode: Mode,
    /// Where the time went, when [`Config::stages`] asked.
    pub stages: Option<Stages>,
}

impl Report {
    /// Uncompressed MB/s (1 MB = 10^6 bytes, as rootreadspeed).
    #[must_use]
    pub fn throughput_mb_s(&self) -> f64 {
        self.uncompressed_bytes as f64 / 1e6 / self.real_time_s.max(1e-12)
    }

    /// Compressed MB/s.
    #[must_use]
    pub fn compressed_throughput_mb_s(&self) -> f64 {
        self.compressed_bytes as f64 / 1e6 / self.real_time_s.max(1e-12)
    }

    /// Uncompressed MB/s per thread.
    #[must_use]
    pub fn throughput_per_thread_mb_s(&self) -> f64 {
        self.throughput_mb_s() / self.threads.max(1) as f64
    }

    /// CPU time over (real time x threads).
    #[must_use]
    pub fn cpu_efficiency(&self) -> f64 {
        self.cpu_time_s / (self.real_time_s.max(1e-12) * self.threads.max(1) as f64)
    }

    /// ROOT's "Real time": wall-clock seconds from opening the files to the last entry read.
    /// root-readspeed opens each file and reads its tree inside its stopwatch (with threads, once
    /// more before it, in the setup it reports apart); here opening the files, reading the
    /// trees and listing the baskets is the setup, counted once, and [`Report::real_time_s`]
    /// is the reading of the entries alone.
    #[must_use]
    pub fn root_real_time_s(&self) -> f64 {
        self.setup_real_time_s + self.real_time_s
    }

    /// ROOT's "CPU time": process CPU seconds over the same span as
    /// [`Report::root_real_time_s`].
    #[must_use]
    pub fn root_cpu_time_s(&self) -> f64 {
        self.setup_cpu_time_s + self.cpu_time_s
    }

    /// root-readspeed's "Throughput": uncompressed bytes over ROOT's real time, in the MB of
    /// 2^20 bytes root-readspeed divides by (its example: 80,000,000 bytes in 0.172477 s is
    /// 442.343 MB/s).
    #[must_use]
    pub fn root_throughput_mb_s(&self) -> f64 {
        self.uncompressed_bytes as f64 / MIB / self.root_real_time_s().max(1e-12)
    }

    /// Compressed (on-disk) bytes over ROOT's real time, in the same MB: what the storage had to
    /// deliver, to set beside what it can.
    #[must_use]
    pub fn root_compressed_throughput_mb_s(&self) -> f64 {
        self.compressed_bytes as f64 / MIB / self.root_real_time_s().max(1e-12)
    }
}

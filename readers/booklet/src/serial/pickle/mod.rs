//! Pickle of plain values (the `pickle` and `pickle_zstd` serializers): a bounded decoder and
//! an encoder that writes the bytes CPython's `pickle.dumps(obj, 5)` writes.
//!
//! # Decoding
//!
//! A stack machine runs the opcodes of protocols 0 to 5 that build plain values (`None`,
//! bools, ints, floats, `str`, `bytes`/`bytearray`, lists, tuples, dicts, the memo and
//! framing), into an arena of nodes in which the memo *shares* nodes as Python shares objects.
//! Only then is the root turned into a [`Value`] tree, which copies every shared node once per
//! reference. That is where a hostile pickle could blow up (a list holding a memoized list
//! twice, nested 60 times, is 2^60 nodes from a few hundred bytes), so the copy is charged to
//! the decode budget ([`super::Limits`]) and nesting is capped at [`MAX_DEPTH`] (256 levels); a container
//! that holds itself is refused. Lengths are checked against the input before anything is
//! copied. Everything that is not a plain value (globals, `REDUCE`, class instances, sets,
//! persistent ids, out-of-band buffers) is refused with an error naming the opcode.
//!
//! `serde-pickle` is not used: its decoder copies memoized values on `DUP` and on memoizing a
//! memo reference (exponential or quadratic memory from short input), recurses without a depth
//! limit, and either loses dict order (its `Value`) or tuples and big ints (its serde path).
//!
//! # Encoding
//!
//! A key is found by the hash of its stored bytes, so a pickled key must be byte for byte what
//! CPython's C pickler writes: `PROTO 5`, one `FRAME` when the body has at least 4 bytes,
//! `MEMOIZE` after every str, bytes, list, dict and non-empty tuple, the smallest int opcode
//! (`BININT1`, `BININT2`, `BININT`, `LONG1`), `BINFLOAT`, `SHORT_BINUNICODE` /
//! `BINUNICODE`, `SHORT_BINBYTES` / `BINBYTES`, `TUPLE1..3` or `MARK .. TUPLE`, and lists and
//! dicts appended in batches of 1000 (`APPEND` / `SETITEM` for a single item). CPython writes a
//! memo reference (`BINGET`) when the *same object* occurs twice; the objects it always shares
//! are the empty and one-character (Latin-1) strings and the empty and one-byte bytes, which
//! this encoder shares the same way. Other equal strings occurring twice are separate objects
//! in most Python programs, and are written twice here; a key built in Python from one string
//! object used twice has bytes this encoder does not reproduce. Values larger than 64 KiB are
//! framed differently from CPython (one frame), which Python reads all the same.

mod decode;
mod encode;

pub(super) use self::decode::decode;
pub(super) use self::encode::encode;

/// Deepest nesting of containers decoded or encoded. CPython pickles up to about 1000 levels
/// (its recursion limit); this crate stops at 256 so that the recursive walks over a decoded
/// value (building it, printing it, encoding it) fit a 2 MiB thread stack even unoptimized.
pub const MAX_DEPTH: usize = 256;

const NAME: &str = "pickle";

// Opcodes (pickletools names).
const MARK: u8 = b'(';
const STOP: u8 = b'.';
const POP: u8 = b'0';
const POP_MARK: u8 = b'1';
const DUP: u8 = b'2';
const FLOAT: u8 = b'F';
const INT: u8 = b'I';
const BININT: u8 = b'J';
const BININT1: u8 = b'K';
const LONG: u8 = b'L';
const BININT2: u8 = b'M';
const NONE: u8 = b'N';
const BINUNICODE: u8 = b'X';
const APPEND: u8 = b'a';
const DICT: u8 = b'd';
const EMPTY_DICT: u8 = b'}';
const APPENDS: u8 = b'e';
const GET: u8 = b'g';
const BINGET: u8 = b'h';
const LONG_BINGET: u8 = b'j';
const LIST: u8 = b'l';
const EMPTY_LIST: u8 = b']';
const PUT: u8 = b'p';
const BINPUT: u8 = b'q';
const LONG_BINPUT: u8 = b'r';
const SETITEM: u8 = b's';
const TUPLE: u8 = b't';
const EMPTY_TUPLE: u8 = b')';
const SETITEMS: u8 = b'u';
const BINFLOAT: u8 = b'G';
const PROTO: u8 = 0x80;
const TUPLE1: u8 = 0x85;
const TUPLE2: u8 = 0x86;
const TUPLE3: u8 = 0x87;
const NEWTRUE: u8 = 0x88;
const NEWFALSE: u8 = 0x89;
const LONG1: u8 = 0x8a;
const LONG4: u8 = 0x8b;
const BINBYTES: u8 = b'B';
const SHORT_BINBYTES: u8 = b'C';
const SHORT_BINUNICODE: u8 = 0x8c;
const BINUNICODE8: u8 = 0x8d;
const BINBYTES8: u8 = 0x8e;
const MEMOIZE: u8 = 0x94;
const FRAME: u8 = 0x95;
const BYTEARRAY8: u8 = 0x96;

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests;

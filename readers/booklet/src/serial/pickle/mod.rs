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
//! the decode budget ([`super::Limits`]) and nesting is capped at [`MAX_DEPTH`](opcodes::MAX_DEPTH) (256 levels); a container
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
mod opcodes;

pub(super) use self::decode::decode;
pub(super) use self::encode::encode;

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests;

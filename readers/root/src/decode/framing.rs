//! How ROOT frames what the decoders read: an entry in its basket, a streamed object's header
//! (byte count, class version), a string's length, a list's count, and the errors that name the
//! entry. Every decoder module imports these; this one imports none of them, so the decoders
//! depend on it one way only.

use crate::basket::BasketData;
use crate::error::Error;

/// Byte-count flag of a streamed object's header (`kByteCountMask`).
pub(super) const BYTE_COUNT_FLAG: u32 = 0x4000_0000;

/// An entry's error: its index and what is wrong.
pub(crate) type EntryError = (usize, String);

/// The bytes of entry `j` (the basket has an offset table).
#[inline]
pub(super) fn entry(basket: &BasketData, j: usize) -> Result<&[u8], EntryError> {
    let offsets = basket.offsets().unwrap_or_default();
    match (offsets.get(j), offsets.get(j + 1)) {
        (Some(&s), Some(&e)) => basket
            .data()
            .get(s as usize..e as usize)
            .ok_or_else(|| (j, format!("bytes {s}..{e} outside the basket"))),
        _ => Err((j, "no offsets for the entry".to_string())),
    }
}

pub(super) fn too_short(j: usize) -> EntryError {
    (j, "the entry ends inside an item".to_string())
}

/// The body of a streamed object filling entry `j` (the generic walk's own header rules).
#[inline(always)]
pub(super) fn body(j: usize, e: &[u8]) -> Result<&[u8], EntryError> {
    match split_headed(e) {
        Ok((body, [])) => Ok(body),
        Ok((_, rest)) => Err((j, format!("{} bytes left after the object", rest.len()))),
        Err(d) => Err((j, d)),
    }
}

/// One string at the start of `e`: its bytes and the rest.
#[inline(always)]
pub(super) fn string(j: usize, e: &[u8]) -> Result<(&[u8], &[u8]), EntryError> {
    split_string(e).map_err(|d| (j, d))
}

#[inline(always)]
pub(super) fn count(j: usize, e: &[u8], min_item: usize) -> Result<(usize, &[u8]), EntryError> {
    let (n, rest) = e.split_first_chunk::<4>().ok_or_else(|| too_short(j))?;
    let n = u32::from_be_bytes(*n) as usize;
    if n.saturating_mul(min_item) > rest.len() {
        return Err((j, format!("a list of {n} items in {} bytes", rest.len())));
    }
    Ok((n, rest))
}

/// Whether an object header's class version is a plain one: neither 0 nor member-wise (the
/// `kStreamedMemberWise` bit, 0x4000).
#[inline(always)]
pub(super) fn plain_version(version: u16) -> bool {
    version & 0x4000 == 0 && version != 0
}

/// The common case of a `vector<…>` entry at `s..e`: a plain object header (byte count and a
/// class version, neither 0 nor member-wise) and the item count, with at least `min_item` bytes
/// per item left in the entry. Returns the count and where the items start; `None` for anything
/// else, which the general rules take.
#[inline(always)]
pub(super) fn plain_list_head(
    data: &[u8],
    s: usize,
    e: usize,
    min_item: usize,
) -> Option<(usize, usize)> {
    let head = data.get(s..)?.first_chunk::<10>()?;
    let body = e.checked_sub(s + 10)?;
    let count = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let version = u16::from_be_bytes([head[4], head[5]]);
    let n = u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize;
    if body + 6 >= BYTE_COUNT_FLAG as usize
        || count != (body + 6) as u32 | BYTE_COUNT_FLAG
        || !plain_version(version)
        || n.saturating_mul(min_item) > body
    {
        return None;
    }
    Some((n, s + 10))
}

/// A string at the start of `e` (a length byte; 255: a 4-byte length follows), and the rest.
#[inline(always)]
pub(super) fn split_string(e: &[u8]) -> std::result::Result<(&[u8], &[u8]), String> {
    let mut r = Bytes { data: e };
    let mut len = usize::from(r.take(1)?[0]);
    if len == 255 {
        len = r.u32()? as usize;
    }
    let s = r.take(len)?;
    Ok((s, r.data))
}

/// The body of an object with a header at the start of `e` (see [`headed_body`]), and the
/// bytes after it.
#[inline(always)]
pub(super) fn split_headed(e: &[u8]) -> std::result::Result<(&[u8], &[u8]), String> {
    let mut r = Bytes { data: e };
    let body = headed_body(&mut r)?;
    Ok((body, r.data))
}

/// The body of an object with a header (byte count, version, and for version 0 the class
/// checksum), the reader moved past it.
#[inline(always)]
pub(super) fn headed_body<'a>(r: &mut Bytes<'a>) -> std::result::Result<&'a [u8], String> {
    match split_header(r)? {
        (body, false) => Ok(body),
        (_, true) => Err("a member-wise streamed collection".to_string()),
    }
}

/// An object header: the body after the byte count and version (and, for version 0, the
/// class checksum), and whether the body is a collection streamed member-wise (the version's
/// kStreamedMemberWise bit: the elements' members one after the other, see
/// [`super::object`]'s `push_member_wise`).
#[inline(always)]
pub(super) fn split_header<'a>(r: &mut Bytes<'a>) -> std::result::Result<(&'a [u8], bool), String> {
    let count = r.u32()?;
    if count & BYTE_COUNT_FLAG == 0 {
        return Err(format!("object header without a byte count ({count:#x})"));
    }
    let count = (count & !BYTE_COUNT_FLAG) as usize;
    let body = r.take(count)?;
    let mut sub = Bytes { data: body };
    let version = sub.take(2)?;
    let member_wise = version[0] & 0x40 != 0;
    // Version 0: a class without ClassDef ("foreign"), its checksum follows.
    if version == [0, 0] {
        sub.take(4)?;
    }
    Ok((sub.data, member_wise))
}

/// The unread bytes of an entry.
pub(super) struct Bytes<'a> {
    pub(super) data: &'a [u8],
}

/// Kept out of line: the hot loops only test and branch.
#[cold]
#[inline(never)]
fn short_entry(need: usize, left: usize) -> String {
    format!("needs {need} bytes, {left} left in the entry")
}

impl<'a> Bytes<'a> {
    #[inline(always)]
    pub(super) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if n > self.data.len() {
            return Err(short_entry(n, self.data.len()));
        }
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        Ok(head)
    }

    #[inline(always)]
    pub(super) fn u32(&mut self) -> std::result::Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// What is wrong with entry `j` of `branch`.
pub(super) fn entry_error(branch: &str, j: usize, detail: String) -> Error {
    Error::corrupt(
        "basket",
        0,
        format!("branch {branch:?}: entry {j}: {detail}"),
    )
}

/// Makes room for `n` more elements in `v`, which decoders reuse basket after basket (emptied,
/// their memory kept). Growing a vector copies its whole old allocation, used or not: when less
/// than half of it is in use, a new allocation and a copy of what is used costs less.
pub(crate) fn reserve<T: Copy>(v: &mut Vec<T>, n: usize) {
    if v.capacity() - v.len() >= n {
        return;
    }
    if v.len() < v.capacity() / 2 {
        let mut fresh = Vec::with_capacity(v.len() + n);
        fresh.extend_from_slice(v);
        *v = fresh;
    } else {
        v.reserve(n);
    }
}

/// A string as ROOT streams it (a length byte; from 255 bytes on, 255 and a 4-byte length),
/// `len` bytes of the alphabet: for the string decoders' tests.
#[cfg(test)]
pub(crate) fn streamed_string(len: usize) -> Vec<u8> {
    let mut v = if len < 255 {
        vec![len as u8]
    } else {
        let mut v = vec![255];
        v.extend((len as u32).to_be_bytes());
        v
    };
    v.extend((0..len).map(|i| b'a' + (i % 26) as u8));
    v
}

/// An object as ROOT streams it: byte count, `version` (for version 0, a class checksum after
/// it), then `body`: for the object decoders' tests.
#[cfg(test)]
pub(crate) fn headed_for_test(body: &[u8], version: [u8; 2]) -> Vec<u8> {
    let checksum = if version == [0, 0] { 4 } else { 0 };
    let mut v = ((body.len() as u32 + 2 + checksum) | BYTE_COUNT_FLAG)
        .to_be_bytes()
        .to_vec();
    v.extend(version);
    if version == [0, 0] {
        v.extend([1, 2, 3, 4]);
    }
    v.extend(body);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_keeps_the_values_and_makes_the_room() {
        for (len, cap, n) in [
            (0, 0, 5),
            (1, 100, 500),
            (60, 100, 500),
            (3, 10, 2),
            (0, 64, 64),
        ] {
            let mut v: Vec<u32> = Vec::with_capacity(cap);
            v.extend(0..len);
            reserve(&mut v, n as usize);
            assert!(v.capacity() - v.len() >= n as usize);
            assert!(v.iter().copied().eq(0..len));
        }
    }
}

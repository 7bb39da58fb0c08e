//! A basket's entry-offset table, read into payload offsets and checked: in order and inside
//! the data, and for the entries of a string branch without object headers (`char*` leaves,
//! and `std::string` or `TString` branches written without them) each entry's string in the
//! same pass.
//!
//! The string check needs each entry's length byte, at its start: a load from wherever the
//! entry lies. Taken one by one, each checked on its own, those loads cost more than the codec
//! leaves for the whole check (a NanoAOD `char*` full read at 0.80 of decompression alone, under
//! the 0.85 bar); checked eight at a time with AVX2, 0.87-0.88 (BENCHMARKS.md runs #17 and #19 of
//! the first ledger), and faster still with the eight loads made one by one into the vector's
//! lanes than with one gather (run #5 of the 2026-11-29 ledger). Made
//! where the table is converted, the check needs no pass of its own over the offsets, and the
//! order check none either (an entry that fits its length byte ends where the next starts,
//! after it): the `char*` and `std::string` full reads 1.042x and 1.045x faster (run #1 of the
//! 2026-11-29 ledger, paired A/B; `std::string` 0.744 to 0.790 of the codec alone). One of the
//! reader's SIMD kernels (with the decoders' `jump`, `nested` and `scaled`), with every bound it
//! relies on checked in safe code here.
#![allow(unsafe_code)]

use crate::error::{Error, Result};

/// What a basket's entries are checked for as its entry-offset table is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryCheck {
    /// That the offsets are in order and inside the data (any layout).
    Ordered,
    /// Also, where the machine has AVX2, that every entry is one string of under 255 bytes
    /// behind its length byte, or empty: the plain case of a string branch without object
    /// headers. A basket where one is not is read as [`EntryCheck::Ordered`] reads it.
    ShortTexts,
}

/// The payload offsets of the `table`'s key-relative entry starts (each minus `keylen`), in
/// `out` (reused), with `border` appended as the end of the last entry; and whether `check`
/// found every entry a short string (only ever with [`EntryCheck::ShortTexts`]). `payload` is
/// the whole decompressed payload, its entries then the table.
///
/// # Errors
/// Starts out of order or past `border`.
pub(super) fn read_offsets(
    table: &[[u8; 4]],
    keylen: usize,
    border: usize,
    payload: &[u8],
    check: EntryCheck,
    mut out: Vec<u32>,
    seek: u64,
) -> Result<(Vec<u32>, bool)> {
    if check == EntryCheck::ShortTexts
        && let (Some(avx2), Ok(border32)) = (Avx2::detect(), u32::try_from(border))
        && avx2.short_texts(table, keylen as u32, payload, border32, &mut out)
    {
        return Ok((out, true));
    }
    let starts = table.iter().map(|c| u32::from_be_bytes(*c));
    let ordered = offsets_in_order(starts, keylen as u32, &mut out);
    Ok((
        to_payload_offsets(out, ordered, keylen, border, seek)?,
        false,
    ))
}

/// Key-relative entry starts to payload offsets in `out` (emptied first, room kept for one
/// more); whether they are in order. Converted first and compared after, each a plain loop
/// that vectorises (`is_sorted` stops at the first disorder, so it does not). A start before
/// the key becomes a huge value, out of order or past the border.
pub(super) fn offsets_in_order(
    starts: impl ExactSizeIterator<Item = u32>,
    keylen: u32,
    out: &mut Vec<u32>,
) -> bool {
    out.clear();
    out.reserve(starts.len() + 1);
    out.extend(starts.map(|s| s.wrapping_sub(keylen)));
    out.iter()
        .zip(out.iter().skip(1))
        .fold(true, |ok, (a, b)| ok & (a <= b))
}

/// Payload offsets (`ordered`: in order) checked to lie inside the data, with `border`
/// appended as the end of the last entry. In order, they all do when the last does.
pub(super) fn to_payload_offsets(
    mut out: Vec<u32>,
    ordered: bool,
    keylen: usize,
    border: usize,
    seek: u64,
) -> Result<Vec<u32>> {
    let border32 = u32::try_from(border).unwrap_or(u32::MAX);
    if !ordered || out.last().is_some_and(|&o| o > border32) {
        let bad = out
            .iter()
            .zip(std::iter::once(&0).chain(&out))
            .find(|&(&o, &prev)| o > border32 || o < prev)
            .map_or(0, |(&o, _)| i64::from(o) + keylen as i64);
        return Err(Error::corrupt(
            "basket entry offsets",
            seek,
            format!("entry start {bad} out of order"),
        ));
    }
    out.push(border32);
    Ok(out)
}

/// The sum, wrapping at 32 bits, of every start of the `table` less `keylen` and of the byte at
/// each in `payload`, loaded as [`read_offsets`]' string check loads them where the machine has AVX2 (a start
/// past the payload is brought under its end, or without AVX2 adds no byte): the floor of that
/// check, every entry's length byte loaded and nothing compared or stored (`readspeed
/// --read-touch` on string branches).
pub(crate) fn sum_first_bytes(table: &[[u8; 4]], keylen: u32, payload: &[u8]) -> u32 {
    let plain = |table: &[[u8; 4]]| {
        table.iter().fold(0u32, |sum, c| {
            let s = u32::from_be_bytes(*c).wrapping_sub(keylen);
            let byte = payload.get(s as usize).map_or(0, |&b| u32::from(b));
            sum.wrapping_add(s).wrapping_add(byte)
        })
    };
    #[cfg(target_arch = "x86_64")]
    if let (Some(_), Some(limit)) = (Avx2::detect(), payload.len().checked_sub(4)) {
        let limit = limit.min(i32::MAX as usize) as u32;
        // SAFETY: AVX2 is present (detected above); `limit` is as the kernel requires.
        let (done, sum) = unsafe { avx2::sum_first_bytes(table, keylen, payload, limit) };
        return sum.wrapping_add(plain(&table[done..]));
    }
    plain(table)
}

/// Whether an entry of `size` bytes (its end minus its start, wrapping) whose first byte is
/// `byte` is empty or one string of under 255 bytes behind its length byte. A wrapped size
/// (an end before its start) is neither.
#[inline(always)]
fn short_text(size: u32, byte: u32) -> bool {
    let text = size.wrapping_sub(1);
    (size == 0) | ((byte == text) & (text < 255))
}

/// Proof that this machine has AVX2 (made only after asking it once).
#[derive(Debug, Clone, Copy)]
struct Avx2(());

impl Avx2 {
    fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            return Some(Self(()));
        }
        None
    }

    /// [`read_offsets`] for [`EntryCheck::ShortTexts`], when every entry is a short string:
    /// the offsets in `out` and true; else false (and `out` holds nothing of use). Each entry
    /// ends where the next starts and the last at `border`, so that when every entry fits its
    /// length byte the starts are in order and none is past `border`: no check of its own.
    fn short_texts(
        self,
        table: &[[u8; 4]],
        keylen: u32,
        payload: &[u8],
        border: u32,
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        out.reserve(table.len() + 1);
        // Each length byte is loaded as a 4-byte word at its entry's start, the start first
        // brought under `limit`: every load lies in `payload`, and is a non-negative 32-bit
        // index. A start it moves is past `border` (the table's count follows the entries), so
        // its entry or a later one does not fit (see above) and the answer is false anyway.
        let Some(limit) = payload.len().checked_sub(4) else {
            return false;
        };
        let limit = limit.min(i32::MAX as usize) as u32;
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `self` proves AVX2 is present; `limit` is as the kernel requires.
            let done = unsafe { avx2::short_texts(table, keylen, payload, limit, out) };
            let mut ok = done.all;
            let mut i = done.entries;
            let start = |i: usize| u32::from_be_bytes(table[i]).wrapping_sub(keylen);
            while i < table.len() {
                let (s, e) = (start(i), table.get(i + 1).map_or(border, |_| start(i + 1)));
                let byte = payload.get(s as usize).map_or(0, |&b| u32::from(b));
                ok &= short_text(e.wrapping_sub(s), byte);
                out.push(s);
                i += 1;
            }
            out.push(border);
            ok
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (table, keylen, border, limit);
            false
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_cmpeq_epi32, _mm256_loadu_si256,
        _mm256_min_epu32, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi32,
        _mm256_setr_epi8, _mm256_setr_epi32, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_storeu_si256, _mm256_sub_epi32,
    };

    /// How far the kernel went: its first `entries` entries' starts are pushed, and `all` says
    /// whether every one of them is a short string.
    pub(super) struct Done {
        pub(super) entries: usize,
        pub(super) all: bool,
    }

    /// Eight entries at a time, while the start after them is in the table (the caller takes
    /// the rest, the last entry among them).
    ///
    /// # Safety
    /// AVX2 must be present, `out` empty, `payload` at least 4 bytes long and `limit` at most
    /// `payload.len() - 4` and at most `i32::MAX`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn short_texts(
        table: &[[u8; 4]],
        keylen: u32,
        payload: &[u8],
        limit: u32,
        out: &mut Vec<u32>,
    ) -> Done {
        let key = _mm256_set1_epi32(keylen as i32);
        let limit = _mm256_set1_epi32(limit as i32);
        let one = _mm256_set1_epi32(1);
        let mut all = _mm256_set1_epi32(-1);
        let mut i = 0;
        while let Some(group) = table.get(i..).and_then(<[_]>::first_chunk::<9>) {
            // The group's first eight starts, and the eight after each (their ends).
            let ([first @ .., _], [_, next @ ..]) = (group, group);
            let (s, e) = (starts(first, key), starts(next, key));
            // Into the room reserved for them (pushing them one vector at a time would store
            // the length each time).
            let Some(room) = out.spare_capacity_mut().get_mut(i..i + 8) else {
                break;
            };
            // SAFETY: `room` is eight u32s of the vector's spare capacity, written unaligned.
            unsafe { _mm256_storeu_si256(room.as_mut_ptr().cast::<__m256i>(), s) };
            // SAFETY: AVX2 is present (this function's feature) and `limit` is the caller's bound.
            let word = unsafe { words_at(payload, s, limit) };
            // As `super::short_text`, lane by lane.
            let byte = _mm256_and_si256(word, _mm256_set1_epi32(0xff));
            let size = _mm256_sub_epi32(e, s);
            let text = _mm256_sub_epi32(size, one);
            let empty = _mm256_cmpeq_epi32(size, _mm256_setzero_si256());
            let short = _mm256_cmpeq_epi32(_mm256_min_epu32(text, _mm256_set1_epi32(254)), text);
            let agree = _mm256_and_si256(_mm256_cmpeq_epi32(byte, text), short);
            all = _mm256_and_si256(all, _mm256_or_si256(empty, agree));
            i += 8;
        }
        // SAFETY: the first `i` places of the spare capacity were written above, and `out` was
        // empty.
        unsafe { out.set_len(i) };
        Done {
            entries: i,
            all: _mm256_movemask_epi8(all) == -1,
        }
    }

    /// Eight big-endian key-relative starts of the table, in native order less the key length.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn starts(group: &[[u8; 4]; 8], key: __m256i) -> __m256i {
        let swap = _mm256_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
            9, 8, 15, 14, 13, 12,
        );
        // SAFETY: `group` is 32 bytes, read unaligned.
        let s = unsafe { _mm256_loadu_si256(group.as_ptr().cast::<__m256i>()) };
        _mm256_sub_epi32(_mm256_shuffle_epi8(s, swap), key)
    }

    /// The 4-byte word at each lane's start (brought under `limit`) in `payload`, in its lane.
    /// Each start is loaded back on its own and the word at it fetched into its lane: on this
    /// Zen 4, faster than one AVX2 gather of the eight (`std::string` full read 1.028x, run #5
    /// of the 2026-11-29 ledger).
    ///
    /// # Safety
    /// AVX2 must be present, `payload` at least 4 bytes long and `limit` at most
    /// `payload.len() - 4` and at most `i32::MAX`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn words_at(payload: &[u8], starts: __m256i, limit: __m256i) -> __m256i {
        let mut at = [0u32; 8];
        // SAFETY: `at` is eight u32s, written unaligned.
        unsafe {
            _mm256_storeu_si256(
                at.as_mut_ptr().cast::<__m256i>(),
                _mm256_min_epu32(starts, limit),
            )
        };
        // SAFETY: every index is at most `limit` (the caller's bound): each lane's 4 bytes at
        // `payload + index` lie in `payload`.
        let lane = |k: usize| unsafe {
            payload
                .as_ptr()
                .add(at[k] as usize)
                .cast::<i32>()
                .read_unaligned()
        };
        _mm256_setr_epi32(
            lane(0),
            lane(1),
            lane(2),
            lane(3),
            lane(4),
            lane(5),
            lane(6),
            lane(7),
        )
    }

    /// The sum, wrapping, of every start of the `table` (converted as [`short_texts`] converts
    /// them) and of the byte at each, eight at a time as [`short_texts`] loads them, while eight starts are
    /// left (the caller takes the rest): what loading every entry's length byte costs, without
    /// checking or storing anything.
    ///
    /// # Safety
    /// As [`short_texts`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_first_bytes(
        table: &[[u8; 4]],
        keylen: u32,
        payload: &[u8],
        limit: u32,
    ) -> (usize, u32) {
        let key = _mm256_set1_epi32(keylen as i32);
        let limit = _mm256_set1_epi32(limit as i32);
        let mut sum = _mm256_setzero_si256();
        let mut i = 0;
        while let Some(group) = table.get(i..).and_then(<[_]>::first_chunk::<8>) {
            let s = starts(group, key);
            // SAFETY: AVX2 is present and `limit` is the caller's bound.
            let word = unsafe { words_at(payload, s, limit) };
            let byte = _mm256_and_si256(word, _mm256_set1_epi32(0xff));
            sum = _mm256_add_epi32(sum, _mm256_add_epi32(s, byte));
            i += 8;
        }
        let mut lanes = [0u32; 8];
        // SAFETY: `lanes` is eight u32s, written unaligned.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), sum) };
        (i, lanes.iter().fold(0u32, |a, &l| a.wrapping_add(l)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    /// The answer of the two plain steps: the offsets read in order, then each entry checked.
    fn plainly(
        table: &[[u8; 4]],
        keylen: usize,
        border: usize,
        payload: &[u8],
    ) -> Option<Vec<u32>> {
        let offsets = read_offsets(
            table,
            keylen,
            border,
            payload,
            EntryCheck::Ordered,
            vec![],
            0,
        );
        let (offsets, _) = offsets.ok()?;
        let all = offsets.windows(2).all(|p| {
            let byte = payload[..border]
                .get(p[0] as usize)
                .map_or(0, |&b| u32::from(b));
            short_text(p[1].wrapping_sub(p[0]), byte)
        });
        all.then_some(offsets)
    }

    /// A payload of strings of these lengths (`None`: an empty `char*` entry, no byte at all),
    /// then its table (count, starts, a zero), as ROOT lays it out after a `keylen`-byte key.
    fn basket(lengths: &[Option<usize>], keylen: usize) -> (Vec<u8>, usize, usize) {
        let mut payload = Vec::new();
        let mut starts = Vec::new();
        for (k, length) in lengths.iter().enumerate() {
            starts.push((keylen + payload.len()) as u32);
            if let Some(l) = length {
                payload.push(*l as u8);
                payload.extend(std::iter::repeat_n(b'a' + (k % 26) as u8, *l));
            }
        }
        let border = payload.len();
        payload.extend((lengths.len() as u32 + 1).to_be_bytes());
        for s in starts {
            payload.extend(s.to_be_bytes());
        }
        payload.extend([0; 4]);
        (payload, border, lengths.len())
    }

    fn table_of(payload: &[u8], border: usize, n: usize) -> &[[u8; 4]] {
        payload[border + 4..][..4 * n].as_chunks::<4>().0
    }

    /// Every answer of the fused read is the plain one, whole and with each byte of the
    /// entries and the table damaged in turn (every value that matters), for lists of every
    /// shape the kernel and its tail take.
    #[test]
    fn short_texts_agree_with_the_plain_steps_on_every_damage() {
        if Avx2::detect().is_none() {
            return;
        }
        let shapes: [Vec<Option<usize>>; 6] = [
            vec![],
            vec![Some(3)],
            (0..9).map(|k| Some(k * 3)).collect(),
            (0..20).map(|k| (k % 4 != 1).then_some(k)).collect(),
            (0..17)
                .map(|k| Some(if k == 11 { 254 } else { k % 5 }))
                .collect(),
            (0..25).map(|k| (k % 6 != 0).then_some(17)).collect(),
        ];
        let mut checked = 0;
        let mut taken = 0;
        for lengths in &shapes {
            for keylen in [0, 70] {
                let (good, border, n) = basket(lengths, keylen);
                let fused = |payload: &[u8]| {
                    let table = table_of(payload, border, n);
                    let check = EntryCheck::ShortTexts;
                    read_offsets(table, keylen, border, payload, check, vec![7; 3], 0)
                };
                let (offsets, all) = fused(&good).unwrap();
                assert!(all, "{lengths:?}");
                assert_eq!(
                    Some(offsets),
                    plainly(table_of(&good, border, n), keylen, border, &good)
                );
                for at in 0..good.len() {
                    for value in [0, 1, 2, 3, 17, 18, 70, 71, 254, 255, good[at] ^ 0x80] {
                        let mut bad = good.clone();
                        bad[at] = value;
                        let want = plainly(table_of(&bad, border, n), keylen, border, &bad);
                        match fused(&bad) {
                            Ok((offsets, true)) => {
                                assert_eq!(Some(offsets), want, "{lengths:?} {at} {value}");
                                taken += 1;
                            }
                            // Not all short strings: read as the ordered check reads it.
                            Ok((offsets, false)) => {
                                assert_eq!(want, None, "{lengths:?} {at} {value}");
                                let ordered = read_offsets(
                                    table_of(&bad, border, n),
                                    keylen,
                                    border,
                                    &bad,
                                    EntryCheck::Ordered,
                                    vec![],
                                    0,
                                );
                                assert_eq!(ordered.unwrap().0, offsets);
                            }
                            Err(_) => assert_eq!(want, None),
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(
            checked > 10_000 && taken > 1_000,
            "{checked} checked, {taken} taken"
        );
    }

    /// The length bytes' floor sums every start and the byte at it, the kernel's groups of
    /// eight as the plain tail; starts past the payload are loaded inside it.
    #[test]
    fn sum_first_bytes_adds_each_start_and_its_byte() {
        let lengths: Vec<Option<usize>> = (0..21).map(|k| Some(k % 9)).collect();
        for keylen in [0, 70] {
            let (payload, border, n) = basket(&lengths, keylen);
            let table = table_of(&payload, border, n);
            let plain: u32 = table
                .iter()
                .map(|c| {
                    let s = u32::from_be_bytes(*c) - keylen as u32;
                    s + u32::from(payload[s as usize])
                })
                .sum();
            assert_eq!(sum_first_bytes(table, keylen as u32, &payload), plain);
            // The first start made absurd: it is counted, with one byte from inside the
            // payload (or none), in place of the first entry's start 0 and its length byte.
            let mut bad = payload.clone();
            bad[border + 4..][..4].copy_from_slice(&u32::MAX.to_be_bytes());
            let sum = sum_first_bytes(table_of(&bad, border, n), keylen as u32, &bad);
            let rest = plain - u32::from(payload[0]);
            let byte = sum
                .wrapping_sub(rest)
                .wrapping_sub(u32::MAX - keylen as u32);
            assert!(byte <= 255, "{byte}");
        }
    }

    /// Starts far past the payload, before the key or wrapped: refused, never loaded.
    #[test]
    fn absurd_starts_are_refused() {
        let lengths: Vec<Option<usize>> = (0..30).map(|k| Some(k % 7)).collect();
        let (good, border, n) = basket(&lengths, 100);
        for at in [0, 5, 8, 9, 16, 29] {
            for start in [
                0,
                99,
                u32::MAX,
                i32::MAX as u32,
                1 << 31,
                100 + border as u32 + 4,
            ] {
                let mut bad = good.clone();
                bad[border + 4 + 4 * at..][..4].copy_from_slice(&start.to_be_bytes());
                let table = table_of(&bad, border, n);
                let check = EntryCheck::ShortTexts;
                let read = read_offsets(table, 100, border, &bad, check, vec![], 0);
                assert!(!matches!(read, Ok((_, true))), "entry {at} at {start}");
            }
        }
    }

    #[test]
    fn entry_offsets_are_checked_in_a_reused_buffer() {
        let offsets = |starts: &[i32], keylen: usize, border: usize, reuse: Vec<u32>| {
            let mut out = reuse;
            let ordered =
                offsets_in_order(starts.iter().map(|&s| s as u32), keylen as u32, &mut out);
            to_payload_offsets(out, ordered, keylen, border, 0)
        };
        let stale = vec![7; 100];
        // Starts 10, 12, 15 past a 10-byte key, in a 9-byte payload.
        let ok = offsets(&[10, 12, 15], 10, 9, stale).unwrap();
        assert_eq!(ok, [0, 2, 5, 9]);
        let reused = offsets(&[10, 11], 10, 4, ok).unwrap();
        assert_eq!(reused, [0, 1, 4]);
        for (starts, what) in [
            (vec![10, 15, 12], "out of order"),
            (vec![10, 12, 20], "past the payload"),
            (vec![9, 12, 15], "before the key"),
            (vec![-1, 12, 15], "negative"),
        ] {
            let err = offsets(&starts, 10, 9, Vec::new());
            assert!(err.is_err(), "{what}");
        }
        // Long tables (the vector loops and their tails): every position out of order, or
        // past the border, is found.
        let long: Vec<i32> = (0..100).map(|k| 10 + 3 * k).collect();
        let border = 3 * 100;
        assert!(offsets(&long, 10, border, Vec::new()).is_ok());
        for k in 0..100 {
            let mut bad = long.clone();
            bad[k] = if k == 0 {
                10 + border as i32 + 1
            } else {
                bad[k - 1] - 1
            };
            assert!(offsets(&bad, 10, border, Vec::new()).is_err(), "at {k}");
        }
    }
}

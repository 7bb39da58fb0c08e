//! Hostile input: truncation at every offset, flipped bits, absurd sizes, offsets past the
//! end, corrupt compressed blocks. Every case must end in an `Err` or a correct read: never a
//! panic, a hang or an allocation the file size does not justify.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use root_reader::{Error, Parallel, RootFile};

/// Opens, lists and reads everything; returns the first error, if any, else the values read
/// and the branches that said they cannot be read.
fn read_everything(bytes: Vec<u8>) -> Result<(usize, usize), Error> {
    let file = RootFile::from_bytes(bytes)?;
    let mut values = 0;
    let mut unreadable = 0;
    for entry in file.trees()? {
        let spec = format!("{};{}", entry.path, entry.key.cycle);
        let tree = file.tree(&spec)?;
        for named in tree.named_branches() {
            let branch = tree.branch(&named.column)?;
            if branch.layout().is_err() {
                unreadable += 1;
                continue;
            }
            let col = branch.read_column(0, branch.entries(), Parallel::Never)?;
            values += col.values.len();
            let lazy = branch.lazy()?;
            if branch.entries() > 0 {
                let _ = lazy.read_range_jagged::<f32>(0, 1);
            }
        }
    }
    Ok((values, unreadable))
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(util::fixture(name)).unwrap()
}

#[test]
fn truncated_at_every_offset() {
    for name in [
        "structure.root",
        "embedded.root",
        "split.root",
        "paths.root",
        "uproot-issue413.root",
    ] {
        let full = fixture_bytes(name);
        let complete = read_everything(full.clone()).unwrap();
        assert!(complete.0 > 0);
        for cut in 0..full.len() {
            // A truncated file either fails cleanly, or reads the same values (only unused tail
            // bytes were cut, e.g. the free-segments record), or reads them except for branches
            // that now say they cannot be read (the class descriptions at the end were cut).
            if let Ok((n, unreadable)) = read_everything(full[..cut].to_vec()) {
                assert!(
                    (n, unreadable) == complete || unreadable > complete.1,
                    "{name} cut at {cut}: {n} values, {unreadable} unreadable; complete {complete:?}"
                );
            }
        }
    }
}

/// The ROOT 4 files (70 and 170 kB), cut at about 2,000 lengths each and at every length
/// of their last 2 kB (the keys list and class descriptions).
#[test]
fn truncated_root4_files() {
    for name in ["uproot-issue-250.root", "uproot-from-geant4.root"] {
        let full = fixture_bytes(name);
        let complete = read_everything(full.clone()).unwrap();
        assert!(complete.0 > 0);
        let step = full.len() / 2_000;
        let tail = full.len() - 2_000;
        let cuts = (0..tail).step_by(step).chain(tail..full.len());
        for cut in cuts {
            if let Ok((n, unreadable)) = read_everything(full[..cut].to_vec()) {
                assert!(
                    (n, unreadable) == complete || unreadable > complete.1,
                    "{name} cut at {cut}: {n} values, {unreadable} unreadable; complete {complete:?}"
                );
            }
        }
    }
}

#[test]
fn flipped_bits_never_panic() {
    for name in [
        "structure.root",
        "embedded.root",
        "types_lz4.root",
        "split.root",
        "objects.root",
        "paths.root",
        "uproot-from-geant4.root",
        "uproot-issue-250.root",
        "uproot-issue413.root",
    ] {
        let full = fixture_bytes(name);
        // About 3,000 damaged copies per file: every byte of the small ones.
        let step = (full.len() / 3_000).max(1);
        for pos in (0..full.len()).step_by(step) {
            let mut bytes = full.clone();
            bytes[pos] ^= 1 << (pos % 8);
            let _ = read_everything(bytes);
        }
    }
}

#[test]
fn wrong_magic() {
    let mut bytes = fixture_bytes("structure.root");
    bytes[0] = b'x';
    assert!(matches!(
        RootFile::from_bytes(bytes),
        Err(Error::BadMagic { .. })
    ));
    assert!(matches!(
        RootFile::from_bytes(b"ro".to_vec()),
        Err(Error::Truncated { .. })
    ));
    assert!(RootFile::from_bytes(Vec::new()).is_err());
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

#[test]
fn absurd_sizes_and_seeks_past_the_end() {
    let full = fixture_bytes("structure.root");
    // The root directory header sits at fBEGIN + fNbytesName; its fNbytesKeys is at +10 and
    // fSeekKeys (small layout) at +26.
    let begin = u32::from_be_bytes(full[8..12].try_into().unwrap()) as usize;
    let nbytes_name = u32::from_be_bytes(full[28..32].try_into().unwrap()) as usize;
    let dir = begin + nbytes_name;

    let mut huge_keys = full.clone();
    put_u32(&mut huge_keys, dir + 10, 0x7fff_ffff);
    let err = RootFile::from_bytes(huge_keys)
        .unwrap()
        .trees()
        .unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");

    let mut seek_past = full.clone();
    put_u32(&mut seek_past, dir + 26, 0x7fff_0000);
    let err = RootFile::from_bytes(seek_past)
        .unwrap()
        .trees()
        .unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");

    let mut negative = full;
    put_u32(&mut negative, dir + 10, 0xffff_fff0);
    assert!(RootFile::from_bytes(negative).unwrap().trees().is_err());
}

#[test]
fn corrupt_compressed_basket_is_an_error() {
    let file = RootFile::open(util::fixture("types_lz4.root")).unwrap();
    let tree = file.tree("t").unwrap();
    // Find a compressed basket and damage a byte of its LZ4 data.
    let mut target = None;
    for meta in tree.all_branches() {
        for info in &meta.baskets {
            if let root_reader::BasketLocation::OnDisk { seek, bytes } = info.location {
                let raw = std::fs::read(util::fixture("types_lz4.root")).unwrap();
                let rec = &raw[seek as usize..(seek + u64::from(bytes)) as usize];
                let keylen = u16::from_be_bytes([rec[14], rec[15]]) as usize;
                if &rec[keylen..keylen + 2] == b"L4" && bytes as usize > keylen + 40 {
                    target = Some((meta.name.clone(), seek as usize + bytes as usize - 5));
                    break;
                }
            }
        }
        if target.is_some() {
            break;
        }
    }
    let (branch, at) = target.expect("types_lz4.root has compressed baskets");
    let mut bytes = fixture_bytes("types_lz4.root");
    bytes[at] ^= 0xff;
    let file = RootFile::from_bytes(bytes).unwrap();
    let err = file
        .tree("t")
        .unwrap()
        .branch(&branch)
        .unwrap()
        .reader()
        .read_column()
        .unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
}

#[test]
fn entry_out_of_range_and_type_mismatch() {
    let file = RootFile::open(util::fixture("structure.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let v = tree.branch("v").unwrap();
    assert!(matches!(
        v.lazy().unwrap().read_at::<f64>(25),
        Err(Error::EntryOutOfRange { .. })
    ));
    assert!(matches!(
        v.lazy().unwrap().read_at::<f64>(u64::MAX),
        Err(Error::EntryOutOfRange { .. })
    ));
    assert!(matches!(
        v.reader().read::<f32>(),
        Err(Error::TypeMismatch { .. })
    ));
    assert!(matches!(
        tree.branch("nope"),
        Err(Error::NoSuchBranch { .. })
    ));
}

/// `readspeed` over a damaged file, on every path (mapped reads, one thread and the split
/// two-thread path, full and decompress-only): an error or a report, never a panic.
fn readspeed_all(bytes: &[u8]) -> Vec<Result<root_reader::readspeed::Report, Error>> {
    use root_reader::readspeed::{Config, Mode, Selection, run};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.root");
    std::fs::write(&path, bytes).unwrap();
    let mut out = Vec::new();
    for threads in [1, 2] {
        for mode in Mode::ALL {
            out.push(run(&Config {
                files: vec![path.clone()],
                trees: vec!["t".to_string()],
                branches: Selection::All,
                threads,
                mode,
                // The stage clock's path too (on the two-thread runs).
                stages: threads == 2,
            }));
        }
    }
    out
}

#[test]
fn readspeed_on_damaged_files_errs_and_never_panics() {
    let full = fixture_bytes("types_lz4.root");
    assert!(readspeed_all(&full).iter().all(Result::is_ok));
    // Truncations and bit flips spread over the file (metadata and baskets alike).
    for k in 1..60 {
        let at = full.len() * k / 60;
        let _ = readspeed_all(&full[..at]);
        let mut flipped = full.clone();
        flipped[at] ^= 1 << (k % 8);
        let _ = readspeed_all(&flipped);
    }
    // A damaged LZ4 basket fails its checksum on every path that decompresses it.
    let file = RootFile::open(util::fixture("types_lz4.root")).unwrap();
    let tree = file.tree("t").unwrap();
    let (seek, bytes) = tree
        .all_branches()
        .iter()
        .flat_map(|m| &m.baskets)
        .find_map(|info| match info.location {
            root_reader::BasketLocation::OnDisk { seek, bytes } => {
                let (seek, bytes) = (seek as usize, bytes as usize);
                let rec = &full[seek..seek + bytes];
                let keylen = u16::from_be_bytes([rec[14], rec[15]]) as usize;
                (&rec[keylen..keylen + 2] == b"L4" && bytes > keylen + 40).then_some((seek, bytes))
            }
            root_reader::BasketLocation::Embedded(_) => None,
        })
        .expect("types_lz4.root has compressed baskets");
    let mut damaged = full.clone();
    damaged[seek + bytes - 5] ^= 0xff;
    for result in readspeed_all(&damaged) {
        let err = result.unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
    }
}

// --- RNTuple ----------------------------------------------------------------------------------

const RNTUPLES: [&str; 9] = [
    "rntuple_zlib.root",
    "rntuple_zstd.root",
    "rntuple_lz4.root",
    "rntuple_lzma.root",
    "rntuple_none.root",
    "rntuple_encodings.root",
    "rntuple_classes.root",
    "rntuple_empty.root",
    "rntuple_projections.root",
];

/// Opens every RNTuple and reads every field; returns the first error (other than a field type
/// the reader says it does not support), else the numbers of RNTuples found and values read.
fn read_rntuples(bytes: Vec<u8>) -> Result<(usize, usize), Error> {
    let file = RootFile::from_bytes(bytes)?;
    let mut values = 0;
    let found = file.rntuples()?;
    for entry in &found {
        let ntuple = file.rntuple(&format!("{};{}", entry.path, entry.key.cycle))?;
        for field in ntuple.fields() {
            match ntuple.read_field(&field.name) {
                Ok(v) => values += v.len(),
                Err(Error::UnsupportedField { .. }) => {}
                Err(e) => return Err(e),
            }
            // A range inside the clusters (the reads of `dump --entries`).
            let n = ntuple.entries();
            match ntuple.read_field_range(&field.name, n / 3, n / 2) {
                Ok(_) | Err(Error::UnsupportedField { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok((found.len(), values))
}

#[test]
fn rntuples_truncated_at_every_offset() {
    for name in [
        "rntuple_zstd.root",
        "rntuple_encodings.root",
        "rntuple_empty.root",
    ] {
        let full = fixture_bytes(name);
        let complete = read_rntuples(full.clone()).unwrap();
        for cut in 0..full.len() {
            // Only the tail after the last envelope (free segments, the keys list) can go
            // without a difference; anything else is an error.
            if let Ok(n) = read_rntuples(full[..cut].to_vec()) {
                assert_eq!(n, complete, "{name} cut at {cut}");
            }
        }
    }
}

#[test]
fn rntuples_with_flipped_bits_never_panic() {
    for name in RNTUPLES {
        let full = fixture_bytes(name);
        let complete = read_rntuples(full.clone()).unwrap();
        let step = (full.len() / 3_000).max(1);
        for pos in (0..full.len()).step_by(step) {
            let mut bytes = full.clone();
            bytes[pos] ^= 1 << (pos % 8);
            // Every byte of an RNTuple is covered by a checksum, except the TKey headers (a
            // flipped class name hides the RNTuple) and unused space: a flip is an error, or
            // changes nothing read, or hides the RNTuple.
            if let Ok(n) = read_rntuples(bytes) {
                assert!(n == complete || n == (0, 0), "{name} flip at {pos}: {n:?}");
            }
        }
    }
}

fn reseal(bytes: &mut [u8], start: usize, len: usize) {
    // An envelope's or page's XXH3 follows its bytes (little-endian).
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[start..start + len]);
    bytes[start + len..start + len + 8].copy_from_slice(&sum.to_le_bytes());
}

/// Damage behind the checksums: flipped bits in the anchor, the envelopes and the pages of the
/// uncompressed fixture, each checksum recomputed (and the header's checksum updated where the
/// footer and page lists repeat it), so the parsers and decoders see the damage itself.
#[test]
fn rntuples_damaged_behind_their_checksums_never_panic() {
    let name = "rntuple_none.root";
    let full = fixture_bytes(name);
    let file = RootFile::from_bytes(full.clone()).unwrap();
    let key = file.find_key("events").unwrap();
    let nt = file.rntuple("events").unwrap();
    let anchor = nt.anchor().clone();
    let (header, footer) = (anchor.header, anchor.footer);
    let lists: Vec<_> = nt.footer().groups.iter().map(|g| g.page_list).collect();
    for link in [header, footer].iter().chain(&lists) {
        assert_eq!(link.length, link.locator.size, "uncompressed envelopes");
    }
    let span = |l: &root_reader::rntuple::EnvelopeLink| {
        (l.locator.offset as usize, l.locator.size as usize)
    };
    let (h_at, h_len) = span(&header);
    let (f_at, f_len) = span(&footer);
    let spans: Vec<(usize, usize)> = lists.iter().map(span).collect();
    // Re-seals the header, then repeats its checksum in the footer and page lists.
    let reseal_all = |bytes: &mut Vec<u8>| {
        reseal(bytes, h_at, h_len - 8);
        let sum: [u8; 8] = bytes[h_at + h_len - 8..h_at + h_len].try_into().unwrap();
        bytes[f_at + 16..f_at + 24].copy_from_slice(&sum);
        reseal(bytes, f_at, f_len - 8);
        for &(at, len) in &spans {
            bytes[at + 8..at + 16].copy_from_slice(&sum);
            reseal(bytes, at, len - 8);
        }
    };
    let mut sealed = full.clone();
    reseal_all(&mut sealed);
    assert_eq!(sealed, full, "the checksums are where the test puts them");
    let mut outcomes = [0usize; 2];
    let mut flip = |pos: usize, bit: usize| {
        let mut bytes = full.clone();
        bytes[pos] ^= 1 << bit;
        reseal_all(&mut bytes);
        outcomes[usize::from(read_rntuples(bytes).is_ok())] += 1;
    };
    // Every bit of the metadata (preambles included, checksums excluded).
    let mut metadata = vec![(h_at, h_len), (f_at, f_len)];
    metadata.extend(&spans);
    for (at, len) in metadata {
        for pos in at..at + len - 8 {
            flip(pos, pos % 8);
            flip(pos, 7 - pos % 8);
        }
    }
    // The anchor's fields (big-endian, its XXH3 big-endian after them).
    let fields = key.seek_key as usize + usize::from(key.keylen) + 6;
    for pos in fields..fields + 64 {
        for bit in 0..8 {
            let mut bytes = full.clone();
            bytes[pos] ^= 1 << bit;
            let sum = xxhash_rust::xxh3::xxh3_64(&bytes[fields..fields + 64]);
            bytes[fields + 64..fields + 72].copy_from_slice(&sum.to_be_bytes());
            let _ = read_rntuples(bytes);
        }
    }
    // Page bytes (every page carries a checksum).
    for cluster in nt.clusters() {
        for col in &cluster.columns {
            for page in &col.pages {
                assert!(page.checksum);
                let (at, len) = (page.locator.offset as usize, page.locator.size as usize);
                for pos in (at..at + len).step_by(3) {
                    let mut bytes = full.clone();
                    bytes[pos] ^= 1 << (pos % 8);
                    reseal(&mut bytes, at, len);
                    let _ = read_rntuples(bytes);
                }
            }
        }
    }
    assert!(outcomes[0] > 0, "some damage is detected: {outcomes:?}");
}

#[test]
fn rntuple_page_checksum_mismatch_is_an_error() {
    let full = fixture_bytes("rntuple_zstd.root");
    let nt = RootFile::from_bytes(full.clone())
        .unwrap()
        .rntuple("events")
        .unwrap();
    let page = nt.clusters()[1].columns[0].pages[0];
    let mut bytes = full;
    bytes[page.locator.offset as usize] ^= 0x10;
    let err = read_rntuples(bytes).unwrap_err();
    assert!(matches!(err, Error::Checksum { .. }), "{err}");
}

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
        for meta in tree.all_branches() {
            let branch = tree.branch(&meta.name)?;
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

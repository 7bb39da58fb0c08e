//! Hostile input: truncated, bit-flipped and absurd files give errors, never a panic or a hang.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use std::path::Path;
use std::time::{Duration, Instant};

use booklet::{Error, Flag, OpenOptions, ReadMode};

/// Small Python-written fixtures (all under 2 KB).
const SMALL: [&str; 5] = ["json_values", "fixed_pruned", "pruned_ts", "unclean", "v4"];

/// Open read-only in `mode` and exercise every read path; errors are fine, panics are not.
fn exercise_read(path: &Path, mode: ReadMode) {
    let Ok(mut db) = OpenOptions::new().read_mode(mode).open(path, Flag::Read) else {
        return;
    };
    let mut keys = Vec::new();
    if let Ok(it) = db.iter() {
        for e in it.take(10_000) {
            match e {
                Ok(e) => keys.push(e.key.to_vec()),
                Err(_) => break,
            }
        }
    }
    keys.push(b"definitely missing".to_vec());
    for k in &keys {
        let _ = db.get(k);
        let _ = db.contains(k);
        let _ = db.get_timestamp(k);
    }
    let _ = db.get_metadata();
    // Enough lookups to build the key table where the file allows one: wherever both answer,
    // the table and the hash walk (a handle without a table) must agree.
    let walk = OpenOptions::new()
        .read_mode(mode)
        .key_table_limit(0)
        .open(path, Flag::Read)
        .ok();
    for _ in 0..3 {
        for k in &keys {
            let a = db.get_ref(k).map(|v| v.map(|c| c.into_owned()));
            let c = db.contains(k);
            if let Some(w) = &walk {
                let b = w.get_ref(k).map(|v| v.map(|c| c.into_owned()));
                if let (Ok(a), Ok(b)) = (&a, &b) {
                    assert_eq!(a, b, "get_ref {k:?} of {}", path.display());
                }
                if let (Ok(c), Ok(d)) = (&c, &w.contains(k)) {
                    assert_eq!(c, d, "contains {k:?} of {}", path.display());
                }
            }
        }
    }
    let _ = db.locations().map(|it| it.take(10_000).count());
}

/// Open read-write and run every write path.
fn exercise_write(path: &Path) {
    let Ok(mut db) = OpenOptions::new().buffer_size(64).open(path, Flag::Write) else {
        return;
    };
    let vlen = match db.header().kind {
        booklet::Kind::Fixed { value_len } => value_len as usize,
        booklet::Kind::Variable => 5,
    };
    let keys: Vec<Vec<u8>> = match db.iter() {
        Ok(it) => it
            .take(100)
            .filter_map(Result::ok)
            .map(|e| e.key.to_vec())
            .collect(),
        Err(_) => Vec::new(),
    };
    for k in keys.iter().take(3) {
        let _ = db.set(k, &vec![b'x'; vlen]);
    }
    for i in 0..10u8 {
        let _ = db.set(&[b'n', i], &vec![i; vlen]);
    }
    let _ = db.sync();
    if let Some(k) = keys.first() {
        let _ = db.delete(k);
    }
    let _ = db.prune(None, &[]);
    let _ = db.close();
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(util::fixtures().join(format!("{name}.blt"))).unwrap()
}

#[test]
fn truncated_at_every_offset() {
    let dir = util::tempdir();
    let path = dir.path().join("t.blt");
    for name in SMALL {
        let full = fixture_bytes(name);
        for cut in 0..full.len() {
            std::fs::write(&path, &full[..cut]).unwrap();
            let start = Instant::now();
            exercise_read(&path, ReadMode::Mmap);
            exercise_read(&path, ReadMode::Buffered);
            if cut % 7 == 0 {
                exercise_write(&path);
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{name} cut at {cut}: too slow"
            );
        }
    }
}

#[test]
fn truncated_header_is_an_error() {
    let dir = util::tempdir();
    let path = dir.path().join("t.blt");
    let full = fixture_bytes("json_values");
    for cut in [0, 1, 16, 100, 199] {
        std::fs::write(&path, &full[..cut]).unwrap();
        let r = booklet::open(&path, Flag::Read);
        assert!(matches!(r, Err(Error::Corrupt { .. })), "cut {cut}: {r:?}");
    }
    // Header intact but the bucket index cut off.
    std::fs::write(&path, &full[..210]).unwrap();
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::Corrupt { .. })
    ));
}

#[test]
fn every_bit_flip() {
    let dir = util::tempdir();
    let path = dir.path().join("f.blt");
    for name in SMALL {
        let full = fixture_bytes(name);
        for i in 0..full.len() {
            for bit in [0u8, 3, 7] {
                let mut b = full.clone();
                b[i] ^= 1 << bit;
                std::fs::write(&path, &b).unwrap();
                exercise_read(&path, ReadMode::Mmap);
                if bit == 3 {
                    exercise_read(&path, ReadMode::Buffered);
                }
                if bit == 7 && i % 3 == 0 {
                    exercise_write(&path);
                }
            }
        }
    }
}

fn patch(path: &Path, base: &[u8], at: usize, bytes: &[u8]) {
    let mut b = base.to_vec();
    b[at..at + bytes.len()].copy_from_slice(bytes);
    std::fs::write(path, &b).unwrap();
}

#[test]
fn absurd_fields() {
    let dir = util::tempdir();
    let path = dir.path().join("a.blt");
    let base = fixture_bytes("json_values");
    // n_buckets 0 and 2^32-1.
    patch(&path, &base, 21, &0u32.to_le_bytes());
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::Corrupt { .. })
    ));
    patch(&path, &base, 21, &u32::MAX.to_le_bytes());
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::Corrupt { .. })
    ));
    // Relocated index beyond EOF, first data block beyond EOF.
    patch(&path, &base, 65, &[0xff, 0xff, 0xff, 0xff, 0xff, 0x00]);
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::Corrupt { .. })
    ));
    patch(&path, &base, 71, &[0xff, 0xff, 0xff, 0xff, 0x00, 0x00]);
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::Corrupt { .. })
    ));
    // Wrong magic, unsupported version, wrong byte widths.
    patch(&path, &base, 0, b"not a booklet!!!");
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::BadMagic { .. })
    ));
    patch(&path, &base, 16, &9u16.to_le_bytes());
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::UnsupportedVersion(9))
    ));
    patch(&path, &base, 18, &[8]);
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::Corrupt { .. })
    ));

    // A data block claiming a 4 GiB value: lookups and scans error without allocating it.
    let db = booklet::open(util::fixtures().join("json_values.blt"), Flag::Read).unwrap();
    let first = db.header().first_data_block_pos as usize;
    drop(db);
    patch(&path, &base, first + 21, &u32::MAX.to_le_bytes());
    let mut db = booklet::open(&path, Flag::Read).unwrap();
    let r: Result<Vec<_>, _> = db.iter().unwrap().collect();
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{r:?}");
}

#[test]
fn chain_cycle_is_an_error_not_a_hang() {
    // Point every block's next pointer at itself: lookups of absent keys in a non-empty bucket
    // walk the chain forever unless bounded.
    let dir = util::tempdir();
    let path = dir.path().join("c.blt");
    let mut base = fixture_bytes("pruned_ts");
    let db = booklet::open(util::fixtures().join("pruned_ts.blt"), Flag::Read).unwrap();
    let h = db.header().clone();
    let offsets: Vec<u64> = {
        let mut db = db;
        db.iter().unwrap().map(|e| e.unwrap().offset).collect()
    };
    for off in &offsets {
        let o = *off as usize;
        base[o + 13..o + 19].copy_from_slice(&off.to_le_bytes()[..6]);
    }
    std::fs::write(&path, &base).unwrap();
    let mut db = booklet::open(&path, Flag::Read).unwrap();
    let start = Instant::now();
    let mut errors = 0;
    for i in 0..200 {
        match db.get(format!("absent{i}").as_bytes()) {
            Err(Error::Corrupt { .. }) => errors += 1,
            Ok(None) => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(
        errors > 0,
        "no lookup hit a cyclic chain ({} buckets)",
        h.n_buckets
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    drop(db);
    let mut db = booklet::open(&path, Flag::Write).unwrap();
    for i in 0..20u8 {
        let _ = db.set(&[i], b"x");
    }
    // Linking new keys walks the cyclic chains: a Corrupt error, never a hang.
    let r = db.sync();
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{r:?}");
}

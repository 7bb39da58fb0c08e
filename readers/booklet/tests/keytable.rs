//! The in-memory key table is only an accelerator: with it and without it (key_table_limit 0)
//! the same operations give the same answers and byte-identical files, through flushes,
//! overwrites, deletes, auto-reindexes, prune and clear; a file whose index a clean writer
//! would not leave gets no table and still answers as the hash walk.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use booklet::{Booklet, Flag, OpenOptions, ReadMode, Serializer};

fn options(table: bool) -> OpenOptions {
    OpenOptions::new()
        .key_serializer(Serializer::Str)
        .value_serializer(Serializer::Str)
        .timestamps(false)
        .n_buckets(7)
        .buffer_size(700)
        .key_table_limit(if table { 1 << 20 } else { 0 })
}

fn masked(path: &std::path::Path) -> Vec<u8> {
    let mut b = std::fs::read(path).unwrap();
    for x in &mut b[42..65] {
        *x = 0;
    }
    b
}

fn key(i: usize) -> Vec<u8> {
    format!("k{i}").into_bytes()
}

/// Apply the same random operations to both handles, comparing every answer.
fn run_pair(a: &mut Booklet, b: &mut Booklet, seed: u64, n_ops: usize, key_space: usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    for step in 0..n_ops {
        let k = key(rng.usize(0..key_space));
        match rng.u32(0..100) {
            0..50 => {
                let v: Vec<u8> = (0..rng.usize(0..30)).map(|_| rng.u8(b'a'..=b'z')).collect();
                a.set(&k, &v).unwrap();
                b.set(&k, &v).unwrap();
            }
            50..65 => assert_eq!(a.get(&k).unwrap(), b.get(&k).unwrap(), "get {step}"),
            65..75 => {
                let ra = a.get_ref(&k).unwrap().map(|c| c.into_owned());
                let rb = b.get_ref(&k).unwrap().map(|c| c.into_owned());
                assert_eq!(ra, rb, "get_ref {step}");
                assert_eq!(
                    a.contains(&k).unwrap(),
                    b.contains(&k).unwrap(),
                    "contains {step}"
                );
            }
            75..87 => {
                let ra = a.delete(&k).map_err(|e| e.to_string());
                let rb = b.delete(&k).map_err(|e| e.to_string());
                assert_eq!(ra, rb, "delete {step}");
            }
            87..95 => {
                a.sync().unwrap();
                b.sync().unwrap();
            }
            95..98 => {
                let miss = format!("!{}", k.len()).into_bytes();
                assert_eq!(a.get_ref(&miss).unwrap(), None);
                assert_eq!(b.get_ref(&miss).unwrap(), None);
            }
            98 => assert_eq!(a.prune(None, &[]).unwrap(), b.prune(None, &[]).unwrap()),
            _ => {
                a.clear().unwrap();
                b.clear().unwrap();
            }
        }
    }
}

#[test]
fn same_answers_and_bytes_with_and_without_the_table() {
    for seed in 0..4 {
        let dir = util::tempdir();
        let pa = dir.path().join("table.blt");
        let pb = dir.path().join("walk.blt");
        let mut a = options(true).open(&pa, Flag::New).unwrap();
        let mut b = options(false).open(&pb, Flag::New).unwrap();
        assert!(a.has_key_table());
        assert!(!b.has_key_table());
        // Enough distinct keys to pass 12007 buckets: two auto-reindexes from 7.
        run_pair(&mut a, &mut b, seed, 3_000, 300);
        let keys: Vec<Vec<u8>> = (0..20_000).map(key).collect();
        for (i, k) in keys.iter().enumerate().take(13_000) {
            let v = format!("v{i}").into_bytes();
            a.set(k, &v).unwrap();
            b.set(k, &v).unwrap();
        }
        run_pair(&mut a, &mut b, seed + 100, 2_000, 13_000);
        assert_eq!(a.header().n_buckets, 144_013, "reindexed twice");
        assert_eq!(a.len(), b.len());
        a.close().unwrap();
        b.close().unwrap();
        assert_eq!(masked(&pa), masked(&pb), "seed {seed}");

        // A reopened handle builds its table after enough lookups, and answers the same.
        for mode in [ReadMode::Mmap, ReadMode::Buffered] {
            let r = options(true).read_mode(mode).open(&pa, Flag::Read).unwrap();
            let w = options(false)
                .read_mode(mode)
                .open(&pb, Flag::Read)
                .unwrap();
            assert!(!r.has_key_table());
            for k in keys.iter().take(14_000) {
                assert_eq!(r.get_ref(k).unwrap(), w.get_ref(k).unwrap());
            }
            assert!(r.has_key_table(), "built after n_keys / 2 lookups");
            for k in &keys {
                assert_eq!(r.get_ref(k).unwrap(), w.get_ref(k).unwrap());
                assert_eq!(r.contains(k).unwrap(), w.contains(k).unwrap());
            }
        }

        // A writer reopening the file: table built lazily, then kept through more edits.
        let mut a = options(true).open(&pa, Flag::Write).unwrap();
        let mut b = options(false).open(&pb, Flag::Write).unwrap();
        for k in keys.iter().take(10_000) {
            assert_eq!(a.contains(k).unwrap(), b.contains(k).unwrap());
        }
        assert!(a.has_key_table());
        run_pair(&mut a, &mut b, seed + 200, 3_000, 20_000);
        a.close().unwrap();
        b.close().unwrap();
        assert_eq!(masked(&pa), masked(&pb), "seed {seed} after reopening");
    }
}

#[test]
fn a_stored_hash_that_is_not_the_key_hash_gets_no_table() {
    let dir = util::tempdir();
    let p = dir.path().join("f.blt");
    let mut db = options(true).n_buckets(1).open(&p, Flag::New).unwrap();
    for i in 0..40 {
        db.set(&key(i), b"value").unwrap();
    }
    db.close().unwrap();
    // Give the first data block (key "k0") the stored hash of another key.
    let mut bytes = std::fs::read(&p).unwrap();
    let header =
        booklet::Header::parse(bytes[..200].try_into().unwrap(), bytes.len() as u64).unwrap();
    let first = header.first_data_block_pos as usize;
    assert_eq!(&bytes[first + 25..first + 27], b"k0");
    let other = booklet::hash_key(b"not-a-key");
    bytes[first..first + 13].copy_from_slice(&other);
    std::fs::write(&p, &bytes).unwrap();

    let with = options(true).open(&p, Flag::Read).unwrap();
    let without = options(false).open(&p, Flag::Read).unwrap();
    for _ in 0..3 {
        for k in (0..40).map(key).chain([b"not-a-key".to_vec()]) {
            assert_eq!(with.get_ref(&k).unwrap(), without.get_ref(&k).unwrap());
        }
    }
    assert!(!with.has_key_table());
    // The walk does not find "k0" (its block carries another hash); a table keyed by the key
    // bytes would have.
    assert_eq!(with.get_ref(b"k0").unwrap(), None);
    assert_eq!(with.get_ref(b"k1").unwrap().as_deref(), Some(&b"value"[..]));
}

#[test]
fn get_ref_borrows_buffered_values_without_syncing() {
    let dir = util::tempdir();
    let p = dir.path().join("f.blt");
    let mut db = options(true)
        .buffer_size(1 << 20)
        .open(&p, Flag::New)
        .unwrap();
    db.set(b"a", b"1").unwrap();
    db.set(b"a", b"2").unwrap();
    let len = db.file_len();
    assert_eq!(db.get_ref(b"a").unwrap().as_deref(), Some(&b"2"[..]));
    assert!(db.contains(b"a").unwrap());
    assert_eq!(db.file_len(), len, "nothing flushed");
    assert_eq!(db.get(b"a").unwrap(), Some(b"2".to_vec()));
    assert!(db.file_len() > len, "get syncs a buffered key, as Python");
}

#[test]
fn handles_stay_send_and_sync() {
    // The lazily built table lives in a OnceLock: `&Booklet` lookups may run on many threads.
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Booklet>();
    let dir = util::tempdir();
    let p = dir.path().join("t.blt");
    let mut db = options(true).open(&p, Flag::New).unwrap();
    for i in 0..2_000 {
        db.set(&key(i), b"v").unwrap();
    }
    db.close().unwrap();
    let db = options(true).open(&p, Flag::Read).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let db = &db;
            s.spawn(move || {
                for i in (t..4_000).step_by(4) {
                    let want = (i < 2_000).then_some(&b"v"[..]);
                    assert_eq!(db.get_ref(&key(i)).unwrap().as_deref(), want);
                }
            });
        }
    });
    assert!(db.has_key_table());
}

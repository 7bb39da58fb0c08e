//! API behaviour: flags, errors, timestamps, fixed-length files, metadata-free iteration.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use booklet::{Error, Flag, Kind, OpenOptions, ReadMode, Serializer};

#[test]
fn flags() {
    let dir = util::tempdir();
    let path = dir.path().join("f.blt");
    assert!(matches!(
        booklet::open(&path, Flag::Read),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        booklet::open(&path, Flag::Write),
        Err(Error::NotFound(_))
    ));
    let mut db = booklet::open(&path, Flag::Create).unwrap();
    db.set(b"k", b"v").unwrap();
    db.close().unwrap();
    // 'c' on an existing file keeps it.
    let mut db = booklet::open(&path, Flag::Create).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    db.close().unwrap();
    // 'r' is read-only.
    let mut db = booklet::open(&path, Flag::Read).unwrap();
    assert!(matches!(db.set(b"x", b"y"), Err(Error::ReadOnly)));
    assert!(matches!(db.delete(b"k"), Err(Error::ReadOnly)));
    assert!(matches!(db.prune(None, &[]), Err(Error::ReadOnly)));
    drop(db);
    // 'n' starts over, truncating the old contents.
    let mut db = booklet::open(&path, Flag::New).unwrap();
    let fresh = dir.path().join("fresh.blt");
    let fresh_len = booklet::open(&fresh, Flag::New).unwrap().file_len();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), fresh_len);
    assert_eq!(db.get(b"k").unwrap(), None);
    assert!(db.is_empty());
    assert!(matches!(db.delete(b"k"), Err(Error::KeyNotFound)));
}

#[test]
fn buffered_keys_are_visible_and_counted_after_sync() {
    let dir = util::tempdir();
    let path = dir.path().join("b.blt");
    let mut db = OpenOptions::new()
        .n_buckets(7)
        .open(&path, Flag::New)
        .unwrap();
    db.set(b"a", b"1").unwrap();
    db.set(b"b", b"2").unwrap();
    assert_eq!(db.len(), 0, "Python counts keys only after update_index");
    assert!(db.contains(b"a").unwrap());
    assert_eq!(
        db.get(b"b").unwrap(),
        Some(b"2".to_vec()),
        "get syncs a buffered key"
    );
    assert_eq!(db.len(), 2);
    // Overwrite keeps the count; iteration order is the latest version's file order.
    db.set(b"a", b"3").unwrap();
    db.sync().unwrap();
    assert_eq!(db.len(), 2);
    let keys: Vec<Vec<u8>> = db.keys().unwrap().map(|k| k.unwrap().to_vec()).collect();
    assert_eq!(keys, vec![b"b".to_vec(), b"a".to_vec()]);
}

#[test]
fn timestamps_and_prune_by_timestamp() {
    let dir = util::tempdir();
    let path = dir.path().join("t.blt");
    let mut db = OpenOptions::new()
        .key_serializer(Serializer::Str)
        .open(&path, Flag::New)
        .unwrap();
    for i in 0..10u64 {
        db.set_with_timestamp(format!("k{i}").as_bytes(), b"v", 1000 + i)
            .unwrap();
    }
    db.set(b"now", b"v").unwrap();
    assert_eq!(db.get_timestamp(b"k3").unwrap(), Some(1003));
    db.set_timestamp(b"k3", 5000).unwrap();
    assert_eq!(db.get_timestamp(b"k3").unwrap(), Some(5000));
    assert!(matches!(
        db.set_timestamp(b"missing", 1),
        Err(Error::KeyNotFound)
    ));
    let removed = db.prune(Some(1005), &[b"k0"]).unwrap();
    // k1, k2, k4 are older than 1005; k0 is kept on request; k3 was re-stamped.
    assert_eq!(removed, 3);
    assert_eq!(db.len(), 8);
    assert_eq!(db.get(b"k2").unwrap(), None);
    assert!(db.get(b"k0").unwrap().is_some());

    let no_ts = dir.path().join("n.blt");
    let mut db = OpenOptions::new()
        .timestamps(false)
        .open(&no_ts, Flag::New)
        .unwrap();
    db.set(b"a", b"b").unwrap();
    assert!(matches!(db.get_timestamp(b"a"), Err(Error::Unsupported(_))));
    let e = db.iter().unwrap().next().unwrap().unwrap();
    assert_eq!(e.timestamp, None);
}

#[test]
fn fixed_length_rules() {
    let dir = util::tempdir();
    let path = dir.path().join("x.blt");
    let mut db = OpenOptions::new()
        .fixed_value_len(4)
        .open(&path, Flag::New)
        .unwrap();
    assert!(matches!(db.header().kind, Kind::Fixed { value_len: 4 }));
    assert!(matches!(
        db.set(b"k", b"12345"),
        Err(Error::WrongValueLength {
            expected: 4,
            got: 5
        })
    ));
    assert!(matches!(
        db.set_with_timestamp(b"k", b"1234", 1),
        Err(Error::Unsupported(_))
    ));
    db.set(b"k", b"1234").unwrap();
    db.close().unwrap();
    let mut db = OpenOptions::new()
        .read_mode(ReadMode::Buffered)
        .open(&path, Flag::Read)
        .unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"1234".to_vec()));
    assert_eq!(
        db.value_serializer(),
        Some(Serializer::Custom),
        "fixed files store value serializer 0"
    );
}

#[test]
fn fixed_length_second_reindex_splits_the_skip_block() {
    // Python booklet overflows the 2-byte key length here (its fixed skip block is one block of
    // 72 042 bytes); we write several tombstones, which its scanner reads the same way.
    let dir = util::tempdir();
    let path = dir.path().join("r.blt");
    let mut db = OpenOptions::new()
        .fixed_value_len(3)
        .n_buckets(7)
        .open(&path, Flag::New)
        .unwrap();
    for i in 0..20u32 {
        db.set(&i.to_le_bytes(), &[i as u8; 3]).unwrap();
    }
    db.sync().unwrap();
    assert_eq!(db.header().n_buckets, 12007);
    db.reindex(144_013).unwrap();
    db.set(b"late", b"abc").unwrap();
    db.close().unwrap();
    let mut db = booklet::open(&path, Flag::Read).unwrap();
    assert_eq!(db.len(), 21);
    assert_eq!(db.iter().unwrap().count(), 21);
    for i in 0..20u32 {
        assert_eq!(db.get(&i.to_le_bytes()).unwrap(), Some(vec![i as u8; 3]));
    }
    drop(db);
    if let Some(py) = util::python() {
        let out = util::interop(&py, &["dump", path.to_str().unwrap()]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["len"], 21);
        assert_eq!(
            doc["items"].as_array().unwrap().len(),
            21,
            "Python scans over the split skip blocks"
        );
    }
}

#[test]
fn metadata_and_reserved_slots_are_hidden_and_not_counted() {
    let dir = util::tempdir();
    let p = dir.path().join("m.blt");
    let mut db = OpenOptions::new().open(&p, Flag::New).unwrap();
    db.set(b"k", b"v").unwrap();
    db.set_metadata(br#"{"a":1}"#, None).unwrap();
    db.set_reserved(1, b"\x00slot", Some(5)).unwrap();
    db.set_reserved(2, b"two", None).unwrap();
    db.set_reserved(2, b"two again", None).unwrap();
    assert!(matches!(
        db.set_reserved(3, b"x", None),
        Err(Error::InvalidOption(_))
    ));
    assert_eq!(db.len(), 1);
    db.close().unwrap();
    let mut db = booklet::open(&p, Flag::Read).unwrap();
    assert_eq!(db.len(), 1);
    assert_eq!(db.get_metadata().unwrap(), Some(br#"{"a":1}"#.to_vec()));
    assert_eq!(db.get_reserved(1).unwrap(), Some(b"\x00slot".to_vec()));
    assert_eq!(db.get_reserved(2).unwrap(), Some(b"two again".to_vec()));
    let keys: Vec<Vec<u8>> = db
        .iter()
        .unwrap()
        .map(|e| e.unwrap().key.into_owned())
        .collect();
    assert_eq!(keys, vec![b"k".to_vec()]);
    assert!(matches!(db.set_metadata(b"{}", None), Err(Error::ReadOnly)));

    let f = dir.path().join("f.blt");
    let mut db = OpenOptions::new()
        .fixed_value_len(2)
        .open(&f, Flag::New)
        .unwrap();
    assert!(matches!(
        db.set_metadata(b"{}", None),
        Err(Error::Unsupported(_))
    ));
    assert_eq!(db.get_reserved(1).unwrap(), None);
}

#[test]
fn get_str_decodes_like_the_str_serializer_in_both_read_modes() {
    let dir = util::tempdir();
    let path = dir.path().join("s.blt");
    let opts = || {
        OpenOptions::new()
            .key_serializer(Serializer::Str)
            .value_serializer(Serializer::Str)
    };
    let mut db = opts().open(&path, Flag::New).unwrap();
    let long: String = "héllo wörld ∑ ".repeat(40);
    db.set(b"ascii", b"plain text").unwrap();
    db.set(b"multi", long.as_bytes()).unwrap();
    db.set(b"empty", b"").unwrap();
    // A lone continuation byte after 70 valid ASCII bytes (past the first SIMD block).
    let mut bad = vec![b'a'; 70];
    bad.push(0x80);
    db.set(b"bad", &bad).unwrap();
    // Unsynced keys are answered from the write buffer.
    assert_eq!(db.get_str(b"ascii").unwrap().as_deref(), Some("plain text"));
    db.close().unwrap();
    for mode in [ReadMode::Mmap, ReadMode::Buffered] {
        let db = opts().read_mode(mode).open(&path, Flag::Read).unwrap();
        assert_eq!(db.get_str(b"ascii").unwrap().as_deref(), Some("plain text"));
        assert_eq!(
            db.get_str(b"multi").unwrap().as_deref(),
            Some(long.as_str())
        );
        assert_eq!(db.get_str(b"empty").unwrap().as_deref(), Some(""));
        assert_eq!(db.get_str(b"absent").unwrap(), None);
        let err = db.get_str(b"bad").unwrap_err();
        assert!(
            matches!(&err, Error::Decode { serializer: "str", reason } if reason.contains("70")),
            "{mode:?}: {err}"
        );
        assert_eq!(
            booklet::serial::decode_str(&bad).unwrap_err().to_string(),
            err.to_string()
        );
    }
}

/// Python's `reopen(flag)`: sync and close, then open again in `r` or `w` with the handle's
/// options, taking the new mode's lock.
#[test]
fn reopen_switches_modes_and_locks() {
    use booklet::Value;
    use std::time::Duration;
    let dir = util::tempdir();
    let path = dir.path().join("r.blt");
    let opts = OpenOptions::new()
        .key_serializer(Serializer::Str)
        .value_serializer(Serializer::Msgpack)
        .read_mode(ReadMode::Buffered)
        .lock_timeout(Duration::from_millis(200));
    let mut db = opts.open(&path, Flag::New).unwrap();
    let k = Value::Str("k".into());
    db.set_typed(&k, &Value::List(vec![Value::Int(1)])).unwrap();
    // Buffered items are synced by the reopen.
    let db = db.reopen(Flag::Read).unwrap();
    assert!(!db.is_writable() && !db.is_mapped(), "options kept");
    assert_eq!(db.len(), 1);
    // A reader holds a shared lock: another reader gets in, a writer times out.
    let other = opts.open(&path, Flag::Read).unwrap();
    drop(other);
    assert!(matches!(
        opts.open(&path, Flag::Write),
        Err(Error::LockTimeout { .. })
    ));
    let mut db = db;
    assert!(matches!(db.set(b"x", b"y"), Err(Error::ReadOnly)));
    assert_eq!(
        db.get_typed(&k).unwrap(),
        Some(Value::List(vec![Value::Int(1)]))
    );
    let mut db = db.reopen(Flag::Write).unwrap();
    assert!(db.is_writable());
    assert!(matches!(
        opts.open(&path, Flag::Read),
        Err(Error::LockTimeout { .. })
    ));
    db.set_typed(&Value::Str("k2".into()), &Value::None)
        .unwrap();
    let db = db.reopen(Flag::Read).unwrap();
    assert_eq!(db.len(), 2);
    assert!(matches!(db.reopen(Flag::New), Err(Error::InvalidOption(_))));
    // The failed reopen closed the handle: the file is free.
    drop(opts.open(&path, Flag::Write).unwrap());
}

/// Resident bytes of this process's mappings of `path` (sum of `Rss` in /proc/self/smaps).
fn mapped_rss(path: &std::path::Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_str().unwrap();
    let mut total = 0;
    let mut ours = false;
    for line in smaps.lines() {
        if let Some(kb) = line.strip_prefix("Rss:") {
            if ours {
                total += kb
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap()
                    * 1024;
            }
        } else {
            // A mapping's header line: "start-end perms offset dev inode [path]".
            let mut fields = line.split_whitespace();
            if let (Some(range), Some(perms)) = (fields.next(), fields.next())
                && range.contains('-')
                && perms.len() == 4
            {
                ours = line.ends_with(name);
            }
        }
    }
    total
}

/// Seed 003's madvise strategy: a full iteration and a prune give the mapped pages back
/// (`MADV_DONTNEED`); `release_pages(false)` keeps them.
#[test]
fn full_iteration_and_prune_release_mapped_pages() {
    let dir = util::tempdir();
    let path = dir.path().join("big.blt");
    let mut db = OpenOptions::new()
        .n_buckets(1009)
        .open(&path, Flag::New)
        .unwrap();
    let value = vec![b'v'; 4000];
    for i in 0..2000u32 {
        db.set(&i.to_le_bytes(), &value).unwrap();
    }
    db.close().unwrap();
    let eight_mb = 7 << 20;
    for release in [true, false] {
        let mut db = OpenOptions::new()
            .release_pages(release)
            .open(&path, Flag::Read)
            .unwrap();
        assert!(db.is_mapped());
        let mut it = db.iter().unwrap();
        for _ in 0..1999 {
            it.next().unwrap().unwrap();
        }
        let during = mapped_rss(&path);
        assert!(during > eight_mb, "pages mapped while iterating: {during}");
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().is_none());
        drop(it);
        let after = mapped_rss(&path);
        if release {
            assert!(
                after < 1 << 20,
                "released after the full iteration: {after}"
            );
        } else {
            assert!(after > eight_mb, "kept with release_pages(false): {after}");
        }
    }
    // Prune reads and rewrites the whole file, then releases it; the file stays readable.
    let mut db = booklet::open(&path, Flag::Write).unwrap();
    for i in 0..1000u32 {
        db.delete(&i.to_le_bytes()).unwrap();
    }
    assert_eq!(db.prune(None, &[]).unwrap(), 1000);
    let after = mapped_rss(&path);
    assert!(after < 1 << 20, "released after prune: {after}");
    assert_eq!(db.get(&1500u32.to_le_bytes()).unwrap(), Some(value.clone()));
    assert_eq!(db.iter().unwrap().count(), 1000);
}

//! Fuzz the whole read path and a few writes: any bytes as a booklet file must give values or
//! errors, never a panic, a hang or an unbounded allocation.
#![no_main]

use booklet::{Flag, OpenOptions, ReadMode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("f.blt");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    for mode in [ReadMode::Mmap, ReadMode::Buffered] {
        let Ok(mut db) = OpenOptions::new().read_mode(mode).open(&path, Flag::Read) else {
            continue;
        };
        let mut keys = Vec::new();
        if let Ok(it) = db.iter() {
            for e in it.take(4096) {
                match e {
                    Ok(e) => keys.push(e.key.to_vec()),
                    Err(_) => break,
                }
            }
        }
        for k in keys.iter().take(64) {
            let _ = db.get(k);
            let _ = db.contains(k);
        }
        let _ = db.get(b"missing");
        // Enough lookups to build the key table where the file allows one; wherever both
        // answer, it must agree with a handle that only walks hash chains.
        let walk = OpenOptions::new()
            .read_mode(mode)
            .key_table_limit(0)
            .open(&path, Flag::Read);
        for _ in 0..3 {
            for k in keys.iter().take(64).chain([b"missing".to_vec()].iter()) {
                let a = db.get_ref(k).map(|v| v.map(|c| c.into_owned()));
                if let Ok(w) = &walk {
                    if let (Ok(a), Ok(b)) = (&a, w.get_ref(k).map(|v| v.map(|c| c.into_owned()))) {
                        assert_eq!(a, &b);
                    }
                }
            }
        }
        let _ = db.locations().map(|it| it.take(4096).count());
    }
    if let Ok(mut db) = OpenOptions::new().buffer_size(128).open(&path, Flag::Write) {
        let _ = db.set(b"fuzz", b"value");
        let _ = db.sync();
        let _ = db.delete(b"fuzz");
        let _ = db.prune(None, &[]);
    }
});

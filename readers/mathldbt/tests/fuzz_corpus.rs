//! Replays the committed fuzz corpus (`fuzz/corpus/decode`) through the
//! decoder with the same checks as the cargo-fuzz target
//! (`fuzz/fuzz_targets/decode.rs`), so the corpus guards against regressions
//! on stable Rust without cargo-fuzz.
//!
//! `cargo test --test fuzz_corpus -- --ignored regenerate` rewrites the seed
//! files from the generator below.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly"
)]

mod util;

use std::path::{Path, PathBuf};

use mathldbt::{Compression, DecodeOptions, Decoder, EncodeOptions, Encoder, encode, fixture};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/decode")
}

/// The fuzz target's checks; returns whether the input decoded.
fn check(data: &[u8]) -> bool {
    let options = DecodeOptions::default()
        .with_verify_checksum(false)
        .with_max_decoded_bytes(64 << 20);
    let mut decoder = Decoder::new(options);
    let decoded = decoder.decode(data);
    if let Ok(batch) = &decoded {
        let bytes = encode(batch, &EncodeOptions::plain()).expect("re-encode");
        assert_eq!(&mathldbt::decode(&bytes).expect("re-decode"), batch);
    }
    let wire = decoder.decode_compressed(data, 1 << 20);
    let _ = mathldbt::inspect(data);
    decoded.is_ok() || wire.is_ok()
}

#[test]
fn replay_corpus() {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(entries.len() >= 10, "corpus too small: {}", entries.len());
    let mut valid = 0;
    for path in &entries {
        let data = std::fs::read(path).unwrap();
        let ok = check(&data);
        let name = path.file_name().unwrap().to_string_lossy();
        // Seeds are named after what they are, so the expectation is too.
        if name.starts_with("bad_") {
            assert!(!ok, "{name} should be rejected");
        } else if name.starts_with("ok_") {
            assert!(ok, "{name} should decode");
            valid += 1;
        }
    }
    assert!(valid >= 5);
}

#[test]
#[ignore = "rewrites fuzz/corpus/decode"]
fn regenerate() {
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    let all = util::all_types();
    let bars = fixture::bars(40);
    let empty = mathldbt::ColumnarBatch::default();
    for (tag, options) in [
        ("plain", EncodeOptions::plain().with_checksum(true)),
        ("plain_nosum", EncodeOptions::plain().with_checksum(false)),
        (
            "dict_delta",
            EncodeOptions::dict_delta().with_checksum(true),
        ),
        (
            "dict_delta_nosum",
            EncodeOptions::dict_delta().with_checksum(false),
        ),
    ] {
        seeds.push((
            format!("ok_all_types_{tag}"),
            encode(&all, &options).unwrap(),
        ));
        seeds.push((format!("ok_bars40_{tag}"), encode(&bars, &options).unwrap()));
    }
    seeds.push((
        "ok_empty".into(),
        encode(&empty, &EncodeOptions::plain().with_checksum(true)).unwrap(),
    ));
    let mut encoder = Encoder::new(EncodeOptions::dict_delta().with_checksum(true));
    for (tag, c) in [
        ("zstd", Compression::ZSTD_DEFAULT),
        ("gzip", Compression::GZIP_DEFAULT),
    ] {
        seeds.push((
            format!("ok_bars40_{tag}"),
            encoder.encode_compressed(&bars, c).unwrap().to_vec(),
        ));
    }
    let good = encode(&all, &EncodeOptions::dict_delta().with_checksum(false)).unwrap();
    seeds.push(("bad_truncated_header".into(), good[..12].to_vec()));
    seeds.push((
        "bad_truncated_buffers".into(),
        good[..good.len() - 3].to_vec(),
    ));
    let mut magic = good.clone();
    magic[0] = b'X';
    seeds.push(("bad_magic".into(), magic));
    let mut cols = good.clone();
    cols[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    seeds.push(("bad_column_count".into(), cols));
    let mut rows = good.clone();
    rows[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    seeds.push(("bad_row_count".into(), rows));
    for (name, data) in seeds {
        std::fs::write(dir.join(format!("{name}.bin")), data).unwrap();
    }
}

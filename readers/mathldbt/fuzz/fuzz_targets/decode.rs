//! Fuzz target for the MATHLDBT decoder.
//!
//! Run from `readers/mathldbt/fuzz` with
//! `cargo +nightly fuzz run decode corpus/decode`. The committed corpus is
//! replayed on stable by `tests/fuzz_corpus.rs`, which performs the same
//! checks.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mathldbt::{DecodeOptions, Decoder, EncodeOptions};

fuzz_target!(|data: &[u8]| {
    // Structure first: skip the checksum so mutations reach the parser, and
    // keep allocations small.
    let options = DecodeOptions::default()
        .with_verify_checksum(false)
        .with_max_decoded_bytes(64 << 20);
    let mut decoder = Decoder::new(options);
    if let Ok(batch) = decoder.decode(data) {
        // Anything accepted is a well-formed batch: it re-encodes, and the
        // re-encoding decodes to the same batch.
        let bytes = mathldbt::encode(&batch, &EncodeOptions::plain()).expect("re-encode");
        assert_eq!(mathldbt::decode(&bytes).expect("re-decode"), batch);
    }
    let _ = decoder.decode_compressed(data, 1 << 20);
    let _ = mathldbt::inspect(data);
});

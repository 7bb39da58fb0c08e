//! Fuzz the typed decoders: any bytes under any supported serializer must give a value or an
//! error, never a panic, a stack overflow, a hang or an allocation past the decode budget. A
//! value that decodes must encode (when the format can hold it) and decode back to itself.
#![no_main]

use booklet::{Limits, Serializer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let supported: Vec<Serializer> = Serializer::ALL
        .into_iter()
        .filter(|s| s.is_supported())
        .collect();
    let ser = supported[usize::from(pick) % supported.len()];
    let limits = Limits { max_bytes: 1 << 20 };
    if let Ok(v) = ser.decode_with(bytes, &limits)
        && let Ok(again) = ser.encode(&v)
    {
        let back = ser.decode(&again).expect("our own encoding decodes");
        // NaN is not equal to itself; compare the re-encoding instead.
        assert_eq!(ser.encode(&back).expect("re-encodes"), again);
    }
});

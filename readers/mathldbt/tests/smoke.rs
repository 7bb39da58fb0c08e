use mathldbt::*;

#[test]
fn smoke() {
    let b = fixture::bars(1000);
    for opts in [
        EncodeOptions::plain(),
        EncodeOptions::dict_delta(),
        EncodeOptions::plain().with_checksum(false),
    ] {
        let bytes = encode(&b, &opts).unwrap();
        println!("{opts:?} {}", bytes.len());
        let back = decode(&bytes).unwrap();
        assert_eq!(back, b);
        let info = inspect(&bytes).unwrap();
        println!("{info:#?}");
        let mut enc = Encoder::new(opts);
        let mut dec = Decoder::new(DecodeOptions::default());
        for c in [
            Compression::None,
            Compression::ZSTD_DEFAULT,
            Compression::GZIP_DEFAULT,
        ] {
            let w = enc.encode_compressed(&b, c).unwrap().to_vec();
            println!("{c:?} {}", w.len());
            assert_eq!(dec.decode_compressed(&w, 1 << 30).unwrap(), b);
        }
    }
}

//! Ship a batch of price bars through MATHLDBT: encode from the caller's own
//! buffers (a view), compress for the wire, and decode into a reused batch.
//!
//! Run with `cargo run -p mathldbt --example transport`.

use mathldbt::{
    BitmapView, ColumnValuesView, ColumnView, ColumnarBatch, ColumnarBatchView, Compression,
    DecodeOptions, Decoder, EncodeOptions, Encoder, Utf8View,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The caller's own columnar buffers (for example from a query engine).
    let ts: Vec<i64> = (0..6)
        .map(|i| 1_700_000_000_000_000 + i * 60_000_000)
        .collect();
    let symbols = "AAPLMSFTAAPLMSFTAAPLMSFT";
    let symbol_offsets: Vec<u32> = (0..=6).map(|i| i * 4).collect();
    let close = [189.5, 370.25, 189.75, 370.0, 190.0, 369.5];
    let volume = [1_200_i64, 0, 900, 4_100, 0, 800];
    let volume_valid = [0b0011_0101u8]; // rows 1 and 4 are null (LSB first)

    // Borrow them: nothing is copied until the encoder writes its output.
    let mut view = ColumnarBatchView::new(ts.len());
    view.push(
        "ts",
        false,
        ColumnView::new(ColumnValuesView::TimestampTzMicros(&ts)),
    )?
    .push(
        "symbol",
        false,
        ColumnView::new(ColumnValuesView::Utf8(Utf8View::try_new(
            &symbol_offsets,
            symbols,
        )?)),
    )?
    .push(
        "close",
        false,
        ColumnView::new(ColumnValuesView::F64(&close)),
    )?
    .push(
        "volume",
        true,
        ColumnView::with_validity(
            ColumnValuesView::I64(&volume),
            BitmapView::try_new(&volume_valid, volume.len())?,
        )?,
    )?;

    // Encoders and decoders keep their buffers; reuse them across batches.
    let mut encoder = Encoder::new(EncodeOptions::dict_delta());
    let mut decoder = Decoder::new(DecodeOptions::default());
    let mut received = ColumnarBatch::default();

    let raw_len = encoder.encode_view(&view)?.len();
    let wire = encoder
        .encode_view_compressed(&view, Compression::ZSTD_DEFAULT)?
        .to_vec();
    println!(
        "message: {raw_len} bytes, on the wire (zstd): {} bytes",
        wire.len()
    );

    // The receiver bounds how much it is willing to inflate.
    decoder.decode_compressed_into(&wire, 1 << 20, &mut received)?;
    assert_eq!(received, view.to_batch()?);

    let info = mathldbt::inspect(encoder.encode_view(&view)?)?;
    for c in &info.columns {
        println!(
            "{:<7} {:<18} {:<16} nulls={} bytes={}",
            c.name,
            c.data_type,
            c.encoding,
            c.null_count,
            c.buffer_bytes()
        );
    }
    let volume = received
        .column_by_name("volume")
        .ok_or("no volume column")?;
    println!("row 1 volume is null: {}", volume.is_null(1));
    Ok(())
}

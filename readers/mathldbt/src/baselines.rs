//! Comparison baselines on the same data (feature `baselines`): serde_json
//! row structs and Arrow IPC via the `arrow-ipc` crate.
//!
//! These exist so that the `json_vs_mathldbt` bench and the
//! `transport_pipeline_estimator` tool measure the competitors exactly the
//! same way. Building the rows or the Arrow `RecordBatch` from a
//! [`ColumnarBatch`] is conversion work a real caller would not pay, so the
//! benches do it outside the timed loop.

use crate::model::ColumnarBatch;

/// A baseline conversion failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// The batch is not shaped like [`crate::fixture::bars`].
    #[error("batch is not a bars batch: {0}")]
    NotBars(String),
    /// Arrow rejected the data.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// serde_json failed.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// serde_json row structs for the bars fixture.
pub mod json {
    use super::BaselineError;
    use crate::model::{ColumnValues, ColumnarBatch};

    /// One bar as a JSON object with named fields, as seed 002's JSON
    /// baseline wrote it.
    #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    pub struct BarRow {
        /// Trading pair.
        pub pair: String,
        /// Timeframe.
        pub tf: String,
        /// Bar end, milliseconds since the Unix epoch.
        pub e_ms: i64,
        /// Open price.
        pub open: f64,
        /// High price.
        pub high: f64,
        /// Low price.
        pub low: f64,
        /// Close price.
        pub close: f64,
        /// Volume.
        pub volume: f64,
    }

    fn col<'a>(batch: &'a ColumnarBatch, name: &str) -> Result<&'a ColumnValues, BaselineError> {
        let column = batch
            .column_by_name(name)
            .ok_or_else(|| BaselineError::NotBars(format!("no column {name:?}")))?;
        // The rows have no nulls to carry.
        if column.null_count() > 0 {
            return Err(BaselineError::NotBars(format!("{name} has nulls")));
        }
        Ok(column.values())
    }

    fn mistyped(name: &str, values: &ColumnValues) -> BaselineError {
        BaselineError::NotBars(format!("{name} is {}", values.data_type()))
    }

    fn f64s<'a>(batch: &'a ColumnarBatch, name: &str) -> Result<&'a [f64], BaselineError> {
        match col(batch, name)? {
            ColumnValues::F64(v) => Ok(v),
            other => Err(mistyped(name, other)),
        }
    }

    fn texts<'a>(
        batch: &'a ColumnarBatch,
        name: &str,
    ) -> Result<&'a crate::Utf8Values, BaselineError> {
        match col(batch, name)? {
            ColumnValues::Utf8(v) => Ok(v),
            other => Err(mistyped(name, other)),
        }
    }

    /// The rows of a bars batch.
    ///
    /// # Errors
    /// [`BaselineError::NotBars`] when a bars column is missing, mistyped or
    /// has nulls.
    pub fn bar_rows(batch: &ColumnarBatch) -> Result<Vec<BarRow>, BaselineError> {
        let (pair, tf) = (texts(batch, "pair")?, texts(batch, "tf")?);
        let e_ms = match col(batch, "e_ms")? {
            ColumnValues::I64(v) => v,
            other => return Err(mistyped("e_ms", other)),
        };
        let (open, high, low, close, volume) = (
            f64s(batch, "open")?,
            f64s(batch, "high")?,
            f64s(batch, "low")?,
            f64s(batch, "close")?,
            f64s(batch, "volume")?,
        );
        let f = |v: &[f64], i: usize| v.get(i).copied().unwrap_or_default();
        Ok((0..batch.num_rows())
            .map(|i| BarRow {
                pair: pair.get(i).unwrap_or_default().to_owned(),
                tf: tf.get(i).unwrap_or_default().to_owned(),
                e_ms: e_ms.get(i).copied().unwrap_or_default(),
                open: f(open, i),
                high: f(high, i),
                low: f(low, i),
                close: f(close, i),
                volume: f(volume, i),
            })
            .collect())
    }

    /// Serializes rows as a JSON array into `out` (cleared first).
    ///
    /// # Errors
    /// When serde_json fails (it does not for these rows).
    pub fn serialize(rows: &[BarRow], out: &mut Vec<u8>) -> Result<(), BaselineError> {
        out.clear();
        serde_json::to_writer(&mut *out, rows)?;
        Ok(())
    }

    /// Parses a JSON array of rows.
    ///
    /// # Errors
    /// When the bytes are not such an array.
    pub fn deserialize(bytes: &[u8]) -> Result<Vec<BarRow>, BaselineError> {
        Ok(serde_json::from_slice(bytes)?)
    }
}

/// Arrow IPC stream format via `arrow-ipc`.
pub mod arrow {
    use std::sync::Arc;

    use arrow_array::{
        ArrayRef, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int32Array,
        Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    };
    use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
    use arrow_ipc::CompressionType;
    use arrow_ipc::reader::StreamReader;
    use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
    use arrow_schema::{ArrowError, DataType as ArrowType, Field, Schema, TimeUnit};

    use super::{BaselineError, ColumnarBatch};
    use crate::model::{Column, ColumnValues};
    use crate::types::DataType;

    fn nulls(col: &Column) -> Option<NullBuffer> {
        col.validity().map(|v| {
            NullBuffer::new(BooleanBuffer::new(
                Buffer::from(v.as_bytes().to_vec()),
                0,
                v.len(),
            ))
        })
    }

    fn offsets(o: &[u32]) -> Result<OffsetBuffer<i32>, ArrowError> {
        let v = o
            .iter()
            .map(|&x| i32::try_from(x))
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|_| ArrowError::InvalidArgumentError("offset exceeds i32::MAX".into()))?;
        Ok(OffsetBuffer::new(ScalarBuffer::from(v)))
    }

    fn arrow_type(t: DataType) -> ArrowType {
        match t {
            DataType::Bool => ArrowType::Boolean,
            DataType::I32 => ArrowType::Int32,
            DataType::I64 => ArrowType::Int64,
            DataType::F32 => ArrowType::Float32,
            DataType::F64 => ArrowType::Float64,
            DataType::Utf8 | DataType::JsonbText => ArrowType::Utf8,
            DataType::Binary => ArrowType::Binary,
            DataType::TimestampTzMicros => {
                ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            DataType::Date32 => ArrowType::Date32,
        }
    }

    fn array(col: &Column) -> Result<ArrayRef, ArrowError> {
        let n = nulls(col);
        Ok(match col.values() {
            ColumnValues::Bool(v) => Arc::new(BooleanArray::new(
                BooleanBuffer::from_iter(v.iter().copied()),
                n,
            )),
            ColumnValues::I32(v) => Arc::new(Int32Array::new(ScalarBuffer::from(v.clone()), n)),
            ColumnValues::Date32(v) => Arc::new(Date32Array::new(ScalarBuffer::from(v.clone()), n)),
            ColumnValues::I64(v) => Arc::new(Int64Array::new(ScalarBuffer::from(v.clone()), n)),
            ColumnValues::TimestampTzMicros(v) => Arc::new(
                TimestampMicrosecondArray::new(ScalarBuffer::from(v.clone()), n)
                    .with_timezone("UTC"),
            ),
            ColumnValues::F32(v) => Arc::new(Float32Array::new(ScalarBuffer::from(v.clone()), n)),
            ColumnValues::F64(v) => Arc::new(Float64Array::new(ScalarBuffer::from(v.clone()), n)),
            ColumnValues::Utf8(v) | ColumnValues::JsonbText(v) => Arc::new(StringArray::try_new(
                offsets(v.offsets())?,
                Buffer::from(v.data().as_bytes().to_vec()),
                n,
            )?),
            ColumnValues::Binary(v) => Arc::new(BinaryArray::try_new(
                offsets(v.offsets())?,
                Buffer::from(v.data().to_vec()),
                n,
            )?),
        })
    }

    /// The same data as an Arrow `RecordBatch` (every MATHLDBT type maps to
    /// its Arrow counterpart; `JsonbText` becomes `Utf8`).
    ///
    /// # Errors
    /// When Arrow rejects the data (offsets above `i32::MAX`).
    pub fn to_record_batch(batch: &ColumnarBatch) -> Result<RecordBatch, BaselineError> {
        let fields: Vec<Field> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), arrow_type(f.data_type()), f.is_nullable()))
            .collect();
        let arrays = batch
            .columns()
            .iter()
            .map(array)
            .collect::<Result<Vec<_>, _>>()?;
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            Arc::new(Schema::new(fields)),
            arrays,
            &options,
        )?)
    }

    /// Writes `rb` as an IPC stream (schema message, one record batch, end
    /// marker) into `out` (cleared first), optionally zstd-compressed at
    /// `zstd_level`.
    ///
    /// # Errors
    /// When Arrow fails to write.
    pub fn encode_ipc(
        rb: &RecordBatch,
        zstd_level: Option<i32>,
        out: &mut Vec<u8>,
    ) -> Result<(), BaselineError> {
        out.clear();
        let mut options = IpcWriteOptions::default();
        if let Some(level) = zstd_level {
            options = options
                .try_with_compression(Some(CompressionType::ZSTD))?
                .try_with_compression_level(Some(level))?;
        }
        let mut w = StreamWriter::try_new_with_options(&mut *out, &rb.schema(), options)?;
        w.write(rb)?;
        w.finish()?;
        Ok(())
    }

    /// Reads an IPC stream holding one record batch (validating it, as
    /// `StreamReader` does by default).
    ///
    /// # Errors
    /// When the stream is malformed or holds no batch.
    pub fn decode_ipc(bytes: &[u8]) -> Result<RecordBatch, BaselineError> {
        let mut reader = StreamReader::try_new(std::io::Cursor::new(bytes), None)?;
        match reader.next() {
            Some(rb) => Ok(rb?),
            None => Err(BaselineError::Arrow(ArrowError::IpcError(
                "stream holds no record batch".into(),
            ))),
        }
    }
}

//! Borrowed views, so callers can encode straight from their own buffers.
//!
//! A [`ColumnarBatchView`] borrows slices (`&[f64]`, offsets + `&str`, a
//! packed bitmap, ...) and is checked once when built: lengths, types,
//! offsets and character boundaries. The encoder then trusts it and copies
//! nothing but the output.
//!
//! Views are more permissive than the owned model in two ways that matter
//! for zero-copy callers (for example Arrow slices): variable-length offsets
//! may start above 0 (the encoder rebases them), and a bitmap's padding bits
//! and extra bytes are ignored (the encoder writes them as zero).

use crate::bits;
use crate::error::BatchError;
use crate::offsets::{check_offsets, offset_pairs};
use crate::types::DataType;

/// A borrowed validity bitmap of `len` bits (LSB first; set = valid).
#[derive(Clone, Copy, Debug)]
pub struct BitmapView<'a> {
    bytes: &'a [u8],
    len: usize,
}

impl<'a> BitmapView<'a> {
    /// A view of the first `len` bits of `bytes`.
    ///
    /// # Errors
    /// [`BatchError::BitmapBytes`] when `bytes` holds fewer than
    /// `ceil(len / 8)` bytes.
    pub fn try_new(bytes: &'a [u8], len: usize) -> Result<Self, BatchError> {
        let needed = bits::bytes_for_bits(len);
        match bytes.get(..needed) {
            Some(bytes) => Ok(Self { bytes, len }),
            None => Err(BatchError::BitmapBytes {
                bits: len,
                needed,
                actual: bytes.len(),
            }),
        }
    }

    pub(crate) fn from_parts(bytes: &'a [u8], len: usize) -> Self {
        Self { bytes, len }
    }

    /// Number of bits.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether bit `i` is set (`false` past the end).
    #[must_use]
    pub fn is_set(&self, i: usize) -> bool {
        i < self.len && bits::get_bit(self.bytes, i)
    }

    /// Number of unset bits (nulls).
    #[must_use]
    pub fn count_unset(&self) -> usize {
        self.len - bits::count_set(self.bytes, self.len)
    }

    /// The `ceil(len / 8)` packed bytes; padding bits may be non-zero.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

macro_rules! var_view {
    ($(#[$meta:meta])* $name:ident, $item:ty, $is_boundary:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a> {
            offsets: &'a [u32],
            data: &'a $item,
        }

        impl<'a> $name<'a> {
            /// A view of `offsets.len() - 1` values in `data`. Offsets must be
            /// non-empty, non-decreasing and at most `data.len()`; they may
            /// start above 0.
            ///
            /// # Errors
            /// [`BatchError::InvalidOffsets`] when they are not.
            pub fn try_new(offsets: &'a [u32], data: &'a $item) -> Result<Self, BatchError> {
                check_offsets(offsets, data.len(), false, |i| ($is_boundary)(data, i))?;
                Ok(Self { offsets, data })
            }

            pub(crate) fn from_parts(offsets: &'a [u32], data: &'a $item) -> Self {
                Self { offsets, data }
            }

            /// Number of values.
            #[must_use]
            pub fn len(&self) -> usize {
                self.offsets.len().saturating_sub(1)
            }

            /// Whether there are no values.
            #[must_use]
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Value `i`, or `None` past the end.
            #[must_use]
            pub fn get(&self, i: usize) -> Option<&'a $item> {
                let start = *self.offsets.get(i)? as usize;
                let end = *self.offsets.get(i.checked_add(1)?)? as usize;
                self.data.get(start..end)
            }

            /// Iterates over the values.
            pub fn iter(&self) -> impl Iterator<Item = &'a $item> + 'a {
                let data = self.data;
                offset_pairs(self.offsets).map(move |(s, e)| data.get(s..e).unwrap_or_default())
            }

            /// The offsets (`len + 1` entries).
            #[must_use]
            pub fn offsets(&self) -> &'a [u32] {
                self.offsets
            }

            /// The whole data buffer the offsets point into.
            #[must_use]
            pub fn data(&self) -> &'a $item {
                self.data
            }

            /// The first offset (0 unless this is a slice of a larger buffer).
            #[must_use]
            pub fn base(&self) -> u32 {
                self.offsets.first().copied().unwrap_or(0)
            }

            /// The bytes of all values, from the first offset to the last.
            #[must_use]
            pub fn value_data(&self) -> &'a $item {
                let start = self.base() as usize;
                let end = self.offsets.last().copied().unwrap_or(0) as usize;
                self.data.get(start..end).unwrap_or_default()
            }
        }
    };
}

var_view!(
    /// Borrowed variable-length UTF-8 values: offsets into a `&str`.
    Utf8View,
    str,
    |d: &str, i: usize| d.is_char_boundary(i)
);

var_view!(
    /// Borrowed variable-length byte values: offsets into a `&[u8]`.
    BinaryView,
    [u8],
    |_: &[u8], _: usize| true
);

/// Borrowed, typed column values (see [`ColumnValues`]).
#[derive(Clone, Copy, Debug)]
pub enum ColumnValuesView<'a> {
    /// `Bool` values.
    Bool(&'a [bool]),
    /// `I32` values.
    I32(&'a [i32]),
    /// `I64` values.
    I64(&'a [i64]),
    /// `F32` values.
    F32(&'a [f32]),
    /// `F64` values.
    F64(&'a [f64]),
    /// `Utf8` values.
    Utf8(Utf8View<'a>),
    /// `Binary` values.
    Binary(BinaryView<'a>),
    /// `JsonbText` values.
    JsonbText(Utf8View<'a>),
    /// `TimestampTzMicros` values.
    TimestampTzMicros(&'a [i64]),
    /// `Date32` values.
    Date32(&'a [i32]),
}

impl ColumnValuesView<'_> {
    /// The logical type.
    #[must_use]
    pub fn data_type(&self) -> DataType {
        match self {
            ColumnValuesView::Bool(_) => DataType::Bool,
            ColumnValuesView::I32(_) => DataType::I32,
            ColumnValuesView::I64(_) => DataType::I64,
            ColumnValuesView::F32(_) => DataType::F32,
            ColumnValuesView::F64(_) => DataType::F64,
            ColumnValuesView::Utf8(_) => DataType::Utf8,
            ColumnValuesView::Binary(_) => DataType::Binary,
            ColumnValuesView::JsonbText(_) => DataType::JsonbText,
            ColumnValuesView::TimestampTzMicros(_) => DataType::TimestampTzMicros,
            ColumnValuesView::Date32(_) => DataType::Date32,
        }
    }

    /// Number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            ColumnValuesView::Bool(v) => v.len(),
            ColumnValuesView::I32(v) | ColumnValuesView::Date32(v) => v.len(),
            ColumnValuesView::I64(v) | ColumnValuesView::TimestampTzMicros(v) => v.len(),
            ColumnValuesView::F32(v) => v.len(),
            ColumnValuesView::F64(v) => v.len(),
            ColumnValuesView::Utf8(v) | ColumnValuesView::JsonbText(v) => v.len(),
            ColumnValuesView::Binary(v) => v.len(),
        }
    }

    /// Whether there are no values.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A borrowed column: values plus an optional validity bitmap.
#[derive(Clone, Copy, Debug)]
pub struct ColumnView<'a> {
    values: ColumnValuesView<'a>,
    validity: Option<BitmapView<'a>>,
    null_count: usize,
}

impl<'a> ColumnView<'a> {
    /// A column view without nulls.
    #[must_use]
    pub fn new(values: ColumnValuesView<'a>) -> Self {
        Self {
            values,
            validity: None,
            null_count: 0,
        }
    }

    /// A column view with a validity bitmap (an all-valid bitmap is dropped).
    ///
    /// # Errors
    /// [`BatchError::ValidityLength`] when lengths differ.
    pub fn with_validity(
        values: ColumnValuesView<'a>,
        validity: BitmapView<'a>,
    ) -> Result<Self, BatchError> {
        if validity.len() != values.len() {
            return Err(BatchError::ValidityLength {
                column: None,
                values: values.len(),
                bits: validity.len(),
            });
        }
        let null_count = validity.count_unset();
        Ok(Self {
            values,
            validity: (null_count > 0).then_some(validity),
            null_count,
        })
    }

    pub(crate) fn from_parts(
        values: ColumnValuesView<'a>,
        validity: Option<BitmapView<'a>>,
        null_count: usize,
    ) -> Self {
        Self {
            values,
            validity,
            null_count,
        }
    }

    /// The logical type.
    #[must_use]
    pub fn data_type(&self) -> DataType {
        self.values.data_type()
    }

    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Number of nulls.
    #[must_use]
    pub fn null_count(&self) -> usize {
        self.null_count
    }

    /// The values.
    #[must_use]
    pub fn values(&self) -> ColumnValuesView<'a> {
        self.values
    }

    /// The validity bitmap, `None` when there are no nulls.
    #[must_use]
    pub fn validity(&self) -> Option<BitmapView<'a>> {
        self.validity
    }

    /// Whether row `i` is null.
    #[must_use]
    pub fn is_null(&self, i: usize) -> bool {
        i < self.len() && self.validity.is_some_and(|v| !v.is_set(i))
    }
}

/// A borrowed field: name, type, nullability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldView<'a> {
    /// Column name.
    pub name: &'a str,
    /// Logical type.
    pub data_type: DataType,
    /// Whether nulls are allowed.
    pub nullable: bool,
}

/// A borrowed batch, built column by column from the caller's buffers.
///
/// ```
/// use mathldbt::{ColumnarBatchView, ColumnView, ColumnValuesView, Encoder, EncodeOptions};
///
/// let ts: Vec<i64> = vec![1, 2, 3];
/// let px: Vec<f64> = vec![1.5, 2.5, 3.5];
/// let mut view = ColumnarBatchView::new(3);
/// view.push("ts", false, ColumnView::new(ColumnValuesView::I64(&ts)))?;
/// view.push("px", false, ColumnView::new(ColumnValuesView::F64(&px)))?;
/// let mut encoder = Encoder::new(EncodeOptions::default());
/// let bytes = encoder.encode_view(&view)?;
/// assert_eq!(&bytes[..8], b"MATHLDBT");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ColumnarBatchView<'a> {
    num_rows: usize,
    fields: Vec<FieldView<'a>>,
    columns: Vec<ColumnView<'a>>,
}

impl<'a> ColumnarBatchView<'a> {
    /// An empty view of `num_rows` rows.
    #[must_use]
    pub fn new(num_rows: usize) -> Self {
        Self {
            num_rows,
            fields: Vec::new(),
            columns: Vec::new(),
        }
    }

    pub(crate) fn from_parts_unchecked(
        num_rows: usize,
        fields: Vec<FieldView<'a>>,
        columns: Vec<ColumnView<'a>>,
    ) -> Self {
        Self {
            num_rows,
            fields,
            columns,
        }
    }

    /// Appends a column named `name`; its type is the column's.
    ///
    /// # Errors
    /// When the column's length is not the view's row count, or it has nulls
    /// and `nullable` is false.
    pub fn push(
        &mut self,
        name: &'a str,
        nullable: bool,
        column: ColumnView<'a>,
    ) -> Result<&mut Self, BatchError> {
        let field = FieldView {
            name,
            data_type: column.data_type(),
            nullable,
        };
        check_column(
            self.columns.len(),
            field,
            column.data_type(),
            column.len(),
            column.null_count(),
            self.num_rows,
        )?;
        self.fields.push(field);
        self.columns.push(column);
        Ok(self)
    }

    /// Number of rows.
    #[must_use]
    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// Number of columns.
    #[must_use]
    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    /// The fields.
    #[must_use]
    pub fn fields(&self) -> &[FieldView<'a>] {
        &self.fields
    }

    /// The columns.
    #[must_use]
    pub fn columns(&self) -> &[ColumnView<'a>] {
        &self.columns
    }
}

pub(crate) fn check_column(
    index: usize,
    field: FieldView<'_>,
    column_type: DataType,
    column_len: usize,
    null_count: usize,
    num_rows: usize,
) -> Result<(), BatchError> {
    if field.data_type != column_type {
        return Err(BatchError::TypeMismatch {
            column: index,
            name: field.name.to_owned(),
            field: field.data_type,
            values: column_type,
        });
    }
    if column_len != num_rows {
        return Err(BatchError::LengthMismatch {
            column: index,
            name: field.name.to_owned(),
            expected: num_rows,
            actual: column_len,
        });
    }
    if !field.nullable && null_count > 0 {
        return Err(BatchError::NullsInNonNullable {
            column: index,
            name: field.name.to_owned(),
            nulls: null_count,
        });
    }
    Ok(())
}

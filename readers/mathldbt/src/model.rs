//! The owned in-memory model: [`ColumnarBatch`], [`Schema`], [`Column`].
//!
//! A batch is a schema (one [`Field`] per column) plus one [`Column`] per
//! field, all of the same length. A column holds its values in a typed
//! vector ([`ColumnValues`]) and, when it has nulls, a validity [`Bitmap`]
//! (bit set = value present).
//!
//! Invariants, checked by the constructors and kept by every method:
//!
//! * every column has `num_rows` values and its type matches its field;
//! * a column has a validity bitmap if and only if it has at least one null
//!   (an all-valid bitmap is dropped), and bitmaps have zero padding bits;
//! * a non-nullable field's column has no nulls;
//! * variable-length values have offsets starting at 0, non-decreasing,
//!   ending at the data length; text offsets fall on `char` boundaries.
//!
//! With these invariants, structural equality (`==`) is logical equality,
//! except for the contents of null slots, which are compared too. Floats are
//! compared bit by bit (`NaN` payloads and the sign of zero count), matching
//! the codec's bit-exact guarantee.

use crate::bits;
use crate::error::BatchError;
use crate::offsets::{check_offsets, offset_pairs};
use crate::types::DataType;
use crate::view::{
    BinaryView, BitmapView, ColumnValuesView, ColumnView, ColumnarBatchView, FieldView, Utf8View,
    check_column,
};

/// A packed validity bitmap: bit `i` set means row `i` holds a value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bitmap {
    bytes: Vec<u8>,
    len: usize,
}

impl Bitmap {
    /// An empty bitmap.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A bitmap of `len` set bits.
    #[must_use]
    pub fn all_set(len: usize) -> Self {
        let mut bytes = vec![0xFF; bits::bytes_for_bits(len)];
        if let Some(last) = bytes.last_mut() {
            *last &= bits::last_byte_mask(len);
        }
        Self { bytes, len }
    }

    /// A bitmap with bit `i` set when `bools[i]` is `true`.
    #[must_use]
    pub fn from_bools(bools: &[bool]) -> Self {
        let mut bytes = Vec::new();
        bits::pack_bools(bools, &mut bytes);
        Self {
            bytes,
            len: bools.len(),
        }
    }

    /// A bitmap of `len` bits over packed `bytes` (LSB first).
    ///
    /// Padding bits of the last byte are cleared.
    ///
    /// # Errors
    /// [`BatchError::BitmapBytes`] unless `bytes.len()` is exactly
    /// `ceil(len / 8)`.
    pub fn from_bytes(mut bytes: Vec<u8>, len: usize) -> Result<Self, BatchError> {
        let needed = bits::bytes_for_bits(len);
        if bytes.len() != needed {
            return Err(BatchError::BitmapBytes {
                bits: len,
                needed,
                actual: bytes.len(),
            });
        }
        if let Some(last) = bytes.last_mut() {
            *last &= bits::last_byte_mask(len);
        }
        Ok(Self { bytes, len })
    }

    /// Appends one bit.
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit && let Some(last) = self.bytes.last_mut() {
            *last |= 1 << (self.len % 8);
        }
        self.len += 1;
    }

    /// Number of bits.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap has no bits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `i`, or `None` past the end.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<bool> {
        (i < self.len).then(|| bits::get_bit(&self.bytes, i))
    }

    /// Whether bit `i` is set (`false` past the end).
    #[must_use]
    pub fn is_set(&self, i: usize) -> bool {
        i < self.len && bits::get_bit(&self.bytes, i)
    }

    /// The packed bytes, `ceil(len / 8)` of them, padding bits zero.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Number of set bits.
    #[must_use]
    pub fn count_set(&self) -> usize {
        bits::count_set(&self.bytes, self.len)
    }

    /// Number of unset bits.
    #[must_use]
    pub fn count_unset(&self) -> usize {
        self.len - self.count_set()
    }

    /// Iterates over the bits.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = bool> + '_ {
        (0..self.len).map(|i| bits::get_bit(&self.bytes, i))
    }

    /// A borrowed view of this bitmap.
    #[must_use]
    pub fn as_view(&self) -> BitmapView<'_> {
        BitmapView::from_parts(&self.bytes, self.len)
    }

    /// Packed bytes, for the decoder to refill in place.
    pub(crate) fn bytes_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    pub(crate) fn set_len(&mut self, len: usize) {
        self.len = len;
    }
}

impl FromIterator<bool> for Bitmap {
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> Self {
        let mut b = Bitmap::new();
        for bit in iter {
            b.push(bit);
        }
        b
    }
}

macro_rules! var_values {
    (
        $(#[$meta:meta])*
        $name:ident, $data:ty, $item:ty, $view:ident, $is_boundary:expr
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            offsets: Vec<u32>,
            data: $data,
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $name {
            /// No values.
            #[must_use]
            pub fn new() -> Self {
                Self {
                    offsets: vec![0],
                    data: <$data>::new(),
                }
            }

            /// No values, with room for `values` values of `bytes` total bytes.
            #[must_use]
            pub fn with_capacity(values: usize, bytes: usize) -> Self {
                let mut offsets = Vec::with_capacity(values.saturating_add(1));
                offsets.push(0);
                Self {
                    offsets,
                    data: <$data>::with_capacity(bytes),
                }
            }

            /// Values from `offsets` (`len + 1` entries, starting at 0,
            /// non-decreasing, ending at `data.len()`) and their `data`.
            ///
            /// # Errors
            /// [`BatchError::InvalidOffsets`] when the offsets break a rule.
            pub fn try_new(offsets: Vec<u32>, data: $data) -> Result<Self, BatchError> {
                {
                    let d = &data;
                    check_offsets(&offsets, d.len(), true, |i| ($is_boundary)(d, i))?;
                }
                Ok(Self { offsets, data })
            }

            /// Appends a value.
            ///
            /// # Errors
            /// [`BatchError::DataTooLarge`] when the total data would exceed
            /// `u32::MAX` bytes.
            pub fn try_push(&mut self, value: &$item) -> Result<(), BatchError> {
                let end = self
                    .data
                    .len()
                    .checked_add(value.len())
                    .and_then(|e| u32::try_from(e).ok())
                    .ok_or(BatchError::DataTooLarge)?;
                self.data.extend_from_slice_compat(value);
                self.offsets.push(end);
                Ok(())
            }

            /// Appends a value.
            ///
            /// # Panics
            /// When the total data would exceed `u32::MAX` bytes (4 GiB), the
            /// format's limit; use [`Self::try_push`] to handle that case.
            #[allow(clippy::panic, reason = "documented; try_push is the fallible variant")]
            pub fn push(&mut self, value: &$item) {
                if self.try_push(value).is_err() {
                    panic!("MATHLDBT value data exceeds u32::MAX bytes");
                }
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
            pub fn get(&self, i: usize) -> Option<&$item> {
                let start = *self.offsets.get(i)? as usize;
                let end = *self.offsets.get(i.checked_add(1)?)? as usize;
                self.data.get(start..end)
            }

            /// Iterates over the values.
            pub fn iter(&self) -> impl Iterator<Item = &$item> + '_ {
                let data = &self.data;
                offset_pairs(&self.offsets).map(move |(s, e)| {
                    let whole: &$item = data;
                    whole.get(s..e).unwrap_or_default()
                })
            }

            /// The offsets: `len + 1` entries.
            #[must_use]
            pub fn offsets(&self) -> &[u32] {
                &self.offsets
            }

            /// All value bytes, concatenated.
            #[must_use]
            pub fn data(&self) -> &$item {
                &self.data
            }

            /// Total length of the value data in bytes.
            #[must_use]
            pub fn data_len(&self) -> usize {
                self.data.len()
            }

            /// Splits into `(offsets, data)`.
            #[must_use]
            pub fn into_parts(self) -> (Vec<u32>, $data) {
                (self.offsets, self.data)
            }

            /// A borrowed view of these values.
            #[must_use]
            pub fn as_view(&self) -> $view<'_> {
                $view::from_parts(&self.offsets, &self.data)
            }

            /// Removes all values, keeping the allocations.
            pub fn clear(&mut self) {
                self.offsets.clear();
                self.offsets.push(0);
                self.data.clear();
            }

            /// The raw parts, for the decoder to refill in place. The decoder
            /// restores the invariants before handing the values out.
            pub(crate) fn parts_mut(&mut self) -> (&mut Vec<u32>, &mut $data) {
                (&mut self.offsets, &mut self.data)
            }
        }

        impl<'a> FromIterator<&'a $item> for $name {
            fn from_iter<I: IntoIterator<Item = &'a $item>>(iter: I) -> Self {
                let mut out = Self::new();
                for v in iter {
                    out.push(v);
                }
                out
            }
        }

        impl $view<'_> {
        /// An owned copy with offsets rebased to 0.
        #[must_use]
        pub fn to_owned_values(&self) -> $name {
            let mut out = $name::with_capacity(self.len(), self.value_data().len());
            for v in self.iter() {
                out.push(v);
            }
            out
        }
        }
    };
}

/// Extension so the `var_values!` macro can append to `String` and `Vec<u8>`
/// alike.
trait ExtendCompat<T: ?Sized> {
    fn extend_from_slice_compat(&mut self, v: &T);
}

impl ExtendCompat<str> for String {
    fn extend_from_slice_compat(&mut self, v: &str) {
        self.push_str(v);
    }
}

impl ExtendCompat<[u8]> for Vec<u8> {
    fn extend_from_slice_compat(&mut self, v: &[u8]) {
        self.extend_from_slice(v);
    }
}

var_values!(
    /// Variable-length UTF-8 values (`Utf8` and `JsonbText` columns): offsets
    /// into one `String`.
    Utf8Values,
    String,
    str,
    Utf8View,
    |d: &String, i: usize| d.is_char_boundary(i)
);

var_values!(
    /// Variable-length byte values (`Binary` columns): offsets into one buffer.
    BinaryValues,
    Vec<u8>,
    [u8],
    BinaryView,
    |_: &Vec<u8>, _: usize| true
);

/// The values of one column, typed. Null slots hold a placeholder value
/// (conventionally zero or empty) that the plain encodings carry as is.
#[derive(Clone, Debug)]
pub enum ColumnValues {
    /// `Bool` values.
    Bool(Vec<bool>),
    /// `I32` values.
    I32(Vec<i32>),
    /// `I64` values.
    I64(Vec<i64>),
    /// `F32` values.
    F32(Vec<f32>),
    /// `F64` values.
    F64(Vec<f64>),
    /// `Utf8` values.
    Utf8(Utf8Values),
    /// `Binary` values.
    Binary(BinaryValues),
    /// `JsonbText` values (UTF-8 JSON text).
    JsonbText(Utf8Values),
    /// `TimestampTzMicros` values: microseconds since the Unix epoch, UTC.
    TimestampTzMicros(Vec<i64>),
    /// `Date32` values: days since 1970-01-01.
    Date32(Vec<i32>),
}

impl ColumnValues {
    /// Empty values of type `data_type`.
    #[must_use]
    pub fn new_empty(data_type: DataType) -> Self {
        match data_type {
            DataType::Bool => ColumnValues::Bool(Vec::new()),
            DataType::I32 => ColumnValues::I32(Vec::new()),
            DataType::I64 => ColumnValues::I64(Vec::new()),
            DataType::F32 => ColumnValues::F32(Vec::new()),
            DataType::F64 => ColumnValues::F64(Vec::new()),
            DataType::Utf8 => ColumnValues::Utf8(Utf8Values::new()),
            DataType::Binary => ColumnValues::Binary(BinaryValues::new()),
            DataType::JsonbText => ColumnValues::JsonbText(Utf8Values::new()),
            DataType::TimestampTzMicros => ColumnValues::TimestampTzMicros(Vec::new()),
            DataType::Date32 => ColumnValues::Date32(Vec::new()),
        }
    }

    /// The logical type of these values.
    #[must_use]
    pub fn data_type(&self) -> DataType {
        match self {
            ColumnValues::Bool(_) => DataType::Bool,
            ColumnValues::I32(_) => DataType::I32,
            ColumnValues::I64(_) => DataType::I64,
            ColumnValues::F32(_) => DataType::F32,
            ColumnValues::F64(_) => DataType::F64,
            ColumnValues::Utf8(_) => DataType::Utf8,
            ColumnValues::Binary(_) => DataType::Binary,
            ColumnValues::JsonbText(_) => DataType::JsonbText,
            ColumnValues::TimestampTzMicros(_) => DataType::TimestampTzMicros,
            ColumnValues::Date32(_) => DataType::Date32,
        }
    }

    /// Number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            ColumnValues::Bool(v) => v.len(),
            ColumnValues::I32(v) | ColumnValues::Date32(v) => v.len(),
            ColumnValues::I64(v) | ColumnValues::TimestampTzMicros(v) => v.len(),
            ColumnValues::F32(v) => v.len(),
            ColumnValues::F64(v) => v.len(),
            ColumnValues::Utf8(v) | ColumnValues::JsonbText(v) => v.len(),
            ColumnValues::Binary(v) => v.len(),
        }
    }

    /// Whether there are no values.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A borrowed view of these values.
    #[must_use]
    pub fn as_view(&self) -> ColumnValuesView<'_> {
        match self {
            ColumnValues::Bool(v) => ColumnValuesView::Bool(v),
            ColumnValues::I32(v) => ColumnValuesView::I32(v),
            ColumnValues::I64(v) => ColumnValuesView::I64(v),
            ColumnValues::F32(v) => ColumnValuesView::F32(v),
            ColumnValues::F64(v) => ColumnValuesView::F64(v),
            ColumnValues::Utf8(v) => ColumnValuesView::Utf8(v.as_view()),
            ColumnValues::Binary(v) => ColumnValuesView::Binary(v.as_view()),
            ColumnValues::JsonbText(v) => ColumnValuesView::JsonbText(v.as_view()),
            ColumnValues::TimestampTzMicros(v) => ColumnValuesView::TimestampTzMicros(v),
            ColumnValues::Date32(v) => ColumnValuesView::Date32(v),
        }
    }
}

fn f32_bits_eq(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn f64_bits_eq(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

impl PartialEq for ColumnValues {
    /// Bitwise for floats; element-wise otherwise.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ColumnValues::Bool(a), ColumnValues::Bool(b)) => a == b,
            (ColumnValues::I32(a), ColumnValues::I32(b))
            | (ColumnValues::Date32(a), ColumnValues::Date32(b)) => a == b,
            (ColumnValues::I64(a), ColumnValues::I64(b))
            | (ColumnValues::TimestampTzMicros(a), ColumnValues::TimestampTzMicros(b)) => a == b,
            (ColumnValues::F32(a), ColumnValues::F32(b)) => f32_bits_eq(a, b),
            (ColumnValues::F64(a), ColumnValues::F64(b)) => f64_bits_eq(a, b),
            (ColumnValues::Utf8(a), ColumnValues::Utf8(b))
            | (ColumnValues::JsonbText(a), ColumnValues::JsonbText(b)) => a == b,
            (ColumnValues::Binary(a), ColumnValues::Binary(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for ColumnValues {}

/// One column: typed values plus a validity bitmap when it has nulls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    values: ColumnValues,
    validity: Option<Bitmap>,
    null_count: usize,
}

impl Column {
    /// A column without nulls.
    #[must_use]
    pub fn new(values: ColumnValues) -> Self {
        Self {
            values,
            validity: None,
            null_count: 0,
        }
    }

    /// A column whose row `i` is null where bit `i` of `validity` is unset.
    /// An all-set bitmap is dropped.
    ///
    /// # Errors
    /// [`BatchError::ValidityLength`] when the bitmap and the values differ
    /// in length.
    pub fn with_validity(values: ColumnValues, validity: Bitmap) -> Result<Self, BatchError> {
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

    /// A column with validity taken from an optional bitmap (`None` means
    /// no nulls).
    ///
    /// # Errors
    /// As [`Column::with_validity`].
    pub fn try_new(values: ColumnValues, validity: Option<Bitmap>) -> Result<Self, BatchError> {
        match validity {
            Some(v) => Self::with_validity(values, v),
            None => Ok(Self::new(values)),
        }
    }

    /// An empty column of type `data_type`.
    #[must_use]
    pub fn new_empty(data_type: DataType) -> Self {
        Self::new(ColumnValues::new_empty(data_type))
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

    /// Whether the column has no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Number of null rows.
    #[must_use]
    pub fn null_count(&self) -> usize {
        self.null_count
    }

    /// Whether row `i` is null (`false` past the end).
    #[must_use]
    pub fn is_null(&self, i: usize) -> bool {
        i < self.len() && self.validity.as_ref().is_some_and(|v| !v.is_set(i))
    }

    /// The validity bitmap; `None` when the column has no nulls.
    #[must_use]
    pub fn validity(&self) -> Option<&Bitmap> {
        self.validity.as_ref()
    }

    /// The values, including the placeholders in null slots.
    #[must_use]
    pub fn values(&self) -> &ColumnValues {
        &self.values
    }

    /// Splits into values and validity.
    #[must_use]
    pub fn into_parts(self) -> (ColumnValues, Option<Bitmap>) {
        (self.values, self.validity)
    }

    /// A borrowed view of this column.
    #[must_use]
    pub fn as_view(&self) -> ColumnView<'_> {
        ColumnView::from_parts(
            self.values.as_view(),
            self.validity.as_ref().map(Bitmap::as_view),
            self.null_count,
        )
    }

    pub(crate) fn from_parts_unchecked(
        values: ColumnValues,
        validity: Option<Bitmap>,
        null_count: usize,
    ) -> Self {
        Self {
            values,
            validity,
            null_count,
        }
    }

    /// Raw parts for the decoder to refill in place.
    pub(crate) fn parts_mut(&mut self) -> (&mut ColumnValues, &mut Option<Bitmap>, &mut usize) {
        (&mut self.values, &mut self.validity, &mut self.null_count)
    }
}

/// A column's name, type and nullability.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    name: String,
    data_type: DataType,
    nullable: bool,
}

impl Field {
    /// A field. Names are free-form UTF-8 of at most 65,535 bytes (checked
    /// when encoding); duplicates are allowed.
    #[must_use]
    pub fn new(name: impl Into<String>, data_type: DataType, nullable: bool) -> Self {
        Self {
            name: name.into(),
            data_type,
            nullable,
        }
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The logical type.
    #[must_use]
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// Whether the column may hold nulls.
    #[must_use]
    pub fn is_nullable(&self) -> bool {
        self.nullable
    }

    /// A borrowed view of this field.
    #[must_use]
    pub fn as_view(&self) -> FieldView<'_> {
        FieldView {
            name: &self.name,
            data_type: self.data_type,
            nullable: self.nullable,
        }
    }

    pub(crate) fn set(&mut self, name: &str, data_type: DataType, nullable: bool) {
        self.name.clear();
        self.name.push_str(name);
        self.data_type = data_type;
        self.nullable = nullable;
    }
}

/// The ordered fields of a batch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schema {
    fields: Vec<Field>,
}

impl Schema {
    /// A schema of `fields`, in column order.
    #[must_use]
    pub fn new(fields: Vec<Field>) -> Self {
        Self { fields }
    }

    /// The fields, in column order.
    #[must_use]
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// Field `i`.
    #[must_use]
    pub fn field(&self, i: usize) -> Option<&Field> {
        self.fields.get(i)
    }

    /// Index of the first field named `name`.
    #[must_use]
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Number of fields.
    #[must_use]
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are no fields.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub(crate) fn fields_mut(&mut self) -> &mut Vec<Field> {
        &mut self.fields
    }
}

/// A batch of rows stored column by column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnarBatch {
    schema: Schema,
    columns: Vec<Column>,
    num_rows: usize,
}

impl ColumnarBatch {
    /// A batch of `columns` described by `schema`. The row count is taken
    /// from the columns (0 when there are none; see
    /// [`ColumnarBatch::try_new_with_rows`]).
    ///
    /// # Errors
    /// When the column count, a column's type or length, or a non-nullable
    /// column's nulls disagree with the schema.
    pub fn try_new(schema: Schema, columns: Vec<Column>) -> Result<Self, BatchError> {
        let num_rows = columns.first().map_or(0, Column::len);
        Self::try_new_with_rows(schema, columns, num_rows)
    }

    /// As [`ColumnarBatch::try_new`], with an explicit row count (needed
    /// for a batch without columns).
    ///
    /// # Errors
    /// As [`ColumnarBatch::try_new`].
    pub fn try_new_with_rows(
        schema: Schema,
        columns: Vec<Column>,
        num_rows: usize,
    ) -> Result<Self, BatchError> {
        if schema.len() != columns.len() {
            return Err(BatchError::ColumnCount {
                fields: schema.len(),
                columns: columns.len(),
            });
        }
        for (i, (f, c)) in schema.fields.iter().zip(&columns).enumerate() {
            check_column(
                i,
                f.as_view(),
                c.data_type(),
                c.len(),
                c.null_count(),
                num_rows,
            )?;
        }
        Ok(Self {
            schema,
            columns,
            num_rows,
        })
    }

    /// The schema.
    #[must_use]
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The columns, in schema order.
    #[must_use]
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Column `i`.
    #[must_use]
    pub fn column(&self, i: usize) -> Option<&Column> {
        self.columns.get(i)
    }

    /// The first column named `name`.
    #[must_use]
    pub fn column_by_name(&self, name: &str) -> Option<&Column> {
        self.schema.index_of(name).and_then(|i| self.columns.get(i))
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

    /// Splits into schema and columns.
    #[must_use]
    pub fn into_parts(self) -> (Schema, Vec<Column>) {
        (self.schema, self.columns)
    }

    /// A borrowed view of the whole batch (allocates two small vectors;
    /// encoding a `ColumnarBatch` directly does not need it).
    #[must_use]
    pub fn view(&self) -> ColumnarBatchView<'_> {
        ColumnarBatchView::from_parts_unchecked(
            self.num_rows,
            self.schema.fields.iter().map(Field::as_view).collect(),
            self.columns.iter().map(Column::as_view).collect(),
        )
    }

    /// Empties the batch (used when a `decode_into` fails part-way).
    pub(crate) fn reset(&mut self) {
        self.num_rows = 0;
        self.schema.fields.clear();
        self.columns.clear();
    }

    pub(crate) fn raw_parts_mut(&mut self) -> (&mut Schema, &mut Vec<Column>, &mut usize) {
        (&mut self.schema, &mut self.columns, &mut self.num_rows)
    }
}

// The owned copies of the borrowed views: here rather than in view.rs, so that the views, which
// the model lends out (`as_view`), import nothing from it.

impl BitmapView<'_> {
    /// An owned copy with zero padding bits.
    #[must_use]
    pub fn to_bitmap(&self) -> Bitmap {
        let mut b = Bitmap::new();
        b.bytes_mut().extend_from_slice(self.as_bytes());
        if let Some(last) = b.bytes_mut().last_mut() {
            *last &= bits::last_byte_mask(self.len());
        }
        b.set_len(self.len());
        b
    }
}

impl ColumnValuesView<'_> {
    /// An owned copy.
    #[must_use]
    pub fn to_owned_values(&self) -> ColumnValues {
        match *self {
            ColumnValuesView::Bool(v) => ColumnValues::Bool(v.to_vec()),
            ColumnValuesView::I32(v) => ColumnValues::I32(v.to_vec()),
            ColumnValuesView::I64(v) => ColumnValues::I64(v.to_vec()),
            ColumnValuesView::F32(v) => ColumnValues::F32(v.to_vec()),
            ColumnValuesView::F64(v) => ColumnValues::F64(v.to_vec()),
            ColumnValuesView::Utf8(v) => ColumnValues::Utf8(v.to_owned_values()),
            ColumnValuesView::Binary(v) => ColumnValues::Binary(v.to_owned_values()),
            ColumnValuesView::JsonbText(v) => ColumnValues::JsonbText(v.to_owned_values()),
            ColumnValuesView::TimestampTzMicros(v) => ColumnValues::TimestampTzMicros(v.to_vec()),
            ColumnValuesView::Date32(v) => ColumnValues::Date32(v.to_vec()),
        }
    }
}

impl ColumnView<'_> {
    /// An owned copy.
    #[must_use]
    pub fn to_column(&self) -> Column {
        // Lengths and the null count were checked when the view was built.
        Column::from_parts_unchecked(
            self.values().to_owned_values(),
            self.validity().map(|v| v.to_bitmap()),
            self.null_count(),
        )
    }
}

impl ColumnarBatchView<'_> {
    /// An owned copy.
    ///
    /// # Errors
    /// Never for a view built with [`ColumnarBatchView::push`].
    pub fn to_batch(&self) -> Result<ColumnarBatch, BatchError> {
        let schema = Schema::new(
            self.fields()
                .iter()
                .map(|f| Field::new(f.name, f.data_type, f.nullable))
                .collect(),
        );
        let columns = self.columns().iter().map(ColumnView::to_column).collect();
        ColumnarBatch::try_new_with_rows(schema, columns, self.num_rows())
    }
}

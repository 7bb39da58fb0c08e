//! Decoding: basket bytes to column values, one module per kind of entry. The eager reader
//! ([`crate::reader`]), the lazy one ([`crate::lazy`]) and readspeed all call these; none of
//! them reads files.

pub(crate) mod leaflist;
pub(crate) mod numeric;
pub(crate) mod object;
pub(crate) mod specialized;

pub use numeric::{PARALLEL_BASKET_BYTES, VECTOR_HEADER};

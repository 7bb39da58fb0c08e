//! Decoding: basket bytes to column values, one module per kind of entry. The eager reader
//! ([`crate::reader`]), the lazy one ([`crate::lazy`]) and readspeed all call these; none of
//! them reads files. [`framing`] (entry, object header, string and count framing) is at the
//! bottom: every decoder imports it and it imports none of them.

pub(crate) mod framing;
mod jump;
pub(crate) mod leaflist;
mod nested;
pub(crate) mod numeric;
pub(crate) mod object;
mod scaled;
pub(crate) mod specialized;
mod text;
mod text_lists;

#[cfg(test)]
mod roots_baskets;

pub use numeric::{PARALLEL_BASKET_BYTES, VECTOR_HEADER};
pub use text::TextView;
pub(crate) use text::text_start;
pub use text_lists::{TextList, TextListView};

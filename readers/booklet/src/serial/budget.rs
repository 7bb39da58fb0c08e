//! The decode budget of one value. It sits below the decoders that charge it (JSON, msgpack,
//! pickle) and the serializer that sets it, so none of them imports the others for it.

use crate::error::{Error, Result};

/// What is left of a value's [`Limits`](super::Limits) while it is decoded.
pub(crate) struct Budget {
    pub(super) left: usize,
    pub(super) limit: usize,
}

impl Budget {
    /// Take `n` bytes, or fail with [`Error::DecodeLimit`].
    pub(crate) fn charge(&mut self, serializer: &'static str, n: usize) -> Result<()> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(Error::DecodeLimit {
                serializer,
                limit: self.limit,
            }),
        }
    }
}

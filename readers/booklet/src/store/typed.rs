//! Typed access: keys and values as [`Value`]s, encoded and decoded with the serializers the
//! file's header names (as Python booklet's `db[key]`, `db[key] = value`, `items()`).
//!
//! A key is found by the hash of its stored bytes, so [`Booklet::encode_key`] writes exactly
//! the bytes Python's serializer writes (see [`crate::serial`]). A file whose key or value
//! serializer has no codec here gives [`Error::UnsupportedSerializer`] naming it; its stored
//! bytes stay readable through the byte API.

use super::Booklet;
use crate::error::{Error, Result};
use crate::format::Kind;
use crate::serial::{Serializer, Value};

impl Booklet {
    /// The key serializer, if this crate has a codec for it.
    pub fn key_codec(&self) -> Result<Serializer> {
        codec(self.header.key_serializer, "key")
    }

    /// The value serializer, if this crate has a codec for it. Fixed-length files store raw
    /// bytes (header code 0), which decode to [`Value::Bytes`].
    pub fn value_codec(&self) -> Result<Serializer> {
        match self.header.kind {
            Kind::Fixed { .. } => Ok(Serializer::Bytes),
            Kind::Variable => codec(self.header.value_serializer, "value"),
        }
    }

    /// The stored bytes of a typed key (what Python's key serializer writes for it).
    pub fn encode_key(&self, key: &Value) -> Result<Vec<u8>> {
        self.key_codec()?.encode(key)
    }

    /// Decode stored key bytes with the key serializer.
    pub fn decode_key(&self, stored: &[u8]) -> Result<Value> {
        self.key_codec()?.decode_with(stored, self.decode_limits())
    }

    /// Decode stored value bytes with the value serializer.
    pub fn decode_value(&self, stored: &[u8]) -> Result<Value> {
        self.value_codec()?
            .decode_with(stored, self.decode_limits())
    }

    /// The value of a typed key, decoded, or None (Python's `db.get(key)`).
    pub fn get_typed(&mut self, key: &Value) -> Result<Option<Value>> {
        let vser = self.value_codec()?;
        let k = self.encode_key(key)?;
        let limits = *self.decode_limits();
        match self.get(&k)? {
            Some(v) => vser.decode_with(&v, &limits).map(Some),
            None => Ok(None),
        }
    }

    /// Set a typed key to a typed value (Python's `db[key] = value`).
    pub fn set_typed(&mut self, key: &Value, value: &Value) -> Result<()> {
        let v = self.value_codec()?.encode(value)?;
        let k = self.encode_key(key)?;
        self.set(&k, &v)
    }

    /// Whether a typed key is present (Python's `key in db`).
    pub fn contains_typed(&self, key: &Value) -> Result<bool> {
        self.contains(&self.encode_key(key)?)
    }

    /// Delete a typed key ([`Error::KeyNotFound`] if absent; Python's `del db[key]`).
    pub fn delete_typed(&mut self, key: &Value) -> Result<()> {
        let k = self.encode_key(key)?;
        self.delete(&k)
    }

    /// Every item, decoded, in file order (Python's `items()`; syncs first). Both codecs are
    /// checked before the first item.
    pub fn items_typed(&mut self) -> Result<impl Iterator<Item = Result<(Value, Value)>> + '_> {
        let kser = self.key_codec()?;
        let vser = self.value_codec()?;
        let limits = *self.decode_limits();
        Ok(self.iter()?.map(move |e| {
            let e = e?;
            Ok((
                kser.decode_with(&e.key, &limits)?,
                vser.decode_with(&e.value, &limits)?,
            ))
        }))
    }
}

/// The serializer with header code `code` in role `role`, or the error naming it.
fn codec(code: u16, role: &'static str) -> Result<Serializer> {
    match Serializer::from_code(code) {
        Some(s) if s.is_supported() => Ok(s),
        Some(s) => Err(s.unsupported(role)),
        None => Err(Error::UnsupportedSerializer {
            role,
            code,
            name: "unknown".to_owned(),
        }),
    }
}

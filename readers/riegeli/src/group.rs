//! [`RecordGroup`]: records gathered back to back away from the writer (on an input thread, say),
//! handed to [`crate::RecordWriter::write_group`] as a whole.
//!
//! A group holds what a simple chunk holds before it is compressed: the record lengths as varints
//! and the records' bytes concatenated. Where a group is exactly the writer's next chunk, the
//! writer takes its buffers instead of copying the records (and gives its emptied ones back), so
//! the thread that gathered the records did the only copy of them.

use crate::varint::{read_varint64, write_varint64};

/// Records back to back, and their lengths (see the module docs).
#[derive(Debug, Default)]
pub struct RecordGroup {
    /// Each record's length, a varint64 each.
    pub(crate) sizes: Vec<u8>,
    /// The records, concatenated.
    pub(crate) values: Vec<u8>,
    pub(crate) num_records: u64,
}

impl RecordGroup {
    /// An empty group.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a record.
    pub fn push(&mut self, record: &[u8]) {
        write_varint64(&mut self.sizes, record.len() as u64);
        self.values.extend_from_slice(record);
        self.num_records += 1;
    }

    /// Records held.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.num_records
    }

    /// No records held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.num_records == 0
    }

    /// Bytes of the records held.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.values.len()
    }

    /// Drops the records, keeping the buffers.
    pub fn clear(&mut self) {
        self.sizes.clear();
        self.values.clear();
        self.num_records = 0;
    }

    /// The records, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut spos = 0;
        let mut vpos = 0usize;
        (0..self.num_records).map_while(move |_| {
            // `push` wrote these: a varint per record, lengths that sum to the values' length.
            let len = usize::try_from(read_varint64(&self.sizes, &mut spos)?).ok()?;
            let record = self.values.get(vpos..vpos.checked_add(len)?)?;
            vpos += len;
            Some(record)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_as_pushed() {
        let records: Vec<Vec<u8>> = [0usize, 1, 127, 128, 300, 0, 70_000]
            .iter()
            .map(|&n| (0..n).map(|i| (i * 7) as u8).collect())
            .collect();
        let mut group = RecordGroup::new();
        for r in &records {
            group.push(r);
        }
        assert_eq!(group.len(), records.len() as u64);
        assert_eq!(group.bytes(), records.iter().map(Vec::len).sum::<usize>());
        assert!(group.iter().eq(records.iter().map(Vec::as_slice)));
        group.clear();
        assert!(group.is_empty() && group.iter().next().is_none());
    }
}

//! The storage engine contract: the few primitives the MVCC layer needs.
//!
//! It knows nothing of revisions, objects or sled, so another backend (etcd:
//! tables as key prefixes, a batch as one `Txn`) can implement it.

use async_trait::async_trait;

use crate::error::MvccError;

/// The engine's key spaces. Each is an ordered map of bytes to bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Current value of each key (including delete tombstones).
    Current,
    /// Every retained version: `key \0 revision` → value.
    Versions,
    /// The change log: `revision` → what changed.
    Log,
    /// Counters: current and compacted revision.
    Meta,
}

impl Table {
    /// All tables, in a fixed order.
    pub const ALL: [Table; 4] = [Table::Current, Table::Versions, Table::Log, Table::Meta];

    /// A stable name for the table (sled tree name, etcd prefix).
    pub fn name(self) -> &'static str {
        match self {
            Table::Current => "current",
            Table::Versions => "versions",
            Table::Log => "log",
            Table::Meta => "meta",
        }
    }

    /// Position in [`Table::ALL`].
    pub fn index(self) -> usize {
        match self {
            Table::Current => 0,
            Table::Versions => 1,
            Table::Log => 2,
            Table::Meta => 3,
        }
    }
}

/// One operation of a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Set a key.
    Put(Table, Vec<u8>, Vec<u8>),
    /// Remove a key (absent keys are fine).
    Delete(Table, Vec<u8>),
}

/// Writes applied all-or-nothing, also across a crash.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    /// The operations, applied in order.
    pub ops: Vec<Op>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a put.
    pub fn put(&mut self, table: Table, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put(table, key.into(), value.into()));
    }

    /// Add a delete.
    pub fn delete(&mut self, table: Table, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete(table, key.into()));
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when the batch holds nothing.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// A key/value pair read from the engine.
pub type Entry = (Vec<u8>, Vec<u8>);

/// An ordered scan.
pub type ScanIter<'a> = Box<dyn Iterator<Item = Result<Entry, MvccError>> + Send + 'a>;

/// Scan direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Smallest key first.
    Ascending,
    /// Largest key first.
    Descending,
}

/// An ordered, transactional key/value engine.
///
/// Writes are visible to reads as soon as [`Engine::apply`] returns, and
/// durable once a later [`Engine::flush`] returns.
#[async_trait]
pub trait Engine: Send + Sync + 'static {
    /// Apply a batch atomically: after a crash either all of it or none of
    /// it is present.
    fn apply(&self, batch: WriteBatch) -> Result<(), MvccError>;

    /// Read one key.
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, MvccError>;

    /// Keys in `[start, end)` (`end: None` = unbounded), in `order`.
    fn scan<'a>(
        &'a self,
        table: Table,
        start: &[u8],
        end: Option<&[u8]>,
        order: Order,
    ) -> ScanIter<'a>;

    /// Make every batch applied so far durable.
    async fn flush(&self) -> Result<(), MvccError>;
}

/// The smallest key greater than every key starting with `prefix`, or `None`
/// when no such key exists (prefix all `0xff`).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_increments_last_byte() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
    }
}

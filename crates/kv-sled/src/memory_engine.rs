//! [`Engine`] in memory: one ordered map per [`Table`] behind one lock, for
//! `--storage-backend memory` and the test server.
//!
//! Why an engine and not a second store: the MVCC layer ([`crate::mvcc`])
//! runs on it unchanged, so revisions, reads at old revisions, watches,
//! compaction and their errors are exactly sled's — only where the bytes
//! live differs. Nothing touches the disk; everything is gone when the
//! engine is dropped.
//!
//! - A batch is applied under the one write lock, so readers see all of
//!   it or none of it (the atomicity sled's multi-tree transaction gives).
//! - Scans read in chunks, each under a short read lock, and resume after
//!   the last key seen; like sled's iterators they are not a snapshot (the
//!   MVCC layer reads at a revision, so it never needs one), and a long
//!   scan never blocks writers.
//! - [`Engine::flush`] has nothing to do: an applied batch is as durable
//!   as this engine gets.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;

use crate::engine::{Engine, Entry, Op, Order, ScanIter, Table, WriteBatch};
use crate::error::MvccError;

/// Entries a scan copies out per read lock.
const CHUNK: usize = 256;

type Tables = [BTreeMap<Vec<u8>, Vec<u8>>; 4];

/// An in-memory engine: a `BTreeMap` per table.
#[derive(Default)]
pub struct MemoryEngine {
    tables: RwLock<Tables>,
}

impl MemoryEngine {
    /// An empty engine.
    pub fn new() -> Self {
        Self::default()
    }

    // The maps are only changed by whole `BTreeMap` calls, which leave
    // them consistent even if one panicked, so a poisoned lock is usable.
    fn read(&self) -> RwLockReadGuard<'_, Tables> {
        self.tables.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Tables> {
        self.tables.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl Engine for MemoryEngine {
    fn apply(&self, batch: WriteBatch) -> Result<(), MvccError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut tables = self.write();
        for op in batch.ops {
            match op {
                Op::Put(t, k, v) => {
                    tables[t.index()].insert(k, v);
                }
                Op::Delete(t, k) => {
                    tables[t.index()].remove(&k);
                }
            }
        }
        Ok(())
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, MvccError> {
        Ok(self.read()[table.index()].get(key).cloned())
    }

    fn scan<'a>(
        &'a self,
        table: Table,
        start: &[u8],
        end: Option<&[u8]>,
        order: Order,
    ) -> ScanIter<'a> {
        if end.is_some_and(|end| end <= start) {
            return Box::new(std::iter::empty());
        }
        Box::new(Scan {
            engine: self,
            table,
            lower: Bound::Included(start.to_vec()),
            upper: end.map_or(Bound::Unbounded, |e| Bound::Excluded(e.to_vec())),
            order,
            buf: VecDeque::new(),
            done: false,
        })
    }

    async fn flush(&self) -> Result<(), MvccError> {
        Ok(())
    }
}

/// A scan that copies [`CHUNK`] entries at a time.
struct Scan<'a> {
    engine: &'a MemoryEngine,
    table: Table,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    order: Order,
    buf: VecDeque<Entry>,
    done: bool,
}

impl Scan<'_> {
    fn refill(&mut self) {
        let tables = self.engine.read();
        let range = tables[self.table.index()].range((self.lower.clone(), self.upper.clone()));
        let copy = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
        self.buf = match self.order {
            Order::Ascending => range.take(CHUNK).map(copy).collect(),
            Order::Descending => range.rev().take(CHUNK).map(copy).collect(),
        };
        drop(tables);
        if self.buf.len() < CHUNK {
            self.done = true;
        }
        // The next chunk starts after the last key copied.
        if let Some((last, _)) = self.buf.back() {
            match self.order {
                Order::Ascending => self.lower = Bound::Excluded(last.clone()),
                Order::Descending => self.upper = Bound::Excluded(last.clone()),
            }
        }
    }
}

impl Iterator for Scan<'_> {
    type Item = Result<Entry, MvccError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() && !self.done {
            self.refill();
        }
        self.buf.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(it: ScanIter<'_>) -> Vec<Vec<u8>> {
        it.map(|r| r.map(|(k, _)| k))
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn scans_cross_chunks_in_both_orders_and_honour_bounds() {
        let e = MemoryEngine::new();
        let mut b = WriteBatch::new();
        for i in 0..(CHUNK as u32 * 2 + 7) {
            b.put(Table::Log, i.to_be_bytes().to_vec(), b"v".to_vec());
        }
        b.put(Table::Meta, b"other".to_vec(), b"x".to_vec());
        e.apply(b).unwrap();
        let all: Vec<Vec<u8>> = (0..(CHUNK as u32 * 2 + 7))
            .map(|i| i.to_be_bytes().to_vec())
            .collect();
        assert_eq!(keys(e.scan(Table::Log, &[], None, Order::Ascending)), all);
        let mut rev = all.clone();
        rev.reverse();
        assert_eq!(keys(e.scan(Table::Log, &[], None, Order::Descending)), rev);
        let (lo, hi) = (3u32.to_be_bytes(), 300u32.to_be_bytes());
        assert_eq!(
            keys(e.scan(Table::Log, &lo, Some(&hi), Order::Descending)),
            (3..300u32)
                .rev()
                .map(|i| i.to_be_bytes().to_vec())
                .collect::<Vec<_>>()
        );
        assert!(keys(e.scan(Table::Log, &hi, Some(&lo), Order::Ascending)).is_empty());
    }

    #[test]
    fn a_batch_puts_and_deletes_across_tables() {
        let e = MemoryEngine::new();
        let mut b = WriteBatch::new();
        b.put(Table::Current, b"a".to_vec(), b"1".to_vec());
        b.put(Table::Versions, b"a".to_vec(), b"2".to_vec());
        e.apply(b).unwrap();
        let mut b = WriteBatch::new();
        b.delete(Table::Current, b"a".to_vec());
        b.delete(Table::Current, b"absent".to_vec());
        e.apply(b).unwrap();
        assert_eq!(e.get(Table::Current, b"a").unwrap(), None);
        assert_eq!(e.get(Table::Versions, b"a").unwrap(), Some(b"2".to_vec()));
    }
}

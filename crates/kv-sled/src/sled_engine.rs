//! [`Engine`] on sled: one tree per [`Table`], a multi-tree transaction per
//! batch (sled seals a transaction's log writes so recovery is atomic), and
//! `flush_async` for durability.

use std::path::Path;

use async_trait::async_trait;
use sled::transaction::{ConflictableTransactionError, TransactionError, Transactional};

use crate::engine::{Engine, Op, Order, ScanIter, Table, WriteBatch};
use crate::error::MvccError;

impl From<sled::Error> for MvccError {
    fn from(e: sled::Error) -> Self {
        match e {
            sled::Error::Corruption { .. } => MvccError::Corrupt(e.to_string()),
            other => MvccError::Backend(other.to_string()),
        }
    }
}

/// A sled database with one tree per table.
pub struct SledEngine {
    db: sled::Db,
    trees: Vec<sled::Tree>,
}

impl SledEngine {
    /// Open (or create) the database in `dir`.
    pub fn open(dir: &Path, cache_capacity: u64) -> Result<Self, MvccError> {
        let db = sled::Config::new()
            .path(dir)
            .mode(sled::Mode::HighThroughput)
            .cache_capacity(cache_capacity)
            .open()?;
        Self::with_trees(db)
    }

    /// A database in a temporary directory, removed when dropped (tests).
    pub fn temporary(cache_capacity: u64) -> Result<Self, MvccError> {
        let db = sled::Config::new()
            .temporary(true)
            .mode(sled::Mode::HighThroughput)
            .cache_capacity(cache_capacity)
            .open()?;
        Self::with_trees(db)
    }

    fn with_trees(db: sled::Db) -> Result<Self, MvccError> {
        let trees = Table::ALL
            .iter()
            .map(|t| db.open_tree(t.name()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SledEngine { db, trees })
    }

    fn tree(&self, table: Table) -> &sled::Tree {
        // `trees` is built from `Table::ALL`, so every index is present.
        &self.trees[table.index()]
    }
}

#[async_trait]
impl Engine for SledEngine {
    fn apply(&self, batch: WriteBatch) -> Result<(), MvccError> {
        if batch.is_empty() {
            return Ok(());
        }
        let result: Result<(), TransactionError<()>> = self.trees.as_slice().transaction(|trees| {
            for op in &batch.ops {
                match op {
                    Op::Put(t, k, v) => {
                        trees[t.index()].insert(k.as_slice(), v.as_slice())?;
                    }
                    Op::Delete(t, k) => {
                        trees[t.index()].remove(k.as_slice())?;
                    }
                }
            }
            Ok::<(), ConflictableTransactionError<()>>(())
        });
        match result {
            Ok(()) => Ok(()),
            Err(TransactionError::Storage(e)) => Err(e.into()),
            Err(TransactionError::Abort(())) => {
                Err(MvccError::Backend("transaction aborted".into()))
            }
        }
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, MvccError> {
        Ok(self.tree(table).get(key)?.map(|v| v.to_vec()))
    }

    fn scan<'a>(
        &'a self,
        table: Table,
        start: &[u8],
        end: Option<&[u8]>,
        order: Order,
    ) -> ScanIter<'a> {
        let tree = self.tree(table);
        if end.is_some_and(|end| end <= start) {
            return Box::new(std::iter::empty());
        }
        let iter = match end {
            Some(end) => tree.range(start.to_vec()..end.to_vec()),
            None => tree.range(start.to_vec()..),
        };
        let map = |r: sled::Result<(sled::IVec, sled::IVec)>| {
            r.map(|(k, v)| (k.to_vec(), v.to_vec()))
                .map_err(MvccError::from)
        };
        match order {
            Order::Ascending => Box::new(iter.map(map)),
            Order::Descending => Box::new(iter.rev().map(map)),
        }
    }

    async fn flush(&self) -> Result<(), MvccError> {
        self.db.flush_async().await?;
        Ok(())
    }
}

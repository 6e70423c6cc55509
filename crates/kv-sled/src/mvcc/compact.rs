//! Compaction: forget history older than a revision.
//!
//! Compacting to `C` keeps, per key, its latest version `<= C` (dropped too
//! when it is a tombstone) and every version above `C`; it removes the
//! change-log entries `<= C`. Reads at any revision `>= C` stay exact; reads
//! below `C` fail with `Compacted`. The compacted revision is persisted
//! first, so a crash mid-way only leaves garbage the next run removes.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::engine::{Order, Table, WriteBatch};
use crate::error::MvccError;

use super::codec::{self, META_COMPACTED};
use super::{now_millis, Mvcc};

/// Log entries handled per batch, to keep the write lock short.
const CHUNK: usize = 512;

impl Mvcc {
    /// Compact away everything older than `retention`: the target is the
    /// newest change written before `now - retention`. Returns the
    /// compacted revision.
    pub fn compact_retention(&self, retention: Duration) -> Result<u64, MvccError> {
        let target = self.revision_older_than(retention)?;
        self.compact_to(target)
    }

    /// The newest change written before `now - age` (0 when none is).
    pub fn revision_older_than(&self, age: Duration) -> Result<u64, MvccError> {
        let cutoff = now_millis().saturating_sub(age.as_millis() as u64);
        let current = self.current_revision();
        let end = codec::u64_key(current.saturating_add(1));
        let mut target = 0;
        for entry in self
            .engine
            .scan(Table::Log, &[], Some(&end), Order::Ascending)
        {
            let (lk, raw) = entry?;
            let (_, millis, _) = codec::decode_log(&raw)?;
            if millis >= cutoff {
                break;
            }
            target = codec::decode_u64(&lk)?;
        }
        Ok(target)
    }

    /// Compact to `target` (capped at the current revision; never moves
    /// backwards). Returns the compacted revision.
    pub fn compact_to(&self, target: u64) -> Result<u64, MvccError> {
        let previous = self.compacted_revision();
        let c = target.min(self.current_revision()).max(previous);
        if c > previous {
            let _g = self.lock();
            let mut batch = WriteBatch::new();
            batch.put(Table::Meta, META_COMPACTED, codec::u64_key(c));
            self.engine.apply(batch)?;
            self.compacted.fetch_max(c, Ordering::AcqRel);
        }
        let end = codec::u64_key(c.saturating_add(1));
        loop {
            let mut log_keys = Vec::new();
            let mut keys = BTreeSet::new();
            for entry in self
                .engine
                .scan(Table::Log, &[], Some(&end), Order::Ascending)
                .take(CHUNK)
            {
                let (lk, raw) = entry?;
                let (_, _, key) = codec::decode_log(&raw)?;
                log_keys.push(lk);
                keys.insert(key);
            }
            if log_keys.is_empty() {
                return Ok(c);
            }
            let _g = self.lock();
            let mut batch = WriteBatch::new();
            for lk in log_keys {
                batch.delete(Table::Log, lk);
            }
            for key in &keys {
                self.compact_key(key, c, &mut batch)?;
            }
            self.engine.apply(batch)?;
        }
    }

    /// Queue the removal of `key`'s versions made obsolete by compacting to
    /// `c`. The caller holds the write lock (the current-table check races
    /// with writers otherwise).
    fn compact_key(&self, key: &[u8], c: u64, batch: &mut WriteBatch) -> Result<(), MvccError> {
        let start = codec::versions_prefix(key);
        let end = codec::version_key(key, c.saturating_add(1));
        let mut old = Vec::new();
        for entry in self
            .engine
            .scan(Table::Versions, &start, Some(&end), Order::Ascending)
        {
            let (vk, raw) = entry?;
            old.push((vk, codec::decode_version(&raw)?.tombstone));
        }
        let Some((last_key, last_is_tombstone)) = old.pop() else {
            return Ok(());
        };
        for (vk, _) in old {
            batch.delete(Table::Versions, vk);
        }
        if last_is_tombstone {
            let (_, tomb_rev) = codec::split_version_key(&last_key)?;
            batch.delete(Table::Versions, last_key);
            if let Some(raw) = self.engine.get(Table::Current, key)? {
                let (crev, v) = codec::decode_current(&raw)?;
                if crev == tomb_rev && v.tombstone {
                    batch.delete(Table::Current, key);
                }
            }
        }
        Ok(())
    }
}

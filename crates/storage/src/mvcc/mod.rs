//! The MVCC layer: one global revision counter over an [`Engine`].
//!
//! Every write at revision `R` stores, in one atomic batch: the new version
//! (`key@R`, a tombstone for deletes), the key's current value, a change-log
//! entry `R → (event, wall-clock time, key)` and the counter. The write is
//! acknowledged only after a flush made it durable; concurrent writers share
//! flushes (group commit): applies are serialised by a mutex, and whoever
//! holds the flush lock flushes everything applied so far for all waiters.
//!
//! Reads see only durable revisions, so nothing a reader saw can vanish in a
//! crash. `get_at`/`list_at` read any revision between the compacted and
//! the current one exactly.

mod codec;
mod compact;
mod feed;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::engine::{prefix_end, Engine, Order, Table, WriteBatch};
use crate::error::StorageError;

use codec::{META_COMPACTED, META_REV};

pub use feed::{ChangeBatch, PrefixChange};

/// What a change did to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// The key did not exist (or was deleted) before.
    Added,
    /// The key existed and got a new value.
    Modified,
    /// The key was deleted.
    Deleted,
}

impl EventType {
    fn code(self) -> u8 {
        match self {
            EventType::Added => 0,
            EventType::Modified => 1,
            EventType::Deleted => 2,
        }
    }

    fn from_code(c: u8) -> Result<Self, StorageError> {
        match c {
            0 => Ok(EventType::Added),
            1 => Ok(EventType::Modified),
            2 => Ok(EventType::Deleted),
            _ => Err(StorageError::Corrupt(format!("unknown event type {c}"))),
        }
    }

    /// The watch event name: `ADDED`, `MODIFIED` or `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// A key's value at some revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// Engine key.
    pub key: Vec<u8>,
    /// The revision of the write that produced `value`.
    pub revision: u64,
    /// The stored bytes.
    pub value: Vec<u8>,
}

/// One entry of the change stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The write's revision.
    pub revision: u64,
    /// Engine key.
    pub key: Vec<u8>,
    /// What happened.
    pub event: EventType,
    /// Wall-clock time of the write, milliseconds since the Unix epoch.
    pub unix_millis: u64,
    /// The new value; for `Deleted`, the last state before the delete.
    pub value: Vec<u8>,
}

/// A write's expectation about the key's current state (compare-and-set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Write unconditionally.
    Any,
    /// The key must not exist.
    Absent,
    /// The key must exist, last written at this revision.
    Revision(u64),
}

/// The revisioned store over an engine. Cheap to share behind an `Arc`.
pub struct Mvcc {
    engine: Arc<dyn Engine>,
    /// Serialises applies (and compaction batches); holds no data.
    write_lock: Mutex<()>,
    /// Last revision applied to the engine.
    applied: AtomicU64,
    /// Last revision known durable; reads see up to here.
    durable: AtomicU64,
    /// Reads below this revision fail with `Compacted`.
    compacted: AtomicU64,
    /// Held by the one writer currently flushing.
    flush_lock: tokio::sync::Mutex<()>,
    /// Publishes `durable` after every flush that advanced it (change feeds
    /// wait on it).
    durable_tx: tokio::sync::watch::Sender<u64>,
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Mvcc {
    /// Open on an engine, recovering the counters.
    pub fn open(engine: Arc<dyn Engine>) -> Result<Self, StorageError> {
        let read = |k: &[u8]| -> Result<u64, StorageError> {
            engine
                .get(Table::Meta, k)?
                .map(|b| codec::decode_u64(&b))
                .transpose()
                .map(|v| v.unwrap_or(0))
        };
        let rev = read(META_REV)?;
        let compacted = read(META_COMPACTED)?;
        Ok(Mvcc {
            engine,
            write_lock: Mutex::new(()),
            applied: AtomicU64::new(rev),
            durable: AtomicU64::new(rev),
            compacted: AtomicU64::new(compacted),
            flush_lock: tokio::sync::Mutex::new(()),
            durable_tx: tokio::sync::watch::Sender::new(rev),
        })
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // The guarded data is `()`, so a poisoned lock holds nothing broken.
        self.write_lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current (durable, visible) revision.
    pub fn current_revision(&self) -> u64 {
        self.durable.load(Ordering::Acquire)
    }

    /// The compacted revision: reads at lower revisions fail.
    pub fn compacted_revision(&self) -> u64 {
        self.compacted.load(Ordering::Acquire)
    }

    /// Write `value` to `key` if `expect` holds; returns the new revision
    /// once it is durable.
    pub async fn put(&self, key: &[u8], value: &[u8], expect: Expect) -> Result<u64, StorageError> {
        let rev = self.apply_write(key, Some(value), expect)?;
        self.wait_durable(rev).await?;
        Ok(rev)
    }

    /// Delete `key` if `expect` holds; returns the delete's revision and the
    /// last state, once durable. Deleting an absent key is a `Conflict`.
    pub async fn delete(&self, key: &[u8], expect: Expect) -> Result<Versioned, StorageError> {
        let (rev, last) = {
            let _g = self.lock();
            let last = self.latest_live(key)?;
            let rev = self.apply_locked(key, None, expect, last.as_ref())?;
            (rev, last)
        };
        self.wait_durable(rev).await?;
        let value = last.map(|v| v.value).unwrap_or_default();
        Ok(Versioned {
            key: key.to_vec(),
            revision: rev,
            value,
        })
    }

    fn apply_write(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
        expect: Expect,
    ) -> Result<u64, StorageError> {
        let _g = self.lock();
        let current = self.latest_live(key)?;
        self.apply_locked(key, value, expect, current.as_ref())
    }

    /// Apply one write; the caller holds the write lock and read `current`
    /// under it.
    fn apply_locked(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
        expect: Expect,
        current: Option<&Versioned>,
    ) -> Result<u64, StorageError> {
        let found = current.map(|c| c.revision);
        let ok = match expect {
            Expect::Any => value.is_some() || found.is_some(),
            Expect::Absent => found.is_none(),
            Expect::Revision(r) => found == Some(r),
        };
        if !ok {
            let expected = match expect {
                Expect::Revision(r) => Some(r),
                _ => None,
            };
            return Err(StorageError::Conflict { expected, found });
        }
        let rev = self.applied.load(Ordering::Acquire) + 1;
        let (event, tombstone, payload) = match (value, current) {
            (Some(v), None) => (EventType::Added, false, v),
            (Some(v), Some(_)) => (EventType::Modified, false, v),
            (None, Some(c)) => (EventType::Deleted, true, c.value.as_slice()),
            (None, None) => {
                return Err(StorageError::Conflict {
                    expected: None,
                    found: None,
                })
            }
        };
        let mut batch = WriteBatch::new();
        batch.put(
            Table::Versions,
            codec::version_key(key, rev),
            codec::encode_version(tombstone, payload),
        );
        batch.put(
            Table::Current,
            key,
            codec::encode_current(rev, tombstone, payload),
        );
        batch.put(
            Table::Log,
            codec::u64_key(rev),
            codec::encode_log(event, now_millis(), key),
        );
        batch.put(Table::Meta, META_REV, codec::u64_key(rev));
        self.engine.apply(batch)?;
        self.applied.store(rev, Ordering::Release);
        Ok(rev)
    }

    /// Wait until `rev` is durable, flushing (for everyone) if nobody is.
    async fn wait_durable(&self, rev: u64) -> Result<(), StorageError> {
        if self.durable.load(Ordering::Acquire) >= rev {
            return Ok(());
        }
        let _flushing = self.flush_lock.lock().await;
        if self.durable.load(Ordering::Acquire) >= rev {
            return Ok(());
        }
        let target = self.applied.load(Ordering::Acquire);
        self.engine.flush().await?;
        let durable = self.durable.fetch_max(target, Ordering::AcqRel).max(target);
        self.durable_tx.send_if_modified(|d| {
            let advanced = durable > *d;
            *d = (*d).max(durable);
            advanced
        });
        Ok(())
    }

    /// The key's latest applied live value (including not-yet-durable
    /// writes). Write paths read this before a compare-and-set.
    pub fn latest_live(&self, key: &[u8]) -> Result<Option<Versioned>, StorageError> {
        let Some(raw) = self.engine.get(Table::Current, key)? else {
            return Ok(None);
        };
        let (revision, v) = codec::decode_current(&raw)?;
        Ok((!v.tombstone).then(|| Versioned {
            key: key.to_vec(),
            revision,
            value: v.payload,
        }))
    }

    /// The key's value at the current revision.
    pub fn get(&self, key: &[u8]) -> Result<Option<Versioned>, StorageError> {
        let rev = self.current_revision();
        self.get_unchecked(key, rev)
    }

    fn check_rev(&self, rev: u64) -> Result<(), StorageError> {
        let current = self.current_revision();
        if rev > current {
            return Err(StorageError::FutureRevision {
                requested: rev,
                current,
            });
        }
        let compacted = self.compacted_revision();
        if rev < compacted {
            return Err(StorageError::Compacted {
                requested: rev,
                compacted,
            });
        }
        Ok(())
    }

    /// The key's value at revision `rev` (its latest version `<= rev`;
    /// `None` if absent or deleted then).
    pub fn get_at(&self, key: &[u8], rev: u64) -> Result<Option<Versioned>, StorageError> {
        self.check_rev(rev)?;
        let out = self.get_unchecked(key, rev)?;
        self.check_rev(rev)?;
        Ok(out)
    }

    fn get_unchecked(&self, key: &[u8], rev: u64) -> Result<Option<Versioned>, StorageError> {
        let Some(raw) = self.engine.get(Table::Current, key)? else {
            return Ok(None);
        };
        let (crev, v) = codec::decode_current(&raw)?;
        if crev <= rev {
            return Ok((!v.tombstone).then(|| Versioned {
                key: key.to_vec(),
                revision: crev,
                value: v.payload,
            }));
        }
        self.version_at(key, rev)
    }

    /// The latest version of `key` at or below `rev`, from the versions table.
    fn version_at(&self, key: &[u8], rev: u64) -> Result<Option<Versioned>, StorageError> {
        let start = codec::versions_prefix(key);
        let end = codec::version_key(key, rev.saturating_add(1));
        let end = if rev == u64::MAX {
            prefix_end(&start)
        } else {
            Some(end)
        };
        let mut it = self
            .engine
            .scan(Table::Versions, &start, end.as_deref(), Order::Descending);
        match it.next() {
            None => Ok(None),
            Some(entry) => {
                let (vk, raw) = entry?;
                let (_, vrev) = codec::split_version_key(&vk)?;
                let v = codec::decode_version(&raw)?;
                Ok((!v.tombstone).then(|| Versioned {
                    key: key.to_vec(),
                    revision: vrev,
                    value: v.payload,
                }))
            }
        }
    }

    /// Every live key under `prefix` at the current revision, in key order,
    /// and that revision. A consistent snapshot even while writes land.
    pub fn list(&self, prefix: &[u8]) -> Result<(Vec<Versioned>, u64), StorageError> {
        let rev = self.current_revision();
        let items = self.list_unchecked(prefix, rev)?;
        Ok((items, rev))
    }

    /// Every live key under `prefix` at revision `rev`, in key order.
    pub fn list_at(&self, prefix: &[u8], rev: u64) -> Result<Vec<Versioned>, StorageError> {
        self.check_rev(rev)?;
        let items = self.list_unchecked(prefix, rev)?;
        // Compaction may have passed `rev` while we scanned.
        self.check_rev(rev)?;
        Ok(items)
    }

    fn list_unchecked(&self, prefix: &[u8], rev: u64) -> Result<Vec<Versioned>, StorageError> {
        let end = prefix_end(prefix);
        let mut out = Vec::new();
        for entry in self
            .engine
            .scan(Table::Current, prefix, end.as_deref(), Order::Ascending)
        {
            let (key, raw) = entry?;
            let (crev, v) = codec::decode_current(&raw)?;
            if crev <= rev {
                if !v.tombstone {
                    out.push(Versioned {
                        key,
                        revision: crev,
                        value: v.payload,
                    });
                }
            } else if let Some(old) = self.version_at(&key, rev)? {
                out.push(old);
            }
        }
        Ok(out)
    }

    /// Up to `limit` changes with revision `> after`, oldest first, up to the
    /// current revision. `after` below the compacted revision → `Compacted`.
    pub fn changes_since(&self, after: u64, limit: usize) -> Result<Vec<Change>, StorageError> {
        let current = self.current_revision();
        let compacted = self.compacted_revision();
        if after < compacted {
            return Err(StorageError::Compacted {
                requested: after,
                compacted,
            });
        }
        if after >= current {
            return Ok(Vec::new());
        }
        let start = codec::u64_key(after + 1);
        let end = codec::u64_key(current.saturating_add(1));
        let mut out = Vec::new();
        for entry in self
            .engine
            .scan(Table::Log, &start, Some(&end), Order::Ascending)
            .take(limit)
        {
            let (lk, raw) = entry?;
            let revision = codec::decode_u64(&lk)?;
            let (event, unix_millis, key) = codec::decode_log(&raw)?;
            let version = self
                .engine
                .get(Table::Versions, &codec::version_key(&key, revision))?
                .ok_or_else(|| {
                    StorageError::Corrupt(format!("log entry {revision} has no version"))
                })?;
            let value = codec::decode_version(&version)?.payload;
            out.push(Change {
                revision,
                key,
                event,
                unix_millis,
                value,
            });
        }
        if after < self.compacted_revision() {
            return Err(StorageError::Compacted {
                requested: after,
                compacted: self.compacted_revision(),
            });
        }
        Ok(out)
    }
}

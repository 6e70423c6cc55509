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
use crate::error::MvccError;

use codec::{Kind, META_COMPACTED, META_REV};

pub use feed::{ChangeBatch, PrefixChange};

/// What a write did to its key, as the change log records it (not a watch
/// event type: the seam's watch reports etcd's put/delete, and the store
/// turns those into kube's watch events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeOp {
    /// The key did not exist (or was deleted) before.
    Added,
    /// The key existed and got a new value.
    Modified,
    /// The key was deleted.
    Deleted,
}

impl ChangeOp {
    fn code(self) -> u8 {
        match self {
            ChangeOp::Added => 0,
            ChangeOp::Modified => 1,
            ChangeOp::Deleted => 2,
        }
    }

    fn from_code(c: u8) -> Result<Self, MvccError> {
        match c {
            0 => Ok(ChangeOp::Added),
            1 => Ok(ChangeOp::Modified),
            2 => Ok(ChangeOp::Deleted),
            _ => Err(MvccError::Corrupt(format!("unknown change-log op {c}"))),
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
    /// The revision of the put that created the key (for values stored
    /// before create revisions were recorded: `revision`).
    pub create_revision: u64,
    /// The stored bytes.
    pub value: Vec<u8>,
}

impl Versioned {
    /// The live value of a decoded version, `None` for a tombstone.
    fn live(key: Vec<u8>, revision: u64, v: codec::Version) -> Option<Versioned> {
        (!v.tombstone).then(|| Versioned {
            key,
            revision,
            create_revision: v.create_revision.unwrap_or(revision),
            value: v.payload,
        })
    }
}

/// One entry of the change stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The write's revision.
    pub revision: u64,
    /// Engine key.
    pub key: Vec<u8>,
    /// What happened.
    pub event: ChangeOp,
    /// Wall-clock time of the write, milliseconds since the Unix epoch.
    pub unix_millis: u64,
    /// The new value; for `Deleted`, the last state before the delete.
    pub value: Vec<u8>,
    /// The key's create revision after the write (0 for `Deleted`).
    pub create_revision: u64,
}

impl Change {
    /// The log entry at `revision` and its stored version.
    fn from_log(
        revision: u64,
        event: ChangeOp,
        unix_millis: u64,
        key: Vec<u8>,
        version: codec::Version,
    ) -> Change {
        let create_revision = match event {
            ChangeOp::Deleted => 0,
            _ => version.create_revision.unwrap_or(revision),
        };
        Change {
            revision,
            key,
            event,
            unix_millis,
            value: version.payload,
            create_revision,
        }
    }
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

impl Expect {
    fn holds(self, found: Option<u64>) -> bool {
        match self {
            Expect::Any => true,
            Expect::Absent => found.is_none(),
            Expect::Revision(r) => found == Some(r),
        }
    }

    fn conflict(self, found: Option<u64>) -> MvccError {
        let expected = match self {
            Expect::Revision(r) => Some(r),
            _ => None,
        };
        MvccError::Conflict { expected, found }
    }
}

/// What a compare-and-set write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Written (and durable) at `revision`; `prev` is the key's live value
    /// before the write.
    Written {
        /// The write's revision.
        revision: u64,
        /// The key's value before the write.
        prev: Option<Versioned>,
    },
    /// A delete of an absent key: nothing was written.
    Unchanged,
    /// The expectation did not hold; nothing was written.
    Failed {
        /// The key's latest value.
        current: Option<Versioned>,
    },
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
    pub fn open(engine: Arc<dyn Engine>) -> Result<Self, MvccError> {
        let read = |k: &[u8]| -> Result<u64, MvccError> {
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
    pub async fn put(&self, key: &[u8], value: &[u8], expect: Expect) -> Result<u64, MvccError> {
        match self.write(key, Some(value), expect).await? {
            WriteOutcome::Written { revision, .. } => Ok(revision),
            WriteOutcome::Failed { current } => Err(expect.conflict(current.map(|c| c.revision))),
            WriteOutcome::Unchanged => Err(expect.conflict(None)),
        }
    }

    /// Delete `key` if `expect` holds; returns the delete's revision and the
    /// last state, once durable. Deleting an absent key is a `Conflict`.
    pub async fn delete(&self, key: &[u8], expect: Expect) -> Result<Versioned, MvccError> {
        match self.write(key, None, expect).await? {
            WriteOutcome::Written {
                revision,
                prev: Some(last),
            } => Ok(Versioned {
                key: key.to_vec(),
                revision,
                create_revision: last.create_revision,
                value: last.value,
            }),
            WriteOutcome::Failed { current } => Err(expect.conflict(current.map(|c| c.revision))),
            _ => Err(expect.conflict(None)),
        }
    }

    /// Put (`value: Some`) or delete `key` if `expect` holds, atomically
    /// with the check; a write returns once durable.
    pub async fn write(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
        expect: Expect,
    ) -> Result<WriteOutcome, MvccError> {
        let outcome = self.apply_write(key, value, expect)?;
        if let WriteOutcome::Written { revision, .. } = &outcome {
            self.wait_durable(*revision).await?;
        }
        Ok(outcome)
    }

    fn apply_write(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
        expect: Expect,
    ) -> Result<WriteOutcome, MvccError> {
        let _g = self.lock();
        let current = self.latest_live(key)?;
        if !expect.holds(current.as_ref().map(|c| c.revision)) {
            return Ok(WriteOutcome::Failed { current });
        }
        if value.is_none() && current.is_none() {
            return Ok(WriteOutcome::Unchanged);
        }
        let revision = self.apply_locked(key, value, current.as_ref())?;
        Ok(WriteOutcome::Written {
            revision,
            prev: current,
        })
    }

    /// Apply one write; the caller holds the write lock, read `current`
    /// under it and checked that a delete has something to delete.
    fn apply_locked(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
        current: Option<&Versioned>,
    ) -> Result<u64, MvccError> {
        let rev = self.applied.load(Ordering::Acquire) + 1;
        let (event, kind, payload) = match (value, current) {
            (Some(v), None) => (
                ChangeOp::Added,
                Kind::Put {
                    create_revision: rev,
                },
                v,
            ),
            (Some(v), Some(c)) => (
                ChangeOp::Modified,
                Kind::Put {
                    create_revision: c.create_revision,
                },
                v,
            ),
            (None, Some(c)) => (ChangeOp::Deleted, Kind::Tombstone, c.value.as_slice()),
            (None, None) => {
                return Err(MvccError::Conflict {
                    expected: None,
                    found: None,
                })
            }
        };
        let mut batch = WriteBatch::new();
        batch.put(
            Table::Versions,
            codec::version_key(key, rev),
            codec::encode_version(kind, payload),
        );
        batch.put(
            Table::Current,
            key,
            codec::encode_current(rev, kind, payload),
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
    async fn wait_durable(&self, rev: u64) -> Result<(), MvccError> {
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
    pub fn latest_live(&self, key: &[u8]) -> Result<Option<Versioned>, MvccError> {
        let Some(raw) = self.engine.get(Table::Current, key)? else {
            return Ok(None);
        };
        let (revision, v) = codec::decode_current(&raw)?;
        Ok(Versioned::live(key.to_vec(), revision, v))
    }

    /// The key's value at the current revision.
    pub fn get(&self, key: &[u8]) -> Result<Option<Versioned>, MvccError> {
        let rev = self.current_revision();
        self.get_unchecked(key, rev)
    }

    fn check_rev(&self, rev: u64) -> Result<(), MvccError> {
        let current = self.current_revision();
        if rev > current {
            return Err(MvccError::FutureRevision {
                requested: rev,
                current,
            });
        }
        let compacted = self.compacted_revision();
        if rev < compacted {
            return Err(MvccError::Compacted {
                requested: rev,
                compacted,
            });
        }
        Ok(())
    }

    /// The key's value at revision `rev` (its latest version `<= rev`;
    /// `None` if absent or deleted then).
    pub fn get_at(&self, key: &[u8], rev: u64) -> Result<Option<Versioned>, MvccError> {
        self.check_rev(rev)?;
        let out = self.get_unchecked(key, rev)?;
        self.check_rev(rev)?;
        Ok(out)
    }

    /// [`Mvcc::get_at`] without the revision checks (`rev` is known good).
    pub(crate) fn get_unchecked(
        &self,
        key: &[u8],
        rev: u64,
    ) -> Result<Option<Versioned>, MvccError> {
        let Some(raw) = self.engine.get(Table::Current, key)? else {
            return Ok(None);
        };
        let (crev, v) = codec::decode_current(&raw)?;
        if crev <= rev {
            return Ok(Versioned::live(key.to_vec(), crev, v));
        }
        self.version_at(key, rev)
    }

    /// The latest version of `key` at or below `rev`, from the versions table.
    fn version_at(&self, key: &[u8], rev: u64) -> Result<Option<Versioned>, MvccError> {
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
                Ok(Versioned::live(
                    key.to_vec(),
                    vrev,
                    codec::decode_version(&raw)?,
                ))
            }
        }
    }

    /// Every live key under `prefix` at the current revision, in key order,
    /// and that revision. A consistent snapshot even while writes land.
    pub fn list(&self, prefix: &[u8]) -> Result<(Vec<Versioned>, u64), MvccError> {
        let rev = self.current_revision();
        let end = prefix_end(prefix);
        let (items, _) = self.range_unchecked(prefix, end.as_deref(), rev, 0)?;
        Ok((items, rev))
    }

    /// Every live key under `prefix` at revision `rev`, in key order.
    pub fn list_at(&self, prefix: &[u8], rev: u64) -> Result<Vec<Versioned>, MvccError> {
        let end = prefix_end(prefix);
        Ok(self.range(prefix, end.as_deref(), Some(rev), 0)?.0)
    }

    /// The live keys in `[start, end)` (`end: None`: unbounded) at `rev`
    /// (`None`: the current revision), at most `limit` of them (0: all).
    /// Returns the keys, the revision read at and whether `limit` cut the
    /// answer short.
    pub fn range(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        rev: Option<u64>,
        limit: usize,
    ) -> Result<(Vec<Versioned>, u64, bool), MvccError> {
        let Some(rev) = rev else {
            let current = self.current_revision();
            let (items, more) = self.range_unchecked(start, end, current, limit)?;
            return Ok((items, current, more));
        };
        self.check_rev(rev)?;
        let (items, more) = self.range_unchecked(start, end, rev, limit)?;
        // Compaction may have passed `rev` while we scanned.
        self.check_rev(rev)?;
        Ok((items, rev, more))
    }

    fn range_unchecked(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        rev: u64,
        limit: usize,
    ) -> Result<(Vec<Versioned>, bool), MvccError> {
        let mut out = Vec::new();
        for entry in self
            .engine
            .scan(Table::Current, start, end, Order::Ascending)
        {
            let (key, raw) = entry?;
            let (crev, v) = codec::decode_current(&raw)?;
            let item = if crev <= rev {
                Versioned::live(key, crev, v)
            } else {
                self.version_at(&key, rev)?
            };
            if let Some(item) = item {
                if limit > 0 && out.len() == limit {
                    return Ok((out, true));
                }
                out.push(item);
            }
        }
        Ok((out, false))
    }

    /// Up to `limit` changes with revision `> after`, oldest first, up to the
    /// current revision. `after` below the compacted revision → `Compacted`.
    pub fn changes_since(&self, after: u64, limit: usize) -> Result<Vec<Change>, MvccError> {
        let current = self.current_revision();
        let compacted = self.compacted_revision();
        if after < compacted {
            return Err(MvccError::Compacted {
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
                    MvccError::Corrupt(format!("log entry {revision} has no version"))
                })?;
            let version = codec::decode_version(&version)?;
            out.push(Change::from_log(revision, event, unix_millis, key, version));
        }
        if after < self.compacted_revision() {
            return Err(MvccError::Compacted {
                requested: after,
                compacted: self.compacted_revision(),
            });
        }
        Ok(out)
    }
}

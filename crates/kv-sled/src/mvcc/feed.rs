//! The change feed of one key prefix: bounded slices of the change log with
//! each change's previous version, and a signal when more becomes durable.

use crate::engine::{Order, Table};
use crate::error::MvccError;

use super::codec;
use super::{Change, ChangeOp, Mvcc, Versioned};

/// One change under a prefix and the key's version just before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixChange {
    /// The change (for `Deleted`, `value` is the last state).
    pub change: Change,
    /// The key's live version at `revision - 1` (`None` for `Added`).
    pub prev: Option<Versioned>,
}

/// A bounded slice of the change log, filtered to one prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeBatch {
    /// The matching changes, oldest first.
    pub changes: Vec<PrefixChange>,
    /// Every revision up to here has been examined: the next slice starts
    /// after it. Equals the `after` asked for when nothing new is durable.
    pub scanned_to: u64,
}

impl Mvcc {
    /// Changes to keys under `prefix` with revision `> after`, examining at
    /// most `limit` log entries (of any key) up to the current revision.
    /// `after` below the compacted revision (also when compaction passes it
    /// during the read) → `Compacted`.
    pub fn changes_under(
        &self,
        prefix: &[u8],
        after: u64,
        limit: usize,
    ) -> Result<ChangeBatch, MvccError> {
        let result = self.read_changes(prefix, after, limit);
        // Compaction may have removed entries under our feet; report that
        // rather than the missing-version error it can cause.
        let compacted = self.compacted_revision();
        if after < compacted {
            return Err(MvccError::Compacted {
                requested: after,
                compacted,
            });
        }
        result
    }

    fn read_changes(
        &self,
        prefix: &[u8],
        after: u64,
        limit: usize,
    ) -> Result<ChangeBatch, MvccError> {
        let current = self.current_revision();
        let mut batch = ChangeBatch {
            changes: Vec::new(),
            scanned_to: after,
        };
        if after >= current || limit == 0 {
            return Ok(batch);
        }
        let start = codec::u64_key(after + 1);
        let end = codec::u64_key(current.saturating_add(1));
        let mut examined = 0;
        for entry in self
            .engine
            .scan(Table::Log, &start, Some(&end), Order::Ascending)
            .take(limit)
        {
            let (lk, raw) = entry?;
            examined += 1;
            let revision = codec::decode_u64(&lk)?;
            batch.scanned_to = revision;
            let (event, unix_millis, key) = codec::decode_log(&raw)?;
            if !key.starts_with(prefix) {
                continue;
            }
            let version = self
                .engine
                .get(Table::Versions, &codec::version_key(&key, revision))?
                .ok_or_else(|| {
                    MvccError::Corrupt(format!("log entry {revision} has no version"))
                })?;
            let version = codec::decode_version(&version)?;
            let prev = match event {
                ChangeOp::Added => None,
                _ => self.version_at(&key, revision - 1)?,
            };
            batch.changes.push(PrefixChange {
                change: Change::from_log(revision, event, unix_millis, key, version),
                prev,
            });
        }
        if examined < limit {
            // The scan ran to its end: nothing else is durable yet.
            batch.scanned_to = current;
        }
        Ok(batch)
    }

    /// A receiver of the durable revision, updated after every flush that
    /// advanced it. Only revisions up to [`Mvcc::current_revision`] are
    /// ever read, so nothing seen through it can be lost in a crash.
    pub fn subscribe_durable(&self) -> tokio::sync::watch::Receiver<u64> {
        self.durable_tx.subscribe()
    }
}

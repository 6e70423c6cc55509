//! [`RevisionedKv::watch`](keelson_kv::RevisionedKv::watch) on the MVCC
//! change log: bounded batches of the log after a cursor, then followed
//! live as revisions become durable.
//!
//! When it has caught up after reading past other prefixes' changes, the
//! stream sends a [`WatchResponse::Progress`] at the revision it has read
//! up to, then waits.
//!
//! There is no separate "switch to live" step: the feed always reads the
//! log after its cursor up to the durable revision and, once caught up,
//! sleeps until the durable revision moves. A write racing with the catch
//! up is therefore read exactly once, whichever side of it lands.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};

use futures::stream::StreamExt;
use keelson_kv::{Event, EventKind, KeyValue, KvError, WatchResponse, WatchStream};
use tokio::sync::watch;

use crate::error::MvccError;
use crate::mvcc::{ChangeOp, Mvcc, PrefixChange};

/// Log entries examined per read: bounds the memory a slow consumer can
/// pin and the time one read spends off the executor's yield points.
const BATCH: usize = 256;

/// One watcher's cursor over the change log.
struct Feed {
    /// Weak, so an open watch does not keep a dropped store (and its sled
    /// files) alive; the stream ends when the store goes away.
    mvcc: Weak<Mvcc>,
    prefix: Vec<u8>,
    /// Every change up to here has been read.
    cursor: u64,
    pending: VecDeque<Event>,
    durable: watch::Receiver<u64>,
    finished: bool,
    /// The revision of the last event or progress sent.
    reported: u64,
}

/// A compaction error names the first revision the watch still needed.
fn watch_error(e: MvccError) -> KvError {
    match e {
        MvccError::Compacted {
            requested,
            compacted,
        } => KvError::Compacted {
            requested: requested + 1,
            compacted,
        },
        other => other.into(),
    }
}

impl Feed {
    /// Read the next batch after the cursor into `pending`.
    fn fill(&mut self, mvcc: &Mvcc) -> Result<(), KvError> {
        let batch = mvcc
            .changes_under(&self.prefix, self.cursor, BATCH)
            .map_err(watch_error)?;
        for c in batch.changes {
            self.pending.push_back(to_event(c)?);
        }
        self.cursor = batch.scanned_to;
        Ok(())
    }

    async fn next(&mut self) -> Option<Result<WatchResponse, KvError>> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                self.reported = ev.kv.mod_revision;
                return Some(Ok(WatchResponse::Event(ev)));
            }
            if self.finished {
                return None;
            }
            // Mark the current value seen before reading the durable
            // revision, so a flush after this point wakes `changed()`.
            self.durable.mark_unchanged();
            let mvcc = self.mvcc.upgrade()?;
            if mvcc.current_revision() <= self.cursor {
                drop(mvcc);
                if self.cursor > self.reported {
                    // Caught up past other prefixes' changes: say how far
                    // the stream has read before waiting.
                    self.reported = self.cursor;
                    return Some(Ok(WatchResponse::Progress {
                        revision: self.cursor,
                    }));
                }
                self.durable.changed().await.ok()?;
                continue;
            }
            let before = self.cursor;
            let filled = self.fill(&mvcc);
            drop(mvcc);
            if let Err(e) = filled {
                self.finished = true;
                return Some(Err(e));
            }
            if self.pending.is_empty() && self.cursor > before {
                // A batch of other prefixes' changes: let others run
                // before reading the next one.
                tokio::task::yield_now().await;
            }
        }
    }
}

/// A log change as the seam's event: a delete carries only its key and
/// revision, the deleted state is its `prev_kv`.
fn to_event(c: PrefixChange) -> Result<Event, KvError> {
    let change = c.change;
    let prev_kv = c.prev.map(KeyValue::from);
    let (kind, kv) = match change.event {
        ChangeOp::Added | ChangeOp::Modified => (
            EventKind::Put,
            KeyValue {
                key: change.key,
                value: change.value,
                create_revision: change.create_revision,
                mod_revision: change.revision,
            },
        ),
        ChangeOp::Deleted => {
            if prev_kv.is_none() {
                return Err(KvError::Corrupt(format!(
                    "delete at revision {} has no previous version",
                    change.revision
                )));
            }
            (
                EventKind::Delete,
                KeyValue {
                    key: change.key,
                    value: Vec::new(),
                    create_revision: 0,
                    mod_revision: change.revision,
                },
            )
        }
    };
    Ok(Event { kind, kv, prev_kv })
}

/// The watch of `prefix` from `start_revision`; the first batch is read
/// now, so a compacted revision fails the call rather than the stream.
pub(crate) fn watch(
    mvcc: &Arc<Mvcc>,
    prefix: Vec<u8>,
    start_revision: u64,
) -> Result<WatchStream, KvError> {
    let after = start_revision.saturating_sub(1);
    let mut feed = Feed {
        mvcc: Arc::downgrade(mvcc),
        prefix,
        cursor: after,
        pending: VecDeque::new(),
        durable: mvcc.subscribe_durable(),
        finished: false,
        reported: after,
    };
    let compacted = mvcc.compacted_revision();
    if after < compacted {
        return Err(KvError::Compacted {
            requested: start_revision,
            compacted,
        });
    }
    feed.fill(mvcc)?;
    Ok(futures::stream::unfold(feed, |mut feed| async move {
        feed.next().await.map(|item| (item, feed))
    })
    .boxed())
}

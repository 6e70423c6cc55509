//! [`StoreApi::watch`](keelson_api::StoreApi::watch) for [`LocalStore`]:
//! the change log replayed in bounded batches, then followed live as
//! revisions become durable.
//!
//! When it has caught up after reading past other resources' changes, the
//! stream sends a [`Progress`](ApiEventType::Progress) event at the
//! revision it has read up to, then waits.
//!
//! There is no separate "switch to live" step: the feed always reads the
//! log after its cursor up to the durable revision and, once caught up,
//! sleeps until the durable revision moves. A write racing with the catch
//! up is therefore read exactly once, whichever side of it lands.

use std::collections::VecDeque;
use std::sync::Weak;

use futures::stream::StreamExt;
use keelson_api::{ChangeEvent, ChangeStream, EventType as ApiEventType};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, StatusReason};
use tokio::sync::watch;

use crate::error::StorageError;
use crate::keys;
use crate::mvcc::{EventType, PrefixChange, Versioned};

use super::{object, Inner, LocalStore};

/// Log entries examined per read: bounds the memory a slow consumer can
/// pin and the time one read spends off the executor's yield points.
const BATCH: usize = 256;

/// kube's watch-cache error for a revision older than the retained history.
pub(crate) fn too_old(requested: u64, compacted: u64) -> ApiError {
    ApiError::new(
        410,
        StatusReason::Expired,
        format!("too old resource version: {requested} ({compacted})"),
    )
}

fn api_error(e: StorageError) -> ApiError {
    match e {
        StorageError::Compacted {
            requested,
            compacted,
        } => too_old(requested, compacted),
        other => other.into(),
    }
}

/// One watcher's cursor over the change log.
struct Feed {
    /// Weak, so an open watch does not keep a dropped store (and its sled
    /// files) alive; the stream ends when the store goes away.
    inner: Weak<Inner>,
    prefix: Vec<u8>,
    /// Every change up to here has been read.
    cursor: u64,
    pending: VecDeque<ChangeEvent>,
    durable: watch::Receiver<u64>,
    finished: bool,
    /// The revision of the last event or progress sent.
    reported: u64,
}

impl Feed {
    /// Read the next batch after the cursor into `pending`.
    fn fill(&mut self, inner: &Inner) -> ApiResult<()> {
        let batch = inner
            .mvcc
            .changes_under(&self.prefix, self.cursor, BATCH)
            .map_err(api_error)?;
        for c in &batch.changes {
            self.pending.push_back(to_event(c)?);
        }
        self.cursor = batch.scanned_to;
        Ok(())
    }

    async fn next(&mut self) -> Option<ApiResult<ChangeEvent>> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                self.reported = ev.revision;
                return Some(Ok(ev));
            }
            if self.finished {
                return None;
            }
            // Mark the current value seen before reading the durable
            // revision, so a flush after this point wakes `changed()`.
            self.durable.mark_unchanged();
            let inner = self.inner.upgrade()?;
            if inner.mvcc.current_revision() <= self.cursor {
                drop(inner);
                if self.cursor > self.reported {
                    // Caught up past other resources' changes: say how far
                    // the stream has read before waiting.
                    self.reported = self.cursor;
                    return Some(Ok(progress(self.cursor)));
                }
                self.durable.changed().await.ok()?;
                continue;
            }
            let before = self.cursor;
            let filled = self.fill(&inner);
            drop(inner);
            if let Err(e) = filled {
                self.finished = true;
                return Some(Err(e));
            }
            if self.pending.is_empty() && self.cursor > before {
                // A batch of other resources' changes: let others run
                // before reading the next one.
                tokio::task::yield_now().await;
            }
        }
    }
}

fn progress(revision: u64) -> ChangeEvent {
    ChangeEvent {
        revision,
        event_type: ApiEventType::Progress,
        object: serde_json::Value::Null,
        prev_object: None,
    }
}

fn decode_at(value: &[u8], revision: u64) -> ApiResult<serde_json::Value> {
    object::decode(&Versioned {
        key: Vec::new(),
        revision,
        value: value.to_vec(),
    })
}

fn to_event(c: &PrefixChange) -> ApiResult<ChangeEvent> {
    let event_type = match c.change.event {
        EventType::Added => ApiEventType::Added,
        EventType::Modified => ApiEventType::Modified,
        EventType::Deleted => ApiEventType::Deleted,
    };
    // For a delete the log's tombstone holds the last state; stamped with
    // the delete's revision as kube does.
    Ok(ChangeEvent {
        revision: c.change.revision,
        event_type,
        object: decode_at(&c.change.value, c.change.revision)?,
        prev_object: c.prev.as_ref().map(object::decode).transpose()?,
    })
}

impl LocalStore {
    /// The change stream of `gr` (in `namespace`, or all) after
    /// `after_revision`; see [`keelson_api::StoreApi::watch`].
    pub(crate) fn watch_changes(
        &self,
        gr: &GroupResource,
        namespace: Option<&str>,
        after_revision: u64,
    ) -> ApiResult<ChangeStream> {
        let prefix = keys::prefix(gr, namespace)?;
        let mvcc = &self.inner.mvcc;
        let mut feed = Feed {
            inner: std::sync::Arc::downgrade(&self.inner),
            prefix,
            cursor: after_revision,
            pending: VecDeque::new(),
            durable: mvcc.subscribe_durable(),
            finished: false,
            reported: after_revision,
        };
        // Read the first batch now, so a compacted revision fails the call
        // rather than the stream.
        let compacted = mvcc.compacted_revision();
        if after_revision < compacted {
            return Err(too_old(after_revision, compacted));
        }
        feed.fill(&self.inner)?;
        Ok(futures::stream::unfold(feed, |mut feed| async move {
            feed.next().await.map(|item| (item, feed))
        })
        .boxed())
    }
}

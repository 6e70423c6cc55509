//! The cache of one resource: its current state, a bounded ring of recent
//! changes, the live fan-out channel, and the task that keeps them in step
//! with the store's change stream (kube-apiserver's reflector + watchCache).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use keelson_api::EventType;
use keelson_api::{ChangeEvent, StoreApi};
use keelson_apimachinery::{ApiResult, GroupResource};
use tokio::sync::{broadcast, watch};

use crate::object::CachedObject;

/// One committed change, as the cache keeps and fans it out.
#[derive(Debug)]
pub(crate) struct Change {
    pub revision: u64,
    pub kind: EventType,
    /// The new state; for a delete, the last state at the delete's revision.
    pub object: Arc<CachedObject>,
    /// The state before the change (absent for `Added`).
    pub prev: Option<Arc<CachedObject>>,
}

/// The mutable part, behind one lock so a reader sees the state, the
/// history and the live channel at the same revision.
pub(crate) struct State {
    /// Every change up to here is applied.
    pub revision: u64,
    /// Current objects by `namespace/name`.
    pub objects: BTreeMap<Box<str>, Arc<CachedObject>>,
    /// Changes in `(oldest, revision]`, oldest first.
    pub history: VecDeque<Arc<Change>>,
    /// The JSON size of the objects the history's changes carry.
    pub history_bytes: usize,
    /// The history covers every change after this revision.
    pub oldest: u64,
    /// Live changes; replaced (closing every watcher) when the cache
    /// re-lists after losing the store's stream.
    pub live: broadcast::Sender<Arc<Change>>,
}

/// Sizes of a resource cache.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub history: usize,
    pub history_bytes: usize,
    pub watcher_buffer: usize,
}

/// The cache of one resource.
pub(crate) struct ResourceCache {
    pub gr: GroupResource,
    state: Mutex<State>,
    /// The cache's revision, for freshness waits.
    revision: watch::Sender<u64>,
    limits: Limits,
}

/// How long to wait before re-listing after the store's stream broke.
const RELIST_BACKOFF: Duration = Duration::from_millis(500);

impl ResourceCache {
    /// List the resource from the store and build the cache; the caller
    /// starts [`ResourceCache::follow`] from the returned cache's revision.
    pub async fn load(
        store: &Arc<dyn StoreApi>,
        gr: &GroupResource,
        limits: Limits,
    ) -> ApiResult<Arc<ResourceCache>> {
        let (objects, revision) = initial_state(store, gr).await?;
        let (live, _) = broadcast::channel(limits.watcher_buffer.max(1));
        Ok(Arc::new(ResourceCache {
            gr: gr.clone(),
            state: Mutex::new(State {
                revision,
                objects,
                history: VecDeque::new(),
                history_bytes: 0,
                oldest: revision,
                live,
            }),
            revision: watch::channel(revision).0,
            limits,
        }))
    }

    /// Lock the state. A poisoned lock only means a panic elsewhere while
    /// holding it; the state itself is always left consistent.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cache's revision.
    pub fn revision(&self) -> u64 {
        *self.revision.borrow()
    }

    /// Wait until the cache has reached `target`, for at most `limit`;
    /// whether it did.
    pub async fn wait_for(&self, target: u64, limit: Duration) -> bool {
        let mut rx = self.revision.subscribe();
        tokio::time::timeout(limit, rx.wait_for(|r| *r >= target))
            .await
            .map(|r| r.is_ok())
            .unwrap_or(false)
    }

    /// Follow the store's change stream for ever, re-listing when it breaks
    /// (store restart, or a revision compacted while the cache lagged).
    pub async fn follow(self: Arc<Self>, store: Arc<dyn StoreApi>) {
        loop {
            let from = self.revision();
            match store.watch(&self.gr, None, from).await {
                Ok(mut changes) => {
                    while let Some(item) = changes.next().await {
                        match item.and_then(|ev| self.apply(ev)) {
                            Ok(()) => {}
                            Err(e) => {
                                tracing::warn!(resource = %self.gr, error = %e.message, "watch cache lost the store's change stream; re-listing");
                                break;
                            }
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(resource = %self.gr, error = %e.message, "watch cache cannot watch the store; re-listing");
                }
            }
            tokio::time::sleep(RELIST_BACKOFF).await;
            self.relist(&store).await;
        }
    }

    /// Replace the state with a fresh list. Open watchers are closed (they
    /// may have missed changes) and re-watch from their last revision.
    async fn relist(&self, store: &Arc<dyn StoreApi>) {
        loop {
            match initial_state(store, &self.gr).await {
                Ok((objects, revision)) => {
                    let mut st = self.lock();
                    st.objects = objects;
                    st.history.clear();
                    st.history_bytes = 0;
                    st.oldest = revision;
                    st.revision = revision;
                    st.live = broadcast::channel(self.limits.watcher_buffer.max(1)).0;
                    drop(st);
                    self.revision.send_replace(revision);
                    return;
                }
                Err(e) => {
                    tracing::warn!(resource = %self.gr, error = %e.message, "watch cache cannot list the store; retrying");
                    tokio::time::sleep(RELIST_BACKOFF).await;
                }
            }
        }
    }

    /// Apply one event of the store's change stream.
    fn apply(&self, ev: ChangeEvent) -> ApiResult<()> {
        let kind = match ev.event_type {
            EventType::Bookmark => {
                let mut st = self.lock();
                if ev.revision > st.revision {
                    st.revision = ev.revision;
                    drop(st);
                    self.revision.send_replace(ev.revision);
                }
                return Ok(());
            }
            t @ (EventType::Added | EventType::Modified | EventType::Deleted) => t,
            // The store's stream ends with an error instead.
            EventType::Error => return Ok(()),
        };
        // Encode outside the lock.
        let object = Arc::new(CachedObject::new(&self.gr, ev.object, kind)?);
        let mut st = self.lock();
        if ev.revision <= st.revision {
            // Already applied (a re-list raced with the stream).
            return Ok(());
        }
        let prev = match kind {
            EventType::Deleted => st.objects.remove(&object.key),
            _ => st.objects.insert(object.key.clone(), object.clone()),
        };
        let change = Arc::new(Change {
            revision: ev.revision,
            kind,
            object,
            prev,
        });
        st.history_bytes += change.object.json_len();
        st.history.push_back(change.clone());
        // Bounded by count and by size (large objects), keeping the newest.
        while st.history.len() > self.limits.history
            || (st.history_bytes > self.limits.history_bytes && st.history.len() > 1)
        {
            if let Some(old) = st.history.pop_front() {
                st.oldest = old.revision;
                st.history_bytes -= old.object.json_len();
            }
        }
        st.revision = ev.revision;
        // No receivers is fine: nobody is watching.
        let _ = st.live.send(change);
        drop(st);
        self.revision.send_replace(ev.revision);
        Ok(())
    }
}

async fn initial_state(
    store: &Arc<dyn StoreApi>,
    gr: &GroupResource,
) -> ApiResult<(BTreeMap<Box<str>, Arc<CachedObject>>, u64)> {
    // Item by item: only one decoded object exists at a time.
    let mut list = store.list_stream(gr, None).await?;
    let mut objects = BTreeMap::new();
    while let Some(item) = list.items.next().await {
        let o = CachedObject::new(gr, item?, EventType::Added)?;
        objects.insert(o.key.clone(), Arc::new(o));
    }
    Ok((objects, list.resource_version))
}

/// The objects of `state` (in `namespace`, or all) as they were at
/// `revision`, which must lie in `[state.oldest, state.revision]`, from
/// `start_after` on, in key order.
pub(crate) fn objects_at<'a>(
    st: &'a State,
    revision: u64,
    namespace: Option<&'a str>,
    start_after: Option<&'a str>,
) -> Box<dyn Iterator<Item = &'a Arc<CachedObject>> + 'a> {
    let current = range(&st.objects, namespace, start_after);
    if revision >= st.revision {
        return Box::new(current.map(|(_, o)| o));
    }
    // The first change after `revision` to each key tells its state then.
    let mut then: BTreeMap<&str, Option<&Arc<CachedObject>>> = BTreeMap::new();
    for c in st.history.iter().filter(|c| c.revision > revision) {
        then.entry(&*c.object.key).or_insert(c.prev.as_ref());
    }
    let in_scope = move |k: &str| {
        namespace.is_none_or(|ns| k.strip_prefix(ns).is_some_and(|r| r.starts_with('/')))
            && start_after.is_none_or(|s| k > s)
    };
    let mut overlay: Vec<(&str, Option<&Arc<CachedObject>>)> =
        then.into_iter().filter(|(k, _)| in_scope(k)).collect();
    overlay.reverse();
    Box::new(Merge {
        current: current.peekable(),
        overlay,
    })
}

/// Current objects merged with the states an overlay gives for some keys.
struct Merge<'a, I: Iterator<Item = (&'a Box<str>, &'a Arc<CachedObject>)>> {
    current: std::iter::Peekable<I>,
    /// Sorted descending, so the next key is at the end.
    overlay: Vec<(&'a str, Option<&'a Arc<CachedObject>>)>,
}

impl<'a, I: Iterator<Item = (&'a Box<str>, &'a Arc<CachedObject>)>> Iterator for Merge<'a, I> {
    type Item = &'a Arc<CachedObject>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let next_cur = self.current.peek().map(|(k, _)| &***k);
            let next_over = self.overlay.last().map(|(k, _)| *k);
            match (next_cur, next_over) {
                (None, None) => return None,
                (Some(c), Some(o)) if o < c => {
                    if let Some((_, Some(v))) = self.overlay.pop() {
                        return Some(v);
                    }
                }
                (None, Some(_)) => {
                    if let Some((_, Some(v))) = self.overlay.pop() {
                        return Some(v);
                    }
                }
                (Some(c), Some(o)) if o == c => {
                    self.current.next();
                    if let Some((_, Some(v))) = self.overlay.pop() {
                        return Some(v);
                    }
                }
                (Some(_), _) => return self.current.next().map(|(_, v)| v),
            }
        }
    }
}

/// The current objects in `namespace` (or all) after `start_after`.
fn range<'a>(
    objects: &'a BTreeMap<Box<str>, Arc<CachedObject>>,
    namespace: Option<&'a str>,
    start_after: Option<&'a str>,
) -> impl Iterator<Item = (&'a Box<str>, &'a Arc<CachedObject>)> + 'a {
    use std::ops::Bound;
    let ns_start = namespace.map(|ns| format!("{ns}/"));
    let lower = match (start_after, ns_start.as_deref()) {
        (Some(s), Some(p)) if s >= p => Bound::Excluded(s),
        (_, Some(p)) => Bound::Included(p),
        (Some(s), None) => Bound::Excluded(s),
        (None, None) => Bound::Unbounded,
    };
    let iter = objects.range::<str, _>((lower, Bound::Unbounded));
    iter.take_while(move |(k, _)| ns_start.as_deref().is_none_or(|p| k.starts_with(p)))
}

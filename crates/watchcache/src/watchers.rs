//! Watches from the cache. Every watcher reads the resource's one broadcast
//! channel of `Arc<Change>`s, so an event is encoded once however many
//! watchers see it. The channel is bounded: a watcher that falls more than
//! its capacity behind is closed (its stream ends), as kube-apiserver closes
//! a watcher whose buffer is full, and the client re-watches from the last
//! revision it saw.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::StreamExt;
use keelson_api::{
    CacheEvent, CacheEventStream, CacheWatchRequest, ChangeStream, EventType, StoreApi, WatchStart,
};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

use crate::list::{fresh, Filter, FRESHNESS_WAIT};
use crate::object::CachedObject;
use crate::resource::{objects_at, Change, ResourceCache};

/// What a watcher sees of a change after its namespace and selectors: an
/// object that stops matching is DELETED (its last matching state at the
/// change's revision), one that starts matching is ADDED.
fn visible(
    filter: &Filter,
    kind: EventType,
    revision: u64,
    object: &CachedObject,
    prev: Option<&CachedObject>,
) -> ApiResult<Option<CacheEvent>> {
    let now = filter.admits(object);
    let before = prev.is_some_and(|p| filter.admits(p));
    let (format, include) = (filter.format, filter.include_object);
    let event = |t| object.event_with(t, revision, format, include).map(Some);
    match kind {
        EventType::Added if now => event(EventType::Added),
        EventType::Modified => match (before, now) {
            (true, true) => event(EventType::Modified),
            (false, true) => event(EventType::Added),
            (true, false) => match prev {
                Some(p) => CacheEvent::new(
                    EventType::Deleted,
                    revision,
                    format,
                    &p.at_revision(revision, format, include)?,
                )
                .map(Some),
                None => Ok(None),
            },
            (false, false) => Ok(None),
        },
        EventType::Deleted if before || now => event(EventType::Deleted),
        // Filtered out, or not a change (the cache keeps only changes).
        _ => Ok(None),
    }
}

/// One watcher reading the cache.
struct Watcher {
    rc: Arc<ResourceCache>,
    filter: Filter,
    /// Synthetic ADDED events still to send.
    initial: VecDeque<Arc<CachedObject>>,
    /// The revision of the initial state, sent as the initial-events-end bookmark.
    initial_end: Option<u64>,
    /// Changes read but not yet sent (history replay, or drained at a
    /// bookmark tick).
    pending: VecDeque<Arc<Change>>,
    live: broadcast::Receiver<Arc<Change>>,
    /// Every change up to here has been looked at.
    last: u64,
    bookmarks: Option<tokio::time::Interval>,
    bookmark_due: Option<u64>,
    done: bool,
}

/// What woke a waiting watcher.
enum Wake {
    Change(Result<Arc<Change>, RecvError>),
    Tick,
}

impl Watcher {
    async fn next(&mut self) -> Option<ApiResult<CacheEvent>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(o) = self.initial.pop_front() {
                let ev = o.event_with(
                    EventType::Added,
                    self.last,
                    self.filter.format,
                    self.filter.include_object,
                );
                self.done = ev.is_err();
                return Some(ev);
            }
            if let Some(rv) = self.initial_end.take() {
                return Some(Ok(CacheEvent::initial_events_end(rv, self.filter.format)));
            }
            if let Some(c) = self.pending.pop_front() {
                if let Some(ev) = self.see(&c) {
                    return Some(ev);
                }
                continue;
            }
            if let Some(rv) = self.bookmark_due.take() {
                return Some(Ok(CacheEvent::bookmark(rv, self.filter.format)));
            }
            let wake = match &mut self.bookmarks {
                Some(ticker) => tokio::select! {
                    c = self.live.recv() => Wake::Change(c),
                    _ = ticker.tick() => Wake::Tick,
                },
                None => Wake::Change(self.live.recv().await),
            };
            match wake {
                Wake::Change(Ok(c)) => {
                    if let Some(ev) = self.see(&c) {
                        return Some(ev);
                    }
                }
                Wake::Change(Err(e)) => return self.close(e),
                Wake::Tick => {
                    // Everything up to the cache's revision is in the
                    // channel by now: drain it, then bookmark that revision.
                    let upto = self.rc.revision();
                    loop {
                        match self.live.try_recv() {
                            Ok(c) => self.pending.push_back(c),
                            Err(TryRecvError::Empty) => break,
                            Err(TryRecvError::Lagged(n)) => {
                                return self.close(RecvError::Lagged(n))
                            }
                            Err(TryRecvError::Closed) => return self.close(RecvError::Closed),
                        }
                    }
                    let last_pending = self.pending.back().map(|c| c.revision).unwrap_or(0);
                    self.bookmark_due = Some(upto.max(self.last).max(last_pending));
                }
            }
        }
    }

    /// The event (if any) a change gives this watcher.
    fn see(&mut self, c: &Change) -> Option<ApiResult<CacheEvent>> {
        self.last = self.last.max(c.revision);
        match visible(
            &self.filter,
            c.kind,
            c.revision,
            &c.object,
            c.prev.as_deref(),
        ) {
            Ok(Some(ev)) => Some(Ok(ev)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn close(&mut self, why: RecvError) -> Option<ApiResult<CacheEvent>> {
        self.done = true;
        match why {
            RecvError::Lagged(n) => tracing::info!(
                resource = %self.rc.gr,
                last = self.last,
                "closing a watcher that fell {n} events behind"
            ),
            RecvError::Closed => tracing::info!(
                resource = %self.rc.gr,
                last = self.last,
                "closing a watcher: the cache re-listed"
            ),
        }
        None
    }
}

/// Serve one watch request.
pub(crate) async fn watch(
    store: &Arc<dyn StoreApi>,
    rc: Arc<ResourceCache>,
    req: CacheWatchRequest,
) -> ApiResult<CacheEventStream> {
    let mut filter = Filter::new(
        &req.gr,
        req.namespace.clone(),
        &req.label_selector,
        &req.field_selector,
        req.format,
    )?;
    filter.include_object = req.include_object;
    let (initial_state, end_marker) = match req.start {
        WatchStart::InitialState { initial_events_end } => {
            let target = store.current_revision().await?;
            if !rc.wait_for(target, FRESHNESS_WAIT).await {
                return Err(ApiError::too_large_resource_version(target, rc.revision()));
            }
            (true, initial_events_end)
        }
        WatchStart::InitialStateAny => (true, false),
        WatchStart::After(r) => {
            fresh(&rc, r).await?;
            (false, false)
        }
        WatchStart::Now => (false, false),
    };
    let bookmarks = (req.bookmark_interval_ms > 0).then(|| {
        let period = Duration::from_millis(req.bookmark_interval_ms);
        tokio::time::interval_at(tokio::time::Instant::now() + period, period)
    });
    let watcher = {
        let st = rc.lock();
        let after = match req.start {
            WatchStart::After(r) => r,
            _ => st.revision,
        };
        if after < st.oldest {
            Err(filter)
        } else {
            let initial: VecDeque<Arc<CachedObject>> = if initial_state {
                objects_at(&st, st.revision, req.namespace.as_deref(), None)
                    .filter(|o| filter.matches(o))
                    .cloned()
                    .collect()
            } else {
                VecDeque::new()
            };
            let pending = st
                .history
                .iter()
                .filter(|c| c.revision > after)
                .cloned()
                .collect();
            Ok(Watcher {
                rc: rc.clone(),
                initial,
                initial_end: end_marker.then_some(st.revision),
                pending,
                live: st.live.subscribe(),
                last: after,
                bookmarks,
                bookmark_due: None,
                done: false,
                filter,
            })
        }
    };
    let watcher = match watcher {
        Ok(w) => w,
        Err(filter) => return watch_store(store, req, filter).await,
    };
    Ok(futures::stream::unfold(watcher, |mut w| async move {
        w.next().await.map(|item| (item, w))
    })
    .boxed())
}

/// A watch older than the cache's history: the store may still have it.
async fn watch_store(
    store: &Arc<dyn StoreApi>,
    req: CacheWatchRequest,
    filter: Filter,
) -> ApiResult<CacheEventStream> {
    let WatchStart::After(r) = req.start else {
        return Err(ApiError::internal("watch cache: history lost its start"));
    };
    let changes = store.watch(&req.gr, req.namespace.as_deref(), r).await?;
    Ok(from_store(req.gr, filter, changes))
}

/// A watch older than the cache's history, served from the store's change
/// stream (encoded per watcher; such resumes are rare).
fn from_store(gr: GroupResource, filter: Filter, changes: ChangeStream) -> CacheEventStream {
    changes
        .filter_map(move |item| {
            let out = match item {
                Err(e) => Some(Err(e)),
                Ok(ev) => {
                    let kind = match ev.event_type {
                        t if t.is_change() => Some(t),
                        _ => None,
                    };
                    kind.and_then(|kind| {
                        let t = kind;
                        let objects = CachedObject::new(&gr, ev.object, t).and_then(|o| {
                            let p = ev
                                .prev_object
                                .map(|p| CachedObject::new(&gr, p, EventType::Modified))
                                .transpose()?;
                            Ok((o, p))
                        });
                        match objects {
                            Ok((o, p)) => {
                                visible(&filter, kind, ev.revision, &o, p.as_ref()).transpose()
                            }
                            Err(e) => Some(Err(e)),
                        }
                    })
                }
            };
            futures::future::ready(out)
        })
        .boxed()
}

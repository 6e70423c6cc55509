//! Shared upstream watch streams: the watchers of one gateway that watch the
//! same collection the same way (resource, namespace, selectors, format,
//! `includeObject`) read one upstream watch instead of one each.
//!
//! A group owns the upstream stream (a task reads it), a small replay ring
//! of its latest changes and a bounded broadcast channel. A watch that
//! starts "now", or after a revision the group has already passed and its
//! ring still covers, attaches to the group: it gets the ring's changes
//! after its revision, then every later one, each event the same shared
//! `Bytes`. A subscriber that falls more than the channel's capacity
//! behind is closed (its stream ends), as the watch cache closes a watcher
//! whose buffer is full; the client re-watches from the last revision it
//! saw. When the upstream stream breaks (its replica died) or the replica
//! closes it, the group resumes it after the last revision it received, on
//! the next replica, so its subscribers see neither a gap nor a
//! duplicate; when it cannot, they get the failure and resume on their
//! own. The upstream stream ends a short while after its last subscriber
//! leaves.
//!
//! Watches with initial events (`sendInitialEvents`, or no revision) need
//! their own snapshot and are passed through unshared.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use futures::stream::StreamExt;
use keelson_api::{
    CacheEvent, CacheEventStream, CacheList, CacheListRequest, CacheWatchRequest, EventType,
    IncludeObject, WatchCacheApi, WatchStart,
};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use keelson_codec::Format;
use tokio::sync::{broadcast, watch, Notify};
use tokio::time::Instant;

/// How a [`SharedWatches`] shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharingLimits {
    /// How many events a subscriber may fall behind its group's newest one
    /// before it is closed (the watch cache's watcher buffer).
    pub queue: usize,
    /// How many of its latest changes a group keeps for watches that
    /// start after a revision it has already passed.
    pub ring: usize,
    /// How long a group without subscribers keeps its upstream stream.
    pub linger: Duration,
    /// How often the upstream stream sends a bookmark: the group's
    /// position follows the cache even when no change matches.
    pub progress_every: Duration,
    /// How long a watch after a revision the group has not reached yet
    /// waits for it before opening an upstream stream of its own.
    pub join_wait: Duration,
}

impl Default for SharingLimits {
    fn default() -> Self {
        SharingLimits {
            queue: 1_024,
            ring: 256,
            linger: Duration::from_secs(5),
            progress_every: Duration::from_millis(500),
            join_wait: Duration::from_millis(1_500),
        }
    }
}

/// A [`WatchCacheApi`] whose watches share upstream streams (see the
/// module documentation); lists and readiness go to the inner cache as
/// they are.
pub struct SharedWatches {
    inner: Arc<dyn WatchCacheApi>,
    groups: Arc<Mutex<HashMap<Key, Arc<Group>>>>,
    limits: SharingLimits,
    stats: Arc<Stats>,
    /// Where the groups' upstream readers run: the runtime the value was
    /// made in (a gateway makes it in its gRPC runtime, so that the readers
    /// are not queued behind the watchers they feed).
    spawner: Option<tokio::runtime::Handle>,
}

impl fmt::Debug for SharedWatches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedWatches")
            .field("limits", &self.limits)
            .field("upstream_streams", &self.upstream_streams())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Stats {
    /// Upstream streams open now.
    open: AtomicUsize,
    /// Watch calls made to the inner cache for groups (opens and resumes).
    calls: AtomicU64,
}

/// What watchers must have in common to share a stream.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    gr: GroupResource,
    namespace: Option<String>,
    label_selector: String,
    field_selector: String,
    format: Format,
    include_object: IncludeObject,
}

impl Key {
    fn of(req: &CacheWatchRequest) -> Key {
        Key {
            gr: req.gr.clone(),
            namespace: req.namespace.clone(),
            label_selector: req.label_selector.clone(),
            field_selector: req.field_selector.clone(),
            format: req.format,
            include_object: req.include_object,
        }
    }
}

/// What a group sends its subscribers.
#[derive(Debug, Clone)]
enum Msg {
    Event(CacheEvent),
    /// The upstream stream failed and could not be resumed.
    Fail(ApiError),
    /// The upstream stream ended (the replica closed it) and could not be
    /// resumed: subscribers end, as they would have.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The upstream call is in flight.
    Opening,
    Open,
    /// No more subscribers join (it retired, or its stream failed).
    Ended,
}

struct State {
    phase: Phase,
    /// The upstream call's error, for watchers waiting on the same start.
    open_error: Option<ApiError>,
    /// Every change up to here has been received.
    position: Option<u64>,
    /// Every matching change after this revision is in the ring or later.
    floor: Option<u64>,
    ring: VecDeque<CacheEvent>,
    /// A change fell out of the ring since the stream opened.
    evicted: bool,
    subscribers: usize,
}

struct Group {
    /// Where the upstream stream first started.
    start: WatchStart,
    state: Mutex<State>,
    tx: broadcast::Sender<Msg>,
    /// Bumped whenever the phase or the position changes.
    progress: watch::Sender<u64>,
    /// Notified when the last subscriber leaves.
    left: Notify,
}

/// What a watcher can do with a group.
enum Join {
    Attached(Subscription),
    /// The upstream call failed with what a direct call would have
    /// answered.
    Failed(ApiError),
    /// Wait for the upstream call.
    WaitOpen,
    /// Wait for the group to pass the watch's revision.
    WaitPosition,
    /// Not this group: open another.
    New,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Group {
    fn new(start: WatchStart, limits: &SharingLimits) -> Group {
        Group {
            start,
            state: Mutex::new(State {
                phase: Phase::Opening,
                open_error: None,
                position: None,
                floor: None,
                ring: VecDeque::new(),
                evicted: false,
                subscribers: 0,
            }),
            tx: broadcast::channel(limits.queue.max(1)).0,
            progress: watch::Sender::new(0),
            left: Notify::new(),
        }
    }

    fn bump(&self) {
        self.progress.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// Attach a watch starting at `start` if this group serves it.
    /// `waited_open`: the watcher waited for this group's upstream call.
    fn join(self: &Arc<Self>, req: &CacheWatchRequest, waited_open: bool) -> Join {
        let mut st = lock(&self.state);
        match st.phase {
            Phase::Opening => return Join::WaitOpen,
            Phase::Ended => {
                return match &st.open_error {
                    Some(e) if waited_open && req.start == self.start => Join::Failed(e.clone()),
                    _ => Join::New,
                }
            }
            Phase::Open => {}
        }
        let (replay, after): (VecDeque<CacheEvent>, u64) = match req.start {
            // A watch that waited for a "now" stream's opening gets what
            // the stream received since (nothing if it lost some already).
            WatchStart::Now if waited_open && self.start == WatchStart::Now => {
                if st.evicted {
                    return Join::New;
                }
                (st.ring.clone(), 0)
            }
            WatchStart::Now => (VecDeque::new(), 0),
            WatchStart::After(r) => match (st.floor, st.position) {
                (Some(floor), _) if r < floor => return Join::New,
                (Some(_), Some(position)) if r <= position => (
                    st.ring.iter().filter(|e| e.revision > r).cloned().collect(),
                    r,
                ),
                _ => return Join::WaitPosition,
            },
            _ => return Join::New,
        };
        st.subscribers += 1;
        let live = self.tx.subscribe();
        drop(st);
        let bookmarks = (req.bookmark_interval_ms > 0).then(|| {
            let every = Duration::from_millis(req.bookmark_interval_ms);
            (every, Instant::now() + every)
        });
        Join::Attached(Subscription {
            group: self.clone(),
            replay,
            live,
            after,
            bookmarks,
            done: false,
        })
    }

    /// Take one upstream event in: the ring (at most `ring` changes), the
    /// position, then every subscriber.
    fn publish(&self, ev: CacheEvent, ring: usize) {
        let mut st = lock(&self.state);
        if ev.event_type.is_change() {
            if st.floor.is_none() {
                st.floor = Some(ev.revision.saturating_sub(1));
            }
            st.ring.push_back(ev.clone());
            while st.ring.len() > ring {
                if let Some(old) = st.ring.pop_front() {
                    st.floor = Some(old.revision);
                    st.evicted = true;
                }
            }
        } else if st.floor.is_none() {
            st.floor = Some(ev.revision);
        }
        st.position = Some(st.position.map_or(ev.revision, |p| p.max(ev.revision)));
        // Under the lock: a joiner sees the ring and the channel agree.
        let _ = self.tx.send(Msg::Event(ev));
        drop(st);
        self.bump();
    }

    fn subscribers(&self) -> usize {
        lock(&self.state).subscribers
    }
}

/// One watcher reading a group.
struct Subscription {
    group: Arc<Group>,
    /// Changes from the ring, sent first.
    replay: VecDeque<CacheEvent>,
    live: broadcast::Receiver<Msg>,
    /// Only changes after this revision.
    after: u64,
    /// The watcher's bookmark interval and when the next one is due.
    bookmarks: Option<(Duration, Instant)>,
    done: bool,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut st = lock(&self.group.state);
        st.subscribers = st.subscribers.saturating_sub(1);
        if st.subscribers == 0 {
            drop(st);
            self.group.left.notify_one();
        }
    }
}

impl Subscription {
    async fn next(&mut self) -> Option<ApiResult<CacheEvent>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(ev) = self.replay.pop_front() {
                return Some(Ok(ev));
            }
            match self.live.recv().await {
                Ok(Msg::Event(ev)) if ev.event_type.is_change() => {
                    if ev.revision > self.after {
                        return Some(Ok(ev));
                    }
                }
                Ok(Msg::Event(ev)) => {
                    // The group's bookmarks, passed on at the watcher's own
                    // interval.
                    if ev.event_type != EventType::Bookmark || ev.revision < self.after {
                        continue;
                    }
                    if let Some((every, due)) = &mut self.bookmarks {
                        let now = Instant::now();
                        if now >= *due {
                            *due = now + *every;
                            return Some(Ok(ev));
                        }
                    }
                }
                Ok(Msg::Fail(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(Msg::End) | Err(broadcast::error::RecvError::Closed) => {
                    self.done = true;
                    return None;
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::info!("closing a shared watcher that fell {n} events behind");
                    self.done = true;
                    return None;
                }
            }
        }
    }

    fn into_stream(self) -> CacheEventStream {
        futures::stream::unfold(
            self,
            |mut s| async move { s.next().await.map(|item| (item, s)) },
        )
        .boxed()
    }
}

impl SharedWatches {
    /// Share the watches of `inner` with the default [`SharingLimits`].
    pub fn new(inner: Arc<dyn WatchCacheApi>) -> Self {
        Self::with_limits(inner, SharingLimits::default())
    }

    /// Share the watches of `inner` with `limits`. The upstream readers
    /// run on the Tokio runtime current here (else on the caller's).
    pub fn with_limits(inner: Arc<dyn WatchCacheApi>, limits: SharingLimits) -> Self {
        SharedWatches {
            inner,
            groups: Arc::new(Mutex::new(HashMap::new())),
            limits,
            stats: Arc::new(Stats::default()),
            spawner: tokio::runtime::Handle::try_current().ok(),
        }
    }

    /// Upstream watch streams open now.
    pub fn upstream_streams(&self) -> usize {
        self.stats.open.load(Ordering::Relaxed)
    }

    /// Watch calls made to the inner cache for shared streams so far
    /// (openings and resumes).
    pub fn upstream_calls(&self) -> u64 {
        self.stats.calls.load(Ordering::Relaxed)
    }

    /// The group for `key`, a new one starting at `start` when there is
    /// none or `replace` (the current one cannot serve the watch).
    fn group(
        &self,
        req: &CacheWatchRequest,
        key: &Key,
        replace: Option<&Arc<Group>>,
    ) -> Arc<Group> {
        let mut groups = lock(&self.groups);
        if let Some(g) = groups.get(key) {
            let stale = replace.is_some_and(|r| Arc::ptr_eq(r, g));
            if !stale && lock(&g.state).phase != Phase::Ended {
                return g.clone();
            }
        }
        let g = Arc::new(Group::new(req.start, &self.limits));
        groups.insert(key.clone(), g.clone());
        let upstream = CacheWatchRequest {
            bookmark_interval_ms: self.limits.progress_every.as_millis().max(1) as u64,
            ..req.clone()
        };
        let reader = run(
            g.clone(),
            key.clone(),
            self.inner.clone(),
            Arc::downgrade(&self.groups),
            upstream,
            self.limits,
            self.stats.clone(),
        );
        match &self.spawner {
            Some(rt) => drop(rt.spawn(reader)),
            None => drop(tokio::spawn(reader)),
        }
        g
    }
}

/// Read a group's upstream stream until the group retires or the stream
/// fails for good.
async fn run(
    g: Arc<Group>,
    key: Key,
    inner: Arc<dyn WatchCacheApi>,
    registry: Weak<Mutex<HashMap<Key, Arc<Group>>>>,
    req: CacheWatchRequest,
    limits: SharingLimits,
    stats: Arc<Stats>,
) {
    stats.calls.fetch_add(1, Ordering::Relaxed);
    let mut events = match inner.watch(req.clone()).await {
        Ok(s) => s,
        Err(e) => {
            retire(&g, &key, &registry, Some(e));
            return;
        }
    };
    stats.open.fetch_add(1, Ordering::Relaxed);
    {
        let mut st = lock(&g.state);
        st.phase = Phase::Open;
        if let WatchStart::After(r) = req.start {
            st.position = Some(r);
            st.floor = Some(r);
        }
    }
    g.bump();
    let mut linger: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        if linger.is_none() && g.subscribers() == 0 {
            linger = Some(Box::pin(tokio::time::sleep(limits.linger)));
        }
        tokio::select! {
            item = events.next() => {
                let failure = match item {
                    Some(Ok(ev)) => {
                        g.publish(ev, limits.ring);
                        continue;
                    }
                    Some(Err(e)) if !e.is_unavailable() => {
                        finish(&g, &key, &registry, Msg::Fail(e));
                        break;
                    }
                    Some(Err(e)) => Msg::Fail(e),
                    None => Msg::End,
                };
                // The replica went away or closed the stream: resume after
                // the last revision received, on the next replica.
                // A stream from "now" that has not received anything yet
                // has nothing to lose: it starts from "now" again.
                let position = lock(&g.state).position;
                let again = match (position, req.start) {
                    (Some(rv), _) => Some(WatchStart::After(rv)),
                    (None, WatchStart::Now) => Some(WatchStart::Now),
                    (None, _) => None,
                };
                let resumed = match again {
                    Some(start) => {
                        stats.calls.fetch_add(1, Ordering::Relaxed);
                        let again = CacheWatchRequest { start, ..req.clone() };
                        match inner.watch(again).await {
                            Ok(s) => Some(s),
                            Err(e) => {
                                tracing::warn!(error = %e.message, "cannot resume a shared watch");
                                None
                            }
                        }
                    }
                    None => None,
                };
                match resumed {
                    Some(s) => {
                        tracing::info!(resource = %key.gr, after = ?position, "shared watch resumed");
                        events = s;
                    }
                    None => {
                        finish(&g, &key, &registry, failure);
                        break;
                    }
                }
            }
            _ = g.left.notified() => {}
            _ = async { if let Some(l) = linger.as_mut() { l.await } }, if linger.is_some() => {
                if retire_if_unused(&g, &key, &registry) {
                    break;
                }
                linger = None;
            }
        }
    }
    stats.open.fetch_sub(1, Ordering::Relaxed);
}

/// End a group: no one joins it any more.
fn retire(
    g: &Arc<Group>,
    key: &Key,
    registry: &Weak<Mutex<HashMap<Key, Arc<Group>>>>,
    open_error: Option<ApiError>,
) {
    if let Some(registry) = registry.upgrade() {
        let mut groups = lock(&registry);
        if groups.get(key).is_some_and(|x| Arc::ptr_eq(x, g)) {
            groups.remove(key);
        }
    }
    {
        let mut st = lock(&g.state);
        st.phase = Phase::Ended;
        st.open_error = open_error;
    }
    g.bump();
}

/// End a group whose stream cannot go on, telling its subscribers.
fn finish(g: &Arc<Group>, key: &Key, registry: &Weak<Mutex<HashMap<Key, Arc<Group>>>>, msg: Msg) {
    retire(g, key, registry, None);
    let _ = g.tx.send(msg);
}

/// Retire a group that still has no subscribers after its linger.
fn retire_if_unused(
    g: &Arc<Group>,
    key: &Key,
    registry: &Weak<Mutex<HashMap<Key, Arc<Group>>>>,
) -> bool {
    let Some(registry) = registry.upgrade() else {
        return true;
    };
    let mut groups = lock(&registry);
    let mut st = lock(&g.state);
    if st.subscribers > 0 {
        return false;
    }
    st.phase = Phase::Ended;
    drop(st);
    if groups.get(key).is_some_and(|x| Arc::ptr_eq(x, g)) {
        groups.remove(key);
    }
    drop(groups);
    g.bump();
    true
}

/// Watches that start from a revision (or now) can share; those with
/// initial events need their own snapshot.
fn shareable(start: WatchStart) -> bool {
    matches!(start, WatchStart::After(_) | WatchStart::Now)
}

#[async_trait::async_trait]
impl WatchCacheApi for SharedWatches {
    async fn list(&self, req: CacheListRequest) -> ApiResult<CacheList> {
        self.inner.list(req).await
    }

    /// Errors before the stream starts are the inner cache's for the same
    /// request (a group's upstream call answers every watcher that waited
    /// for it with the same start).
    async fn watch(&self, req: CacheWatchRequest) -> ApiResult<CacheEventStream> {
        if !shareable(req.start) {
            return self.inner.watch(req).await;
        }
        let key = Key::of(&req);
        let mut g = self.group(&req, &key, None);
        let mut waited_open = false;
        let mut position_deadline: Option<Instant> = None;
        loop {
            let mut progress = g.progress.subscribe();
            match g.join(&req, waited_open) {
                Join::Attached(s) => return Ok(s.into_stream()),
                Join::Failed(e) => return Err(e),
                Join::New => {
                    waited_open = false;
                    g = self.group(&req, &key, Some(&g));
                }
                Join::WaitOpen => {
                    waited_open = true;
                    // Resolved by the upstream call (itself bounded).
                    let _ = progress.changed().await;
                }
                Join::WaitPosition => {
                    let deadline = *position_deadline
                        .get_or_insert_with(|| Instant::now() + self.limits.join_wait);
                    if tokio::time::timeout_at(deadline, progress.changed())
                        .await
                        .is_err()
                    {
                        waited_open = false;
                        g = self.group(&req, &key, Some(&g));
                    }
                }
            }
        }
    }

    async fn ready(&self) -> ApiResult<()> {
        self.inner.ready().await
    }
}

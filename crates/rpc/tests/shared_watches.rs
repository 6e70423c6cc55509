//! Shared upstream watch streams (`SharedWatches`) over real gRPC: the real
//! `LocalWatchCache` over a real sled store, served by tonic servers on
//! loopback (two of them play two replicas of the same cache), called
//! through `RemoteWatchCache`. Every watcher's events are compared with a
//! direct watch of the local cache.

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use keelson_api::{
    CacheEvent, CacheEventStream, CacheWatchRequest, CreateOptions, EventType, Format, StoreApi,
    WatchCacheApi, WatchStart,
};
use keelson_apimachinery::{ApiError, GroupResource, ObjectKey};
use keelson_rpc::{RemoteWatchCache, SharedWatches, SharingLimits, WatchCacheGrpc};
use keelson_storage::{LocalStore, StoreConfig};
use keelson_watchcache::{LocalWatchCache, WatchCacheConfig};
use serde_json::json;
use tonic::transport::server::Router;
use tonic::transport::Server;

/// How long a test waits for one watch event.
const EVENT_WAIT: Duration = Duration::from_secs(10);

fn configmaps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

/// A sled store and the local watch cache over it.
struct Env {
    store: LocalStore,
    local: Arc<LocalWatchCache>,
    _dir: tempfile::TempDir,
}

impl Env {
    async fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig {
            compaction_interval: None,
            bootstrap_namespaces: false,
            ..StoreConfig::default()
        };
        let store = LocalStore::open(dir.path(), config).await.unwrap();
        let local = Arc::new(LocalWatchCache::new(
            Arc::new(store.clone()),
            WatchCacheConfig::default(),
        ));
        Env {
            store,
            local,
            _dir: dir,
        }
    }

    fn router(&self) -> Router {
        Server::builder().add_service(WatchCacheGrpc::server(self.local.clone()))
    }

    async fn create(&self, ns: &str, name: &str, app: &str) -> u64 {
        let key = ObjectKey::new(configmaps(), ns, name);
        let obj = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
            "data": {"v": "x"},
        });
        self.store
            .create(&key, obj, CreateOptions::default())
            .await
            .unwrap();
        self.store.current_revision().await.unwrap()
    }

    async fn revision(&self) -> u64 {
        self.store.current_revision().await.unwrap()
    }
}

fn req(start: WatchStart) -> CacheWatchRequest {
    CacheWatchRequest {
        gr: configmaps(),
        namespace: None,
        label_selector: String::new(),
        field_selector: String::new(),
        start,
        bookmark_interval_ms: 0,
        format: Format::JSON,
        include_object: keelson_api::IncludeObject::Metadata,
    }
}

/// The next change of a watch (bookmarks skipped).
async fn next_change(events: &mut CacheEventStream) -> CacheEvent {
    loop {
        let ev = tokio::time::timeout(EVENT_WAIT, events.next())
            .await
            .expect("no watch event in time")
            .expect("the watch ended")
            .unwrap();
        if ev.event_type.is_change() {
            return ev;
        }
    }
}

async fn changes(events: &mut CacheEventStream, n: usize) -> Vec<CacheEvent> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(next_change(events).await);
    }
    out
}

/// Revision and frame of each event, to compare.
fn frames(evs: &[CacheEvent]) -> Vec<(u64, EventType, bytes::Bytes)> {
    evs.iter()
        .map(|e| (e.revision, e.event_type, e.frame.clone()))
        .collect()
}

/// Wait (bounded) until `cond` holds.
async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..200 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not reached in time");
}

fn shared(remote: RemoteWatchCache, limits: SharingLimits) -> Arc<SharedWatches> {
    Arc::new(SharedWatches::with_limits(Arc::new(remote), limits))
}

#[tokio::test]
async fn watchers_of_one_collection_share_one_upstream_stream() {
    let env = Env::new().await;
    env.create("a", "before", "web").await;
    let server = support::start(env.router(), None).await;
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap(),
        SharingLimits::default(),
    );
    let rv = env.revision().await;
    let direct = env.local.watch(req(WatchStart::After(rv))).await.unwrap();
    // Twenty watchers from the same revision, opened at the same time.
    let opened =
        futures::future::join_all((0..20).map(|_| shared.watch(req(WatchStart::After(rv))))).await;
    let mut watchers: Vec<CacheEventStream> = opened.into_iter().map(Result::unwrap).collect();
    assert_eq!(shared.upstream_calls(), 1);
    assert_eq!(shared.upstream_streams(), 1);

    for i in 0..30 {
        env.create(
            "a",
            &format!("cm-{i}"),
            if i % 2 == 0 { "web" } else { "db" },
        )
        .await;
    }
    let mut direct = direct;
    let expected = frames(&changes(&mut direct, 30).await);
    assert_eq!(expected.len(), 30);
    for w in &mut watchers {
        assert_eq!(frames(&changes(w, 30).await), expected);
    }
    // The frames are the cache's bytes, not copies per watcher.
    let a = next_or_none(&mut watchers[0]).await;
    assert!(a.is_none(), "nothing more: {a:?}");

    // A watch from "now" joins too.
    let mut now = shared.watch(req(WatchStart::Now)).await.unwrap();
    let last = env.create("a", "late", "web").await;
    assert_eq!(next_change(&mut now).await.revision, last);
    for w in &mut watchers {
        assert_eq!(next_change(w).await.revision, last);
    }
    assert_eq!(shared.upstream_calls(), 1);
    drop(watchers);
    drop(now);
    server.stop().await;
}

/// The next item within a short while, if any.
async fn next_or_none(events: &mut CacheEventStream) -> Option<CacheEvent> {
    match tokio::time::timeout(Duration::from_millis(300), events.next()).await {
        Ok(Some(Ok(ev))) if ev.event_type.is_change() => Some(ev),
        _ => None,
    }
}

#[tokio::test]
async fn a_watch_after_a_revision_the_stream_passed_replays_its_ring() {
    let env = Env::new().await;
    let server = support::start(env.router(), None).await;
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap(),
        SharingLimits::default(),
    );
    let rv = env.revision().await;
    let mut first = shared.watch(req(WatchStart::After(rv))).await.unwrap();
    let mut revs = Vec::new();
    for i in 0..5 {
        revs.push(env.create("a", &format!("cm-{i}"), "web").await);
    }
    let got: Vec<u64> = changes(&mut first, 5)
        .await
        .iter()
        .map(|e| e.revision)
        .collect();
    assert_eq!(got, revs);
    // A watcher that listed at the second write: the last three, then on.
    let mut second = shared.watch(req(WatchStart::After(revs[1]))).await.unwrap();
    let got: Vec<u64> = changes(&mut second, 3)
        .await
        .iter()
        .map(|e| e.revision)
        .collect();
    assert_eq!(got, revs[2..]);
    let last = env.create("a", "more", "web").await;
    assert_eq!(next_change(&mut second).await.revision, last);
    assert_eq!(next_change(&mut first).await.revision, last);
    assert_eq!(
        shared.upstream_calls(),
        1,
        "one upstream stream served both"
    );
    drop((first, second));
    server.stop().await;
}

#[tokio::test]
async fn different_selectors_or_formats_do_not_share() {
    let env = Env::new().await;
    let server = support::start(env.router(), None).await;
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap(),
        SharingLimits::default(),
    );
    let rv = env.revision().await;
    let web = CacheWatchRequest {
        label_selector: "app=web".into(),
        ..req(WatchStart::After(rv))
    };
    let db = CacheWatchRequest {
        label_selector: "app=db".into(),
        ..req(WatchStart::After(rv))
    };
    let protobuf = CacheWatchRequest {
        format: Format::object(keelson_codec::Encoding::Protobuf),
        ..req(WatchStart::After(rv))
    };
    let ns_b = CacheWatchRequest {
        namespace: Some("b".into()),
        ..req(WatchStart::After(rv))
    };
    let mut streams = Vec::new();
    for r in [&web, &db, &protobuf, &ns_b, &web] {
        streams.push(shared.watch(r.clone()).await.unwrap());
    }
    assert_eq!(
        shared.upstream_calls(),
        4,
        "web twice shares, the rest do not"
    );
    assert_eq!(shared.upstream_streams(), 4);

    for (ns, name, app) in [("a", "w1", "web"), ("a", "d1", "db"), ("b", "w2", "web")] {
        env.create(ns, name, app).await;
    }
    // Each gets what a direct watch of the local cache with its request
    // gets, byte for byte.
    for (r, s, n) in [
        (&web, 0, 2),
        (&db, 1, 1),
        (&protobuf, 2, 3),
        (&ns_b, 3, 1),
        (&web, 4, 2),
    ] {
        let mut direct = env.local.watch(r.clone()).await.unwrap();
        let expected = frames(&changes(&mut direct, n).await);
        assert_eq!(
            frames(&changes(&mut streams[s], n).await),
            expected,
            "{r:?}"
        );
        assert!(next_or_none(&mut streams[s]).await.is_none());
    }
    drop(streams);
    server.stop().await;
}

#[tokio::test]
async fn a_slow_watcher_is_closed_without_stalling_the_others() {
    let env = Env::new().await;
    let server = support::start(env.router(), None).await;
    let limits = SharingLimits {
        queue: 8,
        ..SharingLimits::default()
    };
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap(),
        limits,
    );
    let rv = env.revision().await;
    let mut slow = shared.watch(req(WatchStart::After(rv))).await.unwrap();
    let mut fast = shared.watch(req(WatchStart::After(rv))).await.unwrap();
    // The reading watcher takes each event before the next write, so it
    // never has more than one queued however the runtime schedules tasks
    // (a reader task beside the writes could itself fall 8 behind).
    let mut revs = Vec::new();
    let mut got = Vec::new();
    for i in 0..40 {
        revs.push(env.create("a", &format!("cm-{i}"), "web").await);
        got.push(next_change(&mut fast).await.revision);
    }
    assert_eq!(got, revs, "the reading watcher got every event");
    // The one that never read fell more than 8 events behind: its stream
    // ends (the client re-watches from its last revision), without error.
    let mut seen = 0;
    loop {
        match tokio::time::timeout(EVENT_WAIT, slow.next()).await.unwrap() {
            Some(Ok(_)) => seen += 1,
            Some(Err(e)) => panic!("a slow watcher ends without an error: {e}"),
            None => break,
        }
    }
    assert!(seen < 40, "closed before the end, after {seen} events");
    // The others go on.
    let last = env.create("a", "after", "web").await;
    assert_eq!(next_change(&mut fast).await.revision, last);
    drop(fast);
    server.stop().await;
}

/// Serve `router` on its own runtime, so that shutting the runtime down
/// drops every connection at once (a crashed replica).
fn start_crashable(router: Router) -> (String, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    rt.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let _ = keelson_rpc::serve(listener, router, std::future::pending()).await;
    });
    (endpoint, rt)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replica_resumes_every_watcher_without_gap_or_duplicate() {
    let env = Env::new().await;
    // Two replicas of the same cache; the first call goes to the first.
    let (first, first_rt) = start_crashable(env.router());
    let (second, second_rt) = start_crashable(env.router());
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[first, second]).unwrap(),
        SharingLimits::default(),
    );
    let rv = env.revision().await;
    let mut direct = env.local.watch(req(WatchStart::After(rv))).await.unwrap();
    let mut watchers = Vec::new();
    for _ in 0..10 {
        watchers.push(shared.watch(req(WatchStart::After(rv))).await.unwrap());
    }
    for i in 0..10 {
        env.create("a", &format!("before-{i}"), "web").await;
    }
    for w in &mut watchers {
        changes(w, 10).await;
    }
    first_rt.shutdown_background();
    // Writes while the group finds the other replica, and after.
    for i in 0..10 {
        env.create("a", &format!("after-{i}"), "web").await;
    }
    let expected = frames(&changes(&mut direct, 20).await[10..]);
    for w in &mut watchers {
        assert_eq!(frames(&changes(w, 10).await), expected);
        assert!(next_or_none(w).await.is_none(), "no duplicate");
    }
    assert_eq!(shared.upstream_calls(), 2, "one open, one resume");
    assert_eq!(shared.upstream_streams(), 1);
    drop(watchers);
    second_rt.shutdown_background();
}

#[tokio::test]
async fn the_upstream_stream_ends_after_its_last_watcher_leaves() {
    let env = Env::new().await;
    let server = support::start(env.router(), None).await;
    let limits = SharingLimits {
        linger: Duration::from_millis(100),
        ..SharingLimits::default()
    };
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap(),
        limits,
    );
    let rv = env.revision().await;
    let a = shared.watch(req(WatchStart::After(rv))).await.unwrap();
    let b = shared.watch(req(WatchStart::After(rv))).await.unwrap();
    assert_eq!(shared.upstream_streams(), 1);
    drop(a);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(shared.upstream_streams(), 1, "one watcher is left");
    drop(b);
    let s = shared.clone();
    eventually("the upstream stream ends", move || {
        s.upstream_streams() == 0
    })
    .await;
    // A new watcher opens a new stream.
    let rv = env.revision().await;
    let mut c = shared.watch(req(WatchStart::After(rv))).await.unwrap();
    assert_eq!(shared.upstream_calls(), 2);
    let last = env.create("a", "x", "web").await;
    assert_eq!(next_change(&mut c).await.revision, last);
    drop(c);
    server.stop().await;
}

#[tokio::test]
async fn errors_are_the_caches_own() {
    let env = Env::new().await;
    env.create("a", "x", "web").await;
    let server = support::start(env.router(), None).await;
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap(),
        SharingLimits::default(),
    );
    let err = |r: ApiError| (r.code, r.reason, r.message);
    // A bad selector: 400, for every watcher waiting on the same call.
    let bad = CacheWatchRequest {
        label_selector: "app in (".into(),
        ..req(WatchStart::Now)
    };
    let local = err(env.local.watch(bad.clone()).await.err().unwrap());
    let (a, b) = tokio::join!(shared.watch(bad.clone()), shared.watch(bad.clone()));
    assert_eq!(err(a.err().unwrap()), local);
    assert_eq!(err(b.err().unwrap()), local);
    // A revision the cache never reaches: 504 after waiting.
    let future = req(WatchStart::After(1_000_000));
    let local = err(env.local.watch(future.clone()).await.err().unwrap());
    assert_eq!(local.0, 504);
    assert_eq!(err(shared.watch(future).await.err().unwrap()), local);
    // Initial-state watches are not shared: the cache's own snapshot.
    let mut initial = shared
        .watch(req(WatchStart::InitialState {
            initial_events_end: true,
        }))
        .await
        .unwrap();
    let ev = next_change(&mut initial).await;
    assert_eq!(ev.event_type, EventType::Added);
    drop(initial);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_from_now_that_saw_nothing_restarts_from_now_elsewhere() {
    let env = Env::new().await;
    let old = env.create("a", "old", "web").await;
    // The cache's follower task runs on this runtime, not a replica's.
    drop(env.local.watch(req(WatchStart::Now)).await.unwrap());
    let (first, first_rt) = start_crashable(env.router());
    let (second, second_rt) = start_crashable(env.router());
    let shared = shared(
        RemoteWatchCache::connect_lazy(&[first, second]).unwrap(),
        SharingLimits::default(),
    );
    let mut a = shared.watch(req(WatchStart::Now)).await.unwrap();
    let mut b = shared.watch(req(WatchStart::Now)).await.unwrap();
    assert_eq!(shared.upstream_calls(), 1);
    // The replica dies before the stream received anything.
    first_rt.shutdown_background();
    let s = shared.clone();
    eventually("the stream moved", move || s.upstream_calls() == 2).await;
    // The new stream starts "now" once it is open: write until one
    // arrives; both watchers get that same change, and nothing older.
    let mut first = None;
    for i in 0..50 {
        let rev = env.create("a", &format!("new-{i}"), "web").await;
        if let Some(ev) = next_or_none(&mut a).await {
            assert!(ev.revision <= rev && ev.revision > old, "{ev:?}");
            first = Some(ev.revision);
            break;
        }
    }
    let first = first.expect("the watch resumed");
    assert_eq!(next_change(&mut b).await.revision, first);
    drop((a, b));
    second_rt.shutdown_background();
}

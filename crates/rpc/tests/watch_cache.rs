//! WatchCacheApi over gRPC: the real `LocalWatchCache` over a real sled
//! store, served by real tonic servers on loopback and called through
//! `RemoteWatchCache`; every answer is compared with the local cache's.

mod support;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use keelson_api::{
    CacheEvent, CacheEventStream, CacheList, CacheListRequest, CacheWatchRequest, CreateOptions,
    DeleteOptions, EventType, Format, ListRevision, StoreApi, UpdateOptions, WatchCacheApi,
    WatchStart,
};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey};
use keelson_rpc::{RemoteWatchCache, WatchCacheGrpc};
use keelson_storage::{LocalStore, StoreConfig};
use keelson_watchcache::{LocalWatchCache, WatchCacheConfig};
use serde_json::{json, Value};
use tonic::transport::server::Router;
use tonic::transport::Server;

/// How long a test waits for one watch event.
const EVENT_WAIT: Duration = Duration::from_secs(10);

fn configmaps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

fn configmap(ns: &str, name: &str, app: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": app}},
        "data": {"v": data},
    })
}

/// A sled store, the local cache over it, and that cache served over gRPC.
struct Env {
    store: LocalStore,
    local: Arc<LocalWatchCache>,
    server: support::TestServer,
    remote: RemoteWatchCache,
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
        let router = Server::builder().add_service(WatchCacheGrpc::server(local.clone()));
        let server = support::start(router, None).await;
        let remote = RemoteWatchCache::connect_lazy(&[server.endpoint()]).unwrap();
        Env {
            store,
            local,
            server,
            remote,
            _dir: dir,
        }
    }

    async fn create(&self, ns: &str, name: &str, app: &str, data: &str) {
        let key = ObjectKey::new(configmaps(), ns, name);
        self.store
            .create(
                &key,
                configmap(ns, name, app, data),
                CreateOptions::default(),
            )
            .await
            .unwrap();
    }

    async fn stop(self) {
        self.server.stop().await;
    }
}

fn list_req(revision: ListRevision) -> CacheListRequest {
    CacheListRequest {
        gr: configmaps(),
        namespace: None,
        label_selector: String::new(),
        field_selector: String::new(),
        revision,
        start_after: None,
        limit: 0,
        format: Format::JSON,
    }
}

fn watch_req(start: WatchStart) -> CacheWatchRequest {
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

/// A list answer with its items collected, to compare.
#[derive(Debug, PartialEq)]
struct Listed {
    resource_version: u64,
    continue_after: Option<String>,
    remaining: Option<u64>,
    items: Vec<Bytes>,
}

async fn listed(api: &dyn WatchCacheApi, req: CacheListRequest) -> ApiResult<Listed> {
    let CacheList {
        resource_version,
        continue_after,
        remaining,
        items,
    } = api.list(req).await?;
    Ok(Listed {
        resource_version,
        continue_after,
        remaining,
        items: items.try_collect().await?,
    })
}

/// The same list locally and through gRPC; they must be equal.
async fn both(env: &Env, req: CacheListRequest) -> Listed {
    let local = listed(env.local.as_ref(), req.clone()).await.unwrap();
    let remote = listed(&env.remote, req.clone()).await.unwrap();
    assert_eq!(remote, local, "{req:?}");
    local
}

fn names(l: &Listed) -> Vec<String> {
    l.items
        .iter()
        .map(|b| {
            let v: Value = serde_json::from_slice(b).unwrap();
            format!(
                "{}/{}",
                v["metadata"]["namespace"].as_str().unwrap(),
                v["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

async fn next_event(events: &mut CacheEventStream) -> CacheEvent {
    tokio::time::timeout(EVENT_WAIT, events.next())
        .await
        .expect("no watch event in time")
        .expect("the watch ended")
        .unwrap()
}

/// The error of a watch, whether the call or its first item failed.
async fn watch_error(api: &dyn WatchCacheApi, req: CacheWatchRequest) -> ApiError {
    match api.watch(req).await {
        Err(e) => e,
        Ok(mut events) => match tokio::time::timeout(EVENT_WAIT, events.next()).await {
            Ok(Some(Err(e))) => e,
            other => panic!("expected an error, got {other:?}"),
        },
    }
}

async fn seed(env: &Env) {
    for (ns, name, app) in [
        ("a", "a1", "web"),
        ("a", "a2", "db"),
        ("a", "a3", "web"),
        ("a", "a4", "web"),
        ("a", "a5", "db"),
        ("b", "b1", "web"),
        ("b", "b2", "db"),
        ("b", "b3", "web"),
    ] {
        env.create(ns, name, app, "x").await;
    }
}

#[tokio::test]
async fn lists_through_grpc_equal_local_lists() {
    let env = Env::new().await;
    seed(&env).await;

    let all = both(&env, list_req(ListRevision::Consistent)).await;
    assert_eq!(
        names(&all),
        ["a/a1", "a/a2", "a/a3", "a/a4", "a/a5", "b/b1", "b/b2", "b/b3"]
    );
    assert_eq!(
        all.resource_version,
        env.store.current_revision().await.unwrap()
    );
    both(&env, list_req(ListRevision::Any)).await;
    both(
        &env,
        list_req(ListRevision::NotOlderThan(all.resource_version)),
    )
    .await;

    // Namespace and label selector.
    let web_in_a = both(
        &env,
        CacheListRequest {
            namespace: Some("a".into()),
            label_selector: "app=web".into(),
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert_eq!(names(&web_in_a), ["a/a1", "a/a3", "a/a4"]);

    // Field selector.
    let one = both(
        &env,
        CacheListRequest {
            field_selector: "metadata.name=b2".into(),
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert_eq!(names(&one), ["b/b2"]);

    // A page with a limit: continue key and remaining count.
    let page1 = both(
        &env,
        CacheListRequest {
            limit: 3,
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert_eq!(names(&page1), ["a/a1", "a/a2", "a/a3"]);
    assert_eq!(page1.continue_after.as_deref(), Some("a/a3"));
    assert_eq!(page1.remaining, Some(5));

    // The next page at the first page's exact revision.
    let page2 = both(
        &env,
        CacheListRequest {
            limit: 3,
            start_after: page1.continue_after.clone(),
            ..list_req(ListRevision::Exact(page1.resource_version))
        },
    )
    .await;
    assert_eq!(names(&page2), ["a/a4", "a/a5", "b/b1"]);
    assert_eq!(page2.resource_version, page1.resource_version);
    assert_eq!(page2.remaining, Some(2));

    // With a selector and a limit: a continue key but no remaining count.
    let web = both(
        &env,
        CacheListRequest {
            label_selector: "app=web".into(),
            limit: 2,
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert_eq!(names(&web), ["a/a1", "a/a3"]);
    assert_eq!(web.continue_after.as_deref(), Some("a/a3"));
    assert_eq!(web.remaining, None);

    // An empty list still carries its revision.
    let none = both(
        &env,
        CacheListRequest {
            namespace: Some("empty".into()),
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert!(none.items.is_empty());
    assert_eq!(none.resource_version, all.resource_version);

    env.stop().await;
}

#[tokio::test]
async fn big_lists_stream_through_grpc_in_order() {
    let env = Env::new().await;
    // Over the per-chunk item count and over the per-chunk size.
    for i in 0..1100 {
        env.create("many", &format!("cm-{i:05}"), "web", "x").await;
    }
    let blob = "y".repeat(300 * 1024);
    for i in 0..12 {
        env.create("big", &format!("cm-{i:02}"), "db", &blob).await;
    }
    let many = both(
        &env,
        CacheListRequest {
            namespace: Some("many".into()),
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert_eq!(many.items.len(), 1100);
    let big = both(
        &env,
        CacheListRequest {
            namespace: Some("big".into()),
            ..list_req(ListRevision::Consistent)
        },
    )
    .await;
    assert_eq!(big.items.len(), 12);
    assert!(big.items.iter().all(|b| b.len() > 300 * 1024));
    env.stop().await;
}

#[tokio::test]
async fn watches_through_grpc_deliver_the_local_events() {
    let env = Env::new().await;
    env.create("a", "before", "web", "0").await;
    let rv0 = env.store.current_revision().await.unwrap();

    let req = watch_req(WatchStart::After(rv0));
    let mut local = env.local.watch(req.clone()).await.unwrap();
    let mut remote = env.remote.watch(req).await.unwrap();

    let key = ObjectKey::new(configmaps(), "a", "w");
    env.store
        .create(
            &key,
            configmap("a", "w", "web", "1"),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    env.store
        .update(
            &key,
            configmap("a", "w", "web", "2"),
            UpdateOptions::default(),
        )
        .await
        .unwrap();
    env.store
        .delete(&key, DeleteOptions::default())
        .await
        .unwrap();

    let mut revisions = Vec::new();
    for (expected, data) in [
        (EventType::Added, "1"),
        (EventType::Modified, "2"),
        (EventType::Deleted, "2"),
    ] {
        let l = next_event(&mut local).await;
        let r = next_event(&mut remote).await;
        assert_eq!(r, l);
        assert_eq!(r.event_type, expected);
        let obj: Value = serde_json::from_slice(&r.object).unwrap();
        assert_eq!(obj["metadata"]["name"], "w");
        assert_eq!(obj["data"]["v"], data);
        revisions.push(r.revision);
    }
    assert!(revisions.windows(2).all(|w| w[0] < w[1]), "{revisions:?}");
    assert!(revisions[0] > rv0);

    // Initial events, their end marker and a label selector.
    let req = CacheWatchRequest {
        label_selector: "app=web".into(),
        ..watch_req(WatchStart::InitialState {
            initial_events_end: true,
        })
    };
    let mut local = env.local.watch(req.clone()).await.unwrap();
    let mut remote = env.remote.watch(req).await.unwrap();
    let l = next_event(&mut local).await;
    let r = next_event(&mut remote).await;
    assert_eq!(r, l);
    assert_eq!(r.event_type, EventType::Added);
    let end = next_event(&mut remote).await;
    assert_eq!(end, next_event(&mut local).await);
    assert_eq!(end.event_type, EventType::Bookmark);
    assert!(end.initial_events_end);
    assert!(end.object.is_empty());

    drop((local, remote));
    env.stop().await;
}

#[tokio::test]
async fn api_errors_cross_with_their_code_and_message() {
    let env = Env::new().await;
    seed(&env).await;
    // Forget every old revision.
    let kv = env.store.kv();
    kv.compact(kv.current_revision().await.unwrap())
        .await
        .unwrap();

    let expired_list = list_req(ListRevision::Exact(1));
    let local = listed(env.local.as_ref(), expired_list.clone())
        .await
        .unwrap_err();
    let remote = listed(&env.remote, expired_list).await.unwrap_err();
    assert_eq!(local.code, 410);
    assert_eq!(remote, local);

    let expired_watch = watch_req(WatchStart::After(1));
    let local = watch_error(env.local.as_ref(), expired_watch.clone()).await;
    let remote = watch_error(&env.remote, expired_watch).await;
    assert_eq!((local.code, local.reason.as_str()), (410, "Expired"));
    assert_eq!(remote, local);
    assert_eq!(remote.message, local.message);

    // A bad selector (400) and a revision the cache never reaches (504).
    let bad = CacheListRequest {
        label_selector: "app in (".into(),
        ..list_req(ListRevision::Any)
    };
    let local = listed(env.local.as_ref(), bad.clone()).await.unwrap_err();
    assert_eq!(listed(&env.remote, bad).await.unwrap_err(), local);
    let future = list_req(ListRevision::NotOlderThan(1_000_000));
    let (local, remote) = tokio::join!(
        listed(env.local.as_ref(), future.clone()),
        listed(&env.remote, future)
    );
    let local = local.unwrap_err();
    assert_eq!(local.code, 504);
    assert_eq!(remote.unwrap_err(), local);

    env.stop().await;
}

#[tokio::test]
async fn a_dead_replica_is_skipped() {
    let env = Env::new().await;
    seed(&env).await;
    let dead = support::dead_endpoint().await;
    let remote = RemoteWatchCache::connect_lazy(&[dead, env.server.endpoint()]).unwrap();
    let expected = listed(env.local.as_ref(), list_req(ListRevision::Any))
        .await
        .unwrap();

    // Round-robin starts every other call on the dead replica.
    for _ in 0..4 {
        let got = listed(&remote, list_req(ListRevision::Any)).await.unwrap();
        assert_eq!(got, expected);
    }
    let rv = env.store.current_revision().await.unwrap();
    let mut watches = Vec::new();
    for _ in 0..2 {
        watches.push(
            remote
                .watch(watch_req(WatchStart::After(rv)))
                .await
                .unwrap(),
        );
    }
    env.create("c", "late", "web", "1").await;
    for w in &mut watches {
        let ev = next_event(w).await;
        assert_eq!(ev.event_type, EventType::Added);
        assert!(ev.revision > rv);
    }
    remote.ready().await.unwrap();

    drop(watches);
    env.stop().await;
}

#[tokio::test]
async fn all_replicas_dead_is_503() {
    let remote = RemoteWatchCache::connect_lazy(&[
        support::dead_endpoint().await,
        support::dead_endpoint().await,
    ])
    .unwrap();
    let e = listed(&remote, list_req(ListRevision::Any))
        .await
        .unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (503, "ServiceUnavailable"));
    assert!(
        e.message.contains("watch cache service is unavailable"),
        "{e}"
    );
    let e = watch_error(&remote, watch_req(WatchStart::Now)).await;
    assert_eq!(e.code, 503);
    let e = remote.ready().await.unwrap_err();
    assert_eq!(e.code, 503);
}

/// A cache whose list and watch send one item, then nothing until the
/// connection breaks.
struct Stalling;

#[async_trait]
impl WatchCacheApi for Stalling {
    async fn list(&self, _req: CacheListRequest) -> ApiResult<CacheList> {
        Ok(CacheList {
            resource_version: 4,
            continue_after: None,
            remaining: None,
            items: stream::iter([Ok(Bytes::from_static(b"{}"))])
                .chain(stream::pending())
                .boxed(),
        })
    }

    async fn watch(&self, _req: CacheWatchRequest) -> ApiResult<CacheEventStream> {
        let ev = CacheEvent::bookmark(4, Format::JSON);
        Ok(stream::iter([Ok(ev)]).chain(stream::pending()).boxed())
    }
}

/// Serve `router` on its own runtime, so that shutting the runtime down
/// drops every connection at once (a crashed peer).
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

#[tokio::test]
async fn a_connection_broken_mid_stream_is_a_final_503() {
    let router = Server::builder().add_service(WatchCacheGrpc::server(Arc::new(Stalling)));
    let (endpoint, rt) = start_crashable(router);
    let remote = RemoteWatchCache::connect_lazy(&[endpoint]).unwrap();

    let list = remote.list(list_req(ListRevision::Any)).await.unwrap();
    assert_eq!(list.resource_version, 4);
    let mut items = list.items;
    assert_eq!(
        items.next().await.unwrap().unwrap(),
        Bytes::from_static(b"{}")
    );
    let mut events = remote.watch(watch_req(WatchStart::Now)).await.unwrap();
    assert_eq!(next_event(&mut events).await.revision, 4);

    rt.shutdown_background();

    let e = tokio::time::timeout(EVENT_WAIT, items.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (503, "ServiceUnavailable"));
    assert!(items.next().await.is_none());
    let e = tokio::time::timeout(EVENT_WAIT, events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, 503);
    assert!(events.next().await.is_none());
}

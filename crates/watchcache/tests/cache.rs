//! The watch cache over a real sled store: lists and watches must say
//! exactly what the store committed.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use keelson_api::{
    CacheEvent, CacheEventStream, CacheListRequest, CacheWatchRequest, CreateOptions,
    DeleteOptions, EventType, Format, ListRevision, StoreApi, UpdateOptions, WatchCacheApi,
    WatchStart,
};
use keelson_apimachinery::{GroupResource, ObjectKey};
use keelson_storage::{LocalStore, StoreConfig};
use keelson_watchcache::{LocalWatchCache, WatchCacheConfig};
use serde_json::{json, Value};

fn cms() -> GroupResource {
    GroupResource::new("", "configmaps")
}

fn key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new(cms(), ns, name)
}

fn cm(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": app}}, "data": {"k": name}})
}

fn rv(o: &Value) -> u64 {
    o["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("resourceVersion")
}

struct Fixture {
    store: Arc<LocalStore>,
    cache: LocalWatchCache,
    _dir: tempfile::TempDir,
}

async fn fixture(config: WatchCacheConfig) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(
        LocalStore::open(
            dir.path(),
            StoreConfig {
                compaction_interval: None,
                ..StoreConfig::default()
            },
        )
        .await
        .expect("open"),
    );
    let cache = LocalWatchCache::new(store.clone(), config);
    Fixture {
        store,
        cache,
        _dir: dir,
    }
}

impl Fixture {
    async fn create(&self, ns: &str, name: &str, app: &str) -> Value {
        self.store
            .create(&key(ns, name), cm(name, app), CreateOptions::default())
            .await
            .expect("create")
    }
    async fn relabel(&self, ns: &str, name: &str, app: &str) -> Value {
        self.store
            .update(&key(ns, name), cm(name, app), UpdateOptions::default())
            .await
            .expect("update")
    }
    async fn delete(&self, ns: &str, name: &str) {
        self.store
            .delete(&key(ns, name), DeleteOptions::default())
            .await
            .expect("delete");
    }
}

fn list_req(revision: ListRevision) -> CacheListRequest {
    CacheListRequest {
        gr: cms(),
        namespace: None,
        label_selector: String::new(),
        field_selector: String::new(),
        revision,
        start_after: None,
        limit: 0,
        format: Format::JSON,
    }
}

/// The names and revision of a list.
async fn names(cache: &LocalWatchCache, req: CacheListRequest) -> (Vec<String>, u64) {
    let l = cache.list(req).await.expect("list");
    let items: Vec<_> = l.items.collect().await;
    let names = items
        .into_iter()
        .map(|b| {
            let v: Value = serde_json::from_slice(&b.expect("item")).expect("json");
            assert!(v.get("kind").is_none() && v.get("apiVersion").is_none());
            format!(
                "{}/{}",
                v["metadata"]["namespace"].as_str().unwrap_or(""),
                v["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    (names, l.resource_version)
}

fn watch_req(start: WatchStart) -> CacheWatchRequest {
    CacheWatchRequest {
        gr: cms(),
        namespace: None,
        label_selector: String::new(),
        field_selector: String::new(),
        start,
        bookmark_interval_ms: 0,
        format: Format::JSON,
        include_object: keelson_api::IncludeObject::Metadata,
    }
}

async fn next(w: &mut CacheEventStream) -> CacheEvent {
    tokio::time::timeout(Duration::from_secs(10), w.next())
        .await
        .expect("an event within 10s")
        .expect("stream open")
        .expect("not an error")
}

fn summary(ev: &CacheEvent) -> (EventType, String, u64) {
    let v: Value = serde_json::from_slice(&ev.object).expect("json");
    assert_eq!(
        (v["kind"].as_str(), v["apiVersion"].as_str()),
        (Some("ConfigMap"), Some("v1"))
    );
    (
        ev.event_type,
        v["metadata"]["name"].as_str().unwrap_or("").to_string(),
        rv(&v),
    )
}

#[tokio::test]
async fn lists_match_the_store_and_page_over_one_snapshot() {
    let f = fixture(WatchCacheConfig::default()).await;
    for (ns, n) in [("b", "x"), ("a", "y"), ("a-b", "z"), ("a", "w")] {
        f.create(ns, n, "web").await;
    }
    let (all, rev) = names(&f.cache, list_req(ListRevision::Consistent)).await;
    assert_eq!(all, ["a-b/z", "a/w", "a/y", "b/x"]);
    assert_eq!(rev, f.store.current_revision().await.unwrap());

    // Pages of 2: continue keys, remaining counts, then an exact revision
    // for the next page even after the store moved on.
    let mut req = list_req(ListRevision::Consistent);
    req.limit = 2;
    let p1 = f.cache.list(req.clone()).await.unwrap();
    assert_eq!(
        (p1.continue_after.as_deref(), p1.remaining),
        (Some("a/w"), Some(2))
    );
    f.delete("a", "y").await;
    f.create("a", "v", "web").await;
    let mut req2 = list_req(ListRevision::Exact(p1.resource_version));
    req2.start_after = p1.continue_after.clone();
    req2.limit = 2;
    let (p2, rv2) = names(&f.cache, req2).await;
    assert_eq!((p2, rv2), (vec!["a/y".to_string(), "b/x".into()], rev));
    // The same exact revision straight from the store agrees.
    let at = f.store.list_at(&cms(), None, rev).await.unwrap();
    assert_eq!(at.items.len(), 4);

    // Namespaced, selected, and the newest state.
    let mut in_a = list_req(ListRevision::Consistent);
    in_a.namespace = Some("a".into());
    assert_eq!(names(&f.cache, in_a).await.0, ["a/v", "a/w"]);
    f.relabel("b", "x", "db").await;
    let mut sel = list_req(ListRevision::Consistent);
    sel.label_selector = "app=web".into();
    sel.limit = 1;
    let page = f.cache.list(sel).await.unwrap();
    assert_eq!(page.remaining, None, "no remainingItemCount with selectors");
    assert_eq!(page.continue_after.as_deref(), Some("a-b/z"));
    let mut db = list_req(ListRevision::Any);
    db.field_selector = "metadata.namespace=b".into();
    assert_eq!(names(&f.cache, db).await.0, ["b/x"]);
    let mut bad = list_req(ListRevision::Any);
    bad.field_selector = "spec.x=1".into();
    assert_eq!(f.cache.list(bad).await.unwrap_err().code, 400);
}

#[tokio::test]
async fn consistent_reads_see_every_acknowledged_write() {
    let f = fixture(WatchCacheConfig::default()).await;
    names(&f.cache, list_req(ListRevision::Any)).await;
    for i in 0..50 {
        let o = f.create("a", &format!("c{i:02}"), "web").await;
        // Writes to another resource move the store's revision too.
        f.store
            .create(
                &ObjectKey::new(GroupResource::new("", "secrets"), "a", &format!("s{i}")),
                json!({"metadata": {"name": format!("s{i}")}}),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        let (items, rev) = names(&f.cache, list_req(ListRevision::Consistent)).await;
        assert_eq!(items.len(), i + 1);
        assert!(rev > rv(&o), "the list is at the store's revision");
    }
}

#[tokio::test]
async fn revisions_the_cache_has_not_reached_are_504() {
    let f = fixture(WatchCacheConfig::default()).await;
    let now = f.store.current_revision().await.unwrap();
    let e = f
        .cache
        .list(list_req(ListRevision::NotOlderThan(now + 100)))
        .await
        .unwrap_err();
    assert_eq!(e.code, 504);
    assert_eq!(
        e.message,
        format!(
            "Timeout: Too large resource version: {}, current: {now}",
            now + 100
        )
    );
}

#[tokio::test]
async fn watches_replay_history_then_follow_with_selector_transitions() {
    let f = fixture(WatchCacheConfig::default()).await;
    let a = f.create("a", "p", "web").await;
    // Build the cache, then change things it will keep in its history.
    names(&f.cache, list_req(ListRevision::Any)).await;
    let b = f.relabel("a", "p", "db").await;
    let c = f.relabel("a", "p", "web").await;
    let mut all = f
        .cache
        .watch(watch_req(WatchStart::After(rv(&a))))
        .await
        .unwrap();
    let mut web = f
        .cache
        .watch(CacheWatchRequest {
            label_selector: "app=web".into(),
            ..watch_req(WatchStart::After(rv(&a)))
        })
        .await
        .unwrap();
    f.delete("a", "p").await;
    let d = f.store.current_revision().await.unwrap();
    let all_events: Vec<_> = [
        next(&mut all).await,
        next(&mut all).await,
        next(&mut all).await,
    ]
    .iter()
    .map(summary)
    .collect();
    use EventType::*;
    assert_eq!(
        all_events,
        [
            (Modified, "p".into(), rv(&b)),
            (Modified, "p".into(), rv(&c)),
            (Deleted, "p".into(), d)
        ]
    );
    // The selected watcher: leaving the selector is a DELETED at the
    // change's revision with the last matching state, re-entering ADDED.
    let web_events: Vec<_> = [
        next(&mut web).await,
        next(&mut web).await,
        next(&mut web).await,
    ]
    .iter()
    .map(summary)
    .collect();
    assert_eq!(
        web_events,
        [
            (Deleted, "p".into(), rv(&b)),
            (Added, "p".into(), rv(&c)),
            (Deleted, "p".into(), d)
        ]
    );
}

#[tokio::test]
async fn initial_state_then_the_end_marker_then_live() {
    let f = fixture(WatchCacheConfig::default()).await;
    f.create("a", "x", "web").await;
    f.create("b", "y", "web").await;
    let mut w = f
        .cache
        .watch(CacheWatchRequest {
            namespace: Some("a".into()),
            ..watch_req(WatchStart::InitialState {
                initial_events_end: true,
            })
        })
        .await
        .unwrap();
    let first = next(&mut w).await;
    assert_eq!(summary(&first).0, EventType::Added);
    let end = next(&mut w).await;
    assert_eq!(end.event_type, EventType::Bookmark);
    assert!(end.initial_events_end);
    assert_eq!(end.revision, f.store.current_revision().await.unwrap());
    f.create("b", "other", "web").await;
    let z = f.create("a", "z", "web").await;
    assert_eq!(
        summary(&next(&mut w).await),
        (EventType::Added, "z".into(), rv(&z))
    );
}

#[tokio::test]
async fn a_watch_older_than_the_history_reads_the_store() {
    let f = fixture(WatchCacheConfig {
        history: 2,
        ..WatchCacheConfig::default()
    })
    .await;
    let first = f.create("a", "x", "web").await;
    names(&f.cache, list_req(ListRevision::Any)).await;
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(f.create("a", &format!("n{i}"), "web").await);
    }
    // Wait for the cache to have seen them all (its history holds 2).
    let last = rv(made.last().unwrap());
    names(&f.cache, list_req(ListRevision::NotOlderThan(last))).await;
    let mut w = f
        .cache
        .watch(watch_req(WatchStart::After(rv(&first))))
        .await
        .unwrap();
    for m in &made {
        assert_eq!(summary(&next(&mut w).await).2, rv(m));
    }
    // An exact list older than the history is read from the store too.
    let (items, at) = names(&f.cache, list_req(ListRevision::Exact(rv(&first)))).await;
    assert_eq!((items, at), (vec!["a/x".to_string()], rv(&first)));
}

#[tokio::test]
async fn bookmarks_carry_the_cache_revision() {
    let f = fixture(WatchCacheConfig::default()).await;
    let mut w = f
        .cache
        .watch(CacheWatchRequest {
            bookmark_interval_ms: 100,
            ..watch_req(WatchStart::Now)
        })
        .await
        .unwrap();
    let s = f
        .store
        .create(
            &ObjectKey::new(GroupResource::new("", "secrets"), "a", "s"),
            json!({"metadata": {"name": "s"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    loop {
        let ev = next(&mut w).await;
        assert_eq!(ev.event_type, EventType::Bookmark);
        assert!(!ev.initial_events_end);
        assert!(ev.object.is_empty());
        if ev.revision == rv(&s) {
            break;
        }
    }
}

#[tokio::test]
async fn a_watcher_that_falls_behind_is_closed_and_others_are_not() {
    let f = fixture(WatchCacheConfig {
        watcher_buffer: 8,
        ..WatchCacheConfig::default()
    })
    .await;
    let mut slow = f.cache.watch(watch_req(WatchStart::Now)).await.unwrap();
    let mut fast = f.cache.watch(watch_req(WatchStart::Now)).await.unwrap();
    let reader = tokio::spawn(async move {
        let mut seen = Vec::new();
        for _ in 0..40 {
            seen.push(next(&mut fast).await.revision);
        }
        seen
    });
    let mut made = Vec::new();
    for i in 0..40 {
        made.push(rv(&f.create("a", &format!("c{i}"), "web").await));
    }
    assert_eq!(
        reader.await.unwrap(),
        made,
        "the fast watcher saw all, in order"
    );
    // The slow one gets what fitted, then its stream ends: no error, no gap.
    let mut got = Vec::new();
    while let Some(item) = tokio::time::timeout(Duration::from_secs(10), slow.next())
        .await
        .expect("ends")
    {
        got.push(item.expect("no error").revision);
    }
    assert!(got.len() < made.len(), "closed before the end: {got:?}");
    assert_eq!(
        got[..],
        made[..got.len()].to_vec()[..],
        "a prefix, nothing skipped"
    );
}

#[tokio::test]
async fn the_history_is_bounded_by_bytes_too() {
    let f = fixture(WatchCacheConfig {
        history_bytes: 64 * 1024,
        ..WatchCacheConfig::default()
    })
    .await;
    names(&f.cache, list_req(ListRevision::Any)).await;
    let big = "x".repeat(16 * 1024);
    let mut made = Vec::new();
    for i in 0..20 {
        let o = f
            .store
            .create(
                &key("a", &format!("big{i}")),
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": format!("big{i}")}, "data": {"k": big}}),
                CreateOptions::default(),
            )
            .await
            .unwrap();
        made.push(rv(&o));
    }
    let last = *made.last().unwrap();
    names(&f.cache, list_req(ListRevision::NotOlderThan(last))).await;
    let stats = f.cache.stats();
    assert!(
        stats.history < 20 && stats.history >= 3,
        "about 64 KiB of 16 KiB objects kept: {stats:?}"
    );
    // A watch from before the kept history still sees everything, from the
    // store.
    let mut w = f
        .cache
        .watch(watch_req(WatchStart::After(made[0])))
        .await
        .unwrap();
    for r in &made[1..] {
        assert_eq!(next(&mut w).await.revision, *r);
    }
}

#[tokio::test]
async fn watchers_of_one_format_share_its_bytes() {
    let f = fixture(WatchCacheConfig::default()).await;
    let meta = Format {
        encoding: keelson_codec::Encoding::Json,
        target: keelson_codec::Target::PartialObjectMetadata(keelson_codec::MetaVersion::V1),
    };
    let req = CacheWatchRequest {
        format: meta,
        include_object: keelson_api::IncludeObject::Metadata,
        ..watch_req(WatchStart::Now)
    };
    let mut a = f.cache.watch(req.clone()).await.unwrap();
    let mut b = f.cache.watch(req).await.unwrap();
    let mut json = f.cache.watch(watch_req(WatchStart::Now)).await.unwrap();
    f.create("n", "x", "web").await;
    let (ea, eb, ej) = (
        next(&mut a).await,
        next(&mut b).await,
        next(&mut json).await,
    );
    assert_eq!((ea.format, ej.format), (meta, Format::JSON));
    assert_eq!(
        ea.frame.as_ptr(),
        eb.frame.as_ptr(),
        "encoded once per format"
    );
    let v: Value = serde_json::from_slice(&ea.object).unwrap();
    assert_eq!(v["kind"], "PartialObjectMetadata");
    assert_eq!(v["metadata"]["name"], "x");
    assert!(v.get("data").is_none());
    assert_eq!(summary(&ej).1, "x");
    // Lists in that format carry the same memoized bytes.
    let list = f
        .cache
        .list(CacheListRequest {
            format: meta,
            ..list_req(ListRevision::Consistent)
        })
        .await
        .unwrap();
    let items: Vec<_> = list.items.collect().await;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].as_ref().unwrap(), &ea.object);
}

//! Runs the real `keelson-watch` binary against a real `keelson-store` and
//! talks to both over gRPC: lists and watches follow the store's writes, and
//! the replica recovers when the store restarts.

use std::process::Command;
use std::time::Duration;

use futures::StreamExt;
use keelson_api::{
    CacheListRequest, CacheWatchRequest, CreateOptions, EventType, Format, ListRevision, StoreApi,
    WatchCacheApi, WatchStart,
};
use keelson_api::{GroupResource, ObjectKey};
use keelson_rpc::{RemoteStore, RemoteWatchCache};
use serde_json::{json, Value};

mod common;

fn cms() -> GroupResource {
    GroupResource::new("", "configmaps")
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

async fn create(store: &RemoteStore, name: &str) -> u64 {
    let o = store
        .create(
            &ObjectKey::new(cms(), "default", name),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    o["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

async fn names(cache: &RemoteWatchCache) -> Vec<String> {
    let list = cache
        .list(CacheListRequest {
            gr: cms(),
            namespace: Some("default".into()),
            label_selector: String::new(),
            field_selector: String::new(),
            revision: ListRevision::Consistent,
            start_after: None,
            limit: 0,
            format: Format::JSON,
        })
        .await
        .unwrap();
    let items: Vec<_> = list.items.collect().await;
    items
        .into_iter()
        .map(|b| {
            let v: Value = serde_json::from_slice(&b.unwrap()).unwrap();
            v["metadata"]["name"].as_str().unwrap().to_string()
        })
        .collect()
}

#[tokio::test]
async fn follows_the_store_and_recovers_from_a_store_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store_addr = format!("127.0.0.1:{}", free_port());
    let data = dir.path().join("store");
    let store_args = [
        "--data-dir",
        data.to_str().unwrap(),
        "--listen",
        store_addr.as_str(),
    ];
    let (store_proc, store_ep) =
        common::start(env!("CARGO_BIN_EXE_keelson-store"), &store_args, &[]);
    let (watch_proc, watch_ep) = common::start(
        env!("CARGO_BIN_EXE_keelson-watch"),
        &["--listen", "127.0.0.1:0", "--store-endpoint", &store_ep],
        &[],
    );
    let store = RemoteStore::connect_lazy(&store_ep).unwrap();
    let cache = RemoteWatchCache::connect_lazy(&[watch_ep]).unwrap();
    cache.ready().await.unwrap();

    create(&store, "a").await;
    assert_eq!(names(&cache).await, ["a"]);
    let mut w = cache
        .watch(CacheWatchRequest {
            gr: cms(),
            namespace: Some("default".into()),
            label_selector: String::new(),
            field_selector: String::new(),
            start: WatchStart::Now,
            bookmark_interval_ms: 0,
            format: Format::JSON,
            include_object: keelson_api::IncludeObject::Metadata,
        })
        .await
        .unwrap();
    let b = create(&store, "b").await;
    let ev = tokio::time::timeout(Duration::from_secs(10), w.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!((ev.event_type, ev.revision), (EventType::Added, b));

    // The store goes away and comes back on the same address and data.
    common::stop(store_proc).await;
    let (store_proc, _) = common::start(env!("CARGO_BIN_EXE_keelson-store"), &store_args, &[]);
    create(&store, "c").await;
    // The replica re-lists: consistent lists see the new write...
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(5), async {
            Ok::<_, ()>(names(&cache).await)
        })
        .await
        {
            if n == ["a", "b", "c"] {
                break;
            }
        }
        assert!(tokio::time::Instant::now() < deadline, "never caught up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // ...and the watch opened before the restart was closed (it may have
    // missed changes), so its client re-watches from its last revision.
    let end = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(item) = w.next().await {
            if item.is_err() {
                break;
            }
        }
    })
    .await;
    assert!(end.is_ok(), "the old watch ended");

    assert!(common::stop(watch_proc).await.success());
    assert!(common::stop(store_proc).await.success());
}

#[test]
fn a_bad_config_is_a_clear_startup_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_keelson-watch"))
        .args(["--listen", "127.0.0.1:0", "--store-endpoint", "not a url"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid endpoint \"not a url\""),
        "{stderr}"
    );
}

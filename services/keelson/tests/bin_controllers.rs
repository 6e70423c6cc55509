//! Runs the real `keelson-controllers` binary against a real `keelson-store`:
//! a deleted namespace's objects go, its health endpoint answers, and
//! SIGTERM stops it cleanly.

use std::time::{Duration, Instant};

use keelson_api::{CreateOptions, DeleteOptions, GroupResource, ObjectKey, StoreApi};
use keelson_rpc::RemoteStore;
use serde_json::json;

mod common;

fn key(resource: &str, ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("", resource), ns, name)
}

async fn create(store: &RemoteStore, key: &ObjectKey, kind: &str) {
    let mut meta = json!({"name": key.name});
    if !key.namespace.is_empty() {
        meta["namespace"] = json!(key.namespace);
    }
    let obj = json!({"apiVersion": "v1", "kind": kind, "metadata": meta});
    store
        .create(key, obj, CreateOptions::default())
        .await
        .unwrap();
}

async fn readyz(http: &reqwest::Client, endpoint: &str) -> u16 {
    match http.get(format!("{endpoint}/readyz")).send().await {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

#[tokio::test]
async fn purges_deleted_namespaces_and_reports_health() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (store_proc, store_ep) = common::start(
        env!("CARGO_BIN_EXE_keelson-store"),
        &["--data-dir", data, "--listen", "127.0.0.1:0"],
        &[],
    );
    let store = RemoteStore::connect_lazy(&store_ep).unwrap();
    store.ready().await.unwrap();
    // Deleted before the controllers start: purged at their start.
    let early = key("configmaps", "early", "c");
    create(&store, &key("namespaces", "", "early"), "Namespace").await;
    create(&store, &early, "ConfigMap").await;
    store
        .delete(&key("namespaces", "", "early"), DeleteOptions::default())
        .await
        .unwrap();

    let (ctl, ctl_ep) = common::start(
        env!("CARGO_BIN_EXE_keelson-controllers"),
        &["--store-endpoint", &store_ep],
        &[("KEELSON_LISTEN", "127.0.0.1:0")],
    );
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while readyz(&http, &ctl_ep).await != 200 {
        assert!(Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let healthz = http.get(format!("{ctl_ep}/healthz")).send().await.unwrap();
    assert_eq!(healthz.status().as_u16(), 200);
    // Purged at their start: soon after they report ready (the purge and
    // the readiness report run side by side).
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.get(&early).await.map_err(|e| e.code) != Err(404) {
        assert!(
            Instant::now() < deadline,
            "the early namespace's content was never purged"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Deleted while they run.
    let late = key("configmaps", "late", "c");
    let kept = key("configmaps", "default", "kept");
    create(&store, &key("namespaces", "", "late"), "Namespace").await;
    create(&store, &late, "ConfigMap").await;
    create(&store, &kept, "ConfigMap").await;
    store
        .delete(&key("namespaces", "", "late"), DeleteOptions::default())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while store.get(&late).await.is_ok() {
        assert!(Instant::now() < deadline, "never purged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(store.get(&kept).await.is_ok());

    assert!(common::stop(ctl).await.success());
    assert!(common::stop(store_proc).await.success());
}

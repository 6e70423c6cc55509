//! Runs the real `keelson-store` binary on port 0 and talks to it over gRPC.

use keelson_api::{CreateOptions, GroupResource, ObjectKey, StoreApi};
use keelson_rpc::RemoteStore;
use serde_json::json;

mod common;

fn start(args: &[&str]) -> (std::process::Child, String) {
    common::start(env!("CARGO_BIN_EXE_keelson-store"), args, &[])
}

async fn stop(child: std::process::Child) {
    let status = common::stop(child).await;
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn objects_survive_a_graceful_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let args = [
        "--data-dir",
        data,
        "--listen",
        "127.0.0.1:0",
        "--etcd-compaction-interval",
        "10s",
    ];
    let (child, endpoint) = start(&args);
    let store = RemoteStore::connect_lazy(&endpoint).unwrap();
    store.ready().await.unwrap();
    let key = ObjectKey::new(GroupResource::new("", "configmaps"), "default", "c");
    let created = store
        .create(
            &key,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let rv = created["metadata"]["resourceVersion"].clone();
    assert!(rv.is_string(), "{created}");
    stop(child).await;

    let (child, endpoint) = start(&args);
    let store = RemoteStore::connect_lazy(&endpoint).unwrap();
    let got = store.get(&key).await.unwrap();
    assert_eq!(got["data"]["a"], "1");
    assert_eq!(got["metadata"]["resourceVersion"], rv);
    let err = store
        .get(&ObjectKey::new(
            GroupResource::new("", "configmaps"),
            "default",
            "nope",
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code, 404);
    assert_eq!(err.message, "configmaps \"nope\" not found");
    stop(child).await;
}

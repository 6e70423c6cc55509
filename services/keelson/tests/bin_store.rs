//! Runs the real `keelson-store` binary on port 0 and talks to it over gRPC.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use keelson_api::{CreateOptions, GroupResource, ObjectKey, StoreApi};
use keelson_rpc::RemoteStore;
use serde_json::json;

/// Start the binary and read its `listening on ADDR` line.
fn start(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_keelson-store"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // Keep draining so a later print never hits a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (child, format!("http://{addr}"))
}

/// SIGTERM the binary and wait for a clean exit without blocking the test's
/// runtime (its gRPC clients must still answer the server's goaway).
async fn stop(mut child: Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
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

use std::time::{Duration, Instant};

use keelson_api::{CreateOptions, DeleteOptions, UpdateOptions};
use serde_json::json;

use super::*;

async fn store() -> (tempfile::TempDir, Arc<dyn StoreApi>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StoreApi> = Arc::new(
        keelson_storage::LocalStore::open(dir.path(), Default::default())
            .await
            .unwrap(),
    );
    (dir, store)
}

fn key(resource: &str, name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("", resource), "team", name)
}

async fn put(store: &dyn StoreApi, resource: &str, obj: Value) {
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    store
        .create(&key(resource, &name), obj, CreateOptions::default())
        .await
        .unwrap();
}

fn pod(name: &str, cpu: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team"},
        "spec": {"containers": [{"name": "app", "image": "nginx",
            "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase}})
}

/// Wait until the quota's status is `want`.
async fn status_becomes(store: &dyn StoreApi, want: Value) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let got = store
            .get(&key("resourcequotas", "compute"))
            .await
            .unwrap()
            .get("status")
            .cloned()
            .unwrap_or(Value::Null);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "status {got} != {want}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn measures_used_on_create_and_after_deletes() {
    let (_dir, store) = store().await;
    put(&*store, "pods", pod("a", "500m", "Running")).await;
    put(&*store, "pods", pod("b", "250m", "Pending")).await;
    put(&*store, "pods", pod("done", "4", "Succeeded")).await;
    for n in ["x", "y"] {
        put(
            &*store,
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": "team"}}),
        )
        .await;
    }
    let task =
        tokio::spawn(ResourceQuotaController::new(store.clone()).run(std::future::pending()));
    let hard = json!({"pods": "2", "count/pods": "5", "configmaps": "3", "requests.cpu": "1", "secrets": "1"});
    put(
        &*store,
        "resourcequotas",
        json!({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "compute", "namespace": "team"}, "spec": {"hard": hard}}),
    )
    .await;
    // The terminal pod counts as an object only.
    status_becomes(
        &*store,
        json!({"hard": {"configmaps": "3", "count/pods": "5", "pods": "2", "requests.cpu": "1", "secrets": "1"},
               "used": {"configmaps": "2", "count/pods": "3", "pods": "2", "requests.cpu": "750m", "secrets": "0"}}),
    )
    .await;
    store
        .delete(&key("pods", "a"), DeleteOptions::default())
        .await
        .unwrap();
    store
        .delete(&key("configmaps", "x"), DeleteOptions::default())
        .await
        .unwrap();
    status_becomes(
        &*store,
        json!({"hard": {"configmaps": "3", "count/pods": "5", "pods": "2", "requests.cpu": "1", "secrets": "1"},
               "used": {"configmaps": "1", "count/pods": "2", "pods": "1", "requests.cpu": "250m", "secrets": "0"}}),
    )
    .await;
    // A pod that turns terminal releases its compute usage.
    let mut b = store.get(&key("pods", "b")).await.unwrap();
    b["status"]["phase"] = json!("Failed");
    store
        .update(&key("pods", "b"), b, UpdateOptions::default())
        .await
        .unwrap();
    status_becomes(
        &*store,
        json!({"hard": {"configmaps": "3", "count/pods": "5", "pods": "2", "requests.cpu": "1", "secrets": "1"},
               "used": {"configmaps": "1", "count/pods": "2", "pods": "0", "requests.cpu": "0", "secrets": "0"}}),
    )
    .await;
    // A spec change is measured and shown in status.hard.
    let mut q = store.get(&key("resourcequotas", "compute")).await.unwrap();
    q["spec"]["hard"] = json!({"pods": "4", "count/deployments.apps": "1"});
    store
        .update(
            &key("resourcequotas", "compute"),
            q,
            UpdateOptions::default(),
        )
        .await
        .unwrap();
    status_becomes(
        &*store,
        json!({"hard": {"count/deployments.apps": "1", "pods": "4"},
               "used": {"count/deployments.apps": "0", "pods": "0"}}),
    )
    .await;
    // A deleted Deployment is counted out (the object-count informer).
    let deploy = ObjectKey::new(GroupResource::new("apps", "deployments"), "team", "web");
    store
        .create(
            &deploy,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut q = store.get(&key("resourcequotas", "compute")).await.unwrap();
    q["status"]["used"]["count/deployments.apps"] = json!("1"); // admission's charge
    store
        .update(
            &key("resourcequotas", "compute"),
            q,
            UpdateOptions::default(),
        )
        .await
        .unwrap();
    store
        .delete(&deploy, DeleteOptions::default())
        .await
        .unwrap();
    status_becomes(
        &*store,
        json!({"hard": {"count/deployments.apps": "1", "pods": "4"},
               "used": {"count/deployments.apps": "0", "pods": "0"}}),
    )
    .await;
    task.abort();
}

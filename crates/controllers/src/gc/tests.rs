use std::sync::Arc;
use std::time::{Duration, Instant};

use keelson_api::{CreateOptions, DeleteOptions, GroupResource, ObjectKey, StoreApi};
use keelson_apimachinery::options::PropagationPolicy;
use serde_json::{json, Value};

use super::*;

async fn store() -> (tempfile::TempDir, Arc<dyn StoreApi>) {
    let dir = tempfile::tempdir().unwrap();
    let store = keelson_storage::LocalStore::open(dir.path(), Default::default())
        .await
        .unwrap();
    (dir, Arc::new(store))
}

fn cm_key(name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("", "configmaps"), "default", name)
}

async fn cm(store: &dyn StoreApi, name: &str, owners: &[&Value]) -> Value {
    let refs: Vec<Value> = owners
        .iter()
        .map(|o| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"],
                "uid": o["metadata"]["uid"], "blockOwnerDeletion": true})
        })
        .collect();
    let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}});
    if !refs.is_empty() {
        obj["metadata"]["ownerReferences"] = Value::Array(refs);
    }
    store
        .create(&cm_key(name), obj, CreateOptions::default())
        .await
        .unwrap()
}

async fn exists(store: &dyn StoreApi, name: &str) -> Option<Value> {
    match store.get(&cm_key(name)).await {
        Ok(v) => Some(v),
        Err(e) if e.is_not_found() => None,
        Err(e) => panic!("{e:?}"),
    }
}

async fn eventually(what: &str, mut f: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f().await {
        assert!(Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn start(store: &Arc<dyn StoreApi>) -> tokio::sync::oneshot::Sender<()> {
    let gc = GarbageCollector::new(store.clone(), Catalog::builtin());
    let mut synced = gc.synced();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(gc.run(async {
        let _ = stopped.await;
    }));
    tokio::time::timeout(Duration::from_secs(10), synced.wait_for(|s| *s))
        .await
        .expect("never synced")
        .unwrap();
    stop
}

async fn delete(store: &dyn StoreApi, name: &str, policy: PropagationPolicy) {
    let opts = DeleteOptions {
        propagation_policy: Some(policy),
        ..DeleteOptions::default()
    };
    store.delete(&cm_key(name), opts).await.unwrap();
}

#[tokio::test]
async fn background_orphan_and_foreground() {
    let (_dir, store) = store().await;
    let s = store.as_ref();
    let _stop = start(&store).await;

    let owner = cm(s, "bg", &[]).await;
    let child = cm(s, "bg-child", &[&owner]).await;
    cm(s, "bg-grandchild", &[&child]).await;
    delete(s, "bg", PropagationPolicy::Background).await;
    eventually("background chain", async || {
        exists(s, "bg-grandchild").await.is_none()
    })
    .await;

    let owner = cm(s, "or", &[]).await;
    cm(s, "or-child", &[&owner]).await;
    delete(s, "or", PropagationPolicy::Orphan).await;
    eventually("orphan owner", async || exists(s, "or").await.is_none()).await;
    let kept = exists(s, "or-child").await.expect("orphaned child stays");
    assert!(kept["metadata"]["ownerReferences"].is_null(), "{kept}");

    let owner = cm(s, "fg", &[]).await;
    let child = cm(s, "fg-child", &[&owner]).await;
    let mut held = child.clone();
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    let held = s
        .update(&cm_key("fg-child"), held, Default::default())
        .await
        .unwrap();
    delete(s, "fg", PropagationPolicy::Foreground).await;
    eventually("child marked", async || {
        exists(s, "fg-child")
            .await
            .is_some_and(|c| c["metadata"]["deletionTimestamp"].is_string())
    })
    .await;
    let waiting = exists(s, "fg").await.expect("owner waits");
    assert_eq!(
        waiting["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let mut released = exists(s, "fg-child").await.unwrap();
    released["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("finalizers");
    assert_ne!(
        released["metadata"]["resourceVersion"],
        held["metadata"]["resourceVersion"]
    );
    s.update(&cm_key("fg-child"), released, Default::default())
        .await
        .unwrap();
    eventually("foreground owner", async || exists(s, "fg").await.is_none()).await;
}

#[tokio::test]
async fn dangling_references_are_collected_or_dropped() {
    let (_dir, store) = store().await;
    let s = store.as_ref();
    let ghost =
        json!({"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}});
    let live = cm(s, "live", &[]).await;
    cm(s, "orphan", &[&ghost]).await;
    cm(s, "mixed", &[&ghost, &live]).await;
    let _stop = start(&store).await;
    eventually("dangling dependent", async || {
        exists(s, "orphan").await.is_none()
    })
    .await;
    eventually("dangling reference", async || {
        exists(s, "mixed")
            .await
            .is_some_and(|m| m["metadata"]["ownerReferences"].as_array().map(Vec::len) == Some(1))
    })
    .await;
}

/// The graph lags the store: an owner whose orphan deletion the graph has
/// not observed yet (nor the dependent written before it) is left alone
/// until that event arrives, instead of losing its dependents.
#[tokio::test]
async fn a_deletion_the_graph_has_not_seen_waits_for_its_event() {
    let (_dir, store) = store().await;
    let s = store.as_ref();
    let owner = cm(s, "lag", &[]).await;
    let mut graph = Graph::default();
    graph.upsert(cm_key("lag"), &owner);
    cm(s, "lag-child", &[&owner]).await;
    delete(s, "lag", PropagationPolicy::Orphan).await;

    let gc = GarbageCollector::new(store.clone(), Catalog::builtin());
    let uid = owner["metadata"]["uid"].as_str().unwrap();
    gc.process(&graph, uid).await.unwrap();
    let kept = exists(s, "lag").await.expect("owner kept");
    assert_eq!(kept["metadata"]["finalizers"], json!(["orphan"]));

    // Once the graph has seen the child and the deletion, the child is
    // orphaned and the owner goes.
    let child = exists(s, "lag-child").await.unwrap();
    graph.upsert(cm_key("lag-child"), &child);
    graph.upsert(cm_key("lag"), &kept);
    gc.process(&graph, uid).await.unwrap();
    assert!(exists(s, "lag").await.is_none());
    let orphan = exists(s, "lag-child").await.unwrap();
    assert!(orphan["metadata"]["ownerReferences"].is_null(), "{orphan}");
}

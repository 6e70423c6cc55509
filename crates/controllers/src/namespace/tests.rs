use std::sync::Arc;
use std::time::{Duration, Instant};

use keelson_api::{CreateOptions, DeleteOptions, GroupResource, ObjectKey, StoreApi};
use serde_json::json;

use super::*;

async fn store() -> (tempfile::TempDir, Arc<dyn StoreApi>) {
    let dir = tempfile::tempdir().unwrap();
    let store = keelson_storage::LocalStore::open(dir.path(), Default::default())
        .await
        .unwrap();
    (dir, Arc::new(store))
}

fn ns_key(name: &str) -> ObjectKey {
    ObjectKey::new(namespaces(), "", name)
}

fn cm_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new(GroupResource::new("", "configmaps"), ns, name)
}

async fn create_ns(store: &dyn StoreApi, name: &str) {
    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    store
        .create(&ns_key(name), obj, CreateOptions::default())
        .await
        .unwrap();
}

async fn create_cm(store: &dyn StoreApi, ns: &str, name: &str) {
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}});
    store
        .create(&cm_key(ns, name), obj, CreateOptions::default())
        .await
        .unwrap();
}

/// The first delete only marks the namespace `Terminating`.
async fn delete_ns(store: &dyn StoreApi, name: &str) {
    store
        .delete(&ns_key(name), DeleteOptions::default())
        .await
        .unwrap();
}

/// Mark, then delete a namespace that has no `spec.finalizers`.
async fn remove_ns(store: &dyn StoreApi, name: &str) {
    delete_ns(store, name).await;
    store
        .delete(&ns_key(name), DeleteOptions::default())
        .await
        .unwrap();
    assert!(!exists(store, &ns_key(name)).await);
}

async fn exists(store: &dyn StoreApi, key: &ObjectKey) -> bool {
    match store.get(key).await {
        Ok(_) => true,
        Err(e) if e.code == 404 => false,
        Err(e) => panic!("{e:?}"),
    }
}

async fn eventually_gone(store: &dyn StoreApi, key: &ObjectKey) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while exists(store, key).await {
        assert!(Instant::now() < deadline, "{key:?} was never purged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_synced(
    store: &Arc<dyn StoreApi>,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let controller = NamespaceController::new(store.clone());
    let mut synced = controller.synced();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(async {
        let _ = stopped.await;
    }));
    tokio::time::timeout(Duration::from_secs(10), synced.wait_for(|s| *s))
        .await
        .expect("the controller never synced")
        .unwrap();
    (stop, task)
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_objects_only() {
    let (_dir, store) = store().await;
    let (stop, task) = wait_synced(&store).await;
    create_ns(store.as_ref(), "a").await;
    create_ns(store.as_ref(), "b").await;
    create_cm(store.as_ref(), "a", "one").await;
    create_cm(store.as_ref(), "a", "two").await;
    create_cm(store.as_ref(), "b", "one").await;
    delete_ns(store.as_ref(), "a").await;
    eventually_gone(store.as_ref(), &cm_key("a", "one")).await;
    eventually_gone(store.as_ref(), &cm_key("a", "two")).await;
    assert!(exists(store.as_ref(), &cm_key("b", "one")).await);
    let _ = stop.send(());
    task.await.unwrap();
}

#[tokio::test]
async fn on_start_the_objects_of_missing_namespaces_are_purged() {
    let (_dir, store) = store().await;
    create_ns(store.as_ref(), "live").await;
    create_cm(store.as_ref(), "live", "keep").await;
    // Deleted while no controller ran.
    create_ns(store.as_ref(), "gone").await;
    create_cm(store.as_ref(), "gone", "orphan").await;
    remove_ns(store.as_ref(), "gone").await;
    let (stop, task) = wait_synced(&store).await;
    assert!(!exists(store.as_ref(), &cm_key("gone", "orphan")).await);
    assert!(exists(store.as_ref(), &cm_key("live", "keep")).await);
    let _ = stop.send(());
    task.await.unwrap();
}

#[tokio::test]
async fn a_namespace_that_exists_again_is_never_purged() {
    let (_dir, store) = store().await;
    create_ns(store.as_ref(), "again").await;
    create_cm(store.as_ref(), "again", "old").await;
    remove_ns(store.as_ref(), "again").await;
    create_ns(store.as_ref(), "again").await;
    create_cm(store.as_ref(), "again", "new").await;
    // A late purge of the first deletion finds the namespace back.
    let n = purge(store.as_ref(), &namespaced_resources(), "again")
        .await
        .unwrap();
    assert_eq!(n, 0);
    // And so does a controller starting now.
    let (stop, task) = wait_synced(&store).await;
    assert!(exists(store.as_ref(), &cm_key("again", "new")).await);
    let _ = stop.send(());
    task.await.unwrap();
}

#[test]
fn every_namespaced_resource_is_covered_once() {
    let all = namespaced_resources();
    assert!(all.contains(&GroupResource::new("", "configmaps")));
    assert!(all.contains(&GroupResource::new("apps", "deployments")));
    assert!(!all.contains(&namespaces()));
    let mut dedup = all.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), all.len());
}

async fn create_ns_with_finalizer(store: &dyn StoreApi, name: &str) {
    let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
    store
        .create(&ns_key(name), obj, CreateOptions::default())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_terminating_namespace_waits_for_finalizers_then_goes() {
    let (_dir, store) = store().await;
    let (stop, task) = wait_synced(&store).await;
    create_ns_with_finalizer(store.as_ref(), "t").await;
    create_cm(store.as_ref(), "t", "plain").await;
    let held = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "t", "finalizers": ["example.com/hold"]}});
    store
        .create(&cm_key("t", "held"), held, CreateOptions::default())
        .await
        .unwrap();
    delete_ns(store.as_ref(), "t").await;
    let ns = store.get(&ns_key("t")).await.unwrap();
    assert_eq!(ns["status"]["phase"], "Terminating");
    eventually_gone(store.as_ref(), &cm_key("t", "plain")).await;
    // The held object is marked, and the namespace says why it stays.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ns = store.get(&ns_key("t")).await.unwrap();
        let conds = ns["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let remaining = conds
            .iter()
            .find(|c| c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True");
        if let Some(c) = remaining {
            assert_eq!(c["message"], "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no NamespaceFinalizersRemaining: {ns}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let held = store.get(&cm_key("t", "held")).await.unwrap();
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    // Removing the finalizer lets everything go.
    let mut released = held.clone();
    released["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("finalizers");
    store
        .update(&cm_key("t", "held"), released, Default::default())
        .await
        .unwrap();
    eventually_gone(store.as_ref(), &cm_key("t", "held")).await;
    eventually_gone(store.as_ref(), &ns_key("t")).await;
    // And the namespace can be created again.
    create_ns_with_finalizer(store.as_ref(), "t").await;
    let _ = stop.send(());
    task.await.unwrap();
}

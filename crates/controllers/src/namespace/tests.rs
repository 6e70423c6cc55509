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

async fn delete_ns(store: &dyn StoreApi, name: &str) {
    store
        .delete(&ns_key(name), DeleteOptions::default())
        .await
        .unwrap();
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
    delete_ns(store.as_ref(), "gone").await;
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
    delete_ns(store.as_ref(), "again").await;
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

use std::sync::Arc;
use std::time::Duration;

use keelson_api::{CreateOptions, DeleteOptions, GroupResource, ObjectKey, StoreApi};
use keelson_apiextensions::crd_resource;
use serde_json::{json, Value};

use super::CrdController;

fn crd(name: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": plural, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}
    })
}

async fn wait_for(store: &dyn StoreApi, key: &ObjectKey, f: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..100 {
        if let Ok(o) = store.get(key).await {
            if f(&o) {
                return o;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("condition not reached for {key:?}");
}

#[tokio::test]
async fn establishes_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StoreApi> = Arc::new(
        keelson_storage::LocalStore::open(dir.path(), Default::default())
            .await
            .unwrap(),
    );
    tokio::spawn(CrdController::new(store.clone()).run(std::future::pending()));
    let key = ObjectKey::new(crd_resource(), "", "widgets.example.com");
    store
        .create(
            &key,
            crd("widgets.example.com", "widgets"),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let established = wait_for(&*store, &key, |o| {
        o["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
    })
    .await;
    assert_eq!(established["status"]["acceptedNames"]["plural"], "widgets");
    assert_eq!(established["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(
        established["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );

    let gr = GroupResource::new("example.com", "widgets");
    let obj = ObjectKey::new(gr.clone(), "default", "w1");
    store
        .create(
            &obj,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    store.delete(&key, DeleteOptions::default()).await.unwrap();
    for _ in 0..100 {
        if store.get(&key).await.is_err_and(|e| e.is_not_found()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(store.get(&key).await.unwrap_err().is_not_found());
    assert!(store.get(&obj).await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn a_name_held_by_another_crd_is_not_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StoreApi> = Arc::new(
        keelson_storage::LocalStore::open(dir.path(), Default::default())
            .await
            .unwrap(),
    );
    tokio::spawn(CrdController::new(store.clone()).run(std::future::pending()));
    let first = ObjectKey::new(crd_resource(), "", "widgets.example.com");
    store
        .create(
            &first,
            crd("widgets.example.com", "widgets"),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    wait_for(&*store, &first, |o| {
        o["status"]["acceptedNames"]["kind"] == "Widget"
    })
    .await;
    // Same kind, other plural.
    let second = ObjectKey::new(crd_resource(), "", "gizmos.example.com");
    let mut g = crd("gizmos.example.com", "gizmos");
    g["spec"]["names"]["singular"] = json!("gizmo");
    store
        .create(&second, g, CreateOptions::default())
        .await
        .unwrap();
    let got = wait_for(&*store, &second, |o| {
        o["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "NamesAccepted"))
    })
    .await;
    let conds = got["status"]["conditions"].as_array().unwrap();
    let names = conds.iter().find(|c| c["type"] == "NamesAccepted").unwrap();
    assert_eq!(names["status"], "False");
    assert_eq!(names["reason"], "KindConflict");
    assert_eq!(names["message"], "\"Widget\" is already in use");
    let est = conds.iter().find(|c| c["type"] == "Established").unwrap();
    assert_eq!(est["status"], "False");
}

#[tokio::test]
async fn a_crd_goes_once_its_last_held_object_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StoreApi> = Arc::new(
        keelson_storage::LocalStore::open(dir.path(), Default::default())
            .await
            .unwrap(),
    );
    tokio::spawn(CrdController::new(store.clone()).run(std::future::pending()));
    let key = ObjectKey::new(crd_resource(), "", "holds.example.com");
    store
        .create(
            &key,
            crd("holds.example.com", "holds"),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    wait_for(&*store, &key, |o| {
        o["status"]["acceptedNames"]["plural"] == "holds"
            && o["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty())
    })
    .await;
    let obj = ObjectKey::new(GroupResource::new("example.com", "holds"), "default", "h1");
    store
        .create(
            &obj,
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": "h1", "namespace": "default", "finalizers": ["example.com/hold"]}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    store.delete(&key, DeleteOptions::default()).await.unwrap();
    // The controller reports the held object and then has nothing new to
    // write: the count stays at one.
    wait_for(&*store, &key, |o| {
        o["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Terminating" && c["reason"] == "InstanceDeletionPending")
        })
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut held = store.get(&obj).await.unwrap();
    held["metadata"]["finalizers"] = json!([]);
    store
        .update(&obj, held, keelson_api::UpdateOptions::default())
        .await
        .unwrap();
    for _ in 0..300 {
        if store.get(&key).await.is_err_and(|e| e.is_not_found()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the CRD is still there after its last object was released");
}

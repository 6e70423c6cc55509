//! NamespaceLifecycle.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use keelson_api::{
    AdmissionApi, CreateOptions, DeleteOptions, GroupResource, ObjectKey, Operation, StoreApi,
    UpdateOptions,
};
use serde_json::json;

use crate::support::{admission, admission_over, create, MemStore};

#[tokio::test]
async fn missing_namespace_is_404_for_the_namespace() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let err = adm
        .admit(create("", "configmaps", "nope", obj))
        .await
        .unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (404, "NotFound"));
    assert_eq!(err.message, "namespaces \"nope\" not found");
    let j = err.to_status_json();
    assert_eq!(j["details"], json!({"name": "nope", "kind": "namespaces"}));
}

#[tokio::test]
async fn terminating_namespace_is_403_with_a_cause() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let err = adm
        .admit(create("", "configmaps", "doomed", obj))
        .await
        .unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(err.message, "configmaps \"c\" is forbidden: unable to create new content in namespace doomed because it is being terminated");
    let j = err.to_status_json();
    assert_eq!(
        j["details"],
        json!({"name": "c", "kind": "configmaps", "causes": [{"reason": "NamespaceTerminating",
            "message": "namespace doomed is being terminated", "field": "metadata.namespace"}]})
    );
}

#[tokio::test]
async fn updates_skip_the_namespace_check() {
    let adm = admission().await;
    let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "doomed"}});
    let mut req = create("", "configmaps", "doomed", obj.clone());
    req.operation = Operation::Update;
    req.old_object = Some(obj);
    assert!(adm.admit(req).await.is_ok());
}

#[tokio::test]
async fn system_namespaces_cannot_be_deleted() {
    let adm = admission().await;
    for name in ["default", "kube-system", "kube-public"] {
        let mut req = create("", "namespaces", "", json!({}));
        req.operation = Operation::Delete;
        req.object = None;
        req.name = name.into();
        let err = adm.admit(req).await.unwrap_err();
        assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
        assert_eq!(
            err.message,
            format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
        );
        assert_eq!(
            err.to_status_json()["details"],
            json!({"name": name, "kind": "namespaces"})
        );
    }
    let mut req = create("", "namespaces", "", json!({}));
    req.operation = Operation::Delete;
    req.name = "scratch".into();
    req.gr = GroupResource::new("", "namespaces");
    assert!(adm.admit(req).await.is_ok());
}

/// Wait until `f` holds (the cache follows the store's change stream).
async fn eventually<F, Fut>(mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("condition never held");
}

#[tokio::test]
async fn active_namespaces_are_read_from_the_cache() {
    let store = Arc::new(MemStore::watchable());
    let adm = admission_over(store.clone()).await;
    let cm = |n: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}});
    // The first create starts the follower and reads the store.
    adm.admit(create("", "configmaps", "default", cm("a")))
        .await
        .unwrap();
    let (a, s) = (&adm, &store);
    eventually(|| async move {
        let before = s.gets.load(Ordering::Relaxed);
        let admitted = a.admit(create("", "configmaps", "default", cm("b"))).await;
        admitted.is_ok() && s.gets.load(Ordering::Relaxed) == before
    })
    .await;
    let gets = store.gets.load(Ordering::Relaxed);
    for i in 0..10 {
        adm.admit(create("", "configmaps", "default", cm(&format!("c{i}"))))
            .await
            .unwrap();
    }
    assert_eq!(
        store.gets.load(Ordering::Relaxed),
        gets,
        "no store read once in sync"
    );

    // Terminating, seen through the change stream: 403 with kube's words.
    let ns = GroupResource::new("", "namespaces");
    let key = ObjectKey::new(ns.clone(), "", "default");
    let doomed = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "default", "deletionTimestamp": "2026-01-01T00:00:00Z"},
        "status": {"phase": "Terminating"}});
    store
        .update(&key, doomed, UpdateOptions::default())
        .await
        .unwrap();
    eventually(|| async move {
        let admitted = a.admit(create("", "configmaps", "default", cm("d"))).await;
        admitted.is_err_and(|e| e.code == 403)
    })
    .await;

    // Gone: 404 at once, though the cache may still hold it.
    store.delete(&key, DeleteOptions::default()).await.unwrap();
    let err = adm
        .admit(create("", "configmaps", "default", cm("e")))
        .await
        .unwrap_err();
    assert_eq!(err.message, "namespaces \"default\" not found");
}

#[tokio::test]
async fn a_namespace_delete_forces_store_reads() {
    let store = Arc::new(MemStore::watchable());
    let adm = admission_over(store.clone()).await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let ns = GroupResource::new("", "namespaces");
    let fresh = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "fresh"}, "status": {"phase": "Active"}});
    store
        .create(
            &ObjectKey::new(ns.clone(), "", "fresh"),
            fresh,
            CreateOptions::default(),
        )
        .await
        .unwrap();
    // In sync and Active: creates pass without reading the store.
    let (a, s, c) = (&adm, &store, &cm);
    eventually(|| async move {
        let before = s.gets.load(Ordering::Relaxed);
        let admitted = a.admit(create("", "configmaps", "fresh", c.clone())).await;
        admitted.is_ok() && s.gets.load(Ordering::Relaxed) == before
    })
    .await;
    // Its delete is admitted (the store has not marked it yet, so the
    // cache still says Active): the next create asks the store.
    let mut del = create("", "namespaces", "", json!({}));
    del.operation = Operation::Delete;
    del.object = None;
    del.name = "fresh".into();
    adm.admit(del).await.unwrap();
    let before = store.gets.load(Ordering::Relaxed);
    adm.admit(create("", "configmaps", "fresh", cm.clone()))
        .await
        .unwrap();
    assert_eq!(
        store.gets.load(Ordering::Relaxed),
        before + 1,
        "read the store"
    );
}

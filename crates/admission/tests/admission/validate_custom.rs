//! Custom resources get kube's `ValidateObjectMetaAccessorUpdate` on every
//! update, as built-in kinds do (`rest.BeforeUpdate`'s common fields).

use std::sync::Arc;

use keelson_admission::LocalAdmission;
use keelson_api::{
    AdmissionApi, CreateOptions, GroupResource, ObjectKey, Operation, StoreApi as _,
};
use serde_json::{json, Value};

use crate::support::{create, MemStore};

/// Admission whose catalog serves `widgets.example.com/v1` (namespaced).
async fn with_widgets() -> LocalAdmission {
    let store = Arc::new(MemStore::default());
    store
        .create(
            &ObjectKey::new(GroupResource::new("", "namespaces"), "", "default"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"},
                "status": {"phase": "Active"}}),
            CreateOptions::default(),
        )
        .await
        .unwrap();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}});
    let crd = keelson_apiextensions::Crd::from_value(&crd).unwrap();
    let entries = keelson_apiextensions::resources::catalog_entries(&crd);
    let catalog = keelson_registry::Catalog::builtin();
    catalog
        .insert(entries.resources, entries.definitions)
        .unwrap();
    LocalAdmission::new(store, catalog)
}

fn widget(meta: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1}})
}

#[tokio::test]
async fn custom_resource_updates_keep_uid_and_deletion_marks() {
    let adm = with_widgets().await;
    let old = widget(json!({"name": "w", "namespace": "default", "uid": "u-1",
        "creationTimestamp": "2026-01-01T00:00:00Z"}));
    let update = |new: Value| {
        let mut req = create("example.com", "widgets", "default", new);
        req.operation = Operation::Update;
        req.old_object = Some(old.clone());
        req
    };
    let err = adm
        .admit(update(widget(
            json!({"name": "w", "namespace": "default", "uid": "u-2"}),
        )))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            422,
            r#"Widget.example.com "w" is invalid: metadata.uid: Invalid value: "u-2": field is immutable"#
        )
    );
    let err = adm
        .admit(update(widget(
            json!({"name": "w", "namespace": "default", "uid": "u-1",
            "deletionTimestamp": "2026-01-02T03:04:05Z"}),
        )))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Widget.example.com \"w\" is invalid: metadata.deletionTimestamp: Invalid value: 2026-01-02 03:04:05 +0000 UTC: field is immutable"
    );
    // An ordinary update passes.
    let mut ok = old.clone();
    ok["spec"]["size"] = json!(2);
    adm.admit(update(ok)).await.unwrap();
}

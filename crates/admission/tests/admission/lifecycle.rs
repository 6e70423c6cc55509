//! NamespaceLifecycle.

use keelson_api::{AdmissionApi, GroupResource, Operation};
use serde_json::json;

use crate::support::{admission, create};

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

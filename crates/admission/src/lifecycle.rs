//! NamespaceLifecycle (`k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle`):
//! no new content in missing or terminating namespaces, and the system
//! namespaces cannot be deleted. Nothing is cached: one store read per
//! namespaced create.

use keelson_api::StoreApi;
use keelson_apimachinery::{ApiError, ApiResult, GroupResource, ObjectKey, StatusCause};
use serde_json::Value;

/// Namespaces that may never be deleted.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

fn namespaces() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// Access reviews never learn about the namespace's state.
fn is_access_review(gr: &GroupResource) -> bool {
    gr.group == "authorization.k8s.io" && gr.resource == "localsubjectaccessreviews"
}

/// Admit a create of `gr` named `name` (object name or generateName) in
/// `namespace`: `404` if the namespace does not exist, `403` if it is being
/// terminated.
pub(crate) async fn check_create(
    store: &dyn StoreApi,
    gr: &GroupResource,
    namespace: &str,
    name: &str,
) -> ApiResult<()> {
    if namespace.is_empty() || *gr == namespaces() || is_access_review(gr) {
        return Ok(());
    }
    let key = ObjectKey::new(namespaces(), "", namespace);
    let ns = match store.get(&key).await {
        Ok(ns) => ns,
        Err(e) if e.is_not_found() => return Err(ApiError::not_found(&namespaces(), namespace)),
        Err(e) => return Err(e),
    };
    if is_terminating(&ns) {
        return Err(terminating(gr, namespace, name));
    }
    Ok(())
}

fn is_terminating(ns: &Value) -> bool {
    let deleting = ns
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    deleting || ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating")
}

fn terminating(gr: &GroupResource, namespace: &str, name: &str) -> ApiError {
    let mut e = ApiError::forbidden(
        gr,
        name,
        &format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ),
    );
    if let Some(d) = e.details.as_mut() {
        d.causes.push(StatusCause {
            reason: "NamespaceTerminating".into(),
            message: format!("namespace {namespace} is being terminated"),
            field: "metadata.namespace".into(),
        });
    }
    e
}

/// Admit a delete: the system namespaces are immortal.
pub(crate) fn check_delete(gr: &GroupResource, name: &str) -> ApiResult<()> {
    if *gr == namespaces() && IMMORTAL_NAMESPACES.contains(&name) {
        return Err(ApiError::forbidden(
            gr,
            name,
            "this namespace may not be deleted",
        ));
    }
    Ok(())
}

//! The namespaces kube-apiserver creates at startup.

use keelson_api::{CreateOptions, StoreApi};
use keelson_apimachinery::{ApiError, GroupResource, ObjectKey};
use serde_json::{json, Value};

use super::LocalStore;

/// Namespaces that always exist.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// A Namespace object as kube-apiserver's bootstrap controller creates it.
pub fn namespace_object(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// Create each system namespace that is absent.
pub async fn ensure_system_namespaces(store: &LocalStore) -> Result<(), ApiError> {
    let gr = GroupResource::new("", "namespaces");
    for name in SYSTEM_NAMESPACES {
        let key = ObjectKey::new(gr.clone(), "", name);
        match store
            .create(&key, namespace_object(name), CreateOptions::default())
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

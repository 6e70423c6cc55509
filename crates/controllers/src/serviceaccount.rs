//! The ServiceAccount controller (kube-controller-manager's
//! `serviceaccount-controller`): a `default` ServiceAccount in every
//! namespace, created as the namespace appears and re-created if deleted.

use std::future::Future;
use std::sync::Arc;

use keelson_api::{ApiResult, GroupResource, StoreApi};
use serde_json::{json, Value};

use crate::per_namespace::{self, PerNamespace};

/// The `default` ServiceAccount controller.
pub struct ServiceAccountController {
    store: Arc<dyn StoreApi>,
}

struct DefaultSa;

impl PerNamespace for DefaultSa {
    fn name(&self) -> &'static str {
        "serviceaccount"
    }
    fn resource(&self) -> GroupResource {
        GroupResource::new("", "serviceaccounts")
    }
    fn object_name(&self) -> &'static str {
        "default"
    }
    async fn desired(&self, _: &dyn StoreApi, ns: &str) -> ApiResult<Option<Value>> {
        Ok(Some(json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": ns},
        })))
    }
}

impl ServiceAccountController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        ServiceAccountController { store }
    }

    /// Run until `shutdown` completes.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        per_namespace::run(DefaultSa, self.store, shutdown).await
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use keelson_api::{CreateOptions, DeleteOptions, ObjectKey};

    use super::*;

    async fn eventually(store: &dyn StoreApi, key: &ObjectKey, present: bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while store.get(key).await.is_ok() != present {
            assert!(Instant::now() < deadline, "{key:?} present={present}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn default_service_account_in_every_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn StoreApi> = Arc::new(
            keelson_storage::LocalStore::open(dir.path(), Default::default())
                .await
                .unwrap(),
        );
        let task =
            tokio::spawn(ServiceAccountController::new(store.clone()).run(std::future::pending()));
        let sa =
            |ns: &str| ObjectKey::new(GroupResource::new("", "serviceaccounts"), ns, "default");
        eventually(store.as_ref(), &sa("default"), true).await;
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}});
        let started = Instant::now();
        store
            .create(
                &ObjectKey::new(GroupResource::new("", "namespaces"), "", "fresh"),
                ns,
                CreateOptions::default(),
            )
            .await
            .unwrap();
        eventually(store.as_ref(), &sa("fresh"), true).await;
        assert!(started.elapsed() < Duration::from_secs(1));
        // Deleted, it comes back (a new object).
        let uid = |v: &serde_json::Value| v["metadata"]["uid"].as_str().unwrap_or("").to_string();
        let first = uid(&store.get(&sa("fresh")).await.unwrap());
        store
            .delete(&sa("fresh"), DeleteOptions::default())
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match store.get(&sa("fresh")).await {
                Ok(v) if uid(&v) != first => break,
                _ => assert!(Instant::now() < deadline, "not re-created"),
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        task.abort();
    }
}

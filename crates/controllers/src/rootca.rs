//! The root CA publisher (kube-controller-manager's `root-ca-cert-publisher`):
//! a `kube-root-ca.crt` ConfigMap with the cluster CA (`ca.crt`) in every
//! namespace. The CA is read from `kube-system/extension-apiserver-authentication`
//! (`client-ca-file`), which the API server publishes at start
//! ([`crate::bootstrap::apiserver_objects`]).

use std::future::Future;
use std::sync::Arc;

use keelson_api::{ApiResult, GroupResource, ObjectKey, StoreApi};
use serde_json::{json, Value};

use crate::per_namespace::{self, PerNamespace};

/// The ConfigMap every namespace gets.
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";

/// How long a namespace waits for the published CA.
const CA_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// The first pause between looks, doubled up to [`CA_WAIT_MAX_STEP`]: the
/// gateway publishes the CA a millisecond or two after the controllers
/// start, and every start waits for this controller's first object.
const CA_WAIT_FIRST_STEP: std::time::Duration = std::time::Duration::from_millis(1);
/// The longest pause between looks.
const CA_WAIT_MAX_STEP: std::time::Duration = std::time::Duration::from_millis(100);

/// The root CA publisher.
pub struct RootCaController {
    store: Arc<dyn StoreApi>,
}

struct RootCa;

fn configmaps() -> GroupResource {
    GroupResource::new("", "configmaps")
}

/// The cluster CA the API server published, if it has.
pub async fn published_ca(store: &dyn StoreApi) -> ApiResult<Option<String>> {
    let key = ObjectKey::new(
        configmaps(),
        "kube-system",
        crate::bootstrap::AUTHENTICATION_CONFIGMAP,
    );
    match store.get(&key).await {
        Ok(cm) => Ok(cm
            .pointer("/data/client-ca-file")
            .and_then(Value::as_str)
            .map(str::to_string)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

impl PerNamespace for RootCa {
    fn name(&self) -> &'static str {
        "root-ca-cert-publisher"
    }
    fn resource(&self) -> GroupResource {
        configmaps()
    }
    fn object_name(&self) -> &'static str {
        ROOT_CA_CONFIGMAP
    }
    async fn desired(&self, store: &dyn StoreApi, ns: &str) -> ApiResult<Option<Value>> {
        // The API server publishes its CA right after it starts: wait for
        // it a little, then fail (the controller re-syncs a second later).
        let mut ca = published_ca(store).await?;
        let deadline = tokio::time::Instant::now() + CA_WAIT;
        let mut step = CA_WAIT_FIRST_STEP;
        while ca.is_none() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(step).await;
            step = (step * 2).min(CA_WAIT_MAX_STEP);
            ca = published_ca(store).await?;
        }
        let Some(ca) = ca else {
            return Err(keelson_api::ApiError::unavailable(
                "the cluster CA is not published yet",
            ));
        };
        Ok(Some(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": ROOT_CA_CONFIGMAP,
                "namespace": ns,
            },
            "data": {"ca.crt": ca},
        })))
    }
}

impl RootCaController {
    /// A controller over `store`.
    pub fn new(store: Arc<dyn StoreApi>) -> Self {
        RootCaController { store }
    }

    /// Run until `shutdown` completes.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        per_namespace::run(RootCa, self.store, shutdown).await
    }
}

//! Creating CRDs and objects from YAML before a test starts.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::Scope;
use serde::Deserialize;

use crate::TestServerError;

/// Interval between readiness polls.
const POLL: Duration = Duration::from_millis(10);

/// The YAML documents of `yaml`, skipping empty ones.
fn documents(yaml: &str) -> Result<Vec<serde_json::Value>, TestServerError> {
    let mut out = Vec::new();
    for (index, doc) in serde_yaml::Deserializer::from_str(yaml).enumerate() {
        let value = serde_json::Value::deserialize(doc).map_err(|e| TestServerError::Yaml {
            index,
            message: e.to_string(),
        })?;
        if !value.is_null() {
            out.push(value);
        }
    }
    Ok(out)
}

/// Create the CRDs of `yaml` and wait until each is `Established` and its
/// resource is served.
pub(crate) async fn crds(
    client: &kube::Client,
    yaml: &str,
    timeout: Duration,
) -> Result<(), TestServerError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut created = Vec::new();
    for (index, doc) in documents(yaml)?.into_iter().enumerate() {
        let crd: CustomResourceDefinition =
            serde_json::from_value(doc).map_err(|e| TestServerError::Yaml {
                index,
                message: format!("not a CustomResourceDefinition: {e}"),
            })?;
        created.push(api.create(&PostParams::default(), &crd).await?);
    }
    let deadline = tokio::time::Instant::now() + timeout;
    for crd in created {
        let name = crd.metadata.name.clone().unwrap_or_default();
        loop {
            let current = api.get(&name).await?;
            let established = current
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                });
            if established && served(client, &current).await {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(TestServerError::Timeout(format!(
                    "CustomResourceDefinition {name} not Established and served after {timeout:?}"
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }
    Ok(())
}

/// Whether discovery lists every served version of the CRD's resource.
async fn served(client: &kube::Client, crd: &CustomResourceDefinition) -> bool {
    let spec = &crd.spec;
    for v in spec.versions.iter().filter(|v| v.served) {
        let gvk = GroupVersionKind::gvk(&spec.group, &v.name, &spec.names.kind);
        if kube::discovery::pinned_kind(client, &gvk).await.is_err() {
            return false;
        }
    }
    true
}

/// Create the objects of `yaml`, in order.
pub(crate) async fn objects(
    client: &kube::Client,
    yaml: &str,
    timeout: Duration,
) -> Result<(), TestServerError> {
    for (index, doc) in documents(yaml)?.into_iter().enumerate() {
        let bad = |message: String| TestServerError::Yaml { index, message };
        let obj: DynamicObject =
            serde_json::from_value(doc).map_err(|e| bad(format!("not an object: {e}")))?;
        let types = obj
            .types
            .clone()
            .ok_or_else(|| bad("no apiVersion and kind".into()))?;
        let gvk = GroupVersionKind::try_from(&types).map_err(|e| bad(e.to_string()))?;
        let (resource, caps) = discover(client, &gvk, timeout).await?;
        let api: Api<DynamicObject> = match caps.scope {
            Scope::Cluster => Api::all_with(client.clone(), &resource),
            Scope::Namespaced => {
                let ns = obj.metadata.namespace.as_deref().unwrap_or("default");
                Api::namespaced_with(client.clone(), ns, &resource)
            }
        };
        api.create(&PostParams::default(), &obj).await?;
    }
    Ok(())
}

/// The resource serving `gvk`, retried while it is not served yet (a CRD
/// created by an earlier document of the same stream).
async fn discover(
    client: &kube::Client,
    gvk: &GroupVersionKind,
    timeout: Duration,
) -> Result<(kube::core::ApiResource, kube::discovery::ApiCapabilities), TestServerError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match kube::discovery::pinned_kind(client, gvk).await {
            Ok(found) => return Ok(found),
            Err(e) if tokio::time::Instant::now() > deadline => return Err(e.into()),
            Err(_) => tokio::time::sleep(POLL).await,
        }
    }
}

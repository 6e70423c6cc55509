//! PersistentVolumeClaimResize
//! (`plugin/pkg/admission/storage/persistentvolume/resize`): growing a
//! claim's `spec.resources.requests.storage` needs a bound claim whose
//! StorageClass (unchanged) sets `allowVolumeExpansion: true`.

use keelson_apimachinery::ApiResult;
use serde_json::Value;

use super::cache::{live_get, storage_classes};
use super::util::{annotation, nanos, str_at};
use super::Attrs;

fn requested_storage(pvc: &Value) -> i128 {
    pvc.get("spec")
        .and_then(|s| s.get("resources"))
        .and_then(|r| r.get("requests"))
        .and_then(|r| r.get("storage"))
        .and_then(nanos)
        .unwrap_or(0)
}

/// `GetPersistentVolumeClaimClass`: the beta annotation, else the field.
fn class_of(pvc: &Value) -> String {
    if let Some(c) = annotation(pvc, "volume.beta.kubernetes.io/storage-class") {
        return c.to_string();
    }
    str_at(pvc, &["spec", "storageClassName"]).to_string()
}

/// The validating phase.
pub(crate) async fn validate(a: &Attrs<'_>, pvc: &Value) -> ApiResult<()> {
    if !a.is("", "persistentvolumeclaims") || a.req.operation != keelson_api::Operation::Update {
        return Ok(());
    }
    let Some(old) = a.req.old_object.as_ref() else {
        return Ok(());
    };
    if requested_storage(pvc) <= requested_storage(old) {
        return Ok(());
    }
    if str_at(old, &["status", "phase"]) != "Bound" {
        return Err(a.forbidden("Only bound persistent volume claims can be expanded"));
    }
    let (class, old_class) = (class_of(pvc), class_of(old));
    let allowed = if class.is_empty() || class != old_class {
        false
    } else {
        let gr = storage_classes();
        let sc = match a.cache.get(a.store, &gr, "", &class).await {
            Ok(Some(sc)) => Some(sc),
            _ => live_get(a.store, &gr, "", &class).await.ok().flatten(),
        };
        sc.and_then(|sc| sc.get("allowVolumeExpansion").and_then(Value::as_bool))
            .unwrap_or(false)
    };
    if !allowed {
        return Err(a.forbidden(
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
        ));
    }
    Ok(())
}

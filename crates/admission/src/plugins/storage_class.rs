//! DefaultStorageClass (`plugin/pkg/admission/storage/storageclass/setdefault`):
//! a PersistentVolumeClaim created without a class (neither
//! `spec.storageClassName` nor the beta annotation) gets the default
//! StorageClass (`storageclass.kubernetes.io/is-default-class: "true"`);
//! of several defaults, the newest (then the first by name).

use keelson_apimachinery::ApiResult;
use serde_json::Value;

use super::cache::storage_classes;
use super::util::{annotation, spec_mut};
use super::Attrs;

const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";
const DEFAULT_ANNOTATIONS: [&str; 2] = [
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// Of the classes whose `annotations` mark them default, kube's pick:
/// newest `creationTimestamp`, then lowest name.
pub(crate) fn newest_default(classes: Vec<Value>, annotations: &[&str]) -> Option<Value> {
    let mut defaults: Vec<Value> = classes
        .into_iter()
        .filter(|c| annotations.iter().any(|k| annotation(c, k) == Some("true")))
        .collect();
    let meta = |c: &Value, k: &str| keelson_apimachinery::meta::meta_str(c, k).to_string();
    defaults.sort_by(|a, b| {
        let (ta, tb) = (
            timestamp(&meta(a, "creationTimestamp")),
            timestamp(&meta(b, "creationTimestamp")),
        );
        tb.cmp(&ta)
            .then_with(|| meta(a, "name").cmp(&meta(b, "name")))
    });
    defaults.into_iter().next()
}

/// An RFC 3339 time as a sortable instant (unparsable: the earliest).
fn timestamp(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.timestamp_nanos_opt().unwrap_or(0))
        .unwrap_or(i64::MIN)
}

/// The mutating phase.
pub(crate) async fn admit(a: &Attrs<'_>, pvc: &mut Value) -> ApiResult<()> {
    if !a.is("", "persistentvolumeclaims") || a.req.operation != keelson_api::Operation::Create {
        return Ok(());
    }
    let has_class = annotation(pvc, BETA_CLASS_ANNOTATION).is_some()
        || pvc
            .get("spec")
            .and_then(|s| s.get("storageClassName"))
            .is_some_and(|v| !v.is_null());
    if has_class {
        return Ok(());
    }
    let classes = a
        .cache
        .list(a.store, &storage_classes(), None)
        .await
        .map_err(|e| a.forbidden(&e.message))?;
    let Some(class) = newest_default(classes, &DEFAULT_ANNOTATIONS) else {
        return Ok(());
    };
    let name = keelson_apimachinery::meta::meta_str(&class, "name").to_string();
    if let Some(spec) = spec_mut(pvc) {
        spec.insert("storageClassName".into(), Value::from(name));
    }
    Ok(())
}

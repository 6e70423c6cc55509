//! StorageObjectInUseProtection
//! (`plugin/pkg/admission/storage/storageobjectinuseprotection`): a created
//! PersistentVolume gets the `kubernetes.io/pv-protection` finalizer and a
//! created PersistentVolumeClaim `kubernetes.io/pvc-protection`.

use serde_json::Value;

use super::util::child;
use super::Attrs;

/// The mutating phase.
pub(crate) fn admit(a: &Attrs<'_>, object: &mut Value) {
    if a.req.operation != keelson_api::Operation::Create {
        return;
    }
    let finalizer = if a.is("", "persistentvolumes") {
        "kubernetes.io/pv-protection"
    } else if a.is("", "persistentvolumeclaims") {
        "kubernetes.io/pvc-protection"
    } else {
        return;
    };
    let Some(root) = object.as_object_mut() else {
        return;
    };
    let Some(meta) = child(root, "metadata") else {
        return;
    };
    match meta.get_mut("finalizers").and_then(Value::as_array_mut) {
        Some(list) => {
            if !list.iter().any(|f| f.as_str() == Some(finalizer)) {
                list.push(Value::from(finalizer));
            }
        }
        None => {
            meta.insert(
                "finalizers".into(),
                Value::Array(vec![Value::from(finalizer)]),
            );
        }
    }
}

//! node.k8s.io: RuntimeClass (`pkg/apis/node/validation`:
//! `ValidateRuntimeClass`, `ValidateRuntimeClassUpdate`).

use keelson_apimachinery::FieldError;
use serde_json::{json, Value};

use super::core_pod::{resources, validate_tolerations, Names};
use super::util::{dns1123_label, immutable, list_of, obj_of, str_of, validate_labels};
use super::{Path, Write};

/// The errors of one object of this group's `kind`.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "RuntimeClass" => {
            let mut errs = validate_runtime_class(obj);
            if let Some(old) = w.old() {
                errs.extend(validate_runtime_class_update(obj, old));
            }
            errs
        }
        _ => Vec::new(),
    }
}

/// `ValidateRuntimeClass`: the handler is a DNS label (an empty one is
/// `Invalid`, not `Required`); `overhead.podFixed` checked as a
/// container's `limits` (kube's `validateOverhead` reuses
/// `ValidateContainerResourceRequirements`, so the paths read
/// `overhead.limits[cpu]`); the scheduling node selector valid labels and
/// its tolerations (`ValidateTolerations`).
fn validate_runtime_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = dns1123_label(str_of(obj, "handler"), &Path::new("handler"));
    if let Some(o) = obj.get("overhead").filter(|o| o.is_object()) {
        let limits = json!({"limits": o.get("podFixed").cloned().unwrap_or(Value::Null)});
        errs.extend(resources(
            &limits,
            Names::Container,
            &[],
            &Path::new("overhead"),
        ));
    }
    if let Some(s) = obj.get("scheduling").filter(|s| s.is_object()) {
        let sp = Path::new("scheduling");
        if let Some(sel) = obj_of(s, "nodeSelector") {
            errs.extend(validate_labels(Some(sel), &sp.child("nodeSelector")));
        }
        errs.extend(validate_tolerations(
            list_of(s, "tolerations"),
            &sp.child("tolerations"),
        ));
    }
    errs
}

/// `ValidateRuntimeClassUpdate`: the handler is immutable.
fn validate_runtime_class_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    immutable(
        obj.get("handler"),
        old.get("handler"),
        &Path::new("handler"),
    )
}

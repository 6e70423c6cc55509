//! node.k8s.io: RuntimeClass (`pkg/apis/node/validation`:
//! `ValidateRuntimeClass`, `ValidateRuntimeClassUpdate`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{dns1123_label, immutable, obj_of, str_of, validate_labels};
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
/// `Invalid`, not `Required`), the scheduling node selector valid labels.
fn validate_runtime_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = dns1123_label(str_of(obj, "handler"), &Path::new("handler"));
    if let Some(s) = obj.get("scheduling").filter(|s| s.is_object()) {
        if let Some(sel) = obj_of(s, "nodeSelector") {
            errs.extend(validate_labels(
                Some(sel),
                &Path::new("scheduling").child("nodeSelector"),
            ));
        }
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

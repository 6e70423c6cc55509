//! `pods/resize` (get, update, patch): kube's `podResizeStrategy`. A
//! write changes only the `resources` and `resizePolicy` of the pod's
//! existing containers and init containers (matched by name; everything
//! else in the body is dropped, as `dropNonResizeUpdates`), then the parts
//! of kube's `ValidatePodResize` that need no node: static and Windows
//! pods and pods with pod-level resources cannot be resized, requests and
//! limits may not be removed, and only `cpu` and `memory` may change.

use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, FieldErrorKind};
use serde_json::{Map, Value};

fn forbidden(field: &str, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Forbidden,
        field: field.to_string(),
        value: None,
        detail: detail.to_string(),
    }
}

/// Copy `resources`/`resizePolicy` of `list`'s containers from `new` into
/// `merged`, by container name.
fn copy_resources(merged: &mut Value, new: &Value, list: &str) {
    let Some(new_list) = new
        .pointer(&format!("/spec/{}", list))
        .and_then(Value::as_array)
    else {
        return;
    };
    let Some(old_list) = merged
        .pointer_mut(&format!("/spec/{}", list))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for nc in new_list {
        let name = nc.get("name");
        let Some(oc) = old_list
            .iter_mut()
            .find(|c| c.get("name") == name)
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for f in ["resources", "resizePolicy"] {
            match nc.get(f) {
                Some(v) => {
                    oc.insert(f.to_string(), v.clone());
                }
                None => {
                    oc.remove(f);
                }
            }
        }
    }
}

fn map_at(c: &Value, part: &str) -> Map<String, Value> {
    c.pointer(&format!("/resources/{}", part))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The object a resize stores: `old` with the request's container
/// resources, validated as kube does.
pub(crate) fn merge(new: Value, old: &Value) -> ApiResult<Value> {
    let mut merged = old.clone();
    copy_resources(&mut merged, &new, "containers");
    copy_resources(&mut merged, &new, "initContainers");
    // kube keeps the stored object but the request's identity.
    let rv = meta_str(&new, "resourceVersion").to_string();
    keelson_apimachinery::meta::set_meta_str(&mut merged, "resourceVersion", &rv);
    let name = meta_str(old, "name");
    let invalid = |errs: &[FieldError]| ApiError::invalid("", "Pod", name, errs);
    if old
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(super::ephemeral::MIRROR_POD_ANNOTATION))
        .is_some()
    {
        return Err(invalid(&[forbidden("", "static pods cannot be resized")]));
    }
    if old.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return Err(invalid(&[forbidden("", "windows pods cannot be resized")]));
    }
    let mut errs = Vec::new();
    if merged
        .pointer("/spec/resources")
        .is_some_and(|r| !r.is_null())
    {
        errs.push(forbidden(
            "spec.resources",
            "pods with pod-level resources cannot be resized",
        ));
    }
    let mut other_changed = false;
    for list in ["containers", "initContainers"] {
        let olds = old
            .pointer(&format!("/spec/{}", list))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let news = merged
            .pointer(&format!("/spec/{}", list))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (ix, (o, n)) in olds.iter().zip(news.iter()).enumerate() {
            for part in ["requests", "limits"] {
                let (om, nm) = (map_at(o, part), map_at(n, part));
                for res in om.keys().filter(|r| !nm.contains_key(*r)) {
                    errs.push(forbidden(
                        &format!("spec.{}[{}].resources.{}[{}]", list, ix, part, res),
                        "resource removal is not supported",
                    ));
                }
                let others = |m: &Map<String, Value>| {
                    m.iter()
                        .filter(|(k, _)| *k != "cpu" && *k != "memory")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect::<Map<String, Value>>()
                };
                if others(&om) != others(&nm) {
                    other_changed = true;
                }
            }
        }
    }
    if other_changed {
        errs.push(forbidden(
            "spec",
            "only cpu and memory resources are mutable",
        ));
    }
    if errs.is_empty() {
        Ok(merged)
    } else {
        Err(invalid(&errs))
    }
}

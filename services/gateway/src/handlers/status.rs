//! The `status` subresource and status reset: a create starts with an
//! empty status (`Pending` for pods), a main-resource write keeps the stored
//! status, and a `/status` write changes only the status.

use serde_json::Value;

use super::Ctx;
/// Reset the status of an object being created.
pub(crate) fn strip_status_for_create(cx: &Ctx<'_>, obj: &mut Value) {
    if let Some(status) = cx.info.strategy.status.initial_status() {
        if let Some(m) = obj.as_object_mut() {
            m.insert("status".into(), status);
        }
    }
}

/// Replace `target`'s status by `source`'s.
pub(crate) fn set_status_from(target: &mut Value, source: &Value) {
    if let Some(m) = target.as_object_mut() {
        match source.get("status") {
            Some(s) => {
                m.insert("status".into(), s.clone());
            }
            None => {
                m.remove("status");
            }
        }
    }
}

/// Main-resource writes keep the stored status; `/status` writes change the
/// status and the request's metadata (with its resourceVersion as
/// precondition, and an apply's managedFields) except what the resource's
/// status strategy resets, and keep everything else stored. Pods'
/// `ephemeralcontainers` and `resize` writes change only what those
/// subresources own (kube's validation failures are `422`).
pub(crate) fn merge_subresource(
    cx: &Ctx<'_>,
    new: Value,
    old: &Value,
) -> keelson_apimachinery::ApiResult<Value> {
    match cx.ri.subresource.as_str() {
        "ephemeralcontainers" => return super::ephemeral::merge(new, old),
        "resize" => return super::resize::merge(new, old),
        _ => {}
    }
    Ok(if cx.ri.subresource == "status" {
        let mut merged = old.clone();
        set_status_from(&mut merged, &new);
        let mut meta = new
            .get("metadata")
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        if let (Some(meta), stored) = (meta.as_object_mut(), old.get("metadata")) {
            for field in &cx.info.strategy.status_resets_metadata {
                match stored.and_then(|m| m.get(field)) {
                    Some(v) => {
                        meta.insert(field.clone(), v.clone());
                    }
                    None => {
                        meta.remove(field);
                    }
                }
            }
        }
        if let Some(m) = merged.as_object_mut() {
            m.insert("metadata".into(), meta);
        }
        merged
    } else {
        let mut new = new;
        if cx.info.strategy.status.keeps_stored_status() {
            set_status_from(&mut new, old);
        }
        new
    })
}

//! The `status` subresource and status reset: a create starts with an
//! empty status (`Pending` for pods), a main-resource write keeps the stored
//! status, and a `/status` write changes only the status.

use keelson_apimachinery::meta::meta_str;
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

/// Main-resource writes keep the stored status; `/status` writes change only
/// the status (and carry the request's resourceVersion as precondition, and
/// its managedFields: an apply's, or ones the client set).
pub(crate) fn merge_subresource(cx: &Ctx<'_>, new: Value, old: &Value) -> Value {
    if cx.ri.subresource == "status" {
        let mut merged = old.clone();
        set_status_from(&mut merged, &new);
        let rv = meta_str(&new, "resourceVersion").to_string();
        keelson_apimachinery::meta::set_meta_str(&mut merged, "resourceVersion", &rv);
        if let (Some(mf), Some(meta)) = (
            new.pointer("/metadata/managedFields"),
            keelson_apimachinery::meta::meta_mut(&mut merged),
        ) {
            meta.insert("managedFields".into(), mf.clone());
        }
        merged
    } else {
        let mut new = new;
        if cx.info.strategy.status.keeps_stored_status() {
            set_status_from(&mut new, old);
        }
        new
    }
}

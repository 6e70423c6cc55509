//! The CertificateSigningRequest strategy (kube's
//! `pkg/registry/certificates/certificates/strategy.go`).
//!
//! On create the request records who asked: `spec.username`, `uid`,
//! `groups` and `extra` come from the authenticated user (after
//! impersonation), whatever the client sent, and `status` starts empty. An
//! update of the main resource keeps the stored `spec` and `status`: the
//! `approval` subresource and the signer change them.

use keelson_api::UserInfo;
use serde_json::{Map, Value};

/// `PrepareForCreate`: the requester's identity, no status.
pub(super) fn prepare_create(obj: &mut Value, user: Option<&UserInfo>) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    m.insert("status".into(), Value::Object(Map::new()));
    let Some(spec) = super::child(m, "spec") else {
        return;
    };
    for key in ["username", "uid", "groups", "extra"] {
        spec.remove(key);
    }
    let Some(user) = user else {
        return;
    };
    if !user.username.is_empty() {
        spec.insert("username".into(), user.username.clone().into());
    }
    if !user.uid.is_empty() {
        spec.insert("uid".into(), user.uid.clone().into());
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), user.groups.clone().into());
    }
    if !user.extra.is_empty() {
        let extra = user
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect();
        spec.insert("extra".into(), Value::Object(extra));
    }
}

/// `PrepareForUpdate`: the stored spec and status win.
pub(super) fn prepare_update(obj: &mut Value, old: &Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    for key in ["spec", "status"] {
        match old.get(key) {
            Some(v) => {
                m.insert(key.into(), v.clone());
            }
            None => {
                m.remove(key);
            }
        }
    }
}

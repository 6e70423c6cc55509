//! Defaulting: the values kube-apiserver fills in before validation, per
//! resource (`k8s.io/kubernetes/pkg/apis/*/v1/defaults.go` and the create
//! strategies), limited to what users see in `kubectl get -o yaml`.
//!
//! Each resource family has its own module; [`apply`] dispatches by group
//! and kind. Odd input (a spec that is not an object) is left alone: the
//! decode step has already rejected wrong types.

mod apiextensions;
mod apps;
mod autoscaling;
mod batch;
mod core;
mod pod;

use serde_json::{Map, Value};

use keelson_api::Operation;

/// Apply the defaults of `group`/`kind` to `obj`; `old` is the stored
/// object on update, `subresource` the request's (`status`, `finalize`).
pub(crate) fn apply(
    group: &str,
    kind: &str,
    op: Operation,
    subresource: &str,
    obj: &mut Value,
    old: Option<&Value>,
) {
    match (group, kind) {
        ("", "Pod") => pod::pod(obj),
        ("", "PodTemplate") => pod::template_at(obj, &["template"], true),
        ("", "ReplicationController") => core::replication_controller(obj),
        ("", "Service") => core::service(obj),
        ("", "Namespace") => core::namespace(obj, op, subresource, old),
        ("apps", "Deployment") => apps::deployment(obj),
        ("apps", "ReplicaSet") => apps::replica_set(obj),
        ("apps", "StatefulSet") => apps::stateful_set(obj),
        ("apps", "DaemonSet") => apps::daemon_set(obj),
        ("batch", "Job") => batch::job(obj),
        ("batch", "CronJob") => batch::cron_job(obj),
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaling::horizontal_pod_autoscaler(obj),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            apiextensions::custom_resource_definition(obj)
        }
        _ => {}
    }
}

/// The object at `path` below `v`, if every step is an object.
pub(super) fn object_at<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    for key in path {
        cur = cur.as_object_mut()?.get_mut(*key)?;
    }
    cur.as_object_mut()
}

/// The object at `key`, created (as `{}`) when absent or null.
pub(super) fn child<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// Set `key` when it is absent or null (Go: a nil pointer).
pub(super) fn or_set(m: &mut Map<String, Value>, key: &str, v: impl Into<Value>) {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = v.into();
    }
}

/// Set `key` when it is absent, null or `""` (Go: an empty string).
pub(super) fn or_set_str(m: &mut Map<String, Value>, key: &str, v: &str) {
    let slot = m.entry(key).or_insert(Value::Null);
    if slot.is_null() || slot.as_str() == Some("") {
        *slot = Value::String(v.into());
    }
}

/// Each object element of the array at `key`.
pub(super) fn each<'a>(
    m: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    m.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

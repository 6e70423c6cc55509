//! Core (`v1`) defaults other than pods (`SetDefaults_*` of
//! `pkg/apis/core/v1/defaults.go` with the declarative `+default` tags) and
//! what the core create/update strategies add: Service, Namespace,
//! ReplicationController, Secret, PersistentVolume, PersistentVolumeClaim,
//! Endpoints, Node, LimitRange, ServiceAccount.

use serde_json::{Map, Value};

use keelson_api::Operation;
use keelson_apimachinery::meta::now_rfc3339;

use super::{child, each, object_at, or_set, or_set_str, pod};

/// kube's `DefaultClientIPServiceAffinitySeconds` (3 hours).
const CLIENT_IP_AFFINITY_SECONDS: i64 = 10800;

/// Service: type, session affinity (and its ClientIP timeout), traffic
/// policies, ports, and the load balancer ingress `ipMode`.
pub(super) fn service(obj: &mut Value) {
    let Some(spec) = object_at(obj, &["spec"]) else {
        return;
    };
    or_set_str(spec, "sessionAffinity", "None");
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.shift_remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    serde_json::json!({"clientIP": {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}}),
                );
            }
        }
        _ => {}
    }
    or_set_str(spec, "type", "ClusterIP");
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if matches!(ty.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        or_set_str(spec, "internalTrafficPolicy", "Cluster");
    }
    // kube's `ExternallyAccessible`: NodePort, LoadBalancer, or ClusterIP
    // with external IPs.
    let has_external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") || (ty == "ClusterIP" && has_external_ips)
    {
        or_set_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if ty == "LoadBalancer" {
        or_set(spec, "allocateLoadBalancerNodePorts", true);
    }
    for port in each(spec, "ports") {
        or_set_str(port, "protocol", "TCP");
        let target_unset = match port.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(_) => false,
        };
        if target_unset {
            if let Some(p) = port.get("port").cloned() {
                port.insert("targetPort".into(), p);
            }
        }
    }
    if ty == "LoadBalancer" {
        if let Some(status) = object_at(obj, &["status", "loadBalancer"]) {
            for ingress in each(status, "ingress") {
                let has_ip = ingress
                    .get("ip")
                    .and_then(Value::as_str)
                    .is_some_and(|ip| !ip.is_empty());
                if has_ip {
                    or_set(ingress, "ipMode", "VIP");
                }
            }
        }
    }
}

/// Namespace: the `kubernetes.io/metadata.name` label; on create the
/// `kubernetes` finalizer and phase `Active`; on update the stored
/// finalizers and status are kept (they change through `/finalize` and
/// `/status`).
pub(super) fn namespace(obj: &mut Value, op: Operation, subresource: &str, old: Option<&Value>) {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if !name.is_empty() {
        if let Some(labels) = object_at(obj, &["metadata"]).and_then(|m| child(m, "labels")) {
            labels.insert("kubernetes.io/metadata.name".into(), name.into());
        }
    }
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    match (op, old) {
        (Operation::Create, _) => {
            if let Some(spec) = child(root, "spec") {
                or_set(spec, "finalizers", vec![Value::from("kubernetes")]);
            }
            let mut status = Map::new();
            status.insert("phase".into(), "Active".into());
            root.insert("status".into(), Value::Object(status));
        }
        (Operation::Update, Some(old)) => {
            if subresource != "finalize" {
                if let Some(f) = old.pointer("/spec/finalizers") {
                    if let Some(spec) = child(root, "spec") {
                        spec.insert("finalizers".into(), f.clone());
                    }
                }
            }
            if subresource != "status" {
                if let Some(s) = old.get("status") {
                    root.insert("status".into(), s.clone());
                }
            }
        }
        _ => {}
    }
}

/// ReplicationController: replicas, and selector/labels from the template's
/// labels.
pub(super) fn replication_controller(obj: &mut Value) {
    let template_labels = obj.pointer("/spec/template/metadata/labels").cloned();
    if let Some(labels) = template_labels.filter(|l| l.as_object().is_some_and(|m| !m.is_empty())) {
        if let Some(spec) = object_at(obj, &["spec"]) {
            let selector_empty = spec
                .get("selector")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty);
            if selector_empty {
                spec.insert("selector".into(), labels.clone());
            }
        }
        if let Some(meta) = object_at(obj, &["metadata"]) {
            let empty = meta
                .get("labels")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty);
            if empty {
                meta.insert("labels".into(), labels);
            }
        }
    }
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set(spec, "replicas", 1);
    }
    pod::template_at(obj, &["spec", "template"], true);
}

/// Secret: `type: Opaque`.
pub(super) fn secret(obj: &mut Value) {
    if let Some(root) = obj.as_object_mut() {
        or_set_str(root, "type", "Opaque");
        merge_string_data(root);
    }
}

/// kube's v1 Secret conversion: every `stringData` entry is written into
/// `data` (base64-encoded, overriding a `data` entry of the same key) and
/// `stringData` itself is never stored. A value that is not a string is
/// ignored.
fn merge_string_data(root: &mut Map<String, Value>) {
    use base64::Engine as _;
    let Some(string_data) = root.shift_remove("stringData") else {
        return;
    };
    let Value::Object(entries) = string_data else {
        return;
    };
    if entries.is_empty() {
        return;
    }
    if !root.get("data").is_some_and(Value::is_object) {
        root.insert("data".into(), Value::Object(Map::new()));
    }
    let Some(Value::Object(data)) = root.get_mut("data") else {
        return;
    };
    for (key, value) in entries {
        if let Value::String(text) = value {
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            data.insert(key, Value::String(encoded));
        }
    }
}

/// PersistentVolume: phase `Pending`, reclaim policy `Retain`, volume mode
/// `Filesystem` and the volume source's defaults; a `/status` write stamps
/// `lastPhaseTransitionTime` when the phase changes (and keeps the stored
/// one when it does not), as kube's status strategy does. The create-time
/// status is the registry's status policy.
pub(super) fn persistent_volume(
    obj: &mut Value,
    op: Operation,
    subresource: &str,
    old: Option<&Value>,
) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    if let Some(status) = child(root, "status") {
        or_set_str(status, "phase", "Pending");
    }
    if let Some(spec) = child(root, "spec") {
        or_set_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        or_set(spec, "volumeMode", "Filesystem");
        pod::persistent_volume_source(spec);
    }
    if let (Operation::Update, "status", Some(old)) = (op, subresource, old) {
        stamp_phase_transition(root, old);
    }
}

/// kube's PV status strategy: the same phase keeps the stored transition
/// time unless the request sets one; a new phase gets the current time
/// unless the request sets a time other than the stored one.
fn stamp_phase_transition(root: &mut Map<String, Value>, old: &Value) {
    let old_status = old.get("status");
    let old_phase = old_status
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        // A stored object is read back defaulted.
        .unwrap_or("Pending")
        .to_string();
    let old_time = old_status
        .and_then(|s| s.get("lastPhaseTransitionTime"))
        .filter(|t| !t.is_null())
        .cloned();
    let Some(status) = child(root, "status") else {
        return;
    };
    let same_phase = status.get("phase").and_then(Value::as_str) == Some(old_phase.as_str());
    let new_time = status
        .get("lastPhaseTransitionTime")
        .filter(|t| !t.is_null())
        .cloned();
    match (same_phase, new_time) {
        (true, None) => {
            if let Some(t) = old_time {
                status.insert("lastPhaseTransitionTime".into(), t);
            }
        }
        (false, t) if t.is_none() || t == old_time => {
            status.insert("lastPhaseTransitionTime".into(), now_rfc3339().into());
        }
        _ => {}
    }
}

/// PersistentVolumeClaim: phase `Pending` and the claim spec's volume mode.
pub(super) fn persistent_volume_claim(obj: &mut Value) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    if let Some(status) = child(root, "status") {
        or_set_str(status, "phase", "Pending");
    }
    if let Some(spec) = child(root, "spec") {
        claim_spec(spec);
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`: volume mode `Filesystem` (also
/// for ephemeral volumes' claim templates).
pub(super) fn claim_spec(spec: &mut Map<String, Value>) {
    or_set(spec, "volumeMode", "Filesystem");
}

/// Endpoints: each subset port's protocol `TCP`.
pub(super) fn endpoints(obj: &mut Value) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    for subset in each(root, "subsets") {
        for port in each(subset, "ports") {
            or_set_str(port, "protocol", "TCP");
        }
    }
}

/// Node: `status.allocatable` from `status.capacity` when unset; kube's
/// strategy drops the removed dynamic kubelet config (`spec.configSource`,
/// `status.config`) on create, and on updates unless the stored node has
/// it. A node keeps the status it is created with (registry policy).
pub(super) fn node(obj: &mut Value, op: Operation, subresource: &str, old: Option<&Value>) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let old_has = |path: &str| {
        old.and_then(|o| o.pointer(path))
            .is_some_and(|v| !v.is_null())
    };
    let (drop_config_source, drop_status_config) = match (op, subresource) {
        (Operation::Create, _) => (true, true),
        (Operation::Update, "status") => (false, !old_has("/status/config")),
        (Operation::Update, _) => (!old_has("/spec/configSource"), false),
        _ => (false, false),
    };
    if drop_config_source {
        remove_at(root, "spec", "configSource");
    }
    if drop_status_config {
        remove_at(root, "status", "config");
    }
    if let Some(status) = root.get_mut("status").and_then(Value::as_object_mut) {
        let capacity = status
            .get("capacity")
            .filter(|c| c.as_object().is_some_and(|m| !m.is_empty()))
            .cloned();
        if let Some(capacity) = capacity {
            or_set(status, "allocatable", capacity);
        }
    }
}

/// Remove `field` from the object at `key`, if both are there.
fn remove_at(root: &mut Map<String, Value>, key: &str, field: &str) {
    if let Some(m) = root.get_mut(key).and_then(Value::as_object_mut) {
        m.shift_remove(field);
    }
}

/// LimitRange: on create a nameless one is named by a random UUID (kube's
/// strategy, before `generateName` is looked at); each `Container` item's
/// `default` takes missing keys from `max`, and `defaultRequest` from
/// `default`, then from `min` (`SetDefaults_LimitRangeItem`).
pub(super) fn limit_range(obj: &mut Value, op: Operation) {
    if op == Operation::Create {
        if let Some(meta) = object_at(obj, &["metadata"]) {
            let unnamed = meta
                .get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if unnamed {
                meta.insert("name".into(), uuid::Uuid::new_v4().to_string().into());
            }
        }
    }
    let Some(spec) = object_at(obj, &["spec"]) else {
        return;
    };
    for item in each(spec, "limits") {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        fill_missing(item, "default", &["max"]);
        fill_missing(item, "defaultRequest", &["default", "min"]);
    }
}

/// Copy into the resource list `target` each key of the lists `sources`
/// (in order) it does not have yet; an empty result stays unset (Go's
/// empty map is omitted).
fn fill_missing(item: &mut Map<String, Value>, target: &str, sources: &[&str]) {
    let mut list = item
        .get(target)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let before = list.len();
    for source in sources {
        if let Some(src) = item.get(*source).and_then(Value::as_object) {
            for (k, v) in src {
                if !list.contains_key(k) {
                    list.insert(k.clone(), v.clone());
                }
            }
        }
    }
    if list.len() > before {
        item.insert(target.into(), Value::Object(list));
    }
}

/// ServiceAccount: secret references keep only their name (kube's
/// strategy, on create and update).
pub(super) fn service_account(obj: &mut Value) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    for secret in each(root, "secrets") {
        secret.retain(|k, v| k == "name" && v.as_str().is_some_and(|s| !s.is_empty()));
    }
}

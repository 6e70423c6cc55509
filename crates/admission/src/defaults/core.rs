//! Core (`v1`) defaults other than pods: Service, Namespace,
//! ReplicationController.

use serde_json::{Map, Value};

use keelson_api::Operation;

use super::{child, each, object_at, or_set, or_set_str, pod};

/// Service: type, session affinity, traffic policies and ports.
pub(super) fn service(obj: &mut Value) {
    let Some(spec) = object_at(obj, &["spec"]) else {
        return;
    };
    or_set_str(spec, "type", "ClusterIP");
    or_set_str(spec, "sessionAffinity", "None");
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if matches!(ty.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        or_set_str(spec, "internalTrafficPolicy", "Cluster");
    }
    if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
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

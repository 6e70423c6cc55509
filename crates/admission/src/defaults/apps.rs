//! `apps/v1` defaults (`k8s.io/kubernetes/pkg/apis/apps/v1/defaults.go`).

use serde_json::Value;

use super::{child, object_at, or_set, or_set_str, pod};

/// Deployment: replicas, strategy, history and progress deadline.
pub(super) fn deployment(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set(spec, "replicas", 1);
        or_set(spec, "revisionHistoryLimit", 10);
        or_set(spec, "progressDeadlineSeconds", 600);
        if let Some(strategy) = child(spec, "strategy") {
            or_set_str(strategy, "type", "RollingUpdate");
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(ru) = child(strategy, "rollingUpdate") {
                    or_set(ru, "maxUnavailable", "25%");
                    or_set(ru, "maxSurge", "25%");
                }
            }
        }
    }
    pod::template_at(obj, &["spec", "template"], true);
}

/// ReplicaSet: replicas.
pub(super) fn replica_set(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set(spec, "replicas", 1);
    }
    pod::template_at(obj, &["spec", "template"], true);
}

/// StatefulSet: replicas, pod management, update strategy, history and PVC
/// retention.
pub(super) fn stateful_set(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set(spec, "replicas", 1);
        or_set_str(spec, "podManagementPolicy", "OrderedReady");
        or_set(spec, "revisionHistoryLimit", 10);
        if let Some(us) = child(spec, "updateStrategy") {
            or_set_str(us, "type", "RollingUpdate");
            if us.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(ru) = child(us, "rollingUpdate") {
                    or_set(ru, "partition", 0);
                }
            }
        }
        if let Some(p) = child(spec, "persistentVolumeClaimRetentionPolicy") {
            or_set_str(p, "whenDeleted", "Retain");
            or_set_str(p, "whenScaled", "Retain");
        }
    }
    pod::template_at(obj, &["spec", "template"], true);
}

/// DaemonSet: update strategy and history.
pub(super) fn daemon_set(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set(spec, "revisionHistoryLimit", 10);
        if let Some(us) = child(spec, "updateStrategy") {
            or_set_str(us, "type", "RollingUpdate");
            if us.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(ru) = child(us, "rollingUpdate") {
                    or_set(ru, "maxUnavailable", 1);
                    or_set(ru, "maxSurge", 0);
                }
            }
        }
    }
    pod::template_at(obj, &["spec", "template"], true);
}

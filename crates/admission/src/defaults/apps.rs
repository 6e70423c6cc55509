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

/// kube's `apps/v1` annotation for a DaemonSet's `spec.templateGeneration`.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The DaemonSet strategy's template generation, as `apps/v1` shows it
/// (the `deprecated.daemonset.template.generation` annotation, written
/// only when not 0): 1 on create; on update the stored one, plus 1 when
/// the pod template changed. A client's own value is never kept.
pub(super) fn daemon_set_template_generation(obj: &mut Value, old: Option<&Value>) {
    let stored = |o: &Value| {
        o.get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(TEMPLATE_GENERATION))
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let generation = match old {
        None => 1,
        Some(old) => {
            let template = |o: &Value| {
                crate::validation::semantic(o.pointer("/spec/template").unwrap_or(&Value::Null))
            };
            let g = stored(old);
            if template(obj) != template(old) {
                g + 1
            } else {
                g
            }
        }
    };
    let Some(meta) = object_at(obj, &["metadata"]) else {
        return;
    };
    if generation == 0 {
        if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            a.shift_remove(TEMPLATE_GENERATION);
        }
        return;
    }
    if let Some(a) = child(meta, "annotations") {
        a.insert(TEMPLATE_GENERATION.into(), generation.to_string().into());
    }
}

#[cfg(test)]
mod template_generation_tests {
    use super::*;
    use serde_json::json;

    fn ds(image: &str, generation: Option<&str>) -> Value {
        let mut v = json!({"metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}});
        if let Some(g) = generation {
            v["metadata"]["annotations"] = json!({TEMPLATE_GENERATION: g});
        }
        v
    }

    #[test]
    fn one_on_create_bumped_by_template_changes_only() {
        let mut created = ds("a", Some("7"));
        daemon_set_template_generation(&mut created, None);
        assert_eq!(created["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let mut same = ds("a", Some("9"));
        daemon_set_template_generation(&mut same, Some(&created));
        assert_eq!(same["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let mut changed = ds("b", None);
        daemon_set_template_generation(&mut changed, Some(&same));
        assert_eq!(changed["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
        // One stored without it stays without it until its template changes.
        let mut legacy = ds("a", Some("3"));
        daemon_set_template_generation(&mut legacy, Some(&ds("a", None)));
        assert!(legacy["metadata"]["annotations"]
            .get(TEMPLATE_GENERATION)
            .is_none());
    }
}

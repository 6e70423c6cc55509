//! `autoscaling/v1` and `v2` defaults
//! (`k8s.io/kubernetes/pkg/apis/autoscaling/v{1,2}/defaults.go`): both
//! versions default `minReplicas` to 1. (v2's CPU metric for an empty
//! `metrics` and its `behavior` rules are not filled in.)

use serde_json::Value;

use super::{object_at, or_set};

/// HorizontalPodAutoscaler: `spec.minReplicas`.
pub(super) fn horizontal_pod_autoscaler(obj: &mut Value) {
    if let Some(spec) = object_at(obj, &["spec"]) {
        or_set(spec, "minReplicas", 1);
    }
}

/// The `v1` annotations that carry `behavior.scale{Up,Down}.tolerance`.
const TOLERANCE_ANNOTATIONS: [&str; 2] = [
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
];

/// Whether `obj` sets a tolerance (`v2` fields or `v1` annotations).
fn tolerance_in_use(obj: &Value) -> bool {
    let in_rules = obj
        .get("spec")
        .and_then(|s| s.get("behavior"))
        .is_some_and(|b| {
            ["scaleUp", "scaleDown"].iter().any(|d| {
                b.get(*d)
                    .and_then(|r| r.get("tolerance"))
                    .is_some_and(|t| !t.is_null())
            })
        });
    let annotations = obj.get("metadata").and_then(|m| m.get("annotations"));
    in_rules
        || TOLERANCE_ANNOTATIONS
            .iter()
            .any(|a| annotations.and_then(|m| m.get(*a)).is_some())
}

/// The HorizontalPodAutoscaler strategy's `dropDisabledFields`: without the
/// (alpha, off) `HPAConfigurableTolerance` gate, `tolerance` is dropped
/// unless the stored object already uses it.
pub(super) fn drop_disabled_hpa_fields(obj: &mut Value, old: Option<&Value>) {
    if old.is_some_and(tolerance_in_use) {
        return;
    }
    if let Some(b) = object_at(obj, &["spec", "behavior"]) {
        for dir in ["scaleUp", "scaleDown"] {
            if let Some(rules) = b.get_mut(dir).and_then(Value::as_object_mut) {
                rules.remove("tolerance");
            }
        }
    }
    if let Some(a) = object_at(obj, &["metadata", "annotations"]) {
        for key in TOLERANCE_ANNOTATIONS {
            a.remove(key);
        }
    }
}

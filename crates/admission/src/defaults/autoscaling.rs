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

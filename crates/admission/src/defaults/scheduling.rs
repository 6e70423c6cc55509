//! `scheduling.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/scheduling/v1/defaults.go`).

use serde_json::Value;

use super::or_set;

/// PriorityClass: `preemptionPolicy` (`PreemptLowerPriority`).
pub(super) fn priority_class(obj: &mut Value) {
    if let Some(m) = obj.as_object_mut() {
        or_set(m, "preemptionPolicy", "PreemptLowerPriority");
    }
}

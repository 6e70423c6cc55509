//! `discovery.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/discovery/v1/defaults.go`).

use serde_json::Value;

use super::{each, or_set};

/// EndpointSlice: each port's `name` (`""`) and `protocol` (`TCP`), both
/// only when absent or null.
pub(super) fn endpoint_slice(obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    for port in each(m, "ports") {
        or_set(port, "name", "");
        or_set(port, "protocol", "TCP");
    }
}

//! `resource.k8s.io/v1` defaults
//! (`k8s.io/kubernetes/pkg/apis/resource/v1/defaults.go` and the
//! `+default` markers of its types).
//!
//! A claim's device requests, exact ones and each `firstAvailable`
//! subrequest, get `allocationMode: ExactCount` and, in that mode,
//! `count: 1` (a plain integer in Go: 0 counts as unset); their
//! tolerations, and those of the allocation results, get
//! `operator: Equal`. A slice's device taints get `timeAdded`, the current
//! time in whole seconds. DeviceClass has no defaults.

use serde_json::{Map, Value};

use keelson_apimachinery::meta::now_rfc3339;

use super::{each, object_at, or_set, or_set_str};

/// ResourceClaim: the spec's device requests and the allocation results'
/// tolerations.
pub(super) fn resource_claim(obj: &mut Value) {
    if let Some(devices) = object_at(obj, &["spec", "devices"]) {
        device_requests(devices);
    }
    if let Some(allocation) = object_at(obj, &["status", "allocation", "devices"]) {
        for result in each(allocation, "results") {
            tolerations(result);
        }
    }
}

/// ResourceClaimTemplate: the device requests of the claim spec it holds.
pub(super) fn resource_claim_template(obj: &mut Value) {
    if let Some(devices) = object_at(obj, &["spec", "spec", "devices"]) {
        device_requests(devices);
    }
}

/// ResourceSlice: each device taint's `timeAdded`.
pub(super) fn resource_slice(obj: &mut Value) {
    let Some(spec) = object_at(obj, &["spec"]) else {
        return;
    };
    let mut now = None;
    for device in each(spec, "devices") {
        for taint in each(device, "taints") {
            or_set(
                taint,
                "timeAdded",
                now.get_or_insert_with(now_rfc3339).clone(),
            );
        }
    }
}

/// The requests of a claim spec's `devices`.
fn device_requests(devices: &mut Map<String, Value>) {
    for request in each(devices, "requests") {
        if let Some(exactly) = request.get_mut("exactly").and_then(Value::as_object_mut) {
            allocation(exactly);
        }
        for sub in each(request, "firstAvailable") {
            allocation(sub);
        }
    }
}

/// An exact request or subrequest: allocation mode, count and tolerations.
fn allocation(req: &mut Map<String, Value>) {
    or_set_str(req, "allocationMode", "ExactCount");
    if req.get("allocationMode").and_then(Value::as_str) == Some("ExactCount") {
        let count = req.entry("count").or_insert(Value::Null);
        if count.is_null() || count.as_f64() == Some(0.0) {
            *count = Value::from(1);
        }
    }
    tolerations(req);
}

/// `operator: Equal` on each toleration without one.
fn tolerations(m: &mut Map<String, Value>) {
    for toleration in each(m, "tolerations") {
        or_set_str(toleration, "operator", "Equal");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn claim_requests() {
        let mut claim = json!({"spec": {"devices": {"requests": [
            {"name": "a", "exactly": {"deviceClassName": "gpu", "tolerations": [{"key": "k", "operator": "Exists"}, {"key": "j"}]}},
            {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
            {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "count": 3},
                                             {"name": "y", "deviceClassName": "gpu", "count": 0}]}]}},
            "status": {"allocation": {"devices": {"results": [{"request": "a", "tolerations": [{"key": "k"}]}]}}}});
        super::resource_claim(&mut claim);
        let r = &claim["spec"]["devices"]["requests"];
        assert_eq!(r[0]["exactly"]["allocationMode"], "ExactCount");
        assert_eq!(r[0]["exactly"]["count"], 1);
        assert_eq!(r[0]["exactly"]["tolerations"][0]["operator"], "Exists");
        assert_eq!(r[0]["exactly"]["tolerations"][1]["operator"], "Equal");
        assert_eq!(r[1]["exactly"]["allocationMode"], "All");
        assert!(r[1]["exactly"].get("count").is_none());
        assert_eq!(r[2]["firstAvailable"][0]["count"], 3);
        assert_eq!(r[2]["firstAvailable"][1]["count"], 1);
        assert_eq!(r[2]["firstAvailable"][1]["allocationMode"], "ExactCount");
        assert!(r[2].get("exactly").is_none());
        assert_eq!(
            claim["status"]["allocation"]["devices"]["results"][0]["tolerations"][0]["operator"],
            "Equal"
        );
    }

    #[test]
    fn slice_taints() {
        let mut slice = json!({"spec": {"devices": [{"name": "d", "taints": [
            {"key": "k", "effect": "NoSchedule"},
            {"key": "j", "effect": "NoExecute", "timeAdded": "2006-01-02T15:04:05Z"}]}]}});
        super::resource_slice(&mut slice);
        let taints = &slice["spec"]["devices"][0]["taints"];
        let added = taints[0]["timeAdded"].as_str().unwrap_or_default();
        assert!(added.len() == 20 && added.ends_with('Z'), "{added}");
        assert_eq!(taints[1]["timeAdded"], "2006-01-02T15:04:05Z");
    }
}

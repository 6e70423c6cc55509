//! `resource.k8s.io` `v1beta1` ⇄ `v1` (kube's
//! `pkg/apis/resource/v1beta1/conversion.go`). Two structs differ:
//!
//! - `DeviceRequest`: `v1beta1` has the exact request's fields
//!   (`deviceClassName`, `selectors`, `allocationMode`, `count`,
//!   `adminAccess`, `tolerations`, `capacity`) on the request itself;
//!   `v1` has them under `exactly`, which is absent when `firstAvailable`
//!   lists subrequests.
//! - `Device` (in a ResourceSlice): `v1beta1` has every field but `name`
//!   under `basic`; `v1` has them on the device.
//!
//! `v1beta2` has `v1`'s shape: converting it is the `apiVersion` alone.

use serde_json::{Map, Value};

/// The fields of an exact device request.
const EXACT_FIELDS: &[&str] = &[
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
];

/// A `v1beta1` object of `kind` in `v1`'s shape (also the shape
/// admission validates, kube's internal one).
pub fn v1beta1_to_v1(kind: &str, object: &mut Value) {
    for requests in device_requests(kind, object) {
        for r in requests.iter_mut().filter_map(Value::as_object_mut) {
            request_to_v1(r);
        }
    }
    if let Some(devices) = slice_devices(kind, object) {
        for d in devices.iter_mut().filter_map(Value::as_object_mut) {
            device_to_v1(d);
        }
    }
}

/// A `v1` object of `kind` in `v1beta1`'s shape.
pub(super) fn v1_to_v1beta1(kind: &str, object: &mut Value) {
    for requests in device_requests(kind, object) {
        for r in requests.iter_mut().filter_map(Value::as_object_mut) {
            request_to_v1beta1(r);
        }
    }
    if let Some(devices) = slice_devices(kind, object) {
        for d in devices.iter_mut().filter_map(Value::as_object_mut) {
            device_to_v1beta1(d);
        }
    }
}

/// The `spec.devices.requests` lists of a claim (`spec`) or a claim
/// template (`spec.spec`).
fn device_requests<'a>(kind: &str, object: &'a mut Value) -> Vec<&'a mut Vec<Value>> {
    let claim_spec = match kind {
        "ResourceClaim" => object.get_mut("spec"),
        "ResourceClaimTemplate" => object.get_mut("spec").and_then(|s| s.get_mut("spec")),
        _ => None,
    };
    claim_spec
        .and_then(|s| s.get_mut("devices"))
        .and_then(|d| d.get_mut("requests"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .collect()
}

/// The `spec.devices` list of a ResourceSlice.
fn slice_devices<'a>(kind: &str, object: &'a mut Value) -> Option<&'a mut Vec<Value>> {
    if kind != "ResourceSlice" {
        return None;
    }
    object
        .get_mut("spec")
        .and_then(|s| s.get_mut("devices"))
        .and_then(Value::as_array_mut)
}

/// kube: without subrequests the flat fields become `exactly`; with them
/// the flat fields are dropped.
fn request_to_v1(r: &mut Map<String, Value>) {
    let mut exact = Map::new();
    for f in EXACT_FIELDS {
        if let Some(v) = r.shift_remove(*f) {
            exact.insert((*f).to_string(), v);
        }
    }
    let has_subrequests = r
        .get("firstAvailable")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    if !has_subrequests {
        insert_after_name(r, "exactly", Value::Object(exact));
    }
}

/// kube: `exactly`'s fields move onto the request (after `name`).
fn request_to_v1beta1(r: &mut Map<String, Value>) {
    let Some(Value::Object(exact)) = r.shift_remove("exactly") else {
        return;
    };
    let start = r.keys().position(|k| k == "name").map_or(0, |i| i + 1);
    for (at, (k, v)) in (start..).zip(exact) {
        r.shift_insert(at, k, v);
    }
}

/// kube: `basic`'s fields move onto the device.
fn device_to_v1(d: &mut Map<String, Value>) {
    if let Some(Value::Object(basic)) = d.shift_remove("basic") {
        d.extend(basic);
    }
}

/// kube: every field but `name` goes under `basic`.
fn device_to_v1beta1(d: &mut Map<String, Value>) {
    let mut basic = Map::new();
    let mut out = Map::new();
    for (k, v) in std::mem::take(d) {
        if k == "name" {
            out.insert(k, v);
        } else {
            basic.insert(k, v);
        }
    }
    out.insert("basic".to_string(), Value::Object(basic));
    *d = out;
}

/// Insert `key` right after `name` (Go's field order), else at the end.
fn insert_after_name(m: &mut Map<String, Value>, key: &str, value: Value) {
    let at = m
        .keys()
        .position(|k| k == "name")
        .map_or(m.len(), |i| i + 1);
    m.shift_insert(at, key.to_string(), value);
}

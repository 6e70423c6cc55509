//! The other core kinds: Namespace, ServiceAccount, PersistentVolume(Claim), LimitRange, ResourceQuota, Event, Node (`pkg/apis/core/validation`).

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::util::{list_of, obj_of, str_of};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Namespace" if w.is_status() => match w.old() {
            Some(old) => validate_namespace_status_update(obj, old),
            None => Vec::new(),
        },
        "Namespace" if w.subresource.is_empty() || w.subresource == "finalize" => {
            validate_namespace(obj, w.subresource == "finalize")
        }
        "PersistentVolumeClaim" if w.is_status() => validate_pvc_status_update(obj),
        "PersistentVolumeClaim" if w.subresource.is_empty() => {
            let mut errs = validate_pvc(obj);
            if let Some(old) = w.old() {
                errs.extend(validate_pvc_update(obj, old));
            }
            errs
        }
        "Event" => events_legacy(obj, false),
        _ => Vec::new(),
    }
}

/// kube's standard (unqualified) finalizer names.
const STANDARD_FINALIZERS: &[&str] = &["kubernetes", "orphan", "foregroundDeletion"];

/// `ValidateNamespace` / `ValidateNamespaceFinalizeUpdate`: the names in
/// `spec.finalizers` (indexed only on `finalize`, as in kube).
fn validate_namespace(obj: &Value, finalize: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let base = Path::new("spec").child("finalizers");
    let finalizers = obj
        .get("spec")
        .map(|s| list_of(s, "finalizers"))
        .unwrap_or(&[]);
    for (i, f) in finalizers.iter().enumerate() {
        let name = f.as_str().unwrap_or("");
        let path = if finalize {
            base.index(i)
        } else {
            base.clone()
        };
        for m in keelson_apimachinery::names::is_qualified_name(name) {
            errs.push(FieldError::invalid(path.as_str(), name, &m));
        }
        if !name.contains('/') && !STANDARD_FINALIZERS.contains(&name) {
            errs.push(FieldError::invalid(
                path.as_str(),
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

/// `ValidateNamespaceStatusUpdate`: the phase follows the deletion mark
/// (`status.Phase`, as kube spells the path). An empty phase is defaulted
/// to `Active` first, and the stored deletion mark is kept, as kube does.
fn validate_namespace_status_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let deleting = |o: &Value| {
        o.pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    };
    let phase = match obj.pointer("/status/phase").and_then(Value::as_str) {
        None | Some("") => "Active",
        Some(p) => p,
    };
    if !(deleting(old) || deleting(obj)) {
        if phase != "Active" {
            return vec![FieldError::invalid(
                "status.Phase",
                phase,
                "may only be 'Active' if `deletionTimestamp` is empty",
            )];
        }
    } else if phase != "Terminating" {
        return vec![FieldError::invalid(
            "status.Phase",
            phase,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )];
    }
    Vec::new()
}

/// `ValidatePersistentVolumeClaimStatusUpdate`, its common part: the
/// capacity quantities are not negative (kube prints the value as an
/// integer). The resize and allocated-resource rules are not checked.
fn validate_pvc_status_update(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cap = obj.pointer("/status/capacity").and_then(Value::as_object);
    for (k, v) in cap.into_iter().flatten() {
        let q = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if let Some(n) = keelson_cel::library::quantity::Quantity::parse(&q)
            .filter(|q| q.is_negative())
            .and_then(|q| q.nanos())
        {
            // `Quantity.Value()`: rounded up to an integer.
            let value = n.div_euclid(1_000_000_000) + i128::from(n.rem_euclid(1_000_000_000) != 0);
            errs.push(FieldError::invalid(
                Path::new("status").child("capacity").key(k).as_str(),
                i64::try_from(value).unwrap_or(i64::MIN),
                "must be a valid resource quantity",
            ));
        }
    }
    errs
}

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// Whether a quantity string is zero or negative (a rough reading of its
/// number part; unparsable quantities were refused by the decoder).
fn not_positive(q: &str) -> bool {
    let q = q.trim();
    if q.starts_with('-') {
        return true;
    }
    let digits: String = q
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '+')
        .collect();
    digits
        .trim_start_matches('+')
        .parse::<f64>()
        .is_ok_and(|n| n == 0.0)
}

/// `ValidatePersistentVolumeClaim` (its spec: access modes, storage
/// request, class name, volume mode).
fn validate_pvc(obj: &Value) -> Vec<FieldError> {
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let sp = Path::new("spec");
    let mut errs = Vec::new();
    let modes = list_of(spec, "accessModes");
    if modes.is_empty() {
        errs.push(FieldError::required(
            sp.child("accessModes").as_str(),
            "at least 1 access mode is required",
        ));
    }
    let (mut rwop, mut other) = (false, false);
    for m in modes {
        let m = m.as_str().unwrap_or("");
        if !ACCESS_MODES.contains(&m) {
            errs.push(FieldError::not_supported(
                sp.child("accessModes").as_str(),
                m,
                ACCESS_MODES,
            ));
        } else if m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            sp.child("accessModes").as_str(),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let storage_path = sp.child("resources").key("storage");
    let storage = spec
        .get("resources")
        .and_then(|r| r.get("requests"))
        .and_then(|r| r.get("storage"));
    match storage {
        None | Some(Value::Null) => {
            errs.push(FieldError::required(storage_path.as_str(), ""));
        }
        Some(q) => {
            let s = match q {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if not_positive(&s) {
                errs.push(FieldError::invalid(
                    storage_path.as_str(),
                    s.as_str(),
                    "must be greater than zero",
                ));
            }
        }
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str) {
        if !class.is_empty() {
            for m in keelson_apimachinery::names::is_dns1123_subdomain(class) {
                errs.push(FieldError::invalid(
                    sp.child("storageClassName").as_str(),
                    class,
                    &m,
                ));
            }
        }
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !["Block", "Filesystem"].contains(&mode) {
            errs.push(FieldError::not_supported(
                sp.child("volumeMode").as_str(),
                mode,
                &["Block", "Filesystem"],
            ));
        }
    }
    errs
}

fn storage_request(spec: &Map<String, Value>) -> Option<Value> {
    spec.get("resources")
        .and_then(|r| r.get("requests"))
        .and_then(|r| r.get("storage"))
        .cloned()
}

/// `ValidatePersistentVolumeClaimUpdate`: the spec is fixed except the
/// storage request of a bound claim, a first `volumeName` and
/// `volumeAttributesClassName`.
fn validate_pvc_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut new_spec = obj_of(obj, "spec").cloned().unwrap_or_default();
    let mut old_spec = obj_of(old, "spec").cloned().unwrap_or_default();
    for s in [&mut new_spec, &mut old_spec] {
        s.remove("volumeAttributesClassName");
        // A stored claim from before defaulting reads as defaulted.
        if s.get("volumeMode").is_none_or(Value::is_null) {
            s.insert("volumeMode".into(), Value::String("Filesystem".into()));
        }
    }
    if str_of(&Value::Object(old_spec.clone()), "volumeName").is_empty() {
        match new_spec.get("volumeName") {
            Some(v) => old_spec.insert("volumeName".into(), v.clone()),
            None => old_spec.remove("volumeName"),
        };
    }
    let phase = obj
        .get("status")
        .and_then(|s| s.get("phase"))
        .or_else(|| old.get("status").and_then(|s| s.get("phase")))
        .and_then(Value::as_str)
        .unwrap_or("");
    if phase == "Bound" {
        let old_req = storage_request(&old_spec);
        if let Some(req) = new_spec
            .get_mut("resources")
            .and_then(|r| r.get_mut("requests"))
            .and_then(Value::as_object_mut)
        {
            match old_req {
                Some(v) => req.insert("storage".into(), v),
                None => req.remove("storage"),
            };
        }
    }
    let strip_empty = |s: &mut Map<String, Value>| s.retain(|_, v| !v.is_null());
    strip_empty(&mut new_spec);
    strip_empty(&mut old_spec);
    if new_spec != old_spec {
        errs.push(FieldError::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    errs
}

/// Whether a timestamp field is unset (absent, null or empty).
fn time_unset(obj: &Value, key: &str) -> bool {
    match obj.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

/// kube's `legacyValidateEvent` for a core/v1 (`events_v1 == false`) or
/// events.k8s.io Event (field names there differ; the paths printed are
/// the internal ones, as in kube).
pub(crate) fn events_legacy(obj: &Value, events_v1: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let get = |core: &str, ev: &str| str_of(obj, if events_v1 { ev } else { core }).to_string();
    let involved_key = if events_v1 {
        "regarding"
    } else {
        "involvedObject"
    };
    let involved_ns = obj
        .get(involved_key)
        .map(|o| str_of(o, "namespace"))
        .unwrap_or("");
    let ns = obj
        .get("metadata")
        .map(|m| str_of(m, "namespace"))
        .unwrap_or("");
    let mismatch = || {
        FieldError::invalid(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        )
    };
    if time_unset(obj, "eventTime") {
        if !ns.is_empty() {
            if involved_ns.is_empty() {
                if ns != "default" {
                    errs.push(mismatch());
                }
            } else if ns != involved_ns {
                errs.push(mismatch());
            }
        }
    } else {
        if involved_ns.is_empty() && !ns.is_empty() && ns != "default" && ns != "kube-system" {
            errs.push(mismatch());
        }
        let rc_path = if events_v1 {
            "reportingController"
        } else {
            "source"
        };
        let rc = get("reportingComponent", "reportingController");
        if rc.is_empty() {
            errs.push(FieldError::required(rc_path, ""));
        }
        for m in keelson_apimachinery::names::is_qualified_name(&rc) {
            errs.push(FieldError::invalid(rc_path, rc.as_str(), &m));
        }
        let limits = [
            (
                "reportingInstance",
                "reportingInstance",
                "reportingInstance",
                128,
                true,
            ),
            ("action", "action", "action", 128, true),
            ("reason", "reason", "reason", 128, true),
            ("message", "message", "note", 1024, false),
        ];
        for (path, core, ev, limit, required) in limits {
            let v = get(core, ev);
            if required && v.is_empty() {
                errs.push(FieldError::required(path, ""));
            }
            if v.len() > limit {
                errs.push(FieldError::invalid(
                    path,
                    "",
                    &format!("can have at most {limit} characters"),
                ));
            }
        }
    }
    errs
}

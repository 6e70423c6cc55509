//! APIService (kube-aggregator's `apiregistration/validation`:
//! `ValidateAPIService`, the update and `/status` variants). The name
//! rule (`<version>.<group>`) is in `validation/objectmeta.rs`.

use keelson_apimachinery::names::{is_dns1035_label, is_dns1123_subdomain};
use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{invalid_all, list_of, str_of};
use super::{Path, Write};

/// The errors of one APIService (none for other kinds of the group).
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "APIService" {
        return Vec::new();
    }
    if w.is_status() {
        return validate_status(obj);
    }
    validate_spec(obj.get("spec").unwrap_or(&Value::Null))
}

fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sp = Path::new("spec");
    let (group, version) = (str_of(spec, "group"), str_of(spec, "version"));
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        errs.extend(invalid_all(
            is_dns1123_subdomain(group),
            &sp.child("group"),
            group,
        ));
    }
    errs.extend(invalid_all(
        is_dns1035_label(version),
        &sp.child("version"),
        version,
    ));
    let int = |k: &str| spec.get(k).and_then(Value::as_i64).unwrap_or(0);
    let min = int("groupPriorityMinimum");
    if min <= 0 || min > 20000 {
        errs.push(FieldError::invalid(
            "spec.groupPriorityMinimum",
            min,
            "must be positive and less than 20000",
        ));
    }
    let prio = int("versionPriority");
    if prio <= 0 || prio > 1000 {
        errs.push(FieldError::invalid(
            "spec.versionPriority",
            prio,
            "must be positive and less than 1000",
        ));
    }
    // `caBundle` is base64 in JSON; kube counts its bytes.
    let ca_len = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(str_of(spec, "caBundle"))
            .map_or(0, |b| b.len())
    };
    let insecure = spec
        .get("insecureSkipTLSVerify")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let Some(service) = spec.get("service").filter(|s| s.is_object()) else {
        if ca_len != 0 {
            errs.push(FieldError::invalid(
                "spec.caBundle",
                format!("{ca_len} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(FieldError::invalid(
                "spec.insecureSkipTLSVerify",
                true,
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    for key in ["namespace", "name"] {
        if str_of(service, key).is_empty() {
            errs.push(FieldError::required(
                sp.child("service").child(key).as_str(),
                "",
            ));
        }
    }
    if insecure && ca_len > 0 {
        errs.push(FieldError::invalid(
            "spec.insecureSkipTLSVerify",
            true,
            "may not be true if caBundle is present",
        ));
    }
    errs
}

/// `ValidateAPIServiceStatus`: each condition's status True, False or
/// Unknown.
fn validate_status(obj: &Value) -> Vec<FieldError> {
    const STATUSES: &[&str] = &["True", "False", "Unknown"];
    let empty = Value::Null;
    let status = obj.get("status").unwrap_or(&empty);
    let mut errs = Vec::new();
    for (i, c) in list_of(status, "conditions").iter().enumerate() {
        let s = str_of(c, "status");
        if !STATUSES.contains(&s) {
            errs.push(FieldError::not_supported(
                Path::new("status")
                    .child("conditions")
                    .index(i)
                    .child("status")
                    .as_str(),
                s,
                STATUSES,
            ));
        }
    }
    errs
}

//! events.k8s.io Event (`pkg/apis/core/validation`: `ValidateEventCreate`/`ValidateEventUpdate` for events.k8s.io/v1).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::core_other::events_legacy;
use super::util::str_of;
use super::Write;

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "Event" {
        return Vec::new();
    }
    let mut errs = events_legacy(obj, true);
    if w.old().is_some() {
        return errs;
    }
    let unset = |k: &str| match obj.get(k) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Number(n)) => n.as_i64() == Some(0),
        Some(Value::Object(m)) => m.values().all(|v| v.is_null() || v.as_str() == Some("")),
        _ => false,
    };
    if unset("eventTime") {
        errs.push(FieldError::required("eventTime", ""));
    }
    let ty = str_of(obj, "type");
    if ty != "Normal" && ty != "Warning" {
        errs.push(FieldError::invalid(
            "type",
            "",
            &format!("has invalid value: {ty}"),
        ));
    }
    for (path, key) in [
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
        ("source", "deprecatedSource"),
    ] {
        if !unset(key) {
            errs.push(FieldError::invalid(path, "", "needs to be unset"));
        }
    }
    errs
}

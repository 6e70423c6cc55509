//! PriorityClass (`pkg/apis/scheduling/validation`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{immutable, int_of, str_of};
use super::{Path, Write};

/// kube's `HighestUserDefinablePriority`.
const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "PriorityClass" {
        return Vec::new();
    }
    match w.old() {
        Some(old) => validate_priority_class_update(obj, old),
        None => validate_priority_class(obj),
    }
}

/// kube's `IsKnownSystemPriorityClass` failure, if any.
fn system_class_error(name: &str, value: i64, global_default: bool) -> Option<String> {
    let known = [
        ("system-node-critical", 2_000_001_000),
        ("system-cluster-critical", 2_000_000_000),
    ];
    match known.iter().find(|(n, _)| *n == name) {
        Some((n, v)) if *v != value => Some(format!("value of {n} PriorityClass must be {v}")),
        Some((n, _)) if global_default => {
            Some(format!("globalDefault of {n} PriorityClass must be false"))
        }
        Some(_) => None,
        None => Some(format!("{name} is not a known system priority class")),
    }
}

/// `ValidatePriorityClass`.
fn validate_priority_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = obj.get("metadata").map(|m| str_of(m, "name")).unwrap_or("");
    let value = int_of(obj, "value").unwrap_or(0);
    let global = obj
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if name.starts_with("system-") {
        if let Some(e) = system_class_error(name, value, global) {
            errs.push(FieldError::forbidden(
                "metadata.name",
                &format!("priority class names with 'system-' prefix are reserved for system use only. error: {e}"),
            ));
        }
    } else if value > HIGHEST_USER_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            &format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        ));
    }
    if let Some(p) = obj.get("preemptionPolicy").and_then(Value::as_str) {
        match p {
            "PreemptLowerPriority" | "Never" => {}
            "" => errs.push(FieldError::required("preemptionPolicy", "")),
            other => errs.push(FieldError::not_supported(
                "preemptionPolicy",
                other,
                &["PreemptLowerPriority", "Never"],
            )),
        }
    }
    errs
}

/// `ValidatePriorityClassUpdate`: value and preemptionPolicy are immutable.
fn validate_priority_class_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if int_of(obj, "value").unwrap_or(0) != int_of(old, "value").unwrap_or(0) {
        errs.push(FieldError::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    // A stored object from before defaulting reads as defaulted.
    let policy = |o: &Value| {
        o.get("preemptionPolicy")
            .cloned()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::String("PreemptLowerPriority".into()))
    };
    errs.extend(immutable(
        Some(&policy(obj)),
        Some(&policy(old)),
        &Path::new("preemptionPolicy"),
    ));
    errs
}

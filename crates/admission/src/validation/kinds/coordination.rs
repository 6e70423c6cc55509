//! Lease (`pkg/apis/coordination/validation`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::int_of;
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let _ = w;
    if kind != "Lease" {
        return Vec::new();
    }
    let empty = Value::Null;
    validate_lease_spec(obj.get("spec").unwrap_or(&empty), &Path::new("spec"))
}

/// `ValidateLeaseSpec`.
fn validate_lease_spec(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(d) = int_of(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(FieldError::invalid(
            path.child("leaseDurationSeconds").as_str(),
            d,
            "must be greater than 0",
        ));
    }
    if let Some(t) = int_of(spec, "leaseTransitions").filter(|t| *t < 0) {
        errs.push(FieldError::invalid(
            path.child("leaseTransitions").as_str(),
            t,
            "must be greater than or equal to 0",
        ));
    }
    let strategy = spec.get("strategy").and_then(Value::as_str);
    if let Some(s) = strategy {
        for m in keelson_apimachinery::names::is_qualified_name(s) {
            errs.push(FieldError::invalid(path.child("strategy").as_str(), s, &m));
        }
    }
    let preferred = spec
        .get("preferredHolder")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !preferred.is_empty() && strategy.unwrap_or("").is_empty() {
        errs.push(FieldError::forbidden(
            path.child("preferredHolder").as_str(),
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}

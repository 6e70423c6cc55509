//! policy: PodDisruptionBudget (`pkg/apis/policy/validation`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{
    go_struct, int_of, list_of, nonnegative, not_more_than_100_percent, positive_int_or_percent,
    regex_error, str_of, validate_label_selector,
};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "PodDisruptionBudget" {
        return Vec::new();
    }
    let null = Value::Null;
    if w.is_status() {
        let s = obj.get("status").unwrap_or(&null);
        let p = Path::new("status");
        let mut errs = validate_conditions(list_of(s, "conditions"), &p.child("conditions"));
        for f in [
            "disruptionsAllowed",
            "currentHealthy",
            "desiredHealthy",
            "expectedPods",
        ] {
            errs.extend(nonnegative(int_of(s, f).unwrap_or(0), &p.child(f)));
        }
        return errs;
    }
    if !w.subresource.is_empty() {
        return Vec::new();
    }
    let spec = obj.get("spec").unwrap_or(&null);
    // On update, selector values the old object already had may stay.
    let allow_invalid = w.old().is_some_and(|o| {
        let p = Path::new("spec").child("selector");
        !validate_label_selector(o.get("spec").and_then(|s| s.get("selector")), false, &p)
            .is_empty()
    });
    validate_pdb_spec(spec, &Path::new("spec"), allow_invalid)
}

/// kube's `ValidatePodDisruptionBudgetSpec`.
fn validate_pdb_spec(spec: &Value, p: &Path, allow_invalid: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = spec.get("minAvailable").filter(|v| !v.is_null());
    let max = spec.get("maxUnavailable").filter(|v| !v.is_null());
    if min.is_some() && max.is_some() {
        errs.push(FieldError::invalid(
            p.as_str(),
            go_struct(
                spec,
                &[
                    "minAvailable",
                    "selector",
                    "maxUnavailable",
                    "unhealthyPodEvictionPolicy",
                ],
            ),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (f, v) in [("minAvailable", min), ("maxUnavailable", max)] {
        if v.is_some() {
            errs.extend(positive_int_or_percent(v, &p.child(f)));
            errs.extend(not_more_than_100_percent(v, &p.child(f)));
        }
    }
    errs.extend(validate_label_selector(
        spec.get("selector"),
        allow_invalid,
        &p.child("selector"),
    ));
    if let Some(pol) = spec
        .get("unhealthyPodEvictionPolicy")
        .and_then(Value::as_str)
    {
        if pol != "AlwaysAllow" && pol != "IfHealthyBudget" {
            errs.push(FieldError::not_supported(
                p.child("unhealthyPodEvictionPolicy").as_str(),
                pol,
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errs
}

const CONDITION_REASON_FMT: &str = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";

/// metav1 validation's `isValidConditionReason`.
fn condition_reason_ok(r: &str) -> bool {
    let b = r.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphabetic()
        && (last.is_ascii_alphanumeric() || *last == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
}

/// metav1 validation's `ValidateConditions` (`ValidateCondition` for each,
/// after a duplicate-type check).
pub(crate) fn validate_conditions(conditions: &[Value], p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        let ip = p.index(i);
        let t = str_of(c, "type");
        if seen.contains(&t) {
            errs.push(super::util::duplicate(&ip.child("type"), t));
        } else {
            seen.push(t);
        }
        errs.extend(super::util::invalid_all(
            keelson_apimachinery::names::is_qualified_name(t),
            &ip.child("type"),
            t,
        ));
        let status = str_of(c, "status");
        if !matches!(status, "False" | "True" | "Unknown") {
            errs.push(FieldError::not_supported(
                ip.child("status").as_str(),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if let Some(g) = int_of(c, "observedGeneration").filter(|&g| g < 0) {
            errs.push(FieldError::invalid(
                ip.child("observedGeneration").as_str(),
                g,
                "must be greater than or equal to zero",
            ));
        }
        if str_of(c, "lastTransitionTime").is_empty() {
            errs.push(FieldError::required(
                ip.child("lastTransitionTime").as_str(),
                "",
            ));
        }
        let reason = str_of(c, "reason");
        if reason.is_empty() {
            errs.push(FieldError::required(ip.child("reason").as_str(), ""));
        } else {
            if !condition_reason_ok(reason) {
                errs.push(FieldError::invalid(
                    ip.child("reason").as_str(),
                    reason,
                    &regex_error(
                        "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
                        CONDITION_REASON_FMT,
                        &["my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB"],
                    ),
                ));
            }
            if reason.len() > 1024 {
                errs.push(FieldError::too_long(
                    ip.child("reason").as_str(),
                    "may not be more than 1024 bytes",
                ));
            }
        }
        if str_of(c, "message").len() > 32 * 1024 {
            errs.push(FieldError::too_long(
                ip.child("message").as_str(),
                "may not be more than 32768 bytes",
            ));
        }
    }
    errs
}

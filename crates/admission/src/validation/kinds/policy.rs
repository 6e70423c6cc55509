//! policy: PodDisruptionBudget (`pkg/apis/policy/validation`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{
    go_struct, int_of, nonnegative, not_more_than_100_percent, positive_int_or_percent,
    validate_label_selector,
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
        let mut errs = Vec::new();
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

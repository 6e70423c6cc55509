//! autoscaling: HorizontalPodAutoscaler v1 and v2 (`pkg/apis/autoscaling/validation`).

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{int_of, list_of, nonnegative, str_of};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if kind != "HorizontalPodAutoscaler" {
        return Vec::new();
    }
    let null = Value::Null;
    if w.is_status() {
        let s = obj.get("status").unwrap_or(&null);
        let p = Path::new("status");
        let mut errs = Vec::new();
        for f in ["currentReplicas", "desiredReplicas"] {
            errs.extend(nonnegative(int_of(s, f).unwrap_or(0), &p.child(f)));
        }
        return errs;
    }
    if !w.subresource.is_empty() {
        return Vec::new();
    }
    let v1 = str_of(obj, "apiVersion") == "autoscaling/v1";
    validate_hpa_spec(obj.get("spec").unwrap_or(&null), &Path::new("spec"), v1)
}

/// kube's `validateHorizontalPodAutoscalerSpec`.
fn validate_hpa_spec(spec: &Value, p: &Path, v1: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = int_of(spec, "minReplicas");
    let max = int_of(spec, "maxReplicas").unwrap_or(0);
    if let Some(m) = min.filter(|&m| m < 1) {
        errs.push(FieldError::invalid(
            p.child("minReplicas").as_str(),
            m,
            "must be greater than or equal to 1",
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid(
            p.child("maxReplicas").as_str(),
            max,
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(FieldError::invalid(
            p.child("maxReplicas").as_str(),
            max,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let ref_errs = validate_cross_version_ref(
        spec.get("scaleTargetRef").unwrap_or(&Value::Null),
        &p.child("scaleTargetRef"),
    );
    if !ref_errs.is_empty() {
        errs.extend(ref_errs);
        return errs;
    }
    if v1 {
        // v1's targetCPUUtilizationPercentage becomes a Resource metric.
        if let Some(t) = int_of(spec, "targetCPUUtilizationPercentage").filter(|&t| t < 1) {
            errs.push(FieldError::invalid(
                "spec.metrics[0].resource.target.averageUtilization",
                t,
                "must be greater than 0",
            ));
        }
        return errs;
    }
    let metric_errs = validate_metrics(list_of(spec, "metrics"), &p.child("metrics"));
    if !metric_errs.is_empty() {
        errs.extend(metric_errs);
        return errs;
    }
    if let Some(b) = spec.get("behavior").filter(|v| v.is_object()) {
        let bp = p.child("behavior");
        for dir in ["scaleUp", "scaleDown"] {
            if let Some(rules) = b.get(dir).filter(|v| v.is_object()) {
                errs.extend(validate_scaling_rules(rules, &bp.child(dir)));
            }
        }
    }
    errs
}

/// kube's `ValidateCrossVersionObjectReference` (kind and name).
fn validate_cross_version_ref(r: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for f in ["kind", "name"] {
        let v = str_of(r, f);
        if v.is_empty() {
            errs.push(FieldError::required(p.child(f).as_str(), ""));
        } else {
            for msg in crate::validation::path_segment_errors(v, false) {
                errs.push(FieldError::invalid(p.child(f).as_str(), v, &msg));
            }
        }
    }
    errs
}

const METRIC_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

/// kube's `validateMetrics` (the metric source type, its presence, and the
/// Resource / ContainerResource targets).
fn validate_metrics(metrics: &[Value], p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, m) in metrics.iter().enumerate() {
        let mp = p.index(i);
        let t = str_of(m, "type");
        if t.is_empty() {
            errs.push(FieldError::required(
                mp.child("type").as_str(),
                "must specify a metric source type",
            ));
        }
        let expected = match t {
            "Object" => "object",
            "Pods" => "pods",
            "Resource" => "resource",
            "External" => "external",
            "ContainerResource" => "containerResource",
            _ => {
                errs.push(FieldError::not_supported(
                    mp.child("type").as_str(),
                    t,
                    &METRIC_TYPES,
                ));
                ""
            }
        };
        let present: Vec<&str> = [
            "containerResource",
            "external",
            "object",
            "pods",
            "resource",
        ]
        .into_iter()
        .filter(|f| m.get(*f).is_some_and(|v| !v.is_null()))
        .collect();
        if let Some(src) = m.get("resource").filter(|v| v.is_object()) {
            if present.len() == 1 {
                errs.extend(validate_resource_source(src, &mp.child("resource"), false));
            }
        }
        if let Some(src) = m.get("containerResource").filter(|v| v.is_object()) {
            if present.len() == 1 {
                errs.extend(validate_resource_source(
                    src,
                    &mp.child("containerResource"),
                    true,
                ));
            }
        }
        if !expected.is_empty() && !present.contains(&expected) {
            errs.push(FieldError::required(
                mp.child(expected).as_str(),
                "must populate information for the given metric source",
            ));
        }
        for f in present {
            if f != expected && !expected.is_empty() {
                errs.push(FieldError::forbidden(
                    mp.child(f).as_str(),
                    "must populate the given metric source only",
                ));
            }
        }
    }
    errs
}

fn quantity_positive(v: &Value) -> bool {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Number(n) => return n.as_f64().is_some_and(|f| f > 0.0),
        _ => return true,
    };
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+')
        .collect();
    digits.parse::<f64>().is_ok_and(|f| f > 0.0)
}

/// kube's `validateResourceSource` / `validateContainerResourceSource`.
fn validate_resource_source(src: &Value, p: &Path, container: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(src, "name").is_empty() {
        errs.push(FieldError::required(
            p.child("name").as_str(),
            "must specify a resource name",
        ));
    }
    if container && str_of(src, "container").is_empty() {
        errs.push(FieldError::required(
            p.child("container").as_str(),
            "must specify a container",
        ));
    }
    let target = src.get("target").unwrap_or(&Value::Null);
    let tp = p.child("target");
    let tt = str_of(target, "type");
    if tt.is_empty() {
        errs.push(FieldError::required(
            tp.child("type").as_str(),
            "must specify a metric target type",
        ));
    }
    if !matches!(tt, "Utilization" | "Value" | "AverageValue") {
        errs.push(FieldError::invalid(
            tp.child("type").as_str(),
            tt,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for f in ["value", "averageValue"] {
        if let Some(v) = target.get(f).filter(|v| !v.is_null()) {
            if !quantity_positive(v) {
                errs.push(FieldError::invalid(
                    tp.child(f).as_str(),
                    v.clone(),
                    "must be positive",
                ));
            }
        }
    }
    let util = int_of(target, "averageUtilization");
    if let Some(u) = util.filter(|&u| u < 1) {
        errs.push(FieldError::invalid(
            tp.child("averageUtilization").as_str(),
            u,
            "must be greater than 0",
        ));
    }
    let avg = target.get("averageValue").filter(|v| !v.is_null());
    if util.is_none() && avg.is_none() {
        errs.push(FieldError::required(
            tp.child("averageUtilization").as_str(),
            "must set either a target raw value or a target utilization",
        ));
    }
    if let (Some(_), Some(a)) = (util, avg) {
        errs.push(FieldError::invalid(
            tp.child("averageValue").as_str(),
            a.clone(),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs
}

/// kube's `validateScalingRules` (a rule without policies is skipped: kube
/// defaults them and Keelson's defaults do not yet).
fn validate_scaling_rules(rules: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(s) = int_of(rules, "stabilizationWindowSeconds") {
        let sp = p.child("stabilizationWindowSeconds");
        if s < 0 {
            errs.push(FieldError::invalid(
                sp.as_str(),
                s,
                "must be greater than or equal to zero",
            ));
        }
        if s > 3600 {
            errs.push(FieldError::invalid(
                sp.as_str(),
                s,
                "must be less than or equal to 3600",
            ));
        }
    }
    if let Some(sel) = rules.get("selectPolicy").and_then(Value::as_str) {
        if !matches!(sel, "Disabled" | "Max" | "Min") {
            errs.push(FieldError::not_supported(
                p.child("selectPolicy").as_str(),
                sel,
                &["Disabled", "Max", "Min"],
            ));
        }
    }
    let pp = p.child("policies");
    if rules
        .get("policies")
        .is_some_and(|v| v.as_array().is_some_and(Vec::is_empty))
    {
        errs.push(FieldError::required(
            pp.as_str(),
            "must specify at least one Policy",
        ));
    }
    for (i, pol) in list_of(rules, "policies").iter().enumerate() {
        let ip = pp.index(i);
        let t = str_of(pol, "type");
        if t != "Pods" && t != "Percent" {
            errs.push(FieldError::not_supported(
                ip.child("type").as_str(),
                t,
                &["Percent", "Pods"],
            ));
        }
        let v = int_of(pol, "value").unwrap_or(0);
        if v <= 0 {
            errs.push(FieldError::invalid(
                ip.child("value").as_str(),
                v,
                "must be greater than zero",
            ));
        }
        let ps = int_of(pol, "periodSeconds").unwrap_or(0);
        if ps <= 0 {
            errs.push(FieldError::invalid(
                ip.child("periodSeconds").as_str(),
                ps,
                "must be greater than zero",
            ));
        }
        if ps > 1800 {
            errs.push(FieldError::invalid(
                ip.child("periodSeconds").as_str(),
                ps,
                "must be less than or equal to 1800",
            ));
        }
    }
    errs
}

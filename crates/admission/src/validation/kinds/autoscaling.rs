//! autoscaling: HorizontalPodAutoscaler v1 and v2 (`pkg/apis/autoscaling/validation`).
//!
//! kube validates the internal type, whose shape is `v2`'s: a `v1` object
//! (and its stored counterpart) is converted to `v2` first, so the paths
//! are the internal ones (`targetCPUUtilizationPercentage` is reported at
//! `spec.metrics[n].resource.target.averageUtilization`).

use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use serde_json::Value;

use super::core_pod::canonical;
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
    let new = internal(obj);
    let old = w.old().map(internal);
    let opts = Options::of(&new, old.as_ref());
    let spec = new.get("spec").unwrap_or(&null);
    validate_hpa_spec(spec, &Path::new("spec"), &opts)
}

/// The object as the internal (`v2`-shaped) type.
fn internal(obj: &Value) -> Value {
    let mut o = obj.clone();
    if str_of(obj, "apiVersion") == "autoscaling/v1"
        && keelson_registry::conversion::convert(&mut o, "v2").is_err()
    {
        return obj.clone();
    }
    o
}

/// kube's `CrossVersionObjectReferenceValidationOptions`.
#[derive(Clone, Copy, Default)]
struct RefOptions {
    allow_empty_group: bool,
    allow_invalid_version: bool,
}

/// kube's `HorizontalPodAutoscalerSpecValidationOptions`, as the strategy's
/// `validationOptionsForHorizontalPodAutoscaler` builds them.
struct Options {
    /// 1, or 0 when the stored object already has `minReplicas: 0` (the
    /// `HPAScaleToZero` gate is alpha and off in 1.34).
    min_replicas_lower_bound: i64,
    scale_target_ref: RefOptions,
    object_metrics: RefOptions,
}

impl Options {
    fn of(new: &Value, old: Option<&Value>) -> Options {
        let spec = |o: &Value| o.get("spec").cloned().unwrap_or(Value::Null);
        let new_spec = spec(new);
        let old_spec = old.map(spec);
        let zero_before = old_spec
            .as_ref()
            .is_some_and(|s| int_of(s, "minReplicas") == Some(0));
        let target = |s: &Value, f: &str| {
            s.get("scaleTargetRef")
                .map(|r| str_of(r, f).to_string())
                .unwrap_or_default()
        };
        let mut scale_target_ref = RefOptions::default();
        let unchanged = old_spec.as_ref().is_some_and(|o| {
            target(o, "apiVersion") == target(&new_spec, "apiVersion")
                && target(o, "kind") == target(&new_spec, "kind")
        });
        if unchanged {
            scale_target_ref.allow_invalid_version = true;
        } else if target(&new_spec, "kind") == "ReplicationController" {
            scale_target_ref.allow_empty_group = true;
        }
        let mut object_metrics = RefOptions {
            allow_empty_group: true,
            allow_invalid_version: false,
        };
        let old_invalid = old_spec.as_ref().is_some_and(|o| {
            list_of(o, "metrics").iter().any(|m| {
                str_of(m, "type") == "Object"
                    && m.get("object").is_some_and(|src| {
                        let r = src.get("describedObject").unwrap_or(&Value::Null);
                        api_version_error(r, object_metrics).is_some()
                    })
            })
        });
        object_metrics.allow_invalid_version = old_invalid;
        Options {
            min_replicas_lower_bound: if zero_before { 0 } else { 1 },
            scale_target_ref,
            object_metrics,
        }
    }
}

/// kube's `validateHorizontalPodAutoscalerSpec`.
fn validate_hpa_spec(spec: &Value, p: &Path, opts: &Options) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = int_of(spec, "minReplicas");
    let max = int_of(spec, "maxReplicas").unwrap_or(0);
    let bound = opts.min_replicas_lower_bound;
    if let Some(m) = min.filter(|&m| m < bound) {
        errs.push(FieldError::invalid(
            p.child("minReplicas").as_str(),
            m,
            &format!("must be greater than or equal to {bound}"),
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
    errs.extend(validate_cross_version_ref(
        spec.get("scaleTargetRef").unwrap_or(&Value::Null),
        &p.child("scaleTargetRef"),
        opts.scale_target_ref,
    ));
    errs.extend(validate_metrics(
        list_of(spec, "metrics"),
        &p.child("metrics"),
        min,
        opts.object_metrics,
    ));
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

/// kube's `ValidateCrossVersionObjectReference`: kind and name path
/// segments, then `ValidateAPIVersion`.
fn validate_cross_version_ref(r: &Value, p: &Path, opts: RefOptions) -> Vec<FieldError> {
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
    if let Some(msg) = api_version_error(r, opts) {
        errs.push(FieldError::invalid(
            p.child("apiVersion").as_str(),
            str_of(r, "apiVersion"),
            &msg,
        ));
    }
    errs
}

/// kube's `ValidateAPIVersion` (`schema.ParseGroupVersion`, then a group
/// unless `allow_empty_group`).
fn api_version_error(r: &Value, opts: RefOptions) -> Option<String> {
    if opts.allow_invalid_version {
        return None;
    }
    let v = str_of(r, "apiVersion");
    let group = match v.matches('/').count() {
        _ if v.is_empty() || v == "/" => "",
        0 => "",
        1 => v.split('/').next().unwrap_or(""),
        _ => return Some(format!("unexpected GroupVersion string: {v}")),
    };
    (!opts.allow_empty_group && group.is_empty())
        .then(|| "apiVersion must specify API group".to_string())
}

/// kube's `validMetricSourceTypesList` (sorted).
const METRIC_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

/// kube's `validateMetrics`: each metric, then the scale-to-zero rule.
fn validate_metrics(
    metrics: &[Value],
    p: &Path,
    min_replicas: Option<i64>,
    object_opts: RefOptions,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, m) in metrics.iter().enumerate() {
        errs.extend(validate_metric_spec(m, &p.index(i), object_opts));
    }
    let scales_on = |t: &str| metrics.iter().any(|m| str_of(m, "type") == t);
    if min_replicas == Some(0) && !scales_on("Object") && !scales_on("External") {
        errs.push(FieldError::forbidden(
            p.as_str(),
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errs
}

/// kube's `validateMetricSpec`: the source type, the first populated
/// source's own rules, the source the type names, and no other source.
fn validate_metric_spec(m: &Value, mp: &Path, object_opts: RefOptions) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let t = str_of(m, "type");
    if t.is_empty() {
        errs.push(FieldError::required(
            mp.child("type").as_str(),
            "must specify a metric source type",
        ));
    }
    if !METRIC_TYPES.contains(&t) {
        errs.push(FieldError::not_supported(
            mp.child("type").as_str(),
            t,
            &METRIC_TYPES,
        ));
    }
    // kube inserts the present sources in this order and validates the
    // first one only.
    let present: Vec<&str> = [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ]
    .into_iter()
    .filter(|f| m.get(*f).is_some_and(|v| !v.is_null()))
    .collect();
    if let Some(&first) = present.first() {
        let src = m.get(first).unwrap_or(&Value::Null);
        let sp = mp.child(first);
        errs.extend(match first {
            "object" => validate_object_source(src, &sp, object_opts),
            "external" => validate_external_source(src, &sp),
            "pods" => validate_pods_source(src, &sp),
            "resource" => validate_resource_source(src, &sp),
            _ => validate_container_resource_source(src, &sp),
        });
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
    if !expected.is_empty() && !present.contains(&expected) {
        errs.push(FieldError::required(
            mp.child(expected).as_str(),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        // kube walks a set (random order); name order here.
        let mut others: Vec<&str> = present.into_iter().filter(|f| *f != expected).collect();
        others.sort_unstable();
        for f in others {
            errs.push(FieldError::forbidden(
                mp.child(f).as_str(),
                "must populate the given metric source only",
            ));
        }
    }
    errs
}

/// A set quantity field of a metric target.
fn target_field<'a>(target: &'a Value, f: &str) -> Option<&'a Value> {
    target.get(f).filter(|v| !v.is_null())
}

/// kube's `validateObjectSource`.
fn validate_object_source(src: &Value, p: &Path, opts: RefOptions) -> Vec<FieldError> {
    let mut errs = validate_cross_version_ref(
        src.get("describedObject").unwrap_or(&Value::Null),
        &p.child("describedObject"),
        opts,
    );
    errs.extend(validate_metric_identifier(src, &p.child("metric")));
    let target = src.get("target").unwrap_or(&Value::Null);
    let tp = p.child("target");
    errs.extend(validate_metric_target(target, &tp));
    if target_field(target, "value").is_none() && target_field(target, "averageValue").is_none() {
        errs.push(FieldError::required(
            tp.child("averageValue").as_str(),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

/// kube's `validateExternalSource`.
fn validate_external_source(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(src, &p.child("metric"));
    let target = src.get("target").unwrap_or(&Value::Null);
    let tp = p.child("target");
    errs.extend(validate_metric_target(target, &tp));
    let value = target_field(target, "value").is_some();
    let average = target_field(target, "averageValue").is_some();
    if !value && !average {
        errs.push(FieldError::required(
            tp.child("averageValue").as_str(),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errs.push(FieldError::forbidden(
            tp.child("value").as_str(),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errs
}

/// kube's `validatePodsSource`.
fn validate_pods_source(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(src, &p.child("metric"));
    let target = src.get("target").unwrap_or(&Value::Null);
    let tp = p.child("target");
    errs.extend(validate_metric_target(target, &tp));
    if target_field(target, "averageValue").is_none() {
        errs.push(FieldError::required(
            tp.child("averageValue").as_str(),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

/// kube's `validateResourceSource`.
fn validate_resource_source(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(src, "name").is_empty() {
        errs.push(FieldError::required(
            p.child("name").as_str(),
            "must specify a resource name",
        ));
    }
    errs.extend(utilization_or_value(src, p));
    errs
}

/// kube's `validateContainerResourceSource`: a container resource name
/// and a container DNS label besides the resource rules.
fn validate_container_resource_source(src: &Value, p: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(src, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            p.child("name").as_str(),
            "must specify a resource name",
        ));
    } else {
        errs.extend(container_resource_name(name, &p.child("name")));
    }
    let container = str_of(src, "container");
    if container.is_empty() {
        errs.push(FieldError::required(
            p.child("container").as_str(),
            "must specify a container",
        ));
    } else {
        errs.extend(super::util::dns1123_label(container, &p.child("container")));
    }
    errs.extend(utilization_or_value(src, p));
    errs
}

/// The target rules shared by Resource and ContainerResource sources.
fn utilization_or_value(src: &Value, p: &Path) -> Vec<FieldError> {
    let target = src.get("target").unwrap_or(&Value::Null);
    let tp = p.child("target");
    let mut errs = validate_metric_target(target, &tp);
    let util = target_field(target, "averageUtilization").is_some();
    let average = target_field(target, "averageValue").is_some();
    if !util && !average {
        errs.push(FieldError::required(
            tp.child("averageUtilization").as_str(),
            "must set either a target raw value or a target utilization",
        ));
    }
    if util && average {
        errs.push(FieldError::forbidden(
            tp.child("averageValue").as_str(),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs
}

/// kube's (core/v1) `ValidateContainerResourceName`: `validateResourceName`
/// (a qualified name; unprefixed, a standard resource), then a container
/// resource (unprefixed) or an extended one.
fn container_resource_name(name: &str, p: &Path) -> Vec<FieldError> {
    let invalid = |msg: &str| FieldError::invalid(p.as_str(), name, msg);
    let huge = name.starts_with("hugepages-");
    let mut errs: Vec<FieldError> = keelson_apimachinery::names::is_qualified_name(name)
        .iter()
        .map(|m| invalid(m))
        .collect();
    if errs.is_empty()
        && !name.contains('/')
        && !super::util::STANDARD_RESOURCES.contains(&name)
        && !huge
        && !name.starts_with("requests.hugepages-")
    {
        errs.push(invalid(
            "must be a standard resource type or fully qualified",
        ));
    }
    if !name.contains('/') {
        if !matches!(name, "cpu" | "memory" | "ephemeral-storage") && !huge {
            errs.push(invalid("must be a standard resource for containers"));
        }
    } else if !name.contains("kubernetes.io/") && !super::core_pod::is_extended(name) {
        errs.push(invalid("doesn't follow extended resource name standard"));
    }
    errs
}

/// kube's `validateMetricIdentifier` (the name; the selector is not
/// validated).
fn validate_metric_identifier(src: &Value, p: &Path) -> Vec<FieldError> {
    let metric = src.get("metric").unwrap_or(&Value::Null);
    let name = str_of(metric, "name");
    let np = p.child("name");
    if name.is_empty() {
        return vec![FieldError::required(
            np.as_str(),
            "must specify a metric name",
        )];
    }
    crate::validation::path_segment_errors(name, false)
        .into_iter()
        .map(|m| FieldError::invalid(np.as_str(), name, &m))
        .collect()
}

/// Whether a quantity is positive (`Sign() == 1`); a value that does not
/// parse was refused by the decoder.
fn positive(v: &Value) -> bool {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Quantity::parse(&s)
        .and_then(|q| q.nanos())
        .is_none_or(|n| n > 0)
}

/// kube's `validateMetricTarget`.
fn validate_metric_target(target: &Value, tp: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
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
        if let Some(v) = target_field(target, f).filter(|v| !positive(v)) {
            errs.push(FieldError::invalid(
                tp.child(f).as_str(),
                canonical(v).as_str(),
                "must be positive",
            ));
        }
    }
    if let Some(u) = int_of(target, "averageUtilization").filter(|&u| u < 1) {
        errs.push(FieldError::invalid(
            tp.child("averageUtilization").as_str(),
            u,
            "must be greater than 0",
        ));
    }
    errs
}

/// kube's `validateScalingRules`. A rule whose `policies` are absent or
/// `null` is checked as kube's `v2` defaulting leaves it
/// (`GenerateHPAScaleUpRules`/`GenerateHPAScaleDownRules` fill a nil list
/// with the default policies, which pass), so only an explicit empty list
/// is `must specify at least one Policy`. `tolerance` reaches validation
/// only when the stored object already had one (the strategy drops it
/// otherwise).
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
    if let Some(t) = rules.get("tolerance").filter(|v| !v.is_null()) {
        let s = canonical(t);
        if Quantity::parse(&s).is_some_and(|q| q.is_negative()) {
            errs.push(FieldError::invalid(
                p.child("tolerance").as_str(),
                s.as_str(),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

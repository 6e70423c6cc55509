//! Node, ResourceQuota and LimitRange (`pkg/apis/core/validation`:
//! `ValidateNode*`, `ValidateResourceQuota*`, `ValidateLimitRange`).
//!
//! LimitRange's min/max/default/ratio comparisons are `core_other`'s.

use keelson_apimachinery::go_syntax;
use keelson_apimachinery::names::is_qualified_name;
use keelson_apimachinery::FieldError;
use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

use super::core_pod::quantity_value;
use super::util::{cidr, duplicate, list_of, obj_of, str_of};
use super::{Path, Write};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Node" => match w.old() {
            Some(old) => validate_node_update(obj, old),
            None => validate_node(obj),
        },
        "ResourceQuota" if w.is_status() => validate_resource_quota_status_update(obj),
        "ResourceQuota" => {
            let mut errs = validate_resource_quota_spec(obj);
            match w.old() {
                Some(old) => errs.extend(validate_resource_quota_update(obj, old)),
                None => errs.extend(validate_resource_quota_status(obj)),
            }
            errs
        }
        "LimitRange" => validate_limit_range(obj),
        _ => Vec::new(),
    }
}

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

/// A quantity as JSON carries it (a string, or a bare number).
fn qstr(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// kube's `validateNodeTaints` at `path` (`metadata.taints`, as kube
/// names it).
fn validate_node_taints(taints: &[Value], path: &Path) -> Vec<FieldError> {
    const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
    let mut errs = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, t) in taints.iter().enumerate() {
        let ip = path.index(i);
        let key = str_of(t, "key");
        errs.extend(label_name(key, &ip.child("key")));
        let value = str_of(t, "value");
        let msgs = keelson_apimachinery::names::is_valid_label_value(value);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                ip.child("value").as_str(),
                value,
                &msgs.join(";"),
            ));
        }
        let effect = str_of(t, "effect");
        if effect.is_empty() {
            errs.push(FieldError::required(ip.child("effect").as_str(), ""));
        } else if !EFFECTS.contains(&effect) {
            errs.push(FieldError::not_supported(
                ip.child("effect").as_str(),
                effect,
                EFFECTS,
            ));
        }
        let pair = (effect.to_string(), key.to_string());
        if seen.contains(&pair) {
            errs.push(FieldError {
                detail: "taints must be unique by key and effect pair".into(),
                ..duplicate(&ip, go_taint(t))
            });
            continue;
        }
        seen.push(pair);
    }
    errs
}

/// A taint as kube 1.34 prints the internal `core.Taint` in an error:
/// `json.Marshal` of a struct without JSON tags (Go field names, in
/// declaration order; an unset `TimeAdded` pointer is `null`).
fn go_taint(t: &Value) -> Value {
    let mut m = Map::new();
    for (json, go) in [("key", "Key"), ("value", "Value"), ("effect", "Effect")] {
        m.insert(go.into(), Value::String(str_of(t, json).to_string()));
    }
    let added = t.get("timeAdded").filter(|v| v.is_string()).cloned();
    m.insert("TimeAdded".into(), added.unwrap_or(Value::Null));
    Value::Object(m)
}

/// `ValidateLabelName`: a qualified name.
fn label_name(name: &str, path: &Path) -> Vec<FieldError> {
    is_qualified_name(name)
        .into_iter()
        .map(|m| FieldError::invalid(path.as_str(), name, &m))
        .collect()
}

/// `ValidateNodeResources`: capacity and allocatable are not negative
/// (paths as kube builds them, with the resource as a path segment).
fn validate_node_resources(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let status = obj.get("status").unwrap_or(&Value::Null);
    for key in ["capacity", "allocatable"] {
        for (k, v) in obj_of(status, key).into_iter().flatten() {
            let q = qstr(v);
            if Quantity::parse(&q).is_some_and(|q| q.is_negative()) {
                errs.push(FieldError::invalid(
                    Path::new("status").child(key).child(k).as_str(),
                    q.as_str(),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
    errs
}

/// `core.TaintsAnnotationKey`.
const TAINTS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/taints";
/// `core.PreferAvoidPodsAnnotationKey`.
const AVOID_PODS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/preferAvoidPods";

/// A member of a JSON object as Go's `encoding/json` finds a struct field:
/// an exact match first, else a case-insensitive one.
fn go_field<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.get(name).or_else(|| {
        obj.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// A struct-typed field as Go decodes it: absent or `null` is `None`, an
/// object its fields, anything else Go's type error naming `owner`
/// (the struct and the field's JSON path) and the field's type `ty`.
fn go_struct<'a>(
    m: &'a Map<String, Value>,
    field: &str,
    owner: (&str, &str),
    ty: &str,
) -> Result<Option<&'a Map<String, Value>>, String> {
    match go_field(m, field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(inner)) => Ok(Some(inner)),
        Some(other) => Err(go_type_error(other, Some(owner), ty)),
    }
}

/// Go's `UnmarshalTypeError` text: `json: cannot unmarshal <kind> into
/// Go value of type <ty>` at the top, else `... into Go struct field
/// <Struct>.<json path> of type <ty>`.
fn go_type_error(v: &Value, field: Option<(&str, &str)>, ty: &str) -> String {
    let kind = keelson_apimachinery::field::json_kind(v);
    match field {
        None => format!("json: cannot unmarshal {kind} into Go value of type {ty}"),
        Some((st, path)) => {
            format!("json: cannot unmarshal {kind} into Go struct field {st}.{path} of type {ty}")
        }
    }
}

/// kube's `ValidateNodeSpecificAnnotations`: the taints annotation
/// (`ValidateTaintsInNodeAnnotations`) and the preferAvoidPods annotation
/// (`ValidateAvoidPodsInNodeAnnotations`), each when non-empty.
fn validate_node_specific_annotations(obj: &Value) -> Vec<FieldError> {
    let ap = Path::new("metadata").child("annotations");
    let annotations = obj.get("metadata").and_then(|m| obj_of(m, "annotations"));
    let get = |k: &str| {
        annotations
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let mut errs = Vec::new();
    if let Some(raw) = get(TAINTS_ANNOTATION) {
        match taints_from_annotation(raw) {
            Err(msg) => errs.push(FieldError::invalid(ap.as_str(), TAINTS_ANNOTATION, &msg)),
            Ok(taints) => errs.extend(validate_node_taints(&taints, &ap.child(TAINTS_ANNOTATION))),
        }
    }
    if let Some(raw) = get(AVOID_PODS_ANNOTATION) {
        errs.extend(validate_avoid_pods(raw, &ap));
    }
    errs
}

/// `GetTaintsFromNodeAnnotations`: the annotation as `[]core.Taint` (a
/// struct without JSON tags: Go field names, matched case-insensitively).
fn taints_from_annotation(raw: &str) -> Result<Vec<Value>, String> {
    const TY: &str = "[]core.Taint";
    let v = go_syntax::parse(raw.as_bytes())?;
    let list = match &v {
        Value::Null => return Ok(Vec::new()),
        Value::Array(a) => a,
        other => return Err(go_type_error(other, None, TY)),
    };
    let mut out = Vec::new();
    for t in list {
        let t = match t {
            Value::Null => Map::new(),
            Value::Object(m) => m.clone(),
            other => return Err(go_type_error(other, None, "core.Taint")),
        };
        let mut m = Map::new();
        for (go, json) in [("Key", "key"), ("Value", "value"), ("Effect", "effect")] {
            match go_field(&t, go) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => {
                    m.insert(json.into(), s.clone().into());
                }
                Some(other) => {
                    let ty = if go == "Effect" {
                        "core.TaintEffect"
                    } else {
                        "string"
                    };
                    return Err(go_type_error(other, Some(("Taint", go)), ty));
                }
            }
        }
        if let Some(ta) = go_field(&t, "TimeAdded").filter(|v| v.is_string()) {
            m.insert("timeAdded".into(), ta.clone());
        }
        out.push(Value::Object(m));
    }
    Ok(out)
}

/// kube's `ValidateAvoidPodsInNodeAnnotations` and
/// `validatePreferAvoidPodsEntry`: the annotation decodes as a
/// `v1.AvoidPods`, each entry names a pod controller whose `controller`
/// is true (kube dereferences an unset `controller` and panics; it is
/// reported here as `false`).
fn validate_avoid_pods(raw: &str, ap: &Path) -> Vec<FieldError> {
    let at_avoid = |msg: String| {
        vec![FieldError::invalid(
            ap.child("AvoidPods").as_str(),
            AVOID_PODS_ANNOTATION,
            &msg,
        )]
    };
    let v = match go_syntax::parse(raw.as_bytes()) {
        Ok(v) => v,
        Err(msg) => return at_avoid(msg),
    };
    let root = match &v {
        Value::Null => return Vec::new(),
        Value::Object(m) => m,
        other => return at_avoid(go_type_error(other, None, "v1.AvoidPods")),
    };
    const LIST: &str = "preferAvoidPods";
    let entries = match go_field(root, LIST) {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(a)) => a,
        Some(other) => {
            return at_avoid(go_type_error(
                other,
                Some(("AvoidPods", LIST)),
                "[]v1.PreferAvoidPodsEntry",
            ))
        }
    };
    // Decode first (Go stops at the first type error), then validate.
    let mut controllers: Vec<Option<Option<bool>>> = Vec::new();
    for e in entries {
        let e = match e {
            Value::Null => {
                controllers.push(None);
                continue;
            }
            Value::Object(m) => m,
            other => {
                return at_avoid(go_type_error(
                    other,
                    Some(("AvoidPods", LIST)),
                    "v1.PreferAvoidPodsEntry",
                ))
            }
        };
        let sig_path = "preferAvoidPods.podSignature";
        let sig = match go_struct(
            e,
            "podSignature",
            ("PreferAvoidPodsEntry", sig_path),
            "v1.PodSignature",
        ) {
            Err(msg) => return at_avoid(msg),
            Ok(None) => {
                controllers.push(None);
                continue;
            }
            Ok(Some(m)) => m,
        };
        let pc_path = format!("{sig_path}.podController");
        let pc = match go_struct(
            sig,
            "podController",
            ("PodSignature", &pc_path),
            "v1.OwnerReference",
        ) {
            Err(msg) => return at_avoid(msg),
            Ok(None) => {
                controllers.push(None);
                continue;
            }
            Ok(Some(m)) => m,
        };
        let controller = match go_field(pc, "controller") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return at_avoid(go_type_error(
                    other,
                    Some((
                        "OwnerReference",
                        &format!("{sig_path}.podController.controller"),
                    )),
                    "bool",
                ))
            }
        };
        controllers.push(Some(controller));
    }
    let mut errs = Vec::new();
    for (i, c) in controllers.into_iter().enumerate() {
        let ip = ap.child(AVOID_PODS_ANNOTATION).index(i);
        match c {
            None => errs.push(FieldError::required(ip.child("PodSignature").as_str(), "")),
            Some(Some(true)) => {}
            Some(_) => errs.push(FieldError::invalid(
                ip.child("PodSignature")
                    .child("PodController")
                    .child("Controller")
                    .as_str(),
                false,
                "must point to a controller",
            )),
        }
    }
    errs
}

/// kube's `ValidateNode` (after metadata): node-specific annotations,
/// taints, resources, podCIDRs.
fn validate_node(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_node_specific_annotations(obj);
    errs.extend(validate_node_taints(
        list_of(spec(obj), "taints"),
        &Path::new("metadata").child("taints"),
    ));
    errs.extend(validate_node_resources(obj));
    let cidrs = list_of(spec(obj), "podCIDRs");
    let cp = Path::new("spec").child("podCIDRs");
    for (i, c) in cidrs.iter().enumerate() {
        errs.extend(cidr(c.as_str().unwrap_or(""), &cp.index(i)));
    }
    if cidrs.len() > 1 {
        let v4 = |c: &Value| !c.as_str().unwrap_or("").contains(':');
        let dual = cidrs.len() == 2 && v4(&cidrs[0]) != v4(&cidrs[1]);
        if !dual {
            errs.push(FieldError::invalid(
                cp.as_str(),
                json_strings(cidrs),
                "may specify no more than one CIDR for each IP family",
            ));
        }
        let mut seen = Vec::new();
        for (i, c) in cidrs.iter().enumerate() {
            let c = c.as_str().unwrap_or("");
            if seen.contains(&c) {
                errs.push(duplicate(&cp.index(i), c));
            }
            seen.push(c);
        }
    }
    errs
}

/// A `[]string` (or a slice of a named string type) as kube 1.34 prints
/// it in an error: its JSON array.
fn json_strings(list: &[Value]) -> Value {
    list.iter()
        .map(|v| Value::String(v.as_str().unwrap_or("").to_string()))
        .collect()
}

/// kube's `ValidateNodeUpdate` (after metadata): node-specific
/// annotations, resources, duplicate
/// addresses, podCIDRs and providerID fixed once set, taints,
/// externalID fixed.
fn validate_node_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_node_specific_annotations(obj);
    errs.extend(validate_node_resources(obj));
    let status = obj.get("status").unwrap_or(&Value::Null);
    let mut seen: Vec<&Value> = Vec::new();
    for (i, a) in list_of(status, "addresses").iter().enumerate() {
        if seen.contains(&a) {
            // The internal `core.NodeAddress` has no JSON tags: kube 1.34's
            // `json.Marshal` uses the Go field names.
            let mut shown = Map::new();
            shown.insert("Type".into(), str_of(a, "type").into());
            shown.insert("Address".into(), str_of(a, "address").into());
            errs.push(duplicate(
                &Path::new("status").child("addresses").index(i),
                Value::Object(shown),
            ));
        }
        seen.push(a);
    }
    let (new_spec, old_spec) = (spec(obj), spec(old));
    let old_cidrs = list_of(old_spec, "podCIDRs");
    let new_cidrs = list_of(new_spec, "podCIDRs");
    const CIDR_MSG: &str = "node updates may not change podCIDR except from \"\" to valid";
    if !old_cidrs.is_empty() {
        if old_cidrs.len() != new_cidrs.len() {
            errs.push(FieldError::forbidden("spec.podCIDRs", CIDR_MSG));
        } else {
            for (o, n) in old_cidrs.iter().zip(new_cidrs) {
                if o != n {
                    errs.push(FieldError::forbidden("spec.podCIDRs", CIDR_MSG));
                }
            }
        }
    }
    let old_provider = str_of(old_spec, "providerID");
    if !old_provider.is_empty() && old_provider != str_of(new_spec, "providerID") {
        errs.push(FieldError::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    let taints = list_of(new_spec, "taints");
    if !taints.is_empty() {
        errs.extend(validate_node_taints(
            taints,
            &Path::new("metadata").child("taints"),
        ));
    }
    if str_of(new_spec, "externalID") != str_of(old_spec, "externalID") {
        errs.push(FieldError::forbidden(
            "spec.externalID",
            "may not be updated",
        ));
    }
    errs
}

/// kube's `standardQuotaResources`.
const STANDARD_QUOTA: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_quota_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

/// `validateResourceName`: qualified, and standard when unprefixed.
fn validate_resource_name(name: &str, path: &Path) -> Vec<FieldError> {
    let errs = label_name(name, path);
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/')
        && !super::util::STANDARD_RESOURCES.contains(&name)
        && !is_quota_hugepages(name)
    {
        return vec![FieldError::invalid(
            path.as_str(),
            name,
            "must be a standard resource type or fully qualified",
        )];
    }
    errs
}

/// `ValidateResourceQuotaResourceName`.
fn validate_quota_resource_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_resource_name(name, path);
    if !name.contains('/') && !STANDARD_QUOTA.contains(&name) && !is_quota_hugepages(name) {
        errs.push(FieldError::invalid(
            path.as_str(),
            name,
            "must be a standard resource for quota",
        ));
    }
    errs
}

/// One `hard`/`used` map: names and quantity values.
fn quota_list(map: Option<&serde_json::Map<String, Value>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in map.into_iter().flatten() {
        let rp = path.key(k);
        errs.extend(validate_quota_resource_name(k, &rp));
        errs.extend(quantity_value(k, v, &rp));
    }
    errs
}

/// `helper.IsStandardQuotaResourceName`.
fn is_standard_quota_resource(name: &str) -> bool {
    STANDARD_QUOTA.contains(&name) || is_quota_hugepages(name)
}

/// `helper.IsResourceQuotaScopeValidForResource`.
fn scope_valid_for_resource(scope: &str, resource: &str) -> bool {
    const POD_COUNT_AND_COMPUTE: &[&str] = &[
        "pods",
        "cpu",
        "memory",
        "limits.cpu",
        "limits.memory",
        "requests.cpu",
        "requests.memory",
    ];
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => POD_COUNT_AND_COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        "VolumeAttributesClass" => {
            matches!(resource, "persistentvolumeclaims" | "requests.storage")
        }
        _ => true,
    }
}

const QUOTA_SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

/// `ValidateResourceQuotaSpec`: hard names and quantities, scope names
/// and conflicting pairs, scopeSelector operators.
fn validate_resource_quota_spec(obj: &Value) -> Vec<FieldError> {
    let s = spec(obj);
    let sp = Path::new("spec");
    let mut errs = quota_list(obj_of(s, "hard"), &sp.child("hard"));
    let scopes = list_of(s, "scopes");
    let shown = quota_scopes(s);
    let scopes_path = sp.child("scopes");
    let invalid = |detail: &str| FieldError::invalid(scopes_path.as_str(), shown.clone(), detail);
    let names: Vec<&str> = scopes.iter().map(|v| v.as_str().unwrap_or("")).collect();
    // kube's `validateResourceQuotaScopes`: per scope, its name, then each
    // standard hard resource (in name order) it cannot apply to.
    let mut hard: Vec<&str> = obj_of(s, "hard")
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    hard.sort_unstable();
    for n in &names {
        if !QUOTA_SCOPES.contains(n) {
            errs.push(invalid("unsupported scope"));
        }
        for k in &hard {
            if is_standard_quota_resource(k) && !scope_valid_for_resource(n, k) {
                errs.push(invalid("unsupported scope applied to resource"));
            }
        }
    }
    for (a, b) in [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ] {
        if names.contains(&a) && names.contains(&b) {
            errs.push(invalid("conflicting scopes"));
        }
    }
    if let Some(sel) = s.get("scopeSelector").filter(|v| v.is_object()) {
        let mp = sp.child("scopeSelector").child("matchExpressions");
        for req in list_of(sel, "matchExpressions") {
            let scope = str_of(req, "scopeName");
            if !QUOTA_SCOPES.contains(&scope) {
                errs.push(FieldError::invalid(
                    mp.child("scopeName").as_str(),
                    scope,
                    "unsupported scope",
                ));
            }
            let op = str_of(req, "operator");
            if matches!(
                scope,
                "BestEffort"
                    | "NotBestEffort"
                    | "Terminating"
                    | "NotTerminating"
                    | "CrossNamespacePodAffinity"
            ) && op != "Exists"
            {
                errs.push(FieldError::invalid(
                    mp.child("operator").as_str(),
                    op,
                    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
                ));
            }
            let values = list_of(req, "values");
            match op {
                "In" | "NotIn" => {
                    if values.is_empty() {
                        errs.push(FieldError::required(
                            mp.child("values").as_str(),
                            "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                        ));
                    }
                }
                "Exists" | "DoesNotExist" => {
                    if !values.is_empty() {
                        errs.push(FieldError::invalid(
                            mp.child("values").as_str(),
                            json_strings(values),
                            "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                        ));
                    }
                }
                _ => errs.push(FieldError::invalid(
                    mp.child("operator").as_str(),
                    op,
                    "not a valid selector operator",
                )),
            }
        }
    }
    errs
}

/// `spec.scopes` (a `[]core.ResourceQuotaScope`) as kube 1.34 prints it
/// in an error: its JSON array, `null` when unset (a nil slice).
fn quota_scopes(spec: &Value) -> Value {
    match spec.get("scopes").and_then(Value::as_array) {
        Some(list) => json_strings(list),
        None => Value::Null,
    }
}

/// `ValidateResourceQuotaStatus` (on create, `ValidateResourceQuota`
/// checks the status too).
fn validate_resource_quota_status(obj: &Value) -> Vec<FieldError> {
    let status = obj.get("status").unwrap_or(&Value::Null);
    let sp = Path::new("status");
    let mut errs = quota_list(obj_of(status, "hard"), &sp.child("hard"));
    errs.extend(quota_list(obj_of(status, "used"), &sp.child("used")));
    errs
}

/// `ValidateResourceQuotaUpdate` (after the spec): scopes are fixed.
fn validate_resource_quota_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let set = |o: &Value| -> std::collections::BTreeSet<String> {
        list_of(spec(o), "scopes")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    if set(obj) == set(old) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec.scopes",
        quota_scopes(spec(obj)),
        "field is immutable",
    )]
}

/// `ValidateResourceQuotaStatusUpdate`: status names and quantities.
fn validate_resource_quota_status_update(obj: &Value) -> Vec<FieldError> {
    validate_resource_quota_status(obj)
}

/// kube's `standardLimitRangeTypes`.
const LIMIT_TYPES: &[&str] = &["Pod", "Container", "PersistentVolumeClaim"];

/// `validateLimitRangeResourceName`: container resource names for Pod
/// and Container limits, plain resource names otherwise.
fn limit_resource_name(limit_type: &str, name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_resource_name(name, path);
    if matches!(limit_type, "Pod" | "Container") {
        if !name.contains('/') {
            if !["cpu", "memory", "ephemeral-storage"].contains(&name)
                && !name.starts_with("hugepages-")
            {
                errs.push(FieldError::invalid(
                    path.as_str(),
                    name,
                    "must be a standard resource for containers",
                ));
            }
        } else if !name.contains("kubernetes.io/")
            && (name.starts_with("requests.")
                || !is_qualified_name(&format!("requests.{name}")).is_empty())
        {
            errs.push(FieldError::invalid(
                path.as_str(),
                name,
                "doesn't follow extended resource name standard",
            ));
        }
    }
    errs
}

/// kube's `ValidateLimitRange` (after metadata): type names and
/// duplicates, resource names, no defaults for `Pod`, a storage bound
/// for `PersistentVolumeClaim`, then each limit's quantity comparisons.
fn validate_limit_range(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let lp = Path::new("spec").child("limits");
    let mut types: Vec<&str> = Vec::new();
    for (i, limit) in list_of(spec(obj), "limits").iter().enumerate() {
        let ip = lp.index(i);
        let t = str_of(limit, "type");
        let type_errs = label_name(t, &ip.child("type"));
        if type_errs.is_empty() && !t.contains('/') && !LIMIT_TYPES.contains(&t) {
            errs.push(FieldError::invalid(
                ip.child("type").as_str(),
                t,
                "must be a standard limit type or fully qualified",
            ));
        }
        errs.extend(type_errs);
        if types.contains(&t) {
            errs.push(duplicate(&ip.child("type"), t));
        }
        types.push(t);
        for key in ["max", "min"] {
            for k in obj_of(limit, key).into_iter().flatten().map(|(k, _)| k) {
                errs.extend(limit_resource_name(t, k, &ip.child(key).key(k)));
            }
        }
        if t == "Pod" {
            for key in ["default", "defaultRequest"] {
                if obj_of(limit, key).is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(
                        ip.child(key).as_str(),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            for key in ["default", "defaultRequest"] {
                for k in obj_of(limit, key).into_iter().flatten().map(|(k, _)| k) {
                    errs.extend(limit_resource_name(t, k, &ip.child(key).key(k)));
                }
            }
        }
        if t == "PersistentVolumeClaim" {
            let has = |key: &str| obj_of(limit, key).is_some_and(|m| m.contains_key("storage"));
            if !has("min") && !has("max") {
                errs.push(FieldError::required(
                    ip.child("limits").as_str(),
                    "either minimum or maximum storage value is required, but neither was provided",
                ));
            }
        }
        for k in obj_of(limit, "maxLimitRequestRatio")
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            errs.extend(limit_resource_name(
                t,
                k,
                &ip.child("maxLimitRequestRatio").key(k),
            ));
        }
        errs.extend(super::core_other::limit_range_comparisons(limit, &ip));
    }
    errs
}

//! FlowSchema and PriorityLevelConfiguration
//! (`pkg/apis/flowcontrol/validation`).
//!
//! kube validates the internal types, which have no JSON tags: a whole
//! spec or struct in an error value prints with Go's field names
//! (`{"Type":"ByPod"}`), every field present.

use keelson_apimachinery::{FieldError, FieldErrorKind};
use serde_json::{json, Map, Value};

use super::util::{duplicate, int_of, list_of, obj_of, str_of};
use super::{Path, Write};

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
const SUBJECT_KINDS: &[&str] = &["Group", "ServiceAccount", "User"];
const ENABLEMENTS: &[&str] = &["Exempt", "Limited"];
const LIMIT_RESPONSES: &[&str] = &["Queue", "Reject"];
const MAX_PRECEDENCE: i64 = 10000;
const MAX_QUEUES: i64 = 10_000_000;
const MAX_HASH_BITS: f64 = 60.0;
const NS_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

/// The errors of one object of this group's `kind`.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let name = obj.get("metadata").map(|m| str_of(m, "name")).unwrap_or("");
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let status = obj.get("status").unwrap_or(&empty);
    match kind {
        "FlowSchema" => {
            let mut errs = Vec::new();
            if !w.is_status() {
                errs.extend(validate_flow_schema_spec(name, spec, &Path::new("spec")));
                errs.extend(validate_mandatory_flow_schema(name, spec));
            }
            errs.extend(validate_conditions(status));
            errs
        }
        "PriorityLevelConfiguration" => {
            let mut errs = Vec::new();
            if !w.is_status() {
                errs.extend(validate_plc_spec(spec, name, &Path::new("spec")));
                errs.extend(validate_if_mandatory_plc(name, spec));
            }
            errs.extend(validate_conditions(status));
            errs
        }
        _ => Vec::new(),
    }
}

/// `ValidateFlowSchemaSpec`.
fn validate_flow_schema_spec(name: &str, spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mp = path.child("matchingPrecedence");
    let prec = int_of(spec, "matchingPrecedence").unwrap_or(0);
    if prec <= 0 {
        errs.push(FieldError::invalid(
            mp.as_str(),
            prec,
            "must be a positive value",
        ));
    }
    if prec > MAX_PRECEDENCE {
        errs.push(FieldError::invalid(
            mp.as_str(),
            prec,
            &format!("must not be greater than {MAX_PRECEDENCE}"),
        ));
    }
    if prec == 1 && name != "exempt" {
        errs.push(FieldError::invalid(
            mp.as_str(),
            prec,
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(dm) = spec.get("distinguisherMethod").filter(|v| v.is_object()) {
        let t = str_of(dm, "type");
        if t != "ByNamespace" && t != "ByUser" {
            errs.push(FieldError::not_supported(
                path.child("distinguisherMethod").child("type").as_str(),
                json!({"Type": t}),
                &["ByNamespace", "ByUser"],
            ));
        }
    }
    let pl = spec
        .get("priorityLevelConfiguration")
        .map(|p| str_of(p, "name"))
        .unwrap_or("");
    let pp = path.child("priorityLevelConfiguration").child("name");
    if pl.is_empty() {
        errs.push(FieldError::required(
            pp.as_str(),
            "must reference a priority level",
        ));
    } else {
        for m in keelson_apimachinery::names::is_dns1123_subdomain(pl) {
            errs.push(FieldError::invalid(pp.as_str(), pl, &m));
        }
    }
    for (i, rule) in list_of(spec, "rules").iter().enumerate() {
        errs.extend(validate_rules_with_subjects(
            rule,
            &path.child("rules").index(i),
        ));
    }
    errs
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn validate_rules_with_subjects(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let subjects = list_of(rule, "subjects");
    if subjects.is_empty() {
        errs.push(FieldError::required(
            path.child("subjects").as_str(),
            "subjects must contain at least one value",
        ));
    }
    for (i, s) in subjects.iter().enumerate() {
        errs.extend(validate_subject(s, &path.child("subjects").index(i)));
    }
    let resource = list_of(rule, "resourceRules");
    let non_resource = list_of(rule, "nonResourceRules");
    if resource.is_empty() && non_resource.is_empty() {
        errs.push(FieldError::required(
            path.as_str(),
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (i, r) in resource.iter().enumerate() {
        errs.extend(validate_resource_rule(
            r,
            &path.child("resourceRules").index(i),
        ));
    }
    for (i, r) in non_resource.iter().enumerate() {
        errs.extend(validate_non_resource_rule(
            r,
            &path.child("nonResourceRules").index(i),
        ));
    }
    errs
}

/// `ValidateFlowSchemaSubject` and the per-kind subject rules.
fn validate_subject(s: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let present = |k: &str| s.get(k).is_some_and(|v| !v.is_null());
    let forbid = |errs: &mut Vec<FieldError>, key: &str, what: &str| {
        if present(key) {
            errs.push(FieldError::forbidden(
                path.child(key).as_str(),
                &format!("{key} is forbidden when subject kind is not '{what}'"),
            ));
        }
    };
    match str_of(s, "kind") {
        "ServiceAccount" => {
            let sp = path.child("serviceAccount");
            match obj_of(s, "serviceAccount") {
                None => errs.push(FieldError::required(
                    sp.as_str(),
                    "serviceAccount is required when subject kind is 'ServiceAccount'",
                )),
                Some(sa) => {
                    let sa = Value::Object(sa.clone());
                    let name = str_of(&sa, "name");
                    if name.is_empty() {
                        errs.push(FieldError::required(sp.child("name").as_str(), ""));
                    } else if name != "*" {
                        for m in keelson_apimachinery::names::is_dns1123_subdomain(name) {
                            errs.push(FieldError::invalid(sp.child("name").as_str(), name, &m));
                        }
                    }
                    let ns = str_of(&sa, "namespace");
                    if ns.is_empty() {
                        errs.push(FieldError::required(
                            sp.child("namespace").as_str(),
                            "must specify namespace for service account",
                        ));
                    } else {
                        for m in keelson_apimachinery::names::is_dns1123_label(ns) {
                            errs.push(FieldError::invalid(sp.child("namespace").as_str(), ns, &m));
                        }
                    }
                }
            }
            forbid(&mut errs, "user", "User");
            forbid(&mut errs, "group", "Group");
        }
        "User" => {
            errs.extend(named_subject(s, "user", "User", path));
            forbid(&mut errs, "serviceAccount", "ServiceAccount");
            forbid(&mut errs, "group", "Group");
        }
        "Group" => {
            errs.extend(named_subject(s, "group", "Group", path));
            forbid(&mut errs, "serviceAccount", "ServiceAccount");
            forbid(&mut errs, "user", "User");
        }
        other => errs.push(FieldError::not_supported(
            path.child("kind").as_str(),
            other,
            SUBJECT_KINDS,
        )),
    }
    errs
}

/// `ValidateUserSubject` / `ValidateGroupSubject`.
fn named_subject(s: &Value, key: &str, kind: &str, path: &Path) -> Vec<FieldError> {
    let p = path.child(key);
    match obj_of(s, key) {
        None => vec![FieldError::required(
            p.as_str(),
            &format!("{key} is required when subject kind is '{kind}'"),
        )],
        Some(m) => {
            if m.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                vec![FieldError::required(p.child("name").as_str(), "")]
            } else {
                Vec::new()
            }
        }
    }
}

fn strings(list: &[Value]) -> Vec<&str> {
    list.iter().map(|v| v.as_str().unwrap_or("")).collect()
}

fn raw_list(kind: FieldErrorKind, path: &Path, list: &[Value], detail: String) -> FieldError {
    FieldError {
        kind,
        field: path.as_str().to_string(),
        value: Some(Value::Array(list.to_vec())),
        detail,
    }
}

/// The verbs rule shared by resource and non-resource rules.
fn validate_verbs(rule: &Value, path: &Path) -> Vec<FieldError> {
    let list = list_of(rule, "verbs");
    let verbs = strings(list);
    let vp = path.child("verbs");
    if verbs.is_empty() {
        vec![FieldError::required(
            vp.as_str(),
            "verbs must contain at least one value",
        )]
    } else if verbs.contains(&"*") {
        if verbs.len() > 1 {
            vec![raw_list(
                FieldErrorKind::Invalid,
                &vp,
                list,
                "if '*' is present, must not specify other verbs".into(),
            )]
        } else {
            Vec::new()
        }
    } else if verbs.iter().any(|v| !VERBS.contains(v)) {
        let supported = VERBS
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        vec![raw_list(
            FieldErrorKind::NotSupported,
            &vp,
            list,
            format!("supported values: {supported}"),
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn validate_resource_rule(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_verbs(rule, path);
    for (key, what, required) in [
        (
            "apiGroups",
            "api groups",
            "resource rules must supply at least one api group",
        ),
        (
            "resources",
            "resources",
            "resource rules must supply at least one resource",
        ),
    ] {
        let list = list_of(rule, key);
        let kp = path.child(key);
        if list.is_empty() {
            errs.push(FieldError::required(kp.as_str(), required));
        } else if list.len() > 1 && strings(list).contains(&"*") {
            errs.push(raw_list(
                FieldErrorKind::Invalid,
                &kp,
                list,
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
    }
    let list = list_of(rule, "namespaces");
    let nsp = path.child("namespaces");
    let cluster = rule
        .get("clusterScope")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if list.is_empty() && !cluster {
        errs.push(FieldError::required(
            nsp.as_str(),
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if strings(list).contains(&"*") {
        if list.len() > 1 {
            errs.push(raw_list(
                FieldErrorKind::Invalid,
                &nsp,
                list,
                "if '*' is present, must not specify other namespaces".into(),
            ));
        }
    } else {
        for (i, ns) in strings(list).into_iter().enumerate() {
            for m in keelson_apimachinery::names::is_dns1123_label(ns) {
                errs.push(FieldError::invalid(
                    nsp.index(i).as_str(),
                    ns,
                    &format!("{NS_INTRO}{m}"),
                ));
            }
        }
    }
    errs
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn validate_non_resource_rule(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_verbs(rule, path);
    let list = list_of(rule, "nonResourceURLs");
    let up = path.child("nonResourceURLs");
    if list.is_empty() {
        errs.push(FieldError::required(
            up.as_str(),
            "nonResourceURLs must contain at least one value",
        ));
    } else if strings(list).contains(&"*") {
        if list.len() > 1 {
            errs.push(raw_list(
                FieldErrorKind::Invalid,
                &up,
                list,
                "if '*' is present, must not specify other non-resource URLs".into(),
            ));
        }
    } else {
        for (i, u) in strings(list).into_iter().enumerate() {
            if let Some(msg) = non_resource_url_error(u) {
                errs.push(FieldError::invalid(up.index(i).as_str(), u, msg));
            }
        }
    }
    errs
}

/// `ValidateNonResourceURLPath`.
fn non_resource_url_error(p: &str) -> Option<&'static str> {
    if p.is_empty() {
        return Some("must not be empty");
    }
    if p == "/" {
        return None;
    }
    if !p.starts_with('/') {
        return Some("must start with slash");
    }
    if p.contains(' ') {
        return Some("must not contain white-space");
    }
    if p.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = p.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !p.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// `ValidatePriorityLevelConfigurationSpec` (the limited part).
fn validate_plc_spec(spec: &Value, name: &str, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = str_of(spec, "type");
    if (name == "exempt") != (ty == "Exempt") {
        errs.push(FieldError::invalid(
            path.child("type").as_str(),
            ty,
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    let limited = spec.get("limited").filter(|v| !v.is_null());
    let exempt = spec.get("exempt").filter(|v| !v.is_null());
    match ty {
        "Exempt" => {
            if limited.is_some() {
                errs.push(FieldError::forbidden(
                    path.child("limited").as_str(),
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(e) = exempt {
                errs.extend(validate_exempt(e, &path.child("exempt")));
            }
        }
        "Limited" => {
            if exempt.is_some() {
                errs.push(FieldError::forbidden(
                    path.child("exempt").as_str(),
                    "must be nil if the type is Limited",
                ));
            }
            match limited {
                None => errs.push(FieldError::required(
                    path.child("limited").as_str(),
                    "must not be empty when type is Limited",
                )),
                Some(l) => errs.extend(validate_limited(l, &path.child("limited"))),
            }
        }
        other => errs.push(FieldError::not_supported(
            path.child("type").as_str(),
            other,
            ENABLEMENTS,
        )),
    }
    errs
}

/// kube's `validateExemptPriorityLevelConfiguration`.
fn validate_exempt(e: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(n) = int_of(e, "nominalConcurrencyShares").filter(|n| *n < 0) {
        errs.push(FieldError::invalid(
            path.child("nominalConcurrencyShares").as_str(),
            n,
            "must be a non-negative integer",
        ));
    }
    if let Some(lp) = int_of(e, "lendablePercent").filter(|p| !(0..=100).contains(p)) {
        errs.push(FieldError::invalid(
            path.child("lendablePercent").as_str(),
            lp,
            "must be between 0 and 100, inclusive",
        ));
    }
    errs
}

/// `ValidateLimitedPriorityLevelConfiguration`, with the options kube
/// 1.34's strategy passes (`AllowZeroLimitedNominalConcurrencyShares`, on
/// create and update; the `v1` and `v1beta3` field name).
fn validate_limited(l: &Value, path: &Path) -> Vec<FieldError> {
    let empty = Value::Null;
    let mut errs = Vec::new();
    if let Some(n) = int_of(l, "nominalConcurrencyShares").filter(|n| *n < 0) {
        errs.push(FieldError::invalid(
            path.child("nominalConcurrencyShares").as_str(),
            n,
            "must be a non-negative integer",
        ));
    }
    errs.extend(validate_limit_response(
        l.get("limitResponse").unwrap_or(&empty),
        &path.child("limitResponse"),
    ));
    if let Some(lp) = int_of(l, "lendablePercent").filter(|p| !(0..=100).contains(p)) {
        errs.push(FieldError::invalid(
            path.child("lendablePercent").as_str(),
            lp,
            "must be between 0 and 100, inclusive",
        ));
    }
    if let Some(bp) = int_of(l, "borrowingLimitPercent").filter(|p| *p < 0) {
        errs.push(FieldError::invalid(
            path.child("borrowingLimitPercent").as_str(),
            bp,
            "if specified, must be a non-negative integer",
        ));
    }
    errs
}

/// `ValidateLimitResponse`.
fn validate_limit_response(lr: &Value, path: &Path) -> Vec<FieldError> {
    let queuing = lr.get("queuing").filter(|v| !v.is_null());
    match str_of(lr, "type") {
        "Reject" => match queuing {
            Some(_) => vec![FieldError::forbidden(
                path.child("queuing").as_str(),
                "must be nil if limited.limitResponse.type is not Limited",
            )],
            None => Vec::new(),
        },
        "Queue" => match queuing {
            None => vec![FieldError::required(
                path.child("queuing").as_str(),
                "must not be empty if limited.limitResponse.type is Limited",
            )],
            Some(q) => validate_queuing(q, &path.child("queuing")),
        },
        other => vec![FieldError::not_supported(
            path.child("type").as_str(),
            other,
            LIMIT_RESPONSES,
        )],
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn validate_queuing(q: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let limit = int_of(q, "queueLengthLimit").unwrap_or(0);
    if limit <= 0 {
        errs.push(FieldError::invalid(
            path.child("queueLengthLimit").as_str(),
            limit,
            "must be positive",
        ));
    }
    let queues = int_of(q, "queues").unwrap_or(0);
    let qp = path.child("queues");
    if queues <= 0 {
        errs.push(FieldError::invalid(qp.as_str(), queues, "must be positive"));
    } else if queues > MAX_QUEUES {
        errs.push(FieldError::invalid(
            qp.as_str(),
            queues,
            &format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hand = int_of(q, "handSize").unwrap_or(0);
    let hp = path.child("handSize");
    if hand <= 0 {
        errs.push(FieldError::invalid(hp.as_str(), hand, "must be positive"));
    } else if hand > queues {
        errs.push(FieldError::invalid(
            hp.as_str(),
            hand,
            &format!("should not be greater than queues ({queues})"),
        ));
    } else if ((queues as f64).log2() * hand as f64).ceil() > MAX_HASH_BITS {
        errs.push(FieldError::invalid(
            hp.as_str(),
            hand,
            &format!(
                "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {}",
                MAX_HASH_BITS as i64
            ),
        ));
    }
    errs
}

/// The status conditions: a type each, no type twice.
fn validate_conditions(status: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let cp = Path::new("status").child("conditions");
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in list_of(status, "conditions").iter().enumerate() {
        let ty = str_of(c, "type");
        let tp = cp.index(i).child("type");
        if seen.contains(&ty) {
            errs.push(duplicate(&tp, ty));
        }
        seen.push(ty);
        if ty.is_empty() {
            errs.push(FieldError::required(tp.as_str(), "must not be empty"));
        }
    }
    errs
}

/// The mandatory FlowSchemas' specs (`k8s.io/apiserver`'s
/// `bootstrap.MandatoryFlowSchemas`), in `v1` form.
fn mandatory_flow_schema(name: &str) -> Option<Value> {
    let rules = |groups: &[&str]| {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"kind": "Group", "group": {"name": g}}))
            .collect();
        json!([{
            "subjects": subjects,
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                "clusterScope": true, "namespaces": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
        }])
    };
    match name {
        "exempt" => Some(json!({
            "priorityLevelConfiguration": {"name": "exempt"},
            "matchingPrecedence": 1,
            "rules": rules(&["system:masters"]),
        })),
        "catch-all" => Some(json!({
            "priorityLevelConfiguration": {"name": "catch-all"},
            "matchingPrecedence": 10000,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": rules(&["system:unauthenticated", "system:authenticated"]),
        })),
        _ => None,
    }
}

/// `Semantic.DeepEqual`'s view of a spec: Go zero values of non-pointer
/// fields (and nil or empty lists) dropped; the pointer fields in `keep`
/// keep a zero.
fn semantic_form(v: &Value, keep: &[&str]) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                let zero = match x {
                    Value::Null => true,
                    Value::Bool(b) => !b,
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Number(n) => n.as_f64() == Some(0.0) && !keep.contains(&k.as_str()),
                    Value::Object(_) => false,
                };
                if !zero {
                    out.insert(k.clone(), semantic_form(x, keep));
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| semantic_form(x, keep)).collect()),
        other => other.clone(),
    }
}

/// `ValidateFlowSchema`'s mandatory-object rule: `exempt` and `catch-all`
/// keep their fixed spec.
fn validate_mandatory_flow_schema(name: &str, spec: &Value) -> Vec<FieldError> {
    let Some(fixed) = mandatory_flow_schema(name) else {
        return Vec::new();
    };
    if semantic_form(spec, &[]) == semantic_form(&fixed, &[]) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec",
        internal_flow_schema_spec(spec),
        &format!("spec of '{name}' must equal the fixed value"),
    )]
}

/// kube's `ValidateIfMandatoryPriorityLevelConfigurationObject`: the
/// `catch-all` level keeps its fixed spec (`exempt` is not checked, its
/// exempt settings may change).
fn validate_if_mandatory_plc(name: &str, spec: &Value) -> Vec<FieldError> {
    if name != "catch-all" {
        return Vec::new();
    }
    let fixed = json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
        "lendablePercent": 0, "limitResponse": {"type": "Reject"}}});
    let keep = ["lendablePercent", "borrowingLimitPercent"];
    if semantic_form(spec, &keep) == semantic_form(&fixed, &keep) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec",
        internal_plc_spec(spec),
        &format!("spec of '{name}' must equal the fixed value"),
    )]
}

/// A string list as a Go `[]string` marshals: `null` when absent.
fn go_strings(v: Option<&Value>) -> Value {
    match v.and_then(Value::as_array) {
        Some(a) => Value::Array(
            a.iter()
                .map(|s| Value::String(s.as_str().unwrap_or_default().to_string()))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// A list of structs as a Go slice marshals (`null` when absent).
fn go_list(v: Option<&Value>, each: fn(&Value) -> Value) -> Value {
    match v.and_then(Value::as_array) {
        Some(a) => Value::Array(a.iter().map(each).collect()),
        None => Value::Null,
    }
}

/// A pointer to a struct: `null` when unset.
fn go_ptr(v: Option<&Value>, each: fn(&Value) -> Value) -> Value {
    match v.filter(|x| x.is_object()) {
        Some(x) => each(x),
        None => Value::Null,
    }
}

/// An `*int32`.
fn go_int_ptr(v: &Value, key: &str) -> Value {
    int_of(v, key).map_or(Value::Null, Value::from)
}

/// The internal `flowcontrol.FlowSchemaSpec` as kube 1.34 prints it.
fn internal_flow_schema_spec(spec: &Value) -> Value {
    fn subject(s: &Value) -> Value {
        json!({
            "Kind": str_of(s, "kind"),
            "User": go_ptr(s.get("user"), |u| json!({"Name": str_of(u, "name")})),
            "Group": go_ptr(s.get("group"), |g| json!({"Name": str_of(g, "name")})),
            "ServiceAccount": go_ptr(s.get("serviceAccount"), |a| json!({
                "Namespace": str_of(a, "namespace"), "Name": str_of(a, "name")})),
        })
    }
    fn resource_rule(r: &Value) -> Value {
        json!({
            "Verbs": go_strings(r.get("verbs")),
            "APIGroups": go_strings(r.get("apiGroups")),
            "Resources": go_strings(r.get("resources")),
            "ClusterScope": r.get("clusterScope").and_then(Value::as_bool).unwrap_or(false),
            "Namespaces": go_strings(r.get("namespaces")),
        })
    }
    fn non_resource_rule(r: &Value) -> Value {
        json!({
            "Verbs": go_strings(r.get("verbs")),
            "NonResourceURLs": go_strings(r.get("nonResourceURLs")),
        })
    }
    fn rule(r: &Value) -> Value {
        json!({
            "Subjects": go_list(r.get("subjects"), subject),
            "ResourceRules": go_list(r.get("resourceRules"), resource_rule),
            "NonResourceRules": go_list(r.get("nonResourceRules"), non_resource_rule),
        })
    }
    let pl = spec
        .get("priorityLevelConfiguration")
        .map(|p| str_of(p, "name"))
        .unwrap_or("");
    json!({
        "PriorityLevelConfiguration": {"Name": pl},
        "MatchingPrecedence": int_of(spec, "matchingPrecedence").unwrap_or(0),
        "DistinguisherMethod": go_ptr(spec.get("distinguisherMethod"), |d| json!({"Type": str_of(d, "type")})),
        "Rules": go_list(spec.get("rules"), rule),
    })
}

/// The internal `flowcontrol.PriorityLevelConfigurationSpec` as kube 1.34
/// prints it.
fn internal_plc_spec(spec: &Value) -> Value {
    fn limited(l: &Value) -> Value {
        let lr = l.get("limitResponse").unwrap_or(&Value::Null);
        json!({
            "NominalConcurrencyShares": int_of(l, "nominalConcurrencyShares").unwrap_or(0),
            "LimitResponse": {
                "Type": str_of(lr, "type"),
                "Queuing": go_ptr(lr.get("queuing"), |q| json!({
                    "Queues": int_of(q, "queues").unwrap_or(0),
                    "HandSize": int_of(q, "handSize").unwrap_or(0),
                    "QueueLengthLimit": int_of(q, "queueLengthLimit").unwrap_or(0),
                })),
            },
            "LendablePercent": go_int_ptr(l, "lendablePercent"),
            "BorrowingLimitPercent": go_int_ptr(l, "borrowingLimitPercent"),
        })
    }
    json!({
        "Type": str_of(spec, "type"),
        "Limited": go_ptr(spec.get("limited"), limited),
        "Exempt": go_ptr(spec.get("exempt"), |e| json!({
            "NominalConcurrencyShares": go_int_ptr(e, "nominalConcurrencyShares"),
            "LendablePercent": go_int_ptr(e, "lendablePercent"),
        })),
    })
}

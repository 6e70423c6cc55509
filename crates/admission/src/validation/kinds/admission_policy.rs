//! ValidatingAdmissionPolicy, MutatingAdmissionPolicy and their bindings
//! (`pkg/apis/admissionregistration/validation`:
//! `validateValidatingAdmissionPolicySpec`,
//! `validateValidatingAdmissionPolicyBindingSpec`, the status update,
//! `validateMutatingAdmissionPolicySpec`, `validateMutation`,
//! `validateMutatingAdmissionPolicyBindingSpec`).
//!
//! CEL expressions are compiled as kube's validation compiles them (the
//! policy's declared variables; compile and result-type errors). kube's
//! admission compiler (`plugin/cel/compile.go`) estimates no cost at
//! write time (the per-call limit applies when an expression runs), so
//! neither does this. Stored and new expressions compile alike: the only
//! library kube 1.34 keeps from new expressions (`ext.Lists` v3) is not in
//! keelson-cel.

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::admissionregistration::validate_rule_with_operations;
use super::util::{duplicate, list_of, str_of, validate_label_selector};
use super::{Path, Write};
use crate::policy::compile::{Decls, PolicyCompiler};
use crate::validation::path_segment_errors;
use keelson_cel::expr::Returns;

const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
const MAX_MATCH_CONDITIONS: usize = 64;
const MAX_VALUE_EXPRESSION: usize = 5 * 1024;
/// kube's `maxAuditAnnotations`.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
const PATCH_TYPES: &[&str] = &["ApplyConfiguration", "JSONPatch"];
/// What a mutating policy or binding may match: DELETE cannot be mutated.
const MUTATING_OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "UPDATE"];

/// `ValidateValidatingAdmissionPolicy` / `...Update` / `...StatusUpdate`
/// (after metadata).
pub(crate) fn validate_policy(w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if w.is_status() {
        return validate_policy_status(obj.get("status").unwrap_or(&Value::Null));
    }
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let name = obj.get("metadata").map(|m| str_of(m, "name")).unwrap_or("");
    // kube skips the match conditions on an update that leaves them and
    // the paramKind as they were
    // (`ignoreValidatingAdmissionPolicyMatchConditions`).
    let same_conditions = w.old().is_some_and(|old| {
        let conds = |o: &Value| {
            o.get("spec").map(|s| {
                (
                    list_of(s, "matchConditions").to_vec(),
                    s.get("paramKind").filter(|p| !p.is_null()).cloned(),
                )
            })
        };
        conds(old) == conds(obj)
    });
    validate_policy_spec(name, spec, !same_conditions, &Path::new("spec"))
}

/// `ValidateValidatingAdmissionPolicyBinding` (create and update alike).
pub(crate) fn validate_binding(w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if w.is_status() {
        return Vec::new();
    }
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    validate_binding_spec(spec, &Path::new("spec"))
}

/// `ValidateMutatingAdmissionPolicy` / `...Update` (after metadata; the
/// v1beta1 policy has no status).
pub(crate) fn validate_mutating_policy(w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if w.is_status() {
        return Vec::new();
    }
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    // An update that keeps `paramKind` and the match conditions as they
    // were does not check the conditions again
    // (`ignoreMutatingAdmissionPolicyMatchConditions`).
    let same_conditions = w.old().is_some_and(|old| {
        let key = |o: &Value| {
            o.get("spec").map(|s| {
                (
                    s.get("paramKind").filter(|v| !v.is_null()).cloned(),
                    list_of(s, "matchConditions").to_vec(),
                )
            })
        };
        key(old) == key(obj)
    });
    validate_mutating_policy_spec(spec, !same_conditions, &Path::new("spec"))
}

/// `ValidateMutatingAdmissionPolicyBinding` (create and update alike).
pub(crate) fn validate_mutating_binding(w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    if w.is_status() {
        return Vec::new();
    }
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let path = Path::new("spec");
    let mut errs = validate_binding_head(spec, &path);
    if let Some(mr) = spec.get("matchResources").filter(|v| v.is_object()) {
        errs.extend(validate_mutable_operations(
            mr,
            &path
                .child("matchResources")
                .child("resourceRules")
                .child("operations"),
        ));
    }
    errs
}

/// `validateMutatingAdmissionPolicySpec`.
fn validate_mutating_policy_spec(
    spec: &Value,
    check_conditions: bool,
    path: &Path,
) -> Vec<FieldError> {
    let (mut errs, compiler) = validate_policy_common(spec, true, check_conditions, path);
    let mutations = list_of(spec, "mutations");
    if mutations.is_empty() {
        errs.push(FieldError::required(
            path.child("mutations").as_str(),
            "mutations must contain at least one item",
        ));
    }
    for (i, m) in mutations.iter().enumerate() {
        errs.extend(validate_mutation(
            m,
            &compiler,
            &path.child("mutations").index(i),
        ));
    }
    let rp = path.child("reinvocationPolicy");
    match str_of(spec, "reinvocationPolicy") {
        "" => errs.push(FieldError::required(rp.as_str(), "")),
        p if !REINVOCATION_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
            rp.as_str(),
            p,
            REINVOCATION_POLICIES,
        )),
        _ => {}
    }
    errs
}

/// Each operation of each of `mr`'s resource rules that a mutation cannot
/// apply to, reported (as kube does) at `path`, without an index.
fn validate_mutable_operations(mr: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for rule in list_of(mr, "resourceRules") {
        for op in list_of(rule, "operations") {
            let op = op.as_str().unwrap_or("");
            if !MUTATING_OPERATIONS.contains(&op) {
                errs.push(FieldError::not_supported(
                    path.as_str(),
                    op,
                    MUTATING_OPERATIONS,
                ));
            }
        }
    }
    errs
}

/// `validateMutation`: the member `patchType` names must be set (and its
/// expression compile), the other must not.
fn validate_mutation(m: &Value, compiler: &PolicyCompiler, path: &Path) -> Vec<FieldError> {
    let member = |key: &str| m.get(key).filter(|v| v.is_object());
    let pt = str_of(m, "patchType");
    let (own, returns, other) = match pt {
        "" => return vec![FieldError::required(path.child("patchType").as_str(), "")],
        "JSONPatch" => ("jsonPatch", Returns::JsonPatches, "applyConfiguration"),
        "ApplyConfiguration" => ("applyConfiguration", Returns::Object, "jsonPatch"),
        _ => {
            return vec![FieldError::not_supported(
                path.child("patchType").as_str(),
                pt,
                PATCH_TYPES,
            )]
        }
    };
    let mut errs = Vec::new();
    match member(own) {
        None => errs.push(FieldError::required(
            path.child(own).as_str(),
            &format!("must be specified when patchType is {pt}"),
        )),
        // `validateApplyConfiguration` / `validateJSONPatch`: the trimmed
        // expression, compiled with the patch types.
        Some(p) => {
            let ep = path.child(own).child("expression");
            let expr = str_of(p, "expression").trim();
            if expr.is_empty() {
                errs.push(FieldError::required(ep.as_str(), ""));
            } else {
                let r = compiler.compile_mutation(expr, returns);
                errs.extend(compile_error(&ep, expr, r));
            }
        }
    }
    if member(other).is_some() {
        errs.push(FieldError::invalid(
            path.child(other).as_str(),
            format!("{{{other}}}"),
            &format!("must not be specified when patchType is {pt}"),
        ));
    }
    errs
}

/// `validateValidatingAdmissionPolicySpec`.
fn validate_policy_spec(
    name: &str,
    spec: &Value,
    check_conditions: bool,
    path: &Path,
) -> Vec<FieldError> {
    let (mut errs, compiler) = validate_policy_common(spec, false, check_conditions, path);
    let validations = list_of(spec, "validations");
    let audits = list_of(spec, "auditAnnotations");
    if validations.is_empty() && audits.is_empty() {
        let msg = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required(
            path.child("validations").as_str(),
            msg,
        ));
        errs.push(FieldError::required(
            path.child("auditAnnotations").as_str(),
            msg,
        ));
        return errs;
    }
    for (i, v) in validations.iter().enumerate() {
        errs.extend(validate_validation(
            v,
            &compiler,
            &path.child("validations").index(i),
        ));
    }
    if audits.len() > MAX_AUDIT_ANNOTATIONS {
        errs.push(FieldError::invalid(
            path.child("auditAnnotations").as_str(),
            Value::Array(audits.to_vec()),
            &format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let mut keys: Vec<&str> = Vec::new();
    for (i, a) in audits.iter().enumerate() {
        let ap = path.child("auditAnnotations").index(i);
        errs.extend(validate_audit_annotation(name, a, &compiler, &ap));
        let key = str_of(a, "key");
        if keys.contains(&key) {
            errs.push(duplicate(&ap.child("key"), key));
        }
        keys.push(key);
    }
    errs
}

/// What both policy kinds validate first: the head, the match conditions
/// (when `check_conditions`), then the variables, compiled into the
/// compiler the expressions are checked with (kube's compiler composes
/// `variables` only for a policy that has some).
fn validate_policy_common(
    spec: &Value,
    mutating: bool,
    check_conditions: bool,
    path: &Path,
) -> (Vec<FieldError>, PolicyCompiler) {
    let mut errs = validate_policy_head(spec, mutating, path);
    let has_params = spec.get("paramKind").is_some_and(Value::is_object);
    let decls = Decls::untyped(has_params);
    if check_conditions {
        errs.extend(validate_match_conditions(
            list_of(spec, "matchConditions"),
            &PolicyCompiler::new(&decls, false),
            &path.child("matchConditions"),
        ));
    }
    let variables = list_of(spec, "variables");
    let mut compiler = PolicyCompiler::new(&decls, !variables.is_empty());
    for (i, v) in variables.iter().enumerate() {
        errs.extend(validate_variable(
            v,
            &mut compiler,
            &path.child("variables").index(i),
        ));
    }
    (errs, compiler)
}

/// The opening of both policy specs (`validateValidatingAdmissionPolicySpec`,
/// `validateMutatingAdmissionPolicySpec`): `failurePolicy`, `paramKind` and
/// `matchConstraints`, which needs a resource rule to give the expressions
/// their types; a mutating policy's rules may not name an operation it
/// cannot mutate (`supportedMutatingOperations`).
fn validate_policy_head(spec: &Value, mutating: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match spec.get("failurePolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required(
            path.child("failurePolicy").as_str(),
            "",
        )),
        Some(fp) if !FAILURE_POLICIES.contains(&fp) => errs.push(FieldError::not_supported(
            path.child("failurePolicy").as_str(),
            fp,
            FAILURE_POLICIES,
        )),
        Some(_) => {}
    }
    if let Some(pk) = spec.get("paramKind").filter(|v| v.is_object()) {
        errs.extend(validate_param_kind(pk, &path.child("paramKind")));
    }
    match spec.get("matchConstraints").filter(|v| v.is_object()) {
        None => errs.push(FieldError::required(
            path.child("matchConstraints").as_str(),
            "",
        )),
        Some(mc) => {
            let mp = path.child("matchConstraints");
            errs.extend(validate_match_resources(mc, &mp));
            if list_of(mc, "resourceRules").is_empty() {
                errs.push(FieldError::required(mp.child("resourceRules").as_str(), ""));
            }
            if mutating {
                errs.extend(validate_mutable_operations(
                    mc,
                    &mp.child("resourceRules").child("operations"),
                ));
            }
        }
    }
    errs
}

/// `validateParamKind`.
fn validate_param_kind(pk: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let av = str_of(pk, "apiVersion");
    let ap = path.child("apiVersion");
    if av.is_empty() {
        errs.push(FieldError::required(ap.as_str(), ""));
    } else if av.matches('/').count() > 1 {
        errs.push(FieldError::invalid(
            ap.as_str(),
            av,
            &format!("unexpected GroupVersion string: {av}"),
        ));
    } else {
        let (group, version) = if av == "/" {
            ("", "")
        } else {
            av.split_once('/').unwrap_or(("", av))
        };
        if !group.is_empty() {
            let msgs = keelson_apimachinery::names::is_dns1123_subdomain(group);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(ap.as_str(), group, &msgs.join(",")));
            }
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(
                ap.as_str(),
                av,
                "version must be specified",
            ));
        } else {
            let msgs = keelson_apimachinery::names::is_dns1035_label(version);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(ap.as_str(), version, &msgs.join(",")));
            }
        }
    }
    let kind = str_of(pk, "kind");
    let kp = path.child("kind");
    if kind.is_empty() {
        errs.push(FieldError::required(kp.as_str(), ""));
    } else {
        let msgs = keelson_apimachinery::names::is_dns1035_label(&kind.to_lowercase());
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                kp.as_str(),
                kind,
                &format!(
                    "may have mixed case, but should otherwise match: {}",
                    msgs.join(",")
                ),
            ));
        }
    }
    errs
}

/// `validateMatchResources` (nothing for an absent one).
fn validate_match_resources(mc: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match mc.get("matchPolicy").and_then(Value::as_str) {
        None => errs.push(FieldError::required(path.child("matchPolicy").as_str(), "")),
        Some(mp) if !MATCH_POLICIES.contains(&mp) => errs.push(FieldError::not_supported(
            path.child("matchPolicy").as_str(),
            mp,
            MATCH_POLICIES,
        )),
        Some(_) => {}
    }
    for key in ["namespaceSelector", "objectSelector"] {
        match mc.get(key).filter(|v| v.is_object()) {
            None => errs.push(FieldError::required(path.child(key).as_str(), "")),
            Some(sel) => errs.extend(validate_label_selector(Some(sel), false, &path.child(key))),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in list_of(mc, key).iter().enumerate() {
            errs.extend(validate_named_rule_with_operations(
                rule,
                &path.child(key).index(i),
            ));
        }
    }
    errs
}

/// `validateNamedRuleWithOperations`.
fn validate_named_rule_with_operations(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let rp = path.child("resourceNames");
    for (i, n) in list_of(rule, "resourceNames").iter().enumerate() {
        let n = n.as_str().unwrap_or("");
        for m in path_segment_errors(n, false) {
            errs.push(FieldError::invalid(rp.index(i).as_str(), n, &m));
        }
        if seen.contains(&n) {
            errs.push(duplicate(&rp.index(i), n));
        } else {
            seen.push(n);
        }
    }
    errs.extend(validate_rule_with_operations(rule, path));
    errs
}

/// A compile error as kube's `convertCELErrorToValidationError` words it.
fn compile_error(path: &Path, src: &str, r: Result<impl Sized, String>) -> Option<FieldError> {
    r.err()
        .map(|detail| FieldError::invalid(path.as_str(), src, &detail))
}

/// `validateMatchConditions` (each trimmed expression compiled without
/// `variables`), shared with the webhook configurations.
pub(super) fn validate_match_conditions(
    conds: &[Value],
    compiler: &PolicyCompiler,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if conds.len() > MAX_MATCH_CONDITIONS {
        errs.push(super::discovery::too_many(
            path,
            conds.len(),
            MAX_MATCH_CONDITIONS,
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in conds.iter().enumerate() {
        let cp = path.index(i);
        let expr = str_of(c, "expression").trim();
        if expr.is_empty() {
            errs.push(FieldError::required(cp.child("expression").as_str(), ""));
        } else {
            let r = compiler.compile(expr, Returns::Bool, true);
            errs.extend(compile_error(&cp.child("expression"), expr, r));
        }
        let name = str_of(c, "name");
        if name.is_empty() {
            errs.push(FieldError::required(cp.child("name").as_str(), ""));
        } else {
            for m in keelson_apimachinery::names::is_qualified_name(name) {
                errs.push(FieldError::invalid(cp.child("name").as_str(), name, &m));
            }
            if names.contains(&name) {
                errs.push(duplicate(&cp.child("name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

/// CEL's `IDENT` without the reserved words.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    first_ok
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !keelson_cel::is_reserved_word(name)
}

/// `validateVariable` (the expression compiled into `variables`).
fn validate_variable(v: &Value, compiler: &mut PolicyCompiler, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(v, "name");
    if name.trim().is_empty() {
        errs.push(FieldError::required(
            path.child("name").as_str(),
            "name is not specified",
        ));
    } else if !is_cel_identifier(name) {
        errs.push(FieldError::invalid(
            path.child("name").as_str(),
            name,
            "name is not a valid CEL identifier",
        ));
    }
    let expr = str_of(v, "expression");
    if expr.trim().is_empty() {
        errs.push(FieldError::required(
            path.child("expression").as_str(),
            "expression is not specified",
        ));
    } else {
        let r = compiler.add_variable(name, expr);
        errs.extend(compile_error(&path.child("expression"), expr, r));
    }
    errs
}

/// `validateValidation` (the expression and messageExpression compiled).
fn validate_validation(v: &Value, compiler: &PolicyCompiler, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let expr = str_of(v, "expression");
    if expr.trim().is_empty() {
        errs.push(FieldError::required(
            path.child("expression").as_str(),
            "expression is not specified",
        ));
    } else {
        let r = compiler.compile(expr, Returns::Bool, true);
        errs.extend(compile_error(&path.child("expression"), expr, r));
    }
    let me = str_of(v, "messageExpression");
    if !me.is_empty() && me.trim().is_empty() {
        errs.push(FieldError::invalid(
            path.child("messageExpression").as_str(),
            me,
            "must be non-empty if specified",
        ));
    } else if !me.is_empty() {
        let r = compiler.compile(me, Returns::String, false);
        errs.extend(compile_error(&path.child("messageExpression"), me, r));
    }
    let msg = str_of(v, "message");
    let trimmed = msg.trim();
    if !msg.is_empty() && trimmed.is_empty() {
        errs.push(FieldError::invalid(
            path.child("message").as_str(),
            msg,
            "message must be non-empty if specified",
        ));
    } else if trimmed.contains(['\n', '\r']) {
        errs.push(FieldError::invalid(
            path.child("message").as_str(),
            msg,
            "message must not contain line breaks",
        ));
    }
    if let Some(reason) = v.get("reason").and_then(Value::as_str) {
        if !REASONS.contains(&reason) {
            errs.push(FieldError::not_supported(
                path.child("reason").as_str(),
                reason,
                REASONS,
            ));
        }
    }
    errs
}

/// `validateAuditAnnotation` (the trimmed value expression compiled).
fn validate_audit_annotation(
    policy: &str,
    a: &Value,
    compiler: &PolicyCompiler,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let key = str_of(a, "key");
    let kp = path.child("key");
    if policy.is_empty() {
        errs.push(FieldError::invalid(
            kp.as_str(),
            key,
            "requires metadata.name be non-empty",
        ));
    } else {
        let full = format!("{policy}/{key}");
        for m in keelson_apimachinery::names::is_qualified_name(&full) {
            errs.push(FieldError::invalid(kp.as_str(), full.as_str(), &m));
        }
    }
    let ve = str_of(a, "valueExpression").trim();
    let vp = path.child("valueExpression");
    if ve.is_empty() {
        errs.push(FieldError::required(
            vp.as_str(),
            "valueExpression is not specified",
        ));
    } else if ve.len() > MAX_VALUE_EXPRESSION {
        errs.push(FieldError::required(
            vp.as_str(),
            &format!("must not exceed {MAX_VALUE_EXPRESSION} bytes in length"),
        ));
    } else {
        let r = compiler.compile(ve, Returns::StringOrNull, true);
        errs.extend(compile_error(&vp, ve, r));
    }
    errs
}

/// `validateValidatingAdmissionPolicyStatus`: the type-checking warnings
/// (their `fieldRef` is not parsed as a JSONPath), then the conditions
/// (`metav1validation.ValidateConditions`).
fn validate_policy_status(status: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let wp = Path::new("status")
        .child("typeChecking")
        .child("expressionWarnings");
    let warnings = status
        .get("typeChecking")
        .map(|t| list_of(t, "expressionWarnings"))
        .unwrap_or(&[]);
    for (i, w) in warnings.iter().enumerate() {
        let ip = wp.index(i);
        if str_of(w, "warning").is_empty() {
            errs.push(FieldError::required(ip.child("warning").as_str(), ""));
        }
        if str_of(w, "fieldRef").trim().is_empty() {
            errs.push(FieldError::required(ip.child("fieldRef").as_str(), ""));
        }
    }
    errs.extend(super::policy::validate_conditions(
        list_of(status, "conditions"),
        &Path::new("status").child("conditions"),
    ));
    errs
}

/// `validateValidatingAdmissionPolicyBindingSpec`.
fn validate_binding_spec(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = validate_binding_head(spec, path);
    errs.extend(validate_validation_actions(
        list_of(spec, "validationActions"),
        &path.child("validationActions"),
    ));
    errs
}

/// What both binding specs check first: `policyName`, `paramRef` and the
/// `matchResources` (kube's path for it is spelled `matchResouces`).
fn validate_binding_head(spec: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(spec, "policyName");
    if name.is_empty() {
        errs.push(FieldError::required(path.child("policyName").as_str(), ""));
    } else {
        for m in keelson_apimachinery::names::is_dns1123_subdomain(name) {
            errs.push(FieldError::invalid(
                path.child("policyName").as_str(),
                name,
                &m,
            ));
        }
    }
    if let Some(pr) = spec.get("paramRef").filter(|v| v.is_object()) {
        errs.extend(validate_param_ref(pr, &path.child("paramRef")));
    }
    if let Some(mr) = spec.get("matchResources").filter(|v| v.is_object()) {
        errs.extend(validate_match_resources(mr, &path.child("matchResouces")));
    }
    errs
}

/// `validateParamRef`.
fn validate_param_ref(pr: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(pr, "name");
    let selector = pr.get("selector").filter(|v| !v.is_null());
    const EXCLUSIVE: &str = "name and selector are mutually exclusive";
    if !name.is_empty() {
        for m in path_segment_errors(name, false) {
            errs.push(FieldError::invalid(path.child("name").as_str(), name, &m));
        }
        if selector.is_some() {
            errs.push(FieldError::forbidden(
                path.child("name").as_str(),
                EXCLUSIVE,
            ));
        }
    }
    if let Some(sel) = selector {
        errs.extend(validate_label_selector(
            Some(sel),
            false,
            &path.child("selector"),
        ));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(
                path.child("selector").as_str(),
                EXCLUSIVE,
            ));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(
            path.as_str(),
            "one of name or selector must be specified",
        ));
    }
    let action = str_of(pr, "parameterNotFoundAction");
    let ap = path.child("parameterNotFoundAction");
    if action.is_empty() {
        errs.push(FieldError::required(ap.as_str(), ""));
    } else if action != "Deny" && action != "Allow" {
        errs.push(FieldError::not_supported(
            ap.as_str(),
            action,
            &["Deny", "Allow"],
        ));
    }
    errs
}

/// `validateValidationActions`.
fn validate_validation_actions(actions: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let a = a.as_str().unwrap_or("");
        if !ACTIONS.contains(&a) {
            errs.push(FieldError::not_supported(
                path.index(i).as_str(),
                a,
                ACTIONS,
            ));
        }
        if seen.contains(&a) {
            errs.push(duplicate(&path.index(i), a));
        }
        seen.push(a);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(FieldError::invalid(
            path.as_str(),
            Value::Array(actions.to_vec()),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            path.as_str(),
            "at least one validation action is required",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_api::Operation;
    use serde_json::json;

    /// kube's `ignoreValidatingAdmissionPolicyMatchConditions`: a stored
    /// match condition that no longer compiles is let through on an
    /// update only while the conditions and the `paramKind` are unchanged.
    #[test]
    fn an_update_rechecks_match_conditions_when_param_kind_changes() {
        let policy = |kind: &str| {
            json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Fail",
                "paramKind": {"apiVersion": "v1", "kind": kind},
                "matchConstraints": {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                    "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["deployments"], "scope": "*"}]},
                "matchConditions": [{"name": "c", "expression": "nope == 1"}],
                "validations": [{"expression": "true"}]}})
        };
        let old = policy("ConfigMap");
        let w = Write {
            op: Operation::Update,
            subresource: "",
            old: Some(&old),
            allow_privileged: true,
        };
        let same = validate_policy(w, &policy("ConfigMap"));
        assert!(
            same.is_empty(),
            "{:?}",
            same.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        );
        let errs = validate_policy(w, &policy("Secret"));
        assert_eq!(
            errs.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["spec.matchConditions[0].expression"]
        );
    }

    fn policy_errors(obj: &Value, subresource: &str) -> Vec<String> {
        let w = Write {
            op: Operation::Create,
            subresource,
            old: None,
            allow_privileged: true,
        };
        validate_policy(w, obj)
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn at_most_twenty_audit_annotations() {
        let audits: Vec<Value> = (0..21)
            .map(|i| json!({"key": format!("k{i}"), "valueExpression": "'v'"}))
            .collect();
        let obj = json!({"metadata": {"name": "p"}, "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "auditAnnotations": audits}});
        let errs = policy_errors(&obj, "");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("spec.auditAnnotations: Invalid value: [{"));
        assert!(errs[0].ends_with("}]: must not have more than 20 auditAnnotations"));
    }

    #[test]
    fn status_conditions_are_validated() {
        let obj = json!({"metadata": {"name": "p"}, "status": {"conditions": [
            {"type": "Ready", "status": "Maybe", "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "R"},
            {"type": "Ready", "status": "True", "reason": ""},
        ]}});
        assert_eq!(
            policy_errors(&obj, "status"),
            [
                "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "status.conditions[1].type: Duplicate value: \"Ready\"",
                "status.conditions[1].lastTransitionTime: Required value",
                "status.conditions[1].reason: Required value",
            ]
        );
    }
}

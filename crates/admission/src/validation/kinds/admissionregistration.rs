//! Webhook configurations (`pkg/apis/admissionregistration/validation`:
//! `ValidateValidatingWebhookConfiguration*`,
//! `ValidateMutatingWebhookConfiguration*`).
//!
//! Each webhook's match conditions are validated as the admission
//! policies' are (`admission_policy::validate_match_conditions`: kube's
//! `validateMatchConditions`, compiled in the admission CEL environment
//! without `params`); admission policies (validating and mutating) and
//! their bindings are in `admission_policy.rs`.

use keelson_apimachinery::FieldError;
use serde_json::Value;

use super::util::{int_of, list_of, str_of, validate_label_selector};
use super::{Path, Write};
use crate::policy::compile::{Decls, PolicyCompiler};

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    let mutating = match kind {
        "ValidatingWebhookConfiguration" => false,
        "MutatingWebhookConfiguration" => true,
        "ValidatingAdmissionPolicy" => return super::admission_policy::validate_policy(w, obj),
        "ValidatingAdmissionPolicyBinding" => {
            return super::admission_policy::validate_binding(w, obj)
        }
        "MutatingAdmissionPolicy" => {
            return super::admission_policy::validate_mutating_policy(w, obj)
        }
        "MutatingAdmissionPolicyBinding" => {
            return super::admission_policy::validate_mutating_binding(w, obj)
        }
        _ => return Vec::new(),
    };
    let opts = match w.old() {
        Some(old) => Opts::for_update(old, obj),
        None => Opts::default(),
    };
    validate_webhook_configuration(obj, mutating, opts)
}

/// kube's `validationOptions` (the parts used here).
#[derive(Clone, Copy)]
struct Opts {
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    allow_invalid_label_values: bool,
    /// An update that leaves every webhook's match conditions as they were
    /// does not validate them again (`ignoreValidatingWebhookMatchConditions`).
    ignore_match_conditions: bool,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            require_no_side_effects: true,
            require_recognized_review_version: true,
            require_unique_names: true,
            allow_invalid_label_values: false,
            ignore_match_conditions: false,
        }
    }
}

impl Opts {
    /// On update, each strict rule applies only when the stored object
    /// already satisfied it (kube's ratcheting for these fields).
    fn for_update(old: &Value, new: &Value) -> Opts {
        let hooks = list_of(old, "webhooks");
        let new_hooks = list_of(new, "webhooks");
        // Go's `reflect.DeepEqual` of the lists: absent and null alike,
        // an empty list differs from both.
        let conditions = |h: &Value| h.get("matchConditions").filter(|c| !c.is_null()).cloned();
        let same_conditions = hooks.len() == new_hooks.len()
            && hooks
                .iter()
                .zip(new_hooks)
                .all(|(o, n)| conditions(o) == conditions(n));
        let no_side_effects = hooks
            .iter()
            .all(|h| NO_SIDE_EFFECTS.contains(&str_of(h, "sideEffects")));
        let recognized = hooks.iter().all(|h| {
            let versions = list_of(h, "admissionReviewVersions");
            versions.is_empty()
                || versions
                    .iter()
                    .any(|v| REVIEW_VERSIONS.contains(&v.as_str().unwrap_or("")))
        });
        let mut names = Vec::new();
        let mut unique = true;
        for h in hooks {
            let n = str_of(h, "name");
            if names.contains(&n) {
                unique = false;
            }
            names.push(n);
        }
        let invalid_labels = hooks.iter().any(|h| {
            ["namespaceSelector", "objectSelector"]
                .iter()
                .any(|k| !validate_label_selector(h.get(*k), false, &Path::new("")).is_empty())
        });
        Opts {
            require_no_side_effects: no_side_effects,
            require_recognized_review_version: recognized,
            require_unique_names: unique,
            allow_invalid_label_values: invalid_labels,
            ignore_match_conditions: same_conditions,
        }
    }
}

const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun", "Some", "Unknown"];
const NO_SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const REINVOCATION: &[&str] = &["IfNeeded", "Never"];
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];

/// `validateValidatingWebhookConfiguration` /
/// `validateMutatingWebhookConfiguration` (after metadata).
fn validate_webhook_configuration(obj: &Value, mutating: bool, opts: Opts) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let base = Path::new("webhooks");
    for (i, hook) in list_of(obj, "webhooks").iter().enumerate() {
        let hp = base.index(i);
        errs.extend(validate_webhook(hook, mutating, opts, &hp));
        errs.extend(validate_admission_review_versions(
            list_of(hook, "admissionReviewVersions"),
            opts.require_recognized_review_version,
            &hp.child("admissionReviewVersions"),
        ));
        let name = str_of(hook, "name");
        if opts.require_unique_names && !name.is_empty() {
            if names.contains(&name) {
                errs.push(super::util::duplicate(&hp.child("name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

/// A `[]string` (or a slice of a named string type such as
/// `[]admissionregistration.OperationType`) as kube 1.34 prints it in an
/// error: its JSON array.
fn json_strings(list: &[Value]) -> Value {
    list.iter()
        .map(|v| Value::String(v.as_str().unwrap_or("").to_string()))
        .collect()
}

/// `validateAdmissionReviewVersions`.
fn validate_admission_review_versions(
    versions: &[Value],
    require_recognized: bool,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if versions.is_empty() {
        errs.push(FieldError::required(
            path.as_str(),
            "must specify one of v1, v1beta1",
        ));
        return errs;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut accepted = false;
    for (i, v) in versions.iter().enumerate() {
        let v = v.as_str().unwrap_or("");
        if seen.contains(&v) {
            errs.push(FieldError::invalid(
                path.index(i).as_str(),
                v,
                "duplicate version",
            ));
            continue;
        }
        seen.push(v);
        for m in keelson_apimachinery::names::is_dns1035_label(v) {
            errs.push(FieldError::invalid(path.index(i).as_str(), v, &m));
        }
        if REVIEW_VERSIONS.contains(&v) {
            accepted = true;
        }
    }
    if require_recognized && !accepted {
        errs.push(FieldError::invalid(
            path.as_str(),
            json_strings(versions),
            "must include at least one of v1, v1beta1",
        ));
    }
    errs
}

/// `IsFullyQualifiedName`.
fn fully_qualified_name(name: &str, path: &Path) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path.as_str(), "")];
    }
    let msgs = keelson_apimachinery::names::is_dns1123_subdomain(name);
    if !msgs.is_empty() {
        return vec![FieldError::invalid(path.as_str(), name, &msgs.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path.as_str(),
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn validate_webhook(hook: &Value, mutating: bool, opts: Opts, path: &Path) -> Vec<FieldError> {
    let mut errs = fully_qualified_name(str_of(hook, "name"), &path.child("name"));
    for (i, rule) in list_of(hook, "rules").iter().enumerate() {
        errs.extend(validate_rule_with_operations(
            rule,
            &path.child("rules").index(i),
        ));
    }
    let enum_field = |key: &str, allowed: &[&str], errs: &mut Vec<FieldError>| {
        if let Some(v) = hook.get(key).and_then(Value::as_str) {
            if !allowed.contains(&v) {
                errs.push(FieldError::not_supported(
                    path.child(key).as_str(),
                    v,
                    allowed,
                ));
            }
        }
    };
    enum_field("failurePolicy", FAILURE_POLICIES, &mut errs);
    enum_field("matchPolicy", MATCH_POLICIES, &mut errs);
    let allowed = if opts.require_no_side_effects {
        NO_SIDE_EFFECTS
    } else {
        SIDE_EFFECTS
    };
    match hook.get("sideEffects").and_then(Value::as_str) {
        None => errs.push(FieldError::required(
            path.child("sideEffects").as_str(),
            &format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(v) if !allowed.contains(&v) => errs.push(FieldError::not_supported(
            path.child("sideEffects").as_str(),
            v,
            allowed,
        )),
        Some(_) => {}
    }
    if let Some(t) = int_of(hook, "timeoutSeconds").filter(|t| !(1..=30).contains(t)) {
        errs.push(FieldError::invalid(
            path.child("timeoutSeconds").as_str(),
            t,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for key in ["namespaceSelector", "objectSelector"] {
        errs.extend(validate_label_selector(
            hook.get(key),
            opts.allow_invalid_label_values,
            &path.child(key),
        ));
    }
    if mutating {
        enum_field("reinvocationPolicy", REINVOCATION, &mut errs);
    }
    let cp = path.child("clientConfig");
    let cc = hook.get("clientConfig").unwrap_or(&Value::Null);
    let url = cc.get("url").and_then(Value::as_str);
    let service = cc.get("service").filter(|s| s.is_object());
    match (url, service) {
        (Some(u), None) => errs.extend(validate_webhook_url(u, &cp.child("url"))),
        (None, Some(s)) => errs.extend(validate_webhook_service(s, &cp.child("service"))),
        _ => errs.push(FieldError::required(
            cp.as_str(),
            "exactly one of url or service is required",
        )),
    }
    if !opts.ignore_match_conditions {
        // the admission environment without `params`
        // (`allowParamsInMatchConditions: false`)
        errs.extend(super::admission_policy::validate_match_conditions(
            list_of(hook, "matchConditions"),
            &PolicyCompiler::new(&Decls::untyped(false), false),
            &path.child("matchConditions"),
        ));
    }
    errs
}

/// `validateRuleWithOperations` and `validateRule` (subresources
/// allowed).
pub(super) fn validate_rule_with_operations(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ops = list_of(rule, "operations");
    let op_path = path.child("operations");
    if ops.is_empty() {
        errs.push(FieldError::required(op_path.as_str(), ""));
    }
    if ops.len() > 1 && ops.iter().any(|o| o.as_str() == Some("*")) {
        errs.push(FieldError::invalid(
            op_path.as_str(),
            json_strings(ops),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, o) in ops.iter().enumerate() {
        let o = o.as_str().unwrap_or("");
        if !OPERATIONS.contains(&o) {
            errs.push(FieldError::not_supported(
                op_path.index(i).as_str(),
                o,
                OPERATIONS,
            ));
        }
    }
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let list = list_of(rule, key);
        let kp = path.child(key);
        if list.is_empty() {
            errs.push(FieldError::required(kp.as_str(), ""));
        }
        if list.len() > 1 && list.iter().any(|v| v.as_str() == Some("*")) {
            errs.push(FieldError::invalid(
                kp.as_str(),
                json_strings(list),
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
        if key == "apiVersions" {
            for (i, v) in list.iter().enumerate() {
                if v.as_str().unwrap_or("").is_empty() {
                    errs.push(FieldError::required(kp.index(i).as_str(), ""));
                }
            }
        }
    }
    errs.extend(validate_resources(
        list_of(rule, "resources"),
        &path.child("resources"),
    ));
    if let Some(scope) = rule.get("scope").and_then(Value::as_str) {
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::not_supported(
                path.child("scope").as_str(),
                scope,
                SCOPES,
            ));
        }
    }
    errs
}

/// `validateResources`: wildcards and subresource combinations.
fn validate_resources(resources: &[Value], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path.as_str(), ""));
    }
    let mut wildcard_subs: Vec<&str> = Vec::new();
    let mut wildcard_res: Vec<&str> = Vec::new();
    let (mut double, mut single, mut without_sub) = (false, false, false);
    for (i, r) in resources.iter().enumerate() {
        let r = r.as_str().unwrap_or("");
        if r.is_empty() {
            errs.push(FieldError::required(path.index(i).as_str(), ""));
            continue;
        }
        double |= r == "*/*";
        single |= r == "*";
        let Some((res, sub)) = r.split_once('/') else {
            without_sub = r != "*";
            continue;
        };
        if wildcard_subs.contains(&res) {
            errs.push(FieldError::invalid(
                path.index(i).as_str(),
                r,
                &format!("if '{res}/*' is present, must not specify {r}"),
            ));
        }
        if wildcard_res.contains(&sub) {
            errs.push(FieldError::invalid(
                path.index(i).as_str(),
                r,
                &format!("if '*/{sub}' is present, must not specify {r}"),
            ));
        }
        if sub == "*" {
            wildcard_subs.push(res);
        }
        if res == "*" {
            wildcard_res.push(sub);
        }
    }
    if resources.len() > 1 && double {
        errs.push(FieldError::invalid(
            path.as_str(),
            json_strings(resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && without_sub {
        errs.push(FieldError::invalid(
            path.as_str(),
            json_strings(resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// `webhook.ValidateWebhookURL` (https forced), over Go's `url.Parse`
/// split of scheme, userinfo, host, query and fragment.
fn validate_webhook_url(url: &str, path: &Path) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = Vec::new();
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once(':') {
        Some((s, r))
            if s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (s.to_ascii_lowercase(), r)
        }
        _ => (String::new(), rest),
    };
    let (user, host) = match rest.strip_prefix("//") {
        Some(auth) => {
            let auth = auth.split('/').next().unwrap_or("");
            match auth.rsplit_once('@') {
                Some((u, h)) => (Some(u), h),
                None => (None, auth),
            }
        }
        None => (None, ""),
    };
    if scheme != "https" {
        errs.push(FieldError::invalid(
            path.as_str(),
            scheme.as_str(),
            &format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(FieldError::invalid(
            path.as_str(),
            host,
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(u) = user {
        errs.push(FieldError::invalid(
            path.as_str(),
            u,
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(
            path.as_str(),
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(
            path.as_str(),
            query,
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// `webhook.ValidateWebhookService`. kube 1.34 passes the service's name
/// and namespace in each other's place (kubernetes/kubernetes#141353): a
/// missing namespace is reported at `name` and a missing name at
/// `namespace`, in that order; kept as kube answers.
fn validate_webhook_service(svc: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_of(svc, "namespace").is_empty() {
        errs.push(FieldError::required(path.child("name").as_str(), ""));
    }
    if str_of(svc, "name").is_empty() {
        errs.push(FieldError::required(path.child("namespace").as_str(), ""));
    }
    let port = int_of(svc, "port").unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            path.child("port").as_str(),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = svc.get("path").and_then(Value::as_str) else {
        return errs;
    };
    let pp = path.child("path");
    if url_path.is_empty() || url_path == "/" {
        return errs;
    }
    if url_path == "//" {
        errs.push(FieldError::invalid(
            pp.as_str(),
            url_path,
            "segment[0] may not be empty",
        ));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(FieldError::invalid(
            pp.as_str(),
            url_path,
            "must start with a '/'",
        ));
    }
    // Go slices off the first byte whatever it is.
    let mut check = url_path.get(1..).unwrap_or("");
    if let Some(c) = check.strip_suffix('/') {
        check = c;
    }
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                pp.as_str(),
                url_path,
                &format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for m in keelson_apimachinery::names::is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(
                pp.as_str(),
                url_path,
                &format!("segment[{i}]: {m}"),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_api::Operation;
    use serde_json::json;

    fn config(conditions: Value) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "w"},
            "webhooks": [{"name": "a.example.com", "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://example.com/hook"},
                "matchConditions": conditions}]})
    }

    fn errors(kind: &str, obj: &Value, old: Option<&Value>) -> Vec<String> {
        let w = Write {
            op: if old.is_some() {
                Operation::Update
            } else {
                Operation::Create
            },
            subresource: "",
            old,
            allow_privileged: true,
        };
        validate(kind, w, obj)
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn match_conditions_compile_without_params() {
        let p = "webhooks[0].matchConditions";
        let obj = config(json!([
            {"name": "ok", "expression": "request.operation == 'CREATE' && authorizer.requestResource.check('get').allowed() && namespaceObject.metadata.name != '' && object != oldObject"},
            {"name": "params", "expression": "params.x == 1"},
            {"name": "int", "expression": "  1  "},
            {"name": "ok", "expression": ""},
            {"name": "bad name!", "expression": "true"},
        ]));
        for kind in [
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
        ] {
            assert_eq!(
                errors(kind, &obj, None),
                [
                    format!("{p}[1].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"),
                    format!("{p}[2].expression: Invalid value: \"1\": must evaluate to bool but got int"),
                    format!("{p}[3].expression: Required value"),
                    format!("{p}[3].name: Duplicate value: \"ok\""),
                    format!("{p}[4].name: Invalid value: \"bad name!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
                ],
                "{kind}"
            );
        }
        let many: Vec<Value> = (0..65)
            .map(|i| json!({"name": format!("c{i}"), "expression": "true"}))
            .collect();
        assert_eq!(
            errors(
                "ValidatingWebhookConfiguration",
                &config(Value::Array(many)),
                None
            ),
            [format!("{p}: Too many: 65: must have at most 64 items")]
        );
    }

    /// `ignoreValidatingWebhookMatchConditions`: unchanged conditions are
    /// not validated again on update; any change revalidates all of them.
    #[test]
    fn an_update_skips_unchanged_match_conditions() {
        let old = config(json!([{"name": "c", "expression": "nope == 1"}]));
        let kind = "ValidatingWebhookConfiguration";
        assert_eq!(errors(kind, &old, Some(&old)), Vec::<String>::new());
        let changed = config(json!([
            {"name": "c", "expression": "nope == 1"},
            {"name": "d", "expression": "true"},
        ]));
        let errs = errors(kind, &changed, Some(&old));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("webhooks[0].matchConditions[0].expression: Invalid value"));
    }
}

//! Role, ClusterRole, RoleBinding, ClusterRoleBinding (`pkg/apis/rbac/validation`).

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::util::{list_of, str_of, validate_label_selector, Selector};
use super::{Path, Write};

const GROUP: &str = "rbac.authorization.k8s.io";

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "Role" => rules(obj, true),
        "ClusterRole" => {
            let mut errs = rules(obj, false);
            // The strategy's `hasInvalidLabelValueInLabelSelector`: an
            // update may keep selector values the stored role already had.
            let allow_invalid = w.old().is_some_and(|o| {
                aggregation_selectors(o).iter().any(|sel| {
                    !validate_label_selector(Some(sel), false, &Path::new("")).is_empty()
                })
            });
            errs.extend(aggregation_rule(obj, allow_invalid));
            errs
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            let namespaced = kind == "RoleBinding";
            let mut errs = binding(obj, namespaced);
            if let Some(old) = w.old() {
                let rr = |o: &Value| o.get("roleRef").cloned().unwrap_or(Value::Null);
                let (n, o) = (rr(obj), rr(old));
                let fields = |v: &Value| {
                    (
                        str_of(v, "apiGroup").to_string(),
                        str_of(v, "kind").to_string(),
                        str_of(v, "name").to_string(),
                    )
                };
                if fields(&n) != fields(&o) {
                    let (g, k, name) = fields(&n);
                    // The internal `rbac.RoleRef` has no JSON tags: kube
                    // 1.34's `json.Marshal` uses the Go field names.
                    let mut shown = Map::new();
                    shown.insert("APIGroup".into(), g.into());
                    shown.insert("Kind".into(), k.into());
                    shown.insert("Name".into(), name.into());
                    errs.push(FieldError::invalid(
                        "roleRef",
                        Value::Object(shown),
                        "cannot change roleRef",
                    ));
                }
            }
            errs
        }
        _ => Vec::new(),
    }
}

fn aggregation_selectors(obj: &Value) -> &[Value] {
    obj.get("aggregationRule")
        .map(|a| list_of(a, "clusterRoleSelectors"))
        .unwrap_or(&[])
}

/// `ValidateClusterRole`'s `aggregationRule`: at least one selector, each
/// a valid label selector (`ValidateLabelSelector`, invalid values allowed
/// when `allow_invalid`) that `LabelSelectorAsSelector` accepts.
fn aggregation_rule(obj: &Value, allow_invalid: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !obj.get("aggregationRule").is_some_and(Value::is_object) {
        return errs;
    }
    let p = Path::new("aggregationRule").child("clusterRoleSelectors");
    let selectors = aggregation_selectors(obj);
    if selectors.is_empty() {
        errs.push(FieldError::required(
            p.as_str(),
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, sel) in selectors.iter().enumerate() {
        let ip = p.index(i);
        errs.extend(validate_label_selector(Some(sel), allow_invalid, &ip));
        // A selector that does not convert is printed as the nil
        // `labels.Selector` the conversion returns.
        if sel.is_object() && Selector::of(Some(sel)).is_err() {
            errs.push(FieldError::invalid(
                ip.as_str(),
                Value::Null,
                "invalid label selector.",
            ));
        }
    }
    errs
}

/// A `[]string` as kube 1.34 prints it in an error: its JSON array.
fn json_strings(v: &[Value]) -> Value {
    v.iter()
        .map(|s| Value::String(s.as_str().unwrap_or("").to_string()))
        .collect()
}

fn rules(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, r) in list_of(obj, "rules").iter().enumerate() {
        errs.extend(validate_policy_rule(
            r,
            namespaced,
            &Path::new("rules").index(i),
        ));
    }
    errs
}

/// `ValidatePolicyRule`.
fn validate_policy_rule(rule: &Value, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if list_of(rule, "verbs").is_empty() {
        errs.push(FieldError::required(
            path.child("verbs").as_str(),
            "verbs must contain at least one value",
        ));
    }
    let urls = list_of(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let upath = path.child("nonResourceURLs");
        if namespaced {
            errs.push(FieldError::invalid(
                upath.as_str(),
                json_strings(urls),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if !list_of(rule, "apiGroups").is_empty()
            || !list_of(rule, "resources").is_empty()
            || !list_of(rule, "resourceNames").is_empty()
        {
            errs.push(FieldError::invalid(
                upath.as_str(),
                json_strings(urls),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if list_of(rule, "apiGroups").is_empty() {
        errs.push(FieldError::required(
            path.child("apiGroups").as_str(),
            "resource rules must supply at least one api group",
        ));
    }
    if list_of(rule, "resources").is_empty() {
        errs.push(FieldError::required(
            path.child("resources").as_str(),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// `ValidateRoleBinding` / `ValidateClusterRoleBinding`.
fn binding(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Value::Null;
    let rr = obj.get("roleRef").unwrap_or(&empty);
    let group = str_of(rr, "apiGroup");
    if group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            group,
            &[GROUP],
        ));
    }
    let kind = str_of(rr, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported("roleRef.kind", kind, kinds));
    }
    let name = str_of(rr, "name");
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for m in crate::validation::path_segment_errors(name, false) {
            errs.push(FieldError::invalid("roleRef.name", name, &m));
        }
    }
    for (i, s) in list_of(obj, "subjects").iter().enumerate() {
        errs.extend(subject(s, namespaced, &Path::new("subjects").index(i)));
    }
    errs
}

/// `ValidateRoleBindingSubject`.
fn subject(s: &Value, namespaced: bool, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(s, "name");
    if name.is_empty() {
        errs.push(FieldError::required(path.child("name").as_str(), ""));
    }
    let group = str_of(s, "apiGroup");
    match str_of(s, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for m in keelson_apimachinery::names::is_dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(path.child("name").as_str(), name, &m));
                }
            }
            if !group.is_empty() {
                errs.push(FieldError::not_supported(
                    path.child("apiGroup").as_str(),
                    group,
                    &[""],
                ));
            }
            if !namespaced && str_of(s, "namespace").is_empty() {
                errs.push(FieldError::required(path.child("namespace").as_str(), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                errs.push(FieldError::not_supported(
                    path.child("apiGroup").as_str(),
                    group,
                    &[GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            path.child("kind").as_str(),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

//! kube's `ValidatePodSpecificAnnotations` and
//! `ValidatePodSpecificAnnotationUpdates`: the mirror-pod annotation, the
//! legacy tolerations annotation, `controller.kubernetes.io/pod-deletion-cost`,
//! and the legacy seccomp and AppArmor annotations' values, on pods and
//! pod templates. Map entries are checked in key order (kube: Go map
//! order).

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::super::util::{list_of, str_of};
use super::super::Path;

const MIRROR: &str = "kubernetes.io/config.mirror";
const TOLERATIONS: &str = "scheduler.alpha.kubernetes.io/tolerations";
const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APPARMOR_CONTAINER: &str = "container.apparmor.security.beta.kubernetes.io/";

/// Whether the deletion cost parses as kube's `GetDeletionCostFromPodAnnotations`
/// reads it (an int32, no `+` and no leading zeros); absent is fine.
pub(crate) fn deletion_cost_ok(annotations: &Map<String, Value>) -> bool {
    let Some(v) = annotations.get(DELETION_COST) else {
        return true;
    };
    let v = v.as_str().unwrap_or_default();
    let first_ok = match v.as_bytes().first() {
        None => false,
        Some(b'-') => true,
        Some(b'0') => v == "0",
        Some(b) => b.is_ascii_digit(),
    };
    first_ok && v.parse::<i32>().is_ok()
}

/// `ValidatePodSpecificAnnotations` of `annotations` at `path`
/// (`metadata.annotations` or a template's); `allow_invalid_cost` is
/// kube's `AllowInvalidPodDeletionCost` (the stored pod's cost was
/// already invalid).
pub(crate) fn validate(
    annotations: Option<&Map<String, Value>>,
    spec: &Value,
    path: &Path,
    allow_invalid_cost: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(annotations) = annotations else {
        return errs;
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    if let Some(v) = annotations.get(MIRROR) {
        if str_of(spec, "nodeName").is_empty() {
            errs.push(FieldError::invalid(
                path.key(MIRROR).as_str(),
                text(v),
                "must set spec.nodeName if mirror pod annotation is set",
            ));
        }
    }
    if let Some(raw) = annotations
        .get(TOLERATIONS)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Array(tols)) => {
                errs.extend(super::validate_tolerations(&tols, &path.child(TOLERATIONS)))
            }
            Ok(Value::Null) => {}
            Ok(_) => errs.push(FieldError::invalid(
                path.as_str(),
                TOLERATIONS,
                "json: cannot unmarshal into Go value of type []core.Toleration",
            )),
            Err(e) => errs.push(FieldError::invalid(
                path.as_str(),
                TOLERATIONS,
                &e.to_string(),
            )),
        }
    }
    if !allow_invalid_cost && !deletion_cost_ok(annotations) {
        errs.push(FieldError::invalid(
            path.key(DELETION_COST).as_str(),
            annotations.get(DELETION_COST).map(text).unwrap_or_default(),
            "must be a 32bit integer",
        ));
    }
    let mut keys: Vec<&String> = annotations.keys().collect();
    keys.sort();
    if let Some(v) = annotations.get(SECCOMP_POD) {
        errs.extend(seccomp_profile(&text(v), &path.child(SECCOMP_POD)));
    }
    for k in keys.iter().filter(|k| k.starts_with(SECCOMP_CONTAINER)) {
        errs.extend(seccomp_profile(&text(&annotations[*k]), &path.child(k)));
    }
    for k in keys.iter().filter(|k| k.starts_with(APPARMOR_CONTAINER)) {
        let container = &k[APPARMOR_CONTAINER.len()..];
        let kp = path.key(k);
        let has = ["initContainers", "containers"]
            .iter()
            .flat_map(|f| list_of(spec, f))
            .any(|c| str_of(c, "name") == container);
        if !has {
            errs.push(FieldError::invalid(
                kp.as_str(),
                container,
                "container not found",
            ));
        }
        let profile = text(&annotations[*k]);
        let ok = profile.is_empty()
            || profile == "runtime/default"
            || profile == "unconfined"
            || profile.starts_with("localhost/");
        if !ok {
            errs.push(FieldError::invalid(
                kp.as_str(),
                profile.as_str(),
                &format!("invalid AppArmor profile name: {profile:?}"),
            ));
        }
    }
    errs
}

/// `ValidateSeccompProfile`: `runtime/default`, `docker/default`,
/// `unconfined`, or `localhost/<relative path without ..>`.
fn seccomp_profile(p: &str, path: &Path) -> Vec<FieldError> {
    if matches!(p, "runtime/default" | "docker/default" | "unconfined") {
        return Vec::new();
    }
    let Some(local) = p.strip_prefix("localhost/") else {
        return vec![FieldError::invalid(
            path.as_str(),
            p,
            "must be a valid seccomp profile",
        )];
    };
    let mut errs = Vec::new();
    if local.starts_with('/') {
        errs.push(FieldError::invalid(
            path.as_str(),
            local,
            "must be a relative path",
        ));
    }
    if local.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(
            path.as_str(),
            local,
            "must not contain '..'",
        ));
    }
    errs
}

/// `ValidatePodSpecificAnnotationUpdates`' own rules: AppArmor and
/// mirror-pod annotations may not be added, changed or removed.
pub(crate) fn update(new: &Value, old: &Value, path: &Path) -> Vec<FieldError> {
    let notes = |o: &Value| {
        o.get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (new_a, old_a) = (notes(new), notes(old));
    // The guarded annotations, named as kube's messages name them.
    let guarded = |k: &str| match k {
        MIRROR => Some("mirror pod annotation"),
        _ if k.starts_with(APPARMOR_CONTAINER) => Some("AppArmor annotations"),
        _ => None,
    };
    let mut errs = Vec::new();
    let mut old_keys: Vec<&String> = old_a.keys().collect();
    old_keys.sort();
    for k in old_keys {
        if let Some(what) = guarded(k).filter(|_| new_a.get(k) != old_a.get(k)) {
            errs.push(FieldError::forbidden(
                path.key(k).as_str(),
                &format!("may not remove or update {what}"),
            ));
        }
    }
    let mut new_keys: Vec<&String> = new_a.keys().collect();
    new_keys.sort();
    for k in new_keys {
        if let Some(what) = guarded(k).filter(|_| !old_a.contains_key(k)) {
            errs.push(FieldError::forbidden(
                path.key(k).as_str(),
                &format!("may not add {what}"),
            ));
        }
    }
    errs
}

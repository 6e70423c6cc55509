//! `pods/ephemeralcontainers` (get, update, patch): kube's
//! `podEphemeralContainersStrategy`. A write changes only
//! `spec.ephemeralContainers` (everything else in the body is dropped, the
//! metadata status writes keep is kept, as `ResetObjectMetaForStatus`),
//! then kube's `ValidatePodEphemeralContainersUpdate`: new containers are
//! validated (name, image, the fields an ephemeral container may not set,
//! name clashes with every container of the pod, `targetContainerName`),
//! existing ones may be neither removed nor changed, static pods take
//! none. The answer is the Pod.

use keelson_apimachinery::meta::meta_str;
use keelson_apimachinery::{ApiError, ApiResult, FieldError, FieldErrorKind};
use serde_json::{json, Value};

/// The static-pod annotation kube's validation refuses.
pub(crate) const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// Fields kube's allow list keeps out of an ephemeral container.
const FORBIDDEN_FIELDS: [&str; 8] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "lifecycle",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
];

/// Metadata a subresource write may not change (kube's
/// `ResetObjectMetaForStatus`).
pub(crate) const RESET_METADATA: [&str; 6] = [
    "deletionTimestamp",
    "generation",
    "labels",
    "annotations",
    "finalizers",
    "ownerReferences",
];

fn err(kind: FieldErrorKind, field: String, value: Option<Value>, detail: &str) -> FieldError {
    FieldError {
        kind,
        field,
        value,
        detail: detail.to_string(),
    }
}

/// A Go-zero check for the allow list: absent, null, empty.
fn is_zero(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Bool(b)) => !b,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
    }
}

fn names_of<'a>(pod: &'a Value, list: &str) -> Vec<&'a str> {
    pod.pointer(&format!("/spec/{}", list))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|c| c.get("name").and_then(Value::as_str).unwrap_or(""))
                .collect()
        })
        .unwrap_or_default()
}

fn ephemeral(pod: &Value) -> Vec<Value> {
    pod.pointer("/spec/ephemeralContainers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The object an ephemeral-containers write stores: `old` with the
/// request's `spec.ephemeralContainers` and metadata (less what stays),
/// validated as kube does.
pub(crate) fn merge(new: Value, old: &Value) -> ApiResult<Value> {
    let mut merged = old.clone();
    match new.pointer("/spec/ephemeralContainers") {
        Some(v) if !v.is_null() => merged["spec"]["ephemeralContainers"] = v.clone(),
        _ => {
            if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("ephemeralContainers");
            }
        }
    }
    merged["metadata"] = reset_metadata(&new, old);
    validate(&merged, old)?;
    Ok(merged)
}

/// The request's metadata with the fields a subresource write keeps.
pub(crate) fn reset_metadata(new: &Value, old: &Value) -> Value {
    let mut meta = new
        .get("metadata")
        .filter(|m| m.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        for f in RESET_METADATA {
            match old.pointer(&format!("/metadata/{}", f)) {
                Some(v) => {
                    m.insert(f.to_string(), v.clone());
                }
                None => {
                    m.remove(f);
                }
            }
        }
    }
    meta
}

fn validate(new: &Value, old: &Value) -> ApiResult<()> {
    let name = meta_str(old, "name");
    let invalid = |errs: &[FieldError]| ApiError::invalid("", "Pod", name, errs);
    if old
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(MIRROR_POD_ANNOTATION))
        .is_some()
    {
        return Err(invalid(&[err(
            FieldErrorKind::Forbidden,
            String::new(),
            None,
            "static pods do not support ephemeral containers",
        )]));
    }
    let mut errs = Vec::new();
    let containers = names_of(new, "containers");
    let mut seen: Vec<&str> = containers.clone();
    seen.extend(names_of(new, "initContainers"));
    let list = ephemeral(new);
    for (i, ec) in list.iter().enumerate() {
        let path = format!("spec.ephemeralContainers[{}]", i);
        let ec_name = ec.get("name").and_then(Value::as_str).unwrap_or("");
        if ec_name.is_empty() {
            errs.push(err(
                FieldErrorKind::Required,
                format!("{}.name", path),
                None,
                "",
            ));
        } else if let Some(msg) = keelson_apimachinery::names::is_dns1123_label(ec_name).first() {
            errs.push(err(
                FieldErrorKind::Invalid,
                format!("{}.name", path),
                Some(json!(ec_name)),
                msg,
            ));
        } else if seen.contains(&ec_name) {
            errs.push(err(
                FieldErrorKind::Duplicate,
                format!("{}.name", path),
                Some(json!(ec_name)),
                "",
            ));
        } else {
            seen.push(ec_name);
        }
        if ec
            .get("image")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .is_empty()
        {
            errs.push(err(
                FieldErrorKind::Required,
                format!("{}.image", path),
                None,
                "",
            ));
        }
        for f in FORBIDDEN_FIELDS {
            if !is_zero(ec.get(f)) {
                errs.push(err(
                    FieldErrorKind::Forbidden,
                    format!("{}.{}", path, f),
                    None,
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        let target = ec
            .get("targetContainerName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !target.is_empty() && !containers.contains(&target) {
            errs.push(err(
                FieldErrorKind::NotFound,
                format!("{}.targetContainerName", path),
                Some(json!(target)),
                "",
            ));
        }
    }
    for o in ephemeral(old) {
        let o_name = o.get("name").and_then(Value::as_str).unwrap_or("");
        match list
            .iter()
            .find(|n| n.get("name").and_then(Value::as_str) == Some(o_name))
        {
            None => errs.push(err(
                FieldErrorKind::Forbidden,
                "spec.ephemeralContainers".into(),
                None,
                &format!(
                    "existing ephemeral containers {:?} may not be removed\n",
                    o_name
                ),
            )),
            Some(n) if *n != o => errs.push(err(
                FieldErrorKind::Forbidden,
                format!("spec.ephemeralContainers.{}", o_name),
                None,
                &format!(
                    "existing ephemeral containers {:?} may not be changed\n",
                    o_name
                ),
            )),
            Some(_) => {}
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid(&errs))
    }
}

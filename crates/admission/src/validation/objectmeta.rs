//! `ValidateObjectMetaAccessor`: name, generateName, namespace, generation,
//! labels, annotations, ownerReferences and finalizers.

use keelson_apimachinery::names::{
    is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_label_value,
};
use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use crate::registry::NameRule;

/// kube's `TotalAnnotationSizeLimitB` (256 KiB).
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// What the metadata of one resource must satisfy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaRules {
    pub name_rule: NameRule,
    pub namespaced: bool,
}

fn str_field<'a>(meta: &'a Map<String, Value>, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or("")
}

/// kube's `maskTrailingDash`: `name[:len-2] + "a"` (it drops two bytes).
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len().saturating_sub(2);
        match name.get(..cut) {
            Some(head) => format!("{head}a"),
            None => name.to_string(),
        }
    } else {
        name.to_string()
    }
}

/// The name validator of a rule; `prefix` validates a generateName.
pub(crate) fn name_errors(rule: NameRule, name: &str, prefix: bool) -> Vec<String> {
    match rule {
        NameRule::PathSegment => path_segment_errors(name, prefix),
        _ => {
            let name = if prefix {
                mask_trailing_dash(name)
            } else {
                name.to_string()
            };
            match rule {
                NameRule::Label => is_dns1123_label(&name),
                NameRule::Dns1035 => is_dns1035_label(&name),
                _ => is_dns1123_subdomain(&name),
            }
        }
    }
}

/// `ValidatePathSegmentName` (`IsValidPathSegmentName` when `prefix` is
/// false).
pub(crate) fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    if !prefix {
        for bad in [".", ".."] {
            if name == bad {
                return vec![format!("may not be '{bad}'")];
            }
        }
    }
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// Validate `metadata` (a JSON object, or anything else treated as empty).
/// A create with only `generateName` validates the prefix; the generated
/// name is the store's to make.
pub(crate) fn validate_meta(metadata: Option<&Value>, rules: MetaRules) -> Vec<FieldError> {
    let empty = Map::new();
    let meta = metadata.and_then(Value::as_object).unwrap_or(&empty);
    let mut errs = Vec::new();

    let generate_name = str_field(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in name_errors(rules.name_rule, generate_name, true) {
            errs.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                &msg,
            ));
        }
    }
    let name = str_field(meta, "name");
    if name.is_empty() {
        if generate_name.is_empty() {
            errs.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for msg in name_errors(rules.name_rule, name, false) {
            errs.push(FieldError::invalid("metadata.name", name, &msg));
        }
    }

    let namespace = str_field(meta, "namespace");
    if rules.namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            for msg in is_dns1123_label(namespace) {
                errs.push(FieldError::invalid("metadata.namespace", namespace, &msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }

    if let Some(g) = meta.get("generation").and_then(Value::as_i64) {
        if g < 0 {
            errs.push(FieldError::invalid(
                "metadata.generation",
                g,
                "must be greater than or equal to 0",
            ));
        }
    }
    errs.extend(labels(meta.get("labels")));
    errs.extend(annotations(meta.get("annotations")));
    errs.extend(owner_references(meta.get("ownerReferences")));
    errs.extend(finalizers(meta.get("finalizers")));
    errs
}

/// `ValidateLabels`: qualified-name keys, label-value values.
fn labels(v: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in v.and_then(Value::as_object).into_iter().flatten() {
        for msg in is_qualified_name(k) {
            errs.push(FieldError::invalid("metadata.labels", k.as_str(), &msg));
        }
        let value = v.as_str().unwrap_or("");
        for msg in is_valid_label_value(value) {
            errs.push(FieldError::invalid("metadata.labels", value, &msg));
        }
    }
    errs
}

/// `ValidateAnnotations`: case-insensitive qualified-name keys, total size.
fn annotations(v: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut size = 0usize;
    for (k, v) in v.and_then(Value::as_object).into_iter().flatten() {
        for msg in is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(
                "metadata.annotations",
                k.as_str(),
                &msg,
            ));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            "metadata.annotations",
            &format!("must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
    errs
}

/// `ValidateOwnerReferences` (the path has no index, as in kube).
fn owner_references(v: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.ownerReferences";
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    let Some(refs) = v.and_then(Value::as_array) else {
        return errs;
    };
    for r in refs {
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let api_version = get("apiVersion");
        let version_empty = match api_version.split_once('/') {
            None => api_version.is_empty(),
            Some((_, v)) => v.is_empty() || v.contains('/'),
        };
        if version_empty {
            errs.push(FieldError::invalid(
                &format!("{PATH}.apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        for (key, what) in [("kind", "kind"), ("name", "name"), ("uid", "uid")] {
            if get(key).is_empty() {
                errs.push(FieldError::invalid(
                    &format!("{PATH}.{key}"),
                    "",
                    &format!("{what} must not be empty"),
                ));
            }
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{}/{}", get("kind"), get("name"));
            match &first_controller {
                Some(first) => errs.push(FieldError::invalid(
                    PATH,
                    Value::Array(refs.clone()),
                    &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errs
}

/// `ValidateFinalizers`.
fn finalizers(v: Option<&Value>) -> Vec<FieldError> {
    const PATH: &str = "metadata.finalizers";
    let mut errs = Vec::new();
    let Some(list) = v.and_then(Value::as_array) else {
        return errs;
    };
    let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
    for f in &names {
        for msg in is_qualified_name(f) {
            errs.push(FieldError::invalid(PATH, *f, &msg));
        }
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        errs.push(FieldError::invalid(
            PATH,
            Value::Array(list.clone()),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errs
}

/// `ValidateObjectMetaUpdate`'s finalizer rule: no finalizer may be added
/// to an object that is being deleted.
pub(crate) fn no_new_finalizers(new: &Value, old: &Value) -> Vec<FieldError> {
    let deleting = old
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if !deleting {
        return Vec::new();
    }
    let list = |o: &Value| -> std::collections::BTreeSet<String> {
        o.pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let old = list(old);
    let extra: Vec<String> = list(new).into_iter().filter(|f| !old.contains(f)).collect();
    if extra.is_empty() {
        return Vec::new();
    }
    // Go's `%#v` of a `[]string`.
    let shown = extra
        .iter()
        .map(|f| format!("{f:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![FieldError::forbidden(
        "metadata.finalizers",
        &format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{shown}}}"
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_like_kube() {
        assert_eq!(mask_trailing_dash("foo-"), "foa");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(mask_trailing_dash("ab"), "ab");
    }

    #[test]
    fn path_segments() {
        assert_eq!(path_segment_errors("..", false), ["may not be '..'"]);
        assert_eq!(
            path_segment_errors("a/b%", false),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(path_segment_errors("..", true).is_empty());
    }
}

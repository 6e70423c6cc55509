//! Small readers and rules shared by the kinds' validators.
#![allow(dead_code)]

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::Path;

/// `obj[key]` as a string, `""` when absent or not a string.
pub(crate) fn str_of<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `obj[key]` as an object, when it is one.
pub(crate) fn obj_of<'a>(obj: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    obj.get(key).and_then(Value::as_object)
}

/// `obj[key]` as a list, empty when absent or not a list.
pub(crate) fn list_of<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// `obj[key]` as an integer, when it is one.
pub(crate) fn int_of(obj: &Value, key: &str) -> Option<i64> {
    obj.get(key).and_then(Value::as_i64)
}

/// kube's `ValidateImmutableField`: `Invalid value: <new>: field is immutable`
/// when `new` differs from `old` (absent and `null` are the same).
pub(crate) fn immutable(new: Option<&Value>, old: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let norm = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
    let (n, o) = (norm(new), norm(old));
    if n == o {
        return Vec::new();
    }
    vec![FieldError::invalid(
        path.as_str(),
        n.unwrap_or(Value::Null),
        "field is immutable",
    )]
}

/// kube's `ValidateNonnegativeField`.
pub(crate) fn nonnegative(value: i64, path: &Path) -> Vec<FieldError> {
    if value < 0 {
        vec![FieldError::invalid(
            path.as_str(),
            value,
            "must be greater than or equal to 0",
        )]
    } else {
        Vec::new()
    }
}

/// `Duplicate value: <value>`.
pub(crate) fn duplicate(path: &Path, value: impl Into<Value>) -> FieldError {
    FieldError {
        kind: keelson_apimachinery::field::FieldErrorKind::Duplicate,
        field: path.as_str().to_string(),
        value: Some(value.into()),
        detail: String::new(),
    }
}

/// An error whose value is printed as `raw` unquoted (Go's `%#v` of a
/// struct, a `[]string`, ...).
pub(crate) fn raw_value(
    kind: keelson_apimachinery::field::FieldErrorKind,
    path: &Path,
    raw: &str,
    detail: &str,
) -> FieldError {
    let detail = if detail.is_empty() {
        raw.to_string()
    } else {
        format!("{raw}: {detail}")
    };
    FieldError {
        kind,
        field: path.as_str().to_string(),
        value: None,
        detail,
    }
}

/// kube's `RegexError` wording.
pub(crate) fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

/// kube's `IsConfigMapKey` (also Secret keys).
pub(crate) fn config_map_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let ok = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." {
        errs.push("must not be '.'".to_string());
    } else if key == ".." {
        errs.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errs.push("must not start with '..'".to_string());
    }
    errs
}

/// kube's `IsValidPortNum` as `Invalid value` errors at `path`.
pub(crate) fn port_num(port: i64, path: &Path) -> Vec<FieldError> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            path.as_str(),
            port,
            "must be between 1 and 65535, inclusive",
        )]
    }
}

/// kube's `IsValidPortName` messages (IANA service names).
pub(crate) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// kube's `ValidatePortNumOrName` (an int-or-string port) at `path`.
pub(crate) fn port_num_or_name(v: Option<&Value>, path: &Path) -> Vec<FieldError> {
    match v {
        Some(Value::Number(n)) => port_num(n.as_i64().unwrap_or(0), path),
        Some(Value::String(s)) => port_name_errors(s)
            .into_iter()
            .map(|m| FieldError::invalid(path.as_str(), s.as_str(), &m))
            .collect(),
        _ => Vec::new(),
    }
}

/// `msgs` as `Invalid value: <value>` errors at `path`.
pub(crate) fn invalid_all(msgs: Vec<String>, path: &Path, value: &str) -> Vec<FieldError> {
    msgs.into_iter()
        .map(|m| FieldError::invalid(path.as_str(), value, &m))
        .collect()
}

/// kube's `ValidateLabels` at `path` (selectors, label maps).
pub(crate) fn labels(map: Option<&Map<String, Value>>, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in map.into_iter().flatten() {
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_qualified_name(k),
            path,
            k,
        ));
        let value = v.as_str().unwrap_or("");
        errs.extend(invalid_all(
            keelson_apimachinery::names::is_valid_label_value(value),
            path,
            value,
        ));
    }
    errs
}

/// `ValidateDNS1123Subdomain` at `path`.
pub(crate) fn dns1123_subdomain(v: &str, path: &Path) -> Vec<FieldError> {
    invalid_all(
        keelson_apimachinery::names::is_dns1123_subdomain(v),
        path,
        v,
    )
}

/// `ValidateDNS1123Label` at `path`.
pub(crate) fn dns1123_label(v: &str, path: &Path) -> Vec<FieldError> {
    invalid_all(keelson_apimachinery::names::is_dns1123_label(v), path, v)
}

/// `obj[key]` as a bool, `false` when absent.
pub(crate) fn bool_of(obj: &Value, key: &str) -> bool {
    obj.get(key).and_then(Value::as_bool).unwrap_or(false)
}

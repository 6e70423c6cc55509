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

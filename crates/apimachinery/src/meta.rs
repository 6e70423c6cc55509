//! Helpers to read and write `metadata` of JSON objects.

use serde_json::{Map, Value};

/// `metadata.<field>` as a string, or "".
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(|v| v.as_str())
        .unwrap_or("")
}

/// Mutable `metadata` map, created if missing or not an object.
pub fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let o = obj.as_object_mut()?;
    let m = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
}

/// Set `metadata.<field>` to a string.
pub fn set_meta_str(obj: &mut Value, field: &str, value: &str) {
    if let Some(m) = meta_mut(obj) {
        m.insert(field.to_string(), Value::String(value.to_string()));
    }
}

/// The current time as kube-apiserver renders it (RFC 3339, seconds, `Z`).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

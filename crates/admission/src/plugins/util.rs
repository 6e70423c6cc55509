//! Small helpers the plugins share: JSON access, kube's error aggregate,
//! quantities.

use keelson_cel::library::quantity::Quantity;
use serde_json::{Map, Value};

/// `utilerrors.NewAggregate(errs).Error()`: one message alone, several
/// (duplicates dropped) as `[a, b]`.
pub(crate) fn aggregate(msgs: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in msgs {
        if !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// The object at `key` of `parent`, created when missing (a non-object
/// there is left alone: `None`).
pub(crate) fn child<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    parent
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// `obj.spec` as an object, if it is one.
pub(crate) fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("spec").and_then(Value::as_object_mut)
}

/// A string field, empty when absent.
pub(crate) fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    let mut v = obj;
    for p in path {
        match v.get(*p) {
            Some(x) => v = x,
            None => return "",
        }
    }
    v.as_str().unwrap_or("")
}

/// The array at `key` of `map`, each element that is an object.
pub(crate) fn objects_mut<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// The elements of the array at `path` that are objects.
pub(crate) fn objects<'a>(obj: &'a Value, path: &[&str]) -> Vec<&'a Map<String, Value>> {
    let mut v = obj;
    for p in path {
        match v.get(*p) {
            Some(x) => v = x,
            None => return Vec::new(),
        }
    }
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

/// An annotation's value.
pub(crate) fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

/// `names.SimpleNameGenerator`'s five random characters.
pub(crate) fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// A quantity as it is written back (`Quantity.String()`).
pub(crate) fn canonical(q: &str) -> String {
    keelson_codec::table::quantity::canonical(q)
}

/// The nano-units of a quantity string (JSON string or number).
pub(crate) fn nanos(v: &Value) -> Option<i128> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    Quantity::parse(&s)?.nanos()
}

/// The quantity's text (JSON string or number).
pub(crate) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A resource list (`{"cpu": "1"}`) sorted by key, as Go writes maps.
pub(crate) fn sort_keys(map: &mut Map<String, Value>) {
    let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    map.extend(entries);
}

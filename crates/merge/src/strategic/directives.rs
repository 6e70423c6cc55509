//! The patch directives (`$patch`, `$retainKeys`, `$setElementOrder/…`,
//! `$deleteFromPrimitiveList/…`) and the clean-up of patch values taken
//! into the object as they are.

use serde_json::Value;

use super::error::{SmpError, SmpResult};

/// `$patch`: `replace`, `delete` (or, refused, `merge`).
pub(super) const PATCH: &str = "$patch";
pub(super) const REPLACE: &str = "replace";
pub(super) const DELETE: &str = "delete";
pub(super) const MERGE: &str = "merge";
/// `$retainKeys`: the keys of a map to keep.
pub(super) const RETAIN_KEYS: &str = "$retainKeys";
/// `$setElementOrder/<list>`: the order of a merged list.
pub(super) const SET_ELEMENT_ORDER: &str = "$setElementOrder";
/// `$deleteFromPrimitiveList/<list>`: values to drop from a list.
pub(super) const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// The field a parallel-list key (`<prefix>/<field>`) names; a key that
/// starts with the prefix but is not of that form is a 400.
pub(super) fn target_field(key: &str, prefix: &str) -> SmpResult<String> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field.to_string()),
        _ if prefix == SET_ELEMENT_ORDER => Err(SmpError::BadSetElementOrder),
        _ => Err(SmpError::BadPrimitiveList),
    }
}

/// True for a map carrying `$patch`.
pub(super) fn has_patch_directive(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.contains_key(PATCH))
}

/// Drop every `null` map value, at any depth (a value new to the object
/// has nothing to delete).
pub(super) fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(l) => l.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// `v` without the maps that carry `$patch` (at any depth); `None` when
/// `v` itself is such a map.
pub(super) fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(PATCH) {
                return None;
            }
            Some(Value::Object(
                m.into_iter()
                    .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                    .collect(),
            ))
        }
        Value::Array(l) => Some(Value::Array(
            l.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parallel_list_keys() {
        assert_eq!(
            target_field("$setElementOrder/containers", SET_ELEMENT_ORDER).unwrap(),
            "containers"
        );
        assert_eq!(
            target_field("$deleteFromPrimitiveList/", DELETE_FROM_PRIMITIVE_LIST).unwrap(),
            ""
        );
        assert_eq!(
            target_field("$setElementOrderX/a", SET_ELEMENT_ORDER),
            Err(SmpError::BadSetElementOrder)
        );
        assert_eq!(
            target_field("$deleteFromPrimitiveList", DELETE_FROM_PRIMITIVE_LIST),
            Err(SmpError::BadPrimitiveList)
        );
    }

    #[test]
    fn cleans_new_values() {
        let mut v = json!({"a": null, "b": {"c": null, "d": 1}, "l": [null, {"e": null}]});
        discard_nulls(&mut v);
        assert_eq!(v, json!({"b": {"d": 1}, "l": [null, {}]}));
        let v = json!({"keep": [{"$patch": "delete", "name": "x"}, {"name": "y"}], "gone": {"$patch": "replace"}});
        assert_eq!(remove_directives(v), Some(json!({"keep": [{"name": "y"}]})));
        assert_eq!(remove_directives(json!({"$patch": "delete"})), None);
    }
}

//! Merging a patch map into a map of the object (kube's `mergeMap` with
//! the server-side options: parallel lists applied, unmatched `null`s
//! ignored): `$patch` on the map, `$retainKeys`, `$setElementOrder` lists,
//! then each key of the patch.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::directives::{
    discard_nulls, has_patch_directive, remove_directives, target_field, DELETE,
    DELETE_FROM_PRIMITIVE_LIST, PATCH, REPLACE, RETAIN_KEYS, SET_ELEMENT_ORDER,
};
use super::error::{bad_patch_type, not_a_list, order_mismatch, SmpError, SmpResult};
use super::gofmt::GoType;
use super::list::{element_type, merge_list};
use super::meta::{of_list_field, of_map_field};
use super::order::{normalize, partition_maps, partition_primitives, split_deletions, unhashable};
use crate::schema::TypeRef;

type Object = Map<String, Value>;

/// Merge `patch` into `original`, whose schema is `ty`.
pub(super) fn merge_map(
    mut original: Object,
    mut patch: Object,
    ty: TypeRef<'_>,
) -> SmpResult<Object> {
    if let Some(directive) = patch.get(PATCH) {
        return match directive.as_str() {
            Some(REPLACE) => {
                patch.shift_remove(PATCH);
                Ok(patch)
            }
            Some(DELETE) => Ok(Object::new()),
            _ => Err(bad_patch_type(directive, &patch)),
        };
    }
    retain_keys(&mut original, &mut patch)?;
    // A list created by `$setElementOrder` is added before the other new
    // keys; remember the patch order to put it back in place.
    let reorder = creates_ordered_list(&original, &patch);
    let server_keys: HashSet<String> = if reorder {
        original.keys().cloned().collect()
    } else {
        HashSet::new()
    };
    let patch_fields: Vec<String> = if reorder {
        patch.keys().map(|k| field_of(k)).collect()
    } else {
        Vec::new()
    };
    set_element_orders(&mut original, &mut patch, &ty)?;
    for (key, value) in patch {
        merge_key(&mut original, key, value, &ty)?;
    }
    if reorder {
        order_new_keys(&mut original, &server_keys, &patch_fields);
    }
    Ok(original)
}

/// The field a patch key writes.
fn field_of(key: &str) -> String {
    [DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER]
        .into_iter()
        .find_map(|p| key.strip_prefix(p).and_then(|rest| rest.strip_prefix('/')))
        .unwrap_or(key)
        .to_string()
}

/// True when a `$setElementOrder` names a list the server does not have.
fn creates_ordered_list(original: &Object, patch: &Object) -> bool {
    patch.keys().any(|k| {
        k.strip_prefix(SET_ELEMENT_ORDER)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|field| !original.contains_key(field))
    })
}

/// Keys the server did not have go after its own, in the order the patch
/// named them.
fn order_new_keys(m: &mut Object, server_keys: &HashSet<String>, patch_fields: &[String]) {
    let position: HashMap<&str, usize> = patch_fields
        .iter()
        .enumerate()
        .rev()
        .map(|(i, f)| (f.as_str(), i))
        .collect();
    let mut entries: Vec<(usize, (String, Value))> =
        std::mem::take(m).into_iter().enumerate().collect();
    entries.sort_by_key(|(i, (k, _))| {
        if server_keys.contains(k) {
            (0, *i)
        } else {
            (1, position.get(k.as_str()).copied().unwrap_or(usize::MAX))
        }
    });
    m.extend(entries.into_iter().map(|(_, e)| e));
}

/// Apply `$retainKeys`: every key of the patch must be listed (unless
/// `null` or a parallel list); the server's unlisted keys are cleared.
fn retain_keys(original: &mut Object, patch: &mut Object) -> SmpResult<()> {
    let Some(listed) = patch.shift_remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(listed) = listed else {
        return Err(SmpError::BadRetainKeys);
    };
    if listed.iter().any(unhashable) {
        return Err(SmpError::Panic);
    }
    let is_listed = |k: &str| listed.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        let parallel =
            k.starts_with(DELETE_FROM_PRIMITIVE_LIST) || k.starts_with(SET_ELEMENT_ORDER);
        if !v.is_null() && !parallel && !is_listed(k) {
            return Err(SmpError::BadRetainKeys);
        }
    }
    original.retain(|k, _| is_listed(k));
    Ok(())
}

/// A list value, or kube's bad-type error.
fn as_list(v: Option<&Value>) -> SmpResult<Option<Vec<Value>>> {
    match v {
        None => Ok(None),
        Some(Value::Array(l)) => Ok(Some(l.clone())),
        Some(other) => Err(not_a_list(other)),
    }
}

/// Process each `$setElementOrder/<field>`: merge the field's patch list
/// (if any) and put the result in the order given, server-only items
/// interleaved where the server had them.
fn set_element_orders(
    original: &mut Object,
    patch: &mut Object,
    ty: &TypeRef<'_>,
) -> SmpResult<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.shift_remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(not_a_list(&order));
        };
        let field = target_field(&key, SET_ELEMENT_ORDER)?;
        let server = as_list(original.get(&field))?;
        let patched = as_list(patch.get(&field))?;
        let meta = of_list_field(ty, &field)?;
        check_order(patched.as_deref().unwrap_or(&[]), &order, meta.merge_key)?;
        let merged = match (&server, &patched) {
            (Some(s), None) => s.clone(),
            (None, Some(p)) => match remove_directives(Value::Array(p.clone())) {
                Some(Value::Array(l)) => l,
                _ => Vec::new(),
            },
            (Some(s), Some(p)) => merge_list(s.clone(), p.clone(), &meta, false)?,
            (None, None) => continue,
        };
        let (listed, others) = if meta.merge_key.is_empty() {
            partition_primitives(merged, &order)?
        } else {
            partition_maps(merged, &order, meta.merge_key)?
        };
        let server = server.unwrap_or_default();
        let kind = element_type(&[&server, patched.as_deref().unwrap_or(&[])])?;
        let ordered = normalize(listed, others, &order, &server, meta.merge_key, kind)?;
        original.insert(field.clone(), Value::Array(ordered));
        patch.shift_remove(&field);
    }
    Ok(())
}

/// Go's `==` on two decoded values (comparing two maps or two lists
/// panics).
fn go_equal(a: &Value, b: &Value) -> SmpResult<bool> {
    let same_container = matches!(
        (a, b),
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_))
    );
    if same_container {
        return Err(SmpError::Panic);
    }
    Ok(a == b)
}

/// Items are equal by merge key (or by value for scalars).
fn same_item(a: &Value, b: &Value, merge_key: &str) -> SmpResult<bool> {
    if merge_key.is_empty() {
        return go_equal(a, b);
    }
    let l = a.as_object().ok_or_else(|| super::error::not_a_map(a))?;
    let r = b.as_object().ok_or_else(|| super::error::not_a_map(b))?;
    let lk = l
        .get(merge_key)
        .ok_or_else(|| super::error::no_merge_key(l, merge_key))?;
    let rk = r
        .get(merge_key)
        .ok_or_else(|| super::error::no_merge_key(r, merge_key))?;
    go_equal(lk, rk)
}

/// The patch list's items (other than deletions and directives) must
/// appear in `$setElementOrder`, in the same relative order.
fn check_order(patch_list: &[Value], order: &[Value], merge_key: &str) -> SmpResult<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let items = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        split_deletions(patch_list.to_vec())?.0
    };
    let (mut p, mut o) = (0, 0);
    while p < items.len() && o < order.len() {
        if has_patch_directive(&items[p]) {
            p += 1;
            continue;
        }
        if same_item(&items[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < items.len() && o >= order.len() {
        return Err(order_mismatch(patch_list, order));
    }
    Ok(())
}

/// Put a patch value the server did not have (or had with another type):
/// without `null`s and `$patch` maps; a value that is itself a `$patch`
/// map removes the key.
fn take_patch_value(original: &mut Object, key: String, mut value: Value) {
    discard_nulls(&mut value);
    match remove_directives(value) {
        Some(v) => {
            original.insert(key, v);
        }
        None => {
            original.shift_remove(&key);
        }
    }
}

/// Merge one key of the patch into `original`.
fn merge_key(original: &mut Object, key: String, value: Value, ty: &TypeRef<'_>) -> SmpResult<()> {
    let (field, deletion) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
        let field = target_field(&key, DELETE_FROM_PRIMITIVE_LIST)?;
        (if field.is_empty() { key } else { field }, true)
    } else {
        (key, false)
    };
    if value.is_null() {
        original.shift_remove(&field);
        return Ok(());
    }
    let Some(server) = original.get_mut(&field) else {
        if !deletion {
            take_patch_value(original, field, value);
        }
        return Ok(());
    };
    if GoType::of(server) != GoType::of(&value) {
        if !deletion {
            take_patch_value(original, field, value);
        }
        return Ok(());
    }
    match value {
        Value::Object(patch) => {
            let meta = of_map_field(ty, &field)?;
            let Value::Object(current) = std::mem::take(server) else {
                return Err(SmpError::Panic);
            };
            *server = Value::Object(if meta.replaces() {
                patch
            } else {
                merge_map(current, patch, meta.ty)?
            });
        }
        Value::Array(patch) => {
            let meta = of_list_field(ty, &field)?;
            let Value::Array(current) = std::mem::take(server) else {
                return Err(SmpError::Panic);
            };
            *server = Value::Array(merge_list(current, patch, &meta, deletion)?);
        }
        scalar => *server = scalar,
    }
    Ok(())
}

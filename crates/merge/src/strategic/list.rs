//! Merging a patch list into a list of the object: replaced unless the
//! field's strategy is `merge`; merged lists of maps are matched by merge
//! key (with `$patch` items), lists of scalars are united, and a
//! `$deleteFromPrimitiveList` list removes values.

use serde_json::{Map, Value};

use super::directives::{DELETE, MERGE, PATCH, REPLACE};
use super::error::{
    bad_patch_type, list_merge_directive, mixed_element_types, no_elements, no_merge_key,
    no_merge_key_declared, SmpError, SmpResult,
};
use super::gofmt::GoType;
use super::merge::merge_map;
use super::meta::{element_kind, FieldMeta};
use super::order::{find_by_key, normalize, partition_maps, partition_primitives, unhashable};

/// kube's `sliceElementType`: the one type of every element of `lists`.
/// A list of lists is refused (422); a `null` first element makes kube
/// panic.
pub(super) fn element_type(lists: &[&[Value]]) -> SmpResult<GoType> {
    let mut seen: Option<GoType> = None;
    for item in lists.iter().flat_map(|l| l.iter()) {
        let t = GoType::of(item);
        match seen {
            None if t == GoType::Nil => return Err(SmpError::Panic),
            None if t == GoType::Slice => return Err(SmpError::ListOfLists),
            None => seen = Some(t),
            Some(s) if s != t => return Err(mixed_element_types(lists)),
            Some(_) => {}
        }
    }
    seen.ok_or_else(no_elements)
}

/// Merge `patch` into `original` for a field with `meta`; a deletion list
/// (`$deleteFromPrimitiveList`) is merged whatever the strategy.
pub(super) fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &FieldMeta<'_>,
    deletion: bool,
) -> SmpResult<Vec<Value>> {
    if !meta.merges() && !deletion {
        return Ok(patch);
    }
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_type(&[&original, &patch])?;
    let merge_key = meta.merge_key;
    let (merged, server_order, patch_order) = if kind != GoType::Map {
        if deletion {
            return delete_values(original, &patch);
        }
        let mut both = original.clone();
        both.extend(patch.iter().cloned());
        (dedup_scalars(both), original, patch)
    } else {
        if merge_key.is_empty() {
            return Err(no_merge_key_declared(element_kind(&meta.ty)));
        }
        let (server, patch) = apply_special_items(original, patch, merge_key)?;
        let merged = merge_items(server.clone(), &patch, merge_key, meta)?;
        (merged, server, patch)
    };
    let (patch_items, server_only) = if merge_key.is_empty() {
        partition_primitives(merged, &patch_order)?
    } else {
        partition_maps(merged, &patch_order, merge_key)?
    };
    normalize(
        patch_items,
        server_only,
        &patch_order,
        &server_order,
        merge_key,
        kind,
    )
}

/// Handle the patch items carrying `$patch`: `delete` drops the server
/// items with that merge key, `replace` makes the other patch items the
/// whole list. Returns the server list and the remaining patch items.
fn apply_special_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> SmpResult<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(m) = item.as_object() else {
            return Err(SmpError::Panic);
        };
        let Some(directive) = m.get(PATCH) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some(DELETE) => {
                let key = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
                while let Some(i) = find_by_key(&original, merge_key, key)? {
                    original.remove(i);
                }
            }
            Some(REPLACE) => replace = true,
            Some(MERGE) => return Err(list_merge_directive()),
            _ => return Err(bad_patch_type(directive, m)),
        }
    }
    if replace {
        Ok((plain, Vec::new()))
    } else {
        Ok((original, plain))
    }
}

/// Merge each patch item into the server item with the same merge key,
/// or append it.
fn merge_items(
    mut list: Vec<Value>,
    patch: &[Value],
    merge_key: &str,
    meta: &FieldMeta<'_>,
) -> SmpResult<Vec<Value>> {
    for item in patch {
        let Some(m) = item.as_object() else {
            return Err(SmpError::Panic);
        };
        let key = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
        match find_by_key(&list, merge_key, key)? {
            Some(i) => {
                let server = match std::mem::take(&mut list[i]) {
                    Value::Object(s) => s,
                    _ => Map::new(),
                };
                list[i] = Value::Object(merge_map(server, m.clone(), meta.ty)?);
            }
            None => list.push(item.clone()),
        }
    }
    Ok(list)
}

/// Remove every value listed in `remove` (scalars only: a map as a Go map
/// key makes kube panic).
fn delete_values(original: Vec<Value>, remove: &[Value]) -> SmpResult<Vec<Value>> {
    if remove.iter().chain(original.iter()).any(unhashable) {
        return Err(SmpError::Panic);
    }
    Ok(original
        .into_iter()
        .filter(|v| !remove.contains(v))
        .collect())
}

/// kube's `deduplicateScalars`: a later duplicate is overwritten by the
/// last element and the list shortened (the order is fixed afterwards).
fn dedup_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut last = s.len() as isize - 1;
    let mut i: isize = 0;
    while i < last {
        let mut j = i + 1;
        while j <= last {
            if s[i as usize] == s[j as usize] {
                s.swap(j as usize, last as usize);
                s.truncate(last as usize);
                last -= 1;
                j -= 1;
            }
            j += 1;
        }
        i += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn element_types() {
        let l = |v: Value| v.as_array().cloned().unwrap_or_default();
        assert_eq!(
            element_type(&[&l(json!(["a"])), &l(json!(["b"]))]),
            Ok(GoType::String)
        );
        assert_eq!(
            element_type(&[&l(json!([])), &l(json!([["a"]]))]),
            Err(SmpError::ListOfLists)
        );
        assert_eq!(element_type(&[&l(json!([null]))]), Err(SmpError::Panic));
        assert_eq!(
            element_type(&[&l(json!(["a"])), &l(json!([1]))]),
            Err(SmpError::Other(
                "list element types are not identical: [[a] [1]]".into()
            ))
        );
        assert_eq!(
            element_type(&[&l(json!([])), &l(json!([]))]),
            Err(SmpError::Other(
                "no elements in any of the given slices".into()
            ))
        );
    }

    #[test]
    fn dedup_like_go() {
        let v = dedup_scalars(vec![json!(1), json!(2), json!(3), json!(2), json!(1)]);
        assert_eq!(v, vec![json!(1), json!(2), json!(3)]);
        let v = dedup_scalars(vec![json!("a"), json!("a"), json!("b"), json!("a")]);
        assert_eq!(v, vec![json!("a"), json!("b")]);
    }
}

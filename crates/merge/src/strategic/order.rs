//! The order of a merged list, as kube decides it: items named by the
//! patch (or by `$setElementOrder`) in the patch's order, the server's
//! other items in the server's order, the two interleaved by where the
//! server had them.

use serde_json::Value;

use super::directives::{DELETE, PATCH};
use super::error::{element_not_a_map, no_merge_key, not_a_map, SmpError, SmpResult};
use super::gofmt::GoType;
use super::gosort;

static NIL: Value = Value::Null;

/// What identifies an item for ordering: its merge key's value (a missing
/// key or a non-map item reads as `nil`), or the item itself.
fn identity<'v>(item: &'v Value, merge_key: &str, kind: GoType) -> &'v Value {
    if kind != GoType::Map {
        return item;
    }
    item.as_object()
        .and_then(|m| m.get(merge_key))
        .unwrap_or(&NIL)
}

/// Position of `item` in `list` by identity.
fn index(list: &[Value], item: &Value, merge_key: &str, kind: GoType) -> Option<usize> {
    let id = identity(item, merge_key, kind);
    list.iter().position(|v| identity(v, merge_key, kind) == id)
}

/// True for a value Go cannot use as a map key or compare with `==`.
pub(super) fn unhashable(v: &Value) -> bool {
    matches!(v, Value::Object(_) | Value::Array(_))
}

/// The index of the first map in `list` whose `key` equals `value`; an
/// element that is not a map is an error.
pub(super) fn find_by_key(list: &[Value], key: &str, value: &Value) -> SmpResult<Option<usize>> {
    for (i, item) in list.iter().enumerate() {
        let m = item.as_object().ok_or_else(|| element_not_a_map(i))?;
        if m.get(key) == Some(value) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Split scalars into those listed in `by` and the others (a map or list
/// as a Go map key makes kube panic).
pub(super) fn partition_primitives(
    items: Vec<Value>,
    by: &[Value],
) -> SmpResult<(Vec<Value>, Vec<Value>)> {
    if by.iter().chain(items.iter()).any(unhashable) {
        return Err(SmpError::Panic);
    }
    Ok(items.into_iter().partition(|v| by.contains(v)))
}

/// Split maps into those whose merge key is listed in `by` and the others.
pub(super) fn partition_maps(
    items: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> SmpResult<(Vec<Value>, Vec<Value>)> {
    let (mut listed, mut others) = (Vec::new(), Vec::new());
    for item in items {
        let m = item.as_object().ok_or_else(|| not_a_map(&item))?;
        let key = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
        if find_by_key(by, merge_key, key)?.is_some() {
            listed.push(item);
        } else {
            others.push(item);
        }
    }
    Ok((listed, others))
}

/// Every item of every list must be a map with the merge key.
fn validate_merge_keys(merge_key: &str, lists: &[&[Value]]) -> SmpResult<()> {
    for item in lists.iter().flat_map(|l| l.iter()) {
        let m = item.as_object().ok_or_else(|| not_a_map(item))?;
        if !m.contains_key(merge_key) {
            return Err(no_merge_key(m, merge_key));
        }
    }
    Ok(())
}

/// Split maps into those kept and those carrying `$patch: delete`.
pub(super) fn split_deletions(items: Vec<Value>) -> SmpResult<(Vec<Value>, Vec<Value>)> {
    let (mut kept, mut deleted) = (Vec::new(), Vec::new());
    for item in items {
        let m = item.as_object().ok_or_else(|| not_a_map(&item))?;
        if m.get(PATCH).and_then(Value::as_str) == Some(DELETE) {
            deleted.push(item);
        } else {
            kept.push(item);
        }
    }
    Ok((kept, deleted))
}

/// Sort `items` by their position in `order` (deletions last).
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> SmpResult<Vec<Value>> {
    let (items, deleted) = if kind == GoType::Map {
        validate_merge_keys(merge_key, &[&items, order])?;
        split_deletions(items)?
    } else {
        (items, Vec::new())
    };
    // An item's place in `order` depends on the item alone: look it up
    // once, then sort with kube's comparison.
    let mut placed: Vec<(Option<usize>, Value)> = items
        .into_iter()
        .map(|item| (index(order, &item, merge_key, kind), item))
        .collect();
    // kube's "less": by place when both have one, else true.
    let mut less = |a: &(Option<usize>, Value), b: &(Option<usize>, Value)| match (a.0, b.0) {
        (Some(i), Some(j)) => i < j,
        _ => true,
    };
    gosort::slice_stable(&mut placed, &mut less);
    let mut items: Vec<Value> = placed.into_iter().map(|(_, item)| item).collect();
    items.extend(deleted);
    Ok(items)
}

/// Interleave the server-only items into the patch items: a server item
/// goes before a patch item only when the server had both and had it
/// first.
fn merge_sorted(
    server_only: Vec<Value>,
    patch_items: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(server_only.len() + patch_items.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        let li = index(server_order, l, merge_key, kind);
        let ri = index(server_order, r, merge_key, kind);
        let next = match (li, ri) {
            (Some(i), Some(j)) if i < j => left.next(),
            _ => right.next(),
        };
        out.extend(next);
    }
    out.extend(left);
    out.extend(right);
    out
}

/// kube's `normalizeElementOrder`: patch items in `patch_order`, server
/// items in `server_order`, then interleaved.
pub(super) fn normalize(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> SmpResult<Vec<Value>> {
    let patch_items = sort_by_order(patch_items, patch_order, merge_key, kind)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted(
        server_only,
        patch_items,
        server_order,
        merge_key,
        kind,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list(v: Value) -> Vec<Value> {
        v.as_array().cloned().unwrap_or_default()
    }

    #[test]
    fn new_patch_items_go_first_server_items_keep_their_place() {
        let server = list(json!(["a", "b", "c"]));
        let out = normalize(
            list(json!(["b", "d"])),
            list(json!(["a", "c"])),
            &list(json!(["d", "b"])),
            &server,
            "",
            GoType::String,
        )
        .unwrap();
        assert_eq!(out, list(json!(["d", "a", "b", "c"])));
    }

    #[test]
    fn maps_are_ordered_by_merge_key() {
        let server = list(json!([{"name": "1"}, {"name": "2", "value": "b"}, {"name": "3"}]));
        let patch = list(json!([{"name": "3", "value": "c"}, {"name": "1", "value": "a"}]));
        let out = normalize(
            list(json!([{"name": "1", "value": "a"}, {"name": "3", "value": "c"}])),
            list(json!([{"name": "2", "value": "b"}])),
            &patch,
            &server,
            "name",
            GoType::Map,
        )
        .unwrap();
        assert_eq!(
            out,
            list(
                json!([{"name": "2", "value": "b"}, {"name": "3", "value": "c"}, {"name": "1", "value": "a"}])
            )
        );
    }

    #[test]
    fn maps_as_primitive_keys_panic_in_kube() {
        assert_eq!(
            partition_primitives(list(json!([{"a": 1}])), &[]),
            Err(SmpError::Panic)
        );
    }
}

//! Walks of an object against its schema, structured-merge-diff's `typed`
//! package: the field set an object specifies, the comparison of two
//! objects, the apply merge, and the removal of a set of items.
//!
//! How a node merges comes from the catalog schema as kube's
//! OpenAPI-to-SMD conversion reads it: `x-kubernetes-list-type` (else a
//! `merge` patch strategy makes a set, or a map keyed on the patch merge
//! key), `x-kubernetes-map-type`; nodes without a schema are deduced from
//! their value (objects are granular maps, lists atomic).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use keelson_apimachinery::gofmt;

use super::path::PathElement;
use super::set::Set;

use crate::schema::{Shape, TypeRef};

/// What a node is for merging.
enum Node<'a> {
    /// Scalars, atomic lists, maps and structs, free-form lists.
    Leaf,
    /// A granular struct or map.
    Map(TypeRef<'a>),
    /// An associative list: `None` keys = a set of scalars.
    List(TypeRef<'a>, Option<Vec<String>>),
}

fn node<'a>(ty: TypeRef<'a>, v: Option<&Value>) -> Node<'a> {
    match ty.shape() {
        Shape::Scalar => Node::Leaf,
        Shape::Struct | Shape::Map => match ty.map_type() {
            Some("atomic") => Node::Leaf,
            _ => Node::Map(ty),
        },
        Shape::List => match list_relationship(ty) {
            Some(keys) => Node::List(ty.items(), keys),
            None => Node::Leaf,
        },
        Shape::Untyped => match v {
            Some(Value::Object(_)) => Node::Map(ty),
            _ => Node::Leaf,
        },
    }
}

/// `None` = atomic; `Some(None)` = set; `Some(Some(keys))` = map.
fn list_relationship(ty: TypeRef<'_>) -> Option<Option<Vec<String>>> {
    match ty.list_type() {
        Some("atomic") => None,
        Some("set") => Some(None),
        Some("map") => Some(Some(ty.list_map_keys().to_vec())),
        _ if ty.has_patch_strategy("merge") => {
            Some(ty.patch_merge_key().map(|k| vec![k.to_string()]))
        }
        _ => None,
    }
}

/// kube's built-in schemas default the `protocol` key of ports to `TCP`
/// (the catalog does not carry defaults; this is the one key with one).
fn key_default(name: &str) -> Option<Value> {
    (name == "protocol").then(|| Value::from("TCP"))
}

/// The path element of a list item.
fn item_element(
    keys: &Option<Vec<String>>,
    index: usize,
    item: &Value,
) -> Result<PathElement, String> {
    match keys {
        None => match item {
            Value::Object(_) | Value::Array(_) => {
                Err("associative list without keys has an element that's a map type".to_string())
            }
            v => Ok(PathElement::Value(Arc::new(v.clone()))),
        },
        Some(keys) if keys.is_empty() => Ok(PathElement::Index(index as i64)),
        Some(keys) => {
            let obj = item.as_object().ok_or_else(|| {
                "associative list with keys has an element that's not a map type".to_string()
            })?;
            let mut fields = Vec::with_capacity(keys.len());
            for k in keys {
                let v = match obj.get(k) {
                    Some(v) => v.clone(),
                    None => key_default(k).ok_or_else(|| {
                        format!("associative list with keys has an element that omits key field {k:?} (and doesn't have default value)")
                    })?,
                };
                fields.push((k.clone(), v));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields.into()))
        }
    }
}

/// A list's items in order with their path elements (first occurrence of
/// a key wins), and an index by path element.
struct Items<'v> {
    order: Vec<(PathElement, &'v Value)>,
    by_element: BTreeMap<PathElement, usize>,
    /// Every item of a key that appears more than once.
    duplicates: BTreeMap<PathElement, Vec<Value>>,
}

impl<'v> Items<'v> {
    fn get(&self, pe: &PathElement) -> Option<&'v Value> {
        self.by_element.get(pe).map(|&i| self.order[i].1)
    }

    /// The items of a duplicated key, as one value.
    fn group(&self, pe: &PathElement) -> Option<Value> {
        self.duplicates.get(pe).map(|g| Value::Array(g.clone()))
    }
}

impl<'v> std::ops::Deref for Items<'v> {
    type Target = [(PathElement, &'v Value)];
    fn deref(&self) -> &Self::Target {
        &self.order
    }
}

fn index_items<'v>(keys: &Option<Vec<String>>, items: &'v [Value]) -> Result<Items<'v>, String> {
    let mut out = Items {
        order: Vec::with_capacity(items.len()),
        by_element: BTreeMap::new(),
        duplicates: BTreeMap::new(),
    };
    for (i, item) in items.iter().enumerate() {
        let pe = item_element(keys, i, item)?;
        match out.by_element.get(&pe) {
            Some(&first) => out
                .duplicates
                .entry(pe)
                .or_insert_with(|| vec![out.order[first].1.clone()])
                .push(item.clone()),
            None => {
                out.by_element.insert(pe.clone(), out.order.len());
                out.order.push((pe, item));
            }
        }
    }
    Ok(out)
}

fn path_string(path: &[PathElement]) -> String {
    super::path::PathDisplay(path).to_string()
}

/// The set of fields `v` specifies (`ToFieldSet`): every leaf, every list
/// item, every key of a map, and every field whose value is `null` or an
/// empty map (not the other declared fields of a struct). An item whose key
/// appears more than once is owned as a whole, without its fields.
pub(crate) fn to_field_set(v: &Value, ty: TypeRef<'_>) -> Result<Set, String> {
    let mut set = Set::new();
    field_set_walk(v, ty, &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn field_set_walk(
    v: &Value,
    ty: TypeRef<'_>,
    path: &mut Vec<PathElement>,
    set: &mut Set,
) -> Result<(), String> {
    match node(ty, Some(v)) {
        Node::Leaf => set.insert(path),
        Node::Map(ty) => {
            if let Value::Object(m) = v {
                for (k, val) in m {
                    path.push(PathElement::field(k));
                    field_set_walk(val, ty.field(k), path, set)?;
                    let empty = val.is_null() || val.as_object().is_some_and(Map::is_empty);
                    if empty || !ty.has_field(k) {
                        set.insert(path);
                    }
                    path.pop();
                }
            }
        }
        Node::List(items_ty, keys) => {
            if let Value::Array(items) = v {
                let mut elements = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    elements.push(
                        item_element(&keys, i, item)
                            .map_err(|e| format!("{}: {e}", path_string(path)))?,
                    );
                }
                let duplicated = duplicated(&elements);
                for (pe, item) in elements.into_iter().zip(items) {
                    let dup = duplicated.contains(&pe);
                    path.push(pe);
                    if !dup {
                        field_set_walk(item, items_ty, path, set)?;
                    }
                    set.insert(path);
                    path.pop();
                }
            }
        }
    }
    Ok(())
}

/// The path elements that appear more than once.
fn duplicated(elements: &[PathElement]) -> std::collections::BTreeSet<PathElement> {
    let mut seen = std::collections::BTreeSet::new();
    let mut dups = std::collections::BTreeSet::new();
    for pe in elements {
        if !seen.insert(pe) {
            dups.insert(pe.clone());
        }
    }
    dups
}

/// The schema errors of an applied configuration, as structured-merge-diff
/// reports them (`.spec.foo: field not declared in schema`).
pub(crate) fn validate(v: &Value, ty: TypeRef<'_>) -> Vec<String> {
    let mut errs = Vec::new();
    validate_walk(v, ty, &mut Vec::new(), &mut errs);
    errs
}

/// structured-merge-diff's `ValidationErrors.Error()`: one error as it is,
/// several as `errors:` and one indented line each.
pub(crate) fn validation_message(errs: &[String]) -> String {
    if errs.len() == 1 {
        return errs[0].clone();
    }
    let mut lines = vec!["errors:".to_string()];
    lines.extend(errs.iter().map(|e| format!("  {e}")));
    lines.join("\n")
}

fn validate_walk(v: &Value, ty: TypeRef<'_>, path: &mut Vec<PathElement>, errs: &mut Vec<String>) {
    // structured-merge-diff validates every value, atomic or not; `null`
    // is a valid value of any type.
    if v.is_null() {
        return;
    }
    let at = |msg: String| {
        if path.is_empty() {
            msg
        } else {
            format!("{}: {msg}", path_string(path))
        }
    };
    match ty.shape() {
        Shape::Scalar => {
            if let Some(msg) = scalar_error(ty, v) {
                errs.push(at(msg));
            }
        }
        Shape::Untyped => {
            // A deduced value: a map's fields are deduced too.
            if let Value::Object(m) = v {
                for (k, val) in m {
                    path.push(PathElement::field(k));
                    validate_walk(val, ty.field(k), path, errs);
                    path.pop();
                }
            }
        }
        Shape::Struct | Shape::Map => {
            let Value::Object(m) = v else {
                errs.push(at(format!("expected map, got {}", unstructured_v(v))));
                return;
            };
            let is_struct = ty.shape() == Shape::Struct && !ty.preserves_unknown_fields();
            for (k, val) in m {
                path.push(PathElement::field(k));
                if is_struct && !ty.has_field(k) {
                    // structured-merge-diff stops at the first one.
                    errs.push(format!(
                        "{}: field not declared in schema",
                        path_string(path)
                    ));
                    path.pop();
                    break;
                }
                validate_walk(val, ty.field(k), path, errs);
                path.pop();
            }
        }
        Shape::List => {
            let Value::Array(items) = v else {
                errs.push(at(format!("expected list, got {}", unstructured_v(v))));
                return;
            };
            let items_ty = ty.items();
            let keys = list_relationship(ty);
            let mut seen: Vec<PathElement> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let pe = match &keys {
                    // Atomic lists are walked by index.
                    None => PathElement::Index(i as i64),
                    Some(keys) => match item_element(keys, i, item) {
                        Ok(pe) => {
                            if seen.contains(&pe) {
                                errs.push(format!(
                                    "{}: duplicate entries for key {pe}",
                                    path_string(path)
                                ));
                                continue;
                            }
                            seen.push(pe.clone());
                            pe
                        }
                        Err(e) => {
                            errs.push(format!("{}: element {i}: {e}", path_string(path)));
                            continue;
                        }
                    },
                };
                path.push(pe);
                validate_walk(item, items_ty, path, errs);
                path.pop();
            }
        }
    }
}

/// structured-merge-diff's `validateScalar` for a value of a scalar
/// field: numbers, strings and booleans must be what the schema says; an
/// int-or-string takes any scalar. The texts are Go's `%T`, `%#v` and `%v`
/// of its unstructured value wrapper.
fn scalar_error(ty: TypeRef<'_>, v: &Value) -> Option<String> {
    let scalar = matches!(v, Value::Bool(_) | Value::Number(_) | Value::String(_));
    let declared = ty
        .resolved()
        .filter(|s| !s.int_or_string)
        .and_then(|s| s.type_.as_deref());
    match declared {
        Some("integer" | "number") if !v.is_number() => Some(format!(
            "expected numeric (int or float), got {}",
            gofmt::go_type(v)
        )),
        Some("string") if !v.is_string() => Some(format!(
            "expected string, got &value.valueUnstructured{{Value:{}}}",
            gofmt::go_sharp_v(v)
        )),
        Some("boolean") if !v.is_boolean() => {
            Some(format!("expected boolean, got {}", unstructured_v(v)))
        }
        Some("integer" | "number" | "string" | "boolean") => None,
        _ if !scalar => Some(format!("expected any scalar, got {}", unstructured_v(v))),
        _ => None,
    }
}

/// `%v` of structured-merge-diff's `*valueUnstructured` holding `v`.
fn unstructured_v(v: &Value) -> String {
    format!("&{{{}}}", gofmt::go_v(v))
}

/// The paths of the atomic lists, maps and structs `v` sets (kube's
/// MutatingAdmissionPolicy `findAtomics`): list items are indexed by
/// position, whatever the list's keys.
pub(crate) fn find_atomics(v: &Value, ty: TypeRef<'_>) -> Vec<String> {
    let mut out = Vec::new();
    atomics_walk(v, ty, &mut String::new(), &mut out);
    out
}

fn atomics_walk(v: &Value, ty: TypeRef<'_>, path: &mut String, out: &mut Vec<String>) {
    match (v, ty.shape()) {
        (Value::Object(m), Shape::Struct | Shape::Map | Shape::Untyped) => {
            if ty.shape() != Shape::Untyped && ty.map_type() == Some("atomic") {
                out.push(path.clone());
            }
            let is_struct = ty.shape() == Shape::Struct;
            for (k, val) in m {
                if is_struct && !ty.has_field(k) {
                    continue;
                }
                let len = path.len();
                path.push('.');
                path.push_str(k);
                atomics_walk(val, ty.field(k), path, out);
                path.truncate(len);
            }
        }
        (Value::Array(items), Shape::List | Shape::Untyped) => {
            if ty.shape() == Shape::Untyped || list_relationship(ty).is_none() {
                out.push(path.clone());
            }
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                atomics_walk(item, ty.items(), path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// What changed from `lhs` to `rhs` (`Compare`).
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    /// The comparison without `ignored` and everything below it.
    pub(crate) fn excluding(self, ignored: &Set) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(ignored),
            modified: self.modified.recursive_difference(ignored),
            removed: self.removed.recursive_difference(ignored),
        }
    }
}

/// Compare two objects of the same schema.
pub(crate) fn compare(lhs: &Value, rhs: &Value, ty: TypeRef<'_>) -> Result<Comparison, String> {
    let mut c = Comparison::default();
    compare_walk(Some(lhs), Some(rhs), ty, &mut Vec::new(), &mut c)?;
    Ok(c)
}

fn leaf_rule(l: Option<&Value>, r: Option<&Value>, path: &[PathElement], c: &mut Comparison) {
    match (l, r) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(a), Some(b)) if a != b => c.modified.insert(path),
        _ => {}
    }
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

fn compare_walk(
    l: Option<&Value>,
    r: Option<&Value>,
    ty: TypeRef<'_>,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) -> Result<(), String> {
    let kind = node(ty, r.or(l));
    let promote = is_empty_container(l) && is_empty_container(r);
    match kind {
        Node::Leaf => leaf_rule(l, r, path, c),
        _ if promote => leaf_rule(l, r, path, c),
        Node::Map(ty) => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            for (k, lv) in lm.into_iter().flatten() {
                path.push(PathElement::field(k));
                compare_walk(Some(lv), rm.and_then(|m| m.get(k)), ty.field(k), path, c)?;
                path.pop();
            }
            for (k, rv) in rm.into_iter().flatten() {
                if lm.is_some_and(|m| m.contains_key(k)) {
                    continue;
                }
                path.push(PathElement::field(k));
                compare_walk(None, Some(rv), ty.field(k), path, c)?;
                path.pop();
            }
            container_rule(l, r, path, c);
        }
        Node::List(items_ty, keys) => {
            let la = index_items(
                &keys,
                l.and_then(Value::as_array).map_or(&[], Vec::as_slice),
            )?;
            let ra = index_items(
                &keys,
                r.and_then(Value::as_array).map_or(&[], Vec::as_slice),
            )?;
            for (pe, lv) in la.iter() {
                path.push(pe.clone());
                if la.duplicates.contains_key(pe) || ra.duplicates.contains_key(pe) {
                    // Items of a duplicated key compare as one leaf.
                    let l = la.group(pe).unwrap_or_else(|| (*lv).clone());
                    let r = ra.group(pe).or_else(|| ra.get(pe).cloned());
                    leaf_rule(Some(&l), r.as_ref(), path, c);
                } else {
                    compare_walk(Some(lv), ra.get(pe), items_ty, path, c)?;
                }
                path.pop();
            }
            for (pe, rv) in ra.iter() {
                if la.get(pe).is_none() {
                    path.push(pe.clone());
                    if ra.duplicates.contains_key(pe) {
                        c.added.insert(path);
                    } else {
                        compare_walk(None, Some(rv), items_ty, path, c)?;
                    }
                    path.pop();
                }
            }
            container_rule(l, r, path, c);
        }
    }
    Ok(())
}

/// A container that appears or disappears is itself added or removed.
fn container_rule(l: Option<&Value>, r: Option<&Value>, path: &[PathElement], c: &mut Comparison) {
    if l.is_none() {
        c.added.insert(path);
    } else if r.is_none() {
        c.removed.insert(path);
    }
}

/// Merge an applied configuration into the live object (`Merge`, keep the
/// right-hand side): no field is removed, the configuration's leaves win,
/// associative lists merge by key in structured-merge-diff's order.
pub(crate) fn merge(live: &Value, config: &Value, ty: TypeRef<'_>) -> Result<Value, String> {
    Ok(merge_walk(Some(live), Some(config), ty, &mut Vec::new())?.unwrap_or(Value::Null))
}

fn merge_walk(
    l: Option<&Value>,
    r: Option<&Value>,
    ty: TypeRef<'_>,
    path: &mut Vec<PathElement>,
) -> Result<Option<Value>, String> {
    let kind = node(ty, r.or(l));
    let promote = is_empty_container(l) && is_empty_container(r);
    match kind {
        Node::Leaf => Ok(r.or(l).cloned()),
        _ if promote => Ok(r.or(l).cloned()),
        Node::Map(ty) => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let mut out = Map::new();
            for (k, lv) in lm.into_iter().flatten() {
                path.push(PathElement::field(k));
                if let Some(v) = merge_walk(Some(lv), rm.and_then(|m| m.get(k)), ty.field(k), path)?
                {
                    out.insert(k.clone(), v);
                }
                path.pop();
            }
            for (k, rv) in rm.into_iter().flatten() {
                if lm.is_some_and(|m| m.contains_key(k)) {
                    continue;
                }
                path.push(PathElement::field(k));
                if let Some(v) = merge_walk(None, Some(rv), ty.field(k), path)? {
                    out.insert(k.clone(), v);
                }
                path.pop();
            }
            Ok(Some(Value::Object(out)))
        }
        Node::List(items_ty, keys) => {
            let la = index_items(
                &keys,
                l.and_then(Value::as_array).map_or(&[], Vec::as_slice),
            )
            .map_err(|e| format!("{}: {e}", path_string(path)))?;
            let ra = index_items(
                &keys,
                r.and_then(Value::as_array).map_or(&[], Vec::as_slice),
            )
            .map_err(|e| format!("{}: {e}", path_string(path)))?;
            let mut out = Vec::with_capacity(la.len().max(ra.len()));
            let mut item = |pe: &PathElement,
                            lv: Option<&Value>,
                            rv: Option<&Value>,
                            out: &mut Vec<Value>|
             -> Result<(), String> {
                // A duplicated key merges as one leaf: the configuration's
                // items if it names the key, else every live item.
                let group = match rv {
                    Some(_) => ra.duplicates.get(pe),
                    None => la.duplicates.get(pe),
                };
                if let Some(group) = group {
                    out.extend(group.iter().cloned());
                    return Ok(());
                }
                if lv.is_some() && rv.is_some() && la.duplicates.contains_key(pe) {
                    out.extend(rv.cloned());
                    return Ok(());
                }
                path.push(pe.clone());
                let merged = merge_walk(lv, rv, items_ty, path)?;
                path.pop();
                out.extend(merged);
                Ok(())
            };
            // structured-merge-diff's order: the configuration's order for
            // the items it names, live-only items kept where they were.
            let mut shared = ra
                .iter()
                .filter(|(pe, _)| la.get(pe).is_some())
                .map(|(pe, _)| pe.clone());
            let mut next_shared = shared.next();
            let (mut li, mut ri) = (0, 0);
            while li < la.len() || ri < ra.len() {
                if li < la.len() && ri < ra.len() {
                    let (lpe, lv) = &la[li];
                    if *lpe == ra[ri].0 {
                        item(lpe, Some(lv), Some(ra[ri].1), &mut out)?;
                        li += 1;
                        ri += 1;
                        next_shared = shared.next();
                        continue;
                    }
                    if ra.get(lpe).is_some() && next_shared.as_ref().is_some_and(|n| n != lpe) {
                        li += 1;
                        continue;
                    }
                }
                if li < la.len() {
                    let (lpe, lv) = &la[li];
                    if ra.get(lpe).is_none() {
                        item(lpe, Some(lv), None, &mut out)?;
                        li += 1;
                        continue;
                    }
                }
                if ri < ra.len() {
                    let (rpe, rv) = &ra[ri];
                    item(rpe, la.get(rpe), Some(rv), &mut out)?;
                    ri += 1;
                    if next_shared.as_ref() == Some(rpe) {
                        next_shared = shared.next();
                    }
                }
            }
            Ok(Some(Value::Array(out)))
        }
    }
}

/// `v` without the members of `set` (`RemoveItems`): a member field or list
/// item goes with everything below it. A map or list that the removal
/// empties is dropped, as kube's typed encoding omits empty ones.
pub(crate) fn remove_items(v: &Value, set: &Set, ty: TypeRef<'_>) -> Value {
    if set.is_empty() {
        return v.clone();
    }
    match node(ty, Some(v)) {
        Node::Leaf => v.clone(),
        Node::Map(ty) => {
            let Value::Object(m) = v else {
                return v.clone();
            };
            let mut out = Map::new();
            for (k, val) in m {
                let pe = PathElement::field(k);
                if set.has_member(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(sub) => {
                        let fty = ty.field(k);
                        let kept = remove_items(val, sub, fty);
                        if emptied(val, &kept, fty) {
                            continue;
                        }
                        out.insert(k.clone(), kept);
                    }
                    None => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            Value::Object(out)
        }
        Node::List(items_ty, keys) => {
            let Value::Array(items) = v else {
                return v.clone();
            };
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let Ok(pe) = item_element(&keys, i, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has_member(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(sub) => out.push(remove_items(item, sub, items_ty)),
                    None => out.push(item.clone()),
                }
            }
            Value::Array(out)
        }
    }
}

/// A map or list that removal made empty.
fn emptied(before: &Value, after: &Value, ty: TypeRef<'_>) -> bool {
    let container = matches!(ty.shape(), Shape::Map | Shape::List | Shape::Untyped);
    container && !is_empty_container(Some(before)) && is_empty_container(Some(after))
}

/// `set` with the declared struct fields that have members below them made
/// members too (`EnsureNamedFieldsAreMembers`): pruning then removes a
/// struct an applier stopped specifying instead of leaving `{}` behind.
pub(crate) fn ensure_named_fields(set: &Set, ty: TypeRef<'_>) -> Set {
    let mut out = set.clone();
    for p in set.paths() {
        let mut t = ty;
        for depth in 0..p.len().saturating_sub(1) {
            match &p[depth] {
                PathElement::Field(name) => {
                    if t.shape() == Shape::Struct && t.has_field(name) {
                        out.insert(&p[..=depth]);
                    }
                    t = t.field(name);
                }
                _ => t = t.items(),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;

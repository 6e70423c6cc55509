//! CatalogSnapshot definitions → OpenAPI v3 `components.schemas`.

use std::collections::BTreeSet;

use keelson_registry::{CatalogSnapshot, Schema};
use serde_json::{json, Map, Value};

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// `#/components/schemas/<name>`.
pub fn ref_to(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// The definitions reachable from `roots` (inclusive), sorted.
pub fn reachable(c: &CatalogSnapshot, roots: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<String> = roots.into_iter().collect();
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(s) = c.definition(&name) {
            let mut refs = Vec::new();
            collect_refs(s, &mut refs);
            stack.extend(refs.into_iter().filter(|r| !seen.contains(r)));
        }
    }
    seen.retain(|n| c.definition(n).is_some());
    seen
}

fn collect_refs(s: &Schema, out: &mut Vec<String>) {
    if let Some(r) = &s.reference {
        out.push(r.clone());
    }
    for p in s.properties.values() {
        collect_refs(p, out);
    }
    for child in [&s.items, &s.additional_properties].into_iter().flatten() {
        collect_refs(child, out);
    }
}

/// The definition `name` is a custom resource's kind: its nodes carry the
/// CRD's `x-kubernetes-preserve-unknown-fields` as kube's builder publishes
/// them (built-in definitions never do).
fn is_custom_kind(c: &CatalogSnapshot, name: &str) -> bool {
    c.resources()
        .iter()
        .any(|r| r.custom.is_some() && r.definition == name)
}

/// One top-level definition in OpenAPI v3 form.
pub fn definition(c: &CatalogSnapshot, name: &str, s: &Schema) -> Value {
    let custom = is_custom_kind(c, name);
    let mut m = node(c, s, custom);
    if name == QUANTITY {
        m.insert(
            "oneOf".into(),
            json!([{"type": "string"}, {"type": "number"}]),
        );
    }
    if !s.gvk.is_empty() {
        let gvks: Vec<Value> = s
            .gvk
            .iter()
            .map(|g| json!({"group": g.group, "kind": g.kind, "version": g.version}))
            .collect();
        m.insert("x-kubernetes-group-version-kind".into(), Value::Array(gvks));
    }
    Value::Object(m)
}

fn is_object_def(c: &CatalogSnapshot, name: &str) -> bool {
    c.definition(name)
        .is_some_and(|d| d.type_.as_deref() == Some("object"))
}

/// A property or item: references become `allOf` + description + default,
/// the way kube-apiserver writes struct-typed fields.
fn child(c: &CatalogSnapshot, s: &Schema, custom: bool) -> Value {
    let Some(target) = &s.reference else {
        return Value::Object(node(c, s, custom));
    };
    let mut m = Map::new();
    let wrap = s.description.is_some() || is_object_def(c, target);
    if !wrap {
        m.extend(as_map(ref_to(target)));
        extensions(s, &mut m);
        return Value::Object(m);
    }
    m.insert("allOf".into(), json!([ref_to(target)]));
    if is_object_def(c, target) {
        m.insert("default".into(), json!({}));
    }
    if let Some(d) = &s.description {
        m.insert("description".into(), json!(d));
    }
    extensions(s, &mut m);
    Value::Object(m)
}

fn as_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// One schema node; `custom`: a node of a custom resource's schema.
fn node(c: &CatalogSnapshot, s: &Schema, custom: bool) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(d) = &s.description {
        m.insert("description".into(), json!(d));
    }
    if s.int_or_string {
        m.insert(
            "oneOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
        m.insert("format".into(), json!("int-or-string"));
        m.insert("x-kubernetes-int-or-string".into(), json!(true));
    } else {
        if let Some(t) = &s.type_ {
            m.insert("type".into(), json!(t));
        }
        if let Some(f) = &s.format {
            m.insert("format".into(), json!(f));
        }
    }
    if let Some(items) = &s.items {
        m.insert("items".into(), child(c, items, custom));
    }
    if let Some(ap) = &s.additional_properties {
        m.insert("additionalProperties".into(), child(c, ap, custom));
    }
    if !s.properties.is_empty() {
        let props: Map<String, Value> = s
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), child(c, v, custom)))
            .collect();
        m.insert("properties".into(), Value::Object(props));
    }
    if !s.required.is_empty() {
        m.insert("required".into(), json!(s.required));
    }
    if !s.enum_values.is_empty() {
        m.insert("enum".into(), json!(s.enum_values));
    }
    if let Some(r) = &s.reference {
        m.insert("allOf".into(), json!([ref_to(r)]));
    }
    extensions(s, &mut m);
    if custom && s.preserve_unknown_fields {
        m.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
    }
    m
}

fn extensions(s: &Schema, m: &mut Map<String, Value>) {
    if !s.list_map_keys.is_empty() {
        m.insert("x-kubernetes-list-map-keys".into(), json!(s.list_map_keys));
    }
    let pairs = [
        ("x-kubernetes-list-type", &s.list_type),
        ("x-kubernetes-map-type", &s.map_type),
        ("x-kubernetes-patch-merge-key", &s.patch_merge_key),
        ("x-kubernetes-patch-strategy", &s.patch_strategy),
    ];
    for (k, v) in pairs {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
}

//! Upstream JSON-schema node → catalog [`Schema`].
//!
//! Upstream writes nullable types as `["string","null"]`, references as
//! `#/$defs/<name>`, int-or-string as a `oneOf` of string and integer, and
//! adds `enum: [<apiVersion>]` / `enum: [<Kind>]` to top-level `apiVersion`
//! and `kind` properties (an artefact of the JSON-schema export that
//! kube-apiserver's own OpenAPI does not have; dropped here).

use keelson_registry::{GroupVersionKind, Schema};
use serde_json::Value;

/// Definitions whose Go type holds arbitrary JSON objects. Upstream types
/// them as a bare `object`; the catalog says explicitly that any field is
/// accepted (an empty Go struct such as `CustomResourceSubresourceStatus`
/// looks the same upstream but accepts no fields, hence a list, not a rule).
pub const FREE_FORM: [&str; 3] = [
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
];

/// Normalise one top-level definition called `name`.
pub fn normalize_definition(name: &str, node: &Value) -> Schema {
    let mut s = normalize(node);
    if FREE_FORM.contains(&name) {
        s.preserve_unknown_fields = true;
    }
    for field in ["apiVersion", "kind"] {
        if let Some(p) = s.properties.get_mut(field) {
            p.enum_values.clear();
        }
    }
    s.gvk = node
        .get("x-kubernetes-group-version-kind")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|g| GroupVersionKind {
                    group: str_of(g, "group").unwrap_or_default(),
                    version: str_of(g, "version").unwrap_or_default(),
                    kind: str_of(g, "kind").unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    s
}

fn normalize(node: &Value) -> Schema {
    let mut s = Schema {
        type_: single_type(node.get("type")),
        format: str_of(node, "format"),
        description: str_of(node, "description"),
        reference: str_of(node, "$ref").map(|r| r.trim_start_matches("#/$defs/").to_owned()),
        required: strings(node.get("required")),
        enum_values: node
            .get("enum")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter(|v| !v.is_null()).cloned().collect())
            .unwrap_or_default(),
        list_type: str_of(node, "x-kubernetes-list-type"),
        list_map_keys: strings(node.get("x-kubernetes-list-map-keys")),
        patch_merge_key: str_of(node, "x-kubernetes-patch-merge-key"),
        patch_strategy: str_of(node, "x-kubernetes-patch-strategy"),
        map_type: str_of(node, "x-kubernetes-map-type"),
        int_or_string: node
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        preserve_unknown_fields: node
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Schema::default()
    };
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        s.properties = props
            .iter()
            .map(|(k, v)| (k.clone(), normalize(v)))
            .collect();
    }
    if let Some(items) = node.get("items").filter(|v| v.is_object()) {
        s.items = Some(Box::new(normalize(items)));
    }
    if let Some(ap) = node.get("additionalProperties").filter(|v| v.is_object()) {
        s.additional_properties = Some(Box::new(normalize(ap)));
    }
    if let Some(one_of) = node.get("oneOf").and_then(Value::as_array) {
        let mut types: Vec<String> = one_of
            .iter()
            .filter_map(|o| single_type(o.get("type")))
            .collect();
        types.sort();
        if types == ["integer", "string"] {
            s.int_or_string = true;
        }
        // Any other oneOf (Quantity: string | number) stays untyped.
        s.type_ = None;
    }
    if s.int_or_string {
        s.type_ = None;
    }
    s
}

/// `"string"` or `["string","null"]` → `string`; anything else → `None`.
fn single_type(t: Option<&Value>) -> Option<String> {
    match t? {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => {
            let non_null: Vec<&str> = a
                .iter()
                .filter_map(Value::as_str)
                .filter(|s| *s != "null")
                .collect();
            match non_null.as_slice() {
                [one] => Some((*one).to_owned()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

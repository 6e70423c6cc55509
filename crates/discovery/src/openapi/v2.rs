//! `/openapi/v2`: one Swagger 2.0 document of every served resource,
//! derived from the OpenAPI v3 generation (the same `paths` and
//! definitions, rewritten into Swagger 2.0 form the way kube-apiserver
//! writes it):
//!
//! - `#/components/schemas/X` references become `#/definitions/X`;
//! - a `requestBody` becomes a first `body` parameter, its media types the
//!   operation's `consumes` (`*/*` except for PATCH);
//! - response `content` becomes a `schema`, its media types `produces`;
//! - parameters carry `type` inline instead of a `schema`;
//! - every operation gets `schemes: [https]`;
//! - schema constructs Swagger 2.0 lacks are dropped: `oneOf` (Quantity and
//!   IntOrString become `type: string`), and `allOf: [$ref]` wrappers
//!   become a `$ref` with a description, with no `default`.
//!
//! Every parameter is written inline: kube factors common ones into a
//! top-level `parameters` section and refers to them with `$ref`.

use std::collections::BTreeSet;

use keelson_registry::CatalogSnapshot;
use serde_json::{json, Map, Value};

use super::{doc_parts, schemas};
use crate::version::GIT_VERSION;

const V3_REF: &str = "#/components/schemas/";
const V2_REF: &str = "#/definitions/";
const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const GVK: &str = "x-kubernetes-group-version-kind";

/// kube's order of the PATCH media types in `consumes`.
const PATCH_ORDER: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// kube's order of the response media types in `produces`.
const PRODUCES_ORDER: [&str; 5] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// The Swagger 2.0 document of `c`.
pub fn document(c: &CatalogSnapshot) -> Value {
    let mut paths = Map::new();
    let mut roots = BTreeSet::new();
    for (_, doc_paths, refs) in doc_parts(c) {
        roots.extend(refs);
        for (p, item) in doc_paths {
            paths.insert(p, path_item(&item));
        }
    }
    sort_map(&mut paths);
    let definitions: Map<String, Value> = schemas::reachable(c, roots)
        .into_iter()
        .filter_map(|n| {
            c.definition(&n)
                .map(|s| (n.clone(), definition(&schemas::definition(c, &n, s))))
        })
        .collect();
    json!({
        "definitions": definitions,
        "info": {"title": "Kubernetes", "version": GIT_VERSION},
        "paths": paths,
        "security": [{"BearerToken": []}],
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey"
            }
        },
        "swagger": "2.0"
    })
}

fn sort_map(m: &mut Map<String, Value>) {
    let mut entries: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    m.extend(entries);
}

fn path_item(v3: &Value) -> Value {
    let mut out = Map::new();
    let Some(m) = v3.as_object() else {
        return Value::Object(out);
    };
    for (k, v) in m {
        let converted = match k.as_str() {
            "parameters" => {
                Value::Array(v.as_array().into_iter().flatten().map(parameter).collect())
            }
            "get" | "put" | "post" | "delete" | "options" | "head" | "patch" => operation(v),
            _ => continue,
        };
        out.insert(k.clone(), converted);
    }
    sort_map(&mut out);
    Value::Object(out)
}

fn operation(v3: &Value) -> Value {
    let mut out = Map::new();
    let mut params = Vec::new();
    let mut consumes = vec!["*/*".to_owned()];
    if let Some(body) = v3.get("requestBody") {
        let content = body.get("content").and_then(Value::as_object);
        let types: Vec<&str> = content
            .map(|c| c.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if types.iter().any(|t| t.contains("patch")) {
            consumes = PATCH_ORDER
                .iter()
                .filter(|t| types.contains(t))
                .map(|t| (*t).to_owned())
                .collect();
        }
        let body_schema = content
            .and_then(|c| c.values().next())
            .and_then(|m| m.get("schema"))
            .map(schema)
            .unwrap_or_else(|| json!({}));
        let mut p = Map::new();
        p.insert("in".into(), json!("body"));
        p.insert("name".into(), json!("body"));
        if body.get("required") == Some(&Value::Bool(true)) {
            p.insert("required".into(), json!(true));
        }
        p.insert("schema".into(), body_schema);
        params.push(Value::Object(p));
    }
    params.extend(
        v3.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(parameter),
    );
    let mut produces: BTreeSet<&str> = BTreeSet::new();
    let mut responses = Map::new();
    for (code, r) in v3
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let mut resp = Map::new();
        resp.insert(
            "description".into(),
            r.get("description").cloned().unwrap_or_else(|| json!("")),
        );
        if let Some(content) = r.get("content").and_then(Value::as_object) {
            produces.extend(content.keys().map(String::as_str));
            if let Some(s) = content.values().next().and_then(|m| m.get("schema")) {
                resp.insert("schema".into(), schema(s));
            }
        }
        responses.insert(code.clone(), Value::Object(resp));
    }
    out.insert("consumes".into(), json!(consumes));
    for k in ["description", "operationId"] {
        if let Some(v) = v3.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    let produces: Vec<&str> = PRODUCES_ORDER
        .iter()
        .copied()
        .filter(|t| produces.contains(t))
        .chain(
            produces
                .iter()
                .copied()
                .filter(|t| !PRODUCES_ORDER.contains(t)),
        )
        .collect();
    out.insert("produces".into(), json!(produces));
    out.insert("responses".into(), Value::Object(responses));
    out.insert("schemes".into(), json!(["https"]));
    if let Some(t) = v3.get("tags") {
        out.insert("tags".into(), t.clone());
    }
    if let Some(m) = v3.as_object() {
        for (k, v) in m.iter().filter(|(k, _)| k.starts_with("x-")) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// A v3 query or path parameter (`schema: {type, uniqueItems}`) in v2
/// form (`type`, `uniqueItems` inline).
fn parameter(v3: &Value) -> Value {
    let mut out = Map::new();
    for k in ["description", "in", "name", "required"] {
        if let Some(v) = v3.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if let Some(s) = v3.get("schema").and_then(Value::as_object) {
        for (k, v) in s {
            out.insert(k.clone(), v.clone());
        }
    }
    sort_map(&mut out);
    Value::Object(out)
}

/// Keys of a Swagger 2.0 Schema Object (besides `x-` extensions).
const SCHEMA_KEYS: [&str; 28] = [
    "$ref",
    "format",
    "title",
    "description",
    "default",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "enum",
    "additionalProperties",
    "type",
    "items",
    "allOf",
    "properties",
    "discriminator",
    "readOnly",
    "example",
];

/// `x-kubernetes-preserve-unknown-fields: true` (only custom resources'
/// nodes carry it).
fn preserves_unknown(m: &Map<String, Value>) -> bool {
    m.get(PRESERVE).and_then(Value::as_bool) == Some(true)
}

/// A top-level definition in Swagger 2.0 form. A custom resource kind
/// whose root preserves unknown fields is published as kube's
/// apiextensions builder does for kubectl's client-side validation: only
/// `type: object` and its group-version-kind, no properties at all (not
/// even `apiVersion`, `kind`, `metadata`), so nothing is an unknown field.
fn definition(v3: &Value) -> Value {
    if let Some(m) = v3.as_object().filter(|m| preserves_unknown(m)) {
        if let Some(gvk) = m.get(GVK) {
            let mut out = Map::new();
            out.insert("type".into(), json!("object"));
            out.insert(GVK.into(), gvk.clone());
            return Value::Object(out);
        }
    }
    schema(v3)
}

/// A v3 schema in Swagger 2.0 form. A node that preserves unknown fields
/// loses its `properties`, `items` and `type: object` (apiextensions'
/// `ToStructuralOpenAPIV2`), and an array left without `items` its type.
pub(crate) fn schema(v3: &Value) -> Value {
    let Some(m) = v3.as_object() else {
        return v3.clone();
    };
    let preserve = preserves_unknown(m);
    let mut out = Map::new();
    // `allOf: [{$ref}]` (a described or defaulted reference) → `$ref`.
    let single_ref = m
        .get("allOf")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 1)
        .and_then(|a| a[0].get("$ref"))
        .and_then(Value::as_str);
    for (k, v) in m {
        let converted = match k.as_str() {
            "$ref" => json!(v2_ref(v.as_str().unwrap_or_default())),
            "allOf" if single_ref.is_some() => continue,
            "properties" | "items" if preserve => continue,
            "type" if preserve && v.as_str() == Some("object") => continue,
            "default" if single_ref.is_some() => continue,
            "allOf" => Value::Array(v.as_array().into_iter().flatten().map(schema).collect()),
            "items" => schema(v),
            "additionalProperties" if v.is_object() => schema(v),
            "properties" => Value::Object(
                v.as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, p)| (name.clone(), schema(p)))
                    .collect(),
            ),
            k if k.starts_with("x-") || SCHEMA_KEYS.contains(&k) => v.clone(),
            // `oneOf`, `anyOf`, `nullable`, ...: not Swagger 2.0.
            _ => continue,
        };
        out.insert(k.clone(), converted);
    }
    if let Some(r) = single_ref {
        out.insert("$ref".into(), json!(v2_ref(r)));
    }
    if out.get("type").and_then(Value::as_str) == Some("array") && !out.contains_key("items") {
        out.remove("type");
    }
    // Quantity and IntOrString (`oneOf` of integer/number and string).
    if m.contains_key("oneOf") && !out.contains_key("type") {
        out.insert("type".into(), json!("string"));
    }
    sort_map(&mut out);
    Value::Object(out)
}

fn v2_ref(r: &str) -> String {
    match r.strip_prefix(V3_REF) {
        Some(name) => format!("{V2_REF}{name}"),
        None => r.to_owned(),
    }
}

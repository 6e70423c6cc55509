//! Required fields from the schema (`required` lists), reported with kube's
//! validation paths (`spec.containers[0].name: Required value`).
//!
//! Go cannot tell a missing string or list from an empty one, so `""` and
//! `[]` count as missing. A missing required struct is validated as `{}`
//! (Go's zero struct), so its own required fields are reported instead.
//! `metadata` (validated by `objectmeta`) and `status` are skipped.

use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use crate::registry::Schema;
use crate::schema::{resolve, Definitions, Shape};

const MAX_DEPTH: usize = 64;

/// Required-field errors of `obj` against its root schema.
pub(crate) fn required_fields(
    defs: &dyn Definitions,
    root: &Schema,
    obj: &Value,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let r = resolve(defs, root);
    if let Value::Object(m) = obj {
        let top: Map<String, Value> = m
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let required: Vec<&String> = r
            .schema
            .required
            .iter()
            .filter(|k| !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind"))
            .collect();
        struct_fields(defs, r.schema, &required, &top, "", &mut errs, 0);
    }
    errs
}

fn is_missing(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn struct_fields(
    defs: &dyn Definitions,
    schema: &Schema,
    required: &[&String],
    m: &Map<String, Value>,
    path: &str,
    errs: &mut Vec<FieldError>,
    depth: usize,
) {
    let empty = Value::Object(Map::new());
    for key in required {
        if !is_missing(m.get(key.as_str())) {
            continue;
        }
        let Some(child) = schema.properties.get(key.as_str()) else {
            continue;
        };
        if resolve(defs, child).shape() == Shape::Struct {
            node(defs, child, &empty, &join(path, key), errs, depth + 1);
        } else {
            errs.push(FieldError::required(&join(path, key), ""));
        }
    }
    for (k, v) in m {
        // A pod spec's volume sources report their required fields
        // themselves, at kube's paths (`persistentDisk.pdName`,
        // `downwardAPI.path` without an index, `projected.path`, ...).
        if k == "volumes" {
            continue;
        }
        if let Some(child) = schema.properties.get(k) {
            node(defs, child, v, &join(path, k), errs, depth + 1);
        }
    }
}

fn node(
    defs: &dyn Definitions,
    schema: &Schema,
    v: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let r = resolve(defs, schema);
    match (r.shape(), v) {
        (Shape::Struct, Value::Object(m)) => {
            let required: Vec<&String> = r.schema.required.iter().collect();
            struct_fields(defs, r.schema, &required, m, path, errs, depth);
        }
        (Shape::Array, Value::Array(items)) => {
            if let Some(item_schema) = r.schema.items.as_deref() {
                for (i, item) in items.iter().enumerate() {
                    node(
                        defs,
                        item_schema,
                        item,
                        &format!("{path}[{i}]"),
                        errs,
                        depth + 1,
                    );
                }
            }
        }
        (Shape::Map, Value::Object(m)) => {
            if let Some(value_schema) = r.schema.additional_properties.as_deref() {
                for (k, item) in m {
                    node(
                        defs,
                        value_schema,
                        item,
                        &format!("{path}[{k}]"),
                        errs,
                        depth + 1,
                    );
                }
            }
        }
        _ => {}
    }
}

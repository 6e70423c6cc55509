//! kube's ValidatingAdmissionPolicy type checker (`validating/
//! typechecking.go`): the kinds a policy's `matchConstraints` name exactly
//! (no wildcard group or version; wildcard and subresource resources
//! skipped; at most 10) are resolved through the catalog to their schemas,
//! and each validation's `expression` and `messageExpression` is checked
//! with `object`/`oldObject` typed by each kind's schema (and `params` by
//! the paramKind's). The issues become `status.typeChecking
//! .expressionWarnings`; type checking never changes what a policy does.

use std::collections::BTreeSet;

use keelson_cel::expr::Type;
use keelson_registry::{CatalogSnapshot, Schema};
use serde_json::{json, Map, Value};

use super::compile::{Decls, PolicyCompiler};

/// kube's `maxTypesToCheck`.
const MAX_TYPES: usize = 10;
/// How deep references are followed (recursive definitions end as dyn).
const MAX_DEPTH: usize = 32;

/// A group/version/kind, ordered as kube sorts them.
type Gvk = (String, String, String);

/// The `expressionWarnings` of `policy` (`{fieldRef, warning}` objects).
pub(crate) fn warnings(policy: &Value, catalog: &CatalogSnapshot) -> Vec<Value> {
    let spec = policy.get("spec").unwrap_or(&Value::Null);
    let kinds: Vec<(Gvk, Type)> = types_to_check(spec, catalog)
        .into_iter()
        .filter_map(|gvk| {
            let t = schema_type(catalog, &gvk)?;
            Some((gvk, t))
        })
        .collect();
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = param_gvk(spec).and_then(|gvk| schema_type(catalog, &gvk));
    let compilers: Vec<(String, PolicyCompiler)> = kinds
        .into_iter()
        .map(|(gvk, object)| {
            let decls = Decls {
                has_params: params.is_some(),
                object,
                params: params.clone().unwrap_or_else(Type::dynamic),
                authorizer_only: true,
            };
            let mut c = PolicyCompiler::new(&decls, true);
            for v in list(spec, "variables") {
                let _ = c.add_variable(str_of(v, "name"), str_of(v, "expression"));
            }
            (gvk_string(&gvk), c)
        })
        .collect();
    let check = |src: &str| -> Option<String> {
        let found: Vec<String> = compilers
            .iter()
            .filter_map(|(gvk, c)| c.type_check(src, true).map(|i| format!("{gvk}: {i}\n")))
            .collect();
        (!found.is_empty()).then(|| found.join("\n"))
    };
    let mut out = Vec::new();
    for (i, v) in list(spec, "validations").iter().enumerate() {
        if let Some(w) = check(str_of(v, "expression")) {
            out.push(
                json!({"fieldRef": format!("spec.validations[{i}].expression"), "warning": w}),
            );
        }
        let me = str_of(v, "messageExpression");
        if me.is_empty() {
            continue;
        }
        if let Some(w) = check(me) {
            out.push(
                json!({"fieldRef": format!("spec.validations[{i}].messageExpression"), "warning": w}),
            );
        }
    }
    out
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn strings<'a>(v: &'a Value, k: &str) -> Vec<&'a str> {
    list(v, k).iter().filter_map(Value::as_str).collect()
}

/// kube's `GroupVersionKind.String()`: `apps/v1, Kind=Deployment`.
fn gvk_string((g, v, k): &Gvk) -> String {
    format!("{g}/{v}, Kind={k}")
}

/// kube's `typesToCheck`.
fn types_to_check(spec: &Value, catalog: &CatalogSnapshot) -> Vec<Gvk> {
    let rules = spec
        .get("matchConstraints")
        .map(|m| list(m, "resourceRules"))
        .unwrap_or(&[]);
    let mut gvks: BTreeSet<Gvk> = BTreeSet::new();
    for rule in rules {
        let mut groups = strings(rule, "apiGroups");
        let mut versions = strings(rule, "apiVersions");
        if groups.iter().any(|g| g.contains('*')) || versions.iter().any(|v| v.contains('*')) {
            continue;
        }
        let mut resources: Vec<&str> = strings(rule, "resources")
            .into_iter()
            .filter(|r| !r.contains(['*', '/']))
            .collect();
        groups.sort();
        versions.sort();
        resources.sort();
        let mut count = 0;
        for g in &groups {
            for v in &versions {
                for r in &resources {
                    if let Some(info) = catalog.lookup(g, v, r) {
                        gvks.insert((g.to_string(), v.to_string(), info.kind.clone()));
                        count += 1;
                        if count == MAX_TYPES {
                            return gvks.into_iter().collect();
                        }
                    }
                }
            }
        }
    }
    gvks.into_iter().collect()
}

/// The paramKind's group/version/kind.
fn param_gvk(spec: &Value) -> Option<Gvk> {
    let pk = spec.get("paramKind")?;
    let api_version = str_of(pk, "apiVersion");
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    Some((
        group.to_string(),
        version.to_string(),
        str_of(pk, "kind").to_string(),
    ))
}

/// The kind's schema as a CEL type (a resource root).
fn schema_type(catalog: &CatalogSnapshot, (g, v, k): &Gvk) -> Option<Type> {
    let info = catalog.lookup_kind(g, v, k)?;
    let def = catalog.definition(&info.definition)?;
    Some(Type::from_schema(&to_json(catalog, def, 0), true))
}

/// The catalog's schema node as an OpenAPI v3 schema, references
/// followed.
fn to_json(catalog: &CatalogSnapshot, s: &Schema, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return json!({"x-kubernetes-preserve-unknown-fields": true});
    }
    let s = catalog.resolve(s);
    let mut m = Map::new();
    if s.int_or_string {
        m.insert("x-kubernetes-int-or-string".into(), true.into());
        return Value::Object(m);
    }
    if let Some(t) = &s.type_ {
        m.insert("type".into(), t.clone().into());
    }
    if let Some(f) = &s.format {
        m.insert("format".into(), f.clone().into());
    }
    if !s.properties.is_empty() {
        let props: Map<String, Value> = s
            .properties
            .iter()
            .map(|(k, p)| (k.clone(), to_json(catalog, p, depth + 1)))
            .collect();
        m.insert("properties".into(), Value::Object(props));
    }
    if let Some(i) = &s.items {
        m.insert("items".into(), to_json(catalog, i, depth + 1));
    }
    if let Some(a) = &s.additional_properties {
        m.insert(
            "additionalProperties".into(),
            to_json(catalog, a, depth + 1),
        );
    }
    if let Some(l) = &s.list_type {
        m.insert("x-kubernetes-list-type".into(), l.clone().into());
    }
    if !s.list_map_keys.is_empty() {
        m.insert(
            "x-kubernetes-list-map-keys".into(),
            s.list_map_keys.clone().into(),
        );
    }
    if let Some(t) = &s.map_type {
        m.insert("x-kubernetes-map-type".into(), t.clone().into());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(validations: Value) -> Value {
        json!({"spec": {
            "matchConstraints": {"resourceRules": [
                {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments", "deployments/scale"]}
            ]},
            "validations": validations,
        }})
    }

    #[test]
    fn undefined_fields_of_the_matched_kind_are_warned() {
        let catalog = CatalogSnapshot::builtin();
        let p = policy(json!([
            {"expression": "object.spec.replicas > 1 && object.metadata.labels.size() > 0"},
            {"expression": "object.spec.foo == 'x'", "messageExpression": "object.spec.bar"},
        ]));
        let w = warnings(&p, catalog);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(w[0]["fieldRef"], "spec.validations[1].expression");
        assert_eq!(
            w[0]["warning"],
            "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'foo'\n | object.spec.foo == 'x'\n | ...........^\n"
        );
        assert_eq!(w[1]["fieldRef"], "spec.validations[1].messageExpression");
    }

    #[test]
    fn wildcards_are_not_checked() {
        let catalog = CatalogSnapshot::builtin();
        let mut p = policy(json!([{"expression": "object.spec.foo == 'x'"}]));
        p["spec"]["matchConstraints"]["resourceRules"][0]["apiGroups"] = json!(["*"]);
        assert!(warnings(&p, catalog).is_empty());
    }
}

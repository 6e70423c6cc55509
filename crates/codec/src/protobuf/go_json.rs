//! An object's JSON as kube-apiserver writes it: what Go's `encoding/json`
//! makes of the typed struct the JSON decodes into.
//!
//! kube-apiserver never echoes a client's JSON: it decodes into the kind's
//! Go struct and encodes that, so its answers have the struct's field order
//! and every field that Go writes even when zero (a value field without
//! `omitempty`: `status.replicas` of a ReplicationController, the counters
//! of a DaemonSet status, `resources: {}` of a container, the template's
//! `creationTimestamp: null`). Clients generated from the OpenAPI reject
//! objects without the fields they require, and clients that compare bodies
//! byte for byte need the order. This walk reproduces both from the
//! Protobuf schema data, which knows the Go declaration order and which
//! fields are values, pointers or `omitempty` (see [`super::schema`]).
//!
//! Go's `encoding/json` writes every map with its keys sorted (bytewise),
//! so the fields whose Go type is a map (`labels`, `annotations`, a
//! ConfigMap's `data`, `matchLabels`, a `ResourceList`, ...) have their
//! keys sorted here, while struct fields keep their declaration order. An
//! object of a kind without a message (a custom resource) is what kube
//! serves as `unstructured.Unstructured`, a `map[string]interface{}`: its
//! keys are sorted at every level, `metadata` (and `managedFields`'
//! `fieldsV1`) included.
//!
//! Unlike a Protobuf round trip it keeps what the schema does not know
//! (written after the known fields, in the order given) and never fails:
//! a value of the wrong shape is left as it is, for validation to judge.

use serde_json::{Map, Value};

use super::schema::{
    Field, MsgId, Scalar, Schema, Special, Ty, INLINE, MAP, OMITEMPTY, REPEATED, VALUE,
};
use super::transcode::{is_zero, zero};

/// Rewrite an object in kube's JSON form: a built-in object (one with
/// `apiVersion` and `kind` naming a message) in its Go struct's form, any
/// other object with `apiVersion` and `kind` (a custom resource) with its
/// keys sorted at every level, as kube writes an unstructured object.
/// Anything without type meta is left unchanged.
pub fn normalize(object: &mut Value) {
    let s = Schema::get();
    let id = {
        let (Some(av), Some(kind)) = (
            object.get("apiVersion").and_then(Value::as_str),
            object.get("kind").and_then(Value::as_str),
        ) else {
            return;
        };
        match s.kind(av, kind) {
            Some(id) => id,
            None => {
                object.sort_all_objects();
                return;
            }
        }
    };
    // The message has no type meta: Go's `TypeMeta` is inlined first,
    // `kind` then `apiVersion`.
    let Value::Object(input) = object else { return };
    let mut input = std::mem::take(input);
    let mut out = Map::with_capacity(input.len() + 4);
    for k in ["kind", "apiVersion"] {
        if let Some(v) = input.remove(k) {
            out.insert(k.to_string(), v);
        }
    }
    fields(s, id, &mut input, &mut out, 0);
    out.extend(input);
    *object = Value::Object(out);
}

/// Deeper than any built-in kind nests (a JSONSchemaProps tree is raw).
const MAX_DEPTH: u32 = 64;

/// Normalize `v` as message `id`.
fn message(s: &Schema, id: MsgId, v: &mut Value, depth: u32) {
    if depth > MAX_DEPTH || s.messages[id].special != Special::None {
        return;
    }
    let Value::Object(input) = v else { return };
    let mut input = std::mem::take(input);
    let mut out = Map::with_capacity(input.len() + 4);
    fields(s, id, &mut input, &mut out, depth);
    // What the schema does not know keeps its place after the known fields.
    out.extend(input);
    *v = Value::Object(out);
}

/// Move message `id`'s fields from `input` to `out` in declaration order
/// (inline fields flatten into the same map).
fn fields(
    s: &Schema,
    id: MsgId,
    input: &mut Map<String, Value>,
    out: &mut Map<String, Value>,
    depth: u32,
) {
    for f in &s.messages[id].fields {
        if f.has(INLINE) {
            if let Ty::Message(sub) = f.ty {
                fields(s, sub, input, out, depth + 1);
            }
            continue;
        }
        match input.remove(&*f.json) {
            Some(v) => {
                if let Some(v) = present(s, f, v, depth) {
                    out.insert(f.json.to_string(), v);
                }
            }
            None => {
                if let Some(v) = absent(s, f, depth) {
                    out.insert(f.json.to_string(), v);
                }
            }
        }
    }
}

/// A field the object has: normalized, or `None` when Go leaves it out.
fn present(s: &Schema, f: &Field, mut v: Value, depth: u32) -> Option<Value> {
    if v.is_null() {
        // Decoding `null` leaves a field at its zero value.
        return absent(s, f, depth);
    }
    if f.has(OMITEMPTY) && empty_collection(f, &v) {
        // `omitempty` leaves out a map or slice of length 0 (an empty
        // `labels: {}`, `finalizers: []`, a `[]byte` of `""`), nil or not.
        return None;
    }
    match f.ty {
        Ty::Message(sub) if f.has(MAP) => {
            if let Value::Object(m) = &mut v {
                for item in m.values_mut() {
                    message(s, sub, item, depth + 1);
                }
                // A Go map: written with its keys sorted.
                m.sort_keys();
            }
        }
        Ty::Message(sub) if f.has(REPEATED) => {
            if let Value::Array(items) = &mut v {
                for item in items {
                    message(s, sub, item, depth + 1);
                }
            }
        }
        Ty::Message(sub) => message(s, sub, &mut v, depth + 1),
        Ty::Scalar(_) if f.has(MAP) => {
            if let Value::Object(m) = &mut v {
                m.sort_keys();
            }
        }
        Ty::Scalar(_) if f.has(REPEATED) => {}
        Ty::Scalar(_) => {
            if f.has(VALUE) && f.has(OMITEMPTY) && is_zero(&v) {
                return None;
            }
        }
    }
    Some(v)
}

/// Whether `v` decodes into a Go map or slice of length 0.
fn empty_collection(f: &Field, v: &Value) -> bool {
    match v {
        Value::Object(m) => f.has(MAP) && m.is_empty(),
        Value::Array(a) => f.has(REPEATED) && a.is_empty(),
        Value::String(b) => {
            matches!(f.ty, Ty::Scalar(Scalar::Bytes)) && !f.has(REPEATED) && b.is_empty()
        }
        _ => false,
    }
}

/// What Go writes for a field the object does not have.
fn absent(s: &Schema, f: &Field, depth: u32) -> Option<Value> {
    if f.has(MAP) || f.has(REPEATED) {
        // A nil map or slice.
        return (!f.has(OMITEMPTY)).then_some(Value::Null);
    }
    match f.ty {
        Ty::Scalar(sc) => {
            if !f.has(VALUE) || f.has(OMITEMPTY) || sc == Scalar::Bytes {
                return None;
            }
            Some(zero(sc))
        }
        // A Go struct is always written, zero or not (`omitempty` does not
        // apply to structs); a zero `Time` is `null`.
        Ty::Message(sub) if f.has(VALUE) => Some(zero_message(s, sub, depth + 1)),
        // A nil pointer.
        Ty::Message(_) => (!f.has(OMITEMPTY)).then_some(Value::Null),
    }
}

/// The JSON of a zero Go struct.
fn zero_message(s: &Schema, id: MsgId, depth: u32) -> Value {
    match s.messages[id].special {
        Special::None => {
            let mut v = Value::Object(Map::new());
            message(s, id, &mut v, depth);
            v
        }
        Special::Quantity => Value::String("0".into()),
        Special::IntOrString => Value::from(0),
        Special::Duration => Value::String("0s".into()),
        Special::StringArray => Value::Null,
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn normalized(mut v: Value) -> Value {
        normalize(&mut v);
        v
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    #[test]
    fn type_meta_then_declaration_order() {
        let v = normalized(json!({
            "data": {"b": "2", "a": "1"},
            "metadata": {"resourceVersion": "5", "name": "c", "uid": "u", "namespace": "d"},
            "apiVersion": "v1",
            "kind": "ConfigMap",
        }));
        assert_eq!(keys(&v), ["kind", "apiVersion", "metadata", "data"]);
        assert_eq!(
            keys(&v["metadata"]),
            [
                "name",
                "namespace",
                "uid",
                "resourceVersion",
                "creationTimestamp"
            ]
        );
        // A Go map is written with its keys sorted.
        assert_eq!(keys(&v["data"]), ["a", "b"]);
    }

    #[test]
    fn go_values_are_written_when_zero() {
        let v = normalized(json!({
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc"},
            "spec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
            "status": {},
        }));
        assert_eq!(v["status"], json!({"replicas": 0}));
        assert_eq!(
            v["spec"]["template"]["metadata"]["creationTimestamp"],
            Value::Null
        );
        assert!(v["spec"]["template"]["metadata"]
            .as_object()
            .is_some_and(|m| m.contains_key("creationTimestamp")));
        assert_eq!(
            v["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({})
        );
        let ds = normalized(json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}, "status": {}
        }));
        assert_eq!(
            ds["status"],
            json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0})
        );
    }

    #[test]
    fn omitempty_zero_values_are_left_out_and_unknown_fields_kept() {
        let v = normalized(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "generateName": ""},
            "spec": {"containers": [{"name": "c", "image": "i"}], "x-unknown": 1},
        }));
        assert!(!v["metadata"]
            .as_object()
            .is_some_and(|m| m.contains_key("generateName")));
        assert_eq!(v["spec"]["x-unknown"], json!(1));
        assert_eq!(v["status"], json!({}));
    }

    #[test]
    fn empty_omitempty_maps_and_slices_are_left_out() {
        let v = normalized(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [], "env": [],
                "resources": {"limits": {}, "requests": {}}}], "volumes": [], "nodeSelector": {}},
        }));
        assert_eq!(keys(&v["metadata"]), ["name", "creationTimestamp"]);
        // `containers` has no `omitempty`: Go writes an empty slice as `[]`.
        assert_eq!(
            v["spec"]["containers"][0],
            json!({"name": "c", "image": "i", "resources": {}})
        );
        assert!(v["spec"].get("volumes").is_none() && v["spec"].get("nodeSelector").is_none());
        let pod = normalized(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": []}}),
        );
        assert_eq!(pod["spec"]["containers"], json!([]));
        let secret = normalized(
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"k": ""}, "stringData": {}}),
        );
        assert_eq!(secret["data"], json!({"k": ""}));
        assert!(secret.get("stringData").is_none());
        // A wrong shape stays for validation to report.
        let odd = normalized(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": []}),
        );
        assert_eq!(odd["data"], json!([]));
    }

    #[test]
    fn go_maps_are_sorted_struct_fields_are_not() {
        let v = normalized(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": {"z": "1", "a": "2", "B": "3"},
                "annotations": {"y": "", "x": ""}},
            "spec": {
                "selector": {"matchLabels": {"z": "1", "a": "2"}},
                "template": {"metadata": {"labels": {"z": "1", "a": "2"}}, "spec": {
                    "nodeSelector": {"b": "", "a": ""},
                    "containers": [{"name": "c", "image": "i",
                        "resources": {"requests": {"memory": "1Gi", "cpu": "1"}}}]}},
            },
        }));
        assert_eq!(keys(&v["metadata"]["labels"]), ["B", "a", "z"]);
        assert_eq!(keys(&v["metadata"]["annotations"]), ["x", "y"]);
        assert_eq!(keys(&v["spec"]["selector"]["matchLabels"]), ["a", "z"]);
        let t = &v["spec"]["template"];
        assert_eq!(keys(&t["metadata"]["labels"]), ["a", "z"]);
        assert_eq!(keys(&t["spec"]["nodeSelector"]), ["a", "b"]);
        assert_eq!(
            keys(&t["spec"]["containers"][0]["resources"]["requests"]),
            ["cpu", "memory"]
        );
        // The struct keeps Go's order, not the alphabet's.
        assert_eq!(keys(&v)[..3], ["kind", "apiVersion", "metadata"]);
        assert_eq!(keys(&v["metadata"])[..2], ["name", "creationTimestamp"]);
        let svc = normalized(json!({"apiVersion": "v1", "kind": "Service",
            "spec": {"selector": {"b": "", "a": ""}}}));
        assert_eq!(keys(&svc["spec"]["selector"]), ["a", "b"]);
    }

    #[test]
    fn custom_resources_are_sorted_at_every_level_and_odd_shapes_left_alone() {
        let cr = json!({"kind": "Widget", "apiVersion": "example.com/v1", "spec": {"z": {"b": 1, "a": [{"y": 1, "x": 2}]}, "a": 2},
            "metadata": {"name": "w", "labels": {"b": "", "a": ""}, "managedFields": [{"fieldsV1": {"f:spec": {}, "f:metadata": {}}}]}});
        let v = normalized(cr);
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"labels":{"a":"","b":""},"managedFields":[{"fieldsV1":{"f:metadata":{},"f:spec":{}}}],"name":"w"},"spec":{"a":2,"z":{"a":[{"x":2,"y":1}],"b":1}}}"#
        );
        let untyped = json!({"z": 1, "a": 2});
        assert_eq!(keys(&normalized(untyped.clone())), keys(&untyped));
        let odd = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x", "data": [1]});
        assert_eq!(normalized(odd.clone())["metadata"], odd["metadata"]);
    }

    #[test]
    fn idempotent() {
        let once = normalized(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": [{"name": "c"}]}}},
        }));
        assert_eq!(
            serde_json::to_string(&normalized(once.clone())).unwrap(),
            serde_json::to_string(&once).unwrap()
        );
    }
}

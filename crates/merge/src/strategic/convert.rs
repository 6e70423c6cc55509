//! The typed round trip kube-apiserver's patch handler makes after a
//! strategic merge (`applyPatchToObject`): the merged map is converted
//! into the kind's Go struct by `runtime.DefaultUnstructuredConverter`,
//! whose first type mismatch is answered as
//! `422 "" is invalid: patch: Invalid value: "<patch as %+v>": <error>`.
//!
//! Only the converter's own reflection paths are modelled (structs, maps,
//! slices, Go's scalar conversions); types with their own JSON decoding
//! (`Quantity`, `IntOrString`, `Time`, `RawExtension`, ...) are left to
//! admission's decoder.

use keelson_apimachinery::{ApiError, FieldError};
use serde_json::{Map, Value};

use super::gofmt;
use crate::schema::{Shape, TypeRef};

/// Definitions with a custom `UnmarshalJSON` (the converter hands them to
/// it instead of reflecting).
const CUSTOM_DECODED: [&str; 8] = [
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
];

/// kube's answer when `merged` does not convert into the kind `ty`
/// describes; `patch` is the decoded patch body, quoted as Go's `%+v`.
pub(super) fn check(
    merged: &Map<String, Value>,
    patch: &Map<String, Value>,
    ty: TypeRef<'_>,
) -> Result<(), ApiError> {
    match struct_from(merged, ty, 0) {
        Ok(()) => Ok(()),
        Err(detail) => Err(ApiError::invalid(
            "",
            "",
            "",
            &[FieldError::invalid("patch", gofmt::v_map(patch), &detail)],
        )),
    }
}

/// Go's `reflect.Kind` name of a decoded JSON value.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Object(_) => "map",
        Value::Array(_) => "slice",
    }
}

/// Deeper than any built-in kind nests: stop rather than recurse forever.
const MAX_DEPTH: usize = 64;

fn struct_from(m: &Map<String, Value>, ty: TypeRef<'_>, depth: usize) -> Result<(), String> {
    for name in ty.field_names() {
        if let Some(v) = m.get(name) {
            value_from(v, ty.field(name), depth + 1)?;
        }
    }
    Ok(())
}

fn value_from(v: &Value, ty: TypeRef<'_>, depth: usize) -> Result<(), String> {
    if v.is_null() || depth > MAX_DEPTH {
        return Ok(());
    }
    if ty.reference().is_some_and(|r| CUSTOM_DECODED.contains(&r)) {
        return Ok(());
    }
    let Some(s) = ty.resolved() else {
        return Ok(());
    };
    if s.int_or_string {
        return Ok(());
    }
    match ty.shape() {
        Shape::Untyped => Ok(()),
        Shape::Struct => match v {
            Value::Object(m) => struct_from(m, ty, depth),
            other => Err(format!("cannot restore struct from: {}", kind(other))),
        },
        Shape::Map => match v {
            Value::Object(m) => {
                let values = ty.field("");
                m.values()
                    .try_for_each(|x| value_from(x, values, depth + 1))
            }
            other => Err(format!("cannot restore map from {}", kind(other))),
        },
        Shape::List => match v {
            Value::Array(l) => {
                let items = ty.items();
                l.iter().try_for_each(|x| value_from(x, items, depth + 1))
            }
            other => Err(format!("cannot restore slice from {}", kind(other))),
        },
        Shape::Scalar => scalar(v, s.type_.as_deref(), s.format.as_deref()),
    }
}

/// Go's assignment and conversion rules between a decoded JSON scalar and
/// a struct field's basic type.
fn scalar(v: &Value, type_: Option<&str>, format: Option<&str>) -> Result<(), String> {
    let dst = match (type_, format) {
        // `[]byte` is decoded from its base64 string.
        (Some("string"), Some("byte")) => {
            return match v {
                Value::String(_) => Ok(()),
                other => Err(format!("cannot restore slice from {}", kind(other))),
            }
        }
        (Some("string"), _) => "string",
        (Some("boolean"), _) => "bool",
        (Some("integer"), Some("int32")) => "int32",
        (Some("integer"), _) => "int64",
        (Some("number"), Some("float")) => "float32",
        (Some("number"), _) => "float64",
        _ => return Ok(()),
    };
    let numeric = |d: &str| d.starts_with("int") || d.starts_with("float");
    let src = kind(v);
    let ok = match src {
        "string" | "bool" => src == dst,
        "int64" => numeric(dst),
        "float64" => {
            dst.starts_with("float") || (numeric(dst) && v.as_f64().is_some_and(|f| f == f.trunc()))
        }
        _ => false,
    };
    if ok {
        return Ok(());
    }
    // Integers convert to strings in Go (as runes) and floats to integers:
    // the converter refuses those conversions by name; the others are
    // not convertible at all and reach its `unrecognized type`.
    let convertible =
        matches!((src, dst), ("int64", "string")) || (src == "float64" && numeric(dst));
    if convertible {
        Err(format!("cannot convert {src} to {dst}"))
    } else {
        Err(format!("unrecognized type: {dst}"))
    }
}

#[cfg(test)]
mod tests {
    use keelson_registry::CatalogSnapshot;
    use serde_json::json;

    use super::*;

    fn detail(kind: &str, api_version: &str, merged: Value) -> Option<String> {
        let ty = TypeRef::for_kind(CatalogSnapshot::builtin(), api_version, kind);
        let m = merged.as_object().cloned().unwrap_or_default();
        struct_from(&m, ty, 0).err()
    }

    #[test]
    fn the_converters_errors() {
        let cm = |v| detail("ConfigMap", "v1", v);
        assert_eq!(
            cm(json!({"metadata": {"labels": "invalid"}})).as_deref(),
            Some("cannot restore map from string")
        );
        assert_eq!(
            cm(json!({"metadata": "x"})).as_deref(),
            Some("cannot restore struct from: string")
        );
        assert_eq!(
            cm(json!({"metadata": {"finalizers": {"a": 1}}})).as_deref(),
            Some("cannot restore slice from map")
        );
        assert_eq!(
            cm(json!({"data": {"a": 1}})).as_deref(),
            Some("cannot convert int64 to string")
        );
        assert_eq!(
            cm(json!({"data": {"a": true}})).as_deref(),
            Some("unrecognized type: string")
        );
        assert_eq!(
            cm(json!({"immutable": "yes"})).as_deref(),
            Some("unrecognized type: bool")
        );
        assert_eq!(
            cm(json!({"binaryData": {"a": 5}})).as_deref(),
            Some("cannot restore slice from int64")
        );
        assert_eq!(
            cm(json!({"data": {"a": "b"}, "metadata": {"labels": {"x": "y"}}})),
            None
        );
        let d = |v| detail("Deployment", "apps/v1", v);
        assert_eq!(
            d(json!({"spec": {"replicas": 1.5}})).as_deref(),
            Some("cannot convert float64 to int32")
        );
        assert_eq!(d(json!({"spec": {"replicas": 2.0}})), None);
        assert_eq!(
            d(json!({"spec": {"replicas": "2"}})).as_deref(),
            Some("unrecognized type: int32")
        );
        // Custom decoders are not the converter's.
        assert_eq!(
            d(json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": true}}}})),
            None
        );
    }

    #[test]
    fn answered_as_kube_quotes_the_patch() {
        let ty = TypeRef::for_kind(CatalogSnapshot::builtin(), "v1", "ConfigMap");
        let patch = json!({"metadata": {"labels": "invalid"}});
        let p = patch.as_object().cloned().unwrap_or_default();
        let e = check(&p, &p, ty).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            " \"\" is invalid: patch: Invalid value: \"map[metadata:map[labels:invalid]]\": cannot restore map from string"
        );
    }
}

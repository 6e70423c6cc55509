//! Request bodies to objects (JSON, YAML, Kubernetes Protobuf, CBOR), with
//! kube-apiserver's `400` wording for a
//! body that does not parse (`the object provided is unrecognized ...`).
//! Strictness about unknown and duplicate fields is admission's
//! (`fieldValidation`); this only parses.

use keelson_apimachinery::ApiError;
use serde_json::Value;

use crate::format::Encoding;

/// kube's `summarizeData(body, 30)` in decode errors: `<empty>`, the first
/// 30 bytes of a body that starts with `{`, else those bytes in hex; ` ...`
/// when cut.
pub fn summary(body: &[u8]) -> String {
    const MAX: usize = 30;
    let head = &body[..body.len().min(MAX)];
    let mut out = match body.first() {
        None => return "<empty>".to_string(),
        Some(b'{') => String::from_utf8_lossy(head).into_owned(),
        Some(_) => head.iter().map(|b| format!("{b:02x}")).collect(),
    };
    if body.len() > MAX {
        out.push_str(" ...");
    }
    out
}

/// Decode a request body in `encoding` (as [`negotiate_input`] chose) into
/// the object it stands for; `kind` is the resource's kind, for the error.
///
/// [`negotiate_input`]: crate::negotiate_input
pub fn decode_object(encoding: Encoding, body: &[u8], kind: &str) -> Result<Value, ApiError> {
    decode_object_at(encoding, body, kind, "")
}

/// [`decode_object`] for a resource served at `version` (kube names the
/// version in some CBOR errors).
pub fn decode_object_at(
    encoding: Encoding,
    body: &[u8],
    kind: &str,
    version: &str,
) -> Result<Value, ApiError> {
    match encoding {
        Encoding::Json => decode_json(body, kind),
        Encoding::Yaml => {
            let value: Value = serde_yaml::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "the object provided is unrecognized (must be of type {}): {} ({})",
                    kind,
                    e,
                    summary(body)
                ))
            })?;
            interpret(&value).map_err(|e| unrecognized(kind, &e, body))?;
            Ok(value)
        }
        Encoding::Protobuf => crate::protobuf::decode_request(body, kind),
        Encoding::Cbor => crate::cbor::decode_request(body, kind, version),
    }
}

/// kube's `400` for a body whose type meta cannot be read.
fn unrecognized(kind: &str, e: &dyn std::fmt::Display, body: &[u8]) -> ApiError {
    ApiError::bad_request(format!(
        "the object provided is unrecognized (must be of type {kind}): {e} ({})",
        summary(body)
    ))
}

/// A JSON body: Go's syntax check first (its words), then the value and its
/// type meta.
fn decode_json(body: &[u8], kind: &str) -> Result<Value, ApiError> {
    let parse_error =
        |e: &dyn std::fmt::Display| format!("couldn't get version/kind; json parse error: {e}");
    keelson_apimachinery::go_syntax::check_valid(body)
        .map_err(|e| unrecognized(kind, &parse_error(&e), body))?;
    let value: Value =
        serde_json::from_slice(body).map_err(|e| unrecognized(kind, &parse_error(&e), body))?;
    interpret(&value).map_err(|e| unrecognized(kind, &e, body))?;
    Ok(value)
}

/// The type of a JSON value as Go's `UnmarshalTypeError` names it.
fn go_value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// kube's `SimpleMetaFactory.Interpret`: `apiVersion` and `kind` read with
/// `json.Unmarshal` into an anonymous struct (so a wrong type names
/// `Go struct field .kind`), then the group version parsed.
fn interpret(value: &Value) -> Result<(), String> {
    const FIND_KIND: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;
    let map = match value {
        Value::Object(map) => map,
        Value::Null => return Ok(()),
        other => {
            return Err(format!(
                "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type {FIND_KIND}",
                go_value_kind(other)
            ))
        }
    };
    let mut api_version = "";
    for (key, v) in map {
        // encoding/json matches field names case-insensitively.
        let field = if key.eq_ignore_ascii_case("apiVersion") {
            "apiVersion"
        } else if key.eq_ignore_ascii_case("kind") {
            "kind"
        } else {
            continue;
        };
        match v {
            Value::Null => {}
            Value::String(s) => {
                if field == "apiVersion" {
                    api_version = s;
                }
            }
            other => {
                return Err(format!(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go struct field .{field} of type string",
                    go_value_kind(other)
                ))
            }
        }
    }
    // schema.ParseGroupVersion
    if api_version != "/" && api_version.matches('/').count() > 1 {
        return Err(format!("unexpected GroupVersion string: {api_version}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_yaml_bodies() {
        assert_eq!(
            decode_object(Encoding::Json, br#"{"a":1}"#, "Pod").unwrap(),
            json!({"a": 1})
        );
        assert_eq!(
            decode_object(Encoding::Yaml, b"a: 1\n", "Pod").unwrap(),
            json!({"a": 1})
        );
    }

    #[test]
    fn unrecognized_bodies_wording() {
        let e = decode_object(
            Encoding::Json,
            b"{\"metadata\": {\"name\": \"a very long name\"",
            "ConfigMap",
        )
        .unwrap_err();
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"metadata\": {\"name\": \"a very  ...)"
        );
        let cases: [(&[u8], &str); 7] = [
            (b"", "couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)"),
            (b"x", "couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value (78)"),
            (b"{\"kind\":\"ConfigMap\"} x", "couldn't get version/kind; json parse error: invalid character 'x' after top-level value ({\"kind\":\"ConfigMap\"} x)"),
            (b"[]", "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (5b5d)"),
            (b"{\"apiVersion\":5}", "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({\"apiVersion\":5})"),
            (b"{\"Kind\":[]}", "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go struct field .kind of type string ({\"Kind\":[]})"),
            (b"{\"apiVersion\":\"a/b/c\"}", "unexpected GroupVersion string: a/b/c ({\"apiVersion\":\"a/b/c\"})"),
        ];
        for (body, want) in cases {
            let e = decode_object(Encoding::Json, body, "ConfigMap").unwrap_err();
            assert_eq!(
                e.message,
                format!("the object provided is unrecognized (must be of type ConfigMap): {want}")
            );
        }
        assert_eq!(
            decode_object(Encoding::Json, b"null", "ConfigMap").unwrap(),
            Value::Null
        );
        let e = decode_object(Encoding::Yaml, b"a: [", "Pod").unwrap_err();
        assert_eq!(e.code, 400);
        assert!(
            e.message
                .starts_with("the object provided is unrecognized (must be of type Pod): "),
            "{}",
            e.message
        );
        assert!(e.message.ends_with(" (613a205b)"), "{}", e.message);
        let e = decode_object(Encoding::Yaml, b"kind: [a]", "Pod").unwrap_err();
        assert_eq!(e.message, "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go struct field .kind of type string (6b696e643a205b615d)");
        assert_eq!(
            decode_object(Encoding::Protobuf, b"nope", "Pod")
                .unwrap_err()
                .code,
            400
        );
        let e = decode_object_at(Encoding::Cbor, b"", "Pod", "v1").unwrap_err();
        assert_eq!(e.code, 400);
        assert_eq!(e.message, "the object provided is unrecognized (must be of type Pod): unable to determine group/version/kind: EOF (<empty>)");
    }

    #[test]
    fn summaries_as_kube_summarizes() {
        assert_eq!(summary(b""), "<empty>");
        assert_eq!(summary(b"{short"), "{short");
        assert_eq!(summary(b"short"), "73686f7274");
        let long = format!("{{{}", "é".repeat(31));
        assert_eq!(
            summary(long.as_bytes()),
            format!("{{{}\u{fffd} ...", "é".repeat(14))
        );
        assert_eq!(summary(&[b'a'; 31]), format!("{} ...", "61".repeat(30)));
    }
}

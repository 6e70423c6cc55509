//! Request bodies to objects (JSON, YAML, Kubernetes Protobuf, CBOR), with
//! kube-apiserver's `400` wording for a
//! body that does not parse (`the object provided is unrecognized ...`).
//! Strictness about unknown and duplicate fields is admission's
//! (`fieldValidation`); this only parses.

use keelson_apimachinery::ApiError;
use serde_json::Value;

use crate::format::Encoding;

/// kube's 30-character body summary in decode errors.
pub fn summary(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(body);
    let mut out: String = s.chars().take(30).collect();
    if s.chars().count() > 30 {
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
        Encoding::Json => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json parse error: {} ({})",
                kind,
                e,
                summary(body)
            ))
        }),
        Encoding::Yaml => serde_yaml::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): {} ({})",
                kind,
                e,
                summary(body)
            ))
        }),
        Encoding::Protobuf => crate::protobuf::decode_request(body, kind),
        Encoding::Cbor => crate::cbor::decode_request(body, kind, version),
    }
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
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: EOF while parsing an object at line 1 column 40 ({\"metadata\": {\"name\": \"a very  ...)"
        );
        let e = decode_object(Encoding::Yaml, b"a: [", "Pod").unwrap_err();
        assert_eq!(e.code, 400);
        assert!(
            e.message
                .starts_with("the object provided is unrecognized (must be of type Pod): "),
            "{}",
            e.message
        );
        assert!(e.message.ends_with(" (a: [)"), "{}", e.message);
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
    fn summaries_cut_at_30_characters() {
        assert_eq!(summary(b"short"), "short");
        assert_eq!(
            summary("é".repeat(31).as_bytes()),
            format!("{} ...", "é".repeat(30))
        );
    }
}

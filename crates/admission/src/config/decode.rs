//! kube's universal decoder as the configuration files meet it: YAML or
//! JSON text, `apiVersion` and `kind` looked up in one scheme, unknown
//! fields ignored.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The kinds one scheme knows: `(apiVersion, kind)`, and the scheme's name
/// as kube's errors show it.
pub(crate) struct Scheme {
    pub name: &'static str,
    pub kinds: &'static [(&'static str, &'static str)],
}

/// The document as JSON (YAML is converted, as `sigs.k8s.io/yaml` does).
pub(crate) fn to_json(data: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(data);
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(&text)
            .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"));
    }
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_yaml::from_str(&text).map_err(|e| format!("error converting YAML to JSON: yaml: {e}"))
}

/// Decode `data` as one of `scheme`'s kinds: the document and its
/// `apiVersion`, or kube's decoding error.
pub(crate) fn typed(data: &[u8], scheme: &Scheme) -> Result<(Value, String), String> {
    let doc = to_json(data)?;
    let original = String::from_utf8_lossy(data);
    let field = |k: &str| -> Result<String, String> {
        match doc.get(k) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!(
                "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go struct field .{k} of type string",
                keelson_apimachinery::field::json_kind(other)
            )),
        }
    };
    if !doc.is_object() && !doc.is_null() {
        return Err(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            keelson_apimachinery::field::json_kind(&doc)
        ));
    }
    let (version, kind) = (field("apiVersion")?, field("kind")?);
    if kind.is_empty() {
        return Err(format!("Object 'Kind' is missing in '{original}'"));
    }
    if version.is_empty() {
        return Err(format!("Object 'apiVersion' is missing in '{original}'"));
    }
    if !scheme
        .kinds
        .iter()
        .any(|(v, k)| *v == version && *k == kind)
    {
        return Err(format!(
            "no kind {kind:?} is registered for version {version:?} in scheme {:?}",
            scheme.name
        ));
    }
    Ok((doc, version))
}

/// The document as `T` (Go's `encoding/json` into the typed struct).
pub(crate) fn fields<T: DeserializeOwned>(doc: Value) -> Result<T, String> {
    serde_json::from_value(doc).map_err(|e| format!("json: {e}"))
}

/// Whether `data` is missing its `apiVersion` or `kind`, or names a kind
/// the scheme does not know (kube's `IsMissingVersion`, `IsMissingKind`,
/// `IsNotRegisteredError`).
pub(crate) fn is_type_error(msg: &str) -> bool {
    msg.starts_with("Object 'Kind' is missing")
        || msg.starts_with("Object 'apiVersion' is missing")
        || msg.starts_with("no kind ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Scheme = Scheme {
        name: "test",
        kinds: &[("a.io/v1", "Thing")],
    };

    #[test]
    fn yaml_and_json_decode_alike() {
        let y = typed(b"apiVersion: a.io/v1\nkind: Thing\nx: 1\n", &S).unwrap();
        let j = typed(br#"{"apiVersion":"a.io/v1","kind":"Thing","x":1}"#, &S).unwrap();
        assert_eq!(y, j);
        assert_eq!(y.1, "a.io/v1");
    }

    #[test]
    fn type_errors_read_as_kube() {
        assert_eq!(
            typed(b"apiVersion: a.io/v1\n", &S).unwrap_err(),
            "Object 'Kind' is missing in 'apiVersion: a.io/v1\n'"
        );
        assert_eq!(
            typed(b"kind: Thing\n", &S).unwrap_err(),
            "Object 'apiVersion' is missing in 'kind: Thing\n'"
        );
        assert_eq!(
            typed(b"apiVersion: a.io/v2\nkind: Thing\n", &S).unwrap_err(),
            r#"no kind "Thing" is registered for version "a.io/v2" in scheme "test""#
        );
        assert!(typed(b"{nope", &S)
            .unwrap_err()
            .starts_with("couldn't get version/kind; json parse error: "));
        assert!(typed(b"a: [1\n", &S)
            .unwrap_err()
            .starts_with("error converting YAML to JSON: yaml: "));
        assert!(is_type_error(&typed(b"x: 1\n", &S).unwrap_err()));
    }
}

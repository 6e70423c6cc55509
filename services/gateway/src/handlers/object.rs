//! Request bodies as objects: decoding by Content-Type, type-meta and
//! namespace checks with kube's wording, and the URL-name check.

use bytes::Bytes;
use keelson_apimachinery::meta::{meta_mut, meta_str};
use keelson_apimachinery::{ApiError, ApiResult};
use serde_json::{Map, Value};

use super::Ctx;
use keelson_codec::{decode::decode_object, decode::decode_object_at, negotiate_input, Encoding};

pub(crate) use keelson_codec::decode::summary;

/// Decode a body by its Content-Type; the raw bytes come back for JSON
/// (duplicate-field detection).
pub(crate) fn decode_body(cx: &Ctx<'_>, body: &Bytes) -> ApiResult<(Value, Option<Vec<u8>>)> {
    let input = negotiate_input(cx.header(http::header::CONTENT_TYPE))?;
    let value = decode_object_at(input, body, &cx.info.kind, &cx.info.version)?;
    let raw = (input == Encoding::Json).then(|| body.to_vec());
    Ok((value, raw))
}

/// A body whose handler reads JSON (`DeleteOptions`, `Scale`): a
/// Kubernetes Protobuf or CBOR body (what client-go's typed clients send)
/// as the JSON of the object it carries; any other body as it is.
pub(crate) fn json_body(cx: &Ctx<'_>, body: &Bytes, kind: &str) -> ApiResult<Bytes> {
    let media_type = keelson_codec::media_type(cx.header(http::header::CONTENT_TYPE));
    let encoding = [Encoding::Protobuf, Encoding::Cbor]
        .into_iter()
        .find(|e| e.media_type() == media_type);
    let Some(encoding) = encoding.filter(|_| !body.is_empty()) else {
        return Ok(body.clone());
    };
    let value = decode_object(encoding, body, kind)?;
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Decode the body of a subresource that takes its own kind (a pod's
/// `Binding`, `Eviction`): JSON, or Protobuf/CBOR through [`json_body`];
/// `kind` and `apiVersion`, when set, must be `kind` and one of
/// `api_versions` (kube's message names the first), and a namespace, when
/// set, the request's.
pub(crate) fn decode_typed_body(
    cx: &Ctx<'_>,
    body: &Bytes,
    kind: &str,
    api_versions: &[&str],
) -> ApiResult<Value> {
    let body = json_body(cx, body, kind)?;
    let obj: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {e} ({})",
            summary(&body)
        ))
    })?;
    if !obj.is_object() {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): body is not a JSON object"
        )));
    }
    if let Some(k) = obj.get("kind").and_then(Value::as_str) {
        if !k.is_empty() && k != kind {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {kind}): object kind {k:?} does not match"
            )));
        }
    }
    if let Some(v) = obj.get("apiVersion").and_then(Value::as_str) {
        if !v.is_empty() && !api_versions.contains(&v) {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({})",
                api_versions.first().copied().unwrap_or_default()
            )));
        }
    }
    let ns = meta_str(&obj, "namespace");
    if !ns.is_empty() && ns != cx.ri.namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(obj)
}

/// Check and fill `apiVersion`, `kind` and `metadata.namespace` of a body.
pub(crate) fn prepare_object(cx: &Ctx<'_>, mut obj: Value) -> ApiResult<Value> {
    let kind = &cx.info.kind;
    let api_version = cx.info.api_version();
    let Some(map) = obj.as_object_mut() else {
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): body is not a JSON object",
            kind
        )));
    };
    match map.get("apiVersion") {
        None | Some(Value::Null) => {}
        Some(Value::String(v)) if v.is_empty() || *v == api_version => {}
        Some(Value::String(v)) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({})",
                v, api_version
            )))
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal non-string into Go struct field TypeMeta.apiVersion of type string",
                kind, cx.info.version, kind
            )))
        }
    }
    match map.get("kind") {
        None | Some(Value::Null) => {}
        Some(Value::String(k)) if k.is_empty() || k == kind => {}
        Some(Value::String(k)) => {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): object kind {:?} does not match",
                kind, k
            )))
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal non-string into Go struct field TypeMeta.kind of type string",
                kind, cx.info.version, kind
            )))
        }
    }
    map.insert("apiVersion".into(), Value::String(api_version));
    map.insert("kind".into(), Value::String(kind.clone()));
    match map.get("metadata") {
        None | Some(Value::Null) => {
            map.insert("metadata".into(), Value::Object(Map::new()));
        }
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal non-object into Go struct field {}.metadata of type v1.ObjectMeta",
                kind, cx.info.version, kind, kind
            )))
        }
    }
    let ns_in_body = meta_str(&obj, "namespace").to_string();
    if cx.info.namespaced {
        if ns_in_body.is_empty() {
            keelson_apimachinery::meta::set_meta_str(&mut obj, "namespace", &cx.ri.namespace);
        } else if ns_in_body != cx.ri.namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    } else if let Some(m) = meta_mut(&mut obj) {
        m.remove("namespace");
    }
    Ok(obj)
}

/// The body's `metadata.name` must equal the URL's.
pub(crate) fn check_name(obj: &Value, url_name: &str) -> ApiResult<()> {
    let name = meta_str(obj, "name");
    if name != url_name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({}) does not match the name on the URL ({})",
            name, url_name
        )));
    }
    Ok(())
}

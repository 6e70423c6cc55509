//! ConfigMap and Secret (`pkg/apis/core/validation`: `ValidateConfigMap*`, `ValidateSecret*`).

use base64::Engine as _;
use keelson_apimachinery::go_syntax;
use keelson_apimachinery::FieldError;
use serde_json::{Map, Value};

use super::util::{config_map_key_errors, obj_of, str_of};
use super::{Path, Write};

/// kube's `MaxSecretSize` (also the ConfigMap limit).
const MAX_SIZE: usize = 1024 * 1024;

/// The errors of one object of this group's `kind`; none for kinds
/// without rules yet.
pub(crate) fn validate(kind: &str, w: Write<'_>, obj: &Value) -> Vec<FieldError> {
    match kind {
        "ConfigMap" => {
            let mut errs = Vec::new();
            if let Some(old) = w.old() {
                errs.extend(validate_config_map_update(obj, old));
            }
            errs.extend(validate_config_map(obj));
            errs
        }
        "Secret" => {
            let mut errs = Vec::new();
            if let Some(old) = w.old() {
                errs.extend(validate_secret_update(obj, old));
            }
            errs.extend(validate_secret(obj));
            errs
        }
        _ => Vec::new(),
    }
}

fn key_errors(path: &Path, key: &str) -> Vec<FieldError> {
    config_map_key_errors(key)
        .into_iter()
        .map(|m| FieldError::invalid(path.key(key).as_str(), key, &m))
        .collect()
}

/// `ValidateConfigMap`: keys, data/binaryData overlap, total size.
fn validate_config_map(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let data = obj_of(obj, "data");
    let mut total = 0usize;
    let data_path = Path::new("data");
    for (k, v) in data.into_iter().flatten() {
        errs.extend(key_errors(&data_path, k));
        total += v.as_str().map_or(0, str::len);
    }
    let bin_path = Path::new("binaryData");
    for (k, v) in obj_of(obj, "binaryData").into_iter().flatten() {
        errs.extend(key_errors(&bin_path, k));
        if data.is_some_and(|d| d.contains_key(k)) {
            errs.push(FieldError::invalid(
                bin_path.key(k).as_str(),
                k.as_str(),
                "duplicate of key present in data",
            ));
        }
        total += decoded_len(v);
    }
    if total > MAX_SIZE {
        errs.push(FieldError::too_long(
            "",
            &format!("may not be more than {MAX_SIZE} bytes"),
        ));
    }
    errs
}

const IMMUTABLE_SET: &str = "field is immutable when `immutable` is set";

fn immutable_set(obj: &Value, old: &Value) -> bool {
    let _ = obj;
    old.get("immutable").and_then(Value::as_bool) == Some(true)
}

fn same_map(a: Option<&Value>, b: Option<&Value>) -> bool {
    let norm = |v: Option<&Value>| -> Map<String, Value> {
        v.and_then(Value::as_object).cloned().unwrap_or_default()
    };
    norm(a) == norm(b)
}

/// `ValidateConfigMapUpdate`: an immutable ConfigMap keeps its data.
fn validate_config_map_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if immutable_set(obj, old) {
        if obj.get("immutable").and_then(Value::as_bool) != Some(true) {
            errs.push(FieldError::forbidden("immutable", IMMUTABLE_SET));
        }
        if !same_map(obj.get("data"), old.get("data")) {
            errs.push(FieldError::forbidden("data", IMMUTABLE_SET));
        }
        if !same_map(obj.get("binaryData"), old.get("binaryData")) {
            errs.push(FieldError::forbidden("binaryData", IMMUTABLE_SET));
        }
    }
    errs
}

/// The bytes of a base64 `data` value (its length as text if it is not
/// base64).
fn decode(v: &Value) -> Vec<u8> {
    let s = v.as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .unwrap_or_else(|_| s.as_bytes().to_vec())
}

fn decoded_len(v: &Value) -> usize {
    decode(v).len()
}

/// The Secret's data as kube sees it after conversion: `data` decoded, with
/// `stringData` merged over it.
fn secret_data(obj: &Value) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = obj_of(obj, "data")
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), decode(v)))
        .collect();
    for (k, v) in obj_of(obj, "stringData").into_iter().flatten() {
        let bytes = v.as_str().unwrap_or("").as_bytes().to_vec();
        match out.iter_mut().find(|(key, _)| key == k) {
            Some(e) => e.1 = bytes,
            None => out.push((k.clone(), bytes)),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Go's `json.Unmarshal(b, &map[string]interface{}{})` error, if any.
fn go_json_map_error(b: &[u8]) -> Option<String> {
    match go_syntax::parse(b) {
        Ok(Value::Object(_)) | Ok(Value::Null) => None,
        Ok(v) => Some(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            keelson_apimachinery::field::json_kind(&v)
        )),
        Err(msg) => Some(msg),
    }
}

/// `ValidateSecret`: keys, total size, the per-type required keys.
fn validate_secret(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let data_path = Path::new("data");
    let data = secret_data(obj);
    let mut total = 0usize;
    for (k, v) in &data {
        errs.extend(key_errors(&data_path, k));
        total += v.len();
    }
    if total > MAX_SIZE {
        errs.push(FieldError::too_long(
            "data",
            &format!("may not be more than {MAX_SIZE} bytes"),
        ));
    }
    let get = |k: &str| data.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let required = |k: &str| FieldError::required(data_path.key(k).as_str(), "");
    match str_of(obj, "type") {
        "kubernetes.io/service-account-token" => {
            let name = obj
                .get("metadata")
                .and_then(|m| m.get("annotations"))
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                errs.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        t @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if t == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match get(key) {
                None => errs.push(required(key)),
                Some(b) => {
                    if let Some(msg) = go_json_map_error(b) {
                        errs.push(FieldError::invalid(
                            data_path.key(key).as_str(),
                            "<secret contents redacted>",
                            &msg,
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth" if get("username").is_none() && get("password").is_none() => {
            errs.push(required("username"));
            errs.push(required("password"));
        }
        "kubernetes.io/ssh-auth" if get("ssh-privatekey").is_none_or(|v| v.is_empty()) => {
            errs.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            if get("tls.crt").is_none() {
                errs.push(required("tls.crt"));
            }
            if get("tls.key").is_none() {
                errs.push(required("tls.key"));
            }
        }
        _ => {}
    }
    errs
}

/// `ValidateSecretUpdate`: `type` is immutable; an immutable Secret keeps
/// its data.
fn validate_secret_update(obj: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = |o: &Value| {
        let t = str_of(o, "type");
        Value::String(t.to_string())
    };
    let (n, o) = (ty(obj), ty(old));
    errs.extend(super::util::immutable(
        Some(&n),
        Some(&o),
        &Path::new("type"),
    ));
    if immutable_set(obj, old) {
        if obj.get("immutable").and_then(Value::as_bool) != Some(true) {
            errs.push(FieldError::forbidden("immutable", IMMUTABLE_SET));
        }
        if secret_data(obj) != secret_data(old) {
            errs.push(FieldError::forbidden("data", IMMUTABLE_SET));
        }
    }
    errs
}

//! Decoding of Kubernetes Protobuf request bodies (`application/vnd.kubernetes.protobuf`)
//! for the kinds kubectl's generator commands send that way
//! (`kubectl create namespace | configmap | secret | serviceaccount`).
//!
//! The wire types come from the `k8s-pb` crate; the conversion to JSON is
//! written here per kind because `k8s-pb` has no JSON mapping. Other kinds
//! answer `415` until the general Protobuf codec lands.
//!
//! Moved here from the gateway unchanged; [`crate::decode`] calls it.

use std::collections::BTreeMap;

use base64::Engine;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use keelson_apimachinery::ApiError;
use prost::Message;
use serde_json::{json, Map, Value};

/// The 4-byte prefix of every Kubernetes Protobuf message.
const MAGIC: &[u8] = b"k8s\0";

fn unsupported(kind: &str) -> ApiError {
    ApiError::unsupported_media_type(format!(
        "the body of the request was in an unknown format - Keelson decodes application/vnd.kubernetes.protobuf only for Namespace, ConfigMap, Secret and ServiceAccount so far (got {:?}); accepted media types include: application/json, application/yaml",
        kind
    ))
}

fn bad(e: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("failed to decode protobuf body: {}", e))
}

fn strings(m: &BTreeMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn bytes_map(m: &BTreeMap<String, Vec<u8>>) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD;
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(b64.encode(v))))
            .collect(),
    )
}

fn object_meta(m: Option<&meta::ObjectMeta>) -> Value {
    let mut out = Map::new();
    let Some(m) = m else {
        return Value::Object(out);
    };
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
            out.insert(k.into(), Value::String(v.clone()));
        }
    };
    put("name", &m.name);
    put("generateName", &m.generate_name);
    put("namespace", &m.namespace);
    put("uid", &m.uid);
    put("resourceVersion", &m.resource_version);
    if !m.labels.is_empty() {
        out.insert(
            "labels".into(),
            strings(&m.labels.clone().into_iter().collect()),
        );
    }
    if !m.annotations.is_empty() {
        out.insert(
            "annotations".into(),
            strings(&m.annotations.clone().into_iter().collect()),
        );
    }
    if !m.finalizers.is_empty() {
        out.insert("finalizers".into(), json!(m.finalizers));
    }
    if !m.owner_references.is_empty() {
        let refs: Vec<Value> = m
            .owner_references
            .iter()
            .map(|r| {
                let mut o = json!({
                    "apiVersion": r.api_version.clone().unwrap_or_default(),
                    "kind": r.kind.clone().unwrap_or_default(),
                    "name": r.name.clone().unwrap_or_default(),
                    "uid": r.uid.clone().unwrap_or_default(),
                });
                if let Some(c) = r.controller {
                    o["controller"] = Value::Bool(c);
                }
                if let Some(b) = r.block_owner_deletion {
                    o["blockOwnerDeletion"] = Value::Bool(b);
                }
                o
            })
            .collect();
        out.insert("ownerReferences".into(), Value::Array(refs));
    }
    Value::Object(out)
}

/// Decode a Protobuf body into the JSON object it stands for.
pub(crate) fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("missing the k8s\\0 prefix"))?;
    let unknown = Unknown::decode(rest).map_err(bad)?;
    let tm = unknown.type_meta.unwrap_or_default();
    let api_version = tm.api_version.unwrap_or_default();
    let kind = tm.kind.unwrap_or_default();
    let raw = unknown.raw.unwrap_or_default();
    if api_version != "v1" {
        return Err(unsupported(&kind));
    }
    let mut obj = match kind.as_str() {
        "Namespace" => {
            let ns = core::Namespace::decode(raw.as_slice()).map_err(bad)?;
            let mut o = json!({"metadata": object_meta(ns.metadata.as_ref())});
            if let Some(spec) = ns.spec.filter(|s| !s.finalizers.is_empty()) {
                o["spec"] = json!({"finalizers": spec.finalizers});
            }
            o
        }
        "ConfigMap" => {
            let cm = core::ConfigMap::decode(raw.as_slice()).map_err(bad)?;
            let mut o = json!({"metadata": object_meta(cm.metadata.as_ref())});
            if !cm.data.is_empty() {
                o["data"] = strings(&cm.data.into_iter().collect());
            }
            if !cm.binary_data.is_empty() {
                o["binaryData"] = bytes_map(&cm.binary_data.into_iter().collect());
            }
            if let Some(i) = cm.immutable {
                o["immutable"] = Value::Bool(i);
            }
            o
        }
        "Secret" => {
            let s = core::Secret::decode(raw.as_slice()).map_err(bad)?;
            let mut o = json!({"metadata": object_meta(s.metadata.as_ref())});
            if !s.data.is_empty() {
                o["data"] = bytes_map(&s.data.into_iter().collect());
            }
            if !s.string_data.is_empty() {
                o["stringData"] = strings(&s.string_data.into_iter().collect());
            }
            if let Some(t) = s.r#type.filter(|t| !t.is_empty()) {
                o["type"] = Value::String(t);
            }
            if let Some(i) = s.immutable {
                o["immutable"] = Value::Bool(i);
            }
            o
        }
        "ServiceAccount" => {
            let sa = core::ServiceAccount::decode(raw.as_slice()).map_err(bad)?;
            let mut o = json!({"metadata": object_meta(sa.metadata.as_ref())});
            if let Some(a) = sa.automount_service_account_token {
                o["automountServiceAccountToken"] = Value::Bool(a);
            }
            o
        }
        _ => return Err(unsupported(&kind)),
    };
    obj["apiVersion"] = Value::String(api_version);
    obj["kind"] = Value::String(kind);
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let u = Unknown {
            type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
                api_version: Some("v1".into()),
                kind: Some(kind.into()),
            }),
            raw: Some(raw),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut b = MAGIC.to_vec();
        b.extend(u.encode_to_vec());
        b
    }

    #[test]
    fn configmap_roundtrip() {
        let cm = core::ConfigMap {
            metadata: Some(meta::ObjectMeta {
                name: Some("c".into()),
                namespace: Some("ns".into()),
                ..Default::default()
            }),
            data: [("a".to_string(), "b".to_string())].into_iter().collect(),
            ..Default::default()
        };
        let v = decode(&envelope("ConfigMap", cm.encode_to_vec())).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "b"}})
        );
    }

    #[test]
    fn rejects_garbage_and_unknown_kinds() {
        assert_eq!(decode(b"nope").unwrap_err().code, 400);
        assert_eq!(decode(&envelope("Pod", vec![])).unwrap_err().code, 415);
        let mut truncated = envelope("ConfigMap", vec![0x0a, 0xff]);
        truncated.truncate(8);
        assert!(decode(&truncated).is_err());
    }
}

//! How objects are written to and read from the key/value store: the
//! [`ValueCodec`], chosen with the backend (sled: Keelson's JSON; etcd:
//! Keelson's JSON or, with `--etcd-layout=kube`, kube-apiserver's own
//! values). Every stored value — gets, lists, update reads, the change
//! stream and so the watch cache — passes through it.

use keelson_apimachinery::ApiError;
use keelson_codec::protobuf;
use serde_json::Value;

use crate::local::object::{remove_meta, set_resource_version};

/// The encoding of stored object values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueCodec {
    /// Keelson's JSON: the object with an empty `resourceVersion` (sled's
    /// format, unchanged; also etcd's default).
    #[default]
    Json,
    /// kube-apiserver's values: built-in kinds as Kubernetes Protobuf (the
    /// `k8s\0` magic and the `runtime.Unknown` envelope naming the stored
    /// apiVersion and kind), every other kind (custom resources) as Go's
    /// JSON (keys sorted, `<>&` escaped, a trailing newline); neither
    /// carries `resourceVersion` or `selfLink` (kube's
    /// `PrepareObjectForStorage`: the version is the key's mod revision).
    /// Reads accept both encodings, so an etcd written with Keelson's JSON
    /// stays readable.
    Kube,
}

/// kube's `ErrCodeCorruptObj`.
const CORRUPT_OBJECT_CODE: u32 = 7;

impl ValueCodec {
    /// An object (with `apiVersion` and `kind`) as stored bytes.
    pub fn encode(self, obj: &Value) -> Result<Vec<u8>, ApiError> {
        match self {
            ValueCodec::Json => {
                let mut obj = obj.clone();
                set_resource_version(&mut obj, "");
                serde_json::to_vec(&obj).map_err(ApiError::internal)
            }
            ValueCodec::Kube => {
                let mut obj = obj.clone();
                remove_meta(&mut obj, "resourceVersion");
                remove_meta(&mut obj, "selfLink");
                let api_version = obj.get("apiVersion").and_then(Value::as_str);
                let kind = obj.get("kind").and_then(Value::as_str);
                match (api_version, kind) {
                    (Some(av), Some(kind)) if protobuf::has_kind(av, kind) => {
                        protobuf::encode_object(&obj).map_err(ApiError::internal)
                    }
                    _ => go_json(obj),
                }
            }
        }
    }

    /// [`Self::encode`] of an object the caller stamps with its new
    /// `resourceVersion` afterwards (a create's or an update's result):
    /// Keelson's JSON clears the version in place instead of on a copy of
    /// the whole object.
    pub fn encode_in_place(self, obj: &mut Value) -> Result<Vec<u8>, ApiError> {
        match self {
            ValueCodec::Json => {
                set_resource_version(obj, "");
                serde_json::to_vec(&*obj).map_err(ApiError::internal)
            }
            ValueCodec::Kube => self.encode(obj),
        }
    }

    /// Stored bytes as an object with `metadata.resourceVersion` set to
    /// `revision`; `key` names the value in a decode error.
    pub fn decode(self, key: &[u8], value: &[u8], revision: u64) -> Result<Value, ApiError> {
        let mut obj = match self {
            ValueCodec::Json => serde_json::from_slice(value).map_err(|e| corrupt(key, &e))?,
            ValueCodec::Kube if value.starts_with(protobuf::MAGIC) => {
                protobuf::decode_object(value).map_err(|e| corrupt(key, &e))?
            }
            ValueCodec::Kube => {
                let obj: Value = serde_json::from_slice(value).map_err(|e| corrupt(key, &e))?;
                if !obj.is_object() {
                    return Err(corrupt(key, &"stored value is not a JSON object"));
                }
                obj
            }
        };
        set_resource_version(&mut obj, &revision.to_string());
        Ok(obj)
    }

    /// A key's value at its mod revision.
    pub fn decode_kv(self, kv: &keelson_kv::KeyValue) -> Result<Value, ApiError> {
        self.decode(&kv.key, &kv.value, kv.mod_revision)
    }
}

/// kube's answer for a value it cannot decode (`NewCorruptObjError`, passed
/// through the registry as a plain error: a 500 without a reason).
fn corrupt(key: &[u8], err: &dyn std::fmt::Display) -> ApiError {
    tracing::warn!(key = %String::from_utf8_lossy(key), error = %err, "stored object cannot be decoded");
    ApiError::new(
        500,
        "",
        format!(
            "StorageError: corrupt object, Code: {CORRUPT_OBJECT_CODE}, Key: /{}, ResourceVersion: 0, AdditionalErrorMsg: {err}",
            String::from_utf8_lossy(key)
        ),
    )
}

/// Go's `json.Encoder.Encode` of an unstructured object: map keys sorted,
/// `<`, `>`, `&`, U+2028 and U+2029 escaped, a trailing newline.
fn go_json(mut obj: Value) -> Result<Vec<u8>, ApiError> {
    obj.sort_all_objects();
    let mut out = keelson_apimachinery::json::to_vec_go(&obj).map_err(ApiError::internal)?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_todays_bytes() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "resourceVersion": "7"}, "data": {"k": "<v>"}});
        let bytes = ValueCodec::Json.encode(&obj).unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":""},"data":{"k":"<v>"}}"#
        );
        let back = ValueCodec::Json.decode(b"k", &bytes, 9).unwrap();
        assert_eq!(back["metadata"]["resourceVersion"], "9");
    }

    #[test]
    fn kube_stores_built_ins_as_protobuf_without_resource_version() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "n", "resourceVersion": "7"},
            "data": {"k": "v"}});
        let bytes = ValueCodec::Kube.encode(&obj).unwrap();
        assert!(bytes.starts_with(b"k8s\0"));
        let decoded = protobuf::decode_object(&bytes).unwrap();
        assert_eq!(decoded["metadata"].get("resourceVersion"), None);
        let back = ValueCodec::Kube.decode(b"k", &bytes, 12).unwrap();
        assert_eq!(back["metadata"]["resourceVersion"], "12");
        assert_eq!(back["data"]["k"], "v");
    }

    #[test]
    fn kube_stores_custom_resources_as_go_json() {
        let obj = json!({"kind": "Widget", "apiVersion": "example.com/v1",
            "metadata": {"name": "w", "resourceVersion": "3", "uid": "u"},
            "spec": {"z": 1, "a": "<&>", "f": 1.0, "g": 1e21}});
        let bytes = ValueCodec::Kube.encode(&obj).unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"uid\":\"u\"},\"spec\":{\"a\":\"\\u003c\\u0026\\u003e\",\"f\":1,\"g\":1e+21,\"z\":1}}\n"
        );
        let back = ValueCodec::Kube.decode(b"k", &bytes, 4).unwrap();
        assert_eq!(back["spec"]["a"], "<&>");
        assert_eq!(back["metadata"]["resourceVersion"], "4");
    }

    #[test]
    fn corrupt_values_are_kube_storage_errors() {
        for bad in [&b"k8s\0\x0a\xff"[..], b"garbage", b"[1]"] {
            let e = ValueCodec::Kube
                .decode(b"configmaps/n/x", bad, 5)
                .unwrap_err();
            assert_eq!(e.code, 500);
            assert!(
                e.message.starts_with(
                    "StorageError: corrupt object, Code: 7, Key: /configmaps/n/x, ResourceVersion: 0, AdditionalErrorMsg: "
                ),
                "{}",
                e.message
            );
        }
    }
}

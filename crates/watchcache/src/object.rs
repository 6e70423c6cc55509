//! One cached object version: its JSON encoded once, plus what selectors
//! and namespace filters need, so neither lists nor watches decode or
//! re-encode it.

use bytes::{BufMut, Bytes, BytesMut};
use keelson_apimachinery::meta::{meta_str, set_meta_str};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use keelson_selectors::Attrs;
use serde_json::{Map, Value};

/// A cached object version, shared (by `Arc`) between the current state,
/// the history ring, every watcher and every list that returns it.
#[derive(Debug)]
pub(crate) struct CachedObject {
    /// `namespace/name` (`/name` when cluster-scoped): list order and
    /// continue keys.
    pub key: Box<str>,
    /// The object as JSON with `kind` and `apiVersion` first; what watch
    /// events carry.
    json: Bytes,
    /// `json[body_at..]` is the object's JSON after its type meta and the
    /// comma that follows it (or the closing brace when nothing follows).
    body_at: u32,
    /// Labels and selectable fields.
    pub attrs: Attrs,
}

/// The `namespace/name` key of an object.
pub(crate) fn key_of(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn encode_err(e: serde_json::Error) -> ApiError {
    ApiError::internal(format!("watch cache: cannot encode an object: {e}"))
}

impl CachedObject {
    /// Encode an object once.
    pub fn new(gr: &GroupResource, mut object: Value) -> ApiResult<CachedObject> {
        let attrs = Attrs::of(&gr.group, &gr.resource, &object);
        let key = key_of(meta_str(&object, "namespace"), meta_str(&object, "name")).into();
        let map = match object.as_object_mut() {
            Some(m) => std::mem::take(m),
            None => return Err(ApiError::internal("watch cache: an object is not a map")),
        };
        let mut type_meta = Map::new();
        let mut rest = Map::new();
        for (k, v) in map {
            if k == "kind" || k == "apiVersion" {
                type_meta.insert(k, v);
            } else {
                rest.insert(k, v);
            }
        }
        // kube-apiserver writes kind, then apiVersion.
        let mut prefix = BytesMut::from(&b"{"[..]);
        for k in ["kind", "apiVersion"] {
            if let Some(v) = type_meta.get(k) {
                if prefix.len() > 1 {
                    prefix.put_u8(b',');
                }
                prefix.put_slice(&serde_json::to_vec(k).map_err(encode_err)?);
                prefix.put_u8(b':');
                prefix.put_slice(&serde_json::to_vec(v).map_err(encode_err)?);
            }
        }
        let body = serde_json::to_vec(&Value::Object(rest)).map_err(encode_err)?;
        // `body` is `{...}`: keep what follows its opening brace.
        let inner = &body[1..];
        let mut json = prefix;
        let has_type_meta = json.len() > 1;
        if has_type_meta && inner != b"}" {
            json.put_u8(b',');
        }
        let body_at = json.len() as u32;
        json.put_slice(inner);
        Ok(CachedObject {
            key,
            json: json.freeze(),
            body_at,
            attrs,
        })
    }

    /// The object as JSON with its type meta (shared, not copied).
    pub fn object(&self) -> Bytes {
        self.json.clone()
    }

    /// The object as a list item: JSON without `kind` and `apiVersion`.
    pub fn item(&self) -> Bytes {
        let body = &self.json[self.body_at as usize..];
        let mut b = BytesMut::with_capacity(body.len() + 1);
        b.put_u8(b'{');
        b.put_slice(body);
        b.freeze()
    }

    /// The object's namespace ("" when cluster-scoped).
    pub fn namespace(&self) -> &str {
        self.key.split_once('/').map(|(ns, _)| ns).unwrap_or("")
    }

    /// The object re-encoded with another `metadata.resourceVersion` (the
    /// DELETED event of an object that stopped matching a selector carries
    /// its last matching state at the event's revision).
    pub fn at_revision(&self, revision: u64) -> ApiResult<Bytes> {
        let mut v: Value = serde_json::from_slice(&self.json).map_err(|e| {
            ApiError::internal(format!("watch cache: a cached object is not JSON: {e}"))
        })?;
        set_meta_str(&mut v, "resourceVersion", &revision.to_string());
        Ok(Bytes::from(serde_json::to_vec(&v).map_err(encode_err)?))
    }

    /// Bytes this entry holds (JSON and key), for memory accounting.
    pub fn json_len(&self) -> usize {
        self.json.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gr() -> GroupResource {
        GroupResource::new("", "configmaps")
    }

    #[test]
    fn type_meta_first_and_items_without_it() {
        let o = json!({"apiVersion": "v1", "metadata": {"name": "a", "namespace": "n"}, "kind": "ConfigMap", "data": {"k": "v"}});
        let c = CachedObject::new(&gr(), o.clone()).unwrap();
        let obj: Value = serde_json::from_slice(&c.object()).unwrap();
        assert_eq!(obj, o);
        assert!(c
            .object()
            .starts_with(br#"{"kind":"ConfigMap","apiVersion":"v1","#));
        let item: Value = serde_json::from_slice(&c.item()).unwrap();
        assert_eq!(
            item,
            json!({"metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}})
        );
        assert_eq!(&*c.key, "n/a");
        assert_eq!(c.namespace(), "n");
    }

    #[test]
    fn edge_shapes() {
        let only_meta = CachedObject::new(&gr(), json!({"kind": "K", "apiVersion": "v1"})).unwrap();
        assert_eq!(
            &only_meta.object()[..],
            br#"{"kind":"K","apiVersion":"v1"}"#
        );
        assert_eq!(&only_meta.item()[..], b"{}");
        let no_meta = CachedObject::new(&gr(), json!({"metadata": {"name": "x"}})).unwrap();
        assert_eq!(&no_meta.object()[..], br#"{"metadata":{"name":"x"}}"#);
        assert_eq!(&no_meta.item()[..], br#"{"metadata":{"name":"x"}}"#);
        assert_eq!(&*no_meta.key, "/x");
        let empty = CachedObject::new(&gr(), json!({})).unwrap();
        assert_eq!(
            (&empty.object()[..], &empty.item()[..]),
            (&b"{}"[..], &b"{}"[..])
        );
        assert!(CachedObject::new(&gr(), json!([1])).is_err());
    }

    #[test]
    fn re_stamped_revision() {
        let c = CachedObject::new(
            &gr(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "resourceVersion": "3"}}),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&c.at_revision(9).unwrap()).unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "9");
    }
}

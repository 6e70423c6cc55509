//! One cached object version: its JSON encoded once, plus what selectors
//! and namespace filters need, so neither lists nor watches decode or
//! re-encode it.

use bytes::{BufMut, Bytes, BytesMut};
use keelson_api::{watch_line, CacheEventType};
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
    /// The watch line of the change that made this version
    /// (`{"type":"MODIFIED","object":<object>}` and a newline), with the
    /// object's JSON (`kind` and `apiVersion` first) inside it: watch events
    /// share the line, lists and gRPC share slices of it.
    line: Bytes,
    /// The type named in `line`.
    line_type: CacheEventType,
    /// Where the object's JSON starts in `line` (it ends 2 bytes before the
    /// end).
    obj_at: u32,
    /// `line[body_at..]` is the object's JSON after its type meta and the
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
    /// Encode an object once, framed as a `line_type` watch line.
    pub fn new(
        gr: &GroupResource,
        mut object: Value,
        line_type: CacheEventType,
    ) -> ApiResult<CachedObject> {
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
        let body = serde_json::to_vec(&Value::Object(rest)).map_err(encode_err)?;
        let frame = watch_line(line_type, b"");
        // `frame` is `{"type":"T","object":}\n`: the object goes before its
        // last two bytes.
        let head = &frame[..frame.len().saturating_sub(2)];
        let mut line = BytesMut::with_capacity(head.len() + body.len() + 64);
        line.put_slice(head);
        let obj_at = line.len();
        // kube-apiserver writes kind, then apiVersion.
        line.put_u8(b'{');
        let mut has_type_meta = false;
        for k in ["kind", "apiVersion"] {
            if let Some(v) = type_meta.get(k) {
                if has_type_meta {
                    line.put_u8(b',');
                }
                has_type_meta = true;
                line.put_slice(&serde_json::to_vec(k).map_err(encode_err)?);
                line.put_u8(b':');
                line.put_slice(&serde_json::to_vec(v).map_err(encode_err)?);
            }
        }
        // `body` is `{...}`: keep what follows its opening brace.
        let inner = &body[1..];
        if has_type_meta && inner != b"}" {
            line.put_u8(b',');
        }
        let body_at = line.len();
        line.put_slice(inner);
        line.put_slice(b"}\n");
        Ok(CachedObject {
            key,
            line: line.freeze(),
            line_type,
            obj_at: obj_at as u32,
            body_at: body_at as u32,
            attrs,
        })
    }

    /// The object as JSON with its type meta (shared, not copied).
    pub fn object(&self) -> Bytes {
        self.line
            .slice(self.obj_at as usize..self.line.len().saturating_sub(2))
    }

    /// The object as a `t` watch line: the shared one when `t` is the type
    /// of the change that made this version, else a new one.
    pub fn line(&self, t: CacheEventType) -> Bytes {
        if t == self.line_type {
            self.line.clone()
        } else {
            watch_line(t, &self.object())
        }
    }

    /// The object as a list item: JSON without `kind` and `apiVersion`.
    pub fn item(&self) -> Bytes {
        let body = &self.line[self.body_at as usize..self.line.len().saturating_sub(2)];
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
        let mut v: Value = serde_json::from_slice(&self.object()).map_err(|e| {
            ApiError::internal(format!("watch cache: a cached object is not JSON: {e}"))
        })?;
        set_meta_str(&mut v, "resourceVersion", &revision.to_string());
        Ok(Bytes::from(serde_json::to_vec(&v).map_err(encode_err)?))
    }

    /// The size of the object's JSON, for memory accounting.
    pub fn json_len(&self) -> usize {
        self.line.len().saturating_sub(2 + self.obj_at as usize)
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
        let c = CachedObject::new(&gr(), o.clone(), CacheEventType::Added).unwrap();
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
        // The shared line frames the same bytes.
        let line = c.line(CacheEventType::Added);
        assert_eq!(line, watch_line(CacheEventType::Added, &c.object()));
        assert_eq!(
            c.line(CacheEventType::Deleted),
            watch_line(CacheEventType::Deleted, &c.object())
        );
        let ev: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!((ev["type"].as_str(), &ev["object"]), (Some("ADDED"), &o));
        assert_eq!(c.json_len(), c.object().len());
    }

    #[test]
    fn edge_shapes() {
        let only_meta = CachedObject::new(
            &gr(),
            json!({"kind": "K", "apiVersion": "v1"}),
            CacheEventType::Added,
        )
        .unwrap();
        assert_eq!(
            &only_meta.object()[..],
            br#"{"kind":"K","apiVersion":"v1"}"#
        );
        assert_eq!(&only_meta.item()[..], b"{}");
        let no_meta = CachedObject::new(
            &gr(),
            json!({"metadata": {"name": "x"}}),
            CacheEventType::Added,
        )
        .unwrap();
        assert_eq!(&no_meta.object()[..], br#"{"metadata":{"name":"x"}}"#);
        assert_eq!(&no_meta.item()[..], br#"{"metadata":{"name":"x"}}"#);
        assert_eq!(&*no_meta.key, "/x");
        let empty = CachedObject::new(&gr(), json!({}), CacheEventType::Deleted).unwrap();
        assert_eq!(
            (&empty.object()[..], &empty.item()[..]),
            (&b"{}"[..], &b"{}"[..])
        );
        assert!(CachedObject::new(&gr(), json!([1]), CacheEventType::Added).is_err());
    }

    #[test]
    fn re_stamped_revision() {
        let c = CachedObject::new(
            &gr(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "resourceVersion": "3"}}),
            CacheEventType::Modified,
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&c.at_revision(9).unwrap()).unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "9");
    }
}

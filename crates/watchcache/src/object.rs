//! One cached object version, encoded once per format (kube's
//! `cachingObject`), plus what selectors and namespace filters need, so
//! neither lists nor watches decode or re-encode it per reader.
//!
//! JSON is encoded up front, as the watch line of the change that made the
//! version; the object and its list item are slices of that line, so the
//! common case costs one encoding and no copies. Any other format is
//! encoded on first use (from the JSON) and memoized, once per format, so
//! every watcher of that format shares the same bytes. A Table (a watch
//! with `as=Table`) also depends on the request's `includeObject`: it is
//! shared once per meta version × `includeObject`, printed without
//! column definitions (kube's `noHeaders`, which every event of a Table
//! watch but the first has); its Age cells are the time it is printed at,
//! so it is shared by the watchers that read it within a second of each
//! other (an event's fan-out) and printed again after that.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use keelson_api::{CacheEvent, EventType};
use keelson_apimachinery::json::to_vec_go;
use keelson_apimachinery::meta::{meta_str, set_meta_str};
use keelson_apimachinery::{ApiError, ApiResult, GroupResource};
use keelson_codec::{encode_event, Format, IncludeObject, MetaVersion, TableOptions, Target};
use keelson_selectors::Attrs;
use serde_json::{Map, Value};

/// One memoized serialization in a format other than JSON: the watch
/// event frame of the change that made the version, and the object inside
/// it.
#[derive(Debug, Clone)]
struct Encoded {
    frame: Bytes,
    object: Bytes,
    /// A Protobuf object's bare message (its list item), a slice of
    /// `object` found once; empty in other formats.
    item: Bytes,
}

/// The memo of every format but JSON, allocated on first use.
type Memo = Box<[OnceLock<Result<Encoded, ApiError>>; Format::COUNT]>;

/// The memo of JSON Tables: one per meta version × `includeObject`, each
/// with the time it was printed at.
const TABLES: usize = 2 * IncludeObject::ALL.len();
type TableMemo = Box<[Mutex<Option<(Instant, Encoded)>>; TABLES]>;

/// How long a printed Table is shared: its Age cells are the age when it
/// was printed, so a Table is printed again for a watcher that reads the
/// object later (its initial events, a replay of the history) — as kube
/// shares a Table only between the watchers an event fans out to.
const TABLE_FRESH: Duration = Duration::from_secs(1);

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
    line_type: EventType,
    /// Where the object's JSON starts in `line` (it ends 2 bytes before the
    /// end).
    obj_at: u32,
    /// `line[body_at..]` is the object's JSON after its type meta and the
    /// comma that follows it (or the closing brace when nothing follows);
    /// for an unstructured object, after its opening brace (its list item
    /// keeps its type meta).
    body_at: u32,
    /// Serializations in other formats, each made on first use.
    others: OnceLock<Memo>,
    /// Table serializations, each made on first use.
    tables: OnceLock<TableMemo>,
    /// Labels and selectable fields.
    pub attrs: Attrs,
}

/// The options of a watch's shared Tables: no column definitions.
fn table_options(include: IncludeObject) -> TableOptions {
    TableOptions {
        include_object: include,
        no_headers: true,
    }
}

/// Whether kube serves `object` unstructured: its type meta names no
/// built-in kind (a custom resource).
fn is_unstructured(object: &Value) -> bool {
    match (
        object.get("apiVersion").and_then(Value::as_str),
        object.get("kind").and_then(Value::as_str),
    ) {
        (Some(av), Some(kind)) => !keelson_codec::protobuf::has_kind(av, kind),
        _ => false,
    }
}

/// The `namespace/name` key of an object.
pub(crate) fn key_of(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn encode_err(e: serde_json::Error) -> ApiError {
    ApiError::internal(format!("watch cache: cannot encode an object: {e}"))
}

/// A JSON watch line of type `t` around `object` (empty for the markers).
fn json_line(t: EventType, object: &[u8]) -> ApiResult<Bytes> {
    if t.is_change() {
        Ok(encode_event(Format::JSON, t, object)?)
    } else {
        Ok(Bytes::new())
    }
}

impl CachedObject {
    /// Encode an object once, framed as a `line_type` watch line.
    pub fn new(
        gr: &GroupResource,
        mut object: Value,
        line_type: EventType,
    ) -> ApiResult<CachedObject> {
        let attrs = Attrs::of(&gr.group, &gr.resource, &object);
        let key = key_of(meta_str(&object, "namespace"), meta_str(&object, "name")).into();
        if is_unstructured(&object) {
            return Self::new_unstructured(key, object, line_type, attrs);
        }
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
        let body = to_vec_go(&Value::Object(rest)).map_err(encode_err)?;
        let frame = json_line(line_type, b"")?;
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
                line.put_slice(&to_vec_go(k).map_err(encode_err)?);
                line.put_u8(b':');
                line.put_slice(&to_vec_go(v).map_err(encode_err)?);
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
            others: OnceLock::new(),
            tables: OnceLock::new(),
            attrs,
        })
    }

    /// An object kube serves as `unstructured.Unstructured` (a custom
    /// resource): written as it is stored, keys sorted with `apiVersion`
    /// and `kind` in their sorted places; its list item is the whole
    /// object.
    fn new_unstructured(
        key: Box<str>,
        object: Value,
        line_type: EventType,
        attrs: Attrs,
    ) -> ApiResult<CachedObject> {
        let body = to_vec_go(&object).map_err(encode_err)?;
        let frame = json_line(line_type, b"")?;
        let head = &frame[..frame.len().saturating_sub(2)];
        let mut line = BytesMut::with_capacity(head.len() + body.len() + 2);
        line.put_slice(head);
        let obj_at = line.len();
        line.put_slice(&body);
        line.put_slice(b"}\n");
        Ok(CachedObject {
            key,
            line: line.freeze(),
            line_type,
            obj_at: obj_at as u32,
            body_at: obj_at as u32 + 1,
            others: OnceLock::new(),
            tables: OnceLock::new(),
            attrs,
        })
    }

    /// The object as JSON with its type meta (shared, not copied).
    pub fn object(&self) -> Bytes {
        self.line
            .slice(self.obj_at as usize..self.line.len().saturating_sub(2))
    }

    /// The object as a `t` JSON watch line: the shared one when `t` is the
    /// type of the change that made this version, else a new one.
    fn line(&self, t: EventType) -> ApiResult<Bytes> {
        if t == self.line_type {
            Ok(self.line.clone())
        } else {
            json_line(t, &self.object())
        }
    }

    /// The memoized serialization in `format` (not JSON), made on first use.
    fn encoded(&self, format: Format) -> ApiResult<&Encoded> {
        let memo = self
            .others
            .get_or_init(|| Box::new(std::array::from_fn(|_| OnceLock::new())));
        memo[format.index()]
            .get_or_init(|| {
                let object = keelson_codec::encode(format, &self.value()?)?;
                let ev = CacheEvent::new(self.line_type, 0, format, &object)?;
                let item = if format.encoding == keelson_codec::Encoding::Protobuf {
                    keelson_codec::protobuf::raw_of(&ev.object).ok_or_else(|| {
                        ApiError::internal("watch cache: a Protobuf object has no envelope")
                    })?
                } else {
                    Bytes::new()
                };
                Ok(Encoded {
                    frame: ev.frame,
                    object: ev.object,
                    item,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The shared Table (JSON, no column definitions) in `version` with
    /// rows carrying `include`,
    /// printed within the last [`TABLE_FRESH`] (else printed again).
    fn encoded_table(&self, version: MetaVersion, include: IncludeObject) -> ApiResult<Encoded> {
        let memo = self
            .tables
            .get_or_init(|| Box::new(std::array::from_fn(|_| Mutex::new(None))));
        let slot = (version as usize) * IncludeObject::ALL.len() + include.index();
        let mut entry = memo[slot].lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, enc)) = entry.as_ref() {
            if at.elapsed() < TABLE_FRESH {
                return Ok(enc.clone());
            }
        }
        let format = Format {
            encoding: keelson_codec::Encoding::Json,
            target: Target::Table(version),
        };
        let object = keelson_codec::encode_with(
            format,
            &self.value()?,
            &table_options(include),
            keelson_codec::table::time::now(),
        )?;
        let ev = CacheEvent::new(self.line_type, 0, format, &object)?;
        let enc = Encoded {
            frame: ev.frame,
            object: ev.object,
            item: Bytes::new(),
        };
        *entry = Some((Instant::now(), enc.clone()));
        Ok(enc)
    }

    /// The object as a `t` event at `revision` in `format`: the shared
    /// frame when `t` is the type of the change that made this version,
    /// else one framed around the shared object. A Table's rows carry a
    /// `PartialObjectMetadata` (see [`CachedObject::event_with`]).
    #[cfg(test)]
    pub fn event(&self, t: EventType, revision: u64, format: Format) -> ApiResult<CacheEvent> {
        self.event_with(t, revision, format, IncludeObject::Metadata)
    }

    /// [`CachedObject::event`], a Table's rows carrying `include`.
    pub fn event_with(
        &self,
        t: EventType,
        revision: u64,
        format: Format,
        include: IncludeObject,
    ) -> ApiResult<CacheEvent> {
        if format == Format::JSON {
            return Ok(CacheEvent {
                event_type: t,
                initial_events_end: false,
                revision,
                format,
                frame: self.line(t)?,
                object: self.object(),
            });
        }
        let table;
        let enc = match format.target {
            Target::Table(v) if format.encoding == keelson_codec::Encoding::Json => {
                table = self.encoded_table(v, include)?;
                &table
            }
            _ => self.encoded(format)?,
        };
        if t == self.line_type {
            Ok(CacheEvent {
                event_type: t,
                initial_events_end: false,
                revision,
                format,
                frame: enc.frame.clone(),
                object: enc.object.clone(),
            })
        } else {
            CacheEvent::new(t, revision, format, &enc.object)
        }
    }

    /// The object as a list item in `format`: for JSON without `kind` and
    /// `apiVersion`; in other formats the memoized object.
    pub fn item(&self, format: Format) -> ApiResult<Bytes> {
        if format != Format::JSON {
            let enc = self.encoded(format)?;
            // A Protobuf list carries its items' bare messages: a slice of
            // the memoized object, found when it was encoded.
            if format.encoding == keelson_codec::Encoding::Protobuf {
                return Ok(enc.item.clone());
            }
            return Ok(enc.object.clone());
        }
        let body = &self.line[self.body_at as usize..self.line.len().saturating_sub(2)];
        let mut b = BytesMut::with_capacity(body.len() + 1);
        b.put_u8(b'{');
        b.put_slice(body);
        Ok(b.freeze())
    }

    /// The object decoded from its JSON.
    fn value(&self) -> ApiResult<Value> {
        serde_json::from_slice(&self.object()).map_err(|e| {
            ApiError::internal(format!("watch cache: a cached object is not JSON: {e}"))
        })
    }

    /// The object's namespace ("" when cluster-scoped).
    pub fn namespace(&self) -> &str {
        self.key.split_once('/').map(|(ns, _)| ns).unwrap_or("")
    }

    /// The object re-encoded in `format` with another
    /// `metadata.resourceVersion` (the DELETED event of an object that
    /// stopped matching a selector carries its last matching state at the
    /// event's revision).
    pub fn at_revision(
        &self,
        revision: u64,
        format: Format,
        include: IncludeObject,
    ) -> ApiResult<Bytes> {
        let mut v = self.value()?;
        set_meta_str(&mut v, "resourceVersion", &revision.to_string());
        Ok(keelson_codec::encode_with(
            format,
            &v,
            &table_options(include),
            keelson_codec::table::time::now(),
        )?)
    }

    /// The size of the object's JSON, for memory accounting.
    pub fn json_len(&self) -> usize {
        self.line.len().saturating_sub(2 + self.obj_at as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keelson_codec::{EventType, MetaVersion, Target};
    use serde_json::json;

    fn line_of(c: &CachedObject, t: EventType) -> Bytes {
        c.event(t, 1, Format::JSON).unwrap().frame
    }

    fn watch_line(t: EventType, object: &[u8]) -> Bytes {
        encode_event(Format::JSON, t, object).unwrap()
    }

    fn gr() -> GroupResource {
        GroupResource::new("", "configmaps")
    }

    #[test]
    fn type_meta_first_and_items_without_it() {
        let o = json!({"apiVersion": "v1", "metadata": {"name": "a", "namespace": "n"}, "kind": "ConfigMap", "data": {"k": "v"}});
        let c = CachedObject::new(&gr(), o.clone(), EventType::Added).unwrap();
        let obj: Value = serde_json::from_slice(&c.object()).unwrap();
        assert_eq!(obj, o);
        assert!(c
            .object()
            .starts_with(br#"{"kind":"ConfigMap","apiVersion":"v1","#));
        let item: Value = serde_json::from_slice(&c.item(Format::JSON).unwrap()).unwrap();
        assert_eq!(
            item,
            json!({"metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}})
        );
        assert_eq!(&*c.key, "n/a");
        assert_eq!(c.namespace(), "n");
        // The shared line frames the same bytes.
        let line = line_of(&c, EventType::Added);
        assert_eq!(line, watch_line(EventType::Added, &c.object()));
        assert_eq!(
            line_of(&c, EventType::Deleted),
            watch_line(EventType::Deleted, &c.object())
        );
        let ev: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!((ev["type"].as_str(), &ev["object"]), (Some("ADDED"), &o));
        assert_eq!(c.json_len(), c.object().len());
    }

    #[test]
    fn edge_shapes() {
        let only_meta = CachedObject::new(
            &gr(),
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            EventType::Added,
        )
        .unwrap();
        assert_eq!(
            &only_meta.object()[..],
            br#"{"kind":"ConfigMap","apiVersion":"v1"}"#
        );
        assert_eq!(&only_meta.item(Format::JSON).unwrap()[..], b"{}");
        // A custom resource is unstructured: written as stored (sorted),
        // its item with its type meta.
        let cr = json!({"apiVersion": "example.com/v1", "data": 1, "kind": "Widget", "metadata": {"name": "w"}});
        let c = CachedObject::new(&gr(), cr, EventType::Added).unwrap();
        let want =
            br#"{"apiVersion":"example.com/v1","data":1,"kind":"Widget","metadata":{"name":"w"}}"#;
        assert_eq!(&c.object()[..], want);
        assert_eq!(&c.item(Format::JSON).unwrap()[..], want);
        assert_eq!(
            c.event(EventType::Added, 1, Format::JSON).unwrap().frame,
            watch_line(EventType::Added, want)
        );
        let no_meta =
            CachedObject::new(&gr(), json!({"metadata": {"name": "x"}}), EventType::Added).unwrap();
        assert_eq!(&no_meta.object()[..], br#"{"metadata":{"name":"x"}}"#);
        assert_eq!(
            &no_meta.item(Format::JSON).unwrap()[..],
            br#"{"metadata":{"name":"x"}}"#
        );
        assert_eq!(&*no_meta.key, "/x");
        let empty = CachedObject::new(&gr(), json!({}), EventType::Deleted).unwrap();
        assert_eq!(
            (&empty.object()[..], &empty.item(Format::JSON).unwrap()[..]),
            (&b"{}"[..], &b"{}"[..])
        );
        assert!(CachedObject::new(&gr(), json!([1]), EventType::Added).is_err());
    }

    #[test]
    fn re_stamped_revision() {
        let c = CachedObject::new(
            &gr(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "resourceVersion": "3"}}),
            EventType::Modified,
        )
        .unwrap();
        let v: Value = serde_json::from_slice(
            &c.at_revision(9, Format::JSON, IncludeObject::Metadata)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(v["metadata"]["resourceVersion"], "9");
    }

    #[test]
    fn other_formats_are_encoded_once_and_shared() {
        let c = CachedObject::new(
            &gr(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}),
            EventType::Modified,
        )
        .unwrap();
        let meta = Format {
            encoding: keelson_codec::Encoding::Json,
            target: Target::PartialObjectMetadata(MetaVersion::V1),
        };
        let a = c.event(EventType::Modified, 5, meta).unwrap();
        let b = c.event(EventType::Modified, 5, meta).unwrap();
        assert_eq!(
            a.frame.as_ptr(),
            b.frame.as_ptr(),
            "one serialization per format"
        );
        assert_eq!(a.format, meta);
        let v: Value = serde_json::from_slice(&a.object).unwrap();
        assert_eq!(
            v,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "a", "namespace": "n", "creationTimestamp": null}})
        );
        assert_eq!(c.item(meta).unwrap(), a.object);
        // Another event type frames the shared object anew.
        let added = c.event(EventType::Added, 5, meta).unwrap();
        assert_eq!(added.object, a.object);
        assert!(added.frame.starts_with(br#"{"type":"ADDED""#));
        // The JSON object is still the eager line's slice.
        let j = c.event(EventType::Modified, 5, Format::JSON).unwrap();
        assert_eq!(j.frame.as_ptr(), line_of(&c, EventType::Modified).as_ptr());
        // Tables: one per includeObject, shared, without column definitions.
        let table = Format {
            encoding: keelson_codec::Encoding::Json,
            target: Target::Table(MetaVersion::V1),
        };
        let a = c
            .event_with(EventType::Modified, 5, table, IncludeObject::None)
            .unwrap();
        let b = c
            .event_with(EventType::Modified, 6, table, IncludeObject::None)
            .unwrap();
        assert_eq!(a.frame.as_ptr(), b.frame.as_ptr(), "one Table per event");
        let t: Value = serde_json::from_slice(&a.object).unwrap();
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["columnDefinitions"], Value::Null);
        assert_eq!(t["rows"][0]["object"], Value::Null);
        assert_eq!(t["rows"][0]["cells"][0], "a");
        let m = c.event(EventType::Modified, 5, table).unwrap();
        assert_ne!(m.frame, a.frame);
        let m: Value = serde_json::from_slice(&m.object).unwrap();
        assert_eq!(m["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        // A format that is not written yet is an error, remembered too.
        let cbor = Format {
            encoding: keelson_codec::Encoding::Cbor,
            target: Target::Table(keelson_codec::MetaVersion::V1),
        };
        assert_eq!(c.event(EventType::Modified, 5, cbor).unwrap_err().code, 406);
        assert_eq!(c.item(cbor).unwrap_err().code, 406);
    }

    #[test]
    fn cbor_is_encoded_once_per_format() {
        let c = CachedObject::new(
            &gr(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}),
            EventType::Added,
        )
        .unwrap();
        let cbor = Format::object(keelson_codec::Encoding::Cbor);
        let a = c.event(EventType::Added, 5, cbor).unwrap();
        let b = c.event(EventType::Added, 6, cbor).unwrap();
        assert_eq!(a.frame.as_ptr(), b.frame.as_ptr(), "one serialization");
        assert!(a.object.starts_with(&keelson_codec::cbor::SELF_DESCRIBED));
        assert_eq!(
            keelson_codec::cbor::decode(&a.object).unwrap()["data"]["k"],
            "v"
        );
        assert_eq!(c.item(cbor).unwrap(), a.object);
    }

    #[test]
    fn protobuf_is_encoded_once_and_items_are_slices_of_it() {
        let c = CachedObject::new(
            &gr(),
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}),
            EventType::Added,
        )
        .unwrap();
        let pb = Format::object(keelson_codec::Encoding::Protobuf);
        let a = c.event(EventType::Added, 5, pb).unwrap();
        let b = c.event(EventType::Added, 6, pb).unwrap();
        assert_eq!(a.frame.as_ptr(), b.frame.as_ptr(), "one serialization");
        assert!(a.object.starts_with(b"k8s\0"));
        let v = keelson_codec::protobuf::decode_object(&a.object).unwrap();
        assert_eq!(v["data"]["k"], "v");
        // The list item is the bare ConfigMap inside the shared object.
        let item = c.item(pb).unwrap();
        let inside = a.object.as_ptr() as usize..a.object.as_ptr() as usize + a.object.len();
        assert!(inside.contains(&(item.as_ptr() as usize)));
        let bare = keelson_codec::protobuf::decode_message("v1", "ConfigMap", &item).unwrap();
        assert_eq!(bare["metadata"]["name"], "a");
    }
}

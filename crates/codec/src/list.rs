//! Lists written as a head, the items as they arrive, and a tail, so a
//! large list is never one in-memory value. For JSON the head is the list
//! object without its closing brace, then `,"items":[`; items are joined
//! by commas; the tail is `]}` — the bytes `serde_json` would write for the
//! whole list. Encodings that cannot be streamed (YAML) collect the items
//! and write the whole list at the end.
//!
//! A `PartialObjectMetadataList` streams the same way around the items'
//! `PartialObjectMetadata`s (`"items": null` when empty, as kube builds that
//! list anew); a `Table` streams one row per item, printed as it arrives
//! (`crate::table`). A list asked for as `PartialObjectMetadata` is kube's
//! `406`. CBOR lists are gathered and written whole (`crate::cbor`).

use bytes::{BufMut, Bytes, BytesMut};
use keelson_apimachinery::json::{to_vec_go, to_writer_go};
use serde_json::Value;

use crate::error::CodecError;
use crate::format::{Encoding, Format, Target};
use crate::serializer::encode;
use crate::table::{self, Rows, TableOptions, Time};

/// Frames of a streamed list are cut at about this size.
pub const FRAME_BYTES: usize = 64 * 1024;

/// The format list items are asked for when a list is written in
/// `format`: the list's own, or JSON when the list is converted whole
/// (YAML); the objects themselves for a Table (its rows are printed from
/// them), `PartialObjectMetadata`s for a `PartialObjectMetadataList`.
pub fn item_format(format: Format) -> Format {
    let encoding = match format.encoding {
        Encoding::Yaml => Encoding::Json,
        e => e,
    };
    let target = match format.target {
        Target::PartialObjectMetadataList(v) => Target::PartialObjectMetadata(v),
        _ => Target::Object,
    };
    Format { encoding, target }
}

/// Writes one list response: [`ListEncoder::push`] each item (encoded in
/// [`ListEncoder::item_format`]) and send the frames it returns, then send
/// [`ListEncoder::finish`].
#[derive(Debug)]
pub struct ListEncoder {
    format: Format,
    inner: Inner,
}

enum Inner {
    /// JSON: the bytes not yet cut into a frame, how many items were
    /// written, and what follows the items of an unstructured list (its
    /// keys after `items`, then `}`).
    Stream {
        buf: BytesMut,
        count: usize,
        tail: Option<Vec<u8>>,
    },
    /// JSON, a `PartialObjectMetadataList` or a `Table`: the head ends with
    /// the key of the items (`"items":` / `"rows":`); the array opens with
    /// the first item, and an empty one is `null` when `null_when_empty`.
    /// A Table prints each item into a row; when its printer sorts the
    /// rows (FlowSchemas), the items are held and printed at the end.
    Lazy {
        buf: BytesMut,
        count: usize,
        null_when_empty: bool,
        rows: Option<Rows>,
        held: Option<Vec<Value>>,
    },
    /// Not streamable: the head and the items, written at the end (a Table's
    /// rows are printed from the items then).
    Whole {
        head: Value,
        items: Vec<Value>,
        rows: Option<Rows>,
        null_when_empty: bool,
    },
    /// Kubernetes Protobuf: the items' messages, sized before the list's
    /// envelope is written (`crate::protobuf::ListWriter`).
    Protobuf(crate::protobuf::ListWriter),
    /// CBOR: the items gathered, the item array sized before it is
    /// written (`crate::cbor::ListWriter`).
    Cbor(crate::cbor::ListWriter),
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inner::Stream { count, .. } => f.debug_struct("Stream").field("count", count).finish(),
            Inner::Lazy { count, .. } => f.debug_struct("Lazy").field("count", count).finish(),
            Inner::Whole { items, .. } => f
                .debug_struct("Whole")
                .field("items", &items.len())
                .finish(),
            Inner::Protobuf(w) => f.debug_struct("Protobuf").field("items", &w.len()).finish(),
            Inner::Cbor(w) => f.debug_struct("Cbor").field("items", &w.len()).finish(),
        }
    }
}

/// A list shown as another target: its head, the key its items go under,
/// a Table's printer, and whether no items is `null`.
struct Converted {
    head: Value,
    key: &'static str,
    rows: Option<Rows>,
    null_when_empty: bool,
}

/// The head for a target other than the object: a
/// `PartialObjectMetadataList` head, or a Table head with its printer.
/// `None` for the list itself.
fn converted_head(
    format: Format,
    head: &Value,
    opts: &TableOptions,
    now: Time,
) -> Result<Option<Converted>, CodecError> {
    let s = |k: &str| head.get(k).and_then(Value::as_str).unwrap_or("");
    let metadata = head
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    match format.target {
        Target::Object => Ok(None),
        Target::PartialObjectMetadata(_) => Err(CodecError::NotAcceptable(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            table::go_type(s("apiVersion"), s("kind"))
        ))),
        Target::PartialObjectMetadataList(v) => {
            let mut m = serde_json::Map::new();
            m.insert("kind".into(), Value::from("PartialObjectMetadataList"));
            m.insert("apiVersion".into(), Value::from(v.api_version()));
            m.insert("metadata".into(), metadata);
            Ok(Some(Converted {
                head: Value::Object(m),
                key: "items",
                rows: None,
                null_when_empty: true,
            }))
        }
        Target::Table(v) => {
            if !matches!(format.encoding, Encoding::Json | Encoding::Yaml) {
                return Err(CodecError::NotServed(format));
            }
            let kind = s("kind");
            let item_kind = kind.strip_suffix("List").unwrap_or(kind);
            let rows = Rows::new(v, s("apiVersion"), item_kind, opts, now);
            Ok(Some(Converted {
                head: Value::Object(rows.head(metadata, opts.no_headers)),
                key: "rows",
                null_when_empty: rows.null_when_empty(),
                rows: Some(rows),
            }))
        }
    }
}

/// One Table row of `item` after the `count` already written.
fn write_row(
    buf: &mut BytesMut,
    count: &mut usize,
    rows: &Rows,
    item: &Value,
) -> Result<(), CodecError> {
    buf.put_u8(if *count == 0 { b'[' } else { b',' });
    *count += 1;
    to_writer_go((&mut *buf).writer(), &rows.row(item))?;
    Ok(())
}

/// Whether a list head names a kind kube serves as an
/// `unstructured.UnstructuredList` (a custom resource's list: no
/// message).
fn unstructured(head: &Value) -> bool {
    match (
        head.get("apiVersion").and_then(Value::as_str),
        head.get("kind").and_then(Value::as_str),
    ) {
        (Some(av), Some(kind)) => !crate::protobuf::has_kind(av, kind),
        _ => false,
    }
}

/// `head` without its closing brace, then `,"<key>":` (the item array
/// follows).
fn open_head(head: &Value, key: &str) -> Result<Vec<u8>, CodecError> {
    let mut first = to_vec_go(head)?;
    // Re-open the head object to append the items.
    if first.pop() != Some(b'}') {
        return Err(CodecError::Shape("a list head is not a map"));
    }
    if first.len() > 1 {
        first.push(b',');
    }
    first.push(b'"');
    first.extend_from_slice(key.as_bytes());
    first.extend_from_slice(b"\":");
    Ok(first)
}

impl ListEncoder {
    /// A list in `format` with `head` (`kind`, `apiVersion`, `metadata`).
    pub fn new(format: Format, head: &Value) -> Result<ListEncoder, CodecError> {
        Self::with_options(format, head, &TableOptions::default(), table::time::now())
    }

    /// A list in `format` with `head`; a Table's rows printed at `now`
    /// with the request's `opts`.
    pub fn with_options(
        format: Format,
        head: &Value,
        opts: &TableOptions,
        now: Time,
    ) -> Result<ListEncoder, CodecError> {
        if !head.is_object() {
            return Err(CodecError::Shape("a list head is not a map"));
        }
        if let Some(Converted {
            head,
            key,
            rows,
            null_when_empty,
        }) = converted_head(format, head, opts, now)?
        {
            let inner = match format.encoding {
                Encoding::Json => Inner::Lazy {
                    buf: BytesMut::from(&open_head(&head, key)?[..]),
                    count: 0,
                    null_when_empty,
                    held: rows.as_ref().filter(|r| r.sorts()).map(|_| Vec::new()),
                    rows,
                },
                Encoding::Yaml => Inner::Whole {
                    head,
                    items: Vec::new(),
                    rows,
                    null_when_empty,
                },
                // PartialObjectMetadata items keep their type meta.
                Encoding::Cbor => Inner::Cbor(crate::cbor::ListWriter::new(
                    &head,
                    key,
                    null_when_empty,
                    false,
                )?),
                // The items are the `PartialObjectMetadata` messages.
                Encoding::Protobuf => Inner::Protobuf(crate::protobuf::ListWriter::new(&head)?),
            };
            return Ok(ListEncoder { format, inner });
        }
        let inner = match format.encoding {
            Encoding::Json if unstructured(head) => {
                // kube writes an unstructured list as one map: its keys
                // sorted, `items` among them.
                let mut sorted = head.clone();
                sorted.sort_all_objects();
                let (mut before, mut after) = (serde_json::Map::new(), serde_json::Map::new());
                if let Value::Object(m) = sorted {
                    for (k, v) in m {
                        if k.as_str() < "items" {
                            before.insert(k, v);
                        } else if k != "items" {
                            after.insert(k, v);
                        }
                    }
                }
                let mut first = open_head(&Value::Object(before), "items")?;
                first.push(b'[');
                let mut tail = to_vec_go(&Value::Object(after))?;
                if tail.len() > 2 {
                    tail[0] = b',';
                } else {
                    tail.remove(0);
                }
                Inner::Stream {
                    buf: BytesMut::from(&first[..]),
                    count: 0,
                    tail: Some(tail),
                }
            }
            Encoding::Json => {
                let mut first = to_vec_go(head)?;
                // Re-open the head object to append the items array.
                if first.pop() != Some(b'}') {
                    return Err(CodecError::Shape("a list head is not a map"));
                }
                if first.len() > 1 {
                    first.push(b',');
                }
                first.extend_from_slice(b"\"items\":[");
                Inner::Stream {
                    buf: BytesMut::from(&first[..]),
                    count: 0,
                    tail: None,
                }
            }
            Encoding::Yaml => Inner::Whole {
                head: head.clone(),
                items: Vec::new(),
                rows: None,
                null_when_empty: false,
            },
            Encoding::Protobuf => Inner::Protobuf(crate::protobuf::ListWriter::new(head)?),
            Encoding::Cbor => {
                Inner::Cbor(crate::cbor::ListWriter::new(head, "items", false, true)?)
            }
        };
        Ok(ListEncoder { format, inner })
    }

    /// The format of the response.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The format items must be given in ([`item_format`]).
    pub fn item_format(&self) -> Format {
        item_format(self.format)
    }

    /// Whether frames come out as items are pushed; when not, the whole
    /// list comes out of [`ListEncoder::finish`].
    pub fn streams(&self) -> bool {
        matches!(self.inner, Inner::Stream { .. } | Inner::Lazy { .. })
    }

    /// [`ListEncoder::push`] for an item already in shared bytes: a
    /// Protobuf list keeps it as it is (no copy) until
    /// [`ListEncoder::finish_frames`].
    pub fn push_shared(&mut self, item: Bytes) -> Result<Option<Bytes>, CodecError> {
        match &mut self.inner {
            Inner::Protobuf(w) => {
                w.push(item);
                Ok(None)
            }
            _ => self.push(&item),
        }
    }

    /// The last frames: [`ListEncoder::finish`] as one or more frames (a
    /// Protobuf list is written here whole, its items not copied).
    pub fn finish_frames(self) -> Result<Vec<Bytes>, CodecError> {
        match self.inner {
            Inner::Protobuf(w) => Ok(w.finish(FRAME_BYTES)),
            Inner::Cbor(w) => Ok(w.finish(FRAME_BYTES)),
            _ => Ok(vec![self.finish()?]),
        }
    }

    /// Add one item (a list item: no `kind` and `apiVersion`); a frame to
    /// send when about [`FRAME_BYTES`] have gathered.
    pub fn push(&mut self, item: &[u8]) -> Result<Option<Bytes>, CodecError> {
        match &mut self.inner {
            Inner::Stream { buf, count, .. } => {
                if *count > 0 {
                    buf.put_u8(b',');
                }
                *count += 1;
                buf.put_slice(item);
                Ok((buf.len() >= FRAME_BYTES).then(|| buf.split().freeze()))
            }
            Inner::Lazy {
                buf,
                count,
                rows,
                held,
                ..
            } => {
                if let Some(held) = held {
                    held.push(serde_json::from_slice(item)?);
                    return Ok(None);
                }
                match rows {
                    Some(rows) => {
                        buf.put_u8(if *count == 0 { b'[' } else { b',' });
                        *count += 1;
                        rows.write_row(item, buf)?;
                    }
                    None => {
                        buf.put_u8(if *count == 0 { b'[' } else { b',' });
                        *count += 1;
                        buf.put_slice(item);
                    }
                }
                Ok((buf.len() >= FRAME_BYTES).then(|| buf.split().freeze()))
            }
            Inner::Whole { items, .. } => {
                items.push(serde_json::from_slice(item)?);
                Ok(None)
            }
            Inner::Protobuf(w) => {
                w.push(Bytes::copy_from_slice(item));
                Ok(None)
            }
            Inner::Cbor(w) => {
                w.push(item)?;
                Ok(None)
            }
        }
    }

    /// The last frame: what is left, and the list's tail.
    pub fn finish(self) -> Result<Bytes, CodecError> {
        match self.inner {
            // kube's JSON encoder ends every document with a newline.
            Inner::Stream { mut buf, tail, .. } => {
                buf.put_u8(b']');
                match tail {
                    Some(tail) => buf.put_slice(&tail),
                    None => buf.put_u8(b'}'),
                }
                buf.put_u8(b'\n');
                Ok(buf.freeze())
            }
            Inner::Lazy {
                mut buf,
                mut count,
                null_when_empty,
                rows,
                held,
            } => {
                if let (Some(rows), Some(mut items)) = (rows, held) {
                    rows.sort(&mut items);
                    for item in &items {
                        write_row(&mut buf, &mut count, &rows, item)?;
                    }
                }
                buf.put_slice(match (count, null_when_empty) {
                    (0, true) => b"null}\n",
                    (0, false) => b"[]}\n",
                    _ => b"]}\n",
                });
                Ok(buf.freeze())
            }
            Inner::Whole {
                mut head,
                items,
                rows,
                null_when_empty,
            } => {
                let (key, items) = match &rows {
                    Some(rows) => {
                        let mut items = items;
                        rows.sort(&mut items);
                        ("rows", items.iter().map(|i| rows.row(i)).collect())
                    }
                    None => ("items", items),
                };
                let items = if items.is_empty() && null_when_empty {
                    Value::Null
                } else {
                    Value::Array(items)
                };
                if let Some(map) = head.as_object_mut() {
                    map.insert(key.into(), items);
                }
                encode(Format::object(self.format.encoding), &head)
            }
            Inner::Protobuf(w) => Ok(Bytes::from(w.finish(FRAME_BYTES).concat())),
            Inner::Cbor(w) => Ok(Bytes::from(w.finish(FRAME_BYTES).concat())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn head() -> Value {
        json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {"resourceVersion": "5", "continue": "x"}})
    }

    fn items() -> Vec<Value> {
        vec![
            json!({"metadata": {"name": "a"}, "data": {"k": "v"}}),
            json!({"metadata": {"name": "b"}}),
        ]
    }

    /// Every frame of a list, joined.
    fn written(format: Format, items: &[Value]) -> Vec<u8> {
        let mut enc = ListEncoder::new(format, &head()).unwrap();
        let mut out = Vec::new();
        for i in items {
            if let Some(f) = enc.push(&serde_json::to_vec(i).unwrap()).unwrap() {
                out.extend_from_slice(&f);
            }
        }
        out.extend_from_slice(&enc.finish().unwrap());
        out
    }

    #[test]
    fn json_lists_are_serde_jsons_bytes() {
        for n in [0, 1, 2] {
            let items = &items()[..n];
            let mut whole = head();
            whole["items"] = Value::Array(items.to_vec());
            // serde_json's bytes, and the newline kube's encoder ends with.
            let mut want = serde_json::to_vec(&whole).unwrap();
            want.push(b'\n');
            assert_eq!(written(Format::JSON, items), want, "{n} items");
        }
    }

    #[test]
    fn json_lists_are_cut_into_frames() {
        let big = json!({"metadata": {"name": "x"}, "data": {"k": "y".repeat(40 * 1024)}});
        let mut enc = ListEncoder::new(Format::JSON, &head()).unwrap();
        let item = serde_json::to_vec(&big).unwrap();
        assert_eq!(enc.push(&item).unwrap(), None);
        let frame = enc.push(&item).unwrap().expect("a frame past 64 KiB");
        assert!(frame.len() >= FRAME_BYTES);
        assert_eq!(enc.push(&item).unwrap(), None);
        let last = enc.finish().unwrap();
        let mut all = frame.to_vec();
        all.extend_from_slice(&last);
        let v: Value = serde_json::from_slice(&all).unwrap();
        assert_eq!(v["items"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn yaml_lists_are_written_whole_from_json_items() {
        let enc = ListEncoder::new(Format::YAML, &head()).unwrap();
        assert_eq!(enc.item_format(), Format::JSON);
        assert!(!enc.streams());
        let json = ListEncoder::new(Format::JSON, &head()).unwrap();
        assert_eq!(json.item_format(), Format::JSON);
        assert!(json.streams());
        let mut whole = head();
        whole["items"] = Value::Array(items());
        assert_eq!(
            written(Format::YAML, &items()),
            crate::yaml::to_yaml(&whole).into_bytes()
        );
    }

    #[test]
    fn custom_resource_lists_are_one_sorted_map() {
        let head = json!({"kind": "WidgetList", "apiVersion": "example.com/v1",
            "metadata": {"resourceVersion": "5", "continue": ""}});
        let mut enc = ListEncoder::new(Format::JSON, &head).unwrap();
        let mut out = Vec::new();
        for item in [
            &br#"{"apiVersion":"example.com/v1","kind":"Widget"}"#[..],
            b"{}",
        ] {
            if let Some(f) = enc.push(item).unwrap() {
                out.extend_from_slice(&f);
            }
        }
        out.extend_from_slice(&enc.finish().unwrap());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"apiVersion":"example.com/v1","items":[{"apiVersion":"example.com/v1","kind":"Widget"},{}],"kind":"WidgetList","metadata":{"continue":"","resourceVersion":"5"}}"#.to_owned() + "\n"
        );
        let empty = ListEncoder::new(Format::JSON, &head)
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(
            &empty[..],
            &b"{\"apiVersion\":\"example.com/v1\",\"items\":[],\"kind\":\"WidgetList\",\"metadata\":{\"continue\":\"\",\"resourceVersion\":\"5\"}}\n"[..]
        );
        // Built-in lists keep Go's ListMeta struct order.
        let cm = ListEncoder::new(Format::JSON, &super::tests::head())
            .unwrap()
            .finish()
            .unwrap();
        assert!(cm.starts_with(br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5","continue":"x"},"items":[]"#));
    }

    fn at(encoding: Encoding, target: Target) -> Format {
        Format { encoding, target }
    }

    fn pod_head() -> Value {
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9", "continue": "c", "remainingItemCount": 3}})
    }

    fn pod_item(name: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({"metadata": {"name": name, "namespace": "ns"}, "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Running"}})).unwrap()
    }

    fn all(mut enc: ListEncoder, items: &[Vec<u8>]) -> Value {
        let mut out = Vec::new();
        for i in items {
            if let Some(f) = enc.push(i).unwrap() {
                out.extend_from_slice(&f);
            }
        }
        out.extend_from_slice(&enc.finish().unwrap());
        match enc_yaml(&out) {
            Some(v) => v,
            None => serde_json::from_slice(&out).unwrap(),
        }
    }

    fn enc_yaml(out: &[u8]) -> Option<Value> {
        (out.first() != Some(&b'{')).then(|| serde_yaml::from_slice(out).unwrap())
    }

    #[test]
    fn tables_stream_a_row_per_item() {
        use crate::format::MetaVersion;
        let table = at(Encoding::Json, Target::Table(MetaVersion::V1));
        assert_eq!(item_format(table), Format::JSON);
        let enc = ListEncoder::new(table, &pod_head()).unwrap();
        assert!(enc.streams());
        let t = all(enc, &[pod_item("a"), pod_item("b")]);
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["metadata"], pod_head()["metadata"]);
        assert_eq!(t["columnDefinitions"].as_array().unwrap().len(), 9);
        assert_eq!(t["rows"][1]["cells"][0], "b");
        assert_eq!(t["rows"][1]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(t["rows"][1]["object"]["metadata"]["namespace"], "ns");
        // Empty: the printers' [] and the default table's null.
        let empty = all(ListEncoder::new(table, &pod_head()).unwrap(), &[]);
        assert_eq!(empty["rows"], json!([]));
        let roles = json!({"kind": "RoleList", "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"resourceVersion": "1"}});
        let empty = all(ListEncoder::new(table, &roles).unwrap(), &[]);
        assert_eq!(empty["rows"], Value::Null);
        // Whole object rows, no headers, YAML.
        let opts = TableOptions {
            include_object: crate::table::IncludeObject::Object,
            no_headers: true,
        };
        let enc = ListEncoder::with_options(table, &pod_head(), &opts, crate::table::time::now())
            .unwrap();
        let t = all(enc, &[pod_item("a")]);
        assert_eq!(t["columnDefinitions"], Value::Null);
        assert_eq!(t["rows"][0]["object"]["kind"], "Pod");
        assert_eq!(t["rows"][0]["object"]["apiVersion"], "v1");
        let yaml = at(Encoding::Yaml, Target::Table(MetaVersion::V1beta1));
        let enc = ListEncoder::new(yaml, &pod_head()).unwrap();
        assert!(!enc.streams());
        let t = all(enc, &[pod_item("a")]);
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(t["rows"][0]["cells"][2], "Running");
        assert!(ListEncoder::new(
            at(Encoding::Protobuf, Target::Table(MetaVersion::V1)),
            &pod_head()
        )
        .is_err());
    }

    /// kube's FlowSchema list printer sorts its rows (precedence, then
    /// name); the rows and their objects come out in that order, JSON and
    /// YAML, and the bytes are those of an unsorted list in that order.
    #[test]
    fn flow_schema_rows_are_sorted() {
        use crate::format::MetaVersion;
        let head = json!({"kind": "FlowSchemaList", "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "metadata": {"resourceVersion": "3"}});
        let fs = |name: &str, precedence: i64| {
            serde_json::to_vec(&json!({"metadata": {"name": name}, "spec": {"matchingPrecedence": precedence, "priorityLevelConfiguration": {"name": "pl"}}})).unwrap()
        };
        let items = [
            fs("catch-all", 10000),
            fs("exempt", 1),
            fs("global-default", 9900),
            fs("probes", 2),
            fs("a-tie", 2),
        ];
        let want = ["exempt", "a-tie", "probes", "global-default", "catch-all"];
        let names = |t: &Value| -> Vec<String> {
            t["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r["object"]["metadata"]["name"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        let table = at(Encoding::Json, Target::Table(MetaVersion::V1));
        let mut enc = ListEncoder::new(table, &head).unwrap();
        assert!(enc.streams());
        for i in &items {
            assert_eq!(enc.push(i).unwrap(), None, "rows wait for the last item");
        }
        let bytes = enc.finish().unwrap();
        let t: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(names(&t), want);
        assert_eq!(
            t["rows"][0]["cells"],
            json!(["exempt", "pl", 1, "<none>", "<unknown>", "?"])
        );
        // The same bytes as the rows of the items given in that order.
        let rows = Rows::new(
            MetaVersion::V1,
            "flowcontrol.apiserver.k8s.io/v1",
            "FlowSchema",
            &TableOptions::default(),
            crate::table::time::now(),
        );
        let mut expected = Value::Object(rows.head(head["metadata"].clone(), false));
        let sorted: Vec<Value> = [1, 4, 3, 2, 0]
            .iter()
            .map(|&i| rows.row(&serde_json::from_slice(&items[i]).unwrap()))
            .collect();
        expected["rows"] = Value::Array(sorted);
        // kube's encoder escapes the cells' `<none>`: `\u003cnone\u003e`.
        let mut want_bytes = to_vec_go(&expected).unwrap();
        want_bytes.push(b'\n');
        assert!(std::str::from_utf8(&bytes)
            .unwrap()
            .contains(r#""\u003cnone\u003e""#));
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            std::str::from_utf8(&want_bytes).unwrap()
        );
        let yaml = at(Encoding::Yaml, Target::Table(MetaVersion::V1));
        let t = all(ListEncoder::new(yaml, &head).unwrap(), &items);
        assert_eq!(names(&t), want);
        // Other printers keep the list's order.
        let t = all(
            ListEncoder::new(table, &pod_head()).unwrap(),
            &[pod_item("b"), pod_item("a")],
        );
        assert_eq!(t["rows"][0]["cells"][0], "b");
        let empty = all(ListEncoder::new(table, &head).unwrap(), &[]);
        assert_eq!(empty["rows"], json!([]));
    }

    #[test]
    fn metadata_lists() {
        use crate::format::MetaVersion;
        let pom_list = at(
            Encoding::Json,
            Target::PartialObjectMetadataList(MetaVersion::V1),
        );
        assert_eq!(
            item_format(pom_list),
            at(
                Encoding::Json,
                Target::PartialObjectMetadata(MetaVersion::V1)
            )
        );
        let item = br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a"}}"#;
        let mut enc = ListEncoder::new(pom_list, &pod_head()).unwrap();
        assert_eq!(enc.push(item).unwrap(), None);
        let out = enc.finish().unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9","continue":"c","remainingItemCount":3},"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a"}}]}
"#
        );
        let empty = ListEncoder::new(pom_list, &pod_head())
            .unwrap()
            .finish()
            .unwrap();
        assert!(empty.ends_with(b",\"items\":null}\n"), "{empty:?}");
        let yaml = at(
            Encoding::Yaml,
            Target::PartialObjectMetadataList(MetaVersion::V1beta1),
        );
        let v = all(
            ListEncoder::new(yaml, &pod_head()).unwrap(),
            &[item.to_vec()],
        );
        assert_eq!(v["kind"], "PartialObjectMetadataList");
        assert_eq!(v["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(v["items"][0]["metadata"]["name"], "a");
        let e = ListEncoder::new(
            at(
                Encoding::Json,
                Target::PartialObjectMetadata(MetaVersion::V1),
            ),
            &pod_head(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"
        );
    }

    #[test]
    fn cbor_lists_are_written_whole_from_tagged_items() {
        use crate::format::MetaVersion;
        let cbor = Format::object(Encoding::Cbor);
        assert_eq!(item_format(cbor), cbor);
        let mut enc = ListEncoder::new(cbor, &head()).unwrap();
        assert!(!enc.streams());
        for i in items() {
            let mut full = i.clone();
            full["kind"] = json!("ConfigMap");
            full["apiVersion"] = json!("v1");
            let item = encode(cbor, &full).unwrap();
            assert_eq!(enc.push_shared(item).unwrap(), None);
        }
        let out = enc.finish_frames().unwrap().concat();
        let mut whole = head();
        whole["items"] = Value::Array(items());
        // kube's bytes for the whole list: items without their type meta.
        assert_eq!(out, encode(cbor, &whole).unwrap().to_vec());
        // PartialObjectMetadataList: items keep theirs, none is null.
        let pom_list = at(
            Encoding::Cbor,
            Target::PartialObjectMetadataList(MetaVersion::V1),
        );
        assert_eq!(
            item_format(pom_list),
            at(
                Encoding::Cbor,
                Target::PartialObjectMetadata(MetaVersion::V1)
            )
        );
        let pom = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"name": "a"}});
        let mut enc = ListEncoder::new(pom_list, &pod_head()).unwrap();
        enc.push(&encode(item_format(pom_list), &pom).unwrap())
            .unwrap();
        let v = crate::cbor::decode(&enc.finish().unwrap()).unwrap();
        assert_eq!(v["kind"], "PartialObjectMetadataList");
        assert_eq!(v["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(v["items"][0]["metadata"]["name"], "a");
        let empty = ListEncoder::new(pom_list, &pod_head())
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(crate::cbor::decode(&empty).unwrap()["items"], Value::Null);
    }

    #[test]
    fn odd_heads_and_unserved_formats() {
        let mut enc = ListEncoder::new(Format::JSON, &json!({})).unwrap();
        enc.push(b"{}").unwrap();
        assert_eq!(&enc.finish().unwrap()[..], b"{\"items\":[{}]}\n");
        assert!(ListEncoder::new(Format::JSON, &json!([])).is_err());
        assert!(ListEncoder::new(
            Format {
                encoding: Encoding::Cbor,
                target: Target::Table(crate::format::MetaVersion::V1)
            },
            &head()
        )
        .is_err());
        let mut yaml = ListEncoder::new(Format::YAML, &head()).unwrap();
        assert!(yaml.push(b"not json").is_err());
    }
}

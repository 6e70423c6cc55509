//! Kubernetes Protobuf (`application/vnd.kubernetes.protobuf`): one
//! data-driven transcoder between JSON objects (kube's JSON field names)
//! and kube's wire bytes, for every built-in kind, its list and the watch
//! event.
//!
//! - An object is the 4-byte magic `k8s\0` then a `runtime.Unknown`
//!   envelope: `typeMeta {apiVersion, kind}`, `raw` (the object's message),
//!   `contentEncoding ""`, `contentType ""` — the bytes kube's protobuf
//!   serializer writes.
//! - A list is the same envelope around the list message (`metadata`,
//!   then one `items` entry per item: the item's bare message); lists are
//!   written from already encoded items ([`ListWriter`]).
//! - A watch stream is length-delimited frames of `WatchEvent {type,
//!   object: RawExtension{raw}}`, the raw being the object in its
//!   envelope ([`event_frame`]).
//!
//! The message schemas are data (`data/protobuf.json`, see [`schema`]);
//! the walk and the well-known types are in [`transcode`]. Custom resources
//! have no schema here: encoding one is kube's `406` (`errNotMarshalable`).

pub mod go_json;
mod schema;
mod transcode;
mod wire;
pub mod wkt;

use bytes::{BufMut, Bytes, BytesMut};
use keelson_apimachinery::ApiError;
use serde_json::{Map, Value};

pub use transcode::ShapeError;
pub use wire::WireError;

use schema::{MsgId, Schema, Ty};
use wire::{put_len, put_varint, varint_len, Raw, Reader};

/// The 4-byte prefix of every Kubernetes Protobuf object.
pub const MAGIC: &[u8] = b"k8s\0";

/// The Kubernetes version whose messages the data describes.
pub fn kubernetes_version() -> &'static str {
    &Schema::get().kubernetes_version
}

/// Whether a kind has a Protobuf message (built-in kinds, their lists,
/// `Status`, `WatchEvent`, the `meta.k8s.io` views).
pub fn has_kind(api_version: &str, kind: &str) -> bool {
    Schema::get().kind(api_version, kind).is_some()
}

/// Why an object cannot be written as Protobuf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// No message for the kind (custom resources): kube's `406`.
    #[error("object {0} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message")]
    NotMarshalable(String),
    /// The JSON does not fit the kind's message.
    #[error("protobuf: {0}")]
    Shape(String),
}

impl From<ShapeError> for EncodeError {
    fn from(e: ShapeError) -> Self {
        EncodeError::Shape(e.0)
    }
}

fn type_meta(v: &Value) -> (&str, &str) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    (s("apiVersion"), s("kind"))
}

/// The message of an object's kind.
fn message_of(v: &Value) -> Result<MsgId, EncodeError> {
    let (av, kind) = type_meta(v);
    Schema::get()
        .kind(av, kind)
        .ok_or_else(|| EncodeError::NotMarshalable("*unstructured.Unstructured".into()))
}

/// The envelope around `raw`: magic, `typeMeta`, `raw`, and the empty
/// `contentEncoding` and `contentType` (kube's `NestedMarshalTo`).
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + api_version.len() + kind.len() + 24);
    out.extend_from_slice(MAGIC);
    envelope_head(&mut out, api_version, kind, raw.len());
    out.extend_from_slice(raw);
    out.extend_from_slice(ENVELOPE_TAIL);
    out
}

/// `contentEncoding ""` and `contentType ""`.
const ENVELOPE_TAIL: &[u8] = &[0x1a, 0x00, 0x22, 0x00];

/// The `typeMeta` field and the `raw` field's key and length.
fn envelope_head(out: &mut Vec<u8>, api_version: &str, kind: &str, raw_len: usize) {
    let mut tm = Vec::with_capacity(api_version.len() + kind.len() + 4);
    put_len(&mut tm, 1, api_version.as_bytes());
    put_len(&mut tm, 2, kind.as_bytes());
    put_len(out, 1, &tm);
    wire::put_key(out, 2, wire::LEN);
    put_varint(out, raw_len as u64);
}

/// An object (with `apiVersion` and `kind`) as Kubernetes Protobuf.
pub fn encode_object(v: &Value) -> Result<Vec<u8>, EncodeError> {
    let id = message_of(v)?;
    let mut raw = Vec::new();
    transcode::from_json(Schema::get(), id, v, &mut raw)?;
    let (av, kind) = type_meta(v);
    Ok(envelope(av, kind, &raw))
}

/// An object's bare message (no envelope), as a list carries it; `kind`
/// names the message.
pub fn encode_message(api_version: &str, kind: &str, v: &Value) -> Result<Vec<u8>, EncodeError> {
    let id = Schema::get()
        .kind(api_version, kind)
        .ok_or_else(|| EncodeError::NotMarshalable("*unstructured.Unstructured".into()))?;
    let mut raw = Vec::new();
    transcode::from_json(Schema::get(), id, v, &mut raw)?;
    Ok(raw)
}

/// A parsed envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown<'a> {
    pub api_version: String,
    pub kind: String,
    pub raw: &'a [u8],
    /// Where `raw` starts in the bytes given to [`parse_envelope`].
    pub raw_at: usize,
}

/// The envelope of `bytes` (which start with the magic).
pub fn parse_envelope(bytes: &[u8]) -> Result<Unknown<'_>, WireError> {
    let body = bytes.strip_prefix(MAGIC).ok_or_else(|| {
        WireError(format!(
            "provided data does not appear to be a protobuf message, expected prefix [{}]",
            MAGIC
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        ))
    })?;
    let mut r = Reader::new(body);
    let mut u = Unknown {
        api_version: String::new(),
        kind: String::new(),
        raw: &[],
        raw_at: MAGIC.len(),
    };
    while !r.done() {
        let (n, raw) = r.field("Unknown")?;
        let end = r.pos();
        match (n, raw) {
            (1, Raw::Len(tm)) => {
                let mut t = Reader::new(tm);
                while !t.done() {
                    match t.field("TypeMeta")? {
                        (1, Raw::Len(b)) => u.api_version = String::from_utf8_lossy(b).into_owned(),
                        (2, Raw::Len(b)) => u.kind = String::from_utf8_lossy(b).into_owned(),
                        (1 | 2, other) => return Err(wrong("TypeMeta", other)),
                        _ => {}
                    }
                }
            }
            (2, Raw::Len(b)) => {
                u.raw = b;
                u.raw_at = MAGIC.len() + end - b.len();
            }
            (1..=4, other @ (Raw::Varint(_) | Raw::Fixed32 | Raw::Fixed64(_))) => {
                return Err(wrong("Unknown", other))
            }
            _ => {}
        }
    }
    Ok(u)
}

fn wrong(message: &str, raw: Raw<'_>) -> WireError {
    WireError(format!(
        "proto: wrong wireType = {} for field of {message}",
        raw.wire_type()
    ))
}

/// A Kubernetes Protobuf object as JSON (`kind` and `apiVersion` first).
pub fn decode_object(bytes: &[u8]) -> Result<Value, WireError> {
    decode_envelope_in(Schema::get(), bytes, 0)
}

fn decode_envelope_in(s: &Schema, bytes: &[u8], _depth: u32) -> Result<Value, WireError> {
    let u = parse_envelope(bytes)?;
    let id = s.kind(&u.api_version, &u.kind).ok_or_else(|| {
        WireError(format!(
            "no kind {:?} is registered for version {:?} in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\"",
            u.kind, u.api_version
        ))
    })?;
    with_type_meta(&u.api_version, &u.kind, transcode::to_json(s, id, u.raw)?)
}

fn with_type_meta(api_version: &str, kind: &str, body: Value) -> Result<Value, WireError> {
    let mut out = Map::new();
    out.insert("kind".into(), Value::String(kind.into()));
    out.insert("apiVersion".into(), Value::String(api_version.into()));
    if let Value::Object(m) = body {
        out.extend(m);
    }
    Ok(Value::Object(out))
}

/// A bare message of `kind` (a list item) as JSON, without type meta.
pub fn decode_message(api_version: &str, kind: &str, raw: &[u8]) -> Result<Value, WireError> {
    let s = Schema::get();
    let id = s.kind(api_version, kind).ok_or_else(|| {
        WireError(format!(
            "no kind {kind:?} is registered for version {api_version:?}"
        ))
    })?;
    transcode::to_json(s, id, raw)
}

/// A request body, with kube-apiserver's `400` wording
/// (`transformDecodeError`); `expected` is the endpoint's kind.
pub fn decode_request(body: &[u8], expected: &str) -> Result<Value, ApiError> {
    let unrecognized = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {expected}): {e} ({})",
            crate::decode::summary(body)
        ))
    };
    if body.is_empty() {
        return Err(unrecognized(&"empty data"));
    }
    if body == MAGIC {
        return Err(unrecognized(&"empty body"));
    }
    let u = parse_envelope(body).map_err(|e| unrecognized(&e))?;
    // kube defaults a missing kind from the endpoint.
    let kind = if u.kind.is_empty() {
        expected.to_string()
    } else {
        u.kind.clone()
    };
    if u.api_version.is_empty() {
        return Err(unrecognized(&format!(
            "Object 'apiVersion' is missing in 'runtime.TypeMeta{{APIVersion:\"\", Kind:{:?}}}'",
            u.kind
        )));
    }
    let cannot = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!(
            "{kind} in version {:?} cannot be handled as a {expected}: {e}",
            u.api_version.rsplit('/').next().unwrap_or("")
        ))
    };
    let s = Schema::get();
    let id = s.kind(&u.api_version, &kind).ok_or_else(|| {
        cannot(&format!(
            "no kind {kind:?} is registered for version {:?} in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\"",
            u.api_version
        ))
    })?;
    let body = transcode::to_json(s, id, u.raw).map_err(|e| cannot(&e))?;
    with_type_meta(&u.api_version, &kind, body).map_err(|e| cannot(&e))
}

/// The bare message inside an encoded object (a slice of it, not a
/// copy): a list item. `None` when `object` is not an envelope.
pub fn raw_of(object: &Bytes) -> Option<Bytes> {
    let u = parse_envelope(object).ok()?;
    let (at, len) = (u.raw_at, u.raw.len());
    Some(object.slice(at..at + len))
}

// ---------------------------------------------------------------------
// Watch events
// ---------------------------------------------------------------------

/// The length of the `WatchEvent` bytes before the object.
fn event_prefix(t: &str, object_len: usize, out: &mut Vec<u8>) {
    put_len(out, 1, t.as_bytes());
    // object: RawExtension { raw (1): object }
    let ext_len = 1 + varint_len(object_len as u64) + object_len;
    wire::put_key(out, 2, wire::LEN);
    put_varint(out, ext_len as u64);
    wire::put_key(out, 1, wire::LEN);
    put_varint(out, object_len as u64);
}

/// One frame of a Protobuf watch stream: the 4-byte big-endian length,
/// then `WatchEvent {type: t, object: {raw: object}}` (kube's raw
/// serializer: no envelope around the event; `object` is an enveloped
/// object).
pub fn event_frame(t: &str, object: &[u8]) -> Bytes {
    let mut head = Vec::with_capacity(t.len() + 16);
    event_prefix(t, object.len(), &mut head);
    let len = head.len() + object.len();
    let mut b = BytesMut::with_capacity(4 + len);
    b.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
    b.put_slice(&head);
    b.put_slice(object);
    b.freeze()
}

/// The object inside a frame made by [`event_frame`] for type `t` (a
/// slice of it).
pub fn object_of_frame(t: &str, frame: &Bytes) -> Option<Bytes> {
    let len = u32::from_be_bytes(frame.get(..4)?.try_into().ok()?) as usize;
    if frame.len() != 4 + len {
        return None;
    }
    let body = &frame[4..];
    let mut r = Reader::new(body);
    let mut typ = None;
    let mut object = None;
    while !r.done() {
        let (n, raw) = r.field("WatchEvent").ok()?;
        match (n, raw) {
            (1, Raw::Len(b)) => typ = Some(b),
            (2, Raw::Len(ext)) => {
                let mut e = Reader::new(ext);
                while !e.done() {
                    if let (1, Raw::Len(obj)) = e.field("RawExtension").ok()? {
                        object = Some(obj);
                    }
                }
            }
            _ => return None,
        }
    }
    if typ? != t.as_bytes() {
        return None;
    }
    let obj = object?;
    let at = obj.as_ptr() as usize - frame.as_ptr() as usize;
    Some(frame.slice(at..at + obj.len()))
}

/// A watch frame's event type and object bytes (for clients and tests).
pub fn parse_event(payload: &[u8]) -> Result<(String, Vec<u8>), WireError> {
    let mut r = Reader::new(payload);
    let (mut t, mut obj) = (String::new(), Vec::new());
    while !r.done() {
        match r.field("WatchEvent")? {
            (1, Raw::Len(b)) => t = String::from_utf8_lossy(b).into_owned(),
            (2, Raw::Len(ext)) => {
                let mut e = Reader::new(ext);
                while !e.done() {
                    if let (1, Raw::Len(b)) = e.field("RawExtension")? {
                        obj = b.to_vec();
                    }
                }
            }
            (1 | 2, other) => return Err(wrong("WatchEvent", other)),
            _ => {}
        }
    }
    Ok((t, obj))
}

// ---------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------

/// Writes a list from its head (`kind`, `apiVersion`, `metadata`) and
/// its items' bare messages: every item is sized before the first byte
/// (the envelope carries the list's length up front, as kube's streaming
/// encoder sizes every item first), then the frames are the head, the
/// items as given (shared, not copied) and the envelope's tail.
#[derive(Debug)]
pub struct ListWriter {
    api_version: String,
    kind: String,
    /// The list message's `metadata` field, keyed and sized.
    meta: Vec<u8>,
    /// The `items` field's number (2 in every list but `meta.k8s.io/v1beta1`
    /// `PartialObjectMetadataList`, whose items are field 1).
    items_field: u32,
    /// Whether `metadata` goes after the items (its number is higher).
    meta_last: bool,
    items: Vec<Bytes>,
    /// Size of the list message so far.
    size: usize,
}

impl ListWriter {
    /// A list of kind `head.kind`.
    pub fn new(head: &Value) -> Result<ListWriter, EncodeError> {
        let id = message_of(head)?;
        let s = Schema::get();
        let m = &s.messages[id];
        let not_a_list = || EncodeError::Shape(format!("{} is not a list", m.short()));
        let meta_field = m
            .fields
            .iter()
            .find(|f| &*f.json == "metadata")
            .ok_or_else(not_a_list)?;
        let items_field = m
            .fields
            .iter()
            .find(|f| &*f.json == "items")
            .ok_or_else(not_a_list)?
            .number;
        let Ty::Message(meta_id) = meta_field.ty else {
            return Err(not_a_list());
        };
        let mut lm = Vec::new();
        transcode::from_json(
            s,
            meta_id,
            head.get("metadata").unwrap_or(&Value::Null),
            &mut lm,
        )?;
        let mut meta = Vec::with_capacity(lm.len() + 4);
        put_len(&mut meta, meta_field.number, &lm);
        let (av, kind) = type_meta(head);
        Ok(ListWriter {
            api_version: av.to_string(),
            kind: kind.to_string(),
            size: meta.len(),
            meta,
            items_field,
            meta_last: meta_field.number > items_field,
            items: Vec::new(),
        })
    }

    /// Add one item's bare message.
    pub fn push(&mut self, item: Bytes) {
        self.size += 1 + varint_len(item.len() as u64) + item.len();
        self.items.push(item);
    }

    /// How many items were pushed.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item was pushed.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The whole list as frames of about `frame_bytes`: small items are
    /// gathered, large ones go out as they are.
    pub fn finish(self, frame_bytes: usize) -> Vec<Bytes> {
        let mut frames = Vec::new();
        let mut buf = Vec::with_capacity(frame_bytes.min(self.size + 64));
        buf.extend_from_slice(MAGIC);
        envelope_head(&mut buf, &self.api_version, &self.kind, self.size);
        if !self.meta_last {
            buf.extend_from_slice(&self.meta);
        }
        for item in self.items {
            wire::put_key(&mut buf, self.items_field, wire::LEN);
            put_varint(&mut buf, item.len() as u64);
            if item.len() >= frame_bytes / 4 {
                frames.push(Bytes::from(std::mem::take(&mut buf)));
                frames.push(item);
            } else {
                buf.extend_from_slice(&item);
                if buf.len() >= frame_bytes {
                    frames.push(Bytes::from(std::mem::take(&mut buf)));
                }
            }
        }
        if self.meta_last {
            buf.extend_from_slice(&self.meta);
        }
        buf.extend_from_slice(ENVELOPE_TAIL);
        frames.push(Bytes::from(buf));
        frames.retain(|f| !f.is_empty());
        frames
    }
}

#[cfg(test)]
mod tests;

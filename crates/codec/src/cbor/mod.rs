//! CBOR as kube-apiserver writes and reads it (apimachinery's
//! `runtime/serializer/cbor`, KEP-4222).
//!
//! Writing follows kube's encode mode over the JSON value model: every
//! object starts with the self-described CBOR tag (55799, the bytes
//! `d9 d9 f7`) as its magic number; strings and map keys are byte strings;
//! map keys are sorted bytewise on their encoding (RFC 8949 §4.2.1: shorter
//! keys first); integers and lengths take their shortest form, floats the
//! shortest width that keeps their value; `null` stays `null`; nothing is
//! of indefinite length. The wire heads are `ciborium-ll`'s.
//!
//! Watch events are `WatchEvent {type, object}` maps, each its own tagged
//! item of an `application/cbor-seq` stream, with the object embedded as
//! its own tagged encoding (kube's `RawExtension.MarshalCBOR`), so the
//! object is a slice at the end of its frame. Lists are written whole from
//! their items (a list's item array is sized first).
//!
//! Reading is [`decode`]: kube's decode mode (see there).

mod decode;

pub use decode::{decode, decode_apply, decode_request, DecodeError, Stage};

use bytes::{BufMut, Bytes, BytesMut};
use ciborium_ll::{Decoder, Encoder, Header};
use serde_json::{Map, Value};

use crate::error::CodecError;

/// The head of the self-described CBOR tag (55799) that starts every
/// object kube's CBOR serializer writes.
pub const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];

/// Append one CBOR head.
fn head(out: &mut BytesMut, h: Header) {
    // Writing into memory cannot fail.
    let _ = Encoder::from(out.writer()).push(h);
}

/// Append a string as kube writes Go strings: a byte string.
fn byte_string(out: &mut BytesMut, s: &[u8]) {
    head(out, Header::Bytes(Some(s.len())));
    out.put_slice(s);
}

/// Append `v` (no tag).
fn write_value(v: &Value, out: &mut BytesMut) {
    match v {
        Value::Null => head(out, Header::Simple(22)),
        Value::Bool(b) => head(out, Header::Simple(if *b { 21 } else { 20 })),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                if i >= 0 {
                    head(out, Header::Positive(i as u64));
                } else {
                    // CBOR negative n means -1 - n.
                    head(out, Header::Negative(!(i as u64)));
                }
            } else if let Some(u) = n.as_u64() {
                head(out, Header::Positive(u));
            } else {
                // ciborium-ll writes the shortest float that keeps the
                // value (kube's ShortestFloat16).
                head(out, Header::Float(n.as_f64().unwrap_or_default()));
            }
        }
        Value::String(s) => byte_string(out, s.as_bytes()),
        Value::Array(items) => {
            head(out, Header::Array(Some(items.len())));
            for i in items {
                write_value(i, out);
            }
        }
        Value::Object(map) => {
            head(out, Header::Map(Some(map.len())));
            for (k, v) in sorted(map) {
                byte_string(out, k.as_bytes());
                write_value(v, out);
            }
        }
    }
}

/// Byte-string keys in their encoded bytewise order: by length, then by
/// bytes (a canonical head grows with the length).
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// A map's entries in kube's order.
fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| key_order(a.0, b.0));
    entries
}

/// An object as kube's CBOR serializer writes it: the self-described tag,
/// then the value.
pub fn encode_value(v: &Value) -> Bytes {
    let mut out = BytesMut::with_capacity(256);
    out.put_slice(&SELF_DESCRIBED);
    write_value(v, &mut out);
    out.freeze()
}

/// The bytes of a watch event frame before its object: the tag, a map of
/// two, `type` and its value, then the `object` key.
fn event_prefix(t: &str) -> BytesMut {
    let mut out = BytesMut::with_capacity(24 + t.len());
    out.put_slice(&SELF_DESCRIBED);
    head(&mut out, Header::Map(Some(2)));
    byte_string(&mut out, b"type");
    byte_string(&mut out, t.as_bytes());
    byte_string(&mut out, b"object");
    out
}

/// One frame of an `application/cbor-seq` watch: a `WatchEvent` of type
/// `t` around `object`, already encoded (with its tag).
pub fn event_frame(t: &str, object: &[u8]) -> Bytes {
    let mut out = event_prefix(t);
    out.reserve(object.len());
    out.put_slice(object);
    out.freeze()
}

/// The object inside a frame made by [`event_frame`] for `t` (a slice of
/// it); `None` when `frame` is not such a frame.
pub fn object_of_frame(t: &str, frame: &Bytes) -> Option<Bytes> {
    let prefix = event_prefix(t);
    (frame.len() > prefix.len() && frame[..prefix.len()] == prefix[..])
        .then(|| frame.slice(prefix.len()..))
}

/// The end of the well-formed, definite-length item starting at `at`
/// (our own encodings are never indefinite); `None` otherwise.
fn skip(data: &[u8], at: usize) -> Option<usize> {
    let rest = data.get(at..)?;
    let mut dec = Decoder::from(rest);
    let h = dec.pull().ok()?;
    let mut end = at + dec.offset();
    match h {
        Header::Bytes(Some(n)) | Header::Text(Some(n)) => end = end.checked_add(n)?,
        Header::Array(Some(n)) => {
            for _ in 0..n {
                end = skip(data, end)?;
            }
        }
        Header::Map(Some(n)) => {
            for _ in 0..n.checked_mul(2)? {
                end = skip(data, end)?;
            }
        }
        Header::Tag(_) => end = skip(data, end)?,
        Header::Positive(_) | Header::Negative(_) | Header::Float(_) | Header::Simple(_) => {}
        _ => return None,
    }
    (end <= data.len()).then_some(end)
}

/// Append a list item: `item` without its tag, and without its `kind` and
/// `apiVersion` when `strip_type_meta` (as JSON list items are written).
fn write_item(item: &[u8], strip_type_meta: bool, out: &mut BytesMut) -> Result<(), CodecError> {
    let item = item.strip_prefix(&SELF_DESCRIBED[..]).unwrap_or(item);
    if !strip_type_meta {
        out.put_slice(item);
        return Ok(());
    }
    let bad = || CodecError::Shape("a CBOR list item is not a map");
    let mut dec = Decoder::from(item);
    let Ok(Header::Map(Some(n))) = dec.pull() else {
        return Err(bad());
    };
    let mut at = dec.offset();
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(n);
    for _ in 0..n {
        let key_end = skip(item, at).ok_or_else(bad)?;
        let end = skip(item, key_end).ok_or_else(bad)?;
        let key = &item[at..key_end];
        if key != b"\x44kind" && key != b"\x4aapiVersion" {
            kept.push((at, end));
        }
        at = end;
    }
    head(out, Header::Map(Some(kept.len())));
    for (from, to) in kept {
        out.put_slice(&item[from..to]);
    }
    Ok(())
}

/// A CBOR list being written: the head's fields, and the items gathered
/// under `key` (the item array is sized before it is written).
#[derive(Debug)]
pub(crate) struct ListWriter {
    head: Map<String, Value>,
    key: &'static str,
    items: BytesMut,
    count: usize,
    null_when_empty: bool,
    strip_type_meta: bool,
}

impl ListWriter {
    /// A list of `head`'s fields with its items under `key`: `null` when
    /// there are none and `null_when_empty`; items lose their `kind` and
    /// `apiVersion` when `strip_type_meta`.
    pub(crate) fn new(
        head: &Value,
        key: &'static str,
        null_when_empty: bool,
        strip_type_meta: bool,
    ) -> Result<ListWriter, CodecError> {
        let Value::Object(head) = head else {
            return Err(CodecError::Shape("a list head is not a map"));
        };
        Ok(ListWriter {
            head: head.clone(),
            key,
            items: BytesMut::new(),
            count: 0,
            null_when_empty,
            strip_type_meta,
        })
    }

    /// Add one item (an encoded object, with or without its tag).
    pub(crate) fn push(&mut self, item: &[u8]) -> Result<(), CodecError> {
        write_item(item, self.strip_type_meta, &mut self.items)?;
        self.count += 1;
        Ok(())
    }

    /// How many items were pushed.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// The whole list as frames of about `frame_bytes` (the items are
    /// slices of one buffer, not copied again).
    pub(crate) fn finish(self, frame_bytes: usize) -> Vec<Bytes> {
        let ListWriter {
            head: fields,
            key,
            items,
            count,
            null_when_empty,
            ..
        } = self;
        let mut items = Some(items.freeze());
        let mut keys: Vec<&str> = fields
            .keys()
            .map(String::as_str)
            .filter(|k| *k != key)
            .collect();
        keys.push(key);
        keys.sort_unstable_by(|a, b| key_order(a, b));
        let mut frames = Vec::new();
        let mut out = BytesMut::with_capacity(256);
        out.put_slice(&SELF_DESCRIBED);
        head(&mut out, Header::Map(Some(keys.len())));
        for k in keys {
            byte_string(&mut out, k.as_bytes());
            if k != key {
                write_value(&fields[k], &mut out);
                continue;
            }
            if count == 0 && null_when_empty {
                head(&mut out, Header::Simple(22));
                continue;
            }
            head(&mut out, Header::Array(Some(count)));
            frames.push(out.split().freeze());
            let items = items.take().unwrap_or_default();
            let mut at = 0;
            while at < items.len() {
                let to = (at + frame_bytes.max(1)).min(items.len());
                frames.push(items.slice(at..to));
                at = to;
            }
        }
        frames.push(out.freeze());
        frames.retain(|f| !f.is_empty());
        frames
    }
}

#[cfg(test)]
mod tests;

//! Lists written as a head, the items as they arrive, and a tail, so a
//! large list is never one in-memory value. For JSON the head is the list
//! object without its closing brace, then `,"items":[`; items are joined
//! by commas; the tail is `]}` — the bytes `serde_json` would write for the
//! whole list. Encodings that cannot be streamed (YAML) collect the items
//! and write the whole list at the end.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

use crate::error::CodecError;
use crate::format::{Encoding, Format, Target};
use crate::serializer::encode;

/// Frames of a streamed list are cut at about this size.
pub const FRAME_BYTES: usize = 64 * 1024;

/// The format list items are asked for when a list is written in
/// `format`: the list's own, or JSON when the list is converted whole
/// (YAML).
pub fn item_format(format: Format) -> Format {
    match format.encoding {
        Encoding::Yaml => Format::JSON,
        _ => format,
    }
}

/// Writes one list response: [`ListEncoder::push`] each item (encoded in
/// [`ListEncoder::item_format`]) and send the frames it returns, then send
/// [`ListEncoder::finish`].
#[derive(Debug)]
pub struct ListEncoder {
    format: Format,
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    /// JSON: the bytes not yet cut into a frame, and how many items were
    /// written.
    Stream { buf: BytesMut, count: usize },
    /// Not streamable: the head and the items, written at the end.
    Whole { head: Value, items: Vec<Value> },
}

impl ListEncoder {
    /// A list in `format` with `head` (`kind`, `apiVersion`, `metadata`).
    pub fn new(format: Format, head: &Value) -> Result<ListEncoder, CodecError> {
        if format.target != Target::Object {
            return Err(CodecError::NotServed(format));
        }
        let inner = match format.encoding {
            Encoding::Json => {
                let mut first = serde_json::to_vec(head)?;
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
                }
            }
            Encoding::Yaml => Inner::Whole {
                head: head.clone(),
                items: Vec::new(),
            },
            Encoding::Protobuf | Encoding::Cbor => return Err(CodecError::NotServed(format)),
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
        matches!(self.inner, Inner::Stream { .. })
    }

    /// Add one item (a list item: no `kind` and `apiVersion`); a frame to
    /// send when about [`FRAME_BYTES`] have gathered.
    pub fn push(&mut self, item: &[u8]) -> Result<Option<Bytes>, CodecError> {
        match &mut self.inner {
            Inner::Stream { buf, count } => {
                if *count > 0 {
                    buf.put_u8(b',');
                }
                *count += 1;
                buf.put_slice(item);
                Ok((buf.len() >= FRAME_BYTES).then(|| buf.split().freeze()))
            }
            Inner::Whole { items, .. } => {
                items.push(serde_json::from_slice(item)?);
                Ok(None)
            }
        }
    }

    /// The last frame: what is left, and the list's tail.
    pub fn finish(self) -> Result<Bytes, CodecError> {
        match self.inner {
            Inner::Stream { mut buf, .. } => {
                buf.put_slice(b"]}");
                Ok(buf.freeze())
            }
            Inner::Whole { mut head, items } => {
                if let Some(map) = head.as_object_mut() {
                    map.insert("items".into(), Value::Array(items));
                }
                encode(self.format, &head)
            }
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
            assert_eq!(
                written(Format::JSON, items),
                serde_json::to_vec(&whole).unwrap(),
                "{n} items"
            );
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
            serde_yaml::to_string(&whole).unwrap().into_bytes()
        );
    }

    #[test]
    fn odd_heads_and_unserved_formats() {
        let mut enc = ListEncoder::new(Format::JSON, &json!({})).unwrap();
        enc.push(b"{}").unwrap();
        assert_eq!(&enc.finish().unwrap()[..], br#"{"items":[{}]}"#);
        assert!(ListEncoder::new(Format::JSON, &json!([])).is_err());
        assert!(ListEncoder::new(Format::object(Encoding::Protobuf), &head()).is_err());
        let mut yaml = ListEncoder::new(Format::YAML, &head()).unwrap();
        assert!(yaml.push(b"not json").is_err());
    }
}
